/* ExecuTorch EventTracer → etscope frames. SPDX-License-Identifier: MIT OR Apache-2.0 */
#include "etscope_event_tracer.h"

#include <cstring>

namespace etscope {

using ::executorch::runtime::AllocatorID;
using ::executorch::runtime::ArrayRef;
using ::executorch::runtime::ChainID;
using ::executorch::runtime::DebugHandle;
using ::executorch::runtime::DelegateDebugIdType;
using ::executorch::runtime::DelegateDebugIntId;
using ::executorch::runtime::EValue;
using ::executorch::runtime::EventTracerEntry;
using ::executorch::runtime::EventTracerFilterBase;
using ::executorch::runtime::kUnsetChainId;
using ::executorch::runtime::LoggedEValueType;
using ::executorch::runtime::Result;

namespace {
/* What an entry's event_id says about the span (end_profiling only gets the entry back). */
constexpr int64_t kMethodExecute = 1;
constexpr int64_t kOperatorCall = 2;
constexpr int64_t kOther = 3;
}  // namespace

EtscopeEventTracer::EtscopeEventTracer(TickSource ticks, uint32_t tick_hz, const char* core,
                                       uint64_t program_id, const char* method, uint32_t runs)
    : ticks_(ticks) {
  etscope_trace_target_info(core, tick_hz, program_id, method, runs);
}

void EtscopeEventTracer::create_event_block(const char* name) {
  if (std::strcmp(name, "Execute") != 0) return;
  if (in_run_) end_run();
  etscope_trace_run_start(run_, ticks_());
  in_run_ = true;
}

void EtscopeEventTracer::end_run() {
  etscope_trace_run_end(run_, ticks_());
  in_run_ = false;
  run_++;
}

EventTracerEntry EtscopeEventTracer::start_profiling(const char* name, ChainID chain_id,
                                                     DebugHandle debug_handle) {
  EventTracerEntry e;
  if (chain_id == kUnsetChainId) {
    chain_id = chain_id_;
    debug_handle = debug_handle_;
  }
  e.event_id = std::strcmp(name, "Method::execute") == 0 ? kMethodExecute
               : std::strcmp(name, "OPERATOR_CALL") == 0 ? kOperatorCall
                                                          : kOther;
  e.chain_id = chain_id;
  e.debug_handle = debug_handle;
  e.delegate_event_id_type = DelegateDebugIdType::kNone;
  e.start_time = ticks_();
  return e;
}

void EtscopeEventTracer::end_profiling(EventTracerEntry entry) {
  uint64_t end = ticks_();
  if (entry.event_id == kMethodExecute) {
    if (in_run_) end_run();
  } else if (entry.event_id == kOperatorCall && in_run_ && entry.chain_id >= 0) {
    etscope_trace_op(entry.debug_handle, static_cast<uint32_t>(entry.chain_id),
                     static_cast<uint64_t>(entry.start_time), end);
  }
}

EventTracerEntry EtscopeEventTracer::start_profiling_delegate(const char*, DelegateDebugIntId) {
  EventTracerEntry e;
  e.event_id = kOther;
  e.chain_id = chain_id_;
  e.debug_handle = debug_handle_;
  e.delegate_event_id_type = DelegateDebugIdType::kInt;
  e.start_time = ticks_();
  return e;
}

/* Delegate-internal events are not in wire format v1: the delegate call itself is timed as its
 * instruction's OPERATOR_CALL... for kernel calls only; DELEGATE_CALL spans are not sent yet. */
void EtscopeEventTracer::end_profiling_delegate(EventTracerEntry, const void*, size_t) {}
void EtscopeEventTracer::log_profiling_delegate(const char*, DelegateDebugIntId, et_timestamp_t,
                                                et_timestamp_t, const void*, size_t) {}

void EtscopeEventTracer::track_allocation(AllocatorID, size_t) {}
AllocatorID EtscopeEventTracer::track_allocator(const char*) { return allocators_++; }

Result<bool> EtscopeEventTracer::log_evalue(const EValue& evalue, LoggedEValueType type) {
  if (type != LoggedEValueType::kIntermediateOutput || !evalue.isTensor() || !in_run_) {
    return false;
  }
  const auto& t = evalue.toTensor();
  int32_t sizes[8];
  uint8_t order[8];
  const auto rank = static_cast<uint8_t>(t.dim() > 8 ? 8 : t.dim());
  for (uint8_t i = 0; i < rank; i++) {
    sizes[i] = static_cast<int32_t>(t.sizes()[i]);
    order[i] = static_cast<uint8_t>(t.dim_order()[i]);
  }
  return etscope_trace_tensor(debug_handle_, static_cast<uint32_t>(chain_id_ < 0 ? 0 : chain_id_),
                              static_cast<uint8_t>(t.scalar_type()), rank, sizes, order,
                              t.const_data_ptr(), static_cast<uint32_t>(t.nbytes())) == 0;
}

Result<bool> EtscopeEventTracer::log_intermediate_output_delegate(
    const char*, DelegateDebugIntId, const ::executorch::aten::Tensor&) {
  return false;
}
Result<bool> EtscopeEventTracer::log_intermediate_output_delegate(
    const char*, DelegateDebugIntId, const ArrayRef<::executorch::aten::Tensor>) {
  return false;
}
Result<bool> EtscopeEventTracer::log_intermediate_output_delegate(const char*, DelegateDebugIntId,
                                                                  const int&) {
  return false;
}
Result<bool> EtscopeEventTracer::log_intermediate_output_delegate(const char*, DelegateDebugIntId,
                                                                  const bool&) {
  return false;
}
Result<bool> EtscopeEventTracer::log_intermediate_output_delegate(const char*, DelegateDebugIntId,
                                                                  const double&) {
  return false;
}
void EtscopeEventTracer::set_delegation_intermediate_output_filter(EventTracerFilterBase*) {}

Result<size_t> EtscopeDataSink::write(const void* ptr, size_t length) {
  size_t offset = used_;
  if (etscope_trace_debug_data(static_cast<uint32_t>(offset), ptr,
                               static_cast<uint32_t>(length)) != 0) {
    return ::executorch::runtime::Error::MemoryAllocationFailed;
  }
  used_ += length;
  return offset;
}

}  // namespace etscope
