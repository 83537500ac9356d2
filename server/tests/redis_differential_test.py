"""The sorted-set commands of feedcore-server side by side with a real
redis-server: every command, its options and its error cases, on sets
with tied scores and on missing keys, sent to both servers over raw
sockets in RESP2 and then RESP3 (HELLO 3), with the raw replies compared
byte for byte (errors: both must be errors; feedcore's messages say more).

Usage: redis_differential_test.py <path to feedcore-server>

Scores are small integers (feedcore's are int64). Replies that Redis
makes random (ZRANDMEMBER of a set of several members) or that depend on
its hash tables (ZSCAN of a large set) are compared as sets of members.
"""

import random
import sys

from server_harness import (connect, fail, running_redis_server,
                            running_server)
from redis_py_test import RawReader, encode


def send_all(sock, commands):
    reader = RawReader(sock)
    sock.sendall(b"".join(encode(*command) for command in commands))
    return [reader.read() for _ in commands]


def compare(feedcore, redis_server, commands, what):
    mine = send_all(feedcore, commands)
    theirs = send_all(redis_server, commands)
    for command, a, b in zip(commands, mine, theirs):
        if a.startswith(b"-") and b.startswith(b"-"):
            continue
        if a != b:
            fail(f"{what}: {' '.join(map(str, command))}: feedcore-server "
                 f"replied {a[:400]!r}, redis-server {b[:400]!r}")


def fill_commands(rng):
    """Sets with many ties: `t` (scores 0..3 over 40 names of varied
    lengths and bytes), `u` and `v` overlapping it, `lex` (one score)."""
    names = sorted({rng.choice(["a", "b", "ab", "abc", "b\x00", "\xff",
                                "B", "z", "zz", "m"]) +
                    str(rng.randint(0, 30)) for _ in range(60)})
    commands = [["DEL", "t", "u", "v", "lex", "d", "d2", "one"]]
    pairs = []
    for name in names[:40]:
        pairs += [rng.randint(0, 3), name]
    commands.append(["ZADD", "t", *pairs])
    pairs = []
    for name in names[20:55]:
        pairs += [rng.randint(-2, 2), name]
    commands.append(["ZADD", "u", *pairs])
    commands.append(["ZADD", "v", 1, names[0], 2, names[25], 3, "only-v"])
    words = ["a", "aa", "ab", "abc", "b", "ba", "c", "d", "e", "f", "g",
             "a\x00", "\xfe", ""]
    pairs = []
    for word in words:
        pairs += [0, word]
    commands.append(["ZADD", "lex", *pairs])
    commands.append(["ZADD", "one", 7, "solo"])
    return commands, names


