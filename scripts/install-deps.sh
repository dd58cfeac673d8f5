#!/usr/bin/env bash
# Installs every Debian package that building, the demo and the tests need.
# Idempotent: packages already present are left as they are.
set -euo pipefail

PACKAGES=(
	# userspace build
	build-essential meson ninja-build pkg-config
	liburcu-dev libprotobuf-c-dev protobuf-c-compiler libvirt-dev
	# libvirt domain XML (the hook's input)
	libxml2-dev
	# libvirtd for the hook/daemon VM tests (it runs in the test host, which
	# boots this machine's /; installing starts no daemon here without systemd)
	libvirt-daemon-system libvirt-daemon-driver-qemu libvirt-clients
	# the kvm_exit layout from the kernel's BTF (collector/exit_layout.c)
	libbpf-dev
	# reports: --json output; xmllint checks `report exits --svg` in the tests
	libjson-c-dev libxml2-utils
	# `vmscope top`'s screen, and the terminal its tests drive it in
	libncurses-dev tmux
	# fuzzing and sanitizers
	clang llvm libclang-rt-14-dev
	# kernel modules and test kernels
	linux-image-amd64 linux-headers-amd64 kmod
	# scripts/checkpatch.pl comes only with the kernel source (the headers
	# package does not ship it); scripts/checkpatch.sh extracts it
	linux-source
	# test host VM harness (xz-utils, binutils: tests/vm/lib/extract-vmlinux.sh)
	qemu-system-x86 qemu-utils busybox-static cpio zstd xz-utils binutils file
	# the VM tests read `vmscope stats --json` with jq
	jq
	# trace file checksums (CRC32C: ISA-L's crc32_iscsi)
	libisal-dev
	# exports: the test decodes Perfetto files with protoc and reads CTF
	# with babeltrace2
	protobuf-compiler babeltrace2
	# peers measured beside vmscope in bench/ (perf: `perf kvm stat live`
	# beside `vmscope top`, bench/vm/top-cpu.sh), and GNU time for its timings
	trace-cmd liblttng-ust-dev lttng-tools time linux-perf
	# instruction counts that load does not change (bench/compare.sh)
	valgrind
	# vmscoped's /metrics HTTP server; Prometheus (its promtool checks the
	# text, the VM test scrapes the daemon) and curl for the tests
	libmicrohttpd-dev prometheus curl
	# `make deb` (debian/): dpkg-buildpackage with dh and dh_dkms; DKMS
	# builds the modules of the installed packages (scripts/deb-test.sh);
	# lintian checks them by hand (debian/README)
	debhelper dh-dkms dkms lintian
)

missing=()
for p in "${PACKAGES[@]}"; do
	grep -q "ok installed" <<<"$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" || missing+=("$p")
done

if [ "${#missing[@]}" -eq 0 ]; then
	echo "install-deps: all ${#PACKAGES[@]} packages present"
	exit 0
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
