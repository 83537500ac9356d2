"""feedcore-server driven by redis-cli: every command and every error.

Usage: redis_cli_test.py <path to feedcore-server>

Each step runs one redis-cli command against the server (127.0.0.1, a free
port) and compares its formatted output (--no-raw, as in a terminal) with
the expected text. Steps run in order and build on each other. Sessions
then pipe several commands into one redis-cli, which sends them over one
connection as a script piped into it does (MULTI/EXEC, WATCH, CLIENT),
and `redis-cli --pipe` mass-inserts a stream of RESP commands.
Then raw sockets check what redis-cli cannot send: inline commands,
malformed streams (only that connection closes), the connection limit.
"""

import re
import subprocess
import sys
import time

from server_harness import (connect, fail, read_until_closed, require_tool,
                            running_server)

CLI_TIMEOUT_S = 10

# (arguments, expected output). A leading "-3" runs redis-cli in RESP3.
# An expected value starting with "re:" is a regular expression; one
# starting with "sorted:" is compared with the output's lines sorted.
STEPS = [
    # Connection and server commands.
    (["PING"], "PONG"),
    (["PING", "hello"], '"hello"'),
    (["ECHO", "a b"], '"a b"'),
    (["COMMAND", "COUNT"], "(integer) 156"),
    (["COMMAND", "INFO", "zadd"],
     're:^1\\)  1\\) "zadd"\n    2\\) \\(integer\\) -4\n    3\\) 1\\) write'),
    (["COMMAND", "DOCS"], "(empty array)"),
    (["CONFIG", "GET", "appendonly"], '1) "appendonly"\n2) "no"'),
    (["-3", "HELLO", "3"],
     're:^1# "server" => "redis"\n2# "version" => "7.0.15"\n'
     '3# "feedcore_version" => "[0-9.]+"\n4# "proto" => \\(integer\\) 3\n'),
    (["HELLO", "4"], "(error) NOPROTO unsupported protocol version '4'; "
     "this server speaks 2 and 3"),
    (["QUIT"], "OK"),

    # Sorted sets.
    (["ZADD", "board", "10", "alice", "20", "bob", "15", "carol"],
     "(integer) 3"),
    (["ZADD", "board", "NX", "99", "alice", "5", "dave"], "(integer) 1"),
    (["ZADD", "board", "XX", "CH", "12", "alice", "1", "erin"], "(integer) 1"),
    (["ZADD", "board", "GT", "CH", "1", "bob"], "(integer) 0"),
    (["ZADD", "board", "INCR", "3", "alice"], '"15"'),
    (["ZINCRBY", "board", "100", "dave"], '"105"'),
    (["ZSCORE", "board", "bob"], '"20"'),
    (["-3", "ZSCORE", "board", "bob"], "(double) 20"),
    (["ZSCORE", "board", "nobody"], "(nil)"),
    (["ZREVRANK", "board", "dave"], "(integer) 0"),
    (["ZREVRANK", "board", "nobody"], "(nil)"),
    (["ZRANK", "board", "dave"], "(integer) 3"),
    (["ZCARD", "board"], "(integer) 4"),
    # carol reached 15 before alice did, so she ranks above her.
    (["ZRANGE", "board", "0", "-1", "REV", "WITHSCORES"],
     '1) "dave"\n2) "105"\n3) "bob"\n4) "20"\n5) "carol"\n6) "15"\n'
     '7) "alice"\n8) "15"'),
    (["ZRANGE", "board", "0", "1"], '1) "alice"\n2) "carol"'),
    (["ZREVRANGE", "board", "1", "1", "WITHSCORES"], '1) "bob"\n2) "20"'),
    (["-3", "ZRANGE", "board", "0", "0", "REV", "WITHSCORES"],
     '1) 1) "dave"\n   2) (double) 105'),
    (["ZRANGE", "board", "5", "10"], "(empty array)"),
    (["ZRANGE", "board", "(15", "+inf", "BYSCORE", "WITHSCORES"],
     '1) "bob"\n2) "20"\n3) "dave"\n4) "105"'),
    (["ZRANGE", "board", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", "1",
      "2"], '1) "bob"\n2) "carol"'),
    # Lowest first, so alice (who reached 15 last) before carol.
    (["ZRANGEBYSCORE", "board", "15", "20", "LIMIT", "1", "-1"],
     '1) "carol"\n2) "bob"'),
    (["ZREVRANGEBYSCORE", "board", "(105", "-inf", "LIMIT", "0", "1"],
     '1) "bob"'),
    (["ZCOUNT", "board", "(15", "+inf"], "(integer) 2"),
    (["ZCOUNT", "board", "15.5", "1e9"], "(integer) 2"),
    (["ZMSCORE", "board", "bob", "nobody"], '1) "20"\n2) (nil)'),
    (["-3", "ZMSCORE", "board", "bob"], "1) (double) 20"),
    (["ZREM", "board", "carol", "nobody"], "(integer) 1"),
    (["ZCARD", "board"], "(integer) 3"),
    (["DEL", "board", "nokey"], "(integer) 1"),
    (["ZCARD", "board"], "(integer) 0"),

    # Feeds.
    (["FEED.FOLLOW", "1", "42"], "(integer) 1"),
    (["FEED.FOLLOW", "2", "42", "BACKFILL", "0"], "(integer) 1"),
    (["FEED.FOLLOW", "1", "42"], "(integer) 0"),
    (["FEED.COUNTS", "42"], "1) (integer) 2\n2) (integer) 0"),
    (["FEED.PUBLISH", "42", "7", "1700000000000000", "live now"],
     "(integer) 1"),
    (["FEED.PUBLISH", "42", "7", "1700000000000000", "live now"],
     "(integer) 0"),
    (["FEED.PUBLISH", "42", "8", "1700000000000001", "second", "TTL",
      "60000"], "(integer) 1"),
    (["FEED.READ", "1", "LIMIT", "1"],
     're:^1\\) "[A-Za-z0-9_-]{8,}"\n2\\) 1\\) 1\\) "8"\n      2\\) "42"\n'
     '      3\\) \\(integer\\) 1700000000000001\n      4\\) \\(integer\\) \\d+\n'
     '      5\\) "second"$'),
    (["FEED.READ", "2", "REV"],
     're:^1\\) "0"\n2\\) 1\\) 1\\) "7"\n.*\n.*\n.*\n      5\\) "live now"\n'
     '   2\\) 1\\) "8"'),
    (["FEED.OWN", "42", "LIMIT", "5"], 're:^1\\) "0"\n2\\) 1\\) 1\\) "8"'),
    (["FEED.WORLD", "LIMIT", "1", "REV"], 're:^1\\) "[A-Za-z0-9_-]{8,}"\n2\\) 1\\) 1\\) "7"'),
    (["FEED.FOLLOWERS", "42"], 're:^1\\) "0"\n2\\) 1\\) "[12]"\n   2\\) "[12]"$'),
    (["FEED.FOLLOWING", "1"], '1) "0"\n2) 1) "42"'),
    (["FEED.RETRACT", "8"], "OK"),
    (["FEED.READ", "1"], 're:^1\\) "0"\n2\\) 1\\) 1\\) "7"\n(.*\n){3}      5\\) "live now"$'),
    (["FEED.MARKER.GET", "1", "home", "1"],
     "1) (nil)\n2) (integer) 1\n3) (integer) 0\n4) (integer) 0"),
    (["FEED.MARKER.SET", "1", "home", "1", "1700000000000000", "7"],
     "(integer) 1"),
    (["FEED.MARKER.GET", "1", "home", "1", "MAX", "5"],
     '1) 1) (integer) 1700000000000000\n   2) "7"\n2) (integer) 0\n'
     '3) (integer) 0\n4) (integer) 0'),
    (["FEED.EDIT", "42", "7", "live again"], "re:^\\(integer\\) \\d+$"),
    (["FEED.PIN", "42", "7"], "(integer) 1"),
    (["FEED.PINNED", "42", "WITHEDITS"],
     're:^1\\) 1\\) "7"\n   2\\) "42"\n   3\\) \\(integer\\) '
     '1700000000000000\n   4\\) \\(integer\\) \\d+\n   5\\) "live again"\n'
     '   6\\) \\(integer\\) [1-9]\\d*$'),
    (["FEED.UNPIN", "42", "7"], "(integer) 1"),
    (["FEED.UNFOLLOW", "1", "42"], "(integer) 1"),
    (["FEED.READ", "1"], '1) "0"\n2) (empty array)'),

    # Errors: each is a reply; the next step shows the server still serves.
    (["NOSUCH", "x"],
     "(error) ERR unknown command 'NOSUCH', with args beginning with: 'x' "),
    (["ZADD", "board", "1"],
     "(error) ERR wrong number of arguments for 'zadd' command"),
    (["FEED.READ"],
     "(error) ERR wrong number of arguments for 'feed.read' command"),
    (["ZADD", "board", "1.5", "alice"],
     "(error) ERR score must be an integer from -9223372036854775808 "
     "to 9223372036854775807, got '1.5' (feedcore leaderboards hold int64 "
     "scores)"),
    (["ZINCRBY", "board", "x", "alice"],
     "re:^\\(error\\) ERR increment must be an integer from"),
    (["ZADD", "board", "NX", "XX", "1", "a"],
     "(error) ERR XX and NX options at the same time are not compatible"),
    (["ZRANGE", "board", "a", "[c", "BYLEX"],
     "re:^\\(error\\) ERR min or max not valid string range item"),
    (["ZRANGE", "board", "0", "-1", "LIMIT", "0", "1"],
     "(error) ERR syntax error, LIMIT is only supported in combination with "
     "either BYSCORE or BYLEX"),
    (["ZCOUNT", "board", "x", "1"],
     "re:^\\(error\\) ERR min or max is not a float"),
    (["FEED.READ", "1", "CURSOR", "not-a-cursor"], "re:^\\(error\\) ERR .*cursor"),
    (["FEED.READ", "1", "LIMIT", "0"],
     "(error) ERR LIMIT must be an integer from 1 to 100000, got '0'"),
    (["FEED.READ", "18446744073709551616"],
     "(error) ERR user must be a decimal id from 0 to 18446744073709551615, "
     "got '18446744073709551616'"),
    # A name nothing has used reads as an entity with nothing.
    (["FEED.READ", "user:nobody"], '1) "0"\n2) (empty array)'),
    (["FEED.PUBLISH", "42", "9", "-1", "x"],
     "re:^\\(error\\) ERR ts \\(microseconds, or \\* for now\\) must be"),
    (["FEED.PUBLISH", "42", "7", "1", "different"], "re:^\\(error\\) ERR "),
    (["FEED.RETRACT", "12345"], "re:^\\(error\\) ERR "),
    (["FEED.FOLLOW", "3", "3"], "re:^\\(error\\) ERR "),
    (["ECHO", "x" * 2000],
     "(error) ERR Protocol error: invalid bulk length: 2000 bytes, more than "
     "the limit of 1024 (--max_bulk_bytes)"),
    (["CONFIG", "SET", "a", "b"], "(error) ERR Unknown option or number of "
     "arguments for CONFIG SET - 'a'"),
    # Started without --snapshot_file.
    (["SAVE"], "(error) ERR snapshots are off: start the server with "
     "--snapshot_file"),
    (["PING"], "PONG"),

    # Keyspace and server introspection.
    (["ZADD", "user:1:score", "10", "a"], "(integer) 1"),
    (["ZADD", "user:2:score", "20", "a"], "(integer) 1"),
    (["ZADD", "user:3:score", "30", "a"], "(integer) 1"),
    (["ZADD", "room:1", "1", "a"], "(integer) 1"),
    (["DBSIZE"], "(integer) 4"),
    (["--scan", "--pattern", "user:*"],
     'sorted:"user:1:score"\n"user:2:score"\n"user:3:score"'),
    (["--scan", "--pattern", "*:[13]*"], 'sorted:"room:1"\n"user:1:score"\n'
     '"user:3:score"'),
    (["--scan", "--pattern", "nomatch:*"], ""),
    (["INFO", "server"],
     "re:^# Server\r?\nredis_version:7\\.0\\.15\r?\n(.*\n)*"
     "redis_mode:standalone\r?$"),
    (["CLIENT", "LIST"],
     "re:^id=\\d+ addr=127\\.0\\.0\\.1:\\d+ laddr=127\\.0\\.0\\.1:\\d+ "
     "name= age=\\d+ .* user=default resp=2"),
    (["FLUSHDB"], "OK"),
    (["DBSIZE"], "(integer) 0"),
    (["--scan"], ""),
]

