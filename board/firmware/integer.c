/* The int8 (and int16) operators of ExecuTorch's Cortex-M backend and the integer data movement
 * the board runs: each instruction's arguments read from the image and handed to the CMSIS-NN
 * arithmetic of kernels.c, in the host runtime's order (core/src/runtime). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "image.h"
#include "integer.h"
#include "kernels.h"
#include "opcodes.h"

/* Copies a tensor between two storage orders: element at logical index i of `in` (stored in
 * in_order) goes to the same logical index of `out` (stored in out_order). perm = 0 for
 * _clone_dim_order; for transpose, out logical dim k = in logical dim perm[k]. */
static void permuted_copy(const uint8_t *src, const int32_t *in_sizes, const uint32_t *in_order,
                          uint8_t *dst, const uint32_t *out_order, const int64_t *perm,
                          uint32_t rank, uint32_t elem) {
  int64_t in_stride[8], out_stride_logical[8], out_sizes[8];
  uint32_t idx[8] = {0};
  int64_t s = 1;
  for (int32_t m = (int32_t)rank - 1; m >= 0; m--) { /* strides of in's logical dims */
    in_stride[in_order[m]] = s;
    s *= in_sizes[in_order[m]];
  }
  int64_t numel = s;
  for (uint32_t k = 0; k < rank; k++) out_sizes[k] = in_sizes[perm ? perm[k] : k];
  s = 1;
  for (int32_t m = (int32_t)rank - 1; m >= 0; m--) {
    out_stride_logical[out_order[m]] = s;
    s *= out_sizes[out_order[m]];
  }
  for (int64_t n = 0; n < numel; n++) {
    int64_t from = 0, to = 0;
    for (uint32_t k = 0; k < rank; k++) {
      from += (int64_t)idx[k] * in_stride[perm ? perm[k] : k];
      to += (int64_t)idx[k] * out_stride_logical[k];
    }
    memcpy(dst + to * elem, src + from * elem, elem);
    for (int32_t k = (int32_t)rank - 1; k >= 0; k--) {
      if (++idx[k] < (uint32_t)out_sizes[k]) break;
      idx[k] = 0;
    }
  }
}

/* The position of a convolution's or a depthwise convolution's argument NAME in its call, from
 * the registry's schemas (opcodes.h); their `_nhwc` forms place every argument alike
 * (core/src/board_image/opcodes.rs checks it). */
#define CONV_ARG(NAME) (depthwise ? ARG_DEPTHWISE_##NAME : ARG_CONV_##NAME)

static int run_conv(const uint32_t *a, uint32_t n, int depthwise, int nchw) {
  int32_t in[4], od[4], wd[4];
  const value_rec *x = val(a, n, CONV_ARG(INPUT)), *w = val(a, n, CONV_ARG(WEIGHT)),
                  *b = val(a, n, CONV_ARG(BIAS)), *o = out_of(a, n);
  if (nhwc_dims(x, nchw, in) || nhwc_dims(o, nchw, od) || !w || w->rank != 4)
    return fail("conv: activations and weight must be 4-D tensors");
  memcpy(wd, sizes_of(w), sizeof wd);
  const value_rec *st = val(a, n, CONV_ARG(STRIDE)), *pd = val(a, n, CONV_ARG(PADDING)),
                  *dl = val(a, n, CONV_ARG(DILATION));
  k_window win = {(int32_t)list_pair(st, 0, 1), (int32_t)list_pair(st, 1, 1),
                  (int32_t)list_pair(pd, 0, 0), (int32_t)list_pair(pd, 1, 0),
                  (int32_t)list_pair(dl, 0, 1), (int32_t)list_pair(dl, 1, 1)};
  int32_t dm = 0;
  if (depthwise) {
    dm = (int32_t)ival(val(a, n, ARG_DEPTHWISE_DEPTH_MULTIPLIER));
    if (dm < 1) dm = 1;
  }
  k_requant rq = {(const int32_t *)tensor_data(val(a, n, CONV_ARG(REQUANTIZE_MULTIPLIERS))),
                  (const int32_t *)tensor_data(val(a, n, CONV_ARG(REQUANTIZE_SHIFTS))), 0,
                  (int32_t)ival(val(a, n, CONV_ARG(OUTPUT_OFFSET))),
                  (int32_t)ival(val(a, n, CONV_ARG(ACTIVATION_MIN))),
                  (int32_t)ival(val(a, n, CONV_ARG(ACTIVATION_MAX)))};
  if (!rq.multipliers || !rq.shifts) return fail("conv: missing multipliers or shifts");
  k_conv_s8((const int8_t *)tensor_data(x), in, (const int8_t *)tensor_data(w), wd,
            b && b->kind == V_TENSOR ? (const int32_t *)tensor_data(b) : 0, dm, &win,
            (int32_t)ival(val(a, n, CONV_ARG(INPUT_OFFSET))), &rq, (int8_t *)tensor_data(o), od);
  return 0;
}

