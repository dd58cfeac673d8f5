# vmtest-timeout: 900
# `vmscope report exits --by task` attributes exits to the guest tasks that
# caused them: in the test host, `vmscope record --pid QEMU` while the guest
# (2 vCPUs) streams its events with `vmscope agent` and runs `exit-tasks
# --pinned` (tests/vm/tools/exit-tasks.c): task "exit-io" does N port
# writes (IOIO exits) on CPU 0 while task "exit-cpuid" does M CPUIDs (CPUID
# exits) on CPU 1. Both at once, one per vCPU, rather than one after the
# other on either: each vCPU's current guest task must be kept apart from
# the other's, or one task's exits would be charged to the other, running
# at the same time (and each vCPU has a known floor of exits). After `vmscope
# merge`, the JSON report must charge "io" exits to exit-io and "cpuid"
# exits to exit-cpuid with counts within 2% of N and M, and the other task
# must have almost none of them (the same 2%). The guest module names each
# CPU's task when its session starts (cpu_task), so exits after that are
# all charged to a task: fewer than 0.5% of them to "(unknown task)".
#
# Then `vmscope top --pid QEMU`, live, with the guest's agent (top takes it
# as record does, on the same vsock port: one after the other), over the
# same workload run twice more by the same guest:
# - `--json --interval 1`: the VM has its agent from its connection on; the
#   intervals' task groups summed per task and reason give exit-io's "io"
#   exits and exit-cpuid's "cpuid" exits within 2% of the port writes and
#   CPUIDs the workload says it made, the other task almost none (2%);
#   the per-vCPU rows (vms[].vcpus[]) summed: both vCPUs, vCPU 0 with at
#   least exit-io's port writes (98%), vCPU 1 with at least exit-cpuid's
#   CPUIDs (98%), the two tasks being bound to those CPUs;
# - the screen, in tmux in the test host (a real terminal: send-keys,
#   capture-pane), one interval spanning the run: stopped with C-c, the
#   captured table (by exit reason, sorted by total) has "io" and "cpuid"
#   rows sorted by their total column; s (the sort: count) reorders the
#   same interval's rows by exits/s, in another order; g
#   groups by guest task: exit-io and exit-cpuid are rows; q ends it, exit 0;
#   the VM's vCPU rows above the table: vCPU 0 and vCPU 1, each with exits.
# Both say the VM's clock alignment: in the JSON, "no agent" before the
# agent connected, then "bounded" with the bound of the VM's last guest
# record put out (always so at the end); the screen's header, that bound.

. "$VMTEST_REPO/tests/vm/lib/agent.sh"

PORT=5643
N=3000	# port writes
M=5000	# CPUIDs
EXIT_TASKS=$VMTEST_BUILD/tests/vm/tools/exit-tasks
TRACE=/tmp/trace-exits

# The agent started (it connects once a receiver listens on the port),
# the workload, the agent stopped; then "done-RUN" and the host's next word.
guest_agent_run() {
	guest_agent_start "$PORT" --flush-ms 50
	sleep 1	# clock sync before the workload (lib/agent.sh, guest_agent_finish)
	check "exit-tasks --pinned $N $M ($1)" sh -c "'$EXIT_TASKS' --pinned $N $M >/vmtest/tasks-$1.txt"
	sleep 1	# clock sync past the workload (lib/agent.sh, guest_agent_finish)
	kill -TERM "$agent"
	wait "$agent" || fail "agent exited with $?: $(cat /vmtest/agent.err)"
	touch "/vmtest/done-$1"
}

guest_main() {
	guest_prepare_vsock
	check "insmod vmscope_guest" insmod "$GUEST_KO"
	touch /vmtest/ready
	wait_file /vmtest/go
	guest_agent_start "$PORT" --flush-ms 50
	sleep 1	# clock sync before the workload (lib/agent.sh, guest_agent_finish)
	check "exit-tasks --pinned $N $M" sh -c "'$EXIT_TASKS' --pinned $N $M >/vmtest/tasks.txt"
	guest_agent_finish
	# top's runs: JSON lines, then the screen
	guest_agent_run json
	wait_file /vmtest/go-screen
	guest_agent_run screen
	wait_file /vmtest/bye2
	check "rmmod vmscope_guest" rmmod vmscope_guest
}

host_main() {
	host_probed_guest g1 guest_main 2 3

	record_start --pid "$qpid" --buffer-size 8M -o "$TRACE"
	touch "$gdir/go"
	# record's stop as host_record_finish does it; the guest goes on
	wait_file "$gdir/done"
	vm_stop "$qpid"
	kill -INT "$REC_PID"
	wait "$REC_PID" || fail "record failed: $(cat /vmtest/record.err)"
	kill -CONT "$qpid"
	grep -q 'guest of VM 0 (cid 3) connected' /vmtest/record.err || fail "the agent never connected"
	cat "$gdir/tasks.txt"

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

	top_json
	top_screen
	touch "$gdir/bye2"
	guest_wait g1 300 || fail "guest g1 failed"
	check "rmmod vmscope_host" rmmod vmscope_host
}

