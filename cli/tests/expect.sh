# Sourced by the command tests: expect STATUS PATTERN -- ARGS... runs
# "$exe" ARGS, passes when it exits STATUS and its output (stdout and
# stderr, in "$out") matches the extended regex PATTERN; counts failures
# in $fails. expect_full: the same with stdout on /dev/full (a full disk),
# PATTERN matched against stderr.
# expect_tmpdir NAME: $dir, a fresh folder /var/tmp/NAME-XXXXXX removed at
# exit, $out in it, and no failures yet.
expect_tmpdir() {
	fails=0
	dir=$(mktemp -d "/var/tmp/$1-XXXXXX") || { echo "FAIL: mktemp"; exit 1; }
	trap 'rm -rf "$dir"' EXIT
	out=$dir/out
}

expect() {
	want=$1 pattern=$2; shift 3
	"$exe" "$@" >"$out" 2>&1
	check_run "$@"
}

expect_full() {
	want=$1 pattern=$2; shift 3
	"$exe" "$@" >/dev/full 2>"$out"
	check_run "$@" '>/dev/full'
}

check_run() {
	got=$?
	if [ "$got" -ne "$want" ] || ! grep -Eq -- "$pattern" "$out"; then
		echo "FAIL: vmscope $*: exit $got (want $want), output:"; sed 's/^/  | /' "$out" | head -40
		echo "  (wanted /$pattern/)"
		fails=$((fails + 1))
	else
		echo "ok: vmscope $* =~ /$pattern/"
	fi
}

# interrupt SIGNAL GLOB -- ARGS...: runs "$exe" ARGS in the background with
# SIGINT, SIGTERM and SIGHUP at their defaults (a background job of a script
# ignores SIGINT), waits until a path matches GLOB (its temporary output),
# then sends SIGNAL. $st: its exit status; $partial: what matched. Returns 1
# (the test cannot tell) when the command ended before GLOB appeared, or
# had already renamed its output when it was stopped to take the signal.
# The command is stopped (SIGSTOP) before it is looked at again and
# signalled: on a loaded machine the shell may otherwise lose the CPU
# between seeing GLOB and the kill, while the command finishes, and a
# finished command's complete output would read as one written despite the
# signal.
interrupt() {
	sig=$1 glob=$2; shift 3
	env --default-signal=INT,TERM,HUP "$exe" "$@" >"$out" 2>&1 &
	pid=$! partial=
	for _ in $(seq 4000); do
		for f in $glob; do [ -e "$f" ] && partial=$f; done
		[ -n "$partial" ] && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.005
	done
	if [ -n "$partial" ] && kill -s STOP $pid 2>/dev/null && [ -e "$partial" ]; then
		kill -s "$sig" $pid
		kill -s CONT $pid 2>/dev/null
	else
		kill -s CONT $pid 2>/dev/null
		partial=
	fi
	wait $pid
	st=$?
	[ -n "$partial" ]
}

# raw_traces [WRITER ARGS...]: $dir/raw (test_online --write) and
# $dir/raw2 (test_merge --write), with the writers in $online and $merge,
# and with WRITER a third, $dir/raw3, written by WRITER ARGS... $dir/raw3;
# the test ends here when one cannot be written.
raw_traces() {
	"$online" --write "$dir/raw" >/dev/null || { echo "FAIL: writing the raw trace"; exit 1; }
	"$merge" --write "$dir/raw2" >/dev/null || { echo "FAIL: writing the second raw trace"; exit 1; }
	[ $# -eq 0 ] || "$@" "$dir/raw3" >/dev/null ||
		{ echo "FAIL: writing the third raw trace ($*)"; exit 1; }
}

# fail MESSAGE...: one failure, said and counted in $fails.
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# damage_raw RAW: two damaged copies of the raw trace RAW (test_online
# --write's) beside it, $dir/flip with a flipped byte in the middle of
# host-cpu0.vtf, $dir/cut with guest0-cpu0.vtf cut in half.
damage_raw() {
	cp -r "$1" "$dir/flip"
	python3 - "$dir/flip/host-cpu0.vtf" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[len(b) // 2] ^= 0xff
open(p, "wb").write(b)
PY
	cp -r "$1" "$dir/cut"
	g=$dir/cut/guest0-cpu0.vtf
	truncate -s $(($(stat -c %s "$g") / 2)) "$g"
}
