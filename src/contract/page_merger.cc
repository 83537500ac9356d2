#include "contract/page_merger.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace feedcore::internal {

std::optional<EntryKey> OlderKey(EntryKey key) {
  if (key.activity_id > 0) return EntryKey{key.ts, key.activity_id - 1};
  if (key.ts > 0) {
    return EntryKey{key.ts - 1, std::numeric_limits<ActivityId>::max()};
  }
  return std::nullopt;
}

std::optional<EntryKey> NewerKey(EntryKey key) {
  if (key.activity_id < std::numeric_limits<ActivityId>::max()) {
    return EntryKey{key.ts, key.activity_id + 1};
  }
  if (key.ts < std::numeric_limits<Micros>::max()) {
    return EntryKey{key.ts + 1, 0};
  }
  return std::nullopt;
}

bool PageMerger::Narrow(EntryKey* lo, EntryKey* hi) const {
  if (best_.size() < want_) return true;
  const EntryKey worst = best_.back().key();
  if (order_ == ReadOrder::kNewestFirst) {
    std::optional<EntryKey> newer = NewerKey(worst);
    if (!newer.has_value()) return false;
    *lo = std::max(*lo, *newer);
  } else {
    std::optional<EntryKey> older = OlderKey(worst);
    if (!older.has_value()) return false;
    *hi = std::min(*hi, *older);
  }
  return *lo <= *hi;
}

void PageMerger::Add(std::vector<StoredEntry>&& source) {
  if (source.empty()) return;
  if (best_.empty()) {
    best_ = std::move(source);
    return;
  }
  merged_.clear();
  merged_.reserve(std::min(want_, best_.size() + source.size()));
  auto a = best_.begin();
  auto b = source.begin();
  while (merged_.size() < want_ && (a != best_.end() || b != source.end())) {
    const bool take_a = b == source.end() ||
                        (a != best_.end() && (order_ == ReadOrder::kNewestFirst
                                                  ? a->key() >= b->key()
                                                  : a->key() <= b->key()));
    StoredEntry& next = take_a ? *a++ : *b++;
    if (!merged_.empty() && merged_.back().key() == next.key()) continue;
    merged_.push_back(std::move(next));
  }
  best_.swap(merged_);
}

}  // namespace feedcore::internal
