# vmtest-timeout: 600
# The periodic sync emitter of vmscope_guest.ko: on a 2-vCPU guest it issues
# one hypercall per CPU per period from a pinned hrtimer, with consecutive
# per-CPU sequence numbers and t4 >= t1; a CPU that goes offline stops its
# timer and gets it back when it comes online; the period is validated; and
# the host pairs every hypercall into a sync_t2 record.

SYSCPU1=/sys/devices/system/cpu/cpu1/online

# check_samples FILE MIN MAX: every CPU in a `status --samples` dump issued
# more than MIN and at most MAX hypercalls, and its samples have t4 >= t1, ret -1000 and
# consecutive seq numbers ending at the issued count. Prints the total.
check_samples() {
	awk -v min="$2" -v max="$3" '
	$1 == "cpu" { issued[$2] = $6; ncpu++ }
	$1 == "sample" {
		c = $3
		if ($9 < $7) { print "cpu " c " seq " $5 ": t4 " $9 " < t1 " $7; bad = 1 }
		if ($11 != -1000) { print "cpu " c " seq " $5 ": ret " $11; bad = 1 }
		if (c in last && $5 != last[c] + 1) {
			print "cpu " c ": seq " $5 " after " last[c]; bad = 1
		}
		last[c] = $5; n[c]++
	}
	END {
		if (ncpu != 2) { print "want 2 CPUs, status shows " ncpu; bad = 1 }
		for (c in issued) {
			if (issued[c] <= min) { print "cpu " c " issued only " issued[c]; bad = 1 }
			if (issued[c] > max) { print "cpu " c " issued " issued[c] " > " max; bad = 1 }
			want = issued[c] < 64 ? issued[c] : 64
			if (n[c] != want) { print "cpu " c ": " n[c] " samples, want " want; bad = 1 }
			if (last[c] != issued[c]) { print "cpu " c ": last seq " last[c] " != issued " issued[c]; bad = 1 }
			total += issued[c]
		}
		if (bad) exit 1
		print total
	}' "$1"
}

# field FILE CPU NAME: a counter of CPU from a `status` dump.
field() {
	awk -v c="$2" -v k="$3" '$1 == "cpu" && $2 == c {
		for (i = 3; i < NF; i += 2) if ($i == k) print $(i + 1) }' "$1"
}

