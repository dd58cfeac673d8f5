# vmtest-timeout: 600
# Guest capture end to end: in a 2-vCPU guest, `vmscope agent` records with
# vmscope_guest.ko and streams to a receiver in the test host (guest-recv,
# built on collector/guest_link) while two tasks pinned to CPU 1 ping-pong
# over pipes ROUNDS times. On the receiving side: the stream parses cleanly
# to the end, every record decodes, nothing was lost, the hello carries the
# state dump (tasks incl. the agent, IRQs with names, 2 CPUs) and a sync
# token, sync_guest records come from both CPUs; and the sched_switch
# records of exactly those two tasks agree with the round-trip count and
# with /proc/PID/status voluntary_ctxt_switches (within 2%); neither
# sys_enter nor sys_exit was recorded (not selected); `vmscope list` in
# the guest read the guest module's descriptors, with their sides.
# Then the static agent (vmscope-agent) runs in a chroot holding nothing
# but busybox, itself and /dev/vmscope-guest, with --syscalls, streaming
# to a second receiver: that stream parses cleanly, its state dump has the
# static agent, it holds sys_enter and sys_exit records and the exec of
# the chroot's /bin/busybox.
# Last, a loss made on purpose (a third agent, rings of 2 x 4 KiB, stopped
# with SIGSTOP while a task pinned to CPU 1 makes 40 000 syscalls, then
# continued): the stream reports the loss, and every chunk that reports a
# loss holds, before any sched_switch, a cpu_task record restating the
# task then running on that CPU (the guest module writes it before the
# first record after a drop; a drop closes the open sub-buffer, so it lands
# after the loss), which is the task the CPU's next sched_switch switches
# away from.

. "$VMTEST_REPO/tests/vm/lib/agent.sh"

PORT=5643
PORT_STATIC=5644
PORT_LOSS=5645
ROUNDS=2000
RECV=$VMTEST_BUILD/tests/vm/tools/guest-recv
PINGPONG=$VMTEST_BUILD/tests/vm/tools/pingpong

guest_main() {
	guest_prepare_vsock
	check "insmod vmscope_guest" insmod "$GUEST_KO"
	check "vmscope list" sh -c "'$VMSCOPE' list >/vmtest/list.txt"
	# 128 x 64 KiB per CPU hold the whole run (~3 MB): the exact
	# comparison below must not depend on when the agent gets a CPU of a
	# nested guest on a loaded machine (a CI run's agent fell 72 events
	# behind with the default 32)
	guest_agent_start "$PORT" --flush-ms 50 --subbufs-shift 7
	check "pingpong $ROUNDS rounds on cpu 1" sh -c "'$PINGPONG' $ROUNDS 1 >/run/pp.txt"
	cp /run/pp.txt /vmtest/pp.txt
	sleep 0.5
	kill -TERM "$agent"
	wait "$agent" || fail "agent exited with $?: $(cat /vmtest/agent.err)"
	cat /vmtest/agent.err

	# The static agent where only busybox is around it, syscalls selected.
	bb=/run/bbroot
	guest_busybox_root "$bb"
	chroot "$bb" /bin/busybox sh -c \
		"exec /bin/vmscope-agent --port $PORT_STATIC --syscalls --flush-ms 50 -v" \
		2>/vmtest/agent-static.err &
	agent=$!
	guest_agent_wait_connected /vmtest/agent-static.err
	check "busybox ls in the chroot" sh -c "chroot '$bb' /bin/busybox ls -lR / >/vmtest/chroot-ls.txt"
	sleep 0.5
	kill -TERM "$agent"
	wait "$agent" || fail "static agent exited with $?: $(cat /vmtest/agent-static.err)"
	cat /vmtest/agent-static.err

	# The loss on purpose: nothing reads CPU 1's 8 KiB while it fills.
	guest_agent_start "$PORT_LOSS" --syscalls --subbuf-shift 12 --subbufs-shift 1
	kill -STOP "$agent"
	check "40000 syscalls on cpu 1, agent stopped" \
		taskset -c 1 dd if=/dev/zero of=/dev/null bs=1 count=20000 status=none
	kill -CONT "$agent"
	check "4000 syscalls on cpu 1, agent running" \
		taskset -c 1 dd if=/dev/zero of=/dev/null bs=1 count=2000 status=none
	sleep 0.5
	kill -TERM "$agent"
	wait "$agent" || fail "loss agent exited with $?: $(cat /vmtest/agent.err)"
	cat /vmtest/agent.err
	check "rmmod vmscope_guest" rmmod vmscope_guest
}

