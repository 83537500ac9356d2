"""feedcore-server keeps entity names with its data.

With --appendonly yes --appendfsync always, a client follows and publishes
by name (FEED.FOLLOW user:a user:b, FEED.PUBLISH user:a * * payload) and,
after each write is acknowledged, reads the id each name was given
(FEED.FOLLOWING without NAMES). The server is SIGKILLed after a seeded
number of acknowledged writes and restarted on the same directory, several
times; after each restart every acknowledged follow must still be there by
name and by the same ids, every handed-out activity id in the actor's own
feed, and names first seen after a restart must get ids never given
before. Retries after the restarts of publishes acknowledged before them
(IDEMPOTENCY key with '*' id and ts, and a client id with '*' ts) must be
no-ops: the first one's id, and the activity once in the own feed. The
keyed one is edited (FEED.EDIT) and both are pinned (FEED.PIN) before the
kill: after each restart the edit's payload and time read back
(FEED.OWN ... WITHEDITS), the pins in their order (FEED.PINNED), and the
retries of edited publishes are no-ops too.

Then --snapshot_file: names written before a SAVE come back with their ids
after a SIGKILL and a restart with --load; a name first used after the
SAVE is unknown there (it reads as an entity with nothing).
"""

import os
import random
import shutil
import signal
import sys
import tempfile

from server_harness import fail, server_process

try:
    import redis
except ImportError:
    fail("the Python redis package is missing; install python3-redis "
         "(scripts/install-deps does)")

SEED = 20261202
ROUNDS = 5


def client(port):
    return redis.Redis(host="127.0.0.1", port=port, decode_responses=True)


def following(r, name, names):
    args = ["FEED.FOLLOWING", name, "LIMIT", "1000"]
    if names:
        args.append("NAMES")
    cursor, entities = r.execute_command(*args)
    if cursor != "0":
        fail(f"FEED.FOLLOWING {name} has more than one page")
    return entities