# `top --pid --json` over the guest's second run (its agent connects to top).
top_json() {
	bg_start top /vmtest/top.json /vmtest/top.err 'vmscope top: live from the host module' \
		--pid "$qpid" --json --interval 1 --tasks 50
	top=$BG_PID
	touch "$gdir/bye"
	wait_file "$gdir/done-json"
	kill -INT "$top"
	wait "$top" || fail "top --json exited $?: $(cat /vmtest/top.err)"
	log "top --json: $(wc -l </vmtest/top.json) lines; stderr: $(tr '\n' ';' </vmtest/top.err)"
	cat "$gdir/tasks-json.txt"
	python3 - "$gdir/tasks-json.txt" /vmtest/top.json >/vmtest/check-top.txt 2>&1 <<'PY'
import json, re, sys
done = dict(re.findall(r"^(exit-\S+) pid \d+: (\d+)$", open(sys.argv[1]).read(), re.M))
lines = [json.loads(l) for l in open(sys.argv[2])]
bad = []
if not lines or not lines[-1]["final"]:
    bad.append("no final line")
got = {}
# the agent connects after top started: its VM has "agent" from then on
agent = [v["agent"] for l in lines for v in l["vms"]]
if not agent or agent[-1] is not True or agent != sorted(agent):
    bad.append("the VM's agent by interval: %s" % agent)
# each VM's clock alignment: "no agent" before its agent, then bounded
# (by the last guest record put out) once its records are converted
sync = [(v["sync"], v["sync_bound_ns"]) for l in lines for v in l["vms"]]
print("sync by interval:", sync)
for (st, b), a in zip(sync, agent):
    if not a and (st, b) != ("no agent", None) or a and st not in ("bounded", "no sync yet"):
        bad.append("sync %r, bound %r with agent %r" % (st, b, a))
    if (st == "bounded") != (b is not None and b > 0):
        bad.append("sync %r with bound %r" % (st, b))
if sync and sync[-1][0] != "bounded":
    bad.append("the last interval's sync: %r" % (sync[-1],))
for l in lines:
    for t in l["tasks"]:
        for r in t["reasons"]:
            k = (t["task"]["comm"], r["reason"])
            got[k] = got.get(k, 0) + r["count"]
print("the workload:", done)
print("intervals %d; summed counts %s; losses %d" % (len(lines), lines[-1]["cumulative"]["counts"],
      sum(l["counts"]["losses"] for l in lines)))
for (c, k), v in sorted(got.items()):
    if c.startswith("exit-"):
        print(f"{c} {k} {v}")
for c in ("(before guest session)", "(unknown task)"):
    print(f"{c}: {sum(v for (t, k), v in got.items() if t == c)} exits")
for c, k, other, ko in (("exit-io", "io", "exit-cpuid", "cpuid"),
                        ("exit-cpuid", "cpuid", "exit-io", "io")):
    want = int(done.get(c, 0))
    if not want:
        bad.append(f"the workload did not say how many {c} made")
        continue
    if abs(got.get((c, k), 0) - want) > 0.02 * want:
        bad.append(f"{c}: {got.get((c, k), 0)} {k} exits, the workload made {want} +-2%")
    if got.get((other, k), 0) > 0.02 * want:
        bad.append(f"{other}: {got.get((other, k), 0)} {k} exits, want almost none")
# per vCPU: both, each at least its bound task's exits
vcpu = {}
for l in lines:
    for v in l["vms"]:
        for c in v["vcpus"]:
            vcpu[c["vcpu"]] = vcpu.get(c["vcpu"], 0) + c["exits"]
print("exits by vCPU:", vcpu)
for c, t in ((0, "exit-io"), (1, "exit-cpuid")):
    want = int(done.get(t, 0))
    if vcpu.get(c, 0) < 0.98 * want:
        bad.append(f"vCPU {c}: {vcpu.get(c, 0)} exits, {t} bound to it made {want}")
print("\n".join(bad) if bad else "ok")
sys.exit(1 if bad else 0)
PY
	st=$?
	cat /vmtest/check-top.txt
	[ "$st" -eq 0 ] || fail "top --json with the agent: $(tail -n 3 /vmtest/check-top.txt)"
}

# The pane's text now.
top_pane() {
	tmux -L vmtest capture-pane -p -t top
}

# Whether the pane shows TEXT.
top_shows() {
	top_pane | grep -qF -- "$1"
}

