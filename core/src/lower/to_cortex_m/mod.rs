//! AtenToCortexMPass: every annotated ATen op the Cortex-M backend has a kernel for becomes that
//! `cortex_m::` call, each argument computed as ExecuTorch 1.5.1's substitution computes it:
//! requantization multipliers and shifts (`quantize_multiplier`), weights in the layout
//! CMSIS-NN reads (OHWI; IHWO for depthwise), the linear layer's kernel sums on Helium, zero
//! biases for grouped convolutions, a zero-point pad before an average pool, and a scratch
//! buffer (`memory.alloc`) sized for the target's CMSIS-NN path ([`super::scratch`]). Each new
//! call is placed where the old one was (its helpers right before it); ops the backend does not
//! substitute stay. A `max_pool2d` that did not lower goes back to `max_pool2d_with_indices`.

mod build;
mod conv;
mod elementwise;
mod matmul;
mod pool;

use crate::dtype::ScalarType;
use crate::ir::{ArgData, Node, NodeKind, Storage, ValueId};

use super::edit::{
    channels_last_dim_order, ints_arg, meta, new_tensor, op_name, pos, remove_dead, set_nodes,
    tensor_arg, unique_name,
};
use super::qparams::NodeQParams;
use super::{Isa, LowerError, Module, Options, Pass};
use build::{bad, single, Replacement};
use conv::convolution;
use elementwise::{activation, add, div, mul, softmax};
use matmul::{bmm, linear};
use pool::{avg_pool2d, constant_pad, max_pool2d};

pub struct AtenToCortexM;

const PASS: &str = "AtenToCortexMPass";

impl Pass<Options> for AtenToCortexM {
    fn name(&self) -> &'static str {
        PASS
    }

    fn run(&self, mut m: Module, options: &Options) -> Result<(Module, bool), LowerError> {
        let isa = options.core.isa();
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
            super::retrace::retrace_from(&mut m, written);
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
        "aten::convolution" | "channels_last::convolution" if has_q => {
            Some(convolution(m, node, q, isa)?)
        }
        "channels_last::avg_pool2d" if has_q => avg_pool2d(m, node, q, isa)?,
        "channels_last::max_pool2d" => max_pool2d(m, node, q)?,
        super::layout::LAYOUT_PERMUTE => Some(transpose(m, node)?),
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
            if meta(&m.graph, x).0 != Some(ScalarType::Char) {
                return Ok(None);
            }
            Some(transpose(m, node)?)
        }
        "aten::constant_pad_nd" => constant_pad(m, node, q)?,
        "aten::convolution" | "aten::linear" => None,
        _ => None,
    })
}

/// A permute as `cortex_m::transpose`, its dims taken modulo the input's rank.
fn transpose(m: &mut Module, node: &Node) -> Result<Replacement, LowerError> {
    let x = tensor_arg(node, 0).ok_or_else(|| bad(node, "no input tensor"))?;
    let rank = meta(&m.graph, x).1.len() as i64;
    let perms = ints_arg(node, pos(node, "dims")).ok_or_else(|| bad(node, "no permutation"))?;
    let perms = perms
        .iter()
        .map(|p| Some(p.rem_euclid(rank.max(1))))
        .collect();
    Ok(single(
        m,
        node,
        "cortex_m::transpose",
        vec![ArgData::Tensor(x), ArgData::Ints(perms)],
        None,
    ))
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
            "cortex_m::quantize_per_tensor" => match n.args.get(pos(n, "dtype")).map(|a| &a.data) {
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
                    let one = tensor_arg(n, pos(n, "other"))
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
