#include "model/feed_model.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <iterator>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace feedcore::testing {
namespace {

FeedModel::Key KeyOf(const StoredEntry& e) { return {e.ts, e.activity_id}; }

const FeedModel::FeedMap& EmptyFeed() {
  static const FeedModel::FeedMap* const empty = new FeedModel::FeedMap();
  return *empty;
}

const std::set<EntityId>& EmptySet() {
  static const std::set<EntityId>* const empty = new std::set<EntityId>();
  return *empty;
}

}  // namespace

std::vector<FeedGroup> ReferenceGroups(std::vector<StoredEntry> entries,
                                       size_t max_actors, size_t max_entries) {
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    return std::pair(a.ts, a.activity_id) > std::pair(b.ts, b.activity_id);
  });
  // Group key 0: a group per entry, named by its position.
  std::map<std::pair<GroupKey, size_t>, std::vector<StoredEntry>> members;
  for (size_t i = 0; i < entries.size(); ++i) {
    StoredEntry e = entries[i];
    e.payload.clear();
    members[{e.group, e.group == 0 ? i : 0}].push_back(e);
  }
  std::vector<FeedGroup> groups;
  for (const auto& [slot, list] : members) {
    FeedGroup g;
    g.key = slot.first;
    g.activity_count = list.size();
    std::set<EntityId> actors;
    for (const StoredEntry& e : list) {
      if (actors.insert(e.actor).second &&
          g.recent_actors.size() < max_actors) {
        g.recent_actors.push_back(e.actor);
      }
    }
    g.actor_count = actors.size();
    g.recent.assign(list.begin(),
                    list.begin() + std::min(list.size(), max_entries));
    g.first_ts = list.back().ts;
    g.last_ts = list.front().ts;
    groups.push_back(std::move(g));
  }
  std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
    const StoredEntry& x = a.recent.front();
    const StoredEntry& y = b.recent.front();
    return std::pair(x.ts, x.activity_id) > std::pair(y.ts, y.activity_id);
  });
  return groups;
}

FeedModel::FeedModel(const EngineOptions& options)
    : cap_(options.max_timeline_length),
      world_cap_(options.world_timeline_length),
      default_ttl_(options.default_ttl),
      max_payload_bytes_(options.max_payload_bytes),
      max_page_size_(options.max_page_size),
      hybrid_threshold_(options.hybrid_fanout_threshold),
      aggregation_(options.aggregation),
      notification_options_(options.notifications),
      reposts_(options.reposts) {}

// --- Feeds ---

void FeedModel::Put(FeedMap& feed, size_t cap, const Key& key,
                    const Value& value, InsertResult* r) {
  auto it = feed.find(key);
  if (it != feed.end()) {
    it->second = value;
    ++r->replaced;
    return;
  }
  if (feed.size() >= cap && key < feed.begin()->first) {
    ++r->rejected_by_cap;
    return;
  }
  feed[key] = value;
  ++r->inserted;
  while (feed.size() > cap) {
    feed.erase(feed.begin());
    ++r->trimmed;
  }
}

void FeedModel::PutKeepingEachKind(FeedMap& feed, size_t cap, const Key& key,
                                   const Value& value) {
  feed[key] = value;
  std::vector<Key> of_kind;
  for (const auto& [k, v] : feed) {
    if (v.kind == value.kind) of_kind.push_back(k);
  }
  if (of_kind.size() > cap) feed.erase(of_kind.front());
}

Micros FeedModel::ExpiryFor(const InsertOptions& o, Micros now) const {
  if (o.expires_at) return *o.expires_at;
  return now + (o.ttl == 0 ? default_ttl_ : o.ttl);
}

void FeedModel::Insert(EntityId owner, const TimelineEntry& e,
                       Micros expires_at, InsertResult* r) {
  // Without aggregation the engine drops group keys at insert.
  const GroupKey group = aggregation_.enabled ? e.group : 0;
  Put(timelines_[owner], cap_, {e.ts, e.activity_id},
      {e.actor, expires_at, group, e.kind}, r);
}