/* cortex_m::quantized_transpose_conv2d[_nhwc] (weight [oc, kh, kw, ic]), its arguments by name. */
static int run_transpose_conv(const uint32_t *a, uint32_t n, int nchw) {
  k_tconv t;
  const value_rec *x = val(a, n, ARG_TRANSPOSE_CONV_INPUT), *w = val(a, n, ARG_TRANSPOSE_CONV_WEIGHT),
                  *b = val(a, n, ARG_TRANSPOSE_CONV_BIAS), *o = out_of(a, n);
  if (nhwc_dims(x, nchw, t.in) || nhwc_dims(o, nchw, t.od) || !w || w->rank != 4)
    return fail("transpose conv: activations and weight must be 4-D tensors");
  memcpy(t.wd, sizes_of(w), sizeof t.wd);
  if (t.wd[0] != t.od[3] || t.wd[3] != t.in[3]) return fail("transpose conv: channels do not match");
  const value_rec *st = val(a, n, ARG_TRANSPOSE_CONV_STRIDE), *pd = val(a, n, ARG_TRANSPOSE_CONV_PADDING);
  t.sh = (int32_t)list_pair(st, 0, 1);
  t.sw = (int32_t)list_pair(st, 1, 1);
  t.ph = (int32_t)list_pair(pd, 0, 0);
  t.pw = (int32_t)list_pair(pd, 1, 0);
  if (t.sh < 1 || t.sw < 1) return fail("transpose conv: zero stride");
  k_requant rq = {(const int32_t *)tensor_data(val(a, n, ARG_TRANSPOSE_CONV_REQUANTIZE_MULTIPLIERS)),
                  (const int32_t *)tensor_data(val(a, n, ARG_TRANSPOSE_CONV_REQUANTIZE_SHIFTS)), 0,
                  (int32_t)ival(val(a, n, ARG_TRANSPOSE_CONV_OUTPUT_OFFSET)),
                  (int32_t)ival(val(a, n, ARG_TRANSPOSE_CONV_ACTIVATION_MIN)),
                  (int32_t)ival(val(a, n, ARG_TRANSPOSE_CONV_ACTIVATION_MAX))};
  if (!rq.multipliers || !rq.shifts) return fail("transpose conv: missing multipliers or shifts");
  t.x = (const int8_t *)tensor_data(x);
  t.w = (const int8_t *)tensor_data(w);
  t.bias = b && b->kind == V_TENSOR ? (const int32_t *)tensor_data(b) : 0;
  t.input_offset = (int32_t)ival(val(a, n, ARG_TRANSPOSE_CONV_INPUT_OFFSET));
  t.rq = &rq;
  int32_t work_len;
  int32_t *work = work_memory(&work_len);
  if (k_transpose_conv_s8(&t, work, work_len, (int8_t *)tensor_data(o)))
    return fail("transpose conv: larger than the board's work memory");
  return 0;
}

/* The position of an average or max pool's argument NAME (their `_nhwc` forms alike). */
#define POOL_ARG(NAME) (max ? ARG_MAX_POOL_##NAME : ARG_AVG_POOL_##NAME)

