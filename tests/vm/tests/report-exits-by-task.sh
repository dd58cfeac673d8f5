# vmtest-timeout: 900
# `vmscope report exits --by task` attributes exits to the guest tasks that
# caused them: in the test host, `vmscope record --pid QEMU` while the guest
# (1 vCPU) streams its events with `vmscope agent` and runs exit-tasks
# (tests/vm/tools/exit-tasks.c): task "exit-io" does N port writes (IOIO
# exits), then task "exit-cpuid" M CPUIDs (CPUID exits). After `vmscope
# merge`, the JSON report must charge "io" exits to exit-io and "cpuid"
# exits to exit-cpuid with counts within 2% of N and M, and the other task
# must have almost none of them (the same 2%). The guest module names each
# CPU's task when its session starts (cpu_task), so exits after that are
# all charged to a task: fewer than 0.5% of them to "(unknown task)".

. "$VMTEST_REPO/tests/vm/lib/agent.sh"

PORT=5643
N=3000	# port writes
M=5000	# CPUIDs
EXIT_TASKS=$VMTEST_BUILD/tests/vm/tools/exit-tasks
TRACE=/tmp/trace-exits

guest_main() {
	guest_prepare_vsock
	check "insmod vmscope_guest" insmod "$GUEST_KO"
	touch /vmtest/ready
	wait_file /vmtest/go
	guest_agent_start "$PORT" --flush-ms 50
	sleep 1
	check "exit-tasks $N $M" sh -c "'$EXIT_TASKS' $N $M >/vmtest/tasks.txt"
	guest_agent_finish
	check "rmmod vmscope_guest" rmmod vmscope_guest
}

host_main() {
	host_probed_guest g1 guest_main 1 3

	record_start --pid "$qpid" --buffer-size 8M -o "$TRACE"
	touch "$gdir/go"
	host_record_finish g1 "$qpid"
	cat "$VMTEST_OUT/guests/g1/tasks.txt" 2>/dev/null

	"$VMSCOPE" dump --summary "$TRACE" >/vmtest/summary.txt ||
		fail "dump --summary failed: $(tail -n 3 /vmtest/summary.txt)"
	ntask=$(awk '$1 == "events" && $3 == "cpu_task" { n += $4 } END { print n + 0 }' /vmtest/summary.txt)
	log "cpu_task records in the trace: $ntask"
	[ "$ntask" -ge 1 ] || fail "no cpu_task record in the trace: $(grep '^events' /vmtest/summary.txt | tr '\n' ';')"
	"$VMSCOPE" merge -o /tmp/merged "$TRACE" >/vmtest/merge.out 2>&1 ||
		fail "merge failed: $(tail -n 20 /vmtest/merge.out)"
	grep -E 'bound|causality' /vmtest/merge.out | head -5
	"$VMSCOPE" report exits --by task --top 5 /tmp/merged >/vmtest/report.txt 2>&1 ||
		fail "report exits failed: $(tail -n 5 /vmtest/report.txt)"
	cat /vmtest/report.txt
	"$VMSCOPE" report exits --by task --json /tmp/merged >/vmtest/report.json ||
		fail "report exits --json failed"
	python3 - "$N" "$M" /vmtest/report.json >/vmtest/check.txt 2>&1 <<'PY'
import json, sys
n, m, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
r = json.load(open(path))
def count(comm, reason):
    return sum(x["count"] for g in r["groups"] if g["task"]["comm"] == comm
               for x in g["reasons"] if x["reason"] == reason)
got = {(c, k): count(c, k) for c in ("exit-io", "exit-cpuid") for k in ("io", "cpuid")}
print("counts:", r["counts"])
for (c, k), v in sorted(got.items()):
    print(f"{c} {k} {v}")
ok = True
for c, k, want in (("exit-io", "io", n), ("exit-cpuid", "cpuid", m)):
    if abs(got[(c, k)] - want) > 0.02 * want:
        print(f"FAIL: {c} has {got[(c, k)]} {k} exits, want {want} +-2%"); ok = False
for c, k, want in (("exit-io", "cpuid", m), ("exit-cpuid", "io", n)):
    if got[(c, k)] > 0.02 * want:
        print(f"FAIL: {c} has {got[(c, k)]} {k} exits, want almost none"); ok = False
c = r["counts"]
after = c["exits"] - c["exits_before_session"]
unknown = sum(g["count"] for g in r["groups"] if g["task"]["comm"] == "(unknown task)")
print(f"exits {c['exits']}: {c['exits_before_session']} before the guest session, "
      f"{unknown} of {after} after it of an unknown task")
if unknown != c["exits_task_unknown"]:
    print(f"FAIL: groups say {unknown} unknown, counts {c['exits_task_unknown']}"); ok = False
if unknown > 0.005 * after:
    print(f"FAIL: {unknown} of {after} exits after the session's start of an unknown task"); ok = False
sys.exit(0 if ok else 1)
PY
	st=$?
	cat /vmtest/check.txt
	[ "$st" -eq 0 ] || fail "attribution: $(grep FAIL /vmtest/check.txt | head -3)"
	log "report exits --by task: $(grep -E '^exit-' /vmtest/check.txt | tr '\n' ';')"
	check "rmmod vmscope_host" rmmod vmscope_host
}
