# vmtest-timeout: 1200
# Issue 22's "memory and series count at 64 domains (synthetic load is
# fine)", in the test host, with the real module, daemon and recorders:
# vmscoped --metrics is told of DD_DOMAINS (64) domains with `vmscope
# session start dN --pid P`, each P a shell that wakes every second (its
# scheduler events; no guest, so no KVM event: 64 nested guests under TCG
# would measure the emulation; a recorder's live pipeline moves on with
# its events' time, so a process that never runs would never be served),
# each
# recorded as vmscoped records a libvirt domain: its own `vmscope record
# --metrics-fd` (the live pipeline) and its own module session (record's
# default buffers, 2 CPUs here). Once every domain records and is served:
# the recorders' summed Rss, Pss and private memory, vmscoped's own, the
# vmalloc'd memory in use against before (the module's rings) and a
# scrape's series and bytes. Then every session stops; each trace must be
# finalized. Fails only if a domain is not recorded, served or finalized;
# the figures are measured, not asserted (bench/README.md, "Memory and
# series at 64 domains").
# Run: flock /var/tmp/vmtest.lock tests/vm/run.sh --show bench/vm/daemon-domains.sh
# (DD_DOMAINS)

MPORT=9464
DOMAINS=${DD_DOMAINS:-64}

# in_state STATE N: N domains dI in STATE (`vmscope session list`)
in_state() {
	[ "$(vmscope session list | awk -v s="$1" '$1 ~ /^d[0-9]+$/ && $2 == s' | wc -l)" = "$2" ]
}

vmalloc_kb() { awk '$1 == "VmallocUsed:" { print $2 }' /proc/meminfo; }

host_main() {
	check "insmod vmscope_host" insmod "$HOST_KO"
	check "loopback up" ip link set lo up
	check "meson install's files in place" cp -a "$VMTEST_INSTALL/." /
	/usr/local/sbin/vmscoped --metrics "127.0.0.1:$MPORT" 2>/vmtest/vmscoped.log &
	daemon=$!
	wait_until 60 "vmscoped answers" vmscope daemon status
	v0=$(vmalloc_kb)
	idle=
	for i in $(seq "$DOMAINS"); do
		mkfifo "/tmp/wake-$i"
		# a read that times out every second, on a FIFO nobody writes
		bash -c 'exec 3<>"$1"; while :; do read -r -t 1 -u 3; done' sh "/tmp/wake-$i" &
		idle="$idle $!"
	done
	i=0
	for p in $idle; do
		i=$((i + 1))
		vmscope session start "d$i" --pid "$p" >/dev/null || fail "session start d$i"
	done
	wait_until 600 "$DOMAINS domains recording" in_state recording "$DOMAINS"
	wait_until 600 "$DOMAINS sessions in the module" module_sessions "$DOMAINS"
	wait_until 600 "$DOMAINS domains served" sh -c \
		"curl -sf http://127.0.0.1:$MPORT/metrics | grep -qx 'vmscoped_metrics_domains $DOMAINS'"
	curl -sf "http://127.0.0.1:$MPORT/metrics" >/vmtest/scrape.txt || fail "no scrape"
	v1=$(vmalloc_kb)
	{
		echo "domains $DOMAINS"
		recorders_memory
		echo
		awk '$1 == "VmRSS:" || $1 == "VmHWM:" { printf "vmscoped %s %s kB; ", $1, $2 }' "/proc/$daemon/status"
		echo
		echo "vmalloc in use: +$(((v1 - v0) / 1024)) MiB with the $DOMAINS sessions"
		echo "scrape: $(grep -c '^vmscope' /vmtest/scrape.txt) series ($(grep -c '^vmscope_.*domain="d' /vmtest/scrape.txt) of the domains), $(wc -c </vmtest/scrape.txt) bytes"
	} | tee /vmtest/memory.txt
	for d in $(seq "$DOMAINS"); do
		vmscope session stop "d$d" >/dev/null || fail "session stop d$d"
	done
	# shellcheck disable=SC2016 # $1 is sh -c's
	wait_until 900 "$DOMAINS traces finalized" sh -c \
		'[ "$(ls /var/lib/vmscope/traces/d*/*/summary.txt 2>/dev/null | wc -l)" = "$1" ]' sh "$DOMAINS"
	for f in /var/lib/vmscope/traces/d*/*/summary.txt; do
		grep -q 'trace finalized in .*; merged$' "$f" || fail "$f: $(cat "$f")"
	done
	# shellcheck disable=SC2086 # one pid per word
	kill $idle
	kill -TERM "$daemon"
	wait "$daemon" || fail "vmscoped exited $?: $(cat /vmtest/vmscoped.log)"
	check "rmmod vmscope_host" rmmod vmscope_host
}
