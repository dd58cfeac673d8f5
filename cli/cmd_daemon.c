/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `vmscope daemon status` and `vmscope session list|start|stop`: clients
 * of vmscoped's socket (daemon/proto.h). The options of `session start`
 * are `vmscope record`'s, checked by the same code as the hook's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "proto.h"
#include "rec_args.h"
#include "args.h"

#define CLIENT_TIMEOUT_MS 5000

static int call(struct dm_req *q, const char *who, int print_message)
{
	Vmscope__Daemon__Response *r;
	char why[300];
	int e = dm_call(dm_socket_path(), q, CLIENT_TIMEOUT_MS, &r, why, sizeof(why));

	if (e) {
		fprintf(stderr, "vmscope %s: %s\n", who, why);
		return EXIT_FAILURE_RUNTIME;
	}
	if (r->status)
		fprintf(stderr, "vmscope %s: %s\n", who, r->message ? r->message : "failed");
	else if (print_message)
		printf("%s\n", r->message ? r->message : "ok");
	if (q->op == DM_LIST && !r->status) {
		printf("%-24s %-9s %-8s %-5s %-20s %s\n", "DOMAIN", "STATE", "QEMU", "CID",
		       "STARTED (UTC)", "TRACE");
		for (size_t i = 0; i < r->n_sessions; i++) {
			const Vmscope__Daemon__Session *s = r->sessions[i];
			const Vmscope__Daemon__Domain *d = s->domain;
			time_t t = (time_t)(s->start_ns / 1000000000u);
			char when[32] = "-";
			struct tm tm;

			if (t && gmtime_r(&t, &tm))
				strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
			printf("%-24s %-9s %-8d %-5u %-20s %s\n", d && d->name ? d->name : "?",
			       s->state ? s->state : "?", d ? d->pid : 0, d ? d->cid : 0, when,
			       s->path ? s->path : "");
			if (s->detail && s->detail[0])
				printf("    %s\n", s->detail);
		}
	}
	e = r->status ? EXIT_FAILURE_RUNTIME : EXIT_OK;
	vmscope__daemon__response__free_unpacked(r, NULL);
	return e;
}

static void daemon_usage(FILE *out)
{
	fprintf(out, "usage: vmscope daemon status\n\n"
		"Ask vmscoped (socket $VMSCOPE_SOCKET or %s) whether it runs:\n"
		"its version, pid and active sessions.\n\n"
		"Exit status: 0 when it answers; 1 when it does not; 2 on a usage error.\n",
		DM_SOCKET_DEFAULT);
}

int cmd_daemon(int argc, char **argv)
{
	struct dm_req q = { .op = DM_STATUS };

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		daemon_usage(stdout);
		return EXIT_OK;
	}
	if (argc != 2 || strcmp(argv[1], "status")) {
		daemon_usage(stderr);
		return EXIT_USAGE;
	}
	return call(&q, "daemon status", 1);
}

static void session_usage(FILE *out)
{
	fprintf(out, "usage: vmscope session list\n"
		"       vmscope session start DOMAIN [--pid QEMU_PID] [--cid CID]\n"
		"                             [--events LIST] [--mode discard|flight]\n"
		"                             [--buffer-size S] [--duration T] [--output DIR]\n"
		"                             [--trigger-exit-us N|off] [--trigger-stall-us N|off]\n"
		"                             [--snapshot-before-ms N] [--snapshot-after-ms N]\n"
		"       vmscope session stop DOMAIN\n\n"
		"Talk to vmscoped (socket $VMSCOPE_SOCKET or %s).\n"
		"list: every session the daemon knows (active, and recent ones that ended),\n"
		"  its state (pending, recording, stopping, merging, done, failed) and folder.\n"
		"start: trace DOMAIN now, as if its libvirt hook said it started: QEMU pid\n"
		"  from libvirt's pid file unless --pid, vsock CID (whose guest agent's\n"
		"  connections go to its recorder) from --cid, else from guest-cid= on\n"
		"  QEMU's command line; the options are `vmscope record`'s\n"
		"  (--output: base folder, the trace goes to DIR/DOMAIN/START-TIME/).\n"
		"  A session of DOMAIN that records is ended first (a new trace).\n"
		"  --trigger-*, --snapshot-*: this domain's triggered windows, as the\n"
		"  domain's <vmscope:trace> attributes of those names set them (a\n"
		"  threshold in us or off, a window in ms); the daemon's options for\n"
		"  what is not given. They apply when vmscoped runs with --metrics.\n"
		"stop: stop DOMAIN's session; the daemon merges and finalizes it.\n\n"
		"Exit status: 0 when the daemon did it; 1 when it does not answer or\n"
		"refuses (it says why); 2 on a usage error.\n",
		DM_SOCKET_DEFAULT);
}

/* `session start`'s values into struct dm_req, checked as the hook checks
 * them: args_value_fn. */
static int take_events(void *args, const char *arg)
{
	struct vd_opts *o = &((struct dm_req *)args)->dom.opts;
	char why[200] = "";

	if (strlen(arg) >= sizeof(o->events) || vd_check_events(arg, why, sizeof(why))) {
		fprintf(stderr, "vmscope session: --events: %s\n", why[0] ? why : "too long");
		return EXIT_USAGE;
	}
	strcpy(o->events, arg);
	return 0;
}

