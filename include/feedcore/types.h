// Basic vocabulary of feedcore: identifiers, time, and the entries that
// timelines hold.
//
// Every id is an opaque 64-bit number chosen by the embedding program: a
// user, a channel, a city or an artist are all just `EntityId`s. Time is
// always microseconds, and always comes from the engine's injected `Clock`
// (see clock.h), never from the system directly.
#ifndef FEEDCORE_TYPES_H_
#define FEEDCORE_TYPES_H_

#include <compare>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "feedcore/export.h"

namespace feedcore {

// Any followable or readable thing: a user, a channel, a city, an artist.
using EntityId = uint64_t;
// Identifies one activity (a post, a like, a "went live" event).
using ActivityId = uint64_t;
// Timestamps and durations, in microseconds. Timestamps are microseconds
// since the Unix epoch when the system clock is used.
using Micros = int64_t;
// Which group an entry joins in grouped (aggregated) reads: entries of one
// timeline with the same non-zero key collapse into one group. 0 means the
// entry is a group of its own.
using GroupKey = uint64_t;
// What an activity is (a post, a repost, a reply, a live stream...): a
// number chosen by the embedding program, 0..kMaxActivityKind, carried by
// every copy of the activity so that a read can keep or leave out kinds
// (KindFilter) without looking the activity up. 0 is the default.
using ActivityKind = uint8_t;
inline constexpr ActivityKind kMaxActivityKind = 63;

inline constexpr Micros kMicrosPerMillisecond = 1000;
inline constexpr Micros kMicrosPerSecond = 1000 * kMicrosPerMillisecond;
inline constexpr Micros kMicrosPerMinute = 60 * kMicrosPerSecond;
inline constexpr Micros kMicrosPerHour = 60 * kMicrosPerMinute;
inline constexpr Micros kMicrosPerDay = 24 * kMicrosPerHour;

// Which kind of feed: of an entity (a change record, a read marker) or the
// world's.
enum class FeedType : uint8_t {
  kHome = 0,          // the entity's timeline (what it follows)
  kOwn = 1,           // what the entity published
  kWorld = 2,         // everything published (owner 0)
  kNotification = 3,  // the entity's notification feed
};

// The feed type's name as written here, e.g. "kHome".
FEEDCORE_EXPORT const char* FeedTypeName(FeedType feed);

// A set of activity kinds that a read keeps (ReadOptions::kinds,
// RankedReadOptions::kinds). The default keeps every kind and costs
// nothing; any other filter skips the entries of other kinds while the
// page is filled, so a page still holds `limit` entries whenever that many
// of the kept kinds are visible, and its cursor resumes after its last
// entry. A call given a filter that keeps no kind, or built from a kind
// above kMaxActivityKind, fails with InvalidArgument.
struct KindFilter {
  static constexpr uint64_t kEveryKind = ~uint64_t{0};
  // Bit k set: kind k is kept.
  uint64_t kinds = kEveryKind;
  // Set by Only and Except when given a kind above kMaxActivityKind (the
  // first such kind), so that the call taking the filter can refuse it.
  bool has_bad_kind = false;
  ActivityKind bad_kind = 0;

  // Only the kinds listed, or every kind but those.
  static KindFilter Only(std::initializer_list<ActivityKind> listed) {
    KindFilter filter;
    filter.kinds = 0;
    for (ActivityKind kind : listed) filter.Add(kind);
    return filter;
  }
  static KindFilter Except(std::initializer_list<ActivityKind> listed) {
    KindFilter filter = Only(listed);
    filter.kinds = ~filter.kinds;
    return filter;
  }
  bool every_kind() const { return kinds == kEveryKind; }
  bool Keeps(ActivityKind kind) const {
    return kind <= kMaxActivityKind && ((kinds >> kind) & 1) != 0;
  }
  friend bool operator==(const KindFilter&, const KindFilter&) = default;

 private:
  void Add(ActivityKind kind) {
    if (kind > kMaxActivityKind) {
      if (!has_bad_kind) bad_kind = kind;
      has_bad_kind = true;
      return;
    }
    kinds |= uint64_t{1} << kind;
  }
};

// The key of an entry in a feed, `(ts, activity_id)`: ordered by time, then
// by id, so that two entries of one instant never collide; greater means
// newer. Every call that names one entry takes its key.
struct EntryKey {
  Micros ts = 0;
  ActivityId activity_id = 0;

  friend auto operator<=>(const EntryKey&, const EntryKey&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const EntryKey& key) {
    return H::combine(std::move(h), key.ts, key.activity_id);
  }

