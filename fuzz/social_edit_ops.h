// The social sequence fuzz target's operations on edits and pins
// (EditsAndPins): EditActivity of known, retracted, expired and unknown
// activities by their actor or another, with payloads of any size; Pin and
// Unpin of own, other actors', retracted, expired, unknown and already
// pinned activities, bursts that pin past kMaxPinnedEntries; ReadPinned,
// hydrated or not; and edits followed by hydrated reads of the feeds that
// hold the activity. Each answer is compared exactly with the reference
// model, and each call's change records with the ones its answer implies.
#ifndef FEEDCORE_FUZZ_SOCIAL_EDIT_OPS_H_
#define FEEDCORE_FUZZ_SOCIAL_EDIT_OPS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "feedcore/feed_facets.h"
#include "feedcore/types.h"
#include "social_fuzz_context.h"

namespace feedcore::fuzz {

class EditOps {
 public:
  explicit EditOps(SocialFuzzContext& c)
      : c_(c), api_(*c.engine->edits_and_pins()) {}

  void EditActivity();
  void Pin();
  void Unpin();
  void ReadPinned();
  // Publishes more activities of one actor than it may pin, pinning each:
  // the pins past kMaxPinnedEntries are refused.
  void PinMany();
  // An edit, then hydrated reads of the own feed, the world feed and a
  // timeline at the activity's timestamp, and of its actor's pins.
  void EditAndRead();
  // EditActivity with a payload too large: refused, nothing recorded.
  void Invalid();

 private:
  // Edits in the engine and the model and compares the answers and the
  // records; returns whether the edit succeeded.
  bool EditAndCompare(EntityId actor, ActivityId id,
                      const std::string& payload);
  // Pins in both and compares the answers and the records.
  void PinAndCompare(EntityId owner, ActivityId id);
  // An (owner, activity) of a pin made earlier, if any; it may have ended.
  bool EarlierPin(EntityId& owner, ActivityId& id);
  void NotePin(EntityId owner, ActivityId id);
  // Compares `owner`'s pins with the model's at the clock's time.
  void ComparePinned(EntityId owner, bool hydrate) const;

  SocialFuzzContext& c_;
  EditsAndPins& api_;
  // Pins made, oldest first, a bounded number of them: Unpin and Pin draw
  // from them to reach pins that exist, expired or ended.
  std::vector<std::pair<EntityId, ActivityId>> pins_made_;
  size_t bursts_ = 0;
};

}  // namespace feedcore::fuzz

#endif  // FEEDCORE_FUZZ_SOCIAL_EDIT_OPS_H_
