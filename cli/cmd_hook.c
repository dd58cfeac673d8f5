/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `vmscope hook DOMAIN OPERATION SUB-OP EXTRA`: libvirt's qemu hook
 * (installed as /etc/libvirt/hooks/qemu.d/vmscope, a one-line script).
 * Reads the domain XML on stdin, and when the domain opted in
 * (libvirt/README.md) tells vmscoped about started, stopped, release and
 * reconnect. Rules, because libvirt waits for a hook while it holds the
 * domain: never call libvirt (that deadlocks), take at most about a second
 * even when the daemon hangs, and always exit 0 — a daemon that is down, a
 * refused option or bad XML is a warning in syslog and on stderr, never a
 * domain that does not start.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "domxml.h"
#include "proto.h"

/*
 * How long a hook waits for vmscoped. A daemon that is not there fails at
 * once; this bounds a slow one. A host starting dozens of opted-in
 * domains together queues their hooks at the daemon, each answered after
 * a fork+exec, and on 2 busy cores 62 at once took up to 2.8 s: a hook
 * that gives up leaves its domain untraced.
 */
#define HOOK_TIMEOUT_MS 5000

/*
 * Milliseconds since this process was created (exec, dynamic loading and
 * all), from /proc/self/stat's start time (clock ticks since boot, so a
 * 1000/CLK_TCK ms resolution); -1 when unknown.
 */
static long ms_since_exec(void)
{
	char buf[1024], *p;
	unsigned long long start;
	struct timespec now;
	FILE *f = fopen("/proc/self/stat", "re");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	/* field 22; the command name (field 2) may hold spaces: skip past ')' */
	p = strrchr(buf, ')');
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu", &start) != 1 || clock_gettime(CLOCK_BOOTTIME, &now))
		return -1;
	return (long)(now.tv_sec * 1000 + now.tv_nsec / 1000000 -
		      (long long)(start * 1000 / (unsigned long long)sysconf(_SC_CLK_TCK)));
}

/*
 * With VMSCOPE_HOOK_TIMES=FILE in the environment (a test's wrapper sets
 * it; libvirt passes no such variable), append "DOMAIN OPERATION MS" for
 * this call: the hook's own time, measured from inside.
 */
static void note_time(int argc, char **argv)
{
	const char *path = getenv("VMSCOPE_HOOK_TIMES");
	FILE *f;

	if (!path || !*path || !(f = fopen(path, "ae")))
		return;
	fprintf(f, "%s %s %ld\n", argc > 1 ? argv[1] : "-", argc > 2 ? argv[2] : "-",
		ms_since_exec());
	fclose(f);
}

__attribute__((format(printf, 2, 3)))
static void say(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsyslog(prio, fmt, ap);
	va_end(ap);
}

/* All of stdin (libvirt fails a hook that does not take its input), at
 * most VD_XML_MAX + 1 bytes kept: more is refused by vd_parse. */
static char *read_stdin(size_t *len)
{
	size_t cap = VD_XML_MAX + 1, n = 0;
	char *buf = malloc(cap), sink[4096];
	ssize_t r;

	if (!buf)
		return NULL;
	for (;;) {
		if (n < cap)
			r = read(STDIN_FILENO, buf + n, cap - n);
		else
			r = read(STDIN_FILENO, sink, sizeof(sink));
		if (r <= 0)
			break;
		if (n < cap)
			n += (size_t)r;
	}
	*len = n;
	return buf;
}

static int hook_main(int argc, char **argv)
{
	struct dm_req q = { .op = DM_HOOK };
	Vmscope__Daemon__Response *resp;
	char why[300], *xml;
	size_t len = 0;
	int rc, e;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: vmscope hook DOMAIN OPERATION [SUB-OPERATION [EXTRA]] < DOMAIN_XML\n\n"
		       "libvirt's qemu hook (/etc/libvirt/hooks/qemu.d/vmscope runs it). For a\n"
		       "domain whose <metadata> holds vmscope's <trace> element (see\n"
		       "libvirt/README.md), tells vmscoped (socket $VMSCOPE_SOCKET or %s)\n"
		       "that it started, stopped, was released or reconnected. Never calls\n"
		       "libvirt and waits at most %d ms for the daemon.\n\n"
		       "Exit status: 0 in every case, so that libvirt never fails a domain\n"
		       "for vmscope: problems are warnings in syslog and on stderr.\n",
		       DM_SOCKET_DEFAULT, HOOK_TIMEOUT_MS);
		return EXIT_OK;
	}
	openlog("vmscope-hook", LOG_PID | LOG_PERROR, LOG_DAEMON);
	if (argc < 3) {
		say(LOG_WARNING, "called without DOMAIN OPERATION: nothing done");
		return EXIT_OK;
	}
	q.hook = dm_hook_from_name(argv[2]);
	xml = read_stdin(&len);
	if (q.hook == DM_HOOK_NONE || !xml) {
		free(xml);
		return EXIT_OK;		/* prepare, start, migrate...: not ours */
	}
	rc = vd_parse(xml, len, &q.dom, why, sizeof(why));
	free(xml);
	if (rc == VD_MALFORMED) {
		say(LOG_WARNING, "%s %s: domain XML unreadable, not traced: %s", argv[1], argv[2],
		    why);
		return EXIT_OK;
	}
	if (rc == VD_REFUSED) {
		say(LOG_WARNING, "%s: not traced, its vmscope:trace is refused: %s", q.dom.name,
		    why);
		return EXIT_OK;
	}
	if (!q.dom.traced)
		return EXIT_OK;
	if (strcmp(q.dom.name, argv[1]))
		say(LOG_WARNING, "hook called for '%s' with the XML of '%s': using the XML's",
		    argv[1], q.dom.name);
	e = dm_call(dm_socket_path(), &q, HOOK_TIMEOUT_MS, &resp, why, sizeof(why));
	if (e) {
		say(LOG_WARNING, "%s %s: vmscoped not told, domain not traced: %s", q.dom.name,
		    argv[2], why);
		return EXIT_OK;
	}
	if (resp->status)
		say(LOG_WARNING, "%s %s: vmscoped: %s", q.dom.name, argv[2],
		    resp->message ? resp->message : "failed");
	else
		say(LOG_INFO, "%s %s: vmscoped: %s", q.dom.name, argv[2],
		    resp->message ? resp->message : "ok");
	vmscope__daemon__response__free_unpacked(resp, NULL);
	return EXIT_OK;
}

int cmd_hook(int argc, char **argv)
{
	int rc = hook_main(argc, argv);

	note_time(argc, argv);
	return rc;
}
