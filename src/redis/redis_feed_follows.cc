// RedisFeedEngine's follows: Follow, Unfollow and their batches. The order
// of their steps, and why it keeps copies right against a concurrent
// publish, is in redis_feed_engine.cc.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "contract/feed_arguments.h"
#include "redis/entry_codec.h"
#include "redis/redis_feed_engine.h"

namespace feedcore::redis {

absl::StatusOr<FollowResult> RedisFeedEngine::Follow(
    EntityId follower, EntityId followee, const FollowOptions& options) {
  if (absl::Status status =
          internal::ValidateFollowPair(follower, followee, "follow");
      !status.ok()) {
    return status;
  }
  absl::StatusOr<size_t> backfill = BackfillCount(options);
  if (!backfill.ok()) return backfill.status();
  const FollowPair pair{follower, followee};
  absl::StatusOr<std::vector<FollowResult>> results =
      FollowPairs(absl::MakeConstSpan(&pair, 1), *backfill);
  if (!results.ok()) return results.status();
  if (results->front().blocked) {
    return internal::BlockedFollow(follower, followee);
  }
  return results->front();
}

absl::StatusOr<std::vector<FollowResult>> RedisFeedEngine::FollowMany(
    absl::Span<const FollowPair> pairs, const FollowOptions& options) {
  if (absl::Status status = internal::ValidateFollowPairs(pairs, "follow");
      !status.ok()) {
    return status;
  }
  absl::StatusOr<size_t> backfill = BackfillCount(options);
  if (!backfill.ok()) return backfill.status();
  return FollowPairs(pairs, *backfill);
}

absl::StatusOr<UnfollowResult> RedisFeedEngine::Unfollow(
    EntityId follower, EntityId followee, const UnfollowOptions& options) {
  if (absl::Status status =
          internal::ValidateFollowPair(follower, followee, "unfollow");
      !status.ok()) {
    return status;
  }
  const FollowPair pair{follower, followee};
  absl::StatusOr<std::vector<UnfollowResult>> results =
      UnfollowPairs(absl::MakeConstSpan(&pair, 1), options.keep_history);
  if (!results.ok()) return results.status();
  return results->front();
}

absl::StatusOr<std::vector<UnfollowResult>> RedisFeedEngine::UnfollowMany(
    absl::Span<const FollowPair> pairs, const UnfollowOptions& options) {
  if (absl::Status status = internal::ValidateFollowPairs(pairs, "unfollow");
      !status.ok()) {
    return status;
  }
  return UnfollowPairs(pairs, options.keep_history);
}

absl::StatusOr<size_t> RedisFeedEngine::BackfillCount(
    const FollowOptions& options) const {
  if (options.backfill.has_value()) {
    if (absl::Status status = internal::ValidateBackfill(*options.backfill);
        !status.ok()) {
      return status;
    }
  }
  if (options.kinds.has_value()) {
    if (absl::Status status =
            internal::ValidateKindFilter(*options.kinds, "FollowOptions.kinds");
        !status.ok()) {
      return status;
    }
    if (!options.kinds->every_kind()) {
      return NoActivityKinds("FollowOptions.kinds");
    }
  }
  return std::min(options.backfill.value_or(options_.default_backfill),
                  options_.max_timeline_length);
}

absl::StatusOr<std::vector<FollowResult>> RedisFeedEngine::FollowPairs(
    absl::Span<const FollowPair> pairs, size_t backfill) {
  std::vector<FollowResult> results(pairs.size());
  if (pairs.empty()) return results;
  std::vector<Command> followers;
  std::vector<Command> followees;
  followers.reserve(pairs.size());
  followees.reserve(pairs.size());
  const Micros now = Now();
  for (const FollowPair& pair : pairs) {
    if (hybrid()) {
      // Adds the follower and says whether the followee's publishes are
      // copied (hybrid_scripts.h).
      followers.push_back(ClusterClient::ScriptCommand(
          add_follower_, {Key(pair.followee, "fr"), Key(pair.followee, "fo")},
          {BigEndian(pair.follower),
           absl::StrCat(options_.hybrid_fanout_threshold),
           BigEndian(static_cast<uint64_t>(now)), SwitchLeaseUntil(now)}));
    } else {
      followers.push_back(PlainCommand(
          {"ZADD", Key(pair.followee, "fr"), "0", BigEndian(pair.follower)}));
    }
    followees.push_back(ClusterClient::ScriptCommand(
        follow_edge_, {Key(pair.follower, "fg"), Key(pair.follower, "rl")},
        {BigEndian(pair.followee)}));
  }
  absl::StatusOr<std::vector<Reply>> added = client_->Run(std::move(followers));
  if (!added.ok()) return added.status();
  absl::StatusOr<std::vector<Reply>> following =
      client_->Run(std::move(followees));
  if (!following.ok()) return following.status();
  // Per pair, with hybrid fan-out: the followee's mode ("" while copied)
  // and its newest key when the follower was added.
  std::vector<std::string> modes(pairs.size());
  std::vector<std::string> newest(pairs.size());
  // Follower-set entries that refused pairs added, taken back.
  std::vector<Command> undo;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const Reply& reply = (*following)[i];
    if (reply.type != Reply::Type::kInteger) {
      return UnexpectedReply("a follow", reply);
    }
    // 0: already following (also a pair repeated in the batch).
    results[i].created = reply.integer == 1;
    results[i].blocked = reply.integer == -1;
    const Reply& state = (*added)[i];
    if (hybrid()) {
      if (state.type != Reply::Type::kArray || state.elements.size() != 3) {
        return UnexpectedReply("adding a follower", state);
      }
      modes[i] = state.elements[1].str;
      newest[i] = state.elements[2].str;
    }
    const bool step_one_added =
        hybrid() ? state.elements[0].integer == 1 : state.integer == 1;
    if (results[i].blocked && step_one_added) {
      undo.push_back(PlainCommand({"ZREM", Key(pairs[i].followee, "fr"),
                                   BigEndian(pairs[i].follower)}));
    }
  }
  if (!undo.empty()) {
    if (absl::Status status = client_->Run(std::move(undo)).status();
        !status.ok()) {
      return status;
    }
  }
  if (hybrid()) {
    if (absl::Status merged =
            FollowMerged(pairs, backfill, modes, newest, results);
        !merged.ok()) {
      return merged;
    }
  }
  std::vector<bool> copy(pairs.size());
  for (size_t i = 0; i < pairs.size(); ++i) {
    copy[i] = results[i].created && modes[i].empty();
  }
  absl::StatusOr<std::vector<size_t>> copied =
      CopyRecent(pairs, copy, backfill);
  if (!copied.ok()) return copied.status();
  for (size_t i = 0; i < pairs.size(); ++i) {
    results[i].backfilled = (*copied)[i];
  }
  return results;
}

