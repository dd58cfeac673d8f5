#!/usr/bin/env python3
"""guard.py BUILD_DIR WATCH_DIR: keeps suite "threads" true.

ThreadSanitizer runs only the tests of suite "threads" (scripts/test), so
every unit test whose process tree starts a thread must be in it, and a
test that starts none has no business there. Each unit test ran under
watch.sh (the build's default test setup), which left WATCH_DIR/KEY.ran and,
when any of its processes started a thread, WATCH_DIR/KEY.threads
(threadwatch.c). This test runs after every other (priority -1000, not
parallel: meson waits for the others to end) and fails naming each test
on the wrong side, and each unit test with no record of a run."""
import hashlib
import json
import os
import sys

SELF = "threads-guard"


def key(cmd):
    """watch.sh's KEY: printf '%s\\0' CMD... | sha256sum, 16 digits."""
    return hashlib.sha256(b"".join(a.encode() + b"\0" for a in cmd)).hexdigest()[:16]


def suites(test):
    # meson names suites "project:suite" in its introspection
    return {s.rsplit(":", 1)[-1] for s in test["suite"]}


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: guard.py BUILD_DIR WATCH_DIR")
    build_dir, watch_dir = sys.argv[1], sys.argv[2]
    with open(os.path.join(build_dir, "meson-info", "intro-tests.json")) as f:
        tests = [t for t in json.load(f) if "unit" in suites(t) and t["name"] != SELF]
    keys = [key(t["cmd"]) for t in tests]
    if len(set(keys)) != len(keys):
        sys.exit("threads-guard: two unit tests run the same command; "
                 "watch.sh cannot tell them apart")
    bad, threaded = [], []
    for t, k in zip(tests, keys):
        name, base = t["name"], os.path.join(watch_dir, k)
        if not os.path.exists(base + ".ran"):
            bad.append(f"{name}: no record of a run under watch.sh "
                       f"({base}.ran): run the whole unit suite")
            continue
        seen = None
        if os.path.exists(base + ".threads"):
            with open(base + ".threads") as f:
                seen = f.read().strip().replace("\n", "; ")
            threaded.append(name)
        in_threads = "threads" in suites(t)
        if seen and not in_threads:
            bad.append(f"{name}: starts threads ({seen}) but is not in suite "
                       f"'threads', so ThreadSanitizer never runs it")
        elif in_threads and not seen:
            bad.append(f"{name}: in suite 'threads' but started no thread")
    print(f"threads-guard: {len(tests)} unit tests watched; "
          f"{len(threaded)} start threads: {' '.join(threaded)}")
    for b in bad:
        print("threads-guard: " + b, file=sys.stderr)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
