/* Network layers: matrix products, linear, convolution, layer, group and batch norm, embedding,
 * pairwise distances, and the quantized_decomposed quantize and dequantize. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "portable.h"

/* The most elements a kernel's output may have before its sizes are refused (well above the
 * board's work memory, well below where a 32-bit byte count wraps). */
#define MAX_ELEMENTS (1LL << 26)

/* Whether a * b * c * d (each non-negative, from the program) stays within MAX_ELEMENTS,
 * checked a factor at a time so no product wraps. */
static int within_elements(int64_t a, int64_t b, int64_t c, int64_t d) {
  int64_t f[4] = {a, b, c, d}, p = 1;
  for (int i = 0; i < 4; i++) {
    if (f[i] < 0 || f[i] > MAX_ELEMENTS) return 0;
    p *= f[i];
    if (p > MAX_ELEMENTS) return 0;
  }
  return 1;
}

/* A norm's optional weight and bias (arguments `wk` and `wk + 1`): loaded when given, 0 when
 * absent. */
typedef struct {
  tview tw, tb;
  double *w, *b;
} affine;

/* A norm's input (argument 0, into `x`) and its weight and bias (`f`); 0 when one that is given
 * cannot be read. */
static double *norm_operands(const uint32_t *a, uint32_t n, uint32_t wk, tview *x, affine *f) {
  memset(f, 0, sizeof *f);
  double *xv = load(val(a, n, 0), x);
  const value_rec *wr = val(a, n, wk), *br = val(a, n, wk + 1);
  f->w = xv && wr && wr->kind == V_TENSOR ? load(wr, &f->tw) : 0;
  f->b = xv && br && br->kind == V_TENSOR ? load(br, &f->tb) : 0;
  int failed = (wr && wr->kind == V_TENSOR && !f->w) || (br && br->kind == V_TENSOR && !f->b);
  return failed ? 0 : xv;
}

/* embedding.out(weight[rows, dim], indices, ...): rows of the weight by index */
int embedding_op(const uint32_t *a, uint32_t n) {
  tview w, ix;
  double *wv = load(val(a, n, 0), &w), *iv = wv ? load(val(a, n, 1), &ix) : 0;
  if (!iv) return -1;
  if (w.rank != 2) return fail("embedding: the weight is not 2-D");
  uint32_t rows = (uint32_t)w.size[0], dim = (uint32_t)w.size[1];
  double *r = new_values(ix.numel * dim);
  if (!r) return -1;
  for (uint32_t k = 0; k < ix.numel; k++) {
    int64_t i = (int64_t)iv[k];
    if (i < 0) i += rows;
    if (i < 0 || i >= (int64_t)rows) return fail("embedding: an index out of range");
    memcpy(r + (uint64_t)k * dim, wv + (uint64_t)i * dim, dim * 8u);
  }
  return store(out_of(a, n), r, ix.numel * dim);
}

/* out[b][i][j] = sum_p a[b][i][p] * b[b][p][j] in float32 (mm: one batch) */
int matmul_op(uint32_t op, const uint32_t *a, uint32_t n) {
  uint32_t first = op == OP_ADDMM ? 1u : 0u;
  tview ta, tb;
  double *av = load(val(a, n, first), &ta), *bv = av ? load(val(a, n, first + 1), &tb) : 0;
  if (!bv) return -1;
  if (!is_float(&ta) || !is_float(&tb)) return fail("mm/bmm/addmm: float tensors only");
  uint32_t rank = op == OP_BMM ? 3u : 2u;
  if (ta.rank != rank || tb.rank != rank) return fail("mm/bmm/addmm: operands of the wrong rank");
  uint32_t batch = rank == 3 ? (uint32_t)ta.size[0] : 1u, base = rank - 2;
  uint32_t m = (uint32_t)ta.size[base], k = (uint32_t)ta.size[base + 1], nn = (uint32_t)tb.size[base + 1];
  if ((uint32_t)tb.size[base] != k || (rank == 3 && (uint32_t)tb.size[0] != batch)) return fail("mm/bmm/addmm: inner sizes differ");
  double *r = new_values(batch * m * nn);
  if (!r) return -1;
  for (uint32_t t = 0; t < batch; t++)
    for (uint32_t i = 0; i < m; i++)
      for (uint32_t j = 0; j < nn; j++) {
        float acc = 0.0f;
        for (uint32_t p = 0; p < k; p++)
          acc += (float)av[((uint64_t)t * m + i) * k + p] * (float)bv[((uint64_t)t * k + p) * nn + j];
        r[((uint64_t)t * m + i) * nn + j] = acc;
      }
  if (op == OP_ADDMM) {
    tview tc;
    double *cv = load(val(a, n, 0), &tc);
    if (!cv) return -1;
    float beta = (float)scalar(val(a, n, 3)), alpha = (float)scalar(val(a, n, 4));
    for (uint32_t i = 0; i < m * nn; i++) {
      float bi = tc.numel == nn ? (float)cv[i % nn] : tc.numel == m * nn ? (float)cv[i] : tc.numel ? (float)cv[0] : 0.0f;
      r[i] = (double)(alpha * (float)r[i] + beta * bi);
    }
  }
  return store(out_of(a, n), r, batch * m * nn);
}