bool FeedModel::Remove(EntityId owner, Key key) {
  auto it = timelines_.find(owner);
  return it != timelines_.end() && it->second.erase(key) > 0;
}

GroupKey FeedModel::TimelineGroupOf(const feedcore::Activity& a) const {
  if (!aggregation_.enabled) return 0;
  assert(aggregation_.group_key != nullptr);
  return aggregation_.group_key(a);
}

// --- Social calls ---

absl::StatusOr<PublishResult> FeedModel::Publish(const feedcore::Activity& a,
                                                 const PublishOptions& options,
                                                 Micros now) {
  if (a.ts < 0 || a.payload.size() > max_payload_bytes_ || a.ttl < 0 ||
      a.ttl > kMaxTtl || a.kind > kMaxActivityKind ||
      (a.repost_of != 0 && a.repost_of == a.id) ||
      (a.repost_of != 0 && reposts_.window != 0 &&
       !reposts_.kinds.Keeps(a.kind))) {
    return absl::InvalidArgumentError("refused activity");
  }
  if (options.notify.size() > kMaxNotifyRecipients ||
      options.mentions.size() > kMaxMentionRecipients) {
    return absl::InvalidArgumentError("too many recipients");
  }
  if (auto it = activities_.find(a.id); it != activities_.end()) {
    const Activity& stored = it->second;
    if (stored.retracted) {
      return absl::FailedPreconditionError("retracted id");
    }
    if (stored.actor != a.actor || stored.ts != a.ts || stored.kind != a.kind ||
        stored.repost_of != a.repost_of ||
        (stored.edited_at == 0 && stored.payload != a.payload)) {
      return absl::AlreadyExistsError("another activity under this id");
    }
    return PublishResult{};
  }
  Activity& stored = activities_[a.id];
  stored.actor = a.actor;
  stored.ts = a.ts;
  stored.expires_at = now + (a.ttl == 0 ? default_ttl_ : a.ttl);
  stored.payload = a.payload;
  stored.group = TimelineGroupOf(a);
  stored.kind = a.kind;
  stored.repost_of = a.repost_of;
  const std::set<EntityId> recipients(options.notify.begin(),
                                      options.notify.end());
  stored.recipients.assign(recipients.begin(), recipients.end());

  const Key key{a.ts, a.id};
  const Value value{a.actor, stored.expires_at, stored.group, a.kind};
  InsertResult ignored;
  PutKeepingEachKind(own_[a.actor], cap_, key, value);
  Put(world_, world_cap_, key, value, &ignored);
  PublishResult r;
  r.created = true;
  r.merged_at_read = merged_.contains(a.actor);
  // Every follower's timeline as copying leaves it, whatever the engine
  // merges at read, but for the followers that hide the actor.
  size_t audience = 0;
  for (const EntityId f : Followers(a.actor)) {
    if (HidesInTimeline(f, a.actor, now)) continue;
    if (((KindsFollowed(f, a.actor) >> a.kind) & 1) == 0) continue;
    Put(timelines_[f], cap_, key, value, &ignored);
    ++audience;
  }
  if (!r.merged_at_read) r.fanned_out = audience;
  if (!stored.recipients.empty()) {
    const GroupKey note_group =
        notification_options_.aggregated ? aggregation_.group_key(a) : 0;
    for (const EntityId user : stored.recipients) {
      if (HidesInNotifications(user, a.actor, now)) continue;
      Notify(user, key, {a.actor, stored.expires_at, note_group, a.kind});
      ++r.notified;
    }
  }
  for (const EntityId user : options.mentions) {
    Mention(user, a.actor, key, now);
  }
  return r;
}

