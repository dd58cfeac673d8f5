#!/usr/bin/env python3
"""suite-targets.py BUILD_DIR SUITE: the ninja targets (paths relative to
BUILD_DIR) that the tests of SUITE need, from meson's introspection: each
test's own executable and the targets it depends on (its `depends:` and the
built files among its arguments). scripts/test builds only these, not the
whole tree: the fuzz build compiled all 367 targets with clang for its 13
fuzz targets, the sanitizer builds every benchmark and VM tool.

suite-targets.py BUILD_DIR --installed: the targets that `meson install`
installs, for the Debian package build
(debian/rules), which needs no test or benchmark."""
import json
import os
import subprocess
import sys


def introspect(build_dir, what):
    out = subprocess.run(["meson", "introspect", what, build_dir],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: suite-targets.py BUILD_DIR SUITE|--installed")
    build_dir, suite = os.path.abspath(sys.argv[1]), sys.argv[2]
    targets = introspect(build_dir, "--targets")
    files = {t["id"]: t["filename"] for t in targets}
    wanted = set()
    if suite == "--installed":
        for t in targets:
            if t.get("installed"):
                wanted.update(t["filename"])
        if not wanted:
            sys.exit("suite-targets: no installed target")
    for test in [] if suite == "--installed" else introspect(build_dir, "--tests"):
        # meson names suites "project:suite"
        if not any(s == suite or s.endswith(":" + suite) for s in test["suite"]):
            continue
        for target_id in test.get("depends", []):
            if target_id not in files:
                sys.exit(f"suite-targets: test {test['name']} depends on "
                         f"unknown target {target_id}")
            wanted.update(files[target_id])
    for path in sorted(wanted):
        print(os.path.relpath(path, build_dir))


if __name__ == "__main__":
    main()
