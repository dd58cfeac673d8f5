# vmtest-timeout: 1500
# Issue 21's live benchmark, in the test host: the CPU time of `vmscope top
# --pid QEMU --json` beside `perf kvm stat live -p QEMU` watching the same
# guest at the same time, over ROUNDS runs of the same workload (a 1-vCPU
# guest's exit-tasks: TC_PIO port writes by task "exit-io", then TC_CPUID
# CPUIDs by "exit-cpuid"), with the guest's `vmscope agent` streaming to
# top, so top shows the exits' guest tasks (perf cannot). Both watchers
# start once and run through every round; a round's figure is each
# watcher's utime+stime (/proc/PID/stat, all its threads) from the guest's
# "go" to its "done", so both are charged for the same exits over the same
# span. The probes' own cost (vmscope's probes, perf's tracepoint
# handlers) runs in the vCPU thread and is in neither figure
# (bench/vm/kvm-exit-probe-cost.sh measures that).
# perf's stdin is a FIFO that never has data: perf kvm stat live polls
# stdin for its 'q' key, and /dev/null (always readable) would end each
# poll at once (not tried). Under TCG only the ratio means something.
# TC_PEER=stat puts `perf stat -e kvm:kvm_exit -I 1000 -p QEMU` (counts
# in the kernel, printed once a second) in perf kvm stat live's place: a
# check of what perf's events see, not a watcher doing top's work.
# TC_PEER=record puts `perf kvm stat record -p QEMU` there (perf record
# of the same kvm tracepoints into the test host's /tmp, no processing),
# then, after the stop, times `perf kvm stat report` on that file and keeps
# `perf report --stats` (LOST and THROTTLE records, samples per event):
# perf's offline path, what it counts of the exits it recorded.
# TC_PERF=NAME: run build/NAME of this repository as perf (default: perf
# from PATH), e.g. a perf built with a change, beside Debian's on the same
# workload (run.sh passes knobs without a slash, hence a name).
# Run: flock /var/tmp/vmtest.lock tests/vm/run.sh --show bench/vm/top-cpu.sh
# (TC_PIO, TC_CPUID: per round; TC_ROUNDS; TC_PEER kvm or stat;
# TC_PERF_PAGES: perf kvm stat live's -m, its ring buffer in pages;
# TC_PEER record; TC_PERF)

PORT=5643	# VMSCOPE_AGENT_PORT, where top takes the agent
PIO=${TC_PIO:-10000}
CPUID=${TC_CPUID:-40000}
ROUNDS=${TC_ROUNDS:-3}
PEER=${TC_PEER:-kvm}
# perf's ring buffer per CPU in pages (perf's -m; empty: perf's default)
PERF_PAGES=${TC_PERF_PAGES:-}
PERF=${TC_PERF:+$VMTEST_REPO/build/$TC_PERF}
PERF=${PERF:-perf}
EXIT_TASKS=$VMTEST_BUILD/tests/vm/tools/exit-tasks

. "$VMTEST_REPO/tests/vm/lib/agent.sh"

guest_main() {
	guest_prepare_vsock
	check "insmod vmscope_guest" insmod "$GUEST_KO"
	touch /vmtest/ready
	wait_file /vmtest/watching
	. /vmtest/knobs	# the host's TC_* (run.sh passes them to the test host only)
	guest_agent_start "$PORT" --flush-ms 1000
	touch /vmtest/agent-up
	for i in $(seq "$ROUNDS"); do
		wait_file "/vmtest/go-$i"
		check "exit-tasks round $i" sh -c "'$EXIT_TASKS' $PIO $CPUID >/vmtest/tasks-$i.txt"
		touch "/vmtest/done-$i"
	done
	# the agent stops while top still takes its stream
	wait_file /vmtest/bye
	kill -TERM "$agent"
	wait "$agent" || fail "agent exited with $?: $(cat /vmtest/agent.err)"
	touch /vmtest/agent-down
	check "rmmod vmscope_guest" rmmod vmscope_guest
}

