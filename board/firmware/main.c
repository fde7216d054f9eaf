/* etscope emulated-board firmware: interprets a board image (core/src/board_image/) that QEMU
 * loads at 0x60000000, runs it `runs` times, times every kernel call with SysTick and streams
 * the events (and, if asked, every instruction's output) over RTT with etscope_trace. */
#include <stdint.h>
#include <string.h>

#include "../lib/etscope_trace.h"
#include "image.h"
#include "integer.h"
#include "opcodes.h"
#include "portable.h"

#define IMAGE_BASE 0x60000000u
/* DDR (machine RAM) from IMAGE_BASE: 2 GiB on QEMU mps3-an547; the firmware uses 512 MiB of it */
#define DDR_BYTES 0x20000000u
#define RTT_BYTES (256u * 1024u)
#define TICK_HZ 32000000u /* mps3-an547 processor clock; with -icount it is virtual time */


typedef struct { uint32_t op, nargs, args_off; } instr_rec;

static char rtt_buffer[RTT_BYTES];

/* Board status for a debugger: 1 = running, 2 = done, 3 = error. */
volatile uint32_t g_board_state;

/* ---- time: SysTick extended to 64 bits by its wrap interrupt ---- */
#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define ICSR (*(volatile uint32_t *)0xE000ED04u)
static volatile uint32_t systick_wraps;
void SysTick_Handler(void) { systick_wraps++; }

static void clock_start(void) {
  SYST_RVR = 0x00FFFFFFu;
  SYST_CVR = 0;
  SYST_CSR = 7u; /* processor clock, interrupt, enable */
  while (SYST_CVR == 0u) { /* QEMU reads 0 until the first reload */
  }
}

static uint64_t ticks(void) {
  uint32_t primask;
  __asm volatile("mrs %0, primask\n cpsid i" : "=r"(primask)::"memory");
  uint32_t wraps = systick_wraps;
  uint32_t cvr = SYST_CVR;
  if (ICSR & (1u << 26)) { /* a wrap is pending: count it */
    cvr = SYST_CVR;
    wraps++;
  }
  __asm volatile("msr primask, %0" ::"r"(primask) : "memory");
  return (uint64_t)wraps * 0x01000000u + (0x00FFFFFFu - cvr);
}

/* One kernel call: the integer family (integer.c) or the portable one (portable*.c), as the
 * generated opcodes.h sorts the codes. */
static int run_instruction(uint32_t op, const uint32_t *a, uint32_t n) {
  return op_is_integer(op) ? run_integer(op, a, n) : run_portable(op, a, n);
}

/* Sends what the host runtime captures for a call: the returned tensor (the last argument), or
 * the first tensor of a returned list. */
static void send_output(uint32_t instr, const uint32_t *a, uint32_t n) {
  const value_rec *o = n >= 1 ? val(a, n, n - 1) : 0;
  if (o && o->kind == V_TENSOR_LIST && o->off > 0) {
    uint32_t first;
    memcpy(&first, image + o->u.t.sizes_off, 4);
    o = value_at(first);
  }
  if (!o || o->kind != V_TENSOR) o = out_of(a, n);
  if (!o || o->kind != V_TENSOR) return;
  uint8_t order[8];
  for (uint32_t i = 0; i < o->rank && i < 8; i++) order[i] = (uint8_t)order_of(o)[i];
  etscope_trace_tensor(instr, 0, o->dtype, o->rank, sizes_of(o), order, tensor_data(o), o->u.t.nbytes);
}

/* `v` as 8 hex digits after "0x", or in decimal, at `out`; the end */
static char *put_hex(char *out, uint32_t v) {
  *out++ = '0';
  *out++ = 'x';
  for (int k = 7; k >= 0; k--) *out++ = "0123456789abcdef"[(v >> (4 * k)) & 15u];
  return out;
}
static char *put_dec(char *out, uint32_t v) {
  char digits[10];
  int n = 0;
  do {
    digits[n++] = (char)('0' + v % 10u);
    v /= 10u;
  } while (v);
  while (n) *out++ = digits[--n];
  return out;
}
static char *put_str(char *out, const char *s) {
  while (*s) *out++ = *s++;
  return out;
}

/* where a placement put each arena and how many constants it copied, one log line each (a
 * placed image only: header fields 76 and 84) */
