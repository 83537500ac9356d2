// Recovery: what a DurableStore's directory holds, loaded back into an
// engine and a registry (see include/feedcore/durable_store.h).
//
// The newest snapshot is loaded through LoadSnapshot; then every log
// segment is read in order of its first sequence and each record handed to
// Replica::Apply, which skips what the snapshot already holds. Sequence
// numbers must follow each other without a gap across segments; only the
// last segment may end in an incomplete frame, which is cut off.
#ifndef FEEDCORE_SRC_DURABILITY_RECOVERY_H_
#define FEEDCORE_SRC_DURABILITY_RECOVERY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "durability/durable_log.h"
#include "feedcore/options.h"
#include "feedcore/snapshot.h"

namespace feedcore::internal {

// `directory/snapshot-<sequence>.fcsnap`.
std::string SnapshotPath(const std::string& directory, uint64_t sequence);

// Where a snapshot is written before it is renamed into place.
std::string SnapshotInProgressPath(const std::string& directory);

// The sequence in a store file's name: `snapshot-<n>.fcsnap` or
// `log-<n>.fclog` (decimal, n >= 1); 0 for any other name.
uint64_t SnapshotSequenceOf(absl::string_view file_name);
uint64_t SegmentSequenceOf(absl::string_view file_name);

struct SnapshotFile {
  uint64_t sequence = 0;  // from its name
  std::string path;
};

struct Recovered {
  std::unique_ptr<Replica> replica;
  SnapshotFile snapshot;
  uint64_t snapshot_bytes = 0;
  // Live segments in order, torn tails cut.
  std::vector<LogSegment> segments;
  uint64_t next_sequence = 1;
  uint64_t records_read = 0;
  uint64_t bytes_read = 0;
  bool torn_tail = false;
};

// Recovers `directory` into an engine made with `options`, whose change
// stream is muted meanwhile by the caller. A directory without a snapshot
// and without log gets an empty snapshot first, so that every store has
// one. Removes the temporary files of an interrupted save, and the log
// segments when every record they hold is below the snapshot's sequence,
// so that the log goes on from the snapshot's sequence in a new segment.
absl::StatusOr<Recovered> Recover(const std::string& directory,
                                  const EngineOptions& options);

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_DURABILITY_RECOVERY_H_
