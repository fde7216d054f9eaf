/* Indexing: index_select, advanced indexing and index_put, copies into existing tensors,
 * gathers and scatters along a dim, and the outputs whose size is known only at run time
 * (nonzero, masked_select, repeat_interleave, masked_scatter). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "portable.h"

/* index_select.out(self, dim, index, out) */
int index_select_op(const uint32_t *a, uint32_t n) {
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

/* A tensor view of a shape alone (for broadcasting indices against it). */
void shape_view(tview *t, const int32_t *size, uint32_t rank) {
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
int index_op(const uint32_t *a, uint32_t n) {
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
int index_put_op(uint32_t op, const uint32_t *a, uint32_t n) {
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
int copy_into_op(uint32_t op, const uint32_t *a, uint32_t n) {
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

static int wrap_index(double i, int32_t len, int64_t *out) {
  int64_t j = (int64_t)i;
  if (j < 0) j += len;
  if (j < 0 || j >= len) return fail("an index out of range");
  *out = j;
  return 0;
}

/* gather.out(self, dim, index, sparse_grad, out): out[..i..] = self[..index[..i..]..] */
int gather_op(const uint32_t *a, uint32_t n) {
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
int scatter_op(uint32_t op, const uint32_t *a, uint32_t n) {
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
      /* float32 sums round at every add, as the kernel's out[i] += src[j] */
      v[at] = op != OP_SCATTER_ADD ? sval : is_float(&x) ? (double)((float)v[at] + (float)sval) : v[at] + sval;
    next_index(&ix, idx);
  }
  return store(out_of(a, n), v, x.numel);
}

/* select_scatter.out(self, src, dim, index, out) and slice_scatter.out(self, src, dim, start?,
 * end?, step, out): self with src written into the picked entries of dim */
int scatter_dim_op(uint32_t op, const uint32_t *a, uint32_t n) {
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
int nonzero_op(const uint32_t *a, uint32_t n) {
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
int masked_select_op(const uint32_t *a, uint32_t n) {
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
int repeat_interleave_op(const uint32_t *a, uint32_t n) {
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
int masked_scatter_op(const uint32_t *a, uint32_t n) {
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