guest_main() {
	check "insmod vmscope_guest" insmod "$GUEST_KO"

	# The period is validated: 0 and 5 s are refused with a clear error.
	for p in 0 5s; do
		if "$VMSCOPE" sync-emitter start --period "$p" 2>/vmtest/period.err; then
			fail "--period $p accepted"
		fi
		grep -q 'out of range: it must be between 1ms and 1s' /vmtest/period.err ||
			fail "--period $p: unclear error: $(cat /vmtest/period.err)"
		log "ok: --period $p refused: $(cat /vmtest/period.err)"
	done

	# Session 1: 10 ms for about 3 s on both CPUs (longer in fact: each
	# command takes seconds in a nested TCG guest). The uptime around it
	# bounds how many ticks there can have been.
	read -r up0 _ </proc/uptime
	"$VMSCOPE" sync-emitter start --period 10ms >/vmtest/start1.txt ||
		fail "sync-emitter start"
	sleep 3
	"$VMSCOPE" sync-emitter start 2>/vmtest/busy.err && fail "second start accepted"
	grep -q 'already running' /vmtest/busy.err || fail "second start: $(cat /vmtest/busy.err)"
	check "sync-emitter stop" "$VMSCOPE" sync-emitter stop
	read -r up1 _ </proc/uptime
	"$VMSCOPE" sync-emitter status --samples >/vmtest/run1.txt || fail "status"
	grep -v '^sample' /vmtest/run1.txt
	grep -q '^enabled 0 ' /vmtest/run1.txt || fail "still enabled after stop"
	max=$(awk -v a="$up0" -v b="$up1" 'BEGIN { printf "%d", (b - a) * 100 + 2 }')
	total1=$(check_samples /vmtest/run1.txt 100 "$max") || fail "session 1: $total1"
	log "ok: session 1: $total1 hypercalls in all over $up0..${up1}s of uptime (at most $max per CPU)"

	# Session 2: CPU 1 goes offline and comes back while the emitter runs.
	"$VMSCOPE" sync-emitter start --period 10ms >/vmtest/start2.txt ||
		fail "sync-emitter start (2)"
	sleep 1
	echo 0 >"$SYSCPU1" || fail "offline cpu 1"
	"$VMSCOPE" sync-emitter status >/vmtest/off1.txt || fail "status"
	sleep 1
	"$VMSCOPE" sync-emitter status >/vmtest/off2.txt || fail "status"
	cat /vmtest/off1.txt /vmtest/off2.txt
	[ "$(field /vmtest/off1.txt 1 online)" = 0 ] || fail "cpu 1 still online"
	[ "$(field /vmtest/off1.txt 1 stops)" = 1 ] || fail "cpu 1's timer not stopped at offline"
	a=$(field /vmtest/off1.txt 1 issued) b=$(field /vmtest/off2.txt 1 issued)
	[ "$a" -gt 0 ] || fail "cpu 1 issued nothing before going offline"
	[ "$a" = "$b" ] || fail "offline cpu 1 kept issuing ($a, then $b)"
	c0=$(field /vmtest/off1.txt 0 issued) d0=$(field /vmtest/off2.txt 0 issued)
	[ "$d0" -gt "$c0" ] || fail "cpu 0 stopped while cpu 1 was offline"
	log "ok: offline cpu 1 stopped at $a hypercalls; cpu 0 went on ($c0 -> $d0)"
	echo 1 >"$SYSCPU1" || fail "online cpu 1"
	sleep 1
	check "sync-emitter stop (2)" "$VMSCOPE" sync-emitter stop
	"$VMSCOPE" sync-emitter status --samples >/vmtest/run2.txt || fail "status"
	grep -v '^sample' /vmtest/run2.txt
	[ "$(field /vmtest/run2.txt 1 starts)" = 2 ] || fail "cpu 1's timer did not restart"
	e=$(field /vmtest/run2.txt 1 issued)
	[ "$e" -gt "$b" ] || fail "cpu 1 issued nothing after coming back ($b, then $e)"
	log "ok: cpu 1 came back: $b -> $e hypercalls"
	total2=$(check_samples /vmtest/run2.txt 10 1000000) || fail "session 2: $total2"
	log "ok: session 2: $total2 hypercalls in all"

	echo $((total1 + total2)) >/vmtest/issued.txt
	check "rmmod vmscope_guest" rmmod vmscope_guest
}

host_main() {
	host_prepare_kvm
	check "insmod vmscope_host" insmod "$HOST_KO"
	check "vmscope stats --start" "$VMSCOPE" stats --start --reset
	guest_run g1 guest_main 2 3
	stats_json /vmtest/stats.json
	cat /vmtest/stats.json

	issued=$(cat "$(guest_file g1 issued.txt)")
	{ read -r t2n; read -r t3n; read -r coll; } <<EOF
$(jq -r '.events.sync_t2.matched, .events.sync_t3.matched, .sync_collisions' /vmtest/stats.json)
EOF
	case "$issued $t2n $t3n $coll" in *null* | " "* | *"  "* | *" ") fail "cannot parse counts" ;; esac
	# The emitter is stopped before the guest ends (hrtimer_cancel waits),
	# so nothing is in flight: every hypercall is a t2, or a collision the
	# host counted and dropped.
	[ $((t2n + coll)) = "$issued" ] ||
		fail "sync_t2 $t2n + collisions $coll != guest issued $issued"
	[ "$t3n" = "$t2n" ] || fail "sync_t3 $t3n != sync_t2 $t2n"
	log "ok: guest issued $issued, host sync_t2 $t2n, sync_t3 $t3n, collisions $coll"
	check "rmmod vmscope_host" rmmod vmscope_host
}
