//! What one run may take: its work budget and cancel flag, shared by the kernels of the run, and
//! the size limits of host tensors (shapes come from files and arguments).

/// Operations one run may perform by default: far above any real Cortex-M model (MobileNet
/// v1 0.25 needs about 10^7 multiply-accumulates), low enough that a hostile program is refused
/// within seconds.
pub const DEFAULT_WORK_BUDGET: u64 = 1 << 33;
/// Instructions one run may execute (jumps can loop).
pub const MAX_EXECUTED_INSTRUCTIONS: u64 = 1 << 24;

/// A run's remaining work and its cancel flag, shared by the kernels of one run.
#[derive(Debug)]
pub struct Work {
    remaining: std::cell::Cell<u64>,
    budget: u64,
    cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl Work {
    pub fn new(budget: u64, cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>) -> Work {
        Work {
            remaining: std::cell::Cell::new(budget),
            budget,
            cancel,
        }
    }

    /// Takes `units` from the budget: false when it is spent.
    pub fn take(&self, units: u64) -> bool {
        match self.remaining.get().checked_sub(units) {
            Some(r) => {
                self.remaining.set(r);
                true
            }
            None => false,
        }
    }

    /// The budget the run started with.
    pub fn budget(&self) -> u64 {
        self.budget
    }

    pub fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
    }
}

/// The most elements one host tensor may hold (1 GiB of f32). Shapes come from the program and
/// operator arguments, so a corrupted file could otherwise ask for more memory than exists.
pub const MAX_TENSOR_ELEMENTS: usize = 1 << 28;

/// The element count of `dims`, or `None` when it overflows or exceeds [`MAX_TENSOR_ELEMENTS`].
pub fn element_count(dims: &[usize]) -> Option<usize> {
    dims.iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .filter(|&n| n <= MAX_TENSOR_ELEMENTS)
}
