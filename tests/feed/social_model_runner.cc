#include "feed/social_model_runner.h"

#include <cstdio>
#include <cstdlib>

namespace feedcore::social_model {

void Runner::Run(int ops) {
  for (step_ = 0; step_ < ops; ++step_) {
    INFO("step " << step_ << ": " << what_);
    if (std::getenv("FEEDCORE_MODEL_TRACE") != nullptr) {
      fprintf(stderr, "%d %s\n", step_, what_.c_str());
    }
    // Blocks and mutes remove entries: not in a run without removals. They
    // come between the other operations, which keep their own draws.
    const uint64_t relations = config_.inactive_only ? 6 : 2;
    if (config_.removals && relation_rng_() % 100 < relations) DoRelation();
    if (config_.removals && inactive_rng_() % 100 < 4) DoReleaseInactive();
    if (reaction_rng_() % 100 < 6) DoReaction();
    if (config_.account_lists && list_rng_() % 100 < 6) DoAccountLists();
    int op = static_cast<int>(rng_() % 100);
    // Without removals: follows instead of unfollows, publishes instead of
    // retracts, clock advances and evictions.
    if (!config_.removals && op >= 14 && op < 21) op = 0;
    if (!config_.removals && ((op >= 41 && op < 46) || (op >= 85 && op < 95))) {
      op = 21;
    }
    if (config_.inactive_only && op >= 41 && op < 46) op = 21;  // no retract
    if (op < 14) {
      DoFollow();
    } else if (op < 21) {
      DoUnfollow();
    } else if (op < 41) {
      DoPublish();
    } else if (op < 46) {
      DoRetract();
    } else if (op < 58) {
      DoNewRead();
    } else if (op < 66) {
      DoNewGroupRead();
    } else if (op < 78) {
      DoContinue();
    } else if (op < 82) {
      DoCountNewer();
    } else if (op < 85) {
      DoLists();
    } else if (op < 92) {
      what_ = "advance clock";
      clock_->Advance(static_cast<Micros>(rng_() % 60));
    } else if (op < 95) {
      DoEvict();
    } else if (op < 97) {
      DoInvalid();
    } else if (op < 99) {
      DoMarkers();
    } else {
      CheckStats();
    }
  }
  INFO("final check");
  CheckStats();
}

void Runner::DoFollow() {
  SettleAtCap();
  const EntityId follower = Entity();
  EntityId followee = Entity();
  if (followee == follower) followee = follower % config_.entities + 1;
  FollowOptions options;
  size_t count = kCompleteBackfill;
  if (!config_.complete_backfill) {
    switch (rng_() % 5) {
      case 0:
        count = 0;
        break;
      case 1:
        count = 1;
        break;
      case 2:
        count = 2 + rng_() % 6;
        break;
      case 3:
        count = 3;  // the engine default, left unset
        break;
      default:
        count = kCompleteBackfill;
        break;
    }
    if (count != 3) options.backfill = count;
  } else if (rng_() % 2 == 0) {
    options.backfill = count;
  }
  // Some follows deliver only some of the kinds drawn (0..2).
  std::optional<uint64_t> kinds;
  if (kind_rng_() % 3 == 0) {
    kinds = 1 + kind_rng_() % 7;
    options.kinds = KindFilter::Only({});
    options.kinds->kinds = *kinds;
  }
  what_ = "Follow " + std::to_string(follower) + " -> " +
          std::to_string(followee) + " backfill " + std::to_string(count) +
          " kinds " + std::to_string(kinds.value_or(KindFilter::kEveryKind));
  for (Member& m : members_) {
    INFO("threshold " << m.threshold);
    if (m.model.FollowsWithOtherKinds(follower, followee, kinds)) {
      const absl::Status status =
          m.engine->Follow(follower, followee, options).status();
      REQUIRE_MESSAGE(absl::IsFailedPrecondition(status), status);
      ++coverage_.follows_refused;
      continue;
    }
    const bool refused = m.model.EitherBlocks(follower, followee);
    const FollowResult want =
        m.model.Follow(follower, followee, count, clock_->Now(), kinds);
    const absl::StatusOr<FollowResult> got =
        m.engine->Follow(follower, followee, options);
    if (refused) {
      REQUIRE(absl::IsFailedPrecondition(got.status()));
      ++coverage_.follows_refused;
      continue;
    }
    REQUIRE_MESSAGE(got.ok(), got.status());
    REQUIRE(got->created == want.created);
    // At the cap, what a back-fill keeps depends on the copies the
    // timeline holds: an engine holds none of what it merges.
    if (config_.cap == kCap || m.HoldsAllCopies()) {
      REQUIRE(got->backfilled == want.backfilled);
    }
    coverage_.backfilled += got->backfilled;
    if (want.created && m.model.merged(followee)) {
      size_t visible = 0;
      for (const auto& [key, value] : m.model.feed(Feed::kOwn, followee)) {
        visible += value.expires_at > clock_->Now();
      }
      coverage_.hidden_by_boundary += visible > count;
    }
  }
}

void Runner::DoReleaseInactive() {
  Settle();
  const size_t budget = 1 + inactive_rng_() % 4;
  what_ = "ReleaseInactiveReaders " + std::to_string(budget);
  for (Member& m : members_) {
    INFO("threshold " << m.threshold << " inactive_after " << m.inactive_after);
    const absl::StatusOr<size_t> got = m.engine->ReleaseInactiveReaders(budget);
    if (m.inactive_after == 0) {
      REQUIRE(absl::IsFailedPrecondition(got.status()));
      continue;
    }
    REQUIRE_MESSAGE(got.ok(), got.status());
    REQUIRE(*got <= budget);
    coverage_.made_dormant += *got;
  }
}

void Runner::DoRelation() {
  const EntityId user = 1 + relation_rng_() % config_.entities;
  EntityId actor = 1 + relation_rng_() % config_.entities;
  if (actor == user) actor = user % config_.entities + 1;
  const int kind = static_cast<int>(relation_rng_() % 100);
  const Micros now = clock_->Now();
  MuteOptions mute;
  mute.notifications = relation_rng_() % 2 == 0;
  // Mutes expire only where no actor is merged at read: every engine is
  // compared with the copy-mode model, and a merged actor's mute that
  // expires cannot match it (feed_engine.h, Mute): its entries published
  // during the mute, never copied, show again through the merge.
  if (config_.inactive_only && relation_rng_() % 2 == 0) {
    mute.expires_at = now + 1 + static_cast<Micros>(relation_rng_() % 150);
  }
  RestoreOptions restore;
  restore.backfill = config_.complete_backfill || relation_rng_() % 3 == 0
                         ? kCompleteBackfill
                         : relation_rng_() % 5;
  const char* name = kind < 20   ? "Block"
                     : kind < 35 ? "Unblock"
                     : kind < 75 ? "Mute"
                                 : "Unmute";
  what_ = std::string(name) + " " + std::to_string(user) + " -> " +
          std::to_string(actor);
  if (kind >= 35 && kind < 75 && mute.expires_at) {
    what_ += " until " + std::to_string(*mute.expires_at);
    ++coverage_.expiring_mutes;
  }
  Settle();
  for (Member& m : members_) {
    INFO("threshold " << m.threshold);
    RelationResult want;
    absl::StatusOr<RelationResult> got;
    if (kind < 20) {
      want = m.model.Block(user, actor);
      got = m.engine->Block(user, actor);
    } else if (kind < 35) {
      want = m.model.Unblock(user, actor, restore.backfill, now);
      got = m.engine->Unblock(user, actor, restore);
    } else if (kind < 75) {
      want = m.model.Mute(user, actor, mute, now);
      got = m.engine->Mute(user, actor, mute);
    } else {
      want = m.model.Unmute(user, actor, restore.backfill, now);
      got = m.engine->Unmute(user, actor, restore);
    }
    REQUIRE_MESSAGE(got.ok(), got.status());
    REQUIRE(got->changed == want.changed);
    // An engine holds no copies of what it merges: removed counts and, at
    // a cap, what a back-fill keeps depend on them.
    if (m.HoldsAllCopies()) REQUIRE(got->removed == want.removed);
    // A dormant reader's restore moves its merge instead of copying.
    if ((config_.cap == kCap && m.inactive_after == 0) || m.HoldsAllCopies()) {
      REQUIRE(got->backfilled == want.backfilled);
    }
    REQUIRE(got->follows_ended == want.follows_ended);
    coverage_.hidden_removed += got->removed;
    coverage_.restored += got->backfilled;
  }
  CheckRelationLists(user);
}

void Runner::CheckRelationLists(EntityId user) {
  const ListOptions list{1 + relation_rng_() % 4, ""};
  for (Member& m : members_) {
    INFO("threshold " << m.threshold << " relation lists of " << user);
    std::vector<EntityId> blocked;
    std::vector<MutedActor> muted;
    ListOptions page = list;
    for (;;) {
      const absl::StatusOr<EntityPage> got = m.engine->Blocked(user, page);
      REQUIRE_MESSAGE(got.ok(), got.status());
      blocked.insert(blocked.end(), got->ids.begin(), got->ids.end());
      if (got->next_cursor.empty()) break;
      page.cursor = got->next_cursor;
    }
    page = list;
    for (;;) {
      const absl::StatusOr<MutedPage> got = m.engine->Muted(user, page);
      REQUIRE_MESSAGE(got.ok(), got.status());
      muted.insert(muted.end(), got->actors.begin(), got->actors.end());
      if (got->next_cursor.empty()) break;
      page.cursor = got->next_cursor;
    }
    REQUIRE(blocked == m.model.BlockedList(user));
    REQUIRE(muted == m.model.MutedList(user, clock_->Now()));
  }
}

void Runner::DoUnfollow() {
  SettleAtCap();
  const EntityId follower = Entity();
  EntityId followee = Entity();
  if (followee == follower) followee = follower % config_.entities + 1;
  UnfollowOptions options;
  options.keep_history = rng_() % 8 == 0;
  what_ = "Unfollow " + std::to_string(follower) + " -> " +
          std::to_string(followee) +
          (options.keep_history ? " keeping history" : "");
  for (Member& m : members_) {
    INFO("threshold " << m.threshold);
    const UnfollowResult want =
        m.model.Unfollow(follower, followee, options.keep_history);
    const absl::StatusOr<UnfollowResult> got =
        m.engine->Unfollow(follower, followee, options);
    REQUIRE_MESSAGE(got.ok(), got.status());
    REQUIRE(got->was_following == want.was_following);
    // Entries of a merged followee are merged, not copies to remove.
    if (!m.model.merged(followee) && m.inactive_after == 0) {
      REQUIRE(got->removed == want.removed);
    }
    coverage_.removed_on_unfollow += got->removed;
  }
}

Activity Runner::NewActivity() {
  head_ += static_cast<Micros>(rng_() % 3);
  Activity a;
  a.id = ++next_id_;
  a.actor = Entity();
  // Mostly recent, some anywhere in the past; equal timestamps common.
  a.ts = rng_() % 4 != 0 ? head_ - static_cast<Micros>(rng_() % 5)
                         : static_cast<Micros>(rng_() % (head_ + 1));
  a.ts = std::max<Micros>(a.ts, 0);
  a.payload = Payload();
  a.ttl = rng_() % 3 == 0 ? 0 : 1 + static_cast<Micros>(rng_() % 600);
  if (config_.inactive_only) a.ttl = 0;  // the long default
  if (rng_() % 4 != 0) {                 // otherwise neither: ungrouped
    a.verb = rng_() % kVerbs;
    a.object = rng_() % kObjects;
  }
  if (kind_rng_() % 2 == 0) a.kind = static_cast<ActivityKind>(kind_rng_() % 3);
  if (config_.repost_window != 0 && next_id_ > 1) {
    // Most activities of the repost kind repost a recent one, so that the
    // original is often within the window; a few reposts are refused, of
    // another kind or of themselves.
    const uint64_t draw = repost_rng_() % 32;
    if ((a.kind == kRepostKind && draw < 24) || draw == 24) {
      a.repost_of =
          next_id_ - 1 - repost_rng_() % std::min<ActivityId>(next_id_ - 1, 8);
    } else if (draw == 25) {
      a.repost_of = a.id;
    }
  }
  return a;
}

void Runner::DoPublish() {
  Activity a = NewActivity();
  const int kind = static_cast<int>(rng_() % 100);
  if (kind < 10) {
    if (auto known = AnyKnown()) {  // the same again: idempotent
      a.id = known->first;
      a.actor = known->second.actor;
      a.ts = known->second.ts;
      a.payload = known->second.payload;
      a.repost_of = known->second.repost_of;
      // Now and then of another kind: refused as another activity.
      a.kind = static_cast<ActivityKind>(known->second.kind +
                                         (kind_rng_() % 8 == 0 ? 1 : 0));
    }
  } else if (kind < 14) {
    if (auto known = AnyKnown()) {  // a different activity, same id
      a.id = known->first;
      a.actor = known->second.actor;
      a.ts = known->second.ts;
      a.payload = known->second.payload + "x";
      if (a.payload.size() > kMaxPayload) a.payload = "";
    }
  }
  PublishOptions options;
  const bool async = rng_() % 3 == 0;
  if (async) options.completion = FanoutCompletion::kAsynchronous;
  if (rng_() % 3 == 0) {  // a chat message that mentions a few users
    for (size_t n = 1 + rng_() % 3; n > 0; --n) {
      options.mentions.push_back(Entity());
    }
  }
  what_ = std::string(async ? "async " : "") + "Publish id " +
          std::to_string(a.id) + " actor " + std::to_string(a.actor) + " ts " +
          std::to_string(a.ts) + " ttl " + std::to_string(a.ttl) + " with " +
          std::to_string(options.mentions.size()) + " mentions";
  std::optional<absl::StatusOr<PublishResult>> first;
  for (Member& m : members_) {
    INFO("threshold " << m.threshold);
    const absl::StatusOr<PublishResult> want =
        m.model.Publish(a, options, clock_->Now());
    const absl::StatusOr<PublishResult> got = m.engine->Publish(a, options);
    INFO("want " << (want.ok() ? Show(*want) : want.status().ToString())
                 << " got "
                 << (got.ok() ? Show(*got) : got.status().ToString()));
    REQUIRE(got.status().code() == want.status().code());
    if (!first) first = got;
    if (!want.ok()) continue;
    REQUIRE(got->created == want->created);
    // Dormant readers get no copies.
    if (m.inactive_after == 0) {
      REQUIRE(got->fanned_out == want->fanned_out);
    } else {
      REQUIRE(got->fanned_out <= want->fanned_out);
    }
    if (&m == &members_.back() && want->created) {
      coverage_.hidden_skipped +=
          m.model.Followers(a.actor).size() - want->fanned_out;
    }
    REQUIRE(got->merged_at_read == want->merged_at_read);
    if (!async) REQUIRE_FALSE(got->pending);
    if (got->pending) pending_ = true;
    if (!want->created) continue;
    for (EntityId owner = 1; owner <= kWatchedTimelines; ++owner) {
      for (const StoredEntry& e : m.model.Delivered(owner, clock_->Now())) {
        if (KeyOf(e) == Key{a.ts, a.id}) m.expected.insert({owner, KeyOf(e)});
      }
    }
  }
  if (!pending_) CheckDeliveries();
  coverage_.async_publishes += async;
  if (first->ok() && !(*first)->created) ++coverage_.idempotent;
  if (absl::IsAlreadyExists(first->status())) ++coverage_.conflicts;
}

void Runner::CheckDeliveries() {
  for (Member& m : members_) {
    INFO("threshold " << m.threshold << " inactive_after " << m.inactive_after);
    REQUIRE(m.engine->DispatchDeliveries().ok());
    for (const auto& want : m.expected) {
      INFO("owner " << want.first << " key " << want.second.first << "/"
                    << want.second.second);
      REQUIRE(m.delivered->count(want) == m.expected.count(want));
    }
    for (const std::pair<EntityId, Key>& told : *m.delivered) {
      if (m.expected.contains(told)) continue;
      const EntityId owner = told.first;
      const Key key = told.second;
      // A copy that a reached cap trimmed as it landed.
      INFO("told of owner " << owner << " key " << key.first << "/"
                            << key.second);
      REQUIRE(config_.cap != kCap);
      for (const StoredEntry& e : m.model.Delivered(owner, clock_->Now())) {
        REQUIRE(KeyOf(e) != key);
      }
    }
    m.delivered->clear();
    m.expected.clear();
  }
}

void Runner::DoRetract() {
  ActivityId id = next_id_ + 1 + rng_() % 3;  // unknown
  if (rng_() % 6 != 0) {
    if (auto known = AnyKnown()) id = known->first;
  }
  what_ = "Retract " + std::to_string(id);
  for (Member& m : members_) {
    INFO("threshold " << m.threshold);
    const absl::StatusCode want = m.model.Retract(id);
    const absl::Status got = m.engine->Retract(id);
    INFO(got);
    REQUIRE(got.code() == want);
  }
  ++coverage_.retracted;
}

void Runner::DoLists() {
  Settle();
  const EntityId e = Entity();
  const size_t limit = 1 + rng_() % 4;
  what_ = "lists of " + std::to_string(e);
  for (Member& m : members_) {
    INFO("threshold " << m.threshold);
    const std::set<EntityId> followers = m.model.Followers(e);
    const std::set<EntityId> following = m.model.Following(e);
    const std::vector<EntityId> got_followers =
        testing::WholeList(*m.engine, true, e, limit);
    const std::vector<EntityId> got_following =
        testing::WholeList(*m.engine, false, e, limit);
    REQUIRE(got_followers.size() == followers.size());
    REQUIRE(std::set<EntityId>(got_followers.begin(), got_followers.end()) ==
            followers);
    REQUIRE(got_following ==
            std::vector<EntityId>(following.begin(), following.end()));
    REQUIRE(m.engine->FollowerCount(e).value() == followers.size());
    REQUIRE(m.engine->FollowingCount(e).value() == following.size());
  }
}

void Runner::DoEvict() {
  Settle();
  const Micros now = clock_->Now();
  const uint64_t budget = rng_() % 2 == 0 ? 1 + rng_() % 5 : kEvictAll;
  what_ = "EvictExpired " + std::to_string(budget);
  for (Member& m : members_) {
    INFO("threshold " << m.threshold);
    const size_t expired = m.model.CountExpired(now);
    const size_t first = m.engine->EvictExpired(budget).value();
    // Reclaim the rest, so that the model knows what is held.
    const size_t rest = m.engine->EvictExpired(kEvictAll).value();
    // An engine holds no copies of what it merges at read.
    if (m.HoldsAllCopies()) {
      REQUIRE(first == std::min<uint64_t>(budget, expired));
      REQUIRE(rest == expired - first);
    }
    m.model.EvictExpired(now);
    coverage_.evicted += expired;
  }
}

void Runner::DoInvalid() {
  Settle();
  what_ = "invalid calls";
  Activity bad = NewActivity();
  switch (rng_() % 3) {
    case 0:
      bad.ts = -1 - static_cast<Micros>(rng_() % 5);
      break;
    case 1:
      bad.payload = std::string(kMaxPayload + 1, 'q');
      break;
    default:
      bad.ttl = kMaxTtl + 1;
      break;
  }
  const EntityId e = Entity();
  for (size_t k = 0; k < members_.size(); ++k) {
    Member& m = members_[k];
    INFO("threshold " << m.threshold);
    const auto before = testing::Social(m.engine->Stats().value());
    CHECK(absl::IsInvalidArgument(m.engine->Publish(bad).status()));
    CHECK(absl::IsInvalidArgument(m.engine->Follow(e, e).status()));
    FollowOptions too_many;
    too_many.backfill = kMaxTimelineLengthLimit + 1;
    CHECK(absl::IsInvalidArgument(
        m.engine->Follow(e, e % config_.entities + 1, too_many).status()));
    ReadOptions foreign;
    foreign.cursor = "definitely not a cursor";
    CHECK(absl::IsInvalidArgument(m.engine->ReadTimeline(e, foreign).status()));
    CHECK(absl::IsInvalidArgument(
        m.engine->CountNewer(e, {0, 0}, kMaxPage + 1).status()));
    CHECK(absl::IsInvalidArgument(
        m.engine->SetReadMarker(e, MarkedFeed::Home(e + 1), {1, 1}).status()));
    CHECK(absl::IsInvalidArgument(
        m.engine->GetReadMarker(e, MarkedFeed::World(), kMaxPage + 1)
            .status()));
    GroupReadOptions groups;
    groups.limit = 0;
    CHECK(absl::IsInvalidArgument(m.engine->ReadGroups(e, groups).status()));
    groups.limit = kMaxPage + 1;
    CHECK(absl::IsInvalidArgument(m.engine->ReadGroups(e, groups).status()));
    groups.limit = 1;
    groups.cursor = foreign.cursor;
    CHECK(absl::IsInvalidArgument(m.engine->ReadGroups(e, groups).status()));
    // Cursors of open walks: a flat one, or a grouped one of another
    // reader, is no group cursor of `e`.
    for (const Session& s : sessions_) {
      const std::string& cursor = s.cursor[k];
      if (cursor.empty() || (s.grouped && s.owner == e)) continue;
      groups.cursor = cursor;
      CHECK(absl::IsInvalidArgument(m.engine->ReadGroups(e, groups).status()));
      if (!s.grouped) continue;
      foreign.cursor = cursor;
      CHECK(
          absl::IsInvalidArgument(m.engine->ReadTimeline(e, foreign).status()));
    }
    REQUIRE(testing::Social(m.engine->Stats().value()) == before);
  }
  --next_id_;  // the id was not taken
}

void Runner::DoMarkers() {
  Settle();
  const EntityId user = Entity();
  MarkedFeed feed = MarkedFeed::Home(user);
  Feed model_feed = Feed::kTimeline;
  switch (rng_() % 3) {
    case 0:
      break;
    case 1:
      feed = MarkedFeed::Own(Entity());
      model_feed = Feed::kOwn;
      break;
    default:
      feed = MarkedFeed::World();
      model_feed = Feed::kWorld;
      break;
  }
  Key key{static_cast<Micros>(rng_() % (head_ + 2)), rng_() % (next_id_ + 2)};
  const std::vector<StoredEntry> visible = members_[0].model.Read(
      model_feed, feed.owner, ReadOrder::kNewestFirst, std::nullopt,
      std::nullopt, std::nullopt, clock_->Now(), false);
  if (!visible.empty() && rng_() % 4 != 0) {
    key = KeyOf(visible[rng_() % visible.size()]);
  }
  const bool force = rng_() % 4 == 0;
  const size_t max_unread = 1 + rng_() % kMaxPage;
  what_ = "marker of " + std::to_string(user) + " in feed " +
          std::to_string(static_cast<int>(feed.type)) + "/" +
          std::to_string(feed.owner);
  std::optional<ReadMarker> first;
  for (Member& m : members_) {
    INFO("threshold " << m.threshold);
    const bool want_moved =
        m.model.SetReadMarker(user, feed, key, force).value();
    const absl::StatusOr<bool> moved = m.engine->SetReadMarker(
        user, feed, {key.first, key.second}, {.force = force});
    REQUIRE_MESSAGE(moved.ok(), moved.status());
    REQUIRE(*moved == want_moved);
    const ReadMarker want =
        m.model.GetReadMarker(user, feed, max_unread, clock_->Now()).value();
    const absl::StatusOr<ReadMarker> got =
        m.engine->GetReadMarker(user, feed, max_unread);
    REQUIRE_MESSAGE(got.ok(), got.status());
    REQUIRE(got->key == want.key);
    REQUIRE(got->unread == want.unread);
    REQUIRE(got->more_unread == want.more_unread);
    REQUIRE(got->mentions == want.mentions);
    if (config_.complete_backfill) {
      if (!first) first = *got;
      REQUIRE(got->unread == first->unread);
    }
    if (&m == &members_[0]) {
      coverage_.markers_moved += *moved;
      coverage_.markers_unread += got->unread > 0;
    }
    // All of the user's markers, a few at a time.
    const std::vector<FeedReadState> want_all =
        m.model.ReadStates(user, max_unread, clock_->Now());
    ReadStateOptions list;
    list.limit = 1 + rng_() % 4;
    list.max_unread = max_unread;
    std::vector<FeedReadState> got_all;
    for (int pages = 0;; ++pages) {
      REQUIRE(pages <= static_cast<int>(want_all.size()));
      const absl::StatusOr<ReadStatePage> page =
          m.engine->ListReadMarkers(user, list);
      REQUIRE_MESSAGE(page.ok(), page.status());
      REQUIRE(page->feeds.size() <= list.limit);
      got_all.insert(got_all.end(), page->feeds.begin(), page->feeds.end());
      if (page->next_cursor.empty()) break;
      list.cursor = page->next_cursor;
    }
    REQUIRE(got_all.size() == want_all.size());
    for (size_t i = 0; i < got_all.size(); ++i) {
      INFO("read state of feed " << static_cast<int>(want_all[i].feed.type)
                                 << "/" << want_all[i].feed.owner);
      REQUIRE(got_all[i].feed == want_all[i].feed);
      REQUIRE(got_all[i].marker.key == want_all[i].marker.key);
      REQUIRE(got_all[i].marker.unread == want_all[i].marker.unread);
      REQUIRE(got_all[i].marker.more_unread == want_all[i].marker.more_unread);
      REQUIRE(got_all[i].marker.mentions == want_all[i].marker.mentions);
      if (&m == &members_[0]) {
        coverage_.mentions_counted += got_all[i].marker.mentions;
      }
    }
  }
}

void Runner::CheckStats() {
  Settle();
  what_ = "Stats";
  for (Member& m : members_) {
    INFO("threshold " << m.threshold);
    const EngineStats got = m.engine->Stats().value();
    const Model::Totals want = m.model.Expected();
    // Notification feeds hold the notices of reactions (DoReaction).
    size_t notifications = 0;
    for (EntityId e = 1; e <= config_.entities; ++e) {
      notifications += m.model.notifications(e).size();
    }
    // An engine holds no copies of what it merges at read.
    if (m.HoldsAllCopies()) CHECK(got.entries == want.entries + notifications);
    CHECK(got.activities == want.activities);
    CHECK(got.retracted_activities == want.retracted);
    CHECK(got.payload_bytes == want.payload_bytes);
    CHECK(got.follow_edges == want.follow_edges);
    CHECK(got.activities_evicted == want.activities_evicted);
    if (config_.cap == kCap) CHECK(got.trimmed == 0);
    coverage_.trimmed += got.trimmed;
    size_t shard_entries = 0;
    for (const ShardStats& s : got.shards) shard_entries += s.entries;
    CHECK(shard_entries == got.entries);
  }
}

}  // namespace feedcore::social_model
