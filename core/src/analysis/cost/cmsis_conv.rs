//! The convolution paths CMSIS-NN (dbf45dbf) takes, one function per path, as its wrappers
//! choose them: `arm_convolve_wrapper_s8` (1×1 fast, 1×1 strided, im2col) and
//! `arm_depthwise_conv_wrapper_s8` (Helium's convolution for one input channel and its
//! `_opt` kernel; DSP's 3×3 and `_opt` kernels; the generic kernel and its `mult_4` form).

use super::call::Spatial;
use super::loops::*;
use super::mix::Mix;
use super::{Priced, Pricer};
use crate::kernels::Target;

fn f(n: usize) -> f64 {
    n as f64
}

fn ceil_div(a: usize, b: usize) -> usize {
    a.div_ceil(b.max(1))
}

/// `arm_nn_mat_mult_nt_t_s8` (or the DSP s16 kernel's structure): `rows` input rows (pixels)
/// against `cols` weight rows (output channels) of `k` columns. Adds the loop mix and the
/// weight bytes read, returns nothing.
fn matmul(p: &Pricer, out: &mut Priced, rows: usize, cols: usize, k: usize) {
    match p.core.kernel_target() {
        Target::CortexM55 => {
            let k16 = f(ceil_div(k, 16));
            let blocks = f(rows / 4) * f(cols);
            let tail = f(rows % 4) * f(cols);
            out.add(p.mix(
                "4×1 blocks' columns (VLDRB, VMLADAVA)",
                MM_MVE_16 * (k16 * blocks),
            ));
            out.add(p.mix(
                "4×1 blocks' requantization and stores",
                MM_MVE_BLOCK * blocks,
            ));
            if tail > 0.0 {
                out.add(p.mix(
                    "left-over rows",
                    MM_MVE_TAIL_16 * (k16 * tail) + MM_MVE_TAIL_OUT * tail,
                ));
            }
            out.weights_read(f(ceil_div(rows, 4)) * f(cols) * f(k));
        }
        Target::CortexMDsp => {
            let blocks = f(ceil_div(rows, 2)) * f(ceil_div(cols, 2));
            let inner = MM_DSP_16 * f(k / 16) + MM_DSP_4 * f((k % 16) / 4) + MM_DSP_1 * f(k % 4);
            out.add(p.mix("2×2 blocks' columns (SMLAD)", inner * blocks));
            out.add(p.mix(
                "2×2 blocks' requantization and stores",
                MM_DSP_BLOCK * blocks,
            ));
            out.add(p.mix(
                "weight-row offset sums",
                MM_DSP_ROW_SUM * (f(k) * f(ceil_div(cols, 2))),
            ));
            out.weights_read(f(ceil_div(rows, 2)) * f(cols) * f(k));
        }
        Target::CortexMBase => {
            let blocks = f(ceil_div(rows, 2)) * f(ceil_div(cols, 2));
            out.add(p.mix("2×2 blocks' columns (MLA)", MM_PLAIN_1 * (f(k) * blocks)));
            out.add(p.mix(
                "2×2 blocks' requantization and stores",
                MM_PLAIN_BLOCK * blocks,
            ));
            out.weights_read(f(ceil_div(rows, 2)) * f(cols) * f(k));
        }
    }
}

/// The DSP s16 kernel of `arm_convolve_s8`: 2 output channels × 2 columns per block.
fn matmul_s16(p: &Pricer, out: &mut Priced, rows: usize, cols: usize, k: usize) {
    let blocks = f(ceil_div(rows, 2)) * f(ceil_div(cols, 2));
    out.add(p.mix(
        "2×2 blocks' columns (SMLAD on s16)",
        (MK_DSP_4 * f(k / 4) + MK_DSP_1 * f(k % 4)) * blocks,
    ));
    out.add(p.mix(
        "2×2 blocks' requantization and stores",
        MK_DSP_BLOCK * blocks,
    ));
    out.weights_read(f(ceil_div(rows, 2)) * f(cols) * f(k));
}

