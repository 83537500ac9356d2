// The name functions of the public enums (ChangeKindName, ReadOrderName,
// ...): each enumerator's name as its header spells it. Every switch lists
// each enumerator and has no `default:`, so that -Wswitch names the function
// a new enumerator must be added to. LeaderboardCapabilityName
// (src/contract/) and FsyncPolicyName
// (src/durability/durable_store.cc) live beside the code that uses them.
#include "feedcore/change_stream.h"
#include "feedcore/leaderboard.h"
#include "feedcore/options.h"
#include "feedcore/seasonal_leaderboard.h"

namespace feedcore {

const char* ChangeKindName(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kTimelinePut:
      return "kTimelinePut";
    case ChangeKind::kTimelineRemove:
      return "kTimelineRemove";
    case ChangeKind::kTimelineRemoveActor:
      return "kTimelineRemoveActor";
    case ChangeKind::kTimelineExpire:
      return "kTimelineExpire";
    case ChangeKind::kActivityStore:
      return "kActivityStore";
    case ChangeKind::kActivityRetract:
      return "kActivityRetract";
    case ChangeKind::kActivityExpire:
      return "kActivityExpire";
    case ChangeKind::kFollowerAdd:
      return "kFollowerAdd";
    case ChangeKind::kFollowerRemove:
      return "kFollowerRemove";
    case ChangeKind::kFollowingAdd:
      return "kFollowingAdd";
    case ChangeKind::kFollowingRemove:
      return "kFollowingRemove";
    case ChangeKind::kMergeAdd:
      return "kMergeAdd";
    case ChangeKind::kActorMode:
      return "kActorMode";
    case ChangeKind::kBoardCreate:
      return "kBoardCreate";
    case ChangeKind::kBoardDrop:
      return "kBoardDrop";
    case ChangeKind::kScoreSet:
      return "kScoreSet";
    case ChangeKind::kScoreRemove:
      return "kScoreRemove";
    case ChangeKind::kBoardClear:
      return "kBoardClear";
    case ChangeKind::kNotificationSeen:
      return "kNotificationSeen";
    case ChangeKind::kNotificationRead:
      return "kNotificationRead";
    case ChangeKind::kReadMarkerSet:
      return "kReadMarkerSet";
    case ChangeKind::kBlockAdd:
      return "kBlockAdd";
    case ChangeKind::kBlockRemove:
      return "kBlockRemove";
    case ChangeKind::kMuteAdd:
      return "kMuteAdd";
    case ChangeKind::kMuteRemove:
      return "kMuteRemove";
    case ChangeKind::kCountersSet:
      return "kCountersSet";
    case ChangeKind::kDormantFollowee:
      return "kDormantFollowee";
    case ChangeKind::kDormantFollower:
      return "kDormantFollower";
    case ChangeKind::kNameAssign:
      return "kNameAssign";
    case ChangeKind::kBoardRename:
      return "kBoardRename";
    case ChangeKind::kActivityEdit:
      return "kActivityEdit";
    case ChangeKind::kPinAdd:
      return "kPinAdd";
    case ChangeKind::kPinRemove:
      return "kPinRemove";
    case ChangeKind::kMentionAdd:
      return "kMentionAdd";
    case ChangeKind::kWriteGroupTag:
      return "kWriteGroupTag";
    case ChangeKind::kReactionAdd:
      return "kReactionAdd";
    case ChangeKind::kReactionRemove:
      return "kReactionRemove";
    case ChangeKind::kListSet:
      return "kListSet";
    case ChangeKind::kListDelete:
      return "kListDelete";
    case ChangeKind::kListMemberAdd:
      return "kListMemberAdd";
    case ChangeKind::kListMemberRemove:
      return "kListMemberRemove";
  }
  return "an unknown change kind";
}

const char* FeedTypeName(FeedType feed) {
  switch (feed) {
    case FeedType::kHome:
      return "kHome";
    case FeedType::kOwn:
      return "kOwn";
    case FeedType::kWorld:
      return "kWorld";
    case FeedType::kNotification:
      return "kNotification";
  }
  return "an unknown feed type";
}

