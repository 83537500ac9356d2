// Stress test of feedcore-server's sorted-set writes without member locks
// (server/, MemberDictionary "Pins"): threads race ZADD NX /
// XX / GT / LT / INCR, multi-pair ZADD, ZINCRBY, ZREM, ZREMRANGEBYSCORE
// and ZREMRANGEBYLEX on a few names
// through the command dispatcher, while a reader ranges over the key and
// saves copy boards and names. Afterwards every member on the board must
// have a name and every name a member on the board, and no increment of a
// name that is never removed may be lost. Readers never see a *STORE
// destination half built. And transactions racing plain
// commands: no reader sees part of an EXEC, and WATCH catches every write
// that lands between WATCH and EXEC. Racing pops take each member once.
// Meant to run under ThreadSanitizer
// too.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "command_dispatcher.h"
#include "feedcore/feedcore.h"
#include "leaderboard_store.h"

namespace feedcore::server {
namespace {

constexpr int kWriters = 4;
constexpr int kOpsPerWriter = 4000;
const char* const kNames[] = {"a", "b", "c", "d", "e"};

class Server {
 public:
  Server() {
    EngineOptions options;
    options.sweep_interval = 0;
    options.fanout_threads = 0;
    engine_ = FeedEngine::Create(options).value();
    LeaderboardOptions board_options;
    board_options.partitions = 4;
    boards_ = LeaderboardStore::Create(board_options).value();
    dispatcher_ = CommandDispatcher::Create(engine_.get(), boards_.get(),
                                            nullptr, nullptr, {})
                      .value();
  }

  // Each thread keeps its own session, as each connection does.
  std::string Run(SessionState& session, const std::vector<std::string>& args) {
    std::string out;
    dispatcher_->Execute(args, session, out);
    return out;
  }
  SessionState NewSession() { return dispatcher_->NewSession(); }
  LeaderboardStore& boards() { return *boards_; }

 private:
  std::unique_ptr<InProcessFeedEngine> engine_;
  std::unique_ptr<LeaderboardStore> boards_;
  std::unique_ptr<CommandDispatcher> dispatcher_;
};

// Every member id on the board.
std::vector<MemberId> BoardMembers(const Leaderboard& board) {
  std::vector<MemberId> ids;
  LeaderboardReadOptions read;
  read.limit = board.options().max_page_size;
  for (;;) {
    LeaderboardPage page = board.ReadPage(read).value();
    for (const LeaderboardEntry& entry : page.entries) {
      ids.push_back(entry.member);
    }
    if (page.next_cursor.empty()) return ids;
    read.cursor = std::move(page.next_cursor);
  }
}

// One random write command on one of kNames; never touches "counter".
std::vector<std::string> RandomWrite(std::mt19937_64& rng) {
  auto name = [&] { return std::string(kNames[rng() % std::size(kNames)]); };
  const std::string score = std::to_string(static_cast<int>(rng() % 21) - 10);
  switch (rng() % 12) {
    case 0:
      return {"ZADD", "race", "NX", score, name()};
    case 1:
      return {"ZADD", "race", "XX", score, name()};
    case 2:
      return {"ZADD", "race", "GT", "CH", score, name()};
    case 3:
      return {"ZADD", "race", "XX", "LT", score, name()};
    case 4:
      return {"ZADD", "race", "NX", "INCR", score, name()};
    case 5:
      return {"ZADD", "race", score, name(), score, name()};
    case 6:
      return {"ZINCRBY", "race", score, name()};
    case 7:  // below 0: never "counter"
      return {"ZREMRANGEBYSCORE", "race", "-inf",
              std::to_string(-static_cast<int>(rng() % 10) - 1)};
    case 8:  // "a" to "c": never "counter", which sorts after "c"
      return {"ZREMRANGEBYLEX", "race", "[a", "[c"};
    default:
      return {"ZREM", "race", name(), name()};
  }
}

bool IsError(const std::string& reply) { return reply.rfind("-", 0) == 0; }

TEST_CASE("racing writes of a few names keep names and members together") {
  Server server;
  std::atomic<bool> writers_done{false};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriters; ++t) {
    threads.emplace_back([&server, &errors, t] {
      SessionState session = server.NewSession();
      std::mt19937_64 rng(1234 + t);
      for (int i = 0; i < kOpsPerWriter; ++i) {
        if (IsError(server.Run(session, RandomWrite(rng)))) ++errors;
        // A name that is never removed: no increment may be lost.
        if (IsError(server.Run(session, {"ZINCRBY", "race", "1", "counter"}))) {
          ++errors;
        }
      }
    });
  }
  // A reader and a saver meanwhile: a save's names cover every member of
  // the board it saved.
  std::atomic<int> unnamed_in_save{0};
  threads.emplace_back([&] {
    SessionState session = server.NewSession();
    while (!writers_done.load()) {
      const std::string range =
          server.Run(session, {"ZRANGE", "race", "0", "-1"});
      if (IsError(range)) ++errors;
      std::vector<MemberId> saved_members;
      absl::StatusOr<std::vector<KeyMemberNames>> names =
          server.boards().SaveKeys([&](const LeaderboardRegistry& registry) {
            absl::StatusOr<std::shared_ptr<Leaderboard>> board =
                registry.Get("race");
            if (board.ok()) saved_members = BoardMembers(**board);
            return absl::OkStatus();
          });
      if (!names.ok()) {
        ++errors;
        continue;
      }
      absl::flat_hash_set<MemberId> named;
      for (const KeyMemberNames& key : *names) {
        if (key.key == "race") named.insert(key.ids.begin(), key.ids.end());
      }
      for (const MemberId id : saved_members) {
        if (!named.contains(id)) ++unnamed_in_save;
      }
    }
  });
  for (int t = 0; t < kWriters; ++t) threads[t].join();
  writers_done = true;
  threads.back().join();