# (lines piped into one redis-cli, expected output): one connection.
SESSIONS = [
    (["MULTI", "ZADD tx 1 a 2 b", "ZINCRBY tx 5 a", "ZCARD tx",
      "ZRANGE tx 0 -1 WITHSCORES", "EXEC"],
     'OK\nQUEUED\nQUEUED\nQUEUED\nQUEUED\n1) (integer) 2\n2) "6"\n'
     '3) (integer) 2\n4) 1) "b"\n   2) "2"\n   3) "a"\n   4) "6"'),
    # A command refused while queued aborts the transaction: tx unchanged.
    (["MULTI", "ZADD tx 1 c", "ZADD tx", "EXEC", "ZCARD tx", "EXEC"],
     "OK\nQUEUED\n(error) ERR wrong number of arguments for 'zadd' command\n"
     "(error) EXECABORT Transaction discarded because of previous errors.\n"
     "(integer) 2\n(error) ERR EXEC without MULTI"),
    (["MULTI", "ZADD tx 1 c", "DISCARD", "ZCARD tx", "DISCARD"],
     "OK\nQUEUED\nOK\n(integer) 2\n(error) ERR DISCARD without MULTI"),
    # A write to a watched key, here by the watching client itself, makes
    # EXEC return nil; a fresh WATCH with no write commits.
    (["WATCH tx", "ZADD tx 9 a", "MULTI", "ZADD tx 1 c", "EXEC", "WATCH tx",
      "MULTI", "ZADD tx 1 c", "EXEC", "ZCARD tx"],
     "OK\n(integer) 0\nOK\nQUEUED\n(nil)\nOK\nOK\nQUEUED\n"
     "1) (integer) 1\n(integer) 3"),
    (["CLIENT SETNAME cli-session", "CLIENT GETNAME", "CLIENT LIST",
      "DEL tx"],
     're:^OK\n"cli-session"\nid=\\d+ addr=127\\.0\\.0\\.1:\\d+ .*'
     'name=cli-session .*\n\\(integer\\) 1$'),
]


