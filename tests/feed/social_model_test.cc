// Model-based test of the social calls: long random sequences of Follow,
// Unfollow, Publish (synchronous, and asynchronous followed later by
// WaitForFanout), Retract, ReadTimeline, ReadOwn and ReadWorld (random
// limits, orders, windows, hydration, and paging walks left open across
// other operations), ReadGroups (grouped timeline walks, also left open),
// CountNewer, Followers/Following, Block, Unblock, Mute (notifications,
// expiry) and Unmute (back-fill) with the Blocked and Muted lists, clock
// advances and EvictExpired, each compared exactly with the reference
// model (model/feed_model.h).
//
// Every sequence runs on a group of engines that differ only in
// hybrid_fanout_threshold (0 = off, 1, 3, 6, and one never reached), each
// with its own model instance, so every engine is compared page by page
// with a model that knows which actors it merges at read.
//
// The model:
//   * who follows whom; which actors are merged at read (an actor becomes
//     so, for good, when a Follow leaves it with more followers than the
//     threshold; that follower gets no back-fill);
//   * activities (actor, ts, expiry, payload, group key, retracted), kept
//     until eviction reclaims them, tombstones included;
//   * each reader's materialized copies: a publish copies the activity to
//     every current follower unless the actor is merged at read; a Follow
//     of a copied actor copies the newest K visible activities of the
//     actor's own feed; Unfollow drops the reader's copies of that actor;
//     Retract drops every copy; eviction drops expired ones.
//   * a reader's timeline: its visible copies plus, for every merged actor
//     it follows, that actor's visible activities (the merged own feed).
// Caps (max_timeline_length, world_timeline_length) are far above anything
// a sequence reaches, so the model never trims; the back-fill count and
// EvictExpired budgets are chosen so that the model knows exactly what each
// call copies or reclaims.
//
// "Changing the threshold never changes what a reader sees": a reader of a
// merged actor sees its whole own feed, a reader of a copied actor what
// was delivered or back-filled. The two agree when the back-fill copies
// everything the actor has (and nothing is trimmed). Configurations marked
// `complete_backfill` follow with a back-fill count above any actor's
// number of activities, and there every engine of the group must return
// identical pages (entries and cursors) for every read, whatever its
// threshold; the other configurations use small random back-fill counts,
// where the engines legitimately differ and each is held to its own model.
//
// Grouped reads: every engine aggregates, with a group key function of the
// test's own (the default key is a hash private to the engine) so that the
// model knows every entry's key and flat reads compare it too. Activities
// get a verb and an object from a small range and a short time bucket, so
// groups of several activities form and outgrow the small actor and entry
// lists, while activities with neither verb nor object stay ungrouped.
// ReadGroups walks of a reader's timeline (random limits) are left open
// across other operations like the flat walks: a group cursor names the
// place (newest entry) of the last group returned, so the next page is
// exactly the groups of the reader's current visible timeline placed below
// it. The model groups its expected timeline with ReferenceGroups
// (model/feed_model.h) and every page is compared exactly, groups and
// whether a cursor follows; a group that gained an activity has moved above
// the cursor and is not expected again, one whose newest entry went may
// show again. Some new walks are also paged at once to the end with
// another page size. With complete back-fill every engine returns
// identical group pages and cursors. The engine answers from the
// timeline's group index, or by grouping the merged feed when the reader
// follows merged-at-read actors or holds expired entries not yet
// reclaimed; every configuration checks that its sequences read groups in
// all three states, and that some walk met a group again after its newest
// entry went.
//
// Seeds are fixed and printed on failure; FEEDCORE_MODEL_SEED overrides the
// seed and FEEDCORE_MODEL_OPS the number of operations per
// configuration.#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "feed/social_model_runner.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using social_model::Config;
using social_model::Runner;

std::vector<uint64_t> Seeds() {
  const uint64_t env = testing::EnvU64("FEEDCORE_MODEL_SEED", 0);
  if (env != 0) return {env};
  return {20240611, 7};
}

int Ops(int fallback) {
  return static_cast<int>(testing::EnvU64("FEEDCORE_MODEL_OPS", fallback));
}

void RunConfig(const Config& config, int default_ops) {
  Runner::Coverage total;
  size_t never_merged = 0;
  for (const uint64_t seed : Seeds()) {
    INFO("config " << config.name << " seed " << seed
                   << " (FEEDCORE_MODEL_SEED=" << seed << " reproduces it)");
    Runner runner(config, seed);
    runner.Run(Ops(default_ops));
    total.Add(runner.coverage());
    never_merged += runner.never_hybrid_merged();
  }
  // The sequences reached what they exist to test.
  INFO("config " << config.name);
  CHECK(total.merged_actors > 0);
  CHECK(never_merged == 0);
  CHECK(total.async_publishes > 0);
  CHECK(total.retracted > 0);
  CHECK(total.removed_on_unfollow > 0);
  CHECK(total.backfilled > 0);
  CHECK(total.walks_finished > 0);
  CHECK(total.evicted > 0);
  CHECK(total.hidden_expired > 0);
  CHECK(total.idempotent > 0);
  CHECK(total.conflicts > 0);
  CHECK(total.group_walks_finished > 0);
  CHECK(total.shared_groups > 0);
  CHECK(total.ungrouped > 0);
  CHECK(total.actors_bounded > 0);
  CHECK(total.entries_bounded > 0);
  CHECK(total.indexed_groups > 0);
  CHECK(total.merged_groups > 0);
  CHECK(total.expired_groups > 0);
  CHECK(total.groups_shown_again > 0);
  CHECK(total.hidden_removed > 0);
  CHECK(total.hidden_skipped > 0);
  CHECK(total.follows_refused > 0);
  CHECK(total.restored > 0);
}

TEST_CASE("social model: partial back-fill, every engine against its model") {
  RunConfig({"partial back-fill, 4 shards, pool", false, 4, 1, 2, 9}, 20000);
}

TEST_CASE("social model: partial back-fill, 8 shards, inline fan-out") {
  RunConfig({"partial back-fill, 8 shards, inline", false, 8, 0, 1, 12}, 20000);
}

TEST_CASE("social model: complete back-fill, every threshold reads alike") {
  RunConfig({"complete back-fill, 4 shards, pool", true, 4, 2, 2, 9}, 20000);
}

TEST_CASE("social model: complete back-fill, one shard, few entities") {
  RunConfig({"complete back-fill, 1 shard, pool", true, 1, 1, 1, 5}, 20000);
}

}  // namespace
}  // namespace feedcore
