/* The portable (aten) operators of the board, shared between their rooms: the logical view of a
 * tensor, the helpers every family uses, and one entry per operator family member that
 * run_portable (portable.c) dispatches to. Kernels compute in the host's types and order of
 * operations (core/src/kernels/portable), so every output equals the host's bit for bit. */
#ifndef ETSCOPE_PORTABLE_H
#define ETSCOPE_PORTABLE_H
#include <stdint.h>

#include "image.h"
#include "opcodes.h"

typedef struct {
  uint8_t *p;
  uint8_t dt;
  uint32_t rank, numel;
  int32_t size[8];
  int64_t stride[8]; /* elements, per logical dim, from the dim order */
} tview;

/* A scalar operand as a 0-d tensor of doubles (the host's `operand`). */
typedef struct {
  tview t;
  double *v;
  double one;
  uint8_t scalar; /* 0 for a tensor, else the scalar's kind (V_INT, V_DOUBLE, V_BOOL) */
} operand;

/* ---- portable_tensor.c ---- */
void next_index(const tview *x, uint32_t idx[8]);
uint32_t dt_size(uint8_t dt);
int view_of(const value_rec *v, tview *t);
double toward_zero(double x, double lo, double hi);
void put(tview *t, int64_t at, double x);
double *new_values(uint32_t n);
double *load(const value_rec *v, tview *t);
int store(const value_rec *v, const double *vals, uint32_t count);
int is_float(const tview *t);
int is_double(const tview *t);
uint32_t *broadcast_index(const tview *in, const tview *out);
int dim_of(int64_t d, uint32_t rank, uint32_t *out);
uint32_t product(const int32_t *s, uint32_t from, uint32_t to);
int operand_of(const value_rec *v, operand *o);

/* ---- portable_elementwise.c ---- */
int binary(uint32_t op, const uint32_t *a, uint32_t n);
int where_op(const uint32_t *a, uint32_t n);
int unary(uint32_t op, const uint32_t *a, uint32_t n);
int math_unary(uint32_t op, const uint32_t *a, uint32_t n);
int math_binary(uint32_t op, const uint32_t *a, uint32_t n);
int glu_op(const uint32_t *a, uint32_t n);
int rsub_op(const uint32_t *a, uint32_t n);
int elu_op(const uint32_t *a, uint32_t n);
int div_mode_op(uint32_t op, const uint32_t *a, uint32_t n);
int masked_fill_op(const uint32_t *a, uint32_t n);
int clamp_tensor_op(const uint32_t *a, uint32_t n);
int logit_op(const uint32_t *a, uint32_t n);
int pow_scalar_op(const uint32_t *a, uint32_t n);

/* ---- portable_shape.c ---- */
int copy_op(const uint32_t *a, uint32_t n);
int permute_op(uint32_t op, const uint32_t *a, uint32_t n);
int expand_op(const uint32_t *a, uint32_t n);
int slice_op(uint32_t op, const uint32_t *a, uint32_t n);
int cat_op(const uint32_t *a, uint32_t n);
int split_op(const uint32_t *a, uint32_t n);
int full_op(const uint32_t *a, uint32_t n);
int constant_pad_op(const uint32_t *a, uint32_t n);
int flip_op(const uint32_t *a, uint32_t n);
int fill_op(uint32_t op, const uint32_t *a, uint32_t n);
int arange_op(const uint32_t *a, uint32_t n);
int repeat_op(const uint32_t *a, uint32_t n);
int roll_op(const uint32_t *a, uint32_t n);
int stack_op(const uint32_t *a, uint32_t n);
int tril_op(const uint32_t *a, uint32_t n);
int unbind_op(const uint32_t *a, uint32_t n);
int diagonal_op(const uint32_t *a, uint32_t n);
int pixel_shuffle_op(uint32_t op, const uint32_t *a, uint32_t n);
int pad_mode_op(uint32_t op, const uint32_t *a, uint32_t n);
int narrow_op(const uint32_t *a, uint32_t n);
int unfold_op(const uint32_t *a, uint32_t n);
int as_strided_op(const uint32_t *a, uint32_t n);

/* ---- portable_pool.c ---- */
uint32_t window(const value_rec *v, uint32_t i, uint32_t dflt);
int avg_pool_op(const uint32_t *a, uint32_t n);
int max_pool_op(const uint32_t *a, uint32_t n);
int nearest_op(const uint32_t *a, uint32_t n);
int bilinear_op(const uint32_t *a, uint32_t n);
int adaptive_pool_op(const uint32_t *a, uint32_t n);
int grid_sampler_op(const uint32_t *a, uint32_t n);
int upsample_aa_op(const uint32_t *a, uint32_t n);

/* ---- portable_reduce.c ---- */
int softmax_op(uint32_t op, const uint32_t *a, uint32_t n);
int reduce_op(uint32_t op, const uint32_t *a, uint32_t n);
int cumsum_op(const uint32_t *a, uint32_t n);
int var_op(uint32_t op, const uint32_t *a, uint32_t n);
int mean_all_op(const uint32_t *a, uint32_t n);
int extreme_dim_op(uint32_t op, const uint32_t *a, uint32_t n);
int var_mean_op(const uint32_t *a, uint32_t n);
int topk_op(const uint32_t *a, uint32_t n);

/* ---- portable_nn.c ---- */
int embedding_op(const uint32_t *a, uint32_t n);
int matmul_op(uint32_t op, const uint32_t *a, uint32_t n);
int linear_op(const uint32_t *a, uint32_t n);
int convolution_op(const uint32_t *a, uint32_t n);
int layer_norm_op(const uint32_t *a, uint32_t n);
int group_norm_op(const uint32_t *a, uint32_t n);
int distance_op(uint32_t op, const uint32_t *a, uint32_t n);
int batch_norm_op(const uint32_t *a, uint32_t n);
int batch_norm_no_stats_op(const uint32_t *a, uint32_t n);
int qd_op(uint32_t op, const uint32_t *a, uint32_t n);

/* ---- portable_index.c ---- */
int index_select_op(const uint32_t *a, uint32_t n);
void shape_view(tview *t, const int32_t *size, uint32_t rank);
int index_op(const uint32_t *a, uint32_t n);
int index_put_op(uint32_t op, const uint32_t *a, uint32_t n);
int copy_into_op(uint32_t op, const uint32_t *a, uint32_t n);
int gather_op(const uint32_t *a, uint32_t n);
int scatter_op(uint32_t op, const uint32_t *a, uint32_t n);
int scatter_dim_op(uint32_t op, const uint32_t *a, uint32_t n);
int nonzero_op(const uint32_t *a, uint32_t n);
int masked_select_op(const uint32_t *a, uint32_t n);
int repeat_interleave_op(const uint32_t *a, uint32_t n);
int masked_scatter_op(const uint32_t *a, uint32_t n);

/* portable.c: every portable operator by its opcodes.h code */
int run_portable(uint32_t op, const uint32_t *args, uint32_t nargs);
#endif
