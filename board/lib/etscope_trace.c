/* etscope_trace: frames on an RTT up-channel. SPDX-License-Identifier: MIT OR Apache-2.0 */
#include "etscope_trace.h"

#include <string.h>

#define HEADER_BYTES 16u
#define CRC_BYTES 4u
#define ETDUMP_CHUNK 1024u

etscope_rtt_cb _SEGGER_RTT __attribute__((used, aligned(4)));
static char down_buffer[16];
static etscope_rtt_buffer *up;
static enum etscope_full_mode full_mode;
static etscope_trace_stats stats;
static void crc_init(void);

static void memory_barrier(void) {
#if defined(__arm__)
  __asm volatile("dmb" ::: "memory");
#else
  __sync_synchronize();
#endif
}

void etscope_trace_attach(etscope_rtt_buffer *channel, enum etscope_full_mode mode) {
  crc_init();
  up = channel;
  full_mode = mode;
  memset(&stats, 0, sizeof stats);
}

void etscope_trace_init(char *buffer, uint32_t size, enum etscope_full_mode mode) {
  volatile char *id = _SEGGER_RTT.id;
  memset(&_SEGGER_RTT, 0, sizeof _SEGGER_RTT);
  _SEGGER_RTT.max_up = 1;
  _SEGGER_RTT.max_down = 1;
  _SEGGER_RTT.up[0].name = "etscope";
  _SEGGER_RTT.up[0].buffer = buffer;
  _SEGGER_RTT.up[0].size = size;
  _SEGGER_RTT.up[0].flags = (uint32_t)mode;
  _SEGGER_RTT.down[0].name = "etscope-down";
  _SEGGER_RTT.down[0].buffer = down_buffer;
  _SEGGER_RTT.down[0].size = sizeof down_buffer;
  memory_barrier();
  /* the ID last and in pieces, as SEGGER's _DoInit: the whole string exists only here */
  id[7] = 'R';
  id[8] = 'T';
  id[9] = 'T';
  memory_barrier();
  id[0] = 'S';
  id[1] = 'E';
  id[2] = 'G';
  id[3] = 'G';
  id[4] = 'E';
  id[5] = 'R';
  memory_barrier();
  id[6] = ' ';
  memory_barrier();
  etscope_trace_attach(&_SEGGER_RTT.up[0], mode);
}

const etscope_trace_stats *etscope_trace_get_stats(void) { return &stats; }

/* CRC-32 (IEEE, reflected), byte-table driven: about 4 instructions per byte on a Cortex-M. */
static uint32_t crc_table[256];

static void crc_init(void) {
  for (uint32_t i = 0; i < 256u; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c & 1u) ? 0xedb88320u ^ (c >> 1) : c >> 1;
    crc_table[i] = c;
  }
}

static uint32_t crc_step(uint32_t crc, const uint8_t *p, uint32_t n) {
  while (n--) crc = crc_table[(crc ^ *p++) & 0xffu] ^ (crc >> 8);
  return crc;
}

static uint32_t free_space(void) {
  uint32_t rd = up->rd_off, wr = up->wr_off;
  return rd > wr ? rd - wr - 1u : up->size - 1u - (wr - rd);
}

/* Copies bytes into the ring, waiting for room in block mode (the caller checked room in drop
 * mode). WrOff is published after the data, behind a barrier. */
static void ring_write(const uint8_t *p, uint32_t n) {
  while (n) {
    uint32_t room;
    while ((room = free_space()) == 0u) {
    }
    uint32_t wr = up->wr_off;
    uint32_t run = up->size - wr;
    if (run > room) run = room;
    if (run > n) run = n;
    memcpy(up->buffer + wr, p, run);
    memory_barrier();
    wr += run;
    up->wr_off = wr == up->size ? 0u : wr;
    p += run;
    n -= run;
  }
}

static void put32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}

static void put64(uint8_t *p, uint64_t v) {
  put32(p, (uint32_t)v);
  put32(p + 4, (uint32_t)(v >> 32));
}

/* One frame from up to two payload pieces. */
static int write_frame2(uint8_t type, const void *a, uint32_t alen, const void *b, uint32_t blen) {
  if (!up) return -1;
  uint32_t len = alen + blen;
  uint32_t total = HEADER_BYTES + len + CRC_BYTES;
  if (full_mode == ETSCOPE_DROP) {
    uint32_t report = stats.unreported_frames ? HEADER_BYTES + 8u + CRC_BYTES : 0u;
    if (free_space() < total + report || total + report >= up->size) {
      stats.dropped_frames++;
      stats.dropped_bytes += total;
      stats.unreported_frames++;
      stats.unreported_bytes += total;
      return -1;
    }
    if (report) {
      uint8_t p[8];
      put32(p, stats.unreported_frames);
      put32(p + 4, stats.unreported_bytes);
      stats.unreported_frames = 0;
      stats.unreported_bytes = 0;
      write_frame2(ETSCOPE_FRAME_DROPPED, p, 8, 0, 0);
    }
  }
  uint8_t h[HEADER_BYTES];
  memcpy(h, "ETSF", 4);
  h[4] = (uint8_t)ETSCOPE_WIRE_VERSION;
  h[5] = type;
  h[6] = 0;
  h[7] = 0;
  put32(h + 8, stats.seq++);
  put32(h + 12, len);
  uint32_t crc = crc_step(0xffffffffu, h + 4, HEADER_BYTES - 4u);
  crc = crc_step(crc, (const uint8_t *)a, alen);
  if (blen) crc = crc_step(crc, (const uint8_t *)b, blen);
  uint8_t c[CRC_BYTES];
  put32(c, ~crc);
  ring_write(h, HEADER_BYTES);
  ring_write((const uint8_t *)a, alen);
  if (blen) ring_write((const uint8_t *)b, blen);
  ring_write(c, CRC_BYTES);
  return 0;
}

