"""feedcore-server with --appendonly yes loses no acknowledged write.

In a temporary directory, feedcore-server runs with --appendonly yes
--appendfsync always while three clients (the Python redis package) write:
ZADD and ZINCRBY on shared keys with new member names all the time, ZREM
(whose names are freed and their slots reused with new ids), DEL and refill
of a key of their own, RENAME of one key of their own over the other,
FEED.PUBLISH, and FEED.REACT and FEED.UNREACT of its own users to its
activities. Each client keeps a model
of the writes the server acknowledged. The server is killed with SIGKILL
at a random moment (a fixed seed: the same moments for every run of the
same machine speed, and the check does not depend on them), at least 20
times, and restarted on the same directory. After each restart every key,
every member's name and score, every actor's own feed and every user's
reactions must equal the model: every acknowledged write is there, nothing is there twice, and a
write in flight at the kill may or may not be there (the model then takes
what the server has).

First, ZUNIONSTORE (its destination among its sources) and ZPOPMIN
acknowledged just before a SIGKILL must be there after the restart.

Then --appendfsync everysec: one client adds a new member and publishes
one activity per write. A kill may lose the last acknowledged writes, but
what is recovered must be a prefix of them: every write from before the
previous restart, then the writes of the last run up to some point, none
twice and none missing before a later one. Writes after a restart use
numbers never used before: a lost write's activity id is not published
again, since a publish whose activity the log holds without its feed entry
would make the same publish a no-op (docs/reliability.md). The test prints
how many acknowledged writes each kill lost and how long before the kill
the first of them was acknowledged; it asserts no time.
"""

import os
import random
import shutil
import signal
import sys
import tempfile
import threading
import time

from server_harness import fail, server_process

try:
    import redis
except ImportError:
    fail("the Python redis package is missing; install python3-redis "
         "(scripts/install-deps does)")

SEED = 20240611
KILLS_ALWAYS = 24
KILLS_EVERYSEC = 6
KILLS_EXEC = 8
EXEC_ACTOR = 9000
CLIENTS = 3
ACTORS_PER_CLIENT = 4
SHARED_KEYS = ["lb:a", "lb:b"]


