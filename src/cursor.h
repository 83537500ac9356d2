// Opaque, versioned, checksummed page cursors.
//
// A cursor is a short printable string (web-safe base64) of a fixed binary
// layout: version, kind, a kind-specific list of 64-bit fields, and an
// XXH3-64 checksum (seeded with kCursorChecksumSeed) of everything before it;
// multi-byte fields are little-endian. Decoding checks the encoding,
// the length, the version, the kind and the checksum, so a truncated,
// corrupted or hand-edited cursor gets InvalidArgument rather than reading
// a wrong position. The checksum detects damage, not forgery: a forged but
// well-formed cursor can only position a reader inside data it may read
// anyway, because the caller re-checks whose cursor it is.
//
// Thread safety: pure functions.
#ifndef FEEDCORE_SRC_CURSOR_H_
#define FEEDCORE_SRC_CURSOR_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "feedcore/options.h"
#include "feedcore/types.h"

namespace feedcore::internal {

inline constexpr uint8_t kCursorVersion = 1;
// Seed of the checksum, so that bytes of another format that happen to end
// in an unseeded XXH3 of themselves are still rejected.
inline constexpr uint64_t kCursorChecksumSeed = 0x66656564636f7265ULL;

enum class CursorKind : uint8_t {
  kTimeline = 1,
};

// Position after `(ts, activity_id)` in `owner`'s timeline read in `order`.
struct TimelineCursor {
  EntityId owner = 0;
  ReadOrder order = ReadOrder::kNewestFirst;
  Micros ts = 0;
  ActivityId activity_id = 0;

  friend bool operator==(const TimelineCursor&,
                         const TimelineCursor&) = default;
};

std::string EncodeTimelineCursor(const TimelineCursor& cursor);
// InvalidArgument with a reason for anything that is not a cursor this
// version wrote for a timeline.
absl::StatusOr<TimelineCursor> DecodeTimelineCursor(absl::string_view text);

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_CURSOR_H_