absl::StatusCode FeedModel::Retract(ActivityId id) {
  auto it = activities_.find(id);
  if (it == activities_.end()) return absl::StatusCode::kNotFound;
  Activity& a = it->second;
  if (a.retracted) return absl::StatusCode::kOk;
  a.retracted = true;
  const Key key{a.ts, id};
  own_[a.actor].erase(key);
  world_.erase(key);
  for (const EntityId f : Followers(a.actor)) timelines_[f].erase(key);
  for (const EntityId f : history_kept_[a.actor]) timelines_[f].erase(key);
  for (const EntityId user : a.recipients) {
    EraseNote(notification_feeds_[user], key);
  }
  if (auto pins = pins_.find(a.actor); pins != pins_.end()) {
    std::erase_if(pins->second,
                  [&](const PinnedKey& pin) { return pin.key == key; });
  }
  // Its reactions go, and their notices are retracted.
  std::vector<ActivityId> notices;
  for (const auto& [who, reaction] : a.reactions) {
    if (reaction.second != 0) notices.push_back(reaction.second);
  }
  a.reactions.clear();
  for (const ActivityId notice : notices) Retract(notice);
  return absl::StatusCode::kOk;
}

bool FeedModel::FollowsWithOtherKinds(EntityId follower, EntityId followee,
                                      std::optional<uint64_t> kinds) const {
  auto it = following_.find(follower);
  return kinds.has_value() && it != following_.end() &&
         it->second.contains(followee) &&
         KindsFollowed(follower, followee) != *kinds;
}

uint64_t FeedModel::KindsFollowed(EntityId follower, EntityId followee) const {
  auto it = follow_kinds_.find({follower, followee});
  return it == follow_kinds_.end() ? KindFilter::kEveryKind : it->second;
}

FollowResult FeedModel::Follow(EntityId follower, EntityId followee,
                               size_t backfill, Micros now,
                               std::optional<uint64_t> kinds) {
  if (EitherBlocks(follower, followee)) return {};
  if (!following_[follower].insert(followee).second) return {};
  if (kinds.has_value() && *kinds != KindFilter::kEveryKind) {
    follow_kinds_[{follower, followee}] = *kinds;
  }
  std::set<EntityId>& followers = followers_[followee];
  followers.insert(follower);
  if (hybrid_threshold_ > 0 && followers.size() > hybrid_threshold_) {
    merged_.insert(followee);
  }
  history_kept_[followee].erase(follower);
  FollowResult r;
  r.created = true;
  const size_t copied = Backfill(follower, followee, backfill, now);
  // A merged-at-read followee is not copied: its entries show through the
  // merge, from where back-fill would have started.
  if (!merged_.contains(followee)) r.backfilled = copied;
  return r;
}

size_t FeedModel::Backfill(EntityId follower, EntityId followee, size_t count,
                           Micros now) {
  if (HidesInTimeline(follower, followee, now)) return 0;
  InsertResult put;
  size_t copied = 0;
  const FeedMap& own = feed(Feed::kOwn, followee);
  const size_t want = std::min(count, cap_);
  const uint64_t kinds = KindsFollowed(follower, followee);
  for (auto it = own.rbegin(); it != own.rend() && copied < want; ++it) {
    if (it->second.expires_at <= now) continue;
    if (((kinds >> it->second.kind) & 1) == 0) continue;
    Put(timelines_[follower], cap_, it->first, it->second, &put);
    ++copied;
  }
  return put.inserted + put.replaced;
}

UnfollowResult FeedModel::Unfollow(EntityId follower, EntityId followee,
                                   bool keep_history) {
  auto it = following_.find(follower);
  if (it == following_.end() || it->second.erase(followee) == 0) return {};
  followers_[followee].erase(follower);
  follow_kinds_.erase({follower, followee});
  UnfollowResult r;
  r.was_following = true;
  if (keep_history) {
    history_kept_[followee].insert(follower);
    return r;
  }
  r.removed = std::erase_if(timelines_[follower], [&](const auto& kv) {
    return kv.second.actor == followee;
  });
  return r;
}

// --- Reads ---

