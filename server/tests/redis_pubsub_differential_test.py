"""Publish/subscribe of feedcore-server against a real redis-server: the
same commands from two clients of each server, in RESP2 and RESP3, and
every reply and every push a client receives compared byte for byte
(PUBSUB CHANNELS by its set of channels).

Then the feeds' channels, which redis-server has not: a subscriber of
`timeline:<user>` receives each entry a followee's FEED.PUBLISH puts in
the user's timeline, as the FEED.READ entry, and one of
`notifications:<user>` the counts after each notification; on a server
whose followees are merged at read (--hybrid_fanout_threshold), the
entries that reads merge are pushed as well.

Usage: redis_pubsub_differential_test.py <path to feedcore-server>
"""

import sys

from server_harness import (RawReader, connect, encode, fail,
                            running_redis_server, running_server)

SUB, PUB = "sub", "pub"


def steps():
    """(command client, command, [(client, messages to read)...], mode)."""
    out = []

    def add(client, *command, reads=None, mode="exact"):
        out.append((client, list(command), reads or [(client, 1)], mode))

    add(PUB, "FLUSHALL")
    add(SUB, "PUBSUB", "NUMPAT")
    add(SUB, "PUBSUB", "CHANNELS")
    add(SUB, "PUBSUB", "NUMSUB")
    add(SUB, "PUBSUB", "NUMSUB", "a", "b")
    add(SUB, "PUBSUB", "BOGUS")
    add(SUB, "PUBSUB", "CHANNELS", "a", "b")
    add(SUB, "PUBSUB", "NUMPAT", "x")
    add(SUB, "PUBSUB")
    add(SUB, "UNSUBSCRIBE")
    add(SUB, "PUNSUBSCRIBE")
    add(SUB, "UNSUBSCRIBE", "a", "b", reads=[(SUB, 2)])
    add(SUB, "PUBLISH", "ch")
    add(SUB, "PUBLISH", "nobody", "hi")
    add(SUB, "SUBSCRIBE")
    add(SUB, "PSUBSCRIBE")
    add(SUB, "SUBSCRIBE", "news", "sport", "news", reads=[(SUB, 3)])
    add(PUB, "PUBLISH", "news", "hello", reads=[(PUB, 1), (SUB, 1)])
    add(PUB, "PUBLISH", "sport", "", reads=[(PUB, 1), (SUB, 1)])
    add(PUB, "PUBSUB", "NUMSUB", "news", "sport", "x")
    add(PUB, "PUBSUB", "CHANNELS", mode="sorted")
    add(PUB, "PUBSUB", "CHANNELS", "n*")
    add(SUB, "PSUBSCRIBE", "n*", "s?ort", "n*", reads=[(SUB, 3)])
    add(PUB, "PUBLISH", "news", "again", reads=[(PUB, 1), (SUB, 2)])
    add(PUB, "PUBLISH", "nope", "x", reads=[(PUB, 1), (SUB, 1)])
    add(PUB, "PUBSUB", "NUMPAT")
    # RESP2 takes only the subscribing commands, PING, QUIT and RESET now.
    add(SUB, "ZADD", "k", "1", "m")
    add(SUB, "GET", "k")
    add(SUB, "PING")
    add(SUB, "PING", "hi")
    add(SUB, "UNSUBSCRIBE", "news")
    add(PUB, "PUBLISH", "news", "x", reads=[(PUB, 1), (SUB, 1)])
    add(SUB, "PUNSUBSCRIBE", "n*", "s?ort", "zz", reads=[(SUB, 3)])
    add(PUB, "PUBLISH", "news", "y")
    add(SUB, "UNSUBSCRIBE")
    add(SUB, "PING")
    add(SUB, "MULTI")
    add(SUB, "SUBSCRIBE", "a")
    add(SUB, "EXEC")
    add(PUB, "PUBLISH", "a", "in", reads=[(PUB, 1), (SUB, 1)])
    add(SUB, "RESET")
    add(PUB, "PUBSUB", "NUMSUB", "a")
    add(PUB, "FLUSHALL")
    return out


def sorted_elements(reply):
    parts = reply.split(b"\r\n")
    return sorted(parts[2::2]), parts[0]


def hello(sockets, client, protocol):
    for name in sockets:
        sock, reader = sockets[name][client]
        sock.sendall(encode("HELLO", protocol))
        reader.read()


