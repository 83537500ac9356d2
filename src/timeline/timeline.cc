#include "timeline/timeline.h"

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstring>

#include "timeline/skiplist_height.h"

namespace feedcore::internal {
namespace {

// The first chunk of a timeline holds this many; each chunk that fills up
// while it is the newest grows by half until kMaxChunkEntries.
constexpr int kFirstChunkEntries = 2;

int GrownCapacity(int capacity) {
  return std::min(kMaxChunkEntries, capacity + std::max(1, capacity / 2));
}

constexpr Micros kNoNewer = std::numeric_limits<Micros>::max();
constexpr Micros kNoOlder = std::numeric_limits<Micros>::min();

// expires_at - ts when it does not overflow.
bool TtlOf(Micros expires_at, Micros ts, Micros* ttl) {
  return !__builtin_sub_overflow(expires_at, ts, ttl);
}

}  // namespace

int Timeline::HeightFor(EntryKey key, uint64_t seed) {
  return HeightFromBits(
      MixBits(MixBits(static_cast<uint64_t>(key.ts) ^ seed) ^ key.activity_id),
      kMaxHeight);
}

Timeline::Timeline(NodeArena* arena, uint64_t height_seed)
    : arena_(arena), height_seed_(height_seed) {}

Timeline::~Timeline() {
  groups_.reset();
  Chunk* chunk = head_[0];
  while (chunk != nullptr) {
    Chunk* next = chunk->next[0];
    arena_->Free(chunk, chunk->bytes());
    chunk = next;
  }
}

void Timeline::EnableGroups(bool index) {
  assert(size_ == 0);
  grouped_ = true;
  if (index) groups_ = std::make_unique<GroupIndex>();
}

Timeline::Chunk* Timeline::NewChunk(int height, int capacity,
                                    bool expiry_column, bool kind_column,
                                    Micros shared, bool same_expiry) {
  // The slots that fit in the allocation's rounding come free.
  const size_t bytes = Chunk::AllocationBytes(
      Chunk::Bytes(height, capacity, expiry_column, grouped_, kind_column));
  while (capacity < kMaxChunkEntries &&
         Chunk::Bytes(height, capacity + 1, expiry_column, grouped_,
                      kind_column) <= bytes) {
    ++capacity;
  }
  Chunk* chunk = static_cast<Chunk*>(arena_->Allocate(bytes));
  chunk->height = static_cast<uint8_t>(height);
  chunk->capacity = static_cast<uint8_t>(capacity);
  chunk->begin = 0;
  chunk->end = 0;
  chunk->has_expiry_column = expiry_column ? 1 : 0;
  chunk->grouped = grouped_ ? 1 : 0;
  chunk->same_expiry = same_expiry ? 1 : 0;
  chunk->has_kind_column = kind_column ? 1 : 0;
  chunk->shared = shared;
  for (int i = 0; i < height; ++i) chunk->next[i] = nullptr;
  return chunk;
}

Timeline::Chunk* Timeline::NewChunkFor(const StoredEntry& entry, int height,
                                       int capacity) {
  Micros ttl = 0;
  const bool uniform = TtlOf(entry.expires_at, entry.ts, &ttl);
  return NewChunk(height, capacity, !uniform, entry.kind != 0,
                  uniform ? ttl : 0, false);
}

bool Timeline::Fits(const Chunk* chunk, const StoredEntry& entry) {
  if (chunk->has_expiry_column) return true;
  if (chunk->same_expiry) return entry.expires_at == chunk->shared;
  Micros ttl = 0;
  return TtlOf(entry.expires_at, entry.ts, &ttl) && ttl == chunk->shared;
}

bool Timeline::FitsKind(const Chunk* chunk, const StoredEntry& entry) {
  return entry.kind == 0 || chunk->has_kind_column != 0;
}

bool Timeline::Readopt(Chunk* chunk, const StoredEntry& entry) {
  if (chunk->has_expiry_column || chunk->count() != 1) return false;
  const int only = chunk->begin;
  const Micros expiry = chunk->expires_at(only);
  Micros ttl = 0;
  Micros entry_ttl = 0;
  if (entry.expires_at == expiry) {
    chunk->same_expiry = 1;
    chunk->shared = expiry;
    return true;
  }
  if (TtlOf(expiry, chunk->rows()[only].ts, &ttl) &&
      TtlOf(entry.expires_at, entry.ts, &entry_ttl) && ttl == entry_ttl) {
    chunk->same_expiry = 0;
    chunk->shared = ttl;
    return true;
  }
  return false;
}

void Timeline::WriteSlot(Chunk* chunk, int slot, const StoredEntry& entry) {
  chunk->rows()[slot] = {entry.ts, entry.activity_id, entry.actor};
  if (chunk->has_expiry_column) chunk->expiry_column()[slot] = entry.expires_at;
  if (grouped_) chunk->group()[slot] = entry.group;
  assert(entry.kind == 0 || chunk->has_kind_column);
  if (chunk->has_kind_column) chunk->kind_column()[slot] = entry.kind;
}

void Timeline::CopySlots(const Chunk* from, int from_slot, Chunk* to,
                         int to_slot, int n) {
  if (n <= 0) return;
  const size_t bytes = sizeof(int64_t) * static_cast<size_t>(n);
  std::memmove(to->rows() + to_slot, from->rows() + from_slot,
               sizeof(TimelineRow) * static_cast<size_t>(n));
  if (to->has_expiry_column && from->has_expiry_column) {
    std::memmove(to->expiry_column() + to_slot,
                 from->expiry_column() + from_slot, bytes);
  } else if (to->has_expiry_column) {
    // Two chunks: the source's TTL becomes explicit.
    for (int i = 0; i < n; ++i) {
      to->expiry_column()[to_slot + i] = from->expires_at(from_slot + i);
    }
  }
  if (to->grouped) {
    std::memmove(to->group() + to_slot, from->group() + from_slot, bytes);
  }
  if (to->has_kind_column) {
    if (from->has_kind_column) {
      std::memmove(to->kind_column() + to_slot, from->kind_column() + from_slot,
                   static_cast<size_t>(n));
    } else {
      std::memset(to->kind_column() + to_slot, 0, static_cast<size_t>(n));
    }
  }
  assert(to->has_kind_column || !from->has_kind_column);
}

void Timeline::AppendEntry(const Chunk* chunk, int slot,
                           std::vector<StoredEntry>* out) const {
  // Filled in place: building a StoredEntry and moving it in costs a
  // string's construction, move and destruction per entry.
  StoredEntry& entry = out->emplace_back();
  const TimelineRow& row = chunk->rows()[slot];
  entry.ts = row.ts;
  entry.activity_id = row.activity_id;
  entry.actor = row.actor;
  entry.expires_at = chunk->expires_at(slot);
  if (grouped_) entry.group = chunk->group()[slot];
  entry.kind = chunk->kind(slot);
}

Timeline::Chunk* Timeline::NextAt(Chunk* prev, int level) const {
  return prev == nullptr ? head_[level] : prev->next[level];
}

void Timeline::SetNextAt(Chunk* prev, int level, Chunk* next) {
  if (prev == nullptr) {
    head_[level] = next;
  } else {
    prev->next[level] = next;
  }
}

Timeline::Chunk* Timeline::FindChunk(EntryKey key, Links* prev) const {
  prev->fill(nullptr);
  return Descend(
      head_.data(), height_,
      [key](const Chunk* c) { return c->oldest() > key; }, prev);
}

Timeline::Chunk* Timeline::Reshape(Chunk* chunk, const Links& prev,
                                   int capacity, bool expiry_column,
                                   bool kind_column) {
  Chunk* reshaped =
      NewChunk(chunk->height, capacity, expiry_column, kind_column,
               chunk->shared, chunk->same_expiry != 0);
  for (int i = 0; i < chunk->height; ++i) {
    reshaped->next[i] = chunk->next[i];
    SetNextAt(prev[i], i, reshaped);
  }
  CopySlots(chunk, chunk->begin, reshaped, 0, chunk->count());
  reshaped->end = static_cast<uint8_t>(chunk->count());
  if (tail_ == chunk) tail_ = reshaped;
  arena_->Free(chunk, chunk->bytes());
  return reshaped;
}

Micros Timeline::NewerExpiry(const Chunk* chunk, int slot, const Chunk* prev0) {
  if (slot < chunk->end) return chunk->expires_at(slot);
  return prev0 == nullptr ? kNoNewer : prev0->expires_at(prev0->begin);
}

Micros Timeline::OlderExpiry(const Chunk* chunk, int slot) {
  if (slot > chunk->begin) return chunk->expires_at(slot - 1);
  const Chunk* older = chunk->next[0];
  return older == nullptr ? kNoOlder : older->expires_at(older->end - 1);
}

void Timeline::CountPair(Micros newer, Micros older, int sign) {
  if (newer == kNoNewer || older == kNoOlder || !(newer < older)) return;
  if (sign > 0) {
    ++inversions_;
  } else {
    assert(inversions_ > 0);
    --inversions_;
  }
}

void Timeline::RecountInversions() {
  inversions_ = 0;
  Micros newer = kNoNewer;
  for (const Chunk* c = head_[0]; c != nullptr; c = c->next[0]) {
    for (int s = c->end - 1; s >= c->begin; --s) {
      CountPair(newer, c->expires_at(s), +1);
      newer = c->expires_at(s);
    }
  }
}

void Timeline::BuildExpiryIndex() {
  expiry_index_ = std::make_unique<ExpiryIndex>();
  for (const Chunk* c = head_[0]; c != nullptr; c = c->next[0]) {
    for (int s = c->begin; s < c->end; ++s) {
      expiry_index_->insert({c->expires_at(s), c->key(s)});
    }
  }
}

void Timeline::NoteInserted(const StoredEntry& entry, Micros newer,
                            Micros older) {
  CountPair(newer, older, -1);
  CountPair(newer, entry.expires_at, +1);
  CountPair(entry.expires_at, older, +1);
  if (expiry_index_ != nullptr) {
    expiry_index_->insert({entry.expires_at, {entry.ts, entry.activity_id}});
  }
  if (groups_ != nullptr) groups_->Add(entry);
  CountKind(entry.kind, +1);
  ++size_;
  if (inversions_ > 0 && expiry_index_ == nullptr) BuildExpiryIndex();
  RefreshCaches();
}

Timeline::PutResult Timeline::Put(const StoredEntry& entry, size_t cap) {
  assert(entry.ts >= 0);
  assert(cap >= 1);
  const EntryKey key{entry.ts, entry.activity_id};
  PutResult result{PutOutcome::kInserted, 0};
  if (size_ == 0 || key > newest_key_) {
    AppendNewest(entry);
  } else {
    Links prev;
    Chunk* chunk = FindChunk(key, &prev);
    int slot = 0;
    if (chunk == nullptr) {
      // Older than every entry of a full timeline (or of every entry of
      // its kind, with that kind full): it would be trimmed at once, so do
      // not store it at all.
      if (CappedCount(entry.kind) >= cap) {
        return {PutOutcome::kRejectedByCap, 0};
      }
      chunk = FindChunk(tail_->oldest(), &prev);
      assert(chunk == tail_);
      slot = chunk->begin;
    } else {
      slot = chunk->LowerSlot(key);
      if (slot < chunk->end && chunk->key(slot) == key) {
        ReplaceAt(chunk, slot, prev, entry);
        // A new kind may take its count over the cap.
        result.outcome = PutOutcome::kReplaced;
        if (kind_counts_ != nullptr && (*kind_counts_)[entry.kind] > cap) {
          RemoveOldestOfKind(entry.kind);
          ++result.trimmed;
        }
        return result;
      }
    }
    InsertAt(chunk, slot, prev, entry);
  }
  if (kind_counts_ != nullptr) {
    // Per kind, one put takes one kind at most one over its cap; the entry
    // itself may be the oldest of its kind.
    if ((*kind_counts_)[entry.kind] > cap) {
      if (RemoveOldestOfKind(entry.kind) == key) {
        return {PutOutcome::kRejectedByCap, 0};
      }
      ++result.trimmed;
    }
    return result;
  }
  while (size_ > cap) {
    RemoveOldest();
    ++result.trimmed;
  }
  return result;
}

void Timeline::AppendNewest(const StoredEntry& entry) {
  Chunk* head = head_[0];
  const Micros older = size_ == 0 ? kNoOlder : newest_expiry_;
  const bool expiry_fits =
      head != nullptr && (Fits(head, entry) || Readopt(head, entry));
  const bool fits = expiry_fits && FitsKind(head, entry);
  if (head == nullptr ||
      (head->end == head->capacity && head->capacity == kMaxChunkEntries &&
       head->begin == 0)) {
    // A new newest chunk: full-sized once the timeline has outgrown one.
    const int capacity = size_ >= static_cast<size_t>(kMaxChunkEntries)
                             ? kMaxChunkEntries
                             : kFirstChunkEntries;
    head = NewChunkFor(entry,
                       HeightFor({entry.ts, entry.activity_id}, height_seed_),
                       capacity);
    for (int i = 0; i < head->height; ++i) {
      head->next[i] = head_[i];
      head_[i] = head;
    }
    height_ = std::max(height_, static_cast<int>(head->height));
    if (tail_ == nullptr) tail_ = head;
  } else if (head->end == head->capacity || !fits) {
    Links at_head;
    at_head.fill(nullptr);
    if (fits && head->begin > 0) {
      CopySlots(head, head->begin, head, 0, head->count());
      head->end = static_cast<uint8_t>(head->count());
      head->begin = 0;
    } else {
      const int capacity = head->end == head->capacity
                               ? GrownCapacity(head->capacity)
                               : head->capacity;
      head = Reshape(head, at_head, capacity,
                     head->has_expiry_column != 0 || !expiry_fits,
                     head->has_kind_column != 0 || entry.kind != 0);
    }
  }
  WriteSlot(head, head->end, entry);
  ++head->end;
  NoteInserted(entry, kNoNewer, older);
}

Timeline::Chunk* Timeline::Split(Chunk* chunk, Links& prev) {
  assert(chunk->full());
  const int half = chunk->capacity / 2;
  Chunk* newer =
      NewChunk(HeightFor(chunk->key(half), height_seed_), chunk->capacity,
               chunk->has_expiry_column != 0, chunk->has_kind_column != 0,
               chunk->shared, chunk->same_expiry != 0);
  CopySlots(chunk, half, newer, 0, chunk->capacity - half);
  newer->end = static_cast<uint8_t>(chunk->capacity - half);
  chunk->end = static_cast<uint8_t>(half);
  for (int i = 0; i < newer->height; ++i) {
    newer->next[i] = NextAt(prev[i], i);
    SetNextAt(prev[i], i, newer);
  }
  height_ = std::max(height_, static_cast<int>(newer->height));
  return newer;
}

void Timeline::InsertAt(Chunk* chunk, int slot, Links& prev,
                        const StoredEntry& entry) {
  if (!Fits(chunk, entry) || !FitsKind(chunk, entry) ||
      (chunk->full() && chunk->capacity < kMaxChunkEntries)) {
    const int capacity =
        chunk->full() ? GrownCapacity(chunk->capacity) : chunk->capacity;
    const bool expiry_column =
        chunk->has_expiry_column != 0 || !Fits(chunk, entry);
    const bool kind_column = chunk->has_kind_column != 0 || entry.kind != 0;
    slot -= chunk->begin;
    chunk = Reshape(chunk, prev, capacity, expiry_column, kind_column);
  }
  if (chunk->full()) {
    Chunk* newer = Split(chunk, prev);
    if (slot > chunk->end) {
      slot -= chunk->end;
      chunk = newer;  // its predecessors are the old prev
    } else {
      for (int i = 0; i < newer->height; ++i) prev[i] = newer;
    }
  }
  const Micros newer_expiry = NewerExpiry(chunk, slot, prev[0]);
  const Micros older_expiry = OlderExpiry(chunk, slot);
  if (chunk->end < chunk->capacity) {
    CopySlots(chunk, slot, chunk, slot + 1, chunk->end - slot);
    ++chunk->end;
  } else {
    CopySlots(chunk, chunk->begin, chunk, chunk->begin - 1,
              slot - chunk->begin);
    --chunk->begin;
    --slot;
  }
  WriteSlot(chunk, slot, entry);
  NoteInserted(entry, newer_expiry, older_expiry);
}

void Timeline::ReplaceAt(Chunk* chunk, int slot, const Links& prev,
                         const StoredEntry& entry) {
  const EntryKey key = chunk->key(slot);
  if (!FitsKind(chunk, entry)) {
    slot -= chunk->begin;
    chunk = Reshape(chunk, prev, chunk->capacity, chunk->has_expiry_column != 0,
                    true);
  }
  if (const ActivityKind old_kind = chunk->kind(slot); old_kind != entry.kind) {
    CountKind(entry.kind, +1);
    CountKind(old_kind, -1);
  }
  if (chunk->has_kind_column) chunk->kind_column()[slot] = entry.kind;
  chunk->rows()[slot].actor = entry.actor;
  if (grouped_) {
    const GroupKey old_group = chunk->group()[slot];
    chunk->group()[slot] = entry.group;
    if (groups_ != nullptr) groups_->Replace(old_group, entry);
  }
  const Micros old_expiry = chunk->expires_at(slot);
  if (old_expiry != entry.expires_at) {
    if (!Fits(chunk, entry)) {
      slot -= chunk->begin;
      chunk = Reshape(chunk, prev, chunk->capacity, true,
                      chunk->has_kind_column != 0);
    }
    const Micros newer = NewerExpiry(chunk, slot + 1, prev[0]);
    const Micros older = OlderExpiry(chunk, slot);
    CountPair(newer, old_expiry, -1);
    CountPair(old_expiry, older, -1);
    chunk->expiry_column()[slot] = entry.expires_at;
    CountPair(newer, entry.expires_at, +1);
    CountPair(entry.expires_at, older, +1);
    if (expiry_index_ != nullptr) {
      expiry_index_->erase({old_expiry, key});
      expiry_index_->insert({entry.expires_at, key});
    }
  }
  if (inversions_ > 0 && expiry_index_ == nullptr) BuildExpiryIndex();
  RefreshCaches();
}

void Timeline::ForgetEntry(const Chunk* chunk, int slot, Micros newer,
                           Micros older) {
  const Micros expiry = chunk->expires_at(slot);
  CountPair(newer, expiry, -1);
  CountPair(expiry, older, -1);
  CountPair(newer, older, +1);
  if (expiry_index_ != nullptr) {
    expiry_index_->erase({expiry, chunk->key(slot)});
  }
  if (groups_ != nullptr) {
    groups_->Remove(chunk->key(slot), chunk->group()[slot]);
  }
  CountKind(chunk->kind(slot), -1);
  --size_;
}

void Timeline::RemoveAt(Chunk* chunk, int slot, const Links& prev) {
  ForgetEntry(chunk, slot, NewerExpiry(chunk, slot + 1, prev[0]),
              OlderExpiry(chunk, slot));
  if (chunk->count() == 1) {
    for (int i = 0; i < chunk->height; ++i) {
      assert(NextAt(prev[i], i) == chunk);
      SetNextAt(prev[i], i, chunk->next[i]);
    }
    if (tail_ == chunk) tail_ = prev[0];
    arena_->Free(chunk, chunk->bytes());
    ShrinkHeight();
  } else if (slot - chunk->begin < chunk->end - 1 - slot) {
    CopySlots(chunk, chunk->begin, chunk, chunk->begin + 1,
              slot - chunk->begin);
    ++chunk->begin;
  } else {
    CopySlots(chunk, slot + 1, chunk, slot, chunk->end - 1 - slot);
    --chunk->end;
  }
  RefreshCaches();
}

void Timeline::RemoveOldest() {
  assert(tail_ != nullptr);
  if (tail_->count() > 1) {
    // The trim at the cap: the oldest slot of the oldest chunk leaves, so
    // no link, no neighbour and no newest entry changes, and of the pairs
    // only the one with the next slot goes.
    Chunk* chunk = tail_;
    ForgetEntry(chunk, chunk->begin, chunk->expires_at(chunk->begin + 1),
                kNoOlder);
    ++chunk->begin;
    RefreshMinExpiry();
    return;
  }
  Links prev;
  Chunk* chunk = FindChunk(tail_->oldest(), &prev);
  assert(chunk == tail_);
  RemoveAt(chunk, chunk->begin, prev);
}

bool Timeline::Remove(EntryKey key) {
  Links prev;
  Chunk* chunk = FindChunk(key, &prev);
  if (chunk == nullptr) return false;
  const int slot = chunk->LowerSlot(key);
  if (slot == chunk->end || chunk->key(slot) != key) return false;
  RemoveAt(chunk, slot, prev);
  return true;
}

size_t Timeline::RemoveActor(EntityId actor, EntryKey from) {
  // prev[i] is the last kept chunk of height > i so far: each emptied
  // chunk's predecessor on its levels.
  Links prev;
  prev.fill(nullptr);
  size_t removed = 0;
  Chunk* chunk = head_[0];
  while (chunk != nullptr) {
    Chunk* next = chunk->next[0];
    int kept = chunk->end;
    for (int s = chunk->end - 1; s >= chunk->begin; --s) {
      if (chunk->rows()[s].actor != actor || chunk->key(s) < from) {
        --kept;
        if (kept != s) CopySlots(chunk, s, chunk, kept, 1);
        continue;
      }
      if (expiry_index_ != nullptr) {
        expiry_index_->erase({chunk->expires_at(s), chunk->key(s)});
      }
      if (groups_ != nullptr) {
        groups_->Remove(chunk->key(s), chunk->group()[s]);
      }
      CountKind(chunk->kind(s), -1);
      ++removed;
    }
    chunk->begin = static_cast<uint8_t>(kept);
    if (chunk->count() == 0) {
      for (int i = 0; i < chunk->height; ++i) {
        SetNextAt(prev[i], i, chunk->next[i]);
      }
      arena_->Free(chunk, chunk->bytes());
    } else {
      for (int i = 0; i < chunk->height; ++i) prev[i] = chunk;
    }
    chunk = next;
  }
  if (removed == 0) return 0;
  tail_ = prev[0];
  size_ -= removed;
  ShrinkHeight();
  RecountInversions();
  RefreshCaches();
  return removed;
}

void Timeline::ShrinkHeight() {
  while (height_ > 1 && head_[height_ - 1] == nullptr) --height_;
}

void Timeline::RefreshCaches() {
  if (size_ == 0) {
    newest_key_ = {};
    newest_expiry_ = 0;
    min_expiry_ = std::numeric_limits<Micros>::max();
    return;
  }
  const Chunk* head = head_[0];
  newest_key_ = head->newest();
  newest_expiry_ = head->expires_at(head->end - 1);
  RefreshMinExpiry();
}

void Timeline::RefreshMinExpiry() {
  min_expiry_ = inversions_ == 0 ? tail_->expires_at(tail_->begin)
                                 : expiry_index_->begin()->first;
}

size_t Timeline::index_bytes() const {
  const size_t groups = groups_ != nullptr ? groups_->bytes_used() : 0;
  if (expiry_index_ == nullptr) return groups;
  // btree nodes are at least half full; count the worst case of that.
  return groups + sizeof(ExpiryIndex) +
         2 * expiry_index_->size() * sizeof(ExpiryIndex::value_type);
}

}  // namespace feedcore::internal