def read_commands(rng, names):
    commands = []
    for key in ("t", "u", "lex", "missing"):
        commands += [
            ["ZRANGE", key, 0, -1, "WITHSCORES"], ["ZRANGE", key, 0, -1, "REV"],
            ["ZREVRANGE", key, 3, 17, "WITHSCORES"], ["ZCARD", key],
            ["ZRANGE", key, 1, 1, "BYSCORE", "LIMIT", 2, 5, "WITHSCORES"],
            ["ZRANGE", key, 2, 0, "BYSCORE", "REV", "LIMIT", 1, 4],
            ["ZRANGEBYSCORE", key, "(0", 3, "LIMIT", 3, 6],
            ["ZREVRANGEBYSCORE", key, "+inf", "-inf", "LIMIT", 5, 3,
             "WITHSCORES"],
            ["ZRANGE", key, "[a", "(b", "BYLEX"],
            ["ZRANGE", key, "+", "-", "BYLEX", "REV", "LIMIT", 1, 3],
            ["ZRANGEBYLEX", key, "-", "+"], ["ZRANGEBYLEX", key, "(a", "[c"],
            ["ZRANGEBYLEX", key, "[aa", "(ba", "LIMIT", 1, 2],
            ["ZRANGEBYLEX", key, "-", "+", "LIMIT", 0, -1],
            ["ZRANGEBYLEX", key, "[c", "[a"], ["ZRANGEBYLEX", key, "+", "-"],
            ["ZRANGEBYLEX", key, "(a", "(a"], ["ZRANGEBYLEX", key, "[", "+"],
            ["ZREVRANGEBYLEX", key, "+", "-"],
            ["ZREVRANGEBYLEX", key, "[c", "(a", "LIMIT", 1, 10],
            ["ZLEXCOUNT", key, "-", "+"], ["ZLEXCOUNT", key, "[ab", "(d"],
            ["ZCOUNT", key, 1, 2], ["ZSCAN", key, 0],
            ["ZSCAN", key, 0, "MATCH", "a*"],
            ["ZSCAN", key, 0, "COUNT", 3, "MATCH", "*b*"],
            ["ZRANDMEMBER", key, 0], ["ZMSCORE", key, "a", "zz", "\xff1"],
            # Errors.
            ["ZRANGE", key, "a", "b", "BYLEX", "WITHSCORES"],
            ["ZRANGEBYLEX", key, "a", "b"], ["ZLEXCOUNT", key, "x", "+"],
            ["ZRANGEBYLEX", key, "-", "+", "LIMIT", 0],
            ["ZRANGEBYLEX", key, "-", "+", "WITHSCORES"],
            ["ZRANGE", key, 0, 1, "LIMIT", 0, 1],
            ["ZRANGE", key, 0, 1, "BYSCORE", "LIMIT", "x", 1],
            ["ZSCAN", key, "x"], ["ZSCAN", key, 0, "COUNT", 0],
            ["ZSCAN", key, 0, "MATCH"], ["ZSCAN", key, 0, "FOO", 1],
            ["ZRANDMEMBER", key, "x"], ["ZRANDMEMBER", key, 1, "FOO"],
            ["ZRANDMEMBER", key, 1, "WITHSCORES", "x"],
            ["ZRANK", key, "a", "x"],
        ]
        for name in rng.sample(names, 12) + ["nobody"]:
            commands += [["ZRANK", key, name], ["ZREVRANK", key, name],
                         ["ZSCORE", key, name]]
        for _ in range(40):
            start = rng.randint(-45, 45)
            stop = rng.randint(start - 3, start + 12)
            commands.append(["ZRANGE", key, start, stop,
                             *rng.choice([[], ["REV"], ["WITHSCORES"],
                                          ["REV", "WITHSCORES"]])])
            low = rng.randint(-3, 4)
            commands.append(["ZRANGEBYSCORE", key, low,
                             rng.randint(low, 4), "LIMIT",
                             rng.randint(0, 20), rng.choice([-1, 1, 3, 9]),
                             *rng.choice([[], ["WITHSCORES"]])])
            commands.append(["ZRANGE", key, rng.randint(low, 4), low,
                             "BYSCORE", "REV", "LIMIT", rng.randint(0, 20),
                             rng.choice([-1, 2, 7])])
            a, b = sorted(rng.sample(["a", "ab", "abc", "b", "c", "d", "z",
                                      "\xfe", "m1"], 2))
            commands.append(["ZRANGEBYLEX", key, rng.choice("[(") + a,
                             rng.choice("[(") + b, "LIMIT",
                             rng.randint(0, 5), rng.choice([-1, 1, 4])])
    commands += [
        ["ZRANDMEMBER", "one"], ["ZRANDMEMBER", "one", 3],
        ["ZRANDMEMBER", "one", -3, "WITHSCORES"],
        ["ZRANDMEMBER", "missing"], ["ZRANDMEMBER", "missing", 5],
        ["ZRANDMEMBER", "missing", -5, "WITHSCORES"],
    ]
    return commands


