//! AtenToCortexMPass: every annotated ATen op the Cortex-M backend has a kernel for becomes that
//! `cortex_m::` call, each argument computed as ExecuTorch 1.5.1's substitution computes it:
//! requantization multipliers and shifts (`quantize_multiplier`), weights in the layout
//! CMSIS-NN reads (OHWI; IHWO for depthwise), the linear layer's kernel sums on Helium, zero
//! biases for grouped convolutions, a zero-point pad before an average pool, and a scratch
//! buffer (`memory.alloc`) sized for the target's CMSIS-NN path ([`super::scratch`]). Each new
//! call is placed where the old one was (its helpers right before it); ops the backend does not
//! substitute stay. A `max_pool2d` that did not lower goes back to `max_pool2d_with_indices`.

use crate::dtype::ScalarType;
use crate::ir::{ArgData, Node, NodeKind, Storage, ValueId};
use crate::tensor::TensorData;

use super::edit::{
    add_constant, bool_arg, channels_last_dim_order, fail, float_arg, int_arg, ints_arg, make_node,
    meta, new_tensor, op_name, remove_dead, set_nodes, tensor_arg, unique_name,
};
use super::qparams::{quantize_multiplier, quantize_val, NodeQParams, QuantArgs};
use super::scratch::{self, ConvGeometry};
use super::{Isa, LowerError, LowerPass, Module, Options};

pub struct AtenToCortexM;

const PASS: &str = "AtenToCortexMPass";

/// CMSIS-NN's softmax input integer bits.
const SOFTMAX_INPUT_INTEGER_BITS: i64 = 5;
/// `SHIFT_INT8`: the headroom of the add kernel's operands.
const SHIFT_INT8: i64 = 20;

/// What a substitution produced: the nodes to place before the old one (helpers, then the
/// new call).
struct Replacement {
    nodes: Vec<Node>,
}

impl LowerPass for AtenToCortexM {
    fn name(&self) -> &'static str {
        PASS
    }

    fn run(&self, mut m: Module, options: &Options) -> Result<(Module, bool), LowerError> {
        let isa = options.cpu.isa();
        let mut nodes = Vec::with_capacity(m.graph.nodes.len());
        let mut changed = false;
        for i in 0..m.graph.nodes.len() {
            let node = m.graph.nodes[i].clone();
            if node.kind != NodeKind::Operator {
                nodes.push(node);
                continue;
            }
            let q = m.qparams.get(&node.name).cloned().unwrap_or_default();
            let has_q = !q.inputs.is_empty() && !q.outputs.is_empty();
            // a new call writes the old one's output value: its readers need no rewiring
            match substitute(&mut m, &node, &q, has_q, isa)? {
                Some(r) => {
                    nodes.extend(r.nodes);
                    changed = true;
                }
                None => nodes.push(node),
            }
        }
        set_nodes(&mut m.graph, nodes);
        if changed {
            remove_dead(&mut m.graph);
            let written = retype_new_calls(&mut m);
            super::fold_qparams::retrace_from(&mut m, written);
        }
        changed |= restore_max_pool_with_indices(&mut m);
        Ok((m, changed))
    }
}

