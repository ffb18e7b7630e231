/* TEMPORARY placeholder until the run command lands; replaced by its owner. */
#include "commands.h"
#include <stdio.h>

int cmd_run(int argc, char **argv)
{
	fprintf(stderr, "pmucanary run: not built yet\n");
	return EXIT_USAGE;
}