  // The oldest key and the newest key there can be.
  static constexpr EntryKey Min() { return {0, 0}; }
  static constexpr EntryKey Max() {
    return {std::numeric_limits<Micros>::max(),
            std::numeric_limits<ActivityId>::max()};
  }
};

// One item of a timeline. Its key is `(ts, activity_id)`: two items with the
// same timestamp never collide, and putting the same key twice overwrites
// instead of duplicating.
struct TimelineEntry {
  Micros ts = 0;               // when it happened; must be >= 0
  ActivityId activity_id = 0;  // second half of the key
  EntityId actor = 0;          // who did it (used to remove by producer)
  // Its group in grouped reads; kept only when the engine aggregates
  // (EngineOptions::aggregation), otherwise read back as 0.
  GroupKey group = 0;
  // The activity's kind (Activity::kind), 0..kMaxActivityKind.
  ActivityKind kind = 0;

  EntryKey key() const { return {ts, activity_id}; }
  friend bool operator==(const TimelineEntry&, const TimelineEntry&) = default;
};

// An entry as returned by a read: the stored entry plus the absolute time at
// which it stops being visible.
struct StoredEntry {
  Micros ts = 0;
  ActivityId activity_id = 0;
  EntityId actor = 0;
  Micros expires_at = 0;  // visible while clock.Now() < expires_at
  GroupKey group = 0;     // as TimelineEntry::group
  // The activity's body, only when the read asked for it
  // (`ReadOptions::hydrate`) and the activity was published (entries put
  // with the low-level Insert calls have none).
  std::string payload;
  // When the activity's payload was last replaced (ActivityEdits), by the
  // engine clock (at least 1); 0 if never. Set only with the payload.
  Micros edited_at = 0;
  ActivityKind kind = 0;  // as TimelineEntry::kind

  EntryKey key() const { return {ts, activity_id}; }
  friend bool operator==(const StoredEntry&, const StoredEntry&) = default;
};

// One entry addressed to one timeline, for batched inserts.
struct OwnedEntry {
  EntityId owner = 0;
  TimelineEntry entry;
};

// Something that happened: stored once, delivered by key to the actor's own
// feed, the world feed and every follower's timeline.
struct Activity {
  ActivityId id = 0;
  EntityId actor = 0;
  Micros ts = 0;  // >= 0
  // What was done and to what ("liked", photo 17): opaque numbers chosen by
  // the embedding program. Grouped reads collapse activities with the same
  // verb and object in the same time bucket (see AggregationOptions).
  // They only decide the group key at publish time: they are not stored,
  // and a re-publish does not compare them.
  uint64_t verb = 0;
  EntityId object = 0;
  std::string
      payload;  // opaque bytes, at most EngineOptions::max_payload_bytes
  // Time-to-live, 1..kMaxTtl; 0 means EngineOptions::default_ttl.
  Micros ttl = 0;
  // Its kind, 0..kMaxActivityKind: kept with every copy of the activity,
  // so that reads can filter by it (KindFilter). Unlike the verb it is part
  // of the activity: a re-publish with another kind is refused.
  ActivityKind kind = 0;
  // The activity this one reposts (0: none), named by the program: the
  // original, not a repost of it. Home timelines show it once while the
  // original or an older repost of it is among its recent entries
  // (EngineOptions::reposts). Part of the activity, as `kind` is.
  ActivityId repost_of = 0;
};

// One page of a follower or followee list.
struct EntityPage {
  std::vector<EntityId> ids;
  std::string next_cursor;  // empty at the end
};

// One page of a read. `next_cursor` is opaque: pass it back in
// `ReadOptions::cursor` to get the following page; it is empty when nothing
// visible (unexpired, inside the window) follows this page.
struct Page {
  std::vector<StoredEntry> entries;
  std::string next_cursor;
};

// One group of a grouped read: the visible activities of a timeline that
// share a group key ("Alice and 4 others liked your photo"). Every count is
// exact; the lists are bounded by AggregationOptions.
struct FeedGroup {
  GroupKey key = 0;           // 0: a single ungrouped entry
  size_t activity_count = 0;  // visible activities in the group
  size_t actor_count = 0;     // distinct actors among them
  // Distinct actors, most recent first, at most max_group_actors.
  std::vector<EntityId> recent_actors;
  // The newest entries, newest first, at most max_group_entries; the
  // first one is the group's place in the feed.
  std::vector<StoredEntry> recent;
  Micros first_ts = 0;  // oldest visible activity
  Micros last_ts = 0;   // newest visible activity
  // Notification feeds only (FeedEngine::ReadNotifications); false in
  // other grouped reads. A group is unseen and unread again whenever an
  // activity joins it; read implies seen.
  bool seen = false;
  bool read = false;

  friend bool operator==(const FeedGroup&, const FeedGroup&) = default;
};

// One page of a grouped read; `next_cursor` as in Page.
struct GroupPage {
  std::vector<FeedGroup> groups;
  std::string next_cursor;
};

// The badge of a notification feed: how many of its groups (notifications,
// in a flat feed) the user has not seen, and not read. Both count only
// visible (unexpired) groups.
struct NotificationCounts {
  size_t unseen = 0;
  size_t unread = 0;
  size_t groups = 0;  // visible groups in the feed

  friend bool operator==(const NotificationCounts&,
                         const NotificationCounts&) = default;
};

}  // namespace feedcore

#endif  // FEEDCORE_TYPES_H_
