// Model-based test of FeedEngine: long random sequences of inserts (single,
// fan-out, batch), removals, reads (random limits, orders, windows and
// cursors followed across other operations), clock advances and evictions,
// each compared exactly with the reference model of model/feed_model.h.
//
// The seed is fixed and printed on failure; FEEDCORE_MODEL_SEED overrides
// it, and FEEDCORE_MODEL_OPS the number of operations per configuration.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/options.h"
#include "model/feed_model.h"
#include "support/random_window.h"
#include "support/test_util.h"

namespace feedcore {
namespace {

using Key = testing::FeedModel::Key;
using Model = testing::FeedModel;

struct Config {
  size_t shards;
  size_t cap;
  size_t max_page_size;
  int owners;
};

std::string Describe(const InsertResult& r) {
  std::ostringstream os;
  os << "{inserted=" << r.inserted << " replaced=" << r.replaced
     << " rejected=" << r.rejected_by_cap << " trimmed=" << r.trimmed << "}";
  return os.str();
}

bool SameCounts(const InsertResult& a, const InsertResult& b) {
  return a.inserted == b.inserted && a.replaced == b.replaced &&
         a.rejected_by_cap == b.rejected_by_cap && a.trimmed == b.trimmed;
}

// A paging walk left open across other operations.
struct Session {
  EntityId owner;
  ReadOrder order;
  std::optional<Micros> min_ts, max_ts;
  std::string cursor;
  Key last;
  uint64_t kinds = KindFilter::kEveryKind;
};

class Runner {
 public:
  Runner(const Config& config, uint64_t seed)
      : config_(config),
        rng_(seed),
        clock_(std::make_shared<ManualClock>(1'000'000)),
        model_(Options(config)) {
    engine_ = testing::NewManualEngine(clock_, Options(config));
  }

  static EngineOptions Options(const Config& config) {
    EngineOptions o;
    o.shards = config.shards;
    o.max_timeline_length = config.cap;
    o.max_page_size = config.max_page_size;
    o.default_ttl = kDefaultTtl;
    return o;
  }

  void Run(int ops) {
    for (step_ = 0; step_ < ops; ++step_) {
      INFO("step " << step_ << ": " << what_);
      const int op = static_cast<int>(rng_() % 100);
      if (op < 22) {
        DoInsert();
      } else if (op < 30) {
        DoFanout();
      } else if (op < 38) {
        DoBatch();
      } else if (op < 46) {
        DoRemove();
      } else if (op < 68) {
        DoRead();
      } else if (op < 80) {
        DoContinue();
      } else if (op < 88) {
        what_ = "advance clock";
        clock_->Advance(static_cast<Micros>(rng_() % 60));
      } else if (op < 93) {
        DoEvict();
      } else if (op < 97) {
        DoInvalid();
      } else {
        CheckStats();
      }
    }
    CheckStats();
  }

  // How often the run reached each kind of event it exists to test.
  struct Coverage {
    uint64_t replaced = 0, rejected = 0, trimmed = 0, evicted = 0,
             hidden_expired = 0, walks_finished = 0, removed = 0, invalid = 0,
             filtered_reads = 0;
    void Add(const Coverage& o) {
      replaced += o.replaced;
      rejected += o.rejected;
      trimmed += o.trimmed;
      evicted += o.evicted;
      hidden_expired += o.hidden_expired;
      walks_finished += o.walks_finished;
      removed += o.removed;
      invalid += o.invalid;
      filtered_reads += o.filtered_reads;
    }
  };
  Coverage coverage() const {
    return {sum_replaced_, sum_rejected_,   sum_trimmed_,
            evicted_,      hidden_expired_, walks_finished_,
            removed_,      invalid_,        filtered_reads_};
  }

 private:
  static constexpr Micros kDefaultTtl = 400;
  // A time before every expiry: Visible() at it ignores expiry.
  static constexpr Micros kNoExpiry = 0;

  EntityId Owner() { return 1 + rng_() % config_.owners; }

