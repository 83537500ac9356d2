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

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_STREAM_CHANGE_FRAME_H_
