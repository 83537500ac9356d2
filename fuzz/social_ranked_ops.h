// The social sequence fuzz target's operations on activity counters and
// ranked reads: IncrementCounter and GetCounters of known, retracted,
// expired and unknown activities (zero deltas and overflows included), and
// ReadRanked walks with any formula, window and page size, kept open across
// other calls. Each answer is compared exactly with the reference model:
// entries, counters, the bits of each score and whether a cursor follows.
#ifndef FEEDCORE_FUZZ_SOCIAL_RANKED_OPS_H_
#define FEEDCORE_FUZZ_SOCIAL_RANKED_OPS_H_

#include <optional>
#include <vector>

#include "feedcore/social.h"
#include "feedcore/types.h"
#include "model/feed_model.h"
#include "social_fuzz_context.h"

namespace feedcore::fuzz {

class RankedOps {
 public:
  explicit RankedOps(SocialFuzzContext& c) : c_(c) {}

  void IncrementCounter();
  void GetCounters();
  // The first page of a new ranked walk.
  void ReadRanked();
  // The next page of an open ranked walk (or a new one).
  void ContinueRanked();
  // One of these calls with a bad argument: refused, nothing recorded.
  void Invalid();

 private:
  // A ranked walk kept open across other calls: the model's place in it
  // and the engine's cursor.
  struct RankedWalk {
    EntityId owner = 0;
    RankedReadOptions options;
    std::optional<testing::FeedModel::RankedPlace> place;
  };

  ActivityId AnyActivity();
  RankFormula DrawFormula();
  void ReadAndCompare(RankedWalk walk);

  SocialFuzzContext& c_;
  std::vector<RankedWalk> walks_;
};

}  // namespace feedcore::fuzz

#endif  // FEEDCORE_FUZZ_SOCIAL_RANKED_OPS_H_
