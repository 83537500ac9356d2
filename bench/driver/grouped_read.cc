// grouped-read: what grouped reads and notification feeds cost, in
// process, on the Redis Cluster backend and, where an application could
// do the same with plain commands, on Redis.
//
// Grouped reads: a reader follows `followees` actors whose posts (verb
// 1..3, object 1..20, all in one time bucket, so about 60 group keys)
// fill its timeline to `timeline_cap` entries. Each round reads the first
// and the next page of 20 groups (ReadGroups, the next through the first
// page's cursor) and the first and the next page of 20 entries
// (ReadTimeline) of that reader. In process a grouped page comes from the
// timeline's group index; on the cluster it reads the whole timeline and
// groups it on the client. Redis does what an application without a group
// index would: one ZRANGE of the whole timeline, grouped on the client
// (which holds each activity's verb, object and actor, as an application
// would carry them in the member); its plain pages are timeline-read's.
//
// Notification feeds: a user's feed is full (NotificationOptions'
// max_length of 100, grouped: verb 1..3 and object 1..10, about 30
// groups). Each round reads its counts (GetNotificationCounts), its first
// page of 20 groups (ReadNotifications) and marks one notification read
// (MarkRead, a different one each round). On the cluster each of these is
// one script that first scans the feed for expired entries. Redis reads
// the page as an application keeping the same two keys would: ZRANGE of
// the 100-member sorted set and HGETALL of the hash of group flags in one
// pipeline, grouped on the client, with no expiry scan. Then, in rounds
// of their own, an actor without followers publishes once with `notify`
// naming that user and once without (the order alternating by round):
// the difference is the cost of one notification.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/driver/cluster_feed.h"
#include "bench/driver/interleave.h"
#include "bench/driver/scenario.h"
#include "bench/driver/scenario_redis.h"
#include "bench/driver/stats.h"
#include "bench/driver/timeline_systems.h"

namespace feedcore::bench {
namespace {

constexpr char kScenario[] = "grouped-read";
constexpr EntityId kReader = 7;
constexpr EntityId kNotified = 8;
constexpr EntityId kFirstActor = 10'000;
// Actors without followers who notify kNotified.
constexpr EntityId kFirstNotifier = 50'000;
constexpr size_t kNotifiers = 500;
constexpr ActivityId kFirstNotification = 10'000'000;
constexpr size_t kPageSize = 20;
// NotificationOptions::max_length, the default; the fill overflows it.
constexpr size_t kNotificationFeed = 100;
constexpr size_t kNotificationFill = kNotificationFeed + 10;
constexpr uint64_t kVerbs = 3;
constexpr EntityId kTimelineObjects = 20;
constexpr EntityId kNotificationObjects = 10;
constexpr size_t kClusterSetupThreads = 8;

// The figures, in the order each system's turn of a round runs them.
enum Metric : size_t {
  kGroupsFirst,
  kGroupsNext,
  kTimelineFirst,
  kTimelineNext,
  kCounts,
  kNotificationPage,
  kMarkRead,
  kPublishNotify,
  kPublishPlain,
  kMetrics,
};
constexpr const char* kMetricNames[kMetrics] = {
    "ReadGroups, first page",   "ReadGroups, next page",
    "ReadTimeline, first page", "ReadTimeline, next page",
    "GetNotificationCounts",    "ReadNotifications page",
    "MarkRead of one",          "Publish, notify 1 user",
    "Publish, no notify",
};
// The calls of a round, in units whose order turns by one unit each
// round, so that no call always follows the same one (a call after a
// large reply, or after the machine idled, is slower); a next page stays
// right after its first page, whose cursor it takes.
const std::vector<std::vector<Metric>> kReadUnits = {
    {kGroupsFirst, kGroupsNext},
    {kTimelineFirst, kTimelineNext},
    {kCounts},
    {kNotificationPage},
    {kMarkRead}};
const std::vector<std::vector<Metric>> kPublishUnits = {{kPublishNotify},
                                                        {kPublishPlain}};

// What the driver knows of an activity: what its group is made of. The
// Redis baseline groups with it; the engines only see verb and object.
struct Meta {
  Micros ts = 0;
  EntityId actor = 0;
  uint64_t verb = 0;
  EntityId object = 0;
  // Equal exactly when the default group keys are: verb, object and day.
  uint64_t group() const {
    return (static_cast<uint64_t>(ts / kMicrosPerDay) << 16) | (verb << 8) |
           object;
  }
};

// Activities by id, for ids first..first + size - 1.
class MetaTable {
 public:
  explicit MetaTable(ActivityId first) : first_(first) {}
  void Add(const Activity& a) {
    metas_.resize(std::max<size_t>(metas_.size(), a.id - first_ + 1));
    metas_[a.id - first_] = Meta{a.ts, a.actor, a.verb, a.object};
  }
  const Meta* Find(int64_t id) const {
    if (id < static_cast<int64_t>(first_)) return nullptr;
    const size_t at = static_cast<size_t>(id) - first_;
    return at < metas_.size() && metas_[at].ts != 0 ? &metas_[at] : nullptr;
  }

