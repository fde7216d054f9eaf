/* The portable (aten) operators Cortex-M programs keep, as etscope's host runtime computes them
 * (core/src/kernels/portable): elementwise arithmetic, comparisons and activations, copies and
 * views, concatenation and splitting, pooling, upsampling, softmax, reductions, matrix products,
 * convolution, embedding and layer norm. Every kernel reads its tensors in logical (row-major)
 * order whatever their dim order, computes in the host's types and order of operations (float32
 * where the host rounds to float32, double elsewhere) and writes its out tensor in that tensor's
 * dim order, so each output equals the host's bit for bit. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "image.h"

#include "opcodes.h"

/* ---- tensors in logical order ---- */

typedef struct {
  uint8_t *p;
  uint8_t dt;
  uint32_t rank, numel;
  int32_t size[8];
  int64_t stride[8]; /* elements, per logical dim, from the dim order */
} tview;

/* Steps a logical index through `x` in row-major order */
static void next_index(const tview *x, uint32_t idx[8]) {
  for (int32_t d = (int32_t)x->rank - 1; d >= 0; d--) {
    if (++idx[d] < (uint32_t)x->size[d]) break;
    idx[d] = 0;
  }
}

static uint32_t dt_size(uint8_t dt) {
  switch (dt) {
    case ST_BYTE: case ST_CHAR: case ST_BOOL: return 1;
    case ST_SHORT: return 2;
    case ST_INT: case ST_FLOAT: return 4;
    case ST_LONG: case ST_DOUBLE: return 8;
    default: return 0;
  }
}

static int view_of(const value_rec *v, tview *t) {
  if (!v || v->kind != V_TENSOR || v->rank > 8 || dt_size(v->dtype) == 0)
    return fail("portable: a tensor argument of a type the board does not hold");
  const int32_t *s = sizes_of(v);
  const uint32_t *o = order_of(v);
  t->p = (uint8_t *)tensor_data(v);
  t->dt = v->dtype;
  t->rank = v->rank;
  int64_t st = 1;
  for (int32_t m = (int32_t)v->rank - 1; m >= 0; m--) {
    uint32_t d = o[m];
    if (d >= v->rank || s[d] < 0) return fail("portable: a dim order or size out of range");
    t->stride[d] = st;
    st *= s[d];
  }
  for (uint32_t d = 0; d < v->rank; d++) t->size[d] = s[d];
  t->numel = (uint32_t)st;
  if ((uint64_t)st * dt_size(v->dtype) > v->u.t.nbytes || (st > 0 && !t->p))
    return fail("portable: a tensor larger than its storage");
  return 0;
}

static double get(const tview *t, int64_t at) {
  switch (t->dt) {
    case ST_BYTE: return (double)t->p[at];
    case ST_CHAR: return (double)((const int8_t *)t->p)[at];
    case ST_BOOL: return t->p[at] != 0 ? 1.0 : 0.0;
    case ST_SHORT: return (double)((const int16_t *)t->p)[at];
    case ST_INT: return (double)((const int32_t *)t->p)[at];
    case ST_LONG: return (double)((const int64_t *)t->p)[at];
    case ST_FLOAT: return (double)((const float *)t->p)[at];
    default: return ((const double *)t->p)[at];
  }
}

/* Rust's `as` from f64: toward zero, saturating, NaN to 0 (the host's `Buf::from_f64_like`) */
static double toward_zero(double x, double lo, double hi) {
  if (x != x) return 0.0;
  x = trunc(x);
  return x < lo ? lo : x > hi ? hi : x;
}

static void put(tview *t, int64_t at, double x) {
  switch (t->dt) {
    case ST_BYTE: t->p[at] = (uint8_t)toward_zero(x, 0.0, 255.0); break;
    case ST_CHAR: ((int8_t *)t->p)[at] = (int8_t)toward_zero(x, -128.0, 127.0); break;
    case ST_BOOL: t->p[at] = x != 0.0; break;
    case ST_SHORT: ((int16_t *)t->p)[at] = (int16_t)toward_zero(x, -32768.0, 32767.0); break;
    case ST_INT: ((int32_t *)t->p)[at] = (int32_t)toward_zero(x, -2147483648.0, 2147483647.0); break;
    case ST_LONG:
      ((int64_t *)t->p)[at] = x >= 9223372036854775808.0 ? INT64_MAX
                              : (int64_t)toward_zero(x, -9223372036854775808.0, 9223372036854774784.0);
      break;
    case ST_FLOAT: ((float *)t->p)[at] = (float)x; break;
    default: ((double *)t->p)[at] = x;
  }
}

/* Moves an odometer over `size` one step, keeping `off` the storage offset. */
static void step(const tview *t, uint32_t *idx, int64_t *off) {
  for (int32_t d = (int32_t)t->rank - 1; d >= 0; d--) {
    idx[d]++;
    *off += t->stride[d];
    if (idx[d] < (uint32_t)t->size[d]) return;
    *off -= t->stride[d] * t->size[d];
    idx[d] = 0;
  }
}

static double *new_values(uint32_t n) {
  double *v = (double *)scratch(n * 8u + 8u);
  if (!v) fail("portable: larger than the board's work memory");
  return v;
}

/* The elements of a tensor argument in logical order, as doubles. */
static double *load(const value_rec *v, tview *t) {
  if (view_of(v, t)) return 0;
  double *out = new_values(t->numel);
  if (!out) return 0;
  uint32_t idx[8] = {0};
  int64_t off = 0;
  for (uint32_t i = 0; i < t->numel; i++) {
    out[i] = get(t, off);
    step(t, idx, &off);
  }
  return out;
}

/* Writes `vals` (logical order) into the out tensor in its type and dim order. */
static int store(const value_rec *v, const double *vals, uint32_t count) {
  tview t;
  if (view_of(v, &t)) return -1;
  if (t.numel != count) return fail("portable: the result does not fill the out tensor");
  uint32_t idx[8] = {0};
  int64_t off = 0;
  for (uint32_t i = 0; i < t.numel; i++) {
    put(&t, off, vals[i]);
    step(&t, idx, &off);
  }
  return 0;
}

static int is_float(const tview *t) { return t->dt == ST_FLOAT; }
static int is_double(const tview *t) { return t->dt == ST_DOUBLE; }

/* Logical strides of `in` broadcast to `out` (0 along broadcast dims, right-aligned), or -1. */
static int broadcast_strides(const tview *in, const tview *out, int64_t *st) {
  if (in->rank > out->rank) return -1;
  int64_t s = 1;
  for (int32_t d = (int32_t)out->rank - 1; d >= 0; d--) {
    int32_t k = d - (int32_t)(out->rank - in->rank);
    if (k < 0) {
      st[d] = 0;
      continue;
    }
    int32_t n = in->size[k];
    if (n != out->size[d] && n != 1) return -1;
    st[d] = n == 1 ? 0 : s;
    s *= n;
  }
  return 0;
}

/* Flat logical indices of `in` for every element of `out` (broadcasting). */
static uint32_t *broadcast_index(const tview *in, const tview *out) {
  int64_t st[8];
  if (broadcast_strides(in, out, st)) {
    fail("portable: operands do not broadcast to the out tensor");
    return 0;
  }
  uint32_t *ix = (uint32_t *)scratch(out->numel * 4u + 4u);
  if (!ix) {
    fail("portable: larger than the board's work memory");
    return 0;
  }
  uint32_t idx[8] = {0};
  int64_t at = 0;
  for (uint32_t i = 0; i < out->numel; i++) {
    ix[i] = (uint32_t)at;
    for (int32_t d = (int32_t)out->rank - 1; d >= 0; d--) {
      idx[d]++;
      at += st[d];
      if (idx[d] < (uint32_t)out->size[d]) break;
      at -= st[d] * out->size[d];
      idx[d] = 0;
    }
  }
  return ix;
}

static int dim_of(int64_t d, uint32_t rank, uint32_t *out) {
  int64_t r = d < 0 ? d + (int64_t)rank : d;
  if (r < 0 || r >= (int64_t)(rank ? rank : 1)) return fail("portable: a dim out of range");
  *out = (uint32_t)r;
  return 0;
}

static uint32_t product(const int32_t *s, uint32_t from, uint32_t to) {
  uint32_t p = 1;
  for (uint32_t d = from; d < to; d++) p *= (uint32_t)s[d];
  return p;
}

/* A scalar operand as a 0-d tensor of doubles (the host's `operand`). */
typedef struct {
  tview t;
  double *v;
  double one;
} operand;

static int operand_of(const value_rec *v, operand *o) {
  if (v && v->kind == V_TENSOR) {
    o->v = load(v, &o->t);
    return o->v ? 0 : -1;
  }
  if (!v || (v->kind != V_INT && v->kind != V_DOUBLE && v->kind != V_BOOL))
    return fail("portable: an operand is neither a tensor nor a scalar");
  o->one = scalar(v);
  o->v = &o->one;
  o->t.rank = 0;
  o->t.numel = 1;
  o->t.dt = ST_DOUBLE;
  return 0;
}

/* ---- elementwise ---- */

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
static int binary(uint32_t op, const uint32_t *a, uint32_t n) {
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
      r[i] = (double)(float)apply(op, (double)(float)p, (double)(float)(alpha * q));
    else
      r[i] = apply(op, p, alpha * q);
  }
  return store(out_of(a, n), r, o.numel);
}

