//! FoldAndAnnotateQParamsPass: around every op the quantizer annotated, the dequantizes that
//! feed it and the quantizes that consume it are removed and their parameters kept on the node
//! (inputs by argument index, outputs by user index, as ExecuTorch's Arm pass records them); the
//! op then reads and writes the integer tensors. A dequantize shared with another op stays until
//! its last reader folds it. An `add`/`sub` with only one quantized operand keeps its Q/DQ (and
//! is annotated). Q/DQ ops are never folded into each other.
//!
//! The serialized ETRecord does not keep the quantizer's annotation (`_arm_annotation_info` in
//! `node.meta["custom"]`), so an op counts as annotated when `CortexMQuantizer` annotates its
//! kind ([`QUANTIZED_OPS`]: its pattern table and the Arm shared-qparams list, in their edge
//! names) and a dequantize feeds it or a quantize consumes it. An op the quantizer leaves in
//! float (an upsample) keeps its dequantize and quantize even between quantized neighbours.

use crate::dtype::ScalarType;
use crate::ir::{ArgData, Graph, Node, NodeKind, ValueId};

use super::edit::{float_arg, int_arg, is_op, op_name, replace_uses, set_nodes};
use super::qparams::{NodeQParams, QuantArgs};
use super::{LowerError, LowerPass, Module, Options};

pub struct FoldAndAnnotateQParams;

const DQ_OPS: [&str; 4] = [
    "quantized_decomposed::dequantize_per_tensor",
    "quantized_decomposed::dequantize_per_channel",
    "cortex_m::dequantize_per_tensor",
    "quantized_decomposed::dequantize_per_token",
];
const Q_OPS: [&str; 4] = [
    "quantized_decomposed::quantize_per_tensor",
    "quantized_decomposed::quantize_per_channel",
    "cortex_m::quantize_per_tensor",
    "quantized_decomposed::quantize_per_token",
];

pub(super) fn is_dq(n: &Node) -> bool {
    n.kind == NodeKind::Operator && DQ_OPS.contains(&op_name(n))
}

pub(super) fn is_q(n: &Node) -> bool {
    n.kind == NodeKind::Operator && Q_OPS.contains(&op_name(n))
}

/// The parameters a (de)quantize node carries (`None` when a scale or zero point is not a
/// literal or a constant).
pub fn quant_args_of(m: &Module, n: &Node) -> Option<QuantArgs> {
    let dtype = |k: usize| match n.args.get(k).map(|a| &a.data) {
        Some(ArgData::ScalarType(t)) => Some(*t),
        _ => None,
    };
    if n.overload != "default" {
        return None;
    }
    if op_name(n).ends_with("_per_channel") {
        // (input, scales, zero_points, axis, quant_min, quant_max, dtype)
        let scales = super::edit::tensor_arg(n, 1).and_then(|v| m.constant(v))?;
        let zps = super::edit::tensor_arg(n, 2).and_then(|v| m.constant(v))?;
        let zero_points = zps.to_f64().ok()?.into_iter().map(|z| z as i64).collect();
        return Some(QuantArgs {
            scales: scales.to_f64().ok()?,
            zero_points,
            axis: Some(int_arg(n, 3)?),
            qmin: int_arg(n, 4)?,
            qmax: int_arg(n, 5)?,
            dtype: dtype(6)?,
        });
    }
    Some(QuantArgs {
        scales: vec![float_arg(n, 1)?],
        zero_points: vec![int_arg(n, 2)?],
        axis: None,
        qmin: int_arg(n, 3)?,
        qmax: int_arg(n, 4)?,
        dtype: dtype(5)?,
    })
}

/// The node producing `v`, when an operator does.
fn producer(g: &Graph, v: ValueId) -> Option<&Node> {
    g.values
        .get(v)?
        .producer
        .and_then(|p| g.nodes.get(p))
        .filter(|n| n.kind == NodeKind::Operator)
}

