/* Pooling and resampling: average, max and adaptive pooling, nearest, bilinear and anti-aliased
 * upsampling, and the grid sampler. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "portable.h"

uint32_t window(const value_rec *v, uint32_t i, uint32_t dflt) {
  uint32_t nl;
  const int64_t *l = list(v, &nl);
  if (nl == 0) return dflt;
  int64_t x = nl > i ? l[i] : l[0];
  return x < 0 ? 0u : (uint32_t)x;
}

/* avg_pool2d.out(self, kernel, stride, padding, ceil_mode, count_include_pad, divisor?, out),
 * float32 sums in window order. */
int avg_pool_op(const uint32_t *a, uint32_t n) {
  tview x, o;
  double *v = load(val(a, n, 0), &x);
  if (!v || view_of(out_of(a, n), &o)) return -1;
  if (x.rank != 4 || o.rank != 4 || !is_float(&x)) return fail("avg_pool2d: 4-D float tensors");
  uint32_t kh = window(val(a, n, 1), 0, 1), kw = window(val(a, n, 1), 1, 1);
  uint32_t nst;
  list(val(a, n, 2), &nst);
  uint32_t sh = nst ? window(val(a, n, 2), 0, kh) : kh, sw = nst ? window(val(a, n, 2), 1, kw) : kw;
  if (sh == 0) sh = 1;
  if (sw == 0) sw = 1;
  int32_t ph = (int32_t)window(val(a, n, 3), 0, 0), pw = (int32_t)window(val(a, n, 3), 1, 0);
  int include_pad = ival(val(a, n, 5)) != 0;
  const value_rec *dv = val(a, n, 6);
  int has_div = dv && dv->kind == V_INT;
  float divisor = has_div ? (float)dv->u.i : 0.0f;
  int32_t h = x.size[2], w = x.size[3], oh = o.size[2], ow = o.size[3];
  double *r = new_values(o.numel);
  if (!r) return -1;
  uint32_t planes = (uint32_t)(x.size[0] * x.size[1]), k = 0;
  for (uint32_t p = 0; p < planes; p++)
    for (int32_t y = 0; y < oh; y++)
      for (int32_t xo = 0; xo < ow; xo++) {
        int32_t y0 = y * (int32_t)sh - ph, x0 = xo * (int32_t)sw - pw;
        int32_t y1 = y0 + (int32_t)kh < h + ph ? y0 + (int32_t)kh : h + ph;
        int32_t x1 = x0 + (int32_t)kw < w + pw ? x0 + (int32_t)kw : w + pw;
        float pool = (float)((y1 - y0) * (x1 - x0));
        int32_t ys = y0 > 0 ? y0 : 0, xs = x0 > 0 ? x0 : 0, ye = y1 < h ? y1 : h, xe = x1 < w ? x1 : w;
        float sum = 0.0f;
        for (int32_t iy = ys; iy < ye; iy++)
          for (int32_t ix = xs; ix < xe; ix++) sum += (float)v[((int64_t)p * h + iy) * w + ix];
        float count = has_div ? divisor : include_pad ? pool : (float)((ye - ys) * (xe - xs));
        r[k++] = (double)(sum / count);
      }
  return store(out_of(a, n), r, k);
}

