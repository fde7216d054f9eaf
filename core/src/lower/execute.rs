//! Pass stages made executable, and the pass that changes the numbers.
//!
//! Between the fold and the Cortex-M substitution a stage's ATen ops read and write integer
//! codes, their scales living in the annotations: run as they stand they would compute on
//! codes. [`executable`] puts the annotations back as dequantize/quantize around every annotated
//! ATen op (exactly what the fold removed, with what later passes changed: a fused activation's
//! narrowed range), so each stage computes what it means; `cortex_m::` calls run with the
//! device's arithmetic. [`attribute`] runs every stage and names the first whose outputs differ
//! from the stage before it.

use crate::analysis::diff::{diff, Source, Threshold};
use crate::dtype::ScalarType;
use crate::ir::{ArgData, Graph, Node, NodeKind, Storage, ValueId};
use crate::runtime::{Device, RuntimeError};
use crate::tensor::TensorData;

use super::edit::{add_constant, make_node, new_tensor, set_nodes, unique_name};
use super::qparams::QuantArgs;
use super::{LoweredStage, Module};

fn is_integer(g: &Graph, v: ValueId) -> bool {
    g.values
        .get(v)
        .and_then(|x| x.dtype)
        .is_some_and(|d| d.is_integer())
}

fn f32_tensor(values: &[f64]) -> TensorData {
    TensorData {
        dtype: ScalarType::Float,
        shape: vec![values.len()],
        bytes: values
            .iter()
            .flat_map(|&v| (v as f32).to_le_bytes())
            .collect(),
    }
}

fn i64_tensor(values: &[i64]) -> TensorData {
    TensorData {
        dtype: ScalarType::Long,
        shape: vec![values.len()],
        bytes: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    }
}

/// A new float tensor of `v`'s shape and layout, named uniquely after `name`: what a
/// dequantize writes or a float op writes before its quantize.
fn float_twin(m: &mut Module, v: ValueId, name: &str) -> ValueId {
    let (shape, dim_order) = {
        let x = &m.graph.values[v];
        (x.shape.clone(), x.dim_order.clone())
    };
    let name = unique_name(&m.graph, name);
    new_tensor(
        &mut m.graph,
        &name,
        ScalarType::Float,
        shape,
        dim_order,
        Storage::Unplanned,
    )
}

/// A (de)quantize call of `q`: `dequantize` reads `from` and writes `to`.
fn qdq_node(m: &mut Module, dequantize: bool, q: &QuantArgs, from: ValueId, to: ValueId) -> Node {
    let kind = if dequantize { "dequantize" } else { "quantize" };
    let (op, args) = match q.axis {
        Some(axis) => {
            let s = add_constant(m, &format!("{kind}_scales"), f32_tensor(&q.scales));
            let z = add_constant(
                m,
                &format!("{kind}_zero_points"),
                i64_tensor(&q.zero_points),
            );
            (
                format!("quantized_decomposed::{kind}_per_channel"),
                vec![
                    ArgData::Tensor(from),
                    ArgData::Tensor(s),
                    ArgData::Tensor(z),
                    ArgData::Int(axis),
                    ArgData::Int(q.qmin),
                    ArgData::Int(q.qmax),
                    ArgData::ScalarType(q.dtype),
                ],
            )
        }
        None => (
            format!("quantized_decomposed::{kind}_per_tensor"),
            vec![
                ArgData::Tensor(from),
                ArgData::Float(q.scale()),
                ArgData::Int(q.zp()),
                ArgData::Int(q.qmin),
                ArgData::Int(q.qmax),
                ArgData::ScalarType(q.dtype),
            ],
        ),
    };
    let name = unique_name(&m.graph, &format!("etscope_{kind}"));
    make_node(&name, &op, "default", args, vec![to])
}

/// `module` with its annotations as dequantize/quantize calls around each annotated ATen op
/// that reads or writes integer codes (see the module doc).
pub fn executable(module: &Module) -> Module {
    let mut m = module.clone();
    let old = std::mem::take(&mut m.graph.nodes);
    m.graph.nodes = old.clone();
    let mut nodes = Vec::with_capacity(old.len() * 2);
    for mut node in old {
        let q = match m.qparams.get(&node.name) {
            Some(q) if node.kind == NodeKind::Operator && !node.op.starts_with("cortex_m::") => {
                q.clone()
            }
            _ => {
                nodes.push(node);
                continue;
            }
        };
        // inputs: every integer tensor argument with parameters (each tensor of a list),
        // dequantized first
        for (k, params) in &q.inputs {
            let tensors = match node.args.get(*k).map(|a| a.data.clone()) {
                Some(ArgData::Tensor(v)) => vec![v],
                Some(ArgData::Tensors(vs)) => vs,
                _ => continue,
            };
            for v in tensors {
                if !is_integer(&m.graph, v) {
                    continue;
                }
                let f = float_twin(&mut m, v, &format!("{}_dq{k}", node.name));
                // no debug handles: the dequantized floats are not a stage's result
                nodes.push(qdq_node(&mut m, true, params, v, f));
                super::edit::replace_in_node(&mut node, v, f);
            }
        }
        // the output: written in float, then quantized into the value readers expect
        let out = node.outputs.first().copied();
        let params = q
            .outputs
            .get(&0)
            .or_else(|| q.outputs.values().next())
            .cloned();
        match (out, params) {
            (Some(o), Some(params)) if is_integer(&m.graph, o) => {
                let f = float_twin(&mut m, o, &format!("{}_float", node.name));
                node.outputs[0] = f;
                for a in &mut node.args {
                    if a.data == ArgData::Tensor(o) {
                        a.data = ArgData::Tensor(f);
                        a.value = Some(f);
                    }
                }
                let handles = node.debug_handles.clone();
                nodes.push(node);
                // the quantize writes the codes (an int32-retraced linear output included)
                m.graph.values[o].dtype = Some(params.dtype);
                let mut q = qdq_node(&mut m, false, &params, f, o);
                q.debug_handles = handles;
                nodes.push(q);
            }
            (Some(o), None) if is_integer(&m.graph, o) => {
                // no parameters of its own: it writes what it reads (a view, a clone)
                if node
                    .inputs
                    .first()
                    .is_some_and(|&v| !is_integer(&m.graph, v))
                {
                    m.graph.values[o].dtype = Some(ScalarType::Float);
                }
                nodes.push(node);
            }
            _ => nodes.push(node),
        }
    }
    set_nodes(&mut m.graph, nodes);
    // values whose producer now writes float (a view of a dequantized tensor) are float
    propagate_float(&mut m.graph);
    // a max pool the backend has not taken yet runs on the portable with-indices kernel
    super::to_cortex_m::restore_max_pool_with_indices(&mut m);
    m
}

