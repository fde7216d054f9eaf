/* Elementwise operators: arithmetic, comparisons, activations, the C library's math functions,
 * bitwise and logical operators, as the host computes each in float32 or double. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "portable.h"

static double apply(uint32_t op, double p, double q) {
  switch (op) {
    case OP_ADD: return p + q;
    case OP_SUB: return p - q;
    case OP_MUL: return p * q;
    case OP_DIV: return p / q;
    /* ExecuTorch's max_override/min_override: a NaN operand wins, else std::max/std::min */
    case OP_ATEN_MAXIMUM: return p != p ? p : (q != q || p < q) ? q : p;
    case OP_ATEN_MINIMUM: return p != p ? p : (q != q || q < p) ? q : p;
    case OP_EQ: return p == q;
    case OP_NE: return p != q;
    case OP_LT: return p < q;
    case OP_LE: return p <= q;
    case OP_GT: return p > q;
    default: return p >= q;
  }
}

/* add/sub (with alpha), mul, div, maximum, minimum and the comparisons, broadcasting: float32
 * operands give float32 results; anything else is computed in double and cast to the out type. */
int binary(uint32_t op, const uint32_t *a, uint32_t n) {
  operand x, y;
  tview o;
  if (operand_of(val(a, n, 0), &x) || operand_of(val(a, n, 1), &y) || view_of(out_of(a, n), &o))
    return -1;
  int compare = op == OP_EQ || op == OP_NE || op == OP_LT || op == OP_LE || op == OP_GT || op == OP_GE;
  double alpha = !compare && (op == OP_ADD || op == OP_SUB) && n >= 5 ? scalar(val(a, n, 2)) : 1.0;
  uint32_t *ix = broadcast_index(&x.t, &o), *iy = ix ? broadcast_index(&y.t, &o) : 0;
  double *r = iy ? new_values(o.numel) : 0;
  if (!r) return -1;
  int f32 = !compare && is_float(&o) && (is_float(&x.t) || is_float(&y.t));
  for (uint32_t i = 0; i < o.numel; i++) {
    double p = x.v[ix[i]], q = y.v[iy[i]];
    if (f32)
      r[i] = (double)(float)apply(op, (double)(float)p, (double)((float)alpha * (float)q)); /* val_alpha * val_b in float */
    else
      r[i] = apply(op, p, alpha * q);
  }
  return store(out_of(a, n), r, o.numel);
}

/* aten::where.self_out(condition, self, other, out) */
int where_op(const uint32_t *a, uint32_t n) {
  tview c, x, y, o;
  double *cv = load(val(a, n, 0), &c), *xv = cv ? load(val(a, n, 1), &x) : 0;
  double *yv = xv ? load(val(a, n, 2), &y) : 0;
  if (!yv || view_of(out_of(a, n), &o)) return -1;
  uint32_t *ci = broadcast_index(&c, &o), *xi = ci ? broadcast_index(&x, &o) : 0;
  uint32_t *yi = xi ? broadcast_index(&y, &o) : 0;
  double *r = yi ? new_values(o.numel) : 0;
  if (!r) return -1;
  for (uint32_t i = 0; i < o.numel; i++) r[i] = cv[ci[i]] != 0.0 ? xv[xi[i]] : yv[yi[i]];
  return store(out_of(a, n), r, o.numel);
}

/* The host's erf (core/src/kernels/math.rs): a series below 2.5, a continued fraction above. */
static int is_string(const value_rec *v, const char *s) {
  uint32_t len = (uint32_t)strlen(s);
  return v && v->kind == V_STRING && v->off == len && memcmp(image + v->u.t.sizes_off, s, len) == 0;
}

/* One-input elementwise operators. relu, sigmoid, tanh and gelu compute in float32 on float32
 * tensors (the host's `portable::unary`); exp, log, sqrt, rsqrt call the C library's
 * single-precision function on any tensor but a float64 one, as ExecuTorch's kernels do; the
 * rest in double, cast to the out type. */
