//! CMSIS-NN's scratch-buffer sizes (`*_get_buffer_size*` of `arm_convolve_wrapper_s8`,
//! `arm_depthwise_conv_wrapper_s8`, `arm_avgpool_s8`, `arm_fully_connected_s8`), per code path,
//! as ExecuTorch's Cortex-M lowering asks CMSIS-NN's bindings for them (built for the host:
//! none of the `__ARMCC_VERSION`-only sizes). A lowered kernel's last argument is a planned
//! byte buffer of this size. Tested against the bindings' own answers
//! (`tests/fixtures/lowering/cmsis_nn_buffer_sizes.json`).

use super::Isa;

/// A layer's geometry, NHWC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvGeometry {
    /// Input `[n, h, w, c]`.
    pub input: [i64; 4],
    /// Filter `[n, h, w, c]` as CMSIS-NN reads it (conv: `[c_out, kh, kw, c_in]`; depthwise:
    /// `[c_out, kh, kw, 1]`).
    pub filter: [i64; 4],
    /// Output `[n, h, w, c]`.
    pub output: [i64; 4],
    /// `[h, w]`.
    pub padding: [i64; 2],
    pub stride: [i64; 2],
    pub dilation: [i64; 2],
}

/// Depthwise with one input channel turns into a regular convolution above this many output
/// channels on MVE (the host build's value; Arm Compiler 6 builds use 8).
const DW_ONE_INPUT_CH_THRESHOLD: i64 = 1;
/// `CH_IN_BLOCK_MVE`.
const CH_IN_BLOCK_MVE: i64 = 124;

fn is_1x1(g: &ConvGeometry) -> bool {
    g.padding == [0, 0]
        && g.filter[1] == 1
        && g.filter[2] == 1
        && g.dilation == [1, 1]
        && g.input[3] == g.filter[3]
}

fn is_1_x_n(g: &ConvGeometry) -> bool {
    g.input[1] == 1
        && g.dilation[1] == 1
        && g.filter[1] == 1
        && (g.stride[1] * g.input[3]) % 4 == 0
        && g.input[3] == g.filter[3]
}

fn conv_generic(g: &ConvGeometry) -> i64 {
    let rhs_cols = g.filter[2] * g.filter[1] * g.input[3];
    let aligned = if rhs_cols % 4 != 0 {
        rhs_cols + 4 - rhs_cols % 4
    } else {
        rhs_cols
    };
    2 * aligned * 2
}

fn conv_mve(g: &ConvGeometry) -> i64 {
    let col = (g.input[3] * g.filter[2] * g.filter[1] + 15) / 16;
    4 * col * 16
}

fn conv_1_x_n_mve(g: &ConvGeometry) -> i64 {
    let (input_x, pad_x, kernel_x, output_x, stride_x) = (
        g.input[2],
        g.padding[1],
        g.filter[2],
        g.output[2],
        g.stride[1],
    );
    let total_pad = (output_x - 1) * stride_x + kernel_x - input_x;
    let asym_pad = total_pad % 2;
    let right = if pad_x + asym_pad != 0 {
        1.max((pad_x + asym_pad + stride_x - 1) / stride_x)
    } else {
        0
    };
    let left = if pad_x != 0 {
        1.max((pad_x + stride_x - 1) / stride_x)
    } else {
        0
    };
    let no_pad = (output_x - (right + left)).max(0);
    if right + no_pad + left != output_x {
        return conv_mve(g);
    }
    let c = g.input[3];
    let pad_left = pad_x * c;
    let pad_right = if asym_pad != 0 { right * c } else { pad_left };
    let elem_left = kernel_x * c;
    let elem_right = elem_left - c;
    (elem_left + pad_left).max(elem_right + pad_right)
}

/// `arm_convolve_wrapper_s8_get_buffer_size[_mve|_dsp]`.
pub fn conv(isa: Isa, g: &ConvGeometry) -> i64 {
    if is_1x1(g) {
        // the 1x1 fast path's DSP buffer exists only in Arm Compiler builds
        return 0;
    }
    match (isa, is_1_x_n(g)) {
        (Isa::Mve, true) => conv_1_x_n_mve(g),
        (Isa::Mve, false) => conv_mve(g),
        (Isa::Dsp | Isa::Plain, _) => conv_generic(g),
    }
}

