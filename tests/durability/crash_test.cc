// Proof by killing: a writer process (crash_writer.cc) runs the load of
// crash_load.h against a DurableStore from several threads and prints each
// call before it makes it and each result once it returns; this test
// SIGKILLs it after a random number of acknowledgements, opens the
// directory itself, and checks what was recovered against the reference
// models (tests/model/) fed with the acknowledged operations, then restarts
// the writer where the recovered store left off.
//
// With kAlways, every acknowledged operation must be there, exactly once:
// for each writer thread the recovered state must equal the model after all
// of its acknowledged operations, or after those and the one the thread
// had begun and not yet acknowledged (the call in flight at the kill may or
// may not have reached the log). Each acknowledged result must also equal
// the model's.
//
// With kEverySecond the last acknowledged operations may be lost: for each
// thread the recovered state must equal the model after some prefix of the
// thread's operations (nothing twice, nothing that was never made, nothing
// after a gap). The test reports how many acknowledged operations each
// kill lost; that depends on timing, so it is printed, never asserted.
//
// The kill points come from a seeded generator (FEEDCORE_CRASH_SEED
// changes it) and count acknowledgements, not time. The writer threads
// work on disjoint ids (crash_load.h), so the state of one thread's ids is
// a function of which of its operations were applied, whatever the
// interleaving.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "durability/crash_load.h"
#include "feedcore/durable_store.h"
#include "model/feed_model.h"
#include "model/leaderboard_model.h"
#include "support/social_test_util.h"
#include "support/test_util.h"

#ifndef FEEDCORE_CRASH_WRITER
#error "FEEDCORE_CRASH_WRITER must name the crash_writer executable"
#endif

namespace feedcore::crash {
namespace {

using testing::Feed;
using testing::FeedModel;
using testing::LeaderboardModel;

struct Config {
  const char* name;
  FsyncPolicy fsync = FsyncPolicy::kAlways;
  uint64_t segment_bytes = uint64_t{64} << 20;
  uint64_t compact_after_bytes = uint64_t{1} << 30;
  size_t payload_max = 256;
  size_t threads = 3;
  size_t kills = 10;
  // Each round is killed after a number of acknowledgements drawn from
  // [min_acks, max_acks].
  size_t min_acks = 50;
  size_t max_acks = 600;
  // Operations per thread of the last round, which ends without a kill; 0
  // for none.
  uint64_t clean_ops = 0;
};

// What the writer printed in one run.
struct Run {
  std::vector<std::vector<std::string>> acks;  // per thread, in order
  std::vector<std::optional<uint64_t>> in_flight;
  bool clean_exit = false;
  std::string recovery;  // the writer's "O" line
};

// --- The reference state of one writer thread ---

// Every visible entry of a feed as text; payloads by hash, so that a
// description of kilobyte payloads stays short.
void AppendEntries(const std::vector<StoredEntry>& entries, std::string* line) {
  for (const StoredEntry& e : entries) {
    absl::StrAppend(line, " ", e.ts, "/", e.activity_id, "/", e.actor, "/",
                    e.expires_at, "/", std::hash<std::string>()(e.payload));
  }
}

void AppendIds(std::vector<EntityId> ids, std::string* line) {
  std::sort(ids.begin(), ids.end());
  for (EntityId id : ids) absl::StrAppend(line, " ", id);
}

// What a description of one thread's ids holds besides its lines: cheap
// figures compared first, so that the prefix search of kEverySecond
// describes the model in full only where they agree.
struct Fingerprint {
  size_t world = 0;
  size_t members = 0;
  int64_t score_sum = 0;
  friend bool operator==(const Fingerprint&, const Fingerprint&) = default;
};

class ThreadModel {
 public:
  ThreadModel(size_t thread, const EngineOptions& options)
      : thread_(thread),
        feeds_(options),
        backfill_(options.default_backfill),
        own_board_(ThreadBoardOptions().tie_break),
        shared_board_(SharedBoardOptions().tie_break) {}

