/* TEMPORARY placeholder until the probe command lands; replaced by its owner. */
#include "commands.h"
#include <stdio.h>

int cmd_probe(int argc, char **argv)
{
	fprintf(stderr, "pmucanary probe: not built yet\n");
	return EXIT_USAGE;
}