/* linear(input, weight[out, in], bias?): float32 dot products, then the bias */
int linear_op(const uint32_t *a, uint32_t n) {
  tview x, w, b;
  double *xv = load(val(a, n, 0), &x), *wv = xv ? load(val(a, n, 1), &w) : 0;
  if (!wv) return -1;
  const value_rec *bvr = val(a, n, 2);
  double *bv = bvr && bvr->kind == V_TENSOR ? load(bvr, &b) : 0;
  if (bvr && bvr->kind == V_TENSOR && !bv) return -1;
  if (w.rank != 2 || !is_float(&x)) return fail("linear: a 2-D weight, float tensors");
  uint32_t outs = (uint32_t)w.size[0], ins = (uint32_t)w.size[1];
  if (ins == 0 || x.numel % ins || (bv && b.numel != outs)) return fail("linear: sizes do not fit");
  uint32_t rows = x.numel / ins;
  double *r = new_values(rows * outs);
  if (!r) return -1;
  for (uint32_t q = 0; q < rows; q++)
    for (uint32_t o = 0; o < outs; o++) {
      float acc = 0.0f;
      for (uint32_t i = 0; i < ins; i++) acc += (float)xv[(uint64_t)q * ins + i] * (float)wv[(uint64_t)o * ins + i];
      r[(uint64_t)q * outs + o] = (double)(acc + (bv ? (float)bv[o] : 0.0f));
    }
  return store(out_of(a, n), r, rows * outs);
}

/* The transposed convolution of convolution.out, 2-D or 1-D, weight [C_in, C_out / groups, KH, KW],
 * as the portable kernel sums it: every output starts at its bias, then each input pixel
 * scatters its taps into it, input row, input column, input channel, kernel row, kernel column
 * in that order, in float32. */
