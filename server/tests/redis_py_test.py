"""feedcore-server driven by the Python redis package: pipelining, several
concurrent clients, its PubSub object on a plain channel and on a user's
timeline, and RESP3; then the sorted-set commands compared with a real
redis-server.

Usage: redis_py_test.py <path to feedcore-server>

The Python redis package of Debian 12 (python3-redis 4.3) speaks RESP2
only, so RESP3 is checked with a small decoder of its own over a raw
socket; the same socket sends pipelined commands in small random pieces to
exercise partial reads.

The comparison starts redis-server (scripts/install-deps installs it) and
sends both servers the same commands over raw sockets, in RESP2 and RESP3,
and requires byte-identical replies: ZADD with every flag combination,
ZINCRBY, ZREM, ZMSCORE, ZCOUNT, and ZRANGE (by rank, BYSCORE, REV, LIMIT),
ZREVRANGE, ZRANGEBYSCORE and ZREVRANGEBYSCORE over a 30,000-member set at
every depth. Scores are distinct, small integers (feedcore's scores are
int64), and errors are compared as errors only (feedcore's messages say
more); redis_differential_test.py covers ties and the other sorted-set
commands.
"""

import random
import sys
import threading

from server_harness import (RawReader, connect, encode, fail,
                            running_redis_server, running_server)

try:
    import redis
except ImportError:
    fail("the Python redis package is missing; install the Debian package "
         "python3-redis (scripts/install-deps does)")


def check(condition, message):
    if not condition:
        fail(message)


def check_pipelining(port):
    client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=10)
    check(client.ping() is True, "PING through redis-py")

    pipe = client.pipeline(transaction=False)
    for i in range(1000):
        pipe.zadd("scores", {f"player:{i}": i})
    for i in range(0, 1000, 2):
        pipe.zincrby("scores", 1000, f"player:{i}")
    pipe.zscore("scores", "player:998")
    pipe.zrevrank("scores", "player:998")
    pipe.zcard("scores")
    pipe.zrange("scores", 0, 2, desc=True, withscores=True)
    pipe.zrange("scores", 0, 1, withscores=True)
    results = pipe.execute()
    check(results[:1000] == [1] * 1000, "ZADD replies in a pipeline")
    check(results[1000:1500] == [float(i + 1000) for i in range(0, 1000, 2)],
          "ZINCRBY replies in a pipeline")
    tail = results[1500:]
    check(tail[0] == 1998.0, f"ZSCORE after the pipeline: {tail[0]}")
    check(tail[1] == 0, f"ZREVRANK of the leader: {tail[1]}")
    check(tail[2] == 1000, f"ZCARD: {tail[2]}")
    check(tail[3] == [(b"player:998", 1998.0), (b"player:996", 1996.0),
                      (b"player:994", 1994.0)], f"top 3: {tail[3]}")
    check(tail[4] == [(b"player:1", 1.0), (b"player:3", 3.0)],
          f"bottom 2: {tail[4]}")

    # An error in the middle of a pipeline fails that command only.
    pipe = client.pipeline(transaction=False)
    pipe.zadd("scores", {"x": 1})
    pipe.execute_command("ZADD", "scores", "not-a-number", "y")
    pipe.execute_command("NOSUCHCOMMAND")
    pipe.zscore("scores", "x")
    results = pipe.execute(raise_on_error=False)
    check(results[0] == 1, "ZADD before the errors")
    check(isinstance(results[1], redis.ResponseError) and
          "score must be an integer from" in str(results[1]),
          f"bad score in a pipeline: {results[1]!r}")
    check(isinstance(results[2], redis.ResponseError) and
          "unknown command" in str(results[2]),
          f"unknown command in a pipeline: {results[2]!r}")
    check(results[3] == 1.0, "the command after the errors still runs")

    # Feed commands through execute_command.
    pipe = client.pipeline(transaction=False)
    for follower in range(100, 110):
        pipe.execute_command("FEED.FOLLOW", follower, 7)
    for i in range(20):
        pipe.execute_command("FEED.PUBLISH", 7, 5000 + i, 1_000_000 + i,
                             f"post {i}")
    pipe.execute_command("FEED.READ", 105, "LIMIT", 5)
    results = pipe.execute()
    check(results[:10] == [1] * 10, "FEED.FOLLOW in a pipeline")
    check(results[10:30] == [1] * 20, "FEED.PUBLISH in a pipeline")
    cursor, entries = results[30]
    check(cursor != b"0" and len(entries) == 5, f"first page: {results[30]}")
    check([e[0] for e in entries] == [b"5019", b"5018", b"5017", b"5016",
                                      b"5015"], f"page order: {entries}")
    check(entries[0][4] == b"post 19", f"payload: {entries[0]}")
    seen = [e[0] for e in entries]
    while cursor != b"0":
        cursor, entries = client.execute_command("FEED.READ", 105, "LIMIT", 5,
                                                 "CURSOR", cursor)
        seen += [e[0] for e in entries]
    check(seen == [str(5000 + i).encode() for i in reversed(range(20))],
          f"paging through the timeline: {seen}")
    print("ok: redis-py pipelines (sorted sets, errors, feeds)")


