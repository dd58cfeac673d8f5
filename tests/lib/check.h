/*
 * The unit tests' assertions: each failed check is printed with its file
 * and line and counted; check_result() turns the count into the exit
 * status. Header only, included by relative path, so a test needs no
 * build change to use it.
 */
#ifndef VMSCOPE_TESTS_CHECK_H
#define VMSCOPE_TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>

/* One count per test program: weak, so every file of a test may define it. */
__attribute__((weak)) int check_failures;

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: CHECK(%s) failed\n", \
	__FILE__, __LINE__, #c); check_failures++; } } while (0)

#define CHECK_EQ(a, b) do { long long a_ = (long long)(a), b_ = (long long)(b); \
	if (a_ != b_) { fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", \
	__FILE__, __LINE__, #a, a_, #b, b_); check_failures++; } } while (0)

/* CHECK with a printf-style account of what was wrong. */
#define EXPECT(cond, ...) do { if (!(cond)) { \
	fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); check_failures++; } } while (0)

/* The seed of the run a test is on, named by REQUIRE (0: none). */
__attribute__((weak)) unsigned long long check_seed;

/*
 * EXPECT that ends the test at once, naming check_seed so that the run
 * can be replayed: for properties whose later checks depend on it.
 */
#define REQUIRE(cond, ...) do { if (!(cond)) { \
	fprintf(stderr, "%s:%d: REQUIRE(%s) failed, seed %llu: ", __FILE__, __LINE__, #cond, \
		check_seed); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } } while (0)

/*
 * The end of every test's main: "@name: N failures" to stderr, or
 * "@name: ok" to stdout; the exit status for main.
 */
static inline int check_result(const char *name)
{
	if (check_failures) {
		fprintf(stderr, "%s: %d failures\n", name, check_failures);
		return EXIT_FAILURE;
	}
	printf("%s: ok\n", name);
	return EXIT_SUCCESS;
}

#endif
