/* Reproducers: a cell as repro.c and README.txt (repro.h). */
#include "repro.h"

#include "attr.h"
#include "log.h"
#include "outfile.h"
#include "profile.h"
#include "prober.h"
#include "textesc.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#define REPRO_DIR_NAME_MAX 200

/* struct perf_event_attr's declaration order, which is also the order
 * perf_event_attr__fprintf() prints in. */
#define ORDER_ENTRY(n) ATTR_F_##n,
static const enum attr_field attr_order[] = {
	ATTR_F_type, ATTR_F_size, ATTR_F_config, ATTR_F_sample_period, ATTR_F_sample_type,
	ATTR_F_read_format,
	ATTR_BITS(ORDER_ENTRY)
	ATTR_F_wakeup_events, ATTR_F_bp_type, ATTR_F_config1, ATTR_F_config2,
	ATTR_F_branch_sample_type, ATTR_F_sample_regs_user, ATTR_F_sample_stack_user,
	ATTR_F_clockid, ATTR_F_sample_regs_intr, ATTR_F_aux_watermark, ATTR_F_sample_max_stack,
	ATTR_F_aux_sample_size, ATTR_F_sig_data,
};
#undef ORDER_ENTRY
G_STATIC_ASSERT(G_N_ELEMENTS(attr_order) == ATTR_FIELD_COUNT);

static bool field_is_mask(enum attr_field f)
{
	switch (f) {
	case ATTR_F_config: case ATTR_F_config1: case ATTR_F_config2:
	case ATTR_F_sample_type: case ATTR_F_read_format: case ATTR_F_branch_sample_type:
	case ATTR_F_sample_regs_user: case ATTR_F_sample_regs_intr:
		return true;
	default:
		return false;
	}
}

bool repro_cell_default(const struct cell *cell)
{
	enum outcome_class c = outcome_class(cell->outcome);

	return cell->has_attr && (c == OUTCOME_CLASS_HARM || c == OUTCOME_CLASS_ERRNO);
}

bool repro_cell_auto(const struct cell *cell)
{
	return cell->has_attr && outcome_class(cell->outcome) == OUTCOME_CLASS_HARM &&
	       !results_cell_rule(cell);
}

int repro_find_cell(const struct result_set *set, const char *name, const struct cell **out)
{
	g_autofree char *shown = text_escape(name);

	for (guint i = 0; i < set->cells->len; i++) {
		const struct cell *c = set->cells->pdata[i];
		size_t plen = strlen(c->profile);

		if (strncmp(name, c->profile, plen) || name[plen] != ':' ||
		    strcmp(name + plen + 1, c->spec))
			continue;
		if (!c->has_attr)
			return pc_fail(EINVAL, "cell %s has no attr (%s: the profile rejected the "
				       "spec, perf never called the kernel): nothing to reproduce",
				       shown, outcome_name(c->outcome));
		if (outcome_class(c->outcome) == OUTCOME_CLASS_INFRA)
			return pc_fail(EINVAL, "cell %s is INFRA (pmucanary could not test it): "
				       "no kernel verdict to reproduce", shown);
		*out = c;
		return 0;
	}
	return pc_fail(ENOENT, "no cell %s in the result file (PROFILE:SPEC, e.g. "
		       "perf-3.6:cycles:pp)", shown);
}

static void dir_name_append(GString *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (g_ascii_isalnum(*p) || *p == '-' || *p == '_' || (*p == '.' && out->len))
			g_string_append_c(out, (char)*p);
		else
			g_string_append_printf(out, "%%%02X", *p);
	}
}

char *repro_dir_name(const struct cell *cell)
{
	g_autoptr(GString) s = g_string_new(NULL);

	dir_name_append(s, cell->profile);
	g_string_append_c(s, '+');
	dir_name_append(s, cell->spec);
	if (s->len > REPRO_DIR_NAME_MAX) {
		g_autofree char *key = results_cell_key(cell->profile, cell->spec);
		g_autofree char *sum = g_compute_checksum_for_string(G_CHECKSUM_SHA256, key, -1);

		/* Cut where no %XX is split; the hash keeps two long names apart. */
		gsize cut = REPRO_DIR_NAME_MAX - 17;

		while (cut > 0 && (s->str[cut - 1] == '%' || (cut > 1 && s->str[cut - 2] == '%')))
			cut--;
		g_string_truncate(s, cut);
		g_string_append_printf(s, "+%.16s", sum);
	}
	return g_string_free(g_steal_pointer(&s), FALSE);
}

void repro_c_string_append(GString *out, const char *s)
{
	/* Octal escapes are at most three digits: a digit after one cannot
	 * extend it (a hex escape would swallow it). '?' against trigraphs. */
	for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
		if (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\' && *p != '?')
			g_string_append_c(out, (char)*p);
		else
			g_string_append_printf(out, "\\%03o", *p);
	}
}

void repro_c_comment_append(GString *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
		/* With every '*' escaped no text can close the comment or open
		 * one inside it (-Wcomment); '?' against trigraphs, '\\' against
		 * a line splice. */
		if (*p >= 0x20 && *p < 0x7f && !strchr("*\\?", *p))
			g_string_append_c(out, (char)*p);
		else
			g_string_append_printf(out, "\\x%02x", *p);
	}
}

void repro_c_attr_append(GString *out, const struct perf_event_attr *attr)
{
	for (size_t i = 0; i < G_N_ELEMENTS(attr_order); i++) {
		enum attr_field f = attr_order[i];
		uint64_t v = attr_get(attr, f);

		if (!v && f != ATTR_F_type && f != ATTR_F_size)
			continue;
		g_string_append_printf(out, "\t.%s = ", attr_field_display_name(attr, f));
		if (f == ATTR_F_clockid)
			g_string_append_printf(out, "%" PRId32, (int32_t)v);
		else if (field_is_mask(f))
			g_string_append_printf(out, "0x%" PRIx64 "%s", v, v > UINT32_MAX ? "ULL" : "");
		else if (v > INT32_MAX)
			g_string_append_printf(out, "%" PRIu64 "ULL", v);
		else
			g_string_append_printf(out, "%" PRIu64, v);
		g_string_append(out, ",\n");
	}
}

struct bit_name {
	uint64_t bit;
	const char *name;
};