  // Operations applied so far: the index the writer continues from.
  uint64_t applied() const { return applied_; }

  // Applies operation `applied()` and returns its acknowledgement text.
  std::string ApplyNext(uint64_t seed, size_t payload_max) {
    const Op op = MakeOp(seed, thread_, applied_++, payload_max);
    switch (op.kind) {
      case OpKind::kPublish:
        return PublishText(feeds_.Publish(op.activity, kNow));
      case OpKind::kFollow:
        return FollowText(feeds_.Follow(op.a, op.b, backfill_, kNow));
      case OpKind::kUnfollow:
        return UnfollowText(feeds_.Unfollow(op.a, op.b));
      case OpKind::kInsert: {
        InsertResult r;
        feeds_.Insert(op.a, op.entry, feeds_.ExpiryFor({}, kNow), &r);
        return InsertText(r);
      }
      case OpKind::kRetract:
        return StatusText(absl::Status(feeds_.Retract(op.target), ""));
      case OpKind::kSet:
        Board(op.board).Set(op.member, op.value);
        return StatusText(absl::OkStatus());
      case OpKind::kIncrement:
        return absl::StrCat(*Board(op.board).Increment(op.member, op.value));
      case OpKind::kIncrementMany: {
        std::vector<std::string> scores;
        for (const ScoreIncrement& i : op.batch) {
          scores.push_back(
              absl::StrCat(*Board(op.board).Increment(i.member, i.delta)));
        }
        return absl::StrJoin(scores, ",");
      }
      case OpKind::kRemove:
        return StatusText(Board(op.board).Remove(op.member)
                              ? absl::OkStatus()
                              : absl::NotFoundError(""));
    }
    return "unknown operation";
  }

  Fingerprint Print() const {
    Fingerprint f;
    f.world = feeds_.feed(Feed::kWorld, 0).size();
    for (const LeaderboardModel* board : {&own_board_, &shared_board_}) {
      for (const internal::RankKey& key : board->Sorted()) {
        ++f.members;
        f.score_sum += key.score;
      }
    }
    return f;
  }

  std::vector<std::string> Describe() const {
    std::vector<std::string> lines;
    for (uint64_t k = 0; k < kEntities; ++k) {
      const EntityId e = EntityOf(thread_, k);
      for (const Feed feed : {Feed::kTimeline, Feed::kOwn}) {
        std::string line = absl::StrCat(
            feed == Feed::kTimeline ? "timeline " : "own ", e, ":");
        AppendEntries(
            feeds_.Read(feed, e, ReadOrder::kNewestFirst, std::nullopt,
                        std::nullopt, std::nullopt, kNow, /*hydrate=*/true),
            &line);
        lines.push_back(std::move(line));
      }
      std::string line = absl::StrCat("followers ", e, ":");
      const std::set<EntityId>& followers = feeds_.Followers(e);
      AppendIds({followers.begin(), followers.end()}, &line);
      lines.push_back(std::move(line));
      line = absl::StrCat("following ", e, ":");
      const std::set<EntityId>& following = feeds_.Following(e);
      AppendIds({following.begin(), following.end()}, &line);
      lines.push_back(std::move(line));
    }
    std::string world = "world:";
    AppendEntries(feeds_.Read(Feed::kWorld, 0, ReadOrder::kNewestFirst,
                              std::nullopt, std::nullopt, std::nullopt, kNow,
                              /*hydrate=*/true),
                  &world);
    lines.push_back(std::move(world));
    lines.push_back(BoardLine(ThreadBoard(thread_), own_board_.Sorted()));
    lines.push_back(BoardLine(kSharedBoard, shared_board_.Sorted()));
    return lines;
  }

 private:
  static std::string BoardLine(const std::string& name,
                               const std::vector<internal::RankKey>& keys) {
    std::string line = absl::StrCat("board ", name, ":");
    for (const internal::RankKey& k : keys) {
      absl::StrAppend(&line, " ", k.member, "=", k.score);
    }
    return line;
  }

