/* What the files of the results model share. PRIVATE: only the
 * results*.c files (the model, its reader and its writer) include it;
 * everyone else uses results.h. */
#ifndef PMUCANARY_RESULTS_PRIV_H
#define PMUCANARY_RESULTS_PRIV_H

/* The top-level and cell keys the schema names (NULL-terminated): the
 * reader keeps the others in `extra`, the writer writes them back. */
extern const char *const results_set_keys[];
extern const char *const results_cell_keys[];

#endif