static int run_pool(const uint32_t *a, uint32_t n, int max, int nchw) {
  int32_t in[4], od[4];
  const value_rec *x = val(a, n, POOL_ARG(INPUT)), *o = out_of(a, n), *p = val(a, n, POOL_ARG(PADDING));
  if (nhwc_dims(x, nchw, in) || nhwc_dims(o, nchw, od)) return fail("pool: 4-D tensors only");
  uint32_t np;
  const int64_t *pl = list(p, &np);
  int64_t ph = np > 0 ? pl[0] : 0, pw = np > 1 ? pl[1] : ph;
  const value_rec *st = val(a, n, POOL_ARG(STRIDE)), *ks = val(a, n, POOL_ARG(KERNEL_SIZE));
  k_window win = {(int32_t)list_pair(st, 0, 1), (int32_t)list_pair(st, 1, 1),
                  (int32_t)(ph < 0 ? 0 : ph), (int32_t)(pw < 0 ? 0 : pw), 1, 1};
  int32_t lo = -128, hi = 127;
  if (max) {
    lo = (int32_t)ival(val(a, n, ARG_MAX_POOL_ACTIVATION_MIN));
    hi = (int32_t)ival(val(a, n, ARG_MAX_POOL_ACTIVATION_MAX));
  }
  k_pool_s8((const int8_t *)tensor_data(x), in, (int32_t)list_pair(ks, 0, 1),
            (int32_t)list_pair(ks, 1, 1), &win, max, lo, hi, (int8_t *)tensor_data(o), od);
  return 0;
}

/* cortex_m::quantized_add / quantized_mul: arm_elementwise_add_s8 / arm_elementwise_mul_s8 over
 * the operands as they lie in memory, or (the backend's channel broadcast) a channels-last 4-D
 * tensor in runs of its channel count against a tensor that holds only its channels. */
static int run_add_mul(const uint32_t *a, uint32_t n, int mul) {
  const value_rec *x = val(a, n, mul ? ARG_QUANTIZED_MUL_SELF : ARG_QUANTIZED_ADD_SELF),
                  *y = val(a, n, mul ? ARG_QUANTIZED_MUL_OTHER : ARG_QUANTIZED_ADD_OTHER), *o = out_of(a, n);
  if (!x || !y || !o || x->kind != V_TENSOR || y->kind != V_TENSOR || o->kind != V_TENSOR ||
      x->dtype != ST_CHAR || y->dtype != ST_CHAR || o->dtype != ST_CHAR)
    return fail("add/mul: int8 tensors only");
  uint32_t nx = x->u.t.numel, ny = y->u.t.numel, c = 0;
  int same = x->rank == y->rank && memcmp(sizes_of(x), sizes_of(y), 4u * x->rank) == 0;
  if (!same) {
    if (x->rank != 4 || y->rank != 4 || sizes_of(x)[1] != sizes_of(y)[1])
      return fail("add/mul: sizes differ and are no channel broadcast");
    c = (uint32_t)sizes_of(x)[1];
    if (c == 0 || (nx != c && ny != c)) return fail("add/mul: no channel broadcast");
  }
  int swapped = ny > nx;
  uint32_t total = swapped ? ny : nx;
  if (o->u.t.numel != total) return fail("add/mul: out size does not match");
  const int8_t *big = (const int8_t *)tensor_data(swapped ? y : x);
  const int8_t *small = (const int8_t *)tensor_data(swapped ? x : y);
  int8_t *out = (int8_t *)tensor_data(o);
  int32_t lo = -128, hi = 127;
  /* an add with its activation bounds (its call then holds them, the out and the result) */
  if (!mul && n > ARG_QUANTIZED_ADD_ACTIVATION_MAX + 2u) {
    lo = (int32_t)ival(val(a, n, ARG_QUANTIZED_ADD_ACTIVATION_MIN));
    hi = (int32_t)ival(val(a, n, ARG_QUANTIZED_ADD_ACTIVATION_MAX));
  }
  for (uint32_t i = 0; i < total; i++) {
    int32_t p = big[i], q = small[c ? i % c : i];
    if (swapped) {
      int32_t t = p;
      p = q;
      q = t;
    }
    int32_t r;
    if (mul) {
      int32_t prod = (int32_t)((uint32_t)(p - (int32_t)ival(val(a, n, ARG_QUANTIZED_MUL_SELF_ZERO_POINT))) *
                               (uint32_t)(q - (int32_t)ival(val(a, n, ARG_QUANTIZED_MUL_OTHER_ZERO_POINT))));
      r = k_requantize(prod, (int32_t)ival(val(a, n, ARG_QUANTIZED_MUL_OUTPUT_MULTIPLIER)),
                       (int32_t)ival(val(a, n, ARG_QUANTIZED_MUL_OUTPUT_SHIFT))) +
          (int32_t)ival(val(a, n, ARG_QUANTIZED_MUL_OUTPUT_ZERO_POINT));
    } else {
      int32_t sa = k_requantize(
          (int32_t)((uint32_t)(p - (int32_t)ival(val(a, n, ARG_QUANTIZED_ADD_SELF_ZERO_POINT))) << 20),
          (int32_t)ival(val(a, n, ARG_QUANTIZED_ADD_SELF_MULTIPLIER)),
          (int32_t)ival(val(a, n, ARG_QUANTIZED_ADD_SELF_SHIFT)));
      int32_t sb = k_requantize(
          (int32_t)((uint32_t)(q - (int32_t)ival(val(a, n, ARG_QUANTIZED_ADD_OTHER_ZERO_POINT))) << 20),
          (int32_t)ival(val(a, n, ARG_QUANTIZED_ADD_OTHER_MULTIPLIER)),
          (int32_t)ival(val(a, n, ARG_QUANTIZED_ADD_OTHER_SHIFT)));
      r = (int32_t)((uint32_t)k_requantize((int32_t)((uint32_t)sa + (uint32_t)sb),
                                           (int32_t)ival(val(a, n, ARG_QUANTIZED_ADD_OUTPUT_MULTIPLIER)),
                                           (int32_t)ival(val(a, n, ARG_QUANTIZED_ADD_OUTPUT_SHIFT))) +
                    (uint32_t)(int32_t)ival(val(a, n, ARG_QUANTIZED_ADD_OUTPUT_ZERO_POINT)));
    }
    out[i] = (int8_t)(r < lo ? lo : r > hi ? hi : r);
  }
  return 0;
}

