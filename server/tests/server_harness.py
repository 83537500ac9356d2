"""Starts feedcore-server for an integration test and always stops it.

The server listens on 127.0.0.1 with port 0 (the system picks a free port,
the server prints it), so tests never collide on a port. `running_server`
is a context manager: on exit it sends SIGTERM, checks that the server
stopped cleanly, and kills it if it did not stop in time. `encode` and
`RawReader` write commands and read replies as raw RESP bytes, for tests
that compare replies byte for byte.
"""

import contextlib
import ctypes
import os
import resource
import select
import shutil
import signal
import socket
import subprocess
import sys
import time

STARTUP_TIMEOUT_S = 10
SHUTDOWN_TIMEOUT_S = 10


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def require_tool(name, package):
    path = shutil.which(name)
    if path is None:
        fail(f"{name} not found; install the Debian package {package} "
             "(scripts/install-deps does)")
    return path


def _die_with_parent():
    """Runs in the server's process before exec: if this test process is
    killed (a ctest timeout sends SIGKILL), the kernel kills the server
    too, so no server outlives its test."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


@contextlib.contextmanager
def running_server(server_binary, *flags):
    process = _start(server_binary, flags)
    stopped_cleanly = False
    try:
        port = _read_port(process)
        yield port
        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(timeout=SHUTDOWN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            fail(f"server did not stop within {SHUTDOWN_TIMEOUT_S} s "
                 "of SIGTERM")
        rest = process.stdout.read()
        if code != 0 or "feedcore-server stopped" not in rest:
            fail(f"server did not stop cleanly: exit code {code}, "
                 f"stdout {rest!r}, stderr {process.stderr.read()!r}")
        stopped_cleanly = True
    finally:
        if not stopped_cleanly and process.poll() is None:
            process.kill()
            process.wait()


@contextlib.contextmanager
def server_process(server_binary, *flags, file_size_limit=None):
    """Like running_server, for tests that check how the server stops:
    yields (process, port) and leaves stopping it to the test; kills the
    server on the way out if it is still running. `file_size_limit` (bytes)
    is the server's soft RLIMIT_FSIZE, a full disk for its files; a test
    lifts it with resource.prlimit."""
    process = _start(server_binary, flags, file_size_limit)
    try:
        yield process, _read_port(process)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def stop_server(process):
    """Sends SIGTERM and returns (exit code, stdout, stderr)."""
    process.send_signal(signal.SIGTERM)
    try:
        code = process.wait(timeout=SHUTDOWN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        fail(f"server did not stop within {SHUTDOWN_TIMEOUT_S} s of SIGTERM")
    return code, process.stdout.read(), process.stderr.read()


def _start(server_binary, flags, file_size_limit=None):
    if not os.access(server_binary, os.X_OK):
        fail(f"server binary {server_binary} is missing or not executable")

    def prepare():
        _die_with_parent()
        if file_size_limit is not None:
            hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, hard))

    return subprocess.Popen(
        [server_binary, "--address=127.0.0.1", "--port=0", "--threads=2",
         *flags],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=prepare)


def _read_port(process):
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    line = ""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 0.1)
        if ready:
            line = process.stdout.readline()
            break
        if process.poll() is not None:
            break
    prefix = "feedcore-server listening on 127.0.0.1:"
    if not line.startswith(prefix):
        process.kill()
        process.wait()
        fail(f"server did not start: stdout {line!r}, "
             f"stderr {process.stderr.read()!r}")
    return int(line[len(prefix):])


def connect(port, timeout=10):
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def read_until_closed(sock, limit=1 << 20):
    """Everything the server sends until it closes the connection."""
    data = b""
    while len(data) < limit:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    return data


@contextlib.contextmanager
def running_redis_server():
    """A real redis-server (persistence off) on a free 127.0.0.1 port, for
    tests that compare feedcore-server's replies with Redis's. Yields the
    port; always stops it."""
    binary = require_tool("redis-server", "redis-server")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "",
         "--appendonly", "no", "--daemonize", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        preexec_fn=_die_with_parent)
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            try:
                with connect(port, timeout=1) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                fail(f"redis-server did not answer PING on port {port}")
            time.sleep(0.05)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=SHUTDOWN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def encode(*args):
    out = b"*%d\r\n" % len(args)
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        out += b"$%d\r\n%s\r\n" % (len(data), data)
    return out


class RawReader:
    """Reads one reply at a time and returns its exact bytes."""

    def __init__(self, sock):
        self.sock = sock
        self.buffer = b""

    def _fill(self):
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            fail("connection closed in the middle of a reply")
        self.buffer += chunk

    def _line_end(self, pos):
        while True:
            end = self.buffer.find(b"\r\n", pos)
            if end >= 0:
                return end
            self._fill()

    def _skip(self, pos):
        """The position after the reply that starts at `pos`."""
        end = self._line_end(pos)
        kind, rest = self.buffer[pos:pos + 1], self.buffer[pos + 1:end]
        pos = end + 2
        if kind in (b"$", b"=") and int(rest) >= 0:
            while len(self.buffer) < pos + int(rest) + 2:
                self._fill()
            return pos + int(rest) + 2
        if kind in (b"*", b"~", b">") and int(rest) > 0:
            for _ in range(int(rest)):
                pos = self._skip(pos)
        if kind == b"%":
            for _ in range(2 * int(rest)):
                pos = self._skip(pos)
        return pos

    def read(self):
        end = self._skip(0)
        reply, self.buffer = self.buffer[:end], self.buffer[end:]
        return reply
