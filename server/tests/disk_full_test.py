"""feedcore-server on a full disk: writes refused with MISCONF, resumed by
themselves once there is room, and nothing acknowledged lost to a SIGKILL.

feedcore-server runs with --appendonly yes --appendfsync always under a
file size limit (RLIMIT_FSIZE of 2 MiB, which its files meet as EFBIG, as
they meet ENOSPC on a full disk). One client adds new members, each with a
long name, until the server answers MISCONF, and sends a few more that
must be refused too. The limit is then lifted from outside
(resource.prlimit) with the server running: a write must succeed again
without a restart (the test retries until it does; the deadline only
bounds a hang), and more writes follow. Then the server is killed with
SIGKILL and restarted without a limit: every acknowledged member must be
there with its score, and no refused one.
"""

import resource
import shutil
import signal
import sys
import tempfile
import time

from server_harness import fail, server_process

try:
    import redis
except ImportError:
    fail("the Python redis package is missing; install python3-redis "
         "(scripts/install-deps does)")

LIMIT_BYTES = 2 << 20
PAD = "x" * 200
RESUME_DEADLINE_S = 60


def name(i):
    return f"member:{i}:{PAD}"


def fill_until_refused(client, acknowledged, refused):
    i = 0
    while True:
        try:
            if client.zadd("board", {name(i): i}) != 1:
                fail(f"ZADD of new member {i} did not add it")
            acknowledged[name(i)] = i
        except redis.exceptions.ResponseError as error:
            if not str(error).startswith("MISCONF"):
                fail(f"a full disk must answer MISCONF, got {error}")
            refused.add(name(i))
            return i + 1
        i += 1
        if i > 1_000_000:
            fail("the file size limit was never reached")


def main():
    if len(sys.argv) != 2:
        fail("usage: disk_full_test.py <feedcore-server>")
    binary = sys.argv[1]
    directory = tempfile.mkdtemp(prefix="feedcore-disk-full-")
    flags = ("--appendonly=yes", "--appendfsync=always", f"--dir={directory}")
    acknowledged = {}
    refused = set()
    try:
        with server_process(binary, *flags,
                            file_size_limit=LIMIT_BYTES) as (process, port):
            client = redis.Redis(port=port)
            next_id = fill_until_refused(client, acknowledged, refused)
            for _ in range(5):
                try:
                    client.zadd("board", {name(next_id): next_id})
                    fail("a write was taken while the disk was full")
                except redis.exceptions.ResponseError as error:
                    if not str(error).startswith("MISCONF"):
                        fail(f"expected MISCONF, got {error}")
                refused.add(name(next_id))
                next_id += 1
            info = client.info("persistence")
            if info.get("aof_last_write_status") != "err":
                fail(f"INFO must report the failed write: {info}")
            print(f"ok: MISCONF after {len(acknowledged)} members")

            hard = resource.prlimit(process.pid, resource.RLIMIT_FSIZE)[1]
            resource.prlimit(process.pid, resource.RLIMIT_FSIZE, (hard, hard))
            deadline = time.monotonic() + RESUME_DEADLINE_S
            while True:
                try:
                    client.zadd("board", {name(next_id): next_id})
                    acknowledged[name(next_id)] = next_id
                    next_id += 1
                    break
                except redis.exceptions.ResponseError as error:
                    refused.add(name(next_id))
                    next_id += 1
                    if time.monotonic() > deadline:
                        fail(f"writes did not resume with room: {error}")
                    time.sleep(0.05)
            for _ in range(100):
                if client.zadd("board", {name(next_id): next_id}) != 1:
                    fail("ZADD after the disk had room again")
                acknowledged[name(next_id)] = next_id
                next_id += 1
            print("ok: writes resumed once there was room, with no restart")
            process.send_signal(signal.SIGKILL)
            process.wait()

        with server_process(binary, *flags) as (process, port):
            client = redis.Redis(port=port)
            members = {m.decode(): int(s) for m, s in
                       client.zrange("board", 0, -1, withscores=True)}
            lost = [m for m in acknowledged if members.get(m) != acknowledged[m]]
            if lost:
                fail(f"{len(lost)} acknowledged members lost, e.g. {lost[0]!r}")
            taken = refused & members.keys()
            if taken:
                fail(f"refused members came back: {sorted(taken)[:3]}")
            if len(members) != len(acknowledged):
                fail(f"{len(members)} members after the restart, "
                     f"{len(acknowledged)} acknowledged")
            process.send_signal(signal.SIGTERM)
            process.wait()
        print(f"ok: all {len(acknowledged)} acknowledged members kept "
              "across a SIGKILL, none of the refused")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
