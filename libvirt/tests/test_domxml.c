/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vd_parse on domain XMLs a libvirt hook can receive: accepted (every
 * option, defaults, namespace matched by URI not prefix), absent (no
 * element, another application's metadata, enabled="no"), refused (each
 * bad option), the triggered windows' options (each accepted at its
 * bounds, "off", absent; each refused naming its value) and malformed (not XML, wrong root, DTDs and entities,
 * oversize, other encodings, bad name/uuid/cid).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tests/lib/check.h"
#include "domxml.h"

#define NS "http://vmscope.org/xmlns/trace/1"

/* A live XML as libvirt 9.0 passes it to the qemu hook at "started". */
static const char live_head[] =
	"<domain type='kvm' id='1'>\n"
	"  <name>traced-vm</name>\n"
	"  <uuid>6a1f0c1e-6c38-4b0e-9a4a-2f3d9c7e5b10</uuid>\n"
	"  <metadata>\n"
	"    <other:app xmlns:other=\"http://example.org/other\"><x/></other:app>\n";
static const char live_tail[] =
	"  </metadata>\n"
	"  <memory unit='KiB'>262144</memory>\n"
	"  <vcpu placement='static'>2</vcpu>\n"
	"  <os><type arch='x86_64' machine='pc-q35-7.2'>hvm</type>"
	"<kernel>/boot/vmlinuz</kernel></os>\n"
	"  <devices>\n"
	"    <emulator>/usr/bin/qemu-system-x86_64</emulator>\n"
	"    <vsock model='virtio'><cid auto='no' address='7'/>"
	"<alias name='vsock0'/></vsock>\n"
	"  </devices>\n"
	"</domain>\n";

static int parse_with(const char *meta, struct vd_domain *d, char *why)
{
	size_t len = strlen(live_head) + strlen(meta) + strlen(live_tail);
	char *x = malloc(len + 1);
	int rc;

	snprintf(x, len + 1, "%s%s%s", live_head, meta, live_tail);
	rc = vd_parse(x, len, d, why, 200);
	free(x);
	return rc;
}

static int parse_str(const char *xml, struct vd_domain *d, char *why)
{
	return vd_parse(xml, strlen(xml), d, why, 200);
}

static void accepted(void)
{
	struct vd_domain d;
	char why[200];
	int rc;

	rc = parse_with("<vmscope:trace xmlns:vmscope='" NS "' events='kvm_exit,sched' "
			"mode='flight' buffer-size='4M' duration='10m' output='/srv/traces'/>",
			&d, why);
	EXPECT(rc == VD_OK, "full options: rc %d (%s)", rc, why);
	EXPECT(d.traced == 1, "full options: traced %d", d.traced);
	EXPECT(!strcmp(d.name, "traced-vm"), "name '%s'", d.name);
	EXPECT(!strcmp(d.uuid, "6a1f0c1e-6c38-4b0e-9a4a-2f3d9c7e5b10"), "uuid '%s'", d.uuid);
	EXPECT(d.cid == 7, "cid %u", d.cid);
	EXPECT(!strcmp(d.opts.events, "kvm_exit,sched"), "events '%s'", d.opts.events);
	EXPECT(d.opts.mode == VD_MODE_FLIGHT, "mode %d", d.opts.mode);
	EXPECT(d.opts.buffer_size == 4ull << 20, "buffer %llu", d.opts.buffer_size);
	EXPECT(d.opts.duration_s == 600.0, "duration %f", d.opts.duration_s);
	EXPECT(!strcmp(d.opts.output, "/srv/traces"), "output '%s'", d.opts.output);

	/* defaults; any prefix, the URI decides */
	rc = parse_with("<vs:trace xmlns:vs='" NS "'/>", &d, why);
	EXPECT(rc == VD_OK && d.traced == 1, "minimal: rc %d traced %d (%s)", rc, d.traced, why);
	EXPECT(!d.opts.events[0] && d.opts.mode == VD_MODE_DEFAULT && !d.opts.buffer_size &&
	       d.opts.duration_s == 0 && !d.opts.output[0], "minimal: defaults changed");
	rc = parse_with("<trace xmlns='" NS "' enabled='yes' mode='discard'/>", &d, why);
	EXPECT(rc == VD_OK && d.traced == 1 && d.opts.mode == VD_MODE_DISCARD,
	       "default namespace: rc %d traced %d (%s)", rc, d.traced, why);

	/* the status-file form */
	rc = parse_str("<domstatus state='running'><domain><name>a</name><metadata>"
		       "<v:trace xmlns:v='" NS "'/></metadata></domain></domstatus>", &d, why);
	EXPECT(rc == VD_OK && d.traced && !strcmp(d.name, "a") && d.cid == 0 && !d.uuid[0],
	       "domstatus: rc %d (%s)", rc, why);
}