host_main() {
	host_prepare_kvm
	mkdir -p /run/recv
	"$RECV" "$PORT" /run/recv 1 >/run/recv.out 2>&1 &
	recv=$!
	mkdir -p /run/recv-static
	"$RECV" "$PORT_STATIC" /run/recv-static 1 >/run/recv-static.out 2>&1 &
	recv_static=$!
	mkdir -p /run/recv-loss
	"$RECV" "$PORT_LOSS" /run/recv-loss 1 >/run/recv-loss.out 2>&1 &
	recv_loss=$!
	guest_run g1 guest_main 2 3
	wait "$recv" || fail "receiver: $(cat /run/recv.out)"
	cat /run/recv.out
	cp /run/recv/hello.txt /run/recv/chunks.txt /run/recv.out "$VMTEST_OUT/"
	r=/run/recv/records.txt
	grep -q "end: clean" /run/recv.out || fail "stream did not end cleanly"
	grep -q "from cid 3:" /run/recv.out || fail "not attributed to cid 3"

	# in a guest, `vmscope list` reads the guest module's descriptors
	lst=$(guest_file g1 list.txt)
	head -1 "$lst"
	grep -q "^# events of the loaded vmscope_guest module" "$lst" ||
		fail "list in the guest: $(head -1 "$lst")"
	grep -Eq "^sys_enter +GUEST " "$lst" && grep -Eq "^kvm_exit +HOST " "$lst" &&
		grep -Eq "^sched_switch +BOTH " "$lst" || fail "list in the guest: sides wrong"
	log "ok: vmscope list in the guest: $(grep -c '^[a-z]' "$lst") events with their sides"

	pp=$(guest_file g1 pp.txt)
	cat "$pp"
	read -r _ parent _ child _ rounds <"$pp"
	[ "$rounds" = "$ROUNDS" ] || fail "pingpong said: $(cat "$pp")"

	n=$(wc -l <"$r")
	log "records: $n"
	[ "$n" -gt 1000 ] || fail "only $n records"
	bad=$(grep -c -E "UNDECODABLE|BAD-" "$r")
	[ "$bad" = 0 ] || fail "$bad undecodable records/chunks: $(grep -m3 -E 'UNDECODABLE|BAD-' "$r")"
	# chunks.txt: conn cpu seq records lost_before gap
	awk '$5 != 0 || $6 != 0 { print; exit 1 }' /run/recv/chunks.txt ||
		fail "the stream reports losses or gaps; the comparison needs none"

	grep -q "sync 1 " /run/recv/hello.txt || fail "hello: no sync: $(head -1 /run/recv/hello.txt)"
	grep -q " cpus 2 " /run/recv/hello.txt || fail "hello: not 2 CPUs"
	grep -q "^irq [0-9]* [a-z]" /run/recv/hello.txt || fail "hello: no named IRQs"
	grep -q " vmscope$" /run/recv/tasks.txt || fail "state dump lacks the agent"
	grep -q "^1 1 " /run/recv/tasks.txt || fail "state dump lacks init"
	for c in 0 1; do
		s=$(awk -v c=$c '$1 == c && $3 == "sync_guest"' "$r" | wc -l)
		[ "$s" -gt 10 ] || fail "cpu $c: only $s sync_guest records"
		log "ok: cpu $c: $s sync_guest records"
	done
	for ev in sched_wakeup sched_waking sched_process_fork sched_process_exit \
		  irq_handler_entry softirq_entry; do
		grep -q "^[0-9]* [0-9]* $ev " "$r" || fail "no $ev record"
	done
	for ev in sys_enter sys_exit; do
		grep -q "^[0-9]* [0-9]* $ev " "$r" && fail "$ev recorded though not selected"
	done
	log "ok: no sys_enter/sys_exit without --syscalls"

	# Record fields: $5 prev pid/tgid, $7 state, $9 preempt, $11 next
	# pid/tgid. Voluntary = not preempted and not runnable (as the kernel
	# counts nvcsw).
	# Per task, as the kernel counts them (nvcsw/nivcsw): a switch away
	# while not runnable and not preempted is voluntary, any other switch
	# away is not.
	counts=$(awk -v p="$parent" -v c="$child" '
		$3 != "sched_switch" { next }
		{ split($5, a, "/"); split($11, b, "/"); vol = $9 == 0 && $7 != "0" }
		a[1] == p { if (vol) pv++; else pi++ }
		a[1] == c { if (vol) cv++; else ci++ }
		a[1] == p && b[1] == c { pc++ }
		a[1] == c && b[1] == p { cp++ }
		END { printf "%d %d %d %d %d %d\n", pv, pi, cv, ci, pc, cp }' "$r")
	read -r tpv tpi tcv tci tpc tcp <<EOC
$counts
EOC
	ppv=$(awk -v p="$parent" '$1 == "proc" && $2 == p { print $4 }' "$pp")
	ppi=$(awk -v p="$parent" '$1 == "proc" && $2 == p { print $6 }' "$pp")
	pcv=$(awk -v p="$child" '$1 == "proc" && $2 == p { print $4 }' "$pp")
	pci=$(awk -v p="$child" '$1 == "proc" && $2 == p { print $6 }' "$pp")
	log "parent $parent: voluntary switches trace $tpv /proc $ppv, nonvoluntary trace $tpi /proc $ppi"
	log "child $child: voluntary switches trace $tcv /proc $pcv, nonvoluntary trace $tci /proc $pci"
	log "direct switches parent->child $tpc, child->parent $tcp; rounds $ROUNDS"
	within2() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 0.02 * b) }'; }
	within2 "$tpv" "$ppv" || fail "parent: voluntary, trace $tpv vs /proc $ppv: more than 2% apart"
	within2 "$tcv" "$pcv" || fail "child: voluntary, trace $tcv vs /proc $pcv: more than 2% apart"
	within2 $((tpv + tpi)) $((ppv + ppi)) || fail "parent: all switches, trace vs /proc more than 2% apart"
	within2 $((tcv + tci)) $((pcv + pci)) || fail "child: all switches, trace vs /proc more than 2% apart"
	# Every round trip hands the CPU from one task to the other and back:
	# both are pinned to one CPU, so the reply cannot come before the
	# asker switched to the replier; hence about ROUNDS direct switches
	# each way (at least 98%: a kworker may run in between). More when the
	# woken side preempts the writer before it blocks (measured 2008-2042
	# for 2000 rounds); never more than the task's switches away, and
	# within 10% of ROUNDS.
	[ "$tpc" -ge $((ROUNDS * 98 / 100)) ] && [ "$tpc" -le $((tpv + tpi)) ] &&
		[ "$tpc" -le $((ROUNDS * 110 / 100)) ] ||
		fail "$tpc parent->child switches for $ROUNDS round trips"
	[ "$tcp" -ge $((ROUNDS * 98 / 100)) ] && [ "$tcp" -le $((tcv + tci)) ] &&
		[ "$tcp" -le $((ROUNDS * 110 / 100)) ] ||
		fail "$tcp child->parent switches for $ROUNDS round trips"
	log "ok: sched_switch records agree with $ROUNDS round trips and /proc"

	check_static_agent
	check_restated_task
}

