// What ExecuTorch's runtime allocates to load a program's method: every request its method
// allocator and its temp allocator see during Program::load_method, in order, as
// "<M|T> <size> <alignment> <offset after>" lines, then the totals. Every operator the
// program calls is registered as a kernel that does nothing (loading resolves kernels; it never
// runs them), so any program loads whatever kernels it names.
//
//   measure PROGRAM.pte [--no-temp]   (built by measure.sh against the executorch wheel)

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/runtime/core/hierarchical_allocator.h>
#include <executorch/runtime/core/memory_allocator.h>
#include <executorch/runtime/executor/memory_manager.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/kernel/operator_registry.h>
#include <executorch/runtime/platform/runtime.h>

#include "counting.h"

using executorch::extension::BufferDataLoader;
using executorch::runtime::Error;
using executorch::runtime::HierarchicalAllocator;
using executorch::runtime::Kernel;
using executorch::runtime::MemoryManager;
using executorch::runtime::Program;
using executorch::runtime::Span;

namespace {

// A counting allocator over a 16-byte-aligned buffer that logs every request.
class Logging : public etscope_measure::CountingAllocator {
 public:
  Logging(char tag, uint32_t size, uint8_t* base) : CountingAllocator(size, base), tag_(tag) {}
  void reset() override {
    CountingAllocator::reset();
    std::printf("%c reset\n", tag_);
  }

 protected:
  void requested(size_t size, size_t alignment, size_t end) override {
    std::printf("%c %zu %zu %zu\n", tag_, size, alignment, end);
  }

 private:
  char tag_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: measure PROGRAM.pte [--no-temp]\n");
    return 2;
  }
  bool no_temp = argc > 2 && std::strcmp(argv[2], "--no-temp") == 0;
  executorch::runtime::runtime_init();
  std::ifstream f(argv[1], std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  BufferDataLoader loader(bytes.data(), bytes.size());
  auto program = Program::load(&loader, Program::Verification::Minimal);
  if (!program.ok()) {
    std::fprintf(stderr, "%s: Program::load failed: 0x%x\n", argv[1], (unsigned)program.error());
    return 1;
  }
  auto first = program->get_method_name(0);
  if (!first.ok()) return 1;
  const char* name = *first;
  auto meta = program->method_meta(name);
  if (!meta.ok()) return 1;
  // every operator the plan names, as a kernel that does nothing
  const char* ops_env = std::getenv("ETSCOPE_OPERATORS");
  static std::vector<char> names(ops_env ? ops_env : "", ops_env ? ops_env + std::strlen(ops_env) + 1 : nullptr);
  static Kernel kernels[256];
  if (!names.empty() && etscope_measure::register_noop_kernels(names.data(), kernels, 256) != Error::Ok) {
    std::fprintf(stderr, "registering kernels failed\n");
    return 1;
  }
  std::vector<std::vector<uint8_t>> planned;
  std::vector<Span<uint8_t>> spans;
  for (size_t i = 0; i < meta->num_memory_planned_buffers(); ++i) {
    planned.emplace_back(static_cast<size_t>(*meta->memory_planned_buffer_size(i)));
    spans.emplace_back(planned.back().data(), planned.back().size());
  }
  HierarchicalAllocator planned_memory({spans.data(), spans.size()});
  alignas(16) static uint8_t method_pool[8 << 20];
  alignas(16) static uint8_t temp_pool[1 << 20];
  Logging method_allocator('M', sizeof(method_pool), method_pool);
  Logging temp_allocator('T', sizeof(temp_pool), temp_pool);
  MemoryManager memory(&method_allocator, &planned_memory, no_temp ? nullptr : &temp_allocator);
  auto method = program->load_method(name, &memory);
  if (!method.ok()) {
    std::fprintf(stderr, "%s: load_method failed: 0x%x\n", argv[1], (unsigned)method.error());
    return 1;
  }
  std::printf("method_allocator %zu\ntemp_allocator %zu\n", method_allocator.high(), temp_allocator.high());
  return 0;
}