def run_cli(port, args):
    resp3 = args[:1] == ["-3"]
    if resp3:
        args = args[1:]
    command = ["redis-cli", "-h", "127.0.0.1", "-p", str(port), "--no-raw"]
    if resp3:
        command.append("-3")
    result = subprocess.run(command + args, capture_output=True, text=True,
                            timeout=CLI_TIMEOUT_S)
    return (result.stdout + result.stderr).rstrip("\n")


def run_session(port, lines):
    result = subprocess.run(
        ["redis-cli", "-h", "127.0.0.1", "-p", str(port), "--no-raw"],
        input="\n".join(lines) + "\n", capture_output=True, text=True,
        timeout=CLI_TIMEOUT_S)
    return (result.stdout + result.stderr).rstrip("\n")


def matches(expected, output):
    if expected.startswith("re:"):
        return re.search(expected[3:], output, re.DOTALL | re.MULTILINE) \
            is not None
    if expected.startswith("sorted:"):
        return sorted(output.split("\n")) == expected[7:].split("\n")
    return output == expected


def check_steps(port):
    failures = 0
    for args, expected in STEPS:
        output = run_cli(port, args)
        if not matches(expected, output):
            failures += 1
            shown = " ".join(a if len(a) < 40 else a[:20] + "..." for a in args)
            print(f"MISMATCH for {shown}\n  expected: {expected!r}\n"
                  f"  got:      {output!r}", file=sys.stderr)
    for lines, expected in SESSIONS:
        output = run_session(port, lines)
        if not matches(expected, output):
            failures += 1
            print(f"MISMATCH for the session {' / '.join(lines)}\n"
                  f"  expected: {expected!r}\n  got:      {output!r}",
                  file=sys.stderr)
    if failures:
        fail(f"{failures} of {len(STEPS) + len(SESSIONS)} redis-cli steps "
             "and sessions did not match")
    print(f"ok: {len(STEPS)} redis-cli steps, {len(SESSIONS)} sessions")


