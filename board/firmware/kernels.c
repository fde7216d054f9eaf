/* Int8 kernels in CMSIS-NN's arithmetic (see kernels.h). Wrapping 32-bit accumulation, as in
 * the device's registers: sums go through uint32_t so overflow is defined. */
#include "kernels.h"

static int32_t wadd(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
static int32_t wmul(int32_t a, int32_t b) { return (int32_t)((uint32_t)a * (uint32_t)b); }
static int32_t clamp(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : v > hi ? hi : v; }

static int32_t doubling_high_mult_no_sat(int32_t a, int32_t b) {
  return (int32_t)(((int64_t)a * (int64_t)b + ((int64_t)1 << 30)) >> 31);
}

static int32_t doubling_high_mult(int32_t a, int32_t b) {
  if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
  int64_t mult = (int64_t)1 << 30;
  if ((a < 0) ^ (b < 0)) mult = 1 - mult;
  mult += (int64_t)a * (int64_t)b;
  return (int32_t)(mult / ((int64_t)1 << 31));
}

static int32_t divide_by_power_of_two(int32_t dividend, int32_t exponent) {
  if (exponent <= 0) return dividend;
  if (exponent > 31) exponent = 31;
  int32_t mask = (int32_t)(((int64_t)1 << exponent) - 1);
  int32_t remainder = dividend & mask;
  int32_t result = dividend >> exponent;
  int32_t threshold = mask >> 1;
  if (result < 0) threshold += 1;
  if (remainder > threshold) result += 1;
  return result;
}

int32_t k_requantize(int32_t val, int32_t multiplier, int32_t shift) {
  int32_t left = shift > 0 ? shift : 0;
  int32_t right = shift < 0 ? (shift == INT32_MIN ? INT32_MAX : -shift) : 0;
  uint32_t scale = left >= 32 ? 0u : (1u << left);
  return divide_by_power_of_two(doubling_high_mult_no_sat(wmul(val, (int32_t)scale), multiplier),
                                right);
}

static int32_t mac(int32_t acc, int8_t x, int32_t x_off, int8_t w, int32_t w_off) {
  return wadd(acc, wmul(wadd(x, x_off), wadd(w, w_off)));
}

static int8_t requant_apply(const k_requant *rq, int32_t acc, int32_t ch) {
  int32_t k = rq->per_tensor ? 0 : ch;
  int32_t v = wadd(k_requantize(acc, rq->multipliers[k], rq->shifts[k]), rq->output_offset);
  return (int8_t)clamp(v, rq->act_min, rq->act_max);
}

void k_conv_s8(const int8_t *x, const int32_t in[4], const int8_t *w, const int32_t wd[4],
               const int32_t *bias, int32_t depth_multiplier, const k_window *win,
               int32_t input_offset, const k_requant *rq, int8_t *out, const int32_t od[4]) {
  const int32_t n = in[0], h = in[1], wdt = in[2], c = in[3];
  const int32_t kh = wd[1], kw = wd[2], wi = wd[3];
  const int32_t oh = od[1], ow = od[2], oc = od[3];
  int32_t groups = depth_multiplier > 0 ? c : c / (wi > 0 ? wi : 1);
  int32_t ocg = oc / (groups > 0 ? groups : 1);
  if (ocg < 1) ocg = 1;
  for (int32_t b = 0; b < n; b++)
    for (int32_t y = 0; y < oh; y++)
      for (int32_t xo = 0; xo < ow; xo++)
        for (int32_t ch = 0; ch < oc; ch++) {
          int32_t acc = bias ? bias[ch] : 0;
          for (int32_t ky = 0; ky < kh; ky++) {
            int32_t iy = y * win->stride_h + ky * win->dil_h - win->pad_h;
            if (iy < 0 || iy >= h) continue;
            for (int32_t kx = 0; kx < kw; kx++) {
              int32_t ix = xo * win->stride_w + kx * win->dil_w - win->pad_w;
              if (ix < 0 || ix >= wdt) continue;
              const int8_t *px = x + ((b * h + iy) * wdt + ix) * c;
              if (depth_multiplier > 0) {
                acc = mac(acc, px[ch / depth_multiplier], input_offset, w[(ky * kw + kx) * oc + ch],
                          0);
              } else {
                int32_t g = ch / ocg;
                const int8_t *wp = w + ((ch * kh + ky) * kw + kx) * wi;
                const int8_t *xp = px + g * wi;
                int32_t s = 0;
                for (int32_t i = 0; i < wi; i++) s = mac(s, xp[i], input_offset, wp[i], 0);
                acc = wadd(acc, s);
              }
            }
          }
          out[((b * oh + y) * ow + xo) * oc + ch] = requant_apply(rq, acc, ch);
        }
}

void k_linear_s8(const int8_t *x, int32_t rows, int32_t ins, const int8_t *w, int32_t outs,
                 const int32_t *bias, const int32_t *kernel_sum, int32_t input_offset,
                 int32_t filter_offset, const int64_t *mults, const int64_t *shifts,
                 int32_t nmult, int32_t output_offset, int32_t act_min, int32_t act_max,
                 int8_t *out) {
  for (int32_t r = 0; r < rows; r++) {
    const int8_t *xr = x + r * ins;
    int32_t xsum = 0;
    for (int32_t i = 0; i < ins; i++) xsum = wadd(xsum, xr[i]);
    for (int32_t o = 0; o < outs; o++) {
      const int8_t *wr = w + o * ins;
      int32_t acc;
      if (kernel_sum) {
        int32_t dot = 0;
        for (int32_t i = 0; i < ins; i++) dot = wadd(dot, (int32_t)xr[i] * (int32_t)wr[i]);
        acc = wadd(wadd(dot, wmul(filter_offset, xsum)), kernel_sum[o]);
      } else {
        int32_t dot = 0;
        for (int32_t i = 0; i < ins; i++) dot = mac(dot, xr[i], input_offset, wr[i], filter_offset);
        acc = wadd(dot, bias ? bias[o] : 0);
      }
      int32_t k = nmult == 1 ? 0 : o;
      int32_t v = wadd(k_requantize(acc, (int32_t)mults[k], (int32_t)shifts[k]), output_offset);
      out[r * outs + o] = (int8_t)clamp(v, act_min, act_max);
    }
  }
}

static int32_t average_round_away(int32_t sum, int32_t count) {
  if (count <= 0) return 0;
  return sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
}

void k_pool_s8(const int8_t *x, const int32_t in[4], int32_t kh, int32_t kw, const k_window *win,
               int max, int32_t lo, int32_t hi, int8_t *out, const int32_t od[4]) {
  const int32_t n = in[0], h = in[1], wdt = in[2], c = in[3];
  const int32_t oh = od[1], ow = od[2];
  for (int32_t b = 0; b < n; b++)
    for (int32_t y = 0; y < oh; y++)
      for (int32_t xo = 0; xo < ow; xo++) {
        int32_t y0 = y * win->stride_h - win->pad_h, x0 = xo * win->stride_w - win->pad_w;
        int32_t ya = y0 < 0 ? 0 : y0, yb = y0 + kh < h ? y0 + kh : h;
        int32_t xa = x0 < 0 ? 0 : x0, xb = x0 + kw < wdt ? x0 + kw : wdt;
        for (int32_t ch = 0; ch < c; ch++) {
          int32_t sum = 0, best = -128, count = 0;
          for (int32_t iy = ya; iy < yb; iy++)
            for (int32_t ix = xa; ix < xb; ix++) {
              int32_t v = x[((b * h + iy) * wdt + ix) * c + ch];
              if (count == 0 || v > best) best = v;
              sum += v;
              count++;
            }
          int32_t r = max ? (count ? best : -128) : average_round_away(sum, count);
          out[((b * oh + y) * ow + xo) * c + ch] = (int8_t)clamp(r, lo, hi);
        }
      }
}

static int32_t exp_on_negative_values(int32_t val) {
  const int32_t shift = 24;
  int32_t val_mod_minus_quarter = (val & ((1 << shift) - 1)) - (1 << shift);
  int32_t remainder = (int32_t)((uint32_t)val_mod_minus_quarter - (uint32_t)val);
  int32_t x = (int32_t)((uint32_t)val_mod_minus_quarter << 5) + (1 << 28);
  int32_t x2 = doubling_high_mult(x, x);
  int32_t inner =
      doubling_high_mult(divide_by_power_of_two(doubling_high_mult(x2, x2), 2) +
                             doubling_high_mult(x2, x),
                         715827883) +
      x2;
  int32_t result = 1895147668 + doubling_high_mult(1895147668, x + divide_by_power_of_two(inner, 1));
  static const int32_t constants[7] = {1672461947, 1302514674, 790015084, 290630308,
                                       39332535,   720401,     242};
  for (int32_t k = 0; k < 7; k++) {
    int32_t bit = remainder & (int32_t)(1u << (shift + k));
    if (bit) result = doubling_high_mult(result, constants[k]);
  }
  return val == 0 ? INT32_MAX : result;
}

static int32_t saturating_mul_pow2(int32_t x, int32_t exp) {
  int64_t wide = (int64_t)x * ((int64_t)1 << exp);
  return wide > INT32_MAX ? INT32_MAX : wide < INT32_MIN ? INT32_MIN : (int32_t)wide;
}

static int32_t one_over_one_plus_x(int32_t val) {
  int64_t sum = (int64_t)val + INT32_MAX;
  int32_t half_denominator = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
  int32_t x = wadd(1515870810, doubling_high_mult(half_denominator, -1010580540));
  const int32_t one = 1 << 29;
  for (int i = 0; i < 3; i++) {
    int32_t hdx = doubling_high_mult(half_denominator, x);
    int32_t one_minus = one - hdx;
    x = wadd(x, saturating_mul_pow2(doubling_high_mult(x, one_minus), 2));
  }
  return saturating_mul_pow2(x, 1);
}

void k_softmax_row_s8(const int8_t *x, int32_t n, int32_t multiplier, int32_t left_shift,
                      int32_t diff_min, int8_t *out) {
  const int32_t accum_bits = 12;
  if (n <= 0) return;
  int32_t max = x[0];
  for (int32_t i = 1; i < n; i++)
    if (x[i] > max) max = x[i];
  uint32_t mask = 1u << ((uint32_t)(left_shift > 0 ? left_shift : 0) & 31u);
  int32_t sum = 0;
  for (int32_t i = 0; i < n; i++) {
    int32_t diff = x[i] - max;
    if (diff >= diff_min) {
      int32_t scaled = doubling_high_mult(wmul(diff, (int32_t)mask), multiplier);
      sum = wadd(sum, divide_by_power_of_two(exp_on_negative_values(scaled), accum_bits));
    }
  }
  int32_t headroom = sum == 0 ? 32 : __builtin_clz((uint32_t)sum);
  int32_t shifted = sum > 0 ? (int32_t)(((uint32_t)sum << (headroom & 31)) - 0x80000000u)
                            : (int32_t)(0u - 0x80000000u);
  int32_t shifted_scale = one_over_one_plus_x(shifted);
  int32_t bits_over_unit = accum_bits - headroom + 23;
  for (int32_t i = 0; i < n; i++) {
    int32_t diff = x[i] - max;
    if (diff >= diff_min) {
      int32_t scaled = doubling_high_mult(wmul(diff, (int32_t)mask), multiplier);
      int32_t res = divide_by_power_of_two(
                        doubling_high_mult(shifted_scale, exp_on_negative_values(scaled)),
                        bits_over_unit) -
                    128;
      out[i] = (int8_t)clamp(res, -128, 127);
    } else {
      out[i] = -128;
    }
  }
}

/* The Helium quantize loop: x*inv + 1.5*2^23 as one fused multiply-add, the float's bits minus
 * the constant's plus the zero point, narrowed to int16 without saturation, then clamped. */
int8_t k_quantize_mve(float x, float inv, int32_t zp, int32_t qmin, int32_t qmax) {
  const float magic = 12582912.0f;
  union { float f; int32_t i; } r, m;
  r.f = __builtin_fmaf(x, inv, magic);
  m.f = magic;
  int32_t q = (int32_t)((uint32_t)r.i - ((uint32_t)m.i - (uint32_t)zp));
  int16_t q16 = (int16_t)q;
  return (int8_t)clamp(q16, qmin, qmax);
}

/* The Helium int16 quantize loop: the same rounding, clamped in 32 bits. */
int16_t k_quantize_mve_s16(float x, float inv, int32_t zp, int32_t qmin, int32_t qmax) {
  const float magic = 12582912.0f;
  union { float f; int32_t i; } r, m;
  r.f = __builtin_fmaf(x, inv, magic);
  m.f = magic;
  int32_t q = (int32_t)((uint32_t)r.i - ((uint32_t)m.i - (uint32_t)zp));
  return (int16_t)clamp(q, qmin, qmax);
}

int32_t k_quantize_scalar(float x, float inv, int32_t zp, int32_t qmin, int32_t qmax) {
  float q = __builtin_rintf(inv * x);
  int32_t qi;
  if (q != q) qi = 0;
  else if (q >= 2147483648.0f) qi = INT32_MAX;
  else if (q < -2147483648.0f) qi = INT32_MIN;
  else qi = (int32_t)q;
  int64_t s = (int64_t)zp + qi;
  int32_t sat = s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : (int32_t)s;
  return clamp(sat, qmin, qmax);
}

void k_batch_matmul_s8(const int8_t *l, const int8_t *r, int32_t batches, int32_t m, int32_t k,
                       int32_t n, int32_t l_off, int32_t r_off, int32_t o_off, int32_t mult,
                       int32_t shift, int8_t *out) {
  for (int32_t b = 0; b < batches; b++)
    for (int32_t i = 0; i < m; i++)
      for (int32_t j = 0; j < n; j++) {
        const int8_t *row = l + (b * m + i) * k, *col = r + (b * n + j) * k;
        int32_t acc = 0;
        for (int32_t p = 0; p < k; p++) acc = mac(acc, row[p], l_off, col[p], r_off);
        out[(b * m + i) * n + j] = (int8_t)clamp(wadd(k_requantize(acc, mult, shift), o_off), -128, 127);
      }
}

static int32_t tap(const int8_t *x, const int8_t *w, int32_t ic, int32_t x_off) {
  int32_t s = 0;
  for (int32_t i = 0; i < ic; i++) s = mac(s, x[i], x_off, w[i], 0);
  return s;
}

/* The exact transpose convolution (arm_transpose_conv_wrapper_s8's reverse-convolution path):
 * every input pixel scattered through the kernel into a zeroed int32 accumulator. */
static void transpose_conv_exact(const k_tconv *t, int32_t *acc, int8_t *out) {
  const int32_t n = t->in[0], ih = t->in[1], iw = t->in[2], ic = t->in[3];
  const int32_t kh = t->wd[1], kw = t->wd[2], oh = t->od[1], ow = t->od[2], oc = t->od[3];
  for (int32_t i = 0; i < n * oh * ow * oc; i++) acc[i] = 0;
  for (int32_t b = 0; b < n; b++)
    for (int32_t y = 0; y < ih; y++)
      for (int32_t xi = 0; xi < iw; xi++) {
        const int8_t *xin = t->x + ((b * ih + y) * iw + xi) * ic;
        for (int32_t ky = 0; ky < kh; ky++) {
          int32_t oy = y * t->sh + ky - t->ph;
          if (oy < 0 || oy >= oh) continue;
          for (int32_t kx = 0; kx < kw; kx++) {
            int32_t ox = xi * t->sw + kx - t->pw;
            if (ox < 0 || ox >= ow) continue;
            int32_t at = ((b * oh + oy) * ow + ox) * oc;
            for (int32_t o = 0; o < oc; o++)
              acc[at + o] = wadd(acc[at + o], tap(xin, t->w + ((o * kh + ky) * kw + kx) * ic, ic, t->input_offset));
          }
        }
      }
  for (int32_t i = 0; i < n * oh * ow * oc; i++) {
    int32_t ch = i % oc;
    out[i] = requant_apply(t->rq, wadd(acc[i], t->bias ? t->bias[ch] : 0), ch);
  }
}

/* arm_transpose_conv_s8 as CMSIS-NN dbf45dbf runs it: input rows scattered into a rolling int32
 * buffer of max(KH, SH) rows, rows written out as they complete. When the padding is not a
 * multiple of the stride the first input rows land in the wrong buffer rows and the last output
 * row is never written (those bytes keep what the arena held), as on the device. */
static void transpose_conv_rolling(const k_tconv *t, int32_t *buf, int8_t *out, int32_t out_len) {
  const int32_t n = t->in[0], ih = t->in[1], iw = t->in[2], ic = t->in[3];
  const int32_t kh = t->wd[1], kw = t->wd[2], oh = t->od[1], ow = t->od[2], oc = t->od[3];
  const int32_t sh = t->sh, sw = t->sw, ph = t->ph, pw = t->pw;
  const int32_t buf_x_elements = (iw > 0 ? iw - 1 : 0) * sw + (kw > sw ? kw : sw);
  const int32_t buf_x = buf_x_elements * oc;
  const int32_t buf_size = (kh > sh ? kh : sh) * buf_x;
  int32_t out_pos = 0;
  for (int32_t b = 0; b < n; b++) {
    for (int32_t i = 0; i < buf_size; i++) buf[i] = t->bias ? t->bias[i % oc] : 0;
    int32_t buf_row = 0;
    for (int32_t j = 0; j < ih; j++) {
      int32_t skip_top = ph - j * sh;
      if (skip_top < 0) skip_top = 0;
      int32_t skip_bottom = j * sh + kh - (ph + oh) - 1;
      if (skip_bottom < 0) skip_bottom = 0;
      int32_t rows = kh - skip_top - skip_bottom;
      const int8_t *lhs = t->x + ((b * ih + j) * iw) * ic;
      for (int32_t xi = 0; xi < iw; xi++) {
        const int8_t *xin = lhs + xi * ic;
        for (int32_t o = 0; o < oc; o++) {
          int32_t index = buf_row;
          for (int32_t i_row = 0; i_row < rows; i_row++) {
            int32_t ky = skip_top + i_row;
            for (int32_t kx = 0; kx < kw; kx++) {
              int32_t at = index + (xi * sw + kx) * oc + o;
              if (at >= 0 && at < buf_size)
                buf[at] = wadd(buf[at], tap(xin, t->w + ((o * kh + ky) * kw + kx) * ic, ic, t->input_offset));
            }
            index = buf_size > 0 ? (index + buf_x) % buf_size : 0;
          }
        }
      }
      if (skip_top == 0) {
        for (int32_t s = 0; s < sh; s++) {
          int32_t start = buf_row + oc * pw;
          for (int32_t k = 0; k < ow * oc; k++) {
            int32_t acc = start + k < buf_size ? buf[start + k] : 0;
            if (out_pos < out_len) out[out_pos] = requant_apply(t->rq, acc, k % oc);
            out_pos++;
          }
          for (int32_t i = 0; i < buf_x && buf_row + i < buf_size; i++)
            buf[buf_row + i] = t->bias ? t->bias[i % oc] : 0;
          buf_row = buf_size > 0 ? (buf_row + buf_x) % buf_size : 0;
        }
      }
    }
    for (int32_t y = 0; y < kh - sh; y++) {
      int32_t row = ih * sh + y;
      if (row >= ph && row < ph + oh) {
        int32_t start = buf_row + oc * pw;
        for (int32_t k = 0; k < ow * oc; k++) {
          int32_t acc = start + k < buf_size ? buf[start + k] : 0;
          if (out_pos < out_len) out[out_pos] = requant_apply(t->rq, acc, k % oc);
          out_pos++;
        }
      }
      buf_row = buf_size > 0 ? (buf_row + buf_x) % buf_size : 0;
    }
  }
}

int k_transpose_conv_s8(const k_tconv *t, int32_t *work, int32_t work_len, int8_t *out) {
  const int32_t n = t->in[0], ih = t->in[1], iw = t->in[2], ic = t->in[3];
  const int32_t kh = t->wd[1], kw = t->wd[2], oh = t->od[1], ow = t->od[2], oc = t->od[3];
  (void)ih;
  int reverse = t->sh <= 2 && t->sw <= 2 && ic > 16;
  if (reverse) {
    if (n * oh * ow * oc > work_len) return -1;
    transpose_conv_exact(t, work, out);
    return 0;
  }
  int32_t buf_x = ((iw > 0 ? iw - 1 : 0) * t->sw + (kw > t->sw ? kw : t->sw)) * oc;
  if ((kh > t->sh ? kh : t->sh) * buf_x > work_len) return -1;
  transpose_conv_rolling(t, work, out, n * oh * ow * oc);
  return 0;
}