/// The new call of `node`, if the backend substitutes it.
fn substitute(
    m: &mut Module,
    node: &Node,
    q: &NodeQParams,
    has_q: bool,
    isa: Isa,
) -> Result<Option<Replacement>, LowerError> {
    let op = op_name(node);
    Ok(match op {
        "quantized_decomposed::quantize_per_tensor"
        | "quantized_decomposed::dequantize_per_tensor"
            if node.overload == "default" && super::replace_quant::qualifies(node) =>
        {
            let target = op.replace("quantized_decomposed::", "cortex_m::");
            let args = node.args.iter().map(|a| a.data.clone()).collect();
            Some(single(m, node, &target, args, None))
        }
        "aten::convolution" if has_q => Some(convolution(m, node, q, isa)?),
        _ if has_q && super::lut::function(op).is_some() => Some(activation(m, node, q)?),
        "aten::linear" if has_q => Some(linear(m, node, q, isa)?),
        "aten::avg_pool2d" if has_q => avg_pool2d(m, node, q, isa)?,
        "aten::_softmax" if has_q => softmax(m, node, q)?,
        "aten::add" | "aten::sub" if has_q && node.overload == "Tensor" => Some(add(m, node, q)?),
        "aten::mul" if has_q && node.overload == "Tensor" => Some(mul(m, node, q)?),
        "aten::div" if has_q && node.overload == "Tensor" => Some(div(m, node, q)?),
        "aten::bmm" if has_q => Some(bmm(m, node, q, isa)?),
        "aten::max_pool2d" => max_pool2d(m, node, q)?,
        "aten::minimum" | "aten::maximum" => {
            let x = tensor_arg(node, 0).ok_or_else(|| bad(node, "no input tensor"))?;
            let dtype = meta(&m.graph, x).0;
            let ok = dtype == Some(ScalarType::Char)
                || (op == "aten::minimum" && dtype == Some(ScalarType::Int));
            ok.then(|| {
                let target = op.replace("aten::", "cortex_m::");
                let args = node.args.iter().map(|a| a.data.clone()).collect();
                single(m, node, &target, args, None)
            })
        }
        "aten::permute_copy" => {
            let x = tensor_arg(node, 0).ok_or_else(|| bad(node, "no input tensor"))?;
            let (dtype, shape) = meta(&m.graph, x);
            if dtype != Some(ScalarType::Char) {
                return Ok(None);
            }
            let rank = shape.len() as i64;
            let perms = ints_arg(node, 1).ok_or_else(|| bad(node, "no permutation"))?;
            let perms = perms
                .iter()
                .map(|p| Some(p.rem_euclid(rank.max(1))))
                .collect();
            Some(single(
                m,
                node,
                "cortex_m::transpose",
                vec![ArgData::Tensor(x), ArgData::Ints(perms)],
                None,
            ))
        }
        "aten::constant_pad_nd" => constant_pad(m, node, q)?,
        "aten::convolution" | "aten::linear" => None,
        _ => None,
    })
}

fn bad(node: &Node, what: &str) -> LowerError {
    fail(
        PASS,
        format!("{} ({}): {what}", node.name, node.qualified_op()),
    )
}

/// `op`'s default name for a new node (`cortex_m_quantized_conv2d_default`).
fn node_name(m: &Module, target: &str) -> String {
    unique_name(&m.graph, &format!("{}_default", target.replace("::", "_")))
}

/// A new call of `target` writing the old node's output value (same dtype and shape), keeping
/// its debug handles and module stack; `helpers` go before it.
fn single(
    m: &mut Module,
    node: &Node,
    target: &str,
    args: Vec<ArgData>,
    helpers: Option<Vec<Node>>,
) -> Replacement {
    let name = node_name(m, target);
    let out = node.outputs.first().copied();
    let mut new = make_node(&name, target, "default", args, out.into_iter().collect());
    new.debug_handles = node.debug_handles.clone();
    new.module_stack = node.module_stack.clone();
    new.stack_trace = node.stack_trace.clone();
    let mut nodes = helpers.unwrap_or_default();
    for h in &mut nodes {
        h.debug_handles = node.debug_handles.clone();
        h.module_stack = node.module_stack.clone();
    }
    nodes.push(new);
    Replacement { nodes }
}

/// An uninitialised scratch buffer (`memory.alloc` of `size` bytes).
fn alloc(m: &mut Module, size: i64) -> (Node, ValueId) {
    let name = unique_name(&m.graph, "alloc");
    let v = new_tensor(
        &mut m.graph,
        &name,
        ScalarType::Byte,
        vec![size],
        Vec::new(),
        Storage::Unplanned,
    );
    let mut n = make_node(&name, "memory.alloc", "", Vec::new(), vec![v]);
    n.args.push(crate::ir::Arg::new(
        Some("alloc_arg".into()),
        None,
        ArgData::Str(format!("({size},);1")),
    ));
    (n, v)
}