int unary(uint32_t op, const uint32_t *a, uint32_t n) {
  tview x;
  double *v = load(val(a, n, 0), &x);
  if (!v) return -1;
  const value_rec *o = out_of(a, n);
  if (op == OP_RELU || op == OP_SIGMOID || op == OP_TANH || op == OP_GELU) {
    if (!is_float(&x)) return fail("relu/sigmoid/tanh/gelu: float tensors only");
    int tanh_gelu = op == OP_GELU && is_string(val(a, n, 1), "tanh");
    for (uint32_t i = 0; i < x.numel; i++) {
      float f = (float)v[i];
      switch (op) {
        case OP_RELU: v[i] = f != f ? 0.0f : fmaxf(f, 0.0f); break;
        case OP_SIGMOID: v[i] = 1.0f / (1.0f + expf(-f)); break;
        case OP_TANH: v[i] = tanhf(f); break;
        default: {
          /* ExecuTorch's gelu: the tanh form's inner sum in float and tanhf, the rest in double;
           * the exact form in double through the double-precision erf */
          double d = (double)f, y;
          if (f == -INFINITY) {
            y = 0.0;
          } else if (f == INFINITY) {
            y = INFINITY;
          } else if (tanh_gelu) {
            const float beta = (float)(1.41421356237309504880 * 1.12837916709551257390 * 0.5);
            float inner = beta * (f + 0.044715f * (f * f * f));
            y = 0.5 * d * (1.0 + (double)tanhf(inner));
          } else {
            y = 0.5 * d * (1.0 + erf(d * 0.70710678118654752440));
          }
          v[i] = (float)y;
        }
      }
    }
    return store(o, v, x.numel);
  }
  double slope = op == OP_LEAKY_RELU ? scalar(val(a, n, 1)) : 0.0;
  float slope32 = (float)slope;
  const value_rec *lo_v = val(a, n, 1), *hi_v = val(a, n, 2);
  int has_lo = op == OP_CLAMP && lo_v && lo_v->kind != V_NONE;
  int has_hi = op == OP_CLAMP && hi_v && hi_v->kind != V_NONE;
  double lo = has_lo ? scalar(lo_v) : 0.0, hi = has_hi ? scalar(hi_v) : 0.0;
  if (has_lo && has_hi && lo > hi) return fail("clamp: min above max");
  int single = !is_double(&x);
  for (uint32_t i = 0; i < x.numel; i++) {
    double d = v[i];
    float f = (float)d;
    switch (op) {
      case OP_NEG: d = -d; break;
      case OP_ABS: d = fabs(d); break;
      case OP_EXP: d = single ? (double)expf(f) : exp(d); break;
      case OP_LOG: d = single ? (double)logf(f) : log(d); break;
      case OP_SQRT: d = single ? (double)sqrtf(f) : sqrt(d); break;
      case OP_RSQRT: d = 1.0 / (single ? (double)sqrtf(f) : sqrt(d)); break;
      case OP_RECIPROCAL: d = 1.0 / d; break;
      case OP_LEAKY_RELU:
        /* ExecuTorch: the slope cast to the tensor's type, the product in it */
        d = is_float(&x) ? (double)(f >= 0.0f ? f : f * slope32) : d >= 0.0 ? d : d * slope;
        break;
      default:
        /* ExecuTorch's max_override/min_override: a NaN element stays NaN */
        if (has_lo && d == d && d < lo) d = lo;
        if (has_hi && d == d && hi < d) d = hi;
    }
    v[i] = d;
  }
  return store(o, v, x.numel);
}

/* Python's round: halves to even (the host's `round_half_even`) */
static double round_half_even(double x) {
  double r = round(x);
  return fabs(x - trunc(x)) == 0.5 ? 2.0 * round(x / 2.0) : r;
}

/* A <math.h> function of one element: the single-precision one (sinf, ...) on the value cast to
 * float unless the tensor is float64, as ExecuTorch's unary_ufunc_realhbbf16_to_floathbf16. The
 * parenthesised names call newlib's functions, not the macros its math.h defines for C. */
