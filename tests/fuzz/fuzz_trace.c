/* The tracer's attr decoders. The first byte picks one:
 *  - even: the bytes a traced perf passed at its attr pointer, decoded as
 *    the kernel reads them (trace_call_set_attr_bytes), then printed and
 *    written as JSON; property: the JSON reads back to the same attr;
 *  - odd: perf -vv output (trace_parse_perf_verbose); property: the calls
 *    it yields match themselves and print. */
#include "attr.h"
#include "fuzz.h"
#include "trace.h"
#include <jansson.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

static void check_call(const struct trace_call *call)
{
	g_autofree char *s = trace_call_to_string(call);
	json_t *j = trace_call_to_json(call);
	struct perf_event_attr back;

	FUZZ_ASSERT(s && j);
	if (attr_from_json(json_object_get(j, "attr"), &back) < 0)
		fprintf(stderr, "attr_from_json: %s\n", pc_errmsg());
	else
		FUZZ_ASSERT(attr_equal(&back, &call->attr));
	json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (!(data[0] & 1)) {
		struct trace_call call = { .ret_fd = 3 };

		trace_call_set_attr_bytes(&call, data + 1, size - 1);
		check_call(&call);
		FUZZ_ASSERT(attr_from_json(NULL, &call.attr) < 0);
		return 0;
	}
	g_autofree char *text = fuzz_text(data + 1, size - 1);
	g_autoptr(GPtrArray) calls = NULL;

	pc_errclear();
	if (trace_parse_perf_verbose(text, &calls) < 0) {
		FUZZ_ASSERT_MESSAGE();
	} else {
		FUZZ_ASSERT(trace_calls_match(calls, calls) == 0);
		for (guint i = 0; i < calls->len; i++)
			check_call(calls->pdata[i]);
	}
	return 0;
}
