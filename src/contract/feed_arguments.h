// Validation and resolution of EngineOptions, InsertOptions and
// ReadOptions. Every check names the offending field in its message.
#ifndef FEEDCORE_SRC_CONTRACT_FEED_ARGUMENTS_H_
#define FEEDCORE_SRC_CONTRACT_FEED_ARGUMENTS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "feedcore/options.h"
#include "feedcore/social.h"

// Exported from the shared libfeedcore for the Redis backend's library,
// which calls this one copy (CMakeLists.txt, feedcore_contract).
#pragma GCC visibility push(default)
namespace feedcore::internal {

// Checks every field and fills in the "pick for me" values: shards = 0
// becomes a power of two >= 4 x hardware threads, a null clock a
// SystemClock.
absl::StatusOr<EngineOptions> ResolveEngineOptions(EngineOptions options);

// The absolute expiry an insert asks for at time `now`, or InvalidArgument.
absl::StatusOr<Micros> ResolveExpiry(const InsertOptions& options,
                                     Micros default_ttl, Micros now);

absl::Status ValidateEntry(const TimelineEntry& entry);

// Checks ts, kind, repost_of, payload size and ttl of an activity to
// publish.
absl::Status ValidateActivity(const Activity& activity,
                              size_t max_payload_bytes,
                              const RepostOptions& reposts);

// Checks the new payload of EditsAndPins::EditActivity.
absl::Status ValidateEditedPayload(absl::string_view payload,
                                   size_t max_payload_bytes);

// Checks PublishOptions::notify: at most kMaxNotifyRecipients.
absl::Status ValidateNotify(const PublishOptions& options);

// Checks a list id (FeedLists): not 0.
absl::Status ValidateListId(ListId list);
// Checks SetList's id and settings: the name 1..kMaxListNameBytes bytes.
absl::Status ValidateListSettings(ListId list, const ListSettings& settings);

// Checks a back-fill count.
absl::Status ValidateBackfill(size_t backfill);

// Checks that `follower` and `followee` of a Follow or Unfollow (`verb`)
// differ.
absl::Status ValidateFollowPair(EntityId follower, EntityId followee,
                                absl::string_view verb);

// Checks the pairs of FollowMany or UnfollowMany (`verb`: "follow" or
// "unfollow"): at most kMaxFollowBatch, none with follower == followee.
absl::Status ValidateFollowPairs(absl::Span<const FollowPair> pairs,
                                 absl::string_view verb);

// What Follow answers when one of the two blocks the other.
absl::Status BlockedFollow(EntityId follower, EntityId followee);

// Checks that the user and actor of Block, Unblock, Mute or Unmute (`call`)
// differ.
absl::Status ValidateRelation(EntityId user, EntityId actor,
                              absl::string_view call);
// The expiry of a mute asked at `now`: 0 for none; InvalidArgument for
// one not in (now, now + kMaxTtl].
absl::StatusOr<Micros> ResolveMuteExpiry(const MuteOptions& options,
                                         Micros now);

// The page Blocked answers from a relation-list page (its ids only).
EntityPage BlockedPage(MutedPage page);

// Checks the limit of a follower/followee page.
absl::Status ValidateList(const ListOptions& options, size_t max_page_size);

// Checks the arguments of CountNewer.
absl::Status ValidateCountNewer(const EntryKey& after, size_t max_count,
                                size_t max_page_size);

// Checks the feed in which `user` keeps a read marker: its own home feed,
// any own feed, the world feed (owner 0); never a notification feed.
absl::Status ValidateMarkedFeed(EntityId user, const MarkedFeed& feed);
// Checks the key of an entry that the argument `what` names (ts >= 0).
absl::Status ValidateEntryKey(const EntryKey& key, absl::string_view what);
// What Remove answers for a key `owner`'s timeline does not hold.
absl::Status NoEntryWithKey(EntityId owner, const EntryKey& key);
// What MarkRead answers for a key no visible notification of `user` has.
absl::Status NoNotificationWithKey(EntityId user, const EntryKey& key);
// Checks GetReadMarker's max_unread.
absl::Status ValidateMaxUnread(size_t max_unread, size_t max_page_size);
// Checks the limit and max_unread of a ListReadMarkers call.
absl::Status ValidateReadStateOptions(const ReadStateOptions& options,
                                      size_t max_page_size);

// Checks a reaction kind: 0..kActivityCounterCount-1.
absl::Status ValidateReactionKind(ReactionKind kind);
// Checks a React call's kind and options (the notice's id and payload).
absl::Status ValidateReact(ActivityId activity_id, ReactionKind kind,
                           const ReactOptions& options,
                           size_t max_payload_bytes);
// Checks the size of a GetOwnReactions lookup.
absl::Status ValidateReactionLookup(size_t ids);

// Checks limit and window (not the cursor, which needs the owner).
// InvalidArgument for a filter naming a kind above kMaxActivityKind or
// keeping none; `what` names the option in the message.
absl::Status ValidateKindFilter(const KindFilter& filter,
                                absl::string_view what);
absl::Status ValidateRead(const ReadOptions& options, size_t max_page_size);

}  // namespace feedcore::internal
#pragma GCC visibility pop

#endif  // FEEDCORE_SRC_CONTRACT_FEED_ARGUMENTS_H_
