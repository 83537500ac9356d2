// Unit tests of the keyspace commands (DEL, UNLINK, EXISTS, TYPE, DBSIZE,
// KEYS, SCAN, FLUSHDB, FLUSHALL, SELECT, TIME, WAIT) through the command
// dispatcher, with Redis's replies, and of the glob patterns of KEYS and
// SCAN ... MATCH.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dispatcher_fixture.h"
#include "glob_match.h"

namespace feedcore::server {
namespace {

TEST_CASE("glob patterns follow Redis's") {
  CHECK(GlobMatch("*", ""));
  CHECK(GlobMatch("*", "anything"));
  CHECK(GlobMatch("h?llo", "hello"));
  CHECK(!GlobMatch("h?llo", "hllo"));
  CHECK(GlobMatch("h*llo", "hllo"));
  CHECK(GlobMatch("h*llo", "heeeello"));
  CHECK(GlobMatch("h[ae]llo", "hallo"));
  CHECK(!GlobMatch("h[ae]llo", "hillo"));
  CHECK(GlobMatch("h[^e]llo", "hallo"));
  CHECK(!GlobMatch("h[^e]llo", "hello"));
  CHECK(GlobMatch("h[a-b]llo", "hbllo"));
  CHECK(GlobMatch("h[b-a]llo", "hallo"));  // a reversed range too
  CHECK(!GlobMatch("h[a-b]llo", "hcllo"));
  CHECK(GlobMatch("h\\*llo", "h*llo"));
  CHECK(!GlobMatch("h\\*llo", "hello"));
  CHECK(GlobMatch("[\\]]", "]"));
  CHECK(GlobMatch("user:*:score", "user:42:score"));
  CHECK(!GlobMatch("user:*:score", "user:42:scores"));
  CHECK(GlobMatch("*a*b*c*", "xxaxxbxxcxx"));
  CHECK(!GlobMatch("*a*b*c*", "xxaxxcxxbxx"));
  CHECK(GlobMatch("HeLLo", "hello", /*nocase=*/true));
  CHECK(!GlobMatch("HeLLo", "hello"));
  CHECK(GlobMatch("[A-C]x", "bx", /*nocase=*/true));
  // A long run of stars against a long text stays linear per star.
  CHECK(!GlobMatch(std::string(50, '*') + "b", std::string(10000, 'a')));
}

TEST_CASE("EXISTS, TYPE, DBSIZE, KEYS and DEL see keys with members only") {
  DispatcherFixture f;
  CHECK(f.Run({"DBSIZE"}) == ":0\r\n");
  CHECK(f.Run({"TYPE", "k"}) == "+none\r\n");
  f.Run({"ZADD", "k", "1", "a"});
  f.Run({"ZADD", "other", "1", "a"});
  CHECK(f.Run({"EXISTS", "k", "k", "nope"}) == ":2\r\n");
  CHECK(f.Run({"TYPE", "k"}) == "+zset\r\n");
  CHECK(f.Run({"DBSIZE"}) == ":2\r\n");
  CHECK(f.Run({"KEYS", "o*"}) == "*1\r\n" + Bulk("other"));
  // The last member gone, the key is gone, as in Redis.
  f.Run({"ZREM", "k", "a"});
  CHECK(f.Run({"EXISTS", "k"}) == ":0\r\n");
  CHECK(f.Run({"TYPE", "k"}) == "+none\r\n");
  CHECK(f.Run({"KEYS", "*"}) == "*1\r\n" + Bulk("other"));
  CHECK(f.Run({"DEL", "k", "nope"}) == ":0\r\n");
  CHECK(f.Run({"UNLINK", "other", "other"}) == ":1\r\n");
  CHECK(f.Run({"DBSIZE"}) == ":0\r\n");
  CHECK(f.Run({"EXISTS"}) ==
        "-ERR wrong number of arguments for 'exists' command\r\n");
}

// Every key a whole scan returns, checking each reply's shape.
std::set<std::string> ScanAll(DispatcherFixture& f,
                              const std::vector<std::string>& options,
                              int* calls = nullptr) {
  std::set<std::string> seen;
  std::string cursor = "0";
  do {
    std::vector<std::string> command = {"SCAN", cursor};
    command.insert(command.end(), options.begin(), options.end());
    const std::string reply = f.Run(command);
    REQUIRE(StartsWith(reply, "*2\r\n$"));
    // *2 $n cursor *m ($k key)...
    size_t at = reply.find("\r\n", 4) + 2;
    const size_t cursor_end = reply.find("\r\n", at);
    cursor = reply.substr(at, cursor_end - at);
    at = reply.find("\r\n", cursor_end + 2) + 2;
    while (at < reply.size()) {
      const size_t length_end = reply.find("\r\n", at);
      const size_t length =
          std::stoul(reply.substr(at + 1, length_end - at - 1));
      seen.insert(reply.substr(length_end + 2, length));
      at = length_end + 2 + length + 2;
    }
    if (calls != nullptr) ++*calls;
  } while (cursor != "0");
  return seen;
}

TEST_CASE("SCAN returns every key present for the whole scan") {
  DispatcherFixture f;
  std::set<std::string> all;
  for (int i = 0; i < 200; ++i) {
    const std::string key = absl::StrCat("key:", i);
    f.Run({"ZADD", key, "1", "m"});
    all.insert(key);
  }
  int calls = 0;
  CHECK(ScanAll(f, {}, &calls) == all);
  CHECK(calls >= 200 / 10);
  calls = 0;
  CHECK(ScanAll(f, {"COUNT", "1000"}, &calls) == all);
  CHECK(calls == 1);
  CHECK(ScanAll(f, {"MATCH", "key:1?", "COUNT", "7"}) ==
        std::set<std::string>{"key:10", "key:11", "key:12", "key:13", "key:14",
                              "key:15", "key:16", "key:17", "key:18",
                              "key:19"});
  CHECK(ScanAll(f, {"TYPE", "zset"}) == all);
  CHECK(ScanAll(f, {"TYPE", "string"}).empty());

  SUBCASE("keys deleted and added mid-scan do not hide the others") {
    std::set<std::string> seen;
    std::string cursor = "0";
    int round = 0;
    do {
      const std::string reply = f.Run({"SCAN", cursor, "COUNT", "5"});
      size_t at = reply.find("\r\n", 4) + 2;
      const size_t cursor_end = reply.find("\r\n", at);
      cursor = reply.substr(at, cursor_end - at);
      for (const std::string& key : all) {
        if (reply.find("\r\n" + key + "\r\n") != std::string::npos) {
          seen.insert(key);
        }
      }
      // Churn: delete one key of the first hundred, add a new one.
      f.Run({"DEL", absl::StrCat("key:", round % 100)});
      f.Run({"ZADD", absl::StrCat("new:", round), "1", "m"});
      ++round;
    } while (cursor != "0");
    for (int i = 100; i < 200; ++i) {
      CAPTURE(i);
      CHECK(seen.count(absl::StrCat("key:", i)) == 1);
    }
  }
}

TEST_CASE("SCAN's errors are Redis's") {
  DispatcherFixture f;
  CHECK(f.Run({"SCAN", "x"}) == "-ERR invalid cursor\r\n");
  CHECK(f.Run({"SCAN", "0", "COUNT", "0"}) == "-ERR syntax error\r\n");
  CHECK(f.Run({"SCAN", "0", "COUNT", "x"}) ==
        "-ERR value is not an integer or out of range\r\n");
  CHECK(f.Run({"SCAN", "0", "MATCH"}) == "-ERR syntax error\r\n");
  CHECK(f.Run({"SCAN", "0", "BOGUS", "1"}) == "-ERR syntax error\r\n");
  CHECK(f.Run({"SCAN", "18446744073709551615"}) == "*2\r\n$1\r\n0\r\n*0\r\n");
}

TEST_CASE("FLUSHDB and FLUSHALL drop every key and abort watches") {
  DispatcherFixture f;
  f.Run({"ZADD", "a", "1", "m"});
  f.Run({"ZADD", "b", "1", "m"});
  f.Run({"WATCH", "a"});
  CHECK(f.Run({"FLUSHDB", "nope"}) == "-ERR syntax error\r\n");
  CHECK(f.Run({"DBSIZE"}) == ":2\r\n");
  CHECK(f.Run({"FLUSHDB", "async"}) == "+OK\r\n");
  CHECK(f.Run({"DBSIZE"}) == ":0\r\n");
  f.Run({"MULTI"});
  CHECK(f.Run({"EXEC"}) == "*-1\r\n");
  f.Run({"ZADD", "a", "1", "m"});
  CHECK(f.Run({"FLUSHALL", "SYNC"}) == "+OK\r\n");
  CHECK(f.Run({"ZCARD", "a"}) == ":0\r\n");
  CHECK(f.Run({"FLUSHALL"}) == "+OK\r\n");
}

TEST_CASE("SELECT, TIME and WAIT answer as a one-database Redis") {
  DispatcherFixture f;
  CHECK(f.Run({"SELECT", "0"}) == "+OK\r\n");
  CHECK(StartsWith(f.Run({"SELECT", "1"}), "-ERR DB index is out of range"));
  CHECK(f.Run({"SELECT", "x"}) ==
        "-ERR value is not an integer or out of range\r\n");
  // The engine's clock: the fixture's starts at 1,000 s.
  f.clock().Advance(1'500'000);
  CHECK(f.Run({"TIME"}) == "*2\r\n" + Bulk("1001") + Bulk("500000"));
  CHECK(f.Run({"WAIT", "1", "0"}) == ":0\r\n");
  CHECK(f.Run({"WAIT", "1", "-1"}) == "-ERR timeout is negative\r\n");
  CHECK(f.Run({"WAIT", "x", "0"}) ==
        "-ERR value is not an integer or out of range\r\n");
}

TEST_CASE("EXPIRE, TTL and PERSIST on the engine clock") {
  DispatcherFixture f;  // the clock starts at 1,000 s
  CHECK(f.Run({"EXPIRE", "k", "10"}) == ":0\r\n");  // no such key
  CHECK(f.Run({"TTL", "k"}) == ":-2\r\n");
  f.Run({"ZADD", "k", "1", "a"});
  CHECK(f.Run({"TTL", "k"}) == ":-1\r\n");
  CHECK(f.Run({"EXPIRE", "k", "10"}) == ":1\r\n");
  CHECK(f.Run({"TTL", "k"}) == ":10\r\n");
  CHECK(f.Run({"PTTL", "k"}) == ":10000\r\n");
  CHECK(f.Run({"EXPIRETIME", "k"}) == ":1010\r\n");
  CHECK(f.Run({"PEXPIRETIME", "k"}) == ":1010000\r\n");
  f.clock().Advance(9'400'000);
  CHECK(f.Run({"TTL", "k"}) == ":1\r\n");  // 0.6 s rounds up, as in Redis
  CHECK(f.Run({"PTTL", "k"}) == ":600\r\n");
  // Writes keep the expiry.
  f.Run({"ZADD", "k", "2", "b"});
  CHECK(f.Run({"PTTL", "k"}) == ":600\r\n");
  f.clock().Advance(600'000);
  // Expired: gone for every command.
  CHECK(f.Run({"EXISTS", "k"}) == ":0\r\n");
  CHECK(f.Run({"ZCARD", "k"}) == ":0\r\n");
  CHECK(f.Run({"TTL", "k"}) == ":-2\r\n");
  CHECK(f.Run({"DBSIZE"}) == ":0\r\n");
  CHECK(f.Run({"KEYS", "*"}) == "*0\r\n");
  // A write starts the key anew, without expiry.
  CHECK(f.Run({"ZADD", "k", "5", "c"}) == ":1\r\n");
  CHECK(f.Run({"ZCARD", "k"}) == ":1\r\n");
  CHECK(f.Run({"TTL", "k"}) == ":-1\r\n");

  CHECK(f.Run({"PEXPIRE", "k", "1500"}) == ":1\r\n");
  CHECK(f.Run({"PERSIST", "k"}) == ":1\r\n");
  CHECK(f.Run({"PERSIST", "k"}) == ":0\r\n");
  CHECK(f.Run({"TTL", "k"}) == ":-1\r\n");
  // EXPIREAT in seconds and PEXPIREAT in milliseconds since the epoch.
  CHECK(f.Run({"EXPIREAT", "k", "2000"}) == ":1\r\n");
  CHECK(f.Run({"EXPIRETIME", "k"}) == ":2000\r\n");
  CHECK(f.Run({"PEXPIREAT", "k", "2500000"}) == ":1\r\n");
  CHECK(f.Run({"PEXPIRETIME", "k"}) == ":2500000\r\n");
  // A time already past deletes the key, answering 1.
  CHECK(f.Run({"EXPIRE", "k", "-1"}) == ":1\r\n");
  CHECK(f.Run({"EXISTS", "k"}) == ":0\r\n");
}

TEST_CASE("EXPIRE's NX, XX, GT and LT, and its errors") {
  DispatcherFixture f;
  f.Run({"ZADD", "k", "1", "a"});
  CHECK(f.Run({"EXPIRE", "k", "100", "XX"}) == ":0\r\n");  // no expiry yet
  CHECK(f.Run({"EXPIRE", "k", "100", "GT"}) == ":0\r\n");  // none = infinite
  CHECK(f.Run({"EXPIRE", "k", "100", "LT"}) == ":1\r\n");
  CHECK(f.Run({"EXPIRE", "k", "50", "NX"}) == ":0\r\n");
  CHECK(f.Run({"EXPIRE", "k", "50", "GT"}) == ":0\r\n");
  CHECK(f.Run({"EXPIRE", "k", "200", "GT"}) == ":1\r\n");
  CHECK(f.Run({"EXPIRE", "k", "300", "LT"}) == ":0\r\n");
  CHECK(f.Run({"EXPIRE", "k", "150", "XX", "LT"}) == ":1\r\n");
  CHECK(f.Run({"TTL", "k"}) == ":150\r\n");
  CHECK(f.Run({"EXPIRE", "k", "x"}) ==
        "-ERR value is not an integer or out of range\r\n");
  CHECK(f.Run({"EXPIRE", "k", "1", "NX", "XX"}) ==
        "-ERR NX and XX, GT or LT options at the same time are not "
        "compatible\r\n");
  CHECK(f.Run({"EXPIRE", "k", "1", "GT", "LT"}) ==
        "-ERR GT and LT options at the same time are not compatible\r\n");
  CHECK(f.Run({"EXPIRE", "k", "1", "SOON"}) ==
        "-ERR Unsupported option SOON\r\n");
  CHECK(f.Run({"EXPIRE", "k", "9223372036854775807"}) ==
        "-ERR invalid expire time in 'expire' command\r\n");
  CHECK(f.Run({"PEXPIREAT", "k", "9223372036854775807"}) ==
        "-ERR invalid expire time in 'pexpireat' command\r\n");
  CHECK(f.Run({"TTL", "k"}) == ":150\r\n");  // the errors changed nothing
}

TEST_CASE("expired keys are dropped by the periodic pass and abort watches") {
  DispatcherFixture f;
  f.Run({"ZADD", "a", "1", "m"});
  f.Run({"ZADD", "b", "1", "m"});
  f.Run({"PEXPIRE", "a", "100"});
  f.Run({"WATCH", "b"});
  CHECK(f.dispatcher().DeleteExpiredKeys(10).ok());
  f.Run({"MULTI"});
  CHECK(f.Run({"EXEC"}) == "*0\r\n");  // nothing expired yet
  f.clock().Advance(100'000);
  f.Run({"WATCH", "b"});
  CHECK(f.dispatcher().DeleteExpiredKeys(10).ok());
  f.Run({"MULTI"});
  CHECK(f.Run({"EXEC"}) == "*-1\r\n");
  CHECK(f.Run({"INFO", "keyspace"}) ==
        Bulk("# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\n"));
  f.Run({"EXPIRE", "b", "10"});
  CHECK(f.Run({"INFO", "keyspace"}) ==
        Bulk("# Keyspace\r\ndb0:keys=1,expires=1,avg_ttl=10000\r\n"));
}

}  // namespace
}  // namespace feedcore::server
