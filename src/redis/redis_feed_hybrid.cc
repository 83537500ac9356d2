// RedisFeedEngine's hybrid fan-out: reading a home timeline merged with the
// own feeds of the actors its reader merges, and telling followers to merge
// an actor. The keys and scripts are described in hybrid_scripts.h, the
// design in docs/scale-out.md ("Hybrid fan-out").
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "contract/page_merger.h"
#include "redis/entry_codec.h"
#include "redis/redis_feed_engine.h"

namespace feedcore::redis {

std::string RedisFeedEngine::JustAbove(absl::string_view newest) {
  if (newest.empty()) return EntryKeyBytes(EntryKey::Min());
  std::optional<EntryKey> above = internal::NewerKey(EntryKeyOfBytes(newest));
  // Nothing is above the greatest key: merging from it shows only it,
  // which was copied, so the reader dedupes it.
  return EntryKeyBytes(above.value_or(EntryKey::Max()));
}

absl::StatusOr<std::string> RedisFeedEngine::FollowBoundary(
    EntityId actor, size_t backfill, absl::string_view newest) const {
  if (backfill > 0) {
    absl::StatusOr<std::vector<StoredEntry>> recent =
        Collect(Key(actor, "own"), ReadOrder::kNewestFirst, EntryKey::Min(),
                EntryKey::Max(), backfill);
    if (!recent.ok()) return recent.status();
    if (!recent->empty()) {
      return EntryKeyBytes(recent->back().key());
    }
  }
  return JustAbove(newest);
}

absl::Status RedisFeedEngine::MergeFor(absl::Span<const EntityId> readers,
                                       EntityId actor,
                                       const std::string& boundary,
                                       bool keep_set) {
  std::vector<std::string> keys;
  keys.reserve(2 * readers.size());
  for (EntityId reader : readers) {
    keys.push_back(Key(reader, "fg"));
    keys.push_back(Key(reader, "hf"));
  }
  return client_
      ->Run(ClusterClient::ScriptCommandsBySlot(
          merge_followee_, std::move(keys), /*keys_per_group=*/2,
          kTimelinesPerCall,
          {BigEndian(actor), boundary, keep_set ? "keep" : "set"}))
      .status();
}

absl::Status RedisFeedEngine::MergeAllFollowers(EntityId actor,
                                                absl::string_view newest) {
  // Every follower merges the actor before publishes stop copying it;
  // until then an entry may be both copied and merged (reads drop the
  // duplicate). Each merges from just above everything noted so far: the
  // older entries were copied to it.
  const std::string boundary = JustAbove(newest);
  absl::Status walked =
      ForEachFollowerChunk(actor, [&](const std::vector<EntityId>& followers) {
        if (absl::Status status =
                MergeFor(followers, actor, boundary, /*keep_set=*/true);
            !status.ok()) {
          return status;
        }
        // Still walking: the lease is renewed, so no Follow takes over.
        return client_
            ->RunOne(PlainCommand(
                {"HSET", Key(actor, "fo"), "lease", SwitchLeaseUntil(Now())}))
            .status();
      });
  if (!walked.ok()) return walked;
  return client_
      ->RunOne(PlainCommand({"HSET", Key(actor, "fo"), "mode", "merged"}))
      .status();
}

absl::StatusOr<std::vector<StoredEntry>> RedisFeedEngine::CollectHome(
    EntityId owner, ReadOrder order, EntryKey lo, EntryKey hi,
    size_t want) const {
  std::string timeline = Key(owner, "tl");
  if (!hybrid()) {
    return Collect(std::move(timeline), order, lo, hi, want);
  }
  // The merged actors but those the owner mutes now (relation_scripts.h).
  Command merged_list = ClusterClient::ScriptCommand(
      merged_followees_, {Key(owner, "hf"), Key(owner, "rl")},
      {BigEndian(static_cast<uint64_t>(Now()))});
  merged_list.write = false;
  absl::StatusOr<Reply> listed = client_->RunOne(std::move(merged_list));
  if (!listed.ok()) return listed.status();
  if (listed->type != Reply::Type::kArray || listed->elements.size() % 2 != 0) {
    return UnexpectedReply("a list of merged followees", *listed);
  }
  if (listed->elements.empty()) {
    return Collect(std::move(timeline), order, lo, hi, want);
  }
  std::vector<std::pair<EntityId, EntryKey>> merged;
  for (size_t i = 0; i < listed->elements.size(); i += 2) {
    const std::string& actor = listed->elements[i].str;
    const std::string& from = listed->elements[i + 1].str;
    if (actor.size() != 8 || from.size() != 16) {
      return UnexpectedReply("a list of merged followees", *listed);
    }
    merged.emplace_back(ReadBigEndian(actor), EntryKeyOfBytes(from));
  }
  absl::StatusOr<std::optional<EntryKey>> floor =
      MergedCapFloor(timeline, merged);
  if (!floor.ok()) return floor.status();
  if (floor->has_value()) lo = std::max(lo, **floor);
  if (hi < lo) return std::vector<StoredEntry>{};
  internal::PageMerger merger(order, want);
  auto add = [&](std::string key, EntryKey from) -> absl::Status {
    EntryKey source_lo = std::max(lo, from);
    EntryKey source_hi = hi;
    if (source_hi < source_lo || !merger.Narrow(&source_lo, &source_hi)) {
      return absl::OkStatus();
    }
    absl::StatusOr<std::vector<StoredEntry>> entries =
        Collect(std::move(key), order, source_lo, source_hi, want);
    if (!entries.ok()) return entries.status();
    merger.Add(*std::move(entries));
    return absl::OkStatus();
  };
  if (absl::Status s = add(std::move(timeline), EntryKey::Min()); !s.ok()) {
    return s;
  }
  for (const auto& [actor, from] : merged) {
    if (absl::Status s = add(Key(actor, "own"), from); !s.ok()) return s;
  }
  return merger.Take();
}

absl::StatusOr<std::optional<EntryKey>> RedisFeedEngine::MergedCapFloor(
    const std::string& timeline,
    absl::Span<const std::pair<EntityId, EntryKey>> merged) const {
  const size_t cap = options_.max_timeline_length;
  // Cheap bound first: the merged view cannot exceed the cap when the
  // timeline and the whole own feeds together fit in it.
  std::vector<Command> counts;
  counts.push_back(PlainCommand({"ZCARD", timeline}));
  for (const auto& [actor, from] : merged) {
    counts.push_back(PlainCommand({"ZCARD", Key(actor, "own")}));
  }
  absl::StatusOr<std::vector<Reply>> sizes = client_->Run(std::move(counts));
  if (!sizes.ok()) return sizes.status();
  size_t bound = 0;
  for (const Reply& size : *sizes) {
    if (size.type != Reply::Type::kInteger) {
      return UnexpectedReply("a count", size);
    }
    bound += static_cast<size_t>(size.integer);
  }
  if (bound <= cap) return std::nullopt;
  // Every entry held counts, expired ones too, as in a timeline's cap: the
  // newest cap + 1 keys of each source, merged without duplicates.
  std::vector<Command> tops;
  auto top = [&](const std::string& key, EntryKey from) {
    Command command =
        PlainCommand({"ZRANGE", key, "+inf", EntryScore(from.ts), "BYSCORE",
                      "REV", "LIMIT", "0", absl::StrCat(cap + 1)});
    command.write = false;
    tops.push_back(std::move(command));
  };
  top(timeline, EntryKey::Min());
  for (const auto& [actor, from] : merged) top(Key(actor, "own"), from);
  absl::StatusOr<std::vector<Reply>> newest = client_->Run(std::move(tops));
  if (!newest.ok()) return newest.status();
  std::vector<EntryKey> keys;
  for (size_t source = 0; source < newest->size(); ++source) {
    const EntryKey from =
        source == 0 ? EntryKey::Min() : merged[source - 1].second;
    for (const Reply& member : (*newest)[source].elements) {
      if (member.str.size() < 16) return ForeignMember();
      const EntryKey key = EntryKeyOfBytes(member.str);
      if (!(key < from)) keys.push_back(key);
    }
  }
  std::sort(keys.begin(), keys.end(),
            [](EntryKey a, EntryKey b) { return b < a; });
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  if (keys.size() <= cap) return std::nullopt;
  return keys[cap - 1];
}

}  // namespace feedcore::redis
