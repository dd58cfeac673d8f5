# vmtest-timeout: 300
# `vmscope top --pid QEMU --json --interval 1`, live from the host module's
# ring buffers (host only: no agent in the guest), while the guest (1 vCPU)
# runs PIO_N port writes and CPUID_N CPUIDs (vmscope-exitloop). KVM's own
# exit counter for that VM is read with QEMU stopped before top starts
# and again before top is stopped (SIGINT), so both count the same window:
# the JSON lines' exits summed over every interval equal KVM's count within
# 2%, and the "cpuid" reason's within 2% of the CPUIDs the guest made (no
# other guest code makes CPUID exits in that window); top exits 0 after
# SIGINT with a last line marked final; the intervals tile host time; the
# VM's guest columns say there is no agent (agent false, no guest task,
# guest steal null), never zeros.
# With -o TRACE, top writes the recording `vmscope record` would: `dump
# --summary` finds every stream clean and indexed and the metadata's
# summary; `top --replay TRACE` counts KVM's window within one exit per
# vCPU at each end, and the exits top showed live: equal (cumulative
# count, per reason count, total, min, max) when live lost nothing, else
# never more per reason (records live could not order in time are counted
# as losses, and their exits are in the trace only).
# Then, the guest idle (its timer's exits), 2 s each: `top --all` traces
# every process holding a KVM VM, as the test's own look at /proc finds
# them (QEMU's g1 and kvm-hold's VM): as many VMs, g1 among them with its
# vCPU threads and exits; `top --domain NAME` finds g1's QEMU through a
# pid file where libvirt keeps them (written here: no libvirtd in this
# test; libvirt-hook runs the installed package only): one VM, named
# NAME, g1's vCPU threads, exits.

PIO_N=5000 CPUID_N=10000

# the workload once the test host says go; then up until it says bye
guest_main() {
	guest_exitloop_turns
}

