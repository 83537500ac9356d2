"""feedcore-check on the --appendonly yes directory of feedcore-server.

The server (--appendfsync always, so every command ends a batch of its
own) stores N sorted-set members, one ZADD each, and stops. feedcore-check
finds the directory clean. Then, each on a copy of the directory:

  * a flipped byte in a middle frame of the log segment: the check names
    the segment and the frame's byte offset and exits 1, the server
    refuses the directory, --fix says what it dropped, and the server then
    starts with exactly the members written before the damaged frame;
  * the segment cut in the middle of its last record frame: reported at
    that frame as a torn tail, repaired, and every member but the last is
    there;
  * a flipped byte in a middle frame of the names journal: reported at that
    frame, repaired, and the members named before it are there (the server
    drops members whose names were lost).

A directory held by the running server, usage errors and a missing
directory exit 2.

Usage: check_server_test.py FEEDCORE_SERVER FEEDCORE_CHECK
"""

import os
import shutil
import struct
import subprocess
import sys
import tempfile

from server_harness import fail, running_server

try:
    import redis
except ImportError:
    fail("the Python redis package is missing; install python3-redis "
         "(scripts/install-deps does)")

MEMBERS = 300
KEY = "lb"
LOG_HEADER = 12       # "FEEDLOG\0", u32 version
JOURNAL_HEADER = 12   # "FCNAMJL\0", u32 version
FRAME_HEADER = 12     # u32 body length, u64 checksum


def frames(path, header):
    """(offset, body length) of every whole frame of a framed file."""
    data = open(path, "rb").read()
    out = []
    offset = header
    while offset + FRAME_HEADER <= len(data):
        (length,) = struct.unpack_from("<I", data, offset)
        if offset + FRAME_HEADER + length > len(data):
            break
        out.append((offset, length))
        offset += FRAME_HEADER + length
    return out


def flip(path, position):
    with open(path, "r+b") as f:
        f.seek(position)
        byte = f.read(1)
        f.seek(position)
        f.write(bytes([byte[0] ^ 0x10]))


def run_check(check, directory, *flags):
    result = subprocess.run([check, *flags, directory], capture_output=True,
                            text=True, timeout=60)
    return result.returncode, result.stdout, result.stderr


def expect(condition, message, output=""):
    if not condition:
        fail(f"{message}\n--- feedcore-check said:\n{output}")


def server_flags(directory):
    return ["--appendonly", "yes", "--appendfsync", "always",
            "--dir", directory]


def members_after_start(server, directory):
    """The (member, score) pairs of KEY when the server opens `directory`."""
    with running_server(server, *server_flags(directory)) as port:
        client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=10)
        return [(m.decode(), int(s)) for m, s in
                client.zrange(KEY, 0, -1, withscores=True)]


def expect_prefix(found, count, what):
    wanted = [(f"m{i:04d}", i) for i in range(count)]
    if sorted(found) != wanted:
        fail(f"{what}: expected members m0000..m{count - 1:04d} with their "
             f"scores, found {len(found)}: {sorted(found)[:5]}...")


def expect_refused(server, directory):
    result = subprocess.run([server, "--address=127.0.0.1", "--port=0",
                             *server_flags(directory)],
                            capture_output=True, text=True, timeout=60)
    if result.returncode == 0:
        fail(f"the server started on the damaged {directory}")


