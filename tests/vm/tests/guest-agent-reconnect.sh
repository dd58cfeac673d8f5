# vmtest-timeout: 600
# `vmscope agent` survives its receiver being killed (SIGKILL) mid-stream
# and restarted: it notices, retries, reconnects with a fresh FileHeader +
# hello whose cursors say what it sent before, resends the sub-buffer it
# held, and the new receiver counts the gap. Accounting is exact: records
# the receivers kept + records counted lost == records the agent sent, and
# per CPU the sub-buffer seqs missing from what was kept == the chunks
# counted lost.

. "$VMTEST_REPO/tests/vm/lib/agent.sh"

PORT=5644
RECV=$VMTEST_BUILD/tests/vm/tools/guest-recv
PINGPONG=$VMTEST_BUILD/tests/vm/tools/pingpong

guest_main() {
	guest_prepare_vsock
	check "insmod vmscope_guest" insmod "$GUEST_KO"
	guest_agent_start "$PORT" --flush-ms 20 --retry-ms 100
	# a steady stream of scheduler events until the host says stop
	"$PINGPONG" 1000000000 0 >/dev/null &
	load=$!
	touch /vmtest/streaming
	wait_file /vmtest/stop
	kill "$load"
	kill -TERM "$agent"
	wait "$agent" || fail "agent exited with $?: $(cat /vmtest/agent.err)"
	cat /vmtest/agent.err
	check "rmmod vmscope_guest" rmmod vmscope_guest
}

# chunks CONN: chunks the receivers kept from connection CONN so far
chunks() {
	awk -v c="$1" '$1 == c' /run/recv/chunks.txt 2>/dev/null | wc -l
}

# until_chunks CONN N: wait until the receivers kept N chunks of
# connection CONN; 1 after 120 s. Fails at once when the guest's QEMU has
# ended (a silent death under nested TCG): a loop of 600 polls, each a few
# execs, once waited 540 s for a dead guest before run.sh could retry.
until_chunks() {
	read -r _t0 _ </proc/uptime
	while [ "$(chunks "$1")" -lt "$2" ]; do
		kill -0 "$qpid" 2>/dev/null || fail "guest g1 ended (QEMU $qpid gone) while waiting for connection $1's chunks"
		read -r _t _ </proc/uptime
		[ "${_t%.*}" -lt $((${_t0%.*} + 120)) ] || return 1
		sleep 0.2
	done
}

host_main() {
	host_prepare_kvm
	mkdir -p /run/recv
	"$RECV" "$PORT" /run/recv 1 >/run/recv1.out 2>&1 &
	r1=$!
	guest_start g1 guest_main 1 3
	gdir=$VMTEST_GUESTS/g1
	qpid=$(cat "$gdir/qemu.pid")
	wait_file "$gdir/streaming"
	until_chunks 0 40
	kill -9 "$r1"
	wait "$r1"
	log "receiver killed after $(chunks 0) chunks kept"
	sleep 2	# the agent finds out at its next send, then retries refused connects
	"$RECV" "$PORT" /run/recv 1 >/run/recv2.out 2>&1 &
	r2=$!
	until_chunks 1 40 || fail "the agent did not come back: $(cat /run/recv2.out)"
	touch "$gdir/stop"
	guest_wait g1 || fail "guest failed"
	wait "$r2" || fail "second receiver: $(cat /run/recv2.out)"
	cat /run/recv1.out /run/recv2.out
	cp /run/recv/chunks.txt /run/recv/gaps.txt /run/recv/hello.txt /run/recv/losses.txt "$VMTEST_OUT/"
	grep -q "end: clean" /run/recv2.out || fail "second connection did not end cleanly"

	ae=$(guest_file g1 agent.err)
	grep -q "connection lost" "$ae" || fail "agent did not report the lost connection"
	grep -q "(connection 1)" "$ae" || fail "agent did not reconnect"
	sent=$(sed -n 's/.*sent [0-9]* chunks, \([0-9]*\) records.* over 2 connections.*/\1/p' "$ae")
	[ -n "$sent" ] || fail "agent's totals: $(grep sent "$ae")"
	grep -q "agent_connection 1 " /run/recv/hello.txt || fail "second hello is not connection 1"

	# gaps.txt: conn cpu lost_chunks lost_records (one line per CPU)
	[ "$(awk '$1 == 1' /run/recv/gaps.txt | wc -l)" -ge 1 ] || fail "no gap reported at the reconnect"
	kept=$(awk '{ s += $4 } END { print s + 0 }' /run/recv/chunks.txt)
	lost=$(awk '{ s += $4 } END { print s + 0 }' /run/recv/gaps.txt)
	lostc=$(awk '{ s += $3 } END { print s + 0 }' /run/recv/gaps.txt)
	log "agent sent $sent records; receivers kept $kept; counted lost $lost records in $lostc chunks"
	[ $((kept + lost)) -eq "$sent" ] || fail "kept $kept + lost $lost != sent $sent"
	# the seqs missing between what was kept == the chunks counted lost
	missing=$(awk '{ if (!($2 in lo) || $3 < lo[$2]) lo[$2] = $3
			 if ($3 > hi[$2]) hi[$2] = $3; n[$2]++ }
		END { for (c in n) m += hi[c] - lo[c] + 1 - n[c]; print m + 0 }' /run/recv/chunks.txt)
	[ "$missing" -eq "$lostc" ] || fail "$missing sub-buffer seqs missing, $lostc counted lost"
	# While the agent had no receiver its ring buffer may fill and drop:
	# counted, in the chunks' cumulative lost_before plus a final
	# LossRecord for drops after the last sub-buffer began; together they
	# equal what the agent's module counted.
	ring=$(awk '$5 > m[$2] { m[$2] = $5 } END { for (c in m) s += m[c]; print s + 0 }' /run/recv/chunks.txt)
	tail=$(awk '$4 == 1 { s += $6 } END { print s + 0 }' /run/recv/losses.txt)
	alost=$(sed -n 's/.*the ring buffer dropped \([0-9]*\) events.*/\1/p' "$ae" | awk '{ s += $1 } END { print s + 0 }')
	log "ring buffer drops: $ring in lost_before + $tail in loss records; the agent counted $alost"
	[ $((ring + tail)) -eq "$alost" ] || fail "ring drops reported $((ring + tail)) != counted $alost"
	log "ok: the gap is counted: $lost records in $lostc sub-buffers, exactly what the receivers did not keep"
}
