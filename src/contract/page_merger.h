// PageMerger: one page of a feed read from several timelines (a home
// timeline merged with the own feeds of its hybrid followees, or the world
// feed's slices), and the key arithmetic of paging.
//
// Thread safety: none; a merger belongs to one read.
#ifndef FEEDCORE_SRC_CONTRACT_PAGE_MERGER_H_
#define FEEDCORE_SRC_CONTRACT_PAGE_MERGER_H_

#include <cstddef>
#include <optional>
#include <vector>

#include "feedcore/feed_engine.h"
#include "feedcore/types.h"

// Exported from the shared libfeedcore for the Redis backend's library,
// which calls this one copy (CMakeLists.txt, feedcore_contract).
#pragma GCC visibility push(default)
namespace feedcore::internal {

// The key just older than `key`, if any.
std::optional<EntryKey> OlderKey(EntryKey key);
// The key just newer than `key`, if any.
std::optional<EntryKey> NewerKey(EntryKey key);

// The best `want` entries of several sources, kept sorted in `order`
// without duplicate keys (an entry may be both copied and merged while an
// actor becomes hybrid). Once it holds `want` entries, only keys that would
// still make the page are worth collecting from the next source, so each
// source is read within a narrowing range: merging k sources copies about
// want x ln(k) entries instead of want x k.
class PageMerger {
 public:
  PageMerger(ReadOrder order, size_t want) : order_(order), want_(want) {}

  // Narrows [lo, hi] to the keys that could still enter the page; false if
  // none can.
  bool Narrow(EntryKey* lo, EntryKey* hi) const;

  // Adds a source's entries, sorted in `order`. O(want + source size).
  void Add(std::vector<StoredEntry>&& source);

  // The page, best first; the merger is empty afterwards.
  std::vector<StoredEntry> Take() { return std::move(best_); }

 private:
  const ReadOrder order_;
  const size_t want_;
  std::vector<StoredEntry> best_;
  std::vector<StoredEntry> merged_;
};

}  // namespace feedcore::internal
#pragma GCC visibility pop

#endif  // FEEDCORE_SRC_CONTRACT_PAGE_MERGER_H_
