# Sourced by tests/vm/tests/metrics-prometheus.sh: domains_part.
# The part of metrics-prometheus.sh with sixteen opted-in libvirt domains
# at once (issue 22), each its own recording and its own series (its own
# boot before, folded there to share one: vmscoped --metrics, libvirtd):
# 16 domains with no OS (firmware_xml: their firmware looks for a boot
# device and waits; a nested Linux boot would cost the test host ~30 s of
# TCG each), started side by side. Each one is recorded by its own `vmscope record`, one of the host
# module's capture sessions, filtered to its own QEMU.
#  - all 16 are recording at once (`vmscope session list`), and /metrics
#    serves 16 domains, each with its own name and its UUID
#    (vmscoped_metrics_domains 16);
#  - each domain is paused (`virsh suspend`: its vCPU makes no exit any
#    more) and, once the daemon's figures stop changing (two scrapes 5 s
#    apart alike: the live pipeline lags by 1-3 s), its exits by reason
#    in /metrics equal exactly the completed exits by reason that
#    `vmscope report exits` finds in that domain's own recording (merged
#    by the daemon after the domain is destroyed), with no loss in
#    either: the live pipeline demultiplexes nothing here, so any other
#    domain's exit in a domain's series, or one of its own missing, shows;
#  - once destroyed, every domain's trace is finalized and merged, and its
#    series are gone from /metrics.
# domains_part needs libvirtd (lib/libvirt.sh) and vmscoped --metrics on
# 127.0.0.1:$MPORT running, no other opted-in domain, and NS set.

DOMAINS=16

dp_scrape() { curl -sf --max-time 20 "http://127.0.0.1:$MPORT/metrics" >"$1"; }

# every_domain_served FILE: FILE is a scrape with exits of all $DOMAINS
every_domain_served() {
	dp_scrape "$1" || return 1
	[ "$(grep -o '^vmscope_exits_total{domain="f[0-9]*"' "$1" | sort -u | wc -l)" = "$DOMAINS" ]
}

# exits_settled: two scrapes 5 s apart with the same exits of every domain
exits_settled() {
	every_domain_served /run/scrape-a.txt || return 1
	sleep 5
	every_domain_served /run/scrape-b.txt || return 1
	[ "$(grep '^vmscope_exits_total{' /run/scrape-a.txt)" = "$(grep '^vmscope_exits_total{' /run/scrape-b.txt)" ]
}

# each VERB NAME...: `virsh VERB NAME` for every domain at once (one
# after the other took 1-2 s each under TCG; define takes /run/NAME.xml);
# fails on any failure
each() {
	_verb=$1
	shift
	_pids=
	for _n in "$@"; do
		_arg=$_n
		[ "$_verb" = define ] && _arg=/run/$_n.xml
		virsh "$_verb" "$_arg" >"/vmtest/$_verb-$_n.txt" 2>&1 &
		_pids="$_pids $!"
	done
	for _p in $_pids; do
		wait "$_p" || fail "virsh $_verb: $(cat /vmtest/$_verb-*.txt)"
	done
}

# uuid_of NAME: the UUID libvirt gave domain NAME (its XML names none),
# from /run/uuids.txt (domains_part writes it with one virsh call)
uuid_of() { awk -v n="$1" '$2 == n { print $1 }' /run/uuids.txt; }

every_trace_finalized() {
	[ "$(ls /var/lib/vmscope/traces/f*/*/summary.txt 2>/dev/null | wc -l)" = "$DOMAINS" ]
}

