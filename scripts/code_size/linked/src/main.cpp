// Minimal bare-metal ExecuTorch program runner (what the Arm executor_runner does, minus
// input setup/output printing): BufferDataLoader over the embedded .pte, Program::load,
// static memory pools, load_method("forward"), execute.
#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/runtime/core/memory_allocator.h>
#include <executorch/runtime/core/hierarchical_allocator.h>
#include <executorch/runtime/executor/memory_manager.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/platform/runtime.h>
#ifdef RUNNER_LIKE
#include <executorch/extension/runner_util/inputs.h>
#include <executorch/runtime/platform/log.h>
#endif

using namespace executorch::runtime;
using executorch::extension::BufferDataLoader;

extern "C" const uint8_t model_pte[];
extern "C" const uint8_t model_pte_end[];

#ifndef METHOD_POOL_SIZE
#define METHOD_POOL_SIZE (512 * 1024)
#endif
#ifndef TEMP_POOL_SIZE
#define TEMP_POOL_SIZE (64 * 1024)
#endif
alignas(16) static uint8_t method_pool[METHOD_POOL_SIZE];
alignas(16) static uint8_t temp_pool[TEMP_POOL_SIZE];

int main() {
  runtime_init();
  BufferDataLoader loader(model_pte, (size_t)(model_pte_end - model_pte));
  Result<Program> program = Program::load(&loader);
  if (!program.ok()) return 1;
  Result<MethodMeta> meta = program->method_meta("forward");
  if (!meta.ok()) return 2;
  MemoryAllocator method_allocator(sizeof(method_pool), method_pool);
  MemoryAllocator temp_allocator(sizeof(temp_pool), temp_pool);
  size_t n = meta->num_memory_planned_buffers();
  Span<uint8_t>* spans = method_allocator.allocateList<Span<uint8_t>>(n);
  if (spans == nullptr) return 5;
  for (size_t i = 0; i < n; ++i) {
    size_t sz = meta->memory_planned_buffer_size(i).get();
    uint8_t* p = static_cast<uint8_t*>(method_allocator.allocate(sz, 16));
    if (p == nullptr) return 6;
    spans[i] = Span<uint8_t>(p, sz);
  }
  HierarchicalAllocator planned({spans, n});
  MemoryManager memory_manager(&method_allocator, &planned, &temp_allocator);
  Result<Method> method = program->load_method("forward", &memory_manager);
  if (!method.ok()) return 3;
#ifdef RUNNER_LIKE
  // What the Arm executor_runner adds around execute(): input tensors prepared
  // (extension_runner_util), outputs read back and logged.
  auto inputs = executorch::extension::prepare_input_tensors(*method);
  if (!inputs.ok()) return 7;
#endif
  Error err = method->execute();
#ifdef RUNNER_LIKE
  for (size_t i = 0; i < method->outputs_size(); ++i) {
    const EValue& out = method->get_output(i);
    if (out.isTensor()) {
      auto t = out.toTensor();
      ET_LOG(Info, "output %d: numel %d first %f", (int)i, (int)t.numel(),
             t.numel() > 0 ? (double)t.const_data_ptr<float>()[0] : 0.0);
    }
  }
#endif
  return err == Error::Ok ? 0 : 4;
}
