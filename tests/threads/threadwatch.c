/*
 * threadwatch: an LD_PRELOAD shim that notes whether a process starts a
 * thread, for the threads guard (tests/threads/README.md).
 *
 * Every process of a unit test's tree gets it through watch.sh. The first
 * time a process calls pthread_create (its own code or a library's:
 * liburcu's, libmicrohttpd's), or when it exits with more than one thread
 * in /proc/self/status (threads started some other way that are still
 * there), it appends "PID COMM HOW" to the file VMSCOPE_THREADWATCH_OUT
 * names. No line means no thread was seen.
 *
 * It must not change what it watches: no constructor, no allocation, and
 * it is built without sanitizers (meson.build says why).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* read_small PATH BUF LEN: the start of a /proc file, NUL-terminated. */
static void read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, len - 1);

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
}

static void note(const char *how)
{
	static atomic_int noted;
	const char *out = getenv("VMSCOPE_THREADWATCH_OUT");
	char comm[64], line[160];
	int fd, n;

	if (!out || atomic_exchange(&noted, 1))
		return;
	read_small("/proc/self/comm", comm, sizeof(comm));
	comm[strcspn(comm, "\n")] = '\0';
	n = snprintf(line, sizeof(line), "%d %s %s\n", (int)getpid(),
		     comm[0] ? comm : "?", how);
	fd = open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	/* An unrecorded thread would let the guard pass wrongly: stop here. */
	if (fd < 0 || write(fd, line, (size_t)n) != n) {
		dprintf(2, "threadwatch: cannot record a thread in %s\n", out);
		abort();
	}
	close(fd);
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
		   void *(*start)(void *), void *arg)
{
	static int (*real)(pthread_t *, const pthread_attr_t *,
			   void *(*)(void *), void *);

	if (!real)
		real = (int (*)(pthread_t *, const pthread_attr_t *,
				void *(*)(void *), void *))
			dlsym(RTLD_NEXT, "pthread_create");
	if (!real) {
		dprintf(2, "threadwatch: no pthread_create after the shim\n");
		abort();
	}
	note("pthread_create");
	return real(thread, attr, start, arg);
}

/* Threads started without pthread_create and still alive at exit. */
__attribute__((destructor)) static void at_exit_threads(void)
{
	char status[4096];
	const char *t;

	read_small("/proc/self/status", status, sizeof(status));
	t = strstr(status, "\nThreads:");
	if (t && atoi(t + strlen("\nThreads:")) > 1)
		note("threads at exit");
}