std::vector<StoredEntry> FeedModel::Read(Feed which, EntityId owner,
                                         ReadOrder order,
                                         std::optional<Micros> min_ts,
                                         std::optional<Micros> max_ts,
                                         std::optional<Key> after, Micros now,
                                         bool hydrate, uint64_t kinds) const {
  return ReadFeed(which, owner, order, min_ts, max_ts, after, now, hydrate,
                  kinds, /*home_view=*/true);
}

std::vector<StoredEntry> FeedModel::ReadFeed(
    Feed which, EntityId owner, ReadOrder order, std::optional<Micros> min_ts,
    std::optional<Micros> max_ts, std::optional<Key> after, Micros now,
    bool hydrate, uint64_t kinds, bool home_view) const {
  const FeedMap& seen = feed(which, owner);
  const bool home = which == Feed::kTimeline;
  const std::set<Key> hidden =
      home && home_view ? HiddenReposts(owner, seen, now) : std::set<Key>();
  std::vector<StoredEntry> out;
  auto visit = [&](const Key& k, const Value& v) {
    if (v.expires_at <= now || hidden.contains(k)) return;
    if (home && home_view && ExcludesFromHome(owner, v.actor)) return;
    if (((kinds >> v.kind) & 1) == 0) return;
    if (min_ts && k.first < *min_ts) return;
    if (max_ts && k.first > *max_ts) return;
    if (after) {
      if (order == ReadOrder::kNewestFirst && !(k < *after)) return;
      if (order == ReadOrder::kOldestFirst && !(k > *after)) return;
    }
    out.push_back({k.first, k.second, v.actor, v.expires_at, v.group,
                   hydrate ? Payload(k.second) : std::string(),
                   hydrate ? EditedAt(k.second) : 0, v.kind});
  };
  if (order == ReadOrder::kNewestFirst) {
    for (auto it = seen.rbegin(); it != seen.rend(); ++it) {
      visit(it->first, it->second);
    }
  } else {
    for (const auto& [k, v] : seen) visit(k, v);
  }
  return out;
}

ActivityId FeedModel::RepostOf(const Key& key, const Value& value) const {
  if (!reposts_.kinds.Keeps(value.kind)) return 0;
  auto it = activities_.find(key.second);
  return it == activities_.end() ? 0 : it->second.repost_of;
}

std::set<FeedModel::Key> FeedModel::HiddenReposts(EntityId owner,
                                                  const FeedMap& timeline,
                                                  Micros now) const {
  std::set<Key> hidden;
  if (reposts_.window == 0) return hidden;
  std::vector<std::pair<Key, const Value*>> visible;  // newest first
  for (auto it = timeline.rbegin(); it != timeline.rend(); ++it) {
    if (it->second.expires_at > now &&
        !ExcludesFromHome(owner, it->second.actor)) {
      visible.emplace_back(it->first, &it->second);
    }
  }
  for (size_t i = 0; i < visible.size(); ++i) {
    const ActivityId original = RepostOf(visible[i].first, *visible[i].second);
    if (original == 0) continue;
    for (size_t j = i + 1; j < visible.size() && j <= i + reposts_.window;
         ++j) {
      if (visible[j].first.second == original ||
          RepostOf(visible[j].first, *visible[j].second) == original) {
        hidden.insert(visible[i].first);
        break;
      }
    }
  }
  return hidden;
}

size_t FeedModel::CountNewer(EntityId reader, Key key, size_t max_count,
                             Micros now) const {
  const size_t newer = Read(Feed::kTimeline, reader, ReadOrder::kOldestFirst,
                            std::nullopt, std::nullopt, key, now, false)
                           .size();
  return std::min(newer, max_count);
}

std::vector<FeedGroup> FeedModel::Groups(EntityId reader, Micros now,
                                         uint64_t kinds) const {
  std::vector<StoredEntry> entries =
      Read(Feed::kTimeline, reader, ReadOrder::kNewestFirst, std::nullopt,
           std::nullopt, std::nullopt, now, false, kinds);
  return ReferenceGroups(std::move(entries), aggregation_.max_group_actors,
                         aggregation_.max_group_entries);
}