static int transposed_convolution(const uint32_t *a, uint32_t n, const tview *x, const double *xv, const tview *w,
                                  const double *wv, const tview *b, const double *bv) {
  int one_d = x->rank == 3 && w->rank == 3;
  if (!one_d && (x->rank != 4 || w->rank != 4)) return fail("convolution: 3-D or 4-D tensors");
  int32_t N = x->size[0], C = x->size[1], H = one_d ? 1 : x->size[2], W = x->size[one_d ? 2 : 3];
  int32_t CI = w->size[0], OCG = w->size[1], KH = one_d ? 1 : w->size[2], KW = w->size[one_d ? 2 : 3];
  int32_t sh = one_d ? 1 : (int32_t)window(val(a, n, 3), 0, 1), sw = (int32_t)window(val(a, n, 3), one_d ? 0 : 1, 1);
  int32_t ph = one_d ? 0 : (int32_t)window(val(a, n, 4), 0, 0), pw = (int32_t)window(val(a, n, 4), one_d ? 0 : 1, 0);
  int32_t dh = one_d ? 1 : (int32_t)window(val(a, n, 5), 0, 1), dw = (int32_t)window(val(a, n, 5), one_d ? 0 : 1, 1);
  int32_t oph = one_d ? 0 : (int32_t)window(val(a, n, 7), 0, 0), opw = (int32_t)window(val(a, n, 7), one_d ? 0 : 1, 0);
  int64_t groups = ival(val(a, n, 8));
  if (groups < 1) groups = 1;
  if (C < 1 || groups > C || sh <= 0 || sw <= 0 || CI != C || C % groups) return fail("convolution: input, weight and groups do not fit");
  int32_t ICG = C / (int32_t)groups;
  int64_t oc64 = (int64_t)OCG * groups;
  int64_t oh64 = ((int64_t)H - 1) * sh - 2 * (int64_t)ph + (int64_t)dh * (KH - 1) + oph + 1;
  int64_t ow64 = ((int64_t)W - 1) * sw - 2 * (int64_t)pw + (int64_t)dw * (KW - 1) + opw + 1;
  if (H < 1 || W < 1 || oh64 <= 0 || ow64 <= 0) return fail("convolution: the transposed output is empty");
  /* sizes from the program: no product may wrap before the work memory refuses it */
  if (!within_elements(N, oc64, oh64, ow64))
    return fail("convolution: the transposed output is larger than the board's work memory");
  int32_t OC = (int32_t)oc64, OH = (int32_t)oh64, OW = (int32_t)ow64;
  if (b && b->numel != (uint32_t)OC) return fail("convolution: the bias does not match the output channels");
  uint32_t plane = (uint32_t)OH * (uint32_t)OW, total = (uint32_t)N * (uint32_t)OC * plane;
  float *acc = (float *)scratch(total * 4u + 4u);
  double *r = new_values(total);
  if (!acc || !r) return fail("convolution: larger than the board's work memory");
  for (uint32_t k = 0; k < total; k++) acc[k] = bv ? (float)bv[(k / plane) % (uint32_t)OC] : 0.0f;
  for (int32_t bn = 0; bn < N; bn++)
    for (int32_t o = 0; o < OC; o++) {
      int32_t g = o / OCG, j = o % OCG;
      float *dst = acc + ((uint32_t)bn * (uint32_t)OC + (uint32_t)o) * plane;
      for (int32_t iy = 0; iy < H; iy++)
        for (int32_t ix = 0; ix < W; ix++)
          for (int32_t i = g * ICG; i < (g + 1) * ICG; i++) {
            float xval = (float)xv[(((int64_t)bn * C + i) * H + iy) * W + ix];
            for (int32_t ky = 0; ky < KH; ky++) {
              int64_t y = (int64_t)iy * sh + (int64_t)ky * dh - ph;
              if (y < 0 || y >= OH) continue;
              for (int32_t kx = 0; kx < KW; kx++) {
                int64_t xo = (int64_t)ix * sw + (int64_t)kx * dw - pw;
                if (xo < 0 || xo >= OW) continue;
                dst[y * OW + xo] += xval * (float)wv[(((int64_t)i * OCG + j) * KH + ky) * KW + kx];
              }
            }
          }
    }
  for (uint32_t k = 0; k < total; k++) r[k] = (double)acc[k];
  return store(out_of(a, n), r, total);
}

/* convolution.out(input, weight, bias?, stride, padding, dilation, transposed, output_padding,
 * groups, out), 2-D or 1-D: each output starts at zero, adds weight × input in input channel,
 * kernel row, kernel column order, and adds its bias last, in float32, as the portable kernel's
 * conv2d_impl does. */