/// The ops `CortexMQuantizer` (ExecuTorch 1.5.1) annotates, by their edge-dialect names: its
/// pattern table (`quantizer_support.py`: convolutions, linear, the binary ops, softmax, the
/// LUT activations, pools, bmm) and the Arm `SharedQspecQuantizer`'s list (data movement,
/// clamps, comparisons), which share their neighbours' parameters.
pub const QUANTIZED_OPS: &[&str] = &[
    "aten::convolution",
    "aten::linear",
    "aten::add",
    "aten::sub",
    "aten::mul",
    "aten::div",
    "aten::hardswish",
    "aten::_softmax",
    "aten::sigmoid",
    "aten::tanh",
    "aten::silu",
    "aten::gelu",
    "aten::log",
    "aten::log2",
    "aten::log10",
    "aten::log1p",
    "aten::sqrt",
    "aten::rsqrt",
    "aten::avg_pool2d",
    "aten::max_pool2d",
    "aten::max_pool2d_with_indices",
    "aten::bmm",
    "aten::hardsigmoid",
];

/// The Arm `SharedQspecQuantizer`'s ops (edge names): annotated only as part of a quantized
/// region, sharing their input's parameters, so only where their input is quantized.
pub const SHARED_QPARAMS_OPS: &[&str] = &[
    "aten::clone",
    "dim_order_ops::_clone_dim_order",
    "dim_order_ops::_to_dim_order_copy",
    "aten::alias_copy",
    "aten::detach_copy",
    "aten::unfold_copy",
    "aten::unbind_copy",
    "aten::minimum",
    "aten::maximum",
    "aten::amin",
    "aten::amax",
    "aten::permute_copy",
    "aten::transpose_copy",
    "aten::t_copy",
    "aten::repeat",
    "aten::repeat_interleave",
    "aten::expand_copy",
    "aten::select_copy",
    "aten::slice_copy",
    "aten::split_copy",
    "aten::split_with_sizes_copy",
    "aten::flip",
    "aten::index_select",
    "aten::index_put",
    "aten::as_strided_copy",
    "aten::pixel_shuffle",
    "aten::pixel_unshuffle",
    "aten::cat",
    "aten::index",
    "aten::gather",
    "aten::squeeze_copy",
    "aten::unsqueeze_copy",
    "aten::view_copy",
    "aten::constant_pad_nd",
    "aten::clamp",
    "aten::hardtanh",
    "aten::relu",
    "aten::eq",
    "aten::ne",
    "aten::ge",
    "aten::gt",
    "aten::le",
    "aten::lt",
    "aten::where",
];

/// `CortexMQuantizer`'s pattern checks (`pattern_checkers.py`) that turn an op of its table away:
/// an average pool with a divisor override; a transposed convolution with output padding,
/// groups or dilation; an add, sub or mul broadcasting other than along channels (or with an
/// alpha it cannot fold), a div broadcasting at all; a bmm whose operands are not `[b, m, k]` and
/// `[b, k, n]`.
fn pattern_accepts(g: &Graph, n: &Node) -> bool {
    use super::edit::{arg, ints_arg};
    let shape = |k: usize| super::edit::tensor_arg(n, k).map(|v| g.values[v].shape.clone());
    match op_name(n) {
        "aten::avg_pool2d" => matches!(arg(n, 6), None | Some(ArgData::None)),
        "aten::convolution" if super::edit::bool_arg(n, 6) == Some(true) => {
            let all = |k: usize, v: i64| ints_arg(n, k).is_none_or(|x| x.iter().all(|&e| e == v));
            all(7, 0) && all(5, 1) && int_arg(n, 8).unwrap_or(1) == 1
        }
        "aten::add" | "aten::sub" | "aten::mul" => {
            let alpha_ok = match arg(n, 2) {
                None | Some(ArgData::None) | Some(ArgData::Int(_)) => true,
                Some(ArgData::Float(f)) => f.fract() == 0.0,
                _ => false,
            };
            let broadcast_ok = match (shape(0), shape(1)) {
                (Some(a), Some(b)) if a != b => {
                    let channels_only =
                        |t: &[i64]| t.len() >= 2 && t.iter().product::<i64>() == t[1];
                    a.len() == b.len()
                        && a.get(1) == b.get(1)
                        && (channels_only(&a) || channels_only(&b))
                }
                _ => true,
            };
            alpha_ok && broadcast_ok
        }
        "aten::div" => match (shape(0), shape(1)) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        },
        // over the last dim (the check's channels-last branch never applies to the edge
        // graph's softmax inputs: the 4-D cases over dim 1 stay in float)
        "aten::_softmax" => {
            let rank = shape(0).map_or(0, |s| s.len()) as i64;
            int_arg(n, 1).map(|d| d.rem_euclid(rank.max(1))) == Some(rank - 1)
        }
        "aten::bmm" => match (shape(0), shape(1)) {
            (Some(a), Some(b)) => a.len() == 3 && b.len() == 3 && a[0] == b[0] && a[2] == b[1],
            _ => false,
        },
        _ => true,
    }
}

