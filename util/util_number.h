/* Parsing numbers from text (options, /proc, XML attributes). */
#ifndef VMSCOPE_UTIL_NUMBER_H
#define VMSCOPE_UTIL_NUMBER_H

/*
 * @s as a decimal number from @min to @max in *@v: digits only (no sign,
 * blank or base prefix), nothing after them. 0, or -1 (*@v untouched).
 */
int util_parse_ull(const char *s, unsigned long long min, unsigned long long max,
		   unsigned long long *v);

/* util_parse_ull, but with C's prefixes: 0x hexadecimal, 0 octal. */
int util_parse_ull_c(const char *s, unsigned long long min, unsigned long long max,
		     unsigned long long *v);

#endif