def next_message(pubsub):
    """The next pushed message (subscription confirmations skipped)."""
    for _ in range(100):
        message = pubsub.get_message(timeout=10)
        if message is not None and message["type"] in ("message", "pmessage"):
            return message
    fail("redis-py's PubSub received no message")


def check_pubsub(port):
    client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=10)
    pubsub = client.pubsub()
    pubsub.subscribe("room:1", "timeline:user:zoe")
    pubsub.psubscribe("room:*")
    # redis-py sends SUBSCRIBE without waiting: the confirmations say the
    # server has the subscriptions.
    confirmed = 0
    while confirmed < 3:
        message = pubsub.get_message(timeout=10)
        check(message is not None, "the subscriptions were not confirmed")
        confirmed += message["type"] in ("subscribe", "psubscribe")
    check(client.publish("room:1", "hi all") == 2, "PUBLISH to two")
    first, second = next_message(pubsub), next_message(pubsub)
    check(first["type"] == "message" and first["data"] == b"hi all",
          f"the channel's message: {first}")
    check(second["type"] == "pmessage" and second["pattern"] == b"room:*",
          f"the pattern's message: {second}")
    client.execute_command("FEED.FOLLOW", "user:zoe", "user:yan")
    client.execute_command("FEED.PUBLISH", "user:yan", "9001", "5", "yo")
    entry = next_message(pubsub)
    check(entry["channel"] == b"timeline:user:zoe" and
          entry["data"][:3] == [b"9001", b"user:yan", 5] and
          entry["data"][4] == b"yo", f"the timeline's push: {entry}")
    pubsub.close()
    print("ok: redis-py's PubSub gets a channel's, a pattern's and a "
          "timeline's messages")


def check_concurrent_clients(port):
    threads = 8
    increments = 2000
    errors = []

    def worker(index):
        try:
            client = redis.Redis(host="127.0.0.1", port=port,
                                 socket_timeout=20)
            pipe = client.pipeline(transaction=False)
            for i in range(increments):
                pipe.zincrby("race", 1, f"m{i % 50}")
                pipe.zincrby("race", 1, f"t{index}")
            pipe.execute()
        except Exception as error:  # reported below, on the main thread
            errors.append(repr(error))

    pool = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join(timeout=60)
    check(not errors, f"concurrent clients failed: {errors}")
    client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=10)
    check(client.zcard("race") == 50 + threads, "members after the race")
    total = sum(score for _, score in
                client.zrange("race", 0, -1, withscores=True))
    check(total == 2 * threads * increments,
          f"ZINCRBY lost updates: total {total}")
    for t in range(threads):
        check(client.zscore("race", f"t{t}") == increments,
              f"per-thread member t{t}")
    print(f"ok: {threads} concurrent pipelined clients, no lost increments")


