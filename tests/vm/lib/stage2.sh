#!/bin/sh
# Runs inside the chroot that init prepared (test host or guest): sources the
# harness library and the test file named in /vmtest/job.env, calls the entry
# function, and leaves rc, out and dmesg in /vmtest for the side that
# started this VM.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8
. /vmtest/job.env
cd "$VMTEST_REPO" || exit 1
. tests/vm/lib/vmlib.sh

if [ "$VMTEST_ENTRY" = shell ]; then
	echo "vmtest: $VMTEST_ROLE shell; the repository is $VMTEST_REPO;" \
		"'exit' powers off"
	setsid -c /bin/bash --rcfile tests/vm/lib/shellrc -i </dev/console >/dev/console 2>&1
	exit 0
fi

rm -f /vmtest/rc
# Heartbeat of the test host, so that run.sh can tell a VM that froze
# (TCG defect, tests/vm/README.md) from a test that is merely slow.
if [ "$VMTEST_ROLE" = host ]; then
	(while :; do : >/vmtest/heartbeat; sleep 5; done) &
fi
(
	case "$VMTEST_ROLE" in guest:*) guest_prepare ;; esac
	. "$VMTEST_TEST"
	"$VMTEST_ENTRY"
) >/vmtest/out 2>&1
echo $? >/vmtest/rc
# Guests the test did not wait for (it failed first): stop them and keep
# their files, so the machine side can tell why.
for dir in "$VMTEST_GUESTS"/*/; do
	[ -d "$dir" ] || continue
	name=$(basename "$dir")
	[ -d "/vmtest/guests/$name" ] && continue
	pid=$(cat "$dir/qemu.pid" 2>/dev/null)
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -9 "$pid"
		echo "killed by the harness: still running when host_main ended" >"$dir/killed"
	fi
	mkdir -p /vmtest/guests
	cp -r "$dir" "/vmtest/guests/$name"
done
dmesg >/vmtest/dmesg
