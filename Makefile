# Top-level convenience targets. Userspace builds with Meson (see README.md);
# this file drives the kernel modules through Kbuild.
KDIR ?= /usr/src/linux-headers-$(shell $(CURDIR)/scripts/kver.sh)
export KDIR

modules:
	$(MAKE) -C host-kmod
	$(MAKE) -C guest-kmod

modules-clean:
	$(MAKE) -C host-kmod clean
	$(MAKE) -C guest-kmod clean

.PHONY: modules modules-clean