class Client:
    """One writer: its own members, its own key and its own actors, so its
    model needs no other client's order."""

    def __init__(self, index):
        self.index = index
        self.rng = random.Random(SEED * 31 + index)
        self.own_keys = [f"own:{index}", f"own:{index}:renamed"]
        self.actors = [1000 * (index + 1) + a for a in range(ACTORS_PER_CLIENT)]
        # key -> {member: score}, only this client's members.
        self.scores = {key: {} for key in SHARED_KEYS + self.own_keys}
        # actor -> [activity ids], oldest first.
        self.published = {actor: [] for actor in self.actors}
        # (user, activity, kind) of every reaction in place.
        self.users = [f"fan:{index}:{u}" for u in range(3)]
        self.reactions = set()
        self.next_member = 0
        self.next_activity = 1
        self.in_flight = None
        self.acknowledged = 0

    def member(self):
        # A new name half of the time: the names journal keeps working.
        known = [m for key in self.scores for m in self.scores[key]]
        if not known or self.rng.random() < 0.5:
            self.next_member += 1
            return f"player:{self.index}:{self.next_member}"
        return self.rng.choice(known)

    def next_write(self):
        roll = self.rng.random()
        keys = SHARED_KEYS + self.own_keys
        if roll < 0.35:
            key = self.rng.choice(keys)
            return ("ZADD", key, self.rng.randint(-1000, 1000), self.member())
        if roll < 0.7:
            key = self.rng.choice(keys)
            return ("ZINCRBY", key, self.rng.randint(1, 50), self.member())
        if roll < 0.74:
            return ("DEL", self.rng.choice(self.own_keys))
        if roll < 0.77:
            source, target = self.own_keys[::self.rng.choice([1, -1])]
            if self.scores[source]:
                return ("RENAME", source, target)
        if roll < 0.82:
            key = self.rng.choice(keys)
            known = list(self.scores[key])
            if known:
                return ("ZREM", key, self.rng.choice(known))
        activities = [a for ids in self.published.values() for a in ids]
        if roll < 0.9 and activities:
            command = "FEED.REACT" if roll < 0.87 else "FEED.UNREACT"
            return (command, self.rng.choice(self.users),
                    self.rng.choice(activities), self.rng.randint(0, 1))
        actor = self.rng.choice(self.actors)
        activity = actor * 1_000_000 + self.next_activity
        self.next_activity += 1
        return ("FEED.PUBLISH", actor, activity, self.next_activity,
                f"payload {activity}")

    def apply(self, write, reply):
        """Adds an acknowledged write to the model, checking its reply."""
        kind = write[0]
        if kind == "ZADD":
            _, key, score, member = write
            self.scores[key][member] = score
        elif kind == "ZINCRBY":
            _, key, delta, member = write
            expected = self.scores[key].get(member, 0) + delta
            if int(reply) != expected:
                fail(f"client {self.index}: {write} replied {reply}, "
                     f"the model says {expected}")
            self.scores[key][member] = expected
        elif kind == "ZREM":
            _, key, member = write
            if reply != 1:
                fail(f"client {self.index}: {write} replied {reply}")
            del self.scores[key][member]
        elif kind == "DEL":
            self.scores[write[1]] = {}
        elif kind == "RENAME":
            _, source, target = write
            if reply not in (True, b"OK", "OK"):
                fail(f"client {self.index}: {write} replied {reply}")
            self.scores[target] = self.scores[source]
            self.scores[source] = {}
        elif kind in ("FEED.REACT", "FEED.UNREACT"):
            reaction = write[1:]
            react = kind == "FEED.REACT"
            if reply[0] != int(react != (reaction in self.reactions)):
                fail(f"client {self.index}: {write} replied {reply}")
            if react:
                self.reactions.add(reaction)
            else:
                self.reactions.discard(reaction)
        else:
            _, actor, activity, _, _ = write
            if reply != 1:
                fail(f"client {self.index}: {write} replied {reply}")
            self.published[actor].append(activity)

    def run(self, port, stop):
        client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=10,
                             retry_on_timeout=False)
        while not stop.is_set():
            write = self.next_write()
            self.in_flight = write
            try:
                reply = client.execute_command(*write)
            except (redis.ConnectionError, ConnectionError, OSError):
                return  # killed: `write` stays in flight
            except redis.ResponseError as e:
                fail(f"client {self.index}: {write} failed: {e}")
            self.in_flight = None
            self.apply(write, reply)
            self.acknowledged += 1

    def reconcile(self, port):
        """Checks the restarted server against the model; adopts the write
        in flight at the kill if the server has it."""
        client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=10)
        options = [None]
        if self.in_flight is not None:
            options.append(self.in_flight)
        for choice in options:
            scores = {k: dict(v) for k, v in self.scores.items()}
            published = {a: list(v) for a, v in self.published.items()}
            reactions = set(self.reactions)
            if choice is not None:
                kind = choice[0]
                if kind == "ZADD":
                    scores[choice[1]][choice[3]] = choice[2]
                elif kind == "ZINCRBY":
                    scores[choice[1]][choice[3]] = \
                        scores[choice[1]].get(choice[3], 0) + choice[2]
                elif kind == "ZREM":
                    scores[choice[1]].pop(choice[2], None)
                elif kind == "DEL":
                    scores[choice[1]] = {}
                elif kind == "RENAME":
                    scores[choice[2]] = scores[choice[1]]
                    scores[choice[1]] = {}
                elif kind == "FEED.REACT":
                    reactions.add(choice[1:])
                elif kind == "FEED.UNREACT":
                    reactions.discard(choice[1:])
                else:
                    published[choice[1]].append(choice[2])
            if self.matches(client, scores, published, reactions):
                self.scores, self.published = scores, published
                self.reactions = reactions
                self.in_flight = None
                return choice is not None
        fail(f"client {self.index}: after the kill the server holds "
             f"{self.describe(client)}, which is not the model with or "
             f"without the write in flight {self.in_flight}")

    def read(self, client):
        scores = {}
        prefix = f"player:{self.index}:"
        for key in self.scores:
            got = client.zrange(key, 0, -1, withscores=True)
            scores[key] = {m.decode(): int(s) for m, s in got
                           if m.decode().startswith(prefix)}
        published = {}
        for actor in self.actors:
            page = client.execute_command("FEED.OWN", actor, "LIMIT", 1000,
                                          "REV")
            published[actor] = [int(entry[0]) for entry in page[1]]
        reactions = set()
        activities = [a for ids in published.values() for a in ids]
        for user in self.users:
            if not activities:
                break
            kinds = client.execute_command("FEED.REACTED", user, *activities)
            for activity, bits in zip(activities, kinds):
                for kind in (0, 1):
                    if bits >> kind & 1:
                        reactions.add((user, activity, kind))
        return scores, published, reactions

    def matches(self, client, scores, published, reactions):
        return self.read(client) == (scores, published, reactions)

    def describe(self, client):
        got_scores, got_published, got_reactions = self.read(client)
        lines = []
        for key in self.scores:
            if got_scores[key] != self.scores[key]:
                lines.append(f"{key}: server {sorted(got_scores[key].items())}"
                             f" model {sorted(self.scores[key].items())}")
        for actor in self.actors:
            if got_published[actor] != self.published[actor]:
                lines.append(f"actor {actor}: server {got_published[actor]} "
                             f"model {self.published[actor]}")
        if got_reactions != self.reactions:
            lines.append(f"reactions: server {sorted(got_reactions)} "
                         f"model {sorted(self.reactions)}")
        return "; ".join(lines) or "the model (reads disagree)"


