#!/bin/bash
# vmscoped --metrics without a kernel: the fake `vmscope` of daemon-test.sh
# (its recorder sends the frame file frame.QEMU_PID on its --metrics-fd
# 4), fake QEMU processes, the real hook; /metrics read with curl.
# Checks: the recorder gets --metrics-fd 4, a socket; the domain's
# snapshot is served with its name and UUID (exits, buckets, times as
# test_metrics --frame made them); a frame that does not parse closes that
# feed (logged, counted) and the domain still records; a stopped domain's
# series are gone while another's stay; /metrics is on 127.0.0.1 only.
# Triggers (--trigger-stall-us 20000): the recorder gets the threshold;
# web's sends a stall trigger twice after its snapshot: the first logged
# (what, how long, vCPU, guest and host task) and counted for web, the
# second refused by the rate limit and counted; --trigger-stall-us without
# --metrics is a usage error.
# Snapshots: the recorder gets --snapshot-dir STATE/snapshots/web and the
# window's sizes; the admitted trigger (only it) is sent back to it on its
# fd 4, byte for byte the frame it sent (the fake recorder makes that a
# snapshot folder); the daemon logs the new folder's path and counts it
# (vmscope_snapshots_total 1); a snapshot left by an earlier session of
# the same domain is not counted; with --snapshot-quota-mb 1, another
# domain's older 2 MiB snapshot is removed (logged) and web's kept.
# Per-domain thresholds (its metadata's trigger-*-us, snapshot-*-ms): a
# domain's replace the daemon's in its recorder's command line (logged),
# "off" turns one off, a huge value is refused by the hook naming the
# domain and the value, and that domain is not traced.
# Usage: daemon-metrics-test.sh PATH-TO-vmscoped PATH-TO-vmscope PATH-TO-test_metrics
set -u
daemon=$1 vmscope=$2 tm=$3
. "$(dirname "$0")/daemon-lib.sh"
daemon_test_setup vmscoped-metrics-test
UUID=6a1f0c1e-6c38-4b0e-9a4a-2f3d9c7e5b10
hook() { # NAME OP [ATTRS]: the hook as libvirt runs it, NAME opted in with
	# ATTRS in its vmscope:trace (vsock CID: web 7, own 9, off 10, else 8)
	local cid=8
	case $1 in web) cid=7 ;; own) cid=9 ;; off) cid=10 ;; esac
	printf "<domain type='kvm'><name>%s</name><uuid>%s</uuid><metadata><vmscope:trace xmlns:vmscope='http://vmscope.org/xmlns/trace/1' %s/></metadata><devices><vsock model='virtio'><cid auto='no' address='%s'/></vsock></devices></domain>" "$1" "$UUID" "${3:-}" "$cid" |
		"$vmscope" hook "$1" "$2" begin - 2>>"$T/hook.err"
}
scrape() { curl -sf "http://127.0.0.1:$port/metrics" >"$T/scrape"; }
served() { scrape && grep -qF "$1" "$T/scrape"; }
not_served() { scrape && ! grep -qF "$1" "$T/scrape"; }

"$tm" --frame "$T/web.frame" >/dev/null || { echo "FAIL: test_metrics --frame"; exit 1; }
"$tm" --trigger "$T/web.trigger" >/dev/null || { echo "FAIL: test_metrics --trigger"; exit 1; }
# an earlier session's snapshot of web, and an older one of another domain
# that the quota removes
mkdir -p "$T/state/snapshots/web/20200101T000000Z" "$T/state/snapshots/old/20100101T000000Z"
head -c 2097152 /dev/zero >"$T/state/snapshots/old/20100101T000000Z/host-cpu0.vtf"
start_daemon --metrics 0 --trigger-stall-us 20000 --snapshot-before-ms 3000 \
	--snapshot-after-ms 1000 --snapshot-quota-mb 1 || bad "daemon did not answer"
port=$(sed -n 's/.*metrics: serving \/metrics on port \([0-9]*\)$/\1/p' "$T/daemon.log")
check "the daemon says its metrics port ($port)" [ -n "$port" ]
check "listening on 127.0.0.1 only" sh -c "ss -Hltn 'sport = :$port' | awk '{print \$4}' | grep -qx '127.0.0.1:$port'"
check "no domain: no series" served "vmscoped_metrics_domains 0"

