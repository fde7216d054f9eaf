// sizeof and alignof, as a compiler lays them out for a target, of every type ExecuTorch
// 1.5.1's Method::load allocates, in the order core/src/plan/budget.rs reads them: an array of
// u32 in the section `.etscope_probe`, read back by probe.sh. `BackendDelegate` and `Chain` are
// private to method.cpp / method.h: mirrors with their members' types stand in for them.

#include <cstdint>
#include <optional>

#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/freeable_buffer.h>
#include <executorch/runtime/core/span.h>
#include <executorch/runtime/executor/platform_memory_allocator.h>
#include <executorch/runtime/kernel/operator_registry.h>

namespace et = executorch::runtime;
namespace ea = executorch::aten;

struct BackendDelegateMirror {
  et::FreeableBuffer segment_;
  const void* backend_;
  void* handle_;
};
using InstructionArgs = et::Span<et::EValue*>;
struct ChainMirror {
  const void* s_chain_;
  et::Span<InstructionArgs> argument_lists_;
  void* kernels_;
};

#define BOTH(T) static_cast<uint32_t>(sizeof(T)), static_cast<uint32_t>(alignof(T))

extern "C" __attribute__((used, section(".etscope_probe"))) const uint32_t etscope_probe[] = {
    BOTH(void*),
    BOTH(et::EValue),
    BOTH(ea::TensorImpl),
    BOTH(ea::Tensor),
    BOTH(std::optional<ea::Tensor>),
    BOTH(et::BoxedEvalueList<int64_t>),
    BOTH(et::BoxedEvalueList<ea::Tensor>),
    BOTH(et::BoxedEvalueList<std::optional<ea::Tensor>>),
    BOTH(ea::ArrayRef<bool>),
    BOTH(ea::ArrayRef<double>),
    BOTH(ea::ArrayRef<char>),
    BOTH(ea::SizesType),
    BOTH(ea::DimOrderType),
    BOTH(ea::StridesType),
    BOTH(int64_t),
    BOTH(bool),
    BOTH(et::TensorMeta),
    BOTH(InstructionArgs),
    BOTH(et::OpFunction),
    BOTH(BackendDelegateMirror),
    BOTH(ChainMirror),
    BOTH(et::internal::PlatformMemoryAllocator),
    static_cast<uint32_t>(et::MemoryAllocator::kDefaultAlignment),
};
