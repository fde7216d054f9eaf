// What measure.cpp (the wheel's runtime on the host) and board_measure.cpp (the runtime built
// for the Cortex-M55) share: a bump allocator that records the highest byte its requests reach
// (a subclass sees each request), and a kernel that does nothing registered under every operator
// name a program calls (loading resolves kernels; it never runs them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <executorch/runtime/core/memory_allocator.h>
#include <executorch/runtime/kernel/operator_registry.h>

namespace etscope_measure {

class CountingAllocator : public executorch::runtime::MemoryAllocator {
 public:
  CountingAllocator(uint32_t size, uint8_t* base) : MemoryAllocator(size, base), base_(base) {}
  void* allocate(size_t size, size_t alignment) override {
    void* p = MemoryAllocator::allocate(size, alignment);
    size_t end = p == nullptr ? 0 : static_cast<uint8_t*>(p) - base_ + size;
    if (end > high_) high_ = end;
    requested(size, alignment, end);
    return p;
  }
  size_t high() const { return high_; }

 protected:
  // Each request, with the byte it ends at (0 when refused).
  virtual void requested(size_t, size_t, size_t) {}

 private:
  uint8_t* base_;
  size_t high_ = 0;
};

inline void noop(executorch::runtime::KernelRuntimeContext&,
                 executorch::runtime::Span<executorch::runtime::EValue*>) {}

// Registers `noop` under every name of the comma-separated `names` (cut into NUL-terminated
// names in place; `kernels` holds at most `cap`).
inline executorch::runtime::Error register_noop_kernels(char* names, executorch::runtime::Kernel* kernels,
                                                        size_t cap) {
  size_t count = 0;
  for (char* p = names; *p != '\0' && count < cap;) {
    char* end = std::strchr(p, ',');
    kernels[count++] = executorch::runtime::Kernel(p, noop);
    if (end == nullptr) break;
    *end = '\0';
    p = end + 1;
  }
  if (count == 0) return executorch::runtime::Error::Ok;
  return executorch::runtime::register_kernels(
      executorch::runtime::Span<const executorch::runtime::Kernel>(kernels, count));
}

}  // namespace etscope_measure
