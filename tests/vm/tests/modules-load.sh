# Both modules load, create their root-only devices, answer the version
# ioctl with this build's version, and unload cleanly, repeatedly.

# load_unload_cycle KO DEVICE SIDE
load_unload_cycle() {
	ko=$1 dev=$2 side=$3
	mod=$(basename "$ko" .ko)
	for i in 1 2 3; do
		check "insmod $mod (round $i)" insmod "$ko"
		check "$dev is a character device" test -c "$dev"
		perms=$(stat -c '%a %U' "$dev")
		[ "$perms" = "600 root" ] || fail "$dev has mode/owner '$perms', want '600 root'"
		# the version once: each command costs seconds in a nested guest
		if [ "$i" = 1 ]; then
			out=$("$VMSCOPE" version --require "$side") || fail "vmscope version --require $side: $out"
			echo "$out"
			release=$(sed -n 's/.*VMSCOPE_VERSION_STRING "\(.*\)"/\1/p' include/vmscope/version.h)
			echo "$out" | grep -Eq "^$side +module: $release \(ABI" ||
				fail "version output lacks '$side module: $release'"
			echo "$out" | grep -q "on kernel $(uname -r)\$" || fail "version output lacks the running kernel"
		fi
		check "rmmod $mod (round $i)" rmmod "$mod"
		[ ! -e "$dev" ] || fail "$dev still exists after rmmod"
	done
	# An unprivileged user must not get in.
	insmod "$ko" || fail "insmod $mod"
	if setpriv --reuid=65534 --regid=65534 --clear-groups "$VMSCOPE" version --require "$side" >/tmp/nobody.out 2>&1; then
		fail "user nobody could use $dev"
	fi
	grep -q "permission denied" /tmp/nobody.out || fail "nobody's error was: $(cat /tmp/nobody.out)"
	log "ok: user nobody is refused with: $(cat /tmp/nobody.out)"
	rmmod "$mod" || fail "rmmod $mod"
}

guest_main() {
	load_unload_cycle "$GUEST_KO" /dev/vmscope-guest guest
}

host_main() {
	load_unload_cycle "$HOST_KO" /dev/vmscope-host host
	host_prepare_kvm
	guest_run g1 guest_main 1 3
}
