#include "social_edit_ops.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "feed_model_checks.h"
#include "feedcore/change_stream.h"
#include "feedcore/feed_engine.h"
#include "feedcore/social.h"
#include "fuzz_check.h"
#include "model/feed_model.h"

namespace feedcore::fuzz {

namespace {

constexpr size_t kMaxPinsMade = 64;
// A burst publishes over fifty activities: a few per input are enough to
// reach the limit, and more only slow the input down.
constexpr size_t kMaxBursts = 3;

// The records appended from `sequence` on.
std::vector<ChangeRecordPtr> RecordsSince(const SocialFuzzContext& c,
                                          uint64_t sequence) {
  std::unique_ptr<ChangeReader> reader =
      c.stream->NewReader(StreamPosition::AtSequence(sequence)).value();
  std::vector<ChangeRecordPtr> records;
  for (;;) {
    std::vector<ChangeRecordPtr> batch = reader->Read(1000).value();
    if (batch.empty()) return records;
    records.insert(records.end(), std::make_move_iterator(batch.begin()),
                   std::make_move_iterator(batch.end()));
  }
}

// Every pin the model holds for `owner`, most recent first, expired ones
// included: read at the earliest time, no pin has expired yet.
std::vector<StoredEntry> AllPins(const SocialFuzzContext& c, EntityId owner) {
  return c.model.Pinned(owner, std::numeric_limits<Micros>::min(),
                        /*hydrate=*/false);
}

void CheckPinRecord(const ChangeRecord& record, ChangeKind kind, EntityId owner,
                    const StoredEntry& pin) {
  FUZZ_CHECK_DETAIL(
      record.kind == kind,
      std::fprintf(stderr, "record %llu is %s, expected %s\n",
                   static_cast<unsigned long long>(record.sequence),
                   ChangeKindName(record.kind), ChangeKindName(kind)));
  FUZZ_CHECK(record.entity == owner);
  FUZZ_CHECK_DETAIL(
      record.entry.activity_id == pin.activity_id,
      std::fprintf(stderr, "%s of activity %llu, model %llu\n",
                   ChangeKindName(kind),
                   static_cast<unsigned long long>(record.entry.activity_id),
                   static_cast<unsigned long long>(pin.activity_id)));
  FUZZ_CHECK(record.entry.ts == pin.ts);
  FUZZ_CHECK(record.entry.actor == owner);
  FUZZ_CHECK(record.entry.expires_at == pin.expires_at);
}

// A known activity (stored, retracted or expired) and its actor, or now and
// then an id never published with any entity.
ActivityId AnyActivity(SocialFuzzContext& c, EntityId& actor) {
  if (c.in.Below(4) != 0) {
    if (auto known = c.Known()) {
      actor = known->second.actor;
      return known->first;
    }
  }
  actor = c.Entity();
  return c.next_id + 1 + c.in.Below(3);
}

}  // namespace

bool EditOps::EditAndCompare(EntityId actor, ActivityId id,
                             const std::string& payload) {
  const uint64_t records = c_.Records();
  const absl::StatusOr<Micros> want =
      c_.model.EditActivity(actor, id, payload, c_.Now());
  const absl::StatusOr<Micros> got = api_.EditActivity(actor, id, payload);
  if (!c_.SameOutcome(got.status(), want.status(), records)) return false;
  FUZZ_CHECK(*got == *want);
  // One record, with the new payload and the edit's time, however many
  // feeds hold the activity.
  const std::vector<ChangeRecordPtr> logged = RecordsSince(c_, records);
  FUZZ_CHECK_DETAIL(
      logged.size() == 1,
      std::fprintf(stderr, "an edit wrote %zu records\n", logged.size()));
  const ChangeRecord& record = *logged.front();
  FUZZ_CHECK(record.kind == ChangeKind::kActivityEdit);
  FUZZ_CHECK(record.entry.activity_id == id);
  FUZZ_CHECK(record.entry.payload == payload);
  FUZZ_CHECK(record.entry.edited_at == *got);
  return true;
}

void EditOps::EditActivity() {
  EntityId actor = 0;
  const ActivityId id = AnyActivity(c_, actor);
  if (c_.in.Below(4) == 0) actor = actor % c_.entities + 1;  // not its actor
  const std::string payload =
      c_.in.Below(8) == 0 ? std::string(kMaxPayload + 1 + c_.in.Below(3), 'e')
                          : c_.in.Bytes(kMaxPayload);
  EditAndCompare(actor, id, payload);
}

void EditOps::PinAndCompare(EntityId owner, ActivityId id) {
  const Micros now = c_.Now();
  std::vector<StoredEntry> expired = AllPins(c_, owner);
  std::erase_if(expired,
                [now](const StoredEntry& pin) { return now < pin.expires_at; });
  const uint64_t records = c_.Records();
  const absl::StatusOr<bool> want = c_.model.Pin(owner, id, now);
  const absl::StatusOr<bool> got = api_.Pin(owner, id);
  // A refused Pin records nothing: NotFound comes before the expired pins
  // are dropped, and FailedPrecondition only when none was dropped (the
  // owner holds at most kMaxPinnedEntries pins, expired ones included, so
  // a drop leaves room).
  if (!c_.SameOutcome(got.status(), want.status(), records)) return;
  FUZZ_CHECK(*got == *want);
  // Pin ends the owner's expired pins before it looks for the activity,
  // and records each end, also when it then answers false (pinned
  // already): the records are those ends, in the pins' order, and the new
  // pin's when there is one.
  const std::vector<ChangeRecordPtr> logged = RecordsSince(c_, records);
  FUZZ_CHECK_DETAIL(
      logged.size() == expired.size() + (*got ? 1 : 0),
      std::fprintf(stderr, "Pin (%s) wrote %zu records; %zu expired pins\n",
                   *got ? "true" : "false", logged.size(), expired.size()));
  for (size_t i = 0; i < expired.size(); ++i) {
    CheckPinRecord(*logged[i], ChangeKind::kPinRemove, owner, expired[i]);
  }
  if (!*got) return;
  const StoredEntry pinned = AllPins(c_, owner).front();
  FUZZ_CHECK(pinned.activity_id == id);
  CheckPinRecord(*logged.back(), ChangeKind::kPinAdd, owner, pinned);
  NotePin(owner, id);
}

bool EditOps::EarlierPin(EntityId& owner, ActivityId& id) {
  if (pins_made_.empty()) return false;
  std::tie(owner, id) = pins_made_[c_.in.Below(pins_made_.size())];
  return true;
}

void EditOps::NotePin(EntityId owner, ActivityId id) {
  if (pins_made_.size() >= kMaxPinsMade) pins_made_.erase(pins_made_.begin());
  pins_made_.emplace_back(owner, id);
}

void EditOps::Pin() {
  EntityId owner = 0;
  ActivityId id = 0;
  switch (c_.in.Below(8)) {
    case 0:  // pinned before: false while the pin lasts
      if (!EarlierPin(owner, id)) id = AnyActivity(c_, owner);
      break;
    case 1:  // another actor's
      id = AnyActivity(c_, owner);
      owner = owner % c_.entities + 1;
      break;
    default:
      id = AnyActivity(c_, owner);
      break;
  }
  PinAndCompare(owner, id);
}

void EditOps::Unpin() {
  EntityId owner = 0;
  ActivityId id = 0;
  if (c_.in.Below(4) == 0 || !EarlierPin(owner, id)) {
    id = AnyActivity(c_, owner);
  }
  const std::vector<StoredEntry> held = AllPins(c_, owner);
  const auto pin =
      std::find_if(held.begin(), held.end(),
                   [id](const StoredEntry& p) { return p.activity_id == id; });
  const uint64_t records = c_.Records();
  const bool want = c_.model.Unpin(owner, id);
  FUZZ_CHECK(want == (pin != held.end()));
  const absl::StatusOr<bool> got = api_.Unpin(owner, id);
  FUZZ_CHECK_DETAIL(got.ok(), std::fprintf(stderr, "status: %s\n",
                                           got.status().ToString().c_str()));
  FUZZ_CHECK(*got == want);
  // An expired pin ends as a visible one does.
  const std::vector<ChangeRecordPtr> logged = RecordsSince(c_, records);
  FUZZ_CHECK_DETAIL(logged.size() == (want ? 1u : 0u),
                    std::fprintf(stderr, "Unpin (%s) wrote %zu records\n",
                                 want ? "true" : "false", logged.size()));
  if (want)
    CheckPinRecord(*logged.front(), ChangeKind::kPinRemove, owner, *pin);
}

void EditOps::ComparePinned(EntityId owner, bool hydrate) const {
  const uint64_t records = c_.Records();
  const absl::StatusOr<std::vector<StoredEntry>> got =
      api_.ReadPinned(owner, hydrate);
  FUZZ_CHECK(got.ok());
  const std::vector<StoredEntry> want =
      c_.model.Pinned(owner, c_.Now(), hydrate);
  FUZZ_CHECK_DETAIL(
      *got == want,
      std::fprintf(stderr, "%zu pins of %llu (hydrate %d), model %zu\n",
                   got->size(), static_cast<unsigned long long>(owner),
                   hydrate ? 1 : 0, want.size()));
  FUZZ_CHECK(c_.Records() == records);
}

void EditOps::ReadPinned() {
  const EntityId owner = c_.Entity();
  ComparePinned(owner, c_.in.Bool());
}

void EditOps::PinMany() {
  if (bursts_ >= kMaxBursts) return Pin();
  ++bursts_;
  const EntityId owner = c_.Entity();
  const size_t n = kMaxPinnedEntries + 1 + c_.in.Below(3);
  for (size_t i = 0; i < n; ++i) {
    Activity a;
    a.id = ++c_.next_id;
    a.actor = owner;
    a.ts = c_.head;
    a.payload = "p";
    // A few expire early, so that a later Pin of a full owner finds
    // expired pins to drop.
    a.ttl = c_.in.Below(4) == 0 ? 1 + static_cast<Micros>(c_.in.Below(200)) : 0;
    const uint64_t records = c_.Records();
    const absl::StatusOr<PublishResult> want = c_.model.Publish(a, c_.Now());
    const absl::StatusOr<PublishResult> got = c_.engine->Publish(a);
    if (!c_.SameOutcome(got.status(), want.status(), records)) continue;
    FUZZ_CHECK(got->created && want->created);
    c_.published.push_back({a.ts, a.id});
    PinAndCompare(owner, a.id);
  }
}

void EditOps::EditAndRead() {
  const auto known = c_.Known();
  if (!known.has_value()) return EditActivity();
  const ActivityId id = known->first;
  const testing::FeedModel::Activity& activity = known->second;
  EditAndCompare(activity.actor, id, c_.in.Bytes(kMaxPayload));
  ReadOptions r;
  r.limit = c_.options.max_page_size;
  r.hydrate = true;
  // First pages only, of the window at the activity's timestamp; none is
  // kept open.
  FeedWalks reads;
  const EntityId reader = c_.Entity();
  const std::pair<testing::Feed, EntityId> feeds[] = {
      {testing::Feed::kOwn, activity.actor},
      {testing::Feed::kWorld, 0},
      {testing::Feed::kTimeline, reader}};
  for (const auto& [feed, owner] : feeds) {
    if (feed == testing::Feed::kTimeline && !c_.Comparable(owner)) continue;
    Walk walk;
    walk.feed = feed;
    walk.owner = owner;
    walk.order =
        c_.in.Bool() ? ReadOrder::kOldestFirst : ReadOrder::kNewestFirst;
    walk.min_ts = activity.ts;
    walk.max_ts = activity.ts;
    reads.ReadAndCompare(*c_.engine, c_.model, std::move(walk), r,
                         /*first=*/true, c_.Now());
  }
  ComparePinned(activity.actor, /*hydrate=*/true);
}

void EditOps::Invalid() {
  const uint64_t records = c_.Records();
  EntityId actor = 0;
  const ActivityId id = AnyActivity(c_, actor);
  const std::string payload(kMaxPayload + 1 + c_.in.Below(64), 'q');
  FUZZ_CHECK(absl::IsInvalidArgument(
      c_.model.EditActivity(actor, id, payload, c_.Now()).status()));
  c_.CheckRefused(api_.EditActivity(actor, id, payload).status(), records);
}

}  // namespace feedcore::fuzz
