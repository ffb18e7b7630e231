/* Report writers: the table of formats (see report.h), the text writer, and
 * the context every writer gets; HTML is heatmap.c, JUnit junit.c, KCIDB
 * kcidb.c. */
#include "report.h"

#include "attr.h"
#include "diff.h"
#include "heatmap.h"
#include "junit.h"
#include "kcidb.h"
#include "judge.h"
#include "jsonstr.h"
#include "log.h"
#include "matrix.h"
#include "outfile.h"

#include <errno.h>
#include <string.h>

/* ---- text ---- */

static int render_text(const struct report_ctx *ctx, const struct result_set *const *sets,
		       size_t n, GString *out)
{
	const struct matrix *m = ctx->m;
	unsigned int regressions = 0;
	int width = ctx->opts->width ? ctx->opts->width : 120;

	if (ctx->opts->all)
		matrix_format_text_all(m, ctx->opts->color, width, out);
	else
		matrix_format_text(m, ctx->opts->color, width, out);
	if (!ctx->base)
		return 0;
	for (guint r = 0; r < m->rows->len; r++)
		for (guint c = 0; c < m->columns->len; c++) {
			const struct matrix_cell *mc = matrix_at(m, r, c);
			const struct matrix_row *row = m->rows->pdata[r];
			struct judged j;

			if (!mc)
				continue;
			report_judge_mc(ctx, mc, &j);
			if (j.verdict != VERDICT_REGRESSION)
				continue;
			if (!regressions++)
				g_string_append_printf(out, "\nregressions against the baseline %s:\n",
						       ctx->opts->base_name ? ctx->opts->base_name :
						       ctx->opts->base->run_id);
			g_string_append_printf(out, "  %s %s %s: %s -> %s (%s)\n", row->kernel,
					       row->profile, (char *)m->columns->pdata[c],
					       outcome_name(j.base->outcome),
					       outcome_name(j.cell->outcome),
					       diff_group_title(j.group));
		}
	return 0;
}

/* ---- the table ---- */

static const struct report_writer {
	const char *name;
	int (*render)(const struct report_ctx *ctx, const struct result_set *const *sets,
		      size_t n, GString *out);
} report_writers[REPORT_FORMAT_COUNT] = {
	[REPORT_TEXT] = { "text", render_text },
	[REPORT_HTML] = { "html", heatmap_render },
	[REPORT_JUNIT] = { "junit", junit_render },
	[REPORT_KCIDB] = { "kcidb", kcidb_render },
};

const char *report_format_name(enum report_format f)
{
	return f < REPORT_FORMAT_COUNT ? report_writers[f].name : "?";
}

enum report_format report_format_from_name(const char *name)
{
	for (int f = 0; name && f < REPORT_FORMAT_COUNT; f++)
		if (!strcmp(report_writers[f].name, name))
			return f;
	return REPORT_FORMAT_COUNT;
}

static void ctx_clear(struct report_ctx *ctx)
{
	matrix_free((struct matrix *)ctx->m);
	if (ctx->base)
		g_hash_table_unref(ctx->base);
}

static int ctx_init(struct report_ctx *ctx, const struct result_set *const *sets, size_t n,
		    const struct report_options *opts)
{
	static const struct report_options no_opts;
	struct matrix *m = NULL;
	int rc;

	memset(ctx, 0, sizeof(*ctx));
	ctx->opts = opts ? opts : &no_opts;
	rc = matrix_build(sets, ctx->opts->names, n, ctx->opts->errata, &m);
	if (rc < 0)
		return rc;
	ctx->m = m;
	ctx->base_set = ctx->opts->base;
	ctx->base_name = ctx->opts->base_name;
	if (ctx->opts->base) {
		ctx->base = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
		for (guint i = 0; i < ctx->opts->base->cells->len; i++) {
			const struct cell *c = ctx->opts->base->cells->pdata[i];

			/* As in diff: a spec the profile rejected is not a tested cell. */
			if (!c->has_attr && c->error)
				continue;
			g_hash_table_insert(ctx->base,
					    results_cell_key(c->profile, c->spec),
					    (void *)c);
		}
	}
	return 0;
}

int report_render(enum report_format f, const struct result_set *const *sets, size_t n,
		  const struct report_options *opts, GString *out)
{
	struct report_ctx ctx;
	int rc;

	if (f >= REPORT_FORMAT_COUNT)
		return pc_fail(EINVAL, "unknown report format %d", (int)f);
	rc = ctx_init(&ctx, sets, n, opts);
	if (rc < 0)
		return rc;
	rc = report_writers[f].render(&ctx, sets, n, out);
	ctx_clear(&ctx);
	return rc;
}

int report_summarize(const struct result_set *const *sets, size_t n,
		     const struct report_options *opts, struct report_summary *out)
{
	struct report_ctx ctx;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = ctx_init(&ctx, sets, n, opts);
	if (rc < 0)
		return rc;
	for (guint r = 0; r < ctx.m->rows->len; r++)
		for (guint c = 0; c < ctx.m->columns->len; c++) {
			const struct matrix_cell *mc = matrix_at(ctx.m, r, c);
			struct judged j;

			if (!mc)
				continue;
			report_judge_mc(&ctx, mc, &j);
			out->cells++;
			out->harm += j.verdict == VERDICT_HARM;
			out->known += j.verdict == VERDICT_KNOWN;
			out->regressions += j.verdict == VERDICT_REGRESSION;
			out->infra += j.verdict == VERDICT_INFRA;
		}
	ctx_clear(&ctx);
	return 0;
}

int report_write(enum report_format f, const struct result_set *const *sets, size_t n,
		 const struct report_options *opts, const char *path)
{
	g_autoptr(GString) out = g_string_new(NULL);
	int rc = report_render(f, sets, n, opts, out);

	if (rc < 0)
		return rc;
	return outfile_write(path, out->str, out->len);
}
