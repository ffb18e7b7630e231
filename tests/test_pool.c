/* Guest pool backends (lib/guests/pool.h): the registry's contract. The
 * built-in "libvirt" backend is there without registering anything; a
 * name is 1..31 of [a-z0-9_-]; a name is taken once; a backend without a
 * required op is refused; the table holds POOL_BACKENDS_MAX; an unknown
 * name is refused naming every known one; open and close reach the
 * backend with the caller's params. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include "log.h"
#include "pool.h"

#include <errno.h>
#include <string.h>

struct counts {
	unsigned int opens, closes;
	const struct pool_params *seen;
};

static int c_open(const struct pool_params *p, void **priv)
{
	struct counts *c = p->user;

	c->opens++;
	c->seen = p;
	*priv = c;
	return 0;
}

static int c_open_fails(const struct pool_params *p, void **priv)
{
	return pc_fail(ECONNREFUSED, "the fake machine is down");
}

static void c_close(void *priv)
{
	((struct counts *)priv)->closes++;
}

static int c_start(void *priv, const struct pool_spec *s, const char *run_dir, json_t **info,
		   enum pool_failure *why)
{
	return 0;
}

static int c_mark(void *priv)
{
	return 0;
}

static int c_judge(void *priv, enum outcome *o, json_t **verdicts)
{
	return 0;
}

static int c_restart(void *priv)
{
	return 0;
}

static int c_selftest(void *priv, const char *word)
{
	return 0;
}

static void c_stop(void *priv)
{
}

#define OPS(n) { .name = n, .what = "test", .open = c_open, .close = c_close, \
		 .start = c_start, .mark = c_mark, .judge = c_judge, \
		 .restart_harmed = c_restart, .selftest = c_selftest, .stop = c_stop }

static void test_builtin_libvirt(void **state)
{
	const struct pool_ops *l = pool_backend("libvirt");
	g_autofree char *names = pool_backend_names();

	assert_non_null(l);
	assert_ptr_equal(l, &pool_libvirt_ops);
	assert_string_equal(POOL_DEFAULT, "libvirt");
	assert_string_equal(names, "libvirt");
	/* the optional ops the runner's progress and dwell use are there */
	assert_non_null(l->health);
	assert_non_null(l->all_harmed);
	assert_non_null(l->summary);
	assert_null(pool_backend("LIBVIRT"));
	assert_null(pool_backend("libvir"));
	assert_null(pool_backend(""));
	assert_null(pool_backend(NULL));
}

static void test_names(void **state)
{
	static const struct pool_ops bad[] = {
		OPS(""), OPS("Fake"), OPS("a b"), OPS("a.b"), OPS("a/b"), OPS("é"),
		OPS("abcdefghijklmnopqrstuvwxyz012345"), /* 32 */
	};
	static const struct pool_ops edge[] = {
		OPS("abcdefghijklmnopqrstuvwxyz01234"), /* 31 */
		OPS("x"), OPS("a-b_9"),
	};
	struct pool_ops noname = OPS("");

	noname.name = NULL;
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		assert_int_equal(pool_register(&bad[i]), -EINVAL);
		assert_non_null(strstr(pc_errmsg(), "[a-z0-9_-]"));
		assert_null(pool_backend(bad[i].name));
	}
	assert_int_equal(pool_register(&noname), -EINVAL);
	assert_int_equal(pool_register(NULL), -EINVAL);
	for (size_t i = 0; i < G_N_ELEMENTS(edge); i++) {
		assert_int_equal(pool_register(&edge[i]), 0);
		assert_ptr_equal(pool_backend(edge[i].name), &edge[i]);
	}
	/* each name once, the built-in one too */
	assert_int_equal(pool_register(&edge[1]), -EEXIST);
	{
		static const struct pool_ops again = OPS("libvirt");

		assert_int_equal(pool_register(&again), -EEXIST);
		assert_non_null(strstr(pc_errmsg(), "libvirt"));
		assert_ptr_equal(pool_backend("libvirt"), &pool_libvirt_ops);
	}
}