# `top --pid` on a screen in tmux over the guest's third run.
top_screen() {
	printf 'set -g remain-on-exit on\n' >/tmp/tmux.conf
	# the shell ignores C-c's SIGINT (top sets its own handler) and says
	# how top ended
	tmux -L vmtest -f /tmp/tmux.conf new-session -d -s top -x 200 -y 50 \
		"trap '' INT; '$VMSCOPE' top --pid $qpid --interval 600 2>/vmtest/top-screen.err; echo \$? >/vmtest/top-screen.rc" ||
		fail "tmux new-session failed"
	"$VMTEST_WAIT" --timeout 60 --line /vmtest/top-screen.err 'vmscope top: live from the host module' ||
		fail "top on the screen did not start: $(cat /vmtest/top-screen.err)"
	touch "$gdir/go-screen"
	wait_file "$gdir/done-screen"
	cat "$gdir/tasks-screen.txt"
	tmux -L vmtest send-keys -t top C-c
	wait_until 60 "the screen saying STOPPED" top_shows STOPPED
	top_pane >/vmtest/screen-total.txt
	tmux -L vmtest send-keys -t top s
	wait_until 10 "the sort count on the screen" top_shows "sort (count)"
	top_pane >/vmtest/screen-count.txt
	tmux -L vmtest send-keys -t top g
	wait_until 10 "the grouping by guest task" top_shows "guest task"
	top_pane >/vmtest/screen-task.txt
	tmux -L vmtest send-keys -t top q
	wait_until 30 "top ending on q" sh -c '[ "$(tmux -L vmtest display -p -t top "#{pane_dead}")" = 1 ]'
	rc=$(cat /vmtest/top-screen.rc)
	# what the terminal shows after top ended (glibc writes its fatal
	# messages to the terminal, not to stderr)
	top_pane >/vmtest/screen-end.txt
	tmux -L vmtest kill-server
	cat /vmtest/screen-total.txt
	log "top on the screen exited $rc; stderr: $(tr '\n' ';' </vmtest/top-screen.err)"
	[ "$rc" = 0 ] || fail "top on the screen exited $rc: $(cat /vmtest/top-screen.err; grep . /vmtest/screen-end.txt | tail -n 5)"
	python3 - /vmtest/screen-total.txt /vmtest/screen-count.txt /vmtest/screen-task.txt \
		>/vmtest/check-screen.txt 2>&1 <<'PY'
import re, sys
UNIT = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
def table(path, head):
    """The rows of the exits table under the header naming @head:
    (label, exits/s, total, p50, p99, max), the durations in ns."""
    rows, on = [], False
    for l in open(path).read().splitlines():
        if re.match(r"^VM\s+" + head + r"\s+exits/s", l):
            on = True
            continue
        if on:
            t = l.split()
            if len(t) < 11 or not t[0].isdigit():
                break
            d = [float(t[i]) * UNIT[t[i + 1]] for i in range(len(t) - 8, len(t), 2)]
            rows.append((" ".join(t[1:-9]), float(t[-9]), *d))
    return rows
bad = []
tot, cnt = table(sys.argv[1], "exit reason"), table(sys.argv[2], "exit reason")
task = table(sys.argv[3], "guest task")
print("by total:", [(r[0], r[2]) for r in tot])
print("by count:", [(r[0], r[1]) for r in cnt])
print("by task:", [r[0] for r in task])
for name, rows in (("total", tot), ("count", cnt)):
    if {"io", "cpuid"} - {r[0] for r in rows}:
        bad.append("the table sorted by %s has no io or cpuid row: %s" % (name, [r[0] for r in rows]))
if [r[2] for r in tot] != sorted((r[2] for r in tot), reverse=True):
    bad.append("sorted by total: the total column is not in order")
if [r[1] for r in cnt] != sorted((r[1] for r in cnt), reverse=True):
    bad.append("sorted by count: the exits/s column is not in order")
if sorted(tot) != sorted(cnt):
    bad.append("the two sorts do not show the same rows")
if [r[0] for r in tot] == [r[0] for r in cnt]:
    bad.append("pressing s did not reorder the table")
# the header: the VM's sync bound, a duration
m = re.search(r"^sync bound: VM 0 ([0-9.]+ (ns|us|ms|s))$", open(sys.argv[1]).read(), re.M)
print("the header's sync bound:", m.group(1) if m else None)
if not m:
    bad.append("no sync bound of VM 0 in the header")
for t in ("exit-io", "exit-cpuid"):
    if not any(r[0].startswith(t) for r in task):
        bad.append("no %s row grouped by guest task" % t)
# the VM's vCPU rows: vcpu, thread, exits/s, ... under their header
vc, on = {}, False
for l in open(sys.argv[1]).read().splitlines():
    t = l.split()
    if t[:3] == ["vcpu", "thread", "exits/s"]:
        on = True
    elif on and len(t) > 3 and t[0].isdigit():
        vc[int(t[0])] = float(t[2])
    elif on:
        break
print("vCPU rows (exits/s):", vc)
if sorted(vc) != [0, 1] or not all(x > 0 for x in vc.values()):
    bad.append("the vCPU rows are not vCPUs 0 and 1 with exits: %s" % vc)
print("\n".join(bad) if bad else "ok")
sys.exit(1 if bad else 0)
PY
	st=$?
	cat /vmtest/check-screen.txt
	[ "$st" -eq 0 ] || fail "top on the screen: $(tail -n 3 /vmtest/check-screen.txt)"
}