fn input_q<'q>(node: &Node, q: &'q NodeQParams, k: usize) -> Result<&'q QuantArgs, LowerError> {
    q.inputs.get(&k).ok_or_else(|| {
        bad(
            node,
            &format!("argument {k} has no quantization parameters"),
        )
    })
}

fn output_q<'q>(node: &Node, q: &'q NodeQParams) -> Result<&'q QuantArgs, LowerError> {
    q.outputs
        .get(&0)
        .ok_or_else(|| bad(node, "its output has no quantization parameters"))
}

fn int32_tensor(values: &[i64]) -> TensorData {
    let bytes = values
        .iter()
        .flat_map(|&v| (v as i32).to_le_bytes())
        .collect();
    TensorData {
        dtype: ScalarType::Int,
        shape: vec![values.len()],
        bytes,
    }
}

/// The elements of a constant as i64 (integer tensors).
fn ints_of(t: &TensorData) -> Result<Vec<i64>, LowerError> {
    t.to_f64()
        .map(|v| v.into_iter().map(|x| x as i64).collect())
        .map_err(|e| fail(PASS, e.to_string()))
}

/// `t` (4-D, logical row-major) with its dims permuted by `perm`, contiguous.
fn permute4(t: &TensorData, perm: [usize; 4]) -> Result<TensorData, LowerError> {
    if t.shape.len() != 4 {
        return Err(fail(
            PASS,
            format!("a weight of rank {} is not 4-D", t.shape.len()),
        ));
    }
    let esize = t.dtype.element_size().unwrap_or(1);
    let s = &t.shape;
    let strides = [s[1] * s[2] * s[3], s[2] * s[3], s[3], 1];
    let out_shape: Vec<usize> = perm.iter().map(|&p| s[p]).collect();
    let mut bytes = Vec::with_capacity(t.bytes.len());
    for a in 0..out_shape[0] {
        for b in 0..out_shape[1] {
            for c in 0..out_shape[2] {
                for d in 0..out_shape[3] {
                    let idx = [a, b, c, d];
                    let mut src = 0;
                    for k in 0..4 {
                        src += idx[k] * strides[perm[k]];
                    }
                    let at = src * esize;
                    bytes.extend_from_slice(
                        t.bytes.get(at..at + esize).ok_or_else(|| {
                            fail(PASS, "a weight's data is shorter than its shape")
                        })?,
                    );
                }
            }
        }
    }
    Ok(TensorData {
        dtype: t.dtype,
        shape: out_shape,
        bytes,
    })
}

fn pair(node: &Node, k: usize, default: [i64; 2]) -> Result<[i64; 2], LowerError> {
    match ints_arg(node, k) {
        None if node.args.get(k).is_none() => Ok(default),
        Some(v) if v.len() == 2 => Ok([v[0], v[1]]),
        Some(v) if v.len() == 1 => Ok([v[0], v[0]]),
        _ => Err(bad(node, &format!("argument {k} is not an int pair"))),
    }
}

fn ints(v: &[i64]) -> ArgData {
    ArgData::Ints(v.iter().map(|&x| Some(x)).collect())
}

fn convolution(
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
    let [n, c, h, wd] = dims4(node, &x_shape)?;
    let [on, oc, oh, ow] = dims4(node, &out_shape)?;
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
            "cortex_m::quantized_depthwise_conv2d",
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
        "cortex_m::quantized_conv2d",
        args,
        Some(vec![alloc_node]),
    ))
}

fn transpose_convolution(
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
    let [n, c, h, wd] = dims4(node, &meta(&m.graph, x).1)?;
    let [on, oc, oh, ow] = dims4(node, &meta(&m.graph, out).1)?;
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
        "cortex_m::quantized_transpose_conv2d",
        args,
        Some(vec![scratch_node, output_node]),
    ))
}

fn dims4(node: &Node, shape: &[i64]) -> Result<[i64; 4], LowerError> {
    <[i64; 4]>::try_from(shape).map_err(|_| bad(node, &format!("shape {shape:?} is not 4-D")))
}

