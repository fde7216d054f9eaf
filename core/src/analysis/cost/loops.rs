//! The instruction mixes of CMSIS-NN's loops (dbf45dbf, `arm-none-eabi-gcc -O2`), one constant
//! per loop, named after the function and the work one trip does. `DSP` constants are counted
//! in the Cortex-M4 build, `MVE` in the Cortex-M55 build, `PLAIN` in the Cortex-M3 build
//! (`scripts/cost/loop_mix.py OBJ`; docs/cost-model.md lists the addresses). Constants marked
//! "from source" are counted by reading the C where the compiled loop is not one piece.

use super::mix::Mix;

const fn s(alu: f64, load: f64, store: f64, multiply: f64, branch: f64) -> Mix {
    Mix::scalar(alu, load, store, multiply, branch)
}

const fn h(scalar: Mix, vector_load_store: f64, vector_op: f64) -> Mix {
    Mix::helium(scalar, vector_load_store, vector_op)
}

// ---- arm_nn_mat_mult_nt_t_s8 (1×1 convolution, the DSP/MVE matrix core)
/// DSP: 16 columns of a 2×2 block (two weight rows × two input rows): 32 SMLAD (0x158–0x2aa).
pub const MM_DSP_16: Mix = s(37.0, 20.0, 1.0, 32.0, 1.0);
/// DSP: 4 columns of a 2×2 block (0x2e0–0x336).
pub const MM_DSP_4: Mix = s(10.0, 5.0, 0.0, 8.0, 1.0);
/// DSP: 1 column of a 2×2 block (0x36c–0x38e).
pub const MM_DSP_1: Mix = s(1.0, 4.0, 0.0, 4.0, 1.0);
/// DSP: one 2×2 block's set-up, four requantizations, clamps and stores (the block loop
/// 0x132–0x4a2 less its column loops).
pub const MM_DSP_BLOCK: Mix = s(103.0, 37.0, 12.0, 4.0, 7.0);
/// DSP: one column of a weight-row pair's offset contribution (0xc0–0xce).
pub const MM_DSP_ROW_SUM: Mix = s(3.0, 2.0, 0.0, 0.0, 1.0);
/// MVE: 16 columns of a 4×1 block (four input rows × one weight row): 5 VLDRB, 4 VMLADAVA,
/// VADDVA, LETP (0xe8–0x110).
pub const MM_MVE_16: Mix = h(s(0.0, 0.0, 0.0, 0.0, 1.0), 5.0, 5.0);
/// MVE: one 4×1 block's set-up, vector requantization of the four sums and stores
/// (0xbe–0x196 less its column loop).
pub const MM_MVE_BLOCK: Mix = h(s(16.0, 15.0, 6.0, 1.0, 3.0), 3.0, 12.0);
/// MVE: 16 columns of a left-over input row (0x230–0x240).
pub const MM_MVE_TAIL_16: Mix = h(s(0.0, 0.0, 0.0, 0.0, 1.0), 2.0, 2.0);
/// MVE: one left-over row's output (0x21c–0x2c0 less its column loop).
pub const MM_MVE_TAIL_OUT: Mix = h(s(15.0, 4.0, 2.0, 1.0, 4.0), 5.0, 14.0);
/// PLAIN: 1 column of a 2×2 block: 4 loads, 4 MLA (Cortex-M3 build, 0x116–0x138).
pub const MM_PLAIN_1: Mix = s(1.0, 4.0, 0.0, 4.0, 1.0);
/// PLAIN: one 2×2 block's requantization and stores (as the DSP block; from source).
pub const MM_PLAIN_BLOCK: Mix = s(103.0, 37.0, 12.0, 4.0, 7.0);

