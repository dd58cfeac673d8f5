/* SPDX-License-Identifier: GPL-2.0 */
/* pb_str_copy: what fits is copied terminated, what does not leaves dst alone. */
#include <stdio.h>
#include <string.h>

#include "../../tests/lib/check.h"
#include "pb_str.h"

int main(void)
{
	char dst[5];

	/* the longest that fits: cap - 1 characters and the terminator */
	memset(dst, 'x', sizeof(dst));
	CHECK(pb_str_copy(dst, sizeof(dst), "abcd") == 0);
	CHECK(!strcmp(dst, "abcd"));

	/* one more does not fit, and dst keeps what it held */
	CHECK(pb_str_copy(dst, sizeof(dst), "abcde") == -1);
	CHECK(!strcmp(dst, "abcd"));

	CHECK(pb_str_copy(dst, sizeof(dst), "") == 0);
	CHECK(dst[0] == '\0');

	/* NULL is an absent string: "" */
	memset(dst, 'x', sizeof(dst));
	CHECK(pb_str_copy(dst, sizeof(dst), NULL) == 0);
	CHECK(dst[0] == '\0');

	/* no room even for the terminator */
	CHECK(pb_str_copy(dst, 0, NULL) == -1);

	return check_result("pb_str");
}