/* perf's own lists, in perf's order (perf_event_attr_fprintf.c). */
#define BN(prefix, n) { prefix##n, #n }
static const struct bit_name sample_type_bits[] = {
	BN(PERF_SAMPLE_, IP), BN(PERF_SAMPLE_, TID), BN(PERF_SAMPLE_, TIME),
	BN(PERF_SAMPLE_, ADDR), BN(PERF_SAMPLE_, READ), BN(PERF_SAMPLE_, CALLCHAIN),
	BN(PERF_SAMPLE_, ID), BN(PERF_SAMPLE_, CPU), BN(PERF_SAMPLE_, PERIOD),
	BN(PERF_SAMPLE_, STREAM_ID), BN(PERF_SAMPLE_, RAW), BN(PERF_SAMPLE_, BRANCH_STACK),
	BN(PERF_SAMPLE_, REGS_USER), BN(PERF_SAMPLE_, STACK_USER), BN(PERF_SAMPLE_, IDENTIFIER),
	BN(PERF_SAMPLE_, REGS_INTR), BN(PERF_SAMPLE_, DATA_SRC), BN(PERF_SAMPLE_, WEIGHT),
	BN(PERF_SAMPLE_, PHYS_ADDR), BN(PERF_SAMPLE_, AUX), BN(PERF_SAMPLE_, CGROUP),
	BN(PERF_SAMPLE_, DATA_PAGE_SIZE), BN(PERF_SAMPLE_, CODE_PAGE_SIZE),
	BN(PERF_SAMPLE_, WEIGHT_STRUCT), { 0, NULL }
};
static const struct bit_name branch_bits[] = {
	BN(PERF_SAMPLE_BRANCH_, USER), BN(PERF_SAMPLE_BRANCH_, KERNEL),
	BN(PERF_SAMPLE_BRANCH_, HV), BN(PERF_SAMPLE_BRANCH_, ANY),
	BN(PERF_SAMPLE_BRANCH_, ANY_CALL), BN(PERF_SAMPLE_BRANCH_, ANY_RETURN),
	BN(PERF_SAMPLE_BRANCH_, IND_CALL), BN(PERF_SAMPLE_BRANCH_, ABORT_TX),
	BN(PERF_SAMPLE_BRANCH_, IN_TX), BN(PERF_SAMPLE_BRANCH_, NO_TX),
	BN(PERF_SAMPLE_BRANCH_, COND), BN(PERF_SAMPLE_BRANCH_, CALL_STACK),
	BN(PERF_SAMPLE_BRANCH_, IND_JUMP), BN(PERF_SAMPLE_BRANCH_, CALL),
	BN(PERF_SAMPLE_BRANCH_, NO_FLAGS), BN(PERF_SAMPLE_BRANCH_, NO_CYCLES),
	BN(PERF_SAMPLE_BRANCH_, TYPE_SAVE), BN(PERF_SAMPLE_BRANCH_, HW_INDEX), { 0, NULL }
};
static const struct bit_name read_format_bits[] = {
	BN(PERF_FORMAT_, TOTAL_TIME_ENABLED), BN(PERF_FORMAT_, TOTAL_TIME_RUNNING),
	BN(PERF_FORMAT_, ID), BN(PERF_FORMAT_, GROUP), BN(PERF_FORMAT_, LOST), { 0, NULL }
};
#undef BN

/* perf's __p_bits(); unlike perf, bits it has no name for are not dropped
 * but shown as one hex rest, so that nothing the kernel saw is hidden. */
static void bits_append(GString *out, uint64_t v, const struct bit_name *names)
{
	bool first = true;

	for (; names->name; names++) {
		if (!(v & names->bit))
			continue;
		g_string_append_printf(out, "%s%s", first ? "" : "|", names->name);
		first = false;
		v &= ~names->bit;
	}
	if (v)
		g_string_append_printf(out, "%s%#" PRIx64, first ? "" : "|", v);
}

void repro_perf_attr_append(GString *out, const struct perf_event_attr *attr)
{
	for (size_t i = 0; i < G_N_ELEMENTS(attr_order); i++) {
		enum attr_field f = attr_order[i];
		uint64_t v = attr_get(attr, f);
		const char *name = attr_field_name(f);
		g_autoptr(GString) val = g_string_new(NULL);

		if (!v)
			continue;
		switch (f) {
		case ATTR_F_sample_period: name = "{ sample_period, sample_freq }"; break;
		case ATTR_F_wakeup_events: name = "{ wakeup_events, wakeup_watermark }"; break;
		case ATTR_F_config1: name = "{ bp_addr, config1 }"; break;
		case ATTR_F_config2: name = "{ bp_len, config2 }"; break;
		default: break;
		}
		if (f == ATTR_F_sample_type)
			bits_append(val, v, sample_type_bits);
		else if (f == ATTR_F_branch_sample_type)
			bits_append(val, v, branch_bits);
		else if (f == ATTR_F_read_format)
			bits_append(val, v, read_format_bits);
		else if (f == ATTR_F_clockid)
			g_string_append_printf(val, "%" PRId64, (int64_t)(int32_t)v);
		else if (f == ATTR_F_config || f == ATTR_F_config1 || f == ATTR_F_config2 ||
			 f == ATTR_F_sample_regs_user || f == ATTR_F_sample_regs_intr)
			g_string_append_printf(val, "%#" PRIx64, v);
		else
			g_string_append_printf(val, "%" PRIu64, v);
		g_string_append_printf(out, "  %-32s %s\n", name, val->str);
	}
}

unsigned int repro_dwell_ms(const struct result_set *set, const struct repro_opts *opts,
			    const char **from)
{
	json_t *load = set->scenario ? json_object_get(set->scenario, "load") : NULL;
	json_t *d = load ? json_object_get(load, "dwell_ms") : NULL;
	const char *dummy;

	if (!from)
		from = &dummy;
	if (opts && opts->dwell_ms) {
		*from = "--dwell";
		return opts->dwell_ms;
	}
	/* The file is untrusted: a dwell of more than a day is not one. */
	if (json_is_integer(d) && json_integer_value(d) > 0 &&
	    json_integer_value(d) <= 24 * 3600 * 1000) {
		*from = "the run's scenario, [load] dwell";
		return (unsigned int)json_integer_value(d);
	}
	*from = "not recorded in the result file: pmucanary repro's default, --dwell to change";
	return REPRO_DEFAULT_DWELL_MS;
}

static unsigned int ring_pages_of(const struct result_set *set)
{
	json_t *load = set->scenario ? json_object_get(set->scenario, "load") : NULL;
	json_t *r = load ? json_object_get(load, "ring_pages") : NULL;
	json_int_t v = json_is_integer(r) ? json_integer_value(r) : 0;

	/* A power of two in the scenario's range, else the load phase's default. */
	if (v >= 1 && v <= 1024 && !(v & (v - 1)))
		return (unsigned int)v;
	return 8;
}

static bool opened_per_task(const struct result_set *set)
{
	for (guint i = 0; i < set->limitations->len; i++)
		if (strstr(set->limitations->pdata[i], PROBER_PER_TASK_TEXT))
			return true;
	return false;
}

static const char *cell_kernel(const struct result_set *set, const struct cell *cell)
{
	return cell->kernel ? cell->kernel : set->kernel ? set->kernel : "an unnamed kernel";
}

/* "GUEST_CRASH with cycles:pp (perf-3.6 encoding) on 3.6.0", unescaped. */
static char *cell_title(const struct result_set *set, const struct cell *cell)
{
	return g_strdup_printf("%s with %s (%s encoding) on %s", outcome_name(cell->outcome),
			       cell->spec, cell->profile, cell_kernel(set, cell));
}