# The third agent's run: each loss is followed by its CPU's task.
check_restated_task() {
	wait "$recv_loss" || fail "loss agent's receiver: $(cat /run/recv-loss.out)"
	cat /run/recv-loss.out
	cp /run/recv-loss.out /run/recv-loss/chunks.txt "$VMTEST_OUT/"
	grep -q "end: clean" /run/recv-loss.out || fail "loss agent's stream did not end cleanly"
	rs=/run/recv-loss/records.txt
	bad=$(grep -c -E "UNDECODABLE|BAD-" "$rs")
	[ "$bad" = 0 ] || fail "loss agent: $bad undecodable records/chunks"
	python3 - /run/recv-loss/chunks.txt "$rs" >/run/restate.txt 2>&1 <<'PY'
import sys
# chunks.txt: conn cpu seq records lost_before gap, in the order the
# receiver wrote each chunk's records to records.txt (cpu ts name text)
chunks = [l.split() for l in open(sys.argv[1])]
recs = [l.split() for l in open(sys.argv[2])]
i, last, losses, bad = 0, {}, 0, []
pending = {}        # cpu -> pid a cpu_task restated, until its next switch
checked = 0
for conn, cpu, seq, n, lost, gap in chunks:
    n, lost = int(n), int(lost)
    rs, i = recs[i:i + n], i + n
    if lost > last.get(cpu, 0):
        losses += 1
        pending.pop(cpu, None)
        names = [r[2] for r in rs]
        k = names.index("cpu_task") if "cpu_task" in names else None
        sw = names.index("sched_switch") if "sched_switch" in names else len(names)
        if k is None or k > sw:
            bad.append(f"cpu {cpu} seq {seq}: after {lost - last.get(cpu, 0)} lost, "
                       f"no cpu_task before a switch: {' '.join(names[:4])}")
            rs = []
        else:
            pending[cpu] = rs[k][4].split("/")[0]
            print(f"cpu {cpu} seq {seq}: {lost - last.get(cpu, 0)} lost, then "
                  f"record {k + 1} {' '.join(rs[k][2:])}")
            rs = rs[k + 1:]
    last[cpu] = lost
    for r in rs:
        if r[2] == "sched_switch" and cpu in pending:
            prev = r[4].split("/")[0]
            if prev != pending[cpu]:
                bad.append(f"cpu {cpu}: restated {pending[cpu]}, next switch away from {prev}")
            checked += 1
            del pending[cpu]
if i != len(recs):
    bad.append(f"chunks name {i} records, records.txt has {len(recs)}")
print(f"losses {losses}, restatements checked against the next switch {checked}")
if not losses:
    bad.append("no loss although the agent was stopped")
print("\n".join(bad) if bad else "ok")
sys.exit(1 if bad else 0)
PY
	st=$?
	cat /run/restate.txt
	[ "$st" -eq 0 ] || fail "restated task after a loss: $(tail -n 3 /run/restate.txt)"
	log "ok: every loss followed by its CPU's task: $(grep '^losses' /run/restate.txt)"
}

