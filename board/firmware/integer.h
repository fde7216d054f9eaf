/* The integer operator family of the board (integer.c): every opcodes.h code op_is_integer()
 * accepts. */
#ifndef ETSCOPE_INTEGER_H
#define ETSCOPE_INTEGER_H
#include <stdint.h>

/* Runs one integer kernel call; 0, or -1 with the run's error set (fail). */
int run_integer(uint32_t op, const uint32_t *args, uint32_t nargs);
#endif
