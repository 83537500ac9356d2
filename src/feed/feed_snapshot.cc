// FeedEngineImpl::SerializeDomain / LoadDomain: the engine's part of a
// snapshot (the file format around it is in snapshot.cc).
//
// Engine shard s (domain s):
//   u64 timelines, each: u64 id, u8 feed, u64 n, then n entries oldest
//     first (i64 ts, u64 activity id, u64 actor, i64 expires_at, u64 group,
//     u8 activity kind);
//     a notification feed then has u64 m and its m seen groups, each named
//     by its newest entry: i64 ts, u64 activity id, u8 read
//   u64 graph nodes, each: u64 entity, u8 actor mode, u64 n + n follower
//     ids, u64 n + n followee ids, u64 n + n merged-at-read followees (u64
//     id, i64 boundary ts, u64 boundary activity id: the oldest key of it
//     the entity's reads show, u8 1 for a dormant merge, else 0), i64 ts +
//     u64 activity id of the newest key the entity published while it had
//     a node (ts -1: none), u64 n + n former followers that kept their
//     history (Retract purges them), u64 n + n dormant followers (each
//     also among the followers),
//     u64 n + n read markers (u8 feed type, u64 feed owner, i64 ts,
//     u64 activity id), in (feed type, owner) order, u64 n + n blocked
//     ids, u64 n + n mutes (u64 actor, u8 notifications, i64 expires_at
//     or 0), u64 n + n muters of this entity (u64 muter, i64 expires_at
//     or 0: the actor's side of their mutes), u64 n + n followee filters
//     (u64 followee, u64 kinds), u64 n + n follower filters (u64 follower,
//     u64 kinds), u64 n + n pins, the most
//     recently pinned first (i64 ts, u64 activity id, i64 expires_at),
//     u64 n + n channels with mentions, each: u64 channel, u64 m + m keys
//     ascending (i64 ts, u64 activity id), u64 n + n lists by ascending id,
//     each: u64 id, u64 n + n name bytes, u8 exclusive, u64 m + m members
//     ascending
// Activity store shard s (domain shards + s):
//   u64 activities, each: u64 id, u64 actor, i64 ts, i64 expires_at,
//     u8 flags (1: copied, 2: retracted), u64 n + n payload bytes,
//     u64 n + n notified entity ids, 4 x i64 counters, i64 time of the
//     last counter change (INT64_MIN: never), i64 time of the last edit
//     (0: never), u8 activity kind, u64 the activity it reposts (0: none);
//   u64 reactions, each: u64 activity id, u64 user, u8 kind, i64 time,
//     u64 notice id (0: none), by activity, kind and time
//
// Entries are written oldest first so that loading puts each one in front
// of everything already there: the O(1) path of Timeline::Put.
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/byte_codec.h"
#include "contract/feed_arguments.h"
#include "feed/feed_engine_impl.h"

