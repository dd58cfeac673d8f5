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
# kvm_entry is timed the same way. Mode "ftrace" is "probes" with
# ftrace's own kvm:kvm_exit and kvm:kvm_entry events enabled as well
# (tracefs, its ring buffer): ftrace's probes register at the default
# priority, between our two, so each gap grows by exactly what ftrace
# spends recording that event (kvm_exit with its exit reason, which ftrace
# reads from KVM directly), measured on the same exits as our probes.
# Mode "direct" is "reasons" once calibration (exit_direct.c) has switched
# the exit details to the direct VMCB read: no perf counter, so its gap
# is the no-reason probes' and the read is inside our payload probe. It
# is reached before its first run (a warm-up run of CPUID exits under
# calibration) and its counters reset after that; "reasons" is the perf
# path (--exit-reasons=perf), as before.
# A benchmark run in the test host, not a test (it fails only if a mode did
# not run): tests/vm/run.sh --show bench/vm/kvm-exit-probe-cost.sh

N=${COST_N:-60000}
MODES=$(for _ in 1 2 3; do printf "off probes reasons direct ftrace "; done)


guest_main() {
	# warm-up for calibration (host: until direct mode)
	wait_file /vmtest/go-calib
	while [ ! -e /vmtest/stop-calib ]; do
		"$EXITLOOP" --cpuid 5000 --pio 5000 >/dev/null || fail "exitloop (calibration)"
	done
	touch /vmtest/done-calib
	guest_cpuid_rounds
}

