// LeaderboardStore: the server's sorted-set keys, each a feedcore
// Leaderboard from a LeaderboardRegistry, plus what Redis semantics need
// on top of the library's boards.
//
// Member names. Redis members are byte strings ("player:alice",
// "element:" and a number); feedcore boards rank numeric MemberIds. Each
// key has its own dictionary that gives a name an id when it is added and
// frees the name when ZREM removes the member, so a dictionary holds the
// names of the members on the board and its memory follows them (see
// MemberDictionary for the layout and how ids are reused safely). DEL
// drops the key's board and its dictionary together.
//
// Snapshots. The boards live in a LeaderboardRegistry, under the keys'
// names, which the library's SaveSnapshot saves; the dictionaries are
// saved next to it (member_names_file.h). SaveKeys keeps the set of keys
// fixed and holds back the freeing of names while the library saves the
// registry and the dictionaries are copied, so every member of a saved
// board has its name in the copy (the copy may also name members added
// after their board was saved; loading drops those). Restore adopts a
// loaded registry and its dictionaries, checking that they match.
//
// Journal. With --appendonly the dictionaries journal the names they give
// (names_journal.h), and Delete journals the key's drop once the board's
// drop is durable in the store.
//
// Writes. ZADD (every flag), ZINCRBY, ZREM and the removals (ZPOPMIN,
// ZREMRANGEBY...) are one conditional write of the library per member
// (Leaderboard::Write/WriteMany/Remove), atomic per member on the board's
// own partition locks; the store keeps no lock per member. What keeps a name
// and its member together is the dictionary's pins (MemberDictionary, "Pins"):
// a command pins the names it writes, writes the board, and unpins them, and a
// name is freed only when no pin is held and its member is off the board.
//
// Replace (ZUNIONSTORE, ZRANGESTORE and the other *STORE commands) builds
// the destination's new board while holding the store's lock exclusively,
// so Find and GetOrCreate of every key wait until it is complete: a
// reader sees the old set or the new one, never a half-built one. The old
// board is dropped as Delete drops it (journaled once durable), and the
// new one's names journaled as any key's. Handles taken before keep the
// old set. Cost: the new set's writes, during which the store's other
// keys wait too.
//
// Randomness (ZRANDMEMBER) comes from a generator the store owns, seeded
// at creation, so that a test can fix it.
//
// Expiry. A key may have an expiry (EXPIRE), a time on the engine clock
// (UseClock). From that time the key is absent to every call, as in
// Redis: Find answers null, Exists false, GetOrCreate starts a new set; the
// expired set itself is dropped by the next GetOrCreate or Delete of the
// key, or by DeleteExpired, which the server runs every 100 ms. With a
// journal, an expiry is a record of it (expire), synced as the policy says
// before the call returns; a drop record clears it. Saves keep the expiries
// with the names.
//
// Thread-safe.
#ifndef FEEDCORE_SERVER_LEADERBOARD_STORE_H_
#define FEEDCORE_SERVER_LEADERBOARD_STORE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/mutex.h"
#include "feedcore/clock.h"
#include "feedcore/leaderboard.h"
#include "member_dictionary.h"

namespace feedcore::server {

class NamesJournal;

// Every member name of one key: names[i] has MemberId ids[i] (or i + 1
// when `ids` is empty).
struct KeyMemberNames {
  std::string key;
  std::vector<std::string> names;
  std::vector<MemberId> ids;
  // When the key expires (EXPIRE), on the engine clock; 0: never.
  Micros expires_at = 0;
};

// A member with its name, as the sorted-set replies need it.
struct NamedEntry {
  std::string name;
  int64_t score = 0;
  MemberId id = 0;
};

// One sorted-set key: its board and the names of the board's members.
struct SortedSet {
  explicit SortedSet(std::shared_ptr<Leaderboard> board_of_key);

  const std::shared_ptr<Leaderboard> board;
  // Asks `board` whether a member is on it before freeing its name.
  MemberDictionary members;

