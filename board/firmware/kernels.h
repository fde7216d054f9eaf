/* Int8 kernels of ExecuTorch's Cortex-M backend in CMSIS-NN's arithmetic, on plain arrays in
 * NHWC memory order. They follow etscope's host runtime (core/src/runtime/cmsis*.rs) bit for bit;
 * the end-to-end test compares every intermediate output. */
#ifndef ETSCOPE_KERNELS_H
#define ETSCOPE_KERNELS_H
#include <stdint.h>

typedef struct {
  const int32_t *multipliers; /* per output channel, or one when per_tensor */
  const int32_t *shifts;
  int per_tensor;
  int32_t output_offset, act_min, act_max;
} k_requant;

typedef struct {
  int32_t stride_h, stride_w, pad_h, pad_w, dil_h, dil_w;
} k_window;

int32_t k_requantize(int32_t val, int32_t multiplier, int32_t shift);

/* One transpose convolution over NHWC memory: input, weight [oc, kh, kw, ic], bias, stride and
 * padding (h, w), the input offset and the per-channel requantization. */
typedef struct {
  const int8_t *x;
  int32_t in[4];
  const int8_t *w;
  int32_t wd[4];
  const int32_t *bias;
  int32_t sh, sw, ph, pw, input_offset;
  const k_requant *rq;
  int32_t od[4];
} k_tconv;

/* arm_transpose_conv_wrapper_s8 of CMSIS-NN dbf45dbf: the exact (reverse-convolution) path for
 * more than 16 input channels with strides <= 2, else arm_transpose_conv_s8's rolling buffer with
 * its padding defect. `work` holds work_len int32 accumulators; returns -1 when too small. */
int k_transpose_conv_s8(const k_tconv *t, int32_t *work, int32_t work_len, int8_t *out);

/* arm_batch_matmul_s8: out[b][i][j] = requantize(sum_k (l + l_off)(r + r_off)) + o_off, the
 * right-hand side given transposed ([B, N, K]). */
void k_batch_matmul_s8(const int8_t *l, const int8_t *r, int32_t batches, int32_t m, int32_t k,
                       int32_t n, int32_t l_off, int32_t r_off, int32_t o_off, int32_t mult,
                       int32_t shift, int8_t *out);

/* arm_convolve_s8 / arm_depthwise_conv_s8: in [n,h,w,c], weight [oc,kh,kw,wi] (or [1,kh,kw,c*m]
 * with depth_multiplier > 0), out [n,oh,ow,oc]. */
void k_conv_s8(const int8_t *x, const int32_t in[4], const int8_t *w, const int32_t wd[4],
               const int32_t *bias, int32_t depth_multiplier, const k_window *win,
               int32_t input_offset, const k_requant *rq, int8_t *out, const int32_t od[4]);

/* arm_fully_connected_s8; kernel_sum selects the Helium path's accumulator. */
void k_linear_s8(const int8_t *x, int32_t rows, int32_t ins, const int8_t *w, int32_t outs,
                 const int32_t *bias, const int32_t *kernel_sum, int32_t input_offset,
                 int32_t filter_offset, const int64_t *mults, const int64_t *shifts,
                 int32_t nmult, int32_t output_offset, int32_t act_min, int32_t act_max,
                 int8_t *out);

/* arm_avgpool_s8 (max = 0) / arm_max_pool_s8 (max = 1) over NHWC. */
void k_pool_s8(const int8_t *x, const int32_t in[4], int32_t kh, int32_t kw, const k_window *win,
               int max, int32_t lo, int32_t hi, int8_t *out, const int32_t od[4]);

void k_softmax_row_s8(const int8_t *x, int32_t n, int32_t multiplier, int32_t left_shift,
                      int32_t diff_min, int8_t *out);

int8_t k_quantize_mve(float x, float inv, int32_t zp, int32_t qmin, int32_t qmax);
int32_t k_quantize_scalar(float x, float inv, int32_t zp, int32_t qmin, int32_t qmax);
int16_t k_quantize_mve_s16(float x, float inv, int32_t zp, int32_t qmin, int32_t qmax);
#endif
