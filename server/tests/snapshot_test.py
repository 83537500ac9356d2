"""feedcore-server snapshots: SAVE, --load and --snapshot_on_exit.

Usage: snapshot_test.py <path to feedcore-server>

In a temporary directory: a server with --snapshot_file gets feeds and
sorted sets through redis-cli (names such as "player:alice", ties,
negative scores, a deleted and re-created key), SAVEs, takes more writes
and stops on SIGTERM; a second server started with --load must answer
every read as the first did at the SAVE. Then the same across a restart
with --snapshot_on_exit, a --load of a missing file (starts empty), a
failed save on exit (non-zero exit) and a damaged snapshot (the server
refuses to start and says why).
"""

import os
import shutil
import subprocess
import sys
import tempfile

from server_harness import (fail, require_tool, running_server,
                            server_process, stop_server)

CLI_TIMEOUT_S = 10
START_TIMEOUT_S = 10

WRITES = [
    ["ZADD", "lb", "10", "player:bob", "-7", "player:carol"],
    # Ties with bob: bob reached 10 first and ranks above.
    ["ZADD", "lb", "10", "player:alice", "3", "player:gone"],
    ["ZREM", "lb", "player:gone"],
    ["ZINCRBY", "lb", "-20", "player:dave"],
    ["ZADD", "lb", "10", "player:erin with spaces"],
    ["ZADD", "deleted", "1", "x"],
    ["ZADD", "recreated", "1", "old"],
    ["DEL", "deleted", "recreated"],
    ["ZADD", "recreated", "-5", "new", "-5", "newer"],
    ["FEED.FOLLOW", "1", "2"],
    ["FEED.FOLLOW", "1", "3"],
    ["FEED.FOLLOW", "4", "1"],
] + [
    ["FEED.PUBLISH", str(2 + i % 2), str(100 + i), str(1_000_000 + i),
     f"payload {i}"]
    for i in range(7)
]

# Stands for the cursor that the first two-entry page of FEED.READ 1
# returned; read_all substitutes it.
FIRST_PAGE_CURSOR = "<cursor of the first page>"

READS = [
    ["ZRANGE", "lb", "0", "-1", "WITHSCORES"],
    ["ZRANGE", "lb", "0", "-1", "REV", "WITHSCORES"],
    ["-3", "ZRANGE", "lb", "0", "-1", "WITHSCORES"],
    ["ZRANGE", "recreated", "0", "-1", "WITHSCORES"],
    ["ZSCORE", "lb", "player:alice"],
    ["ZSCORE", "lb", "player:dave"],
    ["ZSCORE", "lb", "player:gone"],
    ["ZREVRANK", "lb", "player:alice"],
    ["ZREVRANK", "lb", "player:bob"],
    ["ZREVRANK", "lb", "player:erin with spaces"],
    ["ZRANK", "lb", "player:dave"],
    ["ZCARD", "lb"],
    ["ZCARD", "deleted"],
    ["ZCARD", "recreated"],
    ["FEED.READ", "1"],
    ["FEED.READ", "1", "LIMIT", "2"],
    ["FEED.READ", "1", "LIMIT", "2", "CURSOR", FIRST_PAGE_CURSOR],
    ["FEED.READ", "1", "REV", "LIMIT", "3"],
    ["FEED.OWN", "2"],
    ["FEED.WORLD"],
    ["FEED.FOLLOWERS", "1"],
    ["FEED.FOLLOWING", "1"],
    ["FEED.COUNTS", "1"],
]


def run_cli(port, args, raw=False):
    resp3 = args[:1] == ["-3"]
    if resp3:
        args = args[1:]
    command = ["redis-cli", "-h", "127.0.0.1", "-p", str(port),
               "--raw" if raw else "--no-raw"]
    if resp3:
        command.append("-3")
    result = subprocess.run(command + args, capture_output=True, text=True,
                            timeout=CLI_TIMEOUT_S)
    return (result.stdout + result.stderr).rstrip("\n")


def expect(port, args, expected):
    got = run_cli(port, args)
    if got != expected:
        fail(f"{' '.join(args)}: expected {expected!r}, got {got!r}")


def write_all(port, writes):
    for args in writes:
        got = run_cli(port, args)
        if "ERR" in got:
            fail(f"{' '.join(args)} failed: {got!r}")


def read_all(port):
    """Every read of READS; the second page of FEED.READ uses the cursor
    the first page returned."""
    first_page = run_cli(port, ["FEED.READ", "1", "LIMIT", "2"], raw=True)
    cursor = first_page.split("\n")[0]
    outputs = []
    for args in READS:
        args = [cursor if a == FIRST_PAGE_CURSOR else a for a in args]
        outputs.append(run_cli(port, args))
    return outputs


def check_same_reads(port, expected, what):
    got = read_all(port)
    mismatches = [(READS[i], expected[i], got[i])
                  for i in range(len(READS)) if got[i] != expected[i]]
    for args, want, have in mismatches:
        print(f"MISMATCH for {' '.join(args)}\n  expected: {want!r}\n"
              f"  got:      {have!r}", file=sys.stderr)
    if mismatches:
        fail(f"{len(mismatches)} of {len(READS)} reads differ {what}")
    print(f"ok: {len(READS)} reads match {what}")


