#include "member_dictionary.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "arguments.h"
#include "names_journal.h"

namespace feedcore::server {
namespace {

constexpr uint32_t kChunkSlots = 1024;
// Names up to this long are stored in their slot.
constexpr size_t kInlineBytes = 24;
// `Slot::size` of a free slot.
constexpr uint32_t kFreeSlot = UINT32_MAX;
// Set in `Slot::size` while the name's release is held back.
constexpr uint32_t kHeldBit = uint32_t{1} << 31;
// In a slot's pin state: the low bits count the pins; this bit says that
// one of them may have left the member off the board, so the last Unpin
// checks the board.
constexpr uint32_t kCheckBit = uint32_t{1} << 31;
constexpr uint32_t kPinCountMask = kCheckBit - 1;
// End of the free list.
constexpr uint32_t kNoSlot = UINT32_MAX;
// Slot numbers stay below kNoSlot, and slot + 1 (the id's low half) is
// never 0, the id feedcore boards do not use.
constexpr uint64_t kMaxSlots = UINT32_MAX - 1;

// A live slot holds a name (inline, or a heap pointer in `data`); a free
// one holds its free-list links in `data`.
struct Slot {
  uint32_t generation = 0;
  uint32_t size = kFreeSlot;
  alignas(8) char data[kInlineBytes];
};
static_assert(sizeof(Slot) == 32, "slots are meant to be 32 bytes");

struct FreeLinks {
  uint32_t next;
  uint32_t prev;
};

}  // namespace

class MemberDictionary::Impl {
 public:
  explicit Impl(std::function<bool(MemberId)> on_board)
      : on_board_(std::move(on_board)), index_(0, Hash{this}, Eq{this}) {}
  ~Impl() { Clear(); }

  absl::StatusOr<MemberId> Intern(absl::string_view name, bool sync);
  std::optional<MemberId> PinIfPresent(absl::string_view name);
  // `name` nullopt: whichever name the id has.
  std::optional<MemberId> PinIfNamed(MemberId id,
                                     std::optional<absl::string_view> name);
  absl::Status SyncJournal() {
    NamesJournal* journal = nullptr;
    {
      std::shared_lock lock(mutex_);
      journal = journal_;
    }
    return journal == nullptr ? absl::OkStatus() : journal->SyncAppended();
  }
  void Unpin(MemberId id, bool maybe_absent);
  std::optional<MemberId> Find(absl::string_view name) const;
  bool Contains(MemberId id) const;
  std::vector<std::optional<std::string>> NamesOf(
      absl::Span<const LeaderboardEntry> entries) const;
  void WithNames(absl::Span<const LeaderboardEntry> entries,
                 absl::FunctionRef<void(absl::Span<IndexedName>)> visit) const;
  std::vector<std::pair<size_t, std::string>> NameOrderSlice(
      const std::vector<LeaderboardEntry>& entries, bool descending,
      size_t begin, size_t end) const;
  size_t size() const;
  MemberNameStats stats() const;
  void CopyNames(std::vector<MemberId>& ids,
                 std::vector<std::string>& names) const;
  uint64_t ScanSlots(uint64_t from, size_t count, std::vector<MemberId>& ids,
                     std::vector<std::string>& names) const;
  absl::Status Restore(const std::vector<MemberId>& ids,
                       std::vector<std::string> names);
  void HoldReleases();
  void ResumeReleases();
  void AttachJournal(NamesJournal* journal, std::string key);

 private:
  struct Chunk {
    Slot slots[kChunkSlots];
    // Pin counts and check bits (see "Pins" in the header), apart from the
    // slots so that a slot stays 32 bytes. Changed under the dictionary's
    // lock, shared or exclusive: atomic for the shared holders.
    std::atomic<uint32_t> pins[kChunkSlots] = {};
    uint32_t live = 0;
  };

