// FeedEngineImpl's lists of accounts (FeedLists): kept in the owner's graph
// node under its shard lock, recorded there, and read by merging the
// members' own feeds, one shard lock at a time.
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "contract/cursor.h"
#include "contract/feed_arguments.h"
#include "contract/page_merger.h"
#include "contract/page_range.h"
#include "feed/feed_engine_impl.h"

namespace feedcore::internal {
namespace {

ChangeRecord ListRecord(ChangeKind kind, EntityId owner, ListId list) {
  ChangeRecord record;
  record.kind = kind;
  record.entity = owner;
  record.other = list;
  return record;
}

// The list `list` of the entity whose node is `node` (null: none), or null.
const AccountListState* FindList(const GraphNode* node, ListId list) {
  return node == nullptr || node->lists == nullptr ? nullptr
                                                   : node->lists->Find(list);
}

absl::Status NoSuchList(EntityId owner, ListId list) {
  return absl::NotFoundError(
      absl::StrCat("entity ", owner, " has no list ", list));
}

}  // namespace

absl::StatusOr<bool> FeedEngineImpl::SetListInMemory(
    EntityId owner, ListId list, const ListSettings& settings) {
  if (absl::Status bad = ValidateListSettings(list, settings); !bad.ok()) {
    return bad;
  }
  Shard& shard = ShardOf(owner);
  WriterLock lock(&shard.mu());
  GraphNode& node = shard.Node(owner);
  if (node.lists == nullptr) node.lists = std::make_unique<OwnerLists>();
  const AccountListState* existing = node.lists->Find(list);
  if (existing != nullptr && existing->settings == settings) return false;
  if (existing == nullptr && node.lists->size() >= kMaxListsPerOwner) {
    return absl::ResourceExhaustedError(
        absl::StrCat("entity ", owner, " has ", kMaxListsPerOwner,
                     " lists already (kMaxListsPerOwner); delete one first"));
  }
  const bool created = node.lists->Set(list, settings);
  if (log_ != nullptr) {
    ChangeRecord record = ListRecord(ChangeKind::kListSet, owner, list);
    record.name = settings.name;
    record.merged_at_read = settings.exclusive;
    shard.Log(std::move(record));
  }
  return created;
}

absl::StatusOr<bool> FeedEngineImpl::DeleteListInMemory(EntityId owner,
                                                        ListId list) {
  if (absl::Status bad = ValidateListId(list); !bad.ok()) return bad;
  Shard& shard = ShardOf(owner);
  WriterLock lock(&shard.mu());
  GraphNode* node = shard.FindNode(owner);
  if (node == nullptr || node->lists == nullptr || !node->lists->Delete(list)) {
    return false;
  }
  if (node->lists->empty()) node->lists.reset();
  if (log_ != nullptr) {
    shard.Log(ListRecord(ChangeKind::kListDelete, owner, list));
  }
  shard.MaybeEraseNode(owner);
  return true;
}

absl::StatusOr<bool> FeedEngineImpl::ChangeListMemberInMemory(EntityId owner,
                                                              ListId list,
                                                              EntityId member,
                                                              bool add) {
  if (absl::Status bad = ValidateListId(list); !bad.ok()) return bad;
  Shard& shard = ShardOf(owner);
  WriterLock lock(&shard.mu());
  GraphNode* node = shard.FindNode(owner);
  const AccountListState* state = FindList(node, list);
  if (state == nullptr) return NoSuchList(owner, list);
  if (add && !state->members.contains(member) &&
      state->members.size() >= kMaxListMembers) {
    return absl::ResourceExhaustedError(
        absl::StrCat("list ", list, " of entity ", owner, " has ",
                     kMaxListMembers, " members already (kMaxListMembers)"));
  }
  const bool changed =
      add ? node->lists->Add(list, member) : node->lists->Remove(list, member);
  if (changed && log_ != nullptr) {
    ChangeRecord record = ListRecord(
        add ? ChangeKind::kListMemberAdd : ChangeKind::kListMemberRemove, owner,
        list);
    record.owners = {member};
    shard.Log(std::move(record));
  }
  return changed;
}

absl::StatusOr<std::vector<AccountList>> FeedEngineImpl::Lists(
    EntityId owner) const {
  std::vector<AccountList> out;
  const Shard& shard = ShardOf(owner);
  ReaderLock lock(&shard.mu());
  const GraphNode* node = shard.FindNode(owner);
  if (node == nullptr || node->lists == nullptr) return out;
  out.reserve(node->lists->size());
  for (const auto& [id, state] : node->lists->lists()) {
    out.push_back({id, state.settings, state.members.size()});
  }
  return out;
}

absl::StatusOr<EntityPage> FeedEngineImpl::ListMembers(
    EntityId owner, ListId list, const ListOptions& options) const {
  if (absl::Status bad = ValidateListId(list); !bad.ok()) return bad;
  if (absl::Status bad = ValidateList(options, options_.max_page_size);
      !bad.ok()) {
    return bad;
  }
  std::optional<EntityId> after;
  if (!options.cursor.empty()) {
    absl::StatusOr<EntityId> last =
        DecodeListMembersCursorOf(options.cursor, owner, list);
    if (!last.ok()) return last.status();
    after = *last;
  }
  const Shard& shard = ShardOf(owner);
  ReaderLock lock(&shard.mu());
  const GraphNode* node = shard.FindNode(owner);
  const AccountListState* state = FindList(node, list);
  if (state == nullptr) return NoSuchList(owner, list);
  EntityPage page;
  auto it = after.has_value() ? state->members.upper_bound(*after)
                              : state->members.begin();
  for (; it != state->members.end(); ++it) {
    if (page.ids.size() == options.limit) {
      page.next_cursor = EncodeListMembersCursor(owner, list, page.ids.back());
      break;
    }
    page.ids.push_back(*it);
  }
  return page;
}

absl::StatusOr<Page> FeedEngineImpl::ReadList(
    EntityId owner, ListId list, const ReadOptions& options) const {
  if (absl::Status bad = ValidateListId(list); !bad.ok()) return bad;
  absl::StatusOr<PageRange> range =
      ResolveListPageRange(owner, list, options, options_.max_page_size);
  if (!range.ok()) return range.status();
  const Micros now = options_.clock->Now();
  std::vector<EntityId> members;
  {
    const Shard& shard = ShardOf(owner);
    ReaderLock lock(&shard.mu());
    const GraphNode* node = shard.FindNode(owner);
    const AccountListState* state = FindList(node, list);
    if (state == nullptr) return NoSuchList(owner, list);
    for (const EntityId member : state->members) {
      if (!node->relations.HidesInTimeline(member, now)) {
        members.push_back(member);
      }
    }
  }
  Page page;
  if (range->empty) return page;
  // One more than asked tells whether another page follows.
  const size_t want = options.limit + 1;
  PageMerger merger(options.order, want);
  for (const EntityId member : members) {
    EntryKey lo = range->lo;
    EntryKey hi = range->hi;
    if (!merger.Narrow(&lo, &hi)) continue;
    std::vector<StoredEntry> entries;
    {
      const Shard& shard = ShardOf(member);
      ReaderLock lock(&shard.mu());
      const GraphNode* node = shard.FindNode(member);
      // A member that blocks the owner is not shown to it.
      if (node != nullptr && node->relations.blocking.contains(owner)) {
        continue;
      }
      const Timeline* own = shard.FindTimeline({member, FeedType::kOwn});
      if (own == nullptr) continue;
      own->Collect(options.order, lo, hi, now, want, &entries,
                   options.kinds.kinds);
    }
    merger.Add(std::move(entries));
  }
  page.entries = merger.Take();
  FinishListPage(owner, list, options, &page);
  if (options.hydrate) store_.Hydrate(&page.entries);
  return page;
}

absl::Status FeedEngineImpl::ApplyListChange(const ChangeRecord& record) {
  auto malformed = [&](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("change record ", record.sequence, " (kind ",
                     static_cast<int>(record.kind), "): ", what));
  };
  if (record.domain != ShardIndex(record.entity)) {
    return malformed("domain is not the shard of the list's owner");
  }
  absl::Status status;
  switch (record.kind) {
    case ChangeKind::kListSet:
      status = SetListInMemory(record.entity, record.other,
                               {record.name, record.merged_at_read})
                   .status();
      break;
    case ChangeKind::kListDelete:
      status = DeleteListInMemory(record.entity, record.other).status();
      break;
    default:
      if (record.owners.size() != 1) return malformed("not one member");
      status = ChangeListMemberInMemory(
                   record.entity, record.other, record.owners[0],
                   record.kind == ChangeKind::kListMemberAdd)
                   .status();
      break;
  }
  return status.ok() ? status : malformed(status.message());
}

}  // namespace feedcore::internal
