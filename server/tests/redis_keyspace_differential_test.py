"""The keyspace, transaction, connection and server commands of
feedcore-server against a real redis-server: the same commands, with their
error cases, sent to both over raw sockets in RESP2 and RESP3, the replies
compared byte for byte.

Usage: redis_keyspace_differential_test.py <path to feedcore-server>

Every step is a command and how to compare its replies:
  exact    byte for byte, errors included
  sorted   an array whose elements may come in any order (KEYS)
  shape    the same RESP types and lengths, not the values (TIME, CLIENT ID)
Replies that differ on purpose are not compared: where feedcore-server's
message for a bad score says more than Redis's "value is not a valid
float", the step sends a valid score. SCAN is compared by the set of keys
a whole scan returns, as cursors are each server's own.
"""

import sys

from server_harness import (RawReader, connect, encode, fail,
                            running_redis_server, running_server)

# A second client of each server, for WATCH: ("other", command).
OTHER = "other"


def steps():
    """(mode, command) pairs; mode "exact" unless a tuple says otherwise."""
    exact = []

    def add(*command, mode="exact", client="main"):
        exact.append((mode, client, list(command)))

    # Connection commands.
    add("PING")
    add("PING", "hello")
    add("PING", "a", "b")
    add("ECHO", "x y")
    add("SELECT", "0")
    add("SELECT", "x")
    add("WAIT", "0", "0")
    add("WAIT", "x", "0")
    add("WAIT", "0", "-1")
    add("TIME", mode="shape")
    add("TIME", "x")
    add("CLIENT", "ID", mode="shape")
    add("CLIENT", "GETNAME")
    add("CLIENT", "SETNAME", "tester")
    add("CLIENT", "GETNAME")
    add("CLIENT", "GETNAME", "x")
    add("CLIENT", "SETNAME", "bad\nname")
    add("CLIENT", "NOSUCH")
    add("CLIENT", "KILL", "1.2.3.4:5")
    add("CLIENT", "KILL", "ID", "0")
    add("CLIENT", "KILL", "ID", "x")
    add("CLIENT", "KILL", "BOGUS", "1")
    add("CLIENT", "KILL", "LADDR", "1.1.1.1:1")
    add("CLIENT", "KILL", "USER", "bob")
    add("CLIENT", "KILL", "SKIPME", "maybe")
    add("CLIENT", "KILL", "MAXAGE", "x")
    add("CLIENT", "LIST", "TYPE", "bogus")
    add("CLIENT", "LIST", "ID", "x")
    add("CLIENT", "REPLY", "LOUD")
    add("CLIENT", "NO-EVICT", "maybe")
    add("CLIENT", "NO-EVICT", "on")
    add("SLOWLOG", "GET", "-2")
    add("SLOWLOG", "NOPE")
    add("SLOWLOG", "LEN", "x")
    add("SLOWLOG", "RESET")
    add("SHUTDOWN", "ABORT")
    add("SHUTDOWN", "BOGUS")
    add("NOSUCHCOMMAND", "a", "b")

    # Keys.
    add("FLUSHALL")
    add("DBSIZE")
    add("ZADD", "a", "1", "m")
    add("ZADD", "b", "2", "n", "3", "o")
    add("ZADD", "c", "1", "m")
    add("EXISTS", "a", "b", "nope", "a")
    add("EXISTS")
    add("TYPE", "a")
    add("TYPE", "nope")
    add("TYPE")
    add("DBSIZE")
    add("DBSIZE", "x")
    add("KEYS", "*", mode="sorted")
    add("KEYS", "[ab]", mode="sorted")
    add("KEYS", "?", mode="sorted")
    add("KEYS", "nothing*")
    add("DEL", "nope")
    add("UNLINK", "c", "c", "nope")
    add("EXISTS", "c")
    add("ZREM", "a", "m")  # the last member: the key goes
    add("EXISTS", "a")
    add("TYPE", "a")
    add("DBSIZE")
    add("INFO", "keyspace")
    add("SCAN", "x")
    add("SCAN", "0", "COUNT", "0")
    add("SCAN", "0", "COUNT", "x")
    add("SCAN", "0", "MATCH")
    add("SCAN", "0", "BOGUS", "1")
    add("FLUSHDB", "x")
    add("FLUSHDB", "ASYNC")
    add("DBSIZE")
    add("INFO", "keyspace")
    add("ZADD", "a", "1", "m")
    add("FLUSHALL", "SYNC")
    add("DBSIZE")

    # RENAME and RENAMENX: the members, scores and expiry move; the
    # destination is replaced; a key renamed to itself is left.
    add("ZADD", "r1", "1", "a", "2", "b")
    add("ZADD", "r2", "5", "x")
    add("RENAME", "r1", "r3")
    add("EXISTS", "r1", "r3")
    add("ZRANGE", "r3", "0", "-1", "WITHSCORES")
    add("RENAME", "r3", "r2")
    add("ZRANGE", "r2", "0", "-1", "WITHSCORES")
    add("EXISTS", "r3")
    add("ZADD", "r3", "4", "c")
    add("ZRANGE", "r3", "0", "-1", "WITHSCORES")
    add("RENAME", "nope", "r9")
    add("RENAMENX", "nope", "r9")
    add("RENAME", "r2", "r2")
    add("RENAMENX", "r2", "r2")
    add("RENAMENX", "r2", "r3")
    add("ZRANGE", "r3", "0", "-1")
    add("RENAMENX", "r2", "r5")
    add("ZRANGE", "r5", "0", "-1")
    add("EXISTS", "r2")
    add("EXPIRE", "r5", "1000")
    add("RENAME", "r5", "r6")
    add("PERSIST", "r6")
    add("PERSIST", "r6")
    add("EXPIRE", "r3", "1000")
    add("RENAME", "r6", "r3")
    add("PERSIST", "r3")
    add("RENAME", "r6")
    add("RENAME", "r6", "a", "b")
    add("RENAMENX", "r6")
    add("MULTI")
    add("RENAME", "r3", "r7")
    add("ZCARD", "r7")
    add("RENAME", "r3", "r8")
    add("EXEC")
    add("WATCH", "r7")
    add("RENAME", "r7", "r8", client=OTHER)
    add("MULTI")
    add("ZCARD", "r8")
    add("EXEC")
    add("WATCH", "r9")
    add("RENAME", "r8", "r9", client=OTHER)
    add("MULTI")
    add("ZCARD", "r9")
    add("EXEC")
    add("WATCH", "r9")
    add("RENAME", "r9", "r9", client=OTHER)
    add("RENAMENX", "r9", "r9", client=OTHER)
    add("MULTI")
    add("ZCARD", "r9")
    add("EXEC")
    add("FLUSHALL")

    # Transactions.
    add("EXEC")
    add("DISCARD")
    add("MULTI")
    add("ZADD", "t", "5", "m")
    add("ZINCRBY", "t", "2", "m")
    add("ZSCORE", "t", "m")
    add("ZCARD", "t")
    add("EXEC")
    add("MULTI")
    add("MULTI")
    add("WATCH", "t")
    add("EXEC")
    add("MULTI")
    add("ZADD", "t", "1")
    add("ZADD", "t", "9", "z")
    add("EXEC")
    add("MULTI")
    add("NOSUCH", "x")
    add("EXEC")
    add("MULTI")
    add("SHUTDOWN")
    add("EXEC")
    add("MULTI")
    add("ZADD", "t", "9", "z")
    add("DISCARD")
    add("ZCARD", "t")
    add("MULTI")
    add("EXEC")
    add("WATCH")
    # WATCH: a write by another client aborts...
    add("WATCH", "t", "u")
    add("ZADD", "t", "6", "m", client=OTHER)
    add("MULTI")
    add("ZINCRBY", "t", "1", "m")
    add("EXEC")
    add("ZSCORE", "t", "m")
    # ...as does the client's own, a DEL and a FLUSHDB...
    add("WATCH", "t")
    add("ZADD", "t", "8", "m")
    add("MULTI")
    add("EXEC")
    add("WATCH", "t")
    add("DEL", "t", client=OTHER)
    add("MULTI")
    add("EXEC")
    add("ZADD", "t", "1", "m")
    add("WATCH", "t")
    add("FLUSHDB", client=OTHER)
    add("MULTI")
    add("EXEC")
    # ...a read, a write to another key, a failed write, writes that
    # change nothing and UNWATCH do not.
    add("ZADD", "t", "1", "m")
    add("WATCH", "t")
    add("ZSCORE", "t", "m", client=OTHER)
    add("ZADD", "other-key", "1", "m", client=OTHER)
    add("ZADD", "t", "1", client=OTHER)
    add("ZADD", "t", "1", "m", client=OTHER)
    add("ZADD", "t", "XX", "5", "absent", client=OTHER)
    add("ZADD", "t", "NX", "5", "m", client=OTHER)
    add("ZADD", "t", "GT", "0", "m", client=OTHER)
    add("ZINCRBY", "t", "0", "m", client=OTHER)
    add("ZREM", "t", "absent", client=OTHER)
    add("DEL", "absent-key", client=OTHER)
    add("MULTI")
    add("ZCARD", "t")
    add("EXEC")
    add("WATCH", "t")
    add("UNWATCH")
    add("ZADD", "t", "3", "m", client=OTHER)
    add("MULTI")
    add("EXEC")
    # RESET ends a transaction and the watches.
    add("WATCH", "t")
    add("MULTI")
    add("ZADD", "t", "4", "m")
    add("RESET")
    add("EXEC")
    add("ZSCORE", "t", "m")
    add("FLUSHALL")
    return exact


