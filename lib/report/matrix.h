/* Merging result files from many kernels, hosts and CPU steppings into one
 * matrix (`pmucanary matrix`).
 *
 * Rows are (CPU signature, kernel, profile): grouped by CPU signature (from
 * host.cpu in each file), then kernel releases in version order, then
 * profiles in the order first seen. Columns are specs in the order first
 * seen across the inputs. When two inputs give the same cell (two runs of
 * one kernel on the same CPU), the worse outcome is kept (harm > errno >
 * OK > INFRA, since INFRA is no verdict) and the cell is marked as
 * disagreeing when the outcomes differ. One input giving the same (kernel,
 * profile, spec) twice is bad input, as in diff.
 *
 * The grouped view (matrix_groups_build) folds the spec columns into
 * (event, modifier class) tiles, the shape the default terminal view and
 * the HTML heatmap summarise with. */
#ifndef PMUCANARY_MATRIX_H
#define PMUCANARY_MATRIX_H

#include "errata.h"
#include "outcome.h"
#include "results.h"

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

/* One input file. */
struct matrix_source {
	const struct result_set *set;  /* borrowed */
	char *name;                    /* file name as given */
	struct cpu_sig cpu;
	char *cpu_label;               /* cpu_sig_to_string() */
};

struct matrix_cell {
	const struct cell *cell;       /* borrowed from a source's set */
	size_t source;                 /* index in matrix->sources */
	const struct erratum *erratum; /* a known erratum explains this harm */
	bool disagree;                 /* other inputs gave another outcome */
	unsigned int inputs;           /* how many inputs gave this cell */
	size_t last_source;            /* the latest input that gave it (duplicates) */
};

struct matrix_row {
	size_t group;                  /* index in matrix->groups */
	char *kernel;
	char *profile;
	struct matrix_cell **cells;    /* one per column; NULL: not measured */
};

struct matrix {
	GPtrArray *sources;            /* struct matrix_source * */
	GPtrArray *groups;             /* char *: CPU signature labels */
	GPtrArray *columns;            /* char *: specs */
	GPtrArray *rows;               /* struct matrix_row * */
	unsigned int count[OUTCOME_COUNT]; /* cells per outcome */
	unsigned int known_errata;     /* harmful cells a known erratum explains */
	unsigned int harm;             /* harmful cells no erratum explains */
	unsigned int infra;
};

/* Builds the matrix of n sets (borrowed: they must outlive it); names[i]
 * names sets[i] in reports (NULL: use run_id). errata may be NULL. Fails
 * (-EINVAL) with no inputs, or when one input holds a (kernel, profile,
 * spec) twice (the message names the input and both cells). */
int matrix_build(const struct result_set *const *sets, const char *const *names,
		 size_t n, const struct errata *errata, struct matrix **out);
void matrix_free(struct matrix *m);
typedef struct matrix matrix;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(matrix, matrix_free)

const struct matrix_cell *matrix_at(const struct matrix *m, size_t row, size_t col);
bool matrix_cpus_differ(const struct matrix *m);
/* The run's own top-level "verdict" (kept in set->extra), or NULL. */
const char *matrix_source_verdict(const struct matrix_source *s);

/* The profile's own parser refused the cell's spec: no kernel verdict.
 * Schema pmucanary/1 marks it by an error message, /2 by outcome REJECTED;
 * this is the one place that knows both. */
bool matrix_cell_rejected(const struct cell *c);

/* Short code for an outcome in the text matrix ("ok", "NOSUP", "CRASH!"). */
const char *matrix_outcome_abbrev(enum outcome o);
/* The cell's code, including the known-erratum and rejected marks. */
const char *matrix_cell_abbrev(const struct matrix_cell *mc);

/* ---- modifier classes: how the default view and the heatmap fold specs ----
 *
 * A spec's modifiers are classed by the perf_event_attr fields they set, as
 * perf's parse-events modifiers map onto them:
 *   none        no modifier
 *   u/k/h       privilege filter only: exclude_user/kernel/hv
 *   G/H         guest/host: exclude_host/exclude_guest (with or without u/k/h)
 *   p           precise_ip > 0 (p, pp, ppp, P), no G/H (with or without u/k/h)
 *   p+G/H       precise with an explicit G or H (the 2012 PEBS story)
 *   S I D W e b R X   each flag on its own (sample read, exclude_idle,
 *               pinned, weak group, exclusive, BPF counter, retire latency,
 *               no regroup), whatever else the spec has
 *   other       anything else (unknown letters, PMU terms)
 * Raw attrs ("cycles[exclude_guest,precise_ip=2]") are classed by the same
 * fields: exclude_user/kernel/hv as u/k/h, exclude_host/guest as G/H,
 * precise_ip as p, exclude_idle as I. */
#define MATRIX_MODCLASS_TABLE(M)                                         \
	M(NONE,    "none",  "no modifier")                               \
	M(PRIV,    "u/k/h", "privilege filter only (exclude_user/kernel/hv)") \
	M(VIRT,    "G/H",   "guest/host (exclude_host/exclude_guest), with or without u/k/h") \
	M(PRECISE, "p",     "precise_ip>0 (p pp ppp P), no G/H, with or without u/k/h") \
	M(PRECISE_VIRT, "p+G/H", "precise_ip>0 with an explicit G or H")   \
	M(S,       "S",     "sample read")                            \
	M(I,       "I",     "exclude_idle")                           \
	M(D,       "D",     "pinned")                                 \
	M(W,       "W",     "weak group")                             \
	M(E,       "e",     "exclusive")                              \
	M(B,       "b",     "BPF counter")                            \
	M(R,       "R",     "retire latency")                         \
	M(X,       "X",     "no regroup")                             \
	M(OTHER,   "other", "other modifiers or PMU terms")

