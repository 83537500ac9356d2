// Tests of the cursor codec (src/contract/cursor.h): round trips, and rejection
// of every corrupted, truncated, extended, foreign-version or garbage input.
#include "contract/cursor.h"

#include <doctest/doctest.h>
#include <xxhash.h>

#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"

namespace feedcore::internal {
namespace {

constexpr Micros kMaxTs = std::numeric_limits<Micros>::max();
constexpr uint64_t kMaxU64 = std::numeric_limits<uint64_t>::max();

std::vector<TimelineCursor> Samples() {
  std::vector<TimelineCursor> out;
  for (const EntityId owner : {uint64_t{0}, uint64_t{1}, uint64_t{42},
                               uint64_t{0x8000000000000000}, kMaxU64}) {
    for (const ReadOrder order :
         {ReadOrder::kNewestFirst, ReadOrder::kOldestFirst}) {
      for (const Micros ts :
           {Micros{0}, Micros{1}, Micros{1700000000000000}, kMaxTs}) {
        for (const ActivityId id : {uint64_t{0}, uint64_t{7}, kMaxU64}) {
          out.push_back({owner, order, ts, id});
        }
      }
    }
  }
  return out;
}

std::string RawBytes(const std::string& text) {
  std::string raw;
  REQUIRE(absl::WebSafeBase64Unescape(text, &raw));
  return raw;
}

void CheckRejected(const std::string& text) {
  const absl::StatusOr<TimelineCursor> got = DecodeTimelineCursor(text);
  INFO("text=\"" << text << "\"");
  CHECK(absl::IsInvalidArgument(got.status()));
}

TEST_CASE("every cursor decodes to what was encoded") {
  std::set<std::string> seen;
  for (const TimelineCursor& c : Samples()) {
    const std::string text = EncodeTimelineCursor(c);
    INFO("owner=" << c.owner << " ts=" << c.ts << " id=" << c.activity_id);
    CHECK_FALSE(text.empty());
    for (const char ch : text) {
      const bool web_safe = (ch >= 'A' && ch <= 'Z') ||
                            (ch >= 'a' && ch <= 'z') ||
                            (ch >= '0' && ch <= '9') || ch == '-' || ch == '_';
      CHECK(web_safe);
    }
    const absl::StatusOr<TimelineCursor> back = DecodeTimelineCursor(text);
    REQUIRE(back.ok());
    CHECK(*back == c);
    // Deterministic, and distinct cursors have distinct texts.
    CHECK(EncodeTimelineCursor(c) == text);
    seen.insert(text);
  }
  CHECK(seen.size() == Samples().size());
}

TEST_CASE("every single-byte corruption is rejected") {
  for (const TimelineCursor& c :
       {TimelineCursor{42, ReadOrder::kNewestFirst, 1700000000000000, 99},
        TimelineCursor{kMaxU64, ReadOrder::kOldestFirst, 0, 0}}) {
    const std::string raw = RawBytes(EncodeTimelineCursor(c));
    REQUIRE(raw.size() > 8);
    size_t accepted = 0;
    for (size_t i = 0; i < raw.size(); ++i) {
      for (int v = 0; v < 256; ++v) {
        if (static_cast<unsigned char>(raw[i]) == v) continue;
        std::string bad = raw;
        bad[i] = static_cast<char>(v);
        const absl::StatusOr<TimelineCursor> got =
            DecodeTimelineCursor(absl::WebSafeBase64Escape(bad));
        if (!absl::IsInvalidArgument(got.status())) {
          ++accepted;
          INFO("byte " << i << " set to " << v << ": " << got.status());
          CHECK(absl::IsInvalidArgument(got.status()));
        }
      }
    }
    CHECK(accepted == 0);
  }
}

TEST_CASE("truncated and extended cursors are rejected") {
  const std::string text =
      EncodeTimelineCursor({7, ReadOrder::kNewestFirst, 123456789, 987654321});
  const std::string raw = RawBytes(text);
  for (size_t n = 0; n < raw.size(); ++n) {
    CheckRejected(absl::WebSafeBase64Escape(raw.substr(0, n)));
  }
  for (size_t n = 0; n < text.size(); ++n) CheckRejected(text.substr(0, n));
  CheckRejected(absl::WebSafeBase64Escape(raw + std::string(1, '\0')));
  CheckRejected(absl::WebSafeBase64Escape(raw + raw));
  CheckRejected(text + "A");
  CheckRejected(text + "AAAA");
}

TEST_CASE("the empty string is not a cursor") {
  // Callers treat an empty ReadOptions::cursor as "first page" before they
  // decode; the codec itself accepts only what it wrote.
  CheckRejected("");
}

TEST_CASE("garbage and non-base64 text is rejected") {
  const std::string valid =
      EncodeTimelineCursor({1, ReadOrder::kNewestFirst, 2, 3});
  for (const std::string& text :
       {std::string("not a cursor"), std::string("!!!!"), std::string("*"),
        std::string("A"), std::string("AAAA"), std::string(64, 'A'),
        std::string(valid.size(), 'A'), std::string(valid.size(), '_'),
        std::string("\0\0\0\0", 4), std::string(1000, 'z')}) {
    CheckRejected(text);
  }
  // A valid cursor with one character replaced by one outside the alphabet.
  for (size_t i = 0; i < valid.size(); ++i) {
    for (const char ch : {'!', '*', ' ', '.', '\n', '\0'}) {
      std::string bad = valid;
      bad[i] = ch;
      CheckRejected(bad);
    }
  }
  // Random bytes of the right length, correctly encoded.
  const size_t raw_size = RawBytes(valid).size();
  std::mt19937_64 rng(3);
  for (int i = 0; i < 2000; ++i) {
    std::string raw(raw_size, '\0');
    for (char& ch : raw) ch = static_cast<char>(rng() & 0xff);
    CheckRejected(absl::WebSafeBase64Escape(raw));
  }
}

// Recomputes the trailing XXH3-64 checksum over everything before it, as
// cursor.h specifies: seeded with kCursorChecksumSeed, stored little-endian.
class Resigner {
 public:
  explicit Resigner(const std::string& valid_raw) {
    const uint64_t h = XXH3_64bits_withSeed(
        valid_raw.data(), valid_raw.size() - 8, kCursorChecksumSeed);
    found_ = Put(h, /*little=*/true) == valid_raw.substr(valid_raw.size() - 8);
    seed_ = kCursorChecksumSeed;
    little_endian_ = true;
  }
  bool ok() const { return found_; }
  std::string Sign(std::string raw) const {
    const uint64_t h = XXH3_64bits_withSeed(raw.data(), raw.size() - 8, seed_);
    raw.replace(raw.size() - 8, 8, Put(h, little_endian_));
    return raw;
  }

