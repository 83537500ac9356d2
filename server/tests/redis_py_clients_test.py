"""The redis-py calls an application makes, unchanged, against
feedcore-server: transactions (MULTI/EXEC, WATCH and its retry loop),
plain pipelines, SCAN, FLUSHDB, INFO parsing, CLIENT, TIME and the
keyspace and sorted-set calls.

Usage: redis_py_clients_test.py <path to feedcore-server>

The same scenario runs first against a real redis-server, so every
expectation below is what Redis does, then against feedcore-server. Scores
are whole numbers (feedcore's are int64) passed as Python floats, as
applications do, and never tie where an order shows (Redis orders ties by
name). Concurrent writes come from a second client at a fixed point of the
scenario, so each WATCH outcome is certain; a final check races threads
through `transaction()` and counts the increments.
"""

import sys
import threading
import time

from server_harness import fail, running_redis_server, running_server

try:
    import redis
except ImportError:
    fail("the Python redis package is missing; install the Debian package "
         "python3-redis (scripts/install-deps does)")

RACING_THREADS = 4
INCREMENTS_PER_THREAD = 40


class Scenario:
    def __init__(self, port, server_name):
        self.port = port
        self.server_name = server_name
        self.r = self.client()
        self.other = self.client()

    def client(self):
        return redis.Redis(host="127.0.0.1", port=self.port,
                           socket_timeout=20, decode_responses=True)

    def check(self, condition, message):
        if not condition:
            fail(f"{self.server_name}: {message}")

    def command_calls(self, command):
        stats = self.r.info("commandstats").get(f"cmdstat_{command}")
        return stats["calls"] if stats else 0

    def check_keyspace_and_sorted_sets(self):
        r = self.r
        self.check(r.flushdb() is True, "FLUSHDB through flushdb()")
        self.check(r.dbsize() == 0, f"dbsize after flushdb: {r.dbsize()}")
        added = r.zadd("board", {"alice": 1.0, "bob": 2.0, "carol": 3.0})
        self.check(added == 3, f"zadd of three float scores: {added}")
        self.check(r.zadd("board", {"alice": 4.0}) == 0,
                   "zadd of a present member adds nothing")
        score = r.zincrby("board", 10.0, "alice")
        self.check(score == 14.0 and isinstance(score, float),
                   f"zincrby returns the new score as a float: {score!r}")
        ranked = r.zrange("board", 0, -1, withscores=True)
        self.check(ranked == [("bob", 2.0), ("carol", 3.0), ("alice", 14.0)],
                   f"zrange withscores: {ranked}")
        top = r.zrange("board", 0, 0, desc=True, withscores=True)
        self.check(top == [("alice", 14.0)], f"zrange desc: {top}")
        self.check(r.zscore("board", "carol") == 3.0, "zscore")
        self.check(r.zrevrank("board", "alice") == 0, "zrevrank")
        self.check(r.exists("board", "nokey", "board") == 2,
                   "exists counts each key named, as often as named")
        self.check(r.type("board") == "zset", f"type: {r.type('board')}")
        self.check(r.type("nokey") == "none", "type of a missing key")
        self.check(r.zadd("gone", {"x": 1.0}) == 1, "zadd of a second key")
        self.check(r.dbsize() == 2, f"dbsize with two keys: {r.dbsize()}")
        self.check(r.delete("gone", "nokey") == 1, "delete counts the keys")
        self.check(r.exists("gone") == 0, "a deleted key does not exist")
        self.check(r.dbsize() == 1, "dbsize after delete")

    def check_transactional_pipeline(self):
        r = self.r
        multi_before = self.command_calls("multi")
        exec_before = self.command_calls("exec")
        pipe = r.pipeline()
        pipe.zadd("board", {"dave": 20.0})
        pipe.zincrby("board", 5.0, "bob")
        pipe.zscore("board", "bob")
        pipe.zcard("board")
        pipe.zrange("board", 0, 1, desc=True, withscores=True)
        results = pipe.execute()
        self.check(results == [1, 7.0, 7.0, 4,
                               [("dave", 20.0), ("alice", 14.0)]],
                   f"transactional pipeline results: {results}")
        self.check(self.command_calls("multi") == multi_before + 1 and
                   self.command_calls("exec") == exec_before + 1,
                   "pipeline() sent one MULTI and one EXEC "
                   "(INFO commandstats)")

        # A queued command refused for its arity: EXECABORT, which redis-py
        # reports as the refused command's error, and nothing is applied.
        pipe = r.pipeline()
        pipe.zadd("board", {"erin": 1.0})
        pipe.execute_command("ZADD", "board")
        pipe.zincrby("board", 100.0, "alice")
        try:
            pipe.execute()
            self.check(False, "a transaction with a refused command ran")
        except redis.ResponseError as error:
            self.check("wrong number of arguments for 'zadd' command"
                       in str(error) and "Command # 2" in str(error),
                       f"the refused command's error: {error}")
        self.check(r.zscore("board", "erin") is None and
                   r.zscore("board", "alice") == 14.0,
                   "an aborted transaction applied nothing")
        pipe = r.pipeline()
        pipe.zadd("board", {"erin": 1.0})
        pipe.execute_command("NOSUCHCOMMAND", "x")
        try:
            pipe.execute()
            self.check(False, "a transaction with an unknown command ran")
        except redis.ResponseError as error:
            self.check("unknown command" in str(error),
                       f"the unknown command's error: {error}")
        self.check(r.zscore("board", "erin") is None,
                   "an aborted transaction applied nothing")

        # The same abort on one connection: EXEC's reply is EXECABORT.
        connection = r.connection_pool.get_connection("MULTI")
        try:
            connection.send_command("MULTI")
            self.check(connection.read_response() == "OK", "MULTI")
            connection.send_command("ZADD", "board", "1", "erin")
            self.check(connection.read_response() == "QUEUED", "QUEUED")
            connection.send_command("ZSCORE", "board")
            try:
                connection.read_response()
                self.check(False, "ZSCORE with no member was queued")
            except redis.ResponseError as error:
                self.check("wrong number of arguments" in str(error),
                           f"refused while queueing: {error}")
            connection.send_command("EXEC")
            try:
                connection.read_response()
                self.check(False, "EXEC after a refused command ran")
            except redis.exceptions.ExecAbortError as error:
                self.check("previous errors" in str(error),
                           f"ExecAbortError: {error}")
        finally:
            r.connection_pool.release(connection)
        self.check(r.zscore("board", "erin") is None,
                   "EXECABORT applied nothing")

        # An error while EXEC runs (a score that is no number) fails that
        # command only: Redis applies the others, and redis-py raises it.
        pipe = r.pipeline()
        pipe.zadd("board", {"erin": 1.0})
        pipe.execute_command("ZADD", "board", "not-a-number", "frank")
        try:
            pipe.execute()
            self.check(False, "a run-time error in EXEC was not raised")
        except redis.ResponseError as error:
            self.check("Command # 2" in str(error),
                       f"the run-time error names its command: {error}")
        self.check(r.zscore("board", "erin") == 1.0,
                   "the other commands of EXEC were applied")
        self.check(r.zrem("board", "erin") == 1, "zrem")

    def check_watch(self):
        r, other = self.r, self.other
        # transaction(): the function runs again after a concurrent write.
        attempts = []

        def add_bonus(pipe):
            score = pipe.zscore("board", "carol")
            attempts.append(score)
            if len(attempts) == 1:
                other.zincrby("board", 1.0, "carol")
            pipe.multi()
            pipe.zadd("board", {"carol": score + 10.0})

        results = r.transaction(add_bonus, "board")
        self.check(attempts == [3.0, 4.0],
                   f"transaction() retried once after the concurrent write "
                   f"(scores read: {attempts})")
        self.check(results == [0], f"transaction() results: {results}")
        self.check(r.zscore("board", "carol") == 14.0,
                   "the retried transaction applied on the fresh score")

        # watch() / multi() / execute() by hand: WatchError.
        with r.pipeline() as pipe:
            pipe.watch("board")
            score = pipe.zscore("board", "bob")
            other.zadd("board", {"bob": 50.0})
            pipe.multi()
            pipe.zadd("board", {"bob": score + 1.0})
            try:
                pipe.execute()
                self.check(False, "EXEC ran after a watched key changed")
            except redis.WatchError:
                pass
        self.check(r.zscore("board", "bob") == 50.0,
                   "the aborted transaction left the other client's write")
        # Unwatched and unchanged, the same pattern commits.
        with r.pipeline() as pipe:
            pipe.watch("board")
            score = pipe.zscore("board", "bob")
            other.zadd("elsewhere", {"x": 1.0})
            pipe.multi()
            pipe.zadd("board", {"bob": score + 1.0})
            self.check(pipe.execute() == [0],
                       "a write to another key does not abort")
        self.check(r.zscore("board", "bob") == 51.0, "the commit applied")
        # A missing watched key that another client creates; then a key
        # that another client deletes.
        for key, change in (("fresh", lambda: other.zadd("fresh", {"a": 1})),
                            ("elsewhere", lambda: other.delete("elsewhere"))):
            with r.pipeline() as pipe:
                pipe.watch(key)
                change()
                pipe.multi()
                pipe.zadd(key, {"b": 2.0})
                try:
                    pipe.execute()
                    self.check(False, f"EXEC ran after {key} changed")
                except redis.WatchError:
                    pass
        self.check(r.zscore("fresh", "b") is None and
                   not r.exists("elsewhere"),
                   "aborted transactions wrote nothing")
        # unwatch() (pipe.reset() sends UNWATCH) forgets the watch.
        with r.pipeline() as pipe:
            pipe.watch("board")
            pipe.unwatch()
            other.zadd("board", {"bob": 60.0})
            pipe.multi()
            pipe.zadd("board", {"bob": 61.0})
            self.check(pipe.execute() == [0], "EXEC after UNWATCH commits")
        self.check(r.delete("fresh") == 1, "delete of fresh")

    def check_racing_transactions(self):
        key, member = "race", "counter"
        self.check(self.r.zadd(key, {member: 0.0}) == 1, "race key")
        errors = []

        def worker():
            try:
                client = self.client()
                for _ in range(INCREMENTS_PER_THREAD):
                    def increment(pipe):
                        score = pipe.zscore(key, member)
                        pipe.multi()
                        pipe.zadd(key, {member: score + 1.0})
                    client.transaction(increment, key)
            except Exception as error:  # reported by the main thread
                errors.append(repr(error))

        threads = [threading.Thread(target=worker)
                   for _ in range(RACING_THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.check(not errors, f"racing transactions failed: {errors}")
        expected = float(RACING_THREADS * INCREMENTS_PER_THREAD)
        final = self.r.zscore(key, member)
        self.check(final == expected,
                   f"read-modify-write under WATCH lost updates: {final} "
                   f"after {expected:.0f} increments")
        self.check(self.r.delete(key) == 1, "delete of the race key")

    def check_plain_pipeline_and_scan(self):
        r = self.r
        multi_before = self.command_calls("multi")
        pipe = r.pipeline(transaction=False)
        for i in range(300):
            pipe.zadd(f"user:{i}:score", {"points": float(i)})
        for i in range(50):
            pipe.zadd(f"room:{i}:members", {"alice": 1.0})
        pipe.zscore("user:299:score", "points")
        pipe.dbsize()
        results = pipe.execute()
        self.check(results[:350] == [1] * 350, "zadd in a plain pipeline")
        self.check(results[350:] == [299.0, 351],
                   f"zscore and dbsize in a plain pipeline: {results[350:]}")
        self.check(self.command_calls("multi") == multi_before,
                   "pipeline(transaction=False) sent no MULTI")

        users = list(r.scan_iter(match="user:*", count=25))
        self.check(sorted(set(users)) ==
                   sorted(f"user:{i}:score" for i in range(300)),
                   f"scan_iter(match='user:*') found {len(set(users))} "
                   f"of 300 keys")
        everything = set(r.scan_iter(count=1000))
        self.check(len(everything) == 351 and "board" in everything,
                   f"scan_iter() found {len(everything)} of 351 keys")
        zsets = set(r.scan_iter(match="room:*", _type="zset"))
        self.check(len(zsets) == 50, f"scan_iter(_type='zset'): {len(zsets)}")

    def check_info_client_and_time(self):
        r = self.r
        version = r.info()["redis_version"]
        parts = str(version).split(".")
        self.check(len(parts) == 3 and all(p.isdigit() for p in parts),
                   f"info()['redis_version']: {version!r}")
        server = r.info("server")
        self.check(server.get("redis_mode") == "standalone" and
                   server.get("tcp_port") == self.port,
                   f"info('server'): {server}")
        keyspace = r.info("keyspace")
        self.check(keyspace.get("db0", {}).get("keys") == 351,
                   f"info('keyspace'): {keyspace}")

        client_id = r.client_id()
        self.check(isinstance(client_id, int) and client_id > 0,
                   f"client_id: {client_id!r}")
        self.check(r.client_setname("chat-worker-1") is True, "client_setname")
        self.check(r.client_getname() == "chat-worker-1", "client_getname")
        self.other.client_setname("chat-worker-2")
        listed = {int(c["id"]): c for c in r.client_list()}
        mine = listed.get(client_id)
        self.check(mine is not None and mine["name"] == "chat-worker-1" and
                   mine["addr"].startswith("127.0.0.1:"),
                   f"client_list shows this client by id and name: {mine}")
        self.check("chat-worker-2" in {c["name"] for c in listed.values()},
                   f"client_list shows the other client: {listed}")
        self.check(r.client_list(_type="normal") != [],
                   "client_list(_type='normal')")
        info = r.client_info()
        self.check(info.get("id") == client_id and
                   info.get("name") == "chat-worker-1" and
                   info.get("idle") == 0 and info.get("argv-mem", 0) > 0,
                   f"client_info: {info}")

        seconds, microseconds = r.time()
        self.check(isinstance(seconds, int) and 0 <= microseconds < 10**6,
                   f"time(): {(seconds, microseconds)}")
        self.check(abs(seconds - time.time()) < 3600,
                   f"time() is the machine's clock: {seconds}")

        self.check(r.unlink("user:0:score", "nokey") == 1, "unlink")
        self.check(r.flushdb(asynchronous=True) is True, "flushdb ASYNC")
        self.check(r.dbsize() == 0, "dbsize after flushdb")
        self.check(list(r.scan_iter()) == [], "scan_iter after flushdb")
        self.check(r.info("keyspace") == {},
                   f"info('keyspace') of an empty server: "
                   f"{r.info('keyspace')}")

    def run(self):
        self.check_keyspace_and_sorted_sets()
        self.check_transactional_pipeline()
        self.check_watch()
        self.check_racing_transactions()
        self.check_plain_pipeline_and_scan()
        self.check_info_client_and_time()
        self.r.close()
        self.other.close()
        print(f"ok: {self.server_name}: redis-py transactions, WATCH, "
              f"pipelines, scan_iter, info, client, time, keyspace and "
              f"sorted-set calls")


def main():
    if len(sys.argv) != 2:
        fail("usage: redis_py_clients_test.py <feedcore-server>")
    with running_redis_server() as redis_port:
        Scenario(redis_port, "redis-server").run()
    with running_server(sys.argv[1]) as port:
        Scenario(port, "feedcore-server").run()


if __name__ == "__main__":
    main()
