/* libm probe: evaluates the C library's math functions the portable kernels call on the emulated
 * board (newlib, as the Arm GNU toolchain links it) over many inputs and writes every
 * (function, inputs, result) through Arm semihosting into a file on the host. etscope's host
 * model of newlib (core/src/kernels/libm/newlib) is checked against this file bit for bit
 * (core/tests/libm.rs). Built exactly as the board firmware is (board/libm_probe/run.sh).
 *
 * Record: u32 function, u32 0, u64 first input, u64 second input, u64 result (the bits of a float
 * in the low 32 bits for single-precision functions). Function numbers are
 * `etscope_core::kernels::libm::Function`'s order. */
#include <math.h>
#include <stdint.h>
#include <string.h>

void SysTick_Handler(void) {}

static long semihost(long op, const void *arg) {
  register long r0 __asm__("r0") = op;
  register const void *r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

static void stop(int code) {
  static uint32_t block[2];
  block[0] = 0x20026; /* ADP_Stopped_ApplicationExit */
  block[1] = (uint32_t)code;
  semihost(0x20, block); /* SYS_EXIT_EXTENDED */
  for (;;) {
  }
}

static long out_file;
static uint8_t buffer[32 * 512];
static uint32_t used;

static void flush(void) {
  uint32_t block[3] = {(uint32_t)out_file, (uint32_t)(uintptr_t)buffer, used};
  if (used && semihost(0x05, block) != 0) stop(3); /* SYS_WRITE: bytes not written */
  used = 0;
}

static void record(uint32_t fn, uint64_t a, uint64_t b, uint64_t r) {
  uint32_t zero = 0;
  memcpy(buffer + used, &fn, 4);
  memcpy(buffer + used + 4, &zero, 4);
  memcpy(buffer + used + 8, &a, 8);
  memcpy(buffer + used + 16, &b, 8);
  memcpy(buffer + used + 24, &r, 8);
  used += 32;
  if (used == sizeof buffer) flush();
}

static uint32_t state = 0x2545F491u;
static uint32_t next(void) {
  state ^= state << 13;
  state ^= state >> 17;
  state ^= state << 5;
  return state;
}
static float bits_f(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint32_t f_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static uint64_t d_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}

/* An input: a quarter any bit pattern, a quarter any magnitude from 2^-40 to 2^8 of either sign,
 * half uniform in [lo, hi] (the range where a model's values lie). */
static float sample(float lo, float hi, uint32_t k) {
  uint32_t r = next();
  switch (k & 3u) {
    case 0: return bits_f(r);
    case 1: return bits_f((r & 0x807FFFFFu) | ((87u + (next() % 48u)) << 23));
    default: return lo + (hi - lo) * ((float)(r >> 8) * 0x1p-24f);
  }
}

typedef float (*f1)(float);
struct unary {
  f1 fn;
  float lo, hi;
};

#define COUNT 65536u

int main(void) {
  static const char name[] = "libm_probe.bin";
  uint32_t open_block[3] = {(uint32_t)(uintptr_t)name, 5 /* wb */, sizeof name - 1};
  out_file = semihost(0x01, open_block); /* SYS_OPEN */
  if (out_file < 0) stop(2);
  static const struct unary unaries[] = {
      {sinf, -100.0f, 100.0f},  {cosf, -100.0f, 100.0f}, {tanf, -10.0f, 10.0f},
      {asinf, -1.0f, 1.0f},     {acosf, -1.0f, 1.0f},    {atanf, -20.0f, 20.0f},
      {sinhf, -12.0f, 12.0f},   {coshf, -12.0f, 12.0f},  {tanhf, -12.0f, 12.0f},
      {asinhf, -50.0f, 50.0f},  {acoshf, 1.0f, 50.0f},   {atanhf, -1.0f, 1.0f},
      {expf, -20.0f, 20.0f},    {exp2f, -30.0f, 30.0f},  {expm1f, -12.0f, 12.0f},
      {logf, 0.0f, 100.0f},     {log2f, 0.0f, 100.0f},   {log10f, 0.0f, 100.0f},
      {log1pf, -1.0f, 100.0f},  {sqrtf, 0.0f, 100.0f},   {erff, -5.0f, 5.0f},
  };
  uint32_t fn = 0;
  for (; fn < sizeof unaries / sizeof unaries[0]; fn++) {
    for (uint32_t k = 0; k < COUNT; k++) {
      float x = sample(unaries[fn].lo, unaries[fn].hi, k);
      record(fn, f_bits(x), 0, f_bits(unaries[fn].fn(x)));
    }
  }
  for (uint32_t k = 0; k < COUNT; k++, (void)0) {
    float x = sample(0.0f, 10.0f, k), y = sample(-4.0f, 4.0f, k >> 2);
    if ((k & 7u) == 7u) y = (float)((int32_t)(next() % 9u) - 4);
    record(fn, f_bits(x), f_bits(y), f_bits(powf(x, y)));
  }
  fn++;
  for (uint32_t k = 0; k < COUNT; k++) {
    float y = sample(-10.0f, 10.0f, k), x = sample(-10.0f, 10.0f, k >> 2);
    record(fn, f_bits(y), f_bits(x), f_bits(atan2f(y, x)));
  }
  fn++;
  for (uint32_t k = 0; k < COUNT; k++) {
    float x = sample(-100.0f, 100.0f, k), y = sample(-10.0f, 10.0f, k >> 2);
    record(fn, f_bits(x), f_bits(y), f_bits(fmodf(x, y)));
  }
  fn++;
  /* double erf (the gelu kernel's std::erf(x * M_SQRT1_2)) on float inputs widened */
  for (uint32_t k = 0; k < COUNT; k++) {
    double x = (double)sample(-5.0f, 5.0f, k) * 0.70710678118654752440;
    record(fn, d_bits(x), 0, d_bits(erf(x)));
  }
  flush();
  uint32_t close_block[1] = {(uint32_t)out_file};
  semihost(0x02, close_block);
  stop(0);
  return 0;
}