  // The index stores slot numbers and hashes and compares them by the name
  // in the slot, so lookups by name need no copy of it.
  struct Hash {
    using is_transparent = void;
    const Impl* impl;
    size_t operator()(uint32_t slot) const {
      return absl::HashOf(impl->NameAt(slot));
    }
    size_t operator()(absl::string_view name) const {
      return absl::HashOf(name);
    }
  };
  struct Eq {
    using is_transparent = void;
    const Impl* impl;
    // By name, so the set refuses a second slot with a name already in it.
    bool operator()(uint32_t a, uint32_t b) const {
      return a == b || impl->NameAt(a) == impl->NameAt(b);
    }
    bool operator()(uint32_t a, absl::string_view b) const {
      return impl->NameAt(a) == b;
    }
    bool operator()(absl::string_view a, uint32_t b) const {
      return a == impl->NameAt(b);
    }
  };

  Slot& At(uint32_t slot) const {
    return chunks_[slot / kChunkSlots]->slots[slot % kChunkSlots];
  }
  std::atomic<uint32_t>& PinsAt(uint32_t slot) const {
    return chunks_[slot / kChunkSlots]->pins[slot % kChunkSlots];
  }
  static bool IsLive(const Slot& s) { return s.size != kFreeSlot; }
  static uint32_t NameSize(const Slot& s) { return s.size & ~kHeldBit; }
  absl::string_view NameAt(uint32_t slot) const;
  static MemberId IdOf(uint32_t slot, const Slot& s) {
    return (MemberId{s.generation} << 32) | (MemberId{slot} + 1);
  }
  // The live slot of `id`, or nullopt.
  std::optional<uint32_t> SlotOf(MemberId id) const;

  FreeLinks Links(uint32_t slot) const;
  void SetLinks(uint32_t slot, FreeLinks links);
  void PushFree(uint32_t slot);
  void Unlink(uint32_t slot);

  absl::StatusOr<uint32_t> AllocateSlot();
  // A new chunk at index `c`, its slots free but not on the free list.
  void CreateChunk(size_t c);
  void WriteName(uint32_t slot, absl::string_view name, uint32_t generation);
  void FreeSlot(uint32_t slot);
  // Frees the live `slot`'s name, or holds its release back during a save.
  void FreeOrHold(uint32_t slot);
  // The id of the live slot found under a shared or exclusive lock, after
  // the journal has its assign record (see Intern).
  absl::StatusOr<MemberId> PinnedAfterSync(MemberId id, NamesJournal* journal);
  void ReleaseChunk(size_t c);
  void ShrinkIndexIfSparse();
  void Clear();