# web: its recorder sends a good frame; bad: a frame that does not parse
qemu web
cp "$T/web.frame" "$T/frame.$(cat "$T/qemu.web")"
cp "$T/web.trigger" "$T/frame.$(cat "$T/qemu.web").1"
cp "$T/web.trigger" "$T/frame.$(cat "$T/qemu.web").2"
qemu bad
printf 'VMSM\001\000\000\000junk' >"$T/frame.$(cat "$T/qemu.bad")"
hook web started
hook bad started
check "web recording" wait_for 15 is_state web recording
check "bad recording" wait_for 15 is_state bad recording
check "record got --metrics-fd 4" grep -q "record --pid $(cat "$T/qemu.web") --cid 7 --guest-handoff 3 --metrics-fd 4 --trigger-stall-us 20000 --snapshot-dir $T/state/snapshots/web --snapshot-before-ms 3000 --snapshot-after-ms 1000 --snapshot-cap-mb 64 -o $T/state/traces/web/" "$T/calls"
check "record's fd 4 is a socket" grep -q "^fd 4: socket:" "$T/calls"
W="domain=\"web\",uuid=\"$UUID\""
check "web's exits served" wait_for 30 served "vmscope_exits_total{$W,reason=\"EPT_VIOLATION\"} 3"
check "web's escaped reason" served "vmscope_exits_total{$W,reason=\"a\\\"b\\\\c\"} 2"
check "web's buckets" served "vmscope_exit_latency_seconds_bucket{$W,reason=\"EPT_VIOLATION\",le=\"0.000000015\"} 2"
check "web's guest time" served "vmscope_vcpu_seconds_total{$W,state=\"guest\"} 2.5"
check "web's events lost" served "vmscope_events_lost_total{$W} 4"
check "web has no bound" not_served "vmscope_sync_bound_seconds{$W"
check "web's guest steal" served "vmscope_guest_steal_seconds_total{$W} 0.012"
check "web's stalls by class" served "vmscope_guest_stall_seconds_total{$W,state=\"running\",cause=\"blocked_in_host\"} 0.00000025"
check "web's stall of 0 served" served "vmscope_guest_stall_seconds_total{$W,state=\"runnable\",cause=\"blocked_in_host\"} 0"
check "web's trigger logged" wait_for 15 grep -q "web: trigger: stall running, preempted of 50.000 ms > 20.000 ms on vCPU 1 at host 5000000000 ns (guest task stress/812, host task hog/4242)" "$T/daemon.log"
check "logged once" [ "$(grep -c "web: trigger:" "$T/daemon.log")" -eq 1 ]
check "counted for web" served "vmscope_triggers_total{$W,kind=\"stall\"} 1"
check "no exit trigger" served "vmscope_triggers_total{$W,kind=\"exit\"} 0"
check "the second suppressed" served "vmscoped_triggers_suppressed_total 1"
check "the admitted trigger's snapshot logged" wait_for 15 grep -q "web: snapshot written: $T/state/snapshots/web/20300101T000000Z$" "$T/daemon.log"
check "sent back as it came" cmp "$T/web.trigger" "$T/state/snapshots/web/20300101T000000Z/metadata.vtf"
check "one snapshot only" [ "$(ls -A "$T/state/snapshots/web" | tr '\n' ' ')" = "20200101T000000Z 20300101T000000Z " ]
check "counted for web" served "vmscope_snapshots_total{$W} 1"
check "logged once" [ "$(grep -c "snapshot written" "$T/daemon.log")" -eq 1 ]
check "the quota removed the oldest" grep -q "old: snapshot 20100101T000000Z removed (2[0-9]* bytes): over the snapshots' quota" "$T/daemon.log"
check "and only it" sh -c '[ -d "$0/web/20200101T000000Z" ] && [ ! -e "$0/old/20100101T000000Z" ]' "$T/state/snapshots"
check "bad's frame refused, logged" wait_for 15 grep -q "bad: metrics feed ended: a bad metrics frame: " "$T/daemon.log"
check "and counted" served "vmscoped_metrics_bad_frames_total 1"
check "bad has no series" not_served 'domain="bad"'
check "bad still records" is_state bad recording
check "one domain served" served "vmscoped_metrics_domains 1"
check "the scrape passes promtool" sh -c "promtool check metrics <'$T/scrape' >'$T/promtool.out' 2>&1 && [ ! -s '$T/promtool.out' ]"