static void absent(void)
{
	struct vd_domain d;
	char why[200];
	int rc;

	rc = parse_with("", &d, why);
	EXPECT(rc == VD_OK && !d.traced && d.cid == 7 && !strcmp(d.name, "traced-vm"),
	       "no element: rc %d traced %d", rc, d.traced);
	rc = parse_with("<vmscope:trace xmlns:vmscope='http://example.org/not-vmscope'/>", &d,
			why);
	EXPECT(rc == VD_OK && !d.traced, "prefix without our URI: rc %d traced %d", rc,
	       d.traced);
	rc = parse_with("<vmscope:trace xmlns:vmscope='" NS "' enabled='no' mode='flight'/>", &d,
			why);
	EXPECT(rc == VD_OK && !d.traced, "enabled=no: rc %d traced %d", rc, d.traced);
	rc = parse_str("<domain><name>bare</name></domain>", &d, why);
	EXPECT(rc == VD_OK && !d.traced && !strcmp(d.name, "bare"), "bare: rc %d (%s)", rc, why);
	/* a <trace> outside <metadata> is not the opt-in */
	rc = parse_str("<domain><name>b</name><v:trace xmlns:v='" NS "'/></domain>", &d, why);
	EXPECT(rc == VD_OK && !d.traced, "outside metadata: rc %d traced %d", rc, d.traced);
}

static void refused(void)
{
	static const char *const bad[] = {
		"<v:trace xmlns:v='" NS "' mode='ring'/>",
		"<v:trace xmlns:v='" NS "' mode=''/>",
		"<v:trace xmlns:v='" NS "' buffer-size='4K'/>",
		"<v:trace xmlns:v='" NS "' buffer-size='1G'/>",
		"<v:trace xmlns:v='" NS "' buffer-size='18446744073709551615G'/>",
		"<v:trace xmlns:v='" NS "' buffer-size='-1'/>",
		"<v:trace xmlns:v='" NS "' duration='0'/>",
		"<v:trace xmlns:v='" NS "' duration='nan'/>",
		"<v:trace xmlns:v='" NS "' duration='inf'/>",
		"<v:trace xmlns:v='" NS "' duration='1e3'/>",
		"<v:trace xmlns:v='" NS "' duration='5d'/>",
		"<v:trace xmlns:v='" NS "' duration='9999999h'/>",
		"<v:trace xmlns:v='" NS "' events='kvm;rm -rf'/>",
		"<v:trace xmlns:v='" NS "' events='kvm,,sched'/>",
		"<v:trace xmlns:v='" NS "' events=',kvm'/>",
		"<v:trace xmlns:v='" NS "' output='relative/path'/>",
		"<v:trace xmlns:v='" NS "' output='/var/lib/../../etc'/>",
		"<v:trace xmlns:v='" NS "' output='/srv/..'/>",
		"<v:trace xmlns:v='" NS "' output='/srv/a&#10;b'/>",
		"<v:trace xmlns:v='" NS "' enabled='true'/>",
		"<v:trace xmlns:v='" NS "' buffersize='4M'/>",
		"<v:trace xmlns:v='" NS "' xmlns:o='http://o' o:mode='flight'/>",
		"<v:trace xmlns:v='" NS "'><v:events>kvm</v:events></v:trace>",
		"<v:trace xmlns:v='" NS "'/><v:trace xmlns:v='" NS "'/>",
		"<v:tracing xmlns:v='" NS "'/>",
	};
	struct vd_domain d;
	char why[200];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = parse_with(bad[i], &d, why);

		EXPECT(rc == VD_REFUSED && !d.traced && why[0],
		       "refused #%zu %s: rc %d traced %d", i, bad[i], rc, d.traced);
		/* the facts for the warning are still there */
		EXPECT(!strcmp(d.name, "traced-vm") && d.cid == 7, "refused #%zu: name '%s'", i,
		       d.name);
	}
	/* ".." inside a name is fine */
	EXPECT(parse_with("<v:trace xmlns:v='" NS "' output='/srv/a..b/..c'/>", &d, why) == VD_OK,
	       "output a..b: %s", why);
}

