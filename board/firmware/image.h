/* The board image as the firmware reads it (core/src/board_image/ writes it): value records,
 * their kinds, and the accessors every kernel uses to reach arguments. */
#ifndef ETSCOPE_IMAGE_H
#define ETSCOPE_IMAGE_H
#include <stdint.h>

enum {
  V_NONE = 0, V_INT = 1, V_DOUBLE = 2, V_BOOL = 3, V_INT_LIST = 4, V_TENSOR = 5, V_OTHER = 6,
  V_TENSOR_LIST = 7, V_DOUBLE_LIST = 8, V_STRING = 9
};
/* ExecuTorch ScalarType codes */
enum { ST_BYTE = 0, ST_CHAR = 1, ST_SHORT = 2, ST_INT = 3, ST_LONG = 4, ST_FLOAT = 6, ST_DOUBLE = 7, ST_BOOL = 11 };

typedef struct {
  uint8_t kind, dtype, rank, mem;
  uint32_t off; /* tensor: data offset; list or string: item count */
  union {
    int64_t i;
    double d;
    struct { uint32_t nbytes, sizes_off, order_off, numel; } t; /* lists: items at sizes_off */
  } u;
  uint32_t reserved[2];
} value_rec;

extern const uint8_t *image;

/* Binds the image at `at` (its header already there): the value table, the arenas after the
 * image, the work memory and the scratch in the rest of the `ddr_bytes` from `at`. Returns the
 * number of values. */
uint32_t image_bind(const uint8_t *at, uint32_t ddr_bytes);
/* arena `i`'s address (after image_bind) */
void *arena_address(uint32_t i);
/* the constants a placement copied out of the image (values sharing one counted once): their
 * count, `*bytes` their size */
uint32_t placed_constants(uint32_t *bytes);
/* how many times a kernel's constant was read from its placed copy */
uint32_t placed_constant_reads(void);
/* the little-endian u32 at byte `off` of the image header */
uint32_t image_u32(uint32_t off);

/* argument k of an instruction's argument list, or 0 */
const value_rec *val(const uint32_t *args, uint32_t nargs, uint32_t k);
/* the out argument of an out-variant call (the one before the returned value) */
const value_rec *out_of(const uint32_t *args, uint32_t nargs);
/* the record of value index `v`, or 0 */
const value_rec *value_at(uint32_t v);
void *tensor_data(const value_rec *v);
const int32_t *sizes_of(const value_rec *v);
const uint32_t *order_of(const value_rec *v);
int64_t ival(const value_rec *v);
double dval(const value_rec *v);
/* a Scalar argument: a double, an int or a bool */
double scalar(const value_rec *v);
const int64_t *list(const value_rec *v, uint32_t *n);
/* item i of an int list (its first item when shorter, `dflt` when empty), at least 0 */
int64_t list_pair(const value_rec *v, uint32_t i, int64_t dflt);
/* NHWC dims of an activation: `_nhwc` ops have logical [n,h,w,c]; default-flow ops [n,c,h,w] */
int nhwc_dims(const value_rec *t, int nchw, int32_t d[4]);
/* records `what` as the run's error; returns -1 */
int fail(const char *what);
/* the run's error, or 0 */
const char *board_error(void);

/* Work memory for one instruction (released before the next): 8-byte aligned, 0 when exhausted
 * (the caller fails). */
void *scratch(uint32_t bytes);
/* releases every scratch allocation (before each instruction) */
void scratch_reset(void);
/* the int32 accumulators of the kernels that need them; `*len` their count */
int32_t *work_memory(int32_t *len);

#endif