def always_phase(server, directory, rng):
    clients = [Client(i) for i in range(CLIENTS)]
    flags = ["--appendonly", "yes", "--appendfsync", "always",
             "--dir", directory]
    in_flight_applied = 0
    in_flight_total = 0
    for kill in range(KILLS_ALWAYS):
        with server_process(server, *flags) as (process, port):
            if kill > 0:
                for client in clients:
                    had = client.in_flight is not None
                    in_flight_total += had
                    in_flight_applied += client.reconcile(port)
            stop = threading.Event()
            threads = [threading.Thread(target=c.run, args=(port, stop))
                       for c in clients]
            for t in threads:
                t.start()
            # Picks the kill point only; nothing checks the time.
            time.sleep(rng.uniform(0.05, 0.4))
            process.send_signal(signal.SIGKILL)
            process.wait()
            stop.set()
            for t in threads:
                t.join()
    with server_process(server, *flags) as (process, port):
        for client in clients:
            in_flight_total += client.in_flight is not None
            in_flight_applied += client.reconcile(port)
        info = redis.Redis(host="127.0.0.1", port=port).info("persistence")
        process.send_signal(signal.SIGTERM)
        process.wait()
    acknowledged = sum(c.acknowledged for c in clients)
    print(f"ok: fsync always: {KILLS_ALWAYS} SIGKILLs, {acknowledged} "
          f"acknowledged writes all recovered, none twice; "
          f"{in_flight_applied} of {in_flight_total} writes in flight at a "
          f"kill were recovered; last recovery read "
          f"{info['feedcore_aof_recovered_records']} log records in "
          f"{info['feedcore_aof_recovery_time_us']} us")


def everysec_actor(i):
    # A new actor every 500 writes keeps each own feed under its cap.
    return 7000 + i // 500


def everysec_recovered(client, last_written):
    """The members of "ev" and the activities, both as sorted numbers."""
    members = sorted(int(m.decode()[1:]) for m in client.zrange("ev", 0, -1))
    activities = []
    for actor in range(everysec_actor(1), everysec_actor(last_written) + 1):
        page = client.execute_command("FEED.OWN", actor, "LIMIT", 1000, "REV")
        activities.extend(int(entry[0]) for entry in page[1])
    return members, sorted(activities)