const char* ActorModeName(ActorMode mode) {
  switch (mode) {
    case ActorMode::kCopied:
      return "kCopied";
    case ActorMode::kBecomingMerged:
      return "kBecomingMerged";
    case ActorMode::kMerged:
      return "kMerged";
  }
  return "an unknown actor mode";
}

const char* StreamPositionTypeName(StreamPosition::Type type) {
  switch (type) {
    case StreamPosition::Type::kTrimHorizon:
      return "kTrimHorizon";
    case StreamPosition::Type::kLatest:
      return "kLatest";
    case StreamPosition::Type::kAtSequence:
      return "kAtSequence";
    case StreamPosition::Type::kAfterSequence:
      return "kAfterSequence";
  }
  return "an unknown position type";
}

const char* ScoreOrderName(ScoreOrder order) {
  switch (order) {
    case ScoreOrder::kHigherFirst:
      return "kHigherFirst";
    case ScoreOrder::kLowerFirst:
      return "kLowerFirst";
  }
  return "an unknown score order";
}

const char* RankStyleName(RankStyle style) {
  switch (style) {
    case RankStyle::kUnique:
      return "kUnique";
    case RankStyle::kCompetition:
      return "kCompetition";
    case RankStyle::kDense:
      return "kDense";
  }
  return "an unknown rank style";
}

const char* TieBreakName(TieBreak tie_break) {
  switch (tie_break) {
    case TieBreak::kEarlierUpdateFirst:
      return "kEarlierUpdateFirst";
    case TieBreak::kLowerMemberFirst:
      return "kLowerMemberFirst";
  }
  return "an unknown tie-break";
}

const char* WriteOpName(WriteOp op) {
  switch (op) {
    case WriteOp::kSet:
      return "kSet";
    case WriteOp::kIncrement:
      return "kIncrement";
  }
  return "an unknown write op";
}

const char* WriteConditionName(WriteCondition condition) {
  switch (condition) {
    case WriteCondition::kAlways:
      return "kAlways";
    case WriteCondition::kIfAbsent:
      return "kIfAbsent";
    case WriteCondition::kIfPresent:
      return "kIfPresent";
    case WriteCondition::kIfBetter:
      return "kIfBetter";
    case WriteCondition::kIfWorse:
      return "kIfWorse";
    case WriteCondition::kIfPresentAndBetter:
      return "kIfPresentAndBetter";
    case WriteCondition::kIfPresentAndWorse:
      return "kIfPresentAndWorse";
  }
  return "an unknown write condition";
}

const char* WriteOutcomeName(WriteOutcome outcome) {
  switch (outcome) {
    case WriteOutcome::kAdded:
      return "kAdded";
    case WriteOutcome::kChanged:
      return "kChanged";
    case WriteOutcome::kUnchanged:
      return "kUnchanged";
    case WriteOutcome::kNotApplied:
      return "kNotApplied";
  }
  return "an unknown write outcome";
}

const char* LeaderboardOrderName(LeaderboardOrder order) {
  switch (order) {
    case LeaderboardOrder::kBestFirst:
      return "kBestFirst";
    case LeaderboardOrder::kWorstFirst:
      return "kWorstFirst";
  }
  return "an unknown leaderboard order";
}

const char* FanoutCompletionName(FanoutCompletion completion) {
  switch (completion) {
    case FanoutCompletion::kSynchronous:
      return "kSynchronous";
    case FanoutCompletion::kAsynchronous:
      return "kAsynchronous";
  }
  return "an unknown fan-out completion";
}

const char* ReadOrderName(ReadOrder order) {
  switch (order) {
    case ReadOrder::kNewestFirst:
      return "kNewestFirst";
    case ReadOrder::kOldestFirst:
      return "kOldestFirst";
  }
  return "an unknown read order";
}

const char* SeasonScheduleUnitName(SeasonSchedule::Unit unit) {
  switch (unit) {
    case SeasonSchedule::Unit::kHourly:
      return "kHourly";
    case SeasonSchedule::Unit::kDaily:
      return "kDaily";
    case SeasonSchedule::Unit::kWeekly:
      return "kWeekly";
    case SeasonSchedule::Unit::kMonthly:
      return "kMonthly";
    case SeasonSchedule::Unit::kFixed:
      return "kFixed";
  }
  return "an unknown schedule unit";
}

}  // namespace feedcore