median() {	# median of the numbers on stdin
	sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

host_main() {
	command -v "$PERF" >/dev/null || fail "no $PERF in the test host (scripts/install-deps.sh installs linux-perf)"
	host_probed_guest g1 guest_main 1 3
	log "perf: $PERF, $("$PERF" version)"

	bg_start top /vmtest/top.json /vmtest/top.err 'vmscope top: live from the host module' \
		--pid "$qpid" --json --interval 1
	top=$BG_PID
	mkfifo /tmp/perf-stdin || fail "mkfifo"
	exec 7<>/tmp/perf-stdin	# a writer that never writes: perf's stdin is never readable
	case $PEER in
	kvm) "$PERF" kvm stat live -p "$qpid" -d 1 ${PERF_PAGES:+-m "$PERF_PAGES"} <&7 \
		>/vmtest/perf.out 2>/vmtest/perf.err & ;;
	stat) "$PERF" stat -e kvm:kvm_exit -I 1000 -p "$qpid" <&7 >/vmtest/perf.out 2>/vmtest/perf.err & ;;
	record) "$PERF" kvm -o /tmp/perf.data.kvm stat record -p "$qpid" ${PERF_PAGES:+-m "$PERF_PAGES"} <&7 \
		>/vmtest/perf.out 2>/vmtest/perf.err & ;;
	*) fail "TC_PEER is kvm, stat or record, not $PEER" ;;
	esac
	perf=$!
	# perf is watching once it holds its perf events open
	for _ in $(seq 300); do
		ls -l /proc/"$perf"/fd 2>/dev/null | grep -q 'perf_event' && break
		kill -0 "$perf" 2>/dev/null || fail "perf kvm stat live died: $(tail -n 20 /vmtest/perf.err)"
		sleep 0.2
	done
	ls -l /proc/"$perf"/fd | grep -q 'perf_event' || fail "perf kvm stat live opened no perf event: $(tail -n 20 /vmtest/perf.err)"
	sleep 2
	echo "PIO=$PIO CPUID=$CPUID ROUNDS=$ROUNDS" >"$gdir/knobs"
	touch "$gdir/watching"
	wait_file "$gdir/agent-up"
	sleep 2	# the agent's first flush has reached top
	kw0=$(kvm_exits "$qpid")

	: >/vmtest/rounds.txt
	for i in $(seq "$ROUNDS"); do
		k0=$(kvm_exits "$qpid") a0=$(cpu_ticks "$top") b0=$(cpu_ticks "$perf") s0=$(date +%s.%N)
		touch "$gdir/go-$i"
		wait_file "$gdir/done-$i"
		k1=$(kvm_exits "$qpid") a1=$(cpu_ticks "$top") b1=$(cpu_ticks "$perf") s1=$(date +%s.%N)
		echo "$i $(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.1f", b - a }') $((k1 - k0)) $((a1 - a0)) $((b1 - b0))" |
			tee -a /vmtest/rounds.txt
		kill -0 "$top" 2>/dev/null || fail "top died: $(cat /vmtest/top.err)"
		kill -0 "$perf" 2>/dev/null || fail "perf died: $(tail -n 20 /vmtest/perf.err)"
	done
	life_top=$(cpu_ticks "$top") life_perf=$(cpu_ticks "$perf")
	touch "$gdir/bye"
	wait_file "$gdir/agent-down"
	kw1=$(kvm_exits "$qpid")
	kill -INT "$top" "$perf"
	wait "$top" || fail "top exited $?: $(cat /vmtest/top.err)"
	wait "$perf" || log "perf ($PEER) exited $? after SIGINT"
	exec 7>&-
	if [ "$PEER" = record ]; then
		# perf's offline path on what it recorded: its CPU ticks (the
		# shell's waited-for children), its count, perf's own records
		sh -c '"$@" >/vmtest/perf-report.txt 2>&1; awk "{ print \$16 + \$17 }" /proc/$$/stat' \
			sh "$PERF" kvm -i /tmp/perf.data.kvm stat report >/vmtest/perf-report-ticks.txt
		"$PERF" report -i /tmp/perf.data.kvm --stats >/vmtest/perf-stats.txt 2>&1
		ls -l /tmp/perf.data.kvm >&2
		cp /tmp/perf.data.kvm /vmtest/perf.data.kvm
		log "perf kvm stat report: $(cat /vmtest/perf-report-ticks.txt) ticks; $(grep 'Total Samples' /vmtest/perf-report.txt)"
		log "perf report --stats: $(grep -E 'SAMPLE|LOST|THROTTLE|stats:' /vmtest/perf-stats.txt | tr -s ' ' | tr '\n' ';')"
	fi
	guest_wait g1 300 || fail "guest g1 failed"
	check "rmmod vmscope_host" rmmod vmscope_host

	# Each watcher saw the workload: top's exits per guest task and perf's
	# samples, summed over the run, beside KVM's count from both watching
	# (after the guest booted) to the stop: top's include the boot's
	# exits before that, perf's what its displays counted (a perf that
	# falls behind sheds events: its CPU time is then for fewer exits).
	tasks=$(jq -r '.tasks[]? | "\(.count)\t\(.task.comm)"' /vmtest/top.json 2>/dev/null |
		awk -F'\t' '{ c[$2] += $1 } END { for (t in c) printf "%s %d; ", t, c[t] }')
	top_exits=$(jq -s 'map(.counts.exits) | add' /vmtest/top.json)
	# perf's displays (on its stderr) each count the exits since the last one
	# perf stat -I: one line per second, "TIME COUNT kvm:kvm_exit"
	case $PEER in
	kvm) perf_samples=$(awk -F'[:,]' '/^Total Samples:/ { s += $2 } END { print s + 0 }' /vmtest/perf.err) ;;
	record) perf_samples=$(awk -F'[:,]' '/Total Samples:/ { s += $2 } END { print s + 0 }' /vmtest/perf-report.txt) ;;
	stat) perf_samples=$(awk '$3 == "kvm:kvm_exit" { gsub(/,/, "", $2); s += $2 } END { print s + 0 }' /vmtest/perf.err) ;;
	esac
	agent=$(jq -s '[.[].vms[].agent] | any' /vmtest/top.json)
	log "top: $(wc -l </vmtest/top.json) intervals, $top_exits exits, agent $agent, guest tasks: $tasks"
	log "perf ($PEER): $perf_samples exits over its $(grep -c '^Total Samples:\|kvm:kvm_exit' /vmtest/perf.err) displays"
	log "KVM's exits while both watched (from the first round's setup to the stop): $((kw1 - kw0))"
	[ "$agent" = true ] || fail "the agent never connected to top"
	[ "$perf_samples" -gt 0 ] || fail "perf kvm stat live counted no exit: $(tail -n 20 /vmtest/perf.err)"
	echo "$tasks" | grep -q 'exit-cpuid' || fail "top named no exit-cpuid task"

	log "peer: $PEER (kvm: perf kvm stat live; stat: perf stat -e kvm:kvm_exit; record: perf kvm stat record, then report)"
	awk -v r="$ROUNDS" -v p="$PIO" -v c="$CPUID" -v lt="$life_top" -v lp="$life_perf" \
		-v kw="$((kw1 - kw0))" -v te="$top_exits" -v pe="$perf_samples" '
	{ n++; s[n] = $2; k[n] = $3; a[n] = $4; b[n] = $5; q[n] = ($5 ? $4 / $5 : 0) }
	END {
		printf "| round | s | KVM exits | top ticks | perf ticks | top / perf |\n|---|---|---|---|---|---|\n"
		for (i = 1; i <= n; i++) printf "| %d | %s | %d | %d | %d | %.2f |\n", i, s[i], k[i], a[i], b[i], q[i]
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (q[j] < q[i]) { t = q[i]; q[i] = q[j]; q[j] = t }
		printf "median top / perf over %d rounds (exit-tasks %d %d): %.2f (target <= 1)\n", r, p, c, q[int((n + 1) / 2)]
		printf "whole life to the stop: top %d ticks, perf %d ticks (%.2f)\n", lt, lp, (lp ? lt / lp : 0)
		printf "exits counted: KVM %d while both watched; top %d (since its start); perf %d\n", kw, te, pe
	}' /vmtest/rounds.txt | tee /vmtest/top-cpu.txt
}
