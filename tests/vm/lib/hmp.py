#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Run QEMU human-monitor commands through a monitor socket.

    hmp.py [--kallsyms FILE] SOCKET COMMAND...

Connects to a QEMU started with -monitor unix:SOCKET,server=on,wait=off,
runs each COMMAND in turn and prints "(qemu) COMMAND" then its output.
With --kallsyms, every RIP=ADDRESS in the core kernel's text is followed
by the function that holds it, read from FILE: the /proc/kallsyms of a
machine running the guest's kernel (the test host), moved to where a
nokaslr boot puts the kernel (_text at 0xffffffff81000000), as the
guests boot. Debian ships no System.map but a stub, and a module's
addresses differ between machines: those RIPs stay unnamed.
Exits 1 when the socket does not answer within 20 s: the caller is taking
a picture of a guest that stopped responding, and must not hang with it.
"""
import bisect
import re
import socket
import sys

PROMPT = b"(qemu) "


def read_to_prompt(sock):
    buf = b""
    while not buf.endswith(PROMPT):
        chunk = sock.recv(65536)
        if not chunk:
            sys.exit("hmp: QEMU closed the monitor")
        buf += chunk
    return buf[: -len(PROMPT)]


NOKASLR_TEXT = 0xFFFFFFFF81000000


def load_text_symbols(path):
    """Core kernel text symbols as (sorted addresses, names, end of text),
    shifted to a nokaslr kernel's addresses."""
    syms = []
    text = etext = None
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 3 or parts[1] not in "tT":  # 4 parts: a module's
                continue
            addr = int(parts[0], 16)
            syms.append((addr, parts[2]))
            if parts[2] == "_text":
                text = addr
            elif parts[2] == "_etext":
                etext = addr
    if text is None or etext is None or text == 0:
        sys.exit(f"hmp: {path}: no _text/_etext addresses (not root?)")
    shift = text - NOKASLR_TEXT
    syms.sort()
    return [a - shift for a, _ in syms], [n for _, n in syms], etext - shift


def symbolize(text, symbols):
    addrs, names, etext = symbols
    out = []
    for line in text.split("\n"):
        out.append(line)
        for m in re.finditer(r"RIP=([0-9a-f]{16})", line):
            rip = int(m.group(1), 16)
            if NOKASLR_TEXT <= rip < etext:
                i = bisect.bisect_right(addrs, rip) - 1
                out.append(f"    RIP {m.group(1)} = {names[i]}+{rip - addrs[i]:#x}")
            else:
                out.append(f"    RIP {m.group(1)}: outside the core kernel's text (a module, or user space)")
    return "\n".join(out)


def main():
    args = sys.argv[1:]
    symbols = None
    if args[:1] == ["--kallsyms"] and len(args) > 1:
        symbols = load_text_symbols(args[1])
        args = args[2:]
    if len(args) < 2:
        sys.exit("usage: hmp.py [--kallsyms FILE] SOCKET COMMAND...")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(20)
    try:
        sock.connect(args[0])
        read_to_prompt(sock)  # the banner
        for cmd in args[1:]:
            sock.sendall(cmd.encode() + b"\n")
            out = read_to_prompt(sock).decode(errors="replace")
            # the monitor echoes the command line with terminal escapes
            lines = out.replace("\r", "").split("\n")[1:]
            print(f"(qemu) {cmd}")
            text = "\n".join(line for line in lines if line.strip())
            print(symbolize(text, symbols) if symbols else text)
    except (OSError, socket.timeout) as e:
        sys.exit(f"hmp: {args[0]}: {e}")


main()
