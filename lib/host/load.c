#include "load.h"

#include "log.h"
#include "perfev.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* How often the drain thread looks at the rings when no wakeup comes. */
#define LOAD_DRAIN_POLL_MS 10

struct ring {
	int fd;
	void *base;        /* header page + data pages */
	size_t map_len;
	size_t attr;       /* index into counts */
};

struct load {
	size_t n;
	struct load_count *counts;
	GArray *rings;     /* struct ring */
	size_t page, data_size;
	pthread_t thread;
	bool thread_running;
	atomic_int stop;
	bool disarmed;
};

static void ring_read(const unsigned char *data, size_t size, uint64_t off,
		      void *dst, size_t len)
{
	size_t start = off % size, first = MIN(len, size - start);

	memcpy(dst, data + start, first);
	if (first < len)
		memcpy((unsigned char *)dst + first, data, len - first);
}

/* Reads every complete record between data_tail and data_head. */
static void ring_drain(struct load *l, struct ring *r)
{
	struct perf_event_mmap_page *pg = r->base;
	const unsigned char *data = (const unsigned char *)r->base + l->page;
	struct load_count *c = &l->counts[r->attr];
	/* Acquire pairs with the kernel's write barrier before data_head. */
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail;

	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;

		ring_read(data, l->data_size, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		switch (h.type) {
		case PERF_RECORD_SAMPLE:
			c->samples++;
			break;
		case PERF_RECORD_LOST: {
			uint64_t lost;

			ring_read(data, l->data_size, tail + sizeof(h) + sizeof(uint64_t),
				  &lost, sizeof(lost));
			c->lost_records++;
			c->lost += lost;
			break;
		}
		case PERF_RECORD_THROTTLE:
			c->throttle++;
			break;
		case PERF_RECORD_UNTHROTTLE:
			c->unthrottle++;
			break;
		default:
			c->other++;
			break;
		}
		tail += h.size;
	}
	/* Release: our reads are done before the kernel may overwrite. */
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
}

static void drain_all(struct load *l)
{
	for (guint i = 0; i < l->rings->len; i++)
		ring_drain(l, &g_array_index(l->rings, struct ring, i));
}

static void *drain_thread(void *arg)
{
	struct load *l = arg;
	g_autofree struct pollfd *pfd = g_new0(struct pollfd, l->rings->len ? l->rings->len : 1);

	for (guint i = 0; i < l->rings->len; i++) {
		pfd[i].fd = g_array_index(l->rings, struct ring, i).fd;
		pfd[i].events = POLLIN;
	}
	while (!atomic_load(&l->stop)) {
		/* Wakeups depend on the attr's wakeup_events/watermark, which
		 * are under test: a short timeout drains regardless. */
		poll(pfd, l->rings->len, LOAD_DRAIN_POLL_MS);
		drain_all(l);
	}
	return NULL;
}

static void ring_close(struct ring *r)
{
	if (r->base && r->base != MAP_FAILED)
		munmap(r->base, r->map_len);
	r->base = NULL;
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
}

static void note_err(struct load_count *c, int err, int cpu)
{
	if (!c->open_err) {
		c->open_err = err;
		c->open_cpu = cpu;
	}
}

int load_arm(const struct perf_event_attr *attrs, size_t n, unsigned int ring_pages,
	     struct load **out)
{
	g_autofree int *cpus = NULL;
	int ncpu = 0, r;
	g_autoptr(load) l = g_new0(struct load, 1);

	l->n = n;
	l->counts = g_new0(struct load_count, n ? n : 1);
	l->rings = g_array_new(FALSE, TRUE, sizeof(struct ring));
	if (!ring_pages)
		ring_pages = LOAD_DEFAULT_RING_PAGES;
	if (ring_pages & (ring_pages - 1))
		return pc_fail(EINVAL, "load: ring_pages %u is not a power of two", ring_pages);
	l->page = (size_t)sysconf(_SC_PAGESIZE);
	l->data_size = l->page * ring_pages;
	r = perfev_online_cpus(&cpus, &ncpu);
	if (r)
		return r;

	for (size_t i = 0; i < n; i++) {
		struct load_count *c = &l->counts[i];

		c->open_cpu = -1;
		for (int k = 0; k < ncpu; k++) {
			struct perf_event_attr a = attrs[i];
			struct ring ring = { .fd = -1, .attr = i };

			/* Open disabled so that the whole batch starts together. */
			a.disabled = 1;
			ring.fd = perfev_open(&a, -1, cpus[k], -1, PERF_FLAG_FD_CLOEXEC);
			if (ring.fd < 0) {
				note_err(c, -ring.fd, cpus[k]);
				continue;
			}
			ring.map_len = l->page + l->data_size;
			ring.base = mmap(NULL, ring.map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
					 ring.fd, 0);
			if (ring.base == MAP_FAILED) {
				note_err(c, errno, cpus[k]);
				ring_close(&ring);
				continue;
			}
			c->cpus++;
			g_array_append_val(l->rings, ring);
		}
	}

	r = pthread_create(&l->thread, NULL, drain_thread, l);
	if (r)
		return pc_fail(r, "load: cannot start the drain thread: %s", strerror(r));
	l->thread_running = true;
	for (guint i = 0; i < l->rings->len; i++) {
		struct ring *ring = &g_array_index(l->rings, struct ring, i);

		if (ioctl(ring->fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
			note_err(&l->counts[ring->attr], errno, -1);
	}
	*out = g_steal_pointer(&l);
	return 0;
}

void load_dwell(struct load *l, unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int load_disarm(struct load *l)
{
	if (!l || l->disarmed)
		return 0;
	for (guint i = 0; i < l->rings->len; i++)
		ioctl(g_array_index(l->rings, struct ring, i).fd, PERF_EVENT_IOC_DISABLE, 0);
	if (l->thread_running) {
		atomic_store(&l->stop, 1);
		pthread_join(l->thread, NULL);
		l->thread_running = false;
	}
	drain_all(l);
	for (guint i = 0; i < l->rings->len; i++)
		ring_close(&g_array_index(l->rings, struct ring, i));
	g_array_set_size(l->rings, 0);
	l->disarmed = true;
	return 0;
}

void load_free(struct load *l)
{
	if (!l)
		return;
	load_disarm(l);
	g_array_unref(l->rings);
	g_free(l->counts);
	g_free(l);
}

size_t load_attr_count(const struct load *l)
{
	return l->n;
}

const struct load_count *load_count_at(const struct load *l, size_t i)
{
	return i < l->n ? &l->counts[i] : NULL;
}

size_t load_open_events(const struct load *l)
{
	return l->rings->len;
}

int load_run(const struct perf_event_attr *attrs, size_t n, unsigned int ring_pages,
	     unsigned int dwell_ms, struct load **out)
{
	struct load *l = NULL;
	int r = load_arm(attrs, n, ring_pages, &l);

	if (r)
		return r;
	load_dwell(l, dwell_ms);
	load_disarm(l);
	*out = l;
	return 0;
}
