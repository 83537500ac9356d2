// The social sequence fuzz target's operations on lists of accounts
// (FeedLists): SetList (exclusive or not, ids and names in range or not),
// DeleteList, AddToList and RemoveFromList of any owner's few lists, each
// answer compared with the reference model and a failed call appending
// nothing to the stream; Lists, ListMembers and ReadList walks in pages of
// any size, order and kinds, compared with the model. Exclusive lists
// change what every home read of the target shows, which its other reads
// compare.
#ifndef FEEDCORE_FUZZ_SOCIAL_LIST_OPS_H_
#define FEEDCORE_FUZZ_SOCIAL_LIST_OPS_H_

#include "feedcore/feed_facets.h"
#include "social_fuzz_context.h"

namespace feedcore::fuzz {

class ListOps {
 public:
  explicit ListOps(SocialFuzzContext& c) : c_(c), api_(*c.engine->lists()) {}

  void Write();
  void Read();

 private:
  SocialFuzzContext& c_;
  FeedLists& api_;
};

}  // namespace feedcore::fuzz

#endif  // FEEDCORE_FUZZ_SOCIAL_LIST_OPS_H_
