// Model-based test of the social calls: long random sequences of Follow,
// Unfollow, Publish (synchronous, and asynchronous followed later by
// WaitForFanout), Retract, ReadTimeline, ReadOwn and ReadWorld (random
// limits, orders, windows, hydration, and paging walks left open across
// other operations), ReadGroups (grouped timeline walks, also left open),
// CountNewer, read markers (SetReadMarker/GetReadMarker), Followers/
// Following, Block, Unblock, Mute (notifications; expiry only where
// nothing merges at read, see DoRelation) and Unmute (back-fill) with the
// Blocked and Muted lists,
// clock advances and EvictExpired, each compared exactly with the
// reference model (model/feed_model.h).
//
// Every sequence runs on a group of engines that differ only in
// hybrid_fanout_threshold (0 = off, 1, 3, 6, and one never reached), each
// with its own model instance, and every engine must return the pages of
// an engine that copies everything: the model knows nothing of merging for
// what it answers, and every engine of a group returns identical pages
// (entries and cursors), counts and groups for every read, whatever its
// threshold. This is the differential test of the exact hybrid
// (feed_engine.h). In the configurations with removals (the clock then
// advances) the group has two more engines, at thresholds 0 and 3, with
// inactive readers (inactive_after = kInactiveAfter): between the other
// calls ReleaseInactiveReaders makes their idle readers dormant, and their
// reads, which rebuild them first, must return the same pages.
//
// One more configuration runs engines that differ only in inactive_after
// (off, kInactiveAfter and half of it), none merging at read, at a cap of
// 6 that timelines reach, with unfollows, blocks and mutes that expire by
// the clock, but no retracts and no entry that expires: the sequences
// where a dormant reader's merged view over its cap may differ
// (feed_engine.h). There a reader that mutes a followee, goes idle and is
// made dormant while the followee publishes must read, and count unread
// (GetReadMarker answers from the merge, without a rebuild), what a
// materialized reader would.
//
// Two configurations (complete back-fill, and the inactive readers) set a
// repost window and publish reposts of recent activities: every engine of
// the group, copied, merged or rebuilt, must hide the reposts the model
// hides. All but the first make lists of accounts, exclusive ones too, and
// read them (DoAccountLists), so home reads leave their accounts out.
//
// The model:
//   * who follows whom; which actors are merged at read (an actor becomes
//     so, for good, when a Follow leaves it with more followers than the
//     threshold), only for what calls report: PublishResult::merged_at_read
//     and fanned_out, FollowResult::backfilled (0 for a merged followee);
//   * activities (actor, ts, expiry, payload, group key, retracted), kept
//     until eviction reclaims them, tombstones included;
//   * each reader's timeline as copies leave it: a publish copies the
//     activity to every current follower; a Follow copies the newest K
//     visible activities of the followee's own feed; Unfollow drops the
//     reader's copies of that actor unless it keeps the history; Retract
//     drops every copy (kept histories included); eviction drops expired
//     ones; the cap trims the oldest.
// Results that count copies an engine holds (backfilled at a cap,
// UnfollowResult::removed of a merged followee, EvictExpired's count,
// Stats' entries) are compared only where no actor is merged and no
// reader is dormant; fanned_out of an engine with dormant readers is at
// most the model's.
//
// Back-fill counts are small and random (0, 1, 2..7, the engine default 3,
// or all) in the `partial back-fill` configurations, so followers of a
// merged actor see less than its whole own feed (each configuration checks
// that this happened), and timestamps are often out of order, so merged
// actors publish below their followers' merge boundaries. Two
// configurations use a small max_timeline_length that timelines reach
// (checked by Stats' trimmed count) without removals: there sequences do
// not unfollow, retract, block, mute, advance the clock or evict, since a
// merged view over its cap that then loses entries is the one sequence where a
// merged engine may differ (feed_engine.h). The others never reach the cap and
// run every call.

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
// another page size. Every engine of a group returns
// identical group pages and cursors. The engine answers from the
// timeline's group index, or by grouping the merged feed when the reader
// follows merged-at-read actors or holds expired entries not yet
// reclaimed; every configuration checks that its sequences read groups in
// all three states, and that some walk met a group again after its newest
// entry went.
//
// Seeds are fixed and printed on failure; FEEDCORE_MODEL_SEED overrides the
// seed and FEEDCORE_MODEL_OPS the number of operations per configuration;
// FEEDCORE_MODEL_TRACE prints every operation to stderr.

#include <doctest/doctest.h>

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

