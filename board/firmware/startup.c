/* Vector table and reset for the emulated board: copy .data, zero .bss, enable the FPU, run. */
#include <stdint.h>
#include <string.h>

extern uint32_t _data_load, _data_start, _data_end, _bss_start, _bss_end, _stack_top;
extern int main(void);
void SysTick_Handler(void);

void Reset_Handler(void) {
  memcpy(&_data_start, &_data_load, (size_t)((char *)&_data_end - (char *)&_data_start));
  memset(&_bss_start, 0, (size_t)((char *)&_bss_end - (char *)&_bss_start));
  /* CPACR: full access to CP10/CP11 (the FPU) */
  *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
  __asm volatile("dsb\n isb" ::: "memory");
  main();
  for (;;) {
    __asm volatile("wfi");
  }
}

volatile uint32_t g_fault_count;
static void Fault_Handler(void) {
  g_fault_count++;
  for (;;) {
  }
}

__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))(&_stack_top),
    Reset_Handler,
    Fault_Handler, /* NMI */
    Fault_Handler, /* HardFault */
    Fault_Handler, /* MemManage */
    Fault_Handler, /* BusFault */
    Fault_Handler, /* UsageFault */
    Fault_Handler, /* SecureFault */
    0,
    0,
    0,
    Fault_Handler, /* SVC */
    Fault_Handler, /* DebugMon */
    0,
    Fault_Handler, /* PendSV */
    SysTick_Handler,
};
