/* TEMPORARY placeholder until the image command lands; replaced by its owner. */
#include "commands.h"
#include <stdio.h>

int cmd_image(int argc, char **argv)
{
	fprintf(stderr, "pmucanary image: not built yet\n");
	return EXIT_USAGE;
}