/* The program's fixed part, after the cell's constants. */
static const char repro_body[] =
"static long perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,\n"
"\t\t\t    int group_fd, unsigned long flags)\n"
"{\n"
"\treturn syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);\n"
"}\n"
"\n"
"static const char *errno_name(int err)\n"
"{\n"
"\tfor (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)\n"
"\t\tif (errno_names[i].err == err)\n"
"\t\t\treturn errno_names[i].name;\n"
"\treturn \"an errno\";\n"
"}\n"
"\n"
"/* The online CPUs, from the kernel's list (\"0-3,5\"). */\n"
"static int online_cpus(int **out)\n"
"{\n"
"\tFILE *f = fopen(\"/sys/devices/system/cpu/online\", \"r\");\n"
"\tint n = 0, cap = 0, *cpus = NULL, c;\n"
"\tlong a, b;\n"
"\n"
"\tif (!f)\n"
"\t\treturn -1;\n"
"\twhile (fscanf(f, \"%ld\", &a) == 1) {\n"
"\t\tb = a;\n"
"\t\tc = fgetc(f);\n"
"\t\tif (c == '-') {\n"
"\t\t\tif (fscanf(f, \"%ld\", &b) != 1)\n"
"\t\t\t\tbreak;\n"
"\t\t\tc = fgetc(f);\n"
"\t\t}\n"
"\t\tfor (long i = a; i <= b && i < 65536; i++) {\n"
"\t\t\tif (n == cap) {\n"
"\t\t\t\tint *more = realloc(cpus, (cap = cap ? 2 * cap : 64) * sizeof(*cpus));\n"
"\n"
"\t\t\t\tif (!more) {\n"
"\t\t\t\t\tfree(cpus);\n"
"\t\t\t\t\tfclose(f);\n"
"\t\t\t\t\treturn -1;\n"
"\t\t\t\t}\n"
"\t\t\t\tcpus = more;\n"
"\t\t\t}\n"
"\t\t\tcpus[n++] = (int)i;\n"
"\t\t}\n"
"\t\tif (c != ',')\n"
"\t\t\tbreak;\n"
"\t}\n"
"\tfclose(f);\n"
"\t*out = cpus;\n"
"\treturn n;\n"
"}\n"
"\n"
"/* The open phase: open and close on each CPU in turn; perf record -a\n"
" * fails when any CPU fails, so the first failure is the verdict. */\n"
"static int check_errno(const int *cpus, int n)\n"
"{\n"
"\tfor (int i = 0; i < n; i++) {\n"
"\t\tint fd = (int)perf_event_open(&u.attr, PER_TASK ? 0 : -1, cpus[i], -1,\n"
"\t\t\t\t\t     PERF_FLAG_FD_CLOEXEC);\n"
"\t\tint err = errno;\n"
"\n"
"\t\tif (fd >= 0) {\n"
"\t\t\tclose(fd);\n"
"\t\t\tcontinue;\n"
"\t\t}\n"
"\t\tif (err == EXPECT_ERRNO || (EXPECT_ERRNO == -1 && !strcmp(errno_name(err), \"an errno\"))) {\n"
"\t\t\tprintf(\"repro: %s: perf_event_open on cpu %d: %s (%s), as recorded: reproduced\\n\",\n"
"\t\t\t       cell_name, cpus[i], errno_name(err), strerror(err));\n"
"\t\t\treturn 0;\n"
"\t\t}\n"
"\t\tprintf(\"repro: %s: perf_event_open on cpu %d: %s (%s), the run recorded %s: \"\n"
"\t\t       \"not reproduced\\n\", cell_name, cpus[i], errno_name(err), strerror(err),\n"
"\t\t       expect_name);\n"
"\t\treturn 1;\n"
"\t}\n"
"\tprintf(\"repro: %s: opened on every CPU (%d), the run recorded %s: not reproduced\\n\",\n"
"\t       cell_name, n, expect_name);\n"
"\treturn 1;\n"
"}\n"
"\n"
"struct ring {\n"
"\tint fd;\n"
"\tvoid *base;\n"
"};\n"
"\n"
"static size_t page_size, data_size;\n"
"static unsigned long long samples, lost, throttles;\n"
"\n"
"static void ring_read(const unsigned char *data, unsigned long long off, void *dst, size_t len)\n"
"{\n"
"\tsize_t start = off % data_size, first = len < data_size - start ? len : data_size - start;\n"
"\n"
"\tmemcpy(dst, data + start, first);\n"
"\tif (first < len)\n"
"\t\tmemcpy((unsigned char *)dst + first, data, len - first);\n"
"}\n"
"\n"
"/* Reads every complete record between data_tail and data_head, as\n"
" * perf record does, so that the ring never stays full. */\n"
"static void ring_drain(struct ring *r)\n"
"{\n"
"\tstruct perf_event_mmap_page *pg = r->base;\n"
"\tconst unsigned char *data = (const unsigned char *)r->base + page_size;\n"
"\tunsigned long long head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);\n"
"\tunsigned long long tail = pg->data_tail;\n"
"\n"
"\twhile (tail + sizeof(struct perf_event_header) <= head) {\n"
"\t\tstruct perf_event_header h;\n"
"\n"
"\t\tring_read(data, tail, &h, sizeof(h));\n"
"\t\tif (h.size < sizeof(h) || tail + h.size > head)\n"
"\t\t\tbreak;\n"
"\t\tif (h.type == PERF_RECORD_SAMPLE) {\n"
"\t\t\tsamples++;\n"
"\t\t} else if (h.type == PERF_RECORD_LOST) {\n"
"\t\t\tunsigned long long n;\n"
"\n"
"\t\t\tring_read(data, tail + sizeof(h) + 8, &n, sizeof(n));\n"
"\t\t\tlost += n;\n"
"\t\t} else if (h.type == PERF_RECORD_THROTTLE) {\n"
"\t\t\tthrottles++;\n"
"\t\t}\n"
"\t\ttail += h.size;\n"
"\t}\n"
"\t__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);\n"
"}\n"
"\n"
"static long long now_ms(void)\n"
"{\n"
"\tstruct timespec ts;\n"
"\n"
"\tclock_gettime(CLOCK_MONOTONIC, &ts);\n"
"\treturn (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;\n"
"}\n"
"\n"
"/* The load phase: open disabled with a ring buffer on every CPU, enable\n"
" * all together, drain while it dwells, disable, drain, close. */\n"
"static int arm(const int *cpus, int n, long long dwell_ms)\n"
"{\n"
"\tstruct ring *rings = calloc((size_t)n, sizeof(*rings));\n"
"\tstruct pollfd *pfd = calloc((size_t)n, sizeof(*pfd));\n"
"\tint armed = 0, rc = 0;\n"
"\n"
"\tif (!rings || !pfd) {\n"
"\t\tfprintf(stderr, \"repro: out of memory\\n\");\n"
"\t\treturn 2;\n"
"\t}\n"
"\tpage_size = (size_t)sysconf(_SC_PAGESIZE);\n"
"\tdata_size = page_size * RING_PAGES;\n"
"\tu.attr.disabled = 1;\n"
"\tfor (; armed < n; armed++) {\n"
"\t\tstruct ring *r = &rings[armed];\n"
"\t\tint err;\n"
"\n"
"\t\tr->fd = (int)perf_event_open(&u.attr, PER_TASK ? 0 : -1, cpus[armed], -1,\n"
"\t\t\t\t\t     PERF_FLAG_FD_CLOEXEC);\n"
"\t\terr = errno;\n"
"\t\tif (r->fd < 0) {\n"
"\t\t\tprintf(\"repro: %s: perf_event_open on cpu %d: %s (%s), the run recorded %s \"\n"
"\t\t\t       \"(it opened): not reproduced\\n\", cell_name, cpus[armed],\n"
"\t\t\t       errno_name(err), strerror(err), expect_name);\n"
"\t\t\trc = 1;\n"
"\t\t\tbreak;\n"
"\t\t}\n"
"\t\tr->base = mmap(NULL, page_size + data_size, PROT_READ | PROT_WRITE, MAP_SHARED,\n"
"\t\t\t       r->fd, 0);\n"
"\t\tif (r->base == MAP_FAILED) {\n"
"\t\t\terr = errno;\n"
"\t\t\tprintf(\"repro: %s: mmap of the ring buffer on cpu %d: %s (%s): not reproduced\\n\",\n"
"\t\t\t       cell_name, cpus[armed], errno_name(err), strerror(err));\n"
"\t\t\tclose(r->fd);\n"
"\t\t\trc = 1;\n"
"\t\t\tbreak;\n"
"\t\t}\n"
"\t\tpfd[armed].fd = r->fd;\n"
"\t\tpfd[armed].events = POLLIN;\n"
"\t}\n"
"\tif (!rc) {\n"
"\t\tlong long end = now_ms() + dwell_ms, left;\n"
"\n"
"\t\tfor (int i = 0; i < armed; i++)\n"
"\t\t\tioctl(rings[i].fd, PERF_EVENT_IOC_ENABLE, 0);\n"
"\t\t/* Wakeups depend on the attr under test: a short poll drains anyway. */\n"
"\t\twhile ((left = end - now_ms()) > 0) {\n"
"\t\t\tpoll(pfd, (nfds_t)armed, left < 10 ? (int)left : 10);\n"
"\t\t\tfor (int i = 0; i < armed; i++)\n"
"\t\t\t\tring_drain(&rings[i]);\n"
"\t\t}\n"
"\t\tfor (int i = 0; i < armed; i++)\n"
"\t\t\tioctl(rings[i].fd, PERF_EVENT_IOC_DISABLE, 0);\n"
"\t\tfor (int i = 0; i < armed; i++)\n"
"\t\t\tring_drain(&rings[i]);\n"
"\t\tprintf(\"repro: %s: armed on %d CPU(s) for %lld ms: %llu samples, %llu lost, \"\n"
"\t\t       \"%llu throttles; it opened, as recorded (the run saw %s)\\n\",\n"
"\t\t       cell_name, armed, dwell_ms, samples, lost, throttles, expect_name);\n"
"\t}\n"
"\tfor (int i = 0; i < armed; i++) {\n"
"\t\tmunmap(rings[i].base, page_size + data_size);\n"
"\t\tclose(rings[i].fd);\n"
"\t}\n"
"\tfree(rings);\n"
"\tfree(pfd);\n"
"\treturn rc;\n"
"}\n"
"\n"
"int main(int argc, char **argv)\n"
"{\n"
"\tlong long dwell_ms = DWELL_MS;\n"
"\tint *cpus = NULL, n, rc;\n"
"\tstatic int task_cpu = -1;\n"
"\n"
"\tif (argc > 2 || (argc == 2 && (!argv[1][0] ||\n"
"\t\t\t\t       strspn(argv[1], \"0123456789\") != strlen(argv[1]) ||\n"
"\t\t\t\t       strlen(argv[1]) > 9))) {\n"
"\t\tfprintf(stderr, \"usage: %s [DWELL_MS]\\n\", argv[0]);\n"
"\t\treturn 2;\n"
"\t}\n"
"\tif (argc == 2)\n"
"\t\tdwell_ms = atoll(argv[1]);\n"
"\tif (PER_TASK) {\n"
"\t\tcpus = &task_cpu;\n"
"\t\tn = 1;\n"
"\t} else if ((n = online_cpus(&cpus)) <= 0) {\n"
"\t\tfprintf(stderr, \"repro: cannot read /sys/devices/system/cpu/online\\n\");\n"
"\t\treturn 2;\n"
"\t}\n"
"\trc = ERRNO_CELL ? check_errno(cpus, n) : arm(cpus, n, dwell_ms);\n"
"\tif (!PER_TASK)\n"
"\t\tfree(cpus);\n"
"\treturn rc;\n"
"}\n";

