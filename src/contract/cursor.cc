#include "contract/cursor.h"

#include <xxhash.h>

#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace feedcore::internal {
namespace {

constexpr size_t kHeaderBytes = 2;  // version, kind
constexpr size_t kChecksumBytes = 8;

constexpr size_t kMaxRawBytes = kHeaderBytes + 8 * kMaxCursorFields + 8;

void PutU64(uint64_t value, uint8_t* out) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(value >> (8 * i));
}

uint64_t GetU64(const uint8_t* in) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= static_cast<uint64_t>(in[i]) << (8 * i);
  return value;
}

// Unpadded web-safe base64 (RFC 4648 section 5), written here rather than
// through absl so that a cursor needs no buffer but its result: pages are
// read far more often than anything else, and each carries a cursor.
constexpr char kBase64Alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string Base64Encode(const uint8_t* in, size_t n) {
  std::string out((n * 4 + 2) / 3, '\0');
  char* o = out.data();
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    const uint32_t v = (uint32_t{in[i]} << 16) | (uint32_t{in[i + 1]} << 8) |
                       uint32_t{in[i + 2]};
    *o++ = kBase64Alphabet[v >> 18];
    *o++ = kBase64Alphabet[(v >> 12) & 63];
    *o++ = kBase64Alphabet[(v >> 6) & 63];
    *o++ = kBase64Alphabet[v & 63];
  }
  if (n - i == 1) {
    const uint32_t v = uint32_t{in[i]} << 16;
    *o++ = kBase64Alphabet[v >> 18];
    *o++ = kBase64Alphabet[(v >> 12) & 63];
  } else if (n - i == 2) {
    const uint32_t v = (uint32_t{in[i]} << 16) | (uint32_t{in[i + 1]} << 8);
    *o++ = kBase64Alphabet[v >> 18];
    *o++ = kBase64Alphabet[(v >> 12) & 63];
    *o++ = kBase64Alphabet[(v >> 6) & 63];
  }
  return out;
}

// Character -> 6-bit value, 64 for a character outside the alphabet.
constexpr std::array<uint8_t, 256> kBase64Values = [] {
  std::array<uint8_t, 256> values{};
  values.fill(64);
  for (uint8_t i = 0; i < 64; ++i) {
    values[static_cast<unsigned char>(kBase64Alphabet[i])] = i;
  }
  return values;
}();

// Decodes `text` (whose length encodes exactly `n` bytes) into `out`; false
// on a character outside the alphabet or set bits past the last byte (so
// that one cursor has one spelling).
bool Base64Decode(absl::string_view text, uint8_t* out, size_t n) {
  const auto value = [&text](size_t i) {
    return kBase64Values[static_cast<unsigned char>(text[i])];
  };
  uint8_t invalid = 0;  // bit 6 of any value: outside the alphabet
  size_t i = 0;
  size_t o = 0;
  for (; o + 3 <= n; i += 4, o += 3) {
    const uint8_t a = value(i), b = value(i + 1), c = value(i + 2),
                  d = value(i + 3);
    invalid |= a | b | c | d;
    const uint32_t v = (uint32_t{a} << 18) | (uint32_t{b} << 12) |
                       (uint32_t{c} << 6) | uint32_t{d};
    out[o] = static_cast<uint8_t>(v >> 16);
    out[o + 1] = static_cast<uint8_t>(v >> 8);
    out[o + 2] = static_cast<uint8_t>(v);
  }
  uint32_t leftover = 0;  // bits past the last byte
  if (n - o == 1) {
    const uint8_t a = value(i), b = value(i + 1);
    invalid |= a | b;
    out[o] = static_cast<uint8_t>((a << 2) | (b >> 4));
    leftover = b & 15;
  } else if (n - o == 2) {
    const uint8_t a = value(i), b = value(i + 1), c = value(i + 2);
    invalid |= a | b | c;
    out[o] = static_cast<uint8_t>((a << 2) | (b >> 4));
    out[o + 1] = static_cast<uint8_t>(((b & 15) << 4) | (c >> 2));
    leftover = c & 3;
  }
  return (invalid & 64) == 0 && leftover == 0;
}

absl::Status Invalid(absl::string_view what, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "invalid ", what, ": ", why,
      "; pass back the next_cursor of a previous page unchanged, or an "
      "empty cursor for the first page"));
}

size_t RawBytes(size_t field_count) {
  return kHeaderBytes + 8 * field_count + kChecksumBytes;
}

size_t EncodedLength(size_t raw_bytes) {
  // Unpadded base64: 4 characters per 3 bytes, rounded up.
  return (raw_bytes * 4 + 2) / 3;
}

}  // namespace

