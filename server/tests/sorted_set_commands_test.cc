// Unit tests of the sorted-set commands beyond ZADD and the basic ranges,
// through the command dispatcher: Redis's order of ties (by name) in
// every rank and range reply, the lexicographic ranges, pops, removals by
// range, ZRANDMEMBER from the store's seeded generator, ZSCAN's cursor,
// ZRANGESTORE and the ZUNION/ZINTER/ZDIFF family with their int64 errors.
// redis_differential_test.py compares the same commands with redis-server.
#include <doctest/doctest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dispatcher_fixture.h"

namespace feedcore::server {
namespace {

std::string Names(const std::vector<std::string>& names) {
  std::string out = absl::StrCat("*", names.size(), "\r\n");
  for (const std::string& name : names) out += Bulk(name);
  return out;
}

TEST_CASE("ties are ordered by name bytes in every range and rank") {
  DispatcherFixture f;
  // Added in an order unlike the names' so the board's tie-break differs.
  f.Run({"ZADD", "k", "1", "d", "1", "b", "1", "ab", "1", "a", "0", "z", "2",
         "c", "1", std::string("a\0", 2)});
  CHECK(f.Run({"ZRANGE", "k", "0", "-1"}) ==
        Names({"z", "a", std::string("a\0", 2), "ab", "b", "d", "c"}));
  CHECK(f.Run({"ZRANGE", "k", "2", "3"}) ==
        Names({std::string("a\0", 2), "ab"}));
  CHECK(f.Run({"ZRANGE", "k", "0", "2", "REV"}) == Names({"c", "d", "b"}));
  CHECK(f.Run({"ZRANGEBYSCORE", "k", "1", "1", "LIMIT", "1", "2"}) ==
        Names({std::string("a\0", 2), "ab"}));
  CHECK(f.Run({"ZREVRANGEBYSCORE", "k", "1", "1", "LIMIT", "3", "5"}) ==
        Names({std::string("a\0", 2), "a"}));
  CHECK(f.Run({"ZRANK", "k", "ab"}) == ":3\r\n");
  CHECK(f.Run({"ZREVRANK", "k", "ab"}) == ":3\r\n");
  CHECK(f.Run({"ZRANK", "k", "z"}) == ":0\r\n");
  CHECK(f.Run({"ZRANK", "k", "d"}) == ":5\r\n");
  CHECK(f.Run({"ZRANK", "k", "d", "WITHSCORE"}) == "*2\r\n:5\r\n" + Bulk("1"));
  CHECK(f.Run({"ZRANK", "k", "nobody", "WITHSCORE"}) == "*-1\r\n");
  CHECK(f.Run({"ZRANK", "nokey", "a"}) == "$-1\r\n");
  CHECK(StartsWith(f.Run({"ZRANK", "k", "a", "WITHSCORES"}),
                   "-ERR syntax error"));
}

TEST_CASE("every window of a tied set is the window of the name order") {
  DispatcherFixture f;
  // Scores 0, 1 (20 members) and 2, the tied names added out of order.
  std::vector<std::string> order = {"z"};
  for (int i :
       {7, 3, 15, 0, 11, 19, 4, 8, 12, 1, 16, 5, 9, 13, 2, 17, 6, 10, 14, 18}) {
    f.Run({"ZADD", "k", "1", absl::StrCat("m", i < 10 ? "0" : "", i)});
  }
  f.Run({"ZADD", "k", "0", "z", "2", "a"});
  for (int i = 0; i < 20; ++i) {
    order.push_back(absl::StrCat("m", i < 10 ? "0" : "", i));
  }
  order.push_back("a");
  const int n = static_cast<int>(order.size());
  for (int start = 0; start < n; ++start) {
    for (int stop = start; stop < n; ++stop) {
      std::vector<std::string> want(order.begin() + start,
                                    order.begin() + stop + 1);
      CHECK(f.Run({"ZRANGE", "k", absl::StrCat(start), absl::StrCat(stop)}) ==
            Names(want));
      std::vector<std::string> rev(order.rbegin() + start,
                                   order.rbegin() + stop + 1);
      CHECK(f.Run({"ZRANGE", "k", absl::StrCat(start), absl::StrCat(stop),
                   "REV"}) == Names(rev));
      CHECK(f.Run({"ZRANGEBYSCORE", "k", "-inf", "+inf", "LIMIT",
                   absl::StrCat(start), absl::StrCat(stop - start + 1)}) ==
            Names(want));
    }
    CHECK(f.Run({"ZRANK", "k", order[start]}) ==
          absl::StrCat(":", start, "\r\n"));
    CHECK(f.Run({"ZREVRANK", "k", order[start]}) ==
          absl::StrCat(":", n - 1 - start, "\r\n"));
  }
}

TEST_CASE("windows of distinct scores, with scores, in both protocols") {
  DispatcherFixture f;
  // Names past the dictionary's inline bytes, scores added out of order:
  // these replies are written from the dictionary as the board reads them.
  std::vector<std::string> order;
  for (int i = 0; i < 30; ++i) {
    order.push_back(absl::StrCat("player-with-a-long-name:", i));
  }
  for (int i : {29, 3, 17, 0,  11, 25, 4,  8,  21, 1,  16, 5,  9,  13, 2,
                28, 6, 10, 14, 18, 7,  12, 15, 19, 20, 22, 23, 24, 26, 27}) {
    f.Run({"ZADD", "k", absl::StrCat(i * 10 - 100), order[i]});
  }
  const auto with_scores = [&](int start, int stop, bool rev, bool pairs) {
    std::string out = absl::StrCat(
        "*", pairs ? stop - start + 1 : 2 * (stop - start + 1), "\r\n");
    for (int r = start; r <= stop; ++r) {
      const int i = rev ? 29 - r : r;
      if (pairs) out += "*2\r\n";
      out += Bulk(order[i]);
      out += pairs ? absl::StrCat(",", i * 10 - 100, "\r\n")
                   : Bulk(absl::StrCat(i * 10 - 100));
    }
    return out;
  };
  for (int start = 0; start < 30; start += 7) {
    for (int stop = start; stop < 30; stop += 5) {
      CAPTURE(start);
      CAPTURE(stop);
      CHECK(f.Run({"ZRANGE", "k", absl::StrCat(start), absl::StrCat(stop),
                   "WITHSCORES"}) == with_scores(start, stop, false, false));
      CHECK(f.Run({"ZRANGE", "k", absl::StrCat(start), absl::StrCat(stop),
                   "REV", "WITHSCORES"}) ==
            with_scores(start, stop, true, false));
      CHECK(f.Run({"ZRANGEBYSCORE", "k", "-inf", "+inf", "WITHSCORES", "LIMIT",
                   absl::StrCat(start), absl::StrCat(stop - start + 1)}) ==
            with_scores(start, stop, false, false));
      CHECK(f.Run({"ZRANGE", "k", absl::StrCat(start - 30),
                   absl::StrCat(stop - 30)}) ==
            Names(std::vector<std::string>(order.begin() + start,
                                           order.begin() + stop + 1)));
    }
  }
  CHECK(f.Run({"ZRANGEBYSCORE", "k", "(-100", "-70"}) ==
        Names({order[1], order[2], order[3]}));
  CHECK(f.Run({"ZRANGE", "k", "5", "4"}) == "*0\r\n");
  CHECK(f.Run({"ZRANGEBYSCORE", "k", "-inf", "+inf", "LIMIT", "2", "0"}) ==
        "*0\r\n");
  CHECK(f.Run({"ZRANGEBYSCORE", "k", "-inf", "+inf", "LIMIT", "40", "2"}) ==
        "*0\r\n");
  REQUIRE(StartsWith(f.Run({"HELLO", "3"}), "%"));
  CHECK(f.Run({"ZRANGE", "k", "3", "9", "WITHSCORES"}) ==
        with_scores(3, 9, false, true));
  CHECK(f.Run({"ZRANGE", "k", "0", "4", "REV", "WITHSCORES"}) ==
        with_scores(0, 4, true, true));
}

TEST_CASE("lexicographic ranges, counts and removals") {
  DispatcherFixture f;
  f.Run({"ZADD", "k", "0", "a", "0", "b", "0", "c", "0", "d", "0", "e"});
  CHECK(f.Run({"ZRANGEBYLEX", "k", "[b", "(e"}) == Names({"b", "c", "d"}));
  CHECK(f.Run({"ZRANGE", "k", "[d", "-", "BYLEX", "REV", "LIMIT", "1", "2"}) ==
        Names({"c", "b"}));
  CHECK(f.Run({"ZREVRANGEBYLEX", "k", "+", "(c"}) == Names({"e", "d"}));
  CHECK(f.Run({"ZLEXCOUNT", "k", "-", "+"}) == ":5\r\n");
  CHECK(f.Run({"ZLEXCOUNT", "k", "(a", "[c"}) == ":2\r\n");
  CHECK(f.Run({"ZRANGEBYLEX", "k", "+", "-"}) == "*0\r\n");
  CHECK(StartsWith(f.Run({"ZRANGEBYLEX", "k", "b", "+"}),
                   "-ERR min or max not valid string range item"));
  CHECK(StartsWith(f.Run({"ZRANGE", "k", "-", "+", "BYLEX", "WITHSCORES"}),
                   "-ERR syntax error, WITHSCORES not supported"));
  CHECK(f.Run({"ZREMRANGEBYLEX", "k", "[b", "[c"}) == ":2\r\n");
  CHECK(f.Run({"ZRANGE", "k", "0", "-1"}) == Names({"a", "d", "e"}));
  // Every write is seen by the next lexicographic read (its ordered copy
  // is made again).
  CHECK(f.Run({"ZRANGEBYLEX", "k", "-", "+"}) == Names({"a", "d", "e"}));
  f.Run({"ZADD", "k", "0", "c"});
  CHECK(f.Run({"ZRANGEBYLEX", "k", "-", "+"}) == Names({"a", "c", "d", "e"}));
  f.Run({"ZINCRBY", "k", "1", "a"});
  CHECK(f.Run({"ZRANGEBYLEX", "k", "-", "+"}) == Names({"c", "d", "e", "a"}));
  f.Run({"ZREM", "k", "d"});
  CHECK(f.Run({"ZLEXCOUNT", "k", "-", "+"}) == ":3\r\n");
  f.Run({"ZPOPMIN", "k"});
  CHECK(f.Run({"ZRANGEBYLEX", "k", "-", "+"}) == Names({"e", "a"}));
  CHECK(f.Run({"ZREMRANGEBYLEX", "nokey", "-", "+"}) == ":0\r\n");
}

TEST_CASE("pops and removals by rank and score; an emptied set is gone") {
  DispatcherFixture f;
  f.Run({"ZADD", "k", "1", "b", "1", "a", "2", "c", "3", "d"});
  CHECK(f.Run({"ZPOPMIN", "k"}) == "*2\r\n" + Bulk("a") + Bulk("1"));
  CHECK(f.Run({"ZPOPMAX", "k", "2"}) ==
        "*4\r\n" + Bulk("d") + Bulk("3") + Bulk("c") + Bulk("2"));
  CHECK(StartsWith(f.Run({"ZPOPMIN", "k", "-1"}),
                   "-ERR value is out of range, must be positive"));
  f.session().protocol = 3;
  CHECK(f.Run({"ZPOPMIN", "k", "1"}) == "*1\r\n*2\r\n" + Bulk("b") + ",1\r\n");
  f.session().protocol = 2;
  CHECK(f.Run({"EXISTS", "k"}) == ":0\r\n");
  CHECK(f.Run({"ZPOPMIN", "k"}) == "*0\r\n");
  f.Run({"ZADD", "k", "1", "a", "2", "b", "3", "c", "4", "d"});
  CHECK(f.Run({"ZREMRANGEBYRANK", "k", "-2", "-1"}) == ":2\r\n");
  CHECK(f.Run({"ZREMRANGEBYSCORE", "k", "(1", "+inf"}) == ":1\r\n");
  CHECK(f.Run({"ZRANGE", "k", "0", "-1"}) == Names({"a"}));
  CHECK(f.Run({"ZMPOP", "2", "nokey", "k", "MAX", "COUNT", "5"}) ==
        "*2\r\n" + Bulk("k") + "*1\r\n*2\r\n" + Bulk("a") + Bulk("1"));
  CHECK(f.Run({"ZCARD", "k"}) == ":0\r\n");
  CHECK(f.Run({"EXISTS", "k"}) == ":0\r\n");
  CHECK(f.Run({"ZMPOP", "1", "k", "MIN"}) == "*-1\r\n");
  CHECK(StartsWith(f.Run({"ZMPOP", "0", "k", "MIN"}),
                   "-ERR numkeys should be greater than 0"));
  CHECK(StartsWith(f.Run({"ZMPOP", "1", "k", "MIN", "COUNT", "0"}),
                   "-ERR count should be greater than 0"));
  // A removed member's name is freed: adding it again starts it afresh.
  f.Run({"ZADD", "k", "5", "a"});
  CHECK(f.Run({"ZSCORE", "k", "a"}) == Bulk("5"));
}

// The live member names INFO memory reports.
int64_t LiveNames(DispatcherFixture& f) {
  const std::string info = f.Run({"INFO", "memory"});
  const size_t at = info.find("member_names:");
  REQUIRE(at != std::string::npos);
  return std::stoll(info.substr(at + 13));
}

TEST_CASE("every removal frees the removed members' names") {
  DispatcherFixture f;
  f.Run({"ZADD", "k", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6",
         "f", "0", "g", "0", "h"});
  CHECK(LiveNames(f) == 8);
  f.Run({"ZPOPMIN", "k"});
  f.Run({"ZPOPMAX", "k"});
  CHECK(LiveNames(f) == 6);
  f.Run({"ZMPOP", "1", "k", "MIN"});
  f.Run({"ZREMRANGEBYRANK", "k", "0", "0"});
  f.Run({"ZREMRANGEBYSCORE", "k", "2", "2"});
  CHECK(LiveNames(f) == 3);
  f.Run({"ZREMRANGEBYLEX", "k", "[c", "[d"});
  CHECK(LiveNames(f) == 1);
  // A replaced destination's names go with its old board.
  f.Run({"ZADD", "src", "1", "x"});
  f.Run({"ZUNIONSTORE", "k", "1", "src"});
  CHECK(LiveNames(f) == 2);
}

TEST_CASE("ZRANDMEMBER picks from the store's seeded generator") {
  std::string first;
  for (int run = 0; run < 2; ++run) {
    DispatcherFixture f;
    for (int i = 0; i < 30; ++i) {
      f.Run({"ZADD", "k", absl::StrCat(i), absl::StrCat("m", i)});
    }
    const std::string picked = f.Run({"ZRANDMEMBER", "k", "10"});
    if (run == 0) first = picked;
    CHECK(picked == first);  // the same seed, the same picks
    CHECK(StartsWith(picked, "*10\r\n"));
  }
  DispatcherFixture f;
  f.Run({"ZADD", "k", "4", "only"});
  CHECK(f.Run({"ZRANDMEMBER", "k"}) == Bulk("only"));
  CHECK(f.Run({"ZRANDMEMBER", "k", "-2", "WITHSCORES"}) ==
        "*4\r\n" + Bulk("only") + Bulk("4") + Bulk("only") + Bulk("4"));
  CHECK(f.Run({"ZRANDMEMBER", "nokey"}) == "$-1\r\n");
  CHECK(f.Run({"ZRANDMEMBER", "nokey", "3"}) == "*0\r\n");
}

TEST_CASE("ZSCAN returns every member of a large set across its cursors") {
  DispatcherFixture f;
  for (int i = 0; i < 500; ++i) {
    f.Run({"ZADD", "k", "1", absl::StrCat("m", i)});
  }
  // Removals and additions mid-scan do not make it skip the others.
  std::set<std::string> seen;
  std::string cursor = "0";
  int calls = 0;
  do {
    const std::string reply = f.Run({"ZSCAN", "k", cursor, "COUNT", "50"});
    const size_t cursor_start = reply.find("\r\n", 5) + 2;
    cursor = reply.substr(cursor_start,
                          reply.find("\r\n", cursor_start) - cursor_start);
    size_t pos = reply.find("*", cursor_start);
    pos = reply.find("\r\n", pos) + 2;
    while (pos < reply.size()) {
      const size_t line = reply.find("\r\n", pos);
      const size_t length = std::stoul(reply.substr(pos + 1, line - pos - 1));
      seen.insert(reply.substr(line + 2, length));
      pos = line + 2 + length + 2;
      pos = reply.find("\r\n", pos) + 2;  // the score's length
      pos = reply.find("\r\n", pos) + 2;  // the score
    }
    if (++calls == 3) {
      f.Run({"ZREM", "k", "m1", "m2"});
      f.Run({"ZADD", "k", "2", "new"});
    }
  } while (cursor != "0" && calls < 1000);
  for (int i = 0; i < 500; ++i) {
    if (i == 1 || i == 2) continue;
    CHECK(seen.count(absl::StrCat("m", i)) == 1);
  }
  CHECK(f.Run({"ZSCAN", "nokey", "0", "COUNT", "0"}) ==
        "*2\r\n" + Bulk("0") + "*0\r\n");
  CHECK(StartsWith(f.Run({"ZSCAN", "k", "x"}), "-ERR invalid cursor"));
}

TEST_CASE("ZUNION, ZINTER, ZDIFF and their STOREs") {
  DispatcherFixture f;
  f.Run({"ZADD", "a", "1", "x", "2", "y"});
  f.Run({"ZADD", "b", "10", "y", "20", "z"});
  CHECK(f.Run({"ZUNION", "2", "a", "b", "WITHSCORES"}) ==
        "*6\r\n" + Bulk("x") + Bulk("1") + Bulk("y") + Bulk("12") + Bulk("z") +
            Bulk("20"));
  CHECK(f.Run({"ZINTER", "2", "a", "b", "WEIGHTS", "3", "-1", "AGGREGATE",
               "MAX", "WITHSCORES"}) == "*2\r\n" + Bulk("y") + Bulk("6"));
  CHECK(f.Run({"ZDIFF", "2", "a", "b"}) == Names({"x"}));
  CHECK(f.Run({"ZUNIONSTORE", "a", "2", "a", "b", "WEIGHTS", "2", "1"}) ==
        ":3\r\n");
  CHECK(f.Run({"ZRANGE", "a", "0", "-1", "WITHSCORES"}) ==
        "*6\r\n" + Bulk("x") + Bulk("2") + Bulk("y") + Bulk("14") + Bulk("z") +
            Bulk("20"));
  CHECK(f.Run({"ZINTERSTORE", "a", "2", "a", "nokey"}) == ":0\r\n");
  CHECK(f.Run({"EXISTS", "a"}) == ":0\r\n");
  CHECK(f.Run({"ZRANGESTORE", "c", "b", "0", "0"}) == ":1\r\n");
  CHECK(f.Run({"ZRANGE", "c", "0", "-1"}) == Names({"y"}));
  // int64 scores: a weight that is not an integer, and a result beyond
  // int64, are errors that change nothing.
  CHECK(StartsWith(f.Run({"ZUNION", "1", "b", "WEIGHTS", "1.5"}),
                   "-ERR weight must be an integer"));
  f.Run({"ZADD", "big", "9223372036854775807", "m"});
  const std::string overflow = f.Run({"ZUNIONSTORE", "c", "2", "big", "big"});
  CHECK(StartsWith(overflow, "-ERR the combined score of member 'm'"));
  CHECK(StartsWith(f.Run({"ZUNION", "1", "big", "WEIGHTS", "-2"}), "-ERR"));
  CHECK(f.Run({"ZUNION", "1", "big", "WEIGHTS", "-1", "WITHSCORES"}) ==
        "*2\r\n" + Bulk("m") + Bulk("-9223372036854775807"));
  CHECK(f.Run({"ZRANGE", "c", "0", "-1"}) == Names({"y"}));  // unchanged
  CHECK(StartsWith(f.Run({"ZUNION", "0", "a"}),
                   "-ERR at least 1 input key is needed for 'zunion'"));
  CHECK(StartsWith(f.Run({"ZDIFF", "1", "a", "WEIGHTS", "1"}),
                   "-ERR syntax error"));
}

}  // namespace
}  // namespace feedcore::server
