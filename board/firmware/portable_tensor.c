/* Tensors in logical order: a view of any tensor through its dim order, element reads and
 * writes in the host's types, whole tensors loaded into and stored from work memory,
 * broadcasting, and the operands of a binary operator. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "portable.h"

/* Steps a logical index through `x` in row-major order */
void next_index(const tview *x, uint32_t idx[8]) {
  for (int32_t d = (int32_t)x->rank - 1; d >= 0; d--) {
    if (++idx[d] < (uint32_t)x->size[d]) break;
    idx[d] = 0;
  }
}

uint32_t dt_size(uint8_t dt) {
  switch (dt) {
    case ST_BYTE: case ST_CHAR: case ST_BOOL: return 1;
    case ST_SHORT: return 2;
    case ST_INT: case ST_FLOAT: return 4;
    case ST_LONG: case ST_DOUBLE: return 8;
    default: return 0;
  }
}

int view_of(const value_rec *v, tview *t) {
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
double toward_zero(double x, double lo, double hi) {
  if (x != x) return 0.0;
  x = trunc(x);
  return x < lo ? lo : x > hi ? hi : x;
}

void put(tview *t, int64_t at, double x) {
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

double *new_values(uint32_t n) {
  double *v = (double *)scratch(n * 8u + 8u);
  if (!v) fail("portable: larger than the board's work memory");
  return v;
}

/* The elements of a tensor argument in logical order, as doubles. */
double *load(const value_rec *v, tview *t) {
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
int store(const value_rec *v, const double *vals, uint32_t count) {
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

int is_float(const tview *t) { return t->dt == ST_FLOAT; }

int is_double(const tview *t) { return t->dt == ST_DOUBLE; }

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
uint32_t *broadcast_index(const tview *in, const tview *out) {
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

int dim_of(int64_t d, uint32_t rank, uint32_t *out) {
  int64_t r = d < 0 ? d + (int64_t)rank : d;
  if (r < 0 || r >= (int64_t)(rank ? rank : 1)) return fail("portable: a dim out of range");
  *out = (uint32_t)r;
  return 0;
}

uint32_t product(const int32_t *s, uint32_t from, uint32_t to) {
  uint32_t p = 1;
  for (uint32_t d = from; d < to; d++) p *= (uint32_t)s[d];
  return p;
}

int operand_of(const value_rec *v, operand *o) {
  if (v && v->kind == V_TENSOR) {
    o->scalar = 0;
    o->v = load(v, &o->t);
    return o->v ? 0 : -1;
  }
  if (!v || (v->kind != V_INT && v->kind != V_DOUBLE && v->kind != V_BOOL))
    return fail("portable: an operand is neither a tensor nor a scalar");
  o->one = scalar(v);
  o->scalar = (uint8_t)v->kind;
  o->v = &o->one;
  o->t.rank = 0;
  o->t.numel = 1;
  o->t.dt = ST_DOUBLE;
  return 0;
}
