#!/bin/bash
# Builds the initramfs that both the test host and its guests boot:
# static busybox, the modules needed to mount a 9p root with an overlay,
# and tests/vm/lib/init as /init.
# Usage: mkinitramfs.sh KVER OUTPUT.cpio.gz
set -euo pipefail

kver=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
# Modules the init script loads before it can reach the real root; the rest
# (kvm_amd, vhost_vsock, vsock transports) come from /lib/modules of that root.
modules=(virtio_pci 9pnet_virtio 9p overlay)

[ -d "/lib/modules/$kver" ] || { echo "mkinitramfs: /lib/modules/$kver missing" >&2; exit 1; }
busybox=/bin/busybox
grep -q 'statically linked' <<<"$(file -L "$busybox")" ||
	{ echo "mkinitramfs: $busybox is not static: install busybox-static" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"/{bin,dev,proc,sys,mnt,etc,lib/modules}
cp "$busybox" "$work/bin/busybox"
cp "$here/init" "$work/init"
chmod 755 "$work/init"

# Resolve dependencies in load order, once each, builtins skipped.
: >"$work/etc/modules.order"
for m in "${modules[@]}"; do
	modprobe -S "$kver" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
done | awk '!seen[$0]++' | while read -r path; do
	name=$(basename "$path")
	case "$name" in
	*.ko) cp "$path" "$work/lib/modules/$name" ;;
	*.ko.xz) name=${name%.xz}; xz -dc "$path" >"$work/lib/modules/$name" ;;
	*.ko.zst) name=${name%.zst}; zstd -qdc "$path" >"$work/lib/modules/$name" ;;
	*.ko.gz) name=${name%.gz}; gzip -dc "$path" >"$work/lib/modules/$name" ;;
	*) echo "mkinitramfs: unknown module format $path" >&2; exit 1 ;;
	esac
	echo "$name" >>"$work/etc/modules.order"
done

mkdir -p "$(dirname "$out")"
(cd "$work" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
