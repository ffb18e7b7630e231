#include "outcome.h"

#include <errno.h>
#include <string.h>

struct outcome_info {
	const char *name;
	enum outcome_class cls;
	int err;
};

#define OUTCOME_INFO(n, c, e) [OUTCOME_##n] = { #n, c, e },
static const struct outcome_info outcomes[OUTCOME_COUNT] = {
	OUTCOME_TABLE(OUTCOME_INFO)
};
#undef OUTCOME_INFO

static const char *const class_names[OUTCOME_CLASS_COUNT] = {
	[OUTCOME_CLASS_OK] = "ok",
	[OUTCOME_CLASS_ERRNO] = "errno",
	[OUTCOME_CLASS_HARM] = "harm",
	[OUTCOME_CLASS_INFRA] = "infra",
	[OUTCOME_CLASS_REJECTED] = "rejected",
};

const char *outcome_name(enum outcome o)
{
	return o < OUTCOME_COUNT ? outcomes[o].name : "?";
}

enum outcome outcome_from_name(const char *name)
{
	for (int i = 0; i < OUTCOME_COUNT; i++)
		if (name && strcmp(outcomes[i].name, name) == 0)
			return i;
	return OUTCOME_COUNT;
}

enum outcome_class outcome_class(enum outcome o)
{
	return o < OUTCOME_COUNT ? outcomes[o].cls : OUTCOME_CLASS_INFRA;
}

const char *outcome_class_name(enum outcome_class c)
{
	return c < OUTCOME_CLASS_COUNT ? class_names[c] : "?";
}

enum outcome outcome_from_errno(int err)
{
	if (err < 0)
		err = -err;
	if (err == 0)
		return OUTCOME_OK;
	for (int i = 0; i < OUTCOME_COUNT; i++)
		if (outcomes[i].cls == OUTCOME_CLASS_ERRNO && outcomes[i].err == err)
			return i;
	return OUTCOME_EUNKNOWN;
}

int outcome_errno(enum outcome o)
{
	if (o >= OUTCOME_COUNT || outcomes[o].cls != OUTCOME_CLASS_ERRNO)
		return 0;
	return outcomes[o].err > 0 ? outcomes[o].err : 0;
}

bool outcome_is_harm(enum outcome o)
{
	return outcome_class(o) == OUTCOME_CLASS_HARM;
}
