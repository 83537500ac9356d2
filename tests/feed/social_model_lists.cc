// Runner::DoAccountLists (social_model_runner.h): lists of accounts against
// the model.
#include <string>
#include <vector>

#include "feed/social_model_runner.h"

namespace feedcore::social_model {
namespace {

std::string Show(const absl::Status& status) {
  return std::string(absl::StatusCodeToString(status.code()));
}

}  // namespace

void Runner::DoAccountLists() {
  Settle();
  std::mt19937_64& rng = list_rng_;
  const EntityId owner = 1 + rng() % config_.entities;
  // Two lists per owner, and now and then the refused id 0.
  const ListId list = rng() % 16 == 0 ? 0 : 1 + rng() % 2;
  const uint64_t op = rng() % 100;
  const Micros now = clock_->Now();
  if (op < 45) {
    const EntityId member = 1 + rng() % config_.entities;
    ListSettings settings;
    settings.name = std::string(1 + rng() % 3, static_cast<char>('a' + list));
    if (rng() % 16 == 0) settings.name.clear();
    settings.exclusive = rng() % 2 == 0;
    const uint64_t write = rng() % 100;
    what_ = "list write " + std::to_string(write) + " of " +
            std::to_string(owner) + " list " + std::to_string(list) +
            " member " + std::to_string(member) + " exclusive " +
            std::to_string(settings.exclusive);
    for (Member& m : members_) {
      INFO("threshold " << m.threshold);
      absl::StatusOr<bool> want;
      absl::StatusOr<bool> got;
      if (write < 25) {
        want = m.model.SetList(owner, list, settings);
        got = m.engine->SetList(owner, list, settings);
      } else if (write < 30) {
        want = m.model.DeleteList(owner, list);
        got = m.engine->DeleteList(owner, list);
      } else if (write < 80) {
        want = m.model.ChangeListMember(owner, list, member, /*add=*/true);
        got = m.engine->AddToList(owner, list, member);
      } else {
        want = m.model.ChangeListMember(owner, list, member, /*add=*/false);
        got = m.engine->RemoveFromList(owner, list, member);
      }
      INFO("want " << Show(want.status()) << " got " << Show(got.status()));
      REQUIRE(got.status().code() == want.status().code());
      if (want.ok()) REQUIRE(*got == *want);
    }
    return;
  }
  what_ =
      "list read of " + std::to_string(owner) + " list " + std::to_string(list);
  const size_t limit = 1 + rng() % kMaxPage;
  const ReadOrder order =
      rng() % 4 == 0 ? ReadOrder::kOldestFirst : ReadOrder::kNewestFirst;
  const uint64_t kinds =
      rng() % 3 == 0 ? 1 + rng() % 7 : KindFilter::kEveryKind;
  for (Member& m : members_) {
    INFO("threshold " << m.threshold);
    REQUIRE(m.engine->Lists(owner).value() == m.model.Lists(owner));
    const absl::StatusOr<std::vector<EntityId>> members =
        m.model.ListMembers(owner, list);
    ListOptions page_options;
    page_options.limit = limit;
    std::vector<EntityId> got_members;
    for (;;) {
      const absl::StatusOr<EntityPage> page =
          m.engine->ListMembers(owner, list, page_options);
      REQUIRE(page.status().code() == members.status().code());
      if (!page.ok()) break;
      got_members.insert(got_members.end(), page->ids.begin(), page->ids.end());
      if (page->next_cursor.empty()) break;
      page_options.cursor = page->next_cursor;
    }
    if (members.ok()) REQUIRE(got_members == *members);
    const absl::StatusOr<std::vector<StoredEntry>> want = m.model.ReadList(
        owner, list, order, std::nullopt, std::nullopt, std::nullopt, now,
        /*hydrate=*/true, kinds);
    ReadOptions read;
    read.limit = limit;
    read.order = order;
    read.hydrate = true;
    read.kinds.kinds = kinds;
    std::vector<StoredEntry> got;
    for (;;) {
      const absl::StatusOr<Page> page = m.engine->ReadList(owner, list, read);
      REQUIRE(page.status().code() == want.status().code());
      if (!page.ok()) break;
      REQUIRE(page->entries.size() <= limit);
      got.insert(got.end(), page->entries.begin(), page->entries.end());
      if (page->next_cursor.empty()) break;
      REQUIRE(page->entries.size() == limit);
      read.cursor = page->next_cursor;
    }
    if (!want.ok()) continue;
    REQUIRE(got == *want);
    if (&m == &members_[0]) coverage_.lists_read += !got.empty();
  }
}

}  // namespace feedcore::social_model
