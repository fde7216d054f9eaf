//! Which ops the quantizer annotated, inferred from an edge graph: the ETRecord does not keep
//! `CortexMQuantizer`'s annotation, so etscope applies its op tables and pattern checks to the
//! dequantizes and quantizes around each op ([`annotated`]).

use crate::dtype::ScalarType;
use crate::ir::{ArgData, Graph, Node, NodeKind, ValueId};

use super::edit::{int_arg, op_name, pos, pos_in};

pub(super) const DQ_OPS: [&str; 4] = [
    "quantized_decomposed::dequantize_per_tensor",
    "quantized_decomposed::dequantize_per_channel",
    "cortex_m::dequantize_per_tensor",
    "quantized_decomposed::dequantize_per_token",
];

pub(super) const Q_OPS: [&str; 4] = [
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

/// The node producing `v`, when an operator does.
pub(super) fn producer(g: &Graph, v: ValueId) -> Option<&Node> {
    g.values
        .get(v)?
        .producer
        .and_then(|p| g.nodes.get(p))
        .filter(|n| n.kind == NodeKind::Operator)
}

/// How `CortexMQuantizer` (ExecuTorch 1.5.1) annotates `n`'s operator: the registry's
/// `cortex_m.quantizer` column (its pattern table, and the Arm `SharedQspecQuantizer`'s list of
/// ops that share their neighbours' parameters), by edge-dialect name.
pub(super) fn quantizer_role(n: &Node) -> crate::ops::QuantizerRole {
    crate::ops::lookup(op_name(n), "").map_or(crate::ops::QuantizerRole::None, |id| {
        crate::ops::def(id).cortex_m.quantizer
    })
}

/// Whether `n` is one of the ops that share their input's parameters (annotated only as part of
/// a quantized region, so only where their input is quantized).
fn shares_qparams(n: &Node) -> bool {
    quantizer_role(n) == crate::ops::QuantizerRole::SharedQparams
}

/// `CortexMQuantizer`'s pattern checks (`pattern_checkers.py`) that turn an op of its table away:
/// an average pool with a divisor override; a transposed convolution with output padding,
/// groups or dilation; an add, sub or mul broadcasting other than along channels (or with an
/// alpha it cannot fold), a div broadcasting at all; a bmm whose operands are not `[b, m, k]` and
/// `[b, k, n]`.
pub(super) fn pattern_accepts(g: &Graph, n: &Node, flow: super::Flow) -> bool {
    use super::edit::{arg, ints_arg};
    let shape = |k: usize| super::edit::tensor_arg(n, k).map(|v| g.values[v].shape.clone());
    match op_name(n) {
        "aten::avg_pool2d" => matches!(
            arg(n, pos(n, "divisor_override")),
            None | Some(ArgData::None)
        ),
        "aten::convolution" if super::edit::bool_arg(n, pos(n, "transposed")) == Some(true) => {
            let all = |name: &str, v: i64| {
                ints_arg(n, pos(n, name)).is_none_or(|x| x.iter().all(|&e| e == v))
            };
            all("output_padding", 0)
                && all("dilation", 1)
                && int_arg(n, pos(n, "groups")).unwrap_or(1) == 1
        }
        "aten::add" | "aten::sub" | "aten::mul" => {
            let alpha_ok = match pos_in(n, "alpha").and_then(|k| arg(n, k)) {
                None | Some(ArgData::None) | Some(ArgData::Int(_)) => true,
                Some(ArgData::Float(f)) => f.fract() == 0.0,
                _ => false,
            };
            let broadcast_ok = match (shape(0), shape(1)) {
                // a channel broadcast needs channels-last tensors: the default flow's
                (Some(a), Some(b)) if a != b && flow == super::Flow::Explicit => false,
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
            int_arg(n, pos(n, "dim")).map(|d| d.rem_euclid(rank.max(1))) == Some(rank - 1)
        }
        "aten::bmm" => match (shape(0), shape(1)) {
            (Some(a), Some(b)) => a.len() == 3 && b.len() == 3 && a[0] == b[0] && a[2] == b[1],
            _ => false,
        },
        _ => true,
    }
}

/// Whether the values `n` writes are quantized again with `want` — by quantizes among its
/// readers, or further on through shared-qparams ops — and by no quantize of other parameters.
fn requantized<K: PartialEq>(
    g: &Graph,
    n: &Node,
    want: &K,
    qparams: &dyn Fn(&Node) -> K,
    depth: usize,
) -> bool {
    if depth > 64 {
        return false;
    }
    let readers: Vec<&Node> = n
        .outputs
        .iter()
        .flat_map(|&o| g.values[o].consumers.iter().map(|&c| &g.nodes[c]))
        .collect();
    let quantizes: Vec<&&Node> = readers.iter().filter(|c| is_q(c)).collect();
    if !quantizes.is_empty() {
        return quantizes.iter().all(|q| qparams(q) == *want);
    }
    readers
        .iter()
        .any(|r| shares_qparams(r) && requantized(g, r, want, qparams, depth + 1))
}

/// Whether the quantizer annotated `n` (see the module doc): a pattern op next to a
/// dequantize or quantize; a shared-qparams op whose first input is dequantized or written by
/// an annotated op (`quantized`: the values annotated ops wrote so far). A 1-D convolution (a
/// 3-D weight) is annotated only in the explicit-layout flow, whose quantizer has the `conv1d`
/// patterns.
pub(super) fn annotated(
    g: &Graph,
    n: &Node,
    flow: super::Flow,
    quantized: &std::collections::HashSet<ValueId>,
) -> bool {
    if n.kind != NodeKind::Operator || is_q(n) || is_dq(n) {
        return false;
    }
    if shares_qparams(n) {
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
                super::edit::float_arg(node, pos(node, "scale")).map(f64::to_bits),
                int_arg(node, pos(node, "zero_point")),
            )
        };
        // ... and only if its region is quantized again after it (directly, or after more
        // shared-qparams ops): one whose output goes on in float (a permute before an
        // unquantized linear) was not annotated, and its dequantize stays
        let want = qparams(dq);
        return requantized(g, n, &want, &qparams, 0);
    }
    if quantizer_role(n) != crate::ops::QuantizerRole::Pattern || !pattern_accepts(g, n, flow) {
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
        let weight_rank =
            super::edit::tensor_arg(n, pos(n, "weight")).map(|w| g.values[w].shape.len());
        if weight_rank != Some(4) {
            return false;
        }
    }
    // a weighted op is annotated with its weight: one whose weight is float (a layer kept in
    // float, `keep_float`) is not, whatever its activations are
    let weighted =
        crate::ops::lookup(op_name(n), "").is_some_and(|id| crate::ops::def(id).traits.weighted);
    if weighted {
        let weight_dq = pos_in(n, "weight")
            .and_then(|k| super::edit::tensor_arg(n, k))
            .and_then(|w| producer(g, w))
            .is_some_and(is_dq);
        if !weight_dq {
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