#define MATRIX_MODCLASS_ENUM(id, name, what) MATRIX_MODCLASS_##id,
enum matrix_modclass {
	MATRIX_MODCLASS_TABLE(MATRIX_MODCLASS_ENUM)
	MATRIX_MODCLASS_COUNT
};
#undef MATRIX_MODCLASS_ENUM

const char *matrix_modclass_name(enum matrix_modclass c);
const char *matrix_modclass_what(enum matrix_modclass c);
enum matrix_modclass matrix_spec_modclass(const char *spec);

/* What one tile (row x event x modifier class) holds: a bit per code
 * (MATRIX_CODE_*: an outcome, or rejected by the profile) and how many
 * cells. */
#define MATRIX_CODE_REJECTED OUTCOME_COUNT
#define MATRIX_CODE_COUNT (OUTCOME_COUNT + 1)
/* A tile keeps its codes as bits of a guint64 (codes, known below). */
G_STATIC_ASSERT(MATRIX_CODE_COUNT <= 64);
struct matrix_tile {
	guint64 codes;          /* bit (1 << code) */
	guint64 known;          /* codes of harms a known erratum explains */
	unsigned int cells;
};

/* The code of one merged cell: its outcome, or MATRIX_CODE_REJECTED. */
unsigned int matrix_cell_code(const struct matrix_cell *mc);

struct matrix_groups {
	GPtrArray *events;             /* char *: events, first seen order */
	unsigned int *col_event;       /* per matrix column: index in events */
	unsigned char *col_class;      /* per matrix column: enum matrix_modclass */
	size_t rows;                   /* = matrix rows */
	struct matrix_tile *tiles;     /* [row][event][class] */
};

int matrix_groups_build(const struct matrix *m, struct matrix_groups **out);
void matrix_groups_free(struct matrix_groups *g);
typedef struct matrix_groups matrix_groups;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(matrix_groups, matrix_groups_free)
const struct matrix_tile *matrix_groups_tile(const struct matrix_groups *g, size_t row,
					     size_t event, enum matrix_modclass cls);

/* ---- filters (--event, --profile, --kernel, --outcome) ----
 * Each is a shell glob (* ? [..], fnmatch) or an exact name; NULL: any.
 * event matches the spec's event ("cycles", "msr/tsc/") or the whole spec
 * ("cycles:pp"); outcome matches an outcome name, REJECTED, or a class:
 * ok, errno, harm, infra. */
struct matrix_filter {
	const char *event, *profile, *kernel, *outcome;
};

/* Fails (-EINVAL) with a message when outcome names nothing. */
int matrix_filter_check(const struct matrix_filter *f);
bool matrix_filter_match(const struct matrix_filter *f, const char *kernel,
			 const struct cell *c);
/* Views of sets holding only the cells f matches (the cells and every other
 * member are borrowed from sets). Fails (-EINVAL) naming the option when a
 * pattern matches no cell of the inputs. Free with matrix_views_free(). */
int matrix_filter_sets(const struct result_set *const *sets, size_t n,
		       const struct matrix_filter *f, GPtrArray **views);
void matrix_views_free(GPtrArray *views);

/* ---- terminal ---- */

/* The default terminal view, about a screen or two at any scale: header,
 * inputs with their limitations; what differs between kernels/hosts, by
 * name; every harm, known erratum and INFRA (one line each, or grouped by
 * event and modifier class when there are many); the grid of rows (kernel
 * x profile, grouped by CPU) by column groups (event x modifier class
 * whose rows do not all agree); the columns where every row agrees,
 * collapsed into counts; outcome totals; the legend. color: ANSI colours
 * for harm, errata, INFRA. Everything read from a file is escaped. */
void matrix_format_text(const struct matrix *m, bool color, int width, GString *out);
/* Every cell: header, inputs, the full grid (spec columns wrapped to
 * width), every harmful, INFRA and known-erratum cell with k/n and
 * evidence, and the legend (`matrix --all`). */
void matrix_format_text_all(const struct matrix *m, bool color, int width, GString *out);

/* One input's cells by what their tries show, the part of both views that
 * only a single input has (a run's matrix.txt, `probe`, `matrix` of one
 * file): the specs on which profiles disagree, by name; the errno and
 * rejected cells grouped by outcome and tries (perf's message for a
 * rejected spec, each fallback and what it gave, CPUs that disagree), each
 * group by the events and profiles it covers; the cells OK only after a
 * fallback, grouped the same way; with list_all, every non-OK cell on one
 * line. Harm and INFRA are not here: the views list them with evidence. */
void matrix_format_tries(const struct result_set *set, bool list_all, GString *out);

/* A cell's evidence as text, one object per line ("kind: excerpt" where the
 * object has those keys, else compact JSON). caller g_free()s. */
char *matrix_cell_evidence(const struct cell *cell);

#endif
