// LeaderboardStore: the server's sorted-set keys, each a feedcore
// Leaderboard from a LeaderboardRegistry, plus what Redis semantics need
// on top of the library's boards.
//
// Member names. Redis members are byte strings ("player:alice",
// "element:000000004711"); feedcore boards rank numeric MemberIds. Each key
// has its own dictionary that gives every distinct name a MemberId the
// first time it is added (1, 2, 3...) and maps ids back to names for
// replies. Any byte string is a valid name, so clients and benchmarks work
// unchanged. ZREM keeps the name's id (a member added again gets the same
// one), so a key's dictionary grows with the distinct names ever added to
// it; DEL drops the key's board and its dictionary together.
//
// Snapshots. The boards live in a LeaderboardRegistry, under the keys'
// names, which the library's SaveSnapshot saves; the dictionaries are
// saved next to it (member_names_file.h). SaveKeys keeps the set of keys
// fixed while the library saves the registry and then copies every
// dictionary, so each saved board has its key's names: ids are only ever
// added to a dictionary, and a key cannot be deleted and created again
// (with a new dictionary) in between. Restore adopts a loaded registry and
// its dictionaries, checking that they match.
//
// Read-modify-write commands (ZADD with NX/XX/GT/LT, counting added
// members) need "look at the score, then change it" to be atomic per
// member. The board's own calls are atomic one at a time, so each key also
// has a small array of member locks, picked by a hash of the name; the
// commands hold the member's lock across both steps. Different members
// rarely share a lock, so writes still spread over the board's partitions.
//
// Thread-safe.
#ifndef FEEDCORE_EXAMPLES_FEED_SERVER_LEADERBOARD_STORE_H_
#define FEEDCORE_EXAMPLES_FEED_SERVER_LEADERBOARD_STORE_H_

#include <array>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "feedcore/leaderboard.h"

namespace feedcore::server {

class NamesJournal;

// The name <-> id dictionary of one key.
class MemberDictionary {
 public:
  // The id of `name`, assigning the next one if it has none. With a
  // journal attached (--appendonly), a new assignment is appended to it
  // before the id is given out, and with fsync always synced before this
  // returns, even to a caller that finds the id already assigned by
  // another: the caller's board write never reaches the store's log
  // before the name is in the journal (names_journal.h). The journal's
  // error if it refuses writes; nothing is assigned then.
  absl::StatusOr<MemberId> Intern(absl::string_view name);

  // Journals this dictionary's assignments as those of `key` from now on.
  void AttachJournal(NamesJournal* journal, std::string key);
  // Stops journaling: the key was deleted, and assignments made through
  // handles still held must not reach the journal after its drop record.
  void DetachJournal();
  // The id of `name`, or nullopt if it was never added.
  std::optional<MemberId> Find(absl::string_view name) const;
  // The names of the entries' members, in order, under one lock. A name is
  // empty for an id never assigned (callers only pass entries read from the
  // key's own board, whose ids all have names).
  std::vector<std::string> NamesOf(
      const std::vector<LeaderboardEntry>& entries) const;
  size_t size() const;

  // Every name, in id order (the i-th has id i + 1).
  std::vector<std::string> Names() const;

  // Fills an empty dictionary with `names` in id order. InvalidArgument if
  // the dictionary is not empty or a name is given twice.
  absl::Status Restore(std::vector<std::string> names);

 private:
  mutable std::shared_mutex mutex_;
  absl::flat_hash_map<std::string, MemberId> ids_;
  std::deque<std::string> names_;    // names_[id - 1]
  NamesJournal* journal_ = nullptr;  // guarded by mutex_
  std::string key_;                  // guarded by mutex_
};

// Every member name of one key, in id order: names[i] has MemberId i + 1.
struct KeyMemberNames {
  std::string key;
  std::vector<std::string> names;
};

// One sorted-set key.
struct SortedSet {
  std::shared_ptr<Leaderboard> board;
  MemberDictionary members;
  // Serializes read-modify-write updates of one member (see above).
  std::mutex& LockFor(absl::string_view member_name);

  static constexpr size_t kMemberLocks = 64;
  std::array<std::mutex, kMemberLocks> member_locks;
};

class LeaderboardStore {
 public:
  // An empty store with a registry of its own. `options` apply to every
  // board the store creates. InvalidArgument if they are out of range.
  static absl::StatusOr<std::unique_ptr<LeaderboardStore>> Create(
      const LeaderboardOptions& options);

  // A store over `registry` (typically a loaded snapshot's), which must
  // outlive it: every board of the registry becomes the key of its name,
  // with the dictionary `names` gives that key. DataLoss, naming the key,
  // if a board has no entry in `names`, an entry has no board, or a board
  // holds a member id its dictionary has no name for; InvalidArgument for
  // bad options or a null registry.
  static absl::StatusOr<std::unique_ptr<LeaderboardStore>> Restore(
      const LeaderboardOptions& options, LeaderboardRegistry* registry,
      std::vector<KeyMemberNames> names);

  // The key's sorted set, created empty if absent. InvalidArgument for a
  // key the registry does not accept (empty, or longer than
  // kMaxLeaderboardNameLength).
  absl::StatusOr<std::shared_ptr<SortedSet>> GetOrCreate(absl::string_view key);

  // The key's sorted set, or null if there is none (reads of a missing key
  // behave as reads of an empty one and create nothing).
  std::shared_ptr<SortedSet> Find(absl::string_view key) const;

  // Deletes the key. Returns whether it existed. Handles already taken
  // stay usable; the key's next write starts a new, empty set. The
  // registry's error if it refuses the drop (the key then stays); with a
  // journal, the journal's error (the key is gone, the journal refuses
  // writes from then on).
  absl::StatusOr<bool> Delete(absl::string_view key);

  // Journals every key's member names from now on (names_journal.h).
  // `sync_boards` makes the registry's changes so far durable
  // (DurableStore::Sync); Delete calls it between the board's drop and
  // the journal's drop record. Call before serving, once.
  void AttachJournal(NamesJournal* journal,
                     std::function<absl::Status()> sync_boards);

  // Every key's member names, in id order, each key's under its own lock.
  std::vector<KeyMemberNames> AllNames() const;

  size_t size() const;

  // Calls `save` with the registry while no key can be created or deleted
  // (writes to existing keys go on), then returns every key's member names
  // (see "Snapshots" above). Returns `save`'s error if it fails.
  absl::StatusOr<std::vector<KeyMemberNames>> SaveKeys(
      absl::FunctionRef<absl::Status(const LeaderboardRegistry&)> save) const;

  const LeaderboardOptions& options() const { return options_; }

 private:
  LeaderboardStore(const LeaderboardOptions& options,
                   std::unique_ptr<LeaderboardRegistry> owned_registry,
                   LeaderboardRegistry* registry)
      : options_(options),
        owned_registry_(std::move(owned_registry)),
        registry_(*registry) {}

  const LeaderboardOptions options_;
  const std::unique_ptr<LeaderboardRegistry> owned_registry_;  // may be null
  LeaderboardRegistry& registry_;
  mutable std::shared_mutex mutex_;
  absl::flat_hash_map<std::string, std::shared_ptr<SortedSet>> sets_;
  NamesJournal* journal_ = nullptr;            // set before serving
  std::function<absl::Status()> sync_boards_;  // set with journal_
};

}  // namespace feedcore::server

#endif  // FEEDCORE_EXAMPLES_FEED_SERVER_LEADERBOARD_STORE_H_
