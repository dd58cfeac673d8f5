# Helpers of the tests with a real libvirtd in the test host
# (tests/vm/tests/libvirt-hook.sh, metrics-prometheus.sh source it).

# domain_pid NAME: running domain NAME's QEMU pid (libvirt's pid file) as
# the harness's guest pid file, so that wait_file on its files stops when
# that QEMU ends: a guest that dies silently fails the wait at once, and
# the harness's retry starts then, not after wait_file's 300 s.
domain_pid() {
	cp "/run/libvirt/qemu/$1.pid" "$VMTEST_GUESTS/$1/qemu.pid" ||
		fail "no pid file of domain $1 from libvirt"
}

# domain_xml NAME ENTRY VCPUS CID METADATA: a direct-kernel-boot domain
# that runs ENTRY of the test file, like guest_start's QEMU command line.
domain_xml() {
	_dir=$VMTEST_GUESTS/$1
	rm -rf "$_dir"
	mkdir -p "$_dir"
	cat >"$_dir/job.env" <<EOJ
VMTEST_ROLE='guest:$1'
VMTEST_REPO='$VMTEST_REPO'
VMTEST_TEST='$VMTEST_TEST'
VMTEST_ENTRY='$2'
VMTEST_KVER='$VMTEST_KVER'
VMTEST_KERNEL='$VMTEST_KERNEL'
VMTEST_INITRD='$VMTEST_INITRD'
VMTEST_BUILD='$VMTEST_BUILD'
VMTEST_GUEST_CID='$4'
EOJ
	cat <<EOX
<domain type='kvm' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>
  <name>$1</name>
  <memory unit='MiB'>512</memory>
  <vcpu>$3</vcpu>
  <metadata>$5</metadata>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>$VMTEST_KERNEL</kernel>
    <initrd>$VMTEST_INITRD</initrd>
    <cmdline>$VMTEST_GUEST_APPEND</cmdline>
  </os>
  <features><acpi/><apic/></features>
  <cpu mode='host-passthrough'><feature policy='disable' name='xsave'/></cpu>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>destroy</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <filesystem type='mount' accessmode='passthrough' multidevs='remap'>
      <source dir='/'/><target dir='root'/><readonly/>
    </filesystem>
    <filesystem type='mount' accessmode='passthrough'>
      <source dir='$_dir'/><target dir='results'/>
    </filesystem>
    <vsock model='virtio'><cid auto='no' address='$4'/></vsock>
    <serial type='file'><source path='$_dir/console.log'/><target port='0'/></serial>
    <controller type='usb' model='none'/>
    <memballoon model='none'/>
  </devices>
  <qemu:commandline>
    <qemu:arg value='-d'/><qemu:arg value='cpu_reset,guest_errors'/>
    <qemu:arg value='-D'/><qemu:arg value='$_dir/qemu-debug.log'/>
  </qemu:commandline>
</domain>
EOX
}

# firmware_xml NAME CID METADATA [MEM_MB]: a domain with no OS (64 MiB
# unless MEM_MB): its firmware looks for a boot device and waits. libvirt,
# the hook and vmscoped handle it as any other domain; its QEMU makes KVM
# exits.
firmware_xml() {
	cat <<EOX
<domain type='kvm'>
  <name>$1</name>
  <memory unit='MiB'>${4:-64}</memory>
  <vcpu>1</vcpu>
  <metadata>$3</metadata>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <vsock model='virtio'><cid auto='no' address='$2'/></vsock>
    <controller type='usb' model='none'/>
    <memballoon model='none'/>
  </devices>
</domain>
EOX
}

# libvirtd_start: libvirtd as it runs here (no virtlogd, no cgroups, no
# security driver), its log in /vmtest/libvirtd.log; returns once it
# answers, with LIBVIRT_DEFAULT_URI set for virsh
libvirtd_start() {
	cat >/etc/libvirt/qemu.conf <<'EOC'
namespaces = []
user = "root"
group = "root"
security_driver = "none"
stdio_handler = "file"
cgroup_controllers = []
remember_owner = 0
EOC
	LIBVIRT_LOG_OUTPUTS="3:file:/vmtest/libvirtd.log" libvirtd >/vmtest/libvirtd.out 2>&1 &
	for _ in $(seq 300); do virsh -c qemu:///system version >/dev/null 2>&1 && break; sleep 0.2; done
	check "libvirtd answers" virsh -c qemu:///system version
	export LIBVIRT_DEFAULT_URI=qemu:///system
}
