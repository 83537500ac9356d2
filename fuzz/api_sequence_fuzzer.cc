// Fuzz target: arbitrary sequences of API calls on a FeedEngine and a
// Leaderboard, each answer compared with the reference models the
// model-based tests use (tests/model/feed_model.h,
// tests/model/leaderboard_model.h).
//
// The input chooses the configuration (shards, timeline cap, page size,
// partitions, tie-break, score order, metadata limit) and then one call
// after another: Insert,
// InsertFanout, InsertBatch (valid or with a bad argument), Remove, paged
// reads in either order with windows and cursors kept across other calls,
// clock advances, EvictExpired with any budget, and on the board Set,
// Increment and IncrementMany (overflow included), Write and WriteMany
// (any op, condition and metadata, invalid ones included), SetMetadata,
// Remove, Clear, Score, Metadata, Rank, TopK, Around and ReadPage (with
// metadata or not) with any k, limit or neighbour count, CountInRange,
// Percentile, ReadPage in score ranges from any offset, and the friends'
// boards (TopKAmong, RankAmong, AroundAmong of sets with duplicates and
// absent ids), in the rank style the input picks. A
// call that must fail must fail with the documented code and change
// nothing; every other answer must equal the model's. The model tests draw the
// same calls from a seeded generator; here libFuzzer steers them towards new
// code.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "feed_model_checks.h"
#include "feedcore/clock.h"
#include "feedcore/feed_engine.h"
#include "feedcore/leaderboard.h"
#include "feedcore/options.h"
#include "fuzz_check.h"
#include "fuzz_input.h"
#include "leaderboard/leaderboard_impl.h"
#include "leaderboard/ranked_btree.h"
#include "model/feed_model.h"
#include "model/leaderboard_model.h"

namespace feedcore::fuzz {
namespace {

using Key = testing::FeedModel::Key;
using internal::RankKey;

constexpr Micros kDefaultTtl = 400;

bool SameCounts(const InsertResult& a, const InsertResult& b) {
  return a.inserted == b.inserted && a.replaced == b.replaced &&
         a.rejected_by_cap == b.rejected_by_cap && a.trimmed == b.trimmed;
}

struct BoardWalk {
  LeaderboardOrder order = LeaderboardOrder::kBestFirst;
  std::string cursor;
  std::optional<RankKey> after;
};

EngineOptions EngineOptionsFor(size_t shards, size_t cap, size_t max_page) {
  EngineOptions options;
  options.shards = shards;
  options.max_timeline_length = cap;
  options.max_page_size = max_page;
  options.default_ttl = kDefaultTtl;
  return options;
}

class Driver {
 public:
  explicit Driver(FuzzInput& in)
      : in_(in),
        clock_(std::make_shared<ManualClock>(1'000'000)),
        shards_(1 + in.Below(4)),
        cap_(1 + in.Below(8)),
        max_page_(1 + in.Below(6)),
        owners_(1 + in.Below(4)),
        board_page_(1 + in.Below(8)),
        tie_break_(in.Bool() ? TieBreak::kLowerMemberFirst
                             : TieBreak::kEarlierUpdateFirst),
        rank_style_(static_cast<RankStyle>(in.Below(3))),
        model_(EngineOptionsFor(shards_, cap_, max_page_)),
        board_options_({.partitions = 1 + in.Below(4),
                        .tie_break = tie_break_,
                        .max_page_size = board_page_,
                        .score_order = in.Bool() ? ScoreOrder::kLowerFirst
                                                 : ScoreOrder::kHigherFirst,
                        .rank_style = rank_style_,
                        .max_metadata_bytes = in.Below(4)}),
        board_(board_options_),
        board_model_(board_options_) {
    EngineOptions options = EngineOptionsFor(shards_, cap_, max_page_);
    options.sweep_interval = 0;
    options.fanout_threads = 0;
    options.clock = clock_;
    engine_ = FeedEngine::Create(options).value();
  }

  void Run() {
    while (!in_.empty()) {
      switch (in_.Below(16)) {
        case 0:
        case 1:
          Insert();
          break;
        case 2:
          Fanout();
          break;
        case 3:
          Batch();
          break;
        case 4:
          Remove();
          break;
        case 5:
          Read();
          break;
        case 6:
          Continue();
          break;
        case 7:
          clock_->Advance(static_cast<Micros>(in_.Below(80)));
          break;
        case 8:
          Evict();
          break;
        case 9:
        case 10:
          BoardWrite();
          break;
        case 11:
          BoardQuery();
          break;
        case 12:
          BoardPage();
          break;
        case 13:
          BoardRange();
          break;
        default:
          CheckStats();
          break;
      }
    }
    CheckStats();
    FUZZ_CHECK(board_.CheckInvariants());
  }

