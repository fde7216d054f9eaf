//! Pools and padding: an average pool behind a zero-point pad, a max pool with its range, a
//! constant pad with its value quantized.

use crate::dtype::ScalarType;
use crate::ir::{ArgData, Node, Storage};

use super::super::edit::{
    bool_arg, float_arg, ints_arg, make_node, meta, new_tensor, op_name, pos, tensor_arg,
};
use super::super::qparams::{quantize_multiplier, quantize_val, NodeQParams};
use super::super::scratch::{self};
use super::super::{Isa, LowerError, Module};
use super::build::*;

pub(super) fn avg_pool2d(
    m: &mut Module,
    node: &Node,
    q: &NodeQParams,
    isa: Isa,
) -> Result<Option<Replacement>, LowerError> {
    let x = tensor_arg(node, 0).ok_or_else(|| bad(node, "no input tensor"))?;
    let kernel = pair(node, "kernel_size", [1, 1])?;
    let stride = pool_stride(node, kernel)?;
    let padding = pair(node, "padding", [0, 0])?;
    let ceil_mode = bool_arg(node, pos(node, "ceil_mode")).unwrap_or(false);
    let count_include_pad = bool_arg(node, pos(node, "count_include_pad")).unwrap_or(true);
    if node
        .args
        .get(pos(node, "divisor_override"))
        .is_some_and(|a| a.data != ArgData::None)
    {
        return Ok(None);
    }
    let inq = input_q(node, q, 0)?;
    let (mult, shift) = quantize_multiplier(inq.scale());
    // the explicit flow's variant computes in NHWC: its sizes are NHWC already
    let explicit = op_name(node) == "channels_last::avg_pool2d";
    let mut helpers = Vec::new();
    let mut input = x;
    let mut avg_padding = padding;
    if count_include_pad {
        let xv = &m.graph.values[x];
        let (dtype, shape, dim_order) = (xv.dtype, xv.shape.clone(), xv.dim_order.clone());
        let pads = if explicit {
            [0, padding[0], padding[1], 0]
        } else {
            physical([0, 0, padding[0], padding[1]], &dim_order)
        };
        let (hd, wd) = if explicit { (1, 2) } else { (2, 3) };
        let mut out_shape = shape.clone();
        if out_shape.len() == 4 {
            out_shape[hd] += 2 * padding[0];
            out_shape[wd] += 2 * padding[1];
        }
        let name = node_name(m, "cortex_m::pad");
        let v = new_tensor(
            &mut m.graph,
            &name,
            dtype.unwrap_or(ScalarType::Char),
            out_shape,
            dim_order,
            Storage::Unplanned,
        );
        helpers.push(make_node(
            &name,
            "cortex_m::pad",
            "default",
            vec![
                ArgData::Tensor(x),
                ints(&pads),
                ints(&pads),
                ArgData::Int(inq.zp()),
            ],
            vec![v],
        ));
        input = v;
        avg_padding = [0, 0];
    }
    let channel_dim = if explicit { 3 } else { 1 };
    let channels = meta(&m.graph, input)
        .1
        .get(channel_dim)
        .copied()
        .unwrap_or(1);
    let (alloc_node, scratch_v) = alloc(m, scratch::avgpool(isa, channels));
    helpers.push(alloc_node);
    let args = vec![
        ArgData::Tensor(input),
        ints(&kernel),
        ints(&stride),
        ints(&avg_padding),
        ArgData::Bool(ceil_mode),
        ArgData::Int(inq.zp()),
        ArgData::Int(mult),
        ArgData::Int(shift),
        ArgData::Tensor(scratch_v),
    ];
    let target = if explicit {
        "cortex_m::quantized_avg_pool2d_nhwc"
    } else {
        "cortex_m::quantized_avg_pool2d"
    };
    Ok(Some(single(m, node, target, args, Some(helpers))))
}

pub(super) fn max_pool2d(
    m: &mut Module,
    node: &Node,
    q: &NodeQParams,
) -> Result<Option<Replacement>, LowerError> {
    let Some(inq) = q.inputs.get(&0) else {
        return Ok(None);
    };
    let (out_zp, act_min, act_max) = match q.outputs.get(&0) {
        Some(o) if o.per_channel() => return Ok(None),
        Some(o) => {
            if (inq.scale() - o.scale()).abs() > 1e-6 || inq.zp() != o.zp() {
                return Ok(None);
            }
            (o.zp(), o.qmin, o.qmax)
        }
        None => (inq.zp(), -128, 127),
    };
    let kernel = pair(node, "kernel_size", [1, 1])?;
    let stride = pool_stride(node, kernel)?;
    let padding = pair(node, "padding", [0, 0])?;
    let dilation = pair(node, "dilation", [1, 1])?;
    let ceil_mode = bool_arg(node, pos(node, "ceil_mode")).unwrap_or(false);
    if dilation != [1, 1] || ceil_mode {
        return Ok(None);
    }
    let x = tensor_arg(node, 0).ok_or_else(|| bad(node, "no input tensor"))?;
    let args = vec![
        ArgData::Tensor(x),
        ints(&kernel),
        ints(&stride),
        ints(&padding),
        ints(&dilation),
        ArgData::Bool(ceil_mode),
        ArgData::Int(inq.zp()),
        ArgData::Int(out_zp),
        ArgData::Int(act_min),
        ArgData::Int(act_max),
    ];
    Ok(Some(single(
        m,
        node,
        if op_name(node) == "channels_last::max_pool2d" {
            "cortex_m::quantized_max_pool2d_nhwc"
        } else {
            "cortex_m::quantized_max_pool2d"
        },
        args,
        None,
    )))
}

pub(super) fn constant_pad(
    m: &mut Module,
    node: &Node,
    q: &NodeQParams,
) -> Result<Option<Replacement>, LowerError> {
    let Some(inq) = q.inputs.get(&0) else {
        return Ok(None);
    };
    let x = tensor_arg(node, 0).ok_or_else(|| bad(node, "no input tensor"))?;
    let padding = ints_arg(node, pos(node, "pad")).ok_or_else(|| bad(node, "no padding"))?;
    let value = float_arg(node, pos(node, "value")).unwrap_or(0.0);
    let pad_value = quantize_val(value, inq.scale(), inq.zp(), -128, 127);
    let xv = &m.graph.values[x];
    let rank = xv.shape.len();
    let pairs = padding.len() / 2;
    if !(1..=4).contains(&rank) || padding.len() % 2 != 0 || pairs > rank {
        return Err(bad(
            node,
            &format!("padding {padding:?} of a rank-{rank} tensor"),
        ));
    }
    let (mut pre, mut post) = ([0i64; 4], [0i64; 4]);
    for i in 0..pairs {
        pre[3 - i] = padding[2 * i];
        post[3 - i] = padding[2 * i + 1];
    }
    let dim_order = xv.dim_order.clone();
    let (pre, post) = (physical(pre, &dim_order), physical(post, &dim_order));
    Ok(Some(single(
        m,
        node,
        "cortex_m::pad",
        vec![
            ArgData::Tensor(x),
            ints(&pre),
            ints(&post),
            ArgData::Int(pad_value),
        ],
        None,
    )))
}

/// A pool's stride (argument `k`): the kernel's when absent or empty, as PyTorch defaults it.
fn pool_stride(node: &Node, kernel: [i64; 2]) -> Result<[i64; 2], LowerError> {
    match ints_arg(node, pos(node, "stride")) {
        Some(v) if v.is_empty() => Ok(kernel),
        _ => pair(node, "stride", kernel),
    }
}