domains_part() {
	names=
	for i in $(seq 1 "$DOMAINS"); do
		n=$(printf f%02d "$i")
		# kvm_exit and kvm_entry, what the part compares: a firmware
		# waiting for a boot device made up to 1.1 M events in 94 s
		# (a third kvm_page_fault, a tenth sched_switch), which the
		# 16 recorders, merges and reports then spent TCG time on
		firmware_xml "$n" $((9 + i)) "<vmscope:trace xmlns:vmscope='$NS' buffer-size='1M' events='kvm_exit,kvm_entry'/>" 32 >/run/$n.xml
		names="$names $n"
	done
	# shellcheck disable=SC2086 # one name per word
	each define $names
	virsh -q list --all --uuid --name >/run/uuids.txt
	t0=$(cut -d' ' -f1 /proc/uptime)
	# shellcheck disable=SC2086 # one name per word
	each start $names
	log "$DOMAINS domains started in $(echo "$(cut -d' ' -f1 /proc/uptime) - $t0" | bc) s"
	virsh -q list --state-running --name >/run/running.txt
	for n in $names; do
		grep -qx "$n" /run/running.txt || fail "$n is $(virsh -q domstate "$n")"
	done
	vmscope session list >/vmtest/domains-sessions.txt
	cat /vmtest/domains-sessions.txt
	nrec=$(awk '$1 ~ /^f[0-9]+$/ && $2 == "recording"' /vmtest/domains-sessions.txt | wc -l)
	[ "$nrec" = "$DOMAINS" ] || fail "$nrec of $DOMAINS domains recording"

	wait_until 120 "every domain's exits served" every_domain_served /vmtest/domains-scrape-running.txt
	grep -q "^vmscoped_metrics_domains $DOMAINS\$" /vmtest/domains-scrape-running.txt ||
		fail "vmscoped serves $(grep '^vmscoped_metrics_domains' /vmtest/domains-scrape-running.txt)"
	for n in $names; do
		uuid=$(uuid_of "$n")
		grep -q "^vmscope_exits_total{domain=\"$n\",uuid=\"$uuid\"," /vmtest/domains-scrape-running.txt ||
			fail "no exits of $n with its UUID $uuid"
	done
	# measured, not asserted (bench/README.md, "Memory and series at 64 domains"):
	# the recorders' memory while they record (their mapped rings
	# included: Pss counts a page shared by k processes as 1/k each)
	log "$(recorders_memory)"
	# shellcheck disable=SC2086
	each suspend $names
	wait_until 120 "the paused domains' exits settled in /metrics" exits_settled
	cp /run/scrape-b.txt /vmtest/domains-scrape-paused.txt
	# shellcheck disable=SC2086
	each destroy $names
	wait_until 600 "every domain's trace finalized" every_trace_finalized
	vmscope session list
	dp_scrape /vmtest/domains-scrape-after.txt || fail "no scrape after the domains stopped"
	grep '^vmscope_[a-z_]*{domain="f' /vmtest/domains-scrape-after.txt | head -3 | grep . &&
		fail "series of stopped domains still served"
	grep -q '^vmscoped_metrics_domains 0$' /vmtest/domains-scrape-after.txt ||
		fail "after the stop: $(grep '^vmscoped_metrics_domains' /vmtest/domains-scrape-after.txt)"

	# the reports side by side (both test-host CPUs), each checked
	_pids=
	for n in $names; do
		d=$(ls -d /var/lib/vmscope/traces/$n/*/)
		[ "$(echo "$d" | grep -c .)" = 1 ] || fail "want one trace of $n, have: $d"
		grep -q "^$n: trace finalized in ${d%/}: vmscope record: [0-9]* events.*; merged$" "$d/summary.txt" ||
			fail "$n summary: $(cat "$d/summary.txt")"
		cp "$d/record.log" "/vmtest/$n-record.log"
		vmscope report exits --json "$d/merged" >/run/$n-exits.json 2>/vmtest/$n-report.err &
		_pids="$_pids $n:$!"
		echo "$n $(uuid_of "$n") /run/$n-exits.json"
	done >/run/domains.txt
	for _p in $_pids; do
		wait "${_p#*:}" || fail "report exits on ${_p%%:*}'s trace: $(tail -3 "/vmtest/${_p%%:*}-report.err")"
	done
	python3 - /vmtest/domains-scrape-paused.txt /run/domains.txt "$DOMAINS" <<'PY' >/vmtest/domains-compare.txt 2>&1
import json, re, sys
scrape = open(sys.argv[1]).read()
bad = []
def series(name, dom):
    out = {}
    for m in re.finditer(r'^%s\{domain="%s",uuid="([^"]*)"(?:,reason="([^"]*)")?\} (\S+)$'
                         % (name, dom), scrape, re.M):
        out[m.group(2)] = (m.group(1), float(m.group(3)))
    return out
uuids = set()
for line in open(sys.argv[2]):
    dom, uuid, path = line.split()
    rep = json.load(open(path))
    want = {}
    for g in rep["groups"]:
        if g["vm"] == 0:
            want[g["reason"]] = want.get(g["reason"], 0) + g["count"]
    got = {r: v for r, (u, v) in series("vmscope_exits_total", dom).items()}
    us = {u for u, v in series("vmscope_exits_total", dom).values()}
    lost = series("vmscope_events_lost_total", dom)
    nlost = sum(v for u, v in lost.values())
    print("%s: /metrics %d exits in %d reasons, lost %d; its recording %d exits in %d reasons, losses %d, damaged %s"
          % (dom, sum(got.values()), len(got), nlost, sum(want.values()), len(want),
             rep["counts"]["losses"], rep["damaged"]))
    if us != {uuid}:
        bad.append("%s: uuid labels %s, want %s" % (dom, sorted(us), uuid))
    uuids |= us
    if nlost or rep["counts"]["losses"] or rep["damaged"]:
        bad.append("%s: losses (metrics %d, recording %d) or damage: no exact count to compare"
                   % (dom, nlost, rep["counts"]["losses"]))
    if not want:
        bad.append("%s: no exit in its recording" % dom)
    for r in sorted(set(want) | set(got)):
        if want.get(r, 0) != got.get(r, 0):
            bad.append("%s: %s exits: /metrics %d, its recording %d" % (dom, r, got.get(r, 0), want.get(r, 0)))
if len(uuids) != int(sys.argv[3]):
    bad.append("%d distinct UUIDs among %s domains" % (len(uuids), sys.argv[3]))
for b in bad:
    print("MISMATCH " + b)
sys.exit(1 if bad else 0)
PY
	st=$?
	cat /vmtest/domains-compare.txt
	[ "$st" = 0 ] || fail "$(grep -c MISMATCH /vmtest/domains-compare.txt) mismatches between /metrics and the recordings"
}