host_main() {
	host_probed_guest g1 guest_main 1 3

	# QEMU stopped from KVM's first reading until top's probing is on:
	# no exit of the VM falls between the two
	e0=$(vm_stop_exits "$qpid")
	bg_start top /vmtest/top.json /vmtest/top.err 'vmscope top: live from the host module' \
		--pid "$qpid" --json --interval 1 -o /tmp/top-trace
	top=$BG_PID
	log "KVM exits before: $e0; $(cat /vmtest/top.err)"
	kill -CONT "$qpid"
	touch "$gdir/go"
	wait_file "$gdir/done"
	# and stopped again from KVM's second reading until top has stopped
	e1=$(vm_stop_exits "$qpid")
	# SIGINT: the session stops, flushing every CPU, and top takes the rest
	kill -INT "$top"
	wait "$top"
	rc=$?
	kill -CONT "$qpid"
	top_all_domain
	touch "$gdir/bye"
	guest_wait g1 120 || fail "guest failed"
	log "KVM exits after: $e1 (window: $((e1 - e0))); guest: $(cat "$gdir/loop.txt")"
	log "top's stderr: $(cat /vmtest/top.err)"
	[ "$rc" -eq 0 ] || fail "top exited $rc after SIGINT: $(cat /vmtest/top.err)"
	[ -s /vmtest/top.json ] || fail "top wrote no JSON line"
	tail -n 1 /vmtest/top.json | jq -c '{interval, final, counts, vms}'

	python3 - "$((e1 - e0))" "$CPUID_N" /vmtest/top.json >/vmtest/check.txt 2>&1 <<'PY'
import json, sys
kvm, cpuid_n, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
lines = [json.loads(l) for l in open(path)]
bad = []
if [l["interval"] for l in lines] != list(range(len(lines))):
    bad.append("intervals not numbered 0, 1, ...")
if [l["final"] for l in lines] != [False] * (len(lines) - 1) + [True]:
    bad.append("not exactly the last line final")
for a, b in zip(lines, lines[1:]):
    if a["end_ns"] != b["start_ns"]:
        bad.append("interval %d ends at %d, the next starts at %d"
                   % (a["interval"], a["end_ns"], b["start_ns"]))
exits = sum(l["counts"]["exits"] for l in lines)
by_reason = {}
for l in lines:
    for r in l["reasons"]:
        by_reason[r["reason"]] = by_reason.get(r["reason"], 0) + r["count"]
if sum(by_reason.values()) != exits:
    bad.append("reasons sum to %d, counts.exits to %d" % (sum(by_reason.values()), exits))
losses = sum(l["counts"]["losses"] for l in lines)
dropped = sum(l["counts"]["open_dropped"] for l in lines)
print("intervals %d, exits %d (KVM %d), by reason %s, losses %d, open_dropped %d"
      % (len(lines), exits, kvm, by_reason, losses, dropped))
if abs(exits - kvm) * 100 > 2 * kvm:
    bad.append("top's exits %d vs KVM's %d: more than 2%% apart" % (exits, kvm))
cpuid = by_reason.get("cpuid", 0)
if abs(cpuid - cpuid_n) * 100 > 2 * cpuid_n:
    bad.append("cpuid exits %d vs the guest's %d CPUIDs: more than 2%% apart" % (cpuid, cpuid_n))
# no agent: the guest columns say so, they are not zeros
for l in lines:
    for v in l["vms"]:
        if v["agent"] is not False:
            bad.append("interval %d: VM %s agent %r" % (l["interval"], v["vm"], v["agent"]))
        for c in v["vcpus"]:
            if c.get("guest_steal_ns", "absent") is not None:
                bad.append("interval %d: vCPU %s guest_steal_ns %r, not null"
                           % (l["interval"], c["vcpu"], c.get("guest_steal_ns", "absent")))
    if l["tasks"]:
        bad.append("interval %d: guest tasks without an agent: %s" % (l["interval"], l["tasks"]))
if not any(v["vcpus"] for l in lines for v in l["vms"]):
    bad.append("no vCPU in any interval")
print("\n".join(bad) if bad else "ok")
sys.exit(1 if bad else 0)
PY
	st=$?
	cat /vmtest/check.txt
	[ "$st" -eq 0 ] || fail "top --pid's JSON lines: $(tail -n 5 /vmtest/check.txt)"

	# -o: the recording, whole, and the same exits replayed from it
	"$VMSCOPE" dump --summary /tmp/top-trace >/vmtest/top-summary.txt ||
		fail "dump --summary of top's trace: $(tail -n 5 /vmtest/top-summary.txt)"
	grep '^total' /vmtest/top-summary.txt
	grep -q '^total: [0-9]* streams ([0-9]* clean, 0 torn, 0 corrupt, 0 unreadable)' \
		/vmtest/top-summary.txt || fail "top's trace: not every stream ended cleanly"
	grep -q '^-- no summary frame' /vmtest/top-summary.txt && fail "top's trace has no summary"
	grep -q '^end of host-cpu[0-9]*\.vtf: clean end .*, indexed$' /vmtest/top-summary.txt ||
		fail "top's trace: no host stream ended clean and indexed"
	"$VMSCOPE" top --replay /tmp/top-trace --json --interval 1 >/vmtest/top-replay.json \
		2>/vmtest/top-replay.err || fail "top --replay of top's trace: $(cat /vmtest/top-replay.err)"
	python3 - "$((e1 - e0))" /vmtest/top.json /vmtest/top-replay.json >/vmtest/check-o.txt 2>&1 <<'PY'
import json, sys
kvm = int(sys.argv[1])
live = [json.loads(l) for l in open(sys.argv[2])]
rep = [json.loads(l) for l in open(sys.argv[3])]
lc, rc = live[-1]["cumulative"], rep[-1]["cumulative"]
K = ("count", "total_ns", "min_ns", "max_ns")
by = lambda gs: {(g["vm"], g["reason"]): {k: g[k] for k in K} for g in gs}
live_losses = sum(l["counts"]["losses"] for l in live)
print("live: %d exits (%d loss records), replay of -o's trace: %d, KVM: %d"
      % (lc["counts"]["exits"], live_losses, rc["counts"]["exits"], kvm))
bad = []
# The trace holds every exit of the window: KVM counts an exit when it
# happens, top when its vCPU enters again, so at each end of the window
# (QEMU stopped, its vCPU thread between the two) one exit per vCPU may
# fall on the other side: 2 for this 1-vCPU guest.
if abs(rc["counts"]["exits"] - kvm) > 2:
    bad.append("replay of -o's trace: %d exits, KVM's window %d" % (rc["counts"]["exits"], kvm))
lr, rr = by(lc["reasons"]), by(rc["reasons"])
if live_losses == 0:
    # nothing lost live: the live lines are the trace's, exactly
    if lc["counts"]["exits"] != rc["counts"]["exits"]:
        bad.append("exits: live %d, replay %d" % (lc["counts"]["exits"], rc["counts"]["exits"]))
    if lr != rr:
        bad.append("by reason: live %s, replay %s" % (lr, rr))
else:
    # records live could not order were counted as losses (stderr says how
    # many): live may miss exits the trace has, never have more
    for k, v in lr.items():
        if k not in rr or v["count"] > rr[k]["count"]:
            bad.append("reason %s: live %d exits, replay %s"
                       % (k, v["count"], rr.get(k, {}).get("count")))
print("\n".join(bad) if bad else "ok")
sys.exit(1 if bad else 0)
PY
	st=$?
	cat /vmtest/check-o.txt
	[ "$st" -eq 0 ] || fail "top -o's trace against the live lines: $(tail -n 3 /vmtest/check-o.txt)"
	check "rmmod vmscope_host" rmmod vmscope_host
}

