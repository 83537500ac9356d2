// PublishLedger: what FEED.PUBLISH remembers of recent publishes, so that
// a retried publish changes nothing and answers as the first one did.
//
// * IDEMPOTENCY key: the first publish with a key records its plan (actor,
//   activity id, timestamp, a hash of the payload); a later publish with
//   the same key and the same request replays that plan, which the engine
//   takes as a re-publish of the same activity (a no-op). The same key
//   with another actor, id, timestamp or payload is refused.
// * '*' timestamp with a client id: the timestamp taken from the clock is
//   recorded by activity id, and a later '*' publish of the same id, actor
//   and payload reuses it instead of the clock's new time.
// * '*' activity id: ids are handed out from kFirstServerActivityId up,
//   2^62 plus the clock's microseconds and at least one above the last id
//   handed out, so that they keep increasing across restarts as long as
//   the clock does not go back; client ids should stay below 2^62.
// * '*' activity id with an IDEMPOTENCY key: kFirstKeyedActivityId plus 61
//   bits of an XXH3 hash of the actor and the key (KeyedActivityId), the
//   same in every process, so that a retry after a restart, which forgot
//   both memories, publishes under the first one's id: the engine takes it
//   as a re-publish (a no-op), or refuses it as AlreadyExists when the ts
//   was '*' too; FEED.PUBLISH then finds the first one's ts in the actor's
//   own feed and plans again with it (Plan's `first_ts`). So a retried
//   publish stays a no-op across restarts, while its activity is in the
//   own feed. Two keys of an actor share an id with odds of 2^-61 a pair;
//   the second is then refused as AlreadyExists, never merged.
//
// Both memories are kept for kPublishMemoryMicros of the engine's clock and
// at most kMaxRememberedPublishes entries each (the oldest go first), in
// memory only.
//
// Thread-safe: one mutex guards everything; it is held for map updates
// only, never while publishing. Each call is O(1) amortized.
#ifndef FEEDCORE_SERVER_PUBLISH_LEDGER_H_
#define FEEDCORE_SERVER_PUBLISH_LEDGER_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/mutex.h"
#include "feedcore/clock.h"
#include "feedcore/types.h"

namespace feedcore::server {

inline constexpr Micros kPublishMemoryMicros = Micros{24} * 3600 * 1'000'000;
inline constexpr size_t kMaxRememberedPublishes = 1'000'000;
inline constexpr size_t kMaxIdempotencyKeyBytes = 256;
inline constexpr ActivityId kFirstServerActivityId = ActivityId{1} << 62;
inline constexpr ActivityId kFirstKeyedActivityId =
    kFirstServerActivityId + (ActivityId{1} << 61);

// The '*' id of a publish by `actor` with IDEMPOTENCY `key`.
ActivityId KeyedActivityId(EntityId actor, absl::string_view key);

// A FEED.PUBLISH as the client sent it.
struct PublishRequest {
  EntityId actor = 0;
  std::optional<ActivityId> id;  // nullopt: '*'
  std::optional<Micros> ts;      // nullopt: '*'
  absl::string_view payload;
  absl::string_view key;  // empty: no IDEMPOTENCY
};

// What to publish.
struct PublishPlan {
  ActivityId id = 0;
  Micros ts = 0;
  // A retry of a remembered key: the reply is the first one's.
  bool repeat = false;
};

class PublishLedger {
 public:
  // The plan for `request` at `now` (see above), remembered until Forget.
  // A '*' ts takes `first_ts` when it is set (the time a publish forgotten
  // by a restart took). InvalidArgument for a key of the wrong size or
  // reused for another publish; ResourceExhausted when the server's ids
  // are used up.
  absl::StatusOr<PublishPlan> Plan(const PublishRequest& request, Micros now,
                                   std::optional<Micros> first_ts = {});

  // Forgets what Plan remembered for `request` (its publish failed), unless
  // the plan was a repeat.
  void Forget(const PublishRequest& request, const PublishPlan& plan);

 private:
  struct Remembered {
    EntityId actor = 0;
    ActivityId id = 0;
    Micros ts = 0;
    size_t payload_hash = 0;
    bool server_id = false;  // the id was '*'
    bool server_ts = false;  // the ts was '*'
    uint64_t serial = 0;     // tells a map entry from a later one
  };
  struct Expiry {
    Micros at = 0;
    std::string key;    // by_key_'s key
    ActivityId id = 0;  // by_id_'s key
    uint64_t serial = 0;
  };

  // Drops what is past the window or the count.
  void Trim(Micros now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<ActivityId> NextId(Micros now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  internal::SharedMutex mu_;
  absl::flat_hash_map<std::string, Remembered> by_key_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<ActivityId, Remembered> by_id_ ABSL_GUARDED_BY(mu_);
  std::deque<Expiry> key_expiry_ ABSL_GUARDED_BY(mu_);
  std::deque<Expiry> id_expiry_ ABSL_GUARDED_BY(mu_);
  ActivityId last_id_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t serial_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace feedcore::server

#endif  // FEEDCORE_SERVER_PUBLISH_LEDGER_H_
