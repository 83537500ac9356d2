// MemberDictionary: the member names of one sorted-set key and their
// MemberIds, in compact storage with names freed on removal.
#ifndef FEEDCORE_SERVER_MEMBER_DICTIONARY_H_
#define FEEDCORE_SERVER_MEMBER_DICTIONARY_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "feedcore/leaderboard.h"

namespace feedcore::server {

class NamesJournal;

// What the member dictionaries hold (INFO keyspace).
struct MemberNameStats {
  size_t names = 0;  // live names
  size_t bytes = 0;  // memory the dictionaries hold for them
};

// The name <-> id dictionary of one key.
//
// Layout. Names live in slots of 32 bytes, 1024 to a chunk: a name of up
// to 24 bytes (most member names) is stored in its slot, a longer one on
// the heap. The name -> id index is a hash set of 4-byte slot numbers that
// hashes and compares through the slots, so a name is stored once. A
// million 20-byte names take about 32 MB of slots and 10 MB of index,
// against about 200 MB for a std::string-keyed map plus a vector of
// names. A chunk whose slots are all free is released.
//
// Ids. A MemberId is (generation << 32) | (slot + 1). Freeing a name bumps
// its slot's generation, and the slot is reused by a later name with the
// new generation, so an id read from the board before a ZREM can never be
// given the name of the member that took its slot next: NamesOf reports it
// as gone. A dictionary that never freed a name has generation 0 and ids
// 1, 2, 3... in the order names were added.
//
// Pins. A name stays in the dictionary while its member is on the board
// and while a command writing that member holds a pin on it; there are no
// locks for callers to hold. A writer (ZADD, ZINCRBY, ZREM):
//   1. pins the name: Intern (giving it an id if it has none) or
//      PinIfPresent (ZADD XX and ZREM, which never add a member);
//   2. writes the board with the id;
//   3. Unpins it, saying whether the write may have left the member off
//      the board (a condition that did not hold, a failed write, a
//      removal).
// The last Unpin of a name that any of its pins marked so checks, under
// the dictionary's exclusive lock, whether the member is on the board (the
// `on_board` predicate given at construction) and frees the name if not.
// A pin count is changed only under the dictionary's lock, so while the
// check runs no writer holds or can take a pin on that name, and nothing
// can put its member on the board: the answer stays true until the name is
// freed. Hence, whatever the interleaving of ZADD NX / XX / GT, ZINCRBY and
// ZREM of one name:
//   * a member on the board always has a name (its writer held a pin,
//     and a name is freed only when no pin is held and its member is
//     absent);
//   * once no pin is held, a name always has a member on the board, or
//     it is held back for a snapshot (below): the last pin to go saw, or
//     the pin of whoever removed the member marked, the absence.
// Lock order: the dictionary's lock, then (inside `on_board`) the board's
// partition locks. The board never calls back into the dictionary, and no
// caller holds a partition lock while calling the dictionary.
//
// Releases may be held back (HoldReleases) while a snapshot copies the
// board and then the dictionary: a name freed meanwhile stays in the
// dictionary, still found and still interned to the same id, and is freed
// by ResumeReleases unless it was pinned again.
//
// Journal. With --appendonly the dictionary journals the ids it gives
// (names_journal.h): Intern appends a new name's assign record before the
// id is returned, so the board write that uses the id never reaches the
// store's log before the name reaches the journal. Freeing journals
// nothing (names_journal.h says why a freed name's record may stay).
//
// Thread-safe. Intern and PinIfPresent of a name that exists take the
// lock shared; Unpin takes it shared, and exclusive only for the check
// (a removal, or a write that did not leave the member on the board).
class MemberDictionary {
 public:
  // `on_board(id)`: whether the member `id` is on the key's board (see
  // "Pins"). Called under the dictionary's exclusive lock; it must not call
  // the dictionary.
  explicit MemberDictionary(std::function<bool(MemberId)> on_board);
  ~MemberDictionary();
  MemberDictionary(const MemberDictionary&) = delete;
  MemberDictionary& operator=(const MemberDictionary&) = delete;

  // Longest name, in bytes.
  static constexpr size_t kMaxNameBytes = (size_t{1} << 31) - 1;

