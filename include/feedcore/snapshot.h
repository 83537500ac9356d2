// Snapshots: an engine's whole state in one file, and a Replica that loads
// one and catches up on the change stream of the engine it came from.
//
//   // On the source (created with EngineOptions::change_stream = stream):
//   auto info = feedcore::SaveSnapshot(*engine, "/var/lib/app/feed.snap");
//   // Later, or elsewhere:
//   auto replica = feedcore::LoadSnapshot("/var/lib/app/feed.snap",
//                                         options).value();
//   auto reader = stream->NewReader(
//       feedcore::StreamPosition::AtSequence(replica->sequence())).value();
//   for (;;) {
//     auto batch = reader->Read(1000).value();
//     if (batch.empty()) break;
//     for (const auto& record : batch) replica->Apply(*record).IgnoreError();
//   }
//   // replica->engine() now holds exactly what the source held.
//
// Consistency
// -----------
// SaveSnapshot copies one lock domain (an engine shard, or a shard of the
// activity store) at a time, under that domain's lock held shared: writers
// of that domain wait for its copy only, never for the whole snapshot. Each
// domain's copy is exact as of a point in the change stream (its "cut");
// the snapshot's `sequence` is the earliest cut. Replaying the stream from
// `sequence` on, each record is applied only if its domain's copy did not
// already hold it, which ends in exactly the source's state. Without a
// change stream a snapshot is consistent per domain only; quiesce writers
// for a consistent image.
//
// File format
// -----------
// A header (magic, format version, section count, checksum), then sections,
// each with a type, an index, a length and an xxHash (XXH3-64) of its
// payload: the engine's sizing options, one section per domain (its cut and
// its data), and a trailer (the snapshot sequence and domain count). The
// file is written to `path + ".tmp"`, flushed to disk (fsync), renamed over
// `path`, and the directory is synced: a crash or an error leaves the
// previous file under `path` intact, never a partial one.
//
// Loading checks everything before trusting it (magic, version, lengths
// against the file size, checksums, every count against the bytes left,
// ordering, ids against the shard that must hold them) and fails with
// `InvalidArgument` (not a snapshot, unsupported version, options that do
// not match) or `DataLoss` (truncated or damaged file, naming the section);
// it never allocates more than the file's size plus what it loads, and a
// load that fails leaves nothing behind.
//
// Thread safety
// -------------
// SaveSnapshot may run while other threads use the engine. A Replica is not
// thread-safe: apply records from one thread; the engine it holds is an
// ordinary engine (read it from any thread).
#ifndef FEEDCORE_SNAPSHOT_H_
#define FEEDCORE_SNAPSHOT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "feedcore/change_stream.h"
#include "feedcore/export.h"
#include "feedcore/feed_engine.h"
#include "feedcore/leaderboard.h"
#include "feedcore/name_registry.h"
#include "feedcore/options.h"

namespace feedcore {

// What SaveSnapshot wrote.
struct SnapshotInfo {
  // Replay the source's stream from AtSequence(sequence); 0 when the engine
  // records no changes.
  uint64_t sequence = 0;
  uint64_t file_bytes = 0;
};

// Writes a snapshot of `engine`, and with `boards` of every board of that
// registry, to `path` (see above). A Redis Cluster backend has no
// snapshots of its own (Redis persistence keeps its data).
// `InvalidArgument` for an empty path. I/O failures return `Unavailable`
// (`ResourceExhausted` for a full disk or file size limit, `NotFound` for a
// missing directory) with the system's message; `path` is then untouched and
// the temporary file removed.
//
// With `boards`, the snapshot also holds every leaderboard of that registry
// (scores, tie-break order, options), and with `names` every name of that
// registry with its id. Each registry and the engine must record into the
// same change stream, or not at all (InvalidArgument otherwise).
FEEDCORE_EXPORT absl::StatusOr<SnapshotInfo> SaveSnapshot(
    const InProcessFeedEngine& engine, const std::string& path,
    const LeaderboardRegistry* boards = nullptr,
    const NameRegistry* names = nullptr);

// An engine loaded from a snapshot, and the position from which it catches
// up on its source's change stream.
class FEEDCORE_EXPORT Replica {
 public:
  virtual ~Replica() = default;

  // The loaded engine. Valid until the Replica is destroyed.
  virtual InProcessFeedEngine& engine() = 0;

  // The loaded leaderboards (empty if the snapshot was saved without a
  // registry). Its boards record into the engine's change stream, if any.
  virtual LeaderboardRegistry& boards() = 0;

  // The loaded names (empty if the snapshot was saved without a name
  // registry). It records into the engine's change stream, if any.
  virtual NameRegistry& names() = 0;

  // The first stream sequence number to apply (the snapshot's sequence).
  virtual uint64_t sequence() const = 0;

  // Applies one record of the source's stream. Records must come in
  // sequence order without gaps, starting at or before sequence(); each one
  // the snapshot already holds is skipped. InvalidArgument for a record out
  // of order, after a gap, or malformed (the replica is then unchanged).
  virtual absl::Status Apply(const ChangeRecord& record) = 0;

  // Records applied and skipped so far.
  virtual uint64_t applied() const = 0;
  virtual uint64_t skipped() const = 0;

  // The largest tag of the kWriteGroupTag records applied (a DurableStore's
  // tagged write groups, durable_store.h); 0 if none.
  virtual uint64_t write_group_tag() const = 0;

 protected:
  Replica() = default;
};

// Loads the snapshot at `path` into a new engine created with `options`.
// `options.shards` 0 takes the snapshot's shard count; any other value
// must equal the snapshot's (InvalidArgument otherwise), because it decides
// where entries live. The caps (`max_timeline_length`,
// `world_timeline_length`, `notifications.max_length`) and `default_ttl`
// may differ: a timeline over a smaller cap keeps its newest entries, as
// the cap does at insert, and the TTL applies to what is inserted from
// then on (loaded entries keep their expiry). The new engine records
// its own later changes in `options.change_stream`, if set; the loaded
// state itself is not recorded there. While a replica follows its source,
// run it without a sweeper (`sweep_interval` 0): the source's expiry
// records then reclaim exactly the entries the source reclaimed. With its
// own sweeper a replica returns the same reads (expired entries are never
// returned) but may reclaim them earlier, so Stats() can differ.
FEEDCORE_EXPORT absl::StatusOr<std::unique_ptr<Replica>> LoadSnapshot(
    const std::string& path, EngineOptions options);

}  // namespace feedcore

#endif  // FEEDCORE_SNAPSHOT_H_