# thresholds in a domain's metadata: own's replace the daemon's (its stall
# threshold, an exit one the daemon has not, its window before; after and
# the cap stay the daemon's); off turns the daemon's stall threshold off:
# no trigger, no snapshot options; a hostile value is refused by the hook,
# naming the domain and the value: that domain is not traced
qemu own
hook own started 'trigger-stall-us="45000" trigger-exit-us="5000" snapshot-before-ms="1500"'
check "own recording" wait_for 15 is_state own recording
check "own's recorder got its metadata's thresholds and window" grep -q "record --pid $(cat "$T/qemu.own") --cid 9 --guest-handoff 3 --metrics-fd 4 --trigger-exit-us 5000 --trigger-stall-us 45000 --snapshot-dir $T/state/snapshots/own --snapshot-before-ms 1500 --snapshot-after-ms 1000 --snapshot-cap-mb 64 -o $T/state/traces/own/" "$T/calls"
check "and the daemon says so" grep -q "own: triggers from its metadata and the daemon's options: exit 5.000 ms, stall 45.000 ms, window 1500 ms before, 1000 ms after" "$T/daemon.log"
qemu off
hook off started 'trigger-stall-us="off"'
check "off recording" wait_for 15 is_state off recording
check "off's recorder got no trigger nor snapshot option" grep -q "record --pid $(cat "$T/qemu.off") --cid 10 --guest-handoff 3 --metrics-fd 4 -o $T/state/traces/off/" "$T/calls"
check "and the daemon says so" grep -q "off: triggers from its metadata and the daemon's options: exit off, stall off, window 3000 ms before, 1000 ms after" "$T/daemon.log"
qemu huge
hook huge started 'trigger-stall-us="99999999999999999999999"'
check "a huge threshold: the hook says which domain and value" grep -q "huge: not traced, its vmscope:trace is refused: trigger-stall-us='99999999999999999999999': microseconds, 1 to 3600000000, or off" "$T/hook.err"
check "and the domain is not traced" [ -z "$(state_of huge)" ]
check "nor has a folder" [ ! -e "$T/state/traces/huge" ]
# the same from the command line: `session start`'s options
qemu cli
check "session start with triggers" "$vmscope" session start cli --pid "$(cat "$T/qemu.cli")" \
	--trigger-exit-us 7000 --trigger-stall-us off --snapshot-after-ms 2500
check "cli recording" wait_for 15 is_state cli recording
check "cli's recorder got its thresholds and window" grep -q "record --pid $(cat "$T/qemu.cli") --metrics-fd 4 --trigger-exit-us 7000 --snapshot-dir $T/state/snapshots/cli --snapshot-before-ms 3000 --snapshot-after-ms 2500 --snapshot-cap-mb 64 -o $T/state/traces/cli/" "$T/calls"
check "and the daemon says so" grep -q "cli: triggers from its metadata and the daemon's options: exit 7.000 ms, stall off, window 3000 ms before, 2500 ms after" "$T/daemon.log"
check "session stop cli" "$vmscope" session stop cli
hook own stopped
hook off stopped
check "own and off finalized" wait_for 30 sh -c 'ls "$0"/state/traces/own/*/summary.txt "$0"/state/traces/off/*/summary.txt' "$T"

# web stops: its series end at once; a restart serves the new recording
hook web stopped
check "web's series end when it stops" wait_for 15 not_served 'domain="web"'
check "no domain served" served "vmscoped_metrics_domains 0"
check "web finalized" wait_for 30 sh -c 'ls "$0"/state/traces/web/*/summary.txt' "$T"
hook web started
check "web's new recording served" wait_for 30 served "vmscope_exits_total{$W,reason=\"EPT_VIOLATION\"} 3"
hook web stopped
hook bad stopped
check "both stopped: nothing served" wait_for 15 served "vmscoped_metrics_domains 0"
kill -TERM "$dpid"
wait "$dpid"
check "the daemon exits 0 on SIGTERM" [ $? -eq 0 ]
dpid=
"$daemon" --socket "$T/other.sock" --state-dir "$T/state" --vmscope "$T/fake-vmscope" \
	--metrics localhost:1 2>"$T/usage.err"
check "--metrics takes numeric addresses (exit 2)" [ $? -eq 2 ]
check "and says so" grep -q "not a numeric IPv4 or IPv6 address" "$T/usage.err"
"$daemon" --socket "$T/other.sock" --state-dir "$T/state" --vmscope "$T/fake-vmscope" \
	--trigger-stall-us 20000 2>"$T/usage.err"
check "--trigger-stall-us goes with --metrics (exit 2)" [ $? -eq 2 ]
check "and says so" grep -q "go with --metrics" "$T/usage.err"
[ "$fails" -eq 0 ] || { echo "daemon log:"; sed 's/^/  | /' "$T/daemon.log"; }
echo "daemon-metrics-test: $fails failures"
[ "$fails" -eq 0 ]