GString *repro_c_source(const struct result_set *set, const struct cell *cell,
			const struct repro_opts *opts)
{
	GString *out = g_string_new(NULL);
	g_autofree char *title = cell_title(set, cell);
	g_autofree char *raw_name = g_strdup_printf("%s:%s", cell->profile, cell->spec);
	/* Only ever printed: escaped for the terminal it is printed on. */
	g_autofree char *name = text_escape(raw_name);
	enum outcome_class cls = outcome_class(cell->outcome);
	bool errno_cell = cls == OUTCOME_CLASS_ERRNO;
	unsigned int dwell = repro_dwell_ms(set, opts, NULL);
	int expect = errno_cell ? outcome_errno(cell->outcome) : 0;

	g_string_append(out, "/* pmucanary reproducer: ");
	repro_c_comment_append(out, title);
	g_string_append(out, "\n *\n * Run ");
	repro_c_comment_append(out, set->run_id);
	g_string_append_printf(out, ", outcome %s", outcome_name(cell->outcome));
	if (cell->n)
		g_string_append_printf(out, " %d/%d", cell->k, cell->n);
	g_string_append(out, ". See README.txt.\n"
		" *\n"
		" *   cc -Wall -o repro repro.c && ./repro [DWELL_MS]     (as root)\n"
		" *\n"
		" * Exit 0: the kernel did what the run recorded (");
	g_string_append(out, errno_cell ? "this errno" : "the event opened on every CPU");
	g_string_append(out, "),\n * 1: it did not, 2: could not run. Needs only <linux/perf_event.h> "
		"and libc. */\n"
		"#define _GNU_SOURCE\n"
		"#include <errno.h>\n#include <linux/perf_event.h>\n#include <poll.h>\n"
		"#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
		"#include <sys/ioctl.h>\n#include <sys/mman.h>\n#include <sys/syscall.h>\n"
		"#include <sys/types.h>\n#include <time.h>\n#include <unistd.h>\n\n");
	g_string_append(out, "static const char cell_name[] = \"");
	repro_c_string_append(out, name);
	g_string_append_printf(out, "\";\nstatic const char expect_name[] = \"%s\";\n",
			       outcome_name(cell->outcome));
	g_string_append_printf(out,
		"/* 1: checked as the open phase (open and close, the errno); 0: armed as\n"
		" * the load phase (the harm, if any, shows in the guests or the host log). */\n"
		"#define ERRNO_CELL %d\n", errno_cell);
	if (expect < 0)
		g_string_append(out, "#define EXPECT_ERRNO (-1) /* EUNKNOWN: any errno not named below */\n");
	else
		g_string_append_printf(out, "#define EXPECT_ERRNO %s\n",
				       errno_cell ? outcome_name(cell->outcome) : "0");
	g_string_append_printf(out,
		"/* 1: the run opened per task (pid 0, cpu -1), not system-wide. */\n"
		"#define PER_TASK %d\n"
		"#define DWELL_MS %u\n"
		"#define RING_PAGES %u\n\n", opened_per_task(set), dwell, ring_pages_of(set));
	g_string_append(out, "static const struct {\n\tint err;\n\tconst char *name;\n} errno_names[] = {\n");
	for (int o = 0; o < OUTCOME_COUNT; o++)
		if (outcome_class(o) == OUTCOME_CLASS_ERRNO && outcome_errno(o) > 0)
			g_string_append_printf(out, "\t{ %s, \"%s\" },\n", outcome_name(o),
					       outcome_name(o));
	g_string_append(out, "};\n\n"
		"/* The cell's final attr, the one its outcome belongs to. The union pads\n"
		" * it with zeros: the kernel reads .size bytes, which may be more than\n"
		" * this header's struct (an attr from a newer perf). */\n"
		"static union {\n\tstruct perf_event_attr attr;\n\tunsigned char bytes[65536];\n"
		"} u = { .attr = {\n");
	repro_c_attr_append(out, &cell->attr);
	g_string_append(out, "} };\n\n");
	g_string_append(out, repro_body);
	return out;
}

