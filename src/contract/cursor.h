// Opaque, versioned, checksummed page cursors.
//
// A cursor is a short printable string (web-safe base64) of a fixed binary
// layout: version (1 byte), kind (1 byte), a kind-specific number of 64-bit
// fields (little-endian), and an XXH3-64 checksum (seeded with
// kCursorChecksumSeed, little-endian) of everything before it. Decoding
// checks the length (before decoding, so a huge string costs nothing), the
// encoding, the checksum, the version and the kind, so a truncated,
// corrupted or hand-edited cursor gets InvalidArgument rather than reading a
// wrong position. The checksum detects damage, not forgery: a forged but
// well-formed cursor can only position a reader inside data it may read
// anyway, because each caller re-checks whose cursor it is.
//
// Each kind of cursor (timeline, leaderboard, follower list...) has its own
// struct and Encode/Decode pair built on EncodeCursor/DecodeCursor.
//
// Thread safety: pure functions.
#ifndef FEEDCORE_SRC_CONTRACT_CURSOR_H_
#define FEEDCORE_SRC_CONTRACT_CURSOR_H_

#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "feedcore/options.h"
#include "feedcore/social.h"
#include "feedcore/types.h"

// Exported from the shared libfeedcore for the Redis backend's library,
// which calls this one copy (CMakeLists.txt, feedcore_contract).
#pragma GCC visibility push(default)
namespace feedcore::internal {

inline constexpr uint8_t kCursorVersion = 1;
// Seed of the checksum, so that bytes of another format that happen to end
// in an unseeded XXH3 of themselves are still rejected.
inline constexpr uint64_t kCursorChecksumSeed = 0x66656564636f7265ULL;
inline constexpr size_t kMaxCursorFields = 8;

enum class CursorKind : uint8_t {
  kTimeline = 1,
  kLeaderboard = 2,
  kFollowList = 3,
  kGroups = 4,
  kNotifications = 5,
  kRanked = 6,
  kReadMarkers = 7,
  kReactors = 8,
  kList = 9,
  kListMembers = 10,
};

// Encodes `fields` (at most kMaxCursorFields) under `kind`.
std::string EncodeCursor(CursorKind kind, absl::Span<const uint64_t> fields);

// Decodes a cursor of `kind` with exactly `field_count` fields into the
// first `field_count` elements of the result. InvalidArgument naming the
// problem for anything else; `what` names the cursor in messages (e.g.
// "timeline cursor").
absl::StatusOr<std::array<uint64_t, kMaxCursorFields>> DecodeCursor(
    absl::string_view text, CursorKind kind, size_t field_count,
    absl::string_view what);

// Position after `(ts, activity_id)` in `owner`'s feed read in `order`.
// `feed` tells which of the owner's feeds (home timeline, own feed, world
// feed), so a cursor of one cannot be used on another.
struct TimelineCursor {
  EntityId owner = 0;
  ReadOrder order = ReadOrder::kNewestFirst;
  Micros ts = 0;
  ActivityId activity_id = 0;
  uint8_t feed = 0;
  // The read's KindFilter::kinds, so that a cursor continues only a read
  // of the same kinds.
  uint64_t kinds = KindFilter::kEveryKind;

  friend bool operator==(const TimelineCursor&,
                         const TimelineCursor&) = default;
};

std::string EncodeTimelineCursor(const TimelineCursor& cursor);
// InvalidArgument with a reason for anything that is not a cursor this
// version wrote for a timeline.
absl::StatusOr<TimelineCursor> DecodeTimelineCursor(absl::string_view text);

// Position after `(ts, activity_id)` in the feed of `owner`'s list `list`
// (FeedLists::ReadList) read in `order`, of the kinds `kinds` keeps. Fields
// in order: order (0 newest first), owner, list, ts, activity id, kinds.
struct ListCursor {
  EntityId owner = 0;
  ListId list = 0;
  ReadOrder order = ReadOrder::kNewestFirst;
  Micros ts = 0;
  ActivityId activity_id = 0;
  uint64_t kinds = KindFilter::kEveryKind;

