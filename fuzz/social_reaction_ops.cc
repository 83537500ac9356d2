#include "social_reaction_ops.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fuzz_check.h"
#include "model/feed_model.h"

namespace feedcore::fuzz {

ActivityId ReactionOps::AnyActivity() {
  if (c_.in.Below(6) != 0) {
    if (auto known = c_.Known()) return known->first;
  }
  return c_.next_id + 1 + c_.in.Below(3);
}

ReactionKind ReactionOps::AnyKind() {
  return c_.in.Below(8) == 0 ? kActivityCounterCount + c_.in.Below(3)
                             : c_.in.Below(kActivityCounterCount);
}

void ReactionOps::React() {
  const EntityId user = c_.Entity();
  const ActivityId id = AnyActivity();
  const ReactionKind kind = AnyKind();
  ReactOptions options;
  switch (c_.in.Below(6)) {
    case 0:
      options.notice_id = ++c_.next_id;  // fresh
      break;
    case 1:
      options.notice_id = AnyActivity();  // taken, or the activity itself
      break;
    case 2:
      options.notice_id = ++c_.next_id;
      options.notice_payload = c_.in.Below(4) == 0
                                   ? std::string(kMaxPayload + 1, 'n')
                                   : c_.in.Bytes(kMaxPayload);
      options.notice_verb = c_.in.Below(3);
      break;
    default:
      break;
  }
  const Micros now = c_.Now();
  const uint64_t records = c_.Records();
  const absl::StatusOr<ReactionResult> want =
      c_.model.React(user, id, kind, options, now);
  const absl::StatusOr<ReactionResult> got =
      api_.React(user, id, kind, options);
  if (!c_.SameOutcome(got.status(), want.status(), records)) return;
  FUZZ_CHECK(got->changed == want->changed);
  FUZZ_CHECK(got->counters == want->counters);
  FUZZ_CHECK(got->notified == want->notified);
  if (!got->changed) FUZZ_CHECK(c_.Records() == records);
  if (got->notified) c_.published.push_back({now, options.notice_id});
}

void ReactionOps::Unreact() {
  const EntityId user = c_.Entity();
  const ActivityId id = AnyActivity();
  const ReactionKind kind = AnyKind();
  const uint64_t records = c_.Records();
  const absl::StatusOr<ReactionResult> want =
      c_.model.Unreact(user, id, kind, c_.Now());
  const absl::StatusOr<ReactionResult> got = api_.Unreact(user, id, kind);
  if (!c_.SameOutcome(got.status(), want.status(), records)) return;
  FUZZ_CHECK(got->changed == want->changed);
  FUZZ_CHECK(got->counters == want->counters);
  if (!got->changed) FUZZ_CHECK(c_.Records() == records);
}

void ReactionOps::GetOwnReactions() {
  const EntityId user = c_.Entity();
  std::vector<ActivityId> ids(c_.in.Below(20));
  for (ActivityId& id : ids) id = AnyActivity();
  const uint64_t records = c_.Records();
  const absl::StatusOr<std::vector<ReactionKinds>> got =
      api_.GetOwnReactions(user, ids);
  FUZZ_CHECK(got.ok());
  FUZZ_CHECK(*got == c_.model.OwnReactions(user, ids, c_.Now()));
  FUZZ_CHECK(c_.Records() == records);
}

void ReactionOps::ReadReactors() {
  const ActivityId id = AnyActivity();
  const ReactionKind kind = AnyKind();
  ListOptions list;
  // 0 and more than the page size are refused.
  const size_t max_page = c_.options.max_page_size;
  list.limit = c_.in.Below(std::min<size_t>(max_page, 5) + 2);
  if (list.limit == std::min<size_t>(max_page, 5) + 1)
    list.limit = max_page + 1;
  const absl::StatusOr<std::vector<Reactor>> want =
      c_.model.Reactors(id, kind, c_.Now());
  std::vector<Reactor> got;
  for (;;) {
    const absl::StatusOr<ReactorPage> page = api_.ReadReactors(id, kind, list);
    if (list.limit == 0 || list.limit > max_page) {  // checked first
      FUZZ_CHECK(absl::IsInvalidArgument(page.status()));
      return;
    }
    FUZZ_CHECK_DETAIL(page.status().code() == want.status().code(),
                      std::fprintf(stderr, "got %s, model %s\n",
                                   page.status().ToString().c_str(),
                                   want.status().ToString().c_str()));
    if (!page.ok()) return;
    FUZZ_CHECK(page->reactors.size() <= list.limit);
    got.insert(got.end(), page->reactors.begin(), page->reactors.end());
    FUZZ_CHECK(got.size() <= want->size());  // a cursor that advances
    if (page->next_cursor.empty()) break;
    FUZZ_CHECK(page->reactors.size() == list.limit);
    list.cursor = page->next_cursor;
  }
  FUZZ_CHECK(got == *want);
}

}  // namespace feedcore::fuzz
