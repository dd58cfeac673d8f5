#!/bin/bash
# Writes the uncompressed kernel (an ELF with a PVH entry note) that is
# inside Debian's /boot/vmlinuz-KVER, so that QEMU boots it directly
# (-kernel ELF: its PVH option ROM jumps to the 32-bit PVH entry) and the
# kernel's own xz decompressor never runs. Under TCG that decompressor is
# the slowest part of a boot: on the machine, a boot to the "no root"
# panic took 6.7 s from the bzImage and 3.3 s from this file; in a nested
# guest each instruction costs more still (tests/vm/README.md).
# Usage: extract-vmlinux.sh KVER OUTPUT
set -euo pipefail

kver=$1
out=$2
image=/boot/vmlinuz-$kver
[ -f "$image" ] || { echo "extract-vmlinux: $image missing" >&2; exit 1; }

# The bzImage's payload is one xz stream (Debian: CONFIG_KERNEL_XZ); the
# bytes after it (the payload's size, the rest of the setup) are not xz.
offset=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$image" | head -n 1 | cut -d: -f1)
[ -n "$offset" ] || { echo "extract-vmlinux: no xz stream in $image (not CONFIG_KERNEL_XZ?)" >&2; exit 1; }

tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp"' EXIT
# (xz stops reading at the stream's end: no pipe, whose writer would fail)
xz -dc --single-stream < <(tail -c "+$((offset + 1))" "$image") >"$tmp" ||
	{ echo "extract-vmlinux: cannot decompress the xz stream of $image" >&2; exit 1; }
# QEMU boots an ELF kernel only through its PVH entry: Xen ELF note 18
# (XEN_ELFNOTE_PHYS32_ENTRY), there with CONFIG_PVH.
[ "$(head -c 4 "$tmp" | od -An -c | tr -d ' ')" = '177ELF' ] ||
	{ echo "extract-vmlinux: $image holds no ELF kernel" >&2; exit 1; }
readelf -n "$tmp" | grep -E '^ +Xen .*\(0x00000012\)$' >/dev/null ||
	{ echo "extract-vmlinux: $image has no PVH entry (CONFIG_PVH off?)" >&2; exit 1; }
mv "$tmp" "$out"
trap - EXIT