/* max_pool2d_with_indices.out(self, kernel, stride, padding, dilation, ceil_mode, out, indices) */
int max_pool_op(const uint32_t *a, uint32_t n) {
  tview x, o, oi;
  double *v = load(val(a, n, 0), &x);
  if (!v || view_of(val(a, n, 6), &o) || view_of(val(a, n, 7), &oi)) return -1;
  if ((x.rank != 3 && x.rank != 4) || o.rank != x.rank) return fail("max_pool2d: 3-D or 4-D tensors");
  uint32_t kh = window(val(a, n, 1), 0, 1), kw = window(val(a, n, 1), 1, 1);
  uint32_t sh = window(val(a, n, 2), 0, kh), sw = window(val(a, n, 2), 1, kw);
  if (sh == 0) sh = 1;
  if (sw == 0) sw = 1;
  int32_t ph = (int32_t)window(val(a, n, 3), 0, 0), pw = (int32_t)window(val(a, n, 3), 1, 0);
  uint32_t dh = window(val(a, n, 4), 0, 1), dw = window(val(a, n, 4), 1, 1);
  if (dh == 0) dh = 1;
  if (dw == 0) dw = 1;
  uint32_t r_ = x.rank;
  int32_t h = x.size[r_ - 2], w = x.size[r_ - 1], oh = o.size[r_ - 2], ow = o.size[r_ - 1];
  uint32_t planes = product(x.size, 0, r_ - 2);
  if (product(o.size, 0, r_ - 2) != planes) return fail("max_pool2d: the planes change");
  double *vals = new_values(o.numel), *idx = new_values(o.numel);
  if (!vals || !idx) return -1;
  uint32_t k = 0;
  for (uint32_t p = 0; p < planes; p++)
    for (int32_t y = 0; y < oh; y++)
      for (int32_t xo = 0; xo < ow; xo++) {
        int found = 0;
        double best = -INFINITY;
        int64_t at_best = 0;
        for (uint32_t ky = 0; ky < kh; ky++) {
          int32_t iy = y * (int32_t)sh + (int32_t)(ky * dh) - ph;
          if (iy < 0 || iy >= h) continue;
          for (uint32_t kx = 0; kx < kw; kx++) {
            int32_t ix = xo * (int32_t)sw + (int32_t)(kx * dw) - pw;
            if (ix < 0 || ix >= w) continue;
            int64_t at = (int64_t)iy * w + ix;
            double e = v[(int64_t)p * h * w + at];
            if (!found || e > best || e != e) {
              best = e;
              at_best = at;
              found = 1;
            }
          }
        }
        vals[k] = best;
        idx[k++] = (double)at_best;
      }
  if (store(val(a, n, 6), vals, k)) return -1;
  return store(val(a, n, 7), idx, k);
}

static int double_pair(const value_rec *v, double *p0, double *p1) {
  if (!v || v->kind != V_DOUBLE_LIST || v->off != 2) return 0;
  const double *d = (const double *)(image + v->u.t.sizes_off);
  *p0 = d[0];
  *p1 = d[1];
  return 1;
}

/* upsample_nearest2d.vec_out(self, output_size?, scale_factors?, out): source row
 * floor(y * scale) in float32, scale = 1 / factor or in / out */
int nearest_op(const uint32_t *a, uint32_t n) {
  tview x, o;
  double *v = load(val(a, n, 0), &x);
  if (!v || view_of(out_of(a, n), &o)) return -1;
  if (x.rank != 4 || o.rank != 4 || x.size[0] != o.size[0] || x.size[1] != o.size[1] || o.size[2] == 0 || o.size[3] == 0)
    return fail("upsample_nearest2d: 4-D tensors of the same planes");
  int32_t h = x.size[2], w = x.size[3], oh = o.size[2], ow = o.size[3];
  double f0, f1, dsh = (double)h / (double)oh, dsw = (double)w / (double)ow;
  if (double_pair(val(a, n, 2), &f0, &f1)) {
    dsh = 1.0 / f0;
    dsw = 1.0 / f1;
  }
  float sh = (float)dsh, sw = (float)dsw;
  double *r = new_values(o.numel);
  if (!r) return -1;
  uint32_t planes = (uint32_t)(x.size[0] * x.size[1]), k = 0;
  for (uint32_t p = 0; p < planes; p++)
    for (int32_t y = 0; y < oh; y++) {
      float fy = floorf((float)y * sh);
      int64_t sy = fy < 0.0f ? 0 : (int64_t)fy;
      if (sy > h - 1) sy = h - 1;
      for (int32_t xo = 0; xo < ow; xo++) {
        float fx = floorf((float)xo * sw);
        int64_t sx = fx < 0.0f ? 0 : (int64_t)fx;
        if (sx > w - 1) sx = w - 1;
        r[k++] = v[((int64_t)p * h + sy) * w + sx];
      }
    }
  return store(out_of(a, n), r, k);
}

/* upsample_bilinear2d.vec_out(self, output_size?, align_corners, scale_factors?, out), in float32
 * as the host computes it */