def check_save_and_load(server, snapshot):
    flags = [f"--snapshot_file={snapshot}"]
    with running_server(server, *flags) as port:
        write_all(port, WRITES)
        expect(port, ["ZRANGE", "lb", "0", "-1", "REV", "WITHSCORES"],
               ' 1) "player:erin with spaces"\n 2) "10"\n'
               ' 3) "player:bob"\n 4) "10"\n 5) "player:alice"\n 6) "10"\n'
               ' 7) "player:carol"\n 8) "-7"\n 9) "player:dave"\n'
               '10) "-20"')
        saved_before = int(run_cli(port, ["LASTSAVE"], raw=True))
        expect(port, ["SAVE"], "OK")
        if int(run_cli(port, ["LASTSAVE"], raw=True)) < saved_before:
            fail("LASTSAVE went back after SAVE")
        expected = read_all(port)
        # Not in the snapshot: the next server must not see it.
        write_all(port, [["ZADD", "lb", "99", "player:late"],
                         ["FEED.PUBLISH", "2", "999", "2000000", "late"]])
    with running_server(server, *flags, "--load") as port:
        check_same_reads(port, expected, "after SAVE, SIGTERM and --load")
        expect(port, ["ZSCORE", "lb", "player:late"], "(nil)")
    return expected


def check_snapshot_on_exit(server, snapshot):
    flags = [f"--snapshot_file={snapshot}", "--load", "--snapshot_on_exit"]
    with running_server(server, *flags) as port:
        write_all(port, [["ZADD", "lb", "4", "player:frank", "-7",
                          "player:gina"],
                         ["ZINCRBY", "lb", "5", "player:carol"],
                         ["FEED.PUBLISH", "3", "500", "3000000", "on exit"],
                         ["FEED.UNFOLLOW", "4", "1"]])
        expected = read_all(port)
    with running_server(server, *flags) as port:
        check_same_reads(port, expected, "after --snapshot_on_exit")
        expect(port, ["ZSCORE", "lb", "player:frank"], '"4"')


def check_background_save(server, directory):
    snapshot = os.path.join(directory, "background.snap")
    with running_server(server, f"--snapshot_file={snapshot}") as port:
        write_all(port, WRITES)
        expect(port, ["BGSAVE"], "Background saving started")
        expected = read_all(port)
    # Stopping waits for the background save.
    with running_server(server, f"--snapshot_file={snapshot}",
                        "--load") as port:
        check_same_reads(port, expected, "after BGSAVE")


def check_missing_file_starts_empty(server, directory):
    snapshot = os.path.join(directory, "never-saved.snap")
    with server_process(server, f"--snapshot_file={snapshot}",
                        "--load") as (process, port):
        expect(port, ["ZCARD", "lb"], "(integer) 0")
        code, _, stderr = stop_server(process)
    if code != 0 or f"no snapshot at {snapshot}; starting empty" not in stderr:
        fail(f"--load of a missing file: exit code {code}, stderr {stderr!r}")
    print("ok: --load of a missing file starts empty and says so")


def check_failed_save_on_exit(server, directory):
    snapshot = os.path.join(directory, "missing-dir", "db.snap")
    with server_process(server, f"--snapshot_file={snapshot}",
                        "--snapshot_on_exit") as (process, port):
        write_all(port, [["ZADD", "lb", "1", "a"]])
        expect(port, ["SAVE"],
               f"(error) ERR cannot list the directory of {snapshot}: "
               "No such file or directory")
        code, stdout, stderr = stop_server(process)
    if code == 0 or "snapshot on exit" not in stderr \
            or "No such file or directory" not in stderr:
        fail(f"failed save on exit: exit code {code}, stdout {stdout!r}, "
             f"stderr {stderr!r}")
    print("ok: a failed save on exit gives a non-zero exit and says why")


def check_damaged_snapshot_stops_start(server, snapshot):
    size = os.path.getsize(snapshot)
    with open(snapshot, "r+b") as f:
        f.seek(size // 2)
        byte = f.read(1)
        f.seek(size // 2)
        f.write(bytes([byte[0] ^ 0xFF]))
    try:
        result = subprocess.run(
            [server, "--address=127.0.0.1", "--port=0",
             f"--snapshot_file={snapshot}", "--load"],
            capture_output=True, text=True, timeout=START_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        fail("the server started on a damaged snapshot")
    if result.returncode == 0 or "listening" in result.stdout or \
            f"cannot load snapshot {snapshot}" not in result.stderr:
        fail(f"damaged snapshot: exit code {result.returncode}, "
             f"stdout {result.stdout!r}, stderr {result.stderr!r}")
    print(f"ok: a damaged snapshot stops the server: {result.stderr.strip()}")


def main():
    if len(sys.argv) != 2:
        fail("usage: snapshot_test.py <feedcore-server>")
    require_tool("redis-cli", "redis-tools")
    server = sys.argv[1]
    directory = tempfile.mkdtemp(prefix="feedcore-snapshot-test-")
    try:
        snapshot = os.path.join(directory, "db.snap")
        check_save_and_load(server, snapshot)
        check_snapshot_on_exit(server, snapshot)
        check_background_save(server, directory)
        check_missing_file_starts_empty(server, directory)
        check_failed_save_on_exit(server, directory)
        check_damaged_snapshot_stops_start(server, snapshot)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
