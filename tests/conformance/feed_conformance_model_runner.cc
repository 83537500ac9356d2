#include "conformance/feed_conformance_model_runner.h"

namespace feedcore::conformance_model {

void Runner::Run(int steps) {
  for (step_ = 0; step_ < steps; ++step_) {
    INFO("step " << step_ << ": " << what_);
    if (engine_->relations() != nullptr && OneIn(16)) {
      DoRelation();
      CheckStep();
    }
    const int op = static_cast<int>(rng_() % 100);
    if (op < 18) {
      DoPublish();
    } else if (op < 22) {
      DoRepublish();
    } else if (op < 28) {
      DoRetract();
    } else if (op < 41) {
      DoFollow();
    } else if (op < 49) {
      DoUnfollow();
    } else if (op < 57) {
      DoInsert();
    } else if (op < 61) {
      DoFanout();
    } else if (op < 65) {
      DoBatch();
    } else if (op < 70) {
      DoRemove();
    } else if (op < 74) {
      DoRefused();
    } else if (op < 86) {
      DoAdvance();
    } else if (op < 93) {
      DoWalk();
    } else {
      DoContinue();
    }
    INFO("after step " << step_ << ": " << what_);
    if (step_ % 4 == 3) check_all_ = true;
    CheckStep();
  }
}

void Runner::CheckStep() {
  if (check_all_) {
    CheckAll();
  } else {
    for (const EntityId e : touched_) CheckEntity(e);
    if (touched_world_) CheckWorld();
  }
  touched_.clear();
  touched_world_ = false;
  check_all_ = false;
}

Micros Runner::Ttl() {
  switch (rng_() % 4) {
    case 0:
      return 0;  // default_ttl
    case 1:
      return 2000 + static_cast<Micros>(rng_() % 2000);
    default:
      return 1 + static_cast<Micros>(rng_() % 400);
  }
}

std::optional<ActivityId> Runner::AnyStored(bool retracted_too) {
  std::vector<ActivityId> ids;
  for (const auto& [id, a] : model_.activities()) {
    if (retracted_too || !a.retracted) ids.push_back(id);
  }
  if (ids.empty()) return std::nullopt;
  return ids[rng_() % ids.size()];
}

void Runner::DoPublish() {
  Activity a;
  a.id = next_id_++;
  a.actor = Entity();
  a.ts = RecentTs();
  a.ttl = Ttl();
  a.payload = OneIn(8) ? std::string()
                       : std::string(rng_() % (kMaxPayload + 1),
                                     static_cast<char>('a' + a.id % 26));
  // Verb 0 and object 0: ungrouped.
  a.verb = rng_() % 3 == 0 ? 0 : 1;
  a.object = rng_() % 3;
  what_ = "Publish " + std::to_string(a.id) + " by " + std::to_string(a.actor) +
          " ts " + std::to_string(a.ts);
  TouchActor(a.actor);
  const size_t followers = model_.Followers(a.actor).size();
  const absl::StatusOr<PublishResult> r = engine_->Publish(a);
  REQUIRE_MESSAGE(r.ok(), r.status());
  const absl::StatusOr<PublishResult> want = model_.Publish(a, Now());
  REQUIRE_MESSAGE(want.ok(), want.status());
  coverage_.muted_deliveries += followers - want->fanned_out;
  CHECK(r->created);
  CHECK(r->fanned_out == want->fanned_out);
  CHECK_FALSE(r->merged_at_read);
  CHECK(r->notified == 0);
}

void Runner::DoRepublish() {
  const std::optional<ActivityId> id = AnyStored(/*retracted_too=*/true);
  if (!id) return DoPublish();
  const testing::FeedModel::Activity& s = model_.activities().at(*id);
  Activity a;
  a.id = *id;
  a.actor = s.actor;
  a.ts = s.ts;
  a.payload = s.payload;
  a.ttl = Ttl();  // not compared
  const int change = static_cast<int>(rng_() % 4);
  if (change == 1) a.actor = a.actor % config_.entities + 1;
  if (change == 2) a.ts += 1;
  if (change == 3) {
    if (a.payload.empty()) {
      a.payload = "x";
    } else {
      a.payload[0] = static_cast<char>(a.payload[0] ^ 1);
    }
  }
  what_ = "Publish again " + std::to_string(a.id) + " change " +
          std::to_string(change);
  TouchActor(s.actor);
  TouchActor(a.actor);
  const absl::StatusOr<PublishResult> r = engine_->Publish(a);
  INFO(r.status());
  if (s.retracted) {
    CHECK(absl::IsFailedPrecondition(r.status()));
  } else if (change != 0) {
    CHECK(absl::IsAlreadyExists(r.status()));
    ++coverage_.conflicts;
  } else {
    REQUIRE(r.ok());
    CHECK_FALSE(r->created);
    CHECK(r->fanned_out == 0);
    ++coverage_.republished;
  }
}

void Runner::DoRetract() {
  const int kind = static_cast<int>(rng_() % 10);
  if (kind == 0) {
    // Never published (ids below next_id_ that failed to publish are
    // unknown too).
    const ActivityId id = next_id_ + 1000 + rng_() % 1000;
    what_ = "Retract unknown " + std::to_string(id);
    CHECK(absl::IsNotFound(engine_->Retract(id)));
    return;
  }
  if (kind == 1 && !model_.evicted().empty()) {
    // Expired: OK while the backend still knows the id, NotFound once
    // evicted; every copy of it has expired, so nothing visible changes.
    auto it = model_.evicted().begin();
    std::advance(it, static_cast<long>(rng_() % model_.evicted().size()));
    what_ = "Retract expired " + std::to_string(*it);
    check_all_ = true;
    const absl::Status s = engine_->Retract(*it);
    CHECK_MESSAGE((s.ok() || absl::IsNotFound(s)), s);
    return;
  }
  const std::optional<ActivityId> id = AnyStored(/*retracted_too=*/true);
  if (!id) return;
  what_ = "Retract " + std::to_string(*id);
  TouchActor(model_.activities().at(*id).actor);
  const absl::Status s = engine_->Retract(*id);
  CHECK_MESSAGE(s.ok(), s);
  coverage_.retracted += !model_.activities().at(*id).retracted;
  CHECK(model_.Retract(*id) == absl::StatusCode::kOk);
}

void Runner::DoFollow() {
  const EntityId follower = Entity();
  EntityId followee = Entity();
  if (followee == follower) followee = follower % config_.entities + 1;
  FollowOptions o;
  switch (rng_() % 4) {
    case 0:
      break;  // default_backfill
    case 1:
      o.backfill = rng_() % (config_.cap + 3);
      break;
    case 2:
      o.backfill = kMaxTimelineLengthLimit;
      break;
    default:
      o.backfill = rng_() % 3;
      break;
  }
  // A third of the time a batch: this pair and up to three more, which may
  // repeat it or share its follower; the model follows them in order.
  std::vector<FollowPair> pairs = {{follower, followee}};
  if (OneIn(3)) {
    for (size_t more = rng_() % 4; more > 0; --more) {
      FollowPair pair = OneIn(3) ? pairs.front() : FollowPair{Entity(), 0};
      if (pair.followee == 0) {
        pair.followee = Entity();
        if (pair.followee == pair.follower) {
          pair.followee = pair.follower % config_.entities + 1;
        }
      }
      pairs.push_back(pair);
    }
  }
  what_ = (pairs.size() > 1 ? "FollowMany, first " : "Follow ") +
          std::to_string(follower) + " -> " + std::to_string(followee) +
          " of " + std::to_string(pairs.size()) + ", backfill " +
          (o.backfill ? std::to_string(*o.backfill) : "default");
  std::vector<FollowResult> got;
  if (pairs.size() == 1) {
    const absl::StatusOr<FollowResult> r =
        engine_->Follow(follower, followee, o);
    if (model_.EitherBlocks(follower, followee)) {
      CHECK(absl::IsFailedPrecondition(r.status()));
      ++coverage_.follows_refused;
      got.push_back(FollowResult{.blocked = true});
    } else {
      REQUIRE_MESSAGE(r.ok(), r.status());
      got.push_back(*r);
    }
  } else {
    absl::StatusOr<std::vector<FollowResult>> r = engine_->FollowMany(pairs, o);
    REQUIRE_MESSAGE(r.ok(), r.status());
    REQUIRE(r->size() == pairs.size());
    got = *std::move(r);
  }
  for (size_t i = 0; i < pairs.size(); ++i) {
    Touch(pairs[i].follower);
    Touch(pairs[i].followee);
    const FollowResult want =
        model_.Follow(pairs[i].follower, pairs[i].followee,
                      o.backfill.value_or(config_.default_backfill), Now());
    INFO("pair " << i);
    CHECK(got[i].blocked ==
          model_.EitherBlocks(pairs[i].follower, pairs[i].followee));
    CHECK(got[i].created == want.created);
    CHECK(got[i].backfilled == want.backfilled);
    coverage_.backfilled += want.backfilled;
  }
}

void Runner::DoUnfollow() {
  const EntityId follower = Entity();
  EntityId followee = Entity();
  if (followee == follower) followee = follower % config_.entities + 1;
  // Mostly an existing edge.
  if (!OneIn(4)) {
    const std::set<EntityId>& following = model_.Following(follower);
    if (!following.empty()) {
      auto it = following.begin();
      std::advance(it, static_cast<long>(rng_() % following.size()));
      followee = *it;
    }
  }
  // A third of the time a batch: this pair, maybe twice, and the
  // follower's other followees.
  std::vector<FollowPair> pairs = {{follower, followee}};
  if (OneIn(3)) {
    if (OneIn(2)) pairs.push_back(pairs.front());
    for (const EntityId other : model_.Following(follower)) {
      if (other != followee && OneIn(2)) pairs.push_back({follower, other});
    }
  }
  UnfollowOptions o;
  o.keep_history = OneIn(5);
  what_ = (pairs.size() > 1 ? "UnfollowMany, first " : "Unfollow ") +
          std::to_string(follower) + " -> " + std::to_string(followee) +
          " of " + std::to_string(pairs.size()) +
          (o.keep_history ? " keeping history" : "");
  std::vector<UnfollowResult> got;
  if (pairs.size() == 1) {
    const absl::StatusOr<UnfollowResult> r =
        engine_->Unfollow(follower, followee, o);
    REQUIRE_MESSAGE(r.ok(), r.status());
    got.push_back(*r);
  } else {
    absl::StatusOr<std::vector<UnfollowResult>> r =
        engine_->UnfollowMany(pairs, o);
    REQUIRE_MESSAGE(r.ok(), r.status());
    REQUIRE(r->size() == pairs.size());
    got = *std::move(r);
  }
  for (size_t i = 0; i < pairs.size(); ++i) {
    Touch(pairs[i].follower);
    Touch(pairs[i].followee);
    const UnfollowResult want =
        model_.Unfollow(pairs[i].follower, pairs[i].followee, o.keep_history);
    coverage_.kept_histories += want.was_following && o.keep_history;
    INFO("pair " << i);
    CHECK(got[i].was_following == want.was_following);
    CHECK(got[i].removed == want.removed);
    coverage_.unfollow_removed += want.removed;
  }
}

std::pair<TimelineEntry, InsertOptions> Runner::LowLevel() {
  TimelineEntry e;
  InsertOptions o;
  const std::optional<ActivityId> published =
      OneIn(3) ? AnyStored(/*retracted_too=*/true) : std::nullopt;
  if (published) {
    const testing::FeedModel::Activity& s = model_.activities().at(*published);
    e.activity_id = *published;
    e.ts = OneIn(4) ? s.ts - 1 - static_cast<Micros>(rng_() % 5) : s.ts;
    e.actor = OneIn(2) ? s.actor : Entity();
    o.expires_at = s.expires_at;
    return {e, o};
  }
  e.activity_id = kLowLevelIds + rng_() % 6;
  e.ts = Now() - static_cast<Micros>(rng_() % (OneIn(4) ? 400 : 12));
  e.actor = Entity();
  e.group = OneIn(2) ? 0 : 1000 + rng_() % 3;
  switch (rng_() % 3) {
    case 0:
      o.ttl = 1 + static_cast<Micros>(rng_() % 400);
      break;
    case 1:
      o.expires_at = Now() + 1 + static_cast<Micros>(rng_() % 400);
      break;
    default:
      break;  // default_ttl
  }
  return {e, o};
}

void Runner::DoInsert() {
  const EntityId owner = Entity();
  const auto [e, o] = LowLevel();
  what_ = "Insert into " + std::to_string(owner) + " (" + std::to_string(e.ts) +
          ", " + std::to_string(e.activity_id) + ") actor " +
          std::to_string(e.actor);
  Touch(owner);
  InsertResult want;
  model_.Insert(owner, e, ExpiryOf(o), &want);
  CheckInsert(engine_->Insert(owner, e, o), want);
}

void Runner::DoFanout() {
  std::vector<EntityId> owners;
  const size_t n = rng_() % (config_.entities + 2);
  for (size_t i = 0; i < n; ++i) owners.push_back(Entity());
  const auto [e, o] = LowLevel();
  what_ = "InsertFanout to " + std::to_string(owners.size()) + " owners";
  InsertResult want;
  for (const EntityId owner : owners) {
    Touch(owner);
    model_.Insert(owner, e, ExpiryOf(o), &want);
  }
  CheckInsert(engine_->InsertFanout(owners, e, o), want);
}

void Runner::DoBatch() {
  std::vector<OwnedEntry> batch(rng_() % 7);
  InsertOptions o;
  std::optional<Micros> shared_expiry;
  for (OwnedEntry& pair : batch) {
    auto [e, eo] = LowLevel();
    pair.owner = Entity();
    pair.entry = e;
    // One set of options for the whole batch: an entry of a stored
    // activity must not outlive it, so the batch takes the earliest
    // such expiry.
    if (eo.expires_at && (!shared_expiry || *eo.expires_at < *shared_expiry)) {
      shared_expiry = eo.expires_at;
    }
  }
  if (shared_expiry) {
    o.expires_at = shared_expiry;
  } else if (OneIn(2)) {
    o.ttl = 1 + static_cast<Micros>(rng_() % 400);
  }
  what_ = "InsertBatch of " + std::to_string(batch.size());
  InsertResult want;
  for (const OwnedEntry& pair : batch) {
    Touch(pair.owner);
    model_.Insert(pair.owner, pair.entry, ExpiryOf(o), &want);
  }
  CheckInsert(engine_->InsertBatch(batch, o), want);
}

void Runner::DoRemove() {
  const EntityId owner = Entity();
  Key key{Now() - static_cast<Micros>(rng_() % 12), kLowLevelIds + rng_() % 6};
  const testing::FeedModel::FeedMap& home = model_.feed(Feed::kTimeline, owner);
  if (!home.empty() && !OneIn(4)) {
    auto it = home.begin();
    std::advance(it, static_cast<long>(rng_() % home.size()));
    key = it->first;
  }
  what_ = "Remove from " + std::to_string(owner) + " (" +
          std::to_string(key.first) + ", " + std::to_string(key.second) + ")";
  Touch(owner);
  const bool present = model_.Remove(owner, key);
  const absl::Status s = engine_->Remove(owner, {key.first, key.second});
  INFO(s);
  if (present) {
    CHECK(s.ok());
  } else {
    CHECK(absl::IsNotFound(s));
  }
}

void Runner::DoRefused() {
  check_all_ = true;
  const EntityId e = Entity();
  absl::Status s;
  const absl::StatusCode want = absl::StatusCode::kInvalidArgument;
  switch (rng_() % 12) {
    case 0:
      what_ = "Insert with ts < 0";
      s = engine_->Insert(e, {-1 - static_cast<Micros>(rng_() % 5), 1, e})
              .status();
      break;
    case 1: {
      what_ = "InsertFanout expiring now or before";
      InsertOptions o;
      o.expires_at = Now() - static_cast<Micros>(rng_() % 3);
      s = engine_->InsertFanout({e, Entity()}, {Now(), 5, e}, o).status();
      break;
    }
    case 2: {
      what_ = "InsertBatch with one bad pair";
      std::vector<OwnedEntry> batch;
      for (int i = 0; i < 4; ++i) batch.push_back({Entity(), {Now(), 7, e}});
      batch[rng_() % 4].entry.ts = -1;
      s = engine_->InsertBatch(batch).status();
      break;
    }
    case 3:
      what_ = "Remove with ts < 0";
      s = engine_->Remove(e, {-1, 1});
      break;
    case 4:
      what_ = "Follow of oneself";
      s = engine_->Follow(e, e).status();
      break;
    case 5: {
      what_ = "Follow with a bad back-fill";
      FollowOptions o;
      o.backfill = kMaxTimelineLengthLimit + 1 + rng_() % 10;
      s = engine_->Follow(e, e % config_.entities + 1, o).status();
      break;
    }
    case 6:
      what_ = "Unfollow of oneself";
      s = engine_->Unfollow(e, e).status();
      break;
    case 7: {
      what_ = "Publish refused";
      Activity a;
      a.id = next_id_++;  // never used again
      a.actor = e;
      a.ts = RecentTs();
      switch (rng_() % 3) {
        case 0:
          a.ts = -1;
          break;
        case 1:
          a.ttl = OneIn(2) ? -1 : kMaxTtl + 1;
          break;
        default:
          a.payload.assign(kMaxPayload + 1 + rng_() % 4, 'z');
          break;
      }
      s = engine_->Publish(a).status();
      break;
    }
    case 8: {
      what_ = "read with a bad limit or window";
      ReadOptions r;
      if (OneIn(2)) {
        r.limit = OneIn(2) ? 0 : config_.max_page_size + 1;
      } else {
        r.min_ts = Now();
        r.max_ts = Now() - 1;
      }
      s = ReadKind(static_cast<Feed>(rng_() % 3), e, r).status();
      break;
    }
    case 9: {
      what_ = "CountNewer with a bad argument";
      s = OneIn(2) ? engine_->CountNewer(e, {-1, 0}, 1).status()
                   : engine_
                         ->CountNewer(e, {0, 0},
                                      OneIn(2) ? 0 : config_.max_page_size + 1)
                         .status();
      break;
    }
    default: {
      if (walks_.empty()) return;
      const Walk& w = walks_[rng_() % walks_.size()];
      ReadOptions r;
      r.cursor = w.cursor;
      r.order = w.order;
      Feed kind = w.kind;
      EntityId owner = w.owner;
      switch (rng_() % 3) {
        case 0:
          what_ = "read with a cursor of the other order";
          r.order = w.order == ReadOrder::kNewestFirst
                        ? ReadOrder::kOldestFirst
                        : ReadOrder::kNewestFirst;
          break;
        case 1:
          what_ = "read with a cursor of another feed";
          kind = static_cast<Feed>(
              (static_cast<int>(w.kind) + 1 + static_cast<int>(rng_() % 2)) %
              3);
          break;
        default:
          what_ = "read with another owner's cursor";
          if (kind == Feed::kWorld) kind = Feed::kTimeline;
          owner = w.owner + config_.entities;
          break;
      }
      s = ReadKind(kind, owner, r).status();
      break;
    }
  }
  INFO(what_ << ": " << s);
  CHECK(s.code() == want);
  ++coverage_.refused;
}

void Runner::DoAdvance() {
  const Micros by = 1 + static_cast<Micros>(rng_() % 100);
  what_ = "advance the clock by " + std::to_string(by);
  check_all_ = true;
  clock_->Advance(by);
  const size_t expired = model_.EvictExpired(Now());
  coverage_.expired += expired;
  // Without FeedMaintenance (the cluster) reads drop expired entries and
  // keys expire.
  if (FeedMaintenance* maintenance = engine_->maintenance()) {
    CHECK(maintenance->EvictExpired(size_t{1} << 32).value() == expired);
  }
}

absl::StatusOr<Page> Runner::ReadKind(Feed kind, EntityId owner,
                                      const ReadOptions& r) const {
  switch (kind) {
    case Feed::kTimeline:
      return engine_->ReadTimeline(owner, r);
    case Feed::kOwn:
      return engine_->ReadOwn(owner, r);
    case Feed::kWorld:
      break;
  }
  return engine_->ReadWorld(r);
}

Page Runner::ReadPage(const Walk& w, std::optional<Key> after) {
  ReadOptions r;
  r.limit = 1 + rng_() % config_.max_page_size;
  r.order = w.order;
  r.min_ts = w.min_ts;
  r.max_ts = w.max_ts;
  r.hydrate = w.hydrate;
  r.cursor = w.cursor;
  const std::vector<StoredEntry> visible = model_.Read(
      w.kind, w.owner, w.order, w.min_ts, w.max_ts, after, Now(), w.hydrate);
  INFO("read " << Name(w.kind) << " of " << w.owner << " limit " << r.limit
               << " oldest_first " << (w.order == ReadOrder::kOldestFirst)
               << " min_ts " << (w.min_ts ? *w.min_ts : -1) << " max_ts "
               << (w.max_ts ? *w.max_ts : -1) << " hydrate " << w.hydrate
               << " after " << (after ? after->first : -1) << "/"
               << (after ? after->second : 0));
  const absl::StatusOr<Page> page = ReadKind(w.kind, w.owner, r);
  REQUIRE_MESSAGE(page.ok(), page.status());
  const std::vector<StoredEntry> want(
      visible.begin(),
      visible.begin() + static_cast<long>(std::min(r.limit, visible.size())));
  REQUIRE(page->entries == want);
  REQUIRE(page->next_cursor.empty() == (visible.size() <= r.limit));
  return *page;
}

void Runner::WholeFeed(Feed kind, EntityId owner, ReadOrder order) {
  Walk w{kind, owner, order, std::nullopt, std::nullopt, OneIn(3), "", {}};
  std::optional<Key> after;
  for (int pages = 0;; ++pages) {
    REQUIRE(pages < 10'000);
    const Page page = ReadPage(w, after);
    if (page.next_cursor.empty()) return;
    w.cursor = page.next_cursor;
    after = Key{page.entries.back().ts, page.entries.back().activity_id};
  }
}

void Runner::DoWalk() {
  Walk w;
  w.kind = static_cast<Feed>(rng_() % 3);
  w.owner = w.kind == Feed::kWorld ? 0 : Entity();
  w.order = OneIn(2) ? ReadOrder::kNewestFirst : ReadOrder::kOldestFirst;
  w.hydrate = OneIn(2);
  if (OneIn(2)) {
    const Micros a = Now() - static_cast<Micros>(rng_() % 200);
    const Micros b = Now() - static_cast<Micros>(rng_() % 200);
    if (!OneIn(3)) w.min_ts = std::min(a, b);
    if (!OneIn(3)) w.max_ts = std::max(a, b);
  }
  what_ =
      std::string("walk ") + Name(w.kind) + " of " + std::to_string(w.owner);
  Page page = ReadPage(w, std::nullopt);
  const int mode = static_cast<int>(rng_() % 3);
  while (mode == 0 && !page.next_cursor.empty()) {
    w.cursor = page.next_cursor;
    page = ReadPage(
        w, Key{page.entries.back().ts, page.entries.back().activity_id});
  }
  if (mode == 0) ++coverage_.walks_finished;
  if (mode == 1 && !page.next_cursor.empty()) {
    w.cursor = page.next_cursor;
    w.last = {page.entries.back().ts, page.entries.back().activity_id};
    if (walks_.size() >= 6) walks_.erase(walks_.begin());
    walks_.push_back(w);
  }
}

void Runner::DoContinue() {
  if (walks_.empty()) return DoWalk();
  const size_t i = rng_() % walks_.size();
  Walk& w = walks_[i];
  what_ = std::string("continue a walk of ") + Name(w.kind) + " of " +
          std::to_string(w.owner);
  const Page page = ReadPage(w, w.last);
  if (page.next_cursor.empty()) {
    ++coverage_.walks_finished;
    walks_.erase(walks_.begin() + static_cast<long>(i));
  } else {
    w.cursor = page.next_cursor;
    w.last = {page.entries.back().ts, page.entries.back().activity_id};
  }
}

std::vector<EntityId> Runner::WholeList(bool followers, EntityId entity) {
  std::vector<EntityId> out;
  ListOptions o;
  o.limit = 1 + rng_() % config_.max_page_size;
  for (int pages = 0;; ++pages) {
    REQUIRE(pages < 10'000);
    const absl::StatusOr<EntityPage> page = followers
                                                ? engine_->Followers(entity, o)
                                                : engine_->Following(entity, o);
    REQUIRE_MESSAGE(page.ok(), page.status());
    REQUIRE(page->ids.size() <= o.limit);
    out.insert(out.end(), page->ids.begin(), page->ids.end());
    if (page->next_cursor.empty()) return out;
    REQUIRE(page->ids.size() == o.limit);
    o.cursor = page->next_cursor;
  }
}

void Runner::WholeGroups(EntityId owner) {
  const std::vector<FeedGroup> want = model_.Groups(owner, Now());
  GroupReadOptions r;
  r.limit = 1 + rng_() % config_.max_page_size;
  r.hydrate = OneIn(4);
  size_t at = 0;
  for (int pages = 0;; ++pages) {
    INFO("ReadGroups of " << owner << " limit " << r.limit << " page "
                          << pages);
    REQUIRE(pages < 10'000);
    absl::StatusOr<GroupPage> page = engine_->ReadGroups(owner, r);
    REQUIRE_MESSAGE(page.ok(), page.status());
    const size_t expected = std::min(r.limit, want.size() - at);
    REQUIRE(page->groups.size() == expected);
    for (size_t i = 0; i < expected; ++i) {
      FeedGroup& got = page->groups[i];
      for (StoredEntry& entry : got.recent) {
        if (r.hydrate)
          CHECK(entry.payload == model_.Payload(entry.activity_id));
        entry.payload.clear();
      }
      REQUIRE(got == want[at + i]);
      coverage_.shared_groups += got.activity_count > 1;
    }
    at += expected;
    REQUIRE(page->next_cursor.empty() == (at == want.size()));
    if (page->next_cursor.empty()) break;
    r.cursor = page->next_cursor;
  }
  ++coverage_.group_walks;
}

void Runner::CheckEntity(EntityId e) {
  INFO("entity " << e);
  WholeGroups(e);
  for (const ReadOrder order :
       {ReadOrder::kNewestFirst, ReadOrder::kOldestFirst}) {
    WholeFeed(Feed::kTimeline, e, order);
    WholeFeed(Feed::kOwn, e, order);
  }
  // Followers come in a stable order that differs by backend, so they
  // compare as a set (each once); followees by ascending id on both.
  const std::vector<EntityId> followers = WholeList(true, e);
  const std::set<EntityId>& want = model_.Followers(e);
  CHECK(followers.size() == want.size());
  CHECK(std::set<EntityId>(followers.begin(), followers.end()) == want);
  const std::set<EntityId>& following = model_.Following(e);
  CHECK(WholeList(false, e) ==
        std::vector<EntityId>(following.begin(), following.end()));
  CHECK(engine_->FollowerCount(e).value() == want.size());
  CHECK(engine_->FollowingCount(e).value() == following.size());
  if (engine_->relations() != nullptr) CheckRelationLists(e);

  // CountNewer from an entry of the timeline, or from anywhere.
  Key from{Now() - static_cast<Micros>(rng_() % 100), rng_() % 8};
  const testing::FeedModel::FeedMap& home = model_.feed(Feed::kTimeline, e);
  if (!home.empty() && OneIn(2)) {
    auto it = home.begin();
    std::advance(it, static_cast<long>(rng_() % home.size()));
    from = it->first;
  }
  const size_t max_count = 1 + rng_() % config_.max_page_size;
  const absl::StatusOr<size_t> newer =
      engine_->CountNewer(e, {from.first, from.second}, max_count);
  REQUIRE_MESSAGE(newer.ok(), newer.status());
  CHECK(*newer == model_.CountNewer(e, from, max_count, Now()));
}

void Runner::CheckAll() {
  for (EntityId e = 1; e <= config_.entities; ++e) CheckEntity(e);
  CheckWorld();
  if (FeedMaintenance* maintenance = engine_->maintenance()) {
    // With nothing expired held, the figures are exact.
    const EngineStats stats = maintenance->Stats().value();
    CHECK(stats.entries == model_.entries());
    CHECK(stats.follow_edges == model_.follow_edges());
    CHECK(stats.activities == model_.activities().size());
  }
}

}  // namespace feedcore::conformance_model
