#!/usr/bin/env python3
"""feedcore-server's client limits and access control, over real sockets.

  limits_test.py <feedcore-server>

Each check starts a server on a free 127.0.0.1 port with the flags it
tests: an idle connection closed by --timeout; a bulk length over
--max_bulk_bytes refused at its header and the connection closed; a client
over --client_query_buffer_limit, over --client_output_buffer_limit (by
replies, or by pushes to a subscriber that stops reading), and
one whose partial command takes all clients past
--client_query_buffer_total_limit, each closed and counted in INFO stats;
--requirepass_file with AUTH, AUTH default, HELLO 3 AUTH, WRONGPASS and
NOAUTH; and a refusal to listen on 0.0.0.0 without a password. The
assertions are on what the server did (closed, counted, replied), never on
how long it took.
"""

import os
import re
import socket
import subprocess
import sys
import tempfile
import time

from server_harness import (connect, fail, read_until_closed, running_server)

NOAUTH = b"-NOAUTH Authentication required.\r\n"
WRONGPASS = (b"-WRONGPASS invalid username-password pair or user is "
             b"disabled.\r\n")


def command(*args):
    out = b"*%d\r\n" % len(args)
    for arg in args:
        arg = arg if isinstance(arg, bytes) else str(arg).encode()
        out += b"$%d\r\n%s\r\n" % (len(arg), arg)
    return out


def read_reply(sock):
    """One complete RESP2 reply (simple, error, integer or bulk string)."""
    data = b""
    while b"\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            fail(f"connection closed before a reply; got {data!r}")
        data += chunk
    if data.startswith(b"$"):
        length = int(data[1:data.index(b"\r\n")])
        end = data.index(b"\r\n") + 2 + max(length, 0) + 2
        while len(data) < end:
            chunk = sock.recv(65536)
            if not chunk:
                fail("connection closed inside a bulk reply")
            data += chunk
    return data


def call(sock, *args):
    sock.sendall(command(*args))
    return read_reply(sock)


def info_field(port, field, password=None):
    with connect(port) as sock:
        if password is not None:
            call(sock, "AUTH", password)
        info = call(sock, "INFO").decode()
    match = re.search(rf"\r\n{field}:(\d+)\r\n", info)
    if not match:
        fail(f"INFO has no {field}: {info!r}")
    return int(match.group(1))


def closed_by_server(sock, payload=b""):
    """Sends `payload` (the server may close while it is being sent) and
    returns what the server sent before closing."""
    try:
        if payload:
            sock.sendall(payload)
        return read_until_closed(sock)
    except (ConnectionResetError, BrokenPipeError):
        return b""


def wait_for(condition, what):
    """Polls `condition` until it holds; the deadline only bounds a hang."""
    deadline = time.monotonic() + 30
    while not condition():
        if time.monotonic() > deadline:
            fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def check_idle_timeout(binary):
    with running_server(binary, "--timeout=1") as port:
        with connect(port, timeout=60) as sock:
            if call(sock, "PING") != b"+PONG\r\n":
                fail("PING before idling")
            if closed_by_server(sock) != b"":
                fail("idle connection: unexpected bytes before the close")
        if info_field(port, "idle_timeout_disconnections") != 1:
            fail("the idle close was not counted")
    print("ok: --timeout closes an idle connection and counts it")


def check_bulk_refused(binary):
    with running_server(binary) as port:
        with connect(port) as sock:
            # Only the header: the refusal must not wait for 2 GiB.
            data = closed_by_server(
                sock, b"*2\r\n$4\r\nECHO\r\n$2147483647\r\n")
            if not data.startswith(b"-ERR Protocol error: invalid bulk "
                                   b"length"):
                fail(f"2 GiB bulk length: got {data!r}")
        with connect(port) as sock:
            data = closed_by_server(sock, b"*100000000\r\n")
            if not data.startswith(b"-ERR Protocol error: invalid multibulk "
                                   b"length"):
                fail(f"huge multibulk count: got {data!r}")
    print("ok: oversized bulk length and count refused at once, closed")


def check_query_buffer_limit(binary):
    with running_server(binary, "--client_query_buffer_limit=65536") as port:
        with connect(port) as sock:
            header = b"*2\r\n$4\r\nECHO\r\n$1000000\r\n"
            if closed_by_server(sock, header + b"x" * 200_000) != b"":
                fail("query buffer limit: expected a close")
        if info_field(port, "client_query_buffer_limit_disconnections") != 1:
            fail("the query buffer close was not counted")
        with connect(port) as sock:  # a command under the limit is served
            if call(sock, "ECHO", b"y" * 10000) != b"$10000\r\n" + \
                    b"y" * 10000 + b"\r\n":
                fail("a command under the query limit was not served")
    print("ok: --client_query_buffer_limit closes and counts")


def check_output_buffer_limit(binary):
    with running_server(binary, "--client_output_buffer_limit=4096") as port:
        with connect(port) as sock:
            args = ["ZADD", "big"]
            for i in range(500):
                args += [i, f"member:{i}"]
            if call(sock, *args) != b":500\r\n":
                fail("ZADD of 500 members")
            data = closed_by_server(sock, command("ZRANGE", "big", "0", "-1"))
            if data != b"":
                fail(f"output limit: expected a close, got {data[:80]!r}")
        if info_field(port, "client_output_buffer_limit_disconnections") != 1:
            fail("the output buffer close was not counted")
        with connect(port) as sock:
            if not call(sock, "ZRANGE", "big", "0", "9").startswith(b"*10\r\n"):
                fail("a reply under the output limit was not served")
    print("ok: --client_output_buffer_limit closes and counts")