/// Whether the quantizer annotated `n` (see the module doc): a pattern op next to a
/// dequantize or quantize; a shared-qparams op whose first input is dequantized or written by
/// an annotated op (`quantized`: the values annotated ops wrote so far). A 1-D convolution (a
/// 3-D weight) is annotated only in the explicit-layout flow, whose quantizer has the `conv1d`
/// patterns.
fn annotated(
    g: &Graph,
    n: &Node,
    flow: super::Flow,
    quantized: &std::collections::HashSet<ValueId>,
) -> bool {
    if n.kind != NodeKind::Operator || is_q(n) || is_dq(n) {
        return false;
    }
    if SHARED_QPARAMS_OPS.contains(&op_name(n)) {
        let Some(&x) = n.inputs.first() else {
            return false;
        };
        if quantized.contains(&x) {
            return true;
        }
        // between a dequantize and quantizes: annotated only if they share the parameters
        // (the shared-qparams quantizer gives its input and output the same ones)
        let Some(dq) = producer(g, x).filter(|p| is_dq(p)) else {
            return false;
        };
        let qparams = |node: &Node| {
            (
                super::edit::float_arg(node, 1).map(f64::to_bits),
                int_arg(node, 2),
            )
        };
        let want = qparams(dq);
        return n.outputs.iter().all(|&o| {
            g.values[o]
                .consumers
                .iter()
                .map(|&c| &g.nodes[c])
                .filter(|c| is_q(c))
                .all(|q| qparams(q) == want)
        });
    }
    if !QUANTIZED_OPS.contains(&op_name(n)) || !pattern_accepts(g, n) {
        return false;
    }
    // every pattern but div's takes int8 activations only (`is_int8_activations`)
    let int16 = |node: &Node| {
        node.args
            .iter()
            .any(|a| a.data == ArgData::ScalarType(ScalarType::Short))
    };
    let int16_near = n
        .inputs
        .iter()
        .filter_map(|&v| producer(g, v))
        .chain(
            n.outputs
                .iter()
                .flat_map(|&o| g.values[o].consumers.iter().map(|&c| &g.nodes[c])),
        )
        .any(|x| (is_dq(x) || is_q(x)) && int16(x));
    if int16_near && op_name(n) != "aten::div" {
        return false;
    }
    if op_name(n) == "aten::convolution" && flow == super::Flow::Default {
        let weight_rank = super::edit::tensor_arg(n, 1).map(|w| g.values[w].shape.len());
        if weight_rank != Some(4) {
            return false;
        }
    }
    let dq_in = n.inputs.iter().any(|&v| producer(g, v).is_some_and(is_dq));
    let q_out = n
        .outputs
        .iter()
        .any(|&o| g.values[o].consumers.iter().any(|&c| is_q(&g.nodes[c])));
    dq_in || q_out
}