def algebra_commands():
    commands = []
    for op in ("ZUNION", "ZINTER"):
        commands += [
            [op, 2, "t", "u"], [op, 2, "t", "u", "WITHSCORES"],
            [op, 3, "t", "u", "v", "WEIGHTS", 2, 3, -5, "WITHSCORES"],
            # (No weight below 0 on a set with a score 0: Redis replies -0.),
            [op, 2, "t", "u", "AGGREGATE", "MIN", "WITHSCORES"],
            [op, 2, "t", "u", "AGGREGATE", "MAX", "WEIGHTS", 3, 1,
             "WITHSCORES"],
            [op, 2, "t", "missing", "WITHSCORES"], [op, 1, "missing"],
            [op, 2, "u", "u", "WEIGHTS", "2.0", "1e1", "WITHSCORES"],
            [op + "STORE", "d", 2, "t", "u"], ["ZRANGE", "d", 0, -1,
                                               "WITHSCORES"],
            [op + "STORE", "d", 3, "d", "v", "t", "WEIGHTS", 1, 2, 3,
             "AGGREGATE", "SUM"],
            ["ZRANGE", "d", 0, -1, "WITHSCORES"],
            [op + "STORE", "d", 2, "missing", "missing2"], ["EXISTS", "d"],
            [op + "STORE", "d2", 1, "t"], ["ZCARD", "d2"],
            # Errors.
            [op, 0, "t"], [op, -1, "t"], [op, 3, "t", "u"], [op, "x", "t"],
            [op, 2, "t", "u", "WEIGHTS", 1], [op, 2, "t", "u", "WEIGHTS",
                                              1, "x"],
            [op, 2, "t", "u", "AGGREGATE", "AVG"],
            [op, 2, "t", "u", "AGGREGATE"], [op, 1, "t", "FOO"],
            [op + "STORE", "d", 1, "t", "WITHSCORES"],
            [op + "STORE", "d", 0, "t"],
        ]
    commands += [
        ["ZDIFF", 2, "t", "u"], ["ZDIFF", 3, "t", "u", "v", "WITHSCORES"],
        ["ZDIFF", 1, "missing"], ["ZDIFF", 2, "missing", "t"],
        ["ZDIFFSTORE", "d", 2, "t", "u"], ["ZRANGE", "d", 0, -1,
                                           "WITHSCORES"],
        ["ZDIFFSTORE", "d", 2, "d", "d"], ["EXISTS", "d"],
        ["ZDIFF", 2, "t", "u", "WEIGHTS", 1, 1],
        ["ZDIFF", 2, "t", "u", "AGGREGATE", "SUM"], ["ZDIFF", 0, "t"],
        ["ZRANGESTORE", "d", "t", 0, 9], ["ZRANGE", "d", 0, -1, "WITHSCORES"],
        ["ZRANGESTORE", "d", "t", 1, 2, "BYSCORE", "LIMIT", 2, 5],
        ["ZRANGE", "d", 0, -1, "WITHSCORES"],
        ["ZRANGESTORE", "d", "lex", "[b", "-", "BYLEX", "REV"],
        ["ZRANGE", "d", 0, -1, "WITHSCORES"],
        ["ZRANGESTORE", "d", "d", 0, 1], ["ZRANGE", "d", 0, -1],
        ["ZRANGESTORE", "d", "missing", 0, -1], ["EXISTS", "d"],
        ["ZRANGESTORE", "d", "t", 0, 1, "WITHSCORES"],
        ["ZRANGESTORE", "d", "t", "a", "b", "BYLEX", "FOO"],
    ]
    return commands


