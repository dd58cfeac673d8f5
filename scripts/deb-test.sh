#!/bin/bash
# The packages' test (scripts/test runs it before the VM tests): `make deb`
# builds them; they are installed on this machine (apt-get, only what
# differs from what is installed, so a second run changes nothing); DKMS
# has built both modules for the test kernel (scripts/kver.sh), where
# modprobe finds them. The VM test libvirt-hook then loads those modules
# and runs the installed vmscope and vmscoped in the test host, whose root
# is this machine's. Exit status 0 when all of it holds.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
fail() { echo "deb-test: $*" >&2; exit 1; }

t0=$(date +%s)
log=build/deb/build.log
mkdir -p build/deb
rm -f build/deb/*.deb
make -s deb >"$log" 2>&1 || { tail -40 "$log" >&2; fail "make deb failed (all of it: $log)"; }
t_build=$(($(date +%s) - t0))
ver=$(dpkg-parsechangelog -SVersion)
debs=()
for p in vmscope vmscope-host-dkms vmscope-guest-dkms; do
	f=$(ls build/deb/"${p}_${ver}"_*.deb 2>/dev/null) || fail "no build/deb/${p}_${ver}_*.deb"
	debs+=("$f")
done
echo "deb-test: built ${debs[*]} in ${t_build}s"

# differs DEB: true unless DEB's version is installed and every file it
# holds is, byte for byte, at its path (dpkg itself keeps no checksum of a
# package file, and a rebuilt tree keeps its version)
differs() {
	local pkg x rc=1
	pkg=$(dpkg-deb -f "$1" Package)
	[ "$(dpkg-query -W -f='${Version} ${Status}' "$pkg" 2>/dev/null)" = "$ver install ok installed" ] || return 0
	x=$(mktemp -d)
	dpkg-deb -x "$1" "$x"
	(cd "$x" && find . -type f) | while read -r f; do
		cmp -s "$x/$f" "/$f" || { echo "deb-test: /${f#./} differs from $1"; exit 1; }
	done || rc=0
	rm -rf "$x"
	return $rc
}
todo=()
for d in "${debs[@]}"; do
	if differs "$d"; then todo+=("./$d"); fi
done
if [ "${#todo[@]}" -gt 0 ]; then
	echo "deb-test: installing ${todo[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -q \
		--reinstall --no-install-recommends "${todo[@]}" >build/deb/install.log 2>&1 ||
		{ tail -30 build/deb/install.log >&2; fail "apt-get install failed (build/deb/install.log)"; }
else
	echo "deb-test: the installed packages are these"
fi
for d in "${debs[@]}"; do
	! differs "$d" >/dev/null || fail "$d is not what is installed after apt-get"
done

# DKMS: both modules built and installed for the test kernel (its postinst
# builds for the kernels it finds; this builds what it has not)
kver=$(scripts/kver.sh)
for side in host guest; do
	m=vmscope-$side/$ver
	if ! grep -q ': installed' <<<"$(dkms status "$m" -k "$kver")"; then
		echo "deb-test: dkms install $m -k $kver"
		dkms install "$m" -k "$kver" >>build/deb/install.log 2>&1 ||
			{ tail -30 build/deb/install.log >&2; fail "dkms install $m -k $kver failed"; }
	fi
	dkms status "$m" -k "$kver"
	ko=$(modinfo -k "$kver" -n "vmscope_$side") || fail "modinfo finds no vmscope_$side for $kver"
	[ "$ko" = "/lib/modules/$kver/updates/dkms/vmscope_$side.ko" ] ||
		fail "modprobe would load $ko, not DKMS's /lib/modules/$kver/updates/dkms/vmscope_$side.ko"
	vm=$(modinfo -F vermagic "$ko")
	[ "${vm%% *}" = "$kver" ] || fail "$ko has vermagic $vm, want $kver"
	# DKMS built it from the packaged sources: the source checksum that
	# modpost records is the one of the tree's own build
	tree_src=$(modinfo -F srcversion "$side-kmod/vmscope_$side.ko" 2>/dev/null || true)
	[ -z "$tree_src" ] || [ "$(modinfo -F srcversion "$ko")" = "$tree_src" ] ||
		fail "$ko's srcversion $(modinfo -F srcversion "$ko") is not the tree's ($tree_src)"
done
echo "deb-test: ok in $(($(date +%s) - t0))s (package build ${t_build}s)"