  const std::function<bool(MemberId)> on_board_;
  mutable std::shared_mutex mutex_;
  std::vector<std::unique_ptr<Chunk>> chunks_;  // null: released
  absl::flat_hash_set<uint32_t, Hash, Eq> index_;
  uint32_t free_head_ = kNoSlot;
  // Allocated chunks with no live slot. One is kept so that adding and
  // removing a member in turn does not allocate a chunk every time.
  size_t empty_chunks_ = 0;
  // Generation of the slots of a chunk created from now on: above every
  // generation of a released chunk's slots, so its old ids stay dead.
  uint32_t generation_floor_ = 0;
  size_t heap_bytes_ = 0;  // names longer than kInlineBytes
  int holds_ = 0;
  std::vector<uint32_t> held_;       // slots whose release is held back
  NamesJournal* journal_ = nullptr;  // null: not journaled
  std::string key_;                  // the key journal records name
};

absl::string_view MemberDictionary::Impl::NameAt(uint32_t slot) const {
  const Slot& s = At(slot);
  const uint32_t size = NameSize(s);
  if (size <= kInlineBytes) return absl::string_view(s.data, size);
  const char* heap;
  std::memcpy(&heap, s.data, sizeof(heap));
  return absl::string_view(heap, size);
}

std::optional<uint32_t> MemberDictionary::Impl::SlotOf(MemberId id) const {
  const uint64_t low = id & 0xffffffffu;
  if (low == 0) return std::nullopt;
  const uint32_t slot = static_cast<uint32_t>(low - 1);
  if (slot / kChunkSlots >= chunks_.size() ||
      chunks_[slot / kChunkSlots] == nullptr) {
    return std::nullopt;
  }
  const Slot& s = At(slot);
  if (!IsLive(s) || s.generation != (id >> 32)) return std::nullopt;
  return slot;
}

FreeLinks MemberDictionary::Impl::Links(uint32_t slot) const {
  FreeLinks links;
  std::memcpy(&links, At(slot).data, sizeof(links));
  return links;
}

void MemberDictionary::Impl::SetLinks(uint32_t slot, FreeLinks links) {
  std::memcpy(At(slot).data, &links, sizeof(links));
}

void MemberDictionary::Impl::PushFree(uint32_t slot) {
  SetLinks(slot, {free_head_, kNoSlot});
  if (free_head_ != kNoSlot) {
    FreeLinks head = Links(free_head_);
    head.prev = slot;
    SetLinks(free_head_, head);
  }
  free_head_ = slot;
}

void MemberDictionary::Impl::Unlink(uint32_t slot) {
  const FreeLinks links = Links(slot);
  if (links.prev == kNoSlot) {
    free_head_ = links.next;
  } else {
    FreeLinks prev = Links(links.prev);
    prev.next = links.next;
    SetLinks(links.prev, prev);
  }
  if (links.next != kNoSlot) {
    FreeLinks next = Links(links.next);
    next.prev = links.prev;
    SetLinks(links.next, next);
  }
}

void MemberDictionary::Impl::CreateChunk(size_t c) {
  if (c >= chunks_.size()) chunks_.resize(c + 1);
  chunks_[c] = std::make_unique<Chunk>();
  for (Slot& s : chunks_[c]->slots) s.generation = generation_floor_;
}

absl::StatusOr<uint32_t> MemberDictionary::Impl::AllocateSlot() {
  if (free_head_ == kNoSlot) {
    // The first released chunk, or a new one at the end.
    size_t c = 0;
    while (c < chunks_.size() && chunks_[c] != nullptr) ++c;
    if ((uint64_t{c} + 1) * kChunkSlots > kMaxSlots) {
      return absl::ResourceExhaustedError(
          "the key's member dictionary is full (2^32 - 1 names)");
    }
    CreateChunk(c);
    ++empty_chunks_;
    // Lowest slot first off the list.
    for (uint32_t i = kChunkSlots; i-- > 0;) {
      PushFree(static_cast<uint32_t>(c * kChunkSlots + i));
    }
  }
  const uint32_t slot = free_head_;
  Unlink(slot);
  Chunk& chunk = *chunks_[slot / kChunkSlots];
  if (chunk.live++ == 0) --empty_chunks_;
  return slot;
}

void MemberDictionary::Impl::WriteName(uint32_t slot, absl::string_view name,
                                       uint32_t generation) {
  Slot& s = At(slot);
  s.generation = generation;
  if (name.size() <= kInlineBytes) {
    if (!name.empty()) std::memcpy(s.data, name.data(), name.size());
  } else {
    char* heap = new char[name.size()];
    std::memcpy(heap, name.data(), name.size());
    std::memcpy(s.data, &heap, sizeof(heap));
    heap_bytes_ += name.size();
  }
  s.size = static_cast<uint32_t>(name.size());
}

void MemberDictionary::Impl::FreeSlot(uint32_t slot) {
  Slot& s = At(slot);
  const uint32_t size = NameSize(s);
  if (size > kInlineBytes) {
    char* heap;
    std::memcpy(&heap, s.data, sizeof(heap));
    delete[] heap;
    heap_bytes_ -= size;
  }
  s.size = kFreeSlot;
  ++s.generation;  // the freed id is dead from now on
  PinsAt(slot).store(0, std::memory_order_relaxed);
  PushFree(slot);
  const size_t c = slot / kChunkSlots;
  if (--chunks_[c]->live == 0) {
    ++empty_chunks_;
    if (empty_chunks_ > 1) ReleaseChunk(c);
  }
}

void MemberDictionary::Impl::ReleaseChunk(size_t c) {
  uint32_t max_generation = 0;
  for (uint32_t i = 0; i < kChunkSlots; ++i) {
    const uint32_t slot = static_cast<uint32_t>(c * kChunkSlots + i);
    max_generation = std::max(max_generation, At(slot).generation);
    Unlink(slot);
  }
  generation_floor_ = std::max(generation_floor_, max_generation + 1);
  chunks_[c].reset();
  --empty_chunks_;
  while (!chunks_.empty() && chunks_.back() == nullptr) chunks_.pop_back();
  if (chunks_.empty()) chunks_.shrink_to_fit();
}

void MemberDictionary::Impl::ShrinkIndexIfSparse() {
  // The hash set never shrinks by itself; a key that lost most of its
  // members gives the memory back (amortized: the next shrink needs most
  // of the remaining names gone again).
  if (index_.capacity() > 1024 && index_.size() * 8 < index_.capacity()) {
    index_.rehash(0);
  }
}

void MemberDictionary::Impl::Clear() {
  for (size_t c = 0; c < chunks_.size(); ++c) {
    if (chunks_[c] == nullptr) continue;
    for (uint32_t i = 0; i < kChunkSlots; ++i) {
      const Slot& s = chunks_[c]->slots[i];
      if (IsLive(s) && NameSize(s) > kInlineBytes) {
        char* heap;
        std::memcpy(&heap, s.data, sizeof(heap));
        delete[] heap;
      }
    }
  }
  index_.clear();
  chunks_.clear();
  free_head_ = kNoSlot;
  empty_chunks_ = 0;
  heap_bytes_ = 0;
  held_.clear();
}

absl::StatusOr<MemberId> MemberDictionary::Impl::PinnedAfterSync(
    MemberId id, NamesJournal* journal) {
  // A found id's assign record may have been appended by another thread
  // and not be synced yet: the caller's board write must not overtake it.
  if (journal != nullptr) {
    if (absl::Status s = journal->SyncAppended(); !s.ok()) {
      Unpin(id, /*maybe_absent=*/true);
      return s;
    }
  }
  return id;
}

absl::StatusOr<MemberId> MemberDictionary::Impl::Intern(absl::string_view name,
                                                        bool sync) {
  if (name.size() > kMaxNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("member name of ", name.size(),
                     " bytes is longer than the limit of ", kMaxNameBytes));
  }
  {
    std::shared_lock lock(mutex_);
    if (auto it = index_.find(name); it != index_.end()) {
      const Slot& s = At(*it);
      if ((s.size & kHeldBit) == 0) {
        PinsAt(*it).fetch_add(1, std::memory_order_acq_rel);
        const MemberId id = IdOf(*it, s);
        NamesJournal* journal = sync ? journal_ : nullptr;
        lock.unlock();
        return PinnedAfterSync(id, journal);
      }
    }
  }
  std::unique_lock lock(mutex_);
  if (auto it = index_.find(name); it != index_.end()) {
    Slot& s = At(*it);
    s.size &= ~kHeldBit;  // pinned again: its held-back release is void
    PinsAt(*it).fetch_add(1, std::memory_order_acq_rel);
    const MemberId id = IdOf(*it, s);
    NamesJournal* journal = sync ? journal_ : nullptr;
    lock.unlock();
    return PinnedAfterSync(id, journal);
  }
  absl::StatusOr<uint32_t> slot = AllocateSlot();
  if (!slot.ok()) return slot.status();
  WriteName(*slot, name, At(*slot).generation);
  const MemberId id = IdOf(*slot, At(*slot));
  NamesJournal* journal = journal_;
  uint64_t position = 0;
  if (journal != nullptr) {
    absl::StatusOr<uint64_t> appended =
        journal->Append({NamesRecordType::kAssign, key_, id, std::string(name)},
                        NamesJournal::IfAppendFails::kCallerChangesNothing);
    if (!appended.ok()) {
      FreeSlot(*slot);
      return appended.status();
    }
    position = *appended;
  }
  try {
    index_.insert(*slot);
  } catch (...) {
    // Out of memory growing the index: give the slot back and fail the
    // command (the dispatcher reports it), leaving the dictionary as it was
    // (a journaled assign of an id no board holds is dropped on recovery).
    FreeSlot(*slot);
    throw;
  }
  PinsAt(*slot).store(1, std::memory_order_relaxed);
  lock.unlock();
  // Synced outside the lock, so that concurrent assignments share one
  // fdatasync; callers that find the id meanwhile sync themselves.
  if (journal != nullptr && sync) {
    if (absl::Status s = journal->SyncTo(position); !s.ok()) {
      Unpin(id, /*maybe_absent=*/true);
      return s;
    }
  }
  return id;
}

