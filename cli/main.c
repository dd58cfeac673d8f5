/* vmscope: entry point and subcommand dispatch. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <vmscope/version.h>

#include "cmd_agent.h"
#include "commands.h"

static const struct command commands[] = {
	{ "version", "show the tool's version and the loaded modules' versions", cmd_version },
	{ "sync-once", "(in a guest) issue one clock-sync hypercall and print its timestamps", cmd_sync_once },
	{ "list", "list every event, which module records it (host, guest, both), its format", cmd_list },
	{ "stats", "start/stop host probing and show per-event counters", cmd_stats },
	{ "record", "record host events of VMs into a trace folder", cmd_record },
	{ "dump", "print every event of a trace, its losses, gaps and damage", cmd_dump },
	{ "merge", "one timeline in host time: align guest clocks, merge all streams", cmd_merge },
	{ "export", "a trace (raw or merged) as Perfetto protobuf or CTF 1.8 (babeltrace2)", cmd_export },
	{ "report", "exit latency per guest task, guest vs host scheduling, wake-ups", cmd_report },
	{ "top", "live exits and vCPU scheduling per interval (or --replay a trace)", cmd_top },
	{ "sync-emitter", "(in a guest) start/stop the periodic clock-sync hypercalls, show counters", cmd_sync_emitter },
	{ "agent", "(in a guest) record the guest and stream it to the host over vsock", cmd_agent },
	{ "daemon", "ask vmscoped whether it runs (status)", cmd_daemon },
	{ "session", "the daemon's tracing sessions: list, start DOMAIN, stop DOMAIN", cmd_session },
	{ "hook", "libvirt's qemu hook: tell vmscoped about domains that opted in", cmd_hook },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: vmscope COMMAND [OPTIONS]\n\n"
		"Guest-aware tracing for KVM.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-13s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n`vmscope COMMAND --help` describes each command.\n");
}

/*
 * Every command's exit comes through here: a report cut short by a full
 * disk (`vmscope report ... > file`) must not exit 0. Output still in
 * stdout's buffer is written now; a write that failed earlier left the
 * error indicator set; close() can fail too (NFS).
 */
static int finish(const char *name, int status)
{
	/* the reason of a write that failed earlier is gone with its errno */
	const char *why = ferror(stdout) ? "a write failed" : NULL;

	if (fflush(stdout))
		why = strerror(errno);
	if (fclose(stdout) && !why)
		why = strerror(errno);
	if (!why)
		return status;
	fprintf(stderr, "vmscope%s%s: writing the standard output: %s\n", name ? " " : "",
		name ? name : "", why);
	return EXIT_FAILURE_RUNTIME;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
		usage(stdout);
		return finish(NULL, EXIT_OK);
	}
	if (!strcmp(name, "--version")) {
		printf("vmscope %s\n", VMSCOPE_VERSION_STRING);
		return finish(NULL, EXIT_OK);
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(name, commands[i].name))
			return finish(name, commands[i].run(argc - 1, argv + 1));

	fprintf(stderr, "vmscope: unknown command '%s'\n\n", name);
	usage(stderr);
	return EXIT_USAGE;
}
