#!/bin/bash
# Builds everything the demo and the VM tests run: both kernel modules
# (Kbuild, against scripts/kver.sh's headers) and the userspace release build
# in build/release. Idempotent and incremental.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

kver=$(scripts/kver.sh)
echo "build: kernel modules for $kver"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! make -s modules KDIR="/usr/src/linux-headers-$kver" >"$log" 2>&1; then
	cat "$log" >&2
	echo "build: the kernel modules failed to build" >&2
	exit 1
fi
# The headers package has no vmlinux, so Kbuild cannot add BTF; that note is
# expected. Anything else it printed is shown.
grep -v 'Skipping BTF generation' "$log" || true
for ko in host-kmod/vmscope_host.ko guest-kmod/vmscope_guest.ko; do
	[ -f "$ko" ] || { echo "build: $ko was not built" >&2; exit 1; }
done

echo "build: userspace (build/release)"
[ -f build/release/build.ninja ] || meson setup build/release --buildtype=release >/dev/null
ninja -C build/release --quiet
