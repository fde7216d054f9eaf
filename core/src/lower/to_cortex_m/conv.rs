//! Convolutions: regular (OHWI weights), depthwise (IHWO, one input channel per group or a
//! depth multiplier) and transposed (OHWI from IOHW), each with per-channel multipliers and
//! shifts and the scratch its CMSIS-NN path needs.

use crate::ir::{ArgData, Node, ValueId};

use super::super::edit::{add_constant, bool_arg, int_arg, meta, op_name, pos, tensor_arg};
use super::super::qparams::{quantize_multiplier, NodeQParams, QuantArgs};
use super::super::scratch::{self, ConvGeometry};
use super::super::{Isa, LowerError, Module};
use super::build::*;

pub(super) fn convolution(
    m: &mut Module,
    node: &Node,
    q: &NodeQParams,
    isa: Isa,
) -> Result<Replacement, LowerError> {
    let x = tensor_arg(node, 0).ok_or_else(|| bad(node, "no input tensor"))?;
    let weight =
        tensor_arg(node, pos(node, "weight")).ok_or_else(|| bad(node, "no weight tensor"))?;
    let mut bias = tensor_arg(node, pos(node, "bias"));
    let stride = pair(node, "stride", [1, 1])?;
    let padding = pair(node, "padding", [0, 0])?;
    let dilation = pair(node, "dilation", [1, 1])?;
    if bool_arg(node, pos(node, "transposed")) == Some(true) {
        return transpose_convolution(m, node, q, isa);
    }
    let groups = int_arg(node, pos(node, "groups")).unwrap_or(1);
    let inq = input_q(node, q, 0)?;
    let wq = input_q(node, q, 1)?;
    let outq = output_q(node, q)?;
    let w = m
        .constant(weight)
        .ok_or_else(|| bad(node, "its weight is not a constant"))?
        .clone();
    let [c_out, c_in_per_group, _, _] = w.shape[..] else {
        return Err(bad(
            node,
            &format!(
                "its weight has sizes {:?}, not [out, in/groups, kh, kw]",
                w.shape
            ),
        ));
    };
    let (c_out, c_in_per_group) = (c_out as i64, c_in_per_group as i64);
    // what aten::convolution itself requires (a group count of 0 divided by zero here)
    if groups < 1 || c_out % groups != 0 || c_in_per_group < 1 {
        return Err(bad(
            node,
            &format!(
                "{groups} groups of {c_out} output and {c_in_per_group} input channels each is no convolution"
            ),
        ));
    }
    let in_channels = c_in_per_group
        .checked_mul(groups)
        .ok_or_else(|| bad(node, "its channel count overflows"))?;
    let depthwise = in_channels == groups && c_out % in_channels == 0;
    let out = *node.outputs.first().ok_or_else(|| bad(node, "no output"))?;
    let out_shape = meta(&m.graph, out).1;
    let depthwise = depthwise && out_shape.first() == Some(&1);
    let permuted = if depthwise {
        permuted(&w, &[1, 2, 3, 0])?
    } else {
        permuted(&w, &[0, 2, 3, 1])?
    };
    let base = &node.name;
    if bias.is_none() && groups > 1 {
        bias = Some(add_constant(
            m,
            &format!("{base}_zero_bias"),
            int32_tensor(&vec![0; c_out as usize]),
        ));
    }
    let weight_nhwc = add_constant(m, &format!("{base}_weight_nhwc"), permuted.clone());
    let (mult_t, shift_t) = requantization(m, node, (inq, wq, outq), c_out as usize);
    let (explicit, [n, h, wd, c], [on, oh, ow, oc]) = nhwc_sizes(m, node, x, out)?;
    let suffix = if explicit { "_nhwc" } else { "" };
    let ps: Vec<i64> = permuted.shape.iter().map(|&s| s as i64).collect();
    let bias_arg = bias.map_or(ArgData::None, ArgData::Tensor);
    let common = |filter: [i64; 4]| ConvGeometry {
        input: [n, h, wd, c],
        filter,
        output: [on, oh, ow, oc],
        padding,
        stride,
        dilation,
    };
    if depthwise {
        let size = scratch::depthwise(isa, &common([ps[3], ps[1], ps[2], 1]));
        let (alloc_node, scratch_v) = alloc(m, size);
        let args = vec![
            ArgData::Tensor(x),
            ArgData::Tensor(weight_nhwc),
            bias_arg,
            ints(&stride),
            ints(&padding),
            ints(&dilation),
            ArgData::Int(c_out / in_channels),
            ArgData::Int(-inq.zp()),
            ArgData::Int(outq.zp()),
            ArgData::Tensor(mult_t),
            ArgData::Tensor(shift_t),
            ArgData::Int(outq.qmin),
            ArgData::Int(outq.qmax),
            ArgData::Tensor(scratch_v),
        ];
        return Ok(single(
            m,
            node,
            &format!("cortex_m::quantized_depthwise_conv2d{suffix}"),
            args,
            Some(vec![alloc_node]),
        ));
    }
    let size = scratch::conv(isa, &common([ps[0], ps[1], ps[2], ps[3]]));
    let (alloc_node, scratch_v) = alloc(m, size);
    let args = vec![
        ArgData::Tensor(x),
        ArgData::Tensor(weight_nhwc),
        bias_arg,
        ints(&stride),
        ints(&padding),
        ints(&dilation),
        ArgData::Int(-inq.zp()),
        ArgData::Int(outq.zp()),
        ArgData::Tensor(mult_t),
        ArgData::Tensor(shift_t),
        ArgData::Int(outq.qmin),
        ArgData::Int(outq.qmax),
        ArgData::Tensor(scratch_v),
    ];
    Ok(single(
        m,
        node,
        &format!("cortex_m::quantized_conv2d{suffix}"),
        args,
        Some(vec![alloc_node]),
    ))
}