std::optional<MemberId> MemberDictionary::Impl::PinIfPresent(
    absl::string_view name) {
  {
    std::shared_lock lock(mutex_);
    auto it = index_.find(name);
    if (it == index_.end()) return std::nullopt;
    const Slot& s = At(*it);
    if ((s.size & kHeldBit) == 0) {
      PinsAt(*it).fetch_add(1, std::memory_order_acq_rel);
      return IdOf(*it, s);
    }
  }
  std::unique_lock lock(mutex_);
  auto it = index_.find(name);
  if (it == index_.end()) return std::nullopt;
  Slot& s = At(*it);
  s.size &= ~kHeldBit;  // as in Intern; the last Unpin decides again
  PinsAt(*it).fetch_add(1, std::memory_order_acq_rel);
  return IdOf(*it, s);
}

std::optional<MemberId> MemberDictionary::Impl::PinIfNamed(
    MemberId id, std::optional<absl::string_view> name) {
  {
    std::shared_lock lock(mutex_);
    const std::optional<uint32_t> slot = SlotOf(id);
    if (!slot.has_value() || (name.has_value() && NameAt(*slot) != *name)) {
      return std::nullopt;
    }
    if ((At(*slot).size & kHeldBit) == 0) {
      PinsAt(*slot).fetch_add(1, std::memory_order_acq_rel);
      // Pinned by id to be removed: the name's release looks it up in the
      // index, which on a large key is a cache miss that the board's own
      // removal can overlap.
      index_.prefetch(*slot);
      return id;
    }
  }
  std::unique_lock lock(mutex_);
  const std::optional<uint32_t> slot = SlotOf(id);
  if (!slot.has_value() || (name.has_value() && NameAt(*slot) != *name)) {
    return std::nullopt;
  }
  At(*slot).size &= ~kHeldBit;  // as in PinIfPresent
  PinsAt(*slot).fetch_add(1, std::memory_order_acq_rel);
  return id;
}

