/*
 * `vmscope report exits`: its options, the walk and where the output goes
 * (analysis/report_exits.c prints it).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cmd_report.h"
#include "commands.h"
#include "ex_out.h"
#include "exits_svg.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: vmscope report exits [--json]\n"
		"                            [--by vm|vcpu|reason|task|port|msr|mmio|symbol|\n"
		"                                  mmio-region|npf|npf-region]\n"
		"                            [--sort count|total|p99|max] [--top N] [--svg FILE]\n"
		"                            [--accept-damage] TRACE\n\n"
		"VM exit latency (kvm_exit to the vCPU's next kvm_entry) from TRACE (below).\n"
		"Per VM and vCPU: time in the guest and time outside it,\n"
		"split into exits handled in the host kernel, userspace exits\n"
		"(kvm_userspace_exit to the next entry: QEMU's part) and halted (a HLT exit to\n"
		"the next entry). Then one row per group: count, total, share (of the\n"
		"observed time of the group's vCPUs: of its VM's, or of the vCPU with --by\n"
		"vcpu), min, p50, p90, p99, p99.9, max. Each exit is charged to the guest\n"
		"task that was running on its vCPU (from the guest's merged sched_switch,\n"
		"and the task each guest CPU ran when its session began): exits before the\n"
		"guest session began are \"(before guest session)\"; \"(unknown task)\" are\n"
		"exits after a loss in the trace, until the guest names the vCPU's task again\n"
		"(or, with a guest module older than ABI 1.2, before the first sched_switch).\n"
		"Percentiles come from log-linear histograms: within 0.8%% of an exact\n"
		"value at that rank; count, total, min and max are exact.\n\n"
		REPORT_TRACE_HELP
		"  --by vm|vcpu|reason|task  the grouping (default reason, within each VM);\n"
		"                        except by reason, each group lists its reasons\n"
		"  --by port|msr|mmio    what the exits accessed, as perf kvm stat's\n"
		"                        --event=ioport|mmio (and MSRs too), only the exits\n"
		"                        that did\n"
		"                        (the others are counted below the table): port\n"
		"                        I/O by port, direction (in, out) and access size\n"
		"                        (1, 2 or 4 bytes: inb, inw, inl), from the\n"
		"                        host's kvm_pio record in the exit; MSR accesses by\n"
		"                        MSR index (and the kernel's name for it) and read\n"
		"                        or write (rdmsr, wrmsr: kvm_msr);\n"
		"                        MMIO by the 4 KiB guest-physical page accessed and\n"
		"                        read or write (kvm_mmio). Latency is the whole exit\n"
		"                        (kvm_exit to the next kvm_entry), QEMU's part\n"
		"                        included. A recording without those events (the\n"
		"                        module records them unless --events leaves them out)\n"
		"                        has no exit in these tables. The longest exits then\n"
		"                        say what each accessed (an MMIO exit its address).\n"
		"                        At most %d MMIO pages: the exits of any further\n"
		"                        page are counted below the table\n"
		"  --by npf              nested page faults (AMD NPF, Intel EPT violation\n"
		"                        exits: the guest touched guest-physical memory the\n"
		"                        host had not mapped for it yet, or MMIO) by the\n"
		"                        4 KiB guest-physical page and write or read (a read\n"
		"                        or an instruction fetch), from the host's\n"
		"                        kvm_page_fault record in the exit; only those\n"
		"                        exits, at most %d pages, as --by mmio\n"
		"  --by mmio-region|npf-region  the same exits as --by mmio and --by npf,\n"
		"                        by region: a run of adjacent 4 KiB pages that each\n"
		"                        had such an exit (a device's BAR, the RAM a guest\n"
		"                        touched), from its first to its last byte, with\n"
		"                        its page count and the exits that wrote; reads and\n"
		"                        writes together. Two regions never touch: a page\n"
		"                        between them joins them. At most %d regions: the\n"
		"                        exits of a further one are counted below the table\n"
		"  --by symbol           the guest kernel function at the exit's guest RIP,\n"
		"                        with its module (\"handler [virtio_net]\"), from\n"
		"                        the guest's own /proc/kallsyms and module list,\n"
		"                        which its agent sent and the recording kept:\n"
		"                        which kernel code made the guest exit. Exits from\n"
		"                        guest user mode (a RIP below the kernel's half)\n"
		"                        are \"(user)\" with their task, never a kernel\n"
		"                        function; \"(kernel, no symbol)\" a kernel RIP the\n"
		"                        table does not cover; \"(no guest symbols)\" a VM\n"
		"                        whose recording has no table (no agent). Above the\n"
		"                        table, each VM's symbol count and what its agent\n"
		"                        left out (a table is at most 3 MiB)\n"
		"  --sort count|total|p99|max  order of the groups, largest first (total)\n"
		"  --top N               the N longest exits with their vCPU, reason, guest\n"
		"                        task and guest RIP (default 10; 0: none), the RIP\n"
		"                        as symbol+offset [module] when the guest's symbols\n"
		"                        name it, \"(user)\" when in guest user mode\n"
		"  --json                one JSON object instead of the tables. By what was\n"
		"                        accessed, each group has its key: \"port\", \"dir\"\n"
		"                        (in, out), \"size\" (bytes); \"msr\", \"msr_name\",\n"
		"                        \"access\" (read, write); a page's \"gpa_start\",\n"
		"                        \"gpa_end\" (its first and last byte), \"access\"; a\n"
		"                        region's \"gpa_start\", \"gpa_end\", \"pages\" and\n"
		"                        \"writes\" (its exits that wrote); and the top level\n"
		"                        \"exits_without_detail\" (not in the table) and\n"
		"                        \"exits_beyond_table\" (past its page or region\n"
		"                        bound); each longest exit what it accessed (\"port\",\n"
		"                        \"msr\", \"gpa\" with \"access\")\n"
		"  --svg FILE            also draw each group's latency histogram into FILE\n"
		"                        (SVG, one panel per group in the table's order: per\n"
		"                        exit reason by default; at most %d): exits per bin\n"
		"                        (linear) over latency bins of a quarter of a power of\n"
		"                        two (log scale, in ns..s), p50 and p99 marked; the\n"
		"                        title says count, p50, p99 and max as the table does.\n"
		"                        An existing FILE is refused; written as\n"
		"                        .FILE.partial-XXXXXX beside it and renamed when\n"
		"                        complete (removed on failure, SIGINT, SIGTERM)\n"
		REPORT_ACCEPT_DAMAGE_HELP "\n"
		REPORT_EXIT_HELP ", or the SVG FILE exists or\n"
		"could not be written, or stdout could not be written (a full disk); 2 on\n"
		"a usage error.\n",
		AN_MAX_ADDR_GROUPS, AN_MAX_ADDR_GROUPS, AN_MAX_ADDR_GROUPS, AN_SVG_MAX_PANELS);
}

struct opts {
	enum an_by by;
	enum an_sort sort;
	size_t top;
	bool json;
	const char *svg;
	bool accept;
};

static const struct args_opt lopts[] = {
	ARGS_FLAG("json", 0, struct opts, json),
	ARGS_CHOICE("by", 0, struct opts, by, report_by_names, AN_BY_N),
	ARGS_CHOICE("sort", 0, struct opts, sort, report_sort_names, 4),
	ARGS_NUM("top", 0, struct opts, top, 0, REPORT_COUNT_MAX),
	ARGS_STR("svg", 0, struct opts, svg),
	ARGS_FLAG("accept-damage", 0, struct opts, accept),
	ARGS_END,
};

static const struct args_spec spec = { "vmscope report exits", usage, lopts, 1 };

int report_exits(int argc, char **argv)
{
	struct opts o = { .by = AN_BY_REASON, .sort = AN_SORT_TOTAL, .top = 10 };
	struct an_hooks h = { .exit = an_exits_add };
	struct an_exits x;
	struct an_walk *w;
	struct ex_out svg;
	char err[4200];
	int status;
	size_t ntop;

	status = args_run(&spec, &o, argc, argv);
	if (status >= 0)
		return status;
	/* refused before the pass, not after it */
	if (o.svg && ex_out_file(&svg, o.svg, false, err, sizeof(err))) {
		fprintf(stderr, "vmscope report exits: --svg: %s\n", err);
		return EXIT_FAILURE_RUNTIME;
	}
	if (an_exits_init(&x, o.by, o.top)) {
		fprintf(stderr, "vmscope report exits: out of memory\n");
		if (o.svg)
			ex_out_abort(&svg);
		return EXIT_FAILURE_RUNTIME;
	}
	h.ctx = &x;
	status = report_walk_setup("exits", argv[optind], o.accept ? MR_ACCEPT_DAMAGE : 0,
				   &w, &h, NULL, NULL);
	if (status < 0) {
		an_exits_free(&x);
		if (o.svg)
			ex_out_abort(&svg);
		return EXIT_FAILURE_RUNTIME;
	}
	an_exits_sort(&x, o.sort);
	ntop = an_topn_sort(&x.top);
	if (o.json) {
		report_print_json(report_exits_json(argv[optind], w, &x, o.sort, ntop), w);
	} else {
		report_exits_text(w, &x, o.sort, ntop);
	}
	if (o.svg) {
		int e = report_exits_svg(svg.fd, argv[optind], w, &x);

		if (e) {
			fprintf(stderr, "vmscope report exits: --svg: writing %s: %s\n", o.svg,
				strerror(-e));
			ex_out_abort(&svg);
			status = 1;
		} else if (ex_out_commit(&svg, err, sizeof(err))) {
			fprintf(stderr, "vmscope report exits: --svg: %s\n", err);
			status = 1;
		}
	}
	if (x.oom) {
		fprintf(stderr, "vmscope report exits: out of memory: %d exits not counted\n", x.oom);
		status = 1;
	}
	an_exits_free(&x);
	an_walk_close(w);
	return status ? EXIT_FAILURE_RUNTIME : EXIT_OK;
}