def everysec_phase(server, directory, rng):
    """Write i is ZADD ev i mi, then FEED.PUBLISH of activity i; it counts
    as acknowledged once both replied. i only grows, across restarts."""
    flags = ["--appendonly", "yes", "--appendfsync", "everysec",
             "--dir", directory]
    # What the last restart recovered, in order: the members may hold one
    # more than the activities (a ZADD kept without its PUBLISH).
    kept_members, kept = [], []
    run = []  # (i, time acknowledged) of the run since, in order
    next_i = 1
    losses = []
    kill_time = 0.0
    for kill in range(KILLS_EVERYSEC + 1):
        with server_process(server, *flags) as (process, port):
            client = redis.Redis(host="127.0.0.1", port=port,
                                 socket_timeout=10)
            if kill > 0:
                members, activities = everysec_recovered(client, next_i)
                if len(set(activities)) != len(activities) or \
                        len(set(members)) != len(members):
                    fail("everysec: a write was recovered twice")
                # The log is one sequence (ZADD 1, PUBLISH 1, ZADD 2...),
                # of which a crash keeps a prefix: what was kept before,
                # then the first j writes of the last run, and possibly
                # the ZADD of write j + 1.
                ran = [i for i, _ in run]
                j = len(activities) - len(kept)
                if j < 0 or activities != kept + ran[:j] or \
                        members not in (kept_members + ran[:j],
                                        kept_members + ran[:j + 1]):
                    fail(f"everysec: after kill {kill} the recovered writes "
                         f"are not a prefix of the acknowledged ones: "
                         f"activities {activities[:3]}...{activities[-3:]} "
                         f"({len(activities)}), members {len(members)}; "
                         f"{len(kept)} kept before, then {ran[:3]}..."
                         f"{ran[-3:]} acknowledged")
                lost = [t for _, t in run[j:]]
                losses.append((len(lost),
                               (kill_time - min(lost)) * 1000 if lost else 0))
                kept_members, kept = members, activities
                run = []
            if kill == KILLS_EVERYSEC:
                process.send_signal(signal.SIGTERM)
                process.wait()
                break
            # Picks the kill point only; nothing checks the time.
            deadline = time.monotonic() + rng.uniform(0.3, 1.5)
            while time.monotonic() < deadline:
                client.execute_command("ZADD", "ev", next_i, f"m{next_i}")
                created = client.execute_command(
                    "FEED.PUBLISH", everysec_actor(next_i), next_i, next_i,
                    f"p{next_i}")
                if created != 1:
                    fail(f"everysec: FEED.PUBLISH of new activity {next_i} "
                         f"replied {created}")
                run.append((next_i, time.monotonic()))
                next_i += 1
            kill_time = time.monotonic()
            process.send_signal(signal.SIGKILL)
            process.wait()
    total = sum(n for n, _ in losses)
    described = ", ".join(f"{n} ({ms:.0f} ms)" for n, ms in losses)
    print(f"ok: fsync everysec: {KILLS_EVERYSEC} SIGKILLs, each recovered a "
          f"prefix of the acknowledged writes, nothing twice; acknowledged "
          f"writes lost per kill (and how long before the kill the first of "
          f"them was acknowledged): {described}; {total} in all")


def store_and_pop_phase(server, directory, rng):
    """ZUNIONSTORE (a destination that is also a source among them) and
    ZPOPMIN acknowledged just before a SIGKILL are there after the
    restart, with every other key as it was."""
    flags = ["--appendonly", "yes", "--appendfsync", "always",
             "--dir", directory]
    expected = {}
    for round_number in range(4):
        with server_process(server, *flags) as (process, port):
            client = redis.Redis(host="127.0.0.1", port=port)
            for key, want in expected.items():
                got = client.zrange(key, 0, -1, withscores=True)
                if got != want:
                    fail(f"store/pop round {round_number}: {key} is {got} "
                         f"after the kill, {want} before it")
            for key in ("src:a", "src:b"):
                client.zadd(key, {f"m{rng.randint(0, 300)}":
                                  rng.randint(-50, 50) for _ in range(200)})
            client.zunionstore("dst", ["dst", "src:a", "src:b"],
                               aggregate="SUM")
            client.zunionstore("dst2", {"src:a": 2, "src:b": 3})
            client.zpopmin("src:a", rng.randint(1, 40))
            client.zpopmin("dst2", 5)
            expected = {key: client.zrange(key, 0, -1, withscores=True)
                        for key in ("dst", "dst2", "src:a", "src:b")}
            process.send_signal(signal.SIGKILL)
            process.wait()
    print("ok: ZUNIONSTORE and ZPOPMIN acknowledged before a SIGKILL are "
          "recovered")


