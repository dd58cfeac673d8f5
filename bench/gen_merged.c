// SPDX-License-Identifier: GPL-2.0
/*
 * gen-merged DIR N: a merged trace of about N records with a known story
 * (analysis/tests/scen.h: 2 VMs x 4 vCPUs, three guest tasks per VM, io
 * exits through userspace, heavy-tailed exit durations, a host task
 * preempting VM 0's vCPU 0 inside some exits), written with merge's own
 * writer into DIR/merged (DIR/in holds its session), for the report
 * benchmark (bench/report-run.sh). The generator needs O(1) memory.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "../analysis/tests/scen.h"

int main(int argc, char **argv)
{
	struct scen s = { .seed = 3, .n_vms = 2, .vcpus = 4, .hog = true };
	int e;

	if (argc != 3 || (s.n_records = strtoull(argv[2], NULL, 10)) == 0) {
		fprintf(stderr, "usage: gen-merged DIR N-RECORDS\n");
		return 2;
	}
	if (mkdir(argv[1], 0755)) {
		perror(argv[1]);
		return 1;
	}
	e = scen_write(&s, argv[1]);
	if (e) {
		fprintf(stderr, "gen-merged: error %d\n", e);
		return 1;
	}
	printf("%s/merged: %" PRIu64 " records, %" PRIu64 " exits\n", argv[1], s.records,
	       s.x.exits);
	return 0;
}