impl LowerPass for FoldAndAnnotateQParams {
    fn name(&self) -> &'static str {
        "FoldAndAnnotateQParamsPass"
    }

    fn run(&self, mut m: Module, options: &Options) -> Result<(Module, bool), LowerError> {
        let mut removed: Vec<usize> = Vec::new();
        let mut changed = false;
        let mut quantized = std::collections::HashSet::new();
        for i in 0..m.graph.nodes.len() {
            if removed.contains(&i)
                || !annotated(&m.graph, &m.graph.nodes[i], options.flow, &quantized)
            {
                continue;
            }
            quantized.extend(m.graph.nodes[i].outputs.iter().copied());
            let node = m.graph.nodes[i].clone();
            // inputs: per argument, the dequantizes feeding it
            let mut params = NodeQParams::default();
            let mut folds: Vec<(usize, Vec<usize>)> = Vec::new();
            for (k, a) in node.args.iter().enumerate() {
                let tensors = match &a.data {
                    ArgData::Tensor(v) => vec![*v],
                    ArgData::Tensors(vs) => vs.clone(),
                    _ => continue,
                };
                let mut q: Option<QuantArgs> = None;
                let mut dqs = Vec::new();
                for v in tensors {
                    let Some(p) = producer(&m.graph, v).filter(|p| is_dq(p)) else {
                        continue;
                    };
                    if let Some(args) = quant_args_of(&m, p) {
                        if let Some(prev) = &q {
                            if prev.dtype != args.dtype {
                                return Err(super::edit::fail(
                                    self.name(),
                                    format!(
                                        "{}: argument {k} mixes {} and {} quantized tensors",
                                        node.name,
                                        prev.dtype.name(),
                                        args.dtype.name()
                                    ),
                                ));
                            }
                        } else {
                            q = Some(args);
                        }
                        dqs.push(p.id);
                    }
                }
                if let Some(q) = q {
                    params.inputs.insert(k, q);
                    folds.push((k, dqs));
                }
            }
            let partial_binary = matches!(op_name(&node), "aten::add" | "aten::sub")
                && node.overload == "Tensor"
                && params.inputs.contains_key(&0) != params.inputs.contains_key(&1);
            if !partial_binary {
                for (_, dqs) in &folds {
                    for &dq in dqs {
                        let (Some(&from), Some(&to)) = (
                            m.graph.nodes[dq].outputs.first(),
                            m.graph.nodes[dq].inputs.first(),
                        ) else {
                            continue;
                        };
                        super::edit::replace_in_node(&mut m.graph.nodes[i], from, to);
                        changed = true;
                    }
                }
                m.graph.relink();
                for (_, dqs) in &folds {
                    for &dq in dqs {
                        let out = m.graph.nodes[dq].outputs.first().copied();
                        let unused = out.is_none_or(|o| {
                            m.graph.values[o].consumers.is_empty() && !m.graph.outputs.contains(&o)
                        });
                        if unused && !removed.contains(&dq) {
                            removed.push(dq);
                        }
                    }
                }
            }
            // outputs: the quantizes among the node's users, by user index
            let out = node.outputs.first().copied();
            let users: Vec<usize> = out.map_or(Vec::new(), |o| m.graph.values[o].consumers.clone());
            for (k, &u) in users.iter().enumerate() {
                if !is_q(&m.graph.nodes[u]) || removed.contains(&u) {
                    continue;
                }
                let Some(q) = quant_args_of(&m, &m.graph.nodes[u]) else {
                    continue;
                };
                if !partial_binary {
                    if let (Some(o), Some(&q_out)) = (out, m.graph.nodes[u].outputs.first()) {
                        replace_uses(&mut m.graph, q_out, o);
                        removed.push(u);
                        changed = true;
                        // the node now writes the codes the quantize wrote: it answers for
                        // the quantize's debug handles too, and its output for its scale
                        let handles = m.graph.nodes[u].debug_handles.clone();
                        let n = &mut m.graph.nodes[i];
                        for h in handles {
                            if !n.debug_handles.contains(&h) {
                                n.debug_handles.push(h);
                            }
                        }
                        if !q.per_channel() {
                            m.graph.values[o].quant = Some(crate::ir::QuantParams {
                                scale: q.scale(),
                                zero_point: q.zp(),
                            });
                        }
                    }
                }
                params.outputs.insert(k, q);
            }
            m.qparams.insert(node.name.clone(), params);
        }
        let nodes: Vec<Node> = std::mem::take(&mut m.graph.nodes)
            .into_iter()
            .filter(|n| !removed.contains(&n.id))
            .collect();
        set_nodes(&mut m.graph, nodes);
        if changed {
            retrace_dtypes(&mut m);
        }
        Ok((m, changed))
    }
}

