// Change files: change records saved to disk, so that a snapshot plus the
// records written after it survive a restart of the process.
//
//   auto writer = feedcore::ChangeFileWriter::Open("changes.log").value();
//   auto subscription = stream->Subscribe(
//       feedcore::StreamPosition::AtSequence(snapshot_info.sequence), 1000,
//       [&](absl::Span<const feedcore::ChangeRecordPtr> batch) {
//         writer->Append(batch).IgnoreError();  // and Sync() as needed
//       },
//       nullptr);
//   ...after a restart:
//   auto replica = feedcore::LoadSnapshot("feeds.snap", options).value();
//   auto saved = feedcore::ReadChangeFile("changes.log").value();
//   for (const auto& record : saved.records) replica->Apply(record);
//
// Format: a header ("FEEDLOG", format version), then one frame per record:
// u32 length, u64 XXH3 of the body, body (every ChangeRecord field,
// little-endian). Appends only ever add whole frames at the end, so a crash
// can leave at most the last frame incomplete; the reader reports that as a
// torn tail (`torn_tail`) and returns every record before it. A frame that
// fails its checksum with more data after it is damage, not a torn write:
// `DataLoss`, naming the frame's offset.
//
// Thread safety: a ChangeFileWriter is used by one thread at a time (a
// subscription's callback is one thread). ReadChangeFile may run anywhere.
#ifndef FEEDCORE_CHANGE_FILE_H_
#define FEEDCORE_CHANGE_FILE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "feedcore/change_stream.h"
#include "feedcore/export.h"

namespace feedcore {

class FEEDCORE_EXPORT ChangeFileWriter {
 public:
  // Opens `path` for appending, creating it (with its header) if it does
  // not exist. An existing file is checked frame by frame and a torn last
  // frame is cut off. InvalidArgument if it is not a change file (or has
  // another format version), DataLoss if a frame before the last is
  // damaged; Unavailable/NotFound/ResourceExhausted for I/O errors, with
  // the system's message.
  static absl::StatusOr<std::unique_ptr<ChangeFileWriter>> Open(
      const std::string& path);

  virtual ~ChangeFileWriter() = default;

  // Appends `records` in order with one write. On an I/O error the partial
  // frames are cut off again and the error says what failed; if even that
  // fails, later appends return FailedPrecondition (readers drop a torn
  // last frame either way).
  virtual absl::Status Append(absl::Span<const ChangeRecordPtr> records) = 0;

  // Flushes everything appended so far to stable storage (fdatasync).
  virtual absl::Status Sync() = 0;

  // Bytes in the file, header included.
  virtual uint64_t size() const = 0;

 protected:
  ChangeFileWriter() = default;
};

struct ChangeFileContents {
  std::vector<ChangeRecord> records;
  // True when the file ended in an incomplete frame (a write cut short),
  // which was dropped.
  bool torn_tail = false;
};

// Reads every record of the change file at `path`. InvalidArgument if it is
// not a change file or has an unknown version; DataLoss for a damaged frame
// (not the last) or a frame whose body does not decode; I/O errors as in
// ChangeFileWriter::Open. Allocates at most the file's size plus the
// records themselves.
FEEDCORE_EXPORT absl::StatusOr<ChangeFileContents> ReadChangeFile(
    const std::string& path);

}  // namespace feedcore

#endif  // FEEDCORE_CHANGE_FILE_H_