int convolution_op(const uint32_t *a, uint32_t n) {
  tview x, w, b;
  double *xv = load(val(a, n, 0), &x), *wv = xv ? load(val(a, n, 1), &w) : 0;
  if (!wv) return -1;
  const value_rec *bvr = val(a, n, 2);
  double *bv = bvr && bvr->kind == V_TENSOR ? load(bvr, &b) : 0;
  if (bvr && bvr->kind == V_TENSOR && !bv) return -1;
  if (!is_float(&x) || !is_float(&w)) return fail("convolution: float tensors only");
  if (ival(val(a, n, 6))) return transposed_convolution(a, n, &x, xv, &w, wv, bv ? &b : 0, bv);
  int one_d = x.rank == 3 && w.rank == 3;
  if (!one_d && (x.rank != 4 || w.rank != 4)) return fail("convolution: 3-D or 4-D tensors");
  int32_t N = x.size[0], C = x.size[1], H = one_d ? 1 : x.size[2], W = x.size[one_d ? 2 : 3];
  int32_t OC = w.size[0], ICG = w.size[1], KH = one_d ? 1 : w.size[2], KW = w.size[one_d ? 2 : 3];
  int32_t sh = one_d ? 1 : (int32_t)window(val(a, n, 3), 0, 1), sw = (int32_t)window(val(a, n, 3), one_d ? 0 : 1, 1);
  int32_t ph = one_d ? 0 : (int32_t)window(val(a, n, 4), 0, 0), pw = (int32_t)window(val(a, n, 4), one_d ? 0 : 1, 0);
  int32_t dh = one_d ? 1 : (int32_t)window(val(a, n, 5), 0, 1), dw = (int32_t)window(val(a, n, 5), one_d ? 0 : 1, 1);
  int64_t groups = ival(val(a, n, 8));
  if (groups < 1) groups = 1;
  if (C < 1 || groups > C || sh == 0 || sw == 0 || (int64_t)ICG * groups != C || OC % groups || (bv && b.numel != (uint32_t)OC))
    return fail("convolution: input, weight and groups do not fit");
  int64_t oh64 = ((int64_t)H + 2 * (int64_t)ph - ((int64_t)dh * (KH - 1) + 1)) / sh + 1;
  int64_t ow64 = ((int64_t)W + 2 * (int64_t)pw - ((int64_t)dw * (KW - 1) + 1)) / sw + 1;
  if (oh64 <= 0 || ow64 <= 0) return fail("convolution: the kernel is larger than the input");
  if (!within_elements(N, OC, oh64, ow64))
    return fail("convolution: the output is larger than the board's work memory");
  int32_t OH = (int32_t)oh64, OW = (int32_t)ow64;
  int32_t OCG = OC / (int32_t)groups;
  uint32_t total = (uint32_t)N * (uint32_t)OC * (uint32_t)OH * (uint32_t)OW, k = 0;
  double *r = new_values(total);
  if (!r) return -1;
  for (int32_t bn = 0; bn < N; bn++)
    for (int32_t o = 0; o < OC; o++) {
      int32_t g = o / OCG;
      for (int32_t y = 0; y < OH; y++)
        for (int32_t xo = 0; xo < OW; xo++) {
          float acc = 0.0f;
          for (int32_t ic = 0; ic < ICG; ic++) {
            int32_t cin = g * ICG + ic;
            const double *src = xv + ((int64_t)bn * C + cin) * H * W;
            for (int32_t ky = 0; ky < KH; ky++) {
              int32_t iy = y * sh + ky * dh - ph;
              if (iy < 0 || iy >= H) continue;
              for (int32_t kx = 0; kx < KW; kx++) {
                int32_t ix = xo * sw + kx * dw - pw;
                if (ix < 0 || ix >= W) continue;
                float wt = (float)wv[(((int64_t)o * ICG + ic) * KH + ky) * KW + kx];
                acc += wt * (float)src[(int64_t)iy * W + ix];
              }
            }
          }
          if (bv) acc += (float)bv[o];
          r[k++] = (double)acc;
        }
    }
  return store(out_of(a, n), r, k);
}

/* native_layer_norm.out(input, normalized_shape, weight?, bias?, eps, out, mean, rstd): as the
 * portable kernel's layer_norm_scalar, the sums and E[x^2] - mean^2 in float32, sqrtf(var + eps)
 * with eps a float, each output (x - mean) / std * w + b in float32, rstd 1.0 / std in double */
