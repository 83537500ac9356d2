// Tests of the public enums' name functions: each enumerator's name exactly
// as its header spells it, distinct names within one enum, and the fixed
// answer for a value that is no enumerator.
#include <doctest/doctest.h>

#include <cstdint>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "feedcore/change_stream.h"
#include "feedcore/durable_store.h"
#include "feedcore/feed_engine.h"
#include "feedcore/leaderboard.h"
#include "feedcore/options.h"
#include "feedcore/seasonal_leaderboard.h"

namespace feedcore {
namespace {

// Checks that `name_of` names each of `expected`'s values as listed, that
// the names are distinct, and that `out_of_range` (a value no enumerator
// has) gets `unknown`, which is no enumerator's name either.
template <typename Enum, typename NameOf>
void CheckNames(NameOf name_of,
                const std::vector<std::pair<Enum, std::string>>& expected,
                Enum out_of_range, const std::string& unknown) {
  std::set<std::string> names;
  // Not a structured binding: INFO captures its arguments in a lambda.
  for (const std::pair<Enum, std::string>& pair : expected) {
    const Enum value = pair.first;
    const std::string& name = pair.second;
    INFO("enumerator ", static_cast<int>(value), " (", name, ")");
    CHECK(std::string(name_of(value)) == name);
    names.insert(name_of(value));
  }
  CHECK(names.size() == expected.size());
  CHECK(std::string(name_of(out_of_range)) == unknown);
  CHECK(names.count(unknown) == 0);
}

template <typename Enum>
Enum Cast(int value) {
  return static_cast<Enum>(value);
}

TEST_CASE("ChangeKindName") {
  CheckNames<ChangeKind>(
      ChangeKindName,
      {{ChangeKind::kTimelinePut, "kTimelinePut"},
       {ChangeKind::kTimelineRemove, "kTimelineRemove"},
       {ChangeKind::kTimelineRemoveActor, "kTimelineRemoveActor"},
       {ChangeKind::kTimelineExpire, "kTimelineExpire"},
       {ChangeKind::kActivityStore, "kActivityStore"},
       {ChangeKind::kActivityRetract, "kActivityRetract"},
       {ChangeKind::kActivityExpire, "kActivityExpire"},
       {ChangeKind::kFollowerAdd, "kFollowerAdd"},
       {ChangeKind::kFollowerRemove, "kFollowerRemove"},
       {ChangeKind::kFollowingAdd, "kFollowingAdd"},
       {ChangeKind::kFollowingRemove, "kFollowingRemove"},
       {ChangeKind::kMergeAdd, "kMergeAdd"},
       {ChangeKind::kActorMode, "kActorMode"},
       {ChangeKind::kBoardCreate, "kBoardCreate"},
       {ChangeKind::kBoardDrop, "kBoardDrop"},
       {ChangeKind::kScoreSet, "kScoreSet"},
       {ChangeKind::kScoreRemove, "kScoreRemove"},
       {ChangeKind::kBoardClear, "kBoardClear"},
       {ChangeKind::kNotificationSeen, "kNotificationSeen"},
       {ChangeKind::kNotificationRead, "kNotificationRead"},
       {ChangeKind::kReadMarkerSet, "kReadMarkerSet"},
       {ChangeKind::kBlockAdd, "kBlockAdd"},
       {ChangeKind::kBlockRemove, "kBlockRemove"},
       {ChangeKind::kMuteAdd, "kMuteAdd"},
       {ChangeKind::kMuteRemove, "kMuteRemove"},
       {ChangeKind::kCountersSet, "kCountersSet"},
       {ChangeKind::kDormantFollowee, "kDormantFollowee"},
       {ChangeKind::kDormantFollower, "kDormantFollower"},
       {ChangeKind::kNameAssign, "kNameAssign"},
       {ChangeKind::kBoardRename, "kBoardRename"},
       {ChangeKind::kActivityEdit, "kActivityEdit"},
       {ChangeKind::kPinAdd, "kPinAdd"},
       {ChangeKind::kPinRemove, "kPinRemove"},
       {ChangeKind::kMentionAdd, "kMentionAdd"},
       {ChangeKind::kWriteGroupTag, "kWriteGroupTag"},
       {ChangeKind::kReactionAdd, "kReactionAdd"},
       {ChangeKind::kReactionRemove, "kReactionRemove"},
       {ChangeKind::kListSet, "kListSet"},
       {ChangeKind::kListDelete, "kListDelete"},
       {ChangeKind::kListMemberAdd, "kListMemberAdd"},
       {ChangeKind::kListMemberRemove, "kListMemberRemove"}},
      Cast<ChangeKind>(0), "an unknown change kind");
  // Past the last enumerator too (the kinds start at 1).
  CHECK(std::string(ChangeKindName(Cast<ChangeKind>(42))) ==
        "an unknown change kind");
}

TEST_CASE("FeedTypeName") {
  CheckNames<FeedType>(FeedTypeName,
                       {{FeedType::kHome, "kHome"},
                        {FeedType::kOwn, "kOwn"},
                        {FeedType::kWorld, "kWorld"},
                        {FeedType::kNotification, "kNotification"}},
                       Cast<FeedType>(4), "an unknown feed type");
}

TEST_CASE("ActorModeName") {
  CheckNames<ActorMode>(ActorModeName,
                        {{ActorMode::kCopied, "kCopied"},
                         {ActorMode::kBecomingMerged, "kBecomingMerged"},
                         {ActorMode::kMerged, "kMerged"}},
                        Cast<ActorMode>(3), "an unknown actor mode");
}

TEST_CASE("StreamPositionTypeName") {
  CheckNames<StreamPosition::Type>(
      StreamPositionTypeName,
      {{StreamPosition::Type::kTrimHorizon, "kTrimHorizon"},
       {StreamPosition::Type::kLatest, "kLatest"},
       {StreamPosition::Type::kAtSequence, "kAtSequence"},
       {StreamPosition::Type::kAfterSequence, "kAfterSequence"}},
      Cast<StreamPosition::Type>(4), "an unknown position type");
}

TEST_CASE("FsyncPolicyName") {
  // Named after Redis's appendfsync values, not the enumerators.
  CheckNames<FsyncPolicy>(FsyncPolicyName,
                          {{FsyncPolicy::kAlways, "always"},
                           {FsyncPolicy::kEverySecond, "everysec"},
                           {FsyncPolicy::kNever, "no"}},
                          Cast<FsyncPolicy>(3), "unknown");
}

TEST_CASE("ScoreOrderName") {
  CheckNames<ScoreOrder>(ScoreOrderName,
                         {{ScoreOrder::kHigherFirst, "kHigherFirst"},
                          {ScoreOrder::kLowerFirst, "kLowerFirst"}},
                         Cast<ScoreOrder>(2), "an unknown score order");
}

TEST_CASE("RankStyleName") {
  CheckNames<RankStyle>(RankStyleName,
                        {{RankStyle::kUnique, "kUnique"},
                         {RankStyle::kCompetition, "kCompetition"},
                         {RankStyle::kDense, "kDense"}},
                        Cast<RankStyle>(3), "an unknown rank style");
}

TEST_CASE("TieBreakName") {
  CheckNames<TieBreak>(TieBreakName,
                       {{TieBreak::kEarlierUpdateFirst, "kEarlierUpdateFirst"},
                        {TieBreak::kLowerMemberFirst, "kLowerMemberFirst"}},
                       Cast<TieBreak>(2), "an unknown tie-break");
}

TEST_CASE("WriteOpName") {
  CheckNames<WriteOp>(
      WriteOpName,
      {{WriteOp::kSet, "kSet"}, {WriteOp::kIncrement, "kIncrement"}},
      Cast<WriteOp>(2), "an unknown write op");
}

TEST_CASE("WriteConditionName") {
  CheckNames<WriteCondition>(
      WriteConditionName,
      {{WriteCondition::kAlways, "kAlways"},
       {WriteCondition::kIfAbsent, "kIfAbsent"},
       {WriteCondition::kIfPresent, "kIfPresent"},
       {WriteCondition::kIfBetter, "kIfBetter"},
       {WriteCondition::kIfWorse, "kIfWorse"},
       {WriteCondition::kIfPresentAndBetter, "kIfPresentAndBetter"},
       {WriteCondition::kIfPresentAndWorse, "kIfPresentAndWorse"}},
      Cast<WriteCondition>(7), "an unknown write condition");
}

TEST_CASE("WriteOutcomeName") {
  CheckNames<WriteOutcome>(WriteOutcomeName,
                           {{WriteOutcome::kAdded, "kAdded"},
                            {WriteOutcome::kChanged, "kChanged"},
                            {WriteOutcome::kUnchanged, "kUnchanged"},
                            {WriteOutcome::kNotApplied, "kNotApplied"}},
                           Cast<WriteOutcome>(4), "an unknown write outcome");
}

TEST_CASE("LeaderboardOrderName") {
  CheckNames<LeaderboardOrder>(LeaderboardOrderName,
                               {{LeaderboardOrder::kBestFirst, "kBestFirst"},
                                {LeaderboardOrder::kWorstFirst, "kWorstFirst"}},
                               Cast<LeaderboardOrder>(2),
                               "an unknown leaderboard order");
}

TEST_CASE("LeaderboardCapabilityName") {
  CheckNames<LeaderboardCapability>(
      LeaderboardCapabilityName,
      {{LeaderboardCapability::kEarlierUpdateFirst, "kEarlierUpdateFirst"},
       {LeaderboardCapability::kBoardSnapshotReads, "kBoardSnapshotReads"},
       {LeaderboardCapability::kDenseRanks, "kDenseRanks"}},
      Cast<LeaderboardCapability>(3), "an unknown capability");
  CHECK(std::size(kAllLeaderboardCapabilities) == 3);
}

TEST_CASE("FanoutCompletionName") {
  CheckNames<FanoutCompletion>(
      FanoutCompletionName,
      {{FanoutCompletion::kSynchronous, "kSynchronous"},
       {FanoutCompletion::kAsynchronous, "kAsynchronous"}},
      Cast<FanoutCompletion>(2), "an unknown fan-out completion");
}

TEST_CASE("ReadOrderName") {
  CheckNames<ReadOrder>(ReadOrderName,
                        {{ReadOrder::kNewestFirst, "kNewestFirst"},
                         {ReadOrder::kOldestFirst, "kOldestFirst"}},
                        Cast<ReadOrder>(2), "an unknown read order");
}

TEST_CASE("SeasonScheduleUnitName") {
  CheckNames<SeasonSchedule::Unit>(
      SeasonScheduleUnitName,
      {{SeasonSchedule::Unit::kHourly, "kHourly"},
       {SeasonSchedule::Unit::kDaily, "kDaily"},
       {SeasonSchedule::Unit::kWeekly, "kWeekly"},
       {SeasonSchedule::Unit::kMonthly, "kMonthly"},
       {SeasonSchedule::Unit::kFixed, "kFixed"}},
      Cast<SeasonSchedule::Unit>(5), "an unknown schedule unit");
}

}  // namespace
}  // namespace feedcore
