// What every operation of the social sequence fuzz target
// (social_sequence_fuzzer.cc) works on: the input, the engine under test
// with its clock and change stream, the reference model, and the draws and
// checks the operations share.
#ifndef FEEDCORE_FUZZ_SOCIAL_FUZZ_CONTEXT_H_
#define FEEDCORE_FUZZ_SOCIAL_FUZZ_CONTEXT_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/change_stream.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "feedcore/social.h"
#include "fuzz_check.h"
#include "fuzz_input.h"
#include "model/feed_model.h"

namespace feedcore::fuzz {

inline constexpr Micros kSocialDefaultTtl = 300;
// A timeline cap no input reaches: the model's pages and counts are then
// exact even for actors merged at read (feed_engine.h).
inline constexpr size_t kNeverReached = 100'000;
inline constexpr size_t kMaxPayload = 6;
inline constexpr size_t kMaxBackfill = 8;

// Notifications with the same verb (and object) group when the feed
// aggregates; verb 0 stays ungrouped.
inline GroupKey GroupKeyOf(const Activity& a) {
  return a.verb == 0 ? 0 : a.verb * 4 + a.object;
}

struct SocialFuzzContext {
  explicit SocialFuzzContext(FuzzInput& input)
      : in(input),
        clock(std::make_shared<ManualClock>(1'000'000)),
        stream(ChangeStream::Create({}).value()),
        options(OptionsFrom(input)),
        entities(2 + input.Below(7)),
        model(options) {
    EngineOptions o = options;
    o.sweep_interval = 0;
    o.fanout_threads = 0;
    o.clock = clock;
    o.change_stream = stream;
    // Deliveries run when an operation dispatches them.
    o.background_deliveries = false;
    engine = FeedEngine::Create(o).value();
  }

  static EngineOptions OptionsFrom(FuzzInput& in) {
    EngineOptions o;
    o.shards = 1 + in.Below(4);
    const uint64_t threshold = in.Below(5);  // 0: never merged at read
    o.hybrid_fanout_threshold = threshold;
    o.default_backfill = in.Below(kMaxBackfill + 1);
    o.max_page_size = 1 + in.Below(8);
    o.default_ttl = kSocialDefaultTtl;
    o.max_timeline_length = kNeverReached;
    o.world_timeline_length = kNeverReached;
    o.max_payload_bytes = kMaxPayload;
    o.aggregation.group_key = GroupKeyOf;
    o.notifications.aggregated = in.Bool();
    o.notifications.max_length = 1 + in.Below(6);
    // Idle readers made dormant (ReleaseInactiveReaders) after up to two
    // clock advances; 0: never.
    o.inactive_after = in.Bool() ? 0 : 1 + static_cast<Micros>(in.Below(200));
    // Reposts of kind 1 shown once within 1..3 entries; 0: every one.
    o.reposts.window = in.Below(4);
    if (o.reposts.window != 0) o.reposts.kinds = KindFilter::Only({1});
    return o;
  }

  // Whether the engine holds every copy the model counts: nothing merged
  // at read, by hybrid fan-out or by a dormant reader.
  bool HoldsAllCopies() const {
    return model.merged_count() == 0 && options.inactive_after == 0;
  }
  // Whether a follower may merge `followee` rather than hold copies of it.
  bool MayMerge(EntityId followee) const {
    return model.merged(followee) || options.inactive_after > 0;
  }

  EntityId Entity() { return 1 + in.Below(entities); }
  // Two distinct entities.
  std::pair<EntityId, EntityId> Pair() {
    const EntityId a = Entity();
    EntityId b = Entity();
    if (b == a) b = a % entities + 1;
    return {a, b};
  }
  Micros Now() const { return clock->Now(); }
  // Timestamps a call may name: 0..head + 1.
  uint64_t HeadSpan() const { return static_cast<uint64_t>(head) + 2; }
  uint64_t Records() const { return stream->Stats().next_sequence; }