 private:
  ActivityId first_;
  std::vector<Meta> metas_;
};

// The answer compared across systems: per group, its place (newest
// activity), activity count, actor count and, with `flags`, seen and read.
std::vector<int64_t> GroupAnswer(const GroupPage& page, bool flags) {
  std::vector<int64_t> out;
  for (const FeedGroup& group : page.groups) {
    out.push_back(group.recent.empty()
                      ? -1
                      : static_cast<int64_t>(group.recent.front().activity_id));
    out.push_back(static_cast<int64_t>(group.activity_count));
    out.push_back(static_cast<int64_t>(group.actor_count));
    if (flags) out.push_back(int64_t{group.seen} * 2 + int64_t{group.read});
  }
  return out;
}

std::vector<int64_t> CountsAnswer(const NotificationCounts& counts) {
  return {static_cast<int64_t>(counts.unseen),
          static_cast<int64_t>(counts.unread),
          static_cast<int64_t>(counts.groups)};
}

// A group the client builds from newest-first ids, as GroupEntries does:
// its place is its newest entry.
struct ClientGroup {
  int64_t place = 0;
  Micros place_ts = 0;
  uint64_t key = 0;
  int64_t count = 0;
  absl::flat_hash_set<EntityId> actors;
};

// Groups `ids` (newest first) and answers the `limit` groups placed
// strictly below `after` (ts, id), or the first `limit` groups.
absl::StatusOr<std::vector<ClientGroup>> GroupOnClient(
    const std::vector<int64_t>& ids, const MetaTable& table,
    std::optional<std::pair<Micros, int64_t>> after, size_t limit) {
  std::vector<ClientGroup> groups;
  absl::flat_hash_map<uint64_t, size_t> index_of;
  for (const int64_t id : ids) {
    const Meta* meta = table.Find(id);
    if (meta == nullptr) {
      return absl::InternalError(absl::StrCat("unknown activity ", id));
    }
    auto [it, added] = index_of.try_emplace(meta->group(), groups.size());
    if (added) groups.push_back({id, meta->ts, meta->group(), 0, {}});
    ClientGroup& group = groups[it->second];
    ++group.count;
    group.actors.insert(meta->actor);
  }
  std::vector<ClientGroup> page;
  for (ClientGroup& group : groups) {
    if (page.size() == limit) break;
    if (after.has_value() &&
        std::make_pair(group.place_ts, group.place) >= *after) {
      continue;
    }
    page.push_back(std::move(group));
  }
  return page;
}

std::vector<int64_t> ClientAnswer(const std::vector<ClientGroup>& page) {
  std::vector<int64_t> out;
  for (const ClientGroup& group : page) {
    out.push_back(group.place);
    out.push_back(group.count);
    out.push_back(static_cast<int64_t>(group.actors.size()));
  }
  return out;
}

absl::StatusOr<std::vector<int64_t>> ParseIds(const RedisReply& reply) {
  std::vector<int64_t> ids;
  ids.reserve(reply.elements.size());
  for (const RedisReply& member : reply.elements) {
    int64_t id = 0;
    if (!absl::SimpleAtoi(member.text, &id)) {
      return absl::InternalError("unexpected ZRANGE reply");
    }
    ids.push_back(id);
  }
  return ids;
}

// One system's answers of its last round, compared after it.
struct Answers {
  std::vector<int64_t> answer[kMetrics];
  std::vector<int64_t> notification_page_plain;  // without flags
};

// One system: its timed calls per metric (a call appends one sample),
// its samples and its answers.
struct System {
  explicit System(std::string system) : name(std::move(system)) {}