def check_pipe_mode(port):
    """redis-cli --pipe, the mass insertion of a file of RESP commands."""
    members = 1000
    commands = b"".join(
        b"*4\r\n$4\r\nZADD\r\n$4\r\nmass\r\n$%d\r\n%d\r\n"
        b"$%d\r\nm%d\r\n" % (len(str(i)), i, len(str(i)) + 1, i)
        for i in range(members))
    result = subprocess.run(
        ["redis-cli", "-h", "127.0.0.1", "-p", str(port), "--pipe"],
        input=commands, capture_output=True, timeout=CLI_TIMEOUT_S)
    output = (result.stdout + result.stderr).decode(errors="replace")
    if result.returncode != 0 or \
            f"errors: 0, replies: {members}" not in output:
        fail(f"redis-cli --pipe exited {result.returncode}: {output!r}")
    cards = [run_cli(port, ["ZCARD", "mass"]), run_cli(port, ["DEL", "mass"])]
    if cards != [f"(integer) {members}", "(integer) 1"]:
        fail(f"after redis-cli --pipe: {cards}")
    print(f"ok: redis-cli --pipe of {members} ZADD")


def check_inline_and_malformed(port):
    # Inline commands, as typed into telnet.
    with connect(port) as sock:
        sock.sendall(b"PING\r\nECHO \"two words\"\r\nZCARD nokey\n")
        expected = b"+PONG\r\n$9\r\ntwo words\r\n:0\r\n"
        data = b""
        while len(data) < len(expected):
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
        if data != expected:
            fail(f"inline commands: got {data!r}, expected {expected!r}")

    # A malformed stream: the replies before it, then the protocol error,
    # then that connection closes. A second connection, open all along,
    # keeps working.
    with connect(port) as bystander, connect(port) as sock:
        sock.sendall(b"*1\r\n$4\r\nPING\r\n*1\r\n+oops\r\n*1\r\n$4\r\nPING\r\n")
        data = read_until_closed(sock)
        expected = b"+PONG\r\n-ERR Protocol error: expected '$', got '+'\r\n"
        if data != expected:
            fail(f"malformed stream: got {data!r}, expected {expected!r}")
        bystander.sendall(b"*1\r\n$4\r\nPING\r\n")
        if bystander.recv(100) != b"+PONG\r\n":
            fail("a malformed stream on one connection disturbed another")

    # An oversized bulk length is refused at its header, before any of its
    # bytes are sent, and the connection is closed.
    with connect(port) as sock:
        sock.sendall(b"*2\r\n$4\r\nECHO\r\n$2147483647\r\n")
        data = read_until_closed(sock)
        expected = (b"-ERR Protocol error: invalid bulk length: 2147483647 "
                    b"bytes, more than the limit of 1024 (--max_bulk_bytes)"
                    b"\r\n")
        if data != expected:
            fail(f"oversized bulk: got {data!r}, expected {expected!r}")
    print("ok: inline commands, malformed stream, oversized bulk string")


