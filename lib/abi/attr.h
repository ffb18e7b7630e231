/* The attr model: struct perf_event_attr as data.
 *
 * One table (ATTR_FIELDS) names every member by its kernel name, so that JSON
 * output, JSON input, equality and printing all agree. Unions are named by
 * the member perf uses for events (sample_period/sample_freq chosen by
 * `freq`; config1/config2 rather than bp_addr/bp_len). */
#ifndef PMUCANARY_ATTR_H
#define PMUCANARY_ATTR_H

#include <linux/perf_event.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* X(name): scalar members; B(name): bit-field members. */
#define ATTR_SCALARS(X)                                                    \
	X(type) X(size) X(config) X(sample_period) X(sample_type)           \
	X(read_format) X(wakeup_events) X(bp_type) X(config1) X(config2)    \
	X(branch_sample_type) X(sample_regs_user) X(sample_stack_user)      \
	X(clockid) X(sample_regs_intr) X(aux_watermark) X(sample_max_stack) \
	X(aux_sample_size) X(sig_data)

#define ATTR_BITS(B)                                                       \
	B(disabled) B(inherit) B(pinned) B(exclusive) B(exclude_user)       \
	B(exclude_kernel) B(exclude_hv) B(exclude_idle) B(mmap) B(comm)     \
	B(freq) B(inherit_stat) B(enable_on_exec) B(task) B(watermark)      \
	B(precise_ip) B(mmap_data) B(sample_id_all) B(exclude_host)         \
	B(exclude_guest) B(exclude_callchain_kernel)                        \
	B(exclude_callchain_user) B(mmap2) B(comm_exec) B(use_clockid)      \
	B(context_switch) B(write_backward) B(namespaces) B(ksymbol)        \
	B(bpf_event) B(aux_output) B(cgroup) B(text_poke) B(build_id)       \
	B(inherit_thread) B(remove_on_exec) B(sigtrap)

#define ATTR_FIELD_ENUM(n) ATTR_F_##n,
enum attr_field {
	ATTR_SCALARS(ATTR_FIELD_ENUM)
	ATTR_BITS(ATTR_FIELD_ENUM)
	ATTR_FIELD_COUNT
};
#undef ATTR_FIELD_ENUM

/* Kernel name of a member; "sample_freq" is reported for sample_period when
 * attr->freq is set, see attr_field_display_name(). */
const char *attr_field_name(enum attr_field f);
const char *attr_field_display_name(const struct perf_event_attr *attr,
				    enum attr_field f);
/* Returns ATTR_FIELD_COUNT when unknown; accepts "sample_freq". */
enum attr_field attr_field_from_name(const char *name);
uint64_t attr_get(const struct perf_event_attr *attr, enum attr_field f);
/* Returns -ERANGE (and leaves attr alone) when value does not fit. */
int attr_set(struct perf_event_attr *attr, enum attr_field f, uint64_t value);

/* Every non-zero member, kernel names, as a JSON object (new reference). */
json_t *attr_to_json(const struct perf_event_attr *attr);
/* Inverse of attr_to_json; unknown keys and bad values fail with a message
 * (pc_errmsg) naming the key. */
int attr_from_json(const json_t *obj, struct perf_event_attr *attr);

/* "type=4 config=0x3c precise_ip=2 exclude_guest=1"; caller g_free()s. */
char *attr_to_string(const struct perf_event_attr *attr);

bool attr_equal(const struct perf_event_attr *a, const struct perf_event_attr *b);
unsigned int attr_hash(const struct perf_event_attr *attr);
/* GHashTable-compatible wrappers. */
unsigned int attr_hash_func(const void *attr);
int attr_equal_func(const void *a, const void *b);

#endif
