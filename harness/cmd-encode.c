/* TEMPORARY placeholder until the encode command lands; replaced by its owner. */
#include "commands.h"
#include <stdio.h>

int cmd_encode(int argc, char **argv)
{
	fprintf(stderr, "pmucanary encode: not built yet\n");
	return EXIT_USAGE;
}