  // The id of `name`, giving it one if it has none, pinned (see "Pins"):
  // Unpin it after the board write. InvalidArgument for a name over
  // kMaxNameBytes; ResourceExhausted when every one of the 2^32 - 1 slots
  // is taken; the journal's error if it refuses writes (nothing is given
  // or pinned then). With a journal and fsync always, returns only once
  // the id's assign record is on stable storage, even to a caller that
  // finds the id given by another.
  absl::StatusOr<MemberId> Intern(absl::string_view name);
  // As Intern, but with a journal it returns without waiting for the
  // name's record to be on stable storage: call SyncJournal before the
  // board write that uses any id it returned, one sync for many names
  // (ZADD of many pairs, the *STORE commands).
  absl::StatusOr<MemberId> InternUnsynced(absl::string_view name);
  // With a journal and fsync always: returns once every record appended so
  // far is on stable storage (at once otherwise). The journal's error.
  absl::Status SyncJournal();
  // The id of `name`, pinned, or nullopt (and no pin) if it has none. For
  // writes that never add the member: they need no journal sync, since a
  // member on the board had its name's record synced before it was added.
  std::optional<MemberId> PinIfPresent(absl::string_view name);
  // As PinIfPresent, for a member read with its id: pins `id` if it is
  // still the id of `name`, without a lookup by name.
  std::optional<MemberId> PinIfNamed(MemberId id, absl::string_view name);
  // Pins `id` if it has a name, whichever: for a caller that read it while
  // nothing could free and give it again (SortedSet's
  // choose_and_remove_mutex held exclusively since the read).
  std::optional<MemberId> PinIfLive(MemberId id);
  // Ends one pin of `id` taken by Intern or PinIfPresent. `maybe_absent`:
  // the caller's board write may have left the member off the board (pass
  // false only when the write reported the member on it afterwards).
  // REQUIRES: the caller holds a pin of `id` (an Unpin without one is
  // ignored).
  void Unpin(MemberId id, bool maybe_absent);
  // The id of `name`, or nullopt if it has none. Not pinned: for reads.
  std::optional<MemberId> Find(absl::string_view name) const;
  // Whether `id` is the live id of a name.
  bool Contains(MemberId id) const;

  // The names of the entries' members, in order, under one lock; nullopt
  // for an id whose name was freed since the entry was read (the member
  // was removed meanwhile).
  std::vector<std::optional<std::string>> NamesOf(
      absl::Span<const LeaderboardEntry> entries) const;
  // What NamesOf finds, without copying a name: `visit` gets (index in
  // `entries`, name) of every entry that still has one, in entry order, to
  // reorder as it likes, under one shared lock (it may not call into the
  // dictionary; the names are valid during the call only). For replies
  // written straight from the dictionary.
  using IndexedName = std::pair<size_t, absl::string_view>;
  void WithNames(absl::Span<const LeaderboardEntry> entries,
                 absl::FunctionRef<void(absl::Span<IndexedName>)> visit) const;

  // Positions [begin, end) of the entries that still have a name, in the
  // byte order of their names (reversed when `descending`): each one's
  // index in `entries` and its name. Names are compared in place under one
  // lock and only the selected ones copied, so a slice of a large tie
  // group costs one string per returned member. O(n log end).
  std::vector<std::pair<size_t, std::string>> NameOrderSlice(
      const std::vector<LeaderboardEntry>& entries, bool descending,
      size_t begin, size_t end) const;

  // Live names.
  size_t size() const;
  MemberNameStats stats() const;

  // Every live name with its id (including names whose release is held
  // back), in slot order.
  void CopyNames(std::vector<MemberId>& ids,
                 std::vector<std::string>& names) const;

  // ZSCAN: appends the live names (and ids) of the slots from `from` on,
  // at least `count` of them (fewer at the end), and returns the slot to
  // continue from, 0 when done. A name keeps its slot while it lives, so a
  // name live for a whole scan from 0 is returned exactly once; names
  // added or freed meanwhile may or may not be. O(slots visited).
  uint64_t ScanSlots(uint64_t from, size_t count, std::vector<MemberId>& ids,
                     std::vector<std::string>& names) const;
  // Fills an empty dictionary: names[i] gets ids[i], or the id i + 1 when
  // `ids` is empty. InvalidArgument if the dictionary is not empty, the
  // sizes differ, an id is 0 or given twice, or a name is given twice or
  // too long.
  absl::Status Restore(const std::vector<MemberId>& ids,
                       std::vector<std::string> names);

  // Journals the ids given from now on as those of `key` (see "Journal").
  void AttachJournal(NamesJournal* journal, std::string key);
  // Stops journaling: the key was deleted, and ids given through handles
  // still held must not reach the journal after its drop record.
  void DetachJournal();

  // See "Releases may be held back" above. Holds nest.
  void HoldReleases();
  void ResumeReleases();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_MEMBER_DICTIONARY_H_