std::string EncodeCursor(CursorKind kind, absl::Span<const uint64_t> fields) {
  assert(fields.size() <= kMaxCursorFields);
  std::array<uint8_t, kMaxRawBytes> raw;
  raw[0] = kCursorVersion;
  raw[1] = static_cast<uint8_t>(kind);
  size_t at = kHeaderBytes;
  for (const uint64_t field : fields) {
    PutU64(field, &raw[at]);
    at += 8;
  }
  PutU64(XXH3_64bits_withSeed(raw.data(), at, kCursorChecksumSeed), &raw[at]);
  return Base64Encode(raw.data(), at + kChecksumBytes);
}

absl::StatusOr<std::array<uint64_t, kMaxCursorFields>> DecodeCursor(
    absl::string_view text, CursorKind kind, size_t field_count,
    absl::string_view what) {
  assert(field_count <= kMaxCursorFields);
  const size_t raw_bytes = RawBytes(field_count);
  const size_t expected_length = EncodedLength(raw_bytes);
  if (text.size() != expected_length) {
    return Invalid(what, absl::StrCat("length ", text.size(), ", expected ",
                                      expected_length));
  }
  std::array<uint8_t, kMaxRawBytes> raw;
  if (!Base64Decode(text, raw.data(), raw_bytes)) {
    return Invalid(what, "not web-safe base64");
  }
  const size_t body = raw_bytes - kChecksumBytes;
  if (GetU64(&raw[body]) !=
      XXH3_64bits_withSeed(raw.data(), body, kCursorChecksumSeed)) {
    return Invalid(what, "checksum mismatch (damaged or edited)");
  }
  if (raw[0] != kCursorVersion) {
    return Invalid(what, absl::StrCat("unsupported version ", raw[0]));
  }
  if (raw[1] != static_cast<uint8_t>(kind)) {
    return Invalid(
        what, absl::StrCat("it is a cursor of another kind (", raw[1], ")"));
  }
  std::array<uint64_t, kMaxCursorFields> fields{};
  for (size_t i = 0; i < field_count; ++i) {
    fields[i] = GetU64(&raw[kHeaderBytes + 8 * i]);
  }
  return fields;
}

std::string EncodeTimelineCursor(const TimelineCursor& cursor) {
  const uint64_t fields[] = {cursor.order == ReadOrder::kNewestFirst ? 0u : 1u,
                             cursor.owner,
                             static_cast<uint64_t>(cursor.ts),
                             cursor.activity_id,
                             cursor.feed,
                             cursor.kinds};
  return EncodeCursor(CursorKind::kTimeline, fields);
}

absl::StatusOr<TimelineCursor> DecodeTimelineCursor(absl::string_view text) {
  constexpr absl::string_view kWhat = "timeline cursor";
  absl::StatusOr<std::array<uint64_t, kMaxCursorFields>> fields =
      DecodeCursor(text, CursorKind::kTimeline, 6, kWhat);
  if (!fields.ok()) return fields.status();
  const auto& f = *fields;
  if (f[0] > 1) return Invalid(kWhat, "unknown order");
  if (f[4] > 2) return Invalid(kWhat, "unknown feed");
  TimelineCursor cursor;
  cursor.order = f[0] == 0 ? ReadOrder::kNewestFirst : ReadOrder::kOldestFirst;
  cursor.owner = f[1];
  cursor.ts = static_cast<Micros>(f[2]);
  cursor.activity_id = f[3];
  cursor.feed = static_cast<uint8_t>(f[4]);
  cursor.kinds = f[5];
  if (cursor.kinds == 0) return Invalid(kWhat, "a filter that keeps no kind");
  if (cursor.ts < 0) return Invalid(kWhat, "negative timestamp");
  return cursor;
}

std::string EncodeListCursor(const ListCursor& cursor) {
  const uint64_t fields[] = {cursor.order == ReadOrder::kNewestFirst ? 0u : 1u,
                             cursor.owner,
                             cursor.list,
                             static_cast<uint64_t>(cursor.ts),
                             cursor.activity_id,
                             cursor.kinds};
  return EncodeCursor(CursorKind::kList, fields);
}

absl::StatusOr<ListCursor> DecodeListCursor(absl::string_view text) {
  constexpr absl::string_view kWhat = "list cursor";
  absl::StatusOr<std::array<uint64_t, kMaxCursorFields>> fields =
      DecodeCursor(text, CursorKind::kList, 6, kWhat);
  if (!fields.ok()) return fields.status();
  const auto& f = *fields;
  if (f[0] > 1) return Invalid(kWhat, "unknown order");
  ListCursor cursor;
  cursor.order = f[0] == 0 ? ReadOrder::kNewestFirst : ReadOrder::kOldestFirst;
  cursor.owner = f[1];
  cursor.list = f[2];
  cursor.ts = static_cast<Micros>(f[3]);
  cursor.activity_id = f[4];
  cursor.kinds = f[5];
  if (cursor.list == 0) return Invalid(kWhat, "list id 0");
  if (cursor.kinds == 0) return Invalid(kWhat, "a filter that keeps no kind");
  if (cursor.ts < 0) return Invalid(kWhat, "negative timestamp");
  return cursor;
}

