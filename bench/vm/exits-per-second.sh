# vmtest-timeout: 1500
# Issue 3's tracing-overhead benchmark, in the test host: a guest's CPUID
# loop (one exit per iteration) run with no tracing, with vmscope recording
# the KVM events (`vmscope record --events kvm`, to a trace in the test
# host's tmpfs) and with ftrace recording the same KVM tracepoints
# (`trace-cmd record -e kvm:...`, the list taken from `vmscope list`, to
# the same tmpfs), interleaved, ROUNDS rounds, median per mode. Prints
# both slowdowns as ratios to the untraced rate; the target is vmscope's
# slowdown (rate_off / rate_vmscope - 1) below half of ftrace's.
# Under TCG only the ratios mean something (tests/vm/README.md).
# Run: tests/vm/run.sh --show bench/vm/exits-per-second.sh
# (EPS_N=iterations per run, EPS_ROUNDS=rounds, EPS_MODES to choose modes)

N=${EPS_N:-40000}
ROUNDS=${EPS_ROUNDS:-3}
BASE_MODES=${EPS_MODES:-off vmscope ftrace}
MODES=$(for _ in $(seq "$ROUNDS"); do printf "%s " $BASE_MODES; done)

# start_recorder MODE I: starts the recorder of MODE in the background,
# returns once it records; REC_PID is its pid.
start_recorder() {
	case $1 in
	off) REC_PID= ; return 0 ;;
	vmscope)
		"$VMSCOPE" record --all --events kvm -o "/tmp/eps-$2" \
			>"/tmp/eps-$2.out" 2>"/tmp/eps-$2.err" &
		REC_PID=$!
		ready='^vmscope record: recording'
		log=/tmp/eps-$2.err ;;
	ftrace)
		# shellcheck disable=SC2086
		trace-cmd record $FTRACE_EVENTS -o "/tmp/eps-$2.dat" \
			>"/tmp/eps-$2.out" 2>&1 &
		REC_PID=$!
		log=/tmp/eps-$2.out ;;
	esac
	for _ in $(seq 600); do
		case $1 in
		vmscope) grep -q "$ready" "$log" 2>/dev/null && return 0 ;;
		# trace-cmd's own message is block-buffered into a file: watch
		# the event it enables and the ring buffer switch instead.
		ftrace) [ "$(cat $TRACEFS/events/kvm/kvm_exit/enable)" = 1 ] &&
			[ "$(cat $TRACEFS/tracing_on)" = 1 ] && sleep 1 && return 0 ;;
		esac
		kill -0 "$REC_PID" 2>/dev/null || break
		sleep 0.1
	done
	fail "$1 recorder did not start: $(tail -n 3 "$log")"
}

stop_recorder() {
	[ -n "$REC_PID" ] || return 0
	# The recorder's own CPU time (trace-cmd: with its per-CPU children),
	# read just before it is told to stop.
	REC_TICKS=$(cpu_ticks "$REC_PID" $(pgrep -P "$REC_PID"))
	kill -INT "$REC_PID"
	wait "$REC_PID" || fail "$1 recorder failed (status $?)"
}

median() {	# median of the numbers on stdin
	sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

host_main() {
	# probe-cost numbers: no extra probes held on the tracepoints (tests/vm/lib/vmlib.sh)
	VMTEST_HOLD_TRACEPOINTS=0 host_prepare_kvm
	check "insmod vmscope_host" insmod "$HOST_KO"
	FTRACE_EVENTS=$("$VMSCOPE" list | awk '{ for (i = 2; i <= 3; i++) if ($i ~ /^kvm:kvm_/) printf "-e %s ", $i }')
	[ -n "$FTRACE_EVENTS" ] || fail "no kvm events in vmscope list"
	log "ftrace events: $FTRACE_EVENTS"
	mount -t tmpfs -o size=1500m tmpfs /tmp || fail "tmpfs on /tmp"
	guest_start g1 guest_cpuid_rounds 1 3
	gdir=$VMTEST_GUESTS/g1
	i=0
	for m in $MODES; do
		i=$((i + 1))
		start_recorder "$m" "$i"
		touch "$gdir/go-$i"
		wait_file "$gdir/done-$i"
		stop_recorder "$m"
		[ "$m" = off ] || echo "$REC_TICKS" >>"/tmp/eps-ticks-$m"
		case $m in
		vmscope) log "vmscope round $i: $(du -sh "/tmp/eps-$i" | cut -f1), $(grep -i 'lost\|events' "/tmp/eps-$i.err" | tail -n 2 | tr '\n' ' ')" ;;
		ftrace) log "ftrace round $i: $(du -sh "/tmp/eps-$i.dat" | cut -f1), $(grep -i 'lost\|overrun' "/tmp/eps-$i.out" | head -n 3 | tr '\n' ' ')" ;;
		esac
		rm -rf "/tmp/eps-$i" "/tmp/eps-$i.dat"
	done
	guest_wait g1 600 || fail "guest failed"
	for m in $BASE_MODES; do
		rates=$(cat "$gdir"/rate-*-"$m" | tr ' ' '\n' | awk -F= '$1 == "cpuid_rate" { print $2 }')
		[ -n "$rates" ] || fail "no rate for mode $m"
		log "$m exits/s: $(echo $rates)"
		eval "rate_$m=$(echo "$rates" | median)"
	done
	for m in vmscope ftrace; do
		[ -f "/tmp/eps-ticks-$m" ] || continue
		log "$m recorder CPU ticks per round: $(tr '\n' ' ' <"/tmp/eps-ticks-$m")"
		eval "ticks_$m=$(median <"/tmp/eps-ticks-$m")"
	done
	awk -v off="$rate_off" -v v="${rate_vmscope:-0}" -v f="${rate_ftrace:-0}" -v n="$N" -v r="$ROUNDS" \
		-v tv="${ticks_vmscope:-0}" -v tf="${ticks_ftrace:-0}" 'BEGIN {
		printf "| mode | exits/s (median of %d x %d CPUID exits) | slowdown (off/mode - 1) |\n", r, n
		printf "|---|---|---|\n"
		printf "| untraced | %d | - |\n", off
		if (v) printf "| vmscope record --events kvm | %d | %.3f |\n", v, off / v - 1
		if (f) printf "| trace-cmd record (same kvm events) | %d | %.3f |\n", f, off / f - 1
		sv = off / v - 1; sf = off / f - 1
		if (v && f && sv > 0 && sf > 0)
			printf "vmscope slowdown / ftrace slowdown = %.2f (target < 0.50)\n", sv / sf
		else if (v && f)
			printf "a slowdown is <= 0: tracing cost is below this run'\''s noise; no ratio\n"
		if (tv && tf) printf "recorder CPU time, median per round: vmscope %d ticks, trace-cmd %d ticks (ratio %.2f)\n", tv, tf, tv / tf
	}' | tee /vmtest/exits-per-second.txt
	check "rmmod vmscope_host" rmmod vmscope_host
}