/* The triggered windows' attributes (daemon/README.md, "Triggered windows"). */
static void triggers(void)
{
	static const char *const bad[] = {
		"trigger-exit-us='0'",
		"trigger-exit-us='3600000001'",
		"trigger-stall-us='18446744073709551615'",
		"trigger-stall-us='99999999999999999999999999'",
		"trigger-stall-us='-1'",
		"trigger-stall-us='+5'",
		"trigger-stall-us=' 5'",
		"trigger-stall-us='5 '",
		"trigger-stall-us='0x10'",
		"trigger-stall-us='20ms'",
		"trigger-stall-us='1e3'",
		"trigger-stall-us=''",
		"trigger-stall-us='OFF'",
		"snapshot-before-ms='0'",
		"snapshot-before-ms='600001'",
		"snapshot-after-ms='off'",
		"snapshot-after-ms='18446744073709551616'",
	};
	struct vd_domain d;
	char why[200], meta[200];
	int rc;

	rc = parse_with("<v:trace xmlns:v='" NS "' trigger-exit-us='5000' "
			"trigger-stall-us='20000' snapshot-before-ms='3000' "
			"snapshot-after-ms='1500'/>", &d, why);
	EXPECT(rc == VD_OK && d.traced, "triggers: rc %d (%s)", rc, why);
	EXPECT(d.opts.trigger_exit_us == 5000 && d.opts.trigger_stall_us == 20000 &&
	       d.opts.snapshot_before_ms == 3000 && d.opts.snapshot_after_ms == 1500,
	       "triggers: %llu %llu %llu %llu", (unsigned long long)d.opts.trigger_exit_us,
	       (unsigned long long)d.opts.trigger_stall_us,
	       (unsigned long long)d.opts.snapshot_before_ms,
	       (unsigned long long)d.opts.snapshot_after_ms);
	EXPECT(!vd_check_triggers(&d.opts, why, sizeof(why)), "its own check: %s", why);
	/* the bounds, and "off" */
	rc = parse_with("<v:trace xmlns:v='" NS "' trigger-exit-us='off' "
			"trigger-stall-us='3600000000' snapshot-before-ms='1' "
			"snapshot-after-ms='600000'/>", &d, why);
	EXPECT(rc == VD_OK && d.opts.trigger_exit_us == VD_TRIGGER_OFF &&
	       d.opts.trigger_stall_us == 3600000000ull && d.opts.snapshot_before_ms == 1 &&
	       d.opts.snapshot_after_ms == 600000, "bounds: rc %d (%s)", rc, why);
	EXPECT(!vd_check_triggers(&d.opts, why, sizeof(why)), "bounds' check: %s", why);
	rc = parse_with("<v:trace xmlns:v='" NS "' trigger-stall-us='1'/>", &d, why);
	EXPECT(rc == VD_OK && d.opts.trigger_stall_us == 1 && !d.opts.trigger_exit_us &&
	       !d.opts.snapshot_before_ms && !d.opts.snapshot_after_ms,
	       "one threshold, the rest the daemon's: rc %d (%s)", rc, why);
	/* absent: every one the daemon's */
	rc = parse_with("<v:trace xmlns:v='" NS "' mode='flight'/>", &d, why);
	EXPECT(rc == VD_OK && !d.opts.trigger_exit_us && !d.opts.trigger_stall_us &&
	       !d.opts.snapshot_before_ms && !d.opts.snapshot_after_ms, "absent: rc %d", rc);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *val = strchr(bad[i], '\'') + 1;
		char want[80];

		/* the hook's warning names the domain (d.name) and says the
		 * attribute and its value, as written (cut at 24 bytes) */
		snprintf(want, sizeof(want), "%.*s='%.*s'", (int)strcspn(bad[i], "="), bad[i],
			 (int)(strcspn(val, "'") > 24 ? 24 : strcspn(val, "'")), val);
		snprintf(meta, sizeof(meta), "<v:trace xmlns:v='" NS "' %s/>", bad[i]);
		rc = parse_with(meta, &d, why);
		EXPECT(rc == VD_REFUSED && !d.traced, "trigger #%zu %s: rc %d", i, bad[i], rc);
		EXPECT(!strcmp(d.name, "traced-vm") && strstr(why, want),
		       "trigger #%zu %s: reason '%s' lacks %s", i, bad[i], why, want);
	}
	rc = parse_with("<v:trace xmlns:v='" NS "' trigger-stall='20000'/>", &d, why);
	EXPECT(rc == VD_REFUSED && strstr(why, "unknown attribute 'trigger-stall'"),
	       "a typo of an attribute: rc %d (%s)", rc, why);

	/* the request parser's check: each bound and one past it */
	struct vd_opts o = { .trigger_exit_us = VD_TRIGGER_OFF, .trigger_stall_us = 3600000000ull,
			     .snapshot_before_ms = 600000, .snapshot_after_ms = 0 };

	EXPECT(!vd_check_triggers(&o, why, sizeof(why)), "check at the bounds: %s", why);
	o.trigger_stall_us = 3600000001ull;
	EXPECT(vd_check_triggers(&o, why, sizeof(why)) && strstr(why, "3600000001"),
	       "stall over an hour: %s", why);
	o.trigger_stall_us = 0;
	o.trigger_exit_us = VD_TRIGGER_OFF - 1;
	EXPECT(vd_check_triggers(&o, why, sizeof(why)) && strstr(why, "trigger-exit-us"),
	       "exit 2^64-2: %s", why);
	o.trigger_exit_us = 0;
	o.snapshot_after_ms = 600001;
	EXPECT(vd_check_triggers(&o, why, sizeof(why)) && strstr(why, "snapshot-after-ms"),
	       "after 600001: %s", why);
}

