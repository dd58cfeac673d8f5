# vmtest-timeout: 1500
# Issue 22's daemon benchmark, in the test host: the CPU time of vmscoped
# always on (--metrics, scraped every DC_SCRAPE_S seconds by curl, as
# Prometheus would) recording a guest it was told of with `vmscope
# session start`, per exit, beside a plain `vmscope record` of the same
# QEMU process over the same span (its own session in the host module:
# every exit is written into both rings). The daemon's figure is vmscoped's
# utime+stime plus its recorder's (`vmscope record --metrics-fd`: the
# ring reader, the writer and `vmscope top`'s live pipeline, every
# thread; /proc/PID/stat) from the guest's "go" to its "done", per
# round of the same workload (a 1-vCPU guest's exit-tasks: DC_PIO port
# writes, then DC_CPUID CPUIDs); the peer's is the plain recorder's over
# the same rounds. No guest agent: both record the host's events only,
# so the difference is the daemon's work (live pipeline, metrics frames,
# HTTP) over a recorder's. Under TCG only the ratio means something; the
# figure "per 100 k exits/s" is CPU seconds per 100 000 exits, the cores
# a host would spend at that rate if the cost per exit held.
# The probes' cost runs in the vCPU thread and is in neither figure: the
# peer records with --measure, and the module's own timing of its kvm_exit
# and kvm_entry probes (`vmscope stats --json`, before and after each
# round) gives the probe time per exit with the daemon's session on, and,
# in as many rounds interleaved with those, with it stopped (the peer
# alone): what the daemon always on adds to every exit's probe.
# Run: flock /var/tmp/vmtest.lock tests/vm/run.sh --show bench/vm/daemon-cpu.sh
# (DC_PIO, DC_CPUID: per round; DC_ROUNDS of each mode; DC_SCRAPE_S)

MPORT=9464
PIO=${DC_PIO:-10000}
CPUID=${DC_CPUID:-40000}
ROUNDS=${DC_ROUNDS:-3}
SCRAPE_S=${DC_SCRAPE_S:-5}
EXIT_TASKS=$VMTEST_BUILD/tests/vm/tools/exit-tasks

guest_main() {
	touch /vmtest/ready
	wait_file /vmtest/knobs
	. /vmtest/knobs	# the host's DC_* (run.sh passes them to the test host only)
	for i in $(seq "$ROUNDS"); do
		wait_file "/vmtest/go-$i"
		check "exit-tasks round $i" sh -c "'$EXIT_TASKS' $PIO $CPUID >/vmtest/tasks-$i.txt"
		touch "/vmtest/done-$i"
	done
}

# recorder_of PID: the daemon's child that records (its `vmscope record`)
recorder_of() {
	for _c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		tr '\0' ' ' <"/proc/$_c/cmdline" | grep -q ' record ' && echo "$_c"
	done
}

# probe_per_exit: per round, the module's timing of its kvm_exit and
# kvm_entry probes over the round (before/after-I.json), per exit; the
# medians with the daemon's session on and off, and their ratio
probe_per_exit() {
	python3 -c '
import json, statistics
rows = {"on": [], "off": []}
for line in open("/vmtest/modes.txt"):
    i, mode = line.split()
    b = json.load(open("/vmtest/before-%s.json" % i)).get("timing", {})
    a = json.load(open("/vmtest/after-%s.json" % i)).get("timing", {})
    per = 0.0
    for ev in ("exit", "entry"):
        n0, n1 = b.get(ev, {}).get("n", 0), a[ev]["n"]
        ns = a[ev]["probe_ns_avg"] * n1 - b.get(ev, {}).get("probe_ns_avg", 0) * n0
        per += ns / (n1 - n0)
    rows[mode].append(per)
    print("round %s (daemon %s): kvm_exit + kvm_entry probes %.1f ns per exit" % (i, mode, per))
on, off = statistics.median(rows["on"]), statistics.median(rows["off"])
print("median: daemon on %.1f ns, off %.1f ns per exit (TCG-inflated)" % (on, off))
print("daemon on / off: %.2f (probe time per exit)" % (on / off))
'
}