def exec_phase(server, directory, rng, policy):
    """EXEC k is ZINCRBY tx:a 1 m, ZINCRBY tx:b 1 m, DEL tx:c, ZADD tx:tmp
    k c<k>, RENAME tx:tmp tx:c, EXPIRE tx:c and FEED.PUBLISH of activity
    k: after each kill both scores are equal, tx:c holds just c<k> at k
    with its expiry, and the newest activity is the last EXEC they count,
    so no EXEC was kept in part, names journal included."""
    flags = ["--appendonly", "yes", "--appendfsync", policy, "--dir",
             directory]
    acknowledged = 0
    for kill in range(KILLS_EXEC + 1):
        with server_process(server, *flags) as (process, port):
            client = redis.Redis(host="127.0.0.1", port=port,
                                 socket_timeout=10)
            a = int(client.zscore("tx:a", "m") or 0)
            b = int(client.zscore("tx:b", "m") or 0)
            page = client.execute_command("FEED.OWN", EXEC_ACTOR, "LIMIT", 1)
            newest = int(page[1][0][0]) if page[1] else 0
            renamed = client.zrange("tx:c", 0, -1, withscores=True)
            want = [(f"c{a}".encode(), float(a))] if a else []
            kept_expiry = client.ttl("tx:c") > 0 if a else True
            if (a != b or newest != a or renamed != want or not kept_expiry
                    or client.exists("tx:tmp")):
                fail(f"{policy}: after kill {kill} tx:a is {a}, tx:b {b}, "
                     f"tx:c {renamed} (expiry kept: {kept_expiry}) and the "
                     f"newest activity {newest}: an EXEC was kept in part")
            if policy == "always" and not acknowledged <= a <= \
                    acknowledged + 1:
                fail(f"always: {acknowledged} EXECs acknowledged, {a} kept")
            if kill == KILLS_EXEC:
                break
            acknowledged = a

            def writer():
                nonlocal acknowledged
                k = a
                while True:
                    k += 1
                    pipe = client.pipeline(transaction=True)
                    pipe.zincrby("tx:a", 1, "m")
                    pipe.zincrby("tx:b", 1, "m")
                    pipe.delete("tx:c")
                    pipe.zadd("tx:tmp", {f"c{k}": k})
                    pipe.rename("tx:tmp", "tx:c")
                    pipe.expire("tx:c", 100000)
                    pipe.execute_command("FEED.PUBLISH", EXEC_ACTOR, k, k,
                                         f"exec {k}")
                    try:
                        pipe.execute()
                    except (redis.ConnectionError, ConnectionError, OSError):
                        return
                    acknowledged = k

            thread = threading.Thread(target=writer)
            thread.start()
            # Picks the kill point only; nothing checks the time.
            time.sleep(rng.uniform(0.05, 0.3))
            process.send_signal(signal.SIGKILL)
            process.wait()
            thread.join()
    print(f"ok: fsync {policy}: {KILLS_EXEC} SIGKILLs during EXECs of two "
          f"ZINCRBY, DEL, ZADD, RENAME, EXPIRE and a FEED.PUBLISH, each kept "
          f"whole or not at all; "
          f"{a} EXECs kept")


def main():
    if len(sys.argv) != 2:
        fail("usage: aof_kill_test.py <feedcore-server>")
    server = sys.argv[1]
    rng = random.Random(SEED)
    directory = tempfile.mkdtemp(prefix="feedcore-aof-kill-test-")
    try:
        store_and_pop_phase(server, os.path.join(directory, "store"), rng)
        always_phase(server, os.path.join(directory, "always"), rng)
        everysec_phase(server, os.path.join(directory, "everysec"), rng)
        for policy in ("always", "everysec"):
            exec_phase(server, os.path.join(directory, f"exec-{policy}"),
                       rng, policy)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