fn linear(
    m: &mut Module,
    node: &Node,
    q: &NodeQParams,
    isa: Isa,
) -> Result<Replacement, LowerError> {
    let x = tensor_arg(node, 0).ok_or_else(|| bad(node, "no input tensor"))?;
    let weight = tensor_arg(node, 1).ok_or_else(|| bad(node, "no weight tensor"))?;
    let bias = tensor_arg(node, 2);
    let (inq, wq, outq) = (
        input_q(node, q, 0)?,
        input_q(node, q, 1)?,
        output_q(node, q)?,
    );
    if wq.zp() != 0 {
        return Err(bad(
            node,
            &format!(
                "cortex_m::quantized_linear assumes symmetric weights; weight_zp={}",
                wq.zp()
            ),
        ));
    }
    let (mult, shift) = quantize_multiplier(inq.scale() * wq.scale() / outq.scale());
    let (bias_arg, kernel_sum_arg) = if isa == Isa::Mve {
        let w = m
            .constant(weight)
            .ok_or_else(|| bad(node, "its weight is not a constant"))?;
        let (out_f, in_f) = (w.shape[0], *w.shape.get(1).unwrap_or(&1));
        let wv = ints_of(w)?;
        let b = match bias {
            Some(b) => Some(ints_of(
                m.constant(b)
                    .ok_or_else(|| bad(node, "its bias is not a constant"))?,
            )?),
            None => None,
        };
        let input_offset = -inq.zp();
        let weight_offset = -wq.zp();
        let sums: Vec<i64> = (0..out_f)
            .map(|o| {
                let s: i64 = wv[o * in_f..(o + 1) * in_f]
                    .iter()
                    .map(|&v| (v + weight_offset) as i32 as i64)
                    .sum::<i64>() as i32 as i64;
                let mut k = (s.wrapping_mul(input_offset)) as i32 as i64;
                if let Some(b) = &b {
                    k = (k + b[o]) as i32 as i64;
                }
                k
            })
            .collect();
        let mut data = int32_tensor(&sums);
        data.shape = vec![1, out_f];
        let ks = add_constant(m, &format!("{}_kernel_sum", node.name), data);
        (ArgData::None, ArgData::Tensor(ks))
    } else {
        (bias.map_or(ArgData::None, ArgData::Tensor), ArgData::None)
    };
    let args = vec![
        ArgData::Tensor(x),
        ArgData::Tensor(weight),
        bias_arg,
        kernel_sum_arg,
        ArgData::Int(-inq.zp()),
        ArgData::Int(-wq.zp()),
        ArgData::Int(outq.zp()),
        ints(&[mult]),
        ints(&[shift]),
        ArgData::Int(outq.qmax),
        ArgData::Int(outq.qmin),
    ];
    Ok(single(m, node, "cortex_m::quantized_linear", args, None))
}

/// Pads `[n, c, h, w]` in the memory order of a tensor with `dim_order`.
fn physical(pads: [i64; 4], dim_order: &[u8]) -> [i64; 4] {
    if dim_order == [0, 2, 3, 1] {
        [pads[0], pads[2], pads[3], pads[1]]
    } else {
        pads
    }
}

