/* TEMPORARY placeholder until the fleet command lands; replaced by its owner. */
#include "commands.h"
#include <stdio.h>

int cmd_fleet(int argc, char **argv)
{
	fprintf(stderr, "pmucanary fleet: not built yet\n");
	return EXIT_USAGE;
}