int bilinear_op(const uint32_t *a, uint32_t n) {
  tview x, o;
  double *v = load(val(a, n, 0), &x);
  if (!v || view_of(out_of(a, n), &o)) return -1;
  if (x.rank != 4 || o.rank != 4 || o.size[2] == 0 || o.size[3] == 0) return fail("upsample_bilinear2d: 4-D tensors");
  int align = ival(val(a, n, 2)) != 0;
  int32_t h = x.size[2], w = x.size[3], oh = o.size[2], ow = o.size[3];
  double f0 = 0.0, f1 = 0.0;
  int has_f = double_pair(val(a, n, 3), &f0, &f1);
  float sc[2];
  int32_t ins[2] = {h, w}, outs[2] = {oh, ow};
  double fs[2] = {f0, f1};
  for (int d = 0; d < 2; d++) {
    if (align)
      sc[d] = outs[d] > 1 ? ((float)ins[d] - 1.0f) / ((float)outs[d] - 1.0f) : 0.0f;
    else if (has_f && fs[d] > 0.0)
      sc[d] = (float)(1.0 / fs[d]);
    else
      sc[d] = (float)ins[d] / (float)outs[d];
  }
  double *r = new_values(o.numel);
  if (!r) return -1;
  uint32_t planes = (uint32_t)(x.size[0] * x.size[1]), k = 0;
  for (uint32_t p = 0; p < planes; p++)
    for (int32_t y = 0; y < oh; y++) {
      float ry = align ? (float)y * sc[0] : fmaxf(((float)y + 0.5f) * sc[0] - 0.5f, 0.0f);
      int64_t y0 = (int64_t)ry;
      if (y0 > h - 1) y0 = h - 1;
      int64_t y1 = y0 + 1 > h - 1 ? h - 1 : y0 + 1;
      float ly = ry - (float)y0;
      for (int32_t xo = 0; xo < ow; xo++) {
        float rx = align ? (float)xo * sc[1] : fmaxf(((float)xo + 0.5f) * sc[1] - 0.5f, 0.0f);
        int64_t x0 = (int64_t)rx;
        if (x0 > w - 1) x0 = w - 1;
        int64_t x1 = x0 + 1 > w - 1 ? w - 1 : x0 + 1;
        float lx = rx - (float)x0;
        const double *pl = v + (int64_t)p * h * w;
        float a00 = (float)pl[y0 * w + x0], a01 = (float)pl[y0 * w + x1];
        float a10 = (float)pl[y1 * w + x0], a11 = (float)pl[y1 * w + x1];
        float e = (1.0f - ly) * ((1.0f - lx) * a00 + lx * a01) + ly * ((1.0f - lx) * a10 + lx * a11);
        r[k++] = (double)e;
      }
    }
  return store(out_of(a, n), r, k);
}

/* _adaptive_avg_pool2d.out(self, output_size, out): window [floor(i*H/oh), ceil((i+1)*H/oh)),
 * float32 sums */
int adaptive_pool_op(const uint32_t *a, uint32_t n) {
  tview x, o;
  double *v = load(val(a, n, 0), &x);
  if (!v || view_of(out_of(a, n), &o)) return -1;
  if (x.rank < 3 || o.rank != x.rank) return fail("adaptive pooling of 3-D or 4-D tensors");
  uint32_t r = x.rank, h = (uint32_t)x.size[r - 2], w = (uint32_t)x.size[r - 1];
  uint32_t oh = (uint32_t)o.size[r - 2], ow = (uint32_t)o.size[r - 1], planes = product(x.size, 0, r - 2), k = 0;
  if (oh == 0 || ow == 0) return fail("adaptive pooling to an empty size");
  double *out = new_values(o.numel);
  if (!out) return -1;
  for (uint32_t p = 0; p < planes; p++)
    for (uint32_t y = 0; y < oh; y++)
      for (uint32_t xo = 0; xo < ow; xo++) {
        uint32_t y0 = y * h / oh, y1 = ((y + 1) * h + oh - 1) / oh, x0 = xo * w / ow, x1 = ((xo + 1) * w + ow - 1) / ow;
        float sum = 0.0f;
        for (uint32_t iy = y0; iy < y1; iy++)
          for (uint32_t ix = x0; ix < x1; ix++) sum += (float)v[((uint64_t)p * h + iy) * w + ix];
        uint32_t cnt = (y1 - y0) * (x1 - x0);
        if (k >= o.numel) return fail("adaptive pooling: larger than the out tensor");
        out[k++] = (double)(sum / (float)(cnt ? cnt : 1u));
      }
  return store(out_of(a, n), out, k);
}

/* Rust's `as i64` from f32: toward zero, saturating, NaN to 0 */
static int64_t f32_to_i64(float f) {
  if (f != f) return 0;
  if (f >= 9.2233720e18f) return INT64_MAX;
  if (f <= -9.2233720e18f) return INT64_MIN;
  return (int64_t)f;
}