/* cortex_m::minimum / maximum: arm_minimum_s8 / arm_maximum_s8 as ExecuTorch 1.5.1 calls them,
 * the logical sizes right-aligned to 4-D and broadcast over the buffers as they lie in memory. */
static int run_min_max(const uint32_t *a, uint32_t n, int max) {
  const value_rec *x = val(a, n, 0), *y = val(a, n, 1), *o = out_of(a, n);
  if (!x || !y || !o || x->kind != V_TENSOR || y->kind != V_TENSOR || x->dtype != ST_CHAR ||
      y->dtype != ST_CHAR || x->rank > 4 || y->rank > 4)
    return fail("minimum/maximum: int8 tensors of at most 4 dims");
  int32_t xd[4] = {1, 1, 1, 1}, yd[4] = {1, 1, 1, 1}, od[4];
  for (uint32_t i = 0; i < x->rank; i++) xd[4 - x->rank + i] = sizes_of(x)[i];
  for (uint32_t i = 0; i < y->rank; i++) yd[4 - y->rank + i] = sizes_of(y)[i];
  uint32_t total = 1;
  for (int d = 0; d < 4; d++) {
    if (xd[d] != yd[d] && xd[d] != 1 && yd[d] != 1) return fail("minimum/maximum: sizes do not broadcast");
    od[d] = xd[d] > yd[d] ? xd[d] : yd[d];
    total *= (uint32_t)od[d];
  }
  if (o->u.t.numel != total) return fail("minimum/maximum: out size does not match");
  const int8_t *p = (const int8_t *)tensor_data(x), *q = (const int8_t *)tensor_data(y);
  int8_t *out = (int8_t *)tensor_data(o);
  uint32_t i = 0;
  for (int32_t b = 0; b < od[0]; b++)
    for (int32_t h = 0; h < od[1]; h++)
      for (int32_t w = 0; w < od[2]; w++)
        for (int32_t c = 0; c < od[3]; c++, i++) {
          int32_t at[4] = {b, h, w, c}, ix = 0, iy = 0;
          for (int d = 0; d < 4; d++) {
            ix = ix * xd[d] + (xd[d] == 1 ? 0 : at[d]);
            iy = iy * yd[d] + (yd[d] == 1 ? 0 : at[d]);
          }
          int8_t u = p[ix], v = q[iy];
          out[i] = max ? (u > v ? u : v) : (u < v ? u : v);
        }
  return 0;
}

