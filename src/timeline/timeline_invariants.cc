// Timeline::CheckInvariants: the structure's invariants, checked by a full
// walk, for tests and fuzz targets.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>

#include "timeline/timeline.h"

namespace feedcore::internal {

bool Timeline::CheckInvariants() const {
  size_t count = 0;
  size_t inversions = 0;
  const Chunk* last = nullptr;
  std::optional<EntryKey> newer_key;
  std::optional<Micros> newer_expiry;
  Micros min_expiry = std::numeric_limits<Micros>::max();
  int max_height = 0;
  std::array<uint32_t, kMaxActivityKind + 1> kinds{};
  for (const Chunk* c = head_[0]; c != nullptr; c = c->next[0]) {
    if (c->height < 1 || c->height > kMaxHeight || c->count() < 1 ||
        c->end > c->capacity || c->capacity > kMaxChunkEntries ||
        (c->grouped != 0) != grouped_) {
      return false;
    }
    for (int s = c->end - 1; s >= c->begin; --s) {
      if (newer_key.has_value() && !(*newer_key > c->key(s))) return false;
      if (newer_expiry.has_value() && *newer_expiry < c->expires_at(s)) {
        ++inversions;
      }
      newer_key = c->key(s);
      newer_expiry = c->expires_at(s);
      min_expiry = std::min(min_expiry, *newer_expiry);
      if (expiry_index_ != nullptr &&
          !expiry_index_->contains({c->expires_at(s), c->key(s)})) {
        return false;
      }
      ++kinds[c->kind(s)];
      ++count;
    }
    max_height = std::max(max_height, static_cast<int>(c->height));
    last = c;
  }
  if (count != size_ || last != tail_ || inversions != inversions_ ||
      min_expiry != min_expiry_) {
    return false;
  }
  if (max_height > height_ || height_ < 1 || height_ > kMaxHeight) {
    return false;
  }
  if (size_ > 0 && head_[height_ - 1] == nullptr) return false;
  for (int level = height_; level < kMaxHeight; ++level) {
    if (head_[level] != nullptr) return false;
  }
  // Each upper level must be exactly the chunks of level 0 that are tall
  // enough, in the same order.
  for (int level = 1; level < height_; ++level) {
    const Chunk* upper = head_[level];
    for (const Chunk* c = head_[0]; c != nullptr; c = c->next[0]) {
      if (c->height > level) {
        if (upper != c) return false;
        upper = upper->next[level];
      }
    }
    if (upper != nullptr) return false;
  }
  if (inversions_ > 0 && expiry_index_ == nullptr) return false;
  if (kind_counts_ != nullptr && (!cap_per_kind_ || *kind_counts_ != kinds)) {
    return false;
  }
  // Counted per kind from the first entry of a kind other than 0.
  if (cap_per_kind_ && kind_counts_ == nullptr && kinds[0] != size_) {
    return false;
  }
  if (expiry_index_ != nullptr && expiry_index_->size() != size_) {
    return false;
  }
  if (size_ > 0 &&
      (newest_key_ != head_[0]->newest() ||
       newest_expiry_ != head_[0]->expires_at(head_[0]->end - 1))) {
    return false;
  }
  if (groups_ != nullptr &&
      (groups_->entry_count() != size_ || !groups_->CheckInvariants())) {
    return false;
  }
  return true;
}

}  // namespace feedcore::internal
