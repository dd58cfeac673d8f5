#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Hot-plug one vCPU into a running QEMU through its QMP socket.

    qmp-cpu-add.py SOCKET

Asks QEMU which vCPU slots are free (query-hotpluggable-cpus: a slot
without a qom-path), adds the first with device_add (its type and
properties as QEMU gave them), and prints "added TYPE PROPS". Exits 1
with QEMU's error, or when no slot is free (start QEMU with
-smp N,maxcpus=M, M > N).
"""
import json
import socket
import sys


def call(f, sock, cmd, args=None):
    msg = {"execute": cmd}
    if args is not None:
        msg["arguments"] = args
    sock.sendall((json.dumps(msg) + "\n").encode())
    for line in f:
        reply = json.loads(line)
        if "event" in reply:  # asynchronous events may come first
            continue
        if "error" in reply:
            sys.exit(f"qmp-cpu-add: {cmd}: {reply['error'].get('desc', reply['error'])}")
        return reply.get("return")
    sys.exit(f"qmp-cpu-add: {cmd}: QEMU closed the socket")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: qmp-cpu-add.py SOCKET")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(60)
    sock.connect(sys.argv[1])
    f = sock.makefile("r")
    json.loads(f.readline())  # the greeting
    call(f, sock, "qmp_capabilities")
    free = [c for c in call(f, sock, "query-hotpluggable-cpus") if "qom-path" not in c]
    if not free:
        sys.exit("qmp-cpu-add: no free vCPU slot (start QEMU with -smp N,maxcpus=M)")
    slot = min(free, key=lambda c: sorted(c["props"].items()))
    args = {"driver": slot["type"], "id": "hotplugged-cpu"}
    args.update(slot["props"])
    call(f, sock, "device_add", args)
    print(f"added {slot['type']} {json.dumps(slot['props'], sort_keys=True)}")


main()