 private:
  EntityId Owner() { return 1 + in_.Below(owners_); }

  TimelineEntry Entry() {
    return {static_cast<Micros>(in_.Below(64)), in_.Below(4), in_.Below(4)};
  }

  // Insert options, sometimes invalid; `*valid` says which.
  InsertOptions Options(bool* valid) {
    InsertOptions o;
    *valid = true;
    switch (in_.Below(8)) {
      case 0:
        o.ttl = 1 + static_cast<Micros>(in_.Below(600));
        break;
      case 1:
        o.expires_at = clock_->Now() + 1 + static_cast<Micros>(in_.Below(600));
        break;
      case 2:
        *valid = false;
        o.expires_at = clock_->Now() - static_cast<Micros>(in_.Below(3));
        break;
      case 3:
        *valid = false;
        o.ttl =
            in_.Bool() ? -1 - static_cast<Micros>(in_.Below(9)) : kMaxTtl + 1;
        break;
      default:
        break;  // default_ttl
    }
    return o;
  }

  // Checks a write's result: the model's counts, or InvalidArgument and
  // nothing changed.
  void CheckWrite(const absl::StatusOr<InsertResult>& got, bool valid,
                  const InsertResult& want, size_t entries_before) {
    if (!valid) {
      FUZZ_CHECK(absl::IsInvalidArgument(got.status()));
      FUZZ_CHECK(engine_->Stats().value().entries == entries_before);
      return;
    }
    FUZZ_CHECK(got.ok());
    FUZZ_CHECK_DETAIL(
        SameCounts(*got, want),
        std::fprintf(stderr, "got %zu/%zu/%zu/%zu want %zu/%zu/%zu/%zu\n",
                     got->inserted, got->replaced, got->rejected_by_cap,
                     got->trimmed, want.inserted, want.replaced,
                     want.rejected_by_cap, want.trimmed));
  }

  void Insert() {
    const EntityId owner = Owner();
    TimelineEntry e = Entry();
    bool valid = true;
    const InsertOptions o = Options(&valid);
    if (in_.Below(16) == 0) {
      e.ts = -1;
      valid = false;
    }
    const size_t before = model_.entries();
    InsertResult want;
    if (valid)
      model_.Insert(owner, e, model_.ExpiryFor(o, clock_->Now()), &want);
    CheckWrite(engine_->Insert(owner, e, o), valid, want, before);
  }

  void Fanout() {
    std::vector<EntityId> owners(in_.Below(2 * owners_ + 1));
    for (EntityId& owner : owners) owner = Owner();  // duplicates allowed
    const TimelineEntry e = Entry();
    bool valid = true;
    const InsertOptions o = Options(&valid);
    const size_t before = model_.entries();
    InsertResult want;
    if (valid) {
      const Micros expires_at = model_.ExpiryFor(o, clock_->Now());
      for (const EntityId owner : owners)
        model_.Insert(owner, e, expires_at, &want);
    }
    CheckWrite(engine_->InsertFanout(owners, e, o), valid, want, before);
  }

  void Batch() {
    std::vector<OwnedEntry> batch(in_.Below(9));
    bool valid = true;
    for (OwnedEntry& pair : batch) {
      pair.owner = Owner();
      pair.entry = Entry();
      if (in_.Below(32) == 0) {
        pair.entry.ts = -1;
        valid = false;
      }
    }
    bool options_valid = true;
    const InsertOptions o = Options(&options_valid);
    valid = valid && options_valid;
    const size_t before = model_.entries();
    InsertResult want;
    if (valid) {
      const Micros expires_at = model_.ExpiryFor(o, clock_->Now());
      for (const OwnedEntry& pair : batch) {
        model_.Insert(pair.owner, pair.entry, expires_at, &want);
      }
    }
    CheckWrite(engine_->InsertBatch(batch, o), valid, want, before);
  }

  void Remove() {
    const EntityId owner = Owner();
    Key key{static_cast<Micros>(in_.Below(64)), in_.Below(4)};
    if (in_.Bool()) {
      if (std::optional<Key> k = model_.KeyAt(owner, in_.U8())) key = *k;
    }
    const bool present = model_.Remove(owner, key);
    const absl::Status s = engine_->Remove(owner, {key.first, key.second});
    FUZZ_CHECK(present ? s.ok() : absl::IsNotFound(s));
  }

