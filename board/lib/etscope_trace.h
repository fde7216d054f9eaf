/* etscope_trace: stream per-operator profiling frames from a Cortex-M target to etscope over
 * SEGGER RTT. No dependencies; C99. SPDX-License-Identifier: MIT OR Apache-2.0
 *
 * The frames are etscope's wire format v1 (docs/wire-format.md): each frame is
 *   "ETSF" | u8 version | u8 type | u16 flags | u32 seq | u32 len | payload[len] | u32 crc32
 * with the CRC-32 (IEEE) over everything after the magic up to the end of the payload.
 *
 * Use either the control block this library defines (etscope_trace_init: a SEGGER-RTT-compatible
 * `_SEGGER_RTT` with one up-channel named "etscope"), or an up-buffer of an existing SEGGER RTT or
 * rtt-target control block (etscope_trace_attach). */
#ifndef ETSCOPE_TRACE_H
#define ETSCOPE_TRACE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ETSCOPE_WIRE_VERSION 1u

/* Frame types (payload layouts in docs/wire-format.md). */
enum etscope_frame_type {
  ETSCOPE_FRAME_TARGET_INFO = 1,
  ETSCOPE_FRAME_ETDUMP_CHUNK = 2,
  ETSCOPE_FRAME_RUN_START = 3,
  ETSCOPE_FRAME_OP_EVENT = 4,
  ETSCOPE_FRAME_RUN_END = 5,
  ETSCOPE_FRAME_TENSOR = 6,
  ETSCOPE_FRAME_DROPPED = 7,
  ETSCOPE_FRAME_LOG = 8,
  ETSCOPE_FRAME_DEBUG_DATA = 9
};

/* What to do when the up-buffer has no room for a frame. */
enum etscope_full_mode {
  ETSCOPE_DROP = 0,  /* drop the whole frame and count it (reported in a DROPPED frame) */
  ETSCOPE_BLOCK = 2  /* wait until the host has read enough (SEGGER's BLOCK_IF_FIFO_FULL) */
};

/* SEGGER RTT buffer descriptor, 24 bytes on a 32-bit target. */
typedef struct {
  const char *name;
  char *buffer;
  uint32_t size;
  volatile uint32_t wr_off;
  volatile uint32_t rd_off;
  uint32_t flags;
} etscope_rtt_buffer;

/* SEGGER RTT control block with one up- and one down-buffer (72 bytes on a 32-bit target). */
typedef struct {
  char id[16];
  int32_t max_up;
  int32_t max_down;
  etscope_rtt_buffer up[1];
  etscope_rtt_buffer down[1];
} etscope_rtt_cb;

/* Counters the library keeps; readable by a debugger as well. */
typedef struct {
  uint32_t seq;            /* frames written so far */
  uint32_t dropped_frames; /* frames dropped because the buffer was full (drop mode) */
  uint32_t dropped_bytes;
  uint32_t unreported_frames; /* drops not yet reported in a DROPPED frame */
  uint32_t unreported_bytes;
} etscope_trace_stats;

/* Sets up the library's own control block `_SEGGER_RTT` with up-channel "etscope" over
 * `buffer`. The ID string is written last, so a host scanning RAM never sees a half-built block. */
void etscope_trace_init(char *buffer, uint32_t size, enum etscope_full_mode mode);

/* Streams into up-buffer `channel` of an existing control block instead (e.g. SEGGER's
 * `_SEGGER_RTT` or rtt-target's); the caller has set the buffer up. */
void etscope_trace_attach(etscope_rtt_buffer *channel, enum etscope_full_mode mode);

/* Target info: core name, tick rate, identity of the program (etscope_program_id over the .pte),
 * method name and how many runs follow (0 = unknown). Send it first and after every reset. */
int etscope_trace_target_info(const char *core, uint32_t tick_hz, uint64_t program_id,
                              const char *method, uint32_t runs);
int etscope_trace_run_start(uint32_t run, uint64_t ticks);
int etscope_trace_op(uint32_t instruction, uint32_t chain, uint64_t start, uint64_t end);
int etscope_trace_run_end(uint32_t run, uint64_t ticks);
/* An instruction's output tensor: ExecuTorch scalar type code, logical sizes, dim order and the
 * bytes as stored. */
int etscope_trace_tensor(uint32_t instruction, uint32_t chain, uint8_t scalar_type, uint8_t rank,
                         const int32_t *sizes, const uint8_t *dim_order, const void *data,
                         uint32_t nbytes);
/* A whole ETDump flatbuffer (what ExecuTorch's ETDumpGen holds after a run), in chunks. */
int etscope_trace_etdump(const void *etdump, uint32_t len);

/* Bytes of the debug buffer that goes with the ETDumps sent by etscope_trace_etdump, at `offset`
 * (what ExecuTorch's ETDumpGen writes to its DataSink). */
int etscope_trace_debug_data(uint32_t offset, const void *data, uint32_t len);

/* A line of text for the host's log (errors, notes). */
int etscope_trace_log(const char *text);

/* FNV-1a 64 over the program's bytes: the identity etscope checks a capture against. */
uint64_t etscope_program_id(const void *pte, size_t len);

const etscope_trace_stats *etscope_trace_get_stats(void);

/* Frame writer for callers that build their own payloads. Returns 0, or -1 if dropped. */
int etscope_trace_frame(uint8_t type, const void *payload, uint32_t len);

extern etscope_rtt_cb _SEGGER_RTT;

#ifdef __cplusplus
}
#endif
#endif