# The static agent's run (guest_main's second part), from its receiver.
check_static_agent() {
	wait "$recv_static" || fail "static agent's receiver: $(cat /run/recv-static.out)"
	cat /run/recv-static.out
	cp /run/recv-static.out "$VMTEST_OUT/"
	grep -q "end: clean" /run/recv-static.out || fail "static agent's stream did not end cleanly"
	ls=$(guest_file g1 chroot-ls.txt)
	cat "$ls"
	# ls -lR / in the chroot: every entry of it, nothing but these
	entries=$(awk '/^[-cdlpsb]/ { print $NF }' "$ls" | sort | tr '\n' ' ')
	[ "$entries" = "bin busybox dev vmscope-agent vmscope-guest " ] ||
		fail "the chroot held more or less than busybox, agent, device: $entries"
	grep -q "^c.* vmscope-guest$" "$ls" || fail "no device node in the chroot"
	grep -q " vmscope-agent$" /run/recv-static/tasks.txt ||
		fail "state dump lacks the static agent"
	rs=/run/recv-static/records.txt
	bad=$(grep -c -E "UNDECODABLE|BAD-" "$rs")
	[ "$bad" = 0 ] || fail "static agent: $bad undecodable records/chunks"
	for ev in sys_enter sys_exit; do
		n=$(awk -v e=$ev '$3 == e' "$rs" | wc -l)
		[ "$n" -gt 0 ] || fail "no $ev record with --syscalls"
		log "ok: static agent with --syscalls: $n $ev records"
	done
	grep -Eq "^[0-9]+ [0-9]+ sched_process_exec .*filename /bin/busybox$" "$rs" ||
		fail "the exec of the chroot's busybox was not recorded"
	log "ok: static agent in a busybox-only chroot streamed $(wc -l <"$rs") records"
}