  // Bumped after every write of `board` by a command (ZADD, ZINCRBY and
  // every removal; *STORE builds a new set), so a reader can tell whether
  // a copy it made is still the set's.
  std::atomic<uint64_t> version{0};
  // Commands that choose members by reading the set and then remove them
  // (ZPOPMIN, ZPOPMAX, ZMPOP, ZREMRANGEBY...) hold this exclusively from
  // the read to the removal; ZADD, ZINCRBY and ZREM hold it shared while
  // they write the board. So those commands are atomic against every write
  // of the key, as in Redis (two pops never pick the same member, and no
  // write lands between a pop's read and its removal), while the plain
  // writes still run side by side on the board's partitions. Taken before
  // the dictionary's and the board's locks.
  mutable internal::SharedMutex choose_and_remove_mutex;
  // The lexicographic reads' copy of the set in Redis's order
  // (sorted_set_order.h, OrderedCopy) and the version it was read at.
  mutable internal::SharedMutex ordered_copy_mutex;
  mutable std::shared_ptr<const std::vector<NamedEntry>> ordered_copy
      ABSL_GUARDED_BY(ordered_copy_mutex);
  mutable uint64_t ordered_copy_version ABSL_GUARDED_BY(ordered_copy_mutex) = 0;
};

class LeaderboardStore {
 public:
  // An empty store with a registry of its own. `options` apply to every
  // board the store creates. InvalidArgument if they are out of range.
  // `random_seed` seeds Random().
  static absl::StatusOr<std::unique_ptr<LeaderboardStore>> Create(
      const LeaderboardOptions& options, uint64_t random_seed = kRandomSeed);

  // A store over `registry` (typically a loaded snapshot's), which must
  // outlive it: every board of the registry becomes the key of its name,
  // with the dictionary `names` gives that key; names of members not on
  // the board are dropped (see "Snapshots"). DataLoss, naming the key, if a
  // board has no entry in `names`, an entry has no board, a dictionary is
  // malformed, or a board holds a member id its dictionary has no name
  // for; InvalidArgument for bad options or a null registry.
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

  // Deletes the key. Returns whether it existed (a set whose members are
  // all gone does not, as in Redis, though its entry is dropped too). Handles
  // already taken stay usable; the key's next write starts a new, empty set.
  // The registry's error if it refuses the drop (the key then stays); with a
  // journal, the store's or the journal's error (the key is gone, and the
  // append-only files refuse writes from then on).
  absl::StatusOr<bool> Delete(absl::string_view key);

  // RENAME (RENAMENX with `only_if_absent`): the set of `from` becomes the
  // set of `to`, with its board (LeaderboardRegistry::Rename, O(1) in the
  // set's size), its names and its expiry; `to`'s set, if any, is dropped.
  // With `only_if_absent` and an existing `to`, returns false and changes
  // nothing; otherwise true (`from` == `to` changes nothing). NotFound ("no
  // such key") if `from` does not exist; InvalidArgument for a `to` the
  // registry refuses. With a journal, the rename is synced in it, after the
  // store is durable up to it, whatever the policy (names_journal.h); the
  // store's or the journal's error otherwise (the append-only files then
  // refuse writes, and a restart may find the rename made). REQUIRES: no
  // other call on `from` or `to` runs meanwhile (the server runs RENAME
  // alone, as EXEC).
  absl::StatusOr<bool> Rename(absl::string_view from, absl::string_view to,
                              bool only_if_absent);

  // Journals every key's member names from now on (see "Journal").
  // `sync_boards` makes the registry's changes so far durable
  // (DurableStore::Sync); Delete calls it between the board's drop and
  // the journal's drop record. Call before serving, once.
  void AttachJournal(NamesJournal* journal,
                     std::function<absl::Status()> sync_boards);

  size_t size() const;

  // Replaces the key's set by one holding `members` (distinct names with
  // their scores), as one step (see "Replace"); an empty `members` deletes
  // the key. Returns the new set's size. Errors as GetOrCreate and Delete;
  // a journal that refuses a name leaves the members written before it.
  absl::StatusOr<size_t> Replace(
      absl::string_view key,
      std::vector<std::pair<std::string, int64_t>> members);

  // A uniformly random number below `bound` (which must be > 0), from the
  // store's seeded generator.
  uint64_t Random(uint64_t bound);
  static constexpr uint64_t kRandomSeed = 0x5eedf00d;

