#!/usr/bin/env python3
"""Checks that scripts/install-deps.sh installs every tool the tests call.

A test says what it needs with `need_tool NAME` (tests/lib.sh), `command -v
NAME`, or a test of a file a package ships (`[ -r /usr/share/OVMF/... ] ||
skip`). Each of those must be on this machine, and must come from a package
that install-deps.sh names, one those packages depend on, or one every
Debian system has (Essential: yes or Priority: required). A tool present
only because someone installed it by hand would pass here and fail on a new
machine an hour into the suite: this finds it in seconds.

usage: tests/tools/check-deps.py [ROOT]   (default: the checkout holding it)
Prints one line per problem and exits 1 if there is any.
"""
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
# Where the tests and the test command live; the benches are not tests.
SEARCHED = ["tests", "scripts"]
# test_skips asks for a tool that must not exist, to see the skip.
NOT_A_DEPENDENCY = {"reprosign-no-such-tool"}

NEED = re.compile(r"(?:^|[;{(&|'])\s*need_tool\s+(\"[^\"]+\"|[^\s;&|)']+)")
COMMAND_V = re.compile(r"command -v\s+(\"[^\"]+\"|[A-Za-z0-9_.+/$-]+)")
# A file a test reads from a package: `[ -r /usr/share/...` before a skip.
FILE_TEST = re.compile(r"\[ -[rex] \"?(/usr/[^\s\"\]]+)\"? \].*\bskip\b")
ASSIGN = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=\"?(/[^\s\"]+)\"?\s*$")


def script_files():
    for top in SEARCHED:
        for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
            for name in names:
                if name.endswith((".sh", ".bash")) or name in ("run",):
                    yield os.path.join(dirpath, name)


def wanted():
    """(what, where) pairs: a command name or an absolute path, and the file asking."""
    out = []
    for path in script_files():
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        assigned = {}
        for line in text.splitlines():
            m = ASSIGN.match(line)
            if m:
                assigned[m.group(1)] = m.group(2)
        rel = os.path.relpath(path, ROOT)
        for line in text.splitlines():
            for m in list(NEED.finditer(line)) + list(COMMAND_V.finditer(line)):
                name = m.group(1).strip('"')
                var = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", name)
                if var:
                    if var.group(1) not in assigned:
                        continue   # a run-time choice (a tool under test): not a package's
                    name = assigned[var.group(1)]
                if "$" in name or name in NOT_A_DEPENDENCY:
                    continue
                out.append((name, rel))
            m = FILE_TEST.search(line)
            if m and "$" not in m.group(1):
                out.append((m.group(1), rel))
    return out


def installed_packages():
    """The packages install-deps.sh names, with everything they depend on."""
    listed = subprocess.run(["sh", os.path.join(ROOT, "scripts/install-deps.sh"), "--list"],
                            check=True, capture_output=True, text=True).stdout.split()
    closure = subprocess.run(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests",
                              "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances"] + listed,
                             check=True, capture_output=True, text=True).stdout
    names = {line.strip() for line in closure.splitlines() if line and not line[0].isspace()}
    base = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Essential} ${Priority}\n"],
                          check=True, capture_output=True, text=True).stdout
    for line in base.splitlines():
        pkg, essential, priority = (line.split() + ["", ""])[:3]
        if essential == "yes" or priority == "required":
            names.add(pkg)
    return set(listed), names


def candidates(path):
    """PATH, what it links to, and their other halves under usrmerge (/bin/x is shipped as /usr/bin/x)."""
    out = []
    for p in (path, os.path.realpath(path)):
        out += [p, p[4:] if p.startswith("/usr/") else "/usr" + p]
    return out


def owners(paths):
    """{path: package} for every path some package ships, in one dpkg-query (each call reads every list file)."""
    wanted = sorted({c for p in paths for c in candidates(p)})
    r = subprocess.run(["dpkg-query", "-S"] + wanted, capture_output=True, text=True)
    found = {}
    for line in r.stdout.splitlines():
        pkgs, _, path = line.partition(": ")
        if pkgs.startswith("diversion by "):
            continue
        found[path.strip()] = pkgs.split(",")[0].strip()
    return found


def command_path(name, package_of):
    """Where NAME is: the copy on PATH if a package ships it, else a packaged copy (pyenv's python3 comes first
    on some PATHs; Debian's is what a new machine has)."""
    first = shutil.which(name)
    if first and package_of(first):
        return first
    for d in ("/usr/bin", "/usr/sbin"):
        if package_of(os.path.join(d, name)):
            return os.path.join(d, name)
    return first


def main():
    listed, allowed = installed_packages()
    needs = {}
    for name, where in wanted():
        needs.setdefault(name, where)
    owned = owners([p for n in needs for p in [n if n.startswith("/") else shutil.which(n)] if p] +
                   ["/usr/bin/" + n for n in needs if not n.startswith("/")])

    def package_of(path):
        return next((owned[c] for c in candidates(path) if c in owned), None)

    problems = []
    for name, where in needs.items():
        path = name if name.startswith("/") else command_path(name, package_of)
        if not path or not os.path.exists(path):
            problems.append(f"{where}: needs {name}, which is not installed: add its package to scripts/install-deps.sh")
            continue
        pkg = package_of(path)
        if pkg is None:
            problems.append(f"{where}: needs {name} ({path}), which no package ships: install it from a package")
        elif pkg.split(":")[0] not in allowed:
            problems.append(f"{where}: needs {name}, from package {pkg}, which scripts/install-deps.sh "
                            f"does not install (it is here by hand): add {pkg} to its list")
    for p in problems:
        print("check-deps: " + p, file=sys.stderr)
    print(f"check-deps: {len(needs)} tools and files the tests need, {len(problems)} not installed by "
          f"scripts/install-deps.sh ({len(listed)} packages listed)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