/* Every required op, one at a time missing. */
static void test_required_ops(void **state)
{
	for (int i = 0; i < 8; i++) {
		struct pool_ops o = OPS("missing-op");

		switch (i) {
		case 0: o.open = NULL; break;
		case 1: o.close = NULL; break;
		case 2: o.start = NULL; break;
		case 3: o.mark = NULL; break;
		case 4: o.judge = NULL; break;
		case 5: o.restart_harmed = NULL; break;
		case 6: o.selftest = NULL; break;
		case 7: o.stop = NULL; break;
		}
		assert_int_equal(pool_register(&o), -EINVAL);
		assert_non_null(strstr(pc_errmsg(), "missing-op"));
		assert_null(pool_backend("missing-op"));
	}
}

/* The table holds POOL_BACKENDS_MAX backends, the built-in one included. */
static void test_table_full(void **state)
{
	static struct pool_ops many[POOL_BACKENDS_MAX + 1];
	static char names[POOL_BACKENDS_MAX + 1][16];
	g_autofree char *known = NULL;
	size_t have = 0;
	int e = 0;

	/* the backends earlier tests registered count against it */
	known = pool_backend_names();
	have = 1;
	for (const char *c = known; *c; c++)
		have += *c == ',';
	for (size_t i = 0; i + have <= POOL_BACKENDS_MAX; i++) {
		snprintf(names[i], sizeof(names[i]), "full%zu", i);
		many[i] = (struct pool_ops)OPS(names[i]);
		e = pool_register(&many[i]);
		if (i + have < POOL_BACKENDS_MAX)
			assert_int_equal(e, 0);
	}
	assert_int_equal(e, -ENOSPC);
	assert_null(pool_backend(names[POOL_BACKENDS_MAX - have]));
	assert_non_null(pool_backend(names[POOL_BACKENDS_MAX - have - 1]));
}

static void test_open_close(void **state)
{
	static const struct pool_ops down = { .name = "down", .what = "test", .open = c_open_fails,
		.close = c_close, .start = c_start, .mark = c_mark, .judge = c_judge,
		.restart_harmed = c_restart, .selftest = c_selftest, .stop = c_stop };
	struct counts c = { 0 };
	struct pool_params p = { .uri = "test:///default", .tcg = true, .user = &c };
	struct pool *pl = NULL;
	g_autofree char *known = NULL;

	/* "x" was registered by test_names */
	assert_int_equal(pool_open("x", &p, &pl), 0);
	assert_non_null(pl);
	assert_string_equal(pl->ops->name, "x");
	assert_ptr_equal(pl->priv, &c);
	assert_ptr_equal(c.seen, &p);
	assert_int_equal(c.opens, 1);
	assert_int_equal(c.closes, 0);
	pool_free(pl);
	assert_int_equal(c.closes, 1);
	pool_free(NULL);

	pl = (struct pool *)&c; /* set to NULL on failure */
	assert_int_equal(pool_open("nosuch", &p, &pl), -EINVAL);
	assert_null(pl);
	known = pool_backend_names();
	assert_non_null(strstr(pc_errmsg(), "'nosuch'"));
	assert_non_null(strstr(pc_errmsg(), known));
	assert_int_equal(c.opens, 1);

	assert_int_equal(pool_register(&down), 0);
	pl = (struct pool *)&c;
	assert_int_equal(pool_open("down", &p, &pl), -ECONNREFUSED);
	assert_null(pl);
	assert_non_null(strstr(pc_errmsg(), "down"));
	assert_int_equal(c.closes, 1);
}

static void test_failure_names(void **state)
{
	assert_string_equal(pool_failure_name(POOL_FAILURE_NONE), "none");
	assert_string_equal(pool_failure_name(POOL_FAILURE_BOOT), "boot");
	assert_string_equal(pool_failure_name(POOL_FAILURE_INFRA), "infra");
	assert_string_equal(pool_failure_name(POOL_FAILURE_COUNT), "?");
	assert_string_equal(pool_failure_name((enum pool_failure)-1), "?");
}

int main(void)
{
	/* in this order: later tests count what earlier ones registered */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtin_libvirt),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_required_ops),
		cmocka_unit_test(test_open_close),
		cmocka_unit_test(test_table_full),
		cmocka_unit_test(test_failure_names),
	};

	log_set_level(LOG_ERROR);
	return test_run_group(tests, NULL, NULL);
}
