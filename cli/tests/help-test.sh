#!/bin/sh
# Each command's --help against its option table (util_args.h's ARGS_*
# entries in its source): every option of the table is in the help, and
# every option the help names is one the command takes (getopt does not
# call it unrecognized). Nothing runs: each option is given with a value
# and followed by an option no command has, which ends parsing with a
# usage error if nothing did before.
# Usage: help-test.sh PATH-TO-vmscope PATH-TO-vmscoped
set -u
vmscope=$1
vmscoped=$2
src=$(dirname "$0")/..
fails=0
out=$(mktemp); trap 'rm -f "$out"' EXIT

# command (words joined by +) and the source holding its table; `session
# start`'s options are read after its DOMAIN; "vmscoped" is the daemon,
# a program of its own
while read -r cmd file; do
	if [ "$cmd" = vmscoped ]; then
		exe=$vmscoped; set --
	else
		exe=$vmscope
		# shellcheck disable=SC2046 # "report+exits" is two words
		set -- $(echo "$cmd" | tr + ' ')
	fi
	name="$(basename "$exe")${*:+ $*}"
	if ! "$exe" "$@" --help >"$out" 2>&1; then
		echo "FAIL: $name --help"; fails=$((fails + 1)); continue
	fi
	help=$(cat "$out")
	# the table's long names (a short-only entry, ARGS_*(NULL, 'k', ...), has none)
	names=$(grep -oE 'ARGS_[A-Z_]+\("[a-z-]+"' "$src/$file" | sed 's/.*("//; s/"$//')
	[ -n "$names" ] || { echo "FAIL: no option table in $file"; fails=$((fails + 1)); }
	for n in $names; do
		if printf '%s\n' "$help" | grep -Eq -- "--$n([^a-z-]|$)"; then
			echo "ok: $name --help names --$n"
		else
			echo "FAIL: $name --help does not name --$n ($file has it)"
			fails=$((fails + 1))
		fi
	done
	# the options the help lists: in its synopsis (up to the first blank
	# line), and each at the start of a line of its own ("  --NAME",
	# "  -k, --NAME"; deeper lines continue a description)
	listed=$( (printf '%s\n' "$help" | sed '/^$/q'
		   printf '%s\n' "$help" | grep -E -- '^ {1,4}(-[a-zA-Z], )?--[a-z]') |
		 grep -oE -- '--[a-z][a-z-]+' | sort -u)
	for n in $listed; do
		[ "$n" = --help ] && continue
		"$exe" "$@" "$n=1" --vmscope-no-such-option >"$out" 2>&1
		if grep -Eq -- "unrecognized option '$n(=|')" "$out"; then
			echo "FAIL: $name --help names $n, which it refuses"
			fails=$((fails + 1))
		else
			echo "ok: $name takes $n"
		fi
	done
done <<'LIST'
version cmd_version.c
sync-once cmd_sync_once.c
list cmd_list.c
stats cmd_stats.c
record cmd_record.c
dump cmd_dump.c
merge cmd_merge.c
export cmd_export.c
report+exits cmd_report_exits.c
report+sched cmd_report_sched.c
top cmd_top.c
report+wake cmd_report_wake.c
sync-emitter cmd_sync_emitter.c
session+start+d cmd_daemon.c
agent ../agent/cmd_agent.c
vmscoped ../daemon/vmscoped.c
LIST

[ "$fails" -eq 0 ]