/* Appends s, escaped, its tail only when longer than max. */
static void bounded_append(GString *out, const char *s, size_t max, unsigned int flags)
{
	size_t len = strlen(s);

	if (len > max) {
		const char *tail = s + len - max;

		/* Do not start inside a UTF-8 sequence. */
		while (*tail && ((unsigned char)*tail & 0xc0) == 0x80)
			tail++;
		g_string_append_printf(out, "[... %zu bytes cut ...]", (size_t)(tail - s));
		if (flags & TEXT_KEEP_NEWLINE)
			g_string_append_c(out, '\n');
		s = tail;
	}
	text_escape_append(out, s, flags);
}

static void json_scalar_append(GString *out, json_t *v, size_t max)
{
	if (json_is_string(v))
		bounded_append(out, json_string_value(v), max, 0);
	else if (json_is_integer(v))
		g_string_append_printf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_real(v))
		g_string_append_printf(out, "%g", json_real_value(v));
	else if (json_is_true(v))
		g_string_append(out, "true");
	else if (json_is_false(v))
		g_string_append(out, "false");
	else if (json_is_null(v))
		g_string_append(out, "null");
}

/* One JSON value of the evidence as indented "key: value" lines; strings
 * with newlines as indented blocks. Stops adding once out passes limit. */
static void evidence_value_append(GString *out, const char *key, json_t *v, int indent,
				  int depth, size_t limit)
{
	const char *k;
	json_t *m;
	size_t i;

	if (out->len > limit)
		return;
	g_string_append_printf(out, "%*s", indent, "");
	if (key) {
		text_escape_append(out, key, 0);
		g_string_append(out, ":");
	}
	if (depth > 4 && (json_is_object(v) || json_is_array(v))) {
		g_string_append(out, " (nested too deep, left out)\n");
		return;
	}
	if (json_is_object(v)) {
		g_string_append(out, "\n");
		json_object_foreach(v, k, m)
			evidence_value_append(out, k, m, indent + 2, depth + 1, limit);
	} else if (json_is_array(v)) {
		g_string_append(out, "\n");
		json_array_foreach(v, i, m) {
			g_autofree char *idx = g_strdup_printf("[%zu]", i);

			evidence_value_append(out, idx, m, indent + 2, depth + 1, limit);
		}
	} else if (json_is_string(v) && strchr(json_string_value(v), '\n')) {
		g_autoptr(GString) block = g_string_new(NULL);
		g_auto(GStrv) lines = NULL;

		bounded_append(block, json_string_value(v), REPRO_EVIDENCE_STRING_MAX,
			       TEXT_KEEP_NEWLINE | TEXT_KEEP_TAB);
		lines = g_strsplit(block->str, "\n", -1);
		g_string_append(out, " |\n");
		for (char **l = lines; *l; l++)
			if (**l || l[1])
				g_string_append_printf(out, "%*s%s\n", indent + 4, "", *l);
	} else {
		g_string_append(out, " ");
		json_scalar_append(out, v, REPRO_EVIDENCE_STRING_MAX);
		g_string_append(out, "\n");
	}
}

/* The fingerprint, flattened to "key.sub: value" lines; a list of objects
 * with names (the PMUs) as the names. */
static void host_append(GString *out, json_t *host)
{
	const char *k, *k2;
	json_t *v, *v2, *m;
	size_t i;

	if (!json_is_object(host) || !json_object_size(host)) {
		g_string_append(out, "  (no fingerprint in the result file)\n");
		return;
	}
	json_object_foreach(host, k, v) {
		if (json_is_object(v)) {
			json_object_foreach(v, k2, v2) {
				if (json_is_object(v2) || json_is_array(v2))
					continue;
				g_string_append(out, "  ");
				text_escape_append(out, k, 0);
				g_string_append_c(out, '.');
				text_escape_append(out, k2, 0);
				g_string_append(out, ": ");
				json_scalar_append(out, v2, 512);
				g_string_append_c(out, '\n');
			}
			continue;
		}
		g_string_append(out, "  ");
		text_escape_append(out, k, 0);
		g_string_append(out, ":");
		if (json_is_array(v)) {
			json_array_foreach(v, i, m) {
				json_t *nm = json_is_object(m) ? json_object_get(m, "name") : m;

				if (i >= 64) {
					g_string_append_printf(out, " ... (%zu in all)", json_array_size(v));
					break;
				}
				g_string_append(out, i ? ", " : " ");
				json_scalar_append(out, nm, 128);
			}
		} else {
			g_string_append_c(out, ' ');
			json_scalar_append(out, v, 512);
		}
		g_string_append_c(out, '\n');
	}
}

/* Isolation said the cell's attr harmed only beside others. */
static bool harmed_only_together(const struct cell *cell)
{
	size_t i;
	json_t *e;

	json_array_foreach(cell->evidence, i, e)
		if (json_array_size(json_object_get(e, "only_together_with")))
			return true;
	return false;
}

