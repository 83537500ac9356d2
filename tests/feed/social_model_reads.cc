// Runner's reads (social_model_runner.h): pages, grouped pages and counts
// of new entries, each continued by its cursor, against the model.
#include <optional>
#include <string>
#include <vector>

#include "feed/social_model_runner.h"
#include "support/random_window.h"

namespace feedcore::social_model {

void Runner::RandomWindow(std::optional<Micros>* min_ts,
                          std::optional<Micros>* max_ts) {
  testing::RandomWindow(rng_, head_, min_ts, max_ts);
}
void Runner::ReadPage(Session& s) {
  if (s.grouped) return ReadGroupPage(s);
  Settle();
  const size_t limit = 1 + rng_() % kMaxPage;
  const Micros now = clock_->Now();
  std::optional<Page> first;
  bool all_done = true;
  for (size_t k = 0; k < members_.size(); ++k) {
    Member& m = members_[k];
    if (s.done[k]) continue;
    INFO("threshold " << m.threshold << " read " << FeedName(s.feed)
                      << " owner " << s.owner << " limit " << limit
                      << " oldest_first "
                      << (s.order == ReadOrder::kOldestFirst) << " min_ts "
                      << (s.min_ts ? *s.min_ts : -1) << " max_ts "
                      << (s.max_ts ? *s.max_ts : -1) << " hydrate " << s.hydrate
                      << " kinds " << s.kinds << " after "
                      << (s.last[k] ? s.last[k]->first : -1) << "/"
                      << (s.last[k] ? s.last[k]->second : 0));
    ReadOptions r;
    r.limit = limit;
    r.order = s.order;
    r.min_ts = s.min_ts;
    r.max_ts = s.max_ts;
    r.hydrate = s.hydrate;
    r.cursor = s.cursor[k];
    r.kinds.kinds = s.kinds;
    const std::vector<StoredEntry> visible =
        m.model.Read(s.feed, s.owner, s.order, s.min_ts, s.max_ts, s.last[k],
                     now, s.hydrate, s.kinds);
    if (k == 0) {
      // With a repost window, more entries may hide at `now` than when
      // none has expired.
      const size_t held =
          m.model
              .Read(s.feed, s.owner, s.order, s.min_ts, s.max_ts, s.last[k],
                    std::numeric_limits<Micros>::min(), false)
              .size();
      coverage_.hidden_expired += held - std::min(held, visible.size());
      if (s.feed == Feed::kTimeline) {
        const std::vector<StoredEntry> delivered =
            m.model.Delivered(s.owner, now);
        const size_t excluded = std::count_if(
            delivered.begin(), delivered.end(), [&](const StoredEntry& e) {
              return m.model.ExcludesFromHome(s.owner, e.actor);
            });
        coverage_.home_excluded += excluded > 0;
        if (m.model.Timeline(s.owner, now).size() + excluded <
            delivered.size()) {
          ++coverage_.reposts_hidden;
        }
      }
    }
    const absl::StatusOr<Page> page =
        testing::ReadFeed(*m.engine, s.feed, s.owner, r);
    REQUIRE_MESSAGE(page.ok(), page.status());
    const std::vector<StoredEntry> want(
        visible.begin(),
        visible.begin() + static_cast<long>(std::min(limit, visible.size())));
    REQUIRE(page->entries == want);
    REQUIRE(page->next_cursor.empty() == (visible.size() <= limit));
    {
      if (!first) {
        first = *page;
      } else {
        // The threshold changes nothing a reader sees, cursors included.
        REQUIRE(page->entries == first->entries);
        REQUIRE(page->next_cursor == first->next_cursor);
      }
    }
    if (!page->entries.empty()) s.last[k] = KeyOf(page->entries.back());
    s.cursor[k] = page->next_cursor;
    if (page->next_cursor.empty()) {
      s.done[k] = true;
    } else {
      all_done = false;
    }
  }
  if (all_done) ++coverage_.walks_finished;
}

void Runner::ReadGroupPage(Session& s) {
  Settle();
  const size_t limit = 1 + rng_() % kMaxPage;
  const Micros now = clock_->Now();
  std::optional<GroupPage> first;
  bool all_done = true;
  for (size_t k = 0; k < members_.size(); ++k) {
    Member& m = members_[k];
    if (s.done[k]) continue;
    INFO("threshold " << m.threshold << " ReadGroups owner " << s.owner
                      << " limit " << limit << " kinds " << s.kinds << " after "
                      << (s.last[k] ? s.last[k]->first : -1) << "/"
                      << (s.last[k] ? s.last[k]->second : 0));
    std::vector<FeedGroup> below = m.model.Groups(s.owner, now, s.kinds);
    if (s.last[k]) {
      std::erase_if(below, [&](const FeedGroup& g) {
        return !(PlaceOf(g) < *s.last[k]);
      });
    }
    const std::vector<FeedGroup> want(
        below.begin(),
        below.begin() + static_cast<long>(std::min(limit, below.size())));
    GroupReadOptions r;
    r.limit = limit;
    r.cursor = s.cursor[k];
    r.kinds.kinds = s.kinds;
    const absl::StatusOr<GroupPage> page = m.engine->ReadGroups(s.owner, r);
    REQUIRE_MESSAGE(page.ok(), page.status());
    REQUIRE_MESSAGE(page->groups == want,
                    "got " << Show(page->groups) << "\nwant " << Show(want));
    REQUIRE(page->next_cursor.empty() == (below.size() <= limit));
    {
      if (!first) {
        first = *page;
      } else {
        REQUIRE(page->groups == first->groups);
        REQUIRE(page->next_cursor == first->next_cursor);
      }
    }
    CountGroups(s, k, *page, m.model.GroupsFrom(s.owner, now));
    if (!page->groups.empty()) s.last[k] = PlaceOf(page->groups.back());
    s.cursor[k] = page->next_cursor;
    if (page->next_cursor.empty()) {
      s.done[k] = true;
    } else {
      all_done = false;
    }
  }
  if (all_done) ++coverage_.group_walks_finished;
}

void Runner::CountGroups(Session& s, size_t k, const GroupPage& page,
                         Model::GroupSource source) {
  if (page.groups.empty()) return;
  switch (source) {
    case Model::GroupSource::kIndex:
      ++coverage_.indexed_groups;
      break;
    case Model::GroupSource::kMerged:
      ++coverage_.merged_groups;
      break;
    case Model::GroupSource::kExpired:
      ++coverage_.expired_groups;
      break;
  }
  if (k != 0) return;
  for (const FeedGroup& g : page.groups) {
    coverage_.shared_groups += g.activity_count > 1;
    coverage_.ungrouped += g.key == 0;
    coverage_.actors_bounded += g.actor_count > kMaxGroupActors;
    coverage_.entries_bounded += g.activity_count > kMaxGroupEntries;
    if (g.key != 0 && !s.shown.insert(g.key).second) {
      ++coverage_.groups_shown_again;
    }
  }
}

void Runner::DoNewGroupRead() {
  const EntityId owner = Entity();
  Session s;
  s.feed = Feed::kTimeline;
  s.owner = owner;
  s.order = ReadOrder::kNewestFirst;
  s.hydrate = false;
  s.grouped = true;
  if (group_kind_rng_() % 4 == 0) s.kinds = 1 + group_kind_rng_() % 7;
  s.cursor.assign(members_.size(), "");
  s.last.assign(members_.size(), std::nullopt);
  s.done.assign(members_.size(), false);
  what_ = "ReadGroups of " + std::to_string(owner) + " kinds " +
          std::to_string(s.kinds);
  ReadPage(s);
  if (std::find(s.done.begin(), s.done.end(), false) != s.done.end()) {
    if (sessions_.size() >= 6) sessions_.erase(sessions_.begin());
    sessions_.push_back(std::move(s));
  }
  if (rng_() % 4 != 0) return;
  const size_t limit = 1 + rng_() % kMaxPage;
  for (Member& m : members_) {
    INFO("threshold " << m.threshold << " all groups of " << owner << " limit "
                      << limit);
    const std::vector<FeedGroup> got =
        testing::AllGroups(*m.engine, owner, limit);
    const std::vector<FeedGroup> want = m.model.Groups(owner, clock_->Now());
    REQUIRE_MESSAGE(got == want,
                    "got " << Show(got) << "\nwant " << Show(want));
  }
}

void Runner::DoNewRead() {
  Session s;
  const int kind = static_cast<int>(rng_() % 10);
  s.feed = kind < 7 ? Feed::kTimeline : kind < 9 ? Feed::kOwn : Feed::kWorld;
  s.owner = s.feed == Feed::kWorld ? 0 : Entity();
  s.order = rng_() % 2 ? ReadOrder::kNewestFirst : ReadOrder::kOldestFirst;
  RandomWindow(&s.min_ts, &s.max_ts);
  s.hydrate = rng_() % 4 == 0;
  if (kind_rng_() % 3 == 0) s.kinds = 1 + kind_rng_() % 7;  // of kinds 0..2
  s.cursor.assign(members_.size(), "");
  s.last.assign(members_.size(), std::nullopt);
  s.done.assign(members_.size(), false);
  what_ = std::string("read ") + FeedName(s.feed) + " of " +
          std::to_string(s.owner);
  ReadPage(s);
  if (std::find(s.done.begin(), s.done.end(), false) != s.done.end()) {
    if (sessions_.size() >= 6) sessions_.erase(sessions_.begin());
    sessions_.push_back(std::move(s));
  }
}

void Runner::DoContinue() {
  if (sessions_.empty()) return DoNewRead();
  const size_t i = rng_() % sessions_.size();
  what_ = std::string("continue ") +
          (sessions_[i].grouped ? "groups" : FeedName(sessions_[i].feed)) +
          " of " + std::to_string(sessions_[i].owner);
  ReadPage(sessions_[i]);
  const auto& done = sessions_[i].done;
  if (std::find(done.begin(), done.end(), false) == done.end()) {
    sessions_.erase(sessions_.begin() + static_cast<long>(i));
  }
}

void Runner::DoCountNewer() {
  Settle();
  const EntityId reader = Entity();
  Key key{static_cast<Micros>(rng_() % (head_ + 2)), rng_() % (next_id_ + 2)};
  if (rng_() % 2 == 0) {
    const std::vector<StoredEntry> all = members_[0].model.Read(
        Feed::kTimeline, reader, ReadOrder::kNewestFirst, std::nullopt,
        std::nullopt, std::nullopt, clock_->Now(), false);
    if (!all.empty()) key = KeyOf(all[rng_() % all.size()]);
  }
  const size_t max_count = 1 + rng_() % kMaxPage;
  what_ = "CountNewer " + std::to_string(reader);
  std::optional<size_t> first;
  for (Member& m : members_) {
    INFO("threshold " << m.threshold);
    const std::vector<StoredEntry> newer =
        m.model.Read(Feed::kTimeline, reader, ReadOrder::kOldestFirst,
                     std::nullopt, std::nullopt, key, clock_->Now(), false);
    const absl::StatusOr<size_t> got =
        m.engine->CountNewer(reader, {key.first, key.second}, max_count);
    REQUIRE_MESSAGE(got.ok(), got.status());
    REQUIRE(*got == std::min(max_count, newer.size()));
    {
      if (!first) first = *got;
      REQUIRE(*got == *first);
    }
  }
}

}  // namespace feedcore::social_model