/// Data-movement ops that write what they read take their input's dtype again.
fn propagate_float(g: &mut Graph) {
    for i in 0..g.nodes.len() {
        let n = &g.nodes[i];
        if n.kind != NodeKind::Operator
            || n.op.contains("quantize")
            || n.op.starts_with("cortex_m::")
        {
            continue;
        }
        let moves = n.def().is_some_and(|d| d.traits.quant_preserving);
        let Some(&x) = n.inputs.first() else { continue };
        if !moves || is_integer(g, x) {
            continue;
        }
        for o in n.outputs.clone() {
            if is_integer(g, o) {
                g.values[o].dtype = g.values[x].dtype;
            }
        }
    }
}

/// Runs stage `module` on `inputs` (its executable form), every node's outputs captured, as
/// a diff source named `label` of export `export` (the ETRecord it was lowered from: its stages
/// and its program share the edge graph's debug handles).
pub fn source(
    label: &str,
    export: &str,
    module: &Module,
    inputs: &[TensorData],
    device: Device,
) -> Result<Source, RuntimeError> {
    let exec = executable(module);
    let run = exec.runtime(device)?.run(inputs, true)?;
    Ok(Source::from_run(label, exec.graph, &run).with_export(export))
}

/// Differences above this SNR are float32 rounding (a scale applied in another order), not a
/// change of arithmetic: float32's relative precision is about 6e-8, 144 dB.
pub const FLOAT_ROUNDING_SNR_DB: f64 = 130.0;

/// What one pass did to the numbers.
#[derive(Debug, Clone)]
pub enum Numerics {
    /// The pass changed nothing.
    Unchanged,
    /// Every matched node's outputs are equal (bit for bit, or to float32 rounding).
    Equal,
    /// Some differ, within the diff's rule: the lowest SNR and its node.
    Within { snr_db: f64, node: String },
    /// A node diverges beyond the diff's rule.
    Diverges { snr_db: f64, node: String },
    /// The stage did not run or could not be compared.
    Failed(String),
}

/// What running every stage showed.
#[derive(Debug, Clone)]
pub struct Attribution {
    pub per_pass: Vec<(&'static str, Numerics)>,
    /// The first pass that changes any node's outputs, and how.
    pub first_change: Option<(&'static str, Numerics)>,
}

/// Runs the `edge` module and every pass stage on `inputs`, comparing each stage node by node
/// with the stage before it (matched through the edge graph's debug handles, the diff's rule).
pub fn attribute(
    edge: &Module,
    stages: &[LoweredStage],
    inputs: &[TensorData],
    device: Device,
) -> Result<Attribution, RuntimeError> {
    const EXPORT: &str = "etscope lowering";
    let mut previous = source("edge", EXPORT, edge, inputs, device)?;
    let mut per_pass = Vec::new();
    let mut first_change = None;
    for s in stages {
        if !s.changed {
            per_pass.push((s.pass, Numerics::Unchanged));
            continue;
        }
        let now = match source(s.pass, EXPORT, &s.module, inputs, device) {
            Ok(src) => src,
            Err(e) => {
                per_pass.push((s.pass, Numerics::Failed(e.to_string())));
                continue;
            }
        };
        let judged = match diff(&previous, &now, Threshold::default()) {
            Err(e) => Numerics::Failed(e.to_string()),
            Ok(report) => {
                let name = |r: &crate::analysis::diff::Row| {
                    r.b_nodes
                        .first()
                        .and_then(|&n| now.graph.nodes.get(n))
                        .map_or_else(String::new, |n| n.name.clone())
                };
                let worst = report
                    .rows
                    .iter()
                    .filter_map(|r| r.metrics.map(|m| (m, r)))
                    .filter(|(m, _)| m.max_abs > 0.0 && m.snr_db < FLOAT_ROUNDING_SNR_DB)
                    .min_by(|x, y| x.0.snr_db.total_cmp(&y.0.snr_db));
                match (report.first_divergence, worst) {
                    (Some(i), _) => Numerics::Diverges {
                        snr_db: report.rows[i].metrics.map_or(f64::NAN, |m| m.snr_db),
                        node: name(&report.rows[i]),
                    },
                    (None, Some((m, r))) => Numerics::Within {
                        snr_db: m.snr_db,
                        node: name(r),
                    },
                    (None, None) => Numerics::Equal,
                }
            }
        };
        if first_change.is_none()
            && matches!(judged, Numerics::Within { .. } | Numerics::Diverges { .. })
        {
            first_change = Some((s.pass, judged.clone()));
        }
        per_pass.push((s.pass, judged));
        previous = now;
    }
    Ok(Attribution {
        per_pass,
        first_change,
    })
}
