# vmtest-timeout: 900
# What each other recording costs a traced VM's probes: the module's
# probes once walked every session slot that was on and each one's pid
# list, so a domain's events paid for every other domain recorded; they
# now look the slots up in an index (kvm-probes/kmod/core.h,
# vmscope_probe_begin; docs/design.md, "Many domains on one host"). A
# 1-vCPU guest's CPUID loop (one exit per iteration) is
# recorded by `vmscope record --measure --pid QEMU` alone ("1") and with
# SP_OTHERS more recordings running, each of an idle `sleep` process
# ("N": their sessions are on, none matches the guest's events), the
# modes interleaved SP_ROUNDS times. Per round, from `vmscope stats
# --json` before and after: the module's own timing of kvm_exit and
# kvm_entry (--measure: the time inside our payload probe, which does
# the slot walk, and the gap before it), and the guest's exit rate.
# Medians per mode. TCG inflates every absolute number: the ratio "N" /
# "1" is the figure.
# A benchmark run in the test host, not a test (it fails only if a mode
# did not run): flock /var/tmp/vmtest.lock tests/vm/run.sh --show
# bench/vm/sessions-probe-cost.sh

N=${SP_N:-40000}
OTHERS=${SP_OTHERS:-7}
ROUNDS=${SP_ROUNDS:-3}
MODES=$(for _ in $(seq "$ROUNDS"); do printf "1 N "; done)

host_main() {
	# probe-cost numbers: no extra probes held on the tracepoints (tests/vm/lib/vmlib.sh)
	VMTEST_HOLD_TRACEPOINTS=0 host_prepare_kvm
	check "insmod vmscope_host" insmod "$HOST_KO"
	guest_start g1 guest_cpuid_rounds 1 3
	gdir=$VMTEST_GUESTS/g1
	qpid=$(cat "$gdir/qemu.pid")
	idle=
	for _ in $(seq "$OTHERS"); do
		sleep 100000 &
		idle="$idle $!"
	done
	i=0
	for m in $MODES; do
		i=$((i + 1))
		others=
		want=1
		if [ "$m" = N ]; then
			for p in $idle; do
				"$VMSCOPE" record --pid "$p" --buffer-size 64K -o "/tmp/other-$i-$p" \
					>/dev/null 2>"/tmp/other-$i-$p.err" &
				others="$others $!"
				want=$((want + 1))
			done
		fi
		"$VMSCOPE" record --measure --pid "$qpid" -o "/tmp/rec-$i" >/dev/null 2>"/tmp/rec-$i.err" &
		rec=$!
		# every recorder's session on before the guest starts
		for _ in $(seq $((200 + 20 * OTHERS))); do
			[ "$(grep -l 'recording to' /tmp/rec-"$i".err /tmp/other-"$i"-*.err 2>/dev/null | wc -l)" -ge "$want" ] && break
			sleep 0.1
		done
		[ "$(grep -l 'recording to' /tmp/rec-"$i".err /tmp/other-"$i"-*.err 2>/dev/null | wc -l)" -ge "$want" ] ||
			fail "round $i ($m): $want recorders did not all start: $(cat /tmp/rec-"$i".err /tmp/other-"$i"-*.err 2>/dev/null | tail -n 5)"
		"$VMSCOPE" stats --json >"/vmtest/before-$i.json" || fail "stats before round $i"
		touch "$gdir/go-$i"
		wait_file "$gdir/done-$i"
		"$VMSCOPE" stats --json >"/vmtest/after-$i.json" || fail "stats after round $i"
		# shellcheck disable=SC2086 # one pid per word
		kill -INT "$rec" $others 2>/dev/null
		# shellcheck disable=SC2086
		wait "$rec" $others
		rm -rf "/tmp/rec-$i" /tmp/other-"$i"-*
		echo "$i $m" >>/vmtest/rounds
	done
	guest_wait g1 300 || fail "guest failed"
	# shellcheck disable=SC2086
	kill $idle 2>/dev/null
	python3 - "$OTHERS" "$gdir" <<'PY' | tee /vmtest/cost.txt
import json, statistics, sys
others, gdir = int(sys.argv[1]), sys.argv[2]
rows = {"1": [], "N": []}
for line in open("/vmtest/rounds"):
    i, m = line.split()
    b = json.load(open("/vmtest/before-%s.json" % i)).get("timing", {})
    a = json.load(open("/vmtest/after-%s.json" % i)).get("timing", {})
    r = {}
    for ev in ("exit", "entry"):
        n0 = b.get(ev, {}).get("n", 0)
        n1 = a[ev]["n"]
        p = a[ev]["probe_ns_avg"] * n1 - b.get(ev, {}).get("probe_ns_avg", 0) * n0
        g = a[ev]["gap_ns_avg"] * n1 - b.get(ev, {}).get("gap_ns_avg", 0) * n0
        r[ev] = (n1 - n0, p / (n1 - n0), g / (n1 - n0))
    rate = [l.split("=")[1] for l in open("%s/rate-%s-%s" % (gdir, i, m)).read().split()
            if l.startswith("cpuid_rate=")]
    r["rate"] = float(rate[0])
    rows[m].append(r)
    print("round %s (%s): kvm_exit n %d probe %.1f ns gap %.1f ns; kvm_entry n %d probe %.1f ns "
          "gap %.1f ns; cpuid %.0f/s" % (i, m, *r["exit"], *r["entry"], r["rate"]))
med = {m: {"exit": statistics.median(x["exit"][1] for x in v),
           "entry": statistics.median(x["entry"][1] for x in v),
           "rate": statistics.median(x["rate"] for x in v)} for m, v in rows.items() if v}
for m, v in med.items():
    print("median (%s): kvm_exit probe %.1f ns, kvm_entry probe %.1f ns, both %.1f ns; cpuid %.0f/s"
          % ("1 session" if m == "1" else "%d sessions" % (others + 1), v["exit"], v["entry"],
             v["exit"] + v["entry"], v["rate"]))
if "1" in med and "N" in med:
    one, many = med["1"], med["N"]
    print("%d sessions / 1: kvm_exit probe %.2f, kvm_entry probe %.2f, per exit %.2f; "
          "per other session per exit %+.1f ns (TCG-inflated); exit rate %.3f"
          % (others + 1, many["exit"] / one["exit"], many["entry"] / one["entry"],
             (many["exit"] + many["entry"]) / (one["exit"] + one["entry"]),
             (many["exit"] + many["entry"] - one["exit"] - one["entry"]) / others,
             many["rate"] / one["rate"]))
PY
	grep -q '^median (1 session)' /vmtest/cost.txt || fail "the numbers"
	check "rmmod vmscope_host" rmmod vmscope_host
}