pub(super) fn transpose_convolution(
    m: &mut Module,
    node: &Node,
    q: &NodeQParams,
    isa: Isa,
) -> Result<Replacement, LowerError> {
    let x = tensor_arg(node, 0).ok_or_else(|| bad(node, "no input tensor"))?;
    let weight =
        tensor_arg(node, pos(node, "weight")).ok_or_else(|| bad(node, "no weight tensor"))?;
    let bias = tensor_arg(node, pos(node, "bias"));
    let stride = pair(node, "stride", [1, 1])?;
    let padding = pair(node, "padding", [0, 0])?;
    let dilation = pair(node, "dilation", [1, 1])?;
    let output_padding = pair(node, "output_padding", [0, 0])?;
    let (inq, wq, outq) = (
        input_q(node, q, 0)?,
        input_q(node, q, 1)?,
        output_q(node, q)?,
    );
    // a transposed convolution's weight is [c_in, c_out / groups, kh, kw]
    let w = m
        .constant(weight)
        .ok_or_else(|| bad(node, "its weight is not a constant"))?
        .clone();
    let c_out = *w
        .shape
        .get(1)
        .ok_or_else(|| bad(node, "a weight of rank < 2"))?;
    // CMSIS-NN reads OHWI
    let permuted = permuted(&w, &[1, 2, 3, 0])?;
    let base = &node.name;
    let weight_nhwc = add_constant(m, &format!("{base}_weight_nhwc"), permuted.clone());
    let (mult_t, shift_t) = requantization(m, node, (inq, wq, outq), c_out);
    let out = *node.outputs.first().ok_or_else(|| bad(node, "no output"))?;
    let (explicit, [n, h, wd, c], [on, oh, ow, oc]) = nhwc_sizes(m, node, x, out)?;
    let ps: Vec<i64> = permuted.shape.iter().map(|&s| s as i64).collect();
    let (size, reverse_size) = scratch::transpose_conv(
        isa,
        &ConvGeometry {
            input: [n, h, wd, c],
            filter: [ps[0], ps[1], ps[2], ps[3]],
            output: [on, oh, ow, oc],
            padding,
            stride,
            dilation,
        },
    );
    let (scratch_node, scratch_v) = alloc(m, size);
    let (output_node, output_v) = alloc(m, reverse_size);
    let args = vec![
        ArgData::Tensor(x),
        ArgData::Tensor(weight_nhwc),
        bias.map_or(ArgData::None, ArgData::Tensor),
        ints(&stride),
        ints(&padding),
        ints(&output_padding),
        ints(&dilation),
        ArgData::Int(-inq.zp()),
        ArgData::Int(outq.zp()),
        ArgData::Tensor(mult_t),
        ArgData::Tensor(shift_t),
        ArgData::Int(outq.qmin),
        ArgData::Int(outq.qmax),
        ArgData::Tensor(scratch_v),
        ArgData::Tensor(output_v),
    ];
    Ok(single(
        m,
        node,
        if explicit {
            "cortex_m::quantized_transpose_conv2d_nhwc"
        } else {
            "cortex_m::quantized_transpose_conv2d"
        },
        args,
        Some(vec![scratch_node, output_node]),
    ))
}

/// The per-output-channel requantization of a convolution writing `c_out` channels, as
/// constants: multipliers and shifts of `input_scale * weight_scale / output_scale` (a
/// per-tensor weight scale repeated per channel).
fn requantization(
    m: &mut Module,
    node: &Node,
    (inq, wq, outq): (&QuantArgs, &QuantArgs, &QuantArgs),
    c_out: usize,
) -> (ValueId, ValueId) {
    let scales = if wq.per_channel() {
        wq.scales.clone()
    } else {
        vec![wq.scale(); c_out]
    };
    let (mults, shifts): (Vec<i64>, Vec<i64>) = scales
        .iter()
        .map(|ws| quantize_multiplier(inq.scale() * ws / outq.scale()))
        .unzip();
    let base = &node.name;
    let mult_t = add_constant(
        m,
        &format!("{base}_quantized_multiplier"),
        int32_tensor(&mults),
    );
    let shift_t = add_constant(m, &format!("{base}_quantized_shift"), int32_tensor(&shifts));
    (mult_t, shift_t)
}

/// Whether `node` is the explicit flow's NHWC variant, and its input's and output's sizes as
/// NHWC (the variant's sizes are NHWC already; an ATen convolution's are NCHW).
fn nhwc_sizes(
    m: &Module,
    node: &Node,
    x: ValueId,
    out: ValueId,
) -> Result<(bool, [i64; 4], [i64; 4]), LowerError> {
    let explicit = op_name(node) == "channels_last::convolution";
    let nhwc = |s: [i64; 4]| {
        if explicit {
            s
        } else {
            [s[0], s[2], s[3], s[1]]
        }
    };
    Ok((
        explicit,
        nhwc(dims4(node, &meta(&m.graph, x).1)?),
        nhwc(dims4(node, &meta(&m.graph, out).1)?),
    ))
}