int layer_norm_op(const uint32_t *a, uint32_t n) {
  tview x;
  affine f;
  double *xv = norm_operands(a, n, 2, &x, &f);
  if (!xv) return -1;
  uint32_t nk;
  const int64_t *shape = list(val(a, n, 1), &nk);
  if (nk > x.rank || !is_float(&x)) return fail("native_layer_norm: the normalized shape does not fit");
  for (uint32_t k = 0; k < nk; k++)
    if (x.size[x.rank - nk + k] != shape[k]) return fail("native_layer_norm: the normalized shape does not end the input");
  uint32_t inner = product(x.size, x.rank - nk, x.rank);
  if (inner == 0 || (f.w && f.tw.numel != inner) || (f.b && f.tb.numel != inner)) return fail("native_layer_norm: weight or bias does not fit");
  float eps = (float)dval(val(a, n, 4)), nn = (float)inner;
  uint32_t rows = x.numel / inner;
  double *out = new_values(x.numel), *means = new_values(rows), *rstds = new_values(rows);
  if (!out || !means || !rstds) return -1;
  for (uint32_t q = 0; q < rows; q++) {
    const double *row = xv + (uint64_t)q * inner;
    float sum = 0.0f, sq_sum = 0.0f;
    for (uint32_t i = 0; i < inner; i++) {
      float v32 = (float)row[i];
      sum += v32;
      sq_sum += v32 * v32;
    }
    float mean = sum / nn, sd = sqrtf(sq_sum / nn - mean * mean + eps);
    for (uint32_t i = 0; i < inner; i++) {
      float w = f.w ? (float)f.w[i] : 1.0f, b = f.b ? (float)f.b[i] : 0.0f;
      out[(uint64_t)q * inner + i] = (double)(((float)row[i] - mean) / sd * w + b);
    }
    means[q] = (double)mean;
    rstds[q] = (double)(float)(1.0 / (double)sd);
  }
  if (store(val(a, n, 5), out, x.numel) || store(val(a, n, 6), means, rows)) return -1;
  return store(val(a, n, 7), rstds, rows);
}

/* native_group_norm.out(input, weight?, bias?, N, C, HxW, group, eps, out, mean, rstd), as the
 * portable kernel: the sum and the sum of squares in float32, the mean, E[x^2] - mean^2, the
 * reciprocal standard deviation and scale * x + shift in double, rounded to float32 */
int group_norm_op(const uint32_t *a, uint32_t n) {
  tview x;
  affine f;
  double *xv = norm_operands(a, n, 1, &x, &f);
  if (!xv) return -1;
  int64_t N = ival(val(a, n, 3)), C = ival(val(a, n, 4)), HW = ival(val(a, n, 5)), G = ival(val(a, n, 6));
  if (N < 0) N = 0;
  if (C < 0) C = 0;
  if (HW < 0) HW = 0;
  if (G < 1) G = 1;
  double eps = dval(val(a, n, 7));
  if (C % G || !within_elements(N, C, HW, 1) || (uint64_t)(N * C * HW) != x.numel)
    return fail("group_norm: sizes do not fit the input");
  if ((f.w && f.tw.numel != (uint64_t)C) || (f.b && f.tb.numel != (uint64_t)C))
    return fail("group_norm: weight or bias does not match the channels");
  tview ts;
  if (view_of(val(a, n, 9), &ts)) return -1;
  if (!within_elements(N, G, 1, 1) || (uint64_t)(N * G) != ts.numel)
    return fail("group_norm: the statistics do not match their out tensors");
  int64_t cg = C / G, count = cg * HW;
  double *out = new_values(x.numel), *means = new_values((uint32_t)(N * G)), *rstds = new_values((uint32_t)(N * G));
  if (!out || !means || !rstds) return -1;
  uint32_t q = 0;
  for (int64_t b = 0; b < N; b++)
    for (int64_t g = 0; g < G; g++) {
      int64_t base = (b * C + g * cg) * HW;
      if (count == 0) { /* an empty group: mean 0, rstd NaN, as the kernel writes */
        means[q] = 0.0;
        rstds[q++] = NAN;
        continue;
      }
      float sum = 0.0f, sq = 0.0f;
      for (int64_t k = 0; k < count; k++) {
        float v32 = (float)xv[base + k];
        sum = sum + v32;
        sq = sq + v32 * v32;
      }
      double nn = (double)(count > 0 ? count : 1), mean = (double)sum / nn, var = (double)sq / nn - mean * mean;
      double rstd = 1.0 / sqrt(var + eps);
      means[q] = (double)(float)mean;
      rstds[q++] = (double)(float)rstd;
      for (int64_t ch = 0; ch < cg; ch++) {
        int64_t channel = g * cg + ch, at0 = base + ch * HW;
        if (!f.w && !f.b) {
          for (int64_t k = 0; k < HW; k++) out[at0 + k] = (double)(float)((xv[at0 + k] - mean) * rstd);
        } else {
          double w = f.w ? f.w[channel] : 1.0, bb = f.b ? f.b[channel] : 0.0;
          double scale = rstd * w, shift = -scale * mean + bb;
          for (int64_t k = 0; k < HW; k++) out[at0 + k] = (double)(float)(scale * xv[at0 + k] + shift);
        }
      }
    }
  if (store(val(a, n, 8), out, x.numel) || store(val(a, n, 9), means, q)) return -1;
  return store(val(a, n, 10), rstds, q);
}

