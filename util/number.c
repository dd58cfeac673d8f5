#include <errno.h>
#include <stdlib.h>

#include "util_number.h"

static int parse(const char *s, int base, unsigned long long min, unsigned long long max,
		 unsigned long long *v)
{
	unsigned long long n;
	char *end;

	/* strtoull alone takes blanks and a sign (negating: "-1" is
	 * ULLONG_MAX), and says overflow only through errno */
	if (s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	n = strtoull(s, &end, base);
	if (errno || *end || n < min || n > max)
		return -1;
	*v = n;
	return 0;
}

int util_parse_ull(const char *s, unsigned long long min, unsigned long long max,
		   unsigned long long *v)
{
	return parse(s, 10, min, max, v);
}

int util_parse_ull_c(const char *s, unsigned long long min, unsigned long long max,
		     unsigned long long *v)
{
	return parse(s, 0, min, max, v);
}