fn dw_one_in_ch_mve(g: &ConvGeometry) -> i64 {
    // the depthwise filter [c_out, kh, kw, 1] read as a convolution's [1, kh, kw, c_out]
    let as_conv = ConvGeometry {
        filter: [g.filter[3], g.filter[1], g.filter[2], g.filter[0]],
        ..*g
    };
    let size = if is_1x1(&as_conv) {
        0
    } else if is_1_x_n(&as_conv) {
        conv_1_x_n_mve(&as_conv)
    } else {
        conv_mve(&as_conv)
    };
    size + g.filter.iter().product::<i64>()
}

/// `arm_depthwise_conv_wrapper_s8_get_buffer_size[_mve|_dsp]`.
pub fn depthwise(isa: Isa, g: &ConvGeometry) -> i64 {
    let plain = g.input[3] == g.output[3] && g.input[0] == 1 && g.dilation == [1, 1];
    let three_by_three =
        g.filter[1] == 3 && g.filter[2] == 3 && g.padding[0] <= 1 && g.padding[1] <= 1;
    match isa {
        Isa::Mve => {
            let size = if plain {
                4 * CH_IN_BLOCK_MVE * g.filter[2] * g.filter[1]
            } else {
                0
            };
            if g.input[3] == 1 && g.output[3] > DW_ONE_INPUT_CH_THRESHOLD {
                size.max(dw_one_in_ch_mve(g))
            } else {
                size
            }
        }
        Isa::Dsp if plain && !three_by_three => g.input[3] * g.filter[2] * g.filter[1] * 2,
        Isa::Dsp | Isa::Plain => 0,
    }
}

/// `arm_avgpool_s8_get_buffer_size[_mve|_dsp]`.
pub fn avgpool(isa: Isa, channels: i64) -> i64 {
    match isa {
        Isa::Dsp => channels * 4,
        Isa::Mve | Isa::Plain => 0,
    }
}

/// `arm_fully_connected_s8_get_buffer_size[_mve|_dsp]` for a filter of `output_channels`.
pub fn fully_connected(isa: Isa, output_channels: i64) -> i64 {
    match isa {
        Isa::Mve => output_channels * 4,
        Isa::Dsp | Isa::Plain => 0,
    }
}

/// CMSIS-NN takes the reverse-convolution path of a transposed convolution above this many
/// input channels (`REVERSE_TCOL_EFFICIENT_THRESHOLD`), for strides up to 2.
const REVERSE_TCOL_EFFICIENT_THRESHOLD: i64 = 16;

/// `arm_transpose_conv_s8_get_buffer_size[_mve]` and
/// `arm_transpose_conv_s8_get_reverse_conv_buffer_size`: the two scratch buffers of a transposed
/// convolution (`filter` `[c_out, kh, kw, c_in]`).
pub fn transpose_conv(isa: Isa, g: &ConvGeometry) -> (i64, i64) {
    let reverse =
        g.stride[0] <= 2 && g.stride[1] <= 2 && g.input[3] > REVERSE_TCOL_EFFICIENT_THRESHOLD;
    let first = if reverse {
        let as_conv = ConvGeometry {
            input: [
                g.input[0],
                g.input[1] * g.stride[0],
                g.input[2] * g.stride[1],
                g.input[3],
            ],
            ..*g
        };
        match isa {
            Isa::Mve => conv_mve(&as_conv),
            Isa::Dsp | Isa::Plain => conv_generic(&as_conv),
        }
    } else {
        // (CMSIS-NN compares the kernel width with the vertical stride here)
        let buf_x = ((g.input[2] - 1) * g.stride[1] + g.filter[2].max(g.stride[0])) * g.output[3];
        let buf_y = g.filter[1].max(g.stride[0]);
        buf_x * buf_y * 4
    };
    let second = if reverse {
        g.input[3] * g.filter[2] * g.filter[1] * g.filter[0]
    } else {
        0
    };
    (first, second)
}
