// Unit tests of SLOWLOG and SHUTDOWN through the command dispatcher: what
// the slow log keeps and how it shortens arguments, its replies and
// errors; SHUTDOWN's options, its refusals, and that it stops through the
// program's handler without a reply.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dispatcher_fixture.h"
#include "slow_log.h"

namespace feedcore::server {
namespace {

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST_CASE("the slow log keeps the newest entries, shortened as Redis does") {
  SlowLog log(/*slower_than_micros=*/100, /*max_len=*/3);
  CHECK(!log.IsSlow(99));
  CHECK(log.IsSlow(100));
  std::vector<std::string> many(40, "a");
  many[1] = std::string(200, 'x');
  for (int i = 0; i < 5; ++i) {
    log.Add(many, 1000 + i, 150 + i, "127.0.0.1:1", "me");
  }
  CHECK(log.size() == 3);
  const std::vector<SlowLogEntry> newest = log.Newest(-1);
  REQUIRE(newest.size() == 3);
  CHECK(newest[0].id == 4);
  CHECK(newest[2].id == 2);
  CHECK(newest[0].args.size() == SlowLog::kMaxArguments);
  CHECK(newest[0].args.back() == "... (9 more arguments)");
  CHECK(newest[0].args[1] == std::string(128, 'x') + "... (72 more bytes)");
  CHECK(log.Newest(1).size() == 1);
  log.set_max_len(1);
  CHECK(log.size() == 1);
  log.set_slower_than_micros(-1);
  CHECK(!log.IsSlow(1'000'000));
  log.Reset();
  CHECK(log.size() == 0);
}

TEST_CASE("SLOWLOG GET, LEN, RESET through the dispatcher") {
  DispatcherFixture f;
  f.dispatcher().slow_log().set_slower_than_micros(0);  // every command
  f.Run({"CLIENT", "SETNAME", "tester"});
  f.Run({"ZADD", "k", "1", "a"});
  const std::string len = f.Run({"SLOWLOG", "LEN"});
  CHECK(len == ":2\r\n");  // CLIENT SETNAME and ZADD
  // SLOWLOG LEN is in the log now too, newest.
  CHECK(StartsWith(f.Run({"SLOWLOG", "GET", "1"}), "*1\r\n*6\r\n:2\r\n:"));
  const std::string newest = f.Run({"SLOWLOG", "GET"});
  CHECK(StartsWith(newest, "*4\r\n*6\r\n:3\r\n:"));
  CHECK(Contains(newest, "*6\r\n:1\r\n:"));
  CHECK(Contains(newest, "*4\r\n" + Bulk("ZADD") + Bulk("k") + Bulk("1") +
                             Bulk("a") + Bulk("") + Bulk("tester")));
  CHECK(f.Run({"SLOWLOG", "GET", "-2"}) ==
        "-ERR count should be greater than or equal to -1\r\n");
  CHECK(f.Run({"SLOWLOG", "RESET"}) == "+OK\r\n");
  // RESET itself ran after the log was emptied, and took its place.
  CHECK(f.Run({"SLOWLOG", "LEN"}) == ":1\r\n");
  CHECK(f.Run({"SLOWLOG", "NOPE"}) ==
        "-ERR unknown subcommand 'NOPE'. Try SLOWLOG HELP.\r\n");
  CHECK(f.Run({"SLOWLOG", "LEN", "x"}) ==
        "-ERR wrong number of arguments for 'slowlog|len' command\r\n");
}

TEST_CASE("SHUTDOWN stops through the handler and sends no reply") {
  DispatcherFixture f;
  CHECK(StartsWith(f.Run({"SHUTDOWN"}),
                   "-ERR Errors trying to SHUTDOWN: "
                   "this server cannot be stopped"));
  std::vector<ShutdownKind> calls;
  // The fixture's dispatcher is const to its users; the handler is set
  // before serving, as the program does.
  const_cast<CommandDispatcher&>(f.dispatcher())
      .SetShutdownHandler([&](ShutdownKind kind) { calls.push_back(kind); });
  CHECK(f.Run({"SHUTDOWN", "BOGUS"}) == "-ERR syntax error\r\n");
  CHECK(f.Run({"SHUTDOWN", "SAVE", "NOSAVE"}) == "-ERR syntax error\r\n");
  CHECK(f.Run({"SHUTDOWN", "ABORT"}) == "-ERR No shutdown in progress.\r\n");
  // No snapshot file here.
  CHECK(f.Run({"SHUTDOWN", "SAVE"}) ==
        "-ERR Errors trying to SHUTDOWN: SAVE needs --snapshot_file\r\n");
  CHECK(calls.empty());
  f.Run({"MULTI"});
  CHECK(f.Run({"SHUTDOWN"}) ==
        "-ERR Command not allowed inside a transaction\r\n");
  CHECK(StartsWith(f.Run({"EXEC"}), "-EXECABORT"));
  CHECK(calls.empty());
  CHECK(f.Run({"SHUTDOWN", "NOSAVE", "NOW"}).empty());
  CHECK(f.session().close_after_reply);
  REQUIRE(calls.size() == 1);
  CHECK(calls[0] == ShutdownKind::kNoSave);
}

}  // namespace
}  // namespace feedcore::server