static void malformed(void)
{
	static const char *const bad[] = {
		"",
		"not xml",
		"<domain><name>x</name>",
		"<domain><name>x</name></domian>",
		"<vm><name>x</name></vm>",
		"<domain/>",
		"<domain><name></name></domain>",
		"<domain><name>a/b</name></domain>",
		"<domain><name>..</name></domain>",
		"<domain><name>a&#1;b</name></domain>",
		"<domain><name>x</name><uuid>not-a-uuid</uuid></domain>",
		"<domain><name>x</name><uuid>6a1f0c1e-6c38-4b0e-9a4a-2f3d9c7e5b1g</uuid></domain>",
		"<domain><name>x</name><devices><vsock><cid address='2'/></vsock></devices></domain>",
		"<domain><name>x</name><devices><vsock><cid address='0x10'/></vsock></devices></domain>",
		"<domain><name>x</name><devices><vsock><cid address='4294967295'/></vsock></devices></domain>",
		"<domain><name>x</name><devices><vsock><cid address='-5'/></vsock></devices></domain>",
		"<domain><name>&undefined;</name></domain>",
		/* entities: never expanded, never fetched */
		"<!DOCTYPE domain [<!ENTITY a 'aaaaaaaaaa'><!ENTITY b '&a;&a;&a;&a;&a;&a;'>]>"
		"<domain><name>&b;</name></domain>",
		"<!DOCTYPE domain SYSTEM 'http://example.org/x.dtd'><domain><name>x</name></domain>",
		"<?xml version='1.0'?>\n<!DOCTYPE domain><domain><name>x</name></domain>",
		"<domain xmlns:x='" NS "'><name>x</name></domain><extra/>",
	};
	struct vd_domain d;
	char why[200];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = parse_str(bad[i], &d, why);

		EXPECT(rc == VD_MALFORMED && !d.traced && why[0], "malformed #%zu %s: rc %d (%s)",
		       i, bad[i], rc, why);
	}

	/* a name too long for a path component */
	char big[400];

	snprintf(big, sizeof(big), "<domain><name>%0*d</name></domain>", 200, 0);
	EXPECT(parse_str(big, &d, why) == VD_MALFORMED, "long name accepted");

	/* UTF-16 with a BOM: read as UTF-8, it is not XML */
	static const char u16[] = "\xff\xfe<\0d\0o\0m\0a\0i\0n\0/\0>\0";

	EXPECT(vd_parse(u16, sizeof(u16) - 1, &d, why, sizeof(why)) == VD_MALFORMED,
	       "UTF-16 accepted");

	/* over the size limit, even when it would be valid */
	size_t n = VD_XML_MAX + 1;
	char *x = malloc(n + 1);

	memset(x, ' ', n);
	memcpy(x, "<domain><name>x</name></domain>", 31);
	x[n] = '\0';
	EXPECT(vd_parse(x, n, &d, why, sizeof(why)) == VD_MALFORMED && strstr(why, "larger"),
	       "oversize: %s", why);
	EXPECT(vd_parse(x, n - 1, &d, why, sizeof(why)) == VD_OK, "at the limit: %s", why);
	free(x);
}

static void checks(void)
{
	char why[100];

	EXPECT(!vd_check_output("", why, sizeof(why)), "empty output is the default");
	EXPECT(!vd_check_output("/", why, sizeof(why)), "/ refused");
	EXPECT(vd_check_output("/..", why, sizeof(why)), "/.. accepted");
	EXPECT(!vd_check_events("", why, sizeof(why)), "empty events are all");
	EXPECT(vd_check_events("KVM", why, sizeof(why)), "upper case accepted");
	EXPECT(!vd_check_uuid("", why, sizeof(why)), "no uuid refused");
	EXPECT(vd_check_name("a\x7f", why, sizeof(why)), "DEL in a name accepted");
	EXPECT(!vd_check_name("my vm (test)", why, sizeof(why)), "spaces refused");
}

int main(void)
{
	accepted();
	absent();
	refused();
	triggers();
	malformed();
	checks();
	return check_result("test_domxml");
}