def removal_commands(rng, names):
    commands = []
    for key in ("t", "u", "missing"):
        commands += [
            ["ZPOPMIN", key], ["ZPOPMAX", key], ["ZPOPMIN", key, 3],
            ["ZPOPMAX", key, 2], ["ZPOPMIN", key, 0], ["ZPOPMIN", key, 1],
            ["ZPOPMIN", key, -1], ["ZPOPMIN", key, "x"],
            ["ZPOPMIN", key, 1, 2],
            ["ZREMRANGEBYRANK", key, 0, 1], ["ZREMRANGEBYRANK", key, -2, -1],
            ["ZREMRANGEBYRANK", key, 5, 2], ["ZREMRANGEBYRANK", key, "a", 1],
            ["ZREMRANGEBYSCORE", key, "(1", 2],
            ["ZREMRANGEBYSCORE", key, "x", 2],
            ["ZREMRANGEBYLEX", key, "[a", "(b"],
            ["ZREMRANGEBYLEX", key, "x", "+"],
            ["ZRANGE", key, 0, -1, "WITHSCORES"], ["ZCARD", key],
        ]
    commands += [
        ["ZMPOP", 2, "missing", "t", "MIN"],
        ["ZMPOP", 2, "missing", "t", "MAX", "COUNT", 3],
        ["ZMPOP", 1, "missing", "MIN"], ["ZMPOP", 1, "lex", "MIN", "COUNT",
                                         100],
        ["EXISTS", "lex"], ["ZCARD", "lex"],
        ["ZMPOP", 0, "t", "MIN"], ["ZMPOP", 1, "t", "FOO"],
        ["ZMPOP", 1, "t", "MIN", "COUNT", 0], ["ZMPOP", 1, "t", "MIN",
                                               "COUNT"],
        ["ZMPOP", 3, "t", "MIN"], ["ZMPOP", "x", "t", "MIN"],
        ["ZMPOP", 1, "t", "MIN", "COUNT", 1, "COUNT", 2],
        ["ZPOPMIN", "one", 5], ["EXISTS", "one"], ["ZCARD", "one"],
        ["ZRANGE", "one", 0, -1],
    ]
    # Empty a set by each removal: the key is gone, as in Redis.
    for remove in (["ZREM", "u", *names], ["ZREMRANGEBYRANK", "u", 0, -1],
                   ["ZREMRANGEBYSCORE", "u", "-inf", "+inf"],
                   ["ZPOPMAX", "u", 1000]):
        commands += [["ZADD", "u", 1, "x", 1, "y"], remove, ["EXISTS", "u"],
                     ["ZCARD", "u"], ["ZRANGE", "u", 0, -1]]
    return commands


# A command of each of Redis's other types on the sorted set `t`, with
# arity errors: redis-server's replies, errors included, byte for byte.
WRONG_TYPE_COMMANDS = [
    ["GET", "t"], ["GETDEL", "t"], ["GETSET", "t", "v"], ["STRLEN", "t"],
    ["APPEND", "t", "v"], ["INCR", "t"], ["DECR", "t"], ["HGET", "t", "f"],
    ["HMGET", "t", "f", "g"], ["HSET", "t", "f", "v"], ["HSET", "t", "f"],
    ["HSETNX", "t", "f", "v"], ["HMSET", "t", "f", "v", "g"],
    ["HDEL", "t", "f"], ["HLEN", "t"], ["HEXISTS", "t", "f"],
    ["HSTRLEN", "t", "f"], ["HGETALL", "t"], ["HKEYS", "t"], ["HVALS", "t"],
    ["LPUSH", "t", "a"], ["RPUSH", "t", "a", "b"], ["LPUSHX", "t", "a"],
    ["RPUSHX", "t", "a"], ["LLEN", "t"], ["SADD", "t", "a"],
    ["SREM", "t", "a"], ["SMEMBERS", "t"], ["SISMEMBER", "t", "a"],
    ["SMISMEMBER", "t", "a", "b"], ["SCARD", "t"], ["XLEN", "t"],
    ["GET", "t", "extra"], ["LLEN"], ["ZCARD", "t"],
]


def check_wrong_type(feedcore, redis_server, what):
    mine = send_all(feedcore, WRONG_TYPE_COMMANDS)
    theirs = send_all(redis_server, WRONG_TYPE_COMMANDS)
    for command, a, b in zip(WRONG_TYPE_COMMANDS, mine, theirs):
        if a != b:
            fail(f"{what}: {' '.join(command)}: feedcore-server replied "
                 f"{a!r}, redis-server {b!r}")
    # On a missing key redis-server would make a value of that type;
    # feedcore-server refuses, saying why, and makes no key.
    for command in (["SADD", "absent", "a"], ["GET", "absent"]):
        reply = send_all(feedcore, [command, ["EXISTS", "absent"]])
        if (not reply[0].startswith(b"-ERR feedcore-server keeps sorted sets")
                or reply[1] != b":0\r\n"):
            fail(f"{what}: {command} on a missing key: {reply!r}")