  // Reads the walk's next page (its first when `first`) and compares it
  // with the model.
  void ReadAndCompare(Walk walk, bool first) {
    ReadOptions r;
    r.limit = 1 + in_.Below(max_page_);
    walks_.ReadAndCompare(*engine_, model_, std::move(walk), r, first,
                          clock_->Now());
  }

  void Read() {
    Walk walk;
    walk.owner = Owner();
    walk.order = in_.Bool() ? ReadOrder::kOldestFirst : ReadOrder::kNewestFirst;
    if (in_.Below(3) == 0) {
      const Micros a = static_cast<Micros>(in_.Below(66));
      const Micros b = static_cast<Micros>(in_.Below(66));
      if (in_.Bool()) walk.min_ts = std::min(a, b);
      if (in_.Bool()) walk.max_ts = std::max(a, b);
    }
    if (in_.Below(16) == 0) {
      // Bad arguments: a limit out of range, or an inverted window.
      ReadOptions r;
      if (in_.Bool()) {
        r.limit = in_.Bool() ? 0 : max_page_ + 1 + in_.Below(1u << 30);
      } else {
        r.min_ts = 10;
        r.max_ts = 9;
      }
      FUZZ_CHECK(absl::IsInvalidArgument(
          engine_->ReadTimeline(walk.owner, r).status()));
      return;
    }
    ReadAndCompare(std::move(walk), /*first=*/true);
  }

  void Continue() {
    if (walks_.empty()) return Read();
    const size_t i = in_.Below(walks_.size());
    Walk walk = walks_.Take(i);
    if (in_.Below(8) == 0) {
      // The walk's cursor on another owner's timeline or in the other
      // order is rejected.
      ReadOptions r;
      r.cursor = walk.cursor;
      r.order = walk.order;
      EntityId owner = walk.owner;
      if (in_.Bool()) {
        owner += owners_;
      } else {
        r.order = walk.order == ReadOrder::kNewestFirst
                      ? ReadOrder::kOldestFirst
                      : ReadOrder::kNewestFirst;
      }
      FUZZ_CHECK(
          absl::IsInvalidArgument(engine_->ReadTimeline(owner, r).status()));
    }
    ReadAndCompare(std::move(walk), /*first=*/false);
  }

  void Evict() {
    const Micros now = clock_->Now();
    const size_t budget = in_.Bool() ? 1 + in_.Below(8) : in_.U64();
    if (EvictAndCompare(*engine_, model_, budget, now)) {
      model_.EvictExpired(now);
    }
  }

  void CheckStats() {
    const EngineStats stats = engine_->Stats().value();
    FUZZ_CHECK(stats.entries == model_.entries());
    FUZZ_CHECK(stats.timelines == model_.timelines());
    FUZZ_CHECK(board_.Size().value() == board_model_.size());
  }

  MemberId Member() { return in_.Below(12); }

  int64_t Score() {
    switch (in_.Below(8)) {
      case 0:
        return std::numeric_limits<int64_t>::max() -
               static_cast<int64_t>(in_.Below(3));
      case 1:
        return std::numeric_limits<int64_t>::min() +
               static_cast<int64_t>(in_.Below(3));
      case 2:
        return in_.I64();
      default:
        return static_cast<int64_t>(in_.Below(9)) - 4;  // ties
    }
  }

  // An increment's result against the model's: the same score, or
  // OutOfRange where the model overflowed.
  static void CheckIncremented(const absl::StatusOr<int64_t>& got,
                               const std::optional<int64_t>& want) {
    FUZZ_CHECK(got.ok() == want.has_value());
    if (want) {
      FUZZ_CHECK(*got == *want);
    } else {
      FUZZ_CHECK(absl::IsOutOfRange(got.status()));
    }
  }

  // A write of any op and condition, valid or not.
  ScoreWrite AnyWrite() {
    ScoreWrite write;
    write.member = Member();
    write.op = static_cast<WriteOp>(in_.Below(in_.Below(16) == 0 ? 256 : 2));
    write.value = Score();
    write.condition =
        static_cast<WriteCondition>(in_.Below(in_.Below(16) == 0 ? 256 : 7));
    if (in_.Bool()) write.metadata = in_.Bytes(5);
    return write;
  }

