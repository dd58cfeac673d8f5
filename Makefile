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

# Userspace into the prefix (default /usr/local), vmscoped's systemd unit,
# and libvirt's hook /etc/libvirt/hooks/qemu.d/vmscope (libvirtd reads its
# hooks when it starts: restart it after the first install). DESTDIR works.
install:
	scripts/build.sh
	meson install -C build/release --no-rebuild

.PHONY: modules modules-clean install