/* grid_sampler_2d's source coordinate of a normalised grid value, in float32 as the host's
 * `grid_source`: unnormalised, then clipped (border) or reflected and clipped */
static float grid_source(float coord, int32_t size, int64_t padding, int align) {
  float nn = (float)size;
  float c = align ? ((coord + 1.0f) / 2.0f) * (nn - 1.0f) : ((coord + 1.0f) * nn - 1.0f) / 2.0f;
  if (padding == 1) return fminf(fmaxf(c, 0.0f), nn - 1.0f);
  if (padding == 2) {
    int64_t lo = align ? 0 : -1, hi = align ? 2 * ((int64_t)size - 1) : 2 * (int64_t)size - 1;
    float r;
    if (lo == hi) {
      r = 0.0f;
    } else {
      float mn = (float)lo / 2.0f, span = (float)(hi - lo) / 2.0f;
      float a = fabsf(c - mn), extra = fmodf(a, span);
      int64_t flips = f32_to_i64(floorf(a / span));
      r = flips % 2 == 0 ? extra + mn : span - extra + mn;
    }
    return fminf(fmaxf(r, 0.0f), nn - 1.0f);
  }
  return c;
}

/* grid_sampler_2d.out(input[N, C, H, W], grid[N, Ho, Wo, 2], mode, padding, align_corners, out):
 * bilinear (0) or nearest (1), zeros (0), border (1) or reflection (2) outside */
int grid_sampler_op(const uint32_t *a, uint32_t n) {
  tview x, g;
  double *xv = load(val(a, n, 0), &x), *gv = xv ? load(val(a, n, 1), &g) : 0;
  if (!gv) return -1;
  int64_t mode = ival(val(a, n, 2)), padding = ival(val(a, n, 3));
  int align = ival(val(a, n, 4)) != 0;
  if (x.rank != 4 || g.rank != 4 || g.size[0] != x.size[0] || g.size[3] != 2 || padding < 0 || padding > 2 || (mode != 0 && mode != 1))
    return fail("grid_sampler_2d: shapes or modes it does not take");
  int32_t N = x.size[0], C = x.size[1], H = x.size[2], W = x.size[3], OH = g.size[1], OW = g.size[2];
  double *r = new_values((uint32_t)(N * C * OH * OW));
  if (!r) return -1;
  uint32_t k = 0;
#define AT(b, ch, yy, xx) ((float)xv[(((int64_t)(b) * C + (ch)) * H + (yy)) * W + (xx)])
#define INSIDE(yy, xx) ((yy) >= 0 && (yy) < H && (xx) >= 0 && (xx) < W)
#define CLIP(v, size) ((v) < 0 ? 0 : (v) > (size) - 1 ? (size) - 1 : (v))
  for (int32_t b = 0; b < N; b++)
    for (int32_t ch = 0; ch < C; ch++)
      for (int32_t yo = 0; yo < OH; yo++)
        for (int32_t xo = 0; xo < OW; xo++) {
          int64_t gi = (((int64_t)b * OH + yo) * OW + xo) * 2;
          float ix = grid_source((float)gv[gi], W, padding, align), iy = grid_source((float)gv[gi + 1], H, padding, align);
          float v;
          if (mode == 1) {
            int64_t xn = f32_to_i64(rintf(ix)), yn = f32_to_i64(rintf(iy));
            if (padding == 0)
              v = INSIDE(yn, xn) ? AT(b, ch, yn, xn) : 0.0f;
            else
              v = AT(b, ch, CLIP(yn, (int64_t)H), CLIP(xn, (int64_t)W));
          } else {
            int64_t x0 = f32_to_i64(floorf(ix)), y0 = f32_to_i64(floorf(iy)), x1 = x0 + 1, y1 = y0 + 1;
            int64_t ys[4] = {y0, y0, y1, y1}, xs[4] = {x0, x1, x0, x1};
            float wts[4] = {((float)x1 - ix) * ((float)y1 - iy), (ix - (float)x0) * ((float)y1 - iy),
                            ((float)x1 - ix) * (iy - (float)y0), (ix - (float)x0) * (iy - (float)y0)};
            float acc = 0.0f;
            for (int q = 0; q < 4; q++) {
              if (padding == 0) {
                if (INSIDE(ys[q], xs[q])) acc += AT(b, ch, ys[q], xs[q]) * wts[q];
              } else {
                acc = acc + AT(b, ch, CLIP(ys[q], (int64_t)H), CLIP(xs[q], (int64_t)W)) * wts[q];
              }
            }
            v = acc;
          }
          r[k++] = (double)v;
        }
#undef AT
#undef INSIDE
#undef CLIP
  return store(out_of(a, n), r, k);
}