def shape(reply):
    """The RESP types and lengths of a reply, without its values."""
    out = []
    for line in reply.split(b"\r\n"):
        if line[:1] in (b"*", b"%", b"~", b"$"):
            out.append(line)
        elif line:
            out.append(line[:1])
    return out


def sorted_elements(reply):
    """The elements of a flat array of bulk strings, sorted."""
    parts = reply.split(b"\r\n")
    return sorted(parts[2::2]), parts[0]


def scan_keys(sock, reader):
    keys = set()
    cursor = b"0"
    while True:
        sock.sendall(encode("SCAN", cursor, "COUNT", 3))
        parts = reader.read().split(b"\r\n")
        # *2 $n cursor *m ($k key)...
        cursor = parts[2]
        keys.update(parts[5::2])
        if cursor == b"0":
            return keys


def compare(feedcore_port, redis_port, protocol):
    sockets = {}
    for name, port in (("feedcore-server", feedcore_port),
                       ("redis-server", redis_port)):
        main, other = connect(port, timeout=30), connect(port, timeout=30)
        sockets[name] = {"main": (main, RawReader(main)),
                         OTHER: (other, RawReader(other))}
        if protocol == 3:
            for sock, reader in sockets[name].values():
                sock.sendall(encode("HELLO", 3))
                reader.read()
    compared = 0
    for mode, client, command in steps():
        replies = {}
        for name in sockets:
            sock, reader = sockets[name][client]
            sock.sendall(encode(*command))
            replies[name] = reader.read()
        mine, theirs = replies["feedcore-server"], replies["redis-server"]
        if mode == "shape":
            equal = shape(mine) == shape(theirs)
        elif mode == "sorted":
            equal = sorted_elements(mine) == sorted_elements(theirs)
        else:
            equal = mine == theirs
        if not equal:
            fail(f"RESP{protocol}: {' '.join(command)!r} ({client}): "
                 f"feedcore-server replied {mine[:300]!r}, redis-server "
                 f"{theirs[:300]!r}")
        compared += 1
        if command[0] == "RESET" and protocol == 3:
            # RESET went back to RESP2 on both.
            for name in sockets:
                sock, reader = sockets[name]["main"]
                sock.sendall(encode("HELLO", 3))
                reader.read()

    # SCAN: the same keys from a whole scan, with keys enough for many
    # pages.
    for name in sockets:
        sock, reader = sockets[name]["main"]
        for i in range(50):
            sock.sendall(encode("ZADD", f"scan:{i}", 1, "m"))
            reader.read()
    found = {name: scan_keys(*sockets[name]["main"]) for name in sockets}
    if found["feedcore-server"] != found["redis-server"] or \
            len(found["redis-server"]) != 50:
        fail(f"RESP{protocol}: a whole SCAN found "
             f"{sorted(found['feedcore-server'])} on feedcore-server, "
             f"{sorted(found['redis-server'])} on redis-server")
    for name in sockets:
        sock, reader = sockets[name]["main"]
        sock.sendall(encode("FLUSHALL"))
        reader.read()
        for sock, _ in sockets[name].values():
            sock.close()
    return compared


def main():
    if len(sys.argv) != 2:
        fail("usage: redis_keyspace_differential_test.py <feedcore-server>")
    with running_server(sys.argv[1]) as port, \
            running_redis_server() as redis_port:
        compared = sum(compare(port, redis_port, protocol)
                       for protocol in (2, 3))
    print(f"ok: {compared} keyspace, transaction, connection and server "
          "command replies equal redis-server's (RESP2 and RESP3), and a "
          "whole SCAN finds the same keys")


if __name__ == "__main__":
    main()