  static void CheckWritten(const absl::StatusOr<WriteResult>& got,
                           const absl::StatusOr<WriteResult>& want) {
    FUZZ_CHECK(got.status().code() == want.status().code());
    if (want.ok()) FUZZ_CHECK(*got == *want);
  }

  void BoardWrite() {
    const MemberId member = Member();
    switch (in_.Below(11)) {
      case 0:
      case 1:
      case 2: {
        const int64_t score = Score();
        FUZZ_CHECK(board_.Set(member, score).ok());
        board_model_.Set(member, score);
        break;
      }
      case 3:
      case 4: {
        const int64_t delta = Score();
        CheckIncremented(board_.Increment(member, delta),
                         board_model_.Increment(member, delta));
        break;
      }
      case 5: {
        // A batch, applied by the model one element after another.
        std::vector<ScoreIncrement> batch(in_.Below(24));
        for (ScoreIncrement& increment : batch) {
          increment.member = Member();
          increment.delta = Score();
        }
        const std::vector<absl::StatusOr<int64_t>> got =
            board_.IncrementMany(batch);
        FUZZ_CHECK(got.size() == batch.size());
        for (size_t i = 0; i < batch.size(); ++i) {
          CheckIncremented(
              got[i], board_model_.Increment(batch[i].member, batch[i].delta));
        }
        break;
      }
      case 8: {
        const ScoreWrite write = AnyWrite();
        CheckWritten(board_.Write(write), board_model_.Write(write));
        break;
      }
      case 9: {
        std::vector<ScoreWrite> batch(in_.Below(24));
        for (ScoreWrite& write : batch) write = AnyWrite();
        const std::vector<absl::StatusOr<WriteResult>> got =
            board_.WriteMany(batch);
        FUZZ_CHECK(got.size() == batch.size());
        for (size_t i = 0; i < batch.size(); ++i) {
          CheckWritten(got[i], board_model_.Write(batch[i]));
        }
        break;
      }
      case 10: {
        const std::string metadata = in_.Bytes(5);
        FUZZ_CHECK(board_.SetMetadata(member, metadata).code() ==
                   board_model_.SetMetadata(member, metadata).code());
        break;
      }
      case 6: {
        const bool removed = board_model_.Remove(member);
        const absl::Status s = board_.Remove(member);
        FUZZ_CHECK(removed ? s.ok() : absl::IsNotFound(s));
        break;
      }
      default:
        FUZZ_CHECK(board_.Clear().ok());
        board_model_.Clear();
        break;
    }
  }

  // A k, limit or neighbour count: mostly in range, sometimes 0 or far
  // beyond the board's max_page_size (millions included).
  size_t Count() {
    switch (in_.Below(8)) {
      case 0:
        return 0;
      case 1:
        return board_page_ + 1 + in_.Below(10'000'000);
      default:
        return 1 + in_.Below(board_page_);
    }
  }

  // Neighbours for Around: 0..max_page_size, sometimes far beyond.
  size_t Neighbours() {
    if (in_.Below(8) == 0) return board_page_ + 1 + in_.Below(10'000'000);
    return in_.Below(board_page_ + 1);
  }