class Resp3Reader:
    """Decodes RESP3 replies from a socket (enough for this server)."""

    def __init__(self, sock):
        self.sock = sock
        self.buffer = b""

    def _line(self):
        while b"\r\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                fail("connection closed in the middle of a reply")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line

    def _exactly(self, n):
        while len(self.buffer) < n + 2:
            chunk = self.sock.recv(65536)
            if not chunk:
                fail("connection closed in the middle of a bulk string")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n + 2:]
        return data

    def read(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            return ("error", rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b",":
            return float(rest)
        if kind == b"_":
            return None
        if kind == b"$":
            return self._exactly(int(rest))
        if kind == b"*":
            return [self.read() for _ in range(int(rest))]
        if kind == b"%":
            return {self.read(): self.read() for _ in range(int(rest))}
        fail(f"unexpected RESP3 type in line {line!r}")


def check_resp3_and_partial_reads(port):
    rng = random.Random(20240601)
    with connect(port) as sock:
        reader = Resp3Reader(sock)
        sock.sendall(encode("HELLO", 3))
        hello = reader.read()
        check(isinstance(hello, dict) and hello[b"proto"] == 3 and
              hello[b"server"] == b"redis" and
              hello[b"version"] == b"7.0.15" and b"feedcore_version" in hello,
              f"HELLO 3 reply: {hello}")

        commands = [
            encode("ZADD", "r3", 5, "a", 7, "b"),
            encode("ZSCORE", "r3", "b"),
            encode("ZSCORE", "r3", "missing"),
            encode("ZINCRBY", "r3", -10, "a"),
            encode("ZRANGE", "r3", 0, -1, "REV", "WITHSCORES"),
            b"PING\r\n",
            encode("CONFIG", "GET", "save"),
            encode("ZADD", "r3", "x", "a"),
            encode("ECHO", b"bin\r\n\x00ary"),
        ]
        stream = b"".join(commands)
        # Send the whole pipeline in random pieces of 1..7 bytes.
        pos = 0
        while pos < len(stream):
            step = rng.randint(1, 7)
            sock.sendall(stream[pos:pos + step])
            pos += step
        replies = [reader.read() for _ in commands]
        expected = [
            2, 7.0, None, -5.0, [[b"b", 7.0], [b"a", -5.0]], "PONG",
            {b"save": b""},
        ]
        check(replies[:7] == expected, f"RESP3 replies: {replies[:7]}")
        check(replies[7][0] == "error" and "score" in replies[7][1],
              f"RESP3 error: {replies[7]}")
        check(replies[8] == b"bin\r\n\x00ary", f"binary ECHO: {replies[8]}")

        # Back to RESP2 on the same connection.
        sock.sendall(encode("HELLO", 2) + encode("ZSCORE", "r3", "missing"))
        reader.read()
        line = reader._line()
        check(line == b"$-1", f"RESP2 null after HELLO 2: {line!r}")
    print("ok: RESP3 types, pipeline sent in 1..7-byte pieces, HELLO 2")


def fill_big_set(sock, members):
    """ZADD big with `members` distinct scores, 1000 pairs a command."""
    rng = random.Random(7)
    # Distinct, odd and even, half negative.
    scores = rng.sample(range(-2 * members, 2 * members), members)
    commands = []
    for start in range(0, members, 1000):
        pairs = []
        for i in range(start, min(members, start + 1000)):
            pairs += [scores[i], f"m:{i:06d}"]
        commands.append(encode("ZADD", "big", *pairs))
    sock.sendall(b"".join(commands))
    reader = RawReader(sock)
    for _ in commands:
        reader.read()


def zadd_race_free_commands(rng, count):
    """Random ZADD (every flag combination), ZINCRBY and ZREM on a few
    names, replies compared one by one."""
    flag_sets = [[], ["NX"], ["XX"], ["GT"], ["LT"], ["XX", "GT"],
                 ["XX", "LT"], ["CH"], ["NX", "CH"], ["XX", "CH"],
                 ["GT", "CH"], ["LT", "CH"], ["XX", "GT", "CH"],
                 ["INCR"], ["NX", "INCR"], ["XX", "INCR"], ["GT", "INCR"],
                 ["LT", "INCR"], ["XX", "GT", "INCR"], ["XX", "LT", "INCR"],
                 ["NX", "XX"], ["GT", "LT"], ["NX", "GT"]]
    names = ["a", "b", "c", "d", "e", "f"]
    commands = []
    for _ in range(count):
        kind = rng.random()
        if kind < 0.7:
            flags = rng.choice(flag_sets)
            pairs = []
            for _ in range(1 if "INCR" in flags else rng.randint(1, 3)):
                pairs += [rng.randint(-5, 5), rng.choice(names)]
            commands.append(["ZADD", "w", *flags, *pairs])
        elif kind < 0.85:
            commands.append(["ZINCRBY", "w", rng.randint(-3, 3),
                             rng.choice(names)])
        else:
            commands.append(["ZREM", "w", rng.choice(names),
                             rng.choice(names)])
        commands.append(["ZMSCORE", "w", *names])
    commands.append(["ZCARD", "w"])
    return commands


def range_commands(rng, members):
    """Range reads of `big` at every depth, then random ones."""
    last = members - 1
    commands = [
        ["ZRANGE", "big", 0, 9], ["ZRANGE", "big", 0, 9, "REV"],
        ["ZRANGE", "big", last - 9, last, "REV", "WITHSCORES"],
        ["ZRANGE", "big", last - 9, last, "WITHSCORES"],
        ["ZRANGE", "big", 12345, 12400], ["ZRANGE", "big", 999, 1001, "REV"],
        ["ZRANGE", "big", -10, -1], ["ZRANGE", "big", -1, -1, "REV"],
        ["ZRANGE", "big", -members - 5, 3], ["ZRANGE", "big", last - 2, 10**9],
        ["ZRANGE", "big", 5, 3], ["ZRANGE", "big", members, members + 5],
        ["ZRANGE", "big", 0, -1, "WITHSCORES"],
        ["ZRANGE", "big", 0, -1, "REV"],
        ["ZRANGE", "big", 2500, 4600, "REV"],
        ["ZREVRANGE", "big", 20000, 20010, "WITHSCORES"],
        ["ZREVRANGE", "big", -3, -1],
        ["ZRANGE", "big", -100, 100, "BYSCORE", "WITHSCORES"],
        ["ZRANGE", "big", "(-100", "(100", "BYSCORE"],
        ["ZRANGE", "big", 100, -100, "BYSCORE", "REV"],
        ["ZRANGE", "big", "-inf", "+inf", "BYSCORE", "LIMIT", 15000, 20],
        ["ZRANGE", "big", "+inf", "-inf", "BYSCORE", "REV", "LIMIT",
         members - 10, 100, "WITHSCORES"],
        ["ZRANGE", "big", "-inf", "+inf", "BYSCORE", "LIMIT", 0, -1],
        ["ZRANGE", "big", "-inf", "+inf", "BYSCORE", "LIMIT", -1, 5],
        ["ZRANGE", "big", "-inf", "+inf", "BYSCORE", "LIMIT", 10, 0],
        ["ZRANGE", "big", "(1.5", "10.5", "BYSCORE", "WITHSCORES"],
        ["ZRANGE", "big", "1e3", "(1.1e3", "BYSCORE"],
        ["ZRANGE", "big", "(2.0", "(2.5e1", "BYSCORE", "WITHSCORES"],
        ["ZRANGE", "big", "(-7.5", "-1.5", "BYSCORE", "WITHSCORES"],
        ["ZCOUNT", "big", "(-3.0", "(3.0"], ["ZCOUNT", "big", "-3.5", "3.5"],
        ["ZRANGE", "big", "(inf", "+inf", "BYSCORE"],
        ["ZRANGE", "big", "-inf", "(-inf", "BYSCORE"],
        ["ZRANGE", "big", "-9223372036854775808", "9223372036854775807",
         "BYSCORE", "LIMIT", 7, 3],
        ["ZRANGEBYSCORE", "big", "-inf", "+inf", "LIMIT", 29000, 5,
         "WITHSCORES"],
        ["ZRANGEBYSCORE", "big", 0, "(40", "WITHSCORES", "LIMIT", 1, 2],
        ["ZRANGEBYSCORE", "big", 0, 40, "LIMIT", 0, 1, "LIMIT", 1, 1],
        ["ZREVRANGEBYSCORE", "big", "+inf", "(0", "LIMIT", 14990, 20],
        ["ZREVRANGEBYSCORE", "big", "(50", "-50", "WITHSCORES"],
        ["ZREVRANGEBYSCORE", "big", "-50", "50"],
        ["ZCOUNT", "big", "-inf", "+inf"], ["ZCOUNT", "big", "(0", 1000],
        ["ZCOUNT", "big", "(-2", "(2"], ["ZCOUNT", "big", 7, 3],
        ["ZCOUNT", "big", "1.5", "(9.5"], ["ZCOUNT", "big", "(inf", "inf"],
        ["ZCOUNT", "nokey", 0, 1], ["ZRANGE", "nokey", 0, -1],
        ["ZRANGE", "nokey", 0, 1, "BYSCORE"],
        ["ZMSCORE", "big", "m:000001", "nosuch", "m:029999"],
        ["ZMSCORE", "nokey", "a", "b"],
        # Errors: compared as errors only.
        ["ZRANGE", "big", 0, -1, "LIMIT", 0, 2],
        ["ZRANGE", "big", "x", 1, "BYSCORE"], ["ZCOUNT", "big", "a", 3],
        ["ZRANGEBYSCORE", "big", "nan", 1], ["ZRANGEBYSCORE", "big", 1, 2,
                                             "LIMIT", 0],
        ["ZRANGE", "big", 0, 1, "BYSCORE", "LIMIT", "x", 1],
        ["ZRANGEBYSCORE", "big", 1, 2, "REV"], ["ZREVRANGE", "big", 0, 1,
                                                "REV"],
        ["ZRANGE", "big", 1, "x"],
    ]
    for _ in range(150):
        kind = rng.random()
        start = rng.randint(-members - 10, members + 10)
        stop = rng.randint(start - 5, start + rng.choice([0, 10, 1500]))
        if kind < 0.35:
            commands.append(["ZRANGE", "big", start, stop,
                             *rng.choice([[], ["REV"], ["WITHSCORES"],
                                          ["REV", "WITHSCORES"]])])
        else:
            low = rng.randint(-members - 10, members + 10)
            high = low + rng.choice([1, 50, 3000, 2 * members])
            # Integers, and numbers that are not (or are, written as
            # doubles), which feedcore rounds inward.
            low_word = rng.choice(["", "("]) + str(low) + rng.choice(
                ["", "", ".5", "e0", ".0"])
            high_word = rng.choice(["", "("]) + str(high) + rng.choice(
                ["", "", ".5", "e0", ".0"])
            limit = rng.choice([[], ["LIMIT", rng.randint(0, members),
                                     rng.choice([-1, 0, 5, 1200])]])
            if kind < 0.5:
                commands.append(["ZCOUNT", "big", low_word, high_word])
            elif kind < 0.75:
                commands.append(["ZRANGEBYSCORE", "big", low_word,
                                 high_word, *limit])
            else:
                commands.append(["ZRANGE", "big", high_word, low_word,
                                 "BYSCORE", "REV", *limit, "WITHSCORES"])
    return commands


def compare_replies(feedcore, redis_server, commands, what):
    """Sends every command to both sockets (pipelined) and requires equal
    replies (errors: both errors)."""
    feedcore_reader = RawReader(feedcore)
    redis_reader = RawReader(redis_server)
    stream = b"".join(encode(*command) for command in commands)
    for sock in (feedcore, redis_server):
        sock.sendall(stream)
    for command in commands:
        mine = feedcore_reader.read()
        theirs = redis_reader.read()
        if mine.startswith(b"-") and theirs.startswith(b"-"):
            continue
        if mine != theirs:
            fail(f"{what}: {' '.join(map(str, command))}: feedcore-server "
                 f"replied {mine[:300]!r}, redis-server {theirs[:300]!r}")


def check_against_redis_server(port):
    members = 30000
    rng = random.Random(20240602)
    with running_redis_server() as redis_port:
        for protocol in (2, 3):
            with connect(port, timeout=60) as feedcore, \
                    connect(redis_port, timeout=60) as redis_server:
                if protocol == 3:
                    for sock in (feedcore, redis_server):
                        sock.sendall(encode("HELLO", 3))
                        RawReader(sock).read()
                for sock in (feedcore, redis_server):
                    sock.sendall(encode("DEL", "w", "big"))
                    RawReader(sock).read()
                compare_replies(feedcore, redis_server,
                                zadd_race_free_commands(rng, 600),
                                f"RESP{protocol} writes")
                for sock in (feedcore, redis_server):
                    fill_big_set(sock, members)
                compare_replies(feedcore, redis_server,
                                range_commands(rng, members),
                                f"RESP{protocol} ranges")
    print(f"ok: ZADD flags, ZINCRBY, ZREM, ZMSCORE, ZCOUNT and ZRANGE "
          f"variants on {members} members equal redis-server's replies "
          f"(RESP2 and RESP3)")


def main():
    if len(sys.argv) != 2:
        fail("usage: redis_py_test.py <feedcore-server>")
    with running_server(sys.argv[1]) as port:
        check_pipelining(port)
        check_concurrent_clients(port)
        check_pubsub(port)
        check_resp3_and_partial_reads(port)
        check_against_redis_server(port)


if __name__ == "__main__":
    main()
