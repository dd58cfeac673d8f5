#!/bin/sh
# check-kernel-log.sh DMESG_FILE...
# Exits 1 and prints the offending lines when a kernel log holds a warning,
# a bug, an oops, or a lockdep/KASAN/UBSAN-style report; 0 when clean.
# The out-of-tree/unsigned-module taint notices are expected and allowed.
pattern='WARNING:|BUG:|Oops|general protection fault|Kernel panic|kernel BUG|Call Trace:|RIP: [0-9a-f]{4}:|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|KASAN:|UBSAN:|KFENCE:|kmemleak:|blocked for more than|soft lockup|hard LOCKUP|self-detected stall|rcu_.*detected stall|refcount_t:|list_add corruption|list_del corruption|scheduling while atomic|sleeping function called from invalid context|Unable to handle kernel|segfault at .* in vmscope'
bad=0
for f in "$@"; do
	if [ ! -f "$f" ]; then
		echo "$f: missing (the kernel log was not collected)"
		bad=1
		continue
	fi
	if grep -Eq "$pattern" "$f"; then
		echo "$f: kernel reported a problem:"
		grep -En "$pattern" "$f" | head -n 20 | sed 's/^/  /'
		bad=1
	fi
done
exit $bad