  // A failed call: InvalidArgument, and no change recorded.
  void CheckRefused(const absl::Status& status, uint64_t records_before) const {
    FUZZ_CHECK_DETAIL(
        absl::IsInvalidArgument(status),
        std::fprintf(stderr, "status: %s\n", status.ToString().c_str()));
    FUZZ_CHECK(Records() == records_before);
  }

  // A call that may fail: with the model's code, and when it fails with
  // no change recorded. Returns whether it succeeded.
  bool SameOutcome(const absl::Status& got, const absl::Status& want,
                   uint64_t records_before) const {
    FUZZ_CHECK_DETAIL(
        got.code() == want.code(),
        std::fprintf(stderr, "got %s, model %s\n", got.ToString().c_str(),
                     want.ToString().c_str()));
    if (!want.ok()) FUZZ_CHECK(Records() == records_before);
    return want.ok();
  }

  // The back-fill a Follow or FollowMany asks for: the engine's default
  // (left unset in `options`) or any other.
  size_t DrawBackfill(FollowOptions& options) {
    if (!in.Bool()) return this->options.default_backfill;
    const size_t backfill = in.Below(kMaxBackfill + 1);
    options.backfill = backfill;
    return backfill;
  }

  // An activity the model knows (stored or retracted), if any.
  std::optional<std::pair<ActivityId, testing::FeedModel::Activity>> Known() {
    const auto& activities = model.activities();
    if (activities.empty()) return std::nullopt;
    auto it = activities.begin();
    std::advance(it, static_cast<long>(in.Below(activities.size())));
    return *it;
  }

  // Whether `reader`'s timeline reads as the model's. Not once a mute
  // with an expiry of an actor merged at read has expired: the merge then
  // shows again what the mute hid, which no copy comes back for
  // (feed_engine.h, Mute), so the copy-mode model differs.
  bool Comparable(EntityId reader) const {
    return !inexact_readers_.contains(reader);
  }
  bool AllComparable() const { return inexact_readers_.empty(); }

  void NoteMute(EntityId muter, EntityId muted, const MuteOptions& mute) {
    if (mute.expires_at) {
      expiring_mutes_.push_back({muter, muted, *mute.expires_at, false});
    }
  }
  // After every call. A mute that expires after its actor was merged at
  // read while it was in force leaves its muter inexact; one that expired
  // before is harmless. Erring on the side of inexact (a later Mute or
  // Unmute that replaced it) costs only comparisons.
  void NoteExpiries() {
    for (auto it = expiring_mutes_.begin(); it != expiring_mutes_.end();) {
      if (it->expires_at <= Now()) {
        if (it->merged) inexact_readers_.insert(it->muter);
        it = expiring_mutes_.erase(it);
        continue;
      }
      it->merged = it->merged || model.merged(it->muted);
      ++it;
    }
  }

  // Whether the engine holds at most the entries a copy-mode engine
  // would. Not after an Unfollow kept the history of an actor merged at
  // read: every entry the merge counts becomes a copy, expired ones above
  // the follower's boundary that no back-fill copied included, as the
  // merged view counts them towards the cap (feed_engine.h, hybrid
  // fan-out).
  bool copies_bounded = true;

  FuzzInput& in;
  std::shared_ptr<ManualClock> clock;
  std::shared_ptr<ChangeStream> stream;
  const EngineOptions options;
  const EntityId entities;
  testing::FeedModel model;
  std::unique_ptr<InProcessFeedEngine> engine;
  ActivityId next_id = 0;
  Micros head = 50;
  // Keys of the activities the last operation created: the delivery
  // operations compare what watched feeds were told with them.
  std::vector<testing::FeedModel::Key> published;

 private:
  struct ExpiringMute {
    EntityId muter = 0, muted = 0;
    Micros expires_at = 0;
    bool merged = false;  // the actor was merged at read while in force
  };
  std::vector<ExpiringMute> expiring_mutes_;
  std::set<EntityId> inexact_readers_;
};

}  // namespace feedcore::fuzz

#endif  // FEEDCORE_FUZZ_SOCIAL_FUZZ_CONTEXT_H_
