/* Merging result files from many kernels, hosts and CPU steppings into one
 * matrix (`pmucanary matrix`).
 *
 * Rows are (CPU signature, kernel, profile): grouped by CPU signature (from
 * host.cpu in each file), then kernel releases in version order, then
 * profiles in the order first seen. Columns are specs in the order first
 * seen across the inputs. When two inputs give the same cell (two runs of
 * one kernel on the same CPU), the worse outcome is kept (harm > errno >
 * OK > INFRA, since INFRA is no verdict) and the cell is marked as
 * disagreeing when the outcomes differ. */
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
 * (-EINVAL) with no inputs. */
int matrix_build(const struct result_set *const *sets, const char *const *names,
		 size_t n, const struct errata *errata, struct matrix **out);
void matrix_free(struct matrix *m);
typedef struct matrix matrix;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(matrix, matrix_free)

const struct matrix_cell *matrix_at(const struct matrix *m, size_t row, size_t col);
bool matrix_cpus_differ(const struct matrix *m);
/* The run's own top-level "verdict" (kept in set->extra), or NULL. */
const char *matrix_source_verdict(const struct matrix_source *s);

/* Short code for an outcome in the text matrix ("ok", "NOSUP", "CRASH!"). */
const char *matrix_outcome_abbrev(enum outcome o);
/* The cell's code, including the known-erratum and rejected marks. */
const char *matrix_cell_abbrev(const struct matrix_cell *mc);

/* The terminal matrix: header, inputs with their limitations, the grid
 * (columns wrapped to `width`), every harmful, INFRA and known-erratum
 * cell one line each with k/n and evidence, and the legend. color: ANSI
 * colours for harm, errata, INFRA. */
void matrix_format_text(const struct matrix *m, bool color, int width, GString *out);

/* A cell's evidence as text, one object per line ("kind: excerpt" where the
 * object has those keys, else compact JSON). caller g_free()s. */
char *matrix_cell_evidence(const struct cell *cell);

#endif
