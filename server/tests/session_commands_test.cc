// Unit tests of CLIENT and RESET through the command dispatcher: names,
// library attributes, CLIENT LIST and INFO lines, CLIENT KILL by each
// filter (the connections' close is a counter here), CLIENT REPLY, and
// what RESET clears.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dispatcher_fixture.h"

namespace feedcore::server {
namespace {

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST_CASE("CLIENT ID, SETNAME, GETNAME and SETINFO") {
  DispatcherFixture f;
  CHECK(f.Run({"CLIENT", "ID"}) ==
        absl::StrCat(":", f.session().client_id, "\r\n"));
  CHECK(f.Run({"CLIENT", "GETNAME"}) == "$-1\r\n");
  CHECK(f.Run({"CLIENT", "SETNAME", "worker-1"}) == "+OK\r\n");
  CHECK(f.Run({"CLIENT", "GETNAME"}) == Bulk("worker-1"));
  CHECK(f.Run({"CLIENT", "SETNAME", "has space"}) ==
        "-ERR Client names cannot contain spaces, newlines or special "
        "characters.\r\n");
  CHECK(f.Run({"CLIENT", "GETNAME"}) == Bulk("worker-1"));
  CHECK(f.Run({"CLIENT", "SETNAME"}) ==
        "-ERR wrong number of arguments for 'client|setname' command\r\n");
  CHECK(f.Run({"CLIENT", "SETINFO", "lib-name", "redis-py"}) == "+OK\r\n");
  CHECK(f.Run({"CLIENT", "SETINFO", "LIB-VER", "5.0.1"}) == "+OK\r\n");
  CHECK(f.Run({"CLIENT", "SETINFO", "color", "x"}) ==
        "-ERR Unrecognized option 'color'\r\n");
  CHECK(f.Run({"CLIENT", "SETINFO", "lib-ver", "a b"}) ==
        "-ERR lib-ver cannot contain spaces, newlines or special "
        "characters.\r\n");
  const std::string info = f.Run({"CLIENT", "INFO"});
  CHECK(Contains(info, absl::StrCat("id=", f.session().client_id, " ")));
  CHECK(Contains(info, " name=worker-1 "));
  CHECK(Contains(info, " lib-name=redis-py lib-ver=5.0.1\n"));
  CHECK(Contains(info, " multi=-1 "));
  // Redis's integer fields, which clients parse: CLIENT INFO's own
  // arguments are 10 bytes.
  CHECK(Contains(info, " idle=0 "));
  CHECK(Contains(info,
                 " qbuf=0 qbuf-free=0 argv-mem=10 multi-mem=0 obl=0 "
                 "oll=0 omem=0 tot-mem=10 "));
  CHECK(f.Run({"CLIENT", "NOSUCH"}) ==
        "-ERR unknown subcommand 'NOSUCH'. Try CLIENT HELP.\r\n");
  CHECK(StartsWith(f.Run({"CLIENT", "HELP"}), "*"));
  CHECK(f.Run({"CLIENT", "NO-EVICT", "on"}) == "+OK\r\n");
  CHECK(f.Run({"CLIENT", "NO-TOUCH", "maybe"}) == "-ERR syntax error\r\n");
}

TEST_CASE("CLIENT LIST shows every session; CLIENT KILL closes by filter") {
  DispatcherFixture f;
  SessionState other = f.dispatcher().NewSession();
  SessionState third = f.dispatcher().NewSession();
  int other_closed = 0, third_closed = 0;
  f.dispatcher().clients().Attach(other.client_id, "10.0.0.2:5000",
                                  "127.0.0.1:7379", [&] { ++other_closed; });
  f.dispatcher().clients().Attach(third.client_id, "10.0.0.3:5000",
                                  "127.0.0.1:7380", [&] { ++third_closed; });
  const std::string list = f.Run({"CLIENT", "LIST"});
  CHECK(
      Contains(list, absl::StrCat("id=", other.client_id,
                                  " addr=10.0.0.2:5000 laddr=127.0.0.1:7379")));
  CHECK(Contains(list, absl::StrCat("id=", third.client_id, " ")));
  CHECK(Contains(list, absl::StrCat("id=", f.session().client_id, " ")));
  const std::string only =
      f.Run({"CLIENT", "LIST", "ID", absl::StrCat(other.client_id)});
  CHECK(Contains(only, "addr=10.0.0.2:5000"));
  CHECK(!Contains(only, "addr=10.0.0.3:5000"));
  CHECK(f.Run({"CLIENT", "LIST", "TYPE", "pubsub"}) == "$0\r\n\r\n");
  CHECK(f.Run({"CLIENT", "LIST", "TYPE", "bogus"}) ==
        "-ERR Unknown client type 'bogus'\r\n");

  CHECK(f.Run({"CLIENT", "KILL", "10.0.0.9:1"}) == "-ERR No such client\r\n");
  CHECK(f.Run({"CLIENT", "KILL", "10.0.0.2:5000"}) == "+OK\r\n");
  CHECK(other_closed == 1);
  CHECK(f.Run({"CLIENT", "KILL", "LADDR", "127.0.0.1:7380"}) == ":1\r\n");
  CHECK(third_closed == 1);
  CHECK(f.Run({"CLIENT", "KILL", "ID", absl::StrCat(other.client_id)}) ==
        ":1\r\n");
  CHECK(other_closed == 2);
  CHECK(f.Run({"CLIENT", "KILL", "ID", "0"}) ==
        "-ERR client-id should be greater than 0\r\n");
  CHECK(f.Run({"CLIENT", "KILL", "BOGUS", "1"}) == "-ERR syntax error\r\n");
  // SKIPME yes by default: the caller stays...
  CHECK(f.Run({"CLIENT", "KILL", "ID", absl::StrCat(f.session().client_id)}) ==
        ":0\r\n");
  CHECK(!f.session().close_after_reply);
  // ...unless asked.
  CHECK(f.Run({"CLIENT", "KILL", "ID", absl::StrCat(f.session().client_id),
               "SKIPME", "no"}) == ":1\r\n");
  CHECK(f.session().close_after_reply);
}

TEST_CASE("CLIENT LIST's idle counts from each client's last command") {
  DispatcherFixture f;
  SessionState other = f.dispatcher().NewSession();
  std::string out;
  f.dispatcher().Execute({"PING"}, other, out);
  f.clock().Advance(7'000'000);
  f.Run({"PING"});
  const std::string list = f.Run({"CLIENT", "LIST"});
  CHECK(Contains(list, absl::StrCat("id=", other.client_id,
                                    " addr= laddr= name= age=7 idle=7 ")));
  CHECK(Contains(list, absl::StrCat("id=", f.session().client_id,
                                    " addr= laddr= name= age=7 idle=0 ")));
}

TEST_CASE("a session's record ends with it") {
  DispatcherFixture f;
  int64_t id = 0;
  {
    SessionState gone = f.dispatcher().NewSession();
    id = gone.client_id;
    CHECK(Contains(f.Run({"CLIENT", "LIST"}), absl::StrCat("id=", id, " ")));
  }
  CHECK(!Contains(f.Run({"CLIENT", "LIST"}), absl::StrCat("id=", id, " ")));
}

TEST_CASE("CLIENT REPLY OFF, SKIP and ON") {
  DispatcherFixture f;
  CHECK(f.Run({"CLIENT", "REPLY", "SKIP"}).empty());
  CHECK(f.Run({"ZADD", "k", "1", "a"}).empty());  // ran, reply dropped
  CHECK(f.Run({"ZCARD", "k"}) == ":1\r\n");
  CHECK(f.Run({"CLIENT", "REPLY", "OFF"}).empty());
  CHECK(f.Run({"ZADD", "k", "1", "b"}).empty());
  CHECK(f.Run({"CLIENT", "REPLY", "ON"}) == "+OK\r\n");
  CHECK(f.Run({"ZCARD", "k"}) == ":2\r\n");
  CHECK(f.Run({"CLIENT", "REPLY", "LOUD"}) == "-ERR syntax error\r\n");
}

TEST_CASE("RESET ends the transaction, the watches, RESP3 and the name") {
  DispatcherFixtureOptions o;
  o.dispatcher.requirepass = "pw";
  DispatcherFixture f(o);
  CHECK(f.Run({"AUTH", "pw"}) == "+OK\r\n");
  f.Run({"HELLO", "3", "SETNAME", "me"});
  f.Run({"WATCH", "k"});
  f.Run({"MULTI"});
  f.Run({"ZADD", "k", "1", "a"});
  CHECK(f.Run({"RESET"}) == "+RESET\r\n");
  CHECK(f.session().protocol == 2);
  CHECK(!f.session().transaction.active);
  CHECK(f.session().transaction.watched.size() == 0);
  CHECK(f.session().client_name.empty());
  // With a password, RESET logs the connection out, as in Redis.
  CHECK(f.Run({"ZCARD", "k"}) == "-NOAUTH Authentication required.\r\n");
  CHECK(f.Run({"AUTH", "pw"}) == "+OK\r\n");
  CHECK(f.Run({"ZCARD", "k"}) == ":0\r\n");
}

}  // namespace
}  // namespace feedcore::server
