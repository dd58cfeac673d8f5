#!/bin/bash
# fetch-tcg-qemu.sh DIR: the QEMU that runs the test host (under TCG), from
# Debian 12's bookworm-backports, unpacked into DIR (DIR/qemu is the command
# to run); prints DIR/qemu. Idempotent: a DIR that holds the version
# backports offers now is left as it is.
#
# Why not bookworm's QEMU 7.2 (README.md, "Known TCG defect"): its
# multi-threaded TCG can leave a vCPU executing a stale translation of
# kernel code that another CPU just live-patched, and the test host freezes.
# A scratch test that creates and closes 300 VMs (each flip of KVM's static
# keys patches finish_task_switch) while two pipe ping-pong pairs keep both
# test-host CPUs switching froze in 4 of 4 attempts with 7.2 and in 0 of 5
# runs with backports' 10.0 (tests/vm/README.md, "Known TCG defect").
#
# Only the test host's QEMU comes from here; the nested guests' QEMU and
# libvirt stay bookworm's (the test host boots this machine's /). Nothing
# is installed into the system: the packages are downloaded with a private
# sources list and unpacked with dpkg-deb.
set -euo pipefail
dir=${1:?usage: fetch-tcg-qemu.sh DIR}
suite=bookworm-backports
pkgs=(qemu-system-x86 qemu-system-data qemu-system-common seabios)

state=$dir/apt
mkdir -p "$state/lists/partial" "$state/debs"
echo "deb http://deb.debian.org/debian $suite main" >"$state/sources.list"
apt_opts=(-o "Dir::Etc::sourcelist=$state/sources.list" -o "Dir::Etc::sourceparts=-"
	-o "Dir::State::Lists=$state/lists" -o "Dir::Cache=$state/cache")
mkdir -p "$state/cache/archives/partial"
apt-get "${apt_opts[@]}" update -qq >"$state/update.log" 2>&1 || {
	cat "$state/update.log" >&2
	echo "fetch-tcg-qemu: cannot read $suite's package list" >&2
	exit 1
}
want=()
for p in "${pkgs[@]}"; do
	v=$(apt-cache "${apt_opts[@]}" policy "$p" |
		awk '/^     [^ ]/ && /bpo12/ { print $1; exit } /^ \*\*\* / && /bpo12/ { print $2; exit }')
	[ -n "$v" ] || { echo "fetch-tcg-qemu: $suite offers no $p" >&2; exit 1; }
	want+=("$p=$v")
done
if [ -x "$dir/qemu" ] && [ "$(cat "$dir/versions" 2>/dev/null)" = "${want[*]}" ]; then
	echo "$dir/qemu"
	exit 0
fi
rm -rf "$dir/root" "$state/debs" && mkdir -p "$dir/root" "$state/debs"
(cd "$state/debs" && apt-get "${apt_opts[@]}" download "${want[@]}" >"$state/download.log" 2>&1) || {
	cat "$state/download.log" >&2
	echo "fetch-tcg-qemu: cannot download ${want[*]}" >&2
	exit 1
}
for deb in "$state/debs"/*.deb; do
	dpkg-deb -x "$deb" "$dir/root"
done
# -L: this QEMU's own firmware (SeaBIOS, option ROMs) before bookworm's.
cat >"$dir/qemu" <<EOF
#!/bin/sh
exec "$dir/root/usr/bin/qemu-system-x86_64" -L "$dir/root/usr/share/qemu" \\
	-L "$dir/root/usr/share/seabios" "\$@"
EOF
chmod +x "$dir/qemu"
"$dir/qemu" --version >/dev/null || { echo "fetch-tcg-qemu: $dir/qemu does not run" >&2; exit 1; }
echo "${want[*]}" >"$dir/versions"
echo "$dir/qemu"
