//! Lowers an ETRecord stage (a `torch.export` graph) into the IR: call_function nodes become
//! nodes, named tensors become values, parameters/buffers/constants are constant values.

use std::collections::HashMap;

use super::*;
use crate::formats::export_json::{ExportArg, ExportedGraph, InputKind};

/// Splits a `torch.export` target into (`namespace::op`, overload).
///
/// `torch.ops.aten.convolution.default` → (`aten::convolution`, `default`);
/// `executorch.exir.dialects.edge.ops.cortex_m.quantize_per_tensor.default` →
/// (`cortex_m::quantize_per_tensor`, `default`); anything else is kept whole.
pub fn split_target(target: &str) -> (String, String) {
    let parts: Vec<&str> = target.split('.').collect();
    if target.starts_with("torch.ops.") || target.contains(".ops.") {
        if let Some(ops_at) = parts.iter().rposition(|p| *p == "ops") {
            let rest = &parts[ops_at + 1..];
            if rest.len() >= 3 {
                return (format!("{}::{}", rest[0], rest[1]), rest[2..].join("."));
            }
            if rest.len() == 2 {
                return (format!("{}::{}", rest[0], rest[1]), String::new());
            }
        }
    }
    (target.to_string(), String::new())
}

/// Builds the IR graph of one stage.
pub fn graph_from_export(g: &ExportedGraph, stage: &str, method: &str) -> Graph {
    // sized up front: a stage graph lives as long as its document, and growing these by doubling
    // (then shrinking) held up to three times their size at once
    let mut ids: HashMap<String, ValueId> = HashMap::with_capacity(g.tensors.len());
    let mut values: Vec<ValueInfo> = Vec::with_capacity(g.tensors.len().saturating_add(16));
    let mut value_id = |name: &str, values: &mut Vec<ValueInfo>| -> ValueId {
        if let Some(&id) = ids.get(name) {
            return id;
        }
        let id = values.len();
        let meta = g.tensors.get(name);
        values.push(ValueInfo {
            id,
            name: name.to_string(),
            kind: "Tensor",
            dtype: meta.map(|m| m.dtype),
            shape: meta.map(|m| m.sizes.clone()).unwrap_or_default(),
            dim_order: meta.map(|m| m.dim_order.clone()).unwrap_or_default(),
            quant: None,
            storage: Storage::Unplanned,
            placement: None,
            alias_of: None,
            producer: None,
            consumers: Vec::new(),
            data: None,
            logical_order: None,
            constant_id: None,
            // sizes come from the ETRecord's JSON: an overflowing product has no byte count
            nbytes: meta.and_then(|m| {
                m.sizes
                    .iter()
                    .try_fold(m.dtype.element_size().unwrap_or(1) as u64, |acc, &s| {
                        u64::try_from(s).ok().and_then(|s| acc.checked_mul(s))
                    })
            }),
        });
        ids.insert(name.to_string(), id);
        id
    };
    let mut nodes = Vec::with_capacity(g.nodes.len().saturating_add(2));
    let mut user_inputs = Vec::new();
    for (name, kind) in &g.inputs {
        let id = value_id(name, &mut values);
        match kind {
            InputKind::UserInput => user_inputs.push(id),
            _ => values[id].storage = Storage::Constant,
        }
    }
    let blank = Node::blank;
    let mut input = blank(0, "input", NodeKind::Input);
    input.outputs = user_inputs.clone();
    for &v in &user_inputs {
        values[v].producer = Some(0);
    }
    nodes.push(input);
    for en in &g.nodes {
        let id = nodes.len();
        let (op, overload) = split_target(&en.target);
        let mut node = blank(id, &en.name, NodeKind::Operator);
        node.set_op(&op, &overload);
        if node.op.starts_with("executorch_call_delegate") || node.op.contains("call_delegate") {
            node.kind = NodeKind::Delegate;
        }
        node.debug_handles = en.debug_handles.clone();
        node.stack_trace = en.stack_trace.clone();
        node.module_stack = en.module_stack.clone();
        for (arg_name, arg) in &en.args {
            let tensors: Vec<ValueId> = arg
                .tensor_names()
                .into_iter()
                .map(|n| value_id(n, &mut values))
                .collect();
            for t in &tensors {
                if !node.inputs.contains(t) {
                    node.inputs.push(*t);
                }
            }
            node.args.push(Arg::new(
                Some(arg_name.clone()),
                tensors.first().copied(),
                arg_data(arg, &tensors),
            ));
        }
        for out in &en.outputs {
            let v = value_id(out, &mut values);
            values[v].producer = Some(id);
            node.outputs.push(v);
        }
        derive_quant(&node, &en.args, &mut values);
        nodes.push(node);
    }
    let outputs: Vec<ValueId> = g.outputs.iter().map(|n| value_id(n, &mut values)).collect();
    let out_id = nodes.len();
    let mut output = blank(out_id, "output", NodeKind::Output);
    output.inputs = outputs.clone();
    nodes.push(output);
    let mut graph = Graph {
        stage: stage.to_string(),
        method: method.to_string(),
        nodes,
        values,
        edges: Vec::new(),
        inputs: user_inputs,
        outputs,
        arenas: Vec::new(),
        instruction_count: 0,
        instruction_index: Default::default(),
    };
    graph.link();
    // a transpose or pad between a quantize and its consumer keeps the quantize's parameters
    super::propagate_quant_through_moves(&mut graph.values, &graph.nodes);
    layout::derive_logical_orders(&mut graph);
    graph
}