static double math1(uint32_t op, double x, int single) {
  float f = (float)x;
  switch (op) {
    case OP_EXPM1: return single ? (double)(expm1f)(f) : expm1(x);
    case OP_LOG2: return single ? (double)(log2f)(f) : (log2)(x);
    case OP_LOG10: return single ? (double)(log10f)(f) : log10(x);
    case OP_LOG1P: return single ? (double)(log1pf)(f) : log1p(x);
    case OP_SIN: return single ? (double)(sinf)(f) : sin(x);
    case OP_COS: return single ? (double)(cosf)(f) : cos(x);
    case OP_TAN: return single ? (double)(tanf)(f) : tan(x);
    case OP_ASIN: return single ? (double)(asinf)(f) : asin(x);
    case OP_ACOS: return single ? (double)(acosf)(f) : acos(x);
    case OP_ATAN: return single ? (double)(atanf)(f) : atan(x);
    case OP_SINH: return single ? (double)(sinhf)(f) : sinh(x);
    case OP_COSH: return single ? (double)(coshf)(f) : cosh(x);
    case OP_ASINH: return single ? (double)(asinhf)(f) : asinh(x);
    case OP_ACOSH: return single ? (double)(acoshf)(f) : acosh(x);
    case OP_ATANH: return single ? (double)(atanhf)(f) : atanh(x);
    case OP_ERF: return single ? (double)(erff)(f) : erf(x);
    case OP_FLOOR: return floor(x);
    case OP_CEIL: return ceil(x);
    case OP_ROUND: return round_half_even(x);
    case OP_TRUNC: return trunc(x);
    case OP_SIGN: return x != x ? x : (double)((x > 0.0) - (x < 0.0)); /* ExecuTorch: -0 gives +0 */
    case OP_BITWISE_NOT: return -x - 1.0;
    case OP_ISNAN: return x != x;
    case OP_ISINF: return isinf(x) ? 1.0 : 0.0;
    default: return x == 0.0; /* logical_not */
  }
}

int math_unary(uint32_t op, const uint32_t *a, uint32_t n) {
  tview x;
  double *v = load(val(a, n, 0), &x);
  if (!v) return -1;
  int single = !is_double(&x);
  for (uint32_t i = 0; i < x.numel; i++) v[i] = math1(op, v[i], single);
  return store(out_of(a, n), v, x.numel);
}

/* bitwise operators on integers held in doubles, and Python's remainder */
static double bits(double p, double q, uint32_t op) {
  int64_t x = (int64_t)toward_zero(p, -9223372036854775808.0, 9223372036854774784.0);
  int64_t y = (int64_t)toward_zero(q, -9223372036854775808.0, 9223372036854774784.0);
  return (double)(op == OP_BITWISE_AND ? (x & y) : op == OP_BITWISE_OR ? (x | y) : (x ^ y));
}

static double math2(uint32_t op, double p, double q) {
  switch (op) {
    case OP_ATAN2: return atan2(p, q);
    case OP_POW: return pow(p, q);
    case OP_FMOD: return fmod(p, q);
    case OP_LOGICAL_AND: return p != 0.0 && q != 0.0;
    case OP_LOGICAL_OR: return p != 0.0 || q != 0.0;
    case OP_LOGICAL_XOR: return (p != 0.0) != (q != 0.0);
    case OP_BITWISE_LEFT_SHIFT: case OP_BITWISE_RIGHT_SHIFT: {
      int64_t x = (int64_t)toward_zero(p, -9223372036854775808.0, 9223372036854774784.0);
      int64_t y = (int64_t)toward_zero(q, -9223372036854775808.0, 9223372036854774784.0);
      if (y < 0 || y >= 64) return op == OP_BITWISE_LEFT_SHIFT ? 0.0 : (x < 0 ? -1.0 : 0.0);
      return op == OP_BITWISE_LEFT_SHIFT ? (double)(int64_t)((uint64_t)x << y) : (double)(x >> y);
    }
    default: return bits(p, q, op);
  }
}

