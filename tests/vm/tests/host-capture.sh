# vmtest-timeout: 900
# Capture through the ring buffers: while a guest runs port I/O and CPUID
# loops, `vmscope-capture --pid QEMU` reads the host module's per-CPU
# buffers (mmap + poll + get/put). The window opens and closes with QEMU
# stopped, so the kvm_exit records of that VM must equal KVM's own exits
# counter over the same window (within 1%) when no loss is reported, and
# every record must decode with the module's descriptors.
# 125 more sessions record beside it and session 2 (the module's 127,
# VMSCOPE_HOST_SESSIONS), each with its own filter and buffers, and do not
# change the first one's count; a 128th is refused.
# Session 2 records the same VM with two channels of different modes: a
# flight-recorder channel of 2 x 4 KiB per CPU that a slow reader (every
# 500 ms) lets overwrite, and a discard channel for kvm_pio alone, which
# must lose nothing: all 10000 kvm_pio read while the other channel
# overwrites, each channel's records + its losses = what the module
# handed it, and no record in the wrong channel. Sessions 3..127 record a
# process that makes no KVM event, and record none.

PIO_N=${PIO_N:-10000}
SESSIONS=127	# VMSCOPE_HOST_SESSIONS
CPUID_N=${CPUID_N:-10000}

guest_main() {
	guest_exitloop_ready
	"$EXITLOOP" --pio "$PIO_N" >>/vmtest/loop.txt || fail "exitloop --pio"
	"$EXITLOOP" --cpuid "$CPUID_N" >>/vmtest/loop.txt || fail "exitloop --cpuid"
	touch /vmtest/done
	wait_file /vmtest/bye
	cat /vmtest/loop.txt
}


# mixed_check OUT PIO: session 2's report (OUT): kvm_pio alone in channel
# 1 (discard), all PIO of them and none lost; channel 0 (flight)
# overwrote; per channel, records + lost = handed; nothing undecodable
# (capture counts a record in the wrong channel as undecodable).
mixed_check() {
	cat "$1"
	awk -v pio="$2" '
		$1 == "handed" { h[$2] = $3 }
		$1 == "event" { n[$2] = $3 }
		$1 == "channel" { rec[$2] = $5; lost[$2] = $7; mode[$2] = $3; over[$2] = $13 }
		$1 == "records" { undec = $4 }
		END {
			for (e in h) if (e == "kvm_pio") h1 += h[e]; else h0 += h[e]
			printf "channel 0 (%s): handed %d, read %d, lost %d (overwritten %d); ", mode[0], h0, rec[0], lost[0], over[0]
			printf "channel 1 (%s): handed %d, read %d, lost %d; kvm_pio read %d\n", mode[1], h1, rec[1], lost[1], n["kvm_pio"]
			bad = 0
			if (mode[0] != "flight" || mode[1] != "discard") { print "FAIL: channel modes"; bad = 1 }
			if (undec != 0) { print "FAIL: " undec " undecodable or misplaced records"; bad = 1 }
			if (n["kvm_pio"] != pio || h["kvm_pio"] != pio || rec[1] != pio || lost[1] != 0) {
				print "FAIL: the discard channel did not keep every kvm_pio"; bad = 1 }
			if (over[0] == 0) { print "FAIL: channel 0 never overwrote: nothing shown"; bad = 1 }
			if (rec[0] + lost[0] != h0) { print "FAIL: channel 0 read + lost != handed"; bad = 1 }
			exit bad
		}' "$1" >/vmtest/mixed.txt
	_rc=$?
	log "session 2 (mixed modes): $(cat /vmtest/mixed.txt)"
	[ "$_rc" -eq 0 ] || fail "session 2 (mixed modes): $(cat /vmtest/mixed.txt)"
}