host_main() {
	check "loopback up" ip link set lo up
	host_probed_guest g1 guest_main 1 3
	check "meson install's files in place" cp -a "$VMTEST_INSTALL/." /
	/usr/local/sbin/vmscoped --metrics "127.0.0.1:$MPORT" 2>/vmtest/vmscoped.log &
	daemon=$!
	wait_until 60 "vmscoped answers" vmscope daemon status
	check "session start g1" vmscope session start g1 --pid "$qpid"
	wait_until 60 "g1 recording" sh -c "vmscope session list | awk '\$1 == \"g1\" && \$2 == \"recording\" { f = 1 } END { exit !f }'"
	rec=$(recorder_of "$daemon")
	[ -n "$rec" ] || fail "no recorder under vmscoped ($daemon): $(cat /vmtest/vmscoped.log)"
	log "the daemon's recorder: $(tr '\0' ' ' <"/proc/$rec/cmdline")"
	bg_start record /vmtest/peer.out /vmtest/peer.err 'vmscope record: recording to' \
		--measure --pid "$qpid" --guest-port 5999 -o /tmp/peer
	peer=$BG_PID
	(while sleep "$SCRAPE_S"; do
		curl -sf "http://127.0.0.1:$MPORT/metrics" >/tmp/scrape.txt || echo "scrape failed" >>/vmtest/scrapes.err
	done) &
	scraper=$!
	(wait_until 60 "g1's series served" sh -c \
		"curl -sf http://127.0.0.1:$MPORT/metrics | grep -q '^vmscope_exits_total{domain=\"g1\",'") ||
		fail "g1 not served: $(cat /vmtest/vmscoped.log /var/lib/vmscope/traces/g1/*/record.log)"
	echo "PIO=$PIO CPUID=$CPUID ROUNDS=$((2 * ROUNDS))" >"$gdir/knobs"

	: >/vmtest/rounds.txt
	: >/vmtest/modes.txt
	i=0
	for _ in $(seq "$ROUNDS"); do
		for mode in on off; do
			i=$((i + 1))
			if [ "$mode" = off ]; then
				check "session stop g1 (round $i)" vmscope session stop g1
				wait_until 120 "the daemon's session ended" module_sessions 1
			elif [ "$i" -gt 1 ]; then
				check "session start g1 (round $i)" vmscope session start g1 --pid "$qpid"
				wait_until 120 "the daemon's session on" module_sessions 2
				rec=$(recorder_of "$daemon")
				[ -n "$rec" ] || fail "no recorder under vmscoped: $(cat /vmtest/vmscoped.log)"
			fi
			vmscope stats --json >"/vmtest/before-$i.json" || fail "stats before round $i"
			k0=$(kvm_exits "$qpid") a0=$(cpu_ticks "$daemon" "$rec") b0=$(cpu_ticks "$peer") s0=$(date +%s.%N)
			d0=$(cpu_ticks "$daemon")
			touch "$gdir/go-$i"
			wait_file "$gdir/done-$i"
			k1=$(kvm_exits "$qpid") a1=$(cpu_ticks "$daemon" "$rec") b1=$(cpu_ticks "$peer") s1=$(date +%s.%N)
			d1=$(cpu_ticks "$daemon")
			vmscope stats --json >"/vmtest/after-$i.json" || fail "stats after round $i"
			echo "$i $mode" >>/vmtest/modes.txt
			kill -0 "$peer" 2>/dev/null || fail "the peer recorder died: $(cat /vmtest/peer.err)"
			[ "$mode" = on ] || continue
			echo "$i $(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.1f", b - a }') $((k1 - k0)) $((a1 - a0)) $((b1 - b0)) $((d1 - d0))" |
				tee -a /vmtest/rounds.txt
			kill -0 "$rec" 2>/dev/null || fail "the daemon's recorder died: $(cat /vmtest/vmscoped.log)"
		done
	done
	curl -sf "http://127.0.0.1:$MPORT/metrics" >/vmtest/scrape-last.txt || fail "no /metrics answer"
	kill "$scraper"
	guest_wait g1 300 || fail "guest g1 failed"
	kill -INT "$peer"
	wait "$peer" || fail "the peer recorder exited $?: $(cat /vmtest/peer.err)"
	# one trace per "on" round, each finalized
	# shellcheck disable=SC2016 # $1 is sh -c's
	wait_until 120 "g1's $ROUNDS traces finalized" sh -c \
		'[ "$(ls /var/lib/vmscope/traces/g1/*/summary.txt | wc -l)" = "$1" ]' sh "$ROUNDS"
	kill -TERM "$daemon"
	wait "$daemon" || fail "vmscoped exited $?: $(cat /vmtest/vmscoped.log)"
	cat /var/lib/vmscope/traces/g1/*/record.log >/vmtest/daemon-record.log
	check "rmmod vmscope_host" rmmod vmscope_host
	[ ! -s /vmtest/scrapes.err ] || fail "scrapes failed: $(wc -l </vmtest/scrapes.err)"
	grep -E ', lost 0,' /vmtest/peer.err >/dev/null || fail "the peer lost events: $(grep lost /vmtest/peer.err)"
	[ "$(grep -cE ', lost 0,' /vmtest/daemon-record.log)" = "$ROUNDS" ] ||
		fail "the daemon's recorders lost events: $(grep lost /vmtest/daemon-record.log)"
	series=$(grep -c '^vmscope' /vmtest/scrape-last.txt)
	log "last scrape: $series series, $(wc -c </vmtest/scrape-last.txt) bytes; scrapes every ${SCRAPE_S}s"
	probe_per_exit | tee /vmtest/probe-cost.txt
	grep -q '^daemon on / off' /vmtest/probe-cost.txt || fail "no probe figure"

	awk -v r="$ROUNDS" -v p="$PIO" -v c="$CPUID" '
	{ n++; s[n] = $2; k[n] = $3; a[n] = $4; b[n] = $5; v[n] = $6; q[n] = ($5 ? $4 / $5 : 0)
	  d[n] = ($3 ? $4 / 100 / $3 * 100000 : 0); e[n] = ($3 ? $5 / 100 / $3 * 100000 : 0) }
	END {
		printf "| round | s | KVM exits | daemon ticks (vmscoped alone) | record ticks | daemon / record | daemon s per 100 k exits | record s per 100 k exits |\n"
		printf "|---|---|---|---|---|---|---|---|\n"
		for (i = 1; i <= n; i++) printf "| %d | %s | %d | %d (%d) | %d | %.2f | %.3f | %.3f |\n", i, s[i], k[i], a[i], v[i], b[i], q[i], d[i], e[i]
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (q[j] < q[i]) { t = q[i]; q[i] = q[j]; q[j] = t }
		printf "median daemon / record over %d rounds (exit-tasks %d %d): %.2f\n", r, p, c, q[int((n + 1) / 2)]
	}' /vmtest/rounds.txt | tee /vmtest/daemon-cpu.txt
}
