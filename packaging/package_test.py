"""The Debian package that `make package` builds holds what it must.

Runs cpack -G DEB with the build tree's CPackConfig.cmake into a temporary
directory (the programs and libraries must be built) and checks the .deb
with dpkg-deb, without installing it (dpkg-deb -x unpacks it there): the two programs, the library and
its headers, the configuration as a conffile, the systemd unit, the
computed dependencies and the maintainer script that creates the user and
the data directory.

Usage: package_test.py BUILD_DIR
"""

import glob
import os
import shutil
import subprocess
import sys
import tempfile


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def run(*command):
    result = subprocess.run(command, capture_output=True, text=True,
                            timeout=300)
    if result.returncode != 0:
        fail(f"{' '.join(command)} exited {result.returncode}:\n"
             f"{result.stdout}\n{result.stderr}")
    return result.stdout


def main():
    if len(sys.argv) != 2:
        fail("usage: package_test.py BUILD_DIR")
    build = sys.argv[1]
    for tool in ("cpack", "dpkg-deb", "dpkg-shlibdeps"):
        if shutil.which(tool) is None:
            fail(f"{tool} not found (Debian packages cmake, dpkg, dpkg-dev)")
    out = tempfile.mkdtemp(prefix="feedcore-package-test-")
    try:
        run("cpack", "-G", "DEB", "-B", out, "--config",
            os.path.join(build, "CPackConfig.cmake"))
        debs = glob.glob(os.path.join(out, "*.deb"))
        if len(debs) != 1:
            fail(f"expected one .deb in {out}, found {debs}")
        deb = debs[0]
        listing = run("dpkg-deb", "-c", deb)
        paths = {line.split()[-1] for line in listing.splitlines()}
        for wanted in ("./usr/bin/feedcore-server",
                       "./usr/bin/feedcore-check",
                       "./etc/feedcore/feedcore.conf",
                       "./usr/lib/systemd/system/feedcore-server.service",
                       "./usr/include/feedcore/feedcore.h",
                       "./usr/include/feedcore/durable_store.h"):
            if wanted not in paths:
                fail(f"{wanted} is not in the package:\n{listing}")
        if not any(p.startswith("./usr/lib/") and
                   os.path.basename(p).startswith("libfeedcore.")
                   for p in paths):
            fail(f"the library is not in the package:\n{listing}")
        if not any(p.endswith("/feedcore.pc") for p in paths):
            fail(f"feedcore.pc is not in the package:\n{listing}")
        if any(p.endswith("/feedcore-demo") for p in paths):
            fail("the examples are in the package")

        conffiles = run("dpkg-deb", "-I", deb, "conffiles").split()
        if conffiles != ["/etc/feedcore/feedcore.conf"]:
            fail(f"conffiles is {conffiles}")
        control = run("dpkg-deb", "-I", deb, "control")
        depends = next((line for line in control.splitlines()
                        if line.startswith("Depends:")), "")
        # libc6 comes only from dpkg-shlibdeps; adduser from the scripts.
        for wanted in ("libc6", "libstdc++6", "adduser"):
            if wanted not in depends:
                fail(f"Depends lacks {wanted}: {depends!r}")
        postinst = run("dpkg-deb", "-I", deb, "postinst")
        for wanted in ("adduser --system", "/var/lib/feedcore"):
            if wanted not in postinst:
                fail(f"postinst lacks {wanted!r}:\n{postinst}")
        # Unpacked into the temporary directory (not installed).
        root = os.path.join(out, "root")
        run("dpkg-deb", "-x", deb, root)
        with open(os.path.join(
                root, "usr/lib/systemd/system/feedcore-server.service")) as f:
            unit = f.read().splitlines()
        for wanted in ("ExecStart=/usr/bin/feedcore-server "
                       "/etc/feedcore/feedcore.conf",
                       "User=feedcore", "Restart=on-failure",
                       "ReadWritePaths=/var/lib/feedcore"):
            if wanted not in unit:
                fail(f"the unit lacks {wanted!r}")
        if not os.access(os.path.join(root, "usr/bin/feedcore-check"),
                         os.X_OK):
            fail("feedcore-check is not executable in the package")
    finally:
        shutil.rmtree(out, ignore_errors=True)
    print("package_test: OK")


if __name__ == "__main__":
    main()