GString *repro_readme(const struct result_set *set, const char *result_name,
		      const struct cell *cell, const struct repro_opts *opts)
{
	GString *out = g_string_new(NULL);
	g_autofree char *title = cell_title(set, cell);
	const struct profile *p = profile_find(cell->profile);
	enum outcome_class cls = outcome_class(cell->outcome);
	const char *dwell_from;
	unsigned int dwell = repro_dwell_ms(set, opts, &dwell_from);
	size_t ev_start;

	text_escape_append(out, title, 0);
	g_string_append(out, "\n\n");
	g_string_append(out, "pmucanary found this with one perf_event_open() configuration; repro.c\n"
		"beside this file does the same with nothing but <linux/perf_event.h> and libc.\n\n");
	g_string_append(out, "cell:\n  profile: ");
	text_escape_append(out, cell->profile, 0);
	if (p)
		g_string_append_printf(out, " (%s)", profile_releases(p));
	g_string_append(out, "\n  spec:    ");
	text_escape_append(out, cell->spec, 0);
	g_string_append(out, "\n  kernel:  ");
	text_escape_append(out, cell_kernel(set, cell), 0);
	g_string_append_printf(out, "\n  outcome: %s\n", outcome_name(cell->outcome));
	if (cell->n)
		g_string_append_printf(out, "  k/n:     %d/%d (tries that %s / tries)\n", cell->k,
				       cell->n, cls == OUTCOME_CLASS_HARM ? "harmed" : "went bad");
	else
		g_string_append(out, "  k/n:     - (not repeated: the open phase opens each attr once "
			"per CPU)\n");
	if (results_cell_rule(cell)) {
		g_string_append(out, "  judged:  by the rule ");
		text_escape_append(out, results_cell_rule(cell), 0);
		g_string_append(out, " (inferred, not armed alone)\n");
	}
	g_string_append(out, "  result:  ");
	text_escape_append(out, result_name, 0);
	g_string_append_printf(out, " (%s ", results_kind_name(set->kind));
	text_escape_append(out, set->run_id, 0);
	g_string_append(out, ", ");
	text_escape_append(out, set->created, 0);
	g_string_append(out, ", pmucanary ");
	text_escape_append(out, set->tool_version, 0);
	g_string_append(out, ", accel ");
	text_escape_append(out, set->accel, 0);
	g_string_append(out, ")\n\n");

	g_string_append(out, "The attr the kernel got (the final one, after the profile's fallbacks),\n"
		"as perf -vv prints it:\n");
	g_string_append(out, "------------------------------------------------------------\n"
		"perf_event_attr:\n");
	repro_perf_attr_append(out, &cell->attr);
	g_string_append(out, "------------------------------------------------------------\n");
	if (cell->tries->len > 1) {
		g_string_append(out, "\nEvery attempt, in order (the profile's retry-on-error "
			"fallbacks):\n");
		for (guint i = 0; i < cell->tries->len; i++) {
			const struct cell_try *t = &g_array_index(cell->tries, struct cell_try, i);
			g_autofree char *a = attr_to_string(&t->attr);

			g_string_append_printf(out, "  %u. %s -> %s", i + 1, a, outcome_name(t->outcome));
			if (t->why) {
				g_string_append(out, " (");
				text_escape_append(out, t->why, 0);
				g_string_append(out, ")");
			}
			g_string_append_c(out, '\n');
		}
	}
	if (cell->per_cpu->len) {
		g_string_append(out, "\nThe CPUs disagreed:");
		for (guint i = 0; i < cell->per_cpu->len; i++) {
			const struct cell_cpu *c = &g_array_index(cell->per_cpu, struct cell_cpu, i);

			g_string_append_printf(out, " cpu%d %s", c->cpu, outcome_name(c->outcome));
		}
		g_string_append_c(out, '\n');
	}

	g_string_append(out, "\nhost:\n");
	host_append(out, set->host);
	if (set->limitations->len) {
		g_string_append(out, "\nlimitations of the run:\n");
		for (guint i = 0; i < set->limitations->len; i++) {
			g_string_append(out, "  - ");
			bounded_append(out, set->limitations->pdata[i], 1024, 0);
			g_string_append_c(out, '\n');
		}
	}

	g_string_append(out, "\nevidence, as recorded:\n");
	ev_start = out->len;
	if (!cell->evidence || !json_array_size(cell->evidence)) {
		g_string_append(out, "  (none recorded)\n");
	} else {
		size_t i;
		json_t *e;

		json_array_foreach(cell->evidence, i, e) {
			g_autofree char *idx = g_strdup_printf("[%zu]", i);

			evidence_value_append(out, idx, e, 2, 0, ev_start + REPRO_EVIDENCE_TOTAL_MAX);
			if (out->len > ev_start + REPRO_EVIDENCE_TOTAL_MAX) {
				g_string_append_printf(out, "  [... evidence cut at %d bytes: the "
					"result file has it whole ...]\n", REPRO_EVIDENCE_TOTAL_MAX);
				break;
			}
		}
	}

	g_string_append(out, "\nreproduce (as root, or with CAP_PERFMON):\n"
		"  cc -Wall -o repro repro.c\n");
	if (cls == OUTCOME_CLASS_ERRNO) {
		g_string_append_printf(out, "  ./repro\n\n"
			"It opens the attr on each online CPU in turn (pid -1, cpu N, no group,\n"
			"PERF_FLAG_FD_CLOEXEC) and closes it, as pmucanary's open phase did: the\n"
			"first failure is the verdict. Exit 0: it failed with %s, as recorded;\n"
			"1: it did something else (the line it prints says what).\n",
			outcome_name(cell->outcome));
	} else {
		g_string_append_printf(out, "  ./repro            # dwells %u ms (%s)\n"
			"  ./repro MS         # dwells MS ms\n\n"
			"It opens the attr disabled on every online CPU (pid -1, cpu N, no group,\n"
			"PERF_FLAG_FD_CLOEXEC), maps a ring buffer of 1 + %u pages on each,\n"
			"enables them all, drains the rings while it dwells (as perf record -a\n"
			"does), then disables, drains and closes, as pmucanary's load phase did.\n"
			"Exit 0: it opened and armed everywhere, as recorded; 1: it did not.\n",
			dwell, dwell_from, ring_pages_of(set));
		if (cls == OUTCOME_CLASS_HARM && harmed_only_together(cell))
			g_string_append(out, "\nNote: isolation found this attr harmful only together with "
				"other attrs\n(the evidence's only_together_with); repro.c arms this one "
				"alone, so\nit may not harm by itself.\n");
		if (cls == OUTCOME_CLASS_HARM) {
			g_autoptr(GString) guest = NULL;
			const char *no_guest;

			g_string_append(out, "\nThe harm is not in the exit code: start KVM guests on the "
				"host first\n(any kernel; keep their vCPUs busy so that PMU interrupts land "
				"in guest\ncontext), run ./repro on the host, and watch the guests' consoles "
				"and the\nhost's dmesg for what the evidence above shows.\n");
			guest = repro_guest_sh(set, cell, opts, &no_guest);
			if (guest)
				g_string_append(out, "\nOr let guest.sh do it: it boots the guest this run "
					"used with plain QEMU\n(the kernel, initrd and command line recorded "
					"in the result file), runs\n./repro beside it and watches the guest's "
					"console and heartbeats:\n  ./guest.sh         # exit 1: harmed, "
					"0: not, 125: the guest never came up\n");
			else
				g_string_append_printf(out, "\nNo guest.sh: %s.\n", no_guest);
		}
	}
	return out;
}


/* ---- guest.sh ---------------------------------------------------------------- */

/* The agent's heartbeat port (guests/hbproto.h HB_PORT_NAME, a layer above
 * this one: test_repro checks that they agree). */