absl::StatusOr<std::vector<size_t>> RedisFeedEngine::CopyRecent(
    absl::Span<const FollowPair> pairs, const std::vector<bool>& copy,
    size_t backfill) {
  std::vector<size_t> counts(pairs.size());
  if (backfill == 0) return counts;
  // Each followee's newest entries, read once however many pairs follow it.
  absl::flat_hash_map<EntityId, std::vector<StoredEntry>> recent;
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (!copy[i] || recent.contains(pairs[i].followee)) continue;
    absl::StatusOr<std::vector<StoredEntry>> entries =
        Collect(Key(pairs[i].followee, "own"), ReadOrder::kNewestFirst,
                EntryKey::Min(), EntryKey::Max(), backfill);
    if (!entries.ok()) return entries.status();
    recent.emplace(pairs[i].followee, *std::move(entries));
  }
  const Micros now = Now();
  std::vector<Command> commands;
  std::vector<size_t> pair_of;  // the pair each command copies for
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (!copy[i]) continue;
    for (const StoredEntry& entry : recent[pairs[i].followee]) {
      commands.push_back(InsertCommand(
          Key(pairs[i].follower, "tl"), Key(pairs[i].follower, "fg"), entry,
          options_.max_timeline_length, now, pairs[i].followee));
      pair_of.push_back(i);
    }
  }
  absl::StatusOr<std::vector<InsertResult>> copied =
      RunInsertsEach(std::move(commands));
  if (!copied.ok()) return copied.status();
  for (size_t c = 0; c < copied->size(); ++c) {
    counts[pair_of[c]] += (*copied)[c].inserted + (*copied)[c].replaced;
  }
  return counts;
}

