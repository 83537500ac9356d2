// Timeline's cap per kind (timeline.h, KeepCapPerKind): the counts of the
// kinds held, and the drop of a kind's oldest entry.
#include <cassert>
#include <limits>
#include <memory>
#include <vector>

#include "timeline/timeline.h"

namespace feedcore::internal {

void Timeline::KeepCapPerKind() {
  assert(size_ == 0);
  cap_per_kind_ = true;
}

void Timeline::CountKind(ActivityKind kind, int sign) {
  if (!cap_per_kind_) return;
  if (kind_counts_ == nullptr) {
    if (kind == 0) return;
    kind_counts_ =
        std::make_unique<std::array<uint32_t, kMaxActivityKind + 1>>();
    kind_counts_->fill(0);
    (*kind_counts_)[0] = static_cast<uint32_t>(size_);
  }
  (*kind_counts_)[kind] += static_cast<uint32_t>(sign);
}

EntryKey Timeline::RemoveOldestOfKind(ActivityKind kind) {
  // Every entry held counts, expired ones too, as in the cap.
  std::vector<StoredEntry> oldest;
  CollectOldestFirst(EntryKey::Min(), EntryKey::Max(),
                     std::numeric_limits<Micros>::min(), 1, uint64_t{1} << kind,
                     &oldest);
  assert(oldest.size() == 1);
  const EntryKey key = oldest[0].key();
  const bool removed = Remove(key);
  assert(removed);
  (void)removed;
  return key;
}

}  // namespace feedcore::internal