/* The p-norm distance of two rows in float32 steps (p = 0 counts differences, infinity takes the
 * largest), as the host's `p_distance`; sums start at -0.0 as Rust's do. */
static double p_distance(const double *x, const double *y, uint32_t m, double p) {
  float acc = -0.0f;
  if (isinf(p)) acc = 0.0f;
  for (uint32_t k = 0; k < m; k++) {
    float d = fabsf((float)x[k] - (float)y[k]);
    if (p == 0.0)
      acc += d != 0.0f ? 1.0f : 0.0f;
    else if (isinf(p))
      acc = fmaxf(acc, d);
    else if (p == 1.0)
      acc += d;
    else if (p == 2.0)
      acc += d * d;
    else
      acc += powf(d, (float)p);
  }
  if (p == 2.0) acc = sqrtf(acc);
  else if (p != 0.0 && p != 1.0 && !isinf(p)) acc = (float)pow((double)acc, 1.0 / (double)(float)p); /* std::pow(float, double) */
  return (double)acc;
}

/* _cdist_forward.out(x1[..., P, M], x2[..., R, M], p, compute_mode?, out) and
 * _pdist_forward.out(self[N, M], p, out): distances of rows */
int distance_op(uint32_t op, const uint32_t *a, uint32_t n) {
  tview x, y;
  double *xv = load(val(a, n, 0), &x);
  if (!xv) return -1;
  if (op == OP_PDIST_FORWARD) {
    if (x.rank != 2) return fail("pdist: a 2-D tensor");
    uint32_t rows = (uint32_t)x.size[0], m = (uint32_t)x.size[1], c = 0;
    double p = scalar(val(a, n, 1));
    double *r = new_values(rows * (rows ? rows - 1 : 0) / 2 + 1);
    if (!r) return -1;
    for (uint32_t i = 0; i < rows; i++)
      for (uint32_t j = i + 1; j < rows; j++) r[c++] = p_distance(xv + (uint64_t)i * m, xv + (uint64_t)j * m, m, p);
    return store(out_of(a, n), r, c);
  }
  double *yv = load(val(a, n, 1), &y);
  if (!yv) return -1;
  if (x.rank < 2 || y.rank != x.rank || x.size[x.rank - 1] != y.size[y.rank - 1] ||
      memcmp(x.size, y.size, 4u * (x.rank - 2)))
    return fail("cdist: the shapes do not fit");
  uint32_t pn = (uint32_t)x.size[x.rank - 2], rn = (uint32_t)y.size[y.rank - 2], m = (uint32_t)x.size[x.rank - 1];
  uint32_t batches = product(x.size, 0, x.rank - 2), c = 0;
  double p = scalar(val(a, n, 2));
  double *r = new_values(batches * pn * rn);
  if (!r) return -1;
  for (uint32_t b = 0; b < batches; b++)
    for (uint32_t i = 0; i < pn; i++)
      for (uint32_t j = 0; j < rn; j++)
        r[c++] = p_distance(xv + ((uint64_t)b * pn + i) * m, yv + ((uint64_t)b * rn + j) * m, m, p);
  return store(out_of(a, n), r, c);
}