  void BoardQuery() {
    const std::vector<RankKey> sorted = board_model_.Sorted();
    const MemberId member = Member();
    const std::optional<RankKey> key = board_model_.Find(member);
    const ScoreOrder order = board_options_.score_order;
    switch (in_.Below(6)) {
      case 0: {
        const absl::StatusOr<int64_t> score = board_.Score(member);
        FUZZ_CHECK(score.ok() == key.has_value());
        if (key) {
          FUZZ_CHECK(*score == *board_model_.Score(member));
        } else {
          FUZZ_CHECK(absl::IsNotFound(score.status()));
        }
        break;
      }
      case 4: {
        const absl::StatusOr<std::string> got = board_.Metadata(member);
        const absl::StatusOr<std::string> want = board_model_.Metadata(member);
        FUZZ_CHECK(got.status().code() == want.status().code());
        if (want.ok()) FUZZ_CHECK(*got == *want);
        break;
      }
      case 1: {
        const absl::StatusOr<uint64_t> rank = board_.Rank(member);
        FUZZ_CHECK(rank.ok() == key.has_value());
        if (key) {
          FUZZ_CHECK(
              *rank ==
              testing::ModelStyledRanks(
                  sorted, rank_style_)[testing::ModelRank(sorted, *key)]);
        } else {
          FUZZ_CHECK(absl::IsNotFound(rank.status()));
        }
        break;
      }
      case 2: {
        const size_t k = Count();
        const absl::StatusOr<std::vector<LeaderboardEntry>> top =
            board_.TopK(k);
        if (k == 0 || k > board_page_) {
          FUZZ_CHECK(absl::IsInvalidArgument(top.status()));
        } else {
          FUZZ_CHECK(top.ok());
          FUZZ_CHECK(*top == Styled(sorted, testing::ModelEntries(sorted, 0, k,
                                                                  order)));
        }
        break;
      }
      case 3: {
        const size_t before = Neighbours();
        const size_t after = Neighbours();
        const absl::StatusOr<std::vector<LeaderboardEntry>> around =
            board_.Around(member, before, after);
        if (before > board_page_ || after > board_page_) {
          FUZZ_CHECK(absl::IsInvalidArgument(around.status()));
        } else if (!key) {
          FUZZ_CHECK(absl::IsNotFound(around.status()));
        } else {
          FUZZ_CHECK(around.ok());
          const size_t at = testing::ModelRank(sorted, *key);
          const size_t from = at >= before ? at - before : 0;
          FUZZ_CHECK(*around ==
                     Styled(sorted, testing::ModelEntries(
                                        sorted, from, at + after + 1, order)));
        }
        break;
      }
      case 5:
        BoardAmong(member);
        break;
    }
  }

  // `entries`, whose ranks are unique ranks in `sorted`, in the board's
  // rank style.
  std::vector<LeaderboardEntry> Styled(
      const std::vector<RankKey>& sorted,
      std::vector<LeaderboardEntry> entries) const {
    return testing::ModelRestyled(sorted, rank_style_, std::move(entries));
  }

  // The friends' boards of a set of members (duplicates and absent ids
  // among them) around `member`.
  void BoardAmong(MemberId member) {
    std::vector<MemberId> friends(in_.Below(12));
    for (MemberId& id : friends) id = Member();
    const std::vector<LeaderboardEntry> set =
        testing::ModelAmong(board_model_, friends, std::nullopt, rank_style_);
    const std::vector<LeaderboardEntry> with_self =
        testing::ModelAmong(board_model_, friends, member, rank_style_);
    const auto self = std::find_if(
        with_self.begin(), with_self.end(),
        [member](const LeaderboardEntry& e) { return e.member == member; });
    switch (in_.Below(3)) {
      case 0: {
        const size_t k = Count();
        const absl::StatusOr<std::vector<LeaderboardEntry>> top =
            board_.TopKAmong(friends, k);
        if (k == 0 || k > board_page_) {
          FUZZ_CHECK(absl::IsInvalidArgument(top.status()));
        } else {
          FUZZ_CHECK(top.ok());
          FUZZ_CHECK(*top ==
                     std::vector<LeaderboardEntry>(
                         set.begin(), set.begin() + std::min(k, set.size())));
        }
        break;
      }
      case 1: {
        const absl::StatusOr<uint64_t> rank = board_.RankAmong(member, friends);
        if (self == with_self.end()) {
          FUZZ_CHECK(absl::IsNotFound(rank.status()));
        } else {
          FUZZ_CHECK(rank.ok() && *rank == self->rank);
        }
        break;
      }
      default: {
        const size_t before = Neighbours();
        const size_t after = Neighbours();
        const absl::StatusOr<std::vector<LeaderboardEntry>> around =
            board_.AroundAmong(member, friends, before, after);
        if (before > board_page_ || after > board_page_) {
          FUZZ_CHECK(absl::IsInvalidArgument(around.status()));
        } else if (self == with_self.end()) {
          FUZZ_CHECK(absl::IsNotFound(around.status()));
        } else {
          FUZZ_CHECK(around.ok());
          const size_t at = static_cast<size_t>(self - with_self.begin());
          const size_t from = at >= before ? at - before : 0;
          const size_t to = std::min(with_self.size(), at + after + 1);
          FUZZ_CHECK(*around ==
                     std::vector<LeaderboardEntry>(with_self.begin() + from,
                                                   with_self.begin() + to));
        }
        break;
      }
    }
  }