int math_binary(uint32_t op, const uint32_t *a, uint32_t n) {
  operand x, y;
  tview o;
  if (operand_of(val(a, n, 0), &x) || operand_of(val(a, n, 1), &y) || view_of(out_of(a, n), &o))
    return -1;
  uint32_t *ix = broadcast_index(&x.t, &o), *iy = ix ? broadcast_index(&y.t, &o) : 0;
  double *r = iy ? new_values(o.numel) : 0;
  if (!r) return -1;
  for (uint32_t i = 0; i < o.numel; i++) {
    double p = x.v[ix[i]], q = y.v[iy[i]];
    if (op == OP_REMAINDER) {
      /* ExecuTorch's remainder_override: C's truncated % on integers (a zero divisor fails),
       * fmod then the divisor added when the signs differ, in float32, on floats */
      if (!is_float(&o) && !is_double(&o)) {
        if (q == 0.0) return fail("remainder: integer division by zero");
        r[i] = fmod(p, q);
      } else {
        if (is_float(&o)) {
          p = (double)(float)p;
          q = (double)(float)q;
        }
        float rem = (float)fmod(p, q);
        if (((p < 0.0) != (q < 0.0)) && rem != 0.0f) rem = (float)((double)rem + q);
        r[i] = (double)rem;
      }
    } else if (is_float(&o) && (op == OP_ATAN2 || op == OP_POW)) {
      /* ExecuTorch's executorch::math::atan2/pow on a float compute type: atan2f, powf */
      float fp = (float)p, fq = (float)q;
      r[i] = (double)(op == OP_ATAN2 ? atan2f(fp, fq) : powf(fp, fq));
    } else {
      r[i] = is_float(&o) ? (double)(float)math2(op, (double)(float)p, (double)(float)q) : math2(op, p, q);
    }
  }
  return store(out_of(a, n), r, o.numel);
}

/* glu.out(self, dim, out): ExecuTorch's `a * (1 / (1 + exp(-b)))` in the input's floating type
 * (float for any but float64: expf) */
int glu_op(const uint32_t *a, uint32_t n) {
  tview x;
  double *v = load(val(a, n, 0), &x);
  uint32_t d = 0;
  if (!v || dim_of(ival(val(a, n, 1)), x.rank, &d)) return -1;
  uint32_t size = (uint32_t)x.size[d];
  if (size % 2) return fail("glu: a dim of odd size");
  uint32_t half = size / 2, outer = product(x.size, 0, d), inner = product(x.size, d + 1, x.rank), k = 0;
  double *r = new_values(x.numel / 2u);
  if (!r) return -1;
  for (uint32_t o = 0; o < outer; o++)
    for (uint32_t j = 0; j < half; j++)
      for (uint32_t i = 0; i < inner; i++) {
        double p = v[((uint64_t)o * size + j) * inner + i], q = v[((uint64_t)o * size + half + j) * inner + i];
        if (is_double(&x)) {
          r[k++] = p * (1.0 / (1.0 + exp(-q)));
        } else {
          float fp = (float)p, fq = (float)q;
          r[k++] = (double)(fp * (1.0f / (1.0f + expf(-fq))));
        }
      }
  return store(out_of(a, n), r, k);
}

/* The type floor_divide.out and div.out_mode compute in, as the host's `math::compute_type`:
 * double where a tensor is double (0-dim or not: promoteTypes), float32 where any operand is a
 * float (a float scalar lifts an integer tensor to float32), else integer. */
enum { CT_INTEGER, CT_F32, CT_F64 };
static int compute_type(const operand *x, const operand *y) {
  int y_tensor = !y->scalar;
  if (is_double(&x->t) || (y_tensor && is_double(&y->t))) return CT_F64;
  if (is_float(&x->t) || is_double(&x->t) || (y_tensor && (is_float(&y->t) || is_double(&y->t))) ||
      y->scalar == V_DOUBLE)
    return CT_F32;
  return CT_INTEGER;
}

/* utils::floor_divide of the portable kernels in float32 and in double: (a - fmod(a, b)) / b,
 * one less where the remainder's sign differs from the divisor's; +-infinity (the sign of a)
 * for a zero divisor */
static float floor_divide_f32(float a, float b) {
  if (b == 0.0f) return signbit(a) ? -INFINITY : INFINITY;
  float m = fmodf(a, b), div = (a - m) / b;
  return m != 0.0f && (signbit(b) != 0) != (signbit(m) != 0) ? div - 1.0f : div;
}
static double floor_divide_f64(double a, double b) {
  if (b == 0.0) return signbit(a) ? -INFINITY : INFINITY;
  double m = fmod(a, b), div = (a - m) / b;
  return m != 0.0 && (signbit(b) != 0) != (signbit(m) != 0) ? div - 1.0 : div;
}

/* a / b rounded (trunc or floor) in the compute type, as div.out_mode and floor_divide.out;
 * an integer zero divisor sets *by_zero */