def check_append_only(server):
    directory = tempfile.mkdtemp(prefix="feedcore-names-aof-")
    rng = random.Random(SEED)
    flags = ["--appendonly", "yes", "--appendfsync", "always",
             "--dir", directory]
    ids = {}          # name -> id, as acknowledged
    follows = set()   # (follower, followee) names, acknowledged
    published = {}    # actor name -> activity ids, acknowledged
    retried = []      # (command, first reply), acknowledged
    edits = {}        # activity id -> (actor, payload, edit time)
    pins = {}         # actor -> activity ids, in the order pinned
    next_name = 0
    try:
        for round_number in range(ROUNDS + 1):
            with server_process(server, *flags) as (process, port):
                r = client(port)
                for (a, b) in sorted(follows):
                    if b not in following(r, a, names=True):
                        fail(f"round {round_number}: {a} no longer follows "
                             f"{b} after the kill")
                    if ids[b] not in following(r, a, names=False):
                        fail(f"round {round_number}: {b} lost its id "
                             f"{ids[b]}")
                for actor, activities in published.items():
                    _, page = r.execute_command("FEED.OWN", actor, "LIMIT",
                                                "1000")
                    have = {entry[0] for entry in page}
                    missing = [a for a in activities if a not in have]
                    if missing:
                        fail(f"round {round_number}: {actor}'s activities "
                             f"{missing} were lost")
                for command, first in retried:
                    again = r.execute_command(*command)
                    expected = first if command[2] == "*" else 0
                    if again != expected:
                        fail(f"round {round_number}: the retry of {command} "
                             f"replied {again!r}, not {expected!r}")
                    _, page = r.execute_command("FEED.OWN", command[1],
                                                "LIMIT", "1000")
                    activity = first if command[2] == "*" else command[2]
                    copies = [e for e in page if e[0] == str(activity)]
                    if len(copies) != 1:
                        fail(f"round {round_number}: {command} is in the "
                             f"own feed {len(copies)} times")
                for activity, (actor, payload, edited_at) in edits.items():
                    _, page = r.execute_command("FEED.OWN", actor, "LIMIT",
                                                "1000", "WITHEDITS")
                    entry = [e for e in page if e[0] == activity]
                    if not entry or entry[0][4:] != [payload, edited_at]:
                        fail(f"round {round_number}: the edit of {activity} "
                             f"({payload!r} at {edited_at}) reads {entry}")
                for actor, pinned in pins.items():
                    have = [e[0] for e in r.execute_command("FEED.PINNED",
                                                            actor)]
                    if have != pinned[::-1]:
                        fail(f"round {round_number}: {actor}'s pins are "
                             f"{have}, not {pinned[::-1]}")
                if round_number == ROUNDS:
                    break
                actor = f"user:{rng.randint(0, next_name)}"
                for command in (
                        ("FEED.PUBLISH", actor, "*", "*", f"keyed {round_number}",
                         "IDEMPOTENCY", f"key-{round_number}"),
                        ("FEED.PUBLISH", actor, str(900 + round_number), "*",
                         f"client id {round_number}")):
                    retried.append((command, r.execute_command(*command)))
                keyed = retried[-2][1]
                payload = f"edited {round_number}"
                edits[keyed] = (actor, payload, r.execute_command(
                    "FEED.EDIT", actor, keyed, payload))
                for activity in (keyed, str(900 + round_number)):
                    if r.execute_command("FEED.PIN", actor, activity) != 1:
                        fail(f"FEED.PIN {actor} {activity} did not pin")
                    pins.setdefault(actor, []).append(activity)
                for _ in range(rng.randint(10, 40)):
                    next_name += 1
                    a = f"user:{rng.randint(0, next_name)}"
                    b = f"user:{next_name}"
                    if a == b:
                        continue
                    r.execute_command("FEED.FOLLOW", a, b)
                    follows.add((a, b))
                    activity = r.execute_command("FEED.PUBLISH", a, "*", "*",
                                                 f"{a} follows {b}")
                    published.setdefault(a, []).append(activity)
                    for name, entity in zip(following(r, a, names=True),
                                            following(r, a, names=False)):
                        if ids.setdefault(name, entity) != entity:
                            fail(f"{name} changed id from {ids[name]} to "
                                 f"{entity}")
                if len(set(ids.values())) != len(ids):
                    fail("two names share an id")
                process.send_signal(signal.SIGKILL)
                process.wait()
        print(f"ok: appendonly: {ROUNDS} SIGKILLs, {len(ids)} names, "
              f"{len(follows)} follows and "
              f"{sum(len(v) for v in published.values())} publishes kept; "
              f"{len(retried)} publishes retried after restarts were no-ops; "
              f"{len(edits)} edits and "
              f"{sum(len(v) for v in pins.values())} pins kept")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def check_save_and_load(server):
    directory = tempfile.mkdtemp(prefix="feedcore-names-save-")
    snapshot = os.path.join(directory, "dump.fcsnap")
    flags = [f"--snapshot_file={snapshot}"]
    try:
        with server_process(server, *flags) as (process, port):
            r = client(port)
            r.execute_command("FEED.FOLLOW", "user:alice", "user:bob")
            r.execute_command("FEED.FOLLOW", "user:alice", "user:carol")
            saved = following(r, "user:alice", names=False)
            if r.execute_command("SAVE") not in (True, "OK"):
                fail("SAVE failed")
            r.execute_command("FEED.FOLLOW", "user:late", "user:bob")
            process.send_signal(signal.SIGKILL)
            process.wait()
        with server_process(server, *flags, "--load") as (process, port):
            r = client(port)
            if sorted(following(r, "user:alice", names=True)) != [
                    "user:bob", "user:carol"]:
                fail("the names saved by SAVE did not come back: "
                     f"{following(r, 'user:alice', names=True)}")
            if sorted(following(r, "user:alice", names=False)) != sorted(
                    saved):
                fail("the ids of saved names changed after --load")
            counts = r.execute_command("FEED.COUNTS", "user:late")
            if counts != [0, 0]:
                fail(f"a name first used after the SAVE is known: {counts}")
            # A new name gets an id above every saved one.
            r.execute_command("FEED.FOLLOW", "user:dave", "user:bob")
            _, names = r.execute_command("FEED.FOLLOWERS", "user:bob", "NAMES")
            _, numbers = r.execute_command("FEED.FOLLOWERS", "user:bob")
            dave = dict(zip(names, numbers))["user:dave"]
            known = saved + [dict(zip(names, numbers))["user:alice"]]
            if int(dave) <= max(int(i) for i in known):
                fail(f"user:dave got {dave}, not above the saved ids {known}")
        print("ok: names come back with their ids after SAVE, SIGKILL and "
              "--load")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def main():
    if len(sys.argv) != 2:
        fail("usage: names_persistence_test.py <feedcore-server binary>")
    check_append_only(sys.argv[1])
    check_save_and_load(sys.argv[1])


if __name__ == "__main__":
    main()