# `top --all` and `top --domain` over the idle guest (header).
top_all_domain() {
	log "top --all and --domain"
	kvm_pids=$(find /proc/[0-9]*/fd -lname 'anon_inode:kvm-vm' 2>/dev/null | cut -d/ -f3 | sort -un)
	vcpu_tids=$(grep -l '^CPU [0-9]*/KVM$' /proc/"$qpid"/task/*/comm | cut -d/ -f5)
	"$VMSCOPE" top --all --json --duration 2 >/vmtest/top-all.json 2>/vmtest/top-all.err ||
		fail "top --all: $(cat /vmtest/top-all.err)"
	mkdir -p /run/libvirt/qemu
	echo "$qpid" >/run/libvirt/qemu/top-dom.pid
	"$VMSCOPE" top --domain top-dom --json --duration 2 >/vmtest/top-dom.json \
		2>/vmtest/top-dom.err || fail "top --domain: $(cat /vmtest/top-dom.err)"
	rm /run/libvirt/qemu/top-dom.pid
	log "top --all and --domain done"
	python3 - "$(echo $kvm_pids)" "$(echo $vcpu_tids)" /vmtest/top-all.json /vmtest/top-dom.json \
		>/vmtest/check-all.txt 2>&1 <<'PY'
import json, sys
kvm_pids, tids = sys.argv[1].split(), sorted(int(t) for t in sys.argv[2].split())
bad = []
def vms(path):
    """Per VM name: its vCPU threads and exits summed over the intervals."""
    lines = [json.loads(l) for l in open(path)]
    if not lines or not lines[-1]["final"]:
        bad.append("%s: no final line" % path)
        return {}
    d = {}
    for l in lines:
        for v in l["vms"]:
            e = d.setdefault(v["name"], {"tids": set(), "exits": 0})
            for c in v["vcpus"]:
                e["tids"].add(c["tid"])
                e["exits"] += c["exits"]
    print(path, len(lines), "lines:", {k: (sorted(v["tids"]), v["exits"]) for k, v in d.items()})
    return d
a, d = vms(sys.argv[3]), vms(sys.argv[4])
print("processes holding a KVM VM:", kvm_pids, "g1's vCPU threads:", tids)
if len(a) != len(kvm_pids):
    bad.append("--all: %d VMs %s, /proc has %d holding a KVM VM" % (len(a), sorted(a), len(kvm_pids)))
if "g1" not in a or sorted(a["g1"]["tids"]) != tids or not a["g1"]["exits"]:
    bad.append("--all: g1 %s, want its vCPU threads %s with exits" % (a.get("g1"), tids))
if list(d) != ["top-dom"] or sorted(d["top-dom"]["tids"]) != tids or not d["top-dom"]["exits"]:
    bad.append("--domain top-dom: %s, want that one VM with g1's vCPU threads %s and exits" % (d, tids))
print("\n".join(bad) if bad else "ok")
sys.exit(1 if bad else 0)
PY
	st=$?
	cat /vmtest/check-all.txt
	[ "$st" -eq 0 ] || fail "top --all / --domain: $(tail -n 3 /vmtest/check-all.txt)"
}