static double rounded_quotient(double p, double q, int ct, int floor_mode, int *by_zero) {
  if (ct == CT_F64) return floor_mode ? floor_divide_f64(p, q) : trunc(p / q);
  if (ct == CT_F32) return floor_mode ? (double)floor_divide_f32((float)p, (float)q) : (double)truncf((float)p / (float)q);
  int64_t a = (int64_t)p, b = (int64_t)q;
  if (b == 0) {
    *by_zero = 1;
    return 0.0;
  }
  if (b == -1) return (double)(int64_t)(0u - (uint64_t)a); /* wraps as the host's wrapping_div */
  int64_t quotient = a / b;
  int floor = floor_mode && (a < 0) != (b < 0) && a % b != 0;
  return (double)(floor ? quotient - 1 : quotient);
}

/* rsub.Scalar_out(self, other, alpha, out): other - alpha * self (float32 operands for a float32
 * out, as the host's `math::binary`; alpha cast to float and the product rounded in float) */
int rsub_op(const uint32_t *a, uint32_t n) {
  operand x, y;
  tview o;
  if (operand_of(val(a, n, 0), &x) || operand_of(val(a, n, 1), &y) || view_of(out_of(a, n), &o))
    return -1;
  double alpha = scalar(val(a, n, 2));
  uint32_t *ix = broadcast_index(&x.t, &o), *iy = ix ? broadcast_index(&y.t, &o) : 0;
  double *r = iy ? new_values(o.numel) : 0;
  if (!r) return -1;
  for (uint32_t i = 0; i < o.numel; i++) {
    double p = x.v[ix[i]], q = y.v[iy[i]];
    if (is_float(&o)) {
      p = (double)(float)p;
      q = (double)(float)q;
    }
    double e = is_float(&o) ? (double)((float)q - (float)alpha * (float)p) : q - alpha * p;
    r[i] = is_float(&o) ? (double)(float)e : e;
  }
  return store(out_of(a, n), r, o.numel);
}

/* elu.out(self, alpha, scale, input_scale, out): ExecuTorch's
 * `x <= 0 ? expm1(x * input_scale) * (alpha * scale) : x * scale` in the tensor's type */
int elu_op(const uint32_t *a, uint32_t n) {
  tview x;
  double *v = load(val(a, n, 0), &x);
  if (!v) return -1;
  double alpha = scalar(val(a, n, 1)), scale = scalar(val(a, n, 2)), in_scale = scalar(val(a, n, 3));
  if (is_double(&x)) {
    double neg = alpha * scale;
    for (uint32_t i = 0; i < x.numel; i++)
      v[i] = v[i] <= 0.0 ? expm1(v[i] * in_scale) * neg : v[i] * scale;
  } else {
    float fa = (float)alpha, fs = (float)scale, fi = (float)in_scale, neg = fa * fs;
    for (uint32_t i = 0; i < x.numel; i++) {
      float f = (float)v[i];
      v[i] = (double)(f <= 0.0f ? expm1f(f * fi) * neg : f * fs);
    }
  }
  return store(out_of(a, n), v, x.numel);
}

/* div.out_mode(self, other, rounding_mode, out): "trunc" or "floor" rounds the quotient
 * (rounded_quotient), none is true division (the host's `math::binary`); floor_divide.out(self,
 * other, out) as "floor" */
int div_mode_op(uint32_t op, const uint32_t *a, uint32_t n) {
  operand x, y;
  tview o;
  if (operand_of(val(a, n, 0), &x) || operand_of(val(a, n, 1), &y) || view_of(out_of(a, n), &o))
    return -1;
  /* floor_divide.out(self, other, out) is div with rounding_mode "floor" */
  const value_rec *m = op == OP_FLOOR_DIVIDE ? 0 : val(a, n, 2);
  int trunc_mode = is_string(m, "trunc"), floor_mode = op == OP_FLOOR_DIVIDE || is_string(m, "floor");
  int ct = compute_type(&x, &y), by_zero = 0;
  if (m && m->kind == V_STRING && !trunc_mode && !floor_mode && m->off != 0) return fail("div: an unknown rounding mode");
  uint32_t *ix = broadcast_index(&x.t, &o), *iy = ix ? broadcast_index(&y.t, &o) : 0;
  double *r = iy ? new_values(o.numel) : 0;
  if (!r) return -1;
  for (uint32_t i = 0; i < o.numel; i++) {
    double p = x.v[ix[i]], q = y.v[iy[i]];
    if (is_float(&o)) {
      p = (double)(float)p;
      q = (double)(float)q;
    }
    double e = trunc_mode || floor_mode ? rounded_quotient(p, q, ct, floor_mode, &by_zero) : p / q;
    r[i] = is_float(&o) ? (double)(float)e : e;
  }
  if (by_zero) return fail(op == OP_FLOOR_DIVIDE ? "floor_divide: integer division by zero" : "div: integer division by zero");
  return store(out_of(a, n), r, o.numel);
}