host_main() {
	# probe-cost numbers: no extra probes held on the tracepoints (tests/vm/lib/vmlib.sh)
	VMTEST_HOLD_TRACEPOINTS=0 host_prepare_kvm
	check "insmod vmscope_host" insmod "$HOST_KO"
	guest_start g1 guest_main 1 3
	gdir=$VMTEST_GUESTS/g1
	qpid=$(cat "$gdir/qemu.pid")
	# calibrate once (the verdict lasts while kvm_amd stays loaded)
	"$VMSCOPE" stats --start --reset --pid "$qpid" >/dev/null || fail "calibration start"
	touch "$gdir/go-calib"
	for _ in $(seq 600); do
		"$VMSCOPE" stats | grep -q '^exit_mode direct ' && break
		sleep 0.5
	done
	touch "$gdir/stop-calib"
	wait_file "$gdir/done-calib"
	"$VMSCOPE" stats | grep '^exit_mode'
	"$VMSCOPE" stats | grep -q '^exit_mode direct ' || fail "calibration did not reach direct mode"
	i=0
	for m in $MODES; do
		i=$((i + 1))
		case $m in
		off) "$VMSCOPE" stats --stop >/dev/null ;;
		probes) "$VMSCOPE" stats --start --reset --measure --no-exit-reasons --pid "$qpid" >/dev/null ;;
		reasons) "$VMSCOPE" stats --start --reset --measure --exit-reasons=perf --pid "$qpid" >/dev/null ;;
		direct) "$VMSCOPE" stats --start --reset --measure --pid "$qpid" >/dev/null &&
			"$VMSCOPE" stats | grep -q '^exit_mode direct ' ;;
		ftrace) "$VMSCOPE" stats --start --reset --measure --no-exit-reasons --pid "$qpid" >/dev/null &&
			echo 1 >"$TRACEFS/events/kvm/kvm_exit/enable" &&
			echo 1 >"$TRACEFS/events/kvm/kvm_entry/enable" ;;
		esac || fail "mode $m"
		"$VMSCOPE" stats | head -n 1
		touch "$gdir/go-$i"
		wait_file "$gdir/done-$i"
		if [ "$m" != off ]; then
			"$VMSCOPE" stats >/tmp/stats.txt
			grep '^exit_timing' /tmp/stats.txt >>"/vmtest/timing-exit-$m"
			grep '^entry_timing' /tmp/stats.txt >>"/vmtest/timing-entry-$m"
		fi
		if [ "$m" = ftrace ]; then
			echo 0 >"$TRACEFS/events/kvm/kvm_exit/enable"
			echo 0 >"$TRACEFS/events/kvm/kvm_entry/enable"
			echo "$(grep -c 'kvm_exit:' "$TRACEFS/trace") $(grep -c 'kvm_entry:' "$TRACEFS/trace")" >>/vmtest/ftrace-lines
			echo >"$TRACEFS/trace"
		fi
	done
	guest_wait g1 300 || fail "guest failed"
	"$VMSCOPE" stats --stop >/dev/null
	log "kvm_exit and kvm_entry lines in ftrace's buffer after each ftrace run: $(tr '\n' ';' </vmtest/ftrace-lines)"
	awk '$1 == 0 || $2 == 0 { bad = 1 } END { exit bad }' /vmtest/ftrace-lines ||
		fail "ftrace recorded no kvm_exit or no kvm_entry in a run"
	for m in off probes reasons direct ftrace; do
		# Median of the runs of this mode.
		rates=$(cat "$gdir"/rate-*-"$m" | tr ' ' '\n' | awk -F= '$1 == "cpuid_rate" { print $2 }' | sort -n)
		log "$m: $(echo $rates)"
		r=$(echo "$rates" | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }')
		[ -n "$r" ] || fail "no rate for mode $m"
		eval "rate_$m=$r"
	done
	med() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
	for ev in exit entry; do
		for m in probes reasons direct ftrace; do
			# EV_timing n N gap_ns_avg G probe_ns_avg P: medians over the runs
			f=/vmtest/timing-$ev-$m
			g=$(awk '{ print $5 }' "$f" | med)
			p=$(awk '{ print $7 }' "$f" | med)
			log "$ev $m: $(tr '\n' ';' <"$f")"
			echo "kvm_$ev timing ($m): median gap before our probe $g ns, median in our probe $p ns" | tee -a /vmtest/cost.txt
			eval "gap_${ev}_$m=$g probe_${ev}_$m=$p"
		done
	done
	# per exit (kvm_exit + kvm_entry), same exits: what ftrace's probes
	# added to the gaps against our own probes' time, without and with
	# the exit reasons (the perf path: the kvm_exit gap it adds; the
	# direct read: inside our probe, plus any gap it adds)
	awk -v g0x="$gap_exit_probes" -v g0n="$gap_entry_probes" \
		-v gfx="$gap_exit_ftrace" -v gfn="$gap_entry_ftrace" \
		-v pfx="$probe_exit_ftrace" -v pfn="$probe_entry_ftrace" \
		-v grx="$gap_exit_reasons" -v prx="$probe_exit_reasons" -v prn="$probe_entry_reasons" \
		-v gdx="$gap_exit_direct" -v pdx="$probe_exit_direct" -v pdn="$probe_entry_direct" 'BEGIN {
		fx = gfx - g0x; fn = gfn - g0n; f = fx + fn
		# dgap: the gap of the direct runs against the no-reason ones (no perf
		# probe in either: noise around 0, kept with its sign)
		perf = grx - g0x; dgap = gdx - g0x
		v0 = pfx + pfn; v1 = perf + prx + prn; v2 = dgap + pdx + pdn
		printf "ftrace: kvm_exit %d ns, kvm_entry %d ns, per exit %d ns (1.00 of ftrace)\n", fx, fn, f
		printf "vmscope without exit reasons: kvm_exit %d ns, kvm_entry %d ns, per exit %d ns (%.2f of ftrace)\n",
			pfx, pfn, v0, (f > 0 ? v0 / f : 0)
		printf "vmscope with exit reasons, perf path: %d + kvm_exit %d + kvm_entry %d = %d ns per exit (%.2f of ftrace)\n",
			perf, prx, prn, v1, (f > 0 ? v1 / f : 0)
		printf "vmscope with exit reasons, direct: gap %d + kvm_exit %d + kvm_entry %d = %d ns per exit (%.2f of ftrace)\n",
			dgap, pdx, pdn, v2, (f > 0 ? v2 / f : 0)
	}' | tee -a /vmtest/cost.txt
	awk -v off="$rate_off" -v p="$rate_probes" -v r="$rate_reasons" -v f="$rate_ftrace" -v d="$rate_direct" 'BEGIN {
		printf "cpuid exits/s: off %d, probes %d, probes+exit reasons (perf) %d, probes+exit reasons (direct) %d, probes+ftrace %d\n", off, p, r, d, f
		printf "slowdown vs off: probes %.3f, probes+exit reasons %.3f\n", off / p, off / r
		printf "added time per exit (TCG-inflated): probes %.2f us, exit reasons %.2f us more\n",
			(1 / p - 1 / off) * 1e6, (1 / r - 1 / p) * 1e6
	}' | tee -a /vmtest/cost.txt
	check "rmmod vmscope_host" rmmod vmscope_host
}
