//! Calls that fail on a Helium (MVE) core because the program was lowered for a core without
//! it. CMSIS-NN's MVE path needs buffers the scalar/DSP path does not: `arm_fully_connected_s8`
//! and `arm_batch_matmul_s8` a kernel-sum/vector-sum buffer, `arm_depthwise_conv_s8_opt` a
//! scratch buffer; a program lowered for a Cortex-M4 carries none of them (no `kernel_sum`,
//! 0-byte scratch tensors). ExecuTorch 1.5.1's kernels pass what the program has, CMSIS-NN
//! returns `ARM_CMSIS_NN_ARG_ERROR` and the run fails; a depthwise call with one input channel
//! is turned into a regular convolution that writes through the missing buffer, and the core
//! faults. Measured on QEMU's Cortex-M55 with ExecuTorch's own runtime and kernels: every M4
//! operator program that fails there is one of these, and no other does
//! (`core/tests/real_world.rs::programs_lowered_for_a_core_without_helium_fail_on_an_m55_where_the_board_fails`).
//! Both the kernels (the run stops) and the static device notes use this one rule.

use super::device_notes::{int_list, tensor_arg};
use crate::pte::{EValue, ExecutionPlan};

/// The facts of one call that decide whether a Helium core can run it.
#[derive(Debug, Clone, Copy)]
pub enum HeliumCall {
    /// `quantized_linear`: does the call carry a kernel sum?
    Linear { kernel_sum: bool },
    /// `quantized_batch_matmul`: bytes of its scratch tensor.
    BatchMatmul { scratch_bytes: usize },
    /// `quantized_depthwise_conv2d[_nhwc]`.
    Depthwise {
        scratch_bytes: usize,
        batch: usize,
        in_channels: usize,
        out_channels: usize,
        depth_multiplier: usize,
        dilation: (usize, usize),
    },
}

/// Why the call fails on a Helium core, `None` when it runs there.
pub fn fails_on_helium(call: HeliumCall) -> Option<&'static str> {
    match call {
        HeliumCall::Linear { kernel_sum: false } => Some(
            "lowered for a core without Helium: CMSIS-NN's MVE arm_fully_connected_s8 needs the kernel sum \
             this call does not carry, returns ARM_CMSIS_NN_ARG_ERROR and ExecuTorch fails the run",
        ),
        HeliumCall::BatchMatmul { scratch_bytes: 0 } => Some(
            "lowered for a core without Helium: CMSIS-NN's MVE arm_batch_matmul_s8 needs a scratch buffer \
             and this call's is empty; it returns ARM_CMSIS_NN_ARG_ERROR and ExecuTorch fails the run",
        ),
        HeliumCall::Depthwise {
            scratch_bytes: 0,
            batch,
            in_channels,
            out_channels,
            depth_multiplier,
            dilation,
        } => {
            // arm_depthwise_conv_wrapper_s8 on MVE (threshold 1 as GCC builds it)
            if in_channels == 1 && out_channels > 1 {
                Some(
                    "lowered for a core without Helium: with one input channel the MVE path turns the \
                     depthwise call into a convolution that writes through the missing scratch buffer; \
                     the core faults (measured on the emulated Cortex-M55)",
                )
            } else if depth_multiplier == 1 && batch == 1 && dilation == (1, 1) {
                Some(
                    "lowered for a core without Helium: CMSIS-NN's MVE arm_depthwise_conv_s8_opt needs a \
                     scratch buffer and this call's is empty; it returns ARM_CMSIS_NN_ARG_ERROR and \
                     ExecuTorch fails the run",
                )
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The facts of call `op(args)` of `plan` as the program states them, for the calls
/// [`fails_on_helium`] judges (`None` for any other call or when the program does not say).
pub fn helium_call_in_program(
    plan: &ExecutionPlan,
    op: &str,
    args: &[usize],
) -> Option<HeliumCall> {
    let bytes = |k: usize| -> Option<usize> {
        let t = tensor_arg(plan, args, k)?;
        let n = t
            .sizes
            .iter()
            .try_fold(1usize, |n, &s| n.checked_mul(usize::try_from(s).ok()?))?;
        n.checked_mul(t.scalar_type.element_size().unwrap_or(1))
    };
    match op {
        "cortex_m::quantized_linear" => Some(HeliumCall::Linear {
            kernel_sum: matches!(
                args.get(3).and_then(|&v| plan.values.get(v)),
                Some(EValue::Tensor(_))
            ),
        }),
        "cortex_m::quantized_batch_matmul" => Some(HeliumCall::BatchMatmul {
            scratch_bytes: bytes(7)?,
        }),
        "cortex_m::quantized_depthwise_conv2d" | "cortex_m::quantized_depthwise_conv2d_nhwc" => {
            let nhwc = op.ends_with("_nhwc");
            let dim = |t: &crate::pte::Tensor, nchw: usize, nhwc_i: usize| {
                t.sizes
                    .get(if nhwc { nhwc_i } else { nchw })
                    .and_then(|&s| usize::try_from(s).ok())
            };
            let (x, out) = (
                tensor_arg(plan, args, 0)?,
                tensor_arg(plan, args, args.len().checked_sub(2)?)?,
            );
            let dilation = int_list(plan, args, 5);
            let d = |i: usize| {
                dilation
                    .get(i)
                    .and_then(|&v| usize::try_from(v).ok())
                    .unwrap_or(1)
            };
            let multiplier = match args.get(6).and_then(|&v| plan.values.get(v)) {
                Some(EValue::Int(m)) => usize::try_from(*m).ok()?,
                _ => return None,
            };
            Some(HeliumCall::Depthwise {
                scratch_bytes: bytes(13)?,
                batch: dim(x, 0, 0)?,
                in_channels: dim(x, 1, 3)?,
                out_channels: dim(out, 1, 3)?,
                depth_multiplier: multiplier,
                dilation: (d(0), d(1)),
            })
        }
        _ => None,
    }
}