def check_subscriber_output_limit(binary):
    """A subscriber that stops reading is closed once its queued pushes
    pass the output limit; the publisher is never held up."""
    with running_server(binary, "--client_output_buffer_limit=65536") as port:
        with connect(port) as subscriber, connect(port) as publisher:
            if call(subscriber, "SUBSCRIBE", "flood") != \
                    b"*3\r\n$9\r\nsubscribe\r\n$5\r\nflood\r\n:1\r\n":
                fail("SUBSCRIBE flood")
            message = b"m" * 4096
            # The socket buffers take some megabytes before pushes queue.
            for sent in range(1, 100_000):
                reply = call(publisher, "PUBLISH", "flood", message)
                if reply == b":0\r\n":
                    break
                if reply != b":1\r\n":
                    fail(f"PUBLISH {sent}: {reply!r}")
            else:
                fail("a subscriber that never reads was never closed")
        if info_field(port, "client_output_buffer_limit_disconnections") != 1:
            fail("the subscriber's close was not counted")
    print(f"ok: a subscriber that stops reading is closed after {sent} "
          "pushes and counted; its publisher went on")


def check_query_buffer_total_limit(binary):
    # One partial command of 512 KiB fits; a second of 999,000 bytes takes
    # the total past 1,300,000 and is closed. The first goes on.
    with running_server(binary,
                        "--client_query_buffer_total_limit=1300000") as port:
        header = b"*2\r\n$4\r\nECHO\r\n$1000000\r\n"
        first = connect(port)
        first.sendall(header + b"a" * 524288)
        wait_for(lambda: info_field(port, "client_query_buffers_bytes")
                 >= 524288, "the first partial command to be held")
        with connect(port) as second:
            if closed_by_server(second, header + b"b" * 999000) != b"":
                fail("total query limit: expected the second client closed")
        counted = info_field(port,
                             "client_query_buffer_total_limit_disconnections")
        if counted != 1:
            fail(f"total query limit: {counted} closes counted, expected 1")
        first.sendall(b"a" * (1000000 - 524288) + b"\r\n")
        reply = read_reply(first)
        if reply != b"$1000000\r\n" + b"a" * 1000000 + b"\r\n":
            fail("the client under the total limit lost its command")
        first.close()
        wait_for(lambda: info_field(port, "client_query_buffers_bytes")
                 < 65536, "held query bytes to be given back")
    print("ok: --client_query_buffer_total_limit closes the client that "
          "goes over, counts it, spares the others")


def check_auth(binary):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "password")
        with open(path, "w") as f:
            f.write("correct horse\n")  # the newline is not part of it
        # Redis's dashed spelling works as well as the underscored one.
        with running_server(binary, f"--requirepass-file={path}") as port:
            with connect(port) as sock:
                if call(sock, "PING") != NOAUTH:
                    fail("PING before AUTH must get NOAUTH")
                if call(sock, "ZADD", "k", "1", "a") != NOAUTH:
                    fail("ZADD before AUTH must get NOAUTH")
                if call(sock, "AUTH", "wrong") != WRONGPASS:
                    fail("a wrong password must get WRONGPASS")
                if call(sock, "AUTH", "correct horse") != b"+OK\r\n":
                    fail("the right password must be accepted")
                if call(sock, "PING") != b"+PONG\r\n":
                    fail("PING after AUTH")
            with connect(port) as sock:
                if call(sock, "AUTH", "default", "correct horse") != \
                        b"+OK\r\n":
                    fail("AUTH default password")
            with connect(port) as sock:
                sock.sendall(command("HELLO", "3", "AUTH", "default", "nope"))
                if read_reply(sock) != WRONGPASS:
                    fail("HELLO with a wrong password")
                sock.sendall(command("HELLO", "3", "AUTH", "default",
                                     "correct horse"))
                data = sock.recv(4096)
                if not data.startswith(b"%8\r\n"):
                    fail(f"HELLO 3 AUTH: got {data!r}")
            with connect(port) as sock:
                # Before AUTH, a large argument is refused at its header.
                data = closed_by_server(sock,
                                        b"*2\r\n$4\r\nAUTH\r\n$100000\r\n")
                if data != (b"-ERR Protocol error: unauthenticated bulk "
                            b"length\r\n"):
                    fail(f"unauthenticated large bulk: got {data!r}")
        print("ok: --requirepass_file, AUTH, HELLO AUTH, WRONGPASS, NOAUTH")


def check_protected_mode(binary):
    result = subprocess.run(
        [binary, "--address=0.0.0.0", "--port=0"], capture_output=True,
        text=True, timeout=60)
    if result.returncode != 1 or "listening" in result.stdout:
        fail(f"0.0.0.0 without a password must not start: {result!r}")
    for hint in ("--requirepass_file", "--protected_mode=no"):
        if hint not in result.stderr:
            fail(f"the refusal must say what to do ({hint}): "
                 f"{result.stderr!r}")
    print("ok: no listening beyond loopback without a password")


def main():
    if len(sys.argv) != 2:
        fail("usage: limits_test.py <feedcore-server>")
    binary = sys.argv[1]
    check_protected_mode(binary)
    check_bulk_refused(binary)
    check_query_buffer_limit(binary)
    check_output_buffer_limit(binary)
    check_subscriber_output_limit(binary)
    check_query_buffer_total_limit(binary)
    check_auth(binary)
    check_idle_timeout(binary)


if __name__ == "__main__":
    main()