/* aten::where.self_out(condition, self, other, out) */
static int where_op(const uint32_t *a, uint32_t n) {
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
static int unary(uint32_t op, const uint32_t *a, uint32_t n) {
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
        d = is_float(&x) ? (double)(f > 0.0f ? f : f * slope32) : d > 0.0 ? d : d * slope;
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

static int math_unary(uint32_t op, const uint32_t *a, uint32_t n) {
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

static int math_binary(uint32_t op, const uint32_t *a, uint32_t n) {
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

/* ---- data movement ---- */

/* Copies: the same elements in the out tensor's shape, dim order and type. */
static int copy_op(const uint32_t *a, uint32_t n) {
  tview x;
  double *v = load(val(a, n, 0), &x);
  return v ? store(out_of(a, n), v, x.numel) : -1;
}

/* out[i] = in[src(i)] where src permutes the logical dims: out dim k is in dim perm[k]. */
static int permuted(const uint32_t *a, uint32_t n, const uint32_t *perm) {
  tview x, o;
  double *v = load(val(a, n, 0), &x);
  if (!v || view_of(out_of(a, n), &o)) return -1;
  if (o.rank != x.rank || o.numel != x.numel) return fail("permute: the out tensor does not fit");
  int64_t contig[8], s = 1;
  for (int32_t d = (int32_t)x.rank - 1; d >= 0; d--) {
    contig[d] = s;
    s *= x.size[d];
  }
  for (uint32_t k = 0; k < x.rank; k++)
    if (o.size[k] != x.size[perm[k]]) return fail("permute: the out tensor does not fit");
  double *r = new_values(o.numel);
  if (!r) return -1;
  uint32_t idx[8] = {0};
  for (uint32_t i = 0; i < o.numel; i++) {
    int64_t from = 0;
    for (uint32_t k = 0; k < o.rank; k++) from += (int64_t)idx[k] * contig[perm[k]];
    r[i] = v[from];
    next_index(&o, idx);
  }
  return store(out_of(a, n), r, o.numel);
}

static int permute_op(uint32_t op, const uint32_t *a, uint32_t n) {
  const value_rec *x = val(a, n, 0);
  if (!x || x->kind != V_TENSOR) return fail("permute: not a tensor");
  uint32_t rank = x->rank, perm[8], seen = 0;
  for (uint32_t k = 0; k < rank; k++) perm[k] = k;
  if (op == OP_PERMUTE_COPY) {
    uint32_t np;
    const int64_t *p = list(val(a, n, 1), &np);
    if (np != rank) return fail("permute_copy: the permutation does not fit");
    for (uint32_t k = 0; k < rank; k++) {
      if (dim_of(p[k], rank, &perm[k])) return -1;
      if (seen & (1u << perm[k])) return fail("permute_copy: not a permutation");
      seen |= 1u << perm[k];
    }
  } else if (op == OP_T_COPY) {
    if (rank == 2) {
      perm[0] = 1;
      perm[1] = 0;
    }
  } else {
    uint32_t d0 = 0, d1 = 0;
    if (dim_of(ival(val(a, n, 1)), rank, &d0) || dim_of(ival(val(a, n, 2)), rank, &d1)) return -1;
    perm[d0] = d1;
    perm[d1] = d0;
  }
  return permuted(a, n, perm);
}

static int expand_op(const uint32_t *a, uint32_t n) {
  tview x, o;
  double *v = load(val(a, n, 0), &x);
  if (!v || view_of(out_of(a, n), &o)) return -1;
  uint32_t *ix = broadcast_index(&x, &o);
  double *r = ix ? new_values(o.numel) : 0;
  if (!r) return -1;
  for (uint32_t i = 0; i < o.numel; i++) r[i] = v[ix[i]];
  return store(out_of(a, n), r, o.numel);
}

/* slice_copy.Tensor_out(self, dim, start?, end?, step) and select_copy.int_out(self, dim, index):
 * the picked entries of `dim` in order. */
static int slice_op(uint32_t op, const uint32_t *a, uint32_t n) {
  tview x;
  double *v = load(val(a, n, 0), &x);
  uint32_t dim = 0;
  if (!v || x.rank == 0 || dim_of(ival(val(a, n, 1)), x.rank, &dim)) return v ? fail("slice: of a scalar") : -1;
  int64_t size = x.size[dim], start, end, stride = 1;
  if (op == OP_SELECT_COPY) {
    start = ival(val(a, n, 2));
    if (start < 0) start += size;
    if (start < 0 || start >= size) return fail("select_copy: index out of range");
    end = start + 1;
  } else {
    const value_rec *s = val(a, n, 2), *e = val(a, n, 3);
    start = s && s->kind != V_NONE ? (int64_t)scalar(s) : 0;
    end = e && e->kind != V_NONE ? (int64_t)scalar(e) : size;
    if (start < 0) start += size;
    if (end < 0) end += size;
    start = start < 0 ? 0 : start > size ? size : start;
    end = end < 0 ? 0 : end > size ? size : end;
    stride = ival(val(a, n, 4));
    if (stride <= 0) return fail("slice_copy: step must be positive");
  }
  uint32_t outer = product(x.size, 0, dim), inner = product(x.size, dim + 1, x.rank), count = 0;
  double *r = new_values(x.numel);
  if (!r) return -1;
  for (uint32_t o = 0; o < outer; o++)
    for (int64_t k = start; k < end; k += stride)
      for (uint32_t i = 0; i < inner; i++) r[count++] = v[((int64_t)o * size + k) * inner + i];
  return store(out_of(a, n), r, count);
}

/* cat.out(tensors[], dim, out); empty 1-D tensors take no part. */
static int cat_op(const uint32_t *a, uint32_t n) {
  const value_rec *l = val(a, n, 0);
  tview o;
  if (!l || l->kind != V_TENSOR_LIST || view_of(out_of(a, n), &o)) return l ? -1 : fail("cat: no tensor list");
  const uint32_t *items = (const uint32_t *)(image + l->u.t.sizes_off);
  double *r = new_values(o.numel);
  if (!r) return -1;
  uint32_t dim = 0, outer = 0, count = 0, parts = 0;
  tview t[64];
  double *tv[64];
  for (uint32_t k = 0; k < l->off; k++) {
    const value_rec *v = value_at(items[k]);
    if (!v || v->kind != V_TENSOR) return fail("cat: a list entry is not a tensor");
    if (v->rank == 1 && sizes_of(v)[0] == 0) continue;
    if (parts == 64) return fail("cat: more than 64 tensors");
    tv[parts] = load(v, &t[parts]);
    if (!tv[parts]) return -1;
    parts++;
  }
  if (parts == 0) return store(out_of(a, n), r, 0);
  if (dim_of(ival(val(a, n, 1)), t[0].rank, &dim)) return -1;
  outer = product(t[0].size, 0, dim);
  for (uint32_t p = 0; p < parts; p++) {
    if (t[p].rank != t[0].rank) return fail("cat: tensors of different ranks");
    for (uint32_t d = 0; d < t[0].rank; d++)
      if (d != dim && t[p].size[d] != t[0].size[d]) return fail("cat: sizes differ outside dim");
  }
  for (uint32_t q = 0; q < outer; q++)
    for (uint32_t p = 0; p < parts; p++) {
      uint32_t chunk = product(t[p].size, dim, t[p].rank);
      if (count + chunk > o.numel) return fail("cat: larger than the out tensor");
      memcpy(r + count, tv[p] + (uint64_t)q * chunk, chunk * 8u);
      count += chunk;
    }
  return store(out_of(a, n), r, count);
}

/* split_with_sizes_copy.out(self, split_sizes, dim, out[]) and split_copy.Tensor_out(self,
 * split_size, dim, out[]) (equal parts, the last one shorter) */
static int split_op(const uint32_t *a, uint32_t n) {
  tview x;
  double *v = load(val(a, n, 0), &x);
  uint32_t dim = 0, ns = 0;
  if (!v || dim_of(ival(val(a, n, 2)), x.rank, &dim)) return -1;
  const value_rec *sv = val(a, n, 1);
  int64_t equal[64];
  const int64_t *sizes;
  if (sv && sv->kind == V_INT) {
    int64_t each = sv->u.i < 1 ? 1 : sv->u.i, total = x.size[dim];
    for (int64_t at = 0; at < total; at += each) {
      if (ns == 64) return fail("split_copy: more than 64 parts");
      equal[ns++] = each < total - at ? each : total - at;
    }
    sizes = equal;
  } else {
    sizes = list(sv, &ns);
  }
  const value_rec *l = n >= 2 ? val(a, n, n - 2) : 0;
  if (!l || l->kind != V_TENSOR_LIST || l->off != ns) return fail("split_with_sizes_copy: outputs do not match the sizes");
  const uint32_t *items = (const uint32_t *)(image + l->u.t.sizes_off);
  uint32_t outer = product(x.size, 0, dim), inner = product(x.size, dim + 1, x.rank);
  int64_t at = 0;
  for (uint32_t k = 0; k < ns; k++) {
    if (sizes[k] < 0 || at + sizes[k] > x.size[dim]) return fail("split_with_sizes_copy: sizes exceed the dim");
    double *r = new_values(outer * (uint32_t)sizes[k] * inner);
    if (!r) return -1;
    uint32_t count = 0;
    for (uint32_t o = 0; o < outer; o++)
      for (int64_t j = at; j < at + sizes[k]; j++)
        for (uint32_t i = 0; i < inner; i++) r[count++] = v[((int64_t)o * x.size[dim] + j) * inner + i];
    if (store(value_at(items[k]), r, count)) return -1;
    at += sizes[k];
  }
  if (at != x.size[dim]) return fail("split_with_sizes_copy: sizes do not cover the dim");
  return 0;
}

static int full_op(const uint32_t *a, uint32_t n) {
  tview o;
  if (view_of(out_of(a, n), &o)) return -1;
  double *r = new_values(o.numel), value = scalar(val(a, n, 1));
  if (!r) return -1;
  for (uint32_t i = 0; i < o.numel; i++) r[i] = value;
  return store(out_of(a, n), r, o.numel);
}

/* embedding.out(weight[rows, dim], indices, ...): rows of the weight by index */
static int embedding_op(const uint32_t *a, uint32_t n) {
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

/* ---- pooling and upsampling ---- */

static uint32_t window(const value_rec *v, uint32_t i, uint32_t dflt) {
  uint32_t nl;
  const int64_t *l = list(v, &nl);
  if (nl == 0) return dflt;
  int64_t x = nl > i ? l[i] : l[0];
  return x < 0 ? 0u : (uint32_t)x;
}

/* avg_pool2d.out(self, kernel, stride, padding, ceil_mode, count_include_pad, divisor?, out),
 * float32 sums in window order. */
static int avg_pool_op(const uint32_t *a, uint32_t n) {
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
static int max_pool_op(const uint32_t *a, uint32_t n) {
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
static int nearest_op(const uint32_t *a, uint32_t n) {
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
static int bilinear_op(const uint32_t *a, uint32_t n) {
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

/* ---- softmax and reductions ---- */

static int softmax_op(uint32_t op, const uint32_t *a, uint32_t n) {
  tview x;
  double *v = load(val(a, n, 0), &x);
  uint32_t d = 0;
  if (!v || dim_of(ival(val(a, n, 1)), x.rank, &d)) return -1;
  if (op == OP_FLOAT_SOFTMAX && !is_float(&x)) return fail("_softmax: float tensors only");
  uint32_t size = x.rank ? (uint32_t)x.size[d] : 1u;
  uint32_t inner = product(x.size, d + 1, x.rank), outer = product(x.size, 0, d);
  double *r = new_values(x.numel);
  if (!r) return -1;
  for (uint32_t o = 0; o < outer; o++)
    for (uint32_t i = 0; i < inner; i++) {
#define AT(k) (((uint64_t)o * size + (k)) * inner + i)
      if (op == OP_FLOAT_SOFTMAX) {
        float mx = -INFINITY, sum = 0.0f;
        for (uint32_t k = 0; k < size; k++) mx = fmaxf(mx, (float)v[AT(k)]);
        for (uint32_t k = 0; k < size; k++) {
          float e = expf((float)v[AT(k)] - mx);
          r[AT(k)] = e;
          sum += e;
        }
        for (uint32_t k = 0; k < size; k++) r[AT(k)] = (double)((float)r[AT(k)] / sum);
      } else if (!is_double(&x)) {
        /* ExecuTorch: max, the sum of expf and its logf in float */
        float mx = -INFINITY, sum = 0.0f;
        for (uint32_t k = 0; k < size; k++) mx = fmaxf(mx, (float)v[AT(k)]);
        for (uint32_t k = 0; k < size; k++) sum += expf((float)v[AT(k)] - mx);
        float ls = logf(sum);
        for (uint32_t k = 0; k < size; k++) r[AT(k)] = (double)((float)v[AT(k)] - mx - ls);
      } else {
        double mx = -INFINITY, sum = 0.0;
        for (uint32_t k = 0; k < size; k++) mx = fmax(mx, v[AT(k)]);
        for (uint32_t k = 0; k < size; k++) sum += exp(v[AT(k)] - mx);
        double ls = log(sum);
        for (uint32_t k = 0; k < size; k++) r[AT(k)] = v[AT(k)] - mx - ls;
      }
#undef AT
    }
  return store(out_of(a, n), r, x.numel);
}

/* The dims a reduction folds (all of them when none is named) as a bit mask, with the number
 * of kept groups and the elements in each; -1 on a dim out of range. */
static int reduced_dims(const int64_t *dims, uint32_t nd, const tview *x, uint32_t *mask, uint32_t *groups,
                        uint32_t *per) {
  uint32_t m = 0, g = 1, e = 1;
  for (uint32_t k = 0; k < nd; k++) {
    uint32_t d = 0;
    if (dim_of(dims[k], x->rank, &d)) return -1;
    m |= 1u << d;
  }
  if (m == 0) m = 0xFFu;
  for (uint32_t d = 0; d < x->rank; d++) {
    if (m & (1u << d))
      e *= (uint32_t)x->size[d];
    else
      g *= (uint32_t)x->size[d];
  }
  *mask = m;
  *groups = g;
  *per = e;
  return 0;
}

/* The kept group of each element of `x` in logical order, for a reduction over `mask` */
static uint32_t group_of(const tview *x, uint32_t mask, const uint32_t idx[8]) {
  uint32_t g = 0;
  for (uint32_t d = 0; d < x->rank; d++)
    if (!(mask & (1u << d))) g = g * (uint32_t)x->size[d] + idx[d];
  return g;
}

/* Per element of `x`, the group (out index) it reduces into over the dims in `mask`; 0 when the
 * work memory is too small. */
static uint32_t *group_indices(const tview *x, uint32_t mask) {
  uint32_t *gi = (uint32_t *)scratch(x->numel * 4u + 4u);
  if (!gi) return 0;
  uint32_t idx[8] = {0};
  for (uint32_t i = 0; i < x->numel; i++) {
    gi[i] = group_of(x, mask, idx);
    next_index(x, idx);
  }
  return gi;
}

/* Per-group mean and sum((x - mean)^2) / (n - correction) over the dims in `mask`, in double
 * with Rust's -0.0 float sums, as the host's var and var_mean do; -1 when the work memory is
 * too small. */
static int group_variance(const double *v, const tview *x, uint32_t mask, uint32_t groups, uint32_t per, double c,
                          double **mean_out, double **var_out) {
  double *mean = new_values(groups), *ss = new_values(groups);
  uint32_t *gi = group_indices(x, mask);
  if (!mean || !ss || !gi) return -1;
  for (uint32_t g = 0; g < groups; g++) mean[g] = ss[g] = -0.0;
  for (uint32_t i = 0; i < x->numel; i++) mean[gi[i]] += v[i];
  double nn = (double)per;
  for (uint32_t g = 0; g < groups; g++) mean[g] = mean[g] / (nn > 1.0 ? nn : 1.0);
  for (uint32_t i = 0; i < x->numel; i++) {
    double dlt = v[i] - mean[gi[i]];
    ss[gi[i]] += dlt * dlt;
  }
  double den = nn - c > 0.0 ? nn - c : 0.0;
  for (uint32_t g = 0; g < groups; g++) ss[g] = ss[g] / den;
  *mean_out = mean;
  *var_out = ss;
  return 0;
}

/* mean.out / sum.IntList_out / amax.out / amin.out / argmax.out / argmin.out / any / prod and
 * the whole-tensor `_ALL` forms: each out element reduces its group in logical order (float32
 * sums on float32 input; NaN-propagating extremes; the first index of an extreme, a NaN
 * winning), as the host's `reduction` does. */
static int reduce_op(uint32_t op, const uint32_t *a, uint32_t n) {
  tview x, o;
  double *v = load(val(a, n, 0), &x);
  if (!v || view_of(out_of(a, n), &o)) return -1;
  int whole = op == OP_ANY_ALL || op == OP_PROD_ALL || op == OP_MAX_ALL || op == OP_MIN_ALL;
  const value_rec *dv = whole ? 0 : val(a, n, 1);
  uint32_t nd = 0, mask = 0, groups = 1, per = 1;
  const int64_t *dims = 0;
  if (dv && dv->kind == V_INT) {
    dims = &dv->u.i;
    nd = 1;
  } else {
    dims = list(dv, &nd);
  }
  if (reduced_dims(dims, nd, &x, &mask, &groups, &per)) return -1;
  if (groups != o.numel) return fail("reduction: the out tensor does not fit");
  int f32 = op == OP_MEAN || (op == OP_SUM && is_float(&x));
  int arg = op == OP_ARGMAX || op == OP_ARGMIN;
  double *acc = new_values(groups), *best_at = arg ? new_values(groups) : 0;
  int counted = arg || op == OP_AMAX;
  uint32_t *seen = counted ? (uint32_t *)scratch(groups * 4u + 4u) : 0;
  if (!acc || (arg && !best_at) || (counted && !seen)) return acc ? fail("reduction: larger than the board's work memory") : -1;
  for (uint32_t g = 0; g < groups; g++) {
    switch (op) {
      case OP_AMAX: case OP_MAX_ALL: acc[g] = -INFINITY; break;
      case OP_AMIN: case OP_MIN_ALL: acc[g] = INFINITY; break;
      case OP_PROD: case OP_PROD_ALL: acc[g] = 1.0; break;
      default: acc[g] = -0.0; /* Rust's float sums start at -0.0 */
    }
    if (arg) best_at[g] = 0.0;
    if (counted) seen[g] = 0;
  }
  uint32_t idx[8] = {0};
  for (uint32_t i = 0; i < x.numel; i++, next_index(&x, idx)) {
    uint32_t g = group_of(&x, mask, idx);
    double e = v[i];
    switch (op) {
      case OP_AMAX: /* ExecuTorch: from the first element, a NaN wins, the first of equal zeros stays */
        if (seen[g]++ == 0 || e != e || e > acc[g]) acc[g] = e;
        break;
      case OP_MAX_ALL: acc[g] = e != e || acc[g] != acc[g] ? NAN : fmax(acc[g], e); break;
      case OP_AMIN: case OP_MIN_ALL: acc[g] = e != e || acc[g] != acc[g] ? NAN : fmin(acc[g], e); break;
      case OP_PROD: case OP_PROD_ALL: acc[g] *= e; break;
      case OP_ANY: case OP_ANY_ALL: acc[g] = acc[g] != 0.0 || e != 0.0 ? 1.0 : 0.0; break;
      case OP_ARGMAX: case OP_ARGMIN: {
        uint32_t k = seen[g]++;
        if (k == 0) {
          acc[g] = e;
        } else if (acc[g] == acc[g] && (e != e || (op == OP_ARGMAX ? e > acc[g] : e < acc[g]))) {
          acc[g] = e;
          best_at[g] = (double)k;
        }
        break;
      }
      default:
        if (f32)
          acc[g] = (double)((float)acc[g] + (float)e);
        else
          acc[g] += e;
    }
  }
  if (op == OP_MEAN)
    for (uint32_t g = 0; g < groups; g++) acc[g] = (double)((float)acc[g] / (float)(per ? per : 1u));
  if (op == OP_ANY || op == OP_ANY_ALL)
    for (uint32_t g = 0; g < groups; g++) acc[g] = acc[g] != 0.0 ? 1.0 : 0.0;
  return store(out_of(a, n), arg ? best_at : acc, groups);
}

/* _adaptive_avg_pool2d.out(self, output_size, out): window [floor(i*H/oh), ceil((i+1)*H/oh)),
 * float32 sums */
static int adaptive_pool_op(const uint32_t *a, uint32_t n) {
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

/* constant_pad_nd.out(self, pad, value, out): pad pairs from the last dim backwards */
static int constant_pad_op(const uint32_t *a, uint32_t n) {
  tview x, o;
  double *v = load(val(a, n, 0), &x);
  if (!v || view_of(out_of(a, n), &o)) return -1;
  uint32_t np;
  const int64_t *pad = list(val(a, n, 1), &np);
  int64_t before[8] = {0}, contig[8], s = 1;
  if (o.rank != x.rank || (np + 1) / 2 > x.rank) return fail("constant_pad_nd: more padding than dims");
  for (uint32_t k = 0; k < np; k += 2) before[x.rank - 1 - k / 2] = pad[k];
  for (int32_t d = (int32_t)x.rank - 1; d >= 0; d--) {
    contig[d] = s;
    s *= x.size[d];
  }
  double value = scalar(val(a, n, 2)), *r = new_values(o.numel);
  if (!r) return -1;
  uint32_t idx[8] = {0};
  for (uint32_t i = 0; i < o.numel; i++) {
    int64_t at = 0;
    int inside = 1;
    for (uint32_t d = 0; d < x.rank && inside; d++) {
      int64_t src = (int64_t)idx[d] - before[d];
      if (src < 0 || src >= x.size[d]) inside = 0;
      at += src * contig[d];
    }
    r[i] = inside ? v[at] : value;
    next_index(&o, idx);
  }
  return store(out_of(a, n), r, o.numel);
}

/* flip.out(self, dims, out) */
static int flip_op(const uint32_t *a, uint32_t n) {
  tview x;
  double *v = load(val(a, n, 0), &x);
  if (!v) return -1;
  uint32_t nd, flipped = 0;
  const int64_t *dims = list(val(a, n, 1), &nd);
  for (uint32_t k = 0; k < nd; k++) {
    uint32_t d = 0;
    if (dim_of(dims[k], x.rank, &d)) return -1;
    flipped |= 1u << d;
  }
  int64_t contig[8], s = 1;
  for (int32_t d = (int32_t)x.rank - 1; d >= 0; d--) {
    contig[d] = s;
    s *= x.size[d];
  }
  double *r = new_values(x.numel);
  if (!r) return -1;
  uint32_t idx[8] = {0};
  for (uint32_t i = 0; i < x.numel; i++) {
    int64_t at = 0;
    for (uint32_t d = 0; d < x.rank; d++)
      at += (int64_t)((flipped & (1u << d)) ? (uint32_t)x.size[d] - 1u - idx[d] : idx[d]) * contig[d];
    r[i] = v[at];
    next_index(&x, idx);
  }
  return store(out_of(a, n), r, x.numel);
}

/* index_select.out(self, dim, index, out) */
static int index_select_op(const uint32_t *a, uint32_t n) {
  tview x, ix;
  double *v = load(val(a, n, 0), &x), *iv = v ? load(val(a, n, 2), &ix) : 0;
  uint32_t d = 0;
  if (!iv || dim_of(ival(val(a, n, 1)), x.rank ? x.rank : 1u, &d)) return -1;
  uint32_t len = x.rank ? (uint32_t)x.size[d] : 1u;
  uint32_t outer = x.rank ? product(x.size, 0, d) : 1u, inner = x.rank ? product(x.size, d + 1, x.rank) : 1u;
  double *r = new_values(outer * ix.numel * inner);
  if (!r) return -1;
  uint32_t k = 0;
  for (uint32_t o = 0; o < outer; o++)
    for (uint32_t j = 0; j < ix.numel; j++) {
      int64_t i = (int64_t)iv[j];
      if (i < 0) i += len;
      if (i < 0 || i >= (int64_t)len) return fail("index_select: an index out of range");
      for (uint32_t q = 0; q < inner; q++) r[k++] = v[((uint64_t)o * len + (uint64_t)i) * inner + q];
    }
  return store(out_of(a, n), r, k);
}

/* ---- matrix products, convolution, layer norm ---- */

/* out[b][i][j] = sum_p a[b][i][p] * b[b][p][j] in float32 (mm: one batch) */
static int matmul_op(uint32_t op, const uint32_t *a, uint32_t n) {
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
static int linear_op(const uint32_t *a, uint32_t n) {
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

/* convolution.out(input, weight, bias?, stride, padding, dilation, transposed, output_padding,
 * groups, out), 2-D or 1-D: each output starts at its bias and adds weight × input in input
 * channel, kernel row, kernel column order, in float32. */
static int convolution_op(const uint32_t *a, uint32_t n) {
  tview x, w, b;
  double *xv = load(val(a, n, 0), &x), *wv = xv ? load(val(a, n, 1), &w) : 0;
  if (!wv) return -1;
  const value_rec *bvr = val(a, n, 2);
  double *bv = bvr && bvr->kind == V_TENSOR ? load(bvr, &b) : 0;
  if (bvr && bvr->kind == V_TENSOR && !bv) return -1;
  if (ival(val(a, n, 6))) return fail("convolution: transposed convolution is not implemented");
  if (!is_float(&x) || !is_float(&w)) return fail("convolution: float tensors only");
  int one_d = x.rank == 3 && w.rank == 3;
  if (!one_d && (x.rank != 4 || w.rank != 4)) return fail("convolution: 3-D or 4-D tensors");
  int32_t N = x.size[0], C = x.size[1], H = one_d ? 1 : x.size[2], W = x.size[one_d ? 2 : 3];
  int32_t OC = w.size[0], ICG = w.size[1], KH = one_d ? 1 : w.size[2], KW = w.size[one_d ? 2 : 3];
  int32_t sh = one_d ? 1 : (int32_t)window(val(a, n, 3), 0, 1), sw = (int32_t)window(val(a, n, 3), one_d ? 0 : 1, 1);
  int32_t ph = one_d ? 0 : (int32_t)window(val(a, n, 4), 0, 0), pw = (int32_t)window(val(a, n, 4), one_d ? 0 : 1, 0);
  int32_t dh = one_d ? 1 : (int32_t)window(val(a, n, 5), 0, 1), dw = (int32_t)window(val(a, n, 5), one_d ? 0 : 1, 1);
  int64_t groups = ival(val(a, n, 8));
  if (groups < 1) groups = 1;
  if (sh == 0 || sw == 0 || (int64_t)ICG * groups != C || OC % groups || (bv && b.numel != (uint32_t)OC))
    return fail("convolution: input, weight and groups do not fit");
  int32_t OH = (H + 2 * ph - (dh * (KH - 1) + 1)) / sh + 1, OW = (W + 2 * pw - (dw * (KW - 1) + 1)) / sw + 1;
  if (OH <= 0 || OW <= 0) return fail("convolution: the kernel is larger than the input");
  int32_t OCG = OC / (int32_t)groups;
  uint32_t total = (uint32_t)(N * OC * OH * OW), k = 0;
  double *r = new_values(total);
  if (!r) return -1;
  for (int32_t bn = 0; bn < N; bn++)
    for (int32_t o = 0; o < OC; o++) {
      int32_t g = o / OCG;
      for (int32_t y = 0; y < OH; y++)
        for (int32_t xo = 0; xo < OW; xo++) {
          float acc = bv ? (float)bv[o] : 0.0f;
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
          r[k++] = (double)acc;
        }
    }
  return store(out_of(a, n), r, k);
}

/* native_layer_norm.out(input, normalized_shape, weight?, bias?, eps, out, mean, rstd): the
 * statistics in double, each output rounded to float32 before the affine step */
static int layer_norm_op(const uint32_t *a, uint32_t n) {
  tview x, tw, tb;
  double *xv = load(val(a, n, 0), &x);
  if (!xv) return -1;
  const value_rec *wr = val(a, n, 2), *br = val(a, n, 3);
  double *wv = wr && wr->kind == V_TENSOR ? load(wr, &tw) : 0;
  double *bv = br && br->kind == V_TENSOR ? load(br, &tb) : 0;
  if ((wr && wr->kind == V_TENSOR && !wv) || (br && br->kind == V_TENSOR && !bv)) return -1;
  uint32_t nk;
  const int64_t *shape = list(val(a, n, 1), &nk);
  if (nk > x.rank || !is_float(&x)) return fail("native_layer_norm: the normalized shape does not fit");
  for (uint32_t k = 0; k < nk; k++)
    if (x.size[x.rank - nk + k] != shape[k]) return fail("native_layer_norm: the normalized shape does not end the input");
  uint32_t inner = product(x.size, x.rank - nk, x.rank);
  if (inner == 0 || (wv && tw.numel != inner) || (bv && tb.numel != inner)) return fail("native_layer_norm: weight or bias does not fit");
  double eps = dval(val(a, n, 4));
  uint32_t rows = x.numel / inner;
  double *out = new_values(x.numel), *means = new_values(rows), *rstds = new_values(rows);
  if (!out || !means || !rstds) return -1;
  for (uint32_t q = 0; q < rows; q++) {
    const double *row = xv + (uint64_t)q * inner;
    double sum = -0.0, var = -0.0; /* Rust's float sums start at -0.0 */
    for (uint32_t i = 0; i < inner; i++) sum += row[i];
    double mean = sum / (double)inner;
    for (uint32_t i = 0; i < inner; i++) var += (row[i] - mean) * (row[i] - mean);
    var /= (double)inner;
    double rstd = 1.0 / sqrt(var + eps);
    for (uint32_t i = 0; i < inner; i++) {
      float y = (float)((row[i] - mean) * rstd);
      if (wv) y *= (float)wv[i];
      if (bv) y += (float)bv[i];
      out[(uint64_t)q * inner + i] = (double)y;
    }
    means[q] = (double)(float)mean;
    rstds[q] = (double)(float)rstd;
  }
  if (store(val(a, n, 5), out, x.numel) || store(val(a, n, 6), means, rows)) return -1;
  return store(val(a, n, 7), rstds, rows);
}

/* ---- running sums, variances, activations, fills, rearrangements ---- */

/* cumsum.out(self, dim, dtype?, out): float32 running sums on float32, else double */
static int cumsum_op(const uint32_t *a, uint32_t n) {
  tview x;
  double *v = load(val(a, n, 0), &x);
  uint32_t d = 0;
  if (!v || dim_of(ival(val(a, n, 1)), x.rank ? x.rank : 1u, &d)) return -1;
  uint32_t len = x.rank ? (uint32_t)x.size[d] : 1u;
  uint32_t inner = x.rank ? product(x.size, d + 1, x.rank) : 1u, outer = x.rank ? product(x.size, 0, d) : 1u;
  for (uint32_t o = 0; o < outer; o++)
    for (uint32_t i = 0; i < inner; i++) {
      double acc = 0.0;
      float acc32 = 0.0f;
      for (uint32_t k = 0; k < len; k++) {
        uint64_t at = ((uint64_t)o * len + k) * inner + i;
        if (is_float(&x)) {
          acc32 += (float)v[at];
          v[at] = (double)acc32;
        } else {
          acc += v[at];
          v[at] = acc;
        }
      }
    }
  return store(out_of(a, n), v, x.numel);
}

/* var.correction_out(self, dim?, correction?, keepdim, out) and var.out(self, dim?, unbiased,
 * keepdim, out): sum((x - mean)^2) / (n - correction) per group; for a float32 out tensor the
 * sums and the mean in float32 and the division by the double n - correction (NaN when that is
 * not positive), as ExecuTorch's portable kernel; in double otherwise */
static int var_op(uint32_t op, const uint32_t *a, uint32_t n) {
  tview x, o;
  double *v = load(val(a, n, 0), &x);
  if (!v || view_of(out_of(a, n), &o)) return -1;
  double c;
  if (op == OP_VAR_CORRECTION) {
    const value_rec *cv = val(a, n, 2);
    c = cv && cv->kind != V_NONE ? scalar(cv) : 1.0;
  } else {
    c = ival(val(a, n, 2)) ? 1.0 : 0.0;
  }
  uint32_t nd = 0, mask = 0, groups = 1, per = 1;
  const int64_t *dims = list(val(a, n, 1), &nd);
  if (reduced_dims(dims, nd, &x, &mask, &groups, &per)) return -1;
  if (groups != o.numel) return fail("var: the out tensor does not fit");
  double *mean = 0, *var = 0;
  if (is_float(&o)) {
    float *sum = (float *)scratch(groups * 8u + 8u);
    uint32_t *gi = group_indices(&x, mask);
    var = new_values(groups);
    if (!sum || !gi || !var) return fail("var: larger than the board's work memory");
    float *sum2 = sum + groups;
    for (uint32_t g = 0; g < groups; g++) sum[g] = sum2[g] = 0.0f;
    for (uint32_t i = 0; i < x.numel; i++) sum[gi[i]] += (float)v[i];
    double den = (double)per - c;
    for (uint32_t g = 0; g < groups; g++) sum[g] = sum[g] / (float)per;
    for (uint32_t i = 0; i < x.numel; i++) {
      float dlt = (float)v[i] - sum[gi[i]];
      sum2[gi[i]] += dlt * dlt;
    }
    for (uint32_t g = 0; g < groups; g++) var[g] = per == 0 || den <= 0.0 ? NAN : (double)sum2[g] / den;
    return store(out_of(a, n), var, groups);
  }
  if (group_variance(v, &x, mask, groups, per, c, &mean, &var)) return fail("var: larger than the board's work memory");
  return store(out_of(a, n), var, groups);
}

/* glu.out(self, dim, out): ExecuTorch's `a * (1 / (1 + exp(-b)))` in the input's floating type
 * (float for any but float64: expf) */
static int glu_op(const uint32_t *a, uint32_t n) {
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

/* fill.Scalar_out / fill.Tensor_out / zeros.out / ones.out / scalar_tensor.out: one value
 * everywhere */
static int fill_op(uint32_t op, const uint32_t *a, uint32_t n) {
  tview o;
  if (view_of(out_of(a, n), &o)) return -1;
  double value = 0.0;
  if (op == OP_ONES) value = 1.0;
  if (op == OP_FILL) value = scalar(val(a, n, 1));
  if (op == OP_SCALAR_TENSOR) value = scalar(val(a, n, 0));
  if (op == OP_FILL_TENSOR) {
    tview t;
    double *tv = load(val(a, n, 1), &t);
    if (!tv) return -1;
    if (t.numel == 0) return fail("fill: the value is an empty tensor");
    value = tv[0];
  }
  double *r = new_values(o.numel);
  if (!r) return -1;
  for (uint32_t i = 0; i < o.numel; i++) r[i] = value;
  return store(out_of(a, n), r, o.numel);
}

/* arange.start_out(start, end, step, out) and arange.out(end, out): start + i * step */
static int arange_op(const uint32_t *a, uint32_t n) {
  tview o;
  if (view_of(out_of(a, n), &o)) return -1;
  double start = 0.0, end, stp = 1.0;
  if (n >= 5) {
    start = scalar(val(a, n, 0));
    end = scalar(val(a, n, 1));
    stp = scalar(val(a, n, 2));
  } else {
    end = scalar(val(a, n, 0));
  }
  if (!isfinite(start) || !isfinite(end) || !isfinite(stp) || stp == 0.0) return fail("arange: no finite length");
  double len = ceil((end - start) / stp);
  if (len < 0.0) len = 0.0;
  if (len != (double)o.numel) return fail("arange: the out tensor does not hold it");
  double *r = new_values(o.numel);
  if (!r) return -1;
  for (uint32_t i = 0; i < o.numel; i++) r[i] = start + (double)i * stp;
  return store(out_of(a, n), r, o.numel);
}

/* repeat.out(self, repeats, out): tiled, leading repeats adding dims */
static int repeat_op(const uint32_t *a, uint32_t n) {
  tview x, o;
  double *v = load(val(a, n, 0), &x);
  if (!v || view_of(out_of(a, n), &o)) return -1;
  uint32_t nr;
  list(val(a, n, 1), &nr);
  if (nr < x.rank || o.rank != nr || nr > 8) return fail("repeat: the repeats do not fit");
  int32_t in_shape[8];
  int64_t st[8], s = 1;
  uint32_t lead = nr - x.rank;
  for (uint32_t d = 0; d < nr; d++) in_shape[d] = d < lead ? 1 : x.size[d - lead];
  for (int32_t d = (int32_t)nr - 1; d >= 0; d--) {
    st[d] = s;
    s *= in_shape[d];
  }
  double *r = new_values(o.numel);
  if (!r) return -1;
  uint32_t idx[8] = {0};
  for (uint32_t i = 0; i < o.numel; i++) {
    int64_t at = 0;
    for (uint32_t d = 0; d < nr; d++) at += (int64_t)(idx[d] % (uint32_t)(in_shape[d] ? in_shape[d] : 1)) * st[d];
    r[i] = v[at];
    for (int32_t d = (int32_t)nr - 1; d >= 0; d--) {
      if (++idx[d] < (uint32_t)o.size[d]) break;
      idx[d] = 0;
    }
  }
  return store(out_of(a, n), r, o.numel);
}

static int64_t rem_euclid(int64_t a, int64_t m) {
  if (m <= 0) return 0;
  int64_t r = a % m;
  return r < 0 ? r + m : r;
}

/* roll.out(self, shifts, dims, out): no dims rolls the flattened tensor */
static int roll_op(const uint32_t *a, uint32_t n) {
  tview x;
  double *v = load(val(a, n, 0), &x);
  if (!v) return -1;
  uint32_t ns, nd;
  const int64_t *shifts = list(val(a, n, 1), &ns), *dims = list(val(a, n, 2), &nd);
  double *r = new_values(x.numel);
  if (!r) return -1;
  if (nd == 0) {
    int64_t sft = rem_euclid(ns ? shifts[0] : 0, x.numel ? x.numel : 1);
    for (uint32_t i = 0; i < x.numel; i++) r[i] = v[((int64_t)i + x.numel - sft) % (x.numel ? x.numel : 1)];
    return store(out_of(a, n), r, x.numel);
  }
  int64_t by[8] = {0}, st[8], s = 1;
  for (uint32_t k = 0; k < ns && k < nd; k++) {
    uint32_t d = 0;
    if (dim_of(dims[k], x.rank, &d)) return -1;
    by[d] += shifts[k];
  }
  for (int32_t d = (int32_t)x.rank - 1; d >= 0; d--) {
    st[d] = s;
    s *= x.size[d];
  }
  uint32_t idx[8] = {0};
  for (uint32_t i = 0; i < x.numel; i++) {
    int64_t at = 0;
    for (uint32_t d = 0; d < x.rank; d++) at += rem_euclid((int64_t)idx[d] - by[d], x.size[d]) * st[d];
    r[i] = v[at];
    next_index(&x, idx);
  }
  return store(out_of(a, n), r, x.numel);
}

/* stack.out(tensors, dim, out): equal shapes joined along a new dim */
static int stack_op(const uint32_t *a, uint32_t n) {
  const value_rec *l = val(a, n, 0);
  tview o;
  if (!l || l->kind != V_TENSOR_LIST || l->off == 0 || l->off > 64) return fail("stack: 1 to 64 tensors");
  if (view_of(out_of(a, n), &o)) return -1;
  const uint32_t *items = (const uint32_t *)(image + l->u.t.sizes_off);
  tview t[64];
  double *tv[64];
  for (uint32_t k = 0; k < l->off; k++) {
    tv[k] = load(value_at(items[k]), &t[k]);
    if (!tv[k]) return -1;
    if (t[k].rank != t[0].rank || memcmp(t[k].size, t[0].size, 4u * t[0].rank)) return fail("stack: tensors of different shapes");
  }
  uint32_t d = 0;
  if (dim_of(ival(val(a, n, 1)), t[0].rank + 1u, &d)) return -1;
  uint32_t outer = product(t[0].size, 0, d), inner = product(t[0].size, d, t[0].rank), c = 0;
  double *r = new_values(o.numel);
  if (!r) return -1;
  for (uint32_t q = 0; q < outer; q++)
    for (uint32_t k = 0; k < l->off; k++)
      for (uint32_t i = 0; i < inner; i++) {
        if (c >= o.numel) return fail("stack: larger than the out tensor");
        r[c++] = tv[k][(uint64_t)q * inner + i];
      }
  return store(out_of(a, n), r, c);
}

/* tril.out(self, diagonal, out): zero above the diagonal of the last two dims */
static int tril_op(const uint32_t *a, uint32_t n) {
  tview x;
  double *v = load(val(a, n, 0), &x);
  if (!v) return -1;
  if (x.rank < 2) return fail("tril: fewer than 2 dims");
  int64_t diag = ival(val(a, n, 1));
  uint32_t rows = (uint32_t)x.size[x.rank - 2], cols = (uint32_t)x.size[x.rank - 1];
  for (uint32_t i = 0; i < x.numel && cols && rows; i++) {
    int64_t rr = (int64_t)((i / cols) % rows), cc = (int64_t)(i % cols);
    if (cc - rr > diag) v[i] = 0.0;
  }
  return store(out_of(a, n), v, x.numel);
}

/* unbind_copy.int_out(self, dim, out[]): each entry of dim a tensor of its own */
static int unbind_op(const uint32_t *a, uint32_t n) {
  tview x;
  double *v = load(val(a, n, 0), &x);
  uint32_t d = 0;
  if (!v || dim_of(ival(val(a, n, 1)), x.rank, &d)) return -1;
  const value_rec *l = n >= 2 ? val(a, n, n - 2) : 0;
  if (!l || l->kind != V_TENSOR_LIST || l->off != (uint32_t)x.size[d]) return fail("unbind_copy: outputs do not match the dim");
  const uint32_t *items = (const uint32_t *)(image + l->u.t.sizes_off);
  uint32_t outer = product(x.size, 0, d), inner = product(x.size, d + 1, x.rank), len = (uint32_t)x.size[d];
  for (uint32_t k = 0; k < len; k++) {
    double *r = new_values(outer * inner);
    if (!r) return -1;
    uint32_t c = 0;
    for (uint32_t o = 0; o < outer; o++)
      for (uint32_t i = 0; i < inner; i++) r[c++] = v[((uint64_t)o * len + k) * inner + i];
    if (store(value_at(items[k]), r, c)) return -1;
  }
  return 0;
}

/* rsub.Scalar_out(self, other, alpha, out): other - alpha * self; floor_divide.out: floor(a / b);
 * both as the host's `math::binary` (float32 operands for a float32 out) */
static int rsub_floor_op(uint32_t op, const uint32_t *a, uint32_t n) {
  operand x, y;
  tview o;
  if (operand_of(val(a, n, 0), &x) || operand_of(val(a, n, 1), &y) || view_of(out_of(a, n), &o))
    return -1;
  double alpha = op == OP_RSUB ? scalar(val(a, n, 2)) : 1.0;
  uint32_t *ix = broadcast_index(&x.t, &o), *iy = ix ? broadcast_index(&y.t, &o) : 0;
  double *r = iy ? new_values(o.numel) : 0;
  if (!r) return -1;
  for (uint32_t i = 0; i < o.numel; i++) {
    double p = x.v[ix[i]], q = y.v[iy[i]];
    if (is_float(&o)) {
      p = (double)(float)p;
      q = (double)(float)q;
    }
    double e = op == OP_RSUB ? q - alpha * p : floor(p / q);
    r[i] = is_float(&o) ? (double)(float)e : e;
  }
  return store(out_of(a, n), r, o.numel);
}

/* mean.dtype_out(self, dtype?, out): every element, float32 sum */
static int mean_all_op(const uint32_t *a, uint32_t n) {
  tview x;
  double *v = load(val(a, n, 0), &x);
  if (!v) return -1;
  float s = -0.0f;
  for (uint32_t i = 0; i < x.numel; i++) s += (float)v[i];
  double m = (double)(s / (float)(x.numel ? x.numel : 1u));
  return store(out_of(a, n), &m, 1);
}

/* elu.out(self, alpha, scale, input_scale, out): ExecuTorch's
 * `x <= 0 ? expm1(x * input_scale) * (alpha * scale) : x * scale` in the tensor's type */
static int elu_op(const uint32_t *a, uint32_t n) {
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

/* ---- advanced indexing and copies into existing tensors ---- */

/* A tensor view of a shape alone (for broadcasting indices against it). */
static void shape_view(tview *t, const int32_t *size, uint32_t rank) {
  memset(t, 0, sizeof *t);
  t->rank = rank;
  t->numel = 1;
  for (uint32_t d = 0; d < rank; d++) {
    t->size[d] = size[d];
    t->numel *= (uint32_t)size[d];
  }
}

/* Advanced indexing of a tensor of `x`'s shape by the optional index tensors of `list` (broadcast
 * together; an absent entry keeps its dim), as the host's `indexed_positions`: the result's
 * shape and, per result element, its flat (logical) position in `x`. */
static int indexed_positions(const tview *x, const value_rec *l, tview *out, uint32_t **positions) {
  if (!l || l->kind != V_TENSOR_LIST) return fail("index: the indices are not a tensor list");
  const uint32_t *items = (const uint32_t *)(image + l->u.t.sizes_off);
  uint32_t rank = x->rank, nt = 0, dims[8];
  if (l->off > rank) return fail("index: more indices than dims");
  tview it[8];
  double *iv[8];
  for (uint32_t d = 0; d < l->off; d++) {
    if (items[d] == 0xFFFFFFFFu) continue;
    const value_rec *v = value_at(items[d]);
    if (!v || v->kind != V_TENSOR) continue;
    iv[nt] = load(v, &it[nt]);
    if (!iv[nt]) return -1;
    dims[nt++] = d;
  }
  if (nt == 0) return fail("index: no index tensor");
  uint32_t first = dims[0], last = dims[nt - 1];
  int consecutive = nt == last - first + 1;
  int32_t b[8];
  uint32_t brank = 0;
  for (uint32_t k = 0; k < nt; k++) { /* broadcast the index shapes, right-aligned */
    uint32_t r = it[k].rank > brank ? it[k].rank : brank;
    if (r > 8) return fail("index: indices of more than 8 dims");
    int32_t nb[8];
    for (uint32_t q = 0; q < r; q++) {
      int32_t a1 = q + brank >= r ? b[q + brank - r] : 1;
      int32_t a2 = q + it[k].rank >= r ? it[k].size[q + it[k].rank - r] : 1;
      if (a1 != a2 && a1 != 1 && a2 != 1) return fail("index: index tensors do not broadcast");
      nb[q] = a1 == 1 ? a2 : a1;
    }
    memcpy(b, nb, sizeof(int32_t) * r);
    brank = r;
  }
  uint32_t before[8], after[8], nbefore = 0, nafter = 0;
  for (uint32_t d = 0; d < rank; d++) {
    int indexed = 0;
    for (uint32_t k = 0; k < nt; k++) indexed |= dims[k] == d;
    if (indexed) continue;
    if (consecutive && d < first)
      before[nbefore++] = d;
    else
      after[nafter++] = d;
  }
  int32_t oshape[8];
  uint32_t orank = nbefore + brank + nafter;
  if (orank > 8) return fail("index: a result of more than 8 dims");
  for (uint32_t k = 0; k < nbefore; k++) oshape[k] = x->size[before[k]];
  for (uint32_t k = 0; k < brank; k++) oshape[nbefore + k] = b[k];
  for (uint32_t k = 0; k < nafter; k++) oshape[nbefore + brank + k] = x->size[after[k]];
  shape_view(out, oshape, orank);
  tview bt;
  shape_view(&bt, b, brank);
  uint32_t *map[8];
  for (uint32_t k = 0; k < nt; k++) {
    map[k] = broadcast_index(&it[k], &bt);
    if (!map[k]) return -1;
  }
  int64_t st[8], bst[8], s = 1;
  for (int32_t d = (int32_t)rank - 1; d >= 0; d--) {
    st[d] = s;
    s *= x->size[d];
  }
  s = 1;
  for (int32_t d = (int32_t)brank - 1; d >= 0; d--) {
    bst[d] = s;
    s *= b[d];
  }
  uint32_t *pos = (uint32_t *)scratch(out->numel * 4u + 4u);
  if (!pos) return fail("index: larger than the board's work memory");
  uint32_t idx[8] = {0};
  for (uint32_t i = 0; i < out->numel; i++) {
    int64_t flat_b = 0, at = 0;
    for (uint32_t k = 0; k < brank; k++) flat_b += (int64_t)idx[nbefore + k] * bst[k];
    for (uint32_t k = 0; k < nbefore; k++) at += (int64_t)idx[k] * st[before[k]];
    for (uint32_t k = 0; k < nafter; k++) at += (int64_t)idx[nbefore + brank + k] * st[after[k]];
    for (uint32_t k = 0; k < nt; k++) {
      int64_t len = x->size[dims[k]], c = (int64_t)iv[k][map[k][flat_b]];
      if (c < 0) c += len;
      if (c < 0 || c >= len) return fail("index: an index out of range");
      at += c * st[dims[k]];
    }
    pos[i] = (uint32_t)at;
    for (int32_t d = (int32_t)orank - 1; d >= 0; d--) {
      if (++idx[d] < (uint32_t)out->size[d]) break;
      idx[d] = 0;
    }
  }
  *positions = pos;
  return 0;
}

/* index.Tensor_out(self, indices, out) */
static int index_op(const uint32_t *a, uint32_t n) {
  tview x, shape;
  uint32_t *pos;
  double *v = load(val(a, n, 0), &x);
  if (!v || indexed_positions(&x, val(a, n, 1), &shape, &pos)) return -1;
  double *r = new_values(shape.numel);
  if (!r) return -1;
  for (uint32_t i = 0; i < shape.numel; i++) r[i] = v[pos[i]];
  return store(out_of(a, n), r, shape.numel);
}

/* Stores `vals` into argument `k` and into the returned value (the last argument) when that is
 * another tensor: what an in-place call writes. */
static int store_in_place(const uint32_t *a, uint32_t n, uint32_t k, const double *vals, uint32_t count) {
  if (store(val(a, n, k), vals, count)) return -1;
  const value_rec *ret = n >= 1 ? val(a, n, n - 1) : 0;
  if (ret && ret != val(a, n, k) && ret->kind == V_TENSOR) return store(ret, vals, count);
  return 0;
}

/* index_put.out(self, indices, values, accumulate, out) and index_put_(self, indices, values,
 * accumulate): `values` broadcast to the indexed shape written (or added) where self[indices]
 * reads */
static int index_put_op(uint32_t op, const uint32_t *a, uint32_t n) {
  tview x, shape, vt;
  uint32_t *pos;
  double *v = load(val(a, n, 0), &x), *vals = v ? load(val(a, n, 2), &vt) : 0;
  if (!vals || indexed_positions(&x, val(a, n, 1), &shape, &pos)) return -1;
  uint32_t *map = broadcast_index(&vt, &shape);
  if (!map) return -1;
  int accumulate = ival(val(a, n, 3)) != 0;
  for (uint32_t k = 0; k < shape.numel; k++) {
    if (pos[k] >= x.numel) continue;
    v[pos[k]] = accumulate ? v[pos[k]] + vals[map[k]] : vals[map[k]];
  }
  if (op == OP_INDEX_PUT) return store(out_of(a, n), v, x.numel);
  return store_in_place(a, n, 0, v, x.numel);
}

/* copy_(self, src, non_blocking) in place and copy.out(self, src, non_blocking, out): `src`
 * broadcast to self's (the out tensor's) shape, converted to its type */
static int copy_into_op(uint32_t op, const uint32_t *a, uint32_t n) {
  tview src, dst;
  double *v = load(val(a, n, 1), &src);
  const value_rec *target = op == OP_COPY_IN_PLACE ? val(a, n, 0) : out_of(a, n);
  if (!v || view_of(target, &dst)) return -1;
  uint32_t *map = broadcast_index(&src, &dst);
  double *r = map ? new_values(dst.numel) : 0;
  if (!r) return -1;
  for (uint32_t i = 0; i < dst.numel; i++) r[i] = v[map[i]];
  if (op == OP_COPY_OUT) return store(target, r, dst.numel);
  return store_in_place(a, n, 0, r, dst.numel);
}

/* ---- gathers and scatters along a dim ---- */

static int wrap_index(double i, int32_t len, int64_t *out) {
  int64_t j = (int64_t)i;
  if (j < 0) j += len;
  if (j < 0 || j >= len) return fail("an index out of range");
  *out = j;
  return 0;
}

/* gather.out(self, dim, index, sparse_grad, out): out[..i..] = self[..index[..i..]..] */
static int gather_op(const uint32_t *a, uint32_t n) {
  tview x, ix;
  double *v = load(val(a, n, 0), &x), *iv = v ? load(val(a, n, 2), &ix) : 0;
  uint32_t d = 0;
  if (!iv || dim_of(ival(val(a, n, 1)), x.rank, &d)) return -1;
  if (ix.rank != x.rank) return fail("gather: index and self ranks differ");
  int64_t st[8], s = 1;
  for (int32_t e = (int32_t)x.rank - 1; e >= 0; e--) {
    st[e] = s;
    s *= x.size[e];
  }
  double *r = new_values(ix.numel);
  if (!r) return -1;
  uint32_t idx[8] = {0};
  for (uint32_t k = 0; k < ix.numel; k++) {
    int64_t at = 0;
    for (uint32_t e = 0; e < x.rank; e++) {
      int64_t c = idx[e];
      if (e == d && wrap_index(iv[k], x.size[d], &c)) return -1;
      at += c * st[e];
    }
    if (at >= (int64_t)x.numel) return fail("gather: reads outside the input");
    r[k] = v[at];
    next_index(&ix, idx);
  }
  return store(out_of(a, n), r, ix.numel);
}

/* scatter.src_out / scatter.value_out / scatter_add.out(self, dim, index, src|value, out) */
static int scatter_op(uint32_t op, const uint32_t *a, uint32_t n) {
  tview x, ix, sv;
  double *v = load(val(a, n, 0), &x), *iv = v ? load(val(a, n, 2), &ix) : 0;
  uint32_t d = 0;
  if (!iv || dim_of(ival(val(a, n, 1)), x.rank, &d)) return -1;
  const value_rec *srcv = val(a, n, 3);
  double *src = 0, value = 0.0;
  int64_t sst[8] = {0};
  if (srcv && srcv->kind == V_TENSOR) {
    src = load(srcv, &sv);
    if (!src) return -1;
    int64_t s = 1;
    for (int32_t e = (int32_t)sv.rank - 1; e >= 0; e--) {
      sst[e] = s;
      s *= sv.size[e];
    }
  } else {
    value = scalar(srcv);
  }
  int64_t st[8], s = 1;
  for (int32_t e = (int32_t)x.rank - 1; e >= 0; e--) {
    st[e] = s;
    s *= x.size[e];
  }
  uint32_t idx[8] = {0};
  for (uint32_t k = 0; k < ix.numel; k++) {
    int64_t at = 0, from = 0;
    for (uint32_t e = 0; e < ix.rank; e++) {
      int64_t c = idx[e];
      if (e == d && wrap_index(iv[k], x.size[d], &c)) return -1;
      at += c * (e < x.rank ? st[e] : 0);
      from += (int64_t)idx[e] * (src && e < sv.rank ? sst[e] : 0);
    }
    double sval = src ? (from < (int64_t)sv.numel ? src[from] : NAN) : value;
    if (at < (int64_t)x.numel && (!src || from < (int64_t)sv.numel))
      v[at] = op == OP_SCATTER_ADD ? v[at] + sval : sval;
    next_index(&ix, idx);
  }
  return store(out_of(a, n), v, x.numel);
}

/* diagonal_copy.out(self, offset, dim1, dim2, out) */
static int diagonal_op(const uint32_t *a, uint32_t n) {
  tview x;
  double *v = load(val(a, n, 0), &x);
  uint32_t d1 = 0, d2 = 0;
  if (!v || dim_of(ival(val(a, n, 2)), x.rank, &d1) || dim_of(ival(val(a, n, 3)), x.rank, &d2)) return -1;
  int64_t offset = ival(val(a, n, 1));
  int64_t r0 = offset >= 0 ? 0 : -offset, c0 = offset >= 0 ? offset : 0;
  int64_t n1 = x.size[d1] - r0, n2 = x.size[d2] - c0;
  if (n1 < 0) n1 = 0;
  if (n2 < 0) n2 = 0;
  int64_t len = n1 < n2 ? n1 : n2;
  int64_t st[8], s = 1;
  for (int32_t e = (int32_t)x.rank - 1; e >= 0; e--) {
    st[e] = s;
    s *= x.size[e];
  }
  uint32_t kept[8], nk = 0;
  int32_t shape[8];
  for (uint32_t e = 0; e < x.rank; e++)
    if (e != d1 && e != d2) {
      kept[nk] = e;
      shape[nk++] = x.size[e];
    }
  shape[nk] = (int32_t)len;
  tview out;
  shape_view(&out, shape, nk + 1);
  double *r = new_values(out.numel);
  if (!r) return -1;
  uint32_t idx[8] = {0};
  for (uint32_t i = 0; i < out.numel; i++) {
    int64_t k = idx[nk], at = (r0 + k) * st[d1] + (c0 + k) * st[d2];
    for (uint32_t e = 0; e < nk; e++) at += (int64_t)idx[e] * st[kept[e]];
    r[i] = v[at];
    for (int32_t e = (int32_t)nk; e >= 0; e--) {
      if (++idx[e] < (uint32_t)out.size[e]) break;
      idx[e] = 0;
    }
  }
  return store(out_of(a, n), r, out.numel);
}

/* div.out_mode(self, other, rounding_mode, out): "trunc" or "floor" rounds the quotient, none
 * is true division (the host's `math::binary`) */
static int div_mode_op(const uint32_t *a, uint32_t n) {
  operand x, y;
  tview o;
  if (operand_of(val(a, n, 0), &x) || operand_of(val(a, n, 1), &y) || view_of(out_of(a, n), &o))
    return -1;
  const value_rec *m = val(a, n, 2);
  int trunc_mode = is_string(m, "trunc"), floor_mode = is_string(m, "floor");
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
    double e = p / q;
    if (trunc_mode) e = trunc(e);
    if (floor_mode) e = floor(e);
    r[i] = is_float(&o) ? (double)(float)e : e;
  }
  return store(out_of(a, n), r, o.numel);
}

/* masked_fill.Scalar_out(self, mask, value, out): value wherever the broadcast mask is set */
static int masked_fill_op(const uint32_t *a, uint32_t n) {
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

/* ---- pixel shuffles, padding modes, per-line extremes ---- */

/* pixel_shuffle.out(self, r, out): [..., C*r*r, H, W] -> [..., C, H*r, W*r]; pixel_unshuffle the
 * inverse */
static int pixel_shuffle_op(uint32_t op, const uint32_t *a, uint32_t n) {
  tview x, o;
  double *v = load(val(a, n, 0), &x);
  if (!v || view_of(out_of(a, n), &o)) return -1;
  int64_t r = ival(val(a, n, 1));
  uint32_t rank = x.rank;
  if (r <= 0 || rank < 3 || o.rank != rank || o.numel != x.numel) return fail("pixel shuffle: sizes do not fit");
  int64_t st[8], s = 1;
  for (int32_t d = (int32_t)rank - 1; d >= 0; d--) {
    st[d] = s;
    s *= x.size[d];
  }
  double *out = new_values(o.numel);
  if (!out) return -1;
  uint32_t idx[8] = {0};
  for (uint32_t i = 0; i < o.numel; i++) {
    int64_t from[8];
    for (uint32_t d = 0; d + 3 < rank; d++) from[d] = idx[d];
    int64_t oc = idx[rank - 3], oh = idx[rank - 2], ow = idx[rank - 1];
    if (op == OP_PIXEL_SHUFFLE) {
      from[rank - 3] = oc * r * r + (oh % r) * r + ow % r;
      from[rank - 2] = oh / r;
      from[rank - 1] = ow / r;
    } else {
      from[rank - 3] = oc / (r * r);
      from[rank - 2] = oh * r + (oc % (r * r)) / r;
      from[rank - 1] = ow * r + oc % r;
    }
    int64_t at = 0;
    for (uint32_t d = 0; d < rank; d++) {
      if (from[d] < 0 || from[d] >= x.size[d]) return fail("pixel shuffle: reads outside the input");
      at += from[d] * st[d];
    }
    out[i] = v[at];
    for (int32_t d = (int32_t)rank - 1; d >= 0; d--) {
      if (++idx[d] < (uint32_t)o.size[d]) break;
      idx[d] = 0;
    }
  }
  return store(out_of(a, n), out, o.numel);
}

/* reflection_pad{1,2,3}d / replication_pad{1,2,3}d.out(self, padding, out): the last k dims */
static int pad_mode_op(uint32_t op, const uint32_t *a, uint32_t n) {
  tview x, o;
  double *v = load(val(a, n, 0), &x);
  if (!v || view_of(out_of(a, n), &o)) return -1;
  int reflect = op == OP_REFLECTION_PAD1D || op == OP_REFLECTION_PAD2D || op == OP_REFLECTION_PAD3D;
  uint32_t k = op == OP_REFLECTION_PAD1D || op == OP_REPLICATION_PAD1D   ? 1u
               : op == OP_REFLECTION_PAD2D || op == OP_REPLICATION_PAD2D ? 2u
                                                                       : 3u,
           np;
  const int64_t *pad = list(val(a, n, 1), &np);
  if (np != 2 * k || x.rank < k || o.rank != x.rank) return fail("pad: padding does not fit the dims");
  int64_t before[8] = {0};
  for (uint32_t j = 0; j < k; j++) {
    uint32_t d = x.rank - 1 - j;
    int64_t b = pad[2 * j], e = pad[2 * j + 1], len = x.size[d];
    if (b < 0 || e < 0 || len == 0 || (reflect && (b >= len || e >= len))) return fail("pad: padding larger than the dim");
    if (o.size[d] != len + b + e) return fail("pad: the out tensor does not fit");
    before[d] = b;
  }
  int64_t st[8], s = 1;
  for (int32_t d = (int32_t)x.rank - 1; d >= 0; d--) {
    st[d] = s;
    s *= x.size[d];
  }
  double *out = new_values(o.numel);
  if (!out) return -1;
  uint32_t idx[8] = {0};
  for (uint32_t i = 0; i < o.numel; i++) {
    int64_t at = 0;
    for (uint32_t d = 0; d < x.rank; d++) {
      int64_t len = x.size[d], p = (int64_t)idx[d] - before[d], src = p;
      if (d + k >= x.rank) {
        if (reflect)
          src = p < 0 ? -p : p >= len ? 2 * (len - 1) - p : p;
        src = src < 0 ? 0 : src > len - 1 ? len - 1 : src;
      }
      at += src * st[d];
    }
    out[i] = v[at];
    next_index(&o, idx);
  }
  return store(out_of(a, n), out, o.numel);
}

/* max.dim_max / min.dim_min(self, dim, keepdim, values, indices): each line's extreme and its
 * first index (a NaN wins) */
static int extreme_dim_op(uint32_t op, const uint32_t *a, uint32_t n) {
  tview x;
  double *v = load(val(a, n, 0), &x);
  uint32_t d = 0;
  if (!v || dim_of(ival(val(a, n, 1)), x.rank, &d)) return -1;
  uint32_t outer = product(x.size, 0, d), len = (uint32_t)x.size[d], inner = product(x.size, d + 1, x.rank), c = 0;
  double *vals = new_values(outer * inner), *idxs = new_values(outer * inner);
  if (!vals || !idxs) return -1;
  for (uint32_t o = 0; o < outer; o++)
    for (uint32_t i = 0; i < inner; i++) {
      uint32_t best = 0;
      for (uint32_t k = 0; k < len; k++) {
        double e = v[((uint64_t)o * len + k) * inner + i], b = v[((uint64_t)o * len + best) * inner + i];
        if (b != b) break;
        if (e != e || (op == OP_MAX_DIM ? e > b : e < b)) best = k;
      }
      vals[c] = len ? v[((uint64_t)o * len + best) * inner + i] : 0.0;
      idxs[c++] = (double)best;
    }
  if (store(val(a, n, 3), vals, c)) return -1;
  return store(val(a, n, 4), idxs, c);
}

/* var_mean.correction_out(self, dim?, correction?, keepdim, var, mean) */
static int var_mean_op(const uint32_t *a, uint32_t n) {
  tview x;
  double *v = load(val(a, n, 0), &x);
  if (!v) return -1;
  const value_rec *cv = val(a, n, 2);
  double c = cv && cv->kind != V_NONE ? scalar(cv) : 1.0;
  uint32_t nd = 0, mask = 0, groups = 1, per = 1;
  const int64_t *dims = list(val(a, n, 1), &nd);
  if (reduced_dims(dims, nd, &x, &mask, &groups, &per)) return -1;
  double *mean = 0, *var = 0;
  if (group_variance(v, &x, mask, groups, per, c, &mean, &var))
    return fail("var_mean: larger than the board's work memory");
  if (store(val(a, n, 4), var, groups)) return -1;
  return store(val(a, n, 5), mean, groups);
}

/* clamp.Tensor_out(self, min?, max?, out): bounds as tensors, all broadcast */
static int clamp_tensor_op(const uint32_t *a, uint32_t n) {
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

/* narrow_copy.out(self, dim, start, length, out) */
static int narrow_op(const uint32_t *a, uint32_t n) {
  tview x;
  double *v = load(val(a, n, 0), &x);
  uint32_t d = 0;
  if (!v || dim_of(ival(val(a, n, 1)), x.rank, &d)) return -1;
  int64_t len = x.size[d], start = ival(val(a, n, 2)), length = ival(val(a, n, 3));
  if (start < 0) start += len;
  if (start < 0 || length < 0 || start + length > len) return fail("narrow_copy: outside the dim");
  uint32_t outer = product(x.size, 0, d), inner = product(x.size, d + 1, x.rank), c = 0;
  double *r = new_values(outer * (uint32_t)length * inner);
  if (!r) return -1;
  for (uint32_t o = 0; o < outer; o++)
    for (int64_t k = start; k < start + length; k++)
      for (uint32_t i = 0; i < inner; i++) r[c++] = v[((int64_t)o * len + k) * inner + i];
  return store(out_of(a, n), r, c);
}

/* select_scatter.out(self, src, dim, index, out) and slice_scatter.out(self, src, dim, start?,
 * end?, step, out): self with src written into the picked entries of dim */
static int scatter_dim_op(uint32_t op, const uint32_t *a, uint32_t n) {
  tview x, sv;
  double *v = load(val(a, n, 0), &x), *src = v ? load(val(a, n, 1), &sv) : 0;
  uint32_t d = 0;
  if (!src || dim_of(ival(val(a, n, 2)), x.rank, &d)) return -1;
  int64_t len = x.size[d], start, stp = 1, count;
  if (op == OP_SELECT_SCATTER) {
    start = ival(val(a, n, 3));
    if (start < 0) start += len;
    if (start < 0 || start >= len || sv.rank + 1 != x.rank) return fail("select_scatter: src or index does not fit");
    count = 1;
  } else {
    const value_rec *sr = val(a, n, 3), *er = val(a, n, 4);
    start = sr && sr->kind != V_NONE ? ival(sr) : 0;
    int64_t end = er && er->kind != V_NONE ? ival(er) : len;
    if (start < 0) start += len;
    if (end < 0) end += len;
    start = start < 0 ? 0 : start > len ? len : start;
    end = end < 0 ? 0 : end > len ? len : end;
    stp = ival(val(a, n, 5));
    if (stp < 1) stp = 1;
    count = ((end - start > 0 ? end - start : 0) + stp - 1) / stp;
    if (sv.rank != x.rank || sv.size[d] != count) return fail("slice_scatter: src does not fit the slice");
  }
  uint32_t outer = product(x.size, 0, d), inner = product(x.size, d + 1, x.rank), c = 0;
  for (uint32_t o = 0; o < outer; o++)
    for (int64_t k = 0; k < count; k++)
      for (uint32_t i = 0; i < inner; i++) {
        if (c >= sv.numel) return fail("scatter: src does not fit");
        v[((int64_t)o * len + start + k * stp) * inner + i] = src[c++];
      }
  return store(out_of(a, n), v, x.numel);
}

/* native_group_norm.out(input, weight?, bias?, N, C, HxW, group, eps, out, mean, rstd), in the
 * host's float32 steps */
static int group_norm_op(const uint32_t *a, uint32_t n) {
  tview x, tw, tb;
  double *xv = load(val(a, n, 0), &x);
  if (!xv) return -1;
  const value_rec *wr = val(a, n, 1), *br = val(a, n, 2);
  double *wv = wr && wr->kind == V_TENSOR ? load(wr, &tw) : 0, *bv = br && br->kind == V_TENSOR ? load(br, &tb) : 0;
  if ((wr && wr->kind == V_TENSOR && !wv) || (br && br->kind == V_TENSOR && !bv)) return -1;
  int64_t N = ival(val(a, n, 3)), C = ival(val(a, n, 4)), HW = ival(val(a, n, 5)), G = ival(val(a, n, 6));
  if (N < 0) N = 0;
  if (C < 0) C = 0;
  if (HW < 0) HW = 0;
  if (G < 1) G = 1;
  float eps = (float)dval(val(a, n, 7));
  if (C % G || (uint64_t)(N * C * HW) != x.numel) return fail("group_norm: sizes do not fit the input");
  int64_t cg = C / G, count = cg * HW;
  double *out = new_values(x.numel), *means = new_values((uint32_t)(N * G)), *rstds = new_values((uint32_t)(N * G));
  if (!out || !means || !rstds) return -1;
  uint32_t q = 0;
  for (int64_t b = 0; b < N; b++)
    for (int64_t g = 0; g < G; g++) {
      int64_t base = (b * C + g * cg) * HW;
      float sum = 0.0f;
      double sq = 0.0;
      for (int64_t k = 0; k < count; k++) {
        float f = (float)xv[base + k];
        sum = sum + f;
        sq = sq + (double)(f * f);
      }
      float nn = (float)(count > 0 ? count : 1), mean = sum / nn, var = (float)sq / nn - mean * mean;
      float rstd = (float)(1.0 / (double)sqrtf(var + eps));
      means[q] = mean;
      rstds[q++] = rstd;
      for (int64_t ch = 0; ch < cg; ch++) {
        int64_t channel = g * cg + ch, at0 = base + ch * HW;
        if (!wv && !bv) {
          for (int64_t k = 0; k < HW; k++) out[at0 + k] = (double)(((float)xv[at0 + k] - mean) * rstd);
        } else {
          float w = wv ? (float)wv[channel] : 1.0f, bb = bv ? (float)bv[channel] : 0.0f;
          float scale = rstd * w, shift = -scale * mean + bb;
          for (int64_t k = 0; k < HW; k++) out[at0 + k] = (double)(scale * (float)xv[at0 + k] + shift);
        }
      }
    }
  if (store(val(a, n, 8), out, x.numel) || store(val(a, n, 9), means, q)) return -1;
  return store(val(a, n, 10), rstds, q);
}

/* logit.out(self, eps?, out): ExecuTorch's `xi = (out type) x`, compared with the double eps and
 * 1 - eps (assigned back rounded), then log(xi / (1 - xi)) in the out type (logf for float32) */
static int logit_op(const uint32_t *a, uint32_t n) {
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
static int pow_scalar_op(const uint32_t *a, uint32_t n) {
  tview e;
  double *v = load(val(a, n, 1), &e);
  tview o;
  if (!v || view_of(out_of(a, n), &o)) return -1;
  double base = scalar(val(a, n, 0));
  for (uint32_t i = 0; i < e.numel; i++)
    v[i] = is_float(&o) ? (double)powf((float)base, (float)v[i]) : pow(base, v[i]);
  return store(out_of(a, n), v, e.numel);
}

/* unfold_copy.out(self, dimension, size, step, out): every window as a new last dim */
static int unfold_op(const uint32_t *a, uint32_t n) {
  tview x, o;
  double *v = load(val(a, n, 0), &x);
  uint32_t d = 0;
  if (!v || view_of(out_of(a, n), &o) || dim_of(ival(val(a, n, 1)), x.rank ? x.rank : 1u, &d)) return -1;
  int64_t size = ival(val(a, n, 2)), stp = ival(val(a, n, 3));
  if (size < 0 || stp <= 0 || (x.rank && size > x.size[d]) || o.rank != x.rank + 1) return fail("unfold_copy: the window does not fit");
  int64_t st[8], s = 1;
  for (int32_t e = (int32_t)x.rank - 1; e >= 0; e--) {
    st[e] = s;
    s *= x.size[e];
  }
  double *r = new_values(o.numel);
  if (!r) return -1;
  uint32_t idx[8] = {0};
  for (uint32_t i = 0; i < o.numel; i++) {
    int64_t at = 0;
    for (uint32_t e = 0; e < x.rank; e++) {
      int64_t c = idx[e];
      if (e == d) c = (int64_t)idx[e] * stp + idx[x.rank];
      at += c * st[e];
    }
    if (at >= (int64_t)x.numel) return fail("unfold_copy: reads outside the input");
    r[i] = v[at];
    next_index(&o, idx);
  }
  return store(out_of(a, n), r, o.numel);
}

/* as_strided_copy.out(self, size, stride, storage_offset?, out): over the logical elements */
static int as_strided_op(const uint32_t *a, uint32_t n) {
  tview x, o;
  double *v = load(val(a, n, 0), &x);
  if (!v || view_of(out_of(a, n), &o)) return -1;
  uint32_t nsz, nst;
  const int64_t *size = list(val(a, n, 1), &nsz), *stride = list(val(a, n, 2), &nst);
  const value_rec *ov = val(a, n, 3);
  int64_t offset = ov && ov->kind == V_INT ? ov->u.i : 0;
  if (nsz != nst || nsz != o.rank || offset < 0) return fail("as_strided_copy: sizes and strides do not fit");
  for (uint32_t d = 0; d < nsz; d++)
    if (size[d] < 0 || stride[d] < 0 || size[d] != o.size[d]) return fail("as_strided_copy: sizes and strides do not fit");
  double *r = new_values(o.numel);
  if (!r) return -1;
  uint32_t idx[8] = {0};
  for (uint32_t i = 0; i < o.numel; i++) {
    int64_t at = offset;
    for (uint32_t d = 0; d < nsz; d++) at += (int64_t)idx[d] * stride[d];
    if (at >= (int64_t)x.numel) return fail("as_strided_copy: a stride reaches past the input");
    r[i] = v[at];
    next_index(&o, idx);
  }
  return store(out_of(a, n), r, o.numel);
}

/* Rust's f64::total_cmp as an integer key: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN */
static int64_t total_key(double x) {
  int64_t k;
  memcpy(&k, &x, 8);
  k ^= (int64_t)(((uint64_t)(k >> 63)) >> 1);
  return k;
}

/* topk.values(self, k, dim, largest, sorted, values, indices): each line's k largest (or
 * smallest), in order, ties by their index */
static int topk_op(const uint32_t *a, uint32_t n) {
  tview x;
  double *v = load(val(a, n, 0), &x);
  uint32_t d = 0;
  if (!v || dim_of(ival(val(a, n, 2)), x.rank, &d)) return -1;
  int64_t k = ival(val(a, n, 1));
  int largest = ival(val(a, n, 3)) != 0;
  uint32_t outer = product(x.size, 0, d), len = (uint32_t)x.size[d], inner = product(x.size, d + 1, x.rank);
  if (k < 0 || k > (int64_t)len) return fail("topk: k is more than the dim");
  double *vals = new_values(outer * (uint32_t)k * inner), *idxs = new_values(outer * (uint32_t)k * inner);
  uint32_t *order = (uint32_t *)scratch(len * 4u + 4u);
  if (!vals || !idxs || !order) return fail("topk: larger than the board's work memory");
  for (uint32_t o = 0; o < outer; o++)
    for (uint32_t i = 0; i < inner; i++) {
      for (uint32_t j = 0; j < len; j++) { /* insertion sort: stable, ties keep index order */
        uint32_t p = j;
        int64_t kj = total_key(v[((uint64_t)o * len + j) * inner + i]);
        while (p > 0) {
          int64_t kp = total_key(v[((uint64_t)o * len + order[p - 1]) * inner + i]);
          int before = largest ? kj > kp : kj < kp;
          if (!before) break;
          order[p] = order[p - 1];
          p--;
        }
        order[p] = j;
      }
      for (int64_t r = 0; r < k; r++) {
        uint64_t at = ((uint64_t)o * (uint64_t)k + (uint64_t)r) * inner + i;
        vals[at] = v[((uint64_t)o * len + order[r]) * inner + i];
        idxs[at] = (double)order[r];
      }
    }
  uint32_t total = outer * (uint32_t)k * inner;
  if (store(val(a, n, 5), vals, total)) return -1;
  return store(val(a, n, 6), idxs, total);
}

/* ---- outputs whose size is known only at run time ---- */

/* Gives the out tensor `o` the sizes a call computed (at most what it was planned for: its
 * first size is kept in the record's spare word) and writes `vals` into its memory row after
 * row, as the portable kernels write whatever the dim order. */
static int write_resized(const value_rec *o, uint32_t rank, const int32_t *sizes, const double *vals, uint32_t count) {
  if (!o || o->kind != V_TENSOR || o->rank != rank || dt_size(o->dtype) == 0) return fail("resize: the out tensor does not fit");
  value_rec *w = (value_rec *)o;
  if (w->reserved[1] == 0) { /* first resize: remember the planned capacity */
    w->reserved[0] = w->u.t.nbytes;
    w->reserved[1] = 1;
  }
  uint64_t need = (uint64_t)count * dt_size(o->dtype);
  if (need > w->reserved[0]) return fail("resize: more elements than the out tensor was planned for");
  int32_t *s = (int32_t *)sizes_of(o);
  for (uint32_t d = 0; d < rank; d++) s[d] = sizes[d];
  w->u.t.numel = count;
  w->u.t.nbytes = (uint32_t)need;
  tview t;
  memset(&t, 0, sizeof t);
  t.p = (uint8_t *)tensor_data(o);
  t.dt = o->dtype;
  if (count && !t.p) return fail("resize: the out tensor has no memory");
  for (uint32_t i = 0; i < count; i++) put(&t, i, vals[i]);
  return 0;
}

/* nonzero.out(self, out): the multi-index of every non-zero element, [count, rank] int64 */
static int nonzero_op(const uint32_t *a, uint32_t n) {
  tview x;
  double *v = load(val(a, n, 0), &x);
  if (!v) return -1;
  double *r = new_values(x.numel * (x.rank ? x.rank : 1u));
  if (!r) return -1;
  uint32_t idx[8] = {0}, c = 0, count = 0;
  for (uint32_t i = 0; i < x.numel; i++) {
    if (v[i] != 0.0) {
      for (uint32_t d = 0; d < x.rank; d++) r[c++] = idx[d];
      count++;
    }
    next_index(&x, idx);
  }
  int32_t sizes[2] = {(int32_t)count, (int32_t)x.rank};
  return write_resized(out_of(a, n), 2, sizes, r, c);
}

/* masked_select.out(self, mask, out): the elements where the mask (both broadcast) is set */
static int masked_select_op(const uint32_t *a, uint32_t n) {
  tview x, m;
  double *v = load(val(a, n, 0), &x), *mv = v ? load(val(a, n, 1), &m) : 0;
  if (!mv) return -1;
  /* the common shape, right-aligned */
  uint32_t rank = x.rank > m.rank ? x.rank : m.rank;
  int32_t shape[8];
  for (uint32_t d = 0; d < rank; d++) {
    int32_t a1 = d + x.rank >= rank ? x.size[d + x.rank - rank] : 1, a2 = d + m.rank >= rank ? m.size[d + m.rank - rank] : 1;
    if (a1 != a2 && a1 != 1 && a2 != 1) return fail("masked_select: the mask does not broadcast");
    shape[d] = a1 == 1 ? a2 : a1;
  }
  tview common;
  shape_view(&common, shape, rank);
  uint32_t *xi = broadcast_index(&x, &common), *mi = xi ? broadcast_index(&m, &common) : 0;
  double *r = mi ? new_values(common.numel) : 0;
  if (!r) return -1;
  uint32_t c = 0;
  for (uint32_t i = 0; i < common.numel; i++)
    if (mv[mi[i]] != 0.0) r[c++] = v[xi[i]];
  int32_t size = (int32_t)c;
  return write_resized(out_of(a, n), 1, &size, r, c);
}

/* repeat_interleave.Tensor_out(repeats, output_size?, out): index i repeated repeats[i] times */
static int repeat_interleave_op(const uint32_t *a, uint32_t n) {
  tview rt;
  double *rv = load(val(a, n, 0), &rt);
  if (!rv) return -1;
  double total = 0.0;
  for (uint32_t i = 0; i < rt.numel; i++) {
    if (rv[i] < 0.0) return fail("repeat_interleave: negative repeats");
    total += rv[i];
  }
  if (total > 16777216.0) return fail("repeat_interleave: too many repeats");
  double *r = new_values((uint32_t)total);
  if (!r) return -1;
  uint32_t c = 0;
  for (uint32_t i = 0; i < rt.numel; i++)
    for (uint32_t k = 0; k < (uint32_t)rv[i]; k++) r[c++] = (double)i;
  int32_t size = (int32_t)c;
  return write_resized(out_of(a, n), 1, &size, r, c);
}

/* masked_scatter.out(self, mask, source, out): source's elements in order where the mask is set */
static int masked_scatter_op(const uint32_t *a, uint32_t n) {
  tview x, m, src;
  double *v = load(val(a, n, 0), &x), *mv = v ? load(val(a, n, 1), &m) : 0, *sv = mv ? load(val(a, n, 2), &src) : 0;
  if (!sv) return -1;
  uint32_t *mi = broadcast_index(&m, &x);
  if (!mi) return -1;
  uint32_t next = 0;
  for (uint32_t i = 0; i < x.numel; i++)
    if (mv[mi[i]] != 0.0) {
      if (next >= src.numel) return fail("masked_scatter: the source has fewer elements than the mask selects");
      v[i] = sv[next++];
    }
  return store(out_of(a, n), v, x.numel);
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
  else if (p != 0.0 && p != 1.0 && !isinf(p)) acc = powf(acc, 1.0f / (float)p);
  return (double)acc;
}

/* _cdist_forward.out(x1[..., P, M], x2[..., R, M], p, compute_mode?, out) and
 * _pdist_forward.out(self[N, M], p, out): distances of rows */
static int distance_op(uint32_t op, const uint32_t *a, uint32_t n) {
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
static int grid_sampler_op(const uint32_t *a, uint32_t n) {
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
static int upsample_aa_op(const uint32_t *a, uint32_t n) {
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

/* _native_batch_norm_legit_no_training.out(input, weight?, bias?, mean, var, momentum, eps, out,
 * save_mean, save_invstd): per channel (x - mean) / sqrt(var + eps), scaled and shifted, in
 * float32 as the host */
static int batch_norm_op(const uint32_t *a, uint32_t n) {
  tview x, tw, tb, tm, tv;
  double *xv = load(val(a, n, 0), &x);
  if (!xv) return -1;
  const value_rec *wr = val(a, n, 1), *br = val(a, n, 2);
  double *wv = wr && wr->kind == V_TENSOR ? load(wr, &tw) : 0, *bv = br && br->kind == V_TENSOR ? load(br, &tb) : 0;
  double *mv = load(val(a, n, 3), &tm), *vv = mv ? load(val(a, n, 4), &tv) : 0;
  if (!vv || (wr && wr->kind == V_TENSOR && !wv) || (br && br->kind == V_TENSOR && !bv)) return -1;
  if (x.rank < 2 || !is_float(&x)) return fail("batch norm: a float input with channels");
  uint32_t c = (uint32_t)x.size[1], inner = product(x.size, 2, x.rank);
  if (tm.numel != c || tv.numel != c || (wv && tw.numel != c) || (bv && tb.numel != c)) return fail("batch norm: statistics do not match the channels");
  float eps = (float)dval(val(a, n, 6));
  for (uint32_t i = 0; i < x.numel; i++) {
    uint32_t ch = (i / (inner ? inner : 1u)) % c;
    float inv = 1.0f / sqrtf((float)vv[ch] + eps);
    float y = ((float)xv[i] - (float)mv[ch]) * inv;
    if (wv) y *= (float)wv[ch];
    if (bv) y += (float)bv[ch];
    xv[i] = (double)y;
  }
  return store(val(a, n, 7), xv, x.numel);
}

/* quantized_decomposed::quantize_per_tensor.out(input, scale, zero_point, quant_min, quant_max,
 * dtype, out): zero_point + nearbyint(x * (1/scale)) in float, clamped, as the host's
 * `quantize_value`; dequantize_per_tensor / _per_channel: (q - zero_point) * scale in double */
static int qd_op(uint32_t op, const uint32_t *a, uint32_t n) {
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

int run_portable(uint32_t op, const uint32_t *a, uint32_t n) {
  switch (op) {
    case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_ATEN_MAXIMUM: case OP_ATEN_MINIMUM:
    case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
      return binary(op, a, n);
    case OP_WHERE: return where_op(a, n);
    case OP_RELU: case OP_SIGMOID: case OP_TANH: case OP_NEG: case OP_ABS: case OP_EXP: case OP_LOG:
    case OP_SQRT: case OP_RSQRT: case OP_RECIPROCAL: case OP_GELU: case OP_LEAKY_RELU: case OP_CLAMP:
      return unary(op, a, n);
    case OP_COPY: return copy_op(a, n);
    case OP_PERMUTE_COPY: case OP_T_COPY: case OP_TRANSPOSE_COPY: return permute_op(op, a, n);
    case OP_EXPAND_COPY: return expand_op(a, n);
    case OP_SLICE_COPY: case OP_SELECT_COPY: return slice_op(op, a, n);
    case OP_CAT: return cat_op(a, n);
    case OP_SPLIT_WITH_SIZES_COPY: return split_op(a, n);
    case OP_FULL: return full_op(a, n);
    case OP_EMBEDDING: return embedding_op(a, n);
    case OP_AVG_POOL2D: return avg_pool_op(a, n);
    case OP_MAX_POOL2D_WITH_INDICES: return max_pool_op(a, n);
    case OP_UPSAMPLE_NEAREST2D: return nearest_op(a, n);
    case OP_UPSAMPLE_BILINEAR2D: return bilinear_op(a, n);
    case OP_FLOAT_SOFTMAX: case OP_LOG_SOFTMAX: return softmax_op(op, a, n);
    case OP_MEAN: case OP_SUM: case OP_AMAX: case OP_AMIN: case OP_ARGMAX: case OP_ARGMIN: case OP_ANY:
    case OP_ANY_ALL: case OP_PROD: case OP_PROD_ALL: case OP_MAX_ALL: case OP_MIN_ALL:
      return reduce_op(op, a, n);
    case OP_ADAPTIVE_AVG_POOL2D: return adaptive_pool_op(a, n);
    case OP_CONSTANT_PAD_ND: return constant_pad_op(a, n);
    case OP_FLIP: return flip_op(a, n);
    case OP_INDEX_SELECT: return index_select_op(a, n);
    case OP_CUMSUM: return cumsum_op(a, n);
    case OP_VAR_CORRECTION: case OP_VAR_UNBIASED: return var_op(op, a, n);
    case OP_ELU: return elu_op(a, n);
    case OP_GLU: return glu_op(a, n);
    case OP_FILL: case OP_ZEROS: case OP_ONES: case OP_SCALAR_TENSOR: case OP_FILL_TENSOR:
      return fill_op(op, a, n);
    case OP_ARANGE: return arange_op(a, n);
    case OP_REPEAT: return repeat_op(a, n);
    case OP_ROLL: return roll_op(a, n);
    case OP_STACK: return stack_op(a, n);
    case OP_TRIL: return tril_op(a, n);
    case OP_UNBIND_COPY: return unbind_op(a, n);
    case OP_RSUB: case OP_FLOOR_DIVIDE: return rsub_floor_op(op, a, n);
    case OP_MEAN_ALL: return mean_all_op(a, n);
    case OP_INDEX: return index_op(a, n);
    case OP_INDEX_PUT: case OP_INDEX_PUT_IN_PLACE: return index_put_op(op, a, n);
    case OP_COPY_IN_PLACE: case OP_COPY_OUT: return copy_into_op(op, a, n);
    case OP_ET_VIEW: return 0;
    case OP_GATHER: return gather_op(a, n);
    case OP_SCATTER: case OP_SCATTER_ADD: case OP_SCATTER_VALUE: return scatter_op(op, a, n);
    case OP_DIAGONAL_COPY: return diagonal_op(a, n);
    case OP_DIV_MODE: return div_mode_op(a, n);
    case OP_MASKED_FILL: return masked_fill_op(a, n);
    case OP_PIXEL_SHUFFLE: case OP_PIXEL_UNSHUFFLE: return pixel_shuffle_op(op, a, n);
    case OP_REFLECTION_PAD1D: case OP_REFLECTION_PAD2D: case OP_REFLECTION_PAD3D:
    case OP_REPLICATION_PAD1D: case OP_REPLICATION_PAD2D: case OP_REPLICATION_PAD3D:
      return pad_mode_op(op, a, n);
    case OP_MAX_DIM: case OP_MIN_DIM: return extreme_dim_op(op, a, n);
    case OP_VAR_MEAN: return var_mean_op(a, n);
    case OP_CLAMP_TENSOR: return clamp_tensor_op(a, n);
    case OP_NARROW_COPY: return narrow_op(a, n);
    case OP_SELECT_SCATTER: case OP_SLICE_SCATTER: return scatter_dim_op(op, a, n);
    case OP_GROUP_NORM: return group_norm_op(a, n);
    case OP_LOGIT: return logit_op(a, n);
    case OP_BITWISE_LEFT_SHIFT: case OP_BITWISE_RIGHT_SHIFT: return math_binary(op, a, n);
    case OP_POW_SCALAR: return pow_scalar_op(a, n);
    case OP_UNFOLD_COPY: return unfold_op(a, n);
    case OP_AS_STRIDED_COPY: return as_strided_op(a, n);
    case OP_EMPTY: return fill_op(OP_ZEROS, a, n);
    case OP_TOPK: return topk_op(a, n);
    case OP_NONZERO: return nonzero_op(a, n);
    case OP_MASKED_SELECT: return masked_select_op(a, n);
    case OP_REPEAT_INTERLEAVE: return repeat_interleave_op(a, n);
    case OP_MASKED_SCATTER: return masked_scatter_op(a, n);
    case OP_CDIST_FORWARD: case OP_PDIST_FORWARD: return distance_op(op, a, n);
    case OP_GRID_SAMPLER2D: return grid_sampler_op(a, n);
    case OP_UPSAMPLE_BILINEAR2D_AA: return upsample_aa_op(a, n);
    case OP_SPLIT_COPY: return split_op(a, n);
    case OP_BATCH_NORM: return batch_norm_op(a, n);
    case OP_QD_QUANTIZE: case OP_QD_DEQUANTIZE: case OP_QD_DEQUANTIZE_PER_CHANNEL: return qd_op(op, a, n);
    case OP_ADDMM: case OP_MM: case OP_BMM: return matmul_op(op, a, n);
    case OP_ATEN_LINEAR: return linear_op(a, n);
    case OP_CONVOLUTION: return convolution_op(a, n);
    case OP_LAYER_NORM: return layer_norm_op(a, n);
    case OP_EXPM1: case OP_LOG2: case OP_LOG10: case OP_LOG1P: case OP_SIN: case OP_COS: case OP_TAN:
    case OP_ASIN: case OP_ACOS: case OP_ATAN: case OP_SINH: case OP_COSH: case OP_ASINH: case OP_ACOSH:
    case OP_ATANH: case OP_ERF: case OP_FLOOR: case OP_CEIL: case OP_ROUND: case OP_TRUNC: case OP_SIGN:
    case OP_BITWISE_NOT: case OP_ISNAN: case OP_ISINF: case OP_LOGICAL_NOT:
      return math_unary(op, a, n);
    case OP_ATAN2: case OP_POW: case OP_FMOD: case OP_REMAINDER: case OP_LOGICAL_AND: case OP_LOGICAL_OR:
    case OP_LOGICAL_XOR: case OP_BITWISE_AND: case OP_BITWISE_OR: case OP_BITWISE_XOR:
      return math_binary(op, a, n);
    default:
      return fail("operator not implemented by the board firmware");
  }
}