  TimelineEntry Entry() {
    // Mostly recent timestamps, some anywhere; few ids so keys collide.
    head_ += static_cast<Micros>(rng_() % 3);
    const Micros ts = (rng_() % 4 != 0)
                          ? head_ - static_cast<Micros>(rng_() % 20)
                          : static_cast<Micros>(rng_() % (head_ + 1));
    TimelineEntry e{std::max<Micros>(ts, 0), rng_() % 4, rng_() % 1000};
    // Half of kind 0, so that chunks without a kind column meet entries
    // that need one.
    if (rng_() % 2 == 0) e.kind = static_cast<ActivityKind>(rng_() % 4);
    return e;
  }

  // The kinds a read keeps: mostly every kind, else a random set among the
  // kinds drawn (never empty), sometimes written as an exception.
  uint64_t Kinds() {
    if (rng_() % 3 != 0) return KindFilter::kEveryKind;
    const uint64_t some = 1 + rng_() % 15;  // of kinds 0..3
    return rng_() % 2 ? some : ~some;
  }

  InsertOptions Options() {
    InsertOptions o;
    switch (rng_() % 4) {
      case 0:
        o.ttl = 1 + static_cast<Micros>(rng_() % 600);
        break;
      case 1:
        o.expires_at = clock_->Now() + 1 + static_cast<Micros>(rng_() % 600);
        break;
      default:
        break;  // default_ttl
    }
    return o;
  }

  void Record(const InsertResult& r) {
    sum_trimmed_ += r.trimmed;
    sum_rejected_ += r.rejected_by_cap;
    sum_replaced_ += r.replaced;
  }

  void DoInsert() {
    const EntityId owner = Owner();
    const TimelineEntry e = Entry();
    const InsertOptions o = Options();
    what_ = "Insert owner=" + std::to_string(owner) +
            " ts=" + std::to_string(e.ts) +
            " id=" + std::to_string(e.activity_id);
    InsertResult want;
    model_.Insert(owner, e, model_.ExpiryFor(o, clock_->Now()), &want);
    const absl::StatusOr<InsertResult> got = engine_->Insert(owner, e, o);
    REQUIRE_MESSAGE(got.ok(), got.status());
    INFO("want " << Describe(want) << " got " << Describe(*got));
    REQUIRE(SameCounts(*got, want));
    Record(*got);
  }

  void DoFanout() {
    std::vector<EntityId> owners;
    for (EntityId o = 1; o <= static_cast<EntityId>(config_.owners); ++o) {
      if (rng_() % 2) owners.push_back(o);
    }
    std::shuffle(owners.begin(), owners.end(), rng_);
    const TimelineEntry e = Entry();
    const InsertOptions o = Options();
    what_ = "InsertFanout to " + std::to_string(owners.size()) + " owners";
    InsertResult want;
    const Micros expires_at = model_.ExpiryFor(o, clock_->Now());
    for (const EntityId owner : owners)
      model_.Insert(owner, e, expires_at, &want);
    const absl::StatusOr<InsertResult> got =
        engine_->InsertFanout(owners, e, o);
    REQUIRE_MESSAGE(got.ok(), got.status());
    INFO("want " << Describe(want) << " got " << Describe(*got));
    REQUIRE(SameCounts(*got, want));
    Record(*got);
  }

  void DoBatch() {
    std::vector<OwnedEntry> batch(rng_() % 9);
    for (OwnedEntry& pair : batch) {
      pair.owner = Owner();
      pair.entry = Entry();
    }
    const InsertOptions o = Options();
    what_ = "InsertBatch of " + std::to_string(batch.size());
    InsertResult want;
    const Micros expires_at = model_.ExpiryFor(o, clock_->Now());
    for (const OwnedEntry& pair : batch) {
      model_.Insert(pair.owner, pair.entry, expires_at, &want);
    }
    const absl::StatusOr<InsertResult> got = engine_->InsertBatch(batch, o);
    REQUIRE_MESSAGE(got.ok(), got.status());
    INFO("want " << Describe(want) << " got " << Describe(*got));
    REQUIRE(SameCounts(*got, want));
    Record(*got);
  }