/// The output dtype `node` has after ExecuTorch's retrace, given its inputs' dtypes now: type
/// promotion over the tensor operands for the arithmetic ops that promote (a linear layer of
/// int8 activations and an int32 bias writes int32), the `dtype` argument of a dtype cast, the
/// first operand's dtype for everything else; `None` for ops whose output dtype does not follow
/// their inputs (comparisons, indices, (de)quantizes), which keep theirs.
fn retraced_dtype(g: &Graph, node: &Node) -> Option<ScalarType> {
    let op = op_name(node);
    let dtype_of = |v: ValueId| g.values.get(v).and_then(|x| x.dtype);
    const PROMOTE: [&str; 9] = [
        "aten::linear",
        "aten::addmm",
        "aten::mm",
        "aten::bmm",
        "aten::add",
        "aten::sub",
        "aten::mul",
        "aten::cat",
        "aten::matmul",
    ];
    const FIXED: [&str; 12] = [
        "aten::eq",
        "aten::ne",
        "aten::lt",
        "aten::le",
        "aten::gt",
        "aten::ge",
        "aten::argmax",
        "aten::argmin",
        "aten::embedding",
        "aten::full",
        "aten::arange",
        "memory.alloc",
    ];
    if is_q(node) || is_dq(node) || FIXED.contains(&op) || node.kind != NodeKind::Operator {
        return None;
    }
    if op == "dim_order_ops::_to_dim_order_copy" || op == "aten::_to_copy" {
        return node.args.iter().find_map(|a| match (&a.name, &a.data) {
            (Some(n), ArgData::ScalarType(t)) if n == "dtype" => Some(*t),
            _ => None,
        });
    }
    if PROMOTE.contains(&op) {
        return node
            .inputs
            .iter()
            .filter_map(|&v| dtype_of(v))
            .reduce(promote);
    }
    node.inputs.first().and_then(|&v| dtype_of(v))
}

/// PyTorch's promotion of two tensor dtypes (integers widen; a float wins over an integer).
fn promote(a: ScalarType, b: ScalarType) -> ScalarType {
    use ScalarType::*;
    let rank = |t: ScalarType| match t {
        Bool => 0,
        Byte | Char => 1,
        Short => 2,
        Int => 3,
        Long => 4,
        Half | BFloat16 => 5,
        Float => 6,
        Double => 7,
        _ => 1,
    };
    if rank(a) >= rank(b) {
        a
    } else {
        b
    }
}

/// Output dtypes after the fold, as ExecuTorch's retrace gives them: each folded node (and
/// every node reading a value whose dtype changed) takes [`retraced_dtype`]; the `dtype`
/// argument of a folded dtype cast becomes its output quantization's.
fn retrace_dtypes(m: &mut Module) {
    retrace_from(m, Vec::new());
}

/// Dtypes propagated as the retrace does: every folded node, and every node reading a value in
/// `changed` (or one whose dtype this changes), takes [`retraced_dtype`].
pub(super) fn retrace_from(m: &mut Module, changed: Vec<ValueId>) {
    let mut changed: Vec<bool> = (0..m.graph.values.len())
        .map(|v| changed.contains(&v))
        .collect();
    for i in 0..m.graph.nodes.len() {
        let node = &m.graph.nodes[i];
        let folded = m.qparams.contains_key(&node.name);
        if !folded
            && !node
                .inputs
                .iter()
                .any(|&v| changed.get(v).copied().unwrap_or(false))
        {
            continue;
        }
        if folded && is_op(node, "dim_order_ops::_to_dim_order_copy") {
            if let Some(q) = m
                .qparams
                .get(&node.name)
                .and_then(|p| p.outputs.values().next())
            {
                let dtype = q.dtype;
                for a in &mut m.graph.nodes[i].args {
                    if a.name.as_deref() == Some("dtype") {
                        a.data = ArgData::ScalarType(dtype);
                    }
                }
            }
        }
        let node = &m.graph.nodes[i];
        let Some(dtype) = retraced_dtype(&m.graph, node) else {
            continue;
        };
        for o in node.outputs.clone() {
            let v = &mut m.graph.values[o];
            if v.dtype != Some(dtype) {
                v.dtype = Some(dtype);
                v.nbytes = v
                    .shape
                    .iter()
                    .try_fold(dtype.element_size().unwrap_or(1) as u64, |acc, &s| {
                        u64::try_from(s).ok().and_then(|s| acc.checked_mul(s))
                    });
                if let Some(c) = changed.get_mut(o) {
                    *c = true;
                }
            }
        }
    }
}