// ---- arm_convolve_s8 (im2col) and arm_nn_mat_mult_kernel_s8_s16 (DSP)
/// DSP: 4 columns of a 2×2 block of the s16 kernel: 8 SMLAD (0xc8–0x120).
pub const MK_DSP_4: Mix = s(9.0, 7.0, 1.0, 8.0, 1.0);
/// DSP: 1 column of a 2×2 block (0x140–0x162).
pub const MK_DSP_1: Mix = s(1.0, 4.0, 0.0, 4.0, 1.0);
/// DSP: one 2×2 block's requantization and stores (0x92–0x2e8 less its column loops).
pub const MK_DSP_BLOCK: Mix = s(122.0, 39.0, 10.0, 4.0, 8.0);
/// DSP: 4 column bytes widened to s16 with the offset (arm_q7_to_q15_with_offset 0x18–0x3c;
/// arm_s8_to_s16_unordered_with_offset's 0x12–0x30 is 9 instructions of the same classes).
pub const IM2COL_DSP_4: Mix = s(7.0, 1.0, 2.0, 0.0, 1.0);
/// One call of a small copy helper (arm_q7_to_q15_with_offset, arm_memcpy_s8): the call, its
/// set-up and return (from source).
pub const HELPER_CALL: Mix = s(8.0, 2.0, 1.0, 0.0, 2.0);
/// MVE: 16 bytes of arm_memcpy_s8 (VLDRB, VSTRB, LETP).
pub const MEMCPY_MVE_16: Mix = h(s(0.0, 0.0, 0.0, 0.0, 1.0), 2.0, 0.0);
/// Scalar memcpy: 4 bytes (newlib's word loop).
pub const MEMCPY_4: Mix = s(1.0, 1.0, 1.0, 0.0, 0.25);

// ---- depthwise
/// DSP arm_depthwise_conv_3x3_s8: one kernel row of four channels: 12 SMLAxx (0x194–0x220).
pub const DW3_DSP_ROW: Mix = s(17.0, 12.0, 0.0, 12.0, 3.0);
/// DSP arm_depthwise_conv_3x3_s8: four channels' bias, requantization, clamps and stores
/// (0x15e–0x38e less its row loop).
pub const DW3_DSP_GROUP: Mix = s(120.0, 24.0, 5.0, 4.0, 7.0);
/// DSP arm_depthwise_conv_3x3_s8: one left-over channel, all taps and its requantization
/// (0x3f0–0x4b4).
pub const DW3_DSP_CHANNEL: Mix = s(40.0, 21.0, 4.0, 4.0, 7.0);
/// An output pixel's loop set-up in the depthwise kernels (from source).
pub const DW_PIXEL: Mix = s(20.0, 6.0, 1.0, 1.0, 3.0);
/// arm_depthwise_conv_s8 `mult_4` (channel multiplier a multiple of 4): one tap of four
/// outputs: one input load, four weights, four MLA (0x16c–0x19a, the same in the M3 build).
pub const DW_MULT4_TAP: Mix = s(5.0, 5.0, 0.0, 4.0, 1.0);
/// `mult_4`: one kernel row's set-up for four outputs (0x156–0x1ae less its tap loop).
pub const DW_MULT4_ROW: Mix = s(7.0, 6.0, 3.0, 0.0, 2.0);
/// arm_depthwise_conv_s8 generic: one tap of one output (0x630–0x64c).
pub const DW_GENERIC_TAP: Mix = s(5.0, 5.0, 0.0, 1.0, 1.0);
/// DSP arm_depthwise_conv_s8_opt: two taps of four channels from the s16 column buffer:
/// 4 SMLAD (0x29c–0x30c).
pub const DWOPT_DSP_2TAPS: Mix = s(19.0, 11.0, 2.0, 4.0, 1.0);
/// MVE arm_nn_depthwise_conv_nt_t_s8: one tap of four pixels × four channels: VLDRB.S32 ×5,
/// VMLA ×4 (0xf8–0x132).
pub const DWOPT_MVE_TAP: Mix = h(s(1.0, 0.0, 0.0, 0.0, 1.0), 5.0, 9.0);
/// MVE arm_nn_depthwise_conv_nt_t_s8: sixteen outputs' bias, vector requantization and stores
/// (0x138–0x268 less its tap loop).
pub const DWOPT_MVE_BLOCK: Mix = h(s(11.0, 7.0, 0.0, 0.0, 1.0), 3.0, 46.0);

