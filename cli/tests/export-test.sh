#!/bin/sh
# `vmscope export` on a merged synthetic trace (merge/tests/test_merge.c
# --write, then `vmscope merge`: two VMs of two vCPUs, host sched_switch to
# the vCPU threads, kvm_exit/kvm_entry fillers, clock-sync exchanges).
#
# Perfetto: the file decodes with `protoc --decode perfetto.protos.Trace`
# against export/perfetto_subset.proto, and its structure matches what
# `vmscope merge --show` says the merged trace holds, counted here
# independently with awk: host packets without machine_id and one
# machine_id per VM (nothing else); per machine as many ftrace sched_switch
# as the merged trace has sched_switch records of that origin; the vCPU
# thread tracks of the session (pid = QEMU pid); as many exit slices
# (begin = end, named by the exit reason) as kvm_exit -> next kvm_entry
# pairs on the same thread; as many complete flows (an id on host
# instants that a guest instant ends) as guest sync records whose (token,
# seq, cpu) some host sync_t2 carries.
#
# CTF: babeltrace2 reads the folder without complaint; its events per name
# equal `vmscope dump --summary` of the merged trace; the first event's
# timestamp (clock cycles = ns) is the merged trace's first host time; a
# kvm_exit keeps its fields and origin context.
#
# Both: usage errors, a non-merged input, a torn merged stream (nothing
# written, no temporary left), refusing to overwrite, --force; an export
# killed while writing leaves nothing under the asked name; one interrupted
# (SIGINT, SIGTERM) removes its temporary output and ends by the signal.
# Usage: export-test.sh PATH-TO-vmscope PATH-TO-test_merge PATH-TO-perfetto_subset.proto
set -u
exe=$1 writer=$2 proto=$3
ok() { echo "ok: $*"; }

. "$(dirname "$0")/expect.sh"
expect_tmpdir export-test

same() {	# same WHAT GOT WANT
	if [ "$2" = "$3" ] && [ -n "$2" ]; then ok "$1: $2"; else fail "$1: got '$2', want '$3'"; fi
}

for p in protoc babeltrace2; do
	command -v $p >/dev/null || { echo "FAIL: $p missing (scripts/install-deps.sh)"; exit 1; }
done
"$writer" --write "$dir/t" || { echo "FAIL: writing the trace"; exit 1; }
"$exe" merge "$dir/t" >/dev/null || { echo "FAIL: merging"; exit 1; }
m=$dir/t.merged
"$exe" merge --show "$m" >"$dir/show" || { echo "FAIL: merge --show"; exit 1; }

expect 0 'usage: vmscope export --perfetto' -- export --help
expect 2 'usage: vmscope export' -- export
expect 2 '--perfetto or --ctf' -- export "$m" -o "$dir/x"
expect 2 'one of --perfetto or --ctf' -- export --perfetto --ctf "$m" -o "$dir/x"
expect 2 '-o OUTPUT' -- export --ctf "$m"
# a raw trace is exported too (export-raw-test.sh); a folder that is no
# trace is not
mkdir "$dir/notrace"
expect 1 'not a trace' -- export --perfetto "$dir/notrace" -o "$dir/x"
expect 1 'not a trace' -- export --ctf "$dir/notrace" -o "$dir/x"
[ -e "$dir/x" ] && fail "output written for an input that is no trace"
expect 2 'the output .*/p.pf would be inside the input .*t.merged' -- export --perfetto "$m" -o "$m/p.pf"
expect 2 'would be inside the input' -- export --ctf "$m" -o "$m/"
[ -e "$m/p.pf" ] && fail "an export was written into its input"

# ---- Perfetto ----
expect 0 'perfetto: .* 3 machines, [0-9]+ events read' -- export --perfetto "$m" -o "$dir/p.pftrace"
expect 1 'File exists' -- export --perfetto "$m" -o "$dir/p.pftrace"
expect 0 'perfetto: ' -- export --perfetto --force "$m" -o "$dir/p.pftrace"
if ! protoc --proto_path="$(dirname "$proto")" --decode perfetto.protos.Trace \
	"$(basename "$proto")" <"$dir/p.pftrace" >"$dir/p.txt" 2>"$dir/p.err"; then
	fail "protoc --decode: $(head -5 "$dir/p.err")"
fi
[ -s "$dir/p.err" ] && fail "protoc complained: $(head -5 "$dir/p.err")"

# the decoded packets, summarised: one line per fact
awk -f "$(dirname "$0")/perfetto-summary.awk" "$dir/p.txt" >"$dir/p.sum"

# what the merged trace holds, from merge --show
awk '
$2 == "host" { mach = 0 } $2 == "synth0" { mach = 1 } $2 == "synth1" { mach = 2 }
$6 == "sched_switch:" { sw[mach]++ }
$2 == "host" && $5 >= 0 && $6 == "kvm_exit:" { pend[$5] = 1 }
$2 == "host" && $5 >= 0 && $6 == "kvm_entry:" && pend[$5] { pairs++; pend[$5] = 0 }
$6 == "sync_t2:" { t2[$10 " " $12 " " $16] = 1 }
$6 == "sync_guest:" { if (($12 " " $14 " " $18) in t2 && !seen[$12 " " $14 " " $18]++) flows++ }
END {
	for (i = 0; i < 3; i++) print "sw", i, sw[i] + 0
	print "pairs", pairs + 0
	print "flows", flows + 0
}' "$dir/show" >"$dir/want"

