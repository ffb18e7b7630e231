/* TEMPORARY placeholder until the diff command lands; replaced by its owner. */
#include "commands.h"
#include <stdio.h>

int cmd_diff(int argc, char **argv)
{
	fprintf(stderr, "pmucanary diff: not built yet\n");
	return EXIT_USAGE;
}