namespace feedcore::internal {
namespace {

constexpr uint8_t kCopiedFlag = 1;
constexpr uint8_t kRetractedFlag = 2;
constexpr size_t kEntryBytes = 41;
constexpr size_t kMinTimelineBytes = 17;
// entity, mode, thirteen counts, the newest published key.
constexpr size_t kMinGraphNodeBytes = 137;
constexpr size_t kMinListBytes = 25;
constexpr size_t kMergedFolloweeBytes = 25;
constexpr size_t kMarkerBytes = 25;
constexpr size_t kMinActivityBytes = 98;
constexpr size_t kPinBytes = 24;
constexpr size_t kMinMentionFeedBytes = 16;
constexpr size_t kMentionBytes = 16;
constexpr size_t kSeenGroupBytes = 17;
constexpr size_t kReactionBytes = 33;

absl::Status Corrupt(size_t domain, absl::string_view what) {
  return absl::DataLossError(
      absl::StrCat("snapshot section of domain ", domain, ": ", what));
}

}  // namespace

uint64_t FeedEngineImpl::SerializeDomain(size_t domain,
                                         std::string* out) const {
  ByteWriter w(out);
  uint64_t cut = 0;
  if (domain >= options_.shards) {
    store_.VisitShard(domain - options_.shards, [&](const auto& activities,
                                                    const auto& reactions) {
      if (log_ != nullptr) cut = log_->NextSequence();
      w.U64(activities.size());
      for (const auto& [id, a] : activities) {
        w.U64(id);
        w.U64(a.actor);
        w.I64(a.ts);
        w.I64(a.expires_at);
        w.U8((a.copied ? kCopiedFlag : 0) | (a.retracted ? kRetractedFlag : 0));
        w.Bytes(a.payload);
        w.U64(a.notified.size());
        for (const EntityId recipient : a.notified) w.U64(recipient);
        for (const int64_t counter : a.counters) w.I64(counter);
        w.I64(a.counters_changed_at);
        w.I64(a.edited_at);
        w.U8(a.kind);
        w.U64(a.repost_of);
      }
      w.U64(reactions.size());
      reactions.Visit([&](const ReactionFacts& reaction) {
        w.U64(reaction.activity);
        w.U64(reaction.user);
        w.U8(static_cast<uint8_t>(reaction.kind));
        w.I64(reaction.reacted_at);
        w.U64(reaction.notice_id);
      });
    });
    return cut;
  }
  const Shard& shard = shards_[domain];
  ReaderLock lock(&shard.mu());
  if (log_ != nullptr) cut = log_->NextSequence();
  out->reserve(out->size() + shard.entry_count() * kEntryBytes +
               shard.timeline_count() * kMinTimelineBytes);
  w.U64(shard.timeline_count());
  shard.ForEachTimeline([&](TimelineId id, const Timeline& timeline) {
    w.U64(id.id);
    w.U8(static_cast<uint8_t>(id.kind));
    const std::vector<StoredEntry> entries = timeline.Entries();
    w.U64(entries.size());
    for (auto e = entries.rbegin(); e != entries.rend(); ++e) {
      w.I64(e->ts);
      w.U64(e->activity_id);
      w.U64(e->actor);
      w.I64(e->expires_at);
      w.U64(e->group);
      w.U8(e->kind);
    }
    if (id.kind == FeedType::kNotification) {
      const GroupIndex& groups = *timeline.groups();
      w.U64(groups.group_count() - groups.unseen_count());
      groups.ForEachSeenGroup([&](EntryKey place, bool read) {
        w.I64(place.ts);
        w.U64(place.activity_id);
        w.U8(read ? 1 : 0);
      });
    }
  });
  w.U64(shard.node_count());
  shard.ForEachNode([&](EntityId entity, const GraphNode& node) {
    w.U64(entity);
    w.U8(static_cast<uint8_t>(node.hybrid ? ActorMode::kMerged
                              : node.becoming_hybrid
                                  ? ActorMode::kBecomingMerged
                                  : ActorMode::kCopied));
    // Every follower, the dormant ones listed again below.
    w.U64(node.follower_count());
    for (const auto& follower : node.followers) w.U64(follower.second);
    for (const auto& follower : node.dormant_followers) {
      w.U64(follower.second);
    }
    w.U64(node.following.size());
    for (const EntityId followee : node.following) w.U64(followee);
    w.U64(node.hybrid_following.size());
    for (const MergedFollowee& followee : node.hybrid_following) {
      w.U64(followee.actor);
      w.I64(followee.boundary.ts);
      w.U64(followee.boundary.activity_id);
      w.U8(followee.dormant ? 1 : 0);
    }
    w.I64(node.newest_published.has_value() ? node.newest_published->ts : -1);
    w.U64(node.newest_published.has_value() ? node.newest_published->activity_id
                                            : 0);
    w.U64(node.history_kept.size());
    for (const auto& former : node.history_kept) w.U64(former.second);
    w.U64(node.dormant_followers.size());
    for (const auto& follower : node.dormant_followers) w.U64(follower.second);
    w.U64(node.read_markers.size());
    for (const auto& [feed, key] : node.read_markers) {
      w.U8(static_cast<uint8_t>(feed.first));
      w.U64(feed.second);
      w.I64(key.ts);
      w.U64(key.activity_id);
    }
    WriteRelations(node.relations, w);
    w.U64(node.pinned.size());
    for (const PinnedEntry& pin : node.pinned) {
      w.I64(pin.key.ts);
      w.U64(pin.key.activity_id);
      w.I64(pin.expires_at);
    }
    w.U64(node.mentions.size());
    for (const auto& [channel, keys] : node.mentions) {
      w.U64(channel);
      w.U64(keys.size());
      for (const EntryKey& key : keys) {
        w.I64(key.ts);
        w.U64(key.activity_id);
      }
    }
    w.U64(node.lists == nullptr ? 0 : node.lists->size());
    if (node.lists != nullptr) {
      for (const auto& [id, list] : node.lists->lists()) {
        w.U64(id);
        w.Bytes(list.settings.name);
        w.U8(list.settings.exclusive ? 1 : 0);
        w.U64(list.members.size());
        for (const EntityId member : list.members) w.U64(member);
      }
    }
  });
  return cut;
}

absl::Status FeedEngineImpl::LoadDomain(size_t domain, std::string_view bytes,
                                        const FeedCaps& saved_caps) {
  ByteReader r(bytes);
  if (domain >= domain_count()) {
    return Corrupt(domain, absl::StrCat("no such domain (the engine has ",
                                        domain_count(), ")"));
  }
  if (domain >= options_.shards) {
    const uint64_t count = r.Count(kMinActivityBytes);
    for (uint64_t i = 0; i < count && r.ok(); ++i) {
      const ActivityId id = r.U64();
      StoredActivity a;
      a.actor = r.U64();
      a.ts = r.I64();
      a.expires_at = r.I64();
      const uint8_t flags = r.U8();
      a.payload = std::string(r.Bytes());
      const uint64_t recipients = r.Count(sizeof(EntityId));
      a.notified.reserve(recipients);
      for (uint64_t i = 0; i < recipients && r.ok(); ++i) {
        a.notified.push_back(r.U64());
      }
      for (int64_t& counter : a.counters) counter = r.I64();
      a.counters_changed_at = r.I64();
      a.edited_at = r.I64();
      a.kind = r.U8();
      a.repost_of = r.U64();
      if (!r.ok()) break;
      if (a.kind > kMaxActivityKind) {
        return Corrupt(domain, absl::StrCat("activity ", id, " has kind ",
                                            a.kind, ", above the largest"));
      }
      if (a.edited_at < 0) {
        return Corrupt(
            domain, absl::StrCat("activity ", id, " has a negative edit time"));
      }
      if (flags & ~(kCopiedFlag | kRetractedFlag)) {
        return Corrupt(domain, absl::StrCat("activity ", id,
                                            " has unknown flags ", flags));
      }
      if (a.ts < 0) {
        return Corrupt(
            domain, absl::StrCat("activity ", id, " has a negative timestamp"));
      }
      if (a.notified.size() > kMaxNotifyRecipients ||
          (a.retracted && !a.notified.empty())) {
        return Corrupt(domain, absl::StrCat("activity ", id,
                                            " has an impossible recipient "
                                            "list"));
      }
      if (a.payload.size() > options_.max_payload_bytes) {
        return Corrupt(
            domain,
            absl::StrCat("activity ", id, " has a payload of ",
                         a.payload.size(), " bytes, above max_payload_bytes"));
      }
      a.copied = flags & kCopiedFlag;
      a.retracted = flags & kRetractedFlag;
      if ((domain - options_.shards) != store_.ShardOf(id)) {
        return Corrupt(
            domain, absl::StrCat("activity ", id, " belongs to another shard"));
      }
      store_.Load(id, a);
    }
    const uint64_t reactions = r.Count(kReactionBytes);
    for (uint64_t i = 0; i < reactions && r.ok(); ++i) {
      ReactionFacts reaction;
      reaction.activity = r.U64();
      reaction.user = r.U64();
      reaction.kind = r.U8();
      reaction.reacted_at = r.I64();
      reaction.notice_id = r.U64();
      if (!r.ok()) break;
      if (reaction.kind >= kActivityCounterCount ||
          store_.ShardOf(reaction.activity) != domain - options_.shards) {
        return Corrupt(
            domain, absl::StrCat("a reaction to activity ", reaction.activity,
                                 " has kind ", reaction.kind,
                                 " or belongs to another shard"));
      }
      if (!store_.LoadReaction(reaction)) {
        return Corrupt(
            domain, absl::StrCat("a reaction to activity ", reaction.activity,
                                 ", which the shard does not hold "
                                 "live"));
      }
    }
    if (!r.ok() || !r.at_end()) {
      return Corrupt(domain, "activity store data is truncated or too long");
    }
    return absl::OkStatus();
  }
  Shard& shard = shards_[domain];
  WriterLock lock(&shard.mu());
  const uint64_t timelines = r.Count(kMinTimelineBytes);
  for (uint64_t t = 0; t < timelines && r.ok(); ++t) {
    const EntityId id = r.U64();
    const uint8_t kind = r.U8();
    const uint64_t n = r.Count(kEntryBytes);
    if (!r.ok()) break;
    if (kind > static_cast<uint8_t>(FeedType::kNotification)) {
      return Corrupt(domain, absl::StrCat("timeline ", id,
                                          " has unknown feed kind ", kind));
    }
    const FeedType feed = static_cast<FeedType>(kind);
    if (feed == FeedType::kWorld ? id != 0 : ShardIndex(id) != domain) {
      return Corrupt(domain,
                     absl::StrCat("timeline ", id, " does not belong here"));
    }
    const size_t saved_cap = saved_caps[static_cast<size_t>(feed)];
    if (n == 0 || n > saved_cap) {
      return Corrupt(domain,
                     absl::StrCat("timeline ", id, " holds ", n,
                                  " entries; it must hold 1..", saved_cap));
    }
    // Over a smaller cap than the source's, the oldest entries are trimmed
    // as they are put, and so are their groups.
    const bool trimmed = n > shard.Cap(feed);
    if (shard.FindTimeline(TimelineId{id, feed}) != nullptr) {
      return Corrupt(domain, absl::StrCat("timeline ", id, " appears twice"));
    }
    EntryKey previous{-1, 0};
    for (uint64_t i = 0; i < n; ++i) {
      StoredEntry e;
      e.ts = r.I64();
      e.activity_id = r.U64();
      e.actor = r.U64();
      e.expires_at = r.I64();
      e.group = KeptGroup(r.U64(), feed);
      e.kind = r.U8();
      if (!r.ok()) break;
      if (e.kind > kMaxActivityKind) {
        return Corrupt(domain,
                       absl::StrCat("timeline ", id, " has an entry of kind ",
                                    e.kind, ", above the largest"));
      }
      const EntryKey key{e.ts, e.activity_id};
      if (e.ts < 0 || key <= previous) {
        return Corrupt(
            domain, absl::StrCat("timeline ", id, " has entries out of order"));
      }
      previous = key;
      InsertResult ignored;
      shard.Put({id, feed}, e, &ignored);
    }
    if (feed == FeedType::kNotification && r.ok()) {
      GroupIndex& groups =
          *shard.FindTimeline(TimelineId{id, feed})->mutable_groups();
      const uint64_t seen = r.Count(kSeenGroupBytes);
      for (uint64_t i = 0; i < seen && r.ok(); ++i) {
        const EntryKey place{r.I64(), r.U64()};
        const uint8_t read = r.U8();
        if (!r.ok()) break;
        if (read > 1 || (!groups.SetSeen(place, read == 1) && !trimmed)) {
          return Corrupt(domain, absl::StrCat("notification feed of ", id,
                                              " names a group it does not "
                                              "hold"));
        }
      }
    }
  }
  const uint64_t nodes = r.Count(kMinGraphNodeBytes);
  for (uint64_t g = 0; g < nodes && r.ok(); ++g) {
    const EntityId entity = r.U64();
    const uint8_t mode = r.U8();
    if (mode > static_cast<uint8_t>(ActorMode::kMerged)) {
      return Corrupt(domain, absl::StrCat("entity ", entity,
                                          " has unknown actor mode ", mode));
    }
    if (ShardIndex(entity) != domain) {
      return Corrupt(domain,
                     absl::StrCat("entity ", entity, " does not belong here"));
    }
    if (shard.FindNode(entity) != nullptr) {
      return Corrupt(domain, absl::StrCat("entity ", entity, " appears twice"));
    }
    GraphNode& node = shard.Node(entity);
    node.hybrid = mode == static_cast<uint8_t>(ActorMode::kMerged);
    node.becoming_hybrid =
        mode == static_cast<uint8_t>(ActorMode::kBecomingMerged);
    const uint64_t followers = r.Count(sizeof(EntityId));
    for (uint64_t i = 0; i < followers; ++i) {
      const EntityId follower = r.U64();
      shard.AddFollower(
          entity, {static_cast<uint32_t>(ShardIndex(follower)), follower});
    }
    const uint64_t following = r.Count(sizeof(EntityId));
    for (uint64_t i = 0; i < following; ++i) node.following.insert(r.U64());
    const uint64_t merged = r.Count(kMergedFolloweeBytes);
    for (uint64_t i = 0; i < merged; ++i) {
      const EntityId followee = r.U64();
      const EntryKey boundary{r.I64(), r.U64()};
      const uint8_t dormant = r.U8();
      if (!r.ok()) break;
      if (!node.following.contains(followee) || boundary.ts < 0 ||
          dormant > 1) {
        return Corrupt(domain,
                       absl::StrCat("entity ", entity, " merges ", followee,
                                    " without following it, or from a "
                                    "boundary below zero"));
      }
      if (!node.AddMerged(followee, boundary, dormant == 1)) {
        return Corrupt(domain, absl::StrCat("entity ", entity, " merges ",
                                            followee, " twice"));
      }
    }
    const EntryKey newest{r.I64(), r.U64()};
    if (newest.ts >= 0) {
      node.newest_published = newest;
    } else {
      node.newest_published.reset();
    }
    const uint64_t kept = r.Count(sizeof(EntityId));
    for (uint64_t i = 0; i < kept && r.ok(); ++i) {
      const EntityId former = r.U64();
      node.history_kept.insert(
          {static_cast<uint32_t>(ShardIndex(former)), former});
    }
    const uint64_t dormant_followers = r.Count(sizeof(EntityId));
    for (uint64_t i = 0; i < dormant_followers && r.ok(); ++i) {
      const EntityId follower = r.U64();
      const FollowerEdge edge{static_cast<uint32_t>(ShardIndex(follower)),
                              follower};
      if (!node.SetDormantFollower(edge, true)) {
        return Corrupt(domain, absl::StrCat("entity ", entity,
                                            " lists a dormant follower that "
                                            "is not a follower, or twice"));
      }
    }
    // A reader's inactivity is counted from the load.
    if (options_.inactive_after > 0) {
      node.last_read.Store(options_.clock->Now());
    }
    const uint64_t markers = r.Count(kMarkerBytes);
    for (uint64_t i = 0; i < markers && r.ok(); ++i) {
      const uint8_t type = r.U8();
      const EntityId owner = r.U64();
      const EntryKey key{r.I64(), r.U64()};
      if (!r.ok()) break;
      const bool home = type == static_cast<uint8_t>(FeedType::kHome);
      const bool own = type == static_cast<uint8_t>(FeedType::kOwn);
      const bool world = type == static_cast<uint8_t>(FeedType::kWorld);
      if (!(own || (home && owner == entity) || (world && owner == 0)) ||
          key.ts < 0) {
        return Corrupt(domain, absl::StrCat("entity ", entity,
                                            " has an impossible read marker"));
      }
      if (!node.read_markers
               .emplace(MarkerFeedKey{static_cast<FeedType>(type), owner}, key)
               .second) {
        return Corrupt(domain, absl::StrCat("entity ", entity,
                                            " lists a read marker twice"));
      }
    }
    if (std::string error; !ReadRelations(entity, r, &node.relations, &error)) {
      return Corrupt(domain, error);
    }
    const uint64_t pins = r.Count(kPinBytes);
    for (uint64_t i = 0; i < pins && r.ok(); ++i) {
      const PinnedEntry pin{{r.I64(), r.U64()}, r.I64()};
      if (!r.ok()) break;
      const bool twice = std::any_of(
          node.pinned.begin(), node.pinned.end(), [&](const PinnedEntry& p) {
            return p.key.activity_id == pin.key.activity_id;
          });
      if (pin.key.ts < 0 || twice) {
        return Corrupt(domain, absl::StrCat("entity ", entity,
                                            " has a pin below zero or twice"));
      }
      node.pinned.push_back(pin);
    }
    const uint64_t channels = r.Count(kMinMentionFeedBytes);
    for (uint64_t c = 0; c < channels && r.ok(); ++c) {
      const EntityId channel = r.U64();
      const uint64_t count = r.Count(kMentionBytes);
      std::vector<EntryKey> keys;
      for (uint64_t i = 0; i < count && r.ok(); ++i) {
        keys.push_back({r.I64(), r.U64()});
      }
      if (!r.ok()) break;
      const bool ascending =
          std::adjacent_find(keys.begin(), keys.end(),
                             [](const EntryKey& a, const EntryKey& b) {
                               return !(a < b);
                             }) == keys.end();
      if (keys.empty() || keys.size() > kMaxMentionsPerFeed || !ascending ||
          keys.front().ts < 0 ||
          !node.mentions.emplace(channel, std::move(keys)).second) {
        return Corrupt(domain, absl::StrCat("entity ", entity,
                                            " has impossible "
                                            "mentions in channel ",
                                            channel));
      }
    }
    const uint64_t lists = r.Count(kMinListBytes);
    ListId previous = 0;
    for (uint64_t l = 0; l < lists && r.ok(); ++l) {
      const ListId id = r.U64();
      ListSettings settings;
      settings.name = std::string(r.Bytes());
      const uint8_t exclusive = r.U8();
      settings.exclusive = exclusive == 1;
      const uint64_t count = r.Count(sizeof(EntityId));
      std::vector<EntityId> members;
      for (uint64_t i = 0; i < count && r.ok(); ++i) members.push_back(r.U64());
      if (!r.ok()) break;
      const bool ascending =
          std::adjacent_find(members.begin(), members.end(),
                             std::greater_equal<EntityId>()) == members.end();
      if (id <= previous || exclusive > 1 ||
          !ValidateListSettings(id, settings).ok() || l >= kMaxListsPerOwner ||
          members.size() > kMaxListMembers || !ascending) {
        return Corrupt(domain, absl::StrCat("entity ", entity,
                                            " has an impossible list ", id));
      }
      previous = id;
      if (node.lists == nullptr) node.lists = std::make_unique<OwnerLists>();
      node.lists->Set(id, settings);
      for (const EntityId member : members) node.lists->Add(id, member);
    }
    if (r.ok() && (node.follower_count() != followers ||
                   node.following.size() != following)) {
      return Corrupt(domain,
                     absl::StrCat("entity ", entity, " lists an edge twice"));
    }
  }
  if (!r.ok() || !r.at_end()) {
    return Corrupt(domain, "shard data is truncated or too long");
  }
  return absl::OkStatus();
}

}  // namespace feedcore::internal