fn avg_pool2d(
    m: &mut Module,
    node: &Node,
    q: &NodeQParams,
    isa: Isa,
) -> Result<Option<Replacement>, LowerError> {
    let x = tensor_arg(node, 0).ok_or_else(|| bad(node, "no input tensor"))?;
    let kernel = pair(node, 1, [1, 1])?;
    let stride = if node.args.len() > 2
        && !matches!(node.args[2].data, ArgData::Ints(ref v) if v.is_empty())
    {
        pair(node, 2, kernel)?
    } else {
        kernel
    };
    let padding = pair(node, 3, [0, 0])?;
    let ceil_mode = bool_arg(node, 4).unwrap_or(false);
    let count_include_pad = bool_arg(node, 5).unwrap_or(true);
    if node.args.get(6).is_some_and(|a| a.data != ArgData::None) {
        return Ok(None);
    }
    let inq = input_q(node, q, 0)?;
    let (mult, shift) = quantize_multiplier(inq.scale());
    let mut helpers = Vec::new();
    let mut input = x;
    let mut avg_padding = padding;
    if count_include_pad {
        let xv = &m.graph.values[x];
        let (dtype, shape, dim_order) = (xv.dtype, xv.shape.clone(), xv.dim_order.clone());
        let pads = physical([0, 0, padding[0], padding[1]], &dim_order);
        let mut out_shape = shape.clone();
        if out_shape.len() == 4 {
            out_shape[2] += 2 * padding[0];
            out_shape[3] += 2 * padding[1];
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
    let channels = meta(&m.graph, input).1.get(1).copied().unwrap_or(1);
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
    Ok(Some(single(
        m,
        node,
        "cortex_m::quantized_avg_pool2d",
        args,
        Some(helpers),
    )))
}

fn activation(m: &mut Module, node: &Node, q: &NodeQParams) -> Result<Replacement, LowerError> {
    let f = super::lut::function(op_name(node)).ok_or_else(|| bad(node, "no function"))?;
    let (inq, outq) = (input_q(node, q, 0)?, output_q(node, q)?);
    let table = super::lut::build(f, inq.scale(), inq.zp(), outq.scale(), outq.zp())
        .ok_or_else(|| bad(node, "the function is undefined on every int8 input"))?;
    let x = tensor_arg(node, 0).ok_or_else(|| bad(node, "no input tensor"))?;
    let lut = add_constant(
        m,
        &format!("{}_lut", node.name),
        TensorData {
            dtype: ScalarType::Char,
            shape: vec![256],
            bytes: table.iter().map(|&v| v as u8).collect(),
        },
    );
    Ok(single(
        m,
        node,
        "cortex_m::quantized_activation",
        vec![ArgData::Tensor(x), ArgData::Tensor(lut)],
        None,
    ))
}

fn softmax(
    m: &mut Module,
    node: &Node,
    q: &NodeQParams,
) -> Result<Option<Replacement>, LowerError> {
    if bool_arg(node, 2) == Some(true) {
        return Ok(None);
    }
    let x = tensor_arg(node, 0).ok_or_else(|| bad(node, "no input tensor"))?;
    let dim = int_arg(node, 1).ok_or_else(|| bad(node, "no dim"))?;
    let (inq, outq) = (input_q(node, q, 0)?, output_q(node, q)?);
    if (outq.scale() - 1.0 / 256.0).abs() > 1e-12 || outq.zp() != -128 {
        return Err(bad(
            node,
            &format!(
                "softmax output must be quantized with CMSIS-NN's scale 1/256 and zero point -128; got {} and {}",
                outq.scale(),
                outq.zp()
            ),
        ));
    }
    let real =
        (inq.scale() * (1u64 << (31 - SOFTMAX_INPUT_INTEGER_BITS)) as f64).min(f64::from(i32::MAX));
    let (mult, shift) = quantize_multiplier(real);
    let term = ((1i64 << SOFTMAX_INPUT_INTEGER_BITS) - 1) as f64
        * 2f64.powi((31 - SOFTMAX_INPUT_INTEGER_BITS) as i32)
        / 2f64.powi(shift as i32);
    let diff_min = -(term.floor() as i64);
    let args = vec![
        ArgData::Tensor(x),
        ArgData::Int(dim),
        ArgData::Int(inq.zp()),
        ArgData::Int(outq.zp()),
        ArgData::Int(mult),
        ArgData::Int(shift),
        ArgData::Int(diff_min),
    ];
    Ok(Some(single(m, node, "cortex_m::softmax", args, None)))
}

fn add(m: &mut Module, node: &Node, q: &NodeQParams) -> Result<Replacement, LowerError> {
    let alpha = match node.args.get(2).map(|a| &a.data) {
        None => 1,
        Some(ArgData::Int(a)) => *a,
        Some(ArgData::Float(f)) if f.fract() == 0.0 => *f as i64,
        Some(other) => {
            return Err(bad(
                node,
                &format!("alpha {other:?}: quantized_add can only express an integer one"),
            ))
        }
    };
    let is_sub = op_name(node) == "aten::sub";
    let (q1, q2, outq) = (
        input_q(node, q, 0)?,
        input_q(node, q, 1)?,
        output_q(node, q)?,
    );
    let coefficient = if is_sub { -alpha } else { alpha };
    let s1 = q1.scale();
    let s2 = coefficient.unsigned_abs() as f64 * q2.scale();
    let max2 = 2.0 * s1.max(s2);
    let (m1, sh1) = quantize_multiplier(s1 / max2);
    let (mut m2, sh2) = quantize_multiplier(s2 / max2);
    if coefficient < 0 {
        m2 = -m2;
    }
    let (mo, sho) = quantize_multiplier(max2 / (outq.scale() * (1i64 << SHIFT_INT8) as f64));
    if sho > 0 {
        let span = |a: &QuantArgs| [a.qmin - a.zp(), a.qmax - a.zp()];
        let sign = if coefficient < 0 { -1.0 } else { 1.0 };
        let mut worst: f64 = 0.0;
        for d1 in span(q1) {
            for d2 in span(q2) {
                worst = worst.max((d1 as f64 * s1 + sign * d2 as f64 * s2).abs());
            }
        }
        if worst * (1i64 << SHIFT_INT8) as f64 / max2 * 2f64.powi(sho as i32) >= 2f64.powi(31) {
            return Err(bad(
                node,
                "the output scale needs a requantization the int32 kernel cannot hold",
            ));
        }
    }
    let a = tensor_arg(node, 0).ok_or_else(|| bad(node, "no first operand"))?;
    let b = tensor_arg(node, 1).ok_or_else(|| bad(node, "no second operand"))?;
    let args = vec![
        ArgData::Tensor(a),
        ArgData::Int(q1.zp()),
        ArgData::Int(m1),
        ArgData::Int(sh1),
        ArgData::Tensor(b),
        ArgData::Int(q2.zp()),
        ArgData::Int(m2),
        ArgData::Int(sh2),
        ArgData::Int(outq.zp()),
        ArgData::Int(mo),
        ArgData::Int(sho),
        ArgData::Int(outq.qmin),
        ArgData::Int(outq.qmax),
    ];
    Ok(single(m, node, "cortex_m::quantized_add", args, None))
}

fn mul(m: &mut Module, node: &Node, q: &NodeQParams) -> Result<Replacement, LowerError> {
    let (q1, q2, outq) = (
        input_q(node, q, 0)?,
        input_q(node, q, 1)?,
        output_q(node, q)?,
    );
    let (mo, sho) = quantize_multiplier(q1.scale() * q2.scale() / outq.scale());
    let a = tensor_arg(node, 0).ok_or_else(|| bad(node, "no first operand"))?;
    let b = tensor_arg(node, 1).ok_or_else(|| bad(node, "no second operand"))?;
    let args = vec![
        ArgData::Tensor(a),
        ArgData::Int(q1.zp()),
        ArgData::Tensor(b),
        ArgData::Int(q2.zp()),
        ArgData::Int(outq.zp()),
        ArgData::Int(mo),
        ArgData::Int(sho),
    ];
    Ok(single(m, node, "cortex_m::quantized_mul", args, None))
}

fn div(m: &mut Module, node: &Node, q: &NodeQParams) -> Result<Replacement, LowerError> {
    let (q1, q2, outq) = (
        input_q(node, q, 0)?,
        input_q(node, q, 1)?,
        output_q(node, q)?,
    );
    // no fixed-point division in CMSIS-NN: the kernel divides in float by this scale
    let effective_scale = q1.scale() / (q2.scale() * outq.scale());
    let a = tensor_arg(node, 0).ok_or_else(|| bad(node, "no first operand"))?;
    let b = tensor_arg(node, 1).ok_or_else(|| bad(node, "no second operand"))?;
    let args = vec![
        ArgData::Tensor(a),
        ArgData::Int(q1.zp()),
        ArgData::Tensor(b),
        ArgData::Int(q2.zp()),
        ArgData::Int(outq.zp()),
        ArgData::Float(effective_scale),
    ];
    Ok(single(m, node, "cortex_m::quantized_div", args, None))
}

/// `t` (3-D, logical row-major) with its last two dims swapped, contiguous.
fn transpose_last2(t: &TensorData) -> Result<TensorData, LowerError> {
    let [b, r, c] = <[usize; 3]>::try_from(t.shape.as_slice()).map_err(|_| {
        fail(
            PASS,
            format!("a batch-matmul operand of shape {:?}", t.shape),
        )
    })?;
    let e = t.dtype.element_size().unwrap_or(1);
    let mut bytes = Vec::with_capacity(t.bytes.len());
    for k in 0..b {
        for j in 0..c {
            for i in 0..r {
                let at = ((k * r + i) * c + j) * e;
                bytes.extend_from_slice(
                    t.bytes
                        .get(at..at + e)
                        .ok_or_else(|| fail(PASS, "an operand's data is shorter than its shape"))?,
                );
            }
        }
    }
    Ok(TensorData {
        dtype: t.dtype,
        shape: vec![b, c, r],
        bytes,
    })
}

fn bmm(m: &mut Module, node: &Node, q: &NodeQParams, isa: Isa) -> Result<Replacement, LowerError> {
    let (lq, rq, outq) = (
        input_q(node, q, 0)?,
        input_q(node, q, 1)?,
        output_q(node, q)?,
    );
    let (mult, shift) = quantize_multiplier(lq.scale() * rq.scale() / outq.scale());
    let lhs = tensor_arg(node, 0).ok_or_else(|| bad(node, "no left operand"))?;
    let rhs = tensor_arg(node, 1).ok_or_else(|| bad(node, "no right operand"))?;
    let mut helpers = Vec::new();
    let rhs_t = match m.constant(rhs).cloned() {
        Some(data) => add_constant(
            m,
            &format!("{}_rhs_transposed", node.name),
            transpose_last2(&data)?,
        ),
        None => {
            let (dtype, shape) = meta(&m.graph, rhs);
            let [b, k, n] = <[i64; 3]>::try_from(shape.as_slice())
                .map_err(|_| bad(node, &format!("right operand of shape {shape:?}")))?;
            let name = node_name(m, "cortex_m::transpose");
            let v = new_tensor(
                &mut m.graph,
                &name,
                dtype.unwrap_or(ScalarType::Char),
                vec![b, n, k],
                Vec::new(),
                Storage::Unplanned,
            );
            helpers.push(make_node(
                &name,
                "cortex_m::transpose",
                "default",
                vec![ArgData::Tensor(rhs), ints(&[0, 2, 1])],
                vec![v],
            ));
            v
        }
    };
    // CMSIS-NN sizes the scratch as a fully connected layer's with the transposed rhs's rows
    let rhs_cols = meta(&m.graph, rhs_t).1.get(1).copied().unwrap_or(0);
    let (alloc_node, scratch_v) = alloc(m, scratch::fully_connected(isa, rhs_cols));
    helpers.push(alloc_node);
    let args = vec![
        ArgData::Tensor(lhs),
        ArgData::Int(-lq.zp()),
        ArgData::Tensor(rhs_t),
        ArgData::Int(-rq.zp()),
        ArgData::Int(outq.zp()),
        ArgData::Int(mult),
        ArgData::Int(shift),
        ArgData::Tensor(scratch_v),
    ];
    Ok(single(
        m,
        node,
        "cortex_m::quantized_batch_matmul",
        args,
        Some(helpers),
    ))
}

fn max_pool2d(
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
    let kernel = pair(node, 1, [1, 1])?;
    let stride = match ints_arg(node, 2) {
        Some(v) if v.is_empty() => kernel,
        _ => pair(node, 2, kernel)?,
    };
    let padding = pair(node, 3, [0, 0])?;
    let dilation = pair(node, 4, [1, 1])?;
    let ceil_mode = bool_arg(node, 5).unwrap_or(false);
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
        "cortex_m::quantized_max_pool2d",
        args,
        None,
    )))
}