/* One output index's window of _upsample_bilinear2d_aa: the first input index and `*count`
 * normalised triangle-filter weights (at most `size`), in float32 as the host's `aa_weights`. */
static uint32_t aa_weights(uint32_t out_index, float scale, uint32_t size, float *w, uint32_t *count) {
  float center = scale * ((float)out_index + 0.5f);
  float support = scale >= 1.0f ? scale : 1.0f, invscale = scale >= 1.0f ? 1.0f / scale : 1.0f;
  int64_t lo = f32_to_i64(center - support + 0.5f), hi = f32_to_i64(center + support + 0.5f);
  if (lo < 0) lo = 0;
  if (hi > (int64_t)size) hi = size;
  float total = 0.0f;
  for (int64_t x = lo; x < hi; x++) {
    float f = fabsf(((float)x - center + 0.5f) * invscale);
    total += f < 1.0f ? 1.0f - f : 0.0f;
  }
  if (hi <= lo || total <= 0.0f) {
    int64_t i = f32_to_i64(center);
    if (i > (int64_t)size - 1) i = (int64_t)size - 1;
    if (i < 0) i = 0;
    w[0] = 1.0f;
    *count = 1;
    return (uint32_t)i;
  }
  uint32_t c = 0;
  for (int64_t x = lo; x < hi; x++) {
    float f = fabsf(((float)x - center + 0.5f) * invscale);
    w[c++] = (f < 1.0f ? 1.0f - f : 0.0f) / total;
  }
  *count = c;
  return (uint32_t)lo;
}

/* _upsample_bilinear2d_aa.out(self, output_size, align_corners, scales_h?, scales_w?, out) */
int upsample_aa_op(const uint32_t *a, uint32_t n) {
  tview x;
  double *v = load(val(a, n, 0), &x);
  if (!v) return -1;
  uint32_t ns;
  const int64_t *size = list(val(a, n, 1), &ns);
  if (x.rank != 4 || ns != 2 || size[0] <= 0 || size[1] <= 0) return fail("upsample_bilinear2d_aa: a 4-D input and an output size");
  int align = ival(val(a, n, 2)) != 0;
  const value_rec *shr = val(a, n, 3), *swr = val(a, n, 4);
  int given = shr && shr->kind != V_NONE && swr && swr->kind != V_NONE;
  uint32_t H = (uint32_t)x.size[2], W = (uint32_t)x.size[3], OH = (uint32_t)size[0], OW = (uint32_t)size[1];
  uint32_t ins[2] = {H, W}, outs[2] = {OH, OW};
  double gs[2] = {given ? scalar(shr) : 0.0, given ? scalar(swr) : 0.0};
  float sc[2];
  for (int d = 0; d < 2; d++) {
    if (align)
      sc[d] = outs[d] > 1 ? (float)((double)(ins[d] - 1) / (double)(outs[d] - 1)) : 0.0f;
    else
      sc[d] = (float)(1.0 / (given ? gs[d] : (double)outs[d] / (double)ins[d]));
  }
  float *wy = (float *)scratch(4u * H + 4u), *wx = (float *)scratch(4u * W + 4u);
  uint32_t planes = (uint32_t)(x.size[0] * x.size[1]), k = 0;
  double *r = new_values(planes * OH * OW);
  if (!wy || !wx || !r) return fail("upsample_bilinear2d_aa: larger than the board's work memory");
  for (uint32_t p = 0; p < planes; p++) {
    const double *plane = v + (uint64_t)p * H * W;
    for (uint32_t yo = 0; yo < OH; yo++) {
      uint32_t ny, y0 = aa_weights(yo, sc[0], H, wy, &ny);
      for (uint32_t xo = 0; xo < OW; xo++) {
        uint32_t nx, x0 = aa_weights(xo, sc[1], W, wx, &nx);
        float acc = 0.0f;
        for (uint32_t dy = 0; dy < ny; dy++)
          for (uint32_t dx = 0; dx < nx; dx++)
            acc += (float)plane[(uint64_t)(y0 + dy) * W + x0 + dx] * wy[dy] * wx[dx];
        r[k++] = (double)acc;
      }
    }
  }
  return store(out_of(a, n), r, k);
}
