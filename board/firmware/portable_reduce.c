/* Reductions: softmax and log-softmax, sums, means, products and extremes over dims, variances,
 * running sums, per-line extremes and top-k. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "portable.h"

int softmax_op(uint32_t op, const uint32_t *a, uint32_t n) {
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

/* Per-group mean and variance as ExecuTorch's portable var and var_mean compute them for a
 * float32 out tensor: the sum, the mean and the sum of squared deviations in float32, the
 * variance that sum over the double n - correction; both NaN where that is not positive. -1
 * when the work memory is too small. */
static int group_variance_f32(const double *v, const tview *x, uint32_t mask, uint32_t groups, uint32_t per,
                              double c, double **mean_out, double **var_out) {
  float *sum = (float *)scratch(groups * 8u + 8u);
  uint32_t *gi = group_indices(x, mask);
  double *mean = new_values(groups), *var = new_values(groups);
  if (!sum || !gi || !mean || !var) return -1;
  float *sum2 = sum + groups;
  for (uint32_t g = 0; g < groups; g++) sum[g] = sum2[g] = 0.0f;
  for (uint32_t i = 0; i < x->numel; i++) sum[gi[i]] += (float)v[i];
  double den = (double)per - c;
  for (uint32_t g = 0; g < groups; g++) sum[g] = sum[g] / (float)per;
  for (uint32_t i = 0; i < x->numel; i++) {
    float dlt = (float)v[i] - sum[gi[i]];
    sum2[gi[i]] += dlt * dlt;
  }
  for (uint32_t g = 0; g < groups; g++) {
    int undefined = per == 0 || den <= 0.0;
    var[g] = undefined ? NAN : (double)sum2[g] / den;
    mean[g] = undefined ? NAN : (double)sum[g];
  }
  *mean_out = mean;
  *var_out = var;
  return 0;
}

/* mean.out / sum.IntList_out / amax.out / amin.out / argmax.out / argmin.out / any / prod and
 * the whole-tensor `_ALL` forms: each out element reduces its group in logical order (sums and
 * products in the out tensor's type; NaN-propagating extremes; the first index of an extreme, a NaN
 * winning), as the host's `reduction` does. */
int reduce_op(uint32_t op, const uint32_t *a, uint32_t n) {
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
  /* sums in the out tensor's type, as the portable kernels accumulate (CTYPE_OUT) */
  int f32 = (op == OP_MEAN || op == OP_SUM) && is_float(&o);
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
      case OP_PROD: case OP_PROD_ALL: /* in the out tensor's type, as ExecuTorch multiplies */
        if (is_float(&o))
          acc[g] = (double)((float)acc[g] * (float)e);
        else if (o.dt == ST_LONG)
          acc[g] = (double)(int64_t)((uint64_t)(int64_t)acc[g] * (uint64_t)(int64_t)e);
        else if (o.dt == ST_INT)
          acc[g] = (double)(int32_t)((uint32_t)(int32_t)acc[g] * (uint32_t)(int32_t)e);
        else
          acc[g] *= e;
        break;
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
    for (uint32_t g = 0; g < groups; g++)
      acc[g] = f32 ? (double)((float)acc[g] / (float)(per ? per : 1u)) : acc[g] / (double)(float)(per ? per : 1u);
  if (op == OP_ANY || op == OP_ANY_ALL)
    for (uint32_t g = 0; g < groups; g++) acc[g] = acc[g] != 0.0 ? 1.0 : 0.0;
  return store(out_of(a, n), arg ? best_at : acc, groups);
}

/* cumsum.out(self, dim, dtype?, out): running sums in the out tensor's type (float32 or double),
 * each element its input plus the one before it, the first copied, as the portable kernel */