void MemberDictionary::Impl::Unpin(MemberId id, bool maybe_absent) {
  {
    std::shared_lock lock(mutex_);
    const std::optional<uint32_t> slot = SlotOf(id);
    if (!slot.has_value()) return;  // not pinned: a pinned name stays
    std::atomic<uint32_t>& pins = PinsAt(*slot);
    uint32_t state = pins.load(std::memory_order_acquire);
    uint32_t next;
    do {
      if ((state & kPinCountMask) == 0) return;  // no pin to end
      next = (state | (maybe_absent ? kCheckBit : 0)) - 1;
    } while (!pins.compare_exchange_weak(state, next, std::memory_order_acq_rel,
                                         std::memory_order_acquire));
    if (next != kCheckBit) return;  // pins remain, or nothing to check
  }
  std::unique_lock lock(mutex_);
  const std::optional<uint32_t> slot = SlotOf(id);
  if (!slot.has_value()) return;  // freed by a check that ran meanwhile
  std::atomic<uint32_t>& pins = PinsAt(*slot);
  // Pinned again meanwhile (that pin's last Unpin checks), or checked
  // meanwhile by another last Unpin.
  if (pins.load(std::memory_order_relaxed) != kCheckBit) return;
  pins.store(0, std::memory_order_relaxed);
  // No pin is held and none can be taken while this lock is: nobody can
  // put the member on the board until the name is freed or kept.
  if (on_board_(id)) return;
  FreeOrHold(*slot);
}

