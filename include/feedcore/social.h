// Options and results of FeedEngine's calls for chat and social servers:
// mute and block, read markers, ranked reads, batch follows. What each call
// does, when it fails and what it costs is said at the call, in
// feed_engine.h (batch follows) and feed_facets.h (the rest).
#ifndef FEEDCORE_SOCIAL_H_
#define FEEDCORE_SOCIAL_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "feedcore/types.h"

namespace feedcore {

// Most pairs a FollowMany or UnfollowMany call takes.
inline constexpr size_t kMaxFollowBatch = 100'000;

// --- Batch follows ---

// One follow edge: `follower` follows `followee`.
struct FollowPair {
  EntityId follower = 0;
  EntityId followee = 0;
  friend bool operator==(const FollowPair&, const FollowPair&) = default;
};

struct UnfollowOptions {
  // Keep the followee's entries already in the follower's timeline (they
  // then leave it only by the cap, expiry, Retract or Remove); by default
  // Unfollow removes them. What a merged-at-read followee showed the
  // follower is kept too, copied into its timeline, as hybrid fan-out off
  // would have left it.
  bool keep_history = false;
};

// --- Mute and block ---

struct MuteOptions {
  // Also keep the muted actor out of the muter's notification feed: what is
  // there leaves it, and nothing new arrives. By default only the timeline
  // is affected.
  bool notifications = false;
  // When the mute ends by itself, by the engine's clock; later than now and
  // at most now + kMaxTtl. Unset: until Unmute. Muting again replaces both
  // fields.
  std::optional<Micros> expires_at;
};

// How Unmute and Unblock restore an actor.
struct RestoreOptions {
  // Recent activities of the actor copied back into the timeline, as
  // Follow's back-fill does (only if the timeline owner follows the actor),
  // 0..kMaxTimelineLengthLimit. 0: only what the actor publishes afterwards
  // arrives.
  size_t backfill = 0;
};

// What Block, Unblock, Mute and Unmute did.
struct RelationResult {
  // False when the relation was already so (nothing changed); Mute of an
  // already muted actor with different options is a change.
  bool changed = false;
  // Entries that left the timeline and the notification feed.
  size_t removed = 0;
  // Entries copied back (RestoreOptions::backfill).
  size_t backfilled = 0;
  // Block only: follow edges it ended (0, 1 or 2: each direction).
  size_t follows_ended = 0;
};

// One muted actor, as Muted lists it.
struct MutedActor {
  EntityId actor = 0;
  bool notifications = false;        // MuteOptions::notifications
  std::optional<Micros> expires_at;  // MuteOptions::expires_at
  friend bool operator==(const MutedActor&, const MutedActor&) = default;
};

struct MutedPage {
  std::vector<MutedActor> actors;
  std::string next_cursor;  // empty at the end
};

// --- Read markers ---

// A feed a user reads and keeps a marker for: its own home timeline
// (owner = the user), any entity's own feed (a channel in a chat server:
// ReadOwn(channel)), or the world feed (owner 0). Notification feeds keep
// their own seen and read state (MarkSeen, MarkRead) and take no marker.
struct MarkedFeed {
  FeedType type = FeedType::kHome;
  EntityId owner = 0;

