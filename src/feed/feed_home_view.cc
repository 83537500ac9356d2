// FeedEngineImpl's home view: what every read of a home timeline shows of
// what was delivered to it (copies and merged followees, CollectDelivered),
// less the entries of the accounts in the owner's exclusive lists
// (ListSettings::exclusive), less the reposts the repost window hides
// (EngineOptions::reposts): a repost is left out while the activity it
// reposts, or an older repost of it, is among the `window` entries just
// older than it in that view.
//
// Both rules apply when a home feed is read, to the delivered feed, so
// that a copied, a merged and a rebuilt timeline show the same. A repost's
// fate depends only on entries older than it, so a page's hidden reposts
// stay hidden as newer entries arrive and a cursor resumes where it
// stopped.
#include <algorithm>
#include <limits>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "contract/page_merger.h"
#include "feed/feed_engine_impl.h"

namespace feedcore::internal {

void FeedEngineImpl::CollectFeed(FeedType kind, EntityId owner, ReadOrder order,
                                 EntryKey lo, EntryKey hi, Micros now,
                                 size_t want, std::vector<StoredEntry>* out,
                                 uint64_t kinds) const {
  if (kind != FeedType::kHome) {
    CollectDelivered(kind, owner, order, lo, hi, now, want, out, kinds);
    return;
  }
  CollectHome(owner, order, lo, hi, now, want, out, kinds,
              /*hide_reposts=*/options_.reposts.window != 0);
}

void FeedEngineImpl::CollectHome(EntityId owner, ReadOrder order, EntryKey lo,
                                 EntryKey hi, Micros now, size_t want,
                                 std::vector<StoredEntry>* out, uint64_t kinds,
                                 bool hide_reposts) const {
  std::vector<EntityId> excluded_list;
  CollectDelivered(FeedType::kHome, owner, order, lo, hi, now, want, out, kinds,
                   &excluded_list);
  if (excluded_list.empty() && !hide_reposts) return;
  const absl::flat_hash_set<EntityId> excluded(excluded_list.begin(),
                                               excluded_list.end());
  std::vector<StoredEntry> batch = std::move(*out);
  out->clear();
  while (!batch.empty()) {
    const EntryKey last = batch.back().key();
    const bool range_left = batch.size() == want;
    if (!excluded.empty()) {
      std::erase_if(batch, [&excluded](const StoredEntry& entry) {
        return excluded.contains(entry.actor);
      });
    }
    if (hide_reposts) HideShownReposts(owner, now, &batch);
    out->insert(out->end(), std::make_move_iterator(batch.begin()),
                std::make_move_iterator(batch.end()));
    // A full batch that lost entries leaves the range after its last
    // entry to fill them from.
    if (!range_left || out->size() >= want) break;
    const std::optional<EntryKey> next =
        order == ReadOrder::kNewestFirst ? OlderKey(last) : NewerKey(last);
    if (!next.has_value()) break;
    (order == ReadOrder::kNewestFirst ? hi : lo) = *next;
    if (lo > hi) break;
    // A whole `want` a batch, not only what is missing, so that a long run
    // of left-out entries costs few batches.
    batch.clear();
    CollectDelivered(FeedType::kHome, owner, order, lo, hi, now, want, &batch,
                     kinds);
  }
  if (out->size() > want) out->resize(want);
}

size_t FeedEngineImpl::HideShownReposts(EntityId owner, Micros now,
                                        std::vector<StoredEntry>* batch) const {
  const uint64_t repost_kinds = options_.reposts.kinds.kinds;
  const size_t window = options_.reposts.window;
  std::optional<EntryKey> newest;
  std::optional<EntryKey> oldest;
  for (const StoredEntry& entry : *batch) {
    if (((repost_kinds >> entry.kind) & 1) == 0) continue;
    const EntryKey key = entry.key();
    if (!newest.has_value() || key > *newest) newest = key;
    if (!oldest.has_value() || key < *oldest) oldest = key;
  }
  if (!newest.has_value()) return 0;
  // The view before the window, every kind, newest first: from the newest
  // repost of the batch to its oldest (newest first, so `want` is no
  // buffer size), then `window` more.
  std::vector<StoredEntry> view;
  CollectHome(owner, ReadOrder::kNewestFirst, *oldest, *newest, now,
              std::numeric_limits<size_t>::max(), &view, KindFilter::kEveryKind,
              /*hide_reposts=*/false);
  if (std::optional<EntryKey> below = OlderKey(*oldest)) {
    std::vector<StoredEntry> older;
    CollectHome(owner, ReadOrder::kNewestFirst, EntryKey::Min(), *below, now,
                window, &older, KindFilter::kEveryKind, /*hide_reposts=*/false);
    view.insert(view.end(), std::make_move_iterator(older.begin()),
                std::make_move_iterator(older.end()));
  }
  std::vector<ActivityId> reposted;
  store_.RepostsOf(view, repost_kinds, &reposted);
  std::vector<EntryKey> hidden;
  for (size_t i = 0; i < view.size(); ++i) {
    const ActivityId original = reposted[i];
    if (original == 0) continue;
    const size_t end = std::min(view.size(), i + 1 + window);
    for (size_t j = i + 1; j < end; ++j) {
      if (view[j].activity_id == original || reposted[j] == original) {
        hidden.push_back(view[i].key());
        break;
      }
    }
  }
  if (hidden.empty()) return 0;
  // `view` is newest first, and so is `hidden`.
  const size_t before = batch->size();
  std::erase_if(*batch, [&hidden](const StoredEntry& entry) {
    return std::binary_search(
        hidden.begin(), hidden.end(), entry.key(),
        [](const EntryKey& a, const EntryKey& b) { return a > b; });
  });
  return before - batch->size();
}

}  // namespace feedcore::internal
