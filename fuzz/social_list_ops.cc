#include "social_list_ops.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "feedcore/social.h"
#include "fuzz_check.h"
#include "model/feed_model.h"

namespace feedcore::fuzz {

void ListOps::Write() {
  const EntityId owner = c_.Entity();
  // Three lists per owner, and now and then the refused id 0.
  const ListId list = c_.in.Below(8) == 0 ? 0 : 1 + c_.in.Below(3);
  const EntityId member = c_.Entity();
  const uint64_t records = c_.Records();
  absl::StatusOr<bool> got;
  absl::StatusOr<bool> want;
  // Whether an answer of false means nothing changed: not for SetList of
  // a list that exists with other settings (they change).
  bool false_is_unchanged = true;
  switch (c_.in.Below(4)) {
    case 0: {
      ListSettings settings;
      // Names of 0..kMaxListNameBytes + 1 bytes: the ends refused.
      const uint64_t length = c_.in.Below(4) == 0
                                  ? c_.in.Below(kMaxListNameBytes + 2)
                                  : 1 + c_.in.Below(3);
      settings.name = std::string(length, 'n');
      settings.exclusive = c_.in.Bool();
      for (const AccountList& held : c_.model.Lists(owner)) {
        if (held.id == list) false_is_unchanged = held.settings == settings;
      }
      got = api_.SetList(owner, list, settings);
      want = c_.model.SetList(owner, list, settings);
      break;
    }
    case 1:
      got = api_.DeleteList(owner, list);
      want = c_.model.DeleteList(owner, list);
      break;
    default: {
      const bool add = c_.in.Bool();
      got = add ? api_.AddToList(owner, list, member)
                : api_.RemoveFromList(owner, list, member);
      want = c_.model.ChangeListMember(owner, list, member, add);
      break;
    }
  }
  if (!c_.SameOutcome(got.status(), want.status(), records)) return;
  FUZZ_CHECK(*got == *want);
  if (!*got && false_is_unchanged) FUZZ_CHECK(c_.Records() == records);
}

void ListOps::Read() {
  const EntityId owner = c_.Entity();
  const ListId list = c_.in.Below(8) == 0 ? 0 : 1 + c_.in.Below(3);
  FUZZ_CHECK(api_.Lists(owner).value() == c_.model.Lists(owner));
  const absl::StatusOr<std::vector<EntityId>> members =
      c_.model.ListMembers(owner, list);
  ListOptions list_options;
  list_options.limit = 1 + c_.in.Below(c_.options.max_page_size);
  std::vector<EntityId> got_members;
  for (;;) {
    const absl::StatusOr<EntityPage> page =
        api_.ListMembers(owner, list, list_options);
    FUZZ_CHECK(page.status().code() == members.status().code());
    if (!page.ok()) break;
    got_members.insert(got_members.end(), page->ids.begin(), page->ids.end());
    if (page->next_cursor.empty()) break;
    list_options.cursor = page->next_cursor;
  }
  if (members.ok()) FUZZ_CHECK(got_members == *members);
  ReadOptions read;
  read.limit = 1 + c_.in.Below(c_.options.max_page_size);
  read.order = c_.in.Bool() ? ReadOrder::kNewestFirst : ReadOrder::kOldestFirst;
  read.hydrate = c_.in.Below(4) == 0;
  if (c_.in.Below(3) == 0) read.kinds.kinds = 1 + c_.in.Below(7);
  const absl::StatusOr<std::vector<StoredEntry>> want =
      c_.model.ReadList(owner, list, read.order, std::nullopt, std::nullopt,
                        std::nullopt, c_.Now(), read.hydrate, read.kinds.kinds);
  std::vector<StoredEntry> got;
  for (;;) {
    const absl::StatusOr<Page> page = api_.ReadList(owner, list, read);
    FUZZ_CHECK_DETAIL(
        page.status().code() == want.status().code(),
        std::fprintf(stderr, "got %s\n", page.status().ToString().c_str()));
    if (!page.ok()) return;
    FUZZ_CHECK(page->entries.size() <= read.limit);
    got.insert(got.end(), page->entries.begin(), page->entries.end());
    if (page->next_cursor.empty()) break;
    read.cursor = page->next_cursor;
  }
  FUZZ_CHECK(got == *want);
}

}  // namespace feedcore::fuzz