int run_integer(uint32_t op, const uint32_t *a, uint32_t n) {
  const value_rec *x = val(a, n, 0), *o = out_of(a, n);
  if (!x || x->kind != V_TENSOR || !o || o->kind != V_TENSOR) return fail("input or out is not a tensor");
  void *src = tensor_data(x), *dst = tensor_data(o);
  uint32_t count = x->u.t.numel;
  switch (op) {
    case OP_QUANTIZE: {
      const float *f = (const float *)src;
      float inv = 1.0f / (float)dval(val(a, n, 1));
      int32_t zp = (int32_t)ival(val(a, n, 2)), lo = (int32_t)ival(val(a, n, 3)),
              hi = (int32_t)ival(val(a, n, 4));
      int mve = image_u32(60) == 0;
      if (o->dtype == ST_CHAR) {
        uint32_t blocks = mve ? count / 16u * 16u : 0u;
        int8_t *q = (int8_t *)dst;
        for (uint32_t i = 0; i < count; i++)
          q[i] = i < blocks ? k_quantize_mve(f[i], inv, zp, lo, hi)
                            : (int8_t)k_quantize_scalar(f[i], inv, zp, lo, hi);
        return 0;
      }
      if (o->dtype == ST_SHORT) {
        uint32_t blocks = mve ? count / 8u * 8u : 0u;
        int16_t *q = (int16_t *)dst;
        for (uint32_t i = 0; i < count; i++)
          q[i] = i < blocks ? k_quantize_mve_s16(f[i], inv, zp, lo, hi)
                            : (int16_t)k_quantize_scalar(f[i], inv, zp, lo, hi);
        return 0;
      }
      return fail("quantize: int8 or int16 output only");
    }
    case OP_DEQUANTIZE: {
      float scale = (float)dval(val(a, n, 1));
      int32_t zp = (int32_t)ival(val(a, n, 2));
      float *f = (float *)dst;
      if (x->dtype == ST_CHAR) {
        const int8_t *q = (const int8_t *)src;
        for (uint32_t i = 0; i < count; i++) f[i] = (float)(int32_t)((uint32_t)(int32_t)q[i] - (uint32_t)zp) * scale;
        return 0;
      }
      if (x->dtype == ST_SHORT) {
        const int16_t *q = (const int16_t *)src;
        for (uint32_t i = 0; i < count; i++) f[i] = (float)(int32_t)((uint32_t)(int32_t)q[i] - (uint32_t)zp) * scale;
        return 0;
      }
      return fail("dequantize: int8 or int16 input only");
    }
    case OP_HARDTANH: {
      /* aten::hardtanh.out on float: clamp(x, min_val, max_val) in float */
      if (x->dtype != ST_FLOAT || o->dtype != ST_FLOAT) return fail("hardtanh: float tensors only on the board");
      float lo = (float)scalar(val(a, n, 1)), hi = (float)scalar(val(a, n, 2));
      const float *in = (const float *)src;
      float *out = (float *)dst;
      for (uint32_t i = 0; i < count; i++) {
        float v = in[i];
        out[i] = v < lo ? lo : v > hi ? hi : v;
      }
      return 0;
    }
    case OP_TRANSPOSE_CONV_NHWC: return run_transpose_conv(a, n, 0);
    case OP_TRANSPOSE_CONV: return run_transpose_conv(a, n, 1);
    case OP_CONV_NHWC: return run_conv(a, n, 0, 0);
    case OP_DEPTHWISE_NHWC: return run_conv(a, n, 1, 0);
    case OP_CONV: return run_conv(a, n, 0, 1);
    case OP_DEPTHWISE: return run_conv(a, n, 1, 1);
    case OP_QUANTIZED_ACTIVATION: {
      /* cortex_m::quantized_activation: a 256-entry lookup table indexed by x + 128 */
      const value_rec *lut = val(a, n, 1);
      if (!lut || lut->kind != V_TENSOR || lut->u.t.numel != 256 || x->dtype != ST_CHAR)
        return fail("activation: int8 input and a 256-entry table");
      const int8_t *t = (const int8_t *)tensor_data(lut), *in = (const int8_t *)src;
      int8_t *out = (int8_t *)dst;
      for (uint32_t i = 0; i < count; i++) out[i] = t[(uint8_t)(in[i] + 128)];
      return 0;
    }
    case OP_QUANTIZED_DIV: {
      /* cortex_m::quantized_div: the backend's float quotient, round((a - a_zp) / (b - b_zp) *
       * scale) + out_zp, 0 for a zero divisor, clamped to the type */
      const value_rec *y = val(a, n, 2);
      if (!y || y->kind != V_TENSOR || y->dtype != x->dtype || y->u.t.numel != count ||
          (x->dtype != ST_CHAR && x->dtype != ST_SHORT))
        return fail("div: int8 or int16 tensors of one size and type");
      int32_t azp = (int32_t)ival(val(a, n, 1)), bzp = (int32_t)ival(val(a, n, 3)),
              ozp = (int32_t)ival(val(a, n, 4));
      float scale = (float)dval(val(a, n, 5));
      int wide = x->dtype == ST_SHORT;
      float lo = wide ? -32768.0f : -128.0f, hi = wide ? 32767.0f : 127.0f;
      for (uint32_t i = 0; i < count; i++) {
        int32_t p = wide ? ((const int16_t *)src)[i] : ((const int8_t *)src)[i];
        int32_t q = wide ? ((const int16_t *)tensor_data(y))[i] : ((const int8_t *)tensor_data(y))[i];
        int32_t num = (int32_t)((uint32_t)p - (uint32_t)azp), den = (int32_t)((uint32_t)q - (uint32_t)bzp);
        float quot = den != 0 ? (float)num / (float)den : 0.0f;
        float v = roundf(quot * scale) + (float)ozp;
        v = v < lo ? lo : v > hi ? hi : v;
        if (wide)
          ((int16_t *)dst)[i] = (int16_t)v;
        else
          ((int8_t *)dst)[i] = (int8_t)v;
      }
      return 0;
    }
    case OP_QUANTIZED_BATCH_MATMUL: {
      const value_rec *r = val(a, n, 2);
      if (!r || r->kind != V_TENSOR || x->rank != 3 || r->rank != 3)
        return fail("batch_matmul: 3-D int8 tensors");
      const int32_t *ls = sizes_of(x), *rs = sizes_of(r);
      if (ls[0] != rs[0] || ls[2] != rs[2]) return fail("batch_matmul: sizes do not fit");
      k_batch_matmul_s8((const int8_t *)src, (const int8_t *)tensor_data(r), ls[0], ls[1], ls[2],
                        rs[1], (int32_t)ival(val(a, n, 1)), (int32_t)ival(val(a, n, 3)),
                        (int32_t)ival(val(a, n, 4)), (int32_t)ival(val(a, n, 5)),
                        (int32_t)ival(val(a, n, 6)), (int8_t *)dst);
      return 0;
    }
    case OP_MINIMUM: return run_min_max(a, n, 0);
    case OP_MAXIMUM: return run_min_max(a, n, 1);
    case OP_QUANTIZED_ADD: return run_add_mul(a, n, 0);
    case OP_QUANTIZED_MUL: return run_add_mul(a, n, 1);
    case OP_AVG_POOL_NHWC: return run_pool(a, n, 0, 0);
    case OP_AVG_POOL: return run_pool(a, n, 0, 1);
    case OP_MAX_POOL_NHWC: return run_pool(a, n, 1, 0);
    case OP_MAX_POOL: return run_pool(a, n, 1, 1);
    case OP_LINEAR: {
      const value_rec *w = val(a, n, 1), *b = val(a, n, 2), *ks = val(a, n, 3);
      if (!w || w->rank != 2) return fail("linear: 2-D weights only");
      int32_t outs = sizes_of(w)[0], ins = sizes_of(w)[1];
      uint32_t nm, ns;
      const int64_t *m = list(val(a, n, 7), &nm), *s = list(val(a, n, 8), &ns);
      if (ins <= 0 || count % (uint32_t)ins || nm == 0 || nm != ns) return fail("linear: shapes do not fit");
      k_linear_s8((const int8_t *)src, (int32_t)(count / (uint32_t)ins), ins,
                  (const int8_t *)tensor_data(w), outs,
                  b && b->kind == V_TENSOR ? (const int32_t *)tensor_data(b) : 0,
                  ks && ks->kind == V_TENSOR ? (const int32_t *)tensor_data(ks) : 0,
                  (int32_t)ival(val(a, n, 4)), (int32_t)ival(val(a, n, 5)), m, s, (int32_t)nm,
                  (int32_t)ival(val(a, n, 6)), (int32_t)ival(val(a, n, 10)),
                  (int32_t)ival(val(a, n, 9)), (int8_t *)dst);
      return 0;
    }
    case OP_SOFTMAX: {
      int32_t row = x->rank ? sizes_of(x)[x->rank - 1] : 0;
      if (row <= 0) return fail("softmax: empty rows");
      for (uint32_t r = 0; r + (uint32_t)row <= count; r += (uint32_t)row)
        k_softmax_row_s8((const int8_t *)src + r, row, (int32_t)ival(val(a, n, 4)),
                         (int32_t)ival(val(a, n, 5)), (int32_t)ival(val(a, n, 6)),
                         (int8_t *)dst + r);
      return 0;
    }
    case OP_TRANSPOSE: {
      uint32_t np;
      const int64_t *perm = list(val(a, n, 1), &np);
      static const uint32_t identity[8] = {0, 1, 2, 3, 4, 5, 6, 7};
      if (np != x->rank || x->rank > 4) return fail("transpose: permutation does not fit");
      /* arm_transpose_s8 reads memory with the logical sizes: treat both sides as contiguous */
      permuted_copy((const uint8_t *)src, sizes_of(x), identity, (uint8_t *)dst, identity, perm,
                    x->rank, 1);
      return 0;
    }
    case OP_CLONE_DIM_ORDER: {
      uint32_t elem = o->u.t.numel ? o->u.t.nbytes / o->u.t.numel : 1;
      if (x->rank != o->rank || x->rank > 8) return fail("_clone_dim_order: ranks differ");
      permuted_copy((const uint8_t *)src, sizes_of(x), order_of(x), (uint8_t *)dst, order_of(o),
                    0, x->rank, elem);
      return 0;
    }
    case OP_PAD: {
      uint32_t npre, npost;
      const int64_t *pre = list(val(a, n, 1), &npre), *post = list(val(a, n, 2), &npost);
      int8_t value = (int8_t)ival(val(a, n, 3));
      uint32_t rank = x->rank;
      if (rank == 0 || rank > 4 || npre != 4 || npost != 4) return fail("pad: 4 pads per side");
      int32_t dims[4] = {1, 1, 1, 1}, od[4];
      const int32_t *s = sizes_of(x);
      const uint32_t *ord = order_of(x);
      int nhwc = rank == 4 && (s[1] == 1 || (s[2] == 1 && s[3] == 1) ||
                               (ord[0] == 0 && ord[1] == 2 && ord[2] == 3 && ord[3] == 1));
      static const uint32_t to_nhwc[4] = {0, 2, 3, 1};
      for (uint32_t i = 0; i < rank; i++) dims[4 - rank + i] = nhwc ? s[to_nhwc[4 - rank + i]] : s[i];
      for (int d = 0; d < 4; d++) od[d] = dims[d] + (int32_t)pre[d] + (int32_t)post[d];
      int8_t *out = (int8_t *)dst;
      uint32_t total = (uint32_t)(od[0] * od[1] * od[2] * od[3]);
      if (total != o->u.t.numel) return fail("pad: out size does not match");
      memset(out, value, total);
      const int8_t *in = (const int8_t *)src;
      uint32_t i = 0;
      for (int32_t b = 0; b < dims[0]; b++)
        for (int32_t h = 0; h < dims[1]; h++)
          for (int32_t w = 0; w < dims[2]; w++)
            for (int32_t c = 0; c < dims[3]; c++)
              out[(((b + pre[0]) * od[1] + h + pre[1]) * od[2] + w + pre[2]) * od[3] + c + pre[3]] = in[i++];
      return 0;
    }
    default: return fail("operator not implemented by the board firmware");
  }
}
