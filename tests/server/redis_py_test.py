"""feedcore-server driven by the Python redis package: pipelining, several
concurrent clients, and RESP3.

Usage: redis_py_test.py <path to feedcore-server>

The Python redis package of Debian 12 (python3-redis 4.3) speaks RESP2
only, so RESP3 is checked with a small decoder of its own over a raw
socket; the same socket sends pipelined commands in small random pieces to
exercise partial reads.
"""

import random
import sys
import threading

from server_harness import connect, fail, running_server

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
          "score must be a decimal integer" in str(results[1]),
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


def encode(*args):
    out = b"*%d\r\n" % len(args)
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        out += b"$%d\r\n%s\r\n" % (len(data), data)
    return out


def check_resp3_and_partial_reads(port):
    rng = random.Random(20240601)
    with connect(port) as sock:
        reader = Resp3Reader(sock)
        sock.sendall(encode("HELLO", 3))
        hello = reader.read()
        check(isinstance(hello, dict) and hello[b"proto"] == 3 and
              hello[b"server"] == b"feedcore", f"HELLO 3 reply: {hello}")

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


def main():
    if len(sys.argv) != 2:
        fail("usage: redis_py_test.py <feedcore-server>")
    with running_server(sys.argv[1]) as port:
        check_pipelining(port)
        check_concurrent_clients(port)
        check_resp3_and_partial_reads(port)


if __name__ == "__main__":
    main()
