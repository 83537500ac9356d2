// The social sequence fuzz target's operations on relations between
// entities beyond Follow and Unfollow: Block, Unblock, Mute, Unmute, the
// Blocked and Muted lists paged with cursors kept across other calls,
// FollowMany and UnfollowMany, and Unfollow keeping the history. Each
// answer is compared with the reference model where the social model test
// (tests/feed/social_model_runner.cc) compares it.
#ifndef FEEDCORE_FUZZ_SOCIAL_RELATION_OPS_H_
#define FEEDCORE_FUZZ_SOCIAL_RELATION_OPS_H_

#include <string>
#include <vector>

#include "feedcore/social.h"
#include "feedcore/types.h"
#include "social_fuzz_context.h"

namespace feedcore::fuzz {

class RelationOps {
 public:
  explicit RelationOps(SocialFuzzContext& c) : c_(c) {}

  void Block();
  void Unblock();
  void Mute();
  void Unmute();
  // The next page of an open Blocked or Muted walk, or the first of a new
  // one.
  void ListPage();
  void FollowMany();
  void UnfollowMany();
  void UnfollowKeepingHistory();
  // One of these calls with a bad argument: refused, nothing recorded.
  void Invalid();

 private:
  // A walk of a Blocked or Muted list, kept open across other calls.
  struct ListWalk {
    bool muted = false;
    EntityId user = 0;
    std::string cursor;
    EntityId last = 0;
  };

  // Compares a relation call's result with the model's.
  void CheckRelation(const absl::StatusOr<RelationResult>& got,
                     const RelationResult& want) const;
  // Unmute or Unblock, with or without back-fill.
  void Restore(bool unmute);
  // Pairs for a batch call: 0..6 of them, repeats and, when
  // `self_pair`, one self-pair among them.
  std::vector<FollowPair> DrawPairs(bool self_pair);
  void ReadListPage(ListWalk walk, bool first);
  // After an Unfollow that kept the history of `followee`.
  void NoteHistoryKept(EntityId followee, const UnfollowResult& result);

  SocialFuzzContext& c_;
  std::vector<ListWalk> list_walks_;
};

}  // namespace feedcore::fuzz

#endif  // FEEDCORE_FUZZ_SOCIAL_RELATION_OPS_H_
