#!/usr/bin/env python3
"""feedcore-server run as an operator runs redis-server.

  operations_test.py <feedcore-server>

--help and -h list every setting with its default and exit 0; --version
and -v print the version INFO reports; a config file in redis.conf syntax
configures the server, the command line overrides it, and a bad line stops
the server before it starts with the file and line; CONFIG SET timeout
reaches connections already open. Assertions are on what the server did
(printed, replied, closed), never on how long it took.
"""

import os
import re
import subprocess
import sys
import tempfile

import redis

from server_harness import connect, encode, fail, read_until_closed
from server_harness import running_server

SETTINGS = [
    "address", "port", "threads", "max_clients", "timeout", "requirepass",
    "requirepass_file", "protected_mode", "client_query_buffer_limit",
    "client_output_buffer_limit", "client_query_buffer_total_limit",
    "max_bulk_bytes", "max_args", "max_inline_bytes", "max_request_bytes",
    "leaderboard_partitions", "engine_shards", "fanout_threads",
    "inactive_after_seconds", "max_payload_bytes", "repost_window",
    "repost_kinds", "snapshot_file", "load",
    "snapshot_on_exit", "dir", "appendonly", "appendfsync",
]


def run(binary, *args):
    return subprocess.run([binary, *args], capture_output=True, text=True,
                          timeout=60)


def check_help(binary):
    for flag in ("--help", "-h"):
        result = run(binary, flag)
        if result.returncode != 0:
            fail(f"{flag} exited {result.returncode}: {result.stderr!r}")
        for name in SETTINGS:
            if not re.search(rf"^  --{name} \(default: [^)]*\)\n      \S",
                             result.stdout, re.MULTILINE):
                fail(f"{flag} does not describe --{name}: {result.stdout!r}")
    print("ok: --help and -h list every flag with its default and exit 0")


def check_version(binary):
    with running_server(binary) as port:
        info = redis.Redis(port=port).info("server")
    expected = f"feedcore-server {info['feedcore_version']}\n"
    for flag in ("--version", "-v"):
        result = run(binary, flag)
        if result.returncode != 0 or result.stdout != expected:
            fail(f"{flag}: exit {result.returncode}, {result.stdout!r}, "
                 f"expected {expected!r}")
    print("ok: --version and -v print the version and exit 0")


def check_config_file(binary, directory):
    path = os.path.join(directory, "feedcore.conf")
    with open(path, "w") as conf:
        conf.write("# feedcore-server settings\n"
                   "\n"
                   "port 1\n"                 # the command line says 0
                   "Protected-Mode yes\n"
                   "maxclients 77\n"
                   "requirepass \"pa ss\"\n"
                   "client-output-buffer-limit 1mb\n"
                   "max_bulk_bytes 2k\n")
    with running_server(binary, path) as port:
        client = redis.Redis(port=port, password="pa ss")
        got = client.config_get("*")
        want = {"max-clients": "77", "maxclients": "77", "port": "0",
                "protected-mode": "yes", "requirepass": "pa ss",
                "client-output-buffer-limit": "1048576",
                "max-bulk-bytes": "2000", "timeout": "0"}
        for name, value in want.items():
            if got.get(name) != value:
                fail(f"CONFIG GET {name} is {got.get(name)!r}, "
                     f"expected {value!r}: {got!r}")
    print("ok: the server starts from a config file; flags override it")

    bad = os.path.join(directory, "bad.conf")
    with open(bad, "w") as conf:
        conf.write("port 0\nprotected-mode maybe\n")
    result = run(binary, bad)
    if (result.returncode != 1 or "listening" in result.stdout or
            f"{bad}:2: 'protected-mode': 'maybe' is not yes or no"
            not in result.stderr):
        fail(f"bad config file: exit {result.returncode}, "
             f"stdout {result.stdout!r}, stderr {result.stderr!r}")
    out_of_range = os.path.join(directory, "range.conf")
    with open(out_of_range, "w") as conf:
        conf.write("# parses, but no server takes no client\nmaxclients 0\n")
    result = run(binary, out_of_range)
    if (result.returncode != 1 or "listening" in result.stdout or
            f"{out_of_range}:2: --max_clients must be 1..1000000, got 0"
            not in result.stderr):
        fail(f"out-of-range config value: exit {result.returncode}, "
             f"stdout {result.stdout!r}, stderr {result.stderr!r}")
    print("ok: a bad config line stops the server with file:line")


def check_config_set_timeout(binary):
    with running_server(binary) as port:
        client = redis.Redis(port=port)
        with connect(port, timeout=60) as idle:
            # Open before the change: its wait for a command is re-armed
            # with the new timeout by the reply below.
            idle.sendall(encode("PING"))
            if idle.recv(64) != b"+PONG\r\n":
                fail("no PONG on the idle connection")
            if client.config_set("timeout", 1) is not True:
                fail("CONFIG SET timeout 1 was refused")
            if client.config_get("timeout") != {"timeout": "1"}:
                fail(f"CONFIG GET timeout: {client.config_get('timeout')}")
            with connect(port, timeout=60) as fresh:
                idle.sendall(encode("PING"))
                if idle.recv(64) != b"+PONG\r\n":
                    fail("no PONG after CONFIG SET")
                # Both are closed by the server; a timeout of the socket
                # (60 s) would raise instead.
                read_until_closed(idle)
                read_until_closed(fresh)
        # A new client: the first one idled past the timeout too, and the
        # server may have closed it meanwhile.
        closed = redis.Redis(port=port).info("stats")[
            "idle_timeout_disconnections"]
        if closed < 2:
            fail(f"idle_timeout_disconnections is {closed}, expected >= 2")
    print("ok: CONFIG SET timeout closes idle connections, old and new")


def main():
    if len(sys.argv) != 2:
        fail("usage: operations_test.py <feedcore-server>")
    binary = sys.argv[1]
    check_help(binary)
    check_version(binary)
    with tempfile.TemporaryDirectory() as directory:
        check_config_file(binary, directory)
    check_config_set_timeout(binary)


if __name__ == "__main__":
    main()
