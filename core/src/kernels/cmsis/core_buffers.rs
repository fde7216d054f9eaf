//! Calls a core cannot run because the program was lowered for another. CMSIS-NN's paths
//! need different buffers: on Helium (MVE) `arm_fully_connected_s8` and `arm_batch_matmul_s8`
//! a kernel-sum/vector-sum buffer and `arm_depthwise_conv_s8_opt` a scratch buffer, which a
//! program lowered for a Cortex-M4 does not carry (no `kernel_sum`, 0-byte scratch tensors); on
//! the DSP path `arm_avgpool_s8` a 4-bytes-per-channel buffer, which a program lowered for the
//! M55 leaves empty. ExecuTorch 1.5.1's kernels pass what the program has, CMSIS-NN returns
//! `ARM_CMSIS_NN_ARG_ERROR` and the run fails; a depthwise call with one input channel is
//! turned, on Helium, into a regular convolution that writes through the missing buffer, and
//! the core faults. Measured with ExecuTorch's own runtime and kernels on QEMU's Cortex-M55 and
//! Cortex-M4: every operator program that fails there is one of these, and no other does
//! (`core/tests/real_world.rs::programs_lowered_for_another_core_fail_where_the_board_fails`).
//! The kernels (the run stops), the static device notes and `Target::of_program` use this one
//! rule; the facts of a call in a program are read over the IR (`ir::call::CallView::core_call`).

use crate::kernels::Target;

/// The facts of one call that decide whether a core can run it.
#[derive(Debug, Clone, Copy)]
pub enum CoreCall {
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
    /// `quantized_avg_pool2d[_nhwc]`.
    AvgPool {
        scratch_bytes: usize,
        channels: usize,
    },
}

/// Why `target` cannot run the call, `None` when it can.
pub fn fails_on(target: Target, call: CoreCall) -> Option<&'static str> {
    match (target, call) {
        (Target::CortexM55, CoreCall::Linear { kernel_sum: false }) => Some(
            "lowered for a core without Helium: CMSIS-NN's MVE arm_fully_connected_s8 needs the kernel sum \
             this call does not carry, returns ARM_CMSIS_NN_ARG_ERROR and ExecuTorch fails the run",
        ),
        (Target::CortexM55, CoreCall::BatchMatmul { scratch_bytes: 0 }) => Some(
            "lowered for a core without Helium: CMSIS-NN's MVE arm_batch_matmul_s8 needs a scratch buffer \
             and this call's is empty; it returns ARM_CMSIS_NN_ARG_ERROR and ExecuTorch fails the run",
        ),
        (
            Target::CortexM55,
            CoreCall::Depthwise {
                scratch_bytes: 0,
                batch,
                in_channels,
                out_channels,
                depth_multiplier,
                dilation,
            },
        ) => {
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
        (
            Target::CortexMDsp,
            CoreCall::AvgPool {
                scratch_bytes: 0,
                channels,
            },
        ) if channels > 0 => Some(
            "lowered for a Helium core: CMSIS-NN's DSP arm_avgpool_s8 needs a scratch buffer of 4 bytes \
             per channel and this call's is empty; it returns ARM_CMSIS_NN_ARG_ERROR and ExecuTorch \
             fails the run",
        ),
        _ => None,
    }
}

/// Why `target` runs the call but computes another result than the core the program was
/// lowered for, `None` when it computes the same. A Helium program's linear layer carries its
/// bias folded into a kernel sum that only CMSIS-NN's MVE `arm_fully_connected_s8` reads; the
/// DSP and plain-C paths take the (absent) bias, so the layer runs without it. ExecuTorch's run
/// succeeds and its outputs are wrong.
pub fn differs_on(target: Target, call: CoreCall) -> Option<&'static str> {
    match call {
        CoreCall::Linear { kernel_sum: true } if !target.has_helium() => Some(
            "lowered for a Helium core: the layer's bias is folded into a kernel sum that only \
             CMSIS-NN's MVE path reads, so this core computes the layer without its bias and every \
             output after it is wrong",
        ),
        _ => None,
    }
}

/// Why `target` would not run the call as the program means it: it fails ([`fails_on`]) or
/// computes another result ([`differs_on`]).
pub fn not_as_lowered_on(target: Target, call: CoreCall) -> Option<&'static str> {
    fails_on(target, call).or_else(|| differs_on(target, call))
}