static void log_placement(void) {
  if (image_u32(76) == 0u && image_u32(84) == 0u) return;
  char line[96];
  uint32_t n_arenas = image_u32(36);
  const uint32_t *sizes = (const uint32_t *)(image + image_u32(40));
  for (uint32_t i = 1; i < n_arenas && i < 255u; i++) {
    if (sizes[i] == 0u) continue;
    char *p = put_str(line, "placed: arena ");
    p = put_dec(p, i);
    p = put_str(p, " at ");
    p = put_hex(p, (uint32_t)(uintptr_t)arena_address(i));
    p = put_str(p, ", ");
    p = put_dec(p, sizes[i]);
    p = put_str(p, " bytes");
    *p = 0;
    etscope_trace_log(line);
  }
  uint32_t bytes;
  uint32_t n = placed_constants(&bytes);
  char *p = put_str(line, "placed: ");
  p = put_dec(p, n);
  p = put_str(p, " constant tensors copied out of the image, ");
  p = put_dec(p, bytes);
  p = put_str(p, " bytes");
  *p = 0;
  etscope_trace_log(line);
}

int main(void) {
  g_board_state = 1;
  image = (const uint8_t *)IMAGE_BASE; /* read the header before binding */
  /* image flags: bit 1 = drop frames when the ring is full (else block), bit 2 = stream only,
   * bits 16..31 = ring size in KiB (0 = all of it) */
  uint32_t flags = memcmp(image, "ETSB", 4) == 0 ? image_u32(56) : 0u;
  uint32_t ring = (flags >> 16) * 1024u;
  if (ring == 0u || ring > RTT_BYTES) ring = RTT_BYTES;
  etscope_trace_init(rtt_buffer, ring, (flags & 2u) ? ETSCOPE_DROP : ETSCOPE_BLOCK);
  clock_start();
  if (memcmp(image, "ETSB", 4) != 0 || image_u32(4) != 2u) {
    etscope_trace_target_info("cortex-m55 (emulated)", TICK_HZ, 0, "forward", 0);
    etscope_trace_log("error: no board image v2 at 0x60000000");
    g_board_state = 3;
    return 1;
  }
  uint64_t program_id;
  memcpy(&program_id, image + 64, 8);
  uint32_t runs = image_u32(52), intermediates = image_u32(56) & 1u;
  /* flag bit 2: send the frames without computing (the transport benchmark's producer) */
  uint32_t stream_only = (image_u32(56) >> 2) & 1u;
  uint32_t n_values = image_bind(image, DDR_BYTES);
  uint32_t n_instrs = image_u32(20);
  const instr_rec *instrs = (const instr_rec *)(image + image_u32(24));
  uint32_t n_ops = image_u32(28);
  const uint32_t *ops = (const uint32_t *)(image + image_u32(32));
  uint32_t n_inputs = image_u32(44);
  const uint32_t *inputs = (const uint32_t *)(image + image_u32(48));

  /* " (emulated)": QEMU's instruction counts, not cycles (docs/wire-format.md) */
  etscope_trace_target_info(image_u32(60) == 0 ? "cortex-m55 (emulated)" : "cortex-m4 (emulated)", TICK_HZ,
                            program_id, "forward", runs);
  log_placement();
  for (uint32_t run = 0; run < runs && !board_error(); run++) {
    for (uint32_t i = 0; i < n_inputs; i++) {
      const value_rec *v = inputs[3 * i] < n_values ? value_at(inputs[3 * i]) : 0;
      void *d = tensor_data(v);
      if (d) memcpy(d, image + inputs[3 * i + 1], inputs[3 * i + 2]);
    }
    uint64_t start = ticks();
    etscope_trace_run_start(run, start);
    for (uint32_t k = 0; k < n_instrs; k++) {
      const instr_rec *ins = &instrs[k];
      const uint32_t *args = (const uint32_t *)(image + ins->args_off);
      uint32_t op = ins->op < n_ops ? ops[ins->op] : 0u;
      scratch_reset();
      uint64_t t0 = ticks();
      int rc = stream_only ? 0 : run_instruction(op, args, ins->nargs);
      uint64_t t1 = ticks();
      if (rc != 0) break;
      etscope_trace_op(k, 0, t0, t1);
      if (intermediates) send_output(k, args, ins->nargs);
    }
    if (board_error()) break;
    /* before the last run's end, which the host may stop reading at */
    if (run + 1u == runs && image_u32(84) != 0u) {
      char line[64];
      char *p = put_str(line, "placed: ");
      p = put_dec(p, placed_constant_reads());
      p = put_str(p, " reads of constants from their copies");
      *p = 0;
      etscope_trace_log(line);
    }
    etscope_trace_run_end(run, ticks());
  }
  if (board_error()) {
    etscope_trace_log(board_error());
    g_board_state = 3;
    return 1;
  }
  g_board_state = 2;
  return 0;
}