FeedModel::GroupSource FeedModel::GroupsFrom(EntityId reader,
                                             Micros now) const {
  for (const EntityId actor : Following(reader)) {
    if (merged_.contains(actor)) return GroupSource::kMerged;
  }
  for (const auto& [key, value] : feed(Feed::kTimeline, reader)) {
    if (value.expires_at <= now) return GroupSource::kExpired;
  }
  return GroupSource::kIndex;
}

std::string FeedModel::Payload(ActivityId id) const {
  auto it = activities_.find(id);
  if (it == activities_.end() || it->second.retracted) return {};
  return it->second.payload;
}

Micros FeedModel::EditedAt(ActivityId id) const {
  auto it = activities_.find(id);
  if (it == activities_.end() || it->second.retracted) return 0;
  return it->second.edited_at;
}

// --- Counters and ranked reads ---

absl::StatusOr<ActivityCounters> FeedModel::IncrementCounter(ActivityId id,
                                                             size_t counter,
                                                             int64_t delta,
                                                             Micros now) {
  if (counter >= kActivityCounterCount || delta == 0) {
    return absl::InvalidArgumentError("bad counter or delta");
  }
  absl::StatusOr<ActivityCounters> current = Counters(id, now);
  if (!current.ok()) return current.status();
  Activity& a = activities_.at(id);
  int64_t sum = 0;
  if (__builtin_add_overflow(a.counters[counter], delta, &sum)) {
    return absl::InvalidArgumentError("overflow");
  }
  a.counters[counter] = sum;
  a.counters_changed_at = now;
  return a.counters;
}

absl::StatusOr<ActivityCounters> FeedModel::Counters(ActivityId id,
                                                     Micros now) const {
  auto it = activities_.find(id);
  if (it == activities_.end() || it->second.retracted ||
      it->second.expires_at <= now) {
    return absl::NotFoundError("no such activity");
  }
  return it->second.counters;
}

double FeedModel::Score(const RankFormula& f, const ActivityCounters& c,
                        Micros start, Micros ts) {
  double popularity = f.base;
  for (size_t i = 0; i < kActivityCounterCount; ++i) {
    popularity += f.weights[i] * static_cast<double>(c[i]);
  }
  const double hours =
      ts >= start ? 0.0 : static_cast<double>(start - ts) / 3'600'000'000.0;
  const double score =
      popularity / std::pow(hours + f.age_offset_hours, f.gravity);
  return std::isnan(score) || score == 0 ? 0.0 : score;
}

FeedModel::RankedResult FeedModel::Ranked(
    EntityId owner, const RankFormula& formula, size_t window, size_t limit,
    const std::optional<RankedPlace>& after, Micros now, bool hydrate,
    uint64_t kinds) const {
  const Micros start = after ? after->start : now;
  std::vector<RankedEntry> all;
  for (const StoredEntry& e :
       Read(Feed::kTimeline, owner, ReadOrder::kNewestFirst, std::nullopt,
            after ? std::optional<Micros>(start) : std::nullopt, std::nullopt,
            now, hydrate, kinds)) {
    if (all.size() == window) break;
    RankedEntry r{e, {}, 0};
    std::optional<Micros> changed;
    if (auto it = activities_.find(e.activity_id); it != activities_.end()) {
      r.counters = it->second.counters;
      changed = it->second.counters_changed_at;
    }
    r.score = Score(formula, r.counters, start, e.ts);
    // Counted once for the window even when left out below.
    all.push_back(r);
    if (after && changed && *changed >= start) all.back().score = NAN;
  }
  std::erase_if(all, [&](const RankedEntry& r) {
    if (std::isnan(r.score)) return true;
    return after &&
           std::tuple(r.score, r.entry.ts, r.entry.activity_id) >=
               std::tuple(after->score, after->key.first, after->key.second);
  });
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return std::tuple(a.score, a.entry.ts, a.entry.activity_id) >
           std::tuple(b.score, b.entry.ts, b.entry.activity_id);
  });
  RankedResult result;
  if (all.size() > limit) {
    all.resize(limit);
    const RankedEntry& last = all.back();
    result.next = RankedPlace{start, last.score, KeyOf(last.entry)};
  }
  result.entries = std::move(all);
  return result;
}