def check_scan_covers(feedcore, redis_server):
    """ZSCAN of a large set: a full scan returns every member once at
    least, with its score, on both servers."""
    members = {f"member:{i:05d}": i % 7 for i in range(2000)}
    pairs = []
    for name, score in members.items():
        pairs += [score, name]
    for sock in (feedcore, redis_server):
        send_all(sock, [["DEL", "big"], ["ZADD", "big", *pairs]])
        seen = {}
        cursor = "0"
        while True:
            reply = send_all(sock, [["ZSCAN", "big", cursor, "COUNT", 100]])[0]
            parts = reply.split(b"\r\n")
            cursor = parts[2].decode()
            items = [parts[i].decode() for i in range(5, len(parts) - 1, 2)]
            for name, score in zip(items[::2], items[1::2]):
                seen[name] = int(score)
            if cursor == "0":
                break
        if seen != members:
            fail(f"ZSCAN on port {sock.getpeername()[1]} returned "
                 f"{len(seen)} of {len(members)} members or wrong scores")


def check_random_members(feedcore):
    """ZRANDMEMBER of a larger set: distinct for a positive count, from the
    set for a negative one."""
    replies = send_all(feedcore, [
        ["DEL", "r"], ["ZADD", "r", *sum(([i, f"r{i}"] for i in range(50)),
                                        [])],
        ["ZRANDMEMBER", "r", 20], ["ZRANDMEMBER", "r", -200],
        ["ZRANDMEMBER", "r", 80]])
    distinct = replies[2].split(b"\r\n")[2::2]
    check = set(distinct)
    if len(distinct) != 20 or len(check) != 20:
        fail(f"ZRANDMEMBER r 20 is not 20 distinct members: {replies[2]!r}")
    repeated = replies[3].split(b"\r\n")[2::2]
    if len(repeated) != 200 or not all(m.startswith(b"r") for m in repeated):
        fail(f"ZRANDMEMBER r -200: {replies[3][:200]!r}")
    if not replies[4].startswith(b"*50\r\n"):
        fail(f"ZRANDMEMBER r 80 of 50 members: {replies[4][:40]!r}")


def main():
    if len(sys.argv) != 2:
        fail("usage: redis_differential_test.py <feedcore-server>")
    rng = random.Random(20260701)
    # Four partitions, so that Redis's order is checked across the merge
    # of partitions that a read of a partitioned key does.
    with running_server(sys.argv[1], "--leaderboard_partitions=4") as port, \
            running_redis_server() as redis_port:
        for protocol in (2, 3):
            with connect(port, timeout=60) as feedcore, \
                    connect(redis_port, timeout=60) as redis_server:
                for sock in (feedcore, redis_server):
                    send_all(sock, [["HELLO", protocol]])
                fill, names = fill_commands(rng)
                what = f"RESP{protocol}"
                compare(feedcore, redis_server, fill, what + " fill")
                compare(feedcore, redis_server, read_commands(rng, names),
                        what + " reads")
                compare(feedcore, redis_server, algebra_commands(),
                        what + " ZUNION/ZINTER/ZDIFF/ZRANGESTORE")
                compare(feedcore, redis_server, removal_commands(rng, names),
                        what + " removals")
                check_wrong_type(feedcore, redis_server, what)
                check_scan_covers(feedcore, redis_server)
                check_random_members(feedcore)
    print("ok: every sorted-set command, option and error, with ties and "
          "missing keys, equals redis-server's replies (RESP2 and RESP3), "
          "and so does WRONGTYPE from other types' commands; ZSCAN and "
          "ZRANDMEMBER cover their sets")


if __name__ == "__main__":
    main()