host_main() {
	host_probed_guest g1 guest_main 1 3

	# the idle process of sessions 3..$SESSIONS, started long before them: its
	# own start-up (exec, first sleep) makes sched events they would see
	sleep 3600 &
	idle=$!
	# sessions 3..$SESSIONS, for a process that makes no KVM event (nor any
	# other while it sleeps), started while the guest runs (it waits for
	# go): QEMU stopped for the ~30 s they take would have the guest's
	# kernel report an RCU stall when it resumes, on its serial console
	# (port I/O: kvm_pio records the count below does not expect)
	# (one process for all of them: a process each cost the test host's
	# 2 vCPUs ~0.3 s per exec, 20 s more at 127 sessions than at 63)
	"$CAPTURE" --sessions $((SESSIONS - 2)) --pid "$idle" --subbuf-shift 12 --subbufs-shift 1 \
		>/vmtest/others.txt 2>/vmtest/others.err &
	others=$!
	# shellcheck disable=SC2016 # $1 is sh -c's
	wait_until 300 "sessions 3..$SESSIONS recording" sh -c \
		'[ "$(grep -c "^capture: recording" /vmtest/others.err)" = "$1" ]' sh $((SESSIONS - 2))
	e0=$(vm_stop_exits "$qpid")
	rm -f /tmp/raw.bin	# capture -o refuses an existing file
	capture_start --pid "$qpid" --subbufs-shift 7 -o /tmp/raw.bin
	cap=$CAP_PID
	log "$(cat /vmtest/capture.err)"
	# session 2: the same VM, channels of mixed modes, a slow reader
	bg_start "$CAPTURE" /vmtest/capture2.txt /vmtest/capture2.err 'capture: recording' \
		--pid "$qpid" --flight --subbuf-shift 12 --subbufs-shift 1 \
		--keep kvm_pio --read-every 500
	mixed=$BG_PID
	log "$(cat /vmtest/capture2.err)"
	# one more is refused, with the reason
	"$CAPTURE" --duration 1 >/dev/null 2>/vmtest/over.err &&
		fail "capture session $((SESSIONS + 1)) started"
	grep -q "the module records at most $SESSIONS sessions at once" /vmtest/over.err ||
		fail "session $((SESSIONS + 1)): $(cat /vmtest/over.err)"
	log "$SESSIONS sessions recording; one more: $(cat /vmtest/over.err)"
	kill -CONT "$qpid"
	touch "$gdir/go"
	wait_file "$gdir/done"

	e1=$(vm_stop_exits "$qpid")
	stats_json /vmtest/stats.json
	[ "$(jq -r .ringbuf.sessions /vmtest/stats.json)" = "$SESSIONS" ] ||
		fail "stats does not show $SESSIONS recording sessions: $(jq -c .ringbuf /vmtest/stats.json)"
	kill -INT "$cap" "$mixed"
	wait "$cap" || fail "capture failed: $(cat /vmtest/capture.err /vmtest/capture.txt)"
	wait "$mixed" || fail "capture 2 failed: $(cat /vmtest/capture2.err /vmtest/capture2.txt)"
	# the window is closed: the guest runs again while the others stop
	kill -CONT "$qpid"
	kill -INT "$others"
	wait "$others" || fail "sessions 3..$SESSIONS failed: $(tail -n 5 /vmtest/others.err)"
	# each session's report: a summary, and no event of the idle process
	awk -v want=$((SESSIONS - 2)) '
		$1 == "session" { s = $2; n++ }
		$1 == "records" { sum[s]++ }
		$1 == "event" || $1 == "handed" { rec[s] = rec[s] " " $2 }
		END {
			for (k = 1; k <= want; k++) {
				if (sum[k] != 1) { print "session " k + 2 ": no summary"; bad = 1 }
				if (rec[k] != "") { print "session " k + 2 " (an idle process) recorded:" rec[k]; bad = 1 }
			}
			if (n != want) { print n " session reports, not " want; bad = 1 }
			exit bad
		}' /vmtest/others.txt >/vmtest/others-check.txt ||
		fail "sessions 3..$SESSIONS: $(head -n 5 /vmtest/others-check.txt)"
	kill "$idle"
	log "sessions 3..$SESSIONS recorded no event of the VM"
	touch "$gdir/bye"
	guest_wait g1 300 || fail "guest failed"
	cat /vmtest/capture.txt

	de=$((e1 - e0))
	rec=$(awk '$1 == "event" && $2 == "kvm_exit" { print $3 }' /vmtest/capture.txt)
	read -r lost gaps <<EOR
$(awk '$1 == "lost" { print $2, $10 }' /vmtest/capture.txt)
EOR
	undec=$(awk '$1 == "records" { print $4 }' /vmtest/capture.txt)
	log "window: KVM exits $de, kvm_exit records ${rec:-0}, lost ${lost:-?}, seq gaps ${gaps:-?}, undecodable ${undec:-?}"
	[ "${undec:-1}" -eq 0 ] || fail "$undec records did not decode"
	[ "${lost:-1}" -eq 0 ] && [ "${gaps:-1}" -eq 0 ] ||
		fail "losses reported (lost $lost, gaps $gaps): the 1% check needs none"
	[ "$de" -ge $((PIO_N + CPUID_N)) ] || fail "KVM counted only $de exits"
	rec=${rec:-0}
	diff=$((de > rec ? de - rec : rec - de))
	[ $((diff * 100)) -le "$de" ] || fail "kvm_exit records $rec vs KVM exits $de: more than 1% apart"
	# and exactly what the module handed this session, beside the others
	handed=$(awk '$1 == "handed" && $2 == "kvm_exit" { print $3 }' /vmtest/capture.txt)
	log "kvm_exit handed to the session by the module: ${handed:-?}, read: $rec"
	[ "${handed:-x}" = "$rec" ] || fail "kvm_exit: the module handed ${handed:-?} to the session, capture read $rec"
	for ev in kvm_entry kvm_pio; do
		grep -q "^event $ev " /vmtest/capture.txt || fail "no $ev records"
	done
	[ -s /tmp/raw.bin ] || fail "capture -o wrote nothing"
	mixed_check /vmtest/capture2.txt "$PIO_N"
	check "rmmod vmscope_host" rmmod vmscope_host
}