int etscope_trace_frame(uint8_t type, const void *payload, uint32_t len) {
  return write_frame2(type, payload, len, 0, 0);
}

static uint32_t put_string(uint8_t *p, const char *s, uint32_t max) {
  uint32_t n = (uint32_t)strlen(s);
  if (n > max) n = max;
  p[0] = (uint8_t)n;
  memcpy(p + 1, s, n);
  return n + 1u;
}

int etscope_trace_target_info(const char *core, uint32_t tick_hz, uint64_t program_id,
                              const char *method, uint32_t runs) {
  uint8_t p[16 + 2 * 64 + 2];
  put32(p, tick_hz);
  put64(p + 4, program_id);
  put32(p + 12, runs);
  uint32_t n = 16;
  n += put_string(p + n, core, 64);
  n += put_string(p + n, method, 64);
  return write_frame2(ETSCOPE_FRAME_TARGET_INFO, p, n, 0, 0);
}

int etscope_trace_run_start(uint32_t run, uint64_t ticks) {
  uint8_t p[12];
  put32(p, run);
  put64(p + 4, ticks);
  return write_frame2(ETSCOPE_FRAME_RUN_START, p, sizeof p, 0, 0);
}

int etscope_trace_run_end(uint32_t run, uint64_t ticks) {
  uint8_t p[12];
  put32(p, run);
  put64(p + 4, ticks);
  return write_frame2(ETSCOPE_FRAME_RUN_END, p, sizeof p, 0, 0);
}

int etscope_trace_op(uint32_t instruction, uint32_t chain, uint64_t start, uint64_t end) {
  uint8_t p[24];
  put32(p, instruction);
  put32(p + 4, chain);
  put64(p + 8, start);
  put64(p + 16, end);
  return write_frame2(ETSCOPE_FRAME_OP_EVENT, p, sizeof p, 0, 0);
}

int etscope_trace_tensor(uint32_t instruction, uint32_t chain, uint8_t scalar_type, uint8_t rank,
                         const int32_t *sizes, const uint8_t *dim_order, const void *data,
                         uint32_t nbytes) {
  uint8_t p[12 + 8 * 5];
  if (rank > 8) return -1;
  put32(p, instruction);
  put32(p + 4, chain);
  p[8] = scalar_type;
  p[9] = rank;
  p[10] = 0;
  p[11] = 0;
  uint32_t n = 12;
  for (uint8_t i = 0; i < rank; i++, n += 4) put32(p + n, (uint32_t)sizes[i]);
  for (uint8_t i = 0; i < rank; i++) p[n++] = dim_order[i];
  while (n % 4u) p[n++] = 0;
  return write_frame2(ETSCOPE_FRAME_TENSOR, p, n, data, nbytes);
}

int etscope_trace_etdump(const void *etdump, uint32_t len) {
  static uint32_t dump_seq;
  const uint8_t *bytes = (const uint8_t *)etdump;
  uint32_t id = dump_seq++;
  int result = 0;
  for (uint32_t off = 0; off < len || (len == 0 && off == 0); off += ETDUMP_CHUNK) {
    uint32_t n = len - off < ETDUMP_CHUNK ? len - off : ETDUMP_CHUNK;
    uint8_t h[12];
    put32(h, id);
    put32(h + 4, len);
    put32(h + 8, off);
    if (write_frame2(ETSCOPE_FRAME_ETDUMP_CHUNK, h, sizeof h, bytes + off, n) != 0) result = -1;
    if (len == 0) break;
  }
  return result;
}

int etscope_trace_debug_data(uint32_t offset, const void *data, uint32_t len) {
  const uint8_t *bytes = (const uint8_t *)data;
  int result = 0;
  for (uint32_t done = 0; done < len; done += ETDUMP_CHUNK) {
    uint32_t n = len - done < ETDUMP_CHUNK ? len - done : ETDUMP_CHUNK;
    uint8_t h[4];
    put32(h, offset + done);
    if (write_frame2(ETSCOPE_FRAME_DEBUG_DATA, h, sizeof h, bytes + done, n) != 0) result = -1;
  }
  return result;
}

int etscope_trace_log(const char *text) {
  return write_frame2(ETSCOPE_FRAME_LOG, text, (uint32_t)strlen(text), 0, 0);
}

uint64_t etscope_program_id(const void *pte, size_t len) {
  const uint8_t *p = (const uint8_t *)pte;
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < len; i++) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}
