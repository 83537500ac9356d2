// FeedEngineImpl's reads: pages of home, own and world feeds (home feeds
// merged with the own feeds of hybrid followees, the world feed from every
// shard's slice), CountNewer, and grouped home feeds.
#include <algorithm>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "contract/feed_arguments.h"
#include "contract/group_pages.h"
#include "contract/page_merger.h"
#include "contract/page_range.h"
#include "feed/feed_engine_impl.h"
#include "timeline/group_index.h"

namespace feedcore::internal {

void FeedEngineImpl::CollectDelivered(FeedType kind, EntityId owner,
                                      ReadOrder order, EntryKey lo, EntryKey hi,
                                      Micros now, size_t want,
                                      std::vector<StoredEntry>* out,
                                      uint64_t kinds,
                                      std::vector<EntityId>* excluded) const {
  if (kind == FeedType::kOwn) {
    ShardOf(owner).Collect({owner, kind}, order, lo, hi, now, want, out, kinds);
    return;
  }
  PageMerger merger(order, want);
  auto add_source = [&](const Shard& shard, TimelineId id) {
    EntryKey source_lo = lo;
    EntryKey source_hi = hi;
    if (!merger.Narrow(&source_lo, &source_hi)) return;
    std::vector<StoredEntry> entries;
    shard.Collect(id, order, source_lo, source_hi, now, want, &entries, kinds);
    merger.Add(std::move(entries));
  };
  if (kind == FeedType::kWorld) {
    for (size_t s = 0; s < options_.shards; ++s) {
      add_source(shards_[s], {0, FeedType::kWorld});
    }
  } else {
    // The home timeline and the list of merged-at-read followees come from
    // one shard under one lock; each followee's own feed from its shard.
    // Collected straight into `out` (reserved by the caller): with no
    // merged-at-read followee, that is the whole answer.
    std::vector<MergedFollowee> hybrid;
    // The kinds each one's follow delivers (FollowOptions::kinds).
    std::vector<uint64_t> hybrid_kinds;
    size_t home_size = 0;
    {
      const Shard& shard = ShardOf(owner);
      ReaderLock lock(&shard.mu());
      const Timeline* home = shard.FindTimeline({owner, FeedType::kHome});
      const GraphNode* node = shard.FindNode(owner);
      if (excluded != nullptr && node != nullptr && node->lists != nullptr &&
          node->lists->has_exclusive()) {
        *excluded = node->lists->Excluded();
      }
      if (node != nullptr) {
        // Followees the owner blocks or mutes are not merged (relations.h).
        for (const MergedFollowee& m : node->hybrid_following) {
          if (!node->relations.HidesInTimeline(m.actor, now)) {
            hybrid.push_back(m);
            hybrid_kinds.push_back(node->relations.KindsFollowed(m.actor));
          }
        }
      }
      if (hybrid.empty()) {
        if (home != nullptr) {
          home->Collect(order, lo, hi, now, want, out, kinds);
        }
        return;
      }
      home_size = home == nullptr ? 0 : home->size();
    }
    if (std::optional<EntryKey> floor =
            MergedCapFloor(owner, home_size, hybrid, hybrid_kinds)) {
      lo = std::max(lo, *floor);
      if (lo > hi) return;
    }
    add_source(ShardOf(owner), {owner, FeedType::kHome});
    for (size_t f = 0; f < hybrid.size(); ++f) {
      const MergedFollowee& followee = hybrid[f];
      EntryKey source_lo = std::max(lo, followee.boundary);
      EntryKey source_hi = hi;
      if (source_lo > source_hi || !merger.Narrow(&source_lo, &source_hi)) {
        continue;
      }
      std::vector<StoredEntry> entries;
      ShardOf(followee.actor)
          .Collect({followee.actor, FeedType::kOwn}, order, source_lo,
                   source_hi, now, want, &entries, kinds & hybrid_kinds[f]);
      merger.Add(std::move(entries));
    }
  }
  *out = merger.Take();
}

std::optional<EntryKey> FeedEngineImpl::MergedCapFloor(
    EntityId owner, size_t home_size, absl::Span<const MergedFollowee> merged,
    absl::Span<const uint64_t> merged_kinds) const {
  const size_t cap = options_.max_timeline_length;
  // Cheap bound first: the merged view cannot exceed the cap when the
  // timeline and the whole own feeds together fit in it.
  size_t bound = home_size;
  for (const MergedFollowee& followee : merged) {
    const Shard& shard = ShardOf(followee.actor);
    ReaderLock lock(&shard.mu());
    const Timeline* own = shard.FindTimeline({followee.actor, FeedType::kOwn});
    if (own != nullptr) bound += own->size();
  }
  if (bound <= cap) return std::nullopt;
  // Every entry held counts, expired ones too, as in a timeline's cap.
  constexpr Micros kNothingExpired = std::numeric_limits<Micros>::min();
  PageMerger newest(ReadOrder::kNewestFirst, cap + 1);
  // A merged followee's copies would be of the kinds its follow delivers.
  auto add = [&](const Shard& shard, TimelineId id, EntryKey from,
                 uint64_t kinds) {
    EntryKey lo = from;
    EntryKey hi = EntryKey::Max();
    if (!newest.Narrow(&lo, &hi)) return;
    std::vector<StoredEntry> entries;
    shard.Collect(id, ReadOrder::kNewestFirst, lo, hi, kNothingExpired, cap + 1,
                  &entries, kinds);
    newest.Add(std::move(entries));
  };
  add(ShardOf(owner), {owner, FeedType::kHome}, EntryKey::Min(),
      KindFilter::kEveryKind);
  for (size_t f = 0; f < merged.size(); ++f) {
    add(ShardOf(merged[f].actor), {merged[f].actor, FeedType::kOwn},
        merged[f].boundary, merged_kinds[f]);
  }
  std::vector<StoredEntry> kept = newest.Take();
  if (kept.size() <= cap) return std::nullopt;
  return kept[cap - 1].key();
}

absl::StatusOr<Page> FeedEngineImpl::ReadFeed(
    FeedType kind, EntityId owner, const ReadOptions& options) const {
  absl::StatusOr<PageRange> range =
      ResolvePageRange(kind, owner, options, options_.max_page_size);
  if (!range.ok()) return range.status();
  if (kind == FeedType::kHome) NoteTimelineRead(owner);
  Page page;
  if (range->empty) return page;
  page.entries.reserve(options.limit + 1);
  // One more than asked tells whether another page follows.
  CollectFeed(kind, owner, options.order, range->lo, range->hi,
              options_.clock->Now(), options.limit + 1, &page.entries,
              options.kinds.kinds);
  FinishPage(kind, owner, options, &page);
  if (options.hydrate) store_.Hydrate(&page.entries);
  return page;
}

absl::StatusOr<Page> FeedEngineImpl::ReadTimeline(
    EntityId owner, const ReadOptions& options) const {
  return ReadFeed(FeedType::kHome, owner, options);
}

absl::StatusOr<Page> FeedEngineImpl::ReadOwn(EntityId actor,
                                             const ReadOptions& options) const {
  return ReadFeed(FeedType::kOwn, actor, options);
}

absl::StatusOr<Page> FeedEngineImpl::ReadWorld(
    const ReadOptions& options) const {
  return ReadFeed(FeedType::kWorld, 0, options);
}

absl::StatusOr<size_t> FeedEngineImpl::CountNewer(EntityId reader,
                                                  const EntryKey& after,
                                                  size_t max_count) const {
  if (absl::Status bad =
          ValidateCountNewer(after, max_count, options_.max_page_size);
      !bad.ok()) {
    return bad;
  }
  NoteTimelineRead(reader);
  std::optional<EntryKey> lo = NewerKey(after);
  if (!lo.has_value()) return 0;
  std::vector<StoredEntry> newer;
  CollectFeed(FeedType::kHome, reader, ReadOrder::kOldestFirst, *lo,
              EntryKey::Max(), options_.clock->Now(), max_count, &newer);
  return newer.size();
}

absl::StatusOr<GroupPage> FeedEngineImpl::ReadGroups(
    EntityId owner, const GroupReadOptions& options) const {
  if (!options_.aggregation.enabled) {
    return absl::FailedPreconditionError(
        "grouped reads need EngineOptions.aggregation.enabled");
  }
  absl::StatusOr<std::optional<EntryKey>> start =
      GroupPageStart(owner, options, options_.max_page_size,
                     /*notifications=*/false);
  if (!start.ok()) return start.status();
  const std::optional<EntryKey> after = *start;
  NoteTimelineRead(owner);
  const GroupListLimits limits{options_.aggregation.max_group_actors,
                               options_.aggregation.max_group_entries};
  const Micros now = options_.clock->Now();
  // One more than asked tells whether another page follows.
  const size_t want = options.limit + 1;
  GroupPage page;
  bool indexed = false;
  size_t sources = 1;
  {
    const Shard& shard = ShardOf(owner);
    ReaderLock lock(&shard.mu());
    const GraphNode* node = shard.FindNode(owner);
    if (node != nullptr) sources += node->hybrid_following.size();
    // The index groups every kind, every repost and every account: a
    // filtered read, one that may hide reposts, or of an owner with an
    // exclusive list, groups at read time.
    const bool excludes = node != nullptr && node->lists != nullptr &&
                          node->lists->has_exclusive();
    if (sources == 1 && options.kinds.every_kind() &&
        options_.reposts.window == 0 && !excludes) {
      const Timeline* home = shard.FindTimeline({owner, FeedType::kHome});
      if (home == nullptr) {
        indexed = true;
      } else if (home->MinExpiry() > now) {
        // Nothing in it has expired, so the index's counts are the
        // visible ones.
        home->groups()->Collect(after, want, limits, &page.groups);
        indexed = true;
      }
    }
  }
  if (!indexed) {
    std::vector<StoredEntry> entries;
    CollectFeed(FeedType::kHome, owner, ReadOrder::kNewestFirst,
                EntryKey::Min(), EntryKey::Max(), now,
                sources * options_.max_timeline_length, &entries,
                options.kinds.kinds);
    page.groups = GroupEntries(entries, after, want, limits);
  }
  FinishGroupPage(owner, options, /*notifications=*/false, &page);
  return page;
}

}  // namespace feedcore::internal