/// `copies` copies of `bytes` bytes each into a column buffer: `arm_memcpy_s8` (Helium) or
/// `memcpy`, one per kernel tap of each output pixel, as `arm_convolve_s8` and the depthwise
/// `_opt` kernels build their columns.
fn im2col(p: &Pricer, out: &mut Priced, copies: usize, bytes: usize) {
    let per = match p.core.kernel_target() {
        Target::CortexM55 => HELPER_CALL + MEMCPY_MVE_16 * f(ceil_div(bytes, 16)),
        _ => HELPER_CALL + MEMCPY_4 * f(ceil_div(bytes, 4)),
    };
    out.add(p.mix("im2col copies (one per tap)", per * f(copies)));
}

/// DSP: each column widened to s16 with the input offset (`arm_s8_to_s16_unordered_with_offset`
/// or, in the depthwise kernel, `arm_q7_to_q15_with_offset`).
fn widen(p: &Pricer, out: &mut Priced, columns: usize, bytes: usize) {
    out.add(p.mix(
        "columns widened to s16",
        (HELPER_CALL + IM2COL_DSP_4 * f(ceil_div(bytes, 4))) * f(columns),
    ));
}

/// `quantized_conv2d[_nhwc]`: `weight_in_ch` is the weight's I dim.
pub fn conv(p: &Pricer, g: &Spatial, weight_in_ch: usize) -> Priced {
    let k = g.kernel_h * g.kernel_w * weight_in_ch;
    let macs = (g.outputs() * k) as u64;
    let is_1x1 = g.kernel_h == 1
        && g.kernel_w == 1
        && g.padding == (0, 0)
        && g.dilation == (1, 1)
        && weight_in_ch == g.in_ch;
    let mut out = Priced::new("", macs);
    if is_1x1 && g.stride == (1, 1) {
        out.path = "arm_convolve_1x1_s8_fast > arm_nn_mat_mult_nt_t_s8".into();
        matmul(p, &mut out, g.pixels(), g.out_ch, k);
    } else if is_1x1 {
        out.path = "arm_convolve_1x1_s8 (strided) > arm_nn_mat_mult_nt_t_s8 per output row".into();
        out.add(p.mix("per-row calls", HELPER_CALL * f(g.batch * g.out_h * 4)));
        matmul(p, &mut out, g.pixels(), g.out_ch, k);
    } else {
        im2col(
            p,
            &mut out,
            g.pixels() * g.kernel_h * g.kernel_w,
            weight_in_ch,
        );
        match p.core.kernel_target() {
            Target::CortexMDsp => {
                out.path = "arm_convolve_s8 (im2col s16, arm_nn_mat_mult_kernel_s8_s16)".into();
                widen(p, &mut out, g.pixels(), k);
                matmul_s16(p, &mut out, g.pixels(), g.out_ch, k);
            }
            Target::CortexM55 => {
                out.path = "arm_convolve_s8 (im2col, 4 columns, MVE matrix core)".into();
                matmul(p, &mut out, g.pixels(), g.out_ch, k);
            }
            Target::CortexMBase => {
                out.path = "arm_convolve_s8 (plain C)".into();
                matmul(p, &mut out, g.pixels(), g.out_ch, k);
            }
        }
    }
    out.add(p.mix("pixel loops", DW_PIXEL * f(g.pixels())));
    out
}