same "machines (host 0, VMs 1 and 2)" \
	"$(awk '$1 == "machine" { print $2 }' "$dir/p.sum" | sort -u | tr '\n' ' ')" "0 1 2 "
for i in 0 1 2; do
	same "machine $i sched_switch events = merged sched_switch of that origin" \
		"$(awk -v i=$i '$1 == "sched_switch" && $2 == i { n += $3 } END { print n + 0 }' "$dir/p.sum")" \
		"$(awk -v i=$i '$1 == "sw" && $2 == i { print $3 }' "$dir/want")"
done
same "vCPU thread tracks (pid tid)" \
	"$(awk '$1 == "thread" { print $2 ":" $3 }' "$dir/p.sum" | sort | tr '\n' ' ')" \
	"1000:1001 1000:1002 2000:2001 2000:2002 "
pairs=$(awk '$1 == "pairs" { print $2 }' "$dir/want")
[ "$pairs" -gt 1000 ] || fail "too few exit/entry pairs in the synthetic trace: $pairs"
same "exit slices begun = kvm_exit->kvm_entry pairs per thread" \
	"$(grep -c '^begin ' "$dir/p.sum")" "$pairs"
same "exit slices ended" "$(grep -c '^end$' "$dir/p.sum")" "$pairs"
same "slice names (SVM 0x7b)" "$(awk '$1 == "begin" { print $2 }' "$dir/p.sum" | sort -u)" '"io"'
flows=$(awk '$1 == "flows" { print $2 }' "$dir/want")
[ "$flows" -gt 100 ] || fail "too few sync exchanges in the synthetic trace: $flows"
same "complete sync flows (host t2/t3 -> guest record)" \
	"$(awk '$1 == "flows" { print $2 }' "$dir/p.sum")" "$flows"

# ---- CTF ----
expect 0 'ctf: .* [0-9]+ events in [0-9]+ packets, 0 discarded' -- export --ctf "$m" -o "$dir/c"
[ -f "$dir/c/metadata" ] && [ -f "$dir/c/stream" ] || fail "CTF folder incomplete: $(ls "$dir/c")"
if ! babeltrace2 "$dir/c" >"$dir/c.txt" 2>"$dir/c.err"; then
	fail "babeltrace2: $(head -5 "$dir/c.err")"
fi
[ -s "$dir/c.err" ] && fail "babeltrace2 complained: $(head -5 "$dir/c.err")"
sed -E 's/^\[[^]]*\] \([^)]*\) //; s/: \{.*//' "$dir/c.txt" | sort | uniq -c |
	awk '{ print $2, $1 }' >"$dir/c.counts"
"$exe" dump --summary "$m" | awk '$1 == "events" && $2 == "host" { print $3, $4 }' |
	sort >"$dir/d.counts"
[ "$(wc -l <"$dir/d.counts")" -ge 10 ] || fail "dump gave too few event names"
if cmp -s "$dir/c.counts" "$dir/d.counts"; then
	ok "babeltrace2 counts per event = dump --summary ($(wc -l <"$dir/c.counts") names," \
		"$(wc -l <"$dir/c.txt") events)"
else
	fail "babeltrace2 counts differ from dump --summary:"; diff "$dir/c.counts" "$dir/d.counts" | head
fi
first_show=$(head -1 "$dir/show" | awk '{ split($1, a, "."); print a[1] a[2] }')
first_ctf=$(babeltrace2 --clock-cycles "$dir/c" 2>/dev/null | head -1 | sed -E 's/^\[0*([0-9]+)\].*/\1/')
same "first event's CTF timestamp = merged host time (ns)" "$first_ctf" "$first_show"
grep -Eq '^\[[^]]*\] \([^)]*\) kvm_exit: \{ origin = 0, cpu = [01], tid = -?[0-9]+, vcpu = [0-9]+, orig_ts = [0-9]+ \}, \{ vcpu_id = [0-9]+, exit_reason = 123, guest_rip = 0, info1 = 0, info2 = 0, intr_info = 0, error_code = 0, isa = 2, reason_valid = 1 \}$' "$dir/c.txt" &&
	ok "kvm_exit with its fields and origin" || fail "no kvm_exit line with its fields"
grep -Eq 'vm1:sync_guest: \{ origin = 2, cpu = [01], .*\{ t1 = [0-9]+, t4 = [0-9]+, token = [0-9]+, seq = [0-9]+, ret = -1000, cpu = [01] \}' "$dir/c.txt" &&
	ok "guest sync record with its fields, origin VM 1" || fail "no vm1:sync_guest line with its fields"
