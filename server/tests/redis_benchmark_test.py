"""redis-benchmark runs against feedcore-server with no error: its built-in
tests the server has commands for, pipelined (-P 16) and in RESP3 (-3),
and command lines of sorted-set and feed commands. Speed is not checked.

Usage: redis_benchmark_test.py <path to feedcore-server>

redis-benchmark stops at the first error reply ("Error from server: ...")
and exits 1, and warns when a start-up query (CONFIG GET) fails, so each
run must exit 0, print no error or warning, and report a
requests-per-second line for each of its tests; then INFO commandstats
must show that the server ran at least the requests sent. redis-benchmark
has no MULTI/EXEC test; server/run-redis-comparison times EXEC.
"""

import re
import subprocess
import sys

from server_harness import fail, require_tool, running_server

REQUESTS = 2000
RUN_TIMEOUT_S = 60

# redis-benchmark's -t tests that need only sorted sets, each with the
# command it sends; a test whose command the server lacks is left out.
BUILT_IN_TESTS = {
    "ping_inline": "ping",
    "ping_mbulk": "ping",
    "zadd": "zadd",
    "zpopmin": "zpopmin",
}
# Command lines: __rand_int__ is a random number below -r. A repeated
# FEED.PUBLISH id is the same activity (same actor, ts and payload), which
# the server answers 0, not an error.
COMMAND_LINES = [
    ["ZINCRBY", "leaderboard", "1", "player:__rand_int__"],
    ["ZSCORE", "leaderboard", "player:__rand_int__"],
    ["ZREVRANK", "leaderboard", "player:__rand_int__"],
    ["ZRANGE", "leaderboard", "0", "9", "REV", "WITHSCORES"],
    ["FEED.FOLLOW", "__rand_int__", "1000000"],
    ["FEED.PUBLISH", "1000000", "__rand_int__", "1700000000000000", "hello"],
    ["FEED.READ", "__rand_int__", "LIMIT", "10"],
    # Entities by name: the first FEED.FOLLOW of a name gives it its id.
    ["FEED.FOLLOW", "user:__rand_int__", "room:general"],
    ["FEED.READ", "user:__rand_int__", "LIMIT", "10", "NAMES"],
]


def redis_cli(port, *args):
    result = subprocess.run(
        ["redis-cli", "-h", "127.0.0.1", "-p", str(port), *args],
        capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    if result.returncode != 0:
        fail(f"redis-cli {' '.join(args)}: {result.stderr}")
    return result.stdout


def server_commands(port):
    return set(redis_cli(port, "COMMAND", "LIST").split())


def command_calls(port):
    calls = {}
    for line in redis_cli(port, "INFO", "commandstats").splitlines():
        match = re.match(r"cmdstat_([^:]+):calls=(\d+),", line)
        if match:
            calls[match.group(1)] = int(match.group(2))
    return calls


def run_benchmark(port, flags, expected_titles):
    """Runs redis-benchmark with flags; expected_titles are the test names
    it must report a rate for."""
    command = ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port),
               "-n", str(REQUESTS), "-q", *flags]
    shown = " ".join(command[5:])
    try:
        result = subprocess.run(command, capture_output=True, text=True,
                                timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        fail(f"redis-benchmark {shown} did not finish within "
             f"{RUN_TIMEOUT_S} s")
    output = result.stdout + result.stderr
    # -q rewrites a progress line with carriage returns; keep the finals.
    lines = [part.strip() for part in re.split(r"[\r\n]", output)]
    errors = [line for line in lines
              if re.search(r"error|warning", line, re.IGNORECASE)]
    if result.returncode != 0 or errors:
        fail(f"redis-benchmark {shown} exited {result.returncode}: "
             f"{errors or output!r}")
    for title in expected_titles:
        pattern = re.compile(re.escape(title) +
                             r": [0-9.]+ requests per second")
        if not any(pattern.search(line) for line in lines):
            fail(f"redis-benchmark {shown} reported no rate for {title}: "
                 f"{output!r}")


def main():
    if len(sys.argv) != 2:
        fail("usage: redis_benchmark_test.py <feedcore-server>")
    require_tool("redis-cli", "redis-tools")
    require_tool("redis-benchmark", "redis-tools")
    with running_server(sys.argv[1]) as port:
        commands = server_commands(port)
        tests = [t for t, c in BUILT_IN_TESTS.items() if c in commands]
        left_out = sorted(set(BUILT_IN_TESTS) - set(tests))
        if "ping_inline" not in tests or "zadd" not in tests:
            fail(f"COMMAND LIST lacks PING or ZADD: {sorted(commands)}")
        titles = [t.upper() for t in tests]
        before = command_calls(port)
        runs = [[], ["-P", "16"], ["-3"], ["-r", "1000", "-P", "16"]]
        for flags in runs:
            run_benchmark(port, ["-t", ",".join(tests), *flags], titles)
        for line in COMMAND_LINES:
            for flags in (["-r", "1000"], ["-r", "1000", "-P", "16"]):
                run_benchmark(port, [*flags, *line], [" ".join(line)])
        after = command_calls(port)

        expected = {}
        for test in tests:
            command = BUILT_IN_TESTS[test]
            expected[command] = expected.get(command, 0) + REQUESTS * len(runs)
        for line in COMMAND_LINES:
            command = line[0].lower()
            expected[command] = expected.get(command, 0) + REQUESTS * 2
        for command, count in expected.items():
            ran = after.get(command, 0) - before.get(command, 0)
            if ran < count:
                fail(f"INFO commandstats: {command} ran {ran} times, "
                     f"redis-benchmark sent {count}")
        followers = redis_cli(port, "FEED.COUNTS", "1000000").split()
        if not followers or int(followers[0]) == 0:
            fail(f"FEED.COUNTS 1000000 after FEED.FOLLOW: {followers}")
    print(f"ok: redis-benchmark -t {','.join(tests)} (plain, -P 16, -3, "
          f"-r) and {len(COMMAND_LINES)} command lines, {REQUESTS} requests "
          f"each, no error" +
          (f"; left out, no such command: {', '.join(left_out)}"
           if left_out else ""))


if __name__ == "__main__":
    main()
