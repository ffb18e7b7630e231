/* Result-file cost, pmucanary/2 against pmucanary/1, on one set of cells.
 *
 *   results write IN OUT2 OUT1 OUT2GZ
 *                                reads IN (either schema), writes it as /2
 *                                (results_write_json), as /1 (the same
 *                                tree with every attr inlined, every cell's
 *                                kernel and evidence, rejected as EINVAL:
 *                                what the /1 writer wrote) and as /2 through
 *                                gzip (OUT2GZ ends in .gz); prints seconds
 *   results read FILE            reads FILE with results_read_json; prints
 *                                seconds (run it under /usr/bin/time for RSS)
 * Driven by bench/results.sh. */
#include "log.h"
#include "outfile.h"
#include "results.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The /1 form of a /2 tree. */
static void to_v1(json_t *root)
{
	json_t *attrs = json_object_get(root, "attrs");
	json_t *cells = json_object_get(root, "cells");
	const char *kernel = json_string_value(json_object_get(root, "kernel"));
	size_t i, k;
	json_t *c, *t;

	json_array_foreach(cells, i, c) {
		json_t *a = json_object_get(c, "attr");

		if (a)
			json_object_set_new(c, "attr", json_deep_copy(
				json_array_get(attrs, json_integer_value(a))));
		json_array_foreach(json_object_get(c, "tries"), k, t)
			json_object_set_new(t, "attr", json_deep_copy(json_array_get(
				attrs, json_integer_value(json_object_get(t, "attr")))));
		if (!json_object_get(c, "kernel"))
			json_object_set_new(c, "kernel", json_string(kernel));
		if (!json_object_get(c, "evidence"))
			json_object_set_new(c, "evidence", json_array());
		if (!strcmp(json_string_value(json_object_get(c, "outcome")), "REJECTED"))
			json_object_set_new(c, "outcome", json_string("EINVAL"));
	}
	json_object_del(root, "attrs");
	json_object_set_new(root, "schema", json_string(RESULTS_SCHEMA_V1));
}

static int write_v1(const struct result_set *set, const char *path)
{
	json_t *root = results_to_json(set);
	char *text;
	int ret;

	to_v1(root);
	text = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	ret = outfile_write(path, text, strlen(text));
	free(text);
	return ret;
}

int main(int argc, char **argv)
{
	g_autoptr(result_set) set = NULL;
	double t0;

	if (argc == 6 && !strcmp(argv[1], "write")) {
		double t2, t1, tz;

		if (results_read_json(argv[2], &set) < 0)
			goto fail;
		t0 = now_s();
		if (results_write_json(set, argv[3]) < 0)
			goto fail;
		t2 = now_s() - t0;
		t0 = now_s();
		if (write_v1(set, argv[4]) < 0)
			goto fail;
		t1 = now_s() - t0;
		t0 = now_s();
		if (results_write_json(set, argv[5]) < 0)
			goto fail;
		tz = now_s() - t0;
		printf("write_v2_s %.3f\nwrite_v1_s %.3f\nwrite_v2gz_s %.3f\ncells %u\n", t2, t1, tz,
		       set->cells->len);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "read")) {
		t0 = now_s();
		if (results_read_json(argv[2], &set) < 0)
			goto fail;
		printf("read_s %.3f\ncells %u\n", now_s() - t0, set->cells->len);
		return 0;
	}
	fprintf(stderr, "usage: results write IN OUT2 OUT1 OUT2GZ | results read FILE\n");
	return 2;
fail:
	fprintf(stderr, "results: %s\n", pc_errmsg());
	return 1;
}