/* _native_batch_norm_legit_no_training.out(input, weight?, bias?, mean, var, momentum, eps, out,
 * save_mean, save_invstd): as the portable kernel, per channel invstd = 1 / sqrt(var + eps) in
 * double (eps is a double), then (x - mean) * invstd * weight + bias in float32, weight 1 and
 * bias 0 when absent */
int batch_norm_op(const uint32_t *a, uint32_t n) {
  tview x, tm, tv;
  affine f;
  double *xv = norm_operands(a, n, 1, &x, &f);
  if (!xv) return -1;
  double *mv = load(val(a, n, 3), &tm), *vv = mv ? load(val(a, n, 4), &tv) : 0;
  if (!vv) return -1;
  if (x.rank < 2 || !is_float(&x)) return fail("batch norm: a float input with channels");
  uint32_t c = (uint32_t)x.size[1], inner = product(x.size, 2, x.rank);
  if (tm.numel != c || tv.numel != c || (f.w && f.tw.numel != c) || (f.b && f.tb.numel != c)) return fail("batch norm: statistics do not match the channels");
  double eps = dval(val(a, n, 6));
  for (uint32_t i = 0; i < x.numel; i++) {
    uint32_t ch = (i / (inner ? inner : 1u)) % c;
    float inv = (float)(1.0 / sqrt((double)(float)vv[ch] + eps));
    float w = f.w ? (float)f.w[ch] : 1.0f, b = f.b ? (float)f.b[ch] : 0.0f;
    xv[i] = (double)(((float)xv[i] - (float)mv[ch]) * inv * w + b);
  }
  return store(val(a, n, 7), xv, x.numel);
}

/* _native_batch_norm_legit.no_stats_out(input, weight?, bias?, training, momentum, eps, out,
 * save_mean, save_invstd): each channel normalised by its statistics over the batch and the
 * spatial dims (an InstanceNorm), as the portable kernel: per sample the channel's sum and sum of
 * squares in float32, added over the batch in float32, mean and E[x^2] - mean^2 in float32,
 * invstd 1 / sqrt(var + eps) in double, then (x - mean) * invstd * weight + bias in float32 */
int batch_norm_no_stats_op(const uint32_t *a, uint32_t n) {
  tview x;
  affine f;
  double *xv = norm_operands(a, n, 1, &x, &f);
  if (!xv) return -1;
  if (x.rank < 2 || !is_float(&x)) return fail("batch norm: a float input with a batch and channels");
  uint32_t nb = (uint32_t)x.size[0], c = (uint32_t)x.size[1], inner = product(x.size, 2, x.rank);
  if ((f.w && f.tw.numel != c) || (f.b && f.tb.numel != c)) return fail("batch norm: weight or bias does not match the channels");
  tview stats;
  if (view_of(val(a, n, 7), &stats)) return -1;
  /* one mean per channel: as many as the planned statistics hold, before anything is allocated */
  if (stats.numel != c || !within_elements(nb, c, inner, 1)) return fail("batch norm: the statistics do not match the channels");
  double eps = dval(val(a, n, 5));
  float *sums = (float *)scratch(c * 8u + 8u);
  double *means = new_values(c), *invstds = new_values(c);
  if (!sums || !means || !invstds) return fail("batch norm: larger than the board's work memory");
  float *squares = sums + c;
  for (uint32_t ch = 0; ch < c; ch++) sums[ch] = squares[ch] = 0.0f;
  for (uint32_t b = 0; b < nb; b++)
    for (uint32_t ch = 0; ch < c; ch++) {
      const double *plane = xv + ((uint64_t)b * c + ch) * inner;
      float s = 0.0f, q = 0.0f;
      for (uint32_t k = 0; k < inner; k++) {
        float v32 = (float)plane[k];
        s += v32;
        q += v32 * v32;
      }
      sums[ch] += s;
      squares[ch] += q;
    }
  float per = (float)((uint64_t)nb * inner);
  for (uint32_t ch = 0; ch < c; ch++) {
    float m = sums[ch] / per;
    means[ch] = (double)m;
    invstds[ch] = (double)(float)(1.0 / sqrt((double)(squares[ch] / per - m * m) + eps));
  }
  for (uint32_t i = 0; i < x.numel; i++) {
    uint32_t ch = (i / (inner ? inner : 1u)) % c;
    float w = f.w ? (float)f.w[ch] : 1.0f, b = f.b ? (float)f.b[ch] : 0.0f;
    xv[i] = (double)(((float)xv[i] - (float)means[ch]) * (float)invstds[ch] * w + b);
  }
  if (store(val(a, n, 6), xv, x.numel) || store(val(a, n, 7), means, c)) return -1;
  return store(val(a, n, 8), invstds, c);
}

