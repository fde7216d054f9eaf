//! Static notes on what a program computes differently from the model, before anything runs
//! (CLI `run`, the inspector):
//! - `device`: `cortex_m::` calls whose device kernel misreads the program's tensor layout, hit
//!   a known CMSIS-NN defect, or were lowered for another core (the host runtime reproduces
//!   each, so a diff points at the op);
//! - `lowering`: what the lowering left that no runtime computes as meant — a float-only
//!   portable kernel fed int8 codes, an activation left in float between quantized ops.

use serde::Serialize;

use crate::formats::pte::Program;
use crate::ir::call::CallView;
use crate::ir::{ArgData, Graph, Node, NodeKind, ValueInfo};
use crate::kernels::cmsis::core_buffers::fails_on;
use crate::kernels::cmsis::notes::{ArgFacts, Call, Tensor};
use crate::kernels::Device;
use crate::ops::traits_of as traits;

/// One instruction the device computes differently from the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceNote {
    pub instruction: usize,
    pub op: String,
    /// `device` (the board's kernel computes something else) or `lowering` (the program
    /// itself does not compute what the model means).
    pub kind: &'static str,
    pub why: String,
}

/// The kernel calls of a program's graph, in instruction order.
fn calls(graph: &Graph) -> impl Iterator<Item = &Node> {
    graph.nodes.iter().filter(|n| n.kind == NodeKind::Operator)
}

/// The value argument `k` of `node` is (`.pte` graphs: every argument is a plan value).
fn value_at(node: &Node, k: usize) -> Option<usize> {
    node.args.get(k)?.value
}

/// The value `node` writes: its out argument (the one before the returned one).
fn out_value(node: &Node) -> Option<usize> {
    node.args
        .len()
        .checked_sub(2)
        .and_then(|k| value_at(node, k))
}

fn producer_op(graph: &Graph, value: usize) -> Option<&str> {
    calls(graph)
        .find(|n| n.args.len() >= 2 && out_value(n) == Some(value))
        .map(|n| n.op.as_str())
}

fn consumer_ops(graph: &Graph, value: usize) -> Vec<&str> {
    calls(graph)
        .filter(|n| value_at(n, 0) == Some(value))
        .map(|n| n.op.as_str())
        .collect()
}

fn number(node: &Node, k: usize) -> Option<f64> {
    match &node.args.get(k)?.data {
        ArgData::Float(d) => Some(*d),
        ArgData::Int(i) => Some(*i as f64),
        _ => None,
    }
}

/// A dequantize whose scale or zero point is not the one its input was quantized with.
fn qparams_note(graph: &Graph, node: &Node) -> Option<String> {
    let input = value_at(node, 0)?;
    let q = calls(graph)
        .find(|n| n.args.len() >= 2 && out_value(n) == Some(input) && traits(&n.op).quantizes)?;
    let q_op = q.op.as_str();
    let (s_in, z_in) = (number(q, 1)?, number(q, 2)?);
    let (s_out, z_out) = (number(node, 1)?, number(node, 2)?);
    let same_scale = ((s_in - s_out) / s_in.abs().max(f64::MIN_POSITIVE)).abs() < 1e-6;
    (!same_scale || z_in != z_out).then(|| {
        format!(
            "dequantizes with scale {s_out}, zero point {z_out}, but {q_op} wrote its input with scale {s_in}, zero point {z_in}: every value comes out rescaled"
        )
    })
}

/// The `lowering` note for a portable call, if any.
fn lowering_note(graph: &Graph, node: &Node, op: &str) -> Option<String> {
    let dtype = CallView::new(graph, node).tensor_at(0)?.dtype?;
    let int = matches!(
        dtype,
        crate::ScalarType::Char | crate::ScalarType::Byte | crate::ScalarType::QInt8
    );
    if int && traits(op).float_only {
        return Some(format!(
            "a float-only kernel ({op}) applied to {} codes: it computes on the integers, not on the values they stand for",
            dtype.short_name()
        ));
    }
    // a float weighted layer left on quantized codes (ExecuTorch's default flow can leave a
    // convolution so): no requantization, its integers are not the layer's output
    if int && traits(op).weighted && !op.starts_with("cortex_m::") {
        return Some(format!(
            "a float weighted layer ({op}) applied to {} codes: it multiplies and adds the integers with no requantization, not the values they stand for",
            dtype.short_name()
        ));
    }
    if !int && traits(op).fusable_activation {
        let from_dq = producer_op(graph, value_at(node, 0)?).is_some_and(|p| traits(p).dequantizes);
        let to_q = consumer_ops(graph, out_value(node)?)
            .iter()
            .any(|c| traits(c).quantizes);
        if from_dq && to_q {
            return Some(format!(
                "{op} left in float between a dequantize and a quantize: the quantizer did not fuse it into the op before (a float round trip on the device)"
            ));
        }
    }
    None
}

/// A tensor as the device rules see it.
fn facts(t: &ValueInfo) -> Option<Tensor> {
    Some(Tensor {
        dtype: t.dtype?,
        sizes: t.shape.clone(),
        dim_order: t.dim_order.clone(),
    })
}

/// The note for instruction `id` of a program's graph (`ir::from_pte`) on `device`, if the
/// board computes something else.
pub fn note_for(graph: &Graph, id: usize, device: Device) -> Option<DeviceNote> {
    let node = graph.node_for_instruction(id)?;
    if node.kind != NodeKind::Operator {
        return None;
    }
    let op = node.op.clone();
    let view = CallView::new(graph, node);
    let note = |why: String| {
        Some(DeviceNote {
            instruction: id,
            op: op.clone(),
            kind: "device",
            why,
        })
    };
    if traits(&op).dequantizes {
        if let Some(why) = qparams_note(graph, node) {
            return Some(DeviceNote {
                instruction: id,
                op: op.clone(),
                kind: "lowering",
                why,
            });
        }
    }
    if op.starts_with("aten::") {
        return lowering_note(graph, node, &op).map(|why| DeviceNote {
            instruction: id,
            op: op.clone(),
            kind: "lowering",
            why,
        });
    }
    let core_call = view.core_call();
    if let Some(why) = core_call.and_then(|c| fails_on(device.target, c)) {
        return note(format!("fails on this core: {why}"));
    }
    let rule = crate::ops::lookup(&op, "").and_then(|id| crate::ops::def(id).device_note)?;
    let args: Vec<ArgFacts> = (0..node.args.len())
        .map(
            |k| match (view.tensor_at(k).and_then(facts), view.arg_at(k)) {
                (Some(t), _) => ArgFacts::Tensor(t),
                (None, Some(ArgData::Ints(_))) => ArgFacts::Ints(view.ints_at(k)),
                _ => ArgFacts::Other,
            },
        )
        .collect();
    let out = node
        .args
        .len()
        .checked_sub(2)
        .and_then(|k| view.tensor_at(k))
        .and_then(facts);
    let position = |name: &str| view.position(name);
    rule(&Call {
        op: &op,
        args: &args,
        position: &position,
        out: out.as_ref(),
        core_call,
        device,
    })
    .and_then(note)
}

/// Every note of plan `plan_index` of `program` on `device`, in instruction order.
pub fn notes(program: &Program, plan_index: usize, device: Device) -> Vec<DeviceNote> {
    let Some(graph) = crate::ir::from_pte::graph_from_plan(program, plan_index) else {
        return Vec::new();
    };
    (0..graph.instruction_count)
        .filter_map(|i| note_for(&graph, i, device))
        .collect()
}