// --- Notifications ---

FeedModel::Slot FeedModel::SlotOf(const Key& key, const Value& value) {
  return value.group != 0 ? Slot{value.group, Key{}} : Slot{0, key};
}

void FeedModel::EraseNote(NotificationFeed& feed, const Key& key) {
  auto it = feed.notes.find(key);
  if (it == feed.notes.end()) return;
  const Slot slot = SlotOf(key, it->second);
  feed.notes.erase(it);
  for (const auto& [k, value] : feed.notes) {
    if (SlotOf(k, value) == slot) return;
  }
  feed.flags.erase(slot);
}

void FeedModel::Notify(EntityId user, const Key& key, const Value& value) {
  NotificationFeed& feed = notification_feeds_[user];
  const size_t cap = notification_options_.max_length;
  // Not stored at all, so it makes no group unseen.
  if (feed.notes.size() >= cap && key < feed.notes.begin()->first) {
    ++tally_.rejected;
    return;
  }
  const Slot slot = SlotOf(key, value);
  auto flags = feed.flags.find(slot);
  if (flags != feed.flags.end() && flags->second.seen) ++tally_.rejoined_seen;
  feed.notes[key] = value;
  feed.flags[slot] = Flags{};
  while (feed.notes.size() > cap) {
    EraseNote(feed, feed.notes.begin()->first);
    ++tally_.trimmed;
  }
}

size_t FeedModel::ReclaimNotifications(EntityId user, Micros now) {
  NotificationFeed& feed = notification_feeds_[user];
  std::vector<Key> expired;
  for (const auto& [key, value] : feed.notes) {
    if (value.expires_at <= now) expired.push_back(key);
  }
  for (const Key& key : expired) EraseNote(feed, key);
  return expired.size();
}

void FeedModel::MarkSeen(EntityId user) {
  for (auto& [slot, flags] : notification_feeds_[user].flags) {
    flags.seen = true;
  }
}

void FeedModel::MarkAllRead(EntityId user) {
  for (auto& [slot, flags] : notification_feeds_[user].flags) {
    flags = {true, true};
  }
}

bool FeedModel::MarkRead(EntityId user, Key key) {
  NotificationFeed& feed = notification_feeds_[user];
  auto it = feed.notes.find(key);
  if (it == feed.notes.end()) return false;
  feed.flags[SlotOf(key, it->second)] = {true, true};
  return true;
}

NotificationCounts FeedModel::Counts(EntityId user) const {
  NotificationCounts c;
  auto it = notification_feeds_.find(user);
  if (it == notification_feeds_.end()) return c;
  for (const auto& [slot, flags] : it->second.flags) {
    ++c.groups;
    if (!flags.seen) ++c.unseen;
    if (!flags.read) ++c.unread;
  }
  return c;
}

std::vector<FeedGroup> FeedModel::Notifications(EntityId user,
                                                uint64_t kinds) const {
  auto it = notification_feeds_.find(user);
  if (it == notification_feeds_.end()) return {};
  const NotificationFeed& feed = it->second;
  std::vector<StoredEntry> entries;
  for (const auto& [key, value] : feed.notes) {
    if (((kinds >> value.kind) & 1) == 0) continue;
    entries.push_back(StoredEntry{key.first,
                                  key.second,
                                  value.actor,
                                  value.expires_at,
                                  value.group,
                                  {},
                                  0,
                                  value.kind});
  }
  std::vector<FeedGroup> groups =
      ReferenceGroups(std::move(entries), aggregation_.max_group_actors,
                      aggregation_.max_group_entries);
  for (FeedGroup& g : groups) {
    const Key top = KeyOf(g.recent.front());
    const Flags& flags = feed.flags.at(SlotOf(top, feed.notes.at(top)));
    g.seen = flags.seen;
    g.read = flags.read;
  }
  return groups;
}