  void BoardPage() {
    if (in_.Below(4) == 0) {
      board_walk_ = BoardWalk{};
      board_walk_.order = in_.Bool() ? LeaderboardOrder::kWorstFirst
                                     : LeaderboardOrder::kBestFirst;
    }
    LeaderboardReadOptions read;
    read.order = board_walk_.order;
    read.cursor = board_walk_.cursor;
    read.limit = Count();
    read.with_metadata = in_.Bool();
    const absl::StatusOr<LeaderboardPage> page = board_.ReadPage(read);
    if (read.limit == 0 || read.limit > board_page_ ||
        (read.with_metadata && board_options_.max_metadata_bytes == 0)) {
      FUZZ_CHECK(absl::IsInvalidArgument(page.status()));
      return;
    }
    FUZZ_CHECK(page.ok());
    bool more = false;
    RankKey last;
    const std::vector<RankKey> sorted = board_model_.Sorted();
    std::vector<LeaderboardEntry> want =
        Styled(sorted, testing::ModelPage(sorted, read.order, board_walk_.after,
                                          read.limit, &more, &last,
                                          board_options_.score_order));
    if (read.with_metadata) board_model_.FillMetadata(want);
    FUZZ_CHECK(page->entries == want);
    FUZZ_CHECK(page->next_cursor.empty() == !more);
    if (more) {
      board_walk_.cursor = page->next_cursor;
      board_walk_.after = last;
    } else {
      board_walk_ = BoardWalk{};
    }
  }

  // A score range: mostly between scores in use (ties, the limits),
  // sometimes every score, sometimes empty (min > max, or an exclusive end
  // at a limit).
  ScoreRange Range() {
    ScoreRange range;
    if (in_.Below(4) != 0) {
      range.min = Score();
      range.max = Score();
    }
    range.min_exclusive = in_.Bool();
    range.max_exclusive = in_.Bool();
    return range;
  }

  // CountInRange, Percentile, or a page in a range from an offset followed
  // by the next page from its cursor, each against the model.
  void BoardRange() {
    const std::vector<RankKey> sorted = board_model_.Sorted();
    const ScoreRange range = Range();
    switch (in_.Below(3)) {
      case 0: {
        const absl::StatusOr<uint64_t> count = board_.CountInRange(range);
        FUZZ_CHECK(count.ok());
        FUZZ_CHECK(*count == board_model_.CountInRange(range));
        break;
      }
      case 1: {
        const MemberId member = Member();
        const std::optional<double> want =
            board_model_.Percentile(member, rank_style_);
        const absl::StatusOr<double> got = board_.Percentile(member);
        FUZZ_CHECK(got.ok() == want.has_value());
        if (want) {
          FUZZ_CHECK(*got == *want);
        } else {
          FUZZ_CHECK(absl::IsNotFound(got.status()));
        }
        break;
      }
      default: {
        LeaderboardReadOptions read;
        read.order = in_.Bool() ? LeaderboardOrder::kWorstFirst
                                : LeaderboardOrder::kBestFirst;
        read.range = range;
        read.limit = Count();
        std::optional<RankKey> after;
        for (int pages = 0; pages < 2; ++pages) {
          read.offset =
              in_.Below(8) == 0 ? in_.U64() : in_.Below(sorted.size() + 2);
          const absl::StatusOr<LeaderboardPage> page = board_.ReadPage(read);
          if (read.limit == 0 || read.limit > board_page_) {
            FUZZ_CHECK(absl::IsInvalidArgument(page.status()));
            return;
          }
          FUZZ_CHECK(page.ok());
          bool more = false;
          RankKey last;
          FUZZ_CHECK(page->entries ==
                     Styled(sorted, testing::ModelRangePage(
                                        sorted, read, after, &more, &last,
                                        board_model_.order())));
          FUZZ_CHECK(page->next_cursor.empty() == !more);
          if (!more) break;
          read.cursor = page->next_cursor;
          after = last;
        }
        break;
      }
    }
  }

  FuzzInput& in_;
  std::shared_ptr<ManualClock> clock_;
  const size_t shards_, cap_, max_page_;
  const EntityId owners_;
  const size_t board_page_;
  const TieBreak tie_break_;
  const RankStyle rank_style_;
  std::unique_ptr<InProcessFeedEngine> engine_;
  testing::FeedModel model_;
  const LeaderboardOptions board_options_;
  internal::LeaderboardImpl board_;
  testing::LeaderboardModel board_model_;
  FeedWalks walks_;
  BoardWalk board_walk_;
};

}  // namespace
}  // namespace feedcore::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  feedcore::fuzz::FuzzInput in(data, size);
  feedcore::fuzz::Driver driver(in);
  driver.Run();
  return 0;
}
