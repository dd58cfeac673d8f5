#!/usr/bin/env python3
"""Create and destroy N KVM VMs (each with an in-kernel irqchip and one
vCPU, so that the preempt-notifier and APIC static keys would flip) while
two pipe ping-pong pairs keep the CPUs context-switching; prints progress
and 'done N SECONDS'. Used by tests/vm/tests/harness-kvm-hold.sh."""
import fcntl
import os
import signal
import sys
import time

KVM_CREATE_VM = 0xAE01
KVM_CREATE_IRQCHIP = 0xAE60
KVM_CREATE_VCPU = 0xAE41


def pingpong():
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()
    if os.fork() == 0:
        while True:
            os.read(r1, 1)
            os.write(w2, b"x")
    while True:
        os.write(w1, b"x")
        os.read(r2, 1)


def main():
    n = int(sys.argv[1])
    os.setpgid(0, 0)
    loaders = []
    for _ in range(2):
        pid = os.fork()
        if pid == 0:
            pingpong()
        loaders.append(pid)
    start = time.time()
    try:
        kvm = os.open("/dev/kvm", os.O_RDWR)
        for i in range(n):
            vm = fcntl.ioctl(kvm, KVM_CREATE_VM, 0)
            fcntl.ioctl(vm, KVM_CREATE_IRQCHIP, 0)
            vcpu = fcntl.ioctl(vm, KVM_CREATE_VCPU, 0)
            os.close(vcpu)
            os.close(vm)
            if i % 20 == 0:
                print("vm", i, round(time.time() - start, 1), flush=True)
        print("done", n, round(time.time() - start, 1), flush=True)
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        os.killpg(0, signal.SIGTERM)


main()