#define REPRO_HB_PORT "org.pmucanary.hb"

/* s single-quoted for sh; false when it holds a byte that is not printable
 * ASCII (a newline would end the assignment, others confuse a terminal). */
static bool sh_quote_append(GString *out, const char *s)
{
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			return false;
	g_string_append_c(out, '\'');
	for (const char *p = s; *p; p++) {
		if (*p == '\'')
			g_string_append(out, "'\\''");
		else
			g_string_append_c(out, *p);
	}
	g_string_append_c(out, '\'');
	return true;
}

/* The scenario's fleet number key in lo..hi, else dflt (the file is
 * untrusted). */
static unsigned int fleet_uint(const struct result_set *set, const char *key, unsigned int lo,
			       unsigned int hi, unsigned int dflt)
{
	json_t *fleet = set->scenario ? json_object_get(set->scenario, "fleet") : NULL;
	json_t *v = fleet ? json_object_get(fleet, key) : NULL;

	if (json_is_integer(v) && json_integer_value(v) >= lo && json_integer_value(v) <= hi)
		return (unsigned int)json_integer_value(v);
	return dflt;
}

/* The script's fixed part: everything after the values. */
static const char guest_sh_body[] =
	"here=$(cd \"$(dirname \"$0\")\" && pwd)\n"
	"qemu=${GUEST_QEMU:-qemu-system-x86_64}\n"
	"say() { echo \"guest.sh: $*\"; }\n"
	"work=$(mktemp -d \"${TMPDIR:-/tmp}/guest-sh.XXXXXX\") || exit 125\n"
	"qpid= rpid=\n"
	"cleanup() {\n"
	"\t[ -n \"$rpid\" ] && kill \"$rpid\" 2>/dev/null\n"
	"\t[ -n \"$qpid\" ] && kill \"$qpid\" 2>/dev/null && wait \"$qpid\" 2>/dev/null\n"
	"\tif [ -n \"${GUEST_KEEP:-}\" ]; then say \"console and heartbeats kept in $work\"; else rm -rf \"$work\"; fi\n"
	"}\n"
	"trap cleanup EXIT\n"
	"trap 'exit 130' INT TERM\n"
	"for f in \"$KERNEL\" \"$INITRD\"; do\n"
	"\t[ -r \"$f\" ] || { say \"$f: cannot be read (the run's guest image: rebuild it with\"\n"
	"\t\t\"'pmucanary image', or set KERNEL and INITRD above)\"; exit 125; }\n"
	"done\n"
	"command -v \"$qemu\" >/dev/null || { say \"$qemu: not found\"; exit 125; }\n"
	"if [ ! -x \"$here/repro\" ] || [ \"$here/repro.c\" -nt \"$here/repro\" ]; then\n"
	"\tcc -o \"$here/repro\" \"$here/repro.c\" || { say \"cannot build $here/repro\"; exit 125; }\n"
	"fi\n"
	": >\"$work/hb.log\"\n"
	"# panic=none: a panicked guest stays, its console says so\n"
	"# shellcheck disable=SC2086\n"
	"\"$qemu\" -machine pc,accel=\"$ACCEL\" -m \"$MEM\" -smp \"$SMP\" -nodefaults -display none \\\n"
	"\t-no-reboot -action panic=none -kernel \"$KERNEL\" -initrd \"$INITRD\" -append \"$CMDLINE\" \\\n"
	"\t-serial \"file:$work/console.log\" -device pvpanic -device virtio-serial-pci \\\n"
	"\t-chardev \"file,id=hb,path=$work/hb.log\" -device \"virtserialport,chardev=hb,name=$PORT\" \\\n"
	"\t${GUEST_QEMU_EXTRA:-} >\"$work/qemu.log\" 2>&1 &\n"
	"qpid=$!\n"
	"last_hb() { grep '^HB v=1 ' \"$work/hb.log\" | tail -n 1; }\n"
	"field() { printf '%s\\n' \"$1\" | tr ' ' '\\n' | sed -n \"s/^$2=//p\"; }\n"
	"t0=$(date +%s)\n"
	"while [ -z \"$(last_hb)\" ]; do\n"
	"\tif ! kill -0 \"$qpid\" 2>/dev/null; then\n"
	"\t\tsay \"QEMU exited before the guest's first heartbeat:\"; tail -n 5 \"$work/qemu.log\"\n"
	"\t\ttail -n 5 \"$work/console.log\" 2>/dev/null; exit 125\n"
	"\tfi\n"
	"\tif [ $(( $(date +%s) - t0 )) -ge \"$BOOT_TIMEOUT_S\" ]; then\n"
	"\t\tsay \"no heartbeat within ${BOOT_TIMEOUT_S} s: the guest did not come up\"\n"
	"\t\ttail -n 5 \"$work/console.log\" 2>/dev/null; exit 125\n"
	"\tfi\n"
	"\tsleep 0.5\n"
	"done\n"
	"say \"guest up in $(( $(date +%s) - t0 )) s (accel $ACCEL); arming the attr for ${DWELL_MS} ms\"\n"
	"oops0=$(field \"$(last_hb)\" oops)\n"
	"seq=$(field \"$(last_hb)\" seq) seen=$(date +%s)\n"
	"\"$here/repro\" \"$DWELL_MS\" >\"$work/repro.out\" 2>&1 &\n"
	"rpid=$!\n"
	"harm() { # prints the harm and returns 0, or returns 1\n"
	"\tif grep -q 'Kernel panic - not syncing' \"$work/console.log\" 2>/dev/null; then\n"
	"\t\techo \"GUEST_CRASH: $(grep -m1 'Kernel panic - not syncing' \"$work/console.log\" | tr -cd '[:print:]')\"; return 0\n"
	"\tfi\n"
	"\tif grep -q '^CORRUPT v=1 ' \"$work/hb.log\"; then\n"
	"\t\techo \"GUEST_CORRUPTION: $(grep -m1 '^CORRUPT v=1 ' \"$work/hb.log\")\"; return 0\n"
	"\tfi\n"
	"\tif ! kill -0 \"$qpid\" 2>/dev/null; then\n"
	"\t\techo \"GUEST_REBOOT: QEMU exited (-no-reboot: the guest reset or powered off)\"; return 0\n"
	"\tfi\n"
	"\thb=$(last_hb) now=$(date +%s)\n"
	"\tif [ \"$(field \"$hb\" oops)\" != \"$oops0\" ]; then\n"
	"\t\techo \"GUEST_OOPS: the guest counted oops-class kernel lines ($oops0 -> $(field \"$hb\" oops))\"; return 0\n"
	"\tfi\n"
	"\tif [ \"$(field \"$hb\" seq)\" != \"$seq\" ]; then\n"
	"\t\tseq=$(field \"$hb\" seq) seen=$now\n"
	"\telif [ $((now - seen)) -ge \"$HB_TIMEOUT_S\" ]; then\n"
	"\t\techo \"GUEST_HANG: no heartbeat for $((now - seen)) s\"; return 0\n"
	"\tfi\n"
	"\treturn 1\n"
	"}\n"
	"end=\n"
	"while :; do\n"
	"\tif what=$(harm); then\n"
	"\t\tsay \"$what\"; say \"the run recorded $RECORDED\"\n"
	"\t\tsed 's/^/guest.sh: repro: /' \"$work/repro.out\"; exit 1\n"
	"\tfi\n"
	"\tif [ -z \"$end\" ] && ! kill -0 \"$rpid\" 2>/dev/null; then\n"
	"\t\twait \"$rpid\"; rc=$?; rpid=\n"
	"\t\tsed 's/^/guest.sh: repro: /' \"$work/repro.out\"\n"
	"\t\t[ \"$rc\" = 2 ] && { say \"repro could not run\"; exit 125; }\n"
	"\t\tend=$(( $(date +%s) + GRACE_S ))\n"
	"\tfi\n"
	"\tif [ -n \"$end\" ] && [ \"$(date +%s)\" -ge \"$end\" ]; then\n"
	"\t\tsay \"no harm: the guest kept its heartbeat through the dwell and ${GRACE_S} s after\"\n"
	"\t\tsay \"the run recorded $RECORDED\"; exit 0\n"
	"\tfi\n"
	"\tsleep 0.5\n"
	"done\n";