  LeaderboardModel& Board(const std::string& name) {
    return name == kSharedBoard ? shared_board_ : own_board_;
  }

  const size_t thread_;
  FeedModel feeds_;
  const size_t backfill_;
  LeaderboardModel own_board_;
  // This thread's members of the shared board only.
  LeaderboardModel shared_board_;
  uint64_t applied_ = 0;
};

// --- The recovered store, described as ThreadModel::Describe does ---

std::string StoreBoardLine(const LeaderboardRegistry& boards,
                           const std::string& name, size_t thread,
                           Fingerprint* print) {
  std::string line = absl::StrCat("board ", name, ":");
  absl::StatusOr<std::shared_ptr<Leaderboard>> board = boards.Get(name);
  if (!board.ok()) return line;  // not created yet: as empty as the model's
  LeaderboardReadOptions read;
  read.limit = 1000;
  for (;;) {
    absl::StatusOr<LeaderboardPage> page = (*board)->ReadPage(read);
    REQUIRE_MESSAGE(page.ok(), page.status());
    for (const LeaderboardEntry& e : page->entries) {
      if (!OwnedBy(thread, e.member)) continue;
      absl::StrAppend(&line, " ", e.member, "=", e.score);
      ++print->members;
      print->score_sum += e.score;
    }
    if (page->next_cursor.empty()) break;
    read.cursor = page->next_cursor;
  }
  return line;
}

std::vector<std::string> DescribeStore(DurableStore& store, size_t thread,
                                       const std::vector<StoredEntry>& world,
                                       Fingerprint* print) {
  InProcessFeedEngine& engine = store.engine();
  ReadOptions hydrated;
  hydrated.limit = 1000;
  hydrated.hydrate = true;
  std::vector<std::string> lines;
  for (uint64_t k = 0; k < kEntities; ++k) {
    const EntityId e = EntityOf(thread, k);
    std::string line = absl::StrCat("timeline ", e, ":");
    AppendEntries(testing::Timeline(engine, e, hydrated), &line);
    lines.push_back(std::move(line));
    line = absl::StrCat("own ", e, ":");
    AppendEntries(testing::Own(engine, e, hydrated), &line);
    lines.push_back(std::move(line));
    line = absl::StrCat("followers ", e, ":");
    AppendIds(testing::WholeList(engine, true, e), &line);
    lines.push_back(std::move(line));
    line = absl::StrCat("following ", e, ":");
    AppendIds(testing::WholeList(engine, false, e), &line);
    lines.push_back(std::move(line));
  }
  std::vector<StoredEntry> mine;
  for (const StoredEntry& e : world) {
    if (OwnedBy(thread, e.actor)) mine.push_back(e);
  }
  print->world = mine.size();
  std::string line = "world:";
  AppendEntries(mine, &line);
  lines.push_back(std::move(line));
  lines.push_back(
      StoreBoardLine(store.boards(), ThreadBoard(thread), thread, print));
  lines.push_back(StoreBoardLine(store.boards(), kSharedBoard, thread, print));
  return lines;
}

// How two descriptions differ: the number of lines, and the first few of
// them, for failure messages.
struct Difference {
  size_t lines = SIZE_MAX;
  std::string text;
};
Difference Differences(const std::vector<std::string>& want,
                       const std::vector<std::string>& got) {
  Difference d;
  if (want.size() != got.size()) {
    d.text = absl::StrCat("line counts ", want.size(), " and ", got.size());
    return d;
  }
  d.lines = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] == got[i]) continue;
    if (++d.lines <= 3) {
      absl::StrAppend(&d.text, "\nmodel: ", want[i].substr(0, 400),
                      "\nstore: ", got[i].substr(0, 400));
    }
  }
  return d;
}

// --- The writer process ---

