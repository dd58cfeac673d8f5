#!/bin/bash
# watch.sh SHIM DIR CMD...: runs a test's CMD with the threadwatch shim
# preloaded into its whole process tree (tests/threads/README.md). It is
# the unit tests' exe_wrapper (meson.build's test setup "watch"): DIR/KEY.ran
# says the test ran, DIR/KEY.threads is where its processes note threads;
# KEY is guard.py's digest of CMD as meson's introspection lists it.
set -euo pipefail
shim=$1 dir=$2
shift 2
[ -f "$shim" ] || { echo "watch.sh: $shim is missing: build it first" >&2; exit 1; }
key=$(printf '%s\0' "$@" | sha256sum | cut -c1-16)
mkdir -p "$dir"
rm -f "$dir/$key.threads"
printf '%s\n' "$*" >"$dir/$key.ran"
export VMSCOPE_THREADWATCH_OUT=$dir/$key.threads
export LD_PRELOAD=$shim${LD_PRELOAD:+:$LD_PRELOAD}
# ASan wants its runtime first among the loaded libraries; the shim only
# forwards pthread_create to it (tests/threads/README.md).
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
exec "$@"