def connect_served(port):
    """A connection that answers PING. The server notices the close of the
    earlier checks' connections asynchronously (later on a loaded machine),
    so one may still be refused for a moment."""
    deadline = time.monotonic() + 5
    while True:
        sock = connect(port)
        sock.sendall(b"PING\r\n")
        data = sock.recv(100)
        if data == b"+PONG\r\n":
            return sock
        sock.close()
        if time.monotonic() > deadline:
            fail(f"a connection under the limit was not served: {data!r}")
        time.sleep(0.05)


def check_connection_limit(port, max_clients):
    held = []
    try:
        for _ in range(max_clients):
            held.append(connect_served(port))
        extra = connect(port)
        data = read_until_closed(extra)
        extra.close()
        if data != b"-ERR max number of clients reached\r\n":
            fail(f"connection over the limit: got {data!r}")
    finally:
        for sock in held:
            sock.close()
    # Closed connections free their places (the server notices the close
    # asynchronously, so allow it a moment).
    deadline = time.monotonic() + 5
    while True:
        with connect(port) as sock:
            sock.sendall(b"PING\r\n")
            data = sock.recv(100)
        if data == b"+PONG\r\n":
            break
        if time.monotonic() > deadline:
            fail(f"connection limit not released after closing: {data!r}")
        time.sleep(0.05)
    print(f"ok: connection limit of {max_clients}")


def main():
    if len(sys.argv) != 2:
        fail("usage: redis_cli_test.py <feedcore-server>")
    require_tool("redis-cli", "redis-tools")
    max_clients = 8
    with running_server(sys.argv[1], "--max_bulk_bytes=1024",
                        "--max_request_bytes=4096",
                        f"--max_clients={max_clients}") as port:
        check_steps(port)
        check_pipe_mode(port)
        check_inline_and_malformed(port)
        check_connection_limit(port, max_clients)
        # An idle client must not delay shutdown.
        idle = connect(port)
    idle.close()
    print("ok: clean shutdown on SIGTERM")


if __name__ == "__main__":
    main()
