/* TEMPORARY placeholder until the trace command lands; replaced by its owner. */
#include "commands.h"
#include <stdio.h>

int cmd_trace(int argc, char **argv)
{
	fprintf(stderr, "pmucanary trace: not built yet\n");
	return EXIT_USAGE;
}
