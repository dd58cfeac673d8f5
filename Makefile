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

# Debian packages from this tree (debian/README): vmscope,
# vmscope-host-dkms and vmscope-guest-dkms into build/deb/. Binary only,
# unsigned; tests are the test command's (nocheck). Your DEB_BUILD_OPTIONS
# come first, so they win (debhelper takes an option's first value), e.g.
# parallel=1.
DEB_VERSION := $(shell dpkg-parsechangelog -SVersion 2>/dev/null)
DEB_ARCH := $(shell dpkg-architecture -qDEB_HOST_ARCH 2>/dev/null)
deb:
	mkdir -p build/deb
	DEB_BUILD_OPTIONS="$(DEB_BUILD_OPTIONS) nocheck parallel=2" dpkg-buildpackage -b --no-sign \
		--buildinfo-option=-ubuild/deb --changes-option=-ubuild/deb \
		--buildinfo-file=build/deb/vmscope_$(DEB_VERSION)_$(DEB_ARCH).buildinfo \
		--changes-file=build/deb/vmscope_$(DEB_VERSION)_$(DEB_ARCH).changes

.PHONY: modules modules-clean install deb