  void DoRemove() {
    const EntityId owner = Owner();
    Key key{static_cast<Micros>(rng_() % (head_ + 1)), rng_() % 4};
    if (rng_() % 4 != 0) {
      if (auto k = model_.AnyKey(owner, rng_)) key = *k;
    }
    what_ = "Remove owner=" + std::to_string(owner) +
            " ts=" + std::to_string(key.first) +
            " id=" + std::to_string(key.second);
    const bool present = model_.Remove(owner, key);
    removed_ += present;
    const absl::Status s = engine_->Remove(owner, {key.first, key.second});
    INFO(s);
    if (present) {
      REQUIRE(s.ok());
    } else {
      REQUIRE(absl::IsNotFound(s));
    }
  }

  void RandomWindow(std::optional<Micros>* min_ts,
                    std::optional<Micros>* max_ts) {
    testing::RandomWindow(rng_, head_, min_ts, max_ts);
  }

  // Reads one page and compares it with the model; returns the page.
  Page ReadAndCompare(EntityId owner, ReadOrder order,
                      std::optional<Micros> min_ts,
                      std::optional<Micros> max_ts, const std::string& cursor,
                      std::optional<Key> after, uint64_t kinds) {
    ReadOptions r;
    r.limit = 1 + rng_() % config_.max_page_size;
    r.order = order;
    r.min_ts = min_ts;
    r.max_ts = max_ts;
    r.cursor = cursor;
    r.kinds.kinds = kinds;
    const std::vector<StoredEntry> visible =
        model_.Read(testing::Feed::kTimeline, owner, order, min_ts, max_ts,
                    after, clock_->Now(), false, kinds);
    hidden_expired_ += model_
                           .Read(testing::Feed::kTimeline, owner, order, min_ts,
                                 max_ts, after, kNoExpiry, false, kinds)
                           .size() -
                       visible.size();
    if (kinds != KindFilter::kEveryKind) ++filtered_reads_;
    const absl::StatusOr<Page> page = engine_->ReadTimeline(owner, r);
    INFO("ReadTimeline owner="
         << owner << " limit=" << r.limit
         << " oldest_first=" << (order == ReadOrder::kOldestFirst) << " min_ts="
         << (min_ts ? *min_ts : -1) << " max_ts=" << (max_ts ? *max_ts : -1)
         << " after=" << (after ? after->first : -1) << "/"
         << (after ? after->second : 0) << " kinds=" << kinds);
    REQUIRE_MESSAGE(page.ok(), page.status());
    const std::vector<StoredEntry> want(
        visible.begin(),
        visible.begin() + static_cast<long>(std::min(r.limit, visible.size())));
    REQUIRE(page->entries == want);
    REQUIRE(page->next_cursor.empty() == (visible.size() <= r.limit));
    return *page;
  }

  void DoRead() {
    const EntityId owner = Owner();
    Session s{owner,
              rng_() % 2 ? ReadOrder::kNewestFirst : ReadOrder::kOldestFirst,
              std::nullopt,
              std::nullopt,
              "",
              {},
              Kinds()};
    RandomWindow(&s.min_ts, &s.max_ts);
    what_ = "read";
    Page page = ReadAndCompare(owner, s.order, s.min_ts, s.max_ts, "",
                               std::nullopt, s.kinds);
    const int mode = static_cast<int>(rng_() % 3);
    // Follow the cursors to the end now, keep the walk open, or drop it.
    while (mode == 0 && !page.next_cursor.empty()) {
      const StoredEntry& last = page.entries.back();
      page =
          ReadAndCompare(owner, s.order, s.min_ts, s.max_ts, page.next_cursor,
                         Key{last.ts, last.activity_id}, s.kinds);
    }
    if (mode == 1 && !page.next_cursor.empty()) {
      s.cursor = page.next_cursor;
      s.last = {page.entries.back().ts, page.entries.back().activity_id};
      if (sessions_.size() >= 8) sessions_.erase(sessions_.begin());
      sessions_.push_back(s);
    }
  }