  CHECK(errors.load() == 0);
  CHECK(unnamed_in_save.load() == 0);
  std::shared_ptr<SortedSet> set = server.boards().Find("race");
  REQUIRE(set != nullptr);
  // Every member on the board has a name...
  const std::vector<MemberId> on_board = BoardMembers(*set->board);
  for (const MemberId id : on_board) {
    CAPTURE(id);
    CHECK(set->members.Contains(id));
  }
  // ...and every name a member on the board.
  std::vector<MemberId> ids;
  std::vector<std::string> names;
  set->members.CopyNames(ids, names);
  for (size_t i = 0; i < ids.size(); ++i) {
    CAPTURE(names[i]);
    CHECK(set->board->Score(ids[i]).ok());
  }
  CHECK(ids.size() == on_board.size());
  SessionState session = server.NewSession();
  CHECK(server.Run(session, {"ZSCORE", "race", "counter"}) ==
        absl::StrCat("$", std::to_string(kWriters * kOpsPerWriter).size(),
                     "\r\n", kWriters * kOpsPerWriter, "\r\n"));
}

// Transactions of kIncrementsPerExec increments of two members, against
// readers of both: every read sees whole transactions only.
TEST_CASE("no reader sees part of an EXEC") {
  constexpr int kIncrementsPerExec = 50;
  constexpr int kTransactions = 200;
  Server server;
  std::atomic<bool> done{false};
  std::atomic<int> torn{0}, errors{0};
  std::thread writer([&] {
    SessionState session = server.NewSession();
    for (int t = 0; t < kTransactions; ++t) {
      server.Run(session, {"MULTI"});
      for (int i = 0; i < kIncrementsPerExec; ++i) {
        server.Run(session, {"ZINCRBY", "tx", "1", "x"});
        server.Run(session, {"ZINCRBY", "tx", "1", "y"});
      }
      const std::string reply = server.Run(session, {"EXEC"});
      if (reply.rfind(absl::StrCat("*", 2 * kIncrementsPerExec, "\r\n"), 0) !=
          0) {
        ++errors;
      }
    }
    done = true;
  });
  std::thread reader([&] {
    SessionState session = server.NewSession();
    while (!done.load()) {
      const std::string reply =
          server.Run(session, {"ZMSCORE", "tx", "x", "y"});
      // "*2\r\n$n\r\nX\r\n$n\r\nY\r\n", or nulls before the first EXEC.
      if (reply == "*2\r\n$-1\r\n$-1\r\n") continue;
      std::vector<int64_t> scores;
      for (size_t at = reply.find("\r\n$"); at != std::string::npos;
           at = reply.find("\r\n$", at + 1)) {
        const size_t value = reply.find("\r\n", at + 2) + 2;
        scores.push_back(std::stoll(reply.substr(value)));
      }
      if (scores.size() != 2 || scores[0] != scores[1] ||
          scores[0] % kIncrementsPerExec != 0) {
        ++torn;
      }
    }
  });
  writer.join();
  reader.join();
  CHECK(errors.load() == 0);
  CHECK(torn.load() == 0);
  SessionState session = server.NewSession();
  CHECK(server.Run(session, {"ZSCORE", "tx", "x"}) ==
        absl::StrCat("$5\r\n", kIncrementsPerExec * kTransactions, "\r\n"));
}

// Check-and-set with WATCH from several threads: each reads the counter,
// and sets it to one more inside MULTI; retried when EXEC aborts. No
// increment may be lost, which only holds if every racing write aborts
// the EXECs that watched before it.
TEST_CASE("WATCH-based increments lose nothing") {
  constexpr int kThreads = 4;
  constexpr int kIncrements = 300;
  Server server;
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      SessionState session = server.NewSession();
      for (int done = 0; done < kIncrements;) {
        server.Run(session, {"WATCH", "cas"});
        const std::string read = server.Run(session, {"ZSCORE", "cas", "n"});
        int64_t value = 0;
        if (read != "$-1\r\n")
          value = std::stoll(read.substr(read.find('\n') + 1));
        server.Run(session, {"MULTI"});
        server.Run(session, {"ZADD", "cas", std::to_string(value + 1), "n"});
        const std::string reply = server.Run(session, {"EXEC"});
        if (reply == "*1\r\n:1\r\n" || reply == "*1\r\n:0\r\n") {
          ++done;
        } else if (reply != "*-1\r\n") {
          ++errors;
          return;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(errors.load() == 0);
  SessionState session = server.NewSession();
  CHECK(server.Run(session, {"ZSCORE", "cas", "n"}) ==
        absl::StrCat("$4\r\n", kThreads * kIncrements, "\r\n"));
}

TEST_CASE("readers see a *STORE destination whole, old or new") {
  Server server;
  SessionState setup = server.NewSession();
  for (const auto& [key, size] :
       std::vector<std::pair<std::string, int>>{{"s1", 3000}, {"s2", 5000}}) {
    std::vector<std::string> zadd = {"ZADD", key};
    for (int i = 0; i < size; ++i) {
      zadd.push_back(std::to_string(i));
      zadd.push_back(absl::StrCat("m", i));
    }
    server.Run(setup, zadd);
  }
  std::atomic<bool> done{false};
  std::atomic<int> torn{0};
  std::thread reader([&] {
    SessionState session = server.NewSession();
    while (!done.load()) {
      const std::string card = server.Run(session, {"ZCARD", "d"});
      if (card != ":0\r\n" && card != ":3000\r\n" && card != ":5000\r\n") {
        ++torn;
      }
    }
  });
  for (int i = 0; i < 40; ++i) {
    // Alternately 3000 members, and 5000 with the destination a source.
    const std::string reply =
        i % 2 == 0 ? server.Run(setup, {"ZUNIONSTORE", "d", "1", "s1"})
                   : server.Run(setup, {"ZUNIONSTORE", "d", "2", "d", "s2"});
    CHECK(reply == (i % 2 == 0 ? ":3000\r\n" : ":5000\r\n"));
  }
  done = true;
  reader.join();
  CHECK(torn.load() == 0);
}

// Threads pop one key (ZPOPMIN, ZPOPMAX, ZMPOP, ZREMRANGEBYRANK): every
// member is taken exactly once, and no pop answers empty while the set
// still has members. Nothing adds to the set, so its size only falls: a
// ZCARD above 0 after an empty pop means the pop missed members.
TEST_CASE("racing pops take every member exactly once") {
  constexpr int kPoppers = 3;
  constexpr int kMembers = 3000;
  Server server;
  SessionState setup = server.NewSession();
  std::vector<std::string> zadd = {"ZADD", "q"};
  for (int i = 0; i < kMembers; ++i) {
    zadd.push_back(std::to_string(i % 7));
    zadd.push_back(absl::StrCat("m", i));
  }
  server.Run(setup, zadd);
  std::vector<std::vector<std::string>> taken(kPoppers);
  std::atomic<int> empty_while_full{0};
  std::atomic<bool> drained{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kPoppers; ++t) {
    threads.emplace_back([&, t] {
      SessionState session = server.NewSession();
      const std::vector<std::vector<std::string>> pops = {
          {"ZPOPMIN", "q"},
          {"ZPOPMAX", "q", "2"},
          {"ZMPOP", "1", "q", "MIN", "COUNT", "3"},
          {"ZREMRANGEBYRANK", "q", "0", "0"}};
      for (int round = 0; !drained.load(); ++round) {
        const std::vector<std::string>& pop = pops[(t + round) % pops.size()];
        const std::string reply = server.Run(session, pop);
        size_t names = 0;
        if (pop[0] == "ZREMRANGEBYRANK") {
          // One member removed, not named: counted, not listed.
          if (reply == ":1\r\n") {
            taken[t].push_back("");
            ++names;
          }
        } else {
          // Every name in the reply is an "m" bulk string.
          for (size_t at = reply.find("\r\nm"); at != std::string::npos;
               at = reply.find("\r\nm", at + 1)) {
            const size_t end = reply.find("\r\n", at + 2);
            taken[t].push_back(reply.substr(at + 2, end - at - 2));
            ++names;
          }
        }
        if (names > 0) continue;
        if (server.Run(session, {"ZCARD", "q"}) == ":0\r\n") {
          drained = true;
        } else {
          ++empty_while_full;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  absl::flat_hash_set<std::string> distinct;
  size_t total = 0;
  for (const std::vector<std::string>& names : taken) {
    for (const std::string& name : names) {
      ++total;
      if (!name.empty()) CHECK(distinct.insert(name).second);
    }
  }
  CHECK(total == kMembers);
  CHECK(empty_while_full.load() == 0);
  CHECK(server.Run(setup, {"ZCARD", "q"}) == ":0\r\n");
}

}  // namespace
}  // namespace feedcore::server
