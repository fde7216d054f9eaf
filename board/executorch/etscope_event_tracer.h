/* ExecuTorch glue for etscope_trace: an EventTracer that streams every operator's time (and,
 * when intermediate-output logging is on, its output tensor) as etscope frames while the model
 * runs, and a DataSink that streams the debug data of ExecuTorch's own ETDumpGen.
 * SPDX-License-Identifier: MIT OR Apache-2.0
 *
 * Streaming per-op events (small buffers, long runs):
 *
 *   static char rtt[16 * 1024];
 *   etscope_trace_init(rtt, sizeof rtt, ETSCOPE_BLOCK);
 *   etscope::EtscopeEventTracer tracer(my_ticks, 32000000, "cortex-m55",
 *                                      etscope_program_id(pte, pte_len));
 *   Result<Method> method = program->load_method("forward", &memory_manager, &tracer);
 *   method->execute();   // frames flow while it runs
 *
 * Or keep ExecuTorch's ETDumpGen and send its buffer after each run:
 *
 *   etscope::stream_etdump(etdump_gen.get_etdump_data());   (whole ETDump, chunked)
 *
 * and give ETDumpGen an etscope::EtscopeDataSink so its debug data streams too.
 */
#pragma once

#include <executorch/devtools/etdump/data_sinks/data_sink_base.h>
#include <executorch/runtime/core/event_tracer.h>

#include "../lib/etscope_trace.h"

namespace etscope {

/** Reads the target's tick counter (SysTick extended, DWT CYCCNT, a timer). */
using TickSource = uint64_t (*)();

class EtscopeEventTracer final : public ::executorch::runtime::EventTracer {
 public:
  EtscopeEventTracer(TickSource ticks, uint32_t tick_hz, const char* core, uint64_t program_id,
                     const char* method = "forward", uint32_t runs = 0);

  void create_event_block(const char* name) override;
  ::executorch::runtime::EventTracerEntry start_profiling(
      const char* name, ::executorch::runtime::ChainID chain_id,
      ::executorch::runtime::DebugHandle debug_handle) override;
  ::executorch::runtime::EventTracerEntry start_profiling_delegate(
      const char* name, ::executorch::runtime::DelegateDebugIntId delegate_debug_index) override;
  void end_profiling_delegate(::executorch::runtime::EventTracerEntry entry, const void* metadata,
                              size_t metadata_len) override;
  void log_profiling_delegate(const char* name,
                              ::executorch::runtime::DelegateDebugIntId delegate_debug_index,
                              et_timestamp_t start_time, et_timestamp_t end_time,
                              const void* metadata, size_t metadata_len) override;
  void end_profiling(::executorch::runtime::EventTracerEntry entry) override;
  void track_allocation(::executorch::runtime::AllocatorID id, size_t size) override;
  ::executorch::runtime::AllocatorID track_allocator(const char* name) override;
  ::executorch::runtime::Result<bool> log_evalue(
      const ::executorch::runtime::EValue& evalue,
      ::executorch::runtime::LoggedEValueType evalue_type) override;
  ::executorch::runtime::Result<bool> log_intermediate_output_delegate(
      const char* name, ::executorch::runtime::DelegateDebugIntId delegate_debug_index,
      const ::executorch::aten::Tensor& output) override;
  ::executorch::runtime::Result<bool> log_intermediate_output_delegate(
      const char* name, ::executorch::runtime::DelegateDebugIntId delegate_debug_index,
      const ::executorch::runtime::ArrayRef<::executorch::aten::Tensor> output) override;
  ::executorch::runtime::Result<bool> log_intermediate_output_delegate(
      const char* name, ::executorch::runtime::DelegateDebugIntId delegate_debug_index,
      const int& output) override;
  ::executorch::runtime::Result<bool> log_intermediate_output_delegate(
      const char* name, ::executorch::runtime::DelegateDebugIntId delegate_debug_index,
      const bool& output) override;
  ::executorch::runtime::Result<bool> log_intermediate_output_delegate(
      const char* name, ::executorch::runtime::DelegateDebugIntId delegate_debug_index,
      const double& output) override;
  void set_delegation_intermediate_output_filter(
      ::executorch::runtime::EventTracerFilterBase* filter) override;

  /** Runs streamed so far. */
  uint32_t runs() const { return run_; }

 private:
  void end_run();
  TickSource ticks_;
  uint32_t run_ = 0;
  bool in_run_ = false;
  uint32_t allocators_ = 0;
};

/** A DataSink for ExecuTorch's ETDumpGen that streams the debug data it writes (offsets as
 * ETDumpGen records them), so the ETDump sent afterwards resolves its tensors on the host. */
class EtscopeDataSink final : public ::executorch::etdump::DataSinkBase {
 public:
  ::executorch::runtime::Result<size_t> write(const void* ptr, size_t length) override;
  size_t get_used_bytes() const override { return used_; }

 private:
  size_t used_ = 0;
};

/** Sends a finished ETDump (ETDumpGen::get_etdump_data()'s buffer) to the host in chunks. */
inline int stream_etdump(const void* buf, size_t size) {
  return etscope_trace_etdump(buf, static_cast<uint32_t>(size));
}

}  // namespace etscope
