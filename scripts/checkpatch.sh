#!/bin/bash
# Kernel coding style check of vmscope's kernel code with the kernel's own
# scripts/checkpatch.pl. Debian's headers package does not ship checkpatch,
# so it is taken from the linux-source package's tarball (installed by
# install-deps.sh) once and kept in /var/cache/vmscope.
# Usage: scripts/checkpatch.sh [FILE...]   (default: all kernel code)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1)
[ -n "$tarball" ] || { echo "checkpatch: no /usr/src/linux-source-*.tar.xz; run scripts/install-deps.sh" >&2; exit 1; }
srcname=$(basename "$tarball" .tar.xz)
cache=/var/cache/vmscope/$srcname
if [ ! -x "$cache/scripts/checkpatch.pl" ]; then
	echo "checkpatch: extracting checkpatch.pl from $tarball (once)"
	mkdir -p "$cache.tmp"
	tar -xJf "$tarball" -C "$cache.tmp" --strip-components=1 \
		"$srcname/scripts/checkpatch.pl" "$srcname/scripts/spelling.txt" \
		"$srcname/scripts/const_structs.checkpatch"
	rm -rf "$cache" && mv "$cache.tmp" "$cache"
fi

if [ $# -eq 0 ]; then
	# Kernel-only sources and every header the kernel includes.
	mapfile -t files < <(git ls-files 'host-kmod/*.[ch]' 'guest-kmod/*.[ch]' \
		'kvm-probes/kmod/*.[ch]' 'kmod-session/*.[ch]' \
		'include/vmscope/*.h' 'include/vmscope/kernel/*.h')
else
	files=("$@")
fi
[ "${#files[@]}" -gt 0 ] || { echo "checkpatch: no files to check" >&2; exit 1; }

status=0
for f in "${files[@]}"; do
	# --no-tree: we are not in a kernel tree. SPDX_LICENSE_TAG etc. stay on.
	# An out-of-tree module refuses kernels its tracepoint prototypes were
	# not checked against (kvm-probes/kmod/protos.h): LINUX_VERSION_CODE
	# is how, and checkpatch's CONSTANT_COMPARISON misreads KERNEL_VERSION().
	if ! out=$("$cache/scripts/checkpatch.pl" --no-tree --terse --show-types \
		--ignore FILE_PATH_CHANGES,LINUX_VERSION_CODE,CONSTANT_COMPARISON \
		-f "$f" 2>&1); then
		echo "$out"
		status=1
	fi
done
if [ "$status" -eq 0 ]; then
	echo "checkpatch: ${#files[@]} files clean"
fi
exit $status
