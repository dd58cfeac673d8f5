/* The vmscope subcommands. Each returns the process exit status. */
#ifndef VMSCOPE_CLI_COMMANDS_H
#define VMSCOPE_CLI_COMMANDS_H

/* Exit statuses shared by all commands. */
enum {
	EXIT_OK = 0,
	EXIT_FAILURE_RUNTIME = 1,	/* the command ran and failed */
	EXIT_USAGE = 2,			/* bad command line */
};

struct command {
	const char *name;
	const char *summary;	/* one line for `vmscope --help` */
	int (*run)(int argc, char **argv);
};

int cmd_version(int argc, char **argv);
int cmd_sync_once(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_sync_emitter(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_hook(int argc, char **argv);
int cmd_daemon(int argc, char **argv);
int cmd_session(int argc, char **argv);

#endif
