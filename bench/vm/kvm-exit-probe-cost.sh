# vmtest-timeout: 900
# Cost of the kvm_exit details (exit reason via a perf counter on kvm_exit,
# exit_reason.c): a guest's CPUID loop (one exit per iteration) is timed
# with probing off, with the probes but no exit reasons, and with both,
# three times each, interleaved, in one run (median per mode), and, in the
# traced modes, the module's own timing of kvm_exit (--measure): the time
# between our highest-priority and our payload probe (= perf's probe with
# KVM's TP_fast_assign and our overflow handler, when exit reasons are on)
# and the time inside our payload probe. TCG inflates every absolute
# number; compare them with each other (tests/vm/README.md).
# Mode "ftrace" is "probes" with ftrace's own kvm:kvm_exit event enabled
# as well (tracefs, its ring buffer): ftrace's probe registers at the
# default priority, between our two, so the gap grows by exactly what
# ftrace spends recording a kvm_exit (with its exit reason, which it reads
# from KVM directly), measured on the same exits as our probe's time.
# A benchmark run in the test host, not a test (it fails only if a mode did
# not run): tests/vm/run.sh --show bench/vm/kvm-exit-probe-cost.sh

EXITLOOP=$VMTEST_BUILD/kvm-probes/vmscope-exitloop
N=${COST_N:-60000}
MODES=$(for _ in 1 2 3; do printf "off probes reasons ftrace "; done)


guest_main() {
	i=0
	for m in $MODES; do
		i=$((i + 1))
		wait_file "/vmtest/go-$i"
		"$EXITLOOP" --cpuid "$N" >"/vmtest/rate-$i-$m" || fail "exitloop"
		touch "/vmtest/done-$i"
	done
}

host_main() {
	# probe-cost numbers: no extra probes held on the tracepoints (tests/vm/lib/vmlib.sh)
	VMTEST_HOLD_TRACEPOINTS=0 host_prepare_kvm
	check "insmod vmscope_host" insmod "$HOST_KO"
	guest_start g1 guest_main 1 3
	gdir=$VMTEST_GUESTS/g1
	qpid=$(cat "$gdir/qemu.pid")
	i=0
	for m in $MODES; do
		i=$((i + 1))
		case $m in
		off) "$VMSCOPE" stats --stop >/dev/null ;;
		probes) "$VMSCOPE" stats --start --reset --measure --no-exit-reasons --pid "$qpid" >/dev/null ;;
		reasons) "$VMSCOPE" stats --start --reset --measure --pid "$qpid" >/dev/null ;;
		ftrace) "$VMSCOPE" stats --start --reset --measure --no-exit-reasons --pid "$qpid" >/dev/null &&
			echo 1 >"$TRACEFS/events/kvm/kvm_exit/enable" ;;
		esac || fail "mode $m"
		"$VMSCOPE" stats | head -n 1
		touch "$gdir/go-$i"
		wait_file "$gdir/done-$i"
		[ "$m" = off ] || "$VMSCOPE" stats | grep '^exit_timing' >>"/vmtest/timing-$m"
		if [ "$m" = ftrace ]; then
			echo 0 >"$TRACEFS/events/kvm/kvm_exit/enable"
			grep -c 'kvm_exit' "$TRACEFS/trace" >>/vmtest/ftrace-lines || true
			echo >"$TRACEFS/trace"
		fi
	done
	guest_wait g1 300 || fail "guest failed"
	"$VMSCOPE" stats --stop >/dev/null
	log "kvm_exit lines in ftrace's buffer after each ftrace run: $(tr '\n' ' ' </vmtest/ftrace-lines)"
	[ "$(sort -n /vmtest/ftrace-lines | head -n 1)" -gt 0 ] || fail "ftrace recorded no kvm_exit"
	for m in off probes reasons ftrace; do
		# Median of the runs of this mode.
		rates=$(cat "$gdir"/rate-*-"$m" | tr ' ' '\n' | awk -F= '$1 == "cpuid_rate" { print $2 }' | sort -n)
		log "$m: $(echo $rates)"
		r=$(echo "$rates" | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }')
		[ -n "$r" ] || fail "no rate for mode $m"
		eval "rate_$m=$r"
	done
	for m in probes reasons ftrace; do
		# exit_timing n N gap_ns_avg G probe_ns_avg P: medians over the runs
		g=$(awk '{ print $5 }' "/vmtest/timing-$m" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
		p=$(awk '{ print $7 }' "/vmtest/timing-$m" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
		log "$m: $(tr '\n' ';' <"/vmtest/timing-$m")"
		echo "kvm_exit timing ($m): median gap before our probe $g ns, median in our probe $p ns" | tee -a /vmtest/cost.txt
		eval "gap_$m=$g probe_$m=$p"
	done
	# per kvm_exit, same exits: what ftrace's probe added to the gap
	# against our own probe's time, without and with the exit reasons
	awk -v g0="$gap_probes" -v gf="$gap_ftrace" -v pf="$probe_ftrace" \
		-v gr="$gap_reasons" -v pr="$probe_reasons" 'BEGIN {
		f = gf - g0
		printf "per kvm_exit: ftrace %d ns (gap %d - %d); vmscope %d ns without exit reasons (ratio %.2f), %d ns with them (perf path %d + probe %d; ratio %.2f)\n",
			f, gf, g0, pf, f > 0 ? pf / f : 0, gr - g0 + pr, gr - g0, pr, f > 0 ? (gr - g0 + pr) / f : 0
	}' | tee -a /vmtest/cost.txt
	awk -v off="$rate_off" -v p="$rate_probes" -v r="$rate_reasons" -v f="$rate_ftrace" 'BEGIN {
		printf "cpuid exits/s: off %d, probes %d, probes+exit reasons %d, probes+ftrace kvm_exit %d\n", off, p, r, f
		printf "slowdown vs off: probes %.3f, probes+exit reasons %.3f\n", off / p, off / r
		printf "added time per exit (TCG-inflated): probes %.2f us, exit reasons %.2f us more\n",
			(1 / p - 1 / off) * 1e6, (1 / r - 1 / p) * 1e6
	}' | tee -a /vmtest/cost.txt
	check "rmmod vmscope_host" rmmod vmscope_host
}
