// SPDX-License-Identifier: GPL-2.0
/* vmscoped's /metrics endpoint: see metrics_http.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "metrics_http.h"
#include "metrics_render.h"
#include "util_number.h"

/* A scraper that holds a connection open does not hold others out long. */
#define MH_CONNECTIONS	16
#define MH_TIMEOUT_S	10

struct mh_server {
	struct MHD_Daemon *d;
	struct mstore *st;
};

int mh_parse_addr(const char *arg, struct sockaddr_storage *sa, char *why, size_t whylen)
{
	char host[64] = "127.0.0.1";
	const char *port = arg, *colon = strrchr(arg, ':');
	unsigned long long p;
	size_t hl;

	memset(sa, 0, sizeof(*sa));
	if (colon) {
		const char *h = arg;

		hl = (size_t)(colon - arg);
		if (hl >= 2 && arg[0] == '[' && arg[hl - 1] == ']') {
			h++;
			hl -= 2;
		}
		if (hl == 0 || hl >= sizeof(host)) {
			snprintf(why, whylen, "'%s': ADDR:PORT, [IPv6]:PORT or PORT", arg);
			return -1;
		}
		memcpy(host, h, hl);
		host[hl] = '\0';
		port = colon + 1;
	}
	if (util_parse_ull(port, 0, 65535, &p)) {
		snprintf(why, whylen, "'%s': the port is a number up to 65535", arg);
		return -1;
	}
	if (strchr(host, ':')) {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)sa;

		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)p);
		if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1)
			return 0;
	} else {
		struct sockaddr_in *a4 = (struct sockaddr_in *)sa;

		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)p);
		if (inet_pton(AF_INET, host, &a4->sin_addr) == 1)
			return 0;
	}
	snprintf(why, whylen, "'%s': '%s' is not a numeric IPv4 or IPv6 address", arg, host);
	return -1;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code, char *body,
			     size_t len, const char *type)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body,
								 MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned int code, const char *msg)
{
	char *body = strdup(msg);

	return body ? reply(c, code, body, strlen(body), "text/plain; charset=utf-8") : MHD_NO;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **req)
{
	struct mh_server *m = cls;
	char *body = NULL;
	size_t len = 0;
	FILE *out;
	int e;

	(void)version, (void)upload, (void)req;
	if (*upload_size)
		return MHD_NO;	/* a GET has no body */
	if (strcmp(url, "/metrics"))
		return text(c, MHD_HTTP_NOT_FOUND, "not found: vmscoped serves /metrics\n");
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET /metrics\n");
	out = open_memstream(&body, &len);
	if (!out)
		return MHD_NO;
	e = ms_render(m->st, out);
	if (fclose(out) || e) {
		free(body);
		return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "rendering failed\n");
	}
	return reply(c, MHD_HTTP_OK, body, len, MR_CONTENT_TYPE);
}

struct mh_server *mh_start(const struct sockaddr_storage *sa, struct mstore *st, char *why,
			   size_t whylen)
{
	struct mh_server *m = calloc(1, sizeof(*m));
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL;

	if (!m) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	if (sa->ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	m->st = st;
	/* the port in @sa is the one bound; MHD's own argument is ignored then */
	m->d = MHD_start_daemon(flags, 0, NULL, NULL, handle, m,
				MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)sa,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)MH_CONNECTIONS,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)MH_TIMEOUT_S,
				MHD_OPTION_END);
	if (!m->d) {
		snprintf(why, whylen, "libmicrohttpd could not listen (address in use, or "
			 "not this host's?)");
		free(m);
		return NULL;
	}
	return m;
}

uint16_t mh_port(const struct mh_server *m)
{
	const union MHD_DaemonInfo *i = MHD_get_daemon_info(m->d, MHD_DAEMON_INFO_BIND_PORT);

	return i ? i->port : 0;
}

void mh_stop(struct mh_server *m)
{
	if (!m)
		return;
	MHD_stop_daemon(m->d);
	free(m);
}