// Starts the writer with `args`; returns its pid and the read end of its
// stdout. It dies with the test (PR_SET_PDEATHSIG) if the test dies.
std::pair<pid_t, int> StartWriter(const std::vector<std::string>& args) {
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::dup2(fds[1], STDOUT_FILENO);
    std::vector<char*> argv;
    std::string binary = FEEDCORE_CRASH_WRITER;
    argv.push_back(binary.data());
    std::vector<std::string> copy = args;
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  return {pid, fds[0]};
}

// Runs the writer until it has acknowledged `kill_after` operations, then
// SIGKILLs it and reads what it printed before it died; with `kill_after`
// 0 it must run to its end.
Run RunWriter(const std::vector<std::string>& args, size_t threads,
              const std::vector<uint64_t>& start, size_t kill_after) {
  const auto [pid, fd] = StartWriter(args);
  Run run;
  run.acks.resize(threads);
  run.in_flight.resize(threads);
  size_t acks = 0;
  bool killed = false;
  std::string buffer;
  char chunk[65536];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    REQUIRE(n >= 0);
    if (n == 0) break;
    buffer.append(chunk, static_cast<size_t>(n));
    size_t begin = 0;
    for (size_t end; (end = buffer.find('\n', begin)) != std::string::npos;
         begin = end + 1) {
      const std::string line = buffer.substr(begin, end - begin);
      const std::vector<std::string> words =
          absl::StrSplit(line, absl::MaxSplits(' ', 3));
      if (words[0] == "O") {
        run.recovery = line.substr(2);
      } else if (words[0] == "E") {
        run.clean_exit = true;
      } else {
        REQUIRE_MESSAGE(words.size() >= 3, line);
        size_t t = 0;
        uint64_t i = 0;
        REQUIRE((absl::SimpleAtoi(words[1], &t) && t < threads));
        REQUIRE(absl::SimpleAtoi(words[2], &i));
        // Each thread runs its operations one after the other, in order.
        const uint64_t next = start[t] + run.acks[t].size();
        INFO(line);
        REQUIRE(i == next);
        if (words[0] == "B") {
          run.in_flight[t] = i;
        } else {
          REQUIRE(words[0] == "A");
          REQUIRE(run.in_flight[t] == i);
          run.in_flight[t].reset();
          run.acks[t].push_back(words.size() > 3 ? words[3] : "");
          ++acks;
        }
      }
    }
    buffer.erase(0, begin);
    if (kill_after != 0 && !killed && acks >= kill_after) {
      REQUIRE(::kill(pid, SIGKILL) == 0);
      killed = true;
    }
  }
  ::close(fd);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  if (kill_after != 0) {
    INFO("the writer ended by itself after ", acks, " acknowledgements");
    REQUIRE(killed);
    REQUIRE((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
  } else {
    REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    REQUIRE(run.clean_exit);
  }
  return run;
}

// --- The test ---

class CrashHarness {
 public:
  explicit CrashHarness(const Config& config)
      : config_(config),
        seed_(testing::EnvU64("FEEDCORE_CRASH_SEED", 20240611)),
        rng_(seed_),
        dir_((std::filesystem::temp_directory_path() /
              absl::StrCat("feedcore-crash-", ::getpid(), "-", config.name))
                 .string()) {
    std::filesystem::remove_all(dir_);
    for (size_t t = 0; t < config_.threads; ++t) {
      models_.emplace_back(t, CrashEngineOptions());
    }
  }
  ~CrashHarness() { std::filesystem::remove_all(dir_); }

  void RunAll() {
    INFO("config ", std::string(config_.name), ", FEEDCORE_CRASH_SEED=", seed_);
    for (size_t round = 0; round < config_.kills; ++round) {
      std::uniform_int_distribution<size_t> acks(config_.min_acks,
                                                 config_.max_acks);
      Round(round, acks(rng_));
    }
    if (config_.clean_ops != 0) Round(config_.kills, 0);
    std::printf(
        "crash_test %s: %zu kills, %zu rounds, %zu operations acknowledged, "
        "%zu in flight at a kill (%zu applied), %zu lost; "
        "largest log %llu segments, snapshots seen: %s\n",
        config_.name, config_.kills, rounds_, acked_total_, in_flight_total_,
        in_flight_applied_, lost_total_,
        static_cast<unsigned long long>(max_segments_),
        snapshot_seen_ ? "yes" : "no");
    if (config_.fsync != FsyncPolicy::kAlways) {
      std::printf("crash_test %s: acknowledged operations lost per kill: %s\n",
                  config_.name, absl::StrJoin(lost_per_kill_, " ").c_str());
    }
  }

  uint64_t max_segments() const { return max_segments_; }
  bool snapshot_seen() const { return snapshot_seen_; }

 private:
  std::vector<std::string> WriterArgs(const std::vector<uint64_t>& start,
                                      bool clean) const {
    std::vector<std::string> args = {
        absl::StrCat("--dir=", dir_),
        absl::StrCat("--fsync=", FsyncPolicyName(config_.fsync)),
        absl::StrCat("--segment_bytes=", config_.segment_bytes),
        absl::StrCat("--compact_after_bytes=", config_.compact_after_bytes),
        absl::StrCat("--threads=", config_.threads),
        absl::StrCat("--start=", absl::StrJoin(start, ",")),
        absl::StrCat("--seed=", seed_),
        absl::StrCat("--payload_max=", config_.payload_max)};
    if (clean) args.push_back(absl::StrCat("--ops=", config_.clean_ops));
    return args;
  }

  void Round(size_t round, size_t kill_after) {
    INFO("round ", round, ", killed after ", kill_after, " acknowledgements");
    ++rounds_;
    std::vector<uint64_t> start;
    for (const ThreadModel& m : models_) start.push_back(m.applied());
    const Run run = RunWriter(WriterArgs(start, kill_after == 0),
                              config_.threads, start, kill_after);
    INFO("writer's recovery: ", run.recovery);

    DurabilityOptions durability;
    durability.directory = dir_;
    durability.fsync = config_.fsync;
    durability.segment_bytes = config_.segment_bytes;
    durability.compact_after_bytes = config_.compact_after_bytes;
    absl::StatusOr<std::unique_ptr<DurableStore>> store =
        DurableStore::Open(durability, CrashEngineOptions());
    REQUIRE_MESSAGE(store.ok(), store.status());
    const DurabilityStats stats = (*store)->Stats();
    max_segments_ = std::max(max_segments_, stats.log_segments);
    snapshot_seen_ = snapshot_seen_ || stats.snapshot_sequence != 0;

    ReadOptions hydrated;
    hydrated.limit = 1000;
    hydrated.hydrate = true;
    const std::vector<StoredEntry> world =
        testing::World((*store)->engine(), hydrated);
    size_t lost = 0;
    for (size_t t = 0; t < config_.threads; ++t) {
      INFO("writer thread ", t);
      lost += Verify(**store, t, run, world);
    }
    if (kill_after != 0) lost_per_kill_.push_back(lost);
    lost_total_ += lost;
  }

  // Checks thread t's recovered state and brings its model to it.
  //
  // The state must equal the model after some prefix of the thread's
  // operations: with kAlways one that holds every acknowledged operation
  // (and the one in flight, or not); with kEverySecond any prefix. The
  // search applies the operations one by one, comparing cheap figures
  // first and whole descriptions where they agree.
  //
  // A call is several log records (change_stream.h: a publish is the
  // activity, then puts into the own, world and follower feeds); the log
  // keeps calls whole, so a state between two operations never matches.
  // Returns the number of acknowledged operations not recovered.
  size_t Verify(DurableStore& store, size_t t, const Run& run,
                const std::vector<StoredEntry>& world) {
    acked_total_ += run.acks[t].size();
    in_flight_total_ += run.in_flight[t].has_value() ? 1 : 0;
    ThreadModel& model = models_[t];
    Fingerprint stored_print;
    const std::vector<std::string> stored =
        DescribeStore(store, t, world, &stored_print);
    const std::vector<std::string>& acks = run.acks[t];
    const bool in_flight = run.in_flight[t].has_value();
    const uint64_t first = model.applied();
    // Applies operation first + k, checking an acknowledged one's result
    // (a publish recovered as its activity alone would show here as a
    // retry answering "created=0").
    auto apply = [&](size_t k) {
      const std::string result = model.ApplyNext(seed_, config_.payload_max);
      if (k >= acks.size()) return;
      INFO("operation ", first + k);
      REQUIRE(result == acks[k]);
    };
    const size_t lowest =
        config_.fsync == FsyncPolicy::kAlways ? acks.size() : 0;
    const size_t limit = acks.size() + (in_flight ? 1 : 0);
    for (size_t k = 0; k < lowest; ++k) apply(k);
    Difference closest;
    size_t closest_k = 0;
    for (size_t k = lowest;; ++k) {
      const Fingerprint print = model.Print();
      std::optional<std::vector<std::string>> before;
      if (print == stored_print || Near(print, stored_print)) {
        before = model.Describe();
        if (*before == stored) {
          if (k > acks.size()) ++in_flight_applied_;
          return acks.size() - std::min(k, acks.size());
        }
        Difference d = Differences(*before, stored);
        if (d.lines <= closest.lines) {
          closest = std::move(d);
          closest_k = k;
        }
      }
      INFO("no prefix of operations ", first, "..", first + k,
           " matches; the closest, ", first, "..", first + closest_k, ", in ",
           closest.lines, " lines:", closest.text);
      REQUIRE_MESSAGE(k < limit,
                      "the recovered state is not what the acknowledged "
                      "operations made");
      apply(k);
    }
  }

  // Whether a state differs from the stored one by at most one call's
  // worth of world feed entries: where a call recovered in part is looked
  // for.
  static bool Near(const Fingerprint& a, const Fingerprint& b) {
    return a.world + 1 >= b.world && b.world + 1 >= a.world;
  }

  const Config config_;
  const uint64_t seed_;
  std::mt19937_64 rng_;
  const std::string dir_;
  std::vector<ThreadModel> models_;
  size_t rounds_ = 0;
  size_t acked_total_ = 0;
  size_t in_flight_total_ = 0;
  size_t in_flight_applied_ = 0;
  size_t lost_total_ = 0;
  std::vector<size_t> lost_per_kill_;
  uint64_t max_segments_ = 0;
  bool snapshot_seen_ = false;
};

TEST_CASE("kAlways: every acknowledged write survives SIGKILL, once") {
  Config config;
  config.name = "always";
  config.kills = 10;
  config.clean_ops = 200;
  CrashHarness harness(config);
  harness.RunAll();
}

TEST_CASE("kAlways with 1 MiB segments and compaction during the kills") {
  Config config;
  config.name = "always-small-segments";
  config.segment_bytes = kMinLogSegmentBytes;
  config.compact_after_bytes = 3 * kMinLogSegmentBytes;
  // Publishes of up to 8 KiB: each round writes megabytes of log, so
  // segments roll and compactions run while the writer is killed.
  config.payload_max = 8192;
  config.kills = 12;
  config.min_acks = 200;
  config.max_acks = 900;
  config.clean_ops = 200;
  CrashHarness harness(config);
  harness.RunAll();
  CHECK(harness.max_segments() >= 2);
  CHECK(harness.snapshot_seen());
}

TEST_CASE("kEverySecond: what survives SIGKILL is a prefix of what was made") {
  Config config;
  config.name = "everysec";
  config.fsync = FsyncPolicy::kEverySecond;
  config.segment_bytes = kMinLogSegmentBytes;
  config.compact_after_bytes = 4 * kMinLogSegmentBytes;
  config.payload_max = 1024;
  config.kills = 6;
  config.min_acks = 1000;
  config.max_acks = 30000;
  config.clean_ops = 500;
  CrashHarness harness(config);
  harness.RunAll();
}

}  // namespace
}  // namespace feedcore::crash
