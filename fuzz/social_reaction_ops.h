// The social sequence fuzz target's operations on reactions
// (FeedReactions): React and Unreact of known, retracted, expired and
// unknown activities with kinds in range or not, with notices whose ids
// are fresh, taken or the reacted activity's own; GetOwnReactions of sets
// of ids; and ReadReactors walked to the end with any page size. Each
// answer is compared exactly with the reference model, and a call that
// changes nothing must record nothing.
#ifndef FEEDCORE_FUZZ_SOCIAL_REACTION_OPS_H_
#define FEEDCORE_FUZZ_SOCIAL_REACTION_OPS_H_

#include "feedcore/feed_facets.h"
#include "feedcore/social.h"
#include "feedcore/types.h"
#include "social_fuzz_context.h"

namespace feedcore::fuzz {

class ReactionOps {
 public:
  explicit ReactionOps(SocialFuzzContext& c)
      : c_(c), api_(*c.engine->reactions()) {}

  void React();
  void Unreact();
  void GetOwnReactions();
  void ReadReactors();

 private:
  // A known activity (stored, retracted or expired), or now and then an
  // id never published.
  ActivityId AnyActivity();
  // A kind, one in eight out of range.
  ReactionKind AnyKind();

  SocialFuzzContext& c_;
  FeedReactions& api_;
};

}  // namespace feedcore::fuzz

#endif  // FEEDCORE_FUZZ_SOCIAL_REACTION_OPS_H_
