// The frames of a change file (include/feedcore/change_file.h), shared by
// ChangeFileWriter and the durable log's segments: a header, then one
// frame per ChangeRecord (u32 body length, u64 XXH3 of the body, body).
// The body layout is in change_frame.cc and docs/formats.md.
#ifndef FEEDCORE_SRC_STREAM_CHANGE_FRAME_H_
#define FEEDCORE_SRC_STREAM_CHANGE_FRAME_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "feedcore/change_stream.h"

namespace feedcore::internal {

// Version 3 writes only the fields that differ from their defaults, as
// variable-length integers; version 2 (fixed widths) is no longer read.
inline constexpr uint32_t kChangeFileFormatVersion = 3;
inline constexpr size_t kChangeFileHeaderBytes = 8 + 4;
inline constexpr size_t kChangeFrameHeaderBytes = 4 + 8;

// The file header: magic and format version.
std::string ChangeFileHeader();

// InvalidArgument naming `path` unless `bytes` starts with the header of
// this format version.
absl::Status CheckChangeFileHeader(std::string_view bytes,
                                   const std::string& path);

// Appends `record`'s frame to `out`. False (and `out` unchanged) if the
// body exceeds a frame's 4 GiB.
bool AppendChangeFrame(const ChangeRecord& record, std::string* out);

// Appends a batch end: a frame with an empty body. A durable log ends
// every write with one, so that recovery can tell a batch cut short by a
// crash (whole frames, but not all of them) from a finished one.
void AppendBatchEnd(std::string* out);

// Checks the header and every frame of `bytes` (a whole file), calling
// `on_record` (if set) with each record and its frame's offset, and
// `on_batch_end` (if set) with the offset just after each batch end; an
// error either returns stops the scan and is returned. `*clean_end` is where
// the last whole frame ends; `*torn` says whether an incomplete frame (or a
// last frame failing its checksum) follows it. DataLoss naming `path` and
// the offset for a damaged frame with data after it, or one that does not
// decode.
absl::Status ScanChangeFrames(
    std::string_view bytes, const std::string& path,
    const std::function<absl::Status(ChangeRecord&&, size_t offset)>& on_record,
    size_t* clean_end, bool* torn,
    const std::function<absl::Status(size_t end)>& on_batch_end = nullptr);

// What a change file holds up to its first damaged frame, for a tool that
// reports damage instead of refusing it (tools/feedcore-check). Offsets
// are bytes from the start of the file.
struct ChangeFrameReport {
  // Whole records before the damage (or in the whole file), the batch ends
  // among them, and the sequences of the first and last record (0: none).
  uint64_t records = 0;
  uint64_t batch_ends = 0;
  uint64_t first_sequence = 0;
  uint64_t last_sequence = 0;
  // Where the whole frames end: the damaged frame starts here, or the file
  // ends here.
  size_t clean_end = 0;
  // Just after the last batch end (the header's end before the first),
  // with the records and last sequence before it: what a durable store's
  // recovery keeps of a log segment.
  size_t committed_end = 0;
  uint64_t committed_records = 0;
  uint64_t committed_last_sequence = 0;
  // Empty when every frame is whole; otherwise what is wrong with the
  // frame at `clean_end`.
  std::string damage;
  // The damage is an incomplete last frame, or a last frame that fails its
  // checksum: what a crash in the middle of an append leaves.
  bool torn_tail = false;
  // Records in the frames after the damaged one, found by following the
  // length fields while they lead to frames whose checksums pass: a lower
  // bound of the records lost beyond the damaged frame.
  uint64_t records_after = 0;
};

// Reads `bytes` (a whole change file) up to its first damaged frame, with
// the frame reader of ScanChangeFrames. With `first_sequence` > 0 the
// records must have the sequences first_sequence, first_sequence + 1, ...
// (a log segment's); a record that breaks the run is damage too.
// InvalidArgument naming `path` for a file without this format's header;
// damage is reported, never an error. O(size of the file).
absl::StatusOr<ChangeFrameReport> ReportChangeFrames(std::string_view bytes,
                                                     const std::string& path,
                                                     uint64_t first_sequence);

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_STREAM_CHANGE_FRAME_H_
