#!/bin/sh
# Prints the kernel version that vmscope builds its modules for and boots in
# its test VMs: the newest /usr/src/linux-headers-*-amd64 that has a matching
# /boot/vmlinuz-*. Exit status 1, with a message, when there is none.
best=""
for d in /usr/src/linux-headers-*-amd64; do
	[ -d "$d" ] || continue
	v=${d#/usr/src/linux-headers-}
	[ -f "/boot/vmlinuz-$v" ] || continue
	best=$(printf '%s\n%s\n' "$best" "$v" | sed '/^$/d' | sort -V | tail -n 1)
done
if [ -z "$best" ]; then
	echo "kver: no /usr/src/linux-headers-*-amd64 with a matching /boot/vmlinuz-*;" \
		"run scripts/install-deps.sh" >&2
	exit 1
fi
echo "$best"
