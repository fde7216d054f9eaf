//! FoldAndAnnotateQParamsPass: around every op the quantizer annotated, the dequantizes that
//! feed it and the quantizes that consume it are removed and their parameters kept on the node
//! (inputs by argument index, outputs by user index, as ExecuTorch's Arm pass records them); the
//! op then reads and writes the integer tensors. A dequantize shared with another op stays until
//! its last reader folds it. An `add`/`sub` with only one quantized operand keeps its Q/DQ (and
//! is annotated). Q/DQ ops are never folded into each other.
//!
//! The serialized ETRecord does not keep the quantizer's annotation (`_arm_annotation_info` in
//! `node.meta["custom"]`), so an op counts as annotated when `CortexMQuantizer` annotates its
//! kind (its pattern table and the Arm shared-qparams list, in their edge names: see
//! `super::annotation`) and a dequantize feeds it or a quantize consumes it. An op the quantizer leaves in
//! float (an upsample) keeps its dequantize and quantize even between quantized neighbours.

use crate::ir::{ArgData, Node};

use super::annotation::{annotated, is_dq, is_q, producer};
use super::edit::{float_arg, int_arg, op_name, replace_uses, set_nodes};
use super::qparams::{NodeQParams, QuantArgs};
use super::retrace::retrace_dtypes;
use super::{LowerError, Module, Options, Pass};

pub struct FoldAndAnnotateQParams;

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
    let args = if op_name(n).ends_with("_per_channel") {
        // (input, scales, zero_points, axis, quant_min, quant_max, dtype)
        let scales = super::edit::tensor_arg(n, super::edit::pos(n, "scales"))
            .and_then(|v| m.constant(v))?;
        let zps = super::edit::tensor_arg(n, super::edit::pos(n, "zero_points"))
            .and_then(|v| m.constant(v))?;
        let zero_points = zps.to_f64().ok()?.into_iter().map(|z| z as i64).collect();
        QuantArgs {
            scales: scales.to_f64().ok()?,
            zero_points,
            axis: Some(int_arg(n, super::edit::pos(n, "axis"))?),
            qmin: int_arg(n, super::edit::pos(n, "quant_min"))?,
            qmax: int_arg(n, super::edit::pos(n, "quant_max"))?,
            dtype: dtype(super::edit::pos(n, "dtype"))?,
        }
    } else {
        QuantArgs {
            scales: vec![float_arg(n, super::edit::pos(n, "scale"))?],
            zero_points: vec![int_arg(n, super::edit::pos(n, "zero_point"))?],
            axis: None,
            qmin: int_arg(n, super::edit::pos(n, "quant_min"))?,
            qmax: int_arg(n, super::edit::pos(n, "quant_max"))?,
            dtype: dtype(super::edit::pos(n, "dtype"))?,
        }
    };
    Some(args)
}

/// What is wrong with parameters no quantizer writes (ExecuTorch's `quantize_per_tensor`
/// checks `quant_min <= quant_max`; a scale must be finite and positive), naming `node`.
fn invalid(node: &str, q: &QuantArgs) -> Option<String> {
    if q.qmin > q.qmax {
        return Some(format!(
            "{node}: quant_min {} > quant_max {}",
            q.qmin, q.qmax
        ));
    }
    if q.scales.is_empty() || q.scales.iter().any(|s| !s.is_finite() || *s <= 0.0) {
        return Some(format!(
            "{node}: scales {:?} are not finite and positive",
            q.scales
        ));
    }
    None
}

impl Pass<Options> for FoldAndAnnotateQParams {
    fn name(&self) -> &'static str {
        "FoldAndAnnotateQParamsPass"
    }

    fn run(&self, mut m: Module, options: &Options) -> Result<(Module, bool), LowerError> {
        // every quantize and dequantize of the graph, whatever it feeds
        for n in &m.graph.nodes {
            let q_or_dq = super::annotation::is_q(n) || super::annotation::is_dq(n);
            if let Some(why) = q_or_dq
                .then(|| quant_args_of(&m, n))
                .flatten()
                .and_then(|q| invalid(&n.name, &q))
            {
                return Err(super::edit::fail(self.name(), why));
            }
        }
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
                        if let Some(why) = invalid(&p.name, &args) {
                            return Err(super::edit::fail(self.name(), why));
                        }
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
                if let Some(why) = invalid(&m.graph.nodes[u].name, &q) {
                    return Err(super::edit::fail(self.name(), why));
                }
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
