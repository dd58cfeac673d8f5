#!/bin/sh
# manpage-test.sh PAGE...: each man page renders without a groff warning
# and holds a section per command its program's help lists.
fail=0
for page in "$@"; do
	err=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
	if [ -n "$err" ]; then
		echo "FAIL: $page: groff says: $err"
		fail=1
	fi
	# the description is the help; every "commands:" entry has a section
	for cmd in $(sed -n '/^commands:$/,/^$/s/^  \([a-z][a-z0-9-]*\) .*/\1/p' "$page"); do
		grep -q "^\.SS \"[a-z]* $cmd\"\$" "$page" || {
			echo "FAIL: $page: no section for command $cmd"
			fail=1
		}
	done
	echo "$page: $(grep -c '^\.SS' "$page") command sections"
done
exit $fail
