/* The board image as the kernels see it: the value table, argument accessors, the arenas a tensor's
 * data lies in, the run's error, and the work memory of one instruction (core/src/board_image/
 * writes the image; image.h declares what this file defines). */
#include <stdint.h>
#include <string.h>

#include "image.h"

const uint8_t *image;
static uint8_t *arena_base[256];
static const char *error_text;
/* int32 accumulators for the kernels that need them (transpose convolution), in DDR after the
 * arenas */
static int32_t *g_work;
static int32_t g_work_len;

uint32_t image_u32(uint32_t off) {
  uint32_t v;
  memcpy(&v, image + off, 4);
  return v;
}

/* ---- the value table ---- */
static const value_rec *values;
static uint32_t n_values;

const value_rec *value_at(uint32_t v) { return v < n_values ? &values[v] : 0; }

const value_rec *val(const uint32_t *args, uint32_t nargs, uint32_t k) {
  if (k >= nargs) return 0;
  return value_at(args[k]);
}

/* ---- per-instruction work memory: the DDR after the arenas and the accumulators ---- */
static uint8_t *scratch_base, *scratch_at, *scratch_end;

void *scratch(uint32_t bytes) {
  uintptr_t at = ((uintptr_t)scratch_at + 7u) & ~(uintptr_t)7u;
  if (bytes > (uintptr_t)scratch_end - at) return 0;
  scratch_at = (uint8_t *)(at + bytes);
  return (void *)at;
}

/* constants a placement copied out of the image: {image offset, bytes, address} each */
static const uint32_t *placed;
static uint32_t n_placed;
/* reads of constants answered from their placed copies (a placed run's proof that the kernels
 * read the copies) */
static uint32_t placed_reads;

void *tensor_data(const value_rec *v) {
  if (!v || v->kind != V_TENSOR) return 0;
  if (v->mem == 0) {
    for (uint32_t k = 0; k < n_placed; k++) {
      const uint32_t *p = placed + 3u * k;
      if (v->off >= p[0] && v->off - p[0] < p[1]) {
        placed_reads++;
        return (void *)(uintptr_t)(p[2] + (v->off - p[0]));
      }
    }
    return (void *)(image + v->off);
  }
  if (v->mem == 255) return 0;
  return arena_base[v->mem] + v->off;
}

const int32_t *sizes_of(const value_rec *v) { return (const int32_t *)(image + v->u.t.sizes_off); }
const uint32_t *order_of(const value_rec *v) { return (const uint32_t *)(image + v->u.t.order_off); }

int64_t ival(const value_rec *v) { return v && (v->kind == V_INT || v->kind == V_BOOL) ? v->u.i : 0; }
double dval(const value_rec *v) { return v && v->kind == V_DOUBLE ? v->u.d : 0.0; }
double scalar(const value_rec *v) {
  return v && (v->kind == V_INT || v->kind == V_BOOL) ? (double)v->u.i : dval(v);
}
const int64_t *list(const value_rec *v, uint32_t *n) {
  if (!v || v->kind != V_INT_LIST) {
    *n = 0;
    return 0;
  }
  *n = v->off;
  return (const int64_t *)(image + v->u.t.sizes_off);
}
int64_t list_pair(const value_rec *v, uint32_t i, int64_t dflt) {
  uint32_t n;
  const int64_t *l = list(v, &n);
  int64_t r = n > i ? l[i] : n > 0 ? l[0] : dflt;
  return r < 0 ? 0 : r;
}

/* NHWC dims of an activation: `_nhwc` ops have logical [n,h,w,c]; default-flow ops [n,c,h,w]. */
int nhwc_dims(const value_rec *t, int nchw, int32_t d[4]) {
  if (!t || t->kind != V_TENSOR || t->rank != 4) return -1;
  const int32_t *s = sizes_of(t);
  if (nchw) {
    d[0] = s[0]; d[1] = s[2]; d[2] = s[3]; d[3] = s[1];
  } else {
    d[0] = s[0]; d[1] = s[1]; d[2] = s[2]; d[3] = s[3];
  }
  return 0;
}

const value_rec *out_of(const uint32_t *args, uint32_t nargs) {
  return nargs >= 2 ? val(args, nargs, nargs - 2) : 0;
}

int fail(const char *what) {
  error_text = what;
  return -1;
}

const char *board_error(void) { return error_text; }

void scratch_reset(void) { scratch_at = scratch_base; }

int32_t *work_memory(int32_t *len) {
  *len = g_work_len;
  return g_work;
}

uint32_t image_bind(const uint8_t *at, uint32_t ddr_bytes) {
  image = at;
  n_values = image_u32(12);
  values = (const value_rec *)(image + image_u32(16));
  uint32_t n_arenas = image_u32(36);
  const uint32_t *arena_sizes = (const uint32_t *)(image + image_u32(40));
  uint8_t *next = (uint8_t *)((uintptr_t)at + ((image_u32(8) + 15u) & ~15u));
  /* a placement's addresses: an arena at its own address (0: after the image, as without one),
   * constants copied where they run from */
  uint32_t n_at = image_u32(76);
  const uint32_t *arena_at = n_at ? (const uint32_t *)(image + image_u32(80)) : 0;
  for (uint32_t i = 0; i < n_arenas && i < 255u; i++) {
    if (i < n_at && arena_at[i] != 0u) {
      arena_base[i] = (uint8_t *)(uintptr_t)arena_at[i];
      continue;
    }
    arena_base[i] = next;
    next += (arena_sizes[i] + 15u) & ~15u;
  }
  n_placed = image_u32(84);
  placed = n_placed ? (const uint32_t *)(image + image_u32(88)) : 0;
  for (uint32_t k = 0; k < n_placed; k++) {
    const uint32_t *p = placed + 3u * k;
    memcpy((void *)(uintptr_t)p[2], image + p[0], p[1]);
  }
  uintptr_t end = (uintptr_t)at + ddr_bytes, from = ((uintptr_t)next + 15u) & ~(uintptr_t)15u;
  uintptr_t room = end > from ? (end - from) / 4u : 0u;
  g_work = (int32_t *)from;
  g_work_len = (int32_t)(room < (4u << 20) ? room : (4u << 20));
  scratch_base = (uint8_t *)(g_work + g_work_len);
  scratch_end = (uint8_t *)end;
  scratch_at = scratch_base;
  return n_values;
}

void *arena_address(uint32_t i) { return i < 255u ? arena_base[i] : 0; }

uint32_t placed_constants(uint32_t *bytes) {
  /* values that share a constant share its copy: each address counted once */
  uint32_t b = 0, n = 0;
  for (uint32_t k = 0; k < n_placed; k++) {
    uint32_t seen = 0;
    for (uint32_t j = 0; j < k && !seen; j++) seen = placed[3u * j + 2u] == placed[3u * k + 2u];
    if (seen) continue;
    b += placed[3u * k + 1u];
    n++;
  }
  *bytes = b;
  return n;
}

uint32_t placed_constant_reads(void) { return placed_reads; }