static int take_mode(void *args, const char *arg)
{
	static const char *const modes[] = { "discard", "flight" };
	int k;

	if (args_choice("vmscope session start", "--mode", arg, modes, 2, &k))
		return EXIT_USAGE;
	((struct dm_req *)args)->dom.opts.mode = k ? VD_MODE_FLIGHT : VD_MODE_DISCARD;
	return 0;
}

static int take_buffer_size(void *args, const char *arg)
{
	struct vd_opts *o = &((struct dm_req *)args)->dom.opts;
	struct vmscope_session_cfg cfg;

	if (rec_parse_size(arg, &o->buffer_size) || rec_geometry(o->buffer_size, &cfg)) {
		fprintf(stderr, "vmscope session: --buffer-size '%s': between 8K "
			"and 64M per CPU\n", arg);
		return EXIT_USAGE;
	}
	return 0;
}

static int take_duration(void *args, const char *arg)
{
	struct vd_opts *o = &((struct dm_req *)args)->dom.opts;

	if (rec_parse_duration(arg, &o->duration_s) || o->duration_s <= 0) {
		fprintf(stderr, "vmscope session: '%s' is not a duration\n", arg);
		return EXIT_USAGE;
	}
	return 0;
}

static int take_output(void *args, const char *arg)
{
	struct vd_opts *o = &((struct dm_req *)args)->dom.opts;
	char why[200] = "";

	if (vd_check_output(arg, why, sizeof(why))) {
		fprintf(stderr, "vmscope session: --output: %s\n", why);
		return EXIT_USAGE;
	}
	strcpy(o->output, arg);
	return 0;
}

/* The triggered windows' options, named and checked as the metadata's
 * attributes are (libvirt/domxml.h). */
static int take_trigger(void *args, const char *name, const char *arg)
{
	char why[200] = "";

	if (vd_set_trigger(name, arg, &((struct dm_req *)args)->dom.opts, why, sizeof(why))) {
		fprintf(stderr, "vmscope session start: --%s\n", why);
		return EXIT_USAGE;
	}
	return 0;
}

static int take_exit_us(void *args, const char *arg)
{
	return take_trigger(args, "trigger-exit-us", arg);
}

static int take_stall_us(void *args, const char *arg)
{
	return take_trigger(args, "trigger-stall-us", arg);
}

static int take_before_ms(void *args, const char *arg)
{
	return take_trigger(args, "snapshot-before-ms", arg);
}

static int take_after_ms(void *args, const char *arg)
{
	return take_trigger(args, "snapshot-after-ms", arg);
}

/* CIDs 0-2 are the hypervisor's, the local and the host */
static const struct args_opt start_opts[] = {
	ARGS_NUM("pid", 0, struct dm_req, pid, 1, ARGS_PID_MAX),
	ARGS_NUM("cid", 0, struct dm_req, dom.cid, 3, ARGS_PID_MAX),
	ARGS_FN("events", 0, take_events),
	ARGS_FN("mode", 0, take_mode),
	ARGS_FN("buffer-size", 0, take_buffer_size),
	ARGS_FN("duration", 0, take_duration),
	ARGS_FN("output", 0, take_output),
	ARGS_FN("trigger-exit-us", 0, take_exit_us),
	ARGS_FN("trigger-stall-us", 0, take_stall_us),
	ARGS_FN("snapshot-before-ms", 0, take_before_ms),
	ARGS_FN("snapshot-after-ms", 0, take_after_ms),
	ARGS_END,
};

static const struct args_spec start_spec = { "vmscope session start", session_usage,
					     start_opts, 0 };

int cmd_session(int argc, char **argv)
{
	struct dm_req q = { 0 };
	char why[200];
	const char *verb = argc >= 2 ? argv[1] : "";

	if (!strcmp(verb, "--help") || !strcmp(verb, "-h")) {
		session_usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(verb, "list") && argc == 2) {
		q.op = DM_LIST;
		return call(&q, "session list", 0);
	}
	if ((strcmp(verb, "start") && strcmp(verb, "stop")) || argc < 3) {
		session_usage(stderr);
		return EXIT_USAGE;
	}
	q.op = !strcmp(verb, "start") ? DM_START : DM_STOP;
	if (strlen(argv[2]) >= sizeof(q.dom.name) ||
	    vd_check_name(argv[2], why, sizeof(why))) {
		fprintf(stderr, "vmscope session: '%s' is not a domain name\n", argv[2]);
		return EXIT_USAGE;
	}
	strcpy(q.dom.name, argv[2]);
	if (q.op == DM_STOP && argc != 3) {
		fprintf(stderr, "vmscope session stop: takes only DOMAIN\n");
		return EXIT_USAGE;
	}
	/* DOMAIN stands where getopt_long expects the program's name */
	int rc = q.op == DM_START ? args_run(&start_spec, &q, argc - 2, argv + 2) : -1;

	if (rc >= 0)
		return rc;
	return call(&q, verb[2] == 'a' ? "session start" : "session stop", 1);
}
