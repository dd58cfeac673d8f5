#!/bin/bash
# vmscoped's sessions without a kernel: a fake `vmscope` (record: creates
# its trace folder and waits for SIGTERM, then prints a summary; merge:
# creates the merged folder) and fake QEMU processes (sleep) with
# libvirt-style pid files. Drives the daemon through the real hook and
# client commands and checks folders, states, log lines and timings.
# Usage: daemon-test.sh PATH-TO-vmscoped PATH-TO-vmscope
set -u
daemon=$1 vmscope=$2
. "$(dirname "$0")/daemon-lib.sh"
daemon_test_setup vmscoped-test

# cid NAME: the vsock CID of domain NAME (c: 9, dN: 10 + N, else 7)
cid() { case $1 in c) echo 9 ;; d[1-9]*) echo $((10 + ${1#d})) ;; *) echo 7 ;; esac; }
xml() { # NAME [OPTIN-ATTRS]: a domain XML; opted in when ATTRS is given (may be "")
	echo "<domain type='kvm'><name>$1</name><uuid>6a1f0c1e-6c38-4b0e-9a4a-2f3d9c7e5b10</uuid>"
	[ $# -ge 2 ] && echo "<metadata><vmscope:trace xmlns:vmscope='http://vmscope.org/xmlns/trace/1' $2/></metadata>"
	echo "<devices><vsock model='virtio'><cid auto='no' address='$(cid "$1")'/></vsock></devices></domain>"
}
# hook NAME OP [ATTRS]: run the hook as libvirt does; its stderr to $T/hook.err
hook() { local n=$1 op=$2; shift 2; xml "$n" "$@" | "$vmscope" hook "$n" "$op" begin - 2>>"$T/hook.err"; }
traces() { ls -d "$T/state/traces/$1"/*/ 2>/dev/null | wc -l; }
finalized() { ls "$T/state/traces/$1"/*/summary.txt 2>/dev/null | wc -l; }
n_final() { [ "$(finalized "$1")" = "$2" ]; }

# ---- the daemon down: the hook warns and exits 0, quickly ----
qemu a
t0=$(date +%s%N)
hook a started 'mode="flight"'; rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
check "hook with no daemon exits 0 ($rc)" [ "$rc" -eq 0 ]
check "hook with no daemon warns" grep -q "vmscoped not told, domain not traced" "$T/hook.err"
echo "info: hook with no daemon took $ms ms (timed in the VM test, not here)"
"$vmscope" daemon status >/dev/null 2>&1
check "daemon status without a daemon exits 1" [ $? -eq 1 ]

# ---- start; socket permissions; a second daemon is refused ----
start_daemon || bad "daemon did not answer"
check "daemon status answers" sh -c '"$0" daemon status | grep -q "0 active sessions"' "$vmscope"
check "socket mode 0600" [ "$(stat -c %a "$VMSCOPE_SOCKET")" = 600 ]
check "socket folder mode 0700" [ "$(stat -c %a "$T/run")" = 700 ]
"$daemon" --socket "$VMSCOPE_SOCKET" --state-dir "$T/state" --vmscope "$T/fake-vmscope" \
	2>"$T/second.err"
check "a second daemon on the socket exits 1" [ $? -eq 1 ]
check "and says why" grep -q "another vmscoped listens" "$T/second.err"

# ---- an opted-in domain and one that is not ----
t0=$(date +%s%N)
hook a started 'mode="flight" events="kvm" buffer-size="1M"'
ms=$((($(date +%s%N) - t0) / 1000000))
echo "info: hook started with the daemon took $ms ms"
qemu b
hook b started
check "recording a" wait_for 15 is_state a recording
check "a's recorder is up" wait_for 30 sh -c 'ls "$0"/state/traces/a/*/trace/metadata.vtf' "$T"
check "record got pid, cid and options" grep -q "record --pid $(cat "$T/qemu.a") --cid 7 --events kvm --mode flight --buffer-size 1048576 --guest-handoff 3 -o $T/state/traces/a/" "$T/calls"
check "record's fd 3 is a socket (the hand-over)" grep -q "^fd 3: socket:" "$T/calls"
check "b (not opted in) has no session" [ -z "$(state_of b)" ]
check "b left no folder" [ ! -e "$T/state/traces/b" ]
check "a has a registry entry" grep -qx a "$T"/state/active/*

# ---- libvirtd restarted: reconnect keeps a recording session ----
hook a reconnect ''
check "reconnect while recording: still recording" grep -q "a reconnect: vmscoped: a: still recording into" "$T/hook.err"
check "reconnect while recording: no new folder" [ "$(traces a)" = 1 ]

# ---- a second opted-in domain while a records: recorded beside it ----
qemu c
hook c started 'trigger-stall-us="20000"'
check "c recorded beside a" wait_for 15 is_state c recording
check "a still recording" is_state a recording
# the fake writes its calls line before the trace: wait for the trace
check "c's recorder is up" wait_for 30 sh -c 'ls "$0"/state/traces/c/*/trace/metadata.vtf' "$T"
check "c's recorder got its own cid" grep -q "record --pid $(cat "$T/qemu.c") --cid 9 --guest-handoff 3 -o $T/state/traces/c/" "$T/calls"
check "c's threshold not applied without --metrics, said" grep -q "c: the trigger options of its metadata not applied: vmscoped runs without --metrics" "$T/daemon.log"
# up to the host module's sessions (VMSCOPE_HOST_SESSIONS): with a and c
# recording, 64 domains start at once (a host autostarting its domains:
# issue 22's 64), then the rest and one more at once: every hook
# answered in its budget, all but one recorded, that one refused
S=127	# VMSCOPE_HOST_SESSIONS
N=$((S - 1))
for i in $(seq 1 $N); do qemu d$i; done
timed_hook() { # as hook; its time (ms) appended to $T/hook.ms
	local t0
	t0=$(date +%s%N)
	hook "$@"
	echo $((($(date +%s%N) - t0) / 1000000)) >>"$T/hook.ms"
}
hook_wave() { # OP FIRST LAST: OP hooks of dFIRST..dLAST at once (not $dn)
	local i hooks=()
	rm -f "$T/hook.ms"
	for i in $(seq "$2" "$3"); do [ "d$i" = "${dn-}" ] || { timed_hook d$i "$1" '' & hooks+=($!); }; done
	wait "${hooks[@]}"
	echo "info: ${#hooks[@]} $1 hooks at once, the slowest took $(sort -n "$T/hook.ms" | tail -1) ms"
}
hook_wave started 1 64
hook_wave started 65 $N
recording_d() { "$vmscope" session list | awk '$2 == "recording" && $1 ~ /^d[0-9]+$/ { n++ } END { print n + 0 }'; }
all_but_one() { [ "$(recording_d)" = $((N - 1)) ]; }
check "$((N - 1)) of d1..d$N recording" wait_for 60 all_but_one
grep -E "^vmscope-hook\[[0-9]+\]: d[0-9]+ started: vmscoped not told" "$T/hook.err" && bad "a hook of the $N did not reach the daemon"
refused=$(grep -c "not traced: $S other domains are being recorded and the host module records at most $S sessions at once" "$T/hook.err")
check "one refused with the module's limit ($refused)" [ "$refused" = 1 ]
dn=$(sed -n "s/.*\(d[0-9]*\) not traced: $S other domains.*/\1/p" "$T/hook.err")
no_folder() { [ -n "$1" ] && [ ! -e "$T/state/traces/$1" ]; }
check "the refused one ($dn) left no folder" no_folder "$dn"
hook_wave stopped 1 64
hook_wave stopped 65 $N
grep -E "^vmscope-hook\[[0-9]+\]: d[0-9]+ stopped: vmscoped not told" "$T/hook.err" && bad "a stop hook did not reach the daemon"
hook c stopped ''
check "c finalized" wait_for 30 n_final c 1
for i in $(seq 1 $N); do [ "d$i" = "$dn" ] || wait_for 30 n_final d$i 1 || bad "d$i not finalized"; done

# ---- a daemon that does not answer within the hook's budget ----
# (stopped: its queue takes the connection, nobody reads it); the hook
# says the domain is not traced, and the daemon, reading the request
# once its client has gone, keeps that true
qemu d200
kill -STOP "$dpid"
hook d200 started ''
kill -CONT "$dpid"
check "a hook not answered in time warns" grep -q "d200 started: vmscoped not told, domain not traced: no answer from vmscoped within 5000 ms" "$T/hook.err"
check "the request read late starts nothing" wait_for 15 grep -q "d200: its client stopped waiting before the request was read: not started" "$T/daemon.log"
check "d200 has no session" [ -z "$(state_of d200)" ]
check "d200 left no folder" [ ! -e "$T/state/traces/d200" ]

# ---- stop: finalized, merged, logged ----
hook a stopped ''
hook a release ''
check "a finalized" wait_for 30 is_state a done
check "a: one trace" [ "$(traces a)" = 1 ]
check "a: with summary" [ "$(finalized a)" = 1 ]
check "a merged" [ -f "$T"/state/traces/a/*/merged/merged.vtf ]
check "summary line in the log" grep -q "a: trace finalized in $T/state/traces/a/.*: vmscope record: 42 events.*; merged" "$T/daemon.log"
check "registry entry gone" [ -z "$(ls "$T/state/active")" ]

# ---- a restart is a new trace ----
hook a started ''
wait_for 15 is_state a recording
hook a started ''   # started again without a stop: the old one ends
check "restart: the first of the pair finalized" wait_for 30 n_final a 2
check "restart: a new one records" wait_for 30 is_state a recording
check "restart: three folders" [ "$(traces a)" = 3 ]

# ---- reconnect to a running domain not recorded: a new session ----
hook a stopped ''
wait_for 30 n_final a 3
hook a reconnect ''
check "reconnect when not recording: records" wait_for 15 is_state a recording
check "reconnect when not recording: a fourth folder" [ "$(traces a)" = 4 ]

# ---- the daemon dies (kill -9): the next one finalizes what it left ----
rec=$(pgrep -f "$T/fake-vmscope record" | head -1)
kill -9 "$dpid"; wait "$dpid" 2>/dev/null; dpid=
check "the recorder outlived the daemon" kill -0 "$rec"
start_daemon
gone() { ! kill -0 "$1" 2>/dev/null; }
check "recovery: recorder stopped" wait_for 30 gone "$rec"
check "recovery: all four finalized" wait_for 30 n_final a 4
check "recovery: said in the log" grep -q "a previous daemon's recorder (pid $rec) still runs" "$T/daemon.log"

# ---- QEMU exits without a hook: the session ends by itself ----
hook a started ''
wait_for 15 is_state a recording
kill -9 "$(cat "$T/qemu.a")"
check "QEMU gone: finalized" wait_for 30 n_final a 5
check "QEMU gone: said why" grep -q "a: stopping (its QEMU process exited)" "$T/daemon.log"

# ---- session start/stop from the command line; merge failure kept ----
qemu d
check "session start d" "$vmscope" session start d --pid "$(cat "$T/qemu.d")" --duration 300
check "session start refuses a bad mode" sh -c '! "$0" session start d --mode ring 2>/dev/null' "$vmscope"
check "session stop of nothing fails" sh -c '! "$0" session stop nosuch 2>/dev/null' "$vmscope"
# (a recorder stopped before it has created its trace leaves nothing: wait)
check "d records" wait_for 15 sh -c 'ls "$0"/state/traces/d/*/trace/metadata.vtf' "$T"
check "session stop d" "$vmscope" session stop d
check "d finalized" wait_for 30 n_final d 1
check "d's record had --duration" grep -q "record --pid $(cat "$T/qemu.d") --duration 300.000 -o" "$T/calls"
# a QEMU with a vsock device that nobody named the CID of: its command
# line's, so that its recorder takes the agents from the daemon (a
# recorder listening on the daemon's port itself fails to start)
perl -e 'sleep 1000' -- -device vhost-vsock-pci,id=v,guest-cid=12 &
vq=$!
echo "$vq" >"$T/qemu.v"	# the cleanup's
check "session start v (no --cid)" "$vmscope" session start v --pid "$vq"
check "v records" wait_for 15 is_state v recording
# (the fake writes its calls line once it runs: wait for it)
check "v's recorder got its QEMU's CID and the agents' handoff" wait_for 30 grep -q "record --pid $vq --cid 12 --guest-handoff 3 -o" "$T/calls"
check "session stop v" "$vmscope" session stop v
check "v finalized" wait_for 30 n_final v 1

# ---- daemon SIGTERM: active sessions finalized before it exits ----
qemu e
hook e started 'output="'"$T/elsewhere"'"'
wait_for 15 is_state e recording
# (as for d: stopped before its recorder has written anything, a session
# ends "not recorded"; this part is about finalizing a recording)
check "e records" wait_for 30 sh -c 'ls "$0"/elsewhere/e/*/trace/metadata.vtf' "$T"
kill -TERM "$dpid"; wait "$dpid"; rc=$?; dpid=
check "daemon exits 0 on SIGTERM ($rc)" [ "$rc" -eq 0 ]
check "e finalized into its output folder" grep -q "trace finalized" "$T"/elsewhere/e/*/summary.txt
check "socket removed" [ ! -e "$VMSCOPE_SOCKET" ]
check "no registry entries left" [ -z "$(ls "$T/state/active")" ]

# ---- bad XML and refused options: warnings, exit 0 ----
echo "<domain><name>x" | "$vmscope" hook x started - - 2>"$T/bad.err"; rc=$?
check "malformed XML: exit 0 ($rc)" [ "$rc" -eq 0 ]
check "malformed XML: warned" grep -q "unreadable" "$T/bad.err"
xml x 'mode="ring"' | "$vmscope" hook x started - - 2>"$T/bad.err"; rc=$?
check "refused option: exit 0 ($rc)" [ "$rc" -eq 0 ]
check "refused option: warned" grep -q "refused: mode='ring'" "$T/bad.err"
xml x 'trigger-exit-us="0"' | "$vmscope" hook x started - - 2>"$T/bad.err"; rc=$?
check "refused threshold: exit 0 ($rc)" [ "$rc" -eq 0 ]
check "refused threshold: warned with domain and value" grep -q "x: not traced, its vmscope:trace is refused: trigger-exit-us='0'" "$T/bad.err"
xml x '' | "$vmscope" hook x prepare begin - 2>"$T/bad.err"; rc=$?
check "prepare: exit 0 ($rc)" [ "$rc" -eq 0 ]
check "prepare: silent" [ ! -s "$T/bad.err" ]

if [ "$fails" -ne 0 ]; then
	echo "--- calls"; cat "$T/calls"
	echo "--- daemon.log"; cat "$T/daemon.log"; echo "--- hook.err"; cat "$T/hook.err"
	echo "$fails failures"
	exit 1
fi
echo "all passed"