  static MarkedFeed Home(EntityId user) { return {FeedType::kHome, user}; }
  static MarkedFeed Own(EntityId channel) { return {FeedType::kOwn, channel}; }
  static MarkedFeed World() { return {FeedType::kWorld, 0}; }
  friend bool operator==(const MarkedFeed&, const MarkedFeed&) = default;
};

struct SetMarkerOptions {
  // Move the marker even backwards (mark unread again). By default a marker
  // only moves forward: setting one at or below where it is changes
  // nothing.
  bool force = false;
};

// A user's place in one feed.
struct ReadMarker {
  // The key of the last item read; unset when the user never set one
  // (then every visible entry counts as unread).
  std::optional<EntryKey> key;
  // Visible entries of the feed newer than `key`, counting at most the
  // `max_unread` asked for (as CountNewer).
  size_t unread = 0;
  // True when more than `max_unread` are unread.
  bool more_unread = false;
  // Of an own feed (a channel): its visible entries newer than `key`
  // whose activities mention the user (PublishOptions::mentions), at most
  // kMaxMentionsPerFeed. 0 for other feeds.
  size_t mentions = 0;
};

// Paging through all of a user's read markers (ReadMarkers::ListReadMarkers).
struct ReadStateOptions {
  // Markers per page, 1..EngineOptions::max_page_size.
  size_t limit = 100;
  std::string cursor;
  // Unread entries counted per feed at most, 1..max_page_size.
  size_t max_unread = 100;
};

// One feed's read state in such a page.
struct FeedReadState {
  MarkedFeed feed;
  ReadMarker marker;
};

struct ReadStatePage {
  // By feed type, then owner, ascending.
  std::vector<FeedReadState> feeds;
  // Empty on the last page.
  std::string next_cursor;
};

// --- Ranked reads ---

// Counters the engine keeps per published activity (likes, replies,
// shares, views: which is which is the program's choice).
inline constexpr size_t kActivityCounterCount = 4;
using ActivityCounters = std::array<int64_t, kActivityCounterCount>;

// How a ranked read scores an entry, from its age and its activity's
// counters (the decayed popularity of Hacker News and getstream):
//
//   score = (base + sum of weights[i] * counters[i])
//           / (age_hours + age_offset_hours) ^ gravity
//
// where age_hours is the walk's start time minus the entry's ts, in hours
// (0 for an entry from the future). Entries with no published activity
// have zero counters. Each value must be finite; gravity 0..10,
// age_offset_hours > 0 (so that a brand-new entry scores finitely).
struct RankFormula {
  double base = 1;
  std::array<double, kActivityCounterCount> weights = {1, 1, 1, 1};
  double gravity = 1.8;
  double age_offset_hours = 2;
  friend bool operator==(const RankFormula&, const RankFormula&) = default;
};

struct RankedReadOptions {
  // Entries per page, 1..EngineOptions::max_page_size.
  size_t limit = 50;
  // Empty for the first page of a walk; otherwise the previous page's
  // `next_cursor` (same owner, same formula and window).
  std::string cursor;
  RankFormula formula;
  // The walk ranks the newest `window` visible entries of the timeline
  // (merged as ReadTimeline merges), 1..EngineOptions::max_timeline_length.
  // Each page costs O(window) counter lookups and a partial sort.
  size_t window = 200;
  // Fill each entry's payload, as ReadOptions::hydrate.
  bool hydrate = false;
  // Only entries of these kinds enter the window (KindFilter).
  KindFilter kinds;
};

struct RankedEntry {
  StoredEntry entry;
  ActivityCounters counters = {};
  double score = 0;
};

struct RankedPage {
  std::vector<RankedEntry> entries;  // highest score first
  std::string next_cursor;           // empty at the end of the walk
};

// --- Reactions ---

// A reaction's kind is the index of the counter it counts
// (0..kActivityCounterCount-1): a like of kind 0 adds 1 to counter 0, once
// per user.
using ReactionKind = size_t;
// A set of kinds, bit k for kind k.
using ReactionKinds = uint8_t;

// Most activities one GetOwnReactions call looks up.
inline constexpr size_t kMaxReactionLookup = 1000;

struct ReactOptions {
  // Non-zero: the reacted activity's actor is told through its
  // notification feed, as PublishOptions::notify tells: the engine stores
  // a notice, an activity with this id (actor: the reactor; ts: the engine
  // clock's time; verb `notice_verb`, object the reacted activity, so that
  // grouped notification feeds show "Alice and 4 others liked your
  // photo"; payload `notice_payload`; it expires with the reacted
  // activity), and puts it in that feed only: not in the reactor's own
  // feed, the world feed or any timeline. Unreact, and a retract of the
  // reacted activity, retract the notice. No notice when the reactor is
  // the actor, or when the reaction was there already.
  ActivityId notice_id = 0;
  uint64_t notice_verb = 0;
  std::string notice_payload;
};

struct ReactionResult {
  // False when the call found it so already (nothing changed).
  bool changed = false;
  // The activity's counters after the call.
  ActivityCounters counters = {};
  // Whether a notice was delivered (ReactOptions::notice_id).
  bool notified = false;
};

// One user who reacted, and when (by the engine clock).
struct Reactor {
  EntityId user = 0;
  Micros reacted_at = 0;
  friend bool operator==(const Reactor&, const Reactor&) = default;
};

struct ReactorPage {
  // The most recent reaction first; ties by descending user id.
  std::vector<Reactor> reactors;
  std::string next_cursor;  // empty on the last page
};

// --- Lists (FeedLists) ---

// Names one of an entity's lists; chosen by the program, 1..2^64-1.
using ListId = uint64_t;

// Lists an entity keeps, members a list holds, and bytes a list's name
// takes, at most.
inline constexpr size_t kMaxListsPerOwner = 100;
inline constexpr size_t kMaxListMembers = 1000;
inline constexpr size_t kMaxListNameBytes = 100;

struct ListSettings {
  // 1..kMaxListNameBytes bytes, any bytes.
  std::string name;
  // Keeps the list's members out of its owner's home timeline (Mastodon's
  // exclusive lists): while an account is a member of one of the owner's
  // exclusive lists, every read of the home timeline leaves out its
  // entries, as it leaves out hidden reposts (feed_engine.h).
  bool exclusive = false;

  friend bool operator==(const ListSettings&, const ListSettings&) = default;
};

// One of an entity's lists, as FeedLists::Lists answers.
struct AccountList {
  ListId id = 0;
  ListSettings settings;
  size_t members = 0;

  friend bool operator==(const AccountList&, const AccountList&) = default;
};

}  // namespace feedcore

#endif  // FEEDCORE_SOCIAL_H_
