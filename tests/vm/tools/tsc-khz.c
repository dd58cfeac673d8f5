/*
 * tsc-khz: this machine's TSC frequency in kHz, measured against
 * CLOCK_MONOTONIC_RAW; prints the number, exits 1 if the TSC does not tick
 * at a constant rate here (no constant_tsc) or the measurement disagrees
 * with itself.
 *
 * Why (tests/vm/run.sh): the test host's TSC under QEMU TCG is this
 * machine's TSC, but the test host's kernel calibrates it against the
 * emulated PIT and HPET at boot, and on a loaded machine the PIT's answer
 * can be far off: seen "PIT calibration deviates from HPET: 697108
 * 2599961" and "tsc: Detected 697.108 MHz" on a 2.6 GHz machine, after
 * which the test host's sched_clock, and with it every trace timestamp,
 * ran 3.7 times too fast (report-sched-hog charged 1123 ms to a 300 ms
 * hog). run.sh passes the measured value as tsc_early_khz=.
 *
 * How: pairs (CLOCK_MONOTONIC_RAW, TSC, CLOCK_MONOTONIC_RAW) taken 0.2 s
 * apart; each end keeps the pair whose two clock reads are closest (the
 * least disturbed by preemption), and three such intervals must agree
 * within 100 ppm.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

struct stamp {
	uint64_t ns;	/* the middle of the two clock reads */
	uint64_t tsc;
};

static uint64_t raw_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC_RAW, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* The least disturbed of 200 (clock, TSC, clock) reads. */
static struct stamp stamp(void)
{
	struct stamp best = { 0, 0 };
	uint64_t best_width = UINT64_MAX;

	for (int i = 0; i < 200; i++) {
		uint64_t a = raw_ns();
		uint64_t tsc = __rdtsc();
		uint64_t b = raw_ns();

		if (b - a < best_width) {
			best_width = b - a;
			best.ns = a + (b - a) / 2;
			best.tsc = tsc;
		}
	}
	return best;
}

static double khz_over(unsigned int ms)
{
	struct stamp a = stamp();
	struct timespec pause = { ms / 1000, (long)(ms % 1000) * 1000000L };
	struct stamp b;

	nanosleep(&pause, NULL);
	b = stamp();
	return (double)(b.tsc - a.tsc) * 1e6 / (double)(b.ns - a.ns);
}

static int has_constant_tsc(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags", 5) && strstr(line, " constant_tsc"))
			found = 1;
	fclose(f);
	return found;
}

int main(void)
{
	double k[3], lo, hi;

	if (!has_constant_tsc()) {
		fprintf(stderr, "tsc-khz: this CPU's TSC has no constant rate (no constant_tsc)\n");
		return 1;
	}
	for (int i = 0; i < 3; i++)
		k[i] = khz_over(200);
	lo = hi = k[0];
	for (int i = 1; i < 3; i++) {
		lo = k[i] < lo ? k[i] : lo;
		hi = k[i] > hi ? k[i] : hi;
	}
	if (lo <= 0 || (hi - lo) / lo > 100e-6) {
		fprintf(stderr, "tsc-khz: measurements disagree: %.0f %.0f %.0f kHz\n",
			k[0], k[1], k[2]);
		return 1;
	}
	printf("%.0f\n", (k[0] + k[1] + k[2]) / 3);
	return 0;
}
