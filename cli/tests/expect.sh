# Sourced by the command tests: expect STATUS PATTERN -- ARGS... runs
# "$exe" ARGS, passes when it exits STATUS and its output (stdout and
# stderr, in "$out") matches the extended regex PATTERN; counts failures
# in $fails. expect_full: the same with stdout on /dev/full (a full disk),
# PATTERN matched against stderr.
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