std::optional<MemberId> MemberDictionary::Impl::Find(
    absl::string_view name) const {
  std::shared_lock lock(mutex_);
  if (auto it = index_.find(name); it != index_.end()) {
    return IdOf(*it, At(*it));
  }
  return std::nullopt;
}

void MemberDictionary::Impl::FreeOrHold(uint32_t slot) {
  if (holds_ > 0) {
    Slot& s = At(slot);
    if ((s.size & kHeldBit) == 0) {
      s.size |= kHeldBit;
      held_.push_back(slot);
    }
    return;
  }
  index_.erase(slot);
  FreeSlot(slot);
  ShrinkIndexIfSparse();
}

bool MemberDictionary::Impl::Contains(MemberId id) const {
  std::shared_lock lock(mutex_);
  return SlotOf(id).has_value();
}

std::vector<std::optional<std::string>> MemberDictionary::Impl::NamesOf(
    absl::Span<const LeaderboardEntry> entries) const {
  std::vector<std::optional<std::string>> names;
  names.reserve(entries.size());
  std::shared_lock lock(mutex_);
  for (const LeaderboardEntry& entry : entries) {
    const std::optional<uint32_t> slot = SlotOf(entry.member);
    if (slot.has_value()) {
      names.emplace_back(std::string(NameAt(*slot)));
    } else {
      names.emplace_back(std::nullopt);
    }
  }
  return names;
}

void MemberDictionary::Impl::WithNames(
    absl::Span<const LeaderboardEntry> entries,
    absl::FunctionRef<void(absl::Span<IndexedName>)> visit) const {
  std::vector<IndexedName> named;
  named.reserve(entries.size());
  std::shared_lock lock(mutex_);
  for (size_t i = 0; i < entries.size(); ++i) {
    if (const std::optional<uint32_t> slot = SlotOf(entries[i].member)) {
      named.emplace_back(i, NameAt(*slot));
    }
  }
  visit(absl::MakeSpan(named));
}

std::vector<std::pair<size_t, std::string>>
MemberDictionary::Impl::NameOrderSlice(
    const std::vector<LeaderboardEntry>& entries, bool descending, size_t begin,
    size_t end) const {
  std::vector<std::pair<size_t, std::string>> slice;
  std::vector<std::pair<absl::string_view, size_t>> named;
  named.reserve(entries.size());
  std::shared_lock lock(mutex_);
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::optional<uint32_t> slot = SlotOf(entries[i].member);
    if (slot.has_value()) named.emplace_back(NameAt(*slot), i);
  }
  end = std::min(end, named.size());
  if (begin >= end) return slice;
  // string_view compares bytes as unsigned, as Redis orders members.
  auto before = [descending](const std::pair<absl::string_view, size_t>& a,
                             const std::pair<absl::string_view, size_t>& b) {
    return descending ? b.first < a.first : a.first < b.first;
  };
  std::partial_sort(named.begin(), named.begin() + end, named.end(), before);
  slice.reserve(end - begin);
  for (size_t i = begin; i < end; ++i) {
    slice.emplace_back(named[i].second, std::string(named[i].first));
  }
  return slice;
}

size_t MemberDictionary::Impl::size() const {
  std::shared_lock lock(mutex_);
  return index_.size();
}

MemberNameStats MemberDictionary::Impl::stats() const {
  std::shared_lock lock(mutex_);
  MemberNameStats stats;
  stats.names = index_.size();
  stats.bytes = heap_bytes_ + chunks_.capacity() * sizeof(chunks_[0]) +
                index_.capacity() * (sizeof(uint32_t) + 1);
  for (const auto& chunk : chunks_) {
    if (chunk != nullptr) stats.bytes += sizeof(Chunk);
  }
  return stats;
}