int cumsum_op(const uint32_t *a, uint32_t n) {
  tview x, o;
  double *v = load(val(a, n, 0), &x);
  uint32_t d = 0;
  if (!v || view_of(out_of(a, n), &o) || dim_of(ival(val(a, n, 1)), x.rank ? x.rank : 1u, &d)) return -1;
  uint32_t len = x.rank ? (uint32_t)x.size[d] : 1u;
  uint32_t inner = x.rank ? product(x.size, d + 1, x.rank) : 1u, outer = x.rank ? product(x.size, 0, d) : 1u;
  for (uint32_t q = 0; q < outer; q++)
    for (uint32_t i = 0; i < inner; i++) {
      for (uint32_t k = 0; k < len; k++) {
        uint64_t at = ((uint64_t)q * len + k) * inner + i, before = at - inner;
        if (is_float(&o))
          v[at] = k == 0 ? (double)(float)v[at] : (double)((float)v[at] + (float)v[before]);
        else if (k > 0)
          v[at] = v[at] + v[before];
      }
    }
  return store(out_of(a, n), v, x.numel);
}

/* var.correction_out(self, dim?, correction?, keepdim, out) and var.out(self, dim?, unbiased,
 * keepdim, out): sum((x - mean)^2) / (n - correction) per group; for a float32 out tensor the
 * sums and the mean in float32 and the division by the double n - correction (NaN when that is
 * not positive), as ExecuTorch's portable kernel; in double otherwise */
int var_op(uint32_t op, const uint32_t *a, uint32_t n) {
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
    if (group_variance_f32(v, &x, mask, groups, per, c, &mean, &var))
      return fail("var: larger than the board's work memory");
    return store(out_of(a, n), var, groups);
  }
  if (group_variance(v, &x, mask, groups, per, c, &mean, &var)) return fail("var: larger than the board's work memory");
  return store(out_of(a, n), var, groups);
}

/* mean.dtype_out(self, dtype?, out): every element, summed in the out tensor's type */
int mean_all_op(const uint32_t *a, uint32_t n) {
  tview x, o;
  double *v = load(val(a, n, 0), &x);
  if (!v || view_of(out_of(a, n), &o)) return -1;
  float count = (float)(x.numel ? x.numel : 1u), s = -0.0f;
  double m, sd = -0.0;
  if (is_float(&o)) {
    for (uint32_t i = 0; i < x.numel; i++) s += (float)v[i];
    m = (double)(s / count);
  } else {
    for (uint32_t i = 0; i < x.numel; i++) sd += v[i];
    m = sd / (double)count;
  }
  return store(out_of(a, n), &m, 1);
}

/* max.dim_max / min.dim_min(self, dim, keepdim, values, indices): each line's extreme and its
 * first index (a NaN wins) */
int extreme_dim_op(uint32_t op, const uint32_t *a, uint32_t n) {
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

/* var_mean.correction_out(self, dim?, correction?, keepdim, var, mean): as var, with the mean;
 * both NaN where n - correction is not positive */
int var_mean_op(const uint32_t *a, uint32_t n) {
  tview x;
  double *v = load(val(a, n, 0), &x);
  if (!v) return -1;
  const value_rec *cv = val(a, n, 2);
  double c = cv && cv->kind != V_NONE ? scalar(cv) : 1.0;
  uint32_t nd = 0, mask = 0, groups = 1, per = 1;
  const int64_t *dims = list(val(a, n, 1), &nd);
  if (reduced_dims(dims, nd, &x, &mask, &groups, &per)) return -1;
  double *mean = 0, *var = 0;
  tview o;
  if (view_of(val(a, n, 4), &o)) return -1;
  if (groups != o.numel) return fail("var_mean: the out tensor does not fit");
  int failed = is_float(&o) ? group_variance_f32(v, &x, mask, groups, per, c, &mean, &var)
                            : group_variance(v, &x, mask, groups, per, c, &mean, &var);
  if (failed) return fail("var_mean: larger than the board's work memory");
  if (!is_float(&o) && (per == 0 || (double)per - c <= 0.0))
    for (uint32_t g = 0; g < groups; g++) mean[g] = var[g] = NAN;
  if (store(val(a, n, 4), var, groups)) return -1;
  return store(val(a, n, 5), mean, groups);
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
int topk_op(const uint32_t *a, uint32_t n) {
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