/// An export argument as typed data; `tensors` are the value ids of its tensor names.
fn arg_data(a: &ExportArg, tensors: &[ValueId]) -> ArgData {
    match a {
        ExportArg::None => ArgData::None,
        ExportArg::Tensor(_) => tensors
            .first()
            .map_or(ArgData::None, |&t| ArgData::Tensor(t)),
        ExportArg::Tensors(_) => ArgData::Tensors(tensors.to_vec()),
        ExportArg::OptionalTensors(names) => {
            let mut ids = tensors.iter();
            ArgData::OptionalTensors(
                names
                    .iter()
                    .map(|n| n.as_ref().and_then(|_| ids.next().copied()))
                    .collect(),
            )
        }
        ExportArg::Int(i) => ArgData::Int(*i),
        ExportArg::Ints(v) => ArgData::Ints(v.iter().map(|&i| Some(i)).collect()),
        ExportArg::Float(f) => ArgData::Float(*f),
        ExportArg::Floats(v) => ArgData::Floats(v.clone()),
        ExportArg::Bool(b) => ArgData::Bool(*b),
        ExportArg::Bools(v) => ArgData::Bools(v.clone()),
        ExportArg::String(s) => ArgData::Str(s.clone()),
        ExportArg::ScalarType(t) => ArgData::ScalarType(*t),
        ExportArg::Other(s) => ArgData::Other(s.clone()),
    }
}

fn derive_quant(node: &Node, args: &[(String, ExportArg)], values: &mut [ValueInfo]) {
    let is_q = crate::ops::traits_of(&node.op).quantizes;
    let is_dq = crate::ops::traits_of(&node.op).dequantizes;
    if !(is_q || is_dq) || args.len() < 3 {
        return;
    }
    let num = |a: &ExportArg| match a {
        ExportArg::Float(f) => Some(*f),
        ExportArg::Int(i) => Some(*i as f64),
        _ => None,
    };
    let (Some(scale), Some(zp)) = (num(&args[1].1), num(&args[2].1)) else {
        return;
    };
    let q = QuantParams {
        scale,
        zero_point: zp as i64,
    };
    let target = if is_q {
        node.outputs.first()
    } else {
        node.inputs.first()
    };
    if let Some(&t) = target {
        values[t].quant = Some(q);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_split_into_namespace_op_and_overload() {
        assert_eq!(
            split_target("torch.ops.aten.convolution.default"),
            ("aten::convolution".into(), "default".into())
        );
        assert_eq!(
            split_target("executorch.exir.dialects.edge.ops.cortex_m.quantize_per_tensor.default"),
            ("cortex_m::quantize_per_tensor".into(), "default".into())
        );
        assert_eq!(
            split_target("memory.alloc"),
            ("memory.alloc".into(), String::new())
        );
    }
}