/* quantized_decomposed::quantize_per_tensor.out(input, scale, zero_point, quant_min, quant_max,
 * dtype, out): zero_point + nearbyint(x * (1/scale)) in float, clamped, as the host's
 * `quantize_value`; dequantize_per_tensor / _per_channel: (q - zero_point) * scale in double */
int qd_op(uint32_t op, const uint32_t *a, uint32_t n) {
  tview x;
  double *v = load(val(a, n, 0), &x);
  if (!v) return -1;
  if (op == OP_QD_QUANTIZE) {
    if (!is_float(&x)) return fail("quantize_per_tensor: a float input");
    float inv = 1.0f / (float)dval(val(a, n, 1));
    int64_t zp = (int32_t)ival(val(a, n, 2)), lo = (int32_t)ival(val(a, n, 3)), hi = (int32_t)ival(val(a, n, 4));
    if (lo > hi) return fail("quantize_per_tensor: quant_min above quant_max");
    for (uint32_t i = 0; i < x.numel; i++) {
      float q = rintf(inv * (float)v[i]);
      int64_t qi = q != q ? 0 : q >= 2147483647.0f ? 2147483647 : q <= -2147483648.0f ? -2147483647 - 1 : (int64_t)q;
      int64_t r = zp + qi;
      r = r > 2147483647 ? 2147483647 : r < -2147483647 - 1 ? -2147483647 - 1 : r;
      v[i] = (double)(r < lo ? lo : r > hi ? hi : r);
    }
    return store(out_of(a, n), v, x.numel);
  }
  if (x.dt != ST_CHAR && x.dt != ST_BYTE && x.dt != ST_SHORT && x.dt != ST_INT) return fail("dequantize: an integer input");
  if (op == OP_QD_DEQUANTIZE) {
    double scale = dval(val(a, n, 1)), zp = (double)(int32_t)ival(val(a, n, 2));
    for (uint32_t i = 0; i < x.numel; i++) v[i] = (double)(float)((v[i] - zp) * scale);
    return store(out_of(a, n), v, x.numel);
  }
  tview ts, tz;
  double *sv = load(val(a, n, 1), &ts);
  if (!sv) return -1;
  const value_rec *zr = val(a, n, 2);
  double *zv = zr && zr->kind == V_TENSOR ? load(zr, &tz) : 0;
  if (zr && zr->kind == V_TENSOR && !zv) return -1;
  uint32_t axis = 0;
  if (dim_of(ival(val(a, n, 3)), x.rank, &axis)) return -1;
  uint32_t channels = (uint32_t)x.size[axis], inner = product(x.size, axis + 1, x.rank);
  if (ts.numel != channels || (zv && tz.numel != channels)) return fail("dequantize_per_channel: scales do not match the channels");
  for (uint32_t i = 0; i < x.numel; i++) {
    uint32_t c = (i / (inner ? inner : 1u)) % channels;
    double zp = zv ? (double)(int32_t)(int64_t)zv[c] : 0.0;
    v[i] = (double)(float)((v[i] - zp) * sv[c]);
  }
  return store(out_of(a, n), v, x.numel);
}