def compare(feedcore_port, redis_port, protocol):
    sockets = {}
    for name, port in (("feedcore-server", feedcore_port),
                       ("redis-server", redis_port)):
        sockets[name] = {}
        for client in (SUB, PUB):
            sock = connect(port, timeout=30)
            sockets[name][client] = (sock, RawReader(sock))
    if protocol == 3:
        for client in (SUB, PUB):
            hello(sockets, client, 3)
    compared = 0
    for client, command, reads, mode in steps():
        received = {}
        for name in sockets:
            sockets[name][client][0].sendall(encode(*command))
            received[name] = [sockets[name][reader][1].read()
                              for reader, count in reads
                              for _ in range(count)]
        mine, theirs = received["feedcore-server"], received["redis-server"]
        if mode == "sorted":
            mine = [sorted_elements(m) for m in mine]
            theirs = [sorted_elements(t) for t in theirs]
        if mine != theirs:
            fail(f"RESP{protocol}: {' '.join(command)!r} ({client}): "
                 f"feedcore-server sent {mine!r}, redis-server {theirs!r}")
        compared += len(mine)
        if command[0] == "RESET" and protocol == 3:
            hello(sockets, client, 3)
    for name in sockets:
        for sock, _ in sockets[name].values():
            sock.close()
    return compared


def check_feed_channels(port):
    """Deliveries into a subscribed user's timeline and notifications."""
    sub, pub = connect(port, timeout=30), connect(port, timeout=30)
    subs, pubs = RawReader(sub), RawReader(pub)

    def call(*command):
        pub.sendall(encode(*command))
        return pubs.read()

    call("FEED.FOLLOW", "user:ann", "user:bob")
    sub.sendall(encode("SUBSCRIBE", "timeline:user:ann",
                       "notifications:user:ann"))
    for channel, count in (("timeline:user:ann", 1),
                           ("notifications:user:ann", 2)):
        expected = b"*3\r\n$9\r\nsubscribe\r\n$%d\r\n%s\r\n:%d\r\n" % (
            len(channel), channel.encode(), count)
        if subs.read() != expected:
            fail(f"SUBSCRIBE {channel}: not the confirmation {expected!r}")
    call("FEED.PUBLISH", "user:bob", "77", "1000", "hello ann")
    entry = (b"*5\r\n$2\r\n77\r\n$8\r\nuser:bob\r\n:1000\r\n")
    pushed = subs.read()
    prefix = (b"*3\r\n$7\r\nmessage\r\n$17\r\ntimeline:user:ann\r\n" + entry)
    if not pushed.startswith(prefix) or \
            not pushed.endswith(b"$9\r\nhello ann\r\n"):
        fail(f"a followee's publish pushed {pushed!r} to timeline:user:ann")
    # Another user's timeline is not pushed; a notification is.
    call("FEED.FOLLOW", "user:cid", "user:bob")
    call("FEED.PUBLISH", "user:bob", "78", "1001", "x", "NOTIFY", "user:ann")
    pushes = [subs.read(), subs.read()]
    kinds = sorted(p.split(b"\r\n")[4] for p in pushes)
    if kinds != [b"notifications:user:ann", b"timeline:user:ann"]:
        fail(f"a publish that notifies ann pushed {pushes!r}")
    counts = [p for p in pushes if b"notifications:" in p][0]
    if not counts.endswith(b"*3\r\n:1\r\n:1\r\n:1\r\n"):
        fail(f"the notification push is {counts!r}, not [1, 1, 1]")
    sub.sendall(encode("UNSUBSCRIBE"))
    subs.read()
    subs.read()
    call("FEED.PUBLISH", "user:bob", "79", "1002", "y")
    sub.sendall(encode("PING"))
    if subs.read() != b"+PONG\r\n":
        fail("a push reached a client that unsubscribed from everything")
    sub.close()
    pub.close()


def check_merged_channel(port):
    """A merged-at-read followee's publish reaches a timeline channel."""
    sub, pub = connect(port, timeout=30), connect(port, timeout=30)
    subs, pubs = RawReader(sub), RawReader(pub)
    for follower in ("user:ann", "user:cid"):  # bob passes the threshold
        pub.sendall(encode("FEED.FOLLOW", follower, "user:bob"))
        pubs.read()
    sub.sendall(encode("SUBSCRIBE", "timeline:user:ann"))
    subs.read()
    pub.sendall(encode("FEED.PUBLISH", "user:bob", "80", "2000", "merged"))
    pubs.read()
    pushed = subs.read()
    prefix = (b"*3\r\n$7\r\nmessage\r\n$17\r\ntimeline:user:ann\r\n"
              b"*5\r\n$2\r\n80\r\n$8\r\nuser:bob\r\n:2000\r\n")
    if not pushed.startswith(prefix) or not pushed.endswith(b"merged\r\n"):
        fail(f"a merged-at-read followee's publish pushed {pushed!r}")
    sub.close()
    pub.close()


def main():
    if len(sys.argv) != 2:
        fail("usage: redis_pubsub_differential_test.py <feedcore-server>")
    with running_server(sys.argv[1]) as port, \
            running_redis_server() as redis_port:
        compared = sum(compare(port, redis_port, protocol)
                       for protocol in (2, 3))
        check_feed_channels(port)
    with running_server(sys.argv[1], "--hybrid_fanout_threshold", "1") as port:
        check_merged_channel(port)
    print(f"ok: {compared} publish/subscribe replies and pushes equal "
          "redis-server's (RESP2 and RESP3); timeline and notification "
          "channels push a followee's entries (merged at read too) and the counts")


if __name__ == "__main__":
    main()