/* masked_fill.Scalar_out(self, mask, value, out): value wherever the broadcast mask is set */
int masked_fill_op(const uint32_t *a, uint32_t n) {
  tview x, m;
  double *v = load(val(a, n, 0), &x), *mv = v ? load(val(a, n, 1), &m) : 0;
  if (!mv) return -1;
  uint32_t *ix = broadcast_index(&m, &x);
  if (!ix) return -1;
  double value = scalar(val(a, n, 2));
  for (uint32_t i = 0; i < x.numel; i++)
    if (mv[ix[i]] != 0.0) v[i] = value;
  return store(out_of(a, n), v, x.numel);
}

/* clamp.Tensor_out(self, min?, max?, out): bounds as tensors, all broadcast */
int clamp_tensor_op(const uint32_t *a, uint32_t n) {
  tview x, lo, hi, o;
  double *xv = load(val(a, n, 0), &x);
  if (!xv || view_of(out_of(a, n), &o)) return -1;
  const value_rec *lr = val(a, n, 1), *hr = val(a, n, 2);
  double *lv = lr && lr->kind == V_TENSOR ? load(lr, &lo) : 0, *hv = hr && hr->kind == V_TENSOR ? load(hr, &hi) : 0;
  if ((lr && lr->kind == V_TENSOR && !lv) || (hr && hr->kind == V_TENSOR && !hv)) return -1;
  uint32_t *ix = broadcast_index(&x, &o), *il = lv ? broadcast_index(&lo, &o) : 0, *ih = hv ? broadcast_index(&hi, &o) : 0;
  if (!ix || (lv && !il) || (hv && !ih)) return -1;
  double *r = new_values(o.numel);
  if (!r) return -1;
  for (uint32_t i = 0; i < o.numel; i++) {
    double v = xv[ix[i]];
    if (lv && v == v) v = fmax(v, lv[il[i]]);
    if (hv && v == v) v = fmin(v, hv[ih[i]]);
    r[i] = v;
  }
  return store(out_of(a, n), r, o.numel);
}

/* logit.out(self, eps?, out): ExecuTorch's `xi = (out type) x`, compared with the double eps and
 * 1 - eps (assigned back rounded), then log(xi / (1 - xi)) in the out type (logf for float32) */
int logit_op(const uint32_t *a, uint32_t n) {
  tview x, o;
  double *v = load(val(a, n, 0), &x);
  if (!v || view_of(out_of(a, n), &o)) return -1;
  const value_rec *er = val(a, n, 1);
  int has_eps = er && er->kind != V_NONE;
  double e = has_eps ? scalar(er) : 0.0;
  for (uint32_t i = 0; i < x.numel; i++) {
    if (is_float(&o)) {
      float f = (float)v[i];
      if (has_eps) {
        if ((double)f < e) f = (float)e;
        else if ((double)f > 1.0 - e) f = (float)(1.0 - e);
      }
      v[i] = (double)logf(f / (1.0f - f));
    } else {
      double d = v[i];
      if (has_eps) d = d < e ? e : d > 1.0 - e ? 1.0 - e : d;
      v[i] = log(d / (1.0 - d));
    }
  }
  return store(out_of(a, n), v, x.numel);
}

/* pow.Scalar_out(self: Scalar, exponent, out): float32 powf on a float32 out */
int pow_scalar_op(const uint32_t *a, uint32_t n) {
  tview e;
  double *v = load(val(a, n, 1), &e);
  tview o;
  if (!v || view_of(out_of(a, n), &o)) return -1;
  double base = scalar(val(a, n, 0));
  for (uint32_t i = 0; i < e.numel; i++)
    v[i] = is_float(&o) ? (double)powf((float)base, (float)v[i]) : pow(base, v[i]);
  return store(out_of(a, n), v, e.numel);
}
