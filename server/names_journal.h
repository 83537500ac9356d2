// NamesJournal: the member names of the sorted-set keys, made durable next
// to a DurableStore (--appendonly yes). The store's log holds the boards
// with numeric MemberIds; which name each id stands for is server state
// (LeaderboardStore's dictionaries), so it gets an append-only file of its
// own, written with the store's fsync policy.
//
// Records
// -------
//   assign(key, id, name)  `name` is member `id` of `key`
//   free(key, id)          `id` of `key` has no name any more
//   drop(key)              `key` was deleted with its whole dictionary
//   expire(key, at)        `key` expires at `at` (engine-clock micros; 0:
//                          never), as EXPIRE and PERSIST set it
//   rename(key, to, gen)   RENAME: `key`'s names and expiry are `to`'s,
//                          whose own are dropped; `gen` is the generation
//                          of `key`'s board (LeaderboardRegistry)
//   begin(tag), end(tag)   the records between them are one EXEC's, made
//                          in the store's write group with that tag (see
//                          "Groups"); end may be missing after a crash
// Replay applies them in order to one map per key: assign sets id -> name
// (replacing what the id had), free erases the id, drop empties the key
// and its expiry, expire sets the expiry, rename moves a key's map and
// expiry over another's; a group's records only if the store holds the
// group.
// Each record only sets state, so replaying records over a state that
// already holds some of them ends in the same state: that is what lets a
// rewrite run while names are assigned (see Rewrite). Ids need not be
// dense (member_dictionary.h), and a replayed key may name ids no board
// holds any more, even two ids with one name (see "Frees"): the caller
// keeps the names of the ids on the recovered boards, and only those must
// be distinct.
//
// The ordering rules that make every id on a board have its name after a
// crash (the callers, MemberDictionary, LeaderboardStore and the recovery
// in append_only.cc, keep them):
//   * assign is appended, and with kAlways synced, before the board write
//     that first uses the id; a writer that finds the id already assigned
//     waits for the same sync (SyncAppended).
//   * drop is appended only once the board's drop is durable in the store
//     (DurableStore::Sync): otherwise a crash could bring the board back
//     without its names.
//   * rename is appended once the store is durable up to it, and synced
//     whatever the policy, before the store renames the board. So the
//     journal decides, and only its last rename can be missing from the
//     store (each one's sync covered the store's renames before it): if a
//     crash lost it, the store still holds board `key` with generation
//     `gen`, and recovery renames it (NamesJournalContents::last_rename);
//     if not, no board has both, since only a later rename could give the
//     board its old name back.
//
// Groups
// ------
// An EXEC is one write group of the store (DurableStore::WriteGroup),
// which reaches the store's disk whole or not at all when it closes; its
// journal records are appended as they are made, before it closes. So
// inside a group the rules above do not hold (a drop is appended before
// the store's drop is durable), and the journal cannot decide alone: the
// group's tag does. AppendOnlyFiles numbers each group one above the
// store's largest tag, appends begin(tag), runs the EXEC, closes the group
// and appends end(tag). Replay applies the records of a group whose tag
// is at most the store's largest (Stats().write_group_tag after its Open:
// the store holds that group) and skips the others, which belong to a
// group the crash kept from the store. Nothing else appends meanwhile
// (EXEC runs alone). With kAlways every record of the group is synced
// before the group closes, as outside one.
//
// Frees
// -----
// The server appends no free records: ZREM frees a name in memory only,
// and its assign record stays until the journal is rewritten (at every
// start and by BGREWRITEAOF), which keeps only the names live then, after
// making the store durable. A free appended at once could reach the disk
// before the store's removal of the member; a crash would then recover the
// member without a name, and dropping it would apply the ZREM while
// earlier acknowledged writes were lost. A stale assign is harmless: if
// the crash lost the removal, it names the member that came back; if not,
// its id is on no recovered board and recovery drops it. It can never
// name another member, since a key's ids are never given twice between
// two rewrites: a freed slot is reused with a new id, a key deleted and
// created again starts after its drop record, and each start rewrites the
// journal before any id is given. A free record would not shrink the file
// either; only a rewrite does.
//
// File format
// -----------
// A header (magic "FCNAMJL" and a zero byte, u32 version 2; version 1,
// without groups, is read too), then one frame per record: u32 body
// length, u64 XXH3-64 of the body, the body (u8 type 1 assign, 2 free,
// 3 drop, 4 expire, 5 rename, 6 begin, 7 end; u32 key length, key (empty
// for begin and end); u64 id, or for expire the time, for rename the
// generation, for begin and end the tag; u32 name length, name). A crash can
// cut only the last frame short: an incomplete frame, or a last frame that
// fails its checksum, is a torn tail that Open cuts off. A bad frame with more
// data after it is DataLoss naming its offset. docs/formats.md has the layout.
//
// Thread safety: every method may be called from any thread.
#ifndef FEEDCORE_SERVER_NAMES_JOURNAL_H_
#define FEEDCORE_SERVER_NAMES_JOURNAL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "feedcore/durable_store.h"
#include "feedcore/types.h"
#include "leaderboard_store.h"

