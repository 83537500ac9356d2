// Unit tests of feedcore-server's command dispatcher (server/):
// every command's reply, byte for byte, in RESP2 and RESP3, and its errors
// (unknown command, wrong arity, bad numbers, bad cursors, option clashes).
#include "dispatcher_fixture.h"

// GCC 12 reports a false -Wrestrict inside std::string's operator+ for
// "literal" + std::string (GCC bug 105329); the expected replies below are
// built that way for readability.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "feedcore/feedcore.h"

namespace feedcore::server {
namespace {

constexpr Micros kStart = kDispatcherFixtureStart;

// Boards of four partitions and pages of `board_page_size`, and a
// password when `requirepass` is not empty.
class Fixture : public DispatcherFixture {
 public:
  explicit Fixture(size_t board_page_size = 1000,
                   const std::string& requirepass = "")
      : DispatcherFixture(Options(board_page_size, requirepass)) {}

 private:
  static DispatcherFixtureOptions Options(size_t board_page_size,
                                          const std::string& requirepass) {
    DispatcherFixtureOptions o;
    o.boards.partitions = 4;
    o.boards.max_page_size = board_page_size;
    o.dispatcher.requirepass = requirepass;
    return o;
  }
};
bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST_CASE("Create rejects missing dependencies") {
  CHECK(!CommandDispatcher::Create(nullptr, nullptr).ok());
}

TEST_CASE("PING, ECHO, QUIT") {
  Fixture f;
  CHECK(f.Run({"PING"}) == "+PONG\r\n");
  CHECK(f.Run({"ping", "hi"}) == Bulk("hi"));
  CHECK(StartsWith(f.Run({"PING", "a", "b"}), "-ERR wrong number"));
  CHECK(f.Run({"ECHO", "x y"}) == Bulk("x y"));
  CHECK(!f.session().close_after_reply);
  CHECK(f.Run({"QUIT"}) == "+OK\r\n");
  CHECK(f.session().close_after_reply);
}

TEST_CASE("unknown commands and wrong arity get Redis's messages") {
  Fixture f;
  CHECK(f.Run({"NOPE", "a", "b"}) ==
        "-ERR unknown command 'NOPE', with args beginning with: 'a' 'b' \r\n");
  CHECK(f.Run({"ZADD", "k", "1"}) ==
        "-ERR wrong number of arguments for 'zadd' command\r\n");
  CHECK(f.Run({"ZCARD"}) ==
        "-ERR wrong number of arguments for 'zcard' command\r\n");
  std::string out;
  f.dispatcher().Execute({}, f.session(), out);
  CHECK(out == "-ERR empty command\r\n");
}

TEST_CASE("error messages cannot break the reply line") {
  Fixture f;
  const std::string reply = f.Run({"NO\r\nPE"});
  // As Redis: CR and LF become spaces.
  CHECK(StartsWith(reply, "-ERR unknown command 'NO  PE'"));
  CHECK(reply.find('\n') == reply.size() - 1);
}

TEST_CASE("HELLO switches the protocol only when valid") {
  Fixture f;
  const std::string hello2 = f.Run({"HELLO"});
  // "redis" and the Redis version followed, as clients choose by them.
  CHECK(StartsWith(hello2,
                   "*16\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n"
                   "$6\r\n7.0.15\r\n$16\r\nfeedcore_version\r\n"));
  CHECK(f.session().protocol == 2);
  CHECK(StartsWith(f.Run({"HELLO", "4"}), "-NOPROTO unsupported protocol"));
  CHECK(StartsWith(f.Run({"HELLO", "x"}), "-NOPROTO"));
  // No password configured: the default user takes any password, another
  // user none.
  CHECK(StartsWith(f.Run({"HELLO", "3", "AUTH", "u", "p"}), "-WRONGPASS"));
  CHECK(StartsWith(f.Run({"HELLO", "3", "BOGUS"}), "-ERR syntax error"));
  CHECK(f.session().protocol == 2);

  const std::string hello3 = f.Run({"HELLO", "3", "SETNAME", "me"});
  CHECK(StartsWith(hello3, "%8\r\n"));
  CHECK(Contains(hello3, "$5\r\nproto\r\n:3\r\n"));
  CHECK(f.session().protocol == 3);
  CHECK(f.session().client_name == "me");
  CHECK(f.Run({"ZSCORE", "none", "x"}) == "_\r\n");
  f.Run({"HELLO", "2"});
  CHECK(f.Run({"ZSCORE", "none", "x"}) == "$-1\r\n");
}

constexpr char kNoAuth[] = "-NOAUTH Authentication required.\r\n";
constexpr char kWrongPass[] =
    "-WRONGPASS invalid username-password pair or user is disabled.\r\n";

TEST_CASE("with a password, only AUTH, HELLO and QUIT run before AUTH") {
  Fixture f(1000, "s3cret");
  CHECK(!f.session().authenticated);
  CHECK(f.Run({"PING"}) == kNoAuth);
  CHECK(f.Run({"ZADD", "k", "1", "a"}) == kNoAuth);
  CHECK(f.Run({"INFO"}) == kNoAuth);
  // Not even whether a command exists is told.
  CHECK(f.Run({"NOSUCH"}) == kNoAuth);
  CHECK(f.Run({"AUTH", "wrong"}) == kWrongPass);
  CHECK(f.Run({"AUTH", "s3cre"}) == kWrongPass);
  CHECK(f.Run({"AUTH", "s3cret!"}) == kWrongPass);
  CHECK(f.Run({"AUTH", "admin", "s3cret"}) == kWrongPass);
  CHECK(f.Run({"AUTH", "a", "b", "c"}) == "-ERR syntax error\r\n");
  CHECK(f.Run({"PING"}) == kNoAuth);
  CHECK(f.Run({"AUTH", "s3cret"}) == "+OK\r\n");
  CHECK(f.session().authenticated);
  CHECK(f.Run({"PING"}) == "+PONG\r\n");

  f.NewSession();
  CHECK(f.Run({"AUTH", "default", "s3cret"}) == "+OK\r\n");
  CHECK(f.Run({"PING"}) == "+PONG\r\n");

  f.NewSession();
  CHECK(f.Run({"QUIT"}) == "+OK\r\n");
}

TEST_CASE("HELLO authenticates with AUTH username password") {
  Fixture f(1000, "s3cret");
  CHECK(StartsWith(f.Run({"HELLO", "3"}), "-NOAUTH HELLO must be called"));
  CHECK(f.Run({"HELLO", "3", "AUTH", "default", "nope"}) == kWrongPass);
  CHECK(f.session().protocol == 2);  // a failed HELLO switches nothing
  CHECK(!f.session().authenticated);
  CHECK(f.Run({"HELLO", "3", "AUTH", "other", "s3cret"}) == kWrongPass);
  const std::string hello =
      f.Run({"HELLO", "3", "AUTH", "default", "s3cret", "SETNAME", "me"});
  CHECK(StartsWith(hello, "%8\r\n"));
  CHECK(f.session().authenticated);
  CHECK(f.session().protocol == 3);
  CHECK(f.Run({"PING"}) == "+PONG\r\n");
}

TEST_CASE("AUTH without a configured password is an error, as in Redis") {
  Fixture f;
  CHECK(f.session().authenticated);
  CHECK(StartsWith(f.Run({"AUTH", "x"}),
                   "-ERR AUTH <password> called without any password "
                   "configured for the default user"));
  CHECK(f.Run({"AUTH", "default", "anything"}) == "+OK\r\n");
}

// The value of `field` in an INFO reply, or -1.
int64_t InfoField(const std::string& info, const std::string& field) {
  const size_t at = info.find("\r\n" + field + ":");
  if (at == std::string::npos) return -1;
  const size_t start = at + field.size() + 3;
  return std::stoll(info.substr(start, info.find('\r', start) - start));
}

TEST_CASE("INFO reports the counters and the live member names") {
  Fixture f;
  std::string info = f.Run({"INFO"});
  CHECK(Contains(info, "# Clients\r\nconnected_clients:0\r\n"));
  CHECK(InfoField(info, "client_query_buffer_limit_disconnections") == 0);
  CHECK(InfoField(info, "client_output_buffer_limit_disconnections") == 0);
  f.dispatcher().stats().client_output_buffer_limit_disconnections.fetch_add(2);
  info = f.Run({"INFO", "stats"});
  CHECK(InfoField(info, "client_output_buffer_limit_disconnections") == 2);
  CHECK(!Contains(info, "# Keyspace"));

  f.Run({"ZADD", "k", "1", "a", "2", "b", "3", std::string(100, 'l')});
  info = f.Run({"INFO", "memory"});
  CHECK(InfoField(info, "member_names") == 3);
  CHECK(InfoField(info, "member_name_bytes") > 100);
  CHECK(InfoField(info, "used_memory") > 0);
  CHECK(Contains(f.Run({"INFO", "keyspace"}),
                 "# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\n"));
  CHECK(f.Run({"ZREM", "k", "a", "b", std::string(100, 'l')}) == ":3\r\n");
  info = f.Run({"INFO", "memory"});
  CHECK(InfoField(info, "member_names") == 0);
  // An emptied key is gone from the keyspace, as in Redis.
  CHECK(f.Run({"INFO", "keyspace"}) == Bulk("# Keyspace\r\n"));
  CHECK(f.Run({"INFO", "nosuchsection"}) == "$0\r\n\r\n");
}

TEST_CASE("INFO has Redis's sections, the versions and commandstats") {
  Fixture f;
  f.clock().Advance(90 * 1'000'000);
  std::string info = f.Run({"INFO"});
  // What client test fixtures read first.
  CHECK(StartsWith(info, "$"));
  CHECK(
      Contains(info, "# Server\r\nredis_version:7.0.15\r\nfeedcore_version:"));
  CHECK(InfoField(info, "uptime_in_seconds") == 90);
  CHECK(Contains(info, "\r\nrun_id:"));
  CHECK(Contains(info, "\r\nrole:master\r\n"));
  for (const char* section :
       {"# Clients", "# Memory", "# Persistence", "# Stats", "# Replication",
        "# Cluster", "# Keyspace"}) {
    CAPTURE(section);
    CHECK(Contains(info, section));
  }
  // Not in the default sections, as in Redis.
  CHECK(!Contains(info, "# Commandstats"));
  f.Run({"ZADD", "k", "1", "a"});
  f.Run({"ZADD", "k", "x", "a"});
  f.Run({"ZADD", "k"});
  info = f.Run({"INFO", "commandstats"});
  CHECK(Contains(info, "cmdstat_zadd:calls=2,usec="));
  CHECK(Contains(info, ",rejected_calls=1,failed_calls=1\r\n"));
  CHECK(!Contains(info, "# Server"));
  info = f.Run({"INFO", "everything"});
  CHECK(Contains(info, "# Commandstats"));
  CHECK(Contains(info, "# Server"));
  CHECK(InfoField(info, "total_commands_processed") >= 4);
}

TEST_CASE("a removed member's name is freed and its id never reused as is") {
  Fixture f;
  f.Run({"ZADD", "k", "10", "alice", "20", "bob"});
  CHECK(f.Run({"ZREM", "k", "alice"}) == ":1\r\n");
  // bob keeps his id and name; carol takes alice's freed slot.
  f.Run({"ZADD", "k", "30", "carol"});
  CHECK(f.Run({"ZRANGE", "k", "0", "-1", "WITHSCORES"}) ==
        "*4\r\n" + Bulk("bob") + Bulk("20") + Bulk("carol") + Bulk("30"));
  CHECK(f.Run({"ZSCORE", "k", "alice"}) == "$-1\r\n");
  f.Run({"ZADD", "k", "5", "alice"});
  CHECK(f.Run({"ZRANGE", "k", "0", "0"}) == "*1\r\n" + Bulk("alice"));
  CHECK(f.Run({"ZREM", "k", "alice", "bob", "carol", "nobody"}) == ":3\r\n");
  CHECK(InfoField(f.Run({"INFO"}), "member_names") == 0);
}

TEST_CASE("COMMAND describes the commands") {
  Fixture f;
  const size_t count = f.dispatcher().commands().all().size();
  CHECK(f.Run({"COMMAND", "COUNT"}) == ":" + std::to_string(count) + "\r\n");
  CHECK(StartsWith(f.Run({"COMMAND"}), "*" + std::to_string(count) + "\r\n"));
  CHECK(StartsWith(f.Run({"COMMAND", "INFO", "zadd", "nope"}),
                   "*2\r\n*10\r\n$4\r\nzadd\r\n:-4\r\n"));
  CHECK(Contains(f.Run({"COMMAND", "INFO", "nope"}), "$-1\r\n"));
  CHECK(f.Run({"COMMAND", "DOCS"}) == "*0\r\n");
  CHECK(Contains(f.Run({"COMMAND", "LIST"}), Bulk("feed.publish")));
  CHECK(StartsWith(f.Run({"COMMAND", "FOO"}), "-ERR unknown subcommand"));
}

TEST_CASE("CONFIG GET answers what redis-benchmark asks") {
  Fixture f;
  CHECK(f.Run({"CONFIG", "GET", "save"}) == "*2\r\n" + Bulk("save") + Bulk(""));
  CHECK(f.Run({"CONFIG", "GET", "appendonly"}) ==
        "*2\r\n" + Bulk("appendonly") + Bulk("no"));
  CHECK(f.Run({"CONFIG", "GET", "maxmemory"}) == "*0\r\n");
  CHECK(StartsWith(f.Run({"CONFIG", "SET", "a", "b"}), "-ERR only CONFIG GET"));
}

TEST_CASE("ZADD, ZSCORE, ZINCRBY, ZCARD") {
  Fixture f;
  CHECK(f.Run({"ZADD", "lb", "10", "alice", "20", "bob"}) == ":2\r\n");
  CHECK(f.Run({"ZADD", "lb", "10", "alice", "5", "carol"}) == ":1\r\n");
  CHECK(f.Run({"ZSCORE", "lb", "alice"}) == Bulk("10"));
  CHECK(f.Run({"ZSCORE", "lb", "nobody"}) == "$-1\r\n");
  CHECK(f.Run({"ZSCORE", "nokey", "alice"}) == "$-1\r\n");
  CHECK(f.Run({"ZINCRBY", "lb", "-15", "alice"}) == Bulk("-5"));
  CHECK(f.Run({"ZINCRBY", "lb", "7", "dave"}) == Bulk("7"));
  CHECK(f.Run({"ZCARD", "lb"}) == ":4\r\n");
  CHECK(f.Run({"ZCARD", "nokey"}) == ":0\r\n");
  // Member names are arbitrary bytes.
  const std::string odd("\0 name\r\n", 8);
  CHECK(f.Run({"ZADD", "lb", "1", odd}) == ":1\r\n");
  CHECK(f.Run({"ZSCORE", "lb", odd}) == Bulk("1"));
  f.session().protocol = 3;
  CHECK(f.Run({"ZSCORE", "lb", "bob"}) == ",20\r\n");
  CHECK(f.Run({"ZINCRBY", "lb", "1", "bob"}) == ",21\r\n");
}

TEST_CASE("scores are int64 integers; anything else is rejected") {
  Fixture f;
  for (const std::string bad :
       {"1.5", "abc", "", " 1", "1 ", "1e-3", "inf", "-inf", "nan", "+-1",
        "++1", "0x10", "9223372036854775808", "9.3e18", "-9.3e18"}) {
    CAPTURE(bad);
    const std::string reply = f.Run({"ZADD", "lb", bad, "m"});
    CHECK(StartsWith(reply, "-ERR score must be an integer from"));
    CHECK(Contains(reply, "int64 scores"));
    CHECK(StartsWith(f.Run({"ZINCRBY", "lb", bad, "m"}),
                     "-ERR increment must be an integer from"));
  }
  CHECK(f.Run({"ZCARD", "lb"}) == ":0\r\n");  // nothing was created
  CHECK(f.Run({"ZADD", "lb", "9223372036854775807", "m"}) == ":1\r\n");
  CHECK(StartsWith(f.Run({"ZINCRBY", "lb", "1", "m"}), "-ERR "));
  CHECK(f.Run({"ZADD", "lb", "-9223372036854775808", "n"}) == ":1\r\n");
  CHECK(f.Run({"ZADD", "lb", "+3", "p"}) == ":1\r\n");
}

TEST_CASE("a score in any syntax Redis reads is taken when it is integral") {
  Fixture f;
  const std::pair<std::string, std::string> scores[] = {
      {"2.0", "2"},   {"1e3", "1000"}, {"-0", "0"},
      {"+5", "5"},    {"+5.0", "5"},   {"-2.5e1", "-25"},
      {"1E2", "100"}, {"0.0", "0"},    {"-9.2e18", "-9200000000000000000"}};
  for (const auto& [text, want] : scores) {
    CAPTURE(text);
    REQUIRE(f.Run({"ZADD", "lb", text, "m"}) != "");
    CHECK(f.Run({"ZSCORE", "lb", "m"}) == Bulk(want));
  }
  CHECK(f.Run({"ZINCRBY", "lb", "1e1", "m"}) == Bulk("-9199999999999999990"));
}

TEST_CASE("a bad pair anywhere in ZADD changes nothing") {
  Fixture f;
  CHECK(StartsWith(f.Run({"ZADD", "lb", "1", "a", "x", "b"}), "-ERR score"));
  CHECK(f.Run({"ZCARD", "lb"}) == ":0\r\n");
  CHECK(StartsWith(f.Run({"ZADD", "lb", "1", "a", "2"}), "-ERR syntax error"));
  CHECK(f.Run({"ZCARD", "lb"}) == ":0\r\n");
}

TEST_CASE("ZADD options: NX, XX, GT, LT, CH, INCR") {
  Fixture f;
  f.Run({"ZADD", "lb", "10", "a"});
  CHECK(f.Run({"ZADD", "lb", "NX", "99", "a", "1", "b"}) == ":1\r\n");
  CHECK(f.Run({"ZSCORE", "lb", "a"}) == Bulk("10"));
  CHECK(f.Run({"ZADD", "lb", "XX", "11", "a", "1", "c"}) == ":0\r\n");
  CHECK(f.Run({"ZSCORE", "lb", "a"}) == Bulk("11"));
  CHECK(f.Run({"ZSCORE", "lb", "c"}) == "$-1\r\n");
  CHECK(f.Run({"ZADD", "lb", "XX", "CH", "12", "a", "1", "b"}) == ":1\r\n");
  CHECK(f.Run({"ZADD", "lb", "GT", "CH", "5", "a"}) == ":0\r\n");
  CHECK(f.Run({"ZADD", "lb", "GT", "CH", "50", "a"}) == ":1\r\n");
  CHECK(f.Run({"ZADD", "lb", "LT", "CH", "60", "a"}) == ":0\r\n");
  CHECK(f.Run({"ZADD", "lb", "LT", "CH", "40", "a"}) == ":1\r\n");
  CHECK(f.Run({"ZADD", "lb", "INCR", "2", "a"}) == Bulk("42"));
  CHECK(f.Run({"ZADD", "lb", "NX", "INCR", "2", "a"}) == "$-1\r\n");
  CHECK(f.Run({"ZADD", "lb", "XX", "INCR", "2", "zz"}) == "$-1\r\n");
  // XX on a missing key changes nothing and creates no key.
  CHECK(f.Run({"ZADD", "nokey", "XX", "1", "a"}) == ":0\r\n");
  CHECK(f.Run({"ZADD", "nokey", "XX", "INCR", "1", "a"}) == "$-1\r\n");
  CHECK(f.Run({"DEL", "nokey"}) == ":0\r\n");
  CHECK(f.Run({"ZADD", "lb", "INCR", "-1", "new"}) == Bulk("-1"));
  CHECK(StartsWith(f.Run({"ZADD", "lb", "NX", "XX", "1", "a"}),
                   "-ERR XX and NX options"));
  CHECK(StartsWith(f.Run({"ZADD", "lb", "GT", "LT", "1", "a"}),
                   "-ERR GT, LT, and/or NX"));
  CHECK(StartsWith(f.Run({"ZADD", "lb", "NX", "GT", "1", "a"}),
                   "-ERR GT, LT, and/or NX"));
  CHECK(StartsWith(f.Run({"ZADD", "lb", "INCR", "1", "a", "2", "b"}),
                   "-ERR INCR option supports a single"));
  CHECK(f.Run({"ZADD", "lb", "INCR", "9223372036854775807", "x"}) ==
        Bulk("9223372036854775807"));
  CHECK(StartsWith(f.Run({"ZADD", "lb", "INCR", "1", "x"}),
                   "-ERR increment would overflow"));
}

TEST_CASE("ZREVRANK, ZRANK, ZREM, DEL") {
  Fixture f;
  f.Run({"ZADD", "lb", "10", "a", "30", "b", "20", "c"});
  CHECK(f.Run({"ZREVRANK", "lb", "b"}) == ":0\r\n");
  CHECK(f.Run({"ZREVRANK", "lb", "a"}) == ":2\r\n");
  CHECK(f.Run({"ZRANK", "lb", "a"}) == ":0\r\n");
  CHECK(f.Run({"ZRANK", "lb", "b"}) == ":2\r\n");
  CHECK(f.Run({"ZREVRANK", "lb", "zz"}) == "$-1\r\n");
  CHECK(f.Run({"ZRANK", "nokey", "a"}) == "$-1\r\n");
  CHECK(f.Run({"ZREM", "lb", "a", "zz", "a"}) == ":1\r\n");
  CHECK(f.Run({"ZREM", "nokey", "a"}) == ":0\r\n");
  CHECK(f.Run({"ZREVRANK", "lb", "a"}) == "$-1\r\n");
  CHECK(f.Run({"ZCARD", "lb"}) == ":2\r\n");
  CHECK(f.Run({"DEL", "lb", "nokey"}) == ":1\r\n");
  CHECK(f.Run({"ZCARD", "lb"}) == ":0\r\n");
  CHECK(f.Run({"ZADD", "lb", "1", "a"}) == ":1\r\n");
}

TEST_CASE("ZRANGE by rank in both orders, with negative indices") {
  // A page size of 3 makes ranges beyond the top walk several pages.
  Fixture f(/*board_page_size=*/3);
  for (int i = 1; i <= 10; ++i) {
    f.Run({"ZADD", "lb", std::to_string(i * 10), "m" + std::to_string(i)});
  }
  auto members = [](std::vector<int> ids) {
    std::string out = "*" + std::to_string(ids.size()) + "\r\n";
    for (int id : ids) out += Bulk("m" + std::to_string(id));
    return out;
  };
  CHECK(f.Run({"ZRANGE", "lb", "0", "2"}) == members({1, 2, 3}));
  CHECK(f.Run({"ZRANGE", "lb", "0", "2", "REV"}) == members({10, 9, 8}));
  CHECK(f.Run({"ZRANGE", "lb", "4", "7", "rev"}) == members({6, 5, 4, 3}));
  CHECK(f.Run({"ZRANGE", "lb", "-2", "-1"}) == members({9, 10}));
  CHECK(f.Run({"ZRANGE", "lb", "-3", "100", "REV"}) == members({3, 2, 1}));
  CHECK(f.Run({"ZRANGE", "lb", "0", "-1"}) ==
        members({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  CHECK(f.Run({"ZRANGE", "lb", "7", "9223372036854775807", "REV"}) ==
        members({3, 2, 1}));
  CHECK(f.Run({"ZRANGE", "lb", "-9223372036854775808", "1"}) ==
        members({1, 2}));
  CHECK(f.Run({"ZRANGE", "lb", "5", "2"}) == "*0\r\n");
  CHECK(f.Run({"ZRANGE", "lb", "20", "30"}) == "*0\r\n");
  CHECK(f.Run({"ZRANGE", "nokey", "0", "-1"}) == "*0\r\n");
  CHECK(f.Run({"ZREVRANGE", "lb", "0", "1"}) == members({10, 9}));
  CHECK(f.Run({"ZRANGE", "lb", "0", "1", "REV", "WITHSCORES"}) ==
        "*4\r\n" + Bulk("m10") + Bulk("100") + Bulk("m9") + Bulk("90"));
  f.session().protocol = 3;
  CHECK(f.Run({"ZRANGE", "lb", "0", "1", "WITHSCORES"}) ==
        "*2\r\n*2\r\n" + Bulk("m1") + ",10\r\n*2\r\n" + Bulk("m2") + ",20\r\n");
  CHECK(StartsWith(f.Run({"ZRANGE", "lb", "a", "c", "BYLEX"}),
                   "-ERR BYLEX is not supported"));
  CHECK(StartsWith(f.Run({"ZRANGE", "lb", "0", "1", "JUNK"}),
                   "-ERR syntax error: unexpected argument 'JUNK'"));
  CHECK(StartsWith(f.Run({"ZRANGE", "lb", "a", "1"}),
                   "-ERR start must be a decimal integer"));
}

TEST_CASE("ZRANGE BYSCORE, ZRANGEBYSCORE, ZREVRANGEBYSCORE, ZCOUNT, LIMIT") {
  // A page size of 3 makes longer ranges several pages, each after the
  // offset of the first.
  Fixture f(/*board_page_size=*/3);
  for (int i = 1; i <= 10; ++i) {
    f.Run({"ZADD", "lb", std::to_string(i * 10), "m" + std::to_string(i)});
  }
  auto members = [](std::vector<int> ids) {
    std::string out = "*" + std::to_string(ids.size()) + "\r\n";
    for (int id : ids) out += Bulk("m" + std::to_string(id));
    return out;
  };
  CHECK(f.Run({"ZRANGE", "lb", "5", "8", "REV"}) == members({5, 4, 3, 2}));
  CHECK(f.Run({"ZRANGE", "lb", "20", "50", "BYSCORE"}) ==
        members({2, 3, 4, 5}));
  CHECK(f.Run({"ZRANGE", "lb", "(20", "(50", "BYSCORE"}) == members({3, 4}));
  CHECK(f.Run({"ZRANGE", "lb", "50", "20", "BYSCORE", "REV"}) ==
        members({5, 4, 3, 2}));
  CHECK(f.Run({"ZRANGE", "lb", "-inf", "+inf", "BYSCORE", "LIMIT", "2", "5"}) ==
        members({3, 4, 5, 6, 7}));
  CHECK(f.Run({"ZRANGE", "lb", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", "8",
               "-1", "WITHSCORES"}) ==
        "*4\r\n" + Bulk("m2") + Bulk("20") + Bulk("m1") + Bulk("10"));
  CHECK(f.Run({"ZRANGE", "lb", "-inf", "+inf", "BYSCORE", "LIMIT", "-1",
               "5"}) == "*0\r\n");
  CHECK(f.Run({"ZRANGE", "lb", "-inf", "+inf", "BYSCORE", "LIMIT", "0", "0"}) ==
        "*0\r\n");
  // Non-integer bounds round inward: (15.5 and 15.5 both start at 20.
  CHECK(f.Run({"ZRANGEBYSCORE", "lb", "(15.5", "30.5"}) == members({2, 3}));
  CHECK(f.Run({"ZRANGEBYSCORE", "lb", "15.5", "(30.0"}) == members({2}));
  CHECK(f.Run({"ZRANGEBYSCORE", "lb", "1e1", "2e1"}) == members({1, 2}));
  CHECK(f.Run({"ZRANGEBYSCORE", "lb", "(+inf", "+inf"}) == "*0\r\n");
  CHECK(f.Run({"ZRANGEBYSCORE", "lb", "1e300", "inf"}) == "*0\r\n");
  CHECK(f.Run({"ZRANGEBYSCORE", "lb", "-1e300", "10"}) == members({1}));
  CHECK(f.Run({"ZRANGEBYSCORE", "lb", "0", "100", "WITHSCORES", "LIMIT", "8",
               "10"}) ==
        "*4\r\n" + Bulk("m9") + Bulk("90") + Bulk("m10") + Bulk("100"));
  CHECK(f.Run({"ZREVRANGEBYSCORE", "lb", "(100", "70", "LIMIT", "1", "5"}) ==
        members({8, 7}));
  CHECK(f.Run({"ZCOUNT", "lb", "-inf", "+inf"}) == ":10\r\n");
  CHECK(f.Run({"ZCOUNT", "lb", "(20", "50"}) == ":3\r\n");
  CHECK(f.Run({"ZCOUNT", "lb", "50", "20"}) == ":0\r\n");
  CHECK(f.Run({"ZCOUNT", "lb", "(inf", "inf"}) == ":0\r\n");
  CHECK(f.Run({"ZCOUNT", "nokey", "0", "1"}) == ":0\r\n");
  CHECK(f.Run({"ZMSCORE", "lb", "m1", "nobody", "m10"}) ==
        "*3\r\n" + Bulk("10") + "$-1\r\n" + Bulk("100"));
  CHECK(f.Run({"ZMSCORE", "nokey", "m1"}) == "*1\r\n$-1\r\n");
  CHECK(StartsWith(f.Run({"ZRANGE", "lb", "0", "-1", "LIMIT", "0", "2"}),
                   "-ERR syntax error, LIMIT is only supported"));
  CHECK(StartsWith(f.Run({"ZRANGEBYSCORE", "lb", "x", "1"}),
                   "-ERR min or max is not a float: min must be a number"));
  CHECK(StartsWith(f.Run({"ZCOUNT", "lb", "0", "nan"}),
                   "-ERR min or max is not a float: max"));
  CHECK(StartsWith(f.Run({"ZCOUNT", "lb", "(", "1"}),
                   "-ERR min or max is not a float"));
  CHECK(StartsWith(f.Run({"ZRANGEBYSCORE", "lb", "0", "1", "LIMIT", "0"}),
                   "-ERR syntax error"));
  CHECK(StartsWith(f.Run({"ZRANGEBYSCORE", "lb", "0", "1", "LIMIT", "x", "1"}),
                   "-ERR LIMIT offset must be a decimal integer"));
  CHECK(StartsWith(f.Run({"ZRANGEBYSCORE", "lb", "0", "1", "REV"}),
                   "-ERR syntax error"));
  CHECK(StartsWith(f.Run({"ZRANGE", "lb", "0", "1", "REV", "REV"}),
                   "-ERR syntax error"));
  f.session().protocol = 3;
  CHECK(f.Run({"ZRANGEBYSCORE", "lb", "95", "+inf", "WITHSCORES"}) ==
        "*1\r\n*2\r\n" + Bulk("m10") + ",100\r\n");
  CHECK(f.Run({"ZMSCORE", "lb", "m2", "none"}) == "*2\r\n,20\r\n_\r\n");
}

TEST_CASE("FEED.FOLLOW, FEED.PUBLISH, FEED.READ with paging") {
  Fixture f;
  CHECK(f.Run({"FEED.FOLLOW", "1", "42"}) == ":1\r\n");
  CHECK(f.Run({"FEED.FOLLOW", "1", "42"}) == ":0\r\n");
  CHECK(f.Run({"FEED.COUNTS", "42"}) == "*2\r\n:1\r\n:0\r\n");
  for (int i = 1; i <= 3; ++i) {
    CHECK(f.Run({"FEED.PUBLISH", "42", std::to_string(100 + i),
                 std::to_string(kStart + i), "post" + std::to_string(i)}) ==
          ":1\r\n");
  }
  // Idempotent re-publish.
  CHECK(f.Run({"FEED.PUBLISH", "42", "101", std::to_string(kStart + 1),
               "post1"}) == ":0\r\n");
  auto entry = [&](int i) {
    return "*5\r\n" + Bulk(std::to_string(100 + i)) + Bulk("42") + ":" +
           std::to_string(kStart + i) +
           "\r\n:" + std::to_string(kStart + 30 * kMicrosPerDay) + "\r\n" +
           Bulk("post" + std::to_string(i));
  };
  const std::string page1 = f.Run({"FEED.READ", "1", "LIMIT", "2"});
  REQUIRE(StartsWith(page1, "*2\r\n$"));
  CHECK(Contains(page1, "*2\r\n" + entry(3) + entry(2)));
  // The cursor is the first element of the reply.
  const size_t len_end = page1.find("\r\n", 5);
  const size_t len = std::stoul(page1.substr(5, len_end - 5));
  const std::string cursor = page1.substr(len_end + 2, len);
  CHECK(f.Run({"FEED.READ", "1", "LIMIT", "2", "CURSOR", cursor}) ==
        "*2\r\n" + Bulk("0") + "*1\r\n" + entry(1));
  CHECK(f.Run({"FEED.READ", "1", "REV", "LIMIT", "5"}) ==
        "*2\r\n" + Bulk("0") + "*3\r\n" + entry(1) + entry(2) + entry(3));
  CHECK(f.Run({"FEED.READ", "1", "MINTS", std::to_string(kStart + 2), "MAXTS",
               std::to_string(kStart + 2)}) ==
        "*2\r\n" + Bulk("0") + "*1\r\n" + entry(2));
  const std::string own = f.Run({"FEED.OWN", "42", "LIMIT", "1", "REV"});
  CHECK(StartsWith(own, "*2\r\n$"));
  CHECK(Contains(own, "*1\r\n" + entry(1)));
  CHECK(Contains(f.Run({"FEED.WORLD", "LIMIT", "3"}),
                 entry(3) + entry(2) + entry(1)));
  CHECK(f.Run({"FEED.READ", "999"}) == "*2\r\n" + Bulk("0") + "*0\r\n");
}

TEST_CASE("FEED.READ errors: bad cursor, bad limit, bad id, bad option") {
  Fixture f;
  CHECK(StartsWith(f.Run({"FEED.READ", "1", "CURSOR", "garbage"}), "-ERR "));
  CHECK(StartsWith(f.Run({"FEED.READ", "1", "LIMIT", "0"}),
                   "-ERR LIMIT must be an integer from 1"));
  CHECK(StartsWith(f.Run({"FEED.READ", "1", "LIMIT", "5000"}), "-ERR "));
  CHECK(StartsWith(f.Run({"FEED.READ", "18446744073709551616"}),
                   "-ERR user must be a decimal id"));
  CHECK(StartsWith(f.Run({"FEED.READ", "1", "SIDEWAYS"}),
                   "-ERR syntax error: unexpected argument 'SIDEWAYS'"));
  CHECK(StartsWith(f.Run({"FEED.READ", "1", "LIMIT"}), "-ERR syntax error"));
  CHECK(StartsWith(f.Run({"FEED.READ", "1", "MINTS", "5", "MAXTS", "4"}),
                   "-ERR "));
  // A cursor of another feed is refused.
  f.Run({"FEED.FOLLOW", "1", "2"});
  f.Run({"FEED.PUBLISH", "2", "1", "5", "a"});
  f.Run({"FEED.PUBLISH", "2", "2", "6", "b"});
  const std::string page = f.Run({"FEED.WORLD", "LIMIT", "1"});
  const size_t len_end = page.find("\r\n", 5);
  const std::string cursor =
      page.substr(len_end + 2, std::stoul(page.substr(5, len_end - 5)));
  CHECK(StartsWith(f.Run({"FEED.READ", "1", "CURSOR", cursor}), "-ERR "));
}

TEST_CASE("FEED.PUBLISH: ts, TTL and payload errors; expiry") {
  Fixture f;
  f.Run({"FEED.FOLLOW", "1", "2"});
  CHECK(StartsWith(f.Run({"FEED.PUBLISH", "2", "1", "-5", "x"}),
                   "-ERR ts (microseconds, or * for now) must be"));
  CHECK(
      StartsWith(f.Run({"FEED.PUBLISH", "18446744073709551616", "1", "5", "x"}),
                 "-ERR actor must be a decimal id"));
  CHECK(StartsWith(f.Run({"FEED.PUBLISH", "2", "1", "5", "x", "TTL", "0"}),
                   "-ERR TTL (milliseconds) must be"));
  CHECK(StartsWith(f.Run({"FEED.PUBLISH", "2", "1", "5", "x", "TTL"}),
                   "-ERR syntax error"));
  CHECK(StartsWith(
      f.Run({"FEED.PUBLISH", "2", "1", "5", std::string(64 * 1024 + 1, 'p')}),
      "-ERR "));
  CHECK(f.Run({"FEED.PUBLISH", "2", "1", "*", "now", "TTL", "1000"}) ==
        ":1\r\n");
  CHECK(StartsWith(f.Run({"FEED.PUBLISH", "2", "1", "*", "other"}),
                   "-ERR "));  // the id belongs to another activity
  CHECK(Contains(f.Run({"FEED.READ", "1"}), Bulk("now")));
  f.clock().Advance(1000 * kMicrosPerMillisecond);
  CHECK(f.Run({"FEED.READ", "1"}) == "*2\r\n" + Bulk("0") + "*0\r\n");
}

TEST_CASE("FEED.RETRACT, FEED.UNFOLLOW, FEED.FOLLOWERS, FEED.FOLLOWING") {
  Fixture f;
  f.Run({"FEED.FOLLOW", "1", "2"});
  f.Run({"FEED.FOLLOW", "3", "2"});
  f.Run({"FEED.PUBLISH", "2", "7", "100", "hello"});
  CHECK(Contains(f.Run({"FEED.READ", "3"}), Bulk("hello")));
  CHECK(f.Run({"FEED.RETRACT", "7"}) == "+OK\r\n");
  CHECK(f.Run({"FEED.READ", "3"}) == "*2\r\n" + Bulk("0") + "*0\r\n");
  CHECK(StartsWith(f.Run({"FEED.RETRACT", "8"}), "-ERR "));
  // Followers come in shard order: check the shape and both ids.
  const std::string followers = f.Run({"FEED.FOLLOWERS", "2"});
  CHECK(StartsWith(followers, "*2\r\n" + Bulk("0") + "*2\r\n"));
  CHECK(Contains(followers, Bulk("1")));
  CHECK(Contains(followers, Bulk("3")));
  CHECK(f.Run({"FEED.FOLLOWING", "1", "LIMIT", "10"}) ==
        "*2\r\n" + Bulk("0") + "*1\r\n" + Bulk("2"));
  CHECK(StartsWith(f.Run({"FEED.FOLLOWING", "1", "CURSOR", "bad"}), "-ERR "));
  CHECK(f.Run({"FEED.UNFOLLOW", "1", "2"}) == ":1\r\n");
  CHECK(f.Run({"FEED.UNFOLLOW", "1", "2"}) == ":0\r\n");
  CHECK(StartsWith(f.Run({"FEED.FOLLOW", "5", "5"}), "-ERR "));
  CHECK(StartsWith(f.Run({"FEED.FOLLOW", "1", "2", "BACKFILL", "-1"}),
                   "-ERR BACKFILL must be"));
  CHECK(f.Run({"FEED.FOLLOW", "1", "2", "BACKFILL", "0"}) == ":1\r\n");
  CHECK(StartsWith(f.Run({"FEED.UNFOLLOW", "1", "18446744073709551616"}),
                   "-ERR followee must be a decimal id"));
  CHECK(f.Run({"FEED.FOLLOW", "18446744073709551615", "1"}) == ":1\r\n");
  CHECK(StartsWith(f.Run({"FEED.FOLLOW", "18446744073709551616", "1"}),
                   "-ERR follower must be a decimal id"));
}

TEST_CASE("FEED.FOLLOWMANY and FEED.UNFOLLOW KEEPHISTORY") {
  Fixture f;
  f.Run({"FEED.PUBLISH", "2", "7", "100", "hello"});
  f.Run({"FEED.PUBLISH", "3", "8", "101", "there"});
  CHECK(f.Run({"FEED.FOLLOW", "1", "3"}) == ":1\r\n");
  // One integer per followee: followed, already followed, repeated.
  CHECK(f.Run({"FEED.FOLLOWMANY", "1", "2", "3", "4", "2"}) ==
        "*4\r\n:1\r\n:0\r\n:1\r\n:0\r\n");
  CHECK(f.Run({"FEED.COUNTS", "1"}) == "*2\r\n:0\r\n:3\r\n");
  CHECK(Contains(f.Run({"FEED.READ", "1"}), Bulk("hello")));
  CHECK(f.Run({"FEED.FOLLOWMANY", "5", "2", "BACKFILL", "0"}) ==
        "*1\r\n:1\r\n");
  CHECK(f.Run({"FEED.READ", "5"}) == "*2\r\n" + Bulk("0") + "*0\r\n");
  CHECK(StartsWith(f.Run({"FEED.FOLLOWMANY", "1"}), "-ERR wrong number"));
  CHECK(StartsWith(f.Run({"FEED.FOLLOWMANY", "1", "BACKFILL", "2"}),
                   "-ERR FEED.FOLLOWMANY needs at least one followee"));
  CHECK(StartsWith(f.Run({"FEED.FOLLOWMANY", "1", "6", "18446744073709551616"}),
                   "-ERR followee must be a decimal id"));
  // A self-follow anywhere refuses the whole batch.
  CHECK(StartsWith(f.Run({"FEED.FOLLOWMANY", "7", "6", "7"}), "-ERR "));
  CHECK(f.Run({"FEED.COUNTS", "7"}) == "*2\r\n:0\r\n:0\r\n");
  // KEEPHISTORY: the entries stay, the edge goes.
  CHECK(f.Run({"FEED.UNFOLLOW", "1", "2", "KEEPHISTORY"}) == ":1\r\n");
  CHECK(Contains(f.Run({"FEED.READ", "1"}), Bulk("hello")));
  CHECK(f.Run({"FEED.UNFOLLOW", "1", "3"}) == ":1\r\n");
  CHECK_FALSE(Contains(f.Run({"FEED.READ", "1"}), Bulk("there")));
  CHECK(StartsWith(f.Run({"FEED.UNFOLLOW", "1", "2", "KEEP"}),
                   "-ERR syntax error"));
}

}  // namespace
}  // namespace feedcore::server