void MemberDictionary::Impl::CopyNames(std::vector<MemberId>& ids,
                                       std::vector<std::string>& names) const {
  std::shared_lock lock(mutex_);
  ids.reserve(ids.size() + index_.size());
  names.reserve(names.size() + index_.size());
  for (size_t c = 0; c < chunks_.size(); ++c) {
    if (chunks_[c] == nullptr) continue;
    for (uint32_t i = 0; i < kChunkSlots; ++i) {
      const uint32_t slot = static_cast<uint32_t>(c * kChunkSlots + i);
      const Slot& s = At(slot);
      if (!IsLive(s)) continue;
      ids.push_back(IdOf(slot, s));
      names.emplace_back(NameAt(slot));
    }
  }
}

uint64_t MemberDictionary::Impl::ScanSlots(
    uint64_t from, size_t count, std::vector<MemberId>& ids,
    std::vector<std::string>& names) const {
  std::shared_lock lock(mutex_);
  const uint64_t end = uint64_t{chunks_.size()} * kChunkSlots;
  uint64_t slot = from;
  size_t seen = 0;
  while (slot < end && seen < std::max<size_t>(count, 1)) {
    const size_t c = static_cast<size_t>(slot / kChunkSlots);
    if (chunks_[c] == nullptr) {  // a released chunk: no live slot in it
      slot = (c + 1) * uint64_t{kChunkSlots};
      continue;
    }
    const uint32_t s32 = static_cast<uint32_t>(slot);
    const Slot& s = At(s32);
    if (IsLive(s)) {
      ids.push_back(IdOf(s32, s));
      names.emplace_back(NameAt(s32));
      ++seen;
    }
    ++slot;
  }
  return slot >= end ? 0 : slot;
}

absl::Status MemberDictionary::Impl::Restore(const std::vector<MemberId>& ids,
                                             std::vector<std::string> names) {
  std::unique_lock lock(mutex_);
  if (!index_.empty() || !chunks_.empty()) {
    return absl::InvalidArgumentError(
        "only an empty member dictionary can be restored");
  }
  if (!ids.empty() && ids.size() != names.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(ids.size(), " member ids for ", names.size(), " names"));
  }
  auto fail = [this](std::string message) {
    Clear();
    return absl::InvalidArgumentError(std::move(message));
  };
  index_.reserve(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    const MemberId id = ids.empty() ? MemberId{i} + 1 : ids[i];
    const uint64_t low = id & 0xffffffffu;
    if (low == 0 || low - 1 >= kMaxSlots) {
      return fail(absl::StrCat("member id ", id, " is not a dictionary id"));
    }
    if (names[i].size() > kMaxNameBytes) {
      return fail(absl::StrCat("member name of ", names[i].size(),
                               " bytes is too long"));
    }
    const uint32_t slot = static_cast<uint32_t>(low - 1);
    const size_t c = slot / kChunkSlots;
    if (c >= chunks_.size() || chunks_[c] == nullptr) CreateChunk(c);
    if (IsLive(At(slot))) {
      return fail(absl::StrCat("member id ", id, " is given twice"));
    }
    WriteName(slot, names[i], static_cast<uint32_t>(id >> 32));
    ++chunks_[c]->live;
    if (!index_.insert(slot).second) {
      return fail(
          absl::StrCat("member name ", Quote(names[i]), " is given twice"));
    }
  }
  // The free slots of the chunks in use, lowest first off the list. A free
  // slot's generation is above any the snapshot could hold for it: none,
  // since a loaded board's every id is checked to have a live name.
  for (size_t c = chunks_.size(); c-- > 0;) {
    if (chunks_[c] == nullptr) continue;
    for (uint32_t i = kChunkSlots; i-- > 0;) {
      const uint32_t slot = static_cast<uint32_t>(c * kChunkSlots + i);
      if (!IsLive(At(slot))) PushFree(slot);
    }
  }
  return absl::OkStatus();
}

void MemberDictionary::Impl::HoldReleases() {
  std::unique_lock lock(mutex_);
  ++holds_;
}

