/* Scenarios: what one `pmucanary run` sweeps, as an INI file (GKeyFile).
 *
 *   [scenario]  name, description
 *   [fleet]     guests, vcpus, memory, kernel, initrd, heartbeat, heartbeat_timeout,
 *               boot_timeout, restore, pool
 *   [sweep]     pmus, events, modifiers, specs, profiles, raw_excludes, mode
 *   [load]      dwell, batch_size, confirm, ring_pages, pairs_across_batches,
 *               isolate, budget
 *
 * Every key, its type and its default is one row of the table in
 * scenario.c (scenario_key_count/scenario_key_at list it). Unknown sections
 * or keys and bad values fail with "FILE:LINE: [section] key: message". */
#ifndef PMUCANARY_SCENARIO_H
#define PMUCANARY_SCENARIO_H

#include "inject.h"
#include "pool.h"

#include <glib.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* The scenario file as it was when a run started, kept in its run
 * directory so that `run --resume RUN_DIR` (and `run --only RUN_DIR/run.json`)
 * need nothing else. */
#define SCENARIO_RUN_FILE "scenario.ini"

enum scenario_type {
	SCENARIO_TYPE_STRING,   /* free text */
	SCENARIO_TYPE_PATH,     /* a file path; empty for the default */
	SCENARIO_TYPE_UINT,     /* decimal integer within [min, max] */
	SCENARIO_TYPE_DURATION, /* 500ms, 2s, 1m; stored as milliseconds */
	SCENARIO_TYPE_MEMORY,   /* 256M, 1G (bare number: MiB); stored as MiB */
	SCENARIO_TYPE_BOOL,     /* true/false, yes/no, on/off, 1/0 */
	SCENARIO_TYPE_LIST,     /* items separated by ';' or ',' (not inside /../) */
	SCENARIO_TYPE_MODIFIERS,/* a set name (basic, extended, full, none) or a list */
	SCENARIO_TYPE_MODE,     /* record or stat */
	SCENARIO_TYPE_DISK_BOOT, /* kernel or bootloader (enum inject_disk_boot) */
	SCENARIO_TYPE_ISOLATE,  /* rule or each (enum scenario_isolate) */
	SCENARIO_TYPE_COUNT
};

const char *scenario_type_name(enum scenario_type t);

/* How the load phase names what harmed (isolate.h). */
enum scenario_isolate {
	SCENARIO_ISOLATE_RULE,  /* learn a rule over attr fields and prove it, else each */
	SCENARIO_ISOLATE_EACH,  /* every culprit by group testing, armed alone */
	SCENARIO_ISOLATE_COUNT
};

const char *scenario_isolate_name(enum scenario_isolate i);
/* Returns SCENARIO_ISOLATE_COUNT when name is not one. */
enum scenario_isolate scenario_isolate_from_name(const char *name);

struct scenario {
	char *path;             /* as given to scenario_load, NULL for defaults */
	/* [scenario] */
	char *name;             /* defaults to the file's base name without .ini */
	char *description;
	/* [fleet] */
	unsigned int guests;
	unsigned int vcpus;
	unsigned int memory_mib;
	char *kernel;           /* "" = the default guest kernel (image_find_default) */
	char *initrd;           /* "" = the default initramfs */
	char *disk;             /* "" = initramfs guests; else disk guests on this
				 * injected overlay (lib/guests/inject.h) */
	unsigned int disk_guests;       /* of guests, the disk guests; 0: all when disk */
	enum inject_disk_boot disk_boot; /* disk guests: direct kernel boot or the image's
					  * bootloader (checked to have one) */
	unsigned int heartbeat_ms;
	unsigned int heartbeat_timeout_ms;
	unsigned int boot_timeout_ms;   /* 0: the fleet's default for its accel */
	bool restore;           /* restart harmed guests from a saved image (fleet.h) */
	char *pool;             /* the guest pool backend (pool.h), "libvirt" */
	/* [sweep] */
	GPtrArray *pmus;        /* char *; "*" = every PMU on the host */
	GPtrArray *events;      /* char *; "*" = every event of the PMUs swept */
	char *modifier_set;     /* "basic", "extended", "full", "none" or "list" */
	GPtrArray *modifiers;   /* char *, expanded; "" (no modifier) included */
	GPtrArray *specs;       /* char *, exact specs, not crossed with modifiers */
	GPtrArray *profiles;    /* char *; "*" = every built-in profile */
	bool raw_excludes;      /* sweep raw exclude_* x precise_ip combinations */
	char *mode;             /* "record" (perf record -a -g) or "stat" */
	/* [load] */
	unsigned int dwell_ms;
	unsigned int batch_size;
	unsigned int confirm;
	unsigned int ring_pages;/* data pages per ring buffer, power of two */
	bool pairs_across_batches; /* isolate_cover_pairs() */
	enum scenario_isolate isolate;
	unsigned int budget_ms; /* load phase time limit; 0: none */
};

/* A scenario holding every default (valid only once a sweep is given). */
struct scenario *scenario_new_default(void);
/* Parses path. -ENOENT/-EACCES when unreadable, -EINVAL on any bad content,
 * with pc_errmsg() "path:line: [section] key: what was expected". */
int scenario_load(const char *path, struct scenario **out);
/* Same from text; path is only used in messages. */
int scenario_load_data(const char *path, const char *text, struct scenario **out);
void scenario_free(struct scenario *s);
/* g_autoptr(scenario) needs a type name; the tag and the typedef agree. */
typedef struct scenario scenario;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(scenario, scenario_free)

/* The resolved scenario as JSON (the "scenario" object of run.json). */
json_t *scenario_to_json(const struct scenario *s);

/* Built-in modifier sets: NULL-terminated modifier strings ("" first), or
 * NULL when name is not a set. */
const char *const *scenario_modifier_set(const char *name);

/* The key table, for documentation and `--help`. */
struct scenario_key_info {
	const char *section;
	const char *key;
	enum scenario_type type;
	const char *default_text;
	const char *help;
};
size_t scenario_key_count(void);
const struct scenario_key_info *scenario_key_at(size_t i);

/* Parsers shared with the CLI: "2s" -> 2000, "500ms" -> 500. */
int scenario_parse_duration(const char *text, unsigned int *ms);
int scenario_parse_memory(const char *text, unsigned int *mib);

#endif
