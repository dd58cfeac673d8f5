/*
 * vsock-xfer: move one file over AF_VSOCK, for the VM harness smoke test.
 *
 *   vsock-xfer listen PORT OUTFILE [TIMEOUT_S]   accept one connection,
 *                                                write what arrives to OUTFILE
 *   vsock-xfer send CID PORT INFILE              connect and send INFILE
 *
 * Both print the byte count they moved. The test compares checksums of the
 * two files, so this tool does no checking of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

static int die(const char *what)
{
	fprintf(stderr, "vsock-xfer: %s: %s\n", what, strerror(errno));
	return 1;
}

static int copy_fd(int in, int out, long long *total)
{
	char buf[65536];
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n == 0)
			return 0;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, n - off);
			if (w < 0) {
				if (errno == EINTR)
					continue;
				return -1;
			}
			off += w;
		}
		*total += n;
	}
}

static unsigned parse_uint(const char *s, const char *what)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);
	if (end == s || *end || v > 0xffffffffUL) {
		fprintf(stderr, "vsock-xfer: bad %s '%s'\n", what, s);
		exit(2);
	}
	return (unsigned)v;
}

static int do_listen(unsigned port, const char *path, int timeout_s)
{
	int s = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return die("socket(AF_VSOCK)");
	struct sockaddr_vm addr = { .svm_family = AF_VSOCK, .svm_port = port,
				    .svm_cid = VMADDR_CID_ANY };
	if (bind(s, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return die("bind");
	if (listen(s, 1) < 0)
		return die("listen");
	printf("listening on port %u\n", port);
	fflush(stdout);

	struct pollfd p = { .fd = s, .events = POLLIN };
	int r = poll(&p, 1, timeout_s * 1000);
	if (r == 0) {
		fprintf(stderr, "vsock-xfer: no connection within %d s\n", timeout_s);
		return 1;
	}
	if (r < 0)
		return die("poll");
	struct sockaddr_vm peer;
	socklen_t len = sizeof(peer);
	int c = accept(s, (struct sockaddr *)&peer, &len);
	if (c < 0)
		return die("accept");
	int out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0)
		return die(path);
	long long total = 0;
	if (copy_fd(c, out, &total) < 0)
		return die("receive");
	if (close(out) < 0)
		return die(path);
	printf("received %lld bytes from cid %u port %u\n", total, peer.svm_cid,
	       peer.svm_port);
	return 0;
}

static int do_send(unsigned cid, unsigned port, const char *path)
{
	int in = open(path, O_RDONLY);
	if (in < 0)
		return die(path);
	int s = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return die("socket(AF_VSOCK)");
	struct sockaddr_vm addr = { .svm_family = AF_VSOCK, .svm_port = port,
				    .svm_cid = cid };
	if (connect(s, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return die("connect");
	long long total = 0;
	if (copy_fd(in, s, &total) < 0)
		return die("send");
	if (shutdown(s, SHUT_WR) < 0 || close(s) < 0)
		return die("close");
	printf("sent %lld bytes to cid %u port %u\n", total, cid, port);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && argc <= 5 && !strcmp(argv[1], "listen"))
		return do_listen(parse_uint(argv[2], "port"), argv[3],
				 argc == 5 ? (int)parse_uint(argv[4], "timeout") : 60);
	if (argc == 5 && !strcmp(argv[1], "send"))
		return do_send(parse_uint(argv[2], "cid"), parse_uint(argv[3], "port"),
			       argv[4]);
	fprintf(stderr, "usage: vsock-xfer listen PORT OUTFILE [TIMEOUT_S]\n"
		"       vsock-xfer send CID PORT INFILE\n");
	return 2;
}