fn constant_pad(
    m: &mut Module,
    node: &Node,
    q: &NodeQParams,
) -> Result<Option<Replacement>, LowerError> {
    let Some(inq) = q.inputs.get(&0) else {
        return Ok(None);
    };
    let x = tensor_arg(node, 0).ok_or_else(|| bad(node, "no input tensor"))?;
    let padding = ints_arg(node, 1).ok_or_else(|| bad(node, "no padding"))?;
    let value = float_arg(node, 2).unwrap_or(0.0);
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

/// The output dtype of every `cortex_m::` call as its kernel's meta function gives it (a
/// dequantize writes float, a quantize its `dtype` argument, the rest their activation input's
/// dtype); returns the values whose dtype changed.
fn retype_new_calls(m: &mut Module) -> Vec<ValueId> {
    let mut written = Vec::new();
    for n in &m.graph.nodes {
        if !n.op.starts_with("cortex_m::") {
            continue;
        }
        let dtype = match n.op.as_str() {
            "cortex_m::dequantize_per_tensor" => Some(ScalarType::Float),
            "cortex_m::quantize_per_tensor" => match n.args.get(5).map(|a| &a.data) {
                Some(ArgData::ScalarType(t)) => Some(*t),
                _ => None,
            },
            _ => tensor_arg(n, 0).and_then(|x| m.graph.values[x].dtype),
        };
        let first_in = tensor_arg(n, 0).map(|x| m.graph.values[x].dim_order.clone());
        for &o in &n.outputs {
            let shape = m.graph.values[o].shape.clone();
            let dim_order = match n.op.as_str() {
                "cortex_m::quantized_conv2d"
                | "cortex_m::quantized_depthwise_conv2d"
                | "cortex_m::quantized_transpose_conv2d"
                | "cortex_m::quantized_avg_pool2d"
                | "cortex_m::quantized_max_pool2d" => channels_last_dim_order(&shape),
                "cortex_m::pad" => match first_in.as_deref() {
                    Some(d) if !d.is_empty() => channels_last_dim_order(&shape),
                    _ => Vec::new(),
                },
                "cortex_m::quantized_linear" | "cortex_m::transpose" => Vec::new(),
                // against a one-element operand: the first operand's layout; else contiguous
                "cortex_m::minimum" | "cortex_m::maximum" => {
                    let one = tensor_arg(n, 1)
                        .is_some_and(|b| m.graph.values[b].shape.iter().product::<i64>() == 1);
                    if one {
                        first_in.clone().unwrap_or_default()
                    } else {
                        Vec::new()
                    }
                }
                _ => first_in.clone().unwrap_or_default(),
            };
            let v = &mut m.graph.values[o];
            if v.dim_order != dim_order {
                v.dim_order = dim_order;
                written.push(o);
            }
            if let Some(d) = dtype.filter(|&d| v.dtype != Some(d)) {
                v.dtype = Some(d);
                v.nbytes = v
                    .shape
                    .iter()
                    .try_fold(d.element_size().unwrap_or(1) as u64, |acc, &s| {
                        u64::try_from(s).ok().and_then(|s| acc.checked_mul(s))
                    });
                written.push(o);
            }
        }
    }
    written.dedup();
    written
}

/// A `max_pool2d` left in the graph runs on the portable `max_pool2d_with_indices` kernel: its
/// indices come back as a second output.
pub(super) fn restore_max_pool_with_indices(m: &mut Module) -> bool {
    let mut changed = false;
    for i in 0..m.graph.nodes.len() {
        if !super::edit::is_op(&m.graph.nodes[i], "aten::max_pool2d") {
            continue;
        }
        let Some(&out) = m.graph.nodes[i].outputs.first() else {
            continue;
        };
        let (_, shape) = meta(&m.graph, out);
        let name = unique_name(&m.graph, &format!("{}_indices", m.graph.nodes[i].name));
        // the indices come out contiguous, whatever the values' layout
        let idx = new_tensor(
            &mut m.graph,
            &name,
            ScalarType::Long,
            shape,
            Vec::new(),
            Storage::Unplanned,
        );
        let node = &mut m.graph.nodes[i];
        node.set_op("aten::max_pool2d_with_indices", "default");
        node.outputs.push(idx);
        changed = true;
    }
    if changed {
        m.graph.relink();
    }
    changed
}