/// `quantized_depthwise_conv2d[_nhwc]` as `arm_depthwise_conv_wrapper_s8` dispatches it.
pub fn depthwise(p: &Pricer, g: &Spatial, multiplier: usize) -> Priced {
    let taps = g.kernel_h * g.kernel_w;
    let macs = (g.outputs() * taps) as u64;
    let plain_dw = g.batch == 1 && multiplier == 1 && g.dilation == (1, 1);
    match p.core.kernel_target() {
        Target::CortexM55 if g.in_ch == 1 && g.out_ch > 1 => {
            let mut out = conv(p, g, 1);
            out.path = format!("one input channel: arm_convolve_wrapper_s8 > {}", out.path);
            out
        }
        Target::CortexM55 if plain_dw => depthwise_opt_mve(p, g, macs),
        Target::CortexMDsp
            if plain_dw
                && g.kernel_h == 3
                && g.kernel_w == 3
                && g.padding.0 <= 1
                && g.padding.1 <= 1 =>
        {
            depthwise_3x3_dsp(p, g, macs)
        }
        Target::CortexMDsp if plain_dw => depthwise_opt_dsp(p, g, macs),
        _ if multiplier.is_multiple_of(4) => depthwise_mult_4(p, g, multiplier, macs),
        _ => depthwise_generic(p, g, macs),
    }
}

/// DSP `arm_depthwise_conv_3x3_s8`: four channels at a time, three kernel rows each.
fn depthwise_3x3_dsp(p: &Pricer, g: &Spatial, macs: u64) -> Priced {
    let mut out = Priced::new("arm_depthwise_conv_3x3_s8 (DSP)", macs);
    let px = f(g.pixels());
    let groups = f(g.out_ch / 4) * px;
    out.add(p.mix(
        "kernel rows of four channels (SMLABB/SMLATT)",
        DW3_DSP_ROW * (3.0 * groups),
    ));
    out.add(p.mix(
        "four channels' requantization and stores",
        DW3_DSP_GROUP * groups,
    ));
    out.add(p.mix(
        "left-over channels",
        DW3_DSP_CHANNEL * (f(g.out_ch % 4) * px),
    ));
    out.add(p.mix("pixel loops", DW_PIXEL * px));
    out.weights_read(px * f(9 * g.out_ch));
    out
}

/// DSP `arm_depthwise_conv_s8_opt`: the taps of each pixel widened into a column buffer, then
/// four channels at a time.
fn depthwise_opt_dsp(p: &Pricer, g: &Spatial, macs: u64) -> Priced {
    let mut out = Priced::new("arm_depthwise_conv_s8_opt (DSP, im2col s16)", macs);
    let taps = g.kernel_h * g.kernel_w;
    widen(p, &mut out, g.pixels() * taps, g.in_ch);
    let groups = f(ceil_div(g.out_ch, 4)) * f(g.pixels());
    out.add(p.mix(
        "pairs of taps of four channels (SMLAD)",
        DWOPT_DSP_2TAPS * (f(ceil_div(taps, 2)) * groups),
    ));
    out.add(p.mix(
        "four channels' requantization and stores",
        MM_DSP_BLOCK * groups,
    ));
    out.add(p.mix("pixel loops", DW_PIXEL * f(g.pixels())));
    out.weights_read(f(g.pixels()) * f(taps * g.out_ch));
    out
}

/// MVE `arm_depthwise_conv_s8_opt`: the taps of each pixel copied into a column buffer, then
/// `arm_nn_depthwise_conv_nt_t_s8` over four pixels × four channels.
fn depthwise_opt_mve(p: &Pricer, g: &Spatial, macs: u64) -> Priced {
    let mut out = Priced::new(
        "arm_depthwise_conv_s8_opt (MVE, im2col) > arm_nn_depthwise_conv_nt_t_s8",
        macs,
    );
    let taps = g.kernel_h * g.kernel_w;
    im2col(p, &mut out, g.pixels() * taps, g.in_ch);
    let blocks = f(ceil_div(g.pixels(), 4)) * f(ceil_div(g.out_ch, 4));
    out.add(p.mix(
        "taps of 4 pixels × 4 channels (VMLA)",
        DWOPT_MVE_TAP * (f(taps) * blocks),
    ));
    out.add(p.mix(
        "blocks' vector requantization and stores",
        DWOPT_MVE_BLOCK * blocks,
    ));
    out.add(p.mix("pixel loops", DW_PIXEL * f(g.pixels())));
    out.weights_read(f(ceil_div(g.pixels(), 4)) * f(taps * g.out_ch));
    out
}