  // The keyspace as Redis clients see it: a key exists while its set has
  // members. Cost: a board size (a few partition counters) per key.
  bool Exists(absl::string_view key) const;
  // Every existing key, in no particular order.
  std::vector<std::string> KeyNames() const;
  // SCAN: calls `visit` with the existing keys at and after `cursor` in
  // the store's scan order, at least `count` keys' worth of the order
  // (fewer at its end), and returns the cursor to continue from, 0 when
  // done. A key that exists for the whole of a scan from cursor 0 is
  // visited at least once; keys created or deleted meanwhile may or may
  // not be, as in Redis. Cursors are positions in an order of hashes of
  // the keys (kept beside the keys, a key's name stored a second time),
  // not indexes, so deletes never make a scan skip.
  uint64_t Scan(uint64_t cursor, size_t count,
                absl::FunctionRef<void(const std::string&)> visit) const;
  // The clock expiries are measured on (the engine's). Call before
  // serving, once; without it keys never expire.
  void UseClock(std::shared_ptr<Clock> clock);
  // Sets the key's expiry to `at` (engine-clock micros), or clears it with
  // 0. Returns false, changing nothing, if the key does not exist.
  // Journal errors as Delete's.
  absl::StatusOr<bool> SetExpiry(absl::string_view key, Micros at);
  // The key's expiry, 0 if it has none; nullopt if the key does not exist.
  std::optional<Micros> ExpiryOf(absl::string_view key) const;
  // Drops up to `budget` keys whose expiry has passed; returns how many.
  // Errors as Delete's.
  absl::StatusOr<size_t> DeleteExpired(size_t budget);
  // How many keys have an expiry, and their average time left in micros
  // (INFO keyspace's expires and avg_ttl).
  std::pair<size_t, Micros> ExpiryStats() const;

  // Deletes every key, as one step for other callers of the store (the
  // journal is synced once). Returns how many existed. Errors as Delete.
  absl::StatusOr<size_t> DeleteAll();

  // The live member names of every key, and their memory.
  MemberNameStats NameStats() const;

  // Calls `save` with the registry while no key can be created or deleted
  // (writes to existing keys go on), then returns every key's member names
  // (see "Snapshots" above). Returns `save`'s error if it fails. A journal
  // rewrite passes a `save` that makes the store durable: every name freed
  // before it is then off its board for good, and every name freed after
  // it is still in the copy.
  absl::StatusOr<std::vector<KeyMemberNames>> SaveKeys(
      absl::FunctionRef<absl::Status(const LeaderboardRegistry&)> save) const;

  const LeaderboardOptions& options() const { return options_; }

 private:
  LeaderboardStore(const LeaderboardOptions& options,
                   std::unique_ptr<LeaderboardRegistry> owned_registry,
                   LeaderboardRegistry* registry, uint64_t random_seed)
      : random_(random_seed),
        options_(options),
        owned_registry_(std::move(owned_registry)),
        registry_(*registry) {}

  internal::SharedMutex random_mutex_;
  std::mt19937_64 random_ ABSL_GUARDED_BY(random_mutex_);
  const LeaderboardOptions options_;
  const std::unique_ptr<LeaderboardRegistry> owned_registry_;  // may be null
  LeaderboardRegistry& registry_;
  mutable std::shared_mutex mutex_;
  absl::flat_hash_map<std::string, std::shared_ptr<SortedSet>> sets_;
  // Makes the key's empty set. REQUIRES: mutex_ held exclusively, the key
  // absent from sets_.
  absl::StatusOr<std::shared_ptr<SortedSet>> CreateLocked(
      absl::string_view key);
  // Whether `key` has an expiry that has passed. REQUIRES: mutex_ held.
  bool ExpiredLocked(absl::string_view key) const;

  // The expiries of the keys that have one.
  absl::flat_hash_map<std::string, Micros> expiries_;
  std::shared_ptr<Clock> clock_;  // set before serving
  // The keys of sets_ in Scan's order: (position, key).
  absl::btree_set<std::pair<uint64_t, std::string>> scan_order_;
  NamesJournal* journal_ = nullptr;            // set before serving
  std::function<absl::Status()> sync_boards_;  // set with journal_
};

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_LEADERBOARD_STORE_H_