namespace feedcore::server {

enum class NamesRecordType : uint8_t {
  kAssign = 1,
  kFree = 2,
  kDrop = 3,
  kExpire = 4,
  kRename = 5,
  kGroupBegin = 6,
  kGroupEnd = 7,
};

struct NamesRecord {
  NamesRecordType type = NamesRecordType::kAssign;
  std::string key;
  // assign and free; expire: the time (0: never); rename: the generation;
  // begin and end: the group's tag
  MemberId id = 0;
  std::string name;  // assign; rename: the new key
};

// A rename record as replayed.
struct NamesRename {
  std::string from;
  std::string to;
  uint64_t generation = 0;
};

// One frame, as appended.
std::string EncodeNamesFrame(const NamesRecord& record);

// What a journal file holds, replayed.
struct NamesJournalContents {
  // Every key's names with their ids, in id order, including names of ids
  // no board holds any more (see "Frees").
  std::vector<KeyMemberNames> keys;
  // The last rename record, for recovery to redo it if the store lost it
  // (see the ordering rules above).
  std::optional<NamesRename> last_rename;
  uint64_t records = 0;      // whole records read
  uint64_t valid_bytes = 0;  // up to the end of the last whole record
  bool torn_tail = false;    // bytes after it were cut (or are to be)
  // Groups replayed, and groups skipped since the store does not hold them
  // (see "Groups"), with the records they held.
  uint64_t groups_applied = 0;
  uint64_t groups_skipped = 0;
  uint64_t records_skipped = 0;
};

// Reads and replays `bytes` (a whole journal file), applying the groups
// whose tag is at most `store_group_tag` (see "Groups"). InvalidArgument
// for a file that is not a journal or has another version; DataLoss
// naming the offset for damage before the last frame, a record that does
// not decode, or groups that do not nest as written (a begin inside a
// group, an end of another group or outside one).
absl::StatusOr<NamesJournalContents> DecodeNamesJournal(
    absl::string_view bytes, uint64_t store_group_tag);

// What a journal file holds up to its first damaged frame, for a tool that
// reports damage instead of refusing it (tools/feedcore-check).
struct NamesJournalReport {
  uint64_t records = 0;      // whole records before the damage
  uint64_t valid_bytes = 0;  // where they end: the damage starts here
  std::string damage;        // empty when every frame is whole
  // The damage is what a crash leaves (an incomplete last frame, or a last
  // frame failing its checksum), which Open cuts off itself.
  bool torn_tail = false;
  // Records after the damaged frame, found by following the length fields
  // while they lead to whole frames: a lower bound of what is lost.
  uint64_t records_after = 0;
};

// Reads `bytes` (a whole journal file, possibly empty) with
// DecodeNamesJournal's frame reader up to the first damaged frame.
// InvalidArgument for a file that is not a journal or has another version;
// damage is reported, never an error.
absl::StatusOr<NamesJournalReport> ReportNamesJournal(absl::string_view bytes);

struct NamesJournalStats {
  uint64_t bytes = 0;    // the file's size
  uint64_t records = 0;  // appended since Open or the last rewrite
  uint64_t fsyncs = 0;
  uint64_t rewrites = 0;
  uint64_t unsynced_bytes = 0;
  // OK; why appends are refused; or why the last append failed (until
  // one succeeds).
  absl::Status write_error;
};

class NamesJournal {
 public:
  // Opens (creating it if missing) the journal at `path` and replays it
  // into `*contents` (DecodeNamesJournal with `store_group_tag`), cutting a
  // torn tail off the file. Errors name the file: DecodeNamesJournal's,
  // and the system's I/O errors.
  static absl::StatusOr<std::unique_ptr<NamesJournal>> Open(
      std::string path, FsyncPolicy policy, uint64_t store_group_tag,
      NamesJournalContents* contents);