/// `arm_depthwise_conv_s8`'s `mult_4` form: a channel multiplier that is a multiple of 4.
fn depthwise_mult_4(p: &Pricer, g: &Spatial, multiplier: usize, macs: u64) -> Priced {
    let mut out = Priced::new("arm_depthwise_conv_s8 (channel multiplier × 4)", macs);
    let quads = f(g.pixels()) * f(g.in_ch) * f(multiplier / 4);
    let row = DW_MULT4_ROW + DW_MULT4_TAP * f(g.kernel_w);
    out.add(p.mix(
        "kernel rows of four outputs (MLA)",
        row * (f(g.kernel_h) * quads),
    ));
    out.add(p.mix(
        "four outputs' requantization and stores",
        MM_DSP_BLOCK * quads,
    ));
    out.add(p.mix("pixel loops", DW_PIXEL * f(g.pixels())));
    out.weights_read(f(g.pixels()) * f(g.kernel_h * g.kernel_w * g.out_ch));
    out
}

/// `arm_depthwise_conv_s8`'s generic loop: one output at a time.
fn depthwise_generic(p: &Pricer, g: &Spatial, macs: u64) -> Priced {
    let mut out = Priced::new("arm_depthwise_conv_s8 (generic)", macs);
    let outputs = f(g.outputs());
    out.add(p.mix(
        "taps (MLA)",
        DW_GENERIC_TAP * (f(g.kernel_h * g.kernel_w) * outputs),
    ));
    out.add(p.mix("requantization and stores", MM_DSP_BLOCK * (outputs / 4.0)));
    out.add(p.mix("pixel loops", DW_PIXEL * f(g.pixels())));
    out.weights_read(outputs * f(g.kernel_h * g.kernel_w));
    out
}

/// `quantized_transpose_conv2d[_nhwc]`: `arm_transpose_conv_s8` scatters every input pixel's
/// products into an int32 output buffer, then requantizes it.
pub fn transpose_conv(p: &Pricer, g: &Spatial, weight_in_ch: usize) -> Priced {
    let in_px = g.batch * g.in_h * g.in_w;
    let macs = (in_px * g.kernel_h * g.kernel_w * weight_in_ch * g.out_ch) as u64;
    let mut out = Priced::new("arm_transpose_conv_s8 (scatter, int32 buffer)", macs);
    out.add(p.mix(
        "taps (MLA) and buffer updates",
        (DW_GENERIC_TAP + Mix::scalar(1.0, 1.0, 1.0, 0.0, 0.0)) * (macs as f64),
    ));
    out.add(p.mix(
        "requantization and stores",
        MM_DSP_BLOCK * (f(g.outputs()) / 4.0),
    ));
    out.weights_read(macs as f64);
    out
}

/// `arm_fully_connected_s8` (`quantized_linear`) and `arm_batch_matmul_s8`: `rows` input rows
/// against `cols` weight rows of `k`.
pub fn linear(p: &Pricer, rows: usize, cols: usize, k: usize, batch_matmul: bool) -> Priced {
    let macs = (rows * cols * k) as u64;
    let mut out = Priced::new(
        if batch_matmul {
            "arm_batch_matmul_s8 > arm_nn_mat_mult_nt_t_s8"
        } else {
            "arm_fully_connected_s8 > arm_nn_vec_mat_mult_t_s8"
        },
        macs,
    );
    if batch_matmul && rows > 1 {
        matmul(p, &mut out, rows, cols, k);
        return out;
    }
    let m = f(rows) * f(cols) * f(k);
    let inner = match p.core.kernel_target() {
        Target::CortexM55 => FC_MVE_64 * (m / 64.0),
        Target::CortexMDsp => FC_DSP_16 * (m / 16.0),
        Target::CortexMBase => MM_PLAIN_1 * (m / 4.0),
    };
    out.add(p.mix("weight rows' columns", inner));
    out.add(p.mix(
        "outputs' requantization and stores",
        FC_OUT * (f(rows) * f(cols)),
    ));
    out.weights_read(f(rows) * f(cols) * f(k));
    out
}