int Ops(int fallback) { return static_cast<int>(testing::ModelOps(fallback)); }

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
  INFO("lists read " << total.lists_read
                     << ", home reads with excluded accounts "
                     << total.home_excluded);
  // The inactive-readers configuration merges nothing at read, retracts
  // nothing and lets no entry expire.
  const bool merges = !config.inactive_only;
  const bool expiry = config.removals && !config.inactive_only;
  if (merges) CHECK(total.merged_actors > 0);
  // Followers of merged actors that see less than the whole own feed.
  if (merges && !config.complete_backfill) {
    CHECK(total.hidden_by_boundary > 0);
  }
  if (config.cap != social_model::kCap) CHECK(total.trimmed > 0);
  CHECK(never_merged == 0);
  CHECK(total.async_publishes > 0);
  if (expiry) CHECK(total.retracted > 0);
  if (config.removals) CHECK(total.made_dormant > 0);
  if (config.removals) CHECK(total.removed_on_unfollow > 0);
  if (config.inactive_only) CHECK(total.expiring_mutes > 0);
  CHECK(total.backfilled > 0);
  CHECK(total.walks_finished > 0);
  if (expiry) CHECK(total.evicted > 0);
  if (expiry) CHECK(total.hidden_expired > 0);
  CHECK(total.idempotent > 0);
  CHECK(total.conflicts > 0);
  CHECK(total.group_walks_finished > 0);
  CHECK(total.shared_groups > 0);
  CHECK(total.ungrouped > 0);
  // Groups that outgrow their lists are rare in timelines of six with
  // nothing expiring: the other configurations check them.
  if (!config.inactive_only) {
    CHECK(total.actors_bounded > 0);
    CHECK(total.entries_bounded > 0);
  }
  // A repost window groups at read time.
  if (config.repost_window == 0) CHECK(total.indexed_groups > 0);
  if (merges) CHECK(total.merged_groups > 0);
  if (expiry) CHECK(total.expired_groups > 0);
  if (expiry) CHECK(total.groups_shown_again > 0);
  CHECK(total.markers_moved > 0);
  CHECK(total.markers_unread > 0);
  CHECK(total.mentions_counted > 0);
  CHECK(total.reactions_changed > 0);
  CHECK(total.reactors_paged > 0);
  if (config.repost_window != 0) CHECK(total.reposts_hidden > 0);
  if (config.account_lists) {
    CHECK(total.lists_read > 0);
    CHECK(total.home_excluded > 0);
  }
  // Blocks, mutes and notices run only where removals do.
  if (config.removals) {
    CHECK(total.notices > 0);
    CHECK(total.hidden_removed > 0);
    CHECK(total.hidden_skipped > 0);
    CHECK(total.follows_refused > 0);
    CHECK(total.restored > 0);
  }
}

// Without lists: these sequences are the ones whose grouped walks see a
// group move down and show again; the other configurations make lists.
TEST_CASE("social model: partial back-fill, every engine against its model") {
  Config config{"partial back-fill, 4 shards, pool",
                false,
                social_model::kCap,
                true,
                4,
                1,
                2,
                9};
  config.account_lists = false;
  RunConfig(config, 20000);
}

TEST_CASE("social model: partial back-fill, small cap, 8 shards, inline") {
  RunConfig({"partial back-fill, cap 6, 8 shards, inline", false, 6, false, 8,
             0, 1, 12},
            20000);
}

// With a repost window: copied, merged and rebuilt timelines hide the
// same reposts.
TEST_CASE("social model: complete back-fill, every threshold reads alike") {
  Config config{"complete back-fill, reposts, 4 shards, pool",
                true,
                social_model::kCap,
                true,
                4,
                2,
                2,
                9};
  config.repost_window = 3;
  RunConfig(config, 20000);
}

// Engines that differ only in inactive_after, at a cap that timelines
// reach, with mutes that expire, unfollows and blocks: a dormant reader's
// pages, and the unread counts its merge answers before a rebuild, are
// those of a reader that stays materialized.
TEST_CASE("social model: inactive readers at a small cap, expiring mutes") {
  Config config{
      "inactive readers, cap 6, 4 shards, pool", false, 6, true, 4, 1, 2, 7};
  config.inactive_only = true;
  config.repost_window = 2;
  RunConfig(config, 8000);
}

TEST_CASE(
    "social model: partial back-fill, small cap, one shard, few entities") {
  RunConfig(
      {"partial back-fill, cap 9, 1 shard, pool", false, 9, false, 1, 1, 1, 5},
      20000);
}

}  // namespace
}  // namespace feedcore