 private:
  static std::string Put(uint64_t v, bool little) {
    std::string out(8, '\0');
    for (int i = 0; i < 8; ++i) {
      const int shift = little ? 8 * i : 8 * (7 - i);
      out[i] = static_cast<char>((v >> shift) & 0xff);
    }
    return out;
  }
  bool found_ = false;
  uint64_t seed_ = 0;
  bool little_endian_ = true;
};

TEST_CASE("a well-formed cursor of another version or kind is rejected") {
  const TimelineCursor c{5, ReadOrder::kNewestFirst, 100, 200};
  const std::string raw = RawBytes(EncodeTimelineCursor(c));
  // The header fixes the layout: version, kind, fields, XXH3-64 checksum.
  REQUIRE(raw.size() >= 2 + 8 + 8);
  CHECK(static_cast<uint8_t>(raw[0]) == kCursorVersion);
  CHECK(static_cast<uint8_t>(raw[1]) ==
        static_cast<uint8_t>(CursorKind::kTimeline));
  const Resigner resigner(raw);
  REQUIRE(resigner.ok());

  // Control: re-signing an untouched cursor keeps it valid.
  const absl::StatusOr<TimelineCursor> same =
      DecodeTimelineCursor(absl::WebSafeBase64Escape(resigner.Sign(raw)));
  REQUIRE(same.ok());
  CHECK(*same == c);

  for (const int version : {0, kCursorVersion + 1, 0x7f, 0xff}) {
    std::string bad = raw;
    bad[0] = static_cast<char>(version);
    INFO("version " << version);
    CheckRejected(absl::WebSafeBase64Escape(resigner.Sign(bad)));
  }
  for (const int kind : {0, 2, 0x7f, 0xff}) {
    std::string bad = raw;
    bad[1] = static_cast<char>(kind);
    INFO("kind " << kind);
    CheckRejected(absl::WebSafeBase64Escape(resigner.Sign(bad)));
  }

  // An order value the encoder never writes: the bytes where the two
  // orders' encodings differ (outside the checksum) hold the order.
  const std::string other =
      RawBytes(EncodeTimelineCursor({5, ReadOrder::kOldestFirst, 100, 200}));
  REQUIRE(other.size() == raw.size());
  std::string bad = raw;
  int differing = 0;
  for (size_t i = 0; i + 8 < raw.size(); ++i) {
    if (raw[i] != other[i]) {
      bad[i] = static_cast<char>(0x7f);
      ++differing;
    }
  }
  REQUIRE(differing > 0);
  CheckRejected(absl::WebSafeBase64Escape(resigner.Sign(bad)));
}

TEST_CASE("ranked cursors: round trips, and what a ranked read refuses") {
  const double kInf = std::numeric_limits<double>::infinity();
  for (const double score : {0.0, 1.5, -3.25, 1e300, kInf, -kInf}) {
    for (const Micros start : {Micros{0}, Micros{-5}, kMaxTs}) {
      const RankedCursor c{42, start, 0xfeedULL, score, 17, kMaxU64};
      const absl::StatusOr<RankedCursor> back =
          DecodeRankedCursor(EncodeRankedCursor(c));
      REQUIRE_MESSAGE(back.ok(), back.status());
      CHECK(*back == c);
    }
  }
  const RankedCursor c{42, 1000, 0xfeedULL, 2.5, 17, 99};
  const std::string text = EncodeRankedCursor(c);
  CHECK(DecodeRankedCursorOf(text, 42, 0xfeedULL).ok());
  CHECK(absl::IsInvalidArgument(
      DecodeRankedCursorOf(text, 43, 0xfeedULL).status()));
  CHECK(absl::IsInvalidArgument(
      DecodeRankedCursorOf(text, 42, 0xbeefULL).status()));
  // Other kinds of cursor, and this one read as another kind.
  CHECK(absl::IsInvalidArgument(
      DecodeRankedCursor(
          EncodeTimelineCursor({42, ReadOrder::kNewestFirst, 1000, 99}))
          .status()));
  CHECK(absl::IsInvalidArgument(DecodeTimelineCursor(text).status()));
  for (size_t n = 0; n < text.size(); ++n) {
    CHECK(absl::IsInvalidArgument(
        DecodeRankedCursor(text.substr(0, n)).status()));
  }
  // Well-formed and signed, but a score that is not a number or a
  // negative ts.
  const std::string raw = RawBytes(text);
  const Resigner resigner(raw);
  REQUIRE(resigner.ok());
  std::string nan_score = raw;
  const uint64_t nan_bits = 0x7ff8000000000000ULL;
  for (int i = 0; i < 8; ++i) {
    nan_score[2 + 3 * 8 + i] = static_cast<char>(nan_bits >> (8 * i));
  }
  CHECK(absl::IsInvalidArgument(
      DecodeRankedCursor(absl::WebSafeBase64Escape(resigner.Sign(nan_score)))
          .status()));
  std::string negative_ts = raw;
  negative_ts[2 + 4 * 8 + 7] = static_cast<char>(0x80);
  CHECK(absl::IsInvalidArgument(
      DecodeRankedCursor(absl::WebSafeBase64Escape(resigner.Sign(negative_ts)))
          .status()));
}

}  // namespace
}  // namespace feedcore::internal
