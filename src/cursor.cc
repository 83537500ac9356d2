#include "cursor.h"

#include <xxhash.h>

#include <array>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace feedcore::internal {
namespace {

// version, kind, order, owner, ts, activity_id, checksum
constexpr size_t kTimelineCursorBytes = 1 + 1 + 1 + 8 + 8 + 8 + 8;

void PutU64(uint64_t value, char* out) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(value >> (8 * i));
}

uint64_t GetU64(const char* in) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) {
    value |= static_cast<uint64_t>(static_cast<unsigned char>(in[i]))
             << (8 * i);
  }
  return value;
}

absl::Status Invalid(absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "invalid cursor: ", why,
      "; pass back the next_cursor of a previous page unchanged, or an "
      "empty cursor for the first page"));
}

}  // namespace

std::string EncodeTimelineCursor(const TimelineCursor& cursor) {
  std::array<char, kTimelineCursorBytes> raw;
  raw[0] = static_cast<char>(kCursorVersion);
  raw[1] = static_cast<char>(CursorKind::kTimeline);
  raw[2] = cursor.order == ReadOrder::kNewestFirst ? 0 : 1;
  PutU64(cursor.owner, &raw[3]);
  PutU64(static_cast<uint64_t>(cursor.ts), &raw[11]);
  PutU64(cursor.activity_id, &raw[19]);
  PutU64(XXH3_64bits_withSeed(raw.data(), 27, kCursorChecksumSeed), &raw[27]);
  return absl::WebSafeBase64Escape(absl::string_view(raw.data(), raw.size()));
}

absl::StatusOr<TimelineCursor> DecodeTimelineCursor(absl::string_view text) {
  // Checked before decoding so that a huge string costs nothing.
  constexpr size_t kEncodedLength = (kTimelineCursorBytes * 4 + 2) / 3;
  if (text.size() != kEncodedLength) {
    return Invalid(
        absl::StrCat("length ", text.size(), ", expected ", kEncodedLength));
  }
  std::string raw;
  if (!absl::WebSafeBase64Unescape(text, &raw)) {
    return Invalid("not web-safe base64");
  }
  if (raw.size() != kTimelineCursorBytes) {
    return Invalid("wrong decoded length");
  }
  if (GetU64(&raw[27]) !=
      XXH3_64bits_withSeed(raw.data(), 27, kCursorChecksumSeed)) {
    return Invalid("checksum mismatch (damaged or edited)");
  }
  if (static_cast<uint8_t>(raw[0]) != kCursorVersion) {
    return Invalid(
        absl::StrCat("unsupported version ", static_cast<uint8_t>(raw[0])));
  }
  if (static_cast<uint8_t>(raw[1]) !=
      static_cast<uint8_t>(CursorKind::kTimeline)) {
    return Invalid("not a timeline cursor");
  }
  if (raw[2] != 0 && raw[2] != 1) return Invalid("unknown order");
  TimelineCursor cursor;
  cursor.order =
      raw[2] == 0 ? ReadOrder::kNewestFirst : ReadOrder::kOldestFirst;
  cursor.owner = GetU64(&raw[3]);
  cursor.ts = static_cast<Micros>(GetU64(&raw[11]));
  cursor.activity_id = GetU64(&raw[19]);
  if (cursor.ts < 0) return Invalid("negative timestamp");
  return cursor;
}

}  // namespace feedcore::internal
