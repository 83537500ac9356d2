// Unit tests of MULTI, EXEC, DISCARD, WATCH and UNWATCH through the command
// dispatcher, with Redis's replies byte for byte: queueing, EXECABORT for
// a command refused while queueing, a command failing alone at EXEC,
// WATCH aborting on a write by any client, the bound on queued bytes, and
// that a closed session leaves no watch behind.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "dispatcher_fixture.h"
#include "watched_keys.h"

namespace feedcore::server {
namespace {

// A second client of the fixture's dispatcher.
class OtherClient {
 public:
  explicit OtherClient(const CommandDispatcher& dispatcher)
      : dispatcher_(dispatcher), session_(dispatcher.NewSession()) {}
  std::string Run(const std::vector<std::string>& args) {
    std::string out;
    dispatcher_.Execute(args, session_, out);
    return out;
  }

 private:
  const CommandDispatcher& dispatcher_;
  SessionState session_;
};

TEST_CASE("EXEC runs the queued commands and answers each in its array") {
  DispatcherFixture f;
  OtherClient other(f.dispatcher());
  CHECK(f.Run({"MULTI"}) == "+OK\r\n");
  CHECK(f.Run({"ZADD", "k", "1", "a"}) == "+QUEUED\r\n");
  CHECK(f.Run({"ZINCRBY", "k", "5", "a"}) == "+QUEUED\r\n");
  CHECK(f.Run({"ZSCORE", "k", "a"}) == "+QUEUED\r\n");
  // Nothing has run yet.
  CHECK(other.Run({"ZCARD", "k"}) == ":0\r\n");
  CHECK(f.Run({"EXEC"}) == "*3\r\n:1\r\n" + Bulk("6") + Bulk("6"));
  CHECK(other.Run({"ZSCORE", "k", "a"}) == Bulk("6"));
  // The transaction is over.
  CHECK(f.Run({"EXEC"}) == "-ERR EXEC without MULTI\r\n");
  CHECK(f.Run({"MULTI"}) == "+OK\r\n");
  CHECK(f.Run({"EXEC"}) == "*0\r\n");
}

TEST_CASE("a command refused while queueing aborts EXEC, which runs nothing") {
  DispatcherFixture f;
  const std::string kAbort =
      "-EXECABORT Transaction discarded because of previous errors.\r\n";
  SUBCASE("unknown command") {
    f.Run({"MULTI"});
    CHECK(f.Run({"ZADD", "k", "1", "a"}) == "+QUEUED\r\n");
    CHECK(StartsWith(f.Run({"NOSUCH", "x"}), "-ERR unknown command 'NOSUCH'"));
    CHECK(f.Run({"EXEC"}) == kAbort);
  }
  SUBCASE("wrong number of arguments") {
    f.Run({"MULTI"});
    CHECK(f.Run({"ZADD", "k", "1", "a"}) == "+QUEUED\r\n");
    CHECK(f.Run({"ZADD", "k"}) ==
          "-ERR wrong number of arguments for 'zadd' command\r\n");
    CHECK(f.Run({"EXEC"}) == kAbort);
  }
  CHECK(f.Run({"ZCARD", "k"}) == ":0\r\n");
  CHECK(f.Run({"EXEC"}) == "-ERR EXEC without MULTI\r\n");
}

TEST_CASE("a command failing at EXEC fails alone, as in Redis") {
  DispatcherFixture f;
  f.Run({"MULTI"});
  f.Run({"ZADD", "k", "x", "a"});
  f.Run({"ZADD", "k", "2", "b"});
  const std::string reply = f.Run({"EXEC"});
  CHECK(StartsWith(reply, "*2\r\n-ERR "));
  CHECK(reply.size() > 4);
  CHECK(reply.substr(reply.size() - 4) == ":1\r\n");
  CHECK(f.Run({"ZSCORE", "k", "b"}) == Bulk("2"));
}

TEST_CASE(
    "MULTI, WATCH, DISCARD misuse: Redis's errors, the transaction goes on") {
  DispatcherFixture f;
  CHECK(f.Run({"DISCARD"}) == "-ERR DISCARD without MULTI\r\n");
  f.Run({"MULTI"});
  CHECK(f.Run({"MULTI"}) == "-ERR MULTI calls can not be nested\r\n");
  CHECK(f.Run({"WATCH", "k"}) == "-ERR WATCH inside MULTI is not allowed\r\n");
  CHECK(f.Run({"ZADD", "k", "1", "a"}) == "+QUEUED\r\n");
  CHECK(f.Run({"EXEC"}) == "*1\r\n:1\r\n");
  // DISCARD drops what was queued.
  f.Run({"MULTI"});
  f.Run({"ZADD", "k", "9", "a"});
  CHECK(f.Run({"DISCARD"}) == "+OK\r\n");
  CHECK(f.Run({"ZSCORE", "k", "a"}) == Bulk("1"));
  CHECK(f.Run({"EXEC"}) == "-ERR EXEC without MULTI\r\n");
}

TEST_CASE("WATCH aborts EXEC when any client wrote a watched key") {
  DispatcherFixture f;
  OtherClient other(f.dispatcher());
  f.Run({"ZADD", "k", "1", "a"});
  CHECK(f.Run({"WATCH", "k", "other"}) == "+OK\r\n");
  CHECK(other.Run({"ZADD", "k", "2", "a"}) == ":0\r\n");
  f.Run({"MULTI"});
  f.Run({"ZINCRBY", "k", "10", "a"});
  CHECK(f.Run({"EXEC"}) == "*-1\r\n");
  CHECK(f.Run({"ZSCORE", "k", "a"}) == Bulk("2"));
  // EXEC unwatched: the next transaction runs.
  other.Run({"ZADD", "k", "3", "a"});
  f.Run({"MULTI"});
  f.Run({"ZINCRBY", "k", "10", "a"});
  CHECK(f.Run({"EXEC"}) == "*1\r\n" + Bulk("13"));

  SUBCASE("in RESP3 the abort is a null") {
    f.Run({"HELLO", "3"});
    f.Run({"WATCH", "k"});
    f.Run({"ZREM", "k", "a"});  // the session's own write counts too
    f.Run({"MULTI"});
    CHECK(f.Run({"EXEC"}) == "_\r\n");
  }
  SUBCASE("a write to another key does not abort") {
    f.Run({"WATCH", "k"});
    other.Run({"ZADD", "unwatched", "1", "a"});
    other.Run({"ZSCORE", "k", "a"});  // reads do not either
    f.Run({"MULTI"});
    CHECK(f.Run({"EXEC"}) == "*0\r\n");
  }
  SUBCASE("UNWATCH forgets the keys") {
    f.Run({"WATCH", "k"});
    CHECK(f.Run({"UNWATCH"}) == "+OK\r\n");
    other.Run({"ZADD", "k", "5", "a"});
    f.Run({"MULTI"});
    CHECK(f.Run({"EXEC"}) == "*0\r\n");
  }
  SUBCASE("DEL of the key aborts") {
    f.Run({"WATCH", "k"});
    other.Run({"DEL", "k"});
    f.Run({"MULTI"});
    CHECK(f.Run({"EXEC"}) == "*-1\r\n");
  }
  SUBCASE("a failed write does not abort") {
    f.Run({"WATCH", "k"});
    CHECK(StartsWith(other.Run({"ZADD", "k", "x", "a"}), "-ERR"));
    f.Run({"MULTI"});
    CHECK(f.Run({"EXEC"}) == "*0\r\n");
  }
}

TEST_CASE("queued commands past max_transaction_bytes are refused") {
  DispatcherFixtureOptions o;
  o.dispatcher.max_transaction_bytes = 200;
  DispatcherFixture f(o);
  f.Run({"MULTI"});
  CHECK(f.Run({"ZADD", "k", "1", "a"}) == "+QUEUED\r\n");
  CHECK(StartsWith(f.Run({"ZADD", "k", "1", std::string(300, 'm')}),
                   "-ERR the transaction's queued commands would hold more "
                   "than 200 bytes"));
  CHECK(StartsWith(f.Run({"EXEC"}), "-EXECABORT"));
  CHECK(f.Run({"ZCARD", "k"}) == ":0\r\n");
}

TEST_CASE("a session's watches end with it") {
  WatchedKeys keys;
  {
    WatchList list;
    list.Add(keys, "a");
    list.Add(keys, "a");  // again: one watch
    list.Add(keys, "b");
    CHECK(list.size() == 2);
    CHECK(keys.AnyWatched());
    CHECK(list.AllUnchanged());
    keys.Touch("b");
    CHECK(!list.AllUnchanged());
    WatchList moved = std::move(list);
    CHECK(!moved.AllUnchanged());
  }
  CHECK(!keys.AnyWatched());
  // A key watched again gets a version no earlier watch held.
  WatchList first;
  first.Add(keys, "a");
  keys.TouchAll();
  WatchList second;
  second.Add(keys, "a");
  CHECK(!first.AllUnchanged());
  CHECK(second.AllUnchanged());
}

}  // namespace
}  // namespace feedcore::server
