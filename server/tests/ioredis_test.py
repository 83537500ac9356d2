"""feedcore-server driven by the Node.js client ioredis: runs
node/ioredis_test.js against a real redis-server, then against
feedcore-server.

Usage: ioredis_test.py <path to feedcore-server>

ioredis comes from npm at the version pinned in node/package-lock.json;
scripts/install-deps installs Node.js and npm when they are missing and
runs `npm ci` in node/ (its node_modules/ is not part of the source).
A missing node, npm or ioredis fails the test, saying how to install it.
"""

import json
import os
import shutil
import subprocess
import sys

from server_harness import fail, running_redis_server, running_server

NODE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "node")
SCRIPT_TIMEOUT_S = 50


def require_ioredis():
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            fail(f"{tool} not found; install Node.js and npm (the Debian "
                 "packages nodejs and npm; scripts/install-deps does)")
    with open(os.path.join(NODE_DIR, "package.json")) as f:
        pinned = json.load(f)["dependencies"]["ioredis"]
    installed_manifest = os.path.join(NODE_DIR, "node_modules", "ioredis",
                                      "package.json")
    try:
        with open(installed_manifest) as f:
            installed = json.load(f)["version"]
    except OSError:
        installed = None
    if installed != pinned:
        fail(f"ioredis {pinned} is not installed in {NODE_DIR} (found "
             f"{installed}); run scripts/install-deps, or `npm ci` in that "
             "folder")


def run_script(port, server_name, *mode):
    try:
        result = subprocess.run(
            ["node", "ioredis_test.js", str(port), server_name, *mode],
            cwd=NODE_DIR, capture_output=True, text=True,
            timeout=SCRIPT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        fail(f"ioredis_test.js against {server_name} did not finish within "
             f"{SCRIPT_TIMEOUT_S} s")
    sys.stdout.write(result.stdout)
    if result.returncode != 0:
        fail(f"ioredis_test.js against {server_name} exited "
             f"{result.returncode}:\n{result.stderr}")


def main():
    if len(sys.argv) != 2:
        fail("usage: ioredis_test.py <feedcore-server>")
    require_ioredis()
    with running_redis_server() as redis_port:
        run_script(redis_port, "redis-server")
    with running_server(sys.argv[1]) as port:
        run_script(port, "feedcore-server", "feedcore")


if __name__ == "__main__":
    main()