  std::string name;
  std::function<absl::Status(Metric, size_t round, std::vector<double>&)> run;
  std::vector<bool> has = std::vector<bool>(kMetrics, false);
  std::vector<std::vector<double>> samples =
      std::vector<std::vector<double>>(kMetrics);
  Answers answers;
  bool failed = false;
};

// The activities of the timed publishes: one actor without followers,
// after every notification of the fill.
Activity TimedPublish(size_t round, Metric metric, Micros after_ts) {
  const size_t n = 2 * round + (metric == kPublishNotify ? 0 : 1);
  Activity a;
  a.id = kFirstNotification + kNotificationFill + n;
  a.actor = kFirstNotifier + static_cast<EntityId>(n % kNotifiers);
  a.ts = after_ts + static_cast<Micros>(n + 1) * 1000;
  a.verb = 1 + n % kVerbs;
  a.object = 1 + static_cast<EntityId>(n % kNotificationObjects);
  a.payload = "published";
  return a;
}

// Timed calls of a FeedEngine, in process or on the cluster.
std::function<absl::Status(Metric, size_t, std::vector<double>&)> EngineCalls(
    FeedEngine& engine, Answers& answers,
    const std::vector<std::pair<Micros, ActivityId>>& marks, Micros last_ts) {
  // Cursors of the round's first pages, for its next pages.
  auto group_cursor = std::make_shared<std::string>();
  auto page_cursor = std::make_shared<std::string>();
  // Both backends have the facet.
  NotificationFeeds& bell = *engine.notifications();
  return [&engine, &bell, &answers, &marks, last_ts, group_cursor, page_cursor](
             Metric metric, size_t round,
             std::vector<double>& samples) -> absl::Status {
    std::vector<int64_t>& answer = answers.answer[metric];
    switch (metric) {
      case kGroupsFirst:
      case kGroupsNext: {
        GroupReadOptions read;
        read.limit = kPageSize;
        if (metric == kGroupsNext) {
          if (group_cursor->empty()) {
            return absl::FailedPreconditionError(
                "the grouped timeline has a single page");
          }
          read.cursor = *group_cursor;
        }
        const auto start = Stopwatch::now();
        absl::StatusOr<GroupPage> page = engine.ReadGroups(kReader, read);
        samples.push_back(MicrosSince(start));
        if (!page.ok()) return page.status();
        if (metric == kGroupsFirst) *group_cursor = page->next_cursor;
        answer = GroupAnswer(*page, /*flags=*/false);
        return absl::OkStatus();
      }
      case kTimelineFirst:
      case kTimelineNext: {
        ReadOptions read;
        read.limit = kPageSize;
        if (metric == kTimelineNext) read.cursor = *page_cursor;
        const auto start = Stopwatch::now();
        absl::StatusOr<Page> page = engine.ReadTimeline(kReader, read);
        samples.push_back(MicrosSince(start));
        if (!page.ok()) return page.status();
        if (metric == kTimelineFirst) *page_cursor = page->next_cursor;
        answer = PageIds(*page);
        return absl::OkStatus();
      }
      case kCounts:
      case kMarkRead: {
        const auto start = Stopwatch::now();
        absl::StatusOr<NotificationCounts> counts =
            metric == kCounts
                ? bell.GetNotificationCounts(kNotified)
                : bell.MarkRead(kNotified,
                                {marks[round % marks.size()].first,
                                 marks[round % marks.size()].second});
        samples.push_back(MicrosSince(start));
        if (!counts.ok()) return counts.status();
        answer = CountsAnswer(*counts);
        return absl::OkStatus();
      }
      case kNotificationPage: {
        GroupReadOptions read;
        read.limit = kPageSize;
        const auto start = Stopwatch::now();
        absl::StatusOr<GroupPage> page =
            bell.ReadNotifications(kNotified, read);
        samples.push_back(MicrosSince(start));
        if (!page.ok()) return page.status();
        answer = GroupAnswer(*page, /*flags=*/true);
        answers.notification_page_plain = GroupAnswer(*page, /*flags=*/false);
        return absl::OkStatus();
      }
      case kPublishNotify:
      case kPublishPlain: {
        const Activity activity = TimedPublish(round, metric, last_ts);
        PublishOptions publish;
        if (metric == kPublishNotify) publish.notify = {kNotified};
        const auto start = Stopwatch::now();
        absl::StatusOr<PublishResult> result =
            engine.Publish(activity, publish);
        samples.push_back(MicrosSince(start));
        if (!result.ok()) return result.status();
        if (!result->created) {
          return absl::InternalError(
              absl::StrCat("activity ", activity.id, " was not new"));
        }
        return absl::OkStatus();
      }
      case kMetrics:
        break;
    }
    return absl::InternalError("unknown metric");
  };
}

// Runs `rounds` rounds of `units`: in each, every system in turn (a
// different one first each round) runs each metric once.
void RunRounds(RunContext& context, std::string_view step, size_t rounds,
               const std::vector<std::vector<Metric>>& units,
               std::vector<System>& systems,
               const std::function<void(size_t round)>& after_round) {
  for (size_t round = 0; round < rounds; ++round) {
    context.progress.Update(kScenario, step, round, rounds);
    for (size_t k = 0; k < systems.size(); ++k) {
      System& system = systems[(round + k) % systems.size()];
      for (size_t u = 0; u < units.size() && !system.failed; ++u) {
        for (const Metric metric : units[(round + u) % units.size()]) {
          if (!system.has[metric]) continue;
          if (absl::Status s =
                  system.run(metric, round, system.samples[metric]);
              !s.ok()) {
            context.progress.Clear();
            context.answers.Fail(
                kScenario, system.name,
                absl::Status(s.code(), absl::StrCat(kMetricNames[metric], ": ",
                                                    s.message())));
            system.failed = true;
            break;
          }
        }
      }
    }
    after_round(round);
  }
  context.progress.Clear();
}

double Median(const System& system, Metric metric) {
  return Summarize(system.samples[metric]).median;
}

}  // namespace

void RunGroupedRead(RunContext& context) {
  const DriverOptions& options = context.options;
  auto clock = std::make_shared<ManualClock>(kBenchStartTime);
  EngineOptions engine_options = NewEngineOptions(clock, options.timeline_cap);
  engine_options.aggregation.enabled = true;
  engine_options.notifications.max_length = kNotificationFeed;
  absl::StatusOr<std::unique_ptr<FeedEngine>> created =
      FeedEngine::Create(engine_options);
  if (!created.ok()) {
    context.answers.Fail(kScenario, kFeedcore, created.status());
    return;
  }
  FeedEngine& engine = **created;
  std::unique_ptr<RedisClient> redis = ConnectRedis(context, kScenario);
  std::optional<RedisTimelines> timelines;
  if (redis != nullptr) {
    timelines.emplace(*redis, options.timeline_cap, options.redis_pipeline);
  }
  std::unique_ptr<ClusterFeed> cluster =
      OpenClusterFeed(context, kScenario, engine_options);
  auto fail_cluster = [&](const absl::Status& status) {
    context.answers.Fail(kScenario, kFeedcoreCluster, status);
    cluster.reset();
  };
  auto fail_redis = [&](const absl::Status& status) {
    context.answers.Fail(kScenario, kRedis, status);
    timelines.reset();
    redis.reset();
  };

  // --- The reader's timeline: just over timeline_cap posts ---
  const FollowOutcome followed =
      FollowActors(engine, cluster != nullptr ? &cluster->engine() : nullptr,
                   kReader, kFirstActor, options.followees);
  if (!followed.in_process.ok()) {
    context.answers.Fail(kScenario, kFeedcore, followed.in_process);
    return;
  }
  if (!followed.cluster.ok()) fail_cluster(followed.cluster);
  const size_t rounds_of_posts = options.timeline_cap / options.followees + 1;
  std::mt19937_64 rng(options.seed + 1);
  MetaTable posts_table(1);
  std::vector<Activity> posts;
  const absl::Status posted = PostRoundRobin(
      kFirstActor, options.followees, rounds_of_posts, options.seed,
      [&](const Activity& drawn) -> absl::Status {
        Activity post = drawn;
        post.verb = 1 + rng() % kVerbs;
        post.object = 1 + static_cast<EntityId>(rng() % kTimelineObjects);
        if (absl::Status s = engine.Publish(post).status(); !s.ok()) return s;
        posts_table.Add(post);
        if (timelines.has_value()) {
          if (absl::Status s =
                  timelines->QueueDelivery(kReader, post.ts, post.id);
              !s.ok()) {
            fail_redis(s);
          }
        }
        posts.push_back(std::move(post));
        return absl::OkStatus();
      });
  if (!posted.ok()) {
    context.answers.Fail(kScenario, kFeedcore, posted);
    return;
  }
  if (timelines.has_value()) {
    if (absl::Status s = timelines->Flush(); !s.ok()) fail_redis(s);
  }
  // Out of order across threads, which leaves the same timeline and the
  // same groups: a capped timeline keeps the newest entries.
  if (cluster != nullptr) {
    absl::Status s = RunConcurrently(
        context, kScenario, "publishing on Redis Cluster", posts.size(),
        kClusterSetupThreads,
        [&](size_t i) { return cluster->engine().Publish(posts[i]).status(); });
    if (!s.ok()) fail_cluster(s);
  }

  // --- The notified user's feed: full, after kNotificationFill ---
  const Micros notify_from = posts.back().ts + kMicrosPerSecond;
  MetaTable notes_table(kFirstNotification);
  std::vector<Activity> notes;
  for (size_t n = 0; n < kNotificationFill; ++n) {
    Activity note;
    note.id = kFirstNotification + n;
    note.actor = kFirstNotifier + static_cast<EntityId>(rng() % kNotifiers);
    note.ts = notify_from + static_cast<Micros>(n) * 1000;
    note.verb = 1 + rng() % kVerbs;
    note.object = 1 + static_cast<EntityId>(rng() % kNotificationObjects);
    note.payload = "notified";
    notes_table.Add(note);
    notes.push_back(std::move(note));
  }
  PublishOptions to_notified;
  to_notified.notify = {kNotified};
  for (const Activity& note : notes) {
    if (absl::Status s = engine.Publish(note, to_notified).status(); !s.ok()) {
      context.answers.Fail(kScenario, kFeedcore, s);
      return;
    }
    if (cluster != nullptr) {
      if (absl::Status s =
              cluster->engine().Publish(note, to_notified).status();
          !s.ok()) {
        fail_cluster(s);
      }
    }
  }
  // What the full feed holds: the newest kNotificationFeed, whose keys the
  // MarkRead rounds walk through; Redis gets the same two keys.
  std::vector<std::pair<Micros, ActivityId>> marks;
  const std::vector<Activity> kept(notes.end() - kNotificationFeed,
                                   notes.end());
  for (const Activity& note : kept) marks.emplace_back(note.ts, note.id);
  if (redis != nullptr) {
    absl::flat_hash_set<uint64_t> groups;
    for (const Activity& note : kept) {
      redis->Append(
          {"ZADD", "nt", absl::StrCat(note.ts), absl::StrCat(note.id)});
      groups.insert(notes_table.Find(static_cast<int64_t>(note.id))->group());
    }
    for (const uint64_t group : groups) {
      redis->Append({"HSET", "ng", absl::StrCat(group), "0"});
    }
    if (absl::Status s = redis->Flush(); !s.ok()) fail_redis(s);
  }
  const size_t timeline_groups = [&] {
    absl::flat_hash_set<uint64_t> groups;
    const size_t kept_posts = std::min(posts.size(), options.timeline_cap);
    for (size_t i = posts.size() - kept_posts; i < posts.size(); ++i) {
      groups.insert(
          posts_table.Find(static_cast<int64_t>(posts[i].id))->group());
    }
    return groups.size();
  }();
  const size_t notification_groups = [&] {
    absl::flat_hash_set<uint64_t> groups;
    for (const Activity& note : kept) {
      groups.insert(notes_table.Find(static_cast<int64_t>(note.id))->group());
    }
    return groups.size();
  }();
  const Micros last_fill_ts = notes.back().ts;

  // --- The systems ---
  std::vector<System> systems;
  systems.emplace_back(kFeedcore);
  if (cluster != nullptr) systems.emplace_back(kFeedcoreCluster);
  if (redis != nullptr) systems.emplace_back(kRedis);
  for (System& system : systems) {
    if (system.name == kRedis) continue;
    FeedEngine& on = system.name == kFeedcore ? engine : cluster->engine();
    system.run = EngineCalls(on, system.answers, marks, last_fill_ts);
    system.has.assign(kMetrics, true);
  }
  if (redis != nullptr) {
    System& system = systems.back();
    system.has[kGroupsFirst] = system.has[kGroupsNext] = true;
    system.has[kTimelineFirst] = system.has[kTimelineNext] = true;
    system.has[kNotificationPage] = true;
    auto group_after = std::make_shared<std::pair<Micros, int64_t>>();
    auto page_before = std::make_shared<std::optional<Micros>>();
    RedisClient& client = *redis;
    RedisTimelines& pages = *timelines;
    Answers& answers = system.answers;
    const std::string timeline_key = absl::StrCat("tl:", kReader);
    system.run = [&, group_after, page_before, timeline_key](
                     Metric metric, size_t,
                     std::vector<double>& samples) -> absl::Status {
      std::vector<int64_t>& answer = answers.answer[metric];
      switch (metric) {
        case kGroupsFirst:
        case kGroupsNext: {
          std::optional<std::pair<Micros, int64_t>> after;
          if (metric == kGroupsNext) after = *group_after;
          const auto start = Stopwatch::now();
          absl::StatusOr<RedisReply> reply =
              client.Command({"ZRANGE", timeline_key, "0", "-1", "REV"});
          absl::StatusOr<std::vector<int64_t>> ids =
              reply.ok() ? ParseIds(*reply)
                         : absl::StatusOr<std::vector<int64_t>>(reply.status());
          absl::StatusOr<std::vector<ClientGroup>> page =
              ids.ok() ? GroupOnClient(*ids, posts_table, after, kPageSize)
                       : ids.status();
          samples.push_back(MicrosSince(start));
          if (!page.ok()) return page.status();
          if (metric == kGroupsFirst && !page->empty()) {
            *group_after = {page->back().place_ts, page->back().place};
          }
          answer = ClientAnswer(*page);
          return absl::OkStatus();
        }
        case kTimelineFirst:
        case kTimelineNext: {
          std::optional<Micros> before;
          if (metric == kTimelineNext) before = *page_before;
          std::optional<Micros> next;
          const auto start = Stopwatch::now();
          absl::StatusOr<std::vector<int64_t>> ids =
              pages.ReadPage(kReader, before, kPageSize, &next);
          samples.push_back(MicrosSince(start));
          if (!ids.ok()) return ids.status();
          if (metric == kTimelineFirst) *page_before = next;
          answer = *std::move(ids);
          return absl::OkStatus();
        }
        case kNotificationPage: {
          std::vector<RedisReply> replies;
          const auto start = Stopwatch::now();
          client.Append({"ZRANGE", "nt", "0", "-1", "REV"});
          client.Append({"HGETALL", "ng"});
          const absl::Status flushed = client.Flush(&replies);
          absl::StatusOr<std::vector<ClientGroup>> page =
              absl::InternalError("unread");
          std::vector<int> flags;
          if (!flushed.ok()) {
            page = flushed;
          } else {
            absl::StatusOr<std::vector<int64_t>> ids = ParseIds(replies[0]);
            page = ids.ok() ? GroupOnClient(*ids, notes_table, std::nullopt,
                                            kPageSize)
                            : ids.status();
            absl::flat_hash_map<std::string, int> flag_of;
            const std::vector<RedisReply>& fields = replies[1].elements;
            for (size_t i = 0; i + 1 < fields.size(); i += 2) {
              int flag = 0;
              if (absl::SimpleAtoi(fields[i + 1].text, &flag)) {
                flag_of[fields[i].text] = flag;
              }
            }
            if (page.ok()) {
              for (const ClientGroup& group : *page) {
                auto found = flag_of.find(absl::StrCat(group.key));
                flags.push_back(found == flag_of.end() ? -1 : found->second);
              }
            }
          }
          samples.push_back(MicrosSince(start));
          if (!page.ok()) return page.status();
          if (std::find(flags.begin(), flags.end(), -1) != flags.end()) {
            return absl::InternalError("a group without its flags");
          }
          answers.notification_page_plain = ClientAnswer(*page);
          return absl::OkStatus();
        }
        default:
          return absl::InternalError("not a Redis metric");
      }
    };
  }

  // --- The rounds ---
  const size_t rounds = options.grouped_rounds;
  auto compare = [&](const char* when) {
    const System& base = systems.front();
    if (base.failed) return;
    for (size_t s = 1; s < systems.size(); ++s) {
      const System& other = systems[s];
      if (other.failed) continue;
      for (size_t m = 0; m < kMetrics; ++m) {
        if (!other.has[m] || m == kPublishNotify || m == kPublishPlain) {
          continue;
        }
        const bool plain = other.name == kRedis && m == kNotificationPage;
        context.answers.Check(
            kScenario, absl::StrCat(kMetricNames[m], ", ", when), other.name,
            plain ? base.answers.notification_page_plain
                  : base.answers.answer[m],
            plain ? other.answers.notification_page_plain
                  : other.answers.answer[m]);
      }
    }
  };
  RunRounds(context, "reading", rounds, kReadUnits, systems, [&](size_t round) {
    if (round == 0 || round + 1 == rounds) {
      compare(round == 0 ? "first round" : "last round");
    }
  });
  const System& in_process = systems.front();
  if (!in_process.failed) {
    const std::vector<int64_t>& first = in_process.answers.answer[kGroupsFirst];
    if (first.size() != 3 * kPageSize) {
      context.answers.Fail(
          kScenario, kFeedcore,
          absl::InternalError(absl::StrCat("a grouped first page of ",
                                           first.size() / 3, " groups")));
    }
  }
  RunRounds(context, "publishing", rounds, kPublishUnits, systems,
            [](size_t) {});
  // After the publishes: the same counts and first page on both engines.
  if (cluster != nullptr && !systems[1].failed && !in_process.failed) {
    std::vector<int64_t> answers[2][2];
    for (size_t i = 0; i < 2; ++i) {
      FeedEngine& on = i == 0 ? engine : cluster->engine();
      GroupReadOptions read;
      read.limit = kPageSize;
      absl::StatusOr<NotificationCounts> counts =
          on.notifications()->GetNotificationCounts(kNotified);
      absl::StatusOr<GroupPage> page =
          on.notifications()->ReadNotifications(kNotified, read);
      if (!counts.ok() || !page.ok()) {
        context.answers.Fail(kScenario, systems[i].name,
                             !counts.ok() ? counts.status() : page.status());
        return;
      }
      answers[i][0] = CountsAnswer(*counts);
      answers[i][1] = GroupAnswer(*page, /*flags=*/true);
    }
    context.answers.Check(kScenario, "notification counts after publishing",
                          kFeedcoreCluster, answers[0][0], answers[1][0]);
    context.answers.Check(kScenario, "notification page after publishing",
                          kFeedcoreCluster, answers[0][1], answers[1][1]);
  }

  // --- Figures ---
  for (size_t m = 0; m < kMetrics; ++m) {
    std::vector<SystemUnderTest> measured;
    for (const System& system : systems) {
      if (!system.has[m]) continue;
      measured.push_back({system.name, {}, system.samples[m], system.failed});
    }
    AddFigures(context, kScenario, kMetricNames[m], "us", measured);
  }
  context.report.Note(absl::StrFormat(
      "%s: pages of %zu; the reader's timeline holds %zu entries in %zu "
      "groups from %zu followees; the notification feed %zu entries in %zu "
      "groups; %zu rounds",
      kScenario, kPageSize, std::min(posts.size(), options.timeline_cap),
      timeline_groups, options.followees, kNotificationFeed,
      notification_groups, rounds));
  for (const System& system : systems) {
    if (system.failed || system.name == kRedis) continue;
    context.report.Note(absl::StrFormat(
        "%s: %s: ReadGroups / ReadTimeline first page %.1fx, next page "
        "%.1fx; Publish with / without notify %.2fx",
        kScenario, system.name,
        Median(system, kGroupsFirst) / Median(system, kTimelineFirst),
        Median(system, kGroupsNext) / Median(system, kTimelineNext),
        Median(system, kPublishNotify) / Median(system, kPublishPlain)));
  }
}

}  // namespace feedcore::bench
