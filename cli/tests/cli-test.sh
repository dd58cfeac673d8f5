#!/bin/sh
# Command-line behaviour of `vmscope` that needs no kernel module: help,
# usage errors, the errors a user sees when the module is absent, and a
# standard output that cannot be written (/dev/full) failing the command,
# numbers out of range. The ABI test reader vmscope-capture is no command
# of the product (tests/vm/tools/capture-test.sh tests it).
# Usage: cli-test.sh PATH-TO-vmscope
set -u
exe=$1
fails=0
out=$(mktemp); trap 'rm -f "$out"' EXIT

. "$(dirname "$0")/expect.sh"

expect 0 '^  version ' -- --help
expect 0 '^  sync-once ' -- --help
expect 2 'usage: vmscope COMMAND' --
expect 2 "unknown command 'frobnicate'" -- frobnicate
expect 0 '^vmscope [0-9]+\.[0-9]+\.[0-9]+$' -- --version
expect 0 'usage: vmscope version' -- version --help
expect 2 'unexpected argument' -- version extra
expect 2 "version: --require: host or guest, not 'moon'" -- version --require moon
expect 2 "sync-once: --seq: a number from 0 to 18446744073709551615 .*, not '-1'" -- sync-once --seq -1
expect 2 "sync-once: --token: a number from 0 to 18446744073709551615 .*, not '12x'" -- sync-once --token 12x
expect 2 "sync-once: --token: a number from 0 to 18446744073709551615 .*, not '0x1ffffffffffffffff'" -- sync-once --token 0x1ffffffffffffffff
expect 0 'usage: vmscope list' -- list -h
expect 2 "list: unexpected argument 'x'" -- list x
expect 2 "unrecognized option '--nope'" -- list --nope
expect 2 'usage: vmscope list' -- list --nope
expect 0 '^  sync-emitter ' -- --help
expect 0 'usage: vmscope sync-emitter start' -- sync-emitter --help
expect 2 '--period 0 is out of range: it must be between 1ms and 1s' -- sync-emitter start --period 0
expect 2 '--period 5s is out of range' -- sync-emitter start --period 5s
expect 2 '--period 999us is out of range' -- sync-emitter start --period 999us
expect 2 "'10x' is not a duration" -- sync-emitter start --period 10x
expect 2 "unknown action 'go'" -- sync-emitter go
expect 2 "option not valid with 'stop'" -- sync-emitter stop --period 10ms
expect 2 "unknown command 'capture'" -- capture --help
expect 0 '--domain NAME +a running libvirt domain' -- record --help
expect 1 "no domain vmscope-no-such-domain \(no vmscope-no-such-domain.pid in /run/libvirt/qemu, no vmscope-no-such-domain.xml in /etc/libvirt/qemu\)" -- record --domain vmscope-no-such-domain -o /nonexistent/t
expect 2 "--domain '../x': domain name" -- record --domain ../x -o /nonexistent/t
expect 0 'usage: vmscope session list' -- session --help
expect 2 'usage: vmscope session list' -- session frob
expect 0 'usage: vmscope daemon status' -- daemon --help
expect 0 'usage: vmscope hook DOMAIN OPERATION' -- hook --help
# every command's --help states its exit status (README: 0, 1, 2)
for c in version sync-once list stats record dump merge export "report exits" \
	"report sched" top sync-emitter agent daemon session hook; do
	# shellcheck disable=SC2086 # "report exits" is two words
	expect 0 'Exit status: 0' -- $c --help
done
# numbers out of range are usage errors, before anything else is looked at
expect 2 "record: --duration: '99999999999999999999999' is not a duration above 0 and at most" -- record --duration 99999999999999999999999 --all -o /nonexistent/t
expect 2 "record: --duration: '9000h' is not a duration" -- record --duration 9000h --all -o /nonexistent/t
expect 2 "record: --pid: a number from 1 to 1073741823, not '4294967296'" -- record --pid 4294967296 -o /nonexistent/t
expect 2 "record: --pid: a number from 1 to 1073741823, not ' 5'" -- record --pid ' 5' -o /nonexistent/t
expect 2 "record: --cid: a number from 3 to 4294967294, not '-1'" -- record --all --cid -1 -o /nonexistent/t
expect 2 "record: --guest-port: a number from 0 to 4294967294, not '4294967295'" -- record --all --guest-port 4294967295 -o /nonexistent/t
# named choices are refused naming the ones there are
expect 2 "record: --mode: discard or flight, not 'ring'" -- record --all --mode ring -o /nonexistent/t
expect 2 "session start: --mode: discard or flight, not 'ring'" -- session start d --mode ring
expect 0 'usage: vmscope session list' -- session start d --help
expect 2 "session start: unexpected argument 'x'" -- session start d x
expect 2 "session start: --trigger-exit-us='0': microseconds, 1 to 3600000000, or off" -- session start d --trigger-exit-us 0
expect 2 "session start: --trigger-stall-us='5ms': microseconds" -- session start d --trigger-stall-us 5ms
expect 2 "session start: --snapshot-after-ms='600001': milliseconds, 1 to 600000" -- session start d --snapshot-after-ms 600001
expect 2 "session start: --snapshot-before-ms='off': milliseconds" -- session start d --snapshot-before-ms off
expect 2 "merge: --tsc-breaks: auto, all or none, not 'some'" -- merge --tsc-breaks some /nonexistent/t
expect 2 "stats: --exit-reasons: auto, perf or verify, not 'x'" -- stats --exit-reasons x
expect 2 "report exits: --by: " -- report exits --by nothing /nonexistent/t
expect 2 "report sched: --tasks: a number from 0 to 100000, not '100001'" -- report sched --tasks 100001 /nonexistent/t
expect 2 "sync-emitter: --cpu: a number from 0 to 4294967295, not '-1'" -- sync-emitter status --cpu -1
expect 2 "agent: --sync-period: a number from 1 to 1000, not '0'" -- agent --sync-period 0
expect 2 "agent: unexpected argument 'x'" -- agent x
expect 2 'usage: vmscope dump' -- dump
expect 2 'usage: vmscope dump' -- dump a b
expect 2 "record: --metrics-fd '0': not an open SOCK_SEQPACKET socket" -- record --pid 1 --metrics-fd 0 -o /nonexistent/t </dev/null
# stdout on a full disk: exit 1 with a message, never 0
expect_full 1 'vmscope: writing the standard output' -- --help
expect_full 1 'vmscope list: writing the standard output' -- list
expect_full 1 'vmscope record: writing the standard output' -- record --help
# No module is loaded on the build machine itself.
if [ ! -e /dev/vmscope-host ]; then
	expect 0 'host   module: not loaded' -- version
	expect 1 'is vmscope_host.ko loaded' -- version --require host
fi
if [ ! -e /dev/vmscope-guest ]; then
	expect 1 'is vmscope_guest.ko loaded' -- sync-once
	expect 1 'is vmscope_guest.ko loaded' -- sync-emitter status
fi

[ "$fails" -eq 0 ]