std::string EncodeListMembersCursor(EntityId owner, ListId list,
                                    EntityId last) {
  const uint64_t fields[] = {owner, list, last};
  return EncodeCursor(CursorKind::kListMembers, fields);
}

absl::StatusOr<EntityId> DecodeListMembersCursorOf(absl::string_view text,
                                                   EntityId owner,
                                                   ListId list) {
  constexpr absl::string_view kWhat = "list members cursor";
  absl::StatusOr<std::array<uint64_t, kMaxCursorFields>> fields =
      DecodeCursor(text, CursorKind::kListMembers, 3, kWhat);
  if (!fields.ok()) return fields.status();
  const auto& f = *fields;
  if (f[0] != owner || f[1] != list) {
    return absl::InvalidArgumentError(
        absl::StrCat("cursor belongs to the members of list ", f[1], " of ",
                     f[0], ", not of list ", list, " of ", owner));
  }
  return f[2];
}

std::string EncodeGroupCursor(const GroupCursor& cursor) {
  const uint64_t fields[] = {cursor.owner, static_cast<uint64_t>(cursor.ts),
                             cursor.activity_id, cursor.kinds};
  return EncodeCursor(
      cursor.notifications ? CursorKind::kNotifications : CursorKind::kGroups,
      fields);
}

absl::StatusOr<GroupCursor> DecodeGroupCursor(absl::string_view text,
                                              bool notifications) {
  const absl::string_view what =
      notifications ? "notification cursor" : "group cursor";
  absl::StatusOr<std::array<uint64_t, kMaxCursorFields>> fields = DecodeCursor(
      text, notifications ? CursorKind::kNotifications : CursorKind::kGroups, 4,
      what);
  if (!fields.ok()) return fields.status();
  const auto& f = *fields;
  GroupCursor cursor;
  cursor.owner = f[0];
  cursor.ts = static_cast<Micros>(f[1]);
  cursor.activity_id = f[2];
  cursor.notifications = notifications;
  cursor.kinds = f[3];
  if (cursor.ts < 0) return Invalid(what, "negative timestamp");
  if (cursor.kinds == 0) return Invalid(what, "a filter that keeps no kind");
  return cursor;
}

std::string EncodeFollowListCursor(const FollowListCursor& cursor) {
  const uint64_t fields[] = {cursor.followers ? 0u : 1u, cursor.entity,
                             cursor.shard, cursor.last};
  return EncodeCursor(CursorKind::kFollowList, fields);
}

absl::StatusOr<FollowListCursor> DecodeFollowListCursor(
    absl::string_view text) {
  constexpr absl::string_view kWhat = "follow list cursor";
  absl::StatusOr<std::array<uint64_t, kMaxCursorFields>> fields =
      DecodeCursor(text, CursorKind::kFollowList, 4, kWhat);
  if (!fields.ok()) return fields.status();
  const auto& f = *fields;
  if (f[0] > 1) return Invalid(kWhat, "unknown list");
  if (f[2] > std::numeric_limits<uint32_t>::max()) {
    return Invalid(kWhat, "shard out of range");
  }
  FollowListCursor cursor;
  cursor.followers = f[0] == 0;
  cursor.entity = f[1];
  cursor.shard = static_cast<uint32_t>(f[2]);
  cursor.last = f[3];
  return cursor;
}

std::string EncodeReadMarkerCursor(EntityId user, FeedType type,
                                   EntityId owner) {
  const uint64_t fields[] = {user, static_cast<uint64_t>(type), owner};
  return EncodeCursor(CursorKind::kReadMarkers, fields);
}

absl::StatusOr<std::pair<FeedType, EntityId>> DecodeReadMarkerCursorOf(
    absl::string_view text, EntityId user) {
  constexpr absl::string_view kWhat = "read marker cursor";
  absl::StatusOr<std::array<uint64_t, kMaxCursorFields>> fields =
      DecodeCursor(text, CursorKind::kReadMarkers, 3, kWhat);
  if (!fields.ok()) return fields.status();
  const auto& f = *fields;
  if (f[0] != user) return Invalid(kWhat, "it belongs to another user");
  if (f[1] > static_cast<uint64_t>(FeedType::kNotification)) {
    return Invalid(kWhat, "unknown feed type");
  }
  return std::pair<FeedType, EntityId>{static_cast<FeedType>(f[1]), f[2]};
}

