//! Why a kernel call or a run failed: every error names the node (instruction) and operator.

use thiserror::Error;

/// Why a run failed.
#[derive(Debug, Error)]
pub enum RuntimeError {
    /// The program uses an operator this runtime does not implement.
    #[error("instruction {instruction}: operator {op} is not implemented by etscope's runtime")]
    UnsupportedOp { op: String, instruction: usize },
    /// The program uses a feature of the format this runtime does not implement: refused
    /// before the run rather than run on a guess.
    #[error("method {method}: the program uses {feature}, which etscope's runtime does not implement; it is refused rather than run on a guess")]
    Unimplemented { method: String, feature: String },
    /// A delegate blob can only run on its backend.
    /// A float kernel would call a C library function whose results on the device the host
    /// does not model (its last bits would be the host's).
    #[error("instruction {instruction} ({op}): {reason}")]
    Unmodelled {
        op: String,
        instruction: usize,
        reason: crate::kernels::libm::Unmodelled,
    },
    #[error("instruction {instruction}: delegate {backend} cannot run on the host (its blob is backend code)")]
    Delegate { backend: String, instruction: usize },
    /// The operator's arguments are not what its kernel expects.
    #[error("instruction {instruction} ({op}): {detail}")]
    BadArgs {
        op: String,
        instruction: usize,
        detail: String,
    },
    /// The inputs given do not fit the program.
    #[error("input {index}: {detail}")]
    Input { index: usize, detail: String },
    /// Not as many inputs given as the program takes.
    #[error("the program takes {expected} input(s), {given} given")]
    InputCount { expected: usize, given: usize },
    /// The program itself is inconsistent.
    #[error("program: {0}")]
    Program(String),
    /// The run needs more work than its budget allows (a hostile or corrupted program: huge
    /// windows, loops that jump back forever).
    #[error("instruction {instruction} ({op}): the run exceeds its work budget of {budget} operations; a real program of this size needs far less")]
    WorkBudget {
        op: String,
        instruction: usize,
        budget: u64,
    },
    /// The device's kernel fails (or the core faults) at this call: what ExecuTorch does on the
    /// board, reproduced rather than computed around.
    #[error("instruction {instruction} ({op}) fails on the device: {why}")]
    DeviceFails {
        op: String,
        instruction: usize,
        why: String,
    },
    /// The program's tensors need more host memory than the preparation budget allows.
    #[error("the program's tensors need more than {limit_mib} MiB on the host (value {value}); raise the preparation budget if the machine has the memory (etscope run --max-memory MIB)")]
    OverBudget { limit_mib: u64, value: usize },
    /// The caller cancelled the run.
    #[error("cancelled at instruction {instruction}")]
    Cancelled { instruction: usize },
}