// ---- the rest of CMSIS-NN and ExecuTorch's Cortex-M kernels (from source)
/// DSP arm_nn_vec_mat_mult_t_s8: 16 MACs (two weight rows × 8 columns: 8 SMLAD; 0xcb8–0xd22).
pub const FC_DSP_16: Mix = s(11.0, 12.0, 0.0, 8.0, 1.0);
/// MVE arm_nn_vec_mat_mult_t_s8: 64 MACs (four weight rows × 16 columns; 0x108–0x170).
pub const FC_MVE_64: Mix = h(s(11.0, 4.0, 0.0, 0.0, 1.0), 5.0, 13.0);
/// A linear output's requantization, clamp and store.
pub const FC_OUT: Mix = s(25.0, 8.0, 1.0, 2.0, 4.0);
/// One input element summed into a pool window (scalar, per channel).
pub const POOL_TAP: Mix = s(2.0, 2.0, 1.0, 0.0, 1.0);
/// MVE: 16 channels of one pool tap (VLDRB, VADD/VMAX).
pub const POOL_MVE_TAP_16: Mix = h(s(1.0, 0.0, 0.0, 0.0, 1.0), 1.0, 2.0);
/// One pool output: the divide (average) or the clamp, and the store.
pub const POOL_OUT: Mix = s(15.0, 1.0, 1.0, 1.0, 1.0);
/// One element of arm_softmax_s8: the max pass, the fixed-point exp and sum, the output pass.
pub const SOFTMAX_ELEMENT: Mix = s(55.0, 6.0, 2.0, 8.0, 4.0);
/// One element of arm_elementwise_add_s8/mul_s8 (two requantizations and a third on the sum).
pub const ELEMENTWISE_DSP: Mix = s(16.0, 2.0, 0.5, 3.0, 0.5);
/// MVE: 16 elements of arm_elementwise_add_s8/mul_s8.
pub const ELEMENTWISE_MVE_16: Mix = h(s(2.0, 0.0, 0.0, 0.0, 1.0), 3.0, 20.0);
/// One element of a byte-wise unary kernel (LUT activation, min, max, transpose).
pub const BYTE_ELEMENT: Mix = s(3.0, 1.5, 1.0, 0.0, 1.0);
/// The scalar part of one element of ExecuTorch's `quantize_per_tensor` (load, offset, clamp,
/// store; the float multiply and rounding are priced as float operations).
pub const QUANTIZE_SCALAR: Mix = s(8.0, 1.0, 1.0, 0.0, 1.0);
/// MVE: 16 elements of ExecuTorch's `quantize_per_tensor` (4 VLDRW, 4 VFMA, 4 VCVT, narrowing
/// and one VSTRB).
pub const QUANTIZE_MVE_16: Mix = h(s(2.0, 0.0, 0.0, 0.0, 1.0), 5.0, 16.0);
/// The scalar part of one element of `dequantize_per_tensor`.
pub const DEQUANTIZE_SCALAR: Mix = s(4.0, 1.0, 1.0, 0.0, 1.0);
/// MVE: 16 elements of `dequantize_per_tensor`.
pub const DEQUANTIZE_MVE_16: Mix = h(s(2.0, 0.0, 0.0, 0.0, 1.0), 5.0, 12.0);
/// ExecuTorch's per-call work around a kernel: the method's instruction loop, the kernel's
/// argument checks and wrapper dispatch, CMSIS-NN's buffer-size queries (from source).
pub const CALL_OVERHEAD: Mix = s(220.0, 70.0, 30.0, 2.0, 15.0);