  void DoContinue() {
    if (sessions_.empty()) return DoRead();
    const size_t i = rng_() % sessions_.size();
    Session& s = sessions_[i];
    what_ = "continue a walk";
    const Page page = ReadAndCompare(s.owner, s.order, s.min_ts, s.max_ts,
                                     s.cursor, s.last, s.kinds);
    if (page.next_cursor.empty()) {
      ++walks_finished_;
      sessions_.erase(sessions_.begin() + static_cast<long>(i));
    } else {
      s.cursor = page.next_cursor;
      s.last = {page.entries.back().ts, page.entries.back().activity_id};
    }
  }

  void DoEvict() {
    const Micros now = clock_->Now();
    const size_t expired = model_.CountExpired(now);
    const size_t budget = rng_() % 2 ? 1 + rng_() % 8 : 1'000'000;
    what_ = "EvictExpired budget=" + std::to_string(budget) +
            " expired=" + std::to_string(expired);
    size_t total = 0;
    for (;;) {
      const size_t n = engine_->EvictExpired(budget).value();
      REQUIRE(n == std::min(budget, expired - total));
      total += n;
      if (n < budget) break;
    }
    REQUIRE(total == expired);
    model_.EvictExpired(now);
    evicted_ += total;
  }

  void DoInvalid() {
    const EntityId owner = Owner();
    absl::Status s;
    switch (rng_() % 11) {
      case 8: {
        what_ = "Insert with a kind above kMaxActivityKind";
        TimelineEntry e = Entry();
        e.kind = static_cast<ActivityKind>(kMaxActivityKind + 1 + rng_() % 8);
        s = engine_->Insert(owner, e).status();
        break;
      }
      case 9: {
        what_ = "ReadTimeline keeping no kind, or naming a kind too large";
        ReadOptions r;
        r.kinds = rng_() % 2 ? KindFilter::Only({}) : KindFilter::Only({64});
        s = engine_->ReadTimeline(owner, r).status();
        break;
      }
      case 10: {
        if (sessions_.empty()) return;
        what_ = "ReadTimeline with a cursor of other kinds";
        const Session& session = sessions_[rng_() % sessions_.size()];
        ReadOptions r;
        r.order = session.order;
        r.cursor = session.cursor;
        r.kinds.kinds = session.kinds == KindFilter::kEveryKind
                            ? 1
                            : KindFilter::kEveryKind;
        s = engine_->ReadTimeline(session.owner, r).status();
        break;
      }
      case 0: {
        what_ = "Insert with negative ts";
        TimelineEntry e = Entry();
        e.ts = -1 - static_cast<Micros>(rng_() % 100);
        s = engine_->Insert(owner, e).status();
        break;
      }
      case 1: {
        what_ = "Insert with expires_at <= now";
        InsertOptions o;
        o.expires_at = clock_->Now() - static_cast<Micros>(rng_() % 3);
        s = engine_->InsertFanout({owner, owner + 1}, Entry(), o).status();
        break;
      }
      case 2: {
        what_ = "InsertBatch with a bad ttl";
        InsertOptions o;
        o.ttl = rng_() % 2 ? -1 : kMaxTtl + 1;
        s = engine_->InsertBatch({{owner, Entry()}, {owner + 1, Entry()}}, o)
                .status();
        break;
      }
      case 3: {
        what_ = "InsertBatch with one negative ts";
        std::vector<OwnedEntry> batch;
        for (int i = 0; i < 5; ++i) batch.push_back({Owner(), Entry()});
        batch[rng_() % 5].entry.ts = -1;
        s = engine_->InsertBatch(batch).status();
        break;
      }
      case 4: {
        what_ = "ReadTimeline with a bad limit";
        ReadOptions r;
        r.limit = rng_() % 2 ? 0 : config_.max_page_size + 1;
        s = engine_->ReadTimeline(owner, r).status();
        break;
      }
      case 5: {
        what_ = "ReadTimeline with an inverted window";
        ReadOptions r;
        r.min_ts = 10 + static_cast<Micros>(rng_() % 100);
        r.max_ts = *r.min_ts - 1;
        s = engine_->ReadTimeline(owner, r).status();
        break;
      }
      case 6: {
        if (sessions_.empty()) return;
        what_ = "ReadTimeline with another owner's cursor";
        const Session& session = sessions_[rng_() % sessions_.size()];
        ReadOptions r;
        r.order = session.order;
        r.cursor = session.cursor;
        s = engine_->ReadTimeline(session.owner + config_.owners, r).status();
        break;
      }
      default: {
        if (sessions_.empty()) return;
        what_ = "ReadTimeline with a cursor of the other order";
        const Session& session = sessions_[rng_() % sessions_.size()];
        ReadOptions r;
        r.order = session.order == ReadOrder::kNewestFirst
                      ? ReadOrder::kOldestFirst
                      : ReadOrder::kNewestFirst;
        r.cursor = session.cursor;
        s = engine_->ReadTimeline(session.owner, r).status();
        break;
      }
    }
    INFO(s);
    REQUIRE(absl::IsInvalidArgument(s));
    ++invalid_;
  }

