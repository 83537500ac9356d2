"""server/feedcore.conf documents every flag of feedcore-server.

Reads the ABSL_FLAG definitions of server/main.cc and checks that the
example configuration has, for each flag, a directive (set or commented
out) named like the flag with dashes, preceded by a `# Default:` line that
gives the flag's default, and sets it to that default (but for `dir` and
`appendonly`); and that it names no directive the server lacks.

Usage: config_test.py SOURCE_DIR
"""

import os
import re
import sys

# Directives the example sets for the packaged service, not to the default.
PACKAGED = {"dir", "appendonly"}


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def flag_defaults(main_cc):
    """{flag name: default as the configuration writes it}."""
    text = open(main_cc).read()
    flags = {}
    for kind, name, default in re.findall(
            r'ABSL_FLAG\(\s*([\w:]+)\s*,\s*(\w+)\s*,\s*([^,]+?)\s*,', text):
        if kind == "bool":
            value = "yes" if default == "true" else "no"
        elif kind == "std::string":
            value = default.strip('"')
        else:
            # Integer expressions such as `size_t{1} << 30` or `64 * 1024`.
            expression = re.sub(r"size_t\{(\d+)\}", r"\1", default)
            if not re.fullmatch(r"[\d\s<*+]+", expression):
                fail(f"cannot read the default of --{name}: {default}")
            value = str(eval(expression))
        flags[name.replace("_", "-")] = value
    if len(flags) < 10:
        fail(f"read only {len(flags)} flags from {main_cc}")
    return flags


def main():
    if len(sys.argv) != 2:
        fail("usage: config_test.py SOURCE_DIR")
    source = sys.argv[1]
    flags = flag_defaults(os.path.join(source, "server", "main.cc"))
    lines = open(os.path.join(source, "server", "feedcore.conf")).read() \
        .splitlines()
    directive = re.compile(r"^(?:# )?([a-z][a-z-]*) (\S.*)$")
    seen = {}
    default = None
    for line in lines:
        if line.startswith("# Default:"):
            default = line[len("# Default:"):].strip()
            continue
        match = directive.match(line)
        if not match or default is None:
            continue
        name = match.group(1)
        if name not in flags:
            fail(f"feedcore.conf sets {name}, which is no flag of the server")
        seen.setdefault(name, default)
        if not line.startswith("#"):
            # The packaged service's own values; every other is the default.
            if name not in PACKAGED and match.group(2) != flags[name]:
                fail(f"feedcore.conf sets {name} {match.group(2)}, not its "
                     f"default {flags[name]}")
            default = None  # one set directive per Default line
    for name, value in flags.items():
        if name not in seen:
            fail(f"feedcore.conf does not document {name}")
        documented = seen[name]
        if value == "" and not documented.startswith("empty"):
            fail(f"{name}: the default is empty, the file says {documented}")
        if value != "" and documented.split()[0] != value:
            fail(f"{name}: the default is {value}, the file says {documented}")
    print(f"config_test: OK, {len(flags)} flags")


if __name__ == "__main__":
    main()