def main():
    if len(sys.argv) != 3:
        fail("usage: check_server_test.py FEEDCORE_SERVER FEEDCORE_CHECK")
    server, check = sys.argv[1], sys.argv[2]
    root = tempfile.mkdtemp(prefix="feedcore-check-test-")
    try:
        original = os.path.join(root, "original")
        os.mkdir(original)
        with running_server(server, *server_flags(original)) as port:
            client = redis.Redis(host="127.0.0.1", port=port,
                                 socket_timeout=10)
            for i in range(MEMBERS):
                client.zadd(KEY, {f"m{i:04d}": i})
            # The running server holds the directory: no check, no repair.
            for flags in ([], ["--fix"]):
                code, out, err = run_check(check, original, *flags)
                expect(code == 2 and "in use" in err,
                       f"check of a directory in use: exit {code}", out + err)

        # Usage errors.
        for args in ([], ["--fixx", original], [original, original]):
            result = subprocess.run([check, *args], capture_output=True,
                                    text=True, timeout=60)
            expect(result.returncode == 2 and "usage:" in result.stderr,
                   f"usage error {args}: exit {result.returncode}",
                   result.stdout + result.stderr)
        code, out, err = run_check(check, os.path.join(root, "missing"))
        expect(code == 2 and "missing" in err,
               f"missing directory: exit {code}", out + err)

        code, out, err = run_check(check, original)
        expect(code == 0 and out.rstrip().endswith("clean"),
               f"clean directory: exit {code}", out + err)
        segments = sorted(n for n in os.listdir(original)
                          if n.startswith("log-") and n.endswith(".fclog"))
        expect(len(segments) == 1, f"one log segment, found {segments}")
        log_frames = frames(os.path.join(original, segments[0]), LOG_HEADER)
        records = [f for f in log_frames if f[1] > 0]
        # The records before the first member's: the key's board creation.
        extra = len(records) - MEMBERS
        expect(extra >= 0, f"{len(records)} records for {MEMBERS} members")
        code, out, err = run_check(check, original)
        expect(f"{segments[0]}: OK, {len(records)} records" in out,
               "record count of the clean segment", out)

        # A flipped byte in a middle record frame of the log.
        copy = os.path.join(root, "log-flip")
        shutil.copytree(original, copy)
        segment = os.path.join(copy, segments[0])
        offset, length = records[len(records) // 2]
        flip(segment, offset + FRAME_HEADER + length // 2)
        expect_refused(server, copy)
        code, out, err = run_check(check, copy)
        expect(code == 1, f"damaged log: exit {code}", out + err)
        expect(f"{segment}: DAMAGED at byte {offset}: frame fails its "
               "checksum" in out, "the damaged frame's file and offset", out)
        code, out, err = run_check(check, "--fix", copy)
        expect(code == 0, f"--fix: exit {code}", out + err)
        # Every command is a batch: the cut is at the damaged frame.
        expect(f"dropped: {segment} from byte {offset}:" in out,
               "--fix names what it dropped", out)
        before = sum(1 for f in records if f[0] < offset) - extra
        expect_prefix(members_after_start(server, copy), before,
                      "after --fix of the log")
        code, out, err = run_check(check, copy)
        expect(code == 0, f"repaired log checked again: exit {code}",
               out + err)

        # The segment cut in the middle of its last record frame.
        copy = os.path.join(root, "log-cut")
        shutil.copytree(original, copy)
        segment = os.path.join(copy, segments[0])
        offset = records[-1][0]
        os.truncate(segment, offset + 7)
        code, out, err = run_check(check, copy)
        expect(code == 1, f"cut log: exit {code}", out + err)
        expect(f"{segment}: DAMAGED at byte {offset}: incomplete frame "
               "header" in out and "torn tail" in out,
               "the cut frame's file and offset", out)
        code, out, err = run_check(check, "--fix", copy)
        expect(code == 0 and f"dropped: {segment} from byte {offset}: "
               "7 bytes" in out, f"--fix of the cut log: exit {code}",
               out + err)
        expect_prefix(members_after_start(server, copy), MEMBERS - 1,
                      "after --fix of the cut log")

        # A flipped byte in a middle frame of the names journal.
        copy = os.path.join(root, "journal-flip")
        shutil.copytree(original, copy)
        journal = os.path.join(copy, "names.fcjournal")
        names = frames(journal, JOURNAL_HEADER)
        expect(len(names) == MEMBERS, f"{len(names)} journal records")
        index = MEMBERS // 3
        offset, length = names[index]
        flip(journal, offset + FRAME_HEADER + length - 1)
        expect_refused(server, copy)
        code, out, err = run_check(check, copy)
        expect(code == 1 and f"{journal}: DAMAGED at byte {offset}:" in out,
               f"damaged journal: exit {code}", out + err)
        code, out, err = run_check(check, "--fix", copy)
        expect(code == 0 and f"dropped: {journal} from byte {offset}:" in out,
               f"--fix of the journal: exit {code}", out + err)
        expect_prefix(members_after_start(server, copy), index,
                      "after --fix of the journal")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print("check_server_test: OK")


if __name__ == "__main__":
    main()