  void CheckStats() {
    what_ = "Stats";
    const EngineStats stats = engine_->Stats().value();
    REQUIRE(stats.entries == model_.entries());
    REQUIRE(stats.timelines == model_.timelines());
    REQUIRE(stats.evicted == evicted_);
    // A rejected entry counts as "inserted and immediately trimmed" or not
    // at all; either reading of the contract is accepted.
    INFO("trimmed=" << stats.trimmed << " sum_trimmed=" << sum_trimmed_
                    << " sum_rejected=" << sum_rejected_);
    REQUIRE((stats.trimmed == sum_trimmed_ ||
             stats.trimmed == sum_trimmed_ + sum_rejected_));
    REQUIRE(stats.shards.size() == config_.shards);
    size_t entries = 0, timelines = 0;
    for (const ShardStats& s : stats.shards) {
      entries += s.entries;
      timelines += s.timelines;
    }
    REQUIRE(entries == stats.entries);
    REQUIRE(timelines == stats.timelines);
  }

  const Config config_;
  std::mt19937_64 rng_;
  std::shared_ptr<ManualClock> clock_;
  std::unique_ptr<InProcessFeedEngine> engine_;
  Model model_;
  std::vector<Session> sessions_;
  Micros head_ = 100;
  uint64_t evicted_ = 0;
  uint64_t sum_trimmed_ = 0;
  uint64_t sum_rejected_ = 0;
  uint64_t sum_replaced_ = 0;
  // Counts for CheckCoverage.
  uint64_t hidden_expired_ = 0;
  uint64_t walks_finished_ = 0;
  uint64_t removed_ = 0;
  uint64_t invalid_ = 0;
  uint64_t filtered_reads_ = 0;
  int step_ = 0;
  std::string what_ = "start";
};

TEST_CASE("random operations match the reference model") {
  const uint64_t seed = testing::EnvU64("FEEDCORE_MODEL_SEED", 20240611);
  const int ops = static_cast<int>(testing::ModelOps(100000));
  const Config configs[] = {
      {1, 8, 5, 4}, {2, 16, 7, 6},   {4, 50, 20, 6},
      {3, 1, 3, 5}, {8, 200, 64, 3},
  };
  Runner::Coverage total;
  for (size_t c = 0; c < std::size(configs); ++c) {
    const Config& config = configs[c];
    const uint64_t run_seed = seed + c;
    INFO("FEEDCORE_MODEL_SEED="
         << seed << " config " << c << " (shards=" << config.shards
         << " cap=" << config.cap << " max_page_size=" << config.max_page_size
         << " owners=" << config.owners << ") run seed " << run_seed);
    Runner runner(config, run_seed);
    runner.Run(ops);
    total.Add(runner.coverage());
  }
  // The runs reached every kind of event they exist to test.
  if (ops >= 10000) {
    CHECK(total.replaced > 0);
    CHECK(total.rejected > 0);
    CHECK(total.trimmed > 0);
    CHECK(total.evicted > 0);
    CHECK(total.hidden_expired > 0);
    CHECK(total.walks_finished > 0);
    CHECK(total.removed > 0);
    CHECK(total.invalid > 0);
    CHECK(total.filtered_reads > 0);
  }
}

}  // namespace
}  // namespace feedcore
