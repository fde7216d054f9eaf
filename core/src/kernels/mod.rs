//! The host kernels: ExecuTorch's portable `aten` kernels, the `quantized_decomposed` ones and
//! the Cortex-M backend's `cortex_m::` kernels with CMSIS-NN's integer arithmetic, each a
//! function of a calling context ([`ctx::Ctx`]: the run's values, the call's argument slots, the
//! device modelled) that writes its out tensors. Kernels know nothing of graphs or programs:
//! the operator registry (`crate::ops`) binds each operator to its kernel, and the runtime
//! (`crate::runtime`) calls them in a graph's order.
//!
//! - [`portable`] — `aten` (convolution, pooling, linear algebra, elementwise, data movement)
//! - [`quantized`] — `quantized_decomposed` quantize / dequantize
//! - [`cmsis`] — the `cortex_m::` backend and the arithmetic and buffers of each CMSIS-NN path
//! - [`value`], [`layout`], [`ctx`] — runtime values, storage order, the calling context
//! - [`derived`] — forms of the constants a kernel derives once (packed weights), kept per runtime
//! - [`stored_forms`] — the storage-order elements a kernel wrote, kept for its readers
//! - [`simd`] — how the hot loops pick their AVX2 build
//! - [`transpose_i8`] — byte matrices transposed in 16 × 8 blocks (int8 to and from channels-last)
//! - [`device`], [`budget`], [`error`] — what is modelled, what a run may take, why it failed

pub mod budget;
pub mod cmsis;
pub mod ctx;
pub mod derived;
pub mod device;
pub mod error;
pub mod layout;
pub mod libm;
pub mod math;
pub mod portable;
pub mod quantized;
pub mod simd;
pub mod stored_forms;
pub mod transpose_i8;
pub mod value;

pub use budget::{
    element_count, Work, DEFAULT_WORK_BUDGET, MAX_EXECUTED_INSTRUCTIONS, MAX_TENSOR_ELEMENTS,
};
pub use ctx::Ctx;
pub use derived::Derived;
pub use device::{CmsisNn, Device, Target};
pub use error::RuntimeError;
pub use stored_forms::StoredForms;

/// A host kernel: computes one call from its argument slots (inputs, then out tensors, then the
/// returned value, as ExecuTorch's out variants take them).
pub type KernelFn = fn(&mut Ctx<'_>, &[usize]) -> Result<(), RuntimeError>;