  friend bool operator==(const ListCursor&, const ListCursor&) = default;
};

std::string EncodeListCursor(const ListCursor& cursor);
absl::StatusOr<ListCursor> DecodeListCursor(absl::string_view text);

// Position after member `last` of `owner`'s list `list` (ListMembers).
// Decoding checks that it is that list's (InvalidArgument otherwise) and
// returns `last`.
std::string EncodeListMembersCursor(EntityId owner, ListId list, EntityId last);
absl::StatusOr<EntityId> DecodeListMembersCursorOf(absl::string_view text,
                                                   EntityId owner, ListId list);

// Position after the group whose newest entry is `(ts, activity_id)` in
// `owner`'s grouped home feed (FeedEngine::ReadGroups) or, with
// `notifications`, its notification feed (ReadNotifications).
struct GroupCursor {
  EntityId owner = 0;
  Micros ts = 0;
  ActivityId activity_id = 0;
  bool notifications = false;
  // The read's KindFilter::kinds, as in TimelineCursor.
  uint64_t kinds = KindFilter::kEveryKind;

  friend bool operator==(const GroupCursor&, const GroupCursor&) = default;
};

std::string EncodeGroupCursor(const GroupCursor& cursor);
// InvalidArgument for anything but a cursor of the feed `notifications`
// names.
absl::StatusOr<GroupCursor> DecodeGroupCursor(absl::string_view text,
                                              bool notifications);

// Position after `last` in `entity`'s follower list (ordered by (shard,
// id); `followers` true) or followee list (ordered by id; shard 0).
struct FollowListCursor {
  bool followers = true;
  EntityId entity = 0;
  uint32_t shard = 0;
  EntityId last = 0;

  friend bool operator==(const FollowListCursor&,
                         const FollowListCursor&) = default;
};

std::string EncodeFollowListCursor(const FollowListCursor& cursor);
absl::StatusOr<FollowListCursor> DecodeFollowListCursor(absl::string_view text);
// Decodes `text` and checks that it belongs to `entity`'s follower list
// (`followers` true) or followee list: InvalidArgument naming both lists
// otherwise. Both backends page their lists with it.
absl::StatusOr<FollowListCursor> DecodeFollowListCursorOf(
    absl::string_view text, bool followers, EntityId entity);

// Position after `last` in `entity`'s list of the actors it blocks
// (`muted` false) or mutes, by id: a follow-list cursor whose list field
// is 2 (blocked) or 3 (muted), shard 0. Decoding checks that it belongs
// to that list (InvalidArgument otherwise) and returns `last`. Both
// backends page these lists with it.
std::string EncodeRelationListCursor(bool muted, EntityId entity,
                                     EntityId last);
absl::StatusOr<EntityId> DecodeRelationListCursorOf(absl::string_view text,
                                                    bool muted,
                                                    EntityId entity);

// Position after the marker of feed (`type`, `owner`) in `user`'s list of
// read markers (ReadMarkers::ListReadMarkers). Decoding checks that it is
// `user`'s (InvalidArgument otherwise).
std::string EncodeReadMarkerCursor(EntityId user, FeedType type,
                                   EntityId owner);
absl::StatusOr<std::pair<FeedType, EntityId>> DecodeReadMarkerCursorOf(
    absl::string_view text, EntityId user);

// Position after `last` in the reactors of (`activity`, `kind`)
// (FeedReactions::ReadReactors). Decoding checks that it is that list's
// (InvalidArgument otherwise) and returns `last`.
std::string EncodeReactorCursor(ActivityId activity, size_t kind,
                                const Reactor& last);
absl::StatusOr<Reactor> DecodeReactorCursorOf(absl::string_view text,
                                              ActivityId activity, size_t kind);

// Position after the entry `(score, ts, activity_id)` in a walk of
// `owner`'s ranked timeline (FeedEngine::ReadRanked) that started at
// `start` under the formula and window whose RankFingerprint is
// `fingerprint`. Fields in order: owner, start, fingerprint, the score's
// IEEE-754 bits, ts, activity id.
struct RankedCursor {
  EntityId owner = 0;
  Micros start = 0;
  uint64_t fingerprint = 0;
  double score = 0;
  Micros ts = 0;
  ActivityId activity_id = 0;

  friend bool operator==(const RankedCursor&, const RankedCursor&) = default;
};

std::string EncodeRankedCursor(const RankedCursor& cursor);
// InvalidArgument for anything but a ranked cursor this version wrote
// (a score that is not a number, or a negative ts, is malformed).
absl::StatusOr<RankedCursor> DecodeRankedCursor(absl::string_view text);
// Decodes `text` and checks that it continues a walk of `owner`'s ranked
// timeline under the formula and window of `fingerprint`: InvalidArgument
// naming the mismatch otherwise. Both backends page ranked reads with it.
absl::StatusOr<RankedCursor> DecodeRankedCursorOf(absl::string_view text,
                                                  EntityId owner,
                                                  uint64_t fingerprint);

}  // namespace feedcore::internal
#pragma GCC visibility pop

#endif  // FEEDCORE_SRC_CONTRACT_CURSOR_H_
