/* Operators that move data without arithmetic: copies, permutes, expands, slices, concatenation
 * and splits, fills and ranges, repeats, rolls, stacks, pads of every mode, flips, pixel
 * shuffles, unfolds and strided views. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "portable.h"

/* Copies: the same elements in the out tensor's shape, dim order and type. */
int copy_op(const uint32_t *a, uint32_t n) {
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

int permute_op(uint32_t op, const uint32_t *a, uint32_t n) {
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

int expand_op(const uint32_t *a, uint32_t n) {
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
int slice_op(uint32_t op, const uint32_t *a, uint32_t n) {
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
int cat_op(const uint32_t *a, uint32_t n) {
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
int split_op(const uint32_t *a, uint32_t n) {
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

int full_op(const uint32_t *a, uint32_t n) {
  tview o;
  if (view_of(out_of(a, n), &o)) return -1;
  double *r = new_values(o.numel), value = scalar(val(a, n, 1));
  if (!r) return -1;
  for (uint32_t i = 0; i < o.numel; i++) r[i] = value;
  return store(out_of(a, n), r, o.numel);
}

/* constant_pad_nd.out(self, pad, value, out): pad pairs from the last dim backwards */
int constant_pad_op(const uint32_t *a, uint32_t n) {
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
int flip_op(const uint32_t *a, uint32_t n) {
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

/* fill.Scalar_out / fill.Tensor_out / zeros.out / ones.out / scalar_tensor.out: one value
 * everywhere */
int fill_op(uint32_t op, const uint32_t *a, uint32_t n) {
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
int arange_op(const uint32_t *a, uint32_t n) {
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
int repeat_op(const uint32_t *a, uint32_t n) {
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
int roll_op(const uint32_t *a, uint32_t n) {
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
int stack_op(const uint32_t *a, uint32_t n) {
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
int tril_op(const uint32_t *a, uint32_t n) {
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
int unbind_op(const uint32_t *a, uint32_t n) {
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

/* diagonal_copy.out(self, offset, dim1, dim2, out) */
int diagonal_op(const uint32_t *a, uint32_t n) {
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

/* pixel_shuffle.out(self, r, out): [..., C*r*r, H, W] -> [..., C, H*r, W*r]; pixel_unshuffle the
 * inverse */
int pixel_shuffle_op(uint32_t op, const uint32_t *a, uint32_t n) {
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
int pad_mode_op(uint32_t op, const uint32_t *a, uint32_t n) {
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

/* narrow_copy.out(self, dim, start, length, out) */
int narrow_op(const uint32_t *a, uint32_t n) {
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

/* unfold_copy.out(self, dimension, size, step, out): every window as a new last dim */
int unfold_op(const uint32_t *a, uint32_t n) {
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
int as_strided_op(const uint32_t *a, uint32_t n) {
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
