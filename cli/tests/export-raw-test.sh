#!/bin/sh
# `vmscope export --perfetto|--ctf` on a raw trace (what `record` writes)
# writes, byte for byte, what it writes for the same trace merged by
# `vmscope merge`: the export runs the merge's two passes itself and reads
# pass 2's records as the merged trace would give them back.
# On three raw traces (test_online --write: 2 VMs x 2 vCPUs, a guest clock
# step, forged exchanges, clock-unreliable spans; test_merge --write; and
# test_merge --write-losses: a ring-buffer loss and a missing sub-buffer
# in every stream, so CTF's discarded events and the walk's losses count):
# - the Perfetto file and the CTF folder's metadata and stream of RAW equal
#   those of MERGED, and stdout equals but for the output's name;
# - stderr says the raw trace was merged and prints merge's clock report;
# - a flipped byte in a host stream, a guest stream cut in half: exit 1
#   naming the damage as `vmscope merge` names it, no output and no
#   temporary output left.
# Usage: export-raw-test.sh PATH-TO-vmscope PATH-TO-test_online PATH-TO-test_merge
set -u
exe=$1 online=$2 merge=$3

. "$(dirname "$0")/expect.sh"
expect_tmpdir export-raw-test

raw_traces "$merge" --write-losses

# exported FORMAT T FILE...: `export --FORMAT` of $dir/T and of its merged
# trace $dir/T.merged: each FILE of the output ("" the output itself)
# equal and not empty, the counts on stdout equal but for the output's
# name, and merge's report on stderr
exported() {
	fmt=$1 t=$2
	shift 2
	"$exe" export --$fmt "$dir/$t.merged" -o "$dir/$t.m.$fmt" >"$dir/m.out" ||
		fail "export --$fmt $t.merged"
	"$exe" export --$fmt "$dir/$t" -o "$dir/$t.r.$fmt" >"$dir/r.out" 2>"$out"
	st=$? same=yes
	for f in "$@"; do
		{ cmp -s "$dir/$t.m.$fmt$f" "$dir/$t.r.$fmt$f" && [ -s "$dir/$t.r.$fmt$f" ]; } || same=no
	done
	if [ "$st" -eq 0 ] && [ "$same" = yes ]; then
		echo "ok: $fmt of $t equals of $t.merged ($(cat "$dir/$t.r.$fmt"* 2>/dev/null | wc -c) bytes)"
	else
		fail "$fmt of $t (exit $st) differs from $t.merged"; cat "$out"
	fi
	if [ "$(sed "s#$t.r.$fmt#OUT#" "$dir/r.out")" = "$(sed "s#$t.m.$fmt#OUT#" "$dir/m.out")" ]; then
		echo "ok: $fmt of $t: the same counts ($(cut -c1-60 "$dir/r.out")...)"
	else
		fail "$fmt of $t: counts differ"; cat "$dir/r.out" "$dir/m.out"
	fi
	grep -q 'a raw trace, merged as `vmscope merge` merges it' "$out" &&
	grep -Eq 'segment 0: accurate, .* bound [0-9]+ ns' "$out" ||
		{ fail "$fmt of $t: no merge report on stderr"; cat "$out"; }
}

for t in raw raw2 raw3; do
	"$exe" merge "$dir/$t" -o "$dir/$t.merged" >/dev/null || { fail "vmscope merge $t"; continue; }
	exported perfetto $t ""
	exported ctf $t /metadata /stream
done
# the losses made it through: 6 streams x 17 records
grep -q ', 102 discarded' "$dir/r.out" || fail "raw3: not the 102 discarded events: $(cat "$dir/r.out")"

expect 0 'a raw recording' -- export --help

# damage: a flipped byte in a host stream, a guest stream cut in half
damage_raw "$dir/raw"
for t in flip cut; do
	"$exe" merge "$dir/$t" -o "$dir/$t.m" >"$dir/merge.out" 2>&1
	acct=$(grep -o 'is damaged ([^)]*): .*' "$dir/merge.out" | head -1 |
		sed 's/ (--accept-damage to merge it)$//')
	[ -n "$acct" ] || { fail "merge of $t gave no damage account"; cat "$dir/merge.out"; }
	for f in perfetto ctf; do
		"$exe" export --$f "$dir/$t" -o "$dir/$t.$f" >"$dir/a" 2>"$out"
		st=$?
		left=$(ls -a "$dir" | grep -c "^\.$t\.$f\.partial-")
		# the account merge gives, without report's --accept-damage
		if [ "$st" -eq 1 ] && grep -Fq -- "$dir/$t $acct: not exported" "$out" &&
		   ! grep -q -- '--accept-damage' "$out" && [ ! -e "$dir/$t.$f" ] &&
		   [ "$left" -eq 0 ] && [ ! -s "$dir/a" ]; then
			echo "ok: export --$f $t: exit 1, the damage merge gives, nothing written"
		else
			fail "export --$f $t: exit $st (want 1 and: $acct), left $left"; cat "$out"
		fi
	done
done
expect 1 'no such|No such' -- export --ctf "$dir/nothere" -o "$dir/nothere.ctf"

[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