expect 1 'File exists' -- export --ctf "$m" -o "$dir/c"
expect 0 'ctf: ' -- export --ctf --force "$m" -o "$dir/c"
mkdir "$dir/mine" && echo keep >"$dir/mine/notes"
expect 1 'not an export' -- export --ctf --force "$m" -o "$dir/mine"
[ -f "$dir/mine/notes" ] || fail "--force removed a folder that was not an export"

# ---- a broken merged trace: refused, nothing left behind ----
cp -r "$m" "$dir/torn.merged"
size=$(stat -c %s "$dir/torn.merged/merged.vtf")
truncate -s $((size - 100)) "$dir/torn.merged/merged.vtf"
expect 1 'does not end clean' -- export --perfetto "$dir/torn.merged" -o "$dir/torn.pf"
expect 1 'does not end clean' -- export --ctf "$dir/torn.merged" -o "$dir/torn.ctf"
# its metadata unreadable (a byte of the session frame): refused, not 0 events
cp -r "$m" "$dir/nometa.merged"
printf '\377' | dd of="$dir/nometa.merged/metadata.vtf" bs=1 seek=100 conv=notrunc 2>/dev/null
expect 1 'nometa.merged is damaged .*metadata.vtf' -- export --perfetto "$dir/nometa.merged" -o "$dir/nometa.pf"
expect 1 'nometa.merged is damaged .*metadata.vtf' -- export --ctf "$dir/nometa.merged" -o "$dir/nometa.ctf"
[ -e "$dir/nometa.pf" ] || [ -e "$dir/nometa.ctf" ] && fail "exported a merged trace whose metadata is unreadable"
[ -e "$dir/torn.pf" ] || [ -e "$dir/torn.ctf" ] && fail "output left for a broken input"
leftover=$(find "$dir" -name '.*.partial-*' | head -3)
[ -z "$leftover" ] && ok "no temporary outputs left" || fail "temporary outputs left: $leftover"

# ---- killed while writing: nothing under the asked name ----
mkdir "$dir/kill"
"$exe" export --perfetto "$m" -o "$dir/kill/k.pftrace" >/dev/null 2>&1 &
pid=$!
partial=
for _ in $(seq 400); do	# the temporary file appears, then the export is killed
	partial=$(find "$dir/kill" -name '.k.pftrace.partial-*' | head -1)
	[ -n "$partial" ] && break
	if [ -e "$dir/kill/k.pftrace" ]; then
		# Renamed: then the export had written all of it (it may still be
		# exiting: fsync of the folder, the sanitizers' exit checks), so
		# the file must be the whole export, as the one made above.
		wait $pid
		st=$?
		if [ "$st" = 0 ] && cmp -s "$dir/kill/k.pftrace" "$dir/p.pftrace"; then
			ok "the output appeared under the asked name complete (exit 0, same bytes as p.pftrace)"
		else
			fail "the output is under the asked name but not the whole export (exit $st; cmp: $(cmp "$dir/kill/k.pftrace" "$dir/p.pftrace" 2>&1))"
		fi
		partial=done
		break
	fi
	sleep 0.005
done
if [ "$partial" = done ]; then
	echo "skip: the export ended before it could be killed"
elif [ -n "$partial" ] && kill -KILL $pid 2>/dev/null; then
	wait $pid 2>/dev/null
	if [ -e "$dir/kill/k.pftrace" ]; then
		fail "a killed export left its output under the asked name"
	else
		ok "killed while writing: only $(basename "$partial") left, nothing under the asked name"
	fi
	rm -f "$dir"/kill/.k.pftrace.partial-*
else
	wait $pid
	echo "skip: the export ended before it could be killed"
fi

# ---- interrupted: the temporary output removed, exit by the signal ----
env --default-signal=INT true 2>/dev/null || { echo "FAIL: env --default-signal (coreutils 8.31)"; exit 1; }
"$writer" --write "$dir/long" 5 && "$exe" merge "$dir/long" >/dev/null ||
	{ echo "FAIL: writing the long trace"; exit 1; }
for sig in INT TERM; do
	for fmt in perfetto ctf; do
		if interrupt $sig "$dir/kill/.i.$fmt.partial-*" -- export --$fmt "$dir/long.merged" \
			-o "$dir/kill/i.$fmt"; then
			left=$(find "$dir/kill" -name ".i.$fmt.partial-*")
			[ "$st" -gt 128 ] && ok "export --$fmt: SIG$sig: exit $st (killed by it)" ||
				fail "export --$fmt: SIG$sig: exit $st, not by the signal"
			[ -z "$left" ] && ok "export --$fmt: SIG$sig: temporary output removed" ||
				fail "export --$fmt: SIG$sig left $left"
			[ -e "$dir/kill/i.$fmt" ] && fail "export --$fmt: SIG$sig: output under the asked name"
		else
			fail "export --$fmt ended (exit $st) before its temporary output appeared"
		fi
	done
done

echo "$fails failed"
[ "$fails" -eq 0 ]