const FeedModel::FeedMap& FeedModel::notifications(EntityId user) const {
  auto it = notification_feeds_.find(user);
  return it == notification_feeds_.end() ? EmptyFeed() : it->second.notes;
}

// --- Expiry ---

size_t FeedModel::CountExpired(Micros now) const {
  size_t n = 0;
  auto count = [&](const FeedMap& feed) {
    for (const auto& [key, value] : feed) n += value.expires_at <= now;
  };
  for (const auto& [owner, feed] : timelines_) count(feed);
  for (const auto& [owner, feed] : own_) count(feed);
  count(world_);
  for (const auto& [user, feed] : notification_feeds_) count(feed.notes);
  return n;
}

size_t FeedModel::EvictExpired(Micros now) {
  size_t n = 0;
  auto drop = [&](FeedMap& feed) {
    n += std::erase_if(
        feed, [&](const auto& kv) { return kv.second.expires_at <= now; });
  };
  for (auto& [owner, feed] : timelines_) drop(feed);
  for (auto& [owner, feed] : own_) drop(feed);
  drop(world_);
  for (auto& [user, feed] : notification_feeds_) {
    n += ReclaimNotifications(user, now);
  }
  for (auto it = activities_.begin(); it != activities_.end();) {
    if (it->second.expires_at <= now) {
      evicted_.insert(it->first);
      ++activities_evicted_;
      it = activities_.erase(it);
    } else {
      ++it;
    }
  }
  return n;
}

// --- What the model holds ---

const FeedModel::FeedMap& FeedModel::feed(Feed which, EntityId owner) const {
  const std::map<EntityId, FeedMap>* feeds = nullptr;
  switch (which) {
    case Feed::kTimeline:
      feeds = &timelines_;
      break;
    case Feed::kOwn:
      feeds = &own_;
      break;
    case Feed::kWorld:
      return world_;
  }
  auto it = feeds->find(owner);
  return it == feeds->end() ? EmptyFeed() : it->second;
}

std::optional<FeedModel::Key> FeedModel::KeyAt(EntityId owner,
                                               uint64_t index) const {
  const FeedMap& timeline = feed(Feed::kTimeline, owner);
  if (timeline.empty()) return std::nullopt;
  auto it = timeline.begin();
  std::advance(it, static_cast<long>(index % timeline.size()));
  return it->first;
}

bool FeedModel::Follows(EntityId follower, EntityId followee) const {
  return Following(follower).contains(followee);
}

const std::set<EntityId>& FeedModel::Followers(EntityId e) const {
  auto it = followers_.find(e);
  return it == followers_.end() ? EmptySet() : it->second;
}

const std::set<EntityId>& FeedModel::Following(EntityId e) const {
  auto it = following_.find(e);
  return it == following_.end() ? EmptySet() : it->second;
}

size_t FeedModel::entries() const {
  size_t n = world_.size();
  for (const auto& [owner, feed] : timelines_) n += feed.size();
  for (const auto& [owner, feed] : own_) n += feed.size();
  return n;
}

size_t FeedModel::timelines() const {
  size_t n = 0;
  for (const auto& [owner, feed] : timelines_) n += !feed.empty();
  return n;
}

size_t FeedModel::follow_edges() const {
  size_t n = 0;
  for (const auto& [e, followers] : followers_) n += followers.size();
  return n;
}

FeedModel::Totals FeedModel::Expected() const {
  Totals t;
  t.entries = entries();
  for (const auto& [id, a] : activities_) {
    ++t.activities;
    if (a.retracted) {
      ++t.retracted;
    } else {
      t.payload_bytes += a.payload.size();
    }
  }
  t.follow_edges = follow_edges();
  t.activities_evicted = activities_evicted_;
  return t;
}

}  // namespace feedcore::testing