  // Syncs what was appended (whatever the policy) and stops the syncing
  // thread.
  ~NamesJournal();
  NamesJournal(const NamesJournal&) = delete;
  NamesJournal& operator=(const NamesJournal&) = delete;

  // What a failed append means for the appends after it.
  enum class IfAppendFails : uint8_t {
    // The caller has already changed what the record describes: the
    // journal would miss it, so every later append fails with the error.
    kRefuseLaterAppends,
    // The caller changes nothing unless the append succeeds (an assign it
    // gives back, a rename or expiry it has not made yet): the journal cuts
    // off what it wrote of the record and takes the next append, so that
    // writes resume by themselves once the disk has room again.
    kCallerChangesNothing,
  };

  // Appends one record (write(2), so a crash of the process never loses
  // it) and returns the journal position after it. With kAlways, pass that
  // position to SyncTo before the write that depends on the record. A
  // write error (ResourceExhausted for a full disk or a file size limit)
  // is returned; `if_fails` says whether later appends are refused too.
  // After a failed sync, or a failed append that could not be cut off,
  // every append fails with that error (the file may hold part of a
  // record, which the next Open cuts off).
  absl::StatusOr<uint64_t> Append(
      const NamesRecord& record,
      IfAppendFails if_fails = IfAppendFails::kRefuseLaterAppends);

  // With kAlways: returns once everything up to `position` is on stable
  // storage (concurrent callers share one fdatasync). Other policies
  // return at once (a thread syncs once a second with kEverySecond). The
  // write error if there is one.
  absl::Status SyncTo(uint64_t position);

  // SyncTo(everything appended so far): for a writer that uses an id some
  // other thread assigned, whose record it must not overtake.
  absl::Status SyncAppended();

  // Everything appended so far on stable storage, whatever the policy
  // (a rename's record, see above). The write error if there is one.
  absl::Status SyncAll();

  // Replaces the file with one that holds `collect()`'s names and then
  // every record appended meanwhile (replay makes the overlap harmless,
  // see above): written to PATH.tmp, synced, renamed over PATH, directory
  // synced. `collect` runs without the journal's lock, so appends go on;
  // it must return the names of every key as they are at some point after
  // this call starts (LeaderboardStore::SaveKeys). On failure, `collect`'s
  // included, the old file stays in use.
  absl::Status Rewrite(
      const std::function<absl::StatusOr<std::vector<KeyMemberNames>>()>&
          collect);

  NamesJournalStats Stats() const;
  FsyncPolicy policy() const { return policy_; }
  const std::string& path() const { return path_; }

 private:
  NamesJournal(std::string path, FsyncPolicy policy, int fd, uint64_t size);
  void SyncLoop();
  // Returns once everything up to `position` is synced, whatever the
  // policy.
  absl::Status SyncThrough(uint64_t position);
  absl::Status SyncLocked(std::unique_lock<std::mutex>& sync_lock);

  const std::string path_;
  const FsyncPolicy policy_;

  // Lock order: sync_mu_, then mu_.
  mutable std::mutex mu_;
  int fd_;              // guarded by mu_
  uint64_t size_;       // bytes in the file, guarded by mu_
  absl::Status error_;  // guarded by mu_
  // The last append's error until an append succeeds (guarded by mu_):
  // what Stats reports, as Redis reports aof_last_write_status.
  absl::Status last_append_error_;
  uint64_t records_ = 0;      // guarded by mu_
  uint64_t rewrites_ = 0;     // guarded by mu_
  bool rewriting_ = false;    // guarded by mu_
  std::string rewrite_tail_;  // frames appended during a rewrite
  // Position after the last append; read without mu_ by SyncAppended, so
  // an acquire load there sees at least every append that happened before
  // the caller learned of the id (the append stored it with release).
  std::atomic<uint64_t> appended_{0};

  mutable std::mutex sync_mu_;       // one fdatasync at a time
  uint64_t synced_ = 0;              // guarded by sync_mu_
  uint64_t fsyncs_ = 0;              // guarded by sync_mu_
  std::atomic<bool> failed_{false};  // error_ is set (fast check)

  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;  // guarded by stop_mu_
  std::thread syncer_;
};

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_NAMES_JOURNAL_H_