absl::Status RedisFeedEngine::FollowMerged(
    absl::Span<const FollowPair> pairs, size_t backfill,
    absl::Span<const std::string> modes, absl::Span<const std::string> newest,
    absl::Span<const FollowResult> results) {
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (!results[i].created || modes[i].empty()) continue;
    // Nothing is copied: the follower merges from where back-fill would
    // have begun copying.
    absl::StatusOr<std::string> boundary =
        FollowBoundary(pairs[i].followee, backfill, newest[i]);
    if (!boundary.ok()) return boundary.status();
    if (absl::Status status =
            MergeFor(absl::MakeConstSpan(&pairs[i].follower, 1),
                     pairs[i].followee, *boundary, /*keep_set=*/false);
        !status.ok()) {
      return status;
    }
  }
  for (size_t i = 0; i < pairs.size(); ++i) {
    // "start": this pair took the followee past the threshold, or took
    // over a switch whose walker's lease ran out. "becoming" on an edge
    // that was there: a retry of the Follow whose switch failed
    // half-way, which finishes it. Until the switch ends, every publish
    // is still copied, so merging from just above the newest key now
    // loses nothing.
    if (modes[i] == "start" ||
        (modes[i] == "becoming" && !results[i].created)) {
      if (absl::Status status = MergeAllFollowers(pairs[i].followee, newest[i]);
          !status.ok()) {
        return status;
      }
    }
  }
  // Another Follow may have started a switch after this one's first step,
  // and told the followers before this one was among them: look again. A
  // follower found so still gets its back-fill, and merges what is
  // published from now on.
  std::vector<size_t> copied;
  std::vector<Command> looks;
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (!results[i].created || !modes[i].empty()) continue;
    Command look =
        PlainCommand({"HMGET", Key(pairs[i].followee, "fo"), "mode", "np"});
    look.write = false;
    looks.push_back(std::move(look));
    copied.push_back(i);
  }
  if (looks.empty()) return absl::OkStatus();
  absl::StatusOr<std::vector<Reply>> states = client_->Run(std::move(looks));
  if (!states.ok()) return states.status();
  for (size_t c = 0; c < copied.size(); ++c) {
    const Reply& state = (*states)[c];
    if (state.type != Reply::Type::kArray || state.elements.size() != 2) {
      return UnexpectedReply("a fan-out state", state);
    }
    if (state.elements[0].type == Reply::Type::kNil) continue;
    const FollowPair& pair = pairs[copied[c]];
    if (absl::Status status =
            MergeFor(absl::MakeConstSpan(&pair.follower, 1), pair.followee,
                     JustAbove(state.elements[1].str), /*keep_set=*/true);
        !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<UnfollowResult>> RedisFeedEngine::UnfollowPairs(
    absl::Span<const FollowPair> pairs, bool keep_history) {
  std::vector<UnfollowResult> results(pairs.size());
  if (pairs.empty()) return results;
  // Kept copies are found by Retract through the followee's `fk` set: the
  // follower is recorded there before its edge goes, so a Retract always
  // finds it in `fr` or in `fk`.
  std::vector<Reply> recorded;
  if (keep_history) {
    std::vector<Command> keeps;
    keeps.reserve(pairs.size());
    for (const FollowPair& pair : pairs) {
      keeps.push_back(PlainCommand(
          {"ZADD", Key(pair.followee, "fk"), "0", BigEndian(pair.follower)}));
    }
    absl::StatusOr<std::vector<Reply>> added = client_->Run(std::move(keeps));
    if (!added.ok()) return added.status();
    recorded = *std::move(added);
  }
  const std::string now = BigEndian(static_cast<uint64_t>(Now()));
  std::vector<Command> scripts;
  scripts.reserve(pairs.size());
  for (const FollowPair& pair : pairs) {
    std::vector<std::string> keys = {Key(pair.follower, "tl"),
                                     Key(pair.follower, "fg"),
                                     Key(pair.follower, "hf")};
    std::vector<std::string> args = {BigEndian(pair.followee)};
    if (keep_history) {
      keys.push_back(Key(pair.follower, "rl"));
      args.push_back("keep");
      args.push_back(now);
    }
    scripts.push_back(ClusterClient::ScriptCommand(unfollow_, std::move(keys),
                                                   std::move(args)));
  }
  absl::StatusOr<std::vector<Reply>> replies = client_->Run(std::move(scripts));
  if (!replies.ok()) return replies.status();
  // Per pair, the key from which it merged the followee, when its merge
  // is to be kept as copies.
  std::vector<std::string> merged_from(pairs.size());
  std::vector<Command> drops;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const Reply& reply = (*replies)[i];
    absl::StatusOr<std::vector<int64_t>> done =
        LeadingIntegers(reply, 2, "an unfollow");
    if (!done.ok()) return done.status();
    if (reply.elements.size() != 3) {
      return UnexpectedReply("an unfollow", reply);
    }
    const bool was = (*done)[0] != 0;
    results[i] = UnfollowResult{was, static_cast<size_t>((*done)[1])};
    merged_from[i] = reply.elements[2].str;
    // Also for pairs whose follow was already undone here, so a retry of
    // an Unfollow that failed half-way converges.
    drops.push_back(PlainCommand(
        {"ZREM", Key(pairs[i].followee, "fr"), BigEndian(pairs[i].follower)}));
    // A pair that followed nothing kept nothing: take back what this call
    // recorded (never an earlier record, which still has kept copies).
    if (keep_history && !was && recorded[i].integer == 1) {
      drops.push_back(PlainCommand({"ZREM", Key(pairs[i].followee, "fk"),
                                    BigEndian(pairs[i].follower)}));
    }
  }
  if (absl::Status dropped = client_->Run(std::move(drops)).status();
      !dropped.ok()) {
    return dropped;
  }
  if (absl::Status kept = KeepMergedHistory(pairs, merged_from); !kept.ok()) {
    return kept;
  }
  return results;
}

absl::Status RedisFeedEngine::KeepMergedHistory(
    absl::Span<const FollowPair> pairs,
    absl::Span<const std::string> merged_from) {
  const Micros now = Now();
  std::vector<Command> copies;
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (merged_from[i].size() != 16) continue;
    const absl::string_view from = merged_from[i];
    absl::StatusOr<std::vector<StoredEntry>> shown = Collect(
        Key(pairs[i].followee, "own"), ReadOrder::kNewestFirst,
        EntryKeyOfBytes(from), EntryKey::Max(), options_.max_timeline_length);
    if (!shown.ok()) return shown.status();
    for (const StoredEntry& entry : *shown) {
      copies.push_back(InsertCommand(
          Key(pairs[i].follower, "tl"), Key(pairs[i].follower, "fg"), entry,
          options_.max_timeline_length, now, std::nullopt));
    }
  }
  return RunInserts(std::move(copies)).status();
}

}  // namespace feedcore::redis
