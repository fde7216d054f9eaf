//! Convolutions: regular (OHWI weights), depthwise (IHWO, one input channel per group or a
//! depth multiplier) and transposed (OHWI from IOHW), each with per-channel multipliers and
//! shifts and the scratch its CMSIS-NN path needs.

use crate::ir::{ArgData, Node};

use super::super::edit::{add_constant, bool_arg, int_arg, meta, op_name, tensor_arg};
use super::super::qparams::{quantize_multiplier, NodeQParams};
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
    let weight = tensor_arg(node, 1).ok_or_else(|| bad(node, "no weight tensor"))?;
    let mut bias = tensor_arg(node, 2);
    let stride = pair(node, 3, [1, 1])?;
    let padding = pair(node, 4, [0, 0])?;
    let dilation = pair(node, 5, [1, 1])?;
    if bool_arg(node, 6) == Some(true) {
        return transpose_convolution(m, node, q, isa);
    }
    let groups = int_arg(node, 8).unwrap_or(1);
    let inq = input_q(node, q, 0)?;
    let wq = input_q(node, q, 1)?;
    let outq = output_q(node, q)?;
    let w = m
        .constant(weight)
        .ok_or_else(|| bad(node, "its weight is not a constant"))?
        .clone();
    let (c_out, c_in_per_group) = (w.shape[0] as i64, *w.shape.get(1).unwrap_or(&1) as i64);
    let weight_scales = if wq.per_channel() {
        wq.scales.clone()
    } else {
        vec![wq.scale(); c_out as usize]
    };
    let (mut mults, mut shifts) = (Vec::new(), Vec::new());
    for ws in &weight_scales {
        let (mu, sh) = quantize_multiplier(inq.scale() * ws / outq.scale());
        mults.push(mu);
        shifts.push(sh);
    }
    let in_channels = c_in_per_group * groups;
    let depthwise = in_channels == groups && c_out % in_channels == 0;
    let out = *node.outputs.first().ok_or_else(|| bad(node, "no output"))?;
    let out_shape = meta(&m.graph, out).1;
    let depthwise = depthwise && out_shape.first() == Some(&1);
    let permuted = if depthwise {
        permute4(&w, [1, 2, 3, 0])?
    } else {
        permute4(&w, [0, 2, 3, 1])?
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
    let mult_t = add_constant(
        m,
        &format!("{base}_quantized_multiplier"),
        int32_tensor(&mults),
    );
    let shift_t = add_constant(m, &format!("{base}_quantized_shift"), int32_tensor(&shifts));
    let x_shape = meta(&m.graph, x).1;
    // the explicit flow's variant computes in NHWC: its sizes are NHWC already
    let explicit = op_name(node) == "channels_last::convolution";
    let nhwc = |s: [i64; 4]| {
        if explicit {
            s
        } else {
            [s[0], s[2], s[3], s[1]]
        }
    };
    let [n, h, wd, c] = nhwc(dims4(node, &x_shape)?);
    let [on, oh, ow, oc] = nhwc(dims4(node, &out_shape)?);
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
    let weight = tensor_arg(node, 1).ok_or_else(|| bad(node, "no weight tensor"))?;
    let bias = tensor_arg(node, 2);
    let stride = pair(node, 3, [1, 1])?;
    let padding = pair(node, 4, [0, 0])?;
    let dilation = pair(node, 5, [1, 1])?;
    let output_padding = pair(node, 7, [0, 0])?;
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
    let scales = if wq.per_channel() {
        wq.scales.clone()
    } else {
        vec![wq.scale(); c_out]
    };
    let (mut mults, mut shifts) = (Vec::new(), Vec::new());
    for ws in &scales {
        let (mu, sh) = quantize_multiplier(inq.scale() * ws / outq.scale());
        mults.push(mu);
        shifts.push(sh);
    }
    // CMSIS-NN reads OHWI
    let permuted = permute4(&w, [1, 2, 3, 0])?;
    let base = &node.name;
    let weight_nhwc = add_constant(m, &format!("{base}_weight_nhwc"), permuted.clone());
    let mult_t = add_constant(
        m,
        &format!("{base}_quantized_multiplier"),
        int32_tensor(&mults),
    );
    let shift_t = add_constant(m, &format!("{base}_quantized_shift"), int32_tensor(&shifts));
    let out = *node.outputs.first().ok_or_else(|| bad(node, "no output"))?;
    let explicit = op_name(node) == "channels_last::convolution";
    let nhwc = |s: [i64; 4]| {
        if explicit {
            s
        } else {
            [s[0], s[2], s[3], s[1]]
        }
    };
    let [n, h, wd, c] = nhwc(dims4(node, &meta(&m.graph, x).1)?);
    let [on, oh, ow, oc] = nhwc(dims4(node, &meta(&m.graph, out).1)?);
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
