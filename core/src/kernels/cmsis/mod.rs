//! The Cortex-M backend's kernels (`cortex_m::`), computed as the device computes them: the
//! arguments ExecuTorch 1.5.1's kernels pass to CMSIS-NN, the tensors in the order the program
//! stores them, and CMSIS-NN's integer arithmetic bit for bit.
//!
//! - [`arith`] — requantization, the softmax fixed point, rounding rules
//! - [`ops`] — elementwise, quantize, softmax, transpose, pad, activations
//! - [`conv`] — convolution, depthwise, transpose convolution, linear, batch matmul
//! - [`conv_params`] — the requantization and window geometry they share
//! - [`gemm`] — the packed integer GEMM convolution and linear run on
//! - [`depthwise`] — depthwise convolution with the channels as lanes
//! - [`requant_row`] — a pixel's accumulators requantized, vectorized
//! - [`pool`] — average and max pooling
//! - [`core_buffers`] — the buffers each core's CMSIS-NN path needs, and the calls a core
//!   cannot run because the program was lowered for another

pub mod arith;
pub mod conv;
pub mod conv_params;
pub mod core_buffers;
pub mod depthwise;
pub mod gemm;
pub mod notes;
pub mod ops;
pub mod pool;
pub mod requant_row;
#[cfg(test)]
mod test_support;