GString *repro_guest_sh(const struct result_set *set, const struct cell *cell,
			const struct repro_opts *opts, const char **why)
{
	json_t *gk = set->extra ? json_object_get(set->extra, "guest_kernel") : NULL;
	const char *kernel = json_string_value(json_object_get(gk, "path"));
	const char *initrd = json_string_value(json_object_get(gk, "initrd"));
	const char *cmdline = json_string_value(json_object_get(gk, "cmdline"));
	bool tcg = !g_strcmp0(set->accel, "tcg");
	unsigned int hb_ms = fleet_uint(set, "heartbeat_timeout_ms", 100, 3600000, tcg ? 5000 : 2000);
	unsigned int boot_ms = fleet_uint(set, "boot_timeout_ms", 1, 3600000, tcg ? 120000 : 30000);
	g_autoptr(GString) out = g_string_new("#!/bin/sh\n");
	g_autofree char *title = NULL, *recorded = NULL;
	bool ok = true;

	*why = NULL;
	if (outcome_class(cell->outcome) != OUTCOME_CLASS_HARM || !cell->has_attr) {
		*why = "only a harm cell has a guest to watch";
		return NULL;
	}
	if (set->kind != RESULTS_KIND_RUN || (g_strcmp0(set->accel, "kvm") && !tcg)) {
		*why = "the result file is not a run that booted guests";
		return NULL;
	}
	if (!kernel || !initrd || !cmdline || !*kernel || !*initrd) {
		*why = "the run booted disk guests, or its run.json predates guest_kernel's initrd "
		       "and cmdline";
		return NULL;
	}
	title = cell_title(set, cell);
	recorded = cell->n ? g_strdup_printf("%s, k/n %d/%d", outcome_name(cell->outcome), cell->k,
					     cell->n)
			   : g_strdup(outcome_name(cell->outcome));
	g_string_append(out, "# guest.sh: ");
	repro_c_comment_append(out, title);
	g_string_append(out,
		"\n#\n"
		"# Boots the guest this run used, with plain QEMU (no libvirt, no pmucanary),\n"
		"# its console and heartbeat port to files, runs ./repro (built from repro.c\n"
		"# if needed) on this host beside it for the dwell, then watches a grace time\n"
		"# more. Run it as root on the machine under test.\n"
		"# Exit: 1 the guest was harmed (a panic on its console, a canary corruption,\n"
		"# an oops, no heartbeat for the run's heartbeat timeout, QEMU gone), 0 it was\n"
		"# not, 125 it never came up (or QEMU, the kernel or the initrd is missing).\n"
		"# Environment: GUEST_ACCEL (kvm or tcg; default the run's), GUEST_QEMU,\n"
		"# GUEST_QEMU_EXTRA (more QEMU arguments), REPRO_MS (the dwell), GUEST_KEEP\n"
		"# (keep the console and heartbeat files).\n"
		"set -u\n");
	g_string_append(out, "KERNEL=");
	ok &= sh_quote_append(out, kernel);
	g_string_append(out, "\nINITRD=");
	ok &= sh_quote_append(out, initrd);
	g_string_append(out, "\nCMDLINE=");
	ok &= sh_quote_append(out, cmdline);
	g_string_append(out, "\nRECORDED=");
	ok &= sh_quote_append(out, recorded);
	if (!ok) {
		*why = "a path or the command line in the result file holds a byte a shell script "
		       "should not carry";
		return NULL;
	}
	g_string_append_printf(out,
		"\nACCEL=${GUEST_ACCEL:-%s}\n"
		"MEM=%u\nSMP=%u\n"
		"HB_TIMEOUT_S=%u\nBOOT_TIMEOUT_S=%u\nGRACE_S=%u\n"
		"DWELL_MS=${REPRO_MS:-%u}\n"
		"PORT=%s\n",
		tcg ? "tcg" : "kvm", fleet_uint(set, "memory_mib", 64, 1 << 20, 192),
		fleet_uint(set, "vcpus", 1, 64, 1), (hb_ms + 999) / 1000, (boot_ms + 999) / 1000,
		2 * ((hb_ms + 999) / 1000), repro_dwell_ms(set, opts, NULL), REPRO_HB_PORT);
	g_string_append(out, guest_sh_body);
	return g_steal_pointer(&out);
}

int repro_write(const struct result_set *set, const char *result_name,
		const struct cell *cell, const struct repro_opts *opts, const char *dir,
		char **written)
{
	g_autofree char *name = repro_dir_name(cell);
	g_autofree char *cdir = g_build_filename(dir, name, NULL);
	g_autofree char *cpath = g_build_filename(cdir, "repro.c", NULL);
	g_autofree char *rpath = g_build_filename(cdir, "README.txt", NULL);
	g_autoptr(GString) src = NULL;
	g_autoptr(GString) readme = NULL;
	g_autoptr(GString) guest = NULL;
	const char *no_guest;
	int r;

	if (!cell->has_attr)
		return pc_fail(EINVAL, "cell has no attr: nothing to reproduce");
	if (g_mkdir_with_parents(cdir, 0777) < 0)
		return pc_fail(errno, "cannot create %s: %s", cdir, g_strerror(errno));
	src = repro_c_source(set, cell, opts);
	readme = repro_readme(set, result_name, cell, opts);
	if ((r = outfile_write(cpath, src->str, src->len)) < 0 ||
	    (r = outfile_write(rpath, readme->str, readme->len)) < 0)
		return r;
	guest = repro_guest_sh(set, cell, opts, &no_guest);
	if (guest) {
		g_autofree char *gpath = g_build_filename(cdir, "guest.sh", NULL);

		if ((r = outfile_write(gpath, guest->str, guest->len)) < 0)
			return r;
		if (chmod(gpath, 0755) < 0)
			return pc_fail(errno, "%s: %s", gpath, g_strerror(errno));
	}
	if (written)
		*written = g_steal_pointer(&cdir);
	return 0;
}