std::string EncodeReactorCursor(ActivityId activity, size_t kind,
                                const Reactor& last) {
  const uint64_t fields[] = {activity, kind,
                             static_cast<uint64_t>(last.reacted_at), last.user};
  return EncodeCursor(CursorKind::kReactors, fields);
}

absl::StatusOr<Reactor> DecodeReactorCursorOf(absl::string_view text,
                                              ActivityId activity,
                                              size_t kind) {
  constexpr absl::string_view kWhat = "reactor cursor";
  absl::StatusOr<std::array<uint64_t, kMaxCursorFields>> fields =
      DecodeCursor(text, CursorKind::kReactors, 4, kWhat);
  if (!fields.ok()) return fields.status();
  const auto& f = *fields;
  if (f[0] != activity || f[1] != kind) {
    return Invalid(kWhat, "it belongs to another activity or kind");
  }
  return Reactor{f[3], static_cast<Micros>(f[2])};
}

absl::StatusOr<FollowListCursor> DecodeFollowListCursorOf(
    absl::string_view text, bool followers, EntityId entity) {
  absl::StatusOr<FollowListCursor> cursor = DecodeFollowListCursor(text);
  if (!cursor.ok()) return cursor.status();
  if (cursor->followers != followers || cursor->entity != entity) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cursor belongs to the ", cursor->followers ? "follower" : "followee",
        " list of ", cursor->entity, ", not to the ",
        followers ? "follower" : "followee", " list of ", entity));
  }
  return cursor;
}

namespace {

constexpr uint64_t kBlockedList = 2;
constexpr uint64_t kMutedList = 3;

}  // namespace

std::string EncodeRelationListCursor(bool muted, EntityId entity,
                                     EntityId last) {
  const uint64_t fields[] = {muted ? kMutedList : kBlockedList, entity, 0,
                             last};
  return EncodeCursor(CursorKind::kFollowList, fields);
}

absl::StatusOr<EntityId> DecodeRelationListCursorOf(absl::string_view text,
                                                    bool muted,
                                                    EntityId entity) {
  absl::StatusOr<std::array<uint64_t, kMaxCursorFields>> fields =
      DecodeCursor(text, CursorKind::kFollowList, 4, "relation list cursor");
  if (!fields.ok()) return fields.status();
  if ((*fields)[0] != (muted ? kMutedList : kBlockedList) ||
      (*fields)[1] != entity) {
    return absl::InvalidArgumentError(
        absl::StrCat("cursor does not belong to the ",
                     muted ? "muted" : "blocked", " list of ", entity));
  }
  return (*fields)[3];
}

std::string EncodeRankedCursor(const RankedCursor& cursor) {
  uint64_t score_bits = 0;
  std::memcpy(&score_bits, &cursor.score, sizeof(score_bits));
  const uint64_t fields[] = {
      cursor.owner, static_cast<uint64_t>(cursor.start), cursor.fingerprint,
      score_bits,   static_cast<uint64_t>(cursor.ts),    cursor.activity_id};
  return EncodeCursor(CursorKind::kRanked, fields);
}

absl::StatusOr<RankedCursor> DecodeRankedCursor(absl::string_view text) {
  constexpr absl::string_view kWhat = "ranked cursor";
  absl::StatusOr<std::array<uint64_t, kMaxCursorFields>> fields =
      DecodeCursor(text, CursorKind::kRanked, 6, kWhat);
  if (!fields.ok()) return fields.status();
  const auto& f = *fields;
  RankedCursor cursor;
  cursor.owner = f[0];
  cursor.start = static_cast<Micros>(f[1]);
  cursor.fingerprint = f[2];
  std::memcpy(&cursor.score, &f[3], sizeof(cursor.score));
  cursor.ts = static_cast<Micros>(f[4]);
  cursor.activity_id = f[5];
  if (std::isnan(cursor.score)) return Invalid(kWhat, "score is not a number");
  if (cursor.ts < 0) return Invalid(kWhat, "negative timestamp");
  return cursor;
}

absl::StatusOr<RankedCursor> DecodeRankedCursorOf(absl::string_view text,
                                                  EntityId owner,
                                                  uint64_t fingerprint) {
  absl::StatusOr<RankedCursor> cursor = DecodeRankedCursor(text);
  if (!cursor.ok()) return cursor.status();
  if (cursor->owner != owner) {
    return absl::InvalidArgumentError(
        absl::StrCat("cursor belongs to the ranked timeline of ", cursor->owner,
                     ", not of ", owner));
  }
  if (cursor->fingerprint != fingerprint) {
    return absl::InvalidArgumentError(
        "cursor was made with another formula or window; keep those of the "
        "walk's first page");
  }
  return cursor;
}

}  // namespace feedcore::internal
