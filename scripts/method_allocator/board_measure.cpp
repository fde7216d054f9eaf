// measure.cpp for the emulated board (QEMU mps3-an547, Cortex-M55): ExecuTorch 1.5.1's runtime
// built for the core loads the program QEMU placed at 0x60000000 (its size at 0x60FFFFF0; the
// operator names, comma-separated, at 0x60F00000) with logging bump allocators in DDR, and
// prints "method_allocator N", "temp_allocator N" and "method_allocator_without_temp N" over
// Arm semihosting, then exits QEMU. Built and run by board_measure.sh.

#include <cstdint>
#include <cstdio>
#include <cstring>

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

extern "C" void SysTick_Handler(void) {}
extern "C" void _init(void) {}
extern "C" void _fini(void) {}

namespace {

long semihost(long op, const void* arg) {
  register long r0 __asm__("r0") = op;
  register const void* r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

void say(const char* s) { semihost(0x04, s); }

[[noreturn]] void stop(int code) {
  static uint32_t block[2];
  block[0] = 0x20026;  // ADP_Stopped_ApplicationExit
  block[1] = static_cast<uint32_t>(code);
  semihost(0x20, block);  // SYS_EXIT_EXTENDED
  for (;;) {
  }
}

uint8_t* const kProgram = reinterpret_cast<uint8_t*>(0x60000000);
char* const kOperators = reinterpret_cast<char*>(0x60F00000);
const uint32_t* const kProgramSize = reinterpret_cast<const uint32_t*>(0x60FFFFF0);
uint8_t* const kMethodPool = reinterpret_cast<uint8_t*>(0x61000000);
uint8_t* const kTempPool = reinterpret_cast<uint8_t*>(0x61400000);
uint8_t* const kPlanned = reinterpret_cast<uint8_t*>(0x61600000);
constexpr uint32_t kMethodPoolSize = 4u << 20, kTempPoolSize = 1u << 20;

Kernel kernels[256];

size_t load(Program& program, const char* name, bool with_temp, size_t* temp_high) {
  auto meta = program.method_meta(name);
  if (!meta.ok()) stop(3);
  Span<uint8_t> spans[16];
  size_t n = meta->num_memory_planned_buffers();
  if (n > 16) stop(4);
  uint8_t* next = kPlanned;
  for (size_t i = 0; i < n; ++i) {
    size_t size = static_cast<size_t>(*meta->memory_planned_buffer_size(i));
    spans[i] = Span<uint8_t>(next, size);
    next += (size + 15) & ~size_t(15);
  }
  HierarchicalAllocator planned({spans, n});
  etscope_measure::CountingAllocator method_allocator(kMethodPoolSize, kMethodPool);
  etscope_measure::CountingAllocator temp_allocator(kTempPoolSize, kTempPool);
  MemoryManager memory(&method_allocator, &planned, with_temp ? &temp_allocator : nullptr);
  auto method = program.load_method(name, &memory);
  if (!method.ok()) {
    char line[96];
    std::snprintf(line, sizeof line, "load_method failed: 0x%x\n", static_cast<unsigned>(method.error()));
    say(line);
    stop(5);
  }
  *temp_high = temp_allocator.high();
  return method_allocator.high();
}

}  // namespace

int main() {
  executorch::runtime::runtime_init();
  if (etscope_measure::register_noop_kernels(kOperators, kernels, 256) != Error::Ok) stop(2);
  BufferDataLoader loader(kProgram, *kProgramSize);
  auto program = Program::load(&loader, Program::Verification::Minimal);
  if (!program.ok()) stop(1);
  auto first = program->get_method_name(0);
  if (!first.ok()) stop(1);
  size_t temp = 0, ignored = 0;
  size_t with = load(*program, *first, true, &temp);
  size_t without = load(*program, *first, false, &ignored);
  char line[160];
  std::snprintf(line, sizeof line, "method_allocator %u\ntemp_allocator %u\nmethod_allocator_without_temp %u\n",
                static_cast<unsigned>(with), static_cast<unsigned>(temp), static_cast<unsigned>(without));
  say(line);
  stop(0);
}