void MemberDictionary::Impl::ResumeReleases() {
  std::unique_lock lock(mutex_);
  if (--holds_ > 0) return;
  for (const uint32_t slot : held_) {
    Slot& s = At(slot);
    // Skipped if added again meanwhile (bit cleared) or already freed by
    // an earlier entry for the same slot.
    if (!IsLive(s) || (s.size & kHeldBit) == 0) continue;
    s.size &= ~kHeldBit;
    index_.erase(slot);
    FreeSlot(slot);
  }
  held_.clear();
  held_.shrink_to_fit();
  ShrinkIndexIfSparse();
}

void MemberDictionary::Impl::AttachJournal(NamesJournal* journal,
                                           std::string key) {
  std::unique_lock lock(mutex_);
  journal_ = journal;
  key_ = std::move(key);
}

MemberDictionary::MemberDictionary(std::function<bool(MemberId)> on_board)
    : impl_(std::make_unique<Impl>(std::move(on_board))) {}
MemberDictionary::~MemberDictionary() = default;

absl::StatusOr<MemberId> MemberDictionary::Intern(absl::string_view name) {
  return impl_->Intern(name, /*sync=*/true);
}
absl::StatusOr<MemberId> MemberDictionary::InternUnsynced(
    absl::string_view name) {
  return impl_->Intern(name, /*sync=*/false);
}
absl::Status MemberDictionary::SyncJournal() { return impl_->SyncJournal(); }
std::optional<MemberId> MemberDictionary::Find(absl::string_view name) const {
  return impl_->Find(name);
}
std::optional<MemberId> MemberDictionary::PinIfPresent(absl::string_view name) {
  return impl_->PinIfPresent(name);
}
std::optional<MemberId> MemberDictionary::PinIfNamed(MemberId id,
                                                     absl::string_view name) {
  return impl_->PinIfNamed(id, name);
}
std::optional<MemberId> MemberDictionary::PinIfLive(MemberId id) {
  return impl_->PinIfNamed(id, std::nullopt);
}
void MemberDictionary::Unpin(MemberId id, bool maybe_absent) {
  impl_->Unpin(id, maybe_absent);
}
bool MemberDictionary::Contains(MemberId id) const {
  return impl_->Contains(id);
}
std::vector<std::optional<std::string>> MemberDictionary::NamesOf(
    absl::Span<const LeaderboardEntry> entries) const {
  return impl_->NamesOf(entries);
}
void MemberDictionary::WithNames(
    absl::Span<const LeaderboardEntry> entries,
    absl::FunctionRef<void(absl::Span<IndexedName>)> visit) const {
  impl_->WithNames(entries, visit);
}
std::vector<std::pair<size_t, std::string>> MemberDictionary::NameOrderSlice(
    const std::vector<LeaderboardEntry>& entries, bool descending, size_t begin,
    size_t end) const {
  return impl_->NameOrderSlice(entries, descending, begin, end);
}
size_t MemberDictionary::size() const { return impl_->size(); }
MemberNameStats MemberDictionary::stats() const { return impl_->stats(); }
void MemberDictionary::CopyNames(std::vector<MemberId>& ids,
                                 std::vector<std::string>& names) const {
  impl_->CopyNames(ids, names);
}
uint64_t MemberDictionary::ScanSlots(uint64_t from, size_t count,
                                     std::vector<MemberId>& ids,
                                     std::vector<std::string>& names) const {
  return impl_->ScanSlots(from, count, ids, names);
}
absl::Status MemberDictionary::Restore(const std::vector<MemberId>& ids,
                                       std::vector<std::string> names) {
  return impl_->Restore(ids, std::move(names));
}
void MemberDictionary::HoldReleases() { impl_->HoldReleases(); }
void MemberDictionary::AttachJournal(NamesJournal* journal, std::string key) {
  impl_->AttachJournal(journal, std::move(key));
}
void MemberDictionary::DetachJournal() { impl_->AttachJournal(nullptr, ""); }
void MemberDictionary::ResumeReleases() { impl_->ResumeReleases(); }

}  // namespace feedcore::server
