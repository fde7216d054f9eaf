//! Lowers one execution plan of a `.pte` into the IR: instructions become nodes, values keep their
//! indices as ids, out-arguments define tensors, and views alias their source's storage.

use std::collections::HashMap;

use super::*;
use crate::formats::pte::{EValue, ExecutionPlan, Instruction, Program};

/// Builds the graph of plan `plan_index` of `program`.
pub fn graph_from_plan(program: &Program, plan_index: usize) -> Option<Graph> {
    let plan = program.plans.get(plan_index)?;
    Some(build(plan))
}

fn build(plan: &ExecutionPlan) -> Graph {
    let mut values: Vec<ValueInfo> = plan
        .values
        .iter()
        .enumerate()
        .map(|(i, v)| value_info(&plan.values, i, v))
        .collect();
    let mut nodes = Vec::new();
    let input_node = 0;
    nodes.push(io_node(
        input_node,
        "input",
        NodeKind::Input,
        Vec::new(),
        plan.inputs.clone(),
    ));
    let mut defined = vec![false; values.len()];
    for &i in &plan.inputs {
        defined[i] = true;
        values[i].producer = Some(input_node);
    }
    for (i, v) in plan.values.iter().enumerate() {
        if v.as_tensor().is_some_and(|t| t.is_constant()) {
            defined[i] = true;
        }
    }
    let chain = plan.chains.first();
    let instructions = plan.main_instructions();
    for (iid, ins) in instructions.iter().enumerate() {
        let id = nodes.len();
        let stack = chain
            .and_then(|c| c.stacktrace.get(iid))
            .filter(|f| !f.is_empty())
            .map(|frames| {
                frames
                    .iter()
                    .map(|f| {
                        format!(
                            "File \"{}\", line {}, in {}\n    {}",
                            f.filename, f.lineno, f.name, f.context
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            });
        let mut node = instruction_node(plan, id, iid, ins, &defined);
        node.stack_trace = stack.map(std::sync::Arc::from);
        for &o in &node.outputs {
            defined[o] = true;
            values[o].producer = Some(id);
        }
        nodes.push(node);
    }
    resolve_views(plan, &mut values, &nodes);
    alias_et_views(&mut values, &nodes);
    derive_quant(&mut values, &nodes);
    super::propagate_quant_through_moves(&mut values, &nodes);
    let out_id = nodes.len();
    nodes.push(io_node(
        out_id,
        "output",
        NodeKind::Output,
        plan.outputs.clone(),
        Vec::new(),
    ));
    let mut g = Graph {
        stage: "pte".into(),
        method: plan.name.clone(),
        nodes,
        values,
        edges: Vec::new(),
        inputs: plan.inputs.clone(),
        outputs: plan.outputs.clone(),
        arenas: plan
            .non_const_buffer_sizes
            .iter()
            .skip(1)
            .map(|&s| s.max(0) as u64)
            .collect(),
        instruction_count: instructions.len(),
        instruction_index: Default::default(),
    };
    g.link();
    layout::derive_logical_orders(&mut g);
    g
}

fn io_node(
    id: NodeId,
    name: &str,
    kind: NodeKind,
    inputs: Vec<ValueId>,
    outputs: Vec<ValueId>,
) -> Node {
    Node {
        inputs,
        outputs,
        ..Node::blank(id, name, kind)
    }
}

fn value_info(values: &[EValue], i: usize, v: &EValue) -> ValueInfo {
    let mut info = ValueInfo::literal(i, data_of(values, i));
    info.kind = v.kind();
    if let EValue::Tensor(t) = v {
        info.data = None;
        info.dtype = Some(t.scalar_type);
        info.shape = t.shape();
        info.dim_order = t.dim_order.clone();
        info.nbytes = Some(t.nbytes);
        info.constant_id = t.is_constant().then(|| t.constant_id());
        info.storage = if t.is_constant() {
            Storage::Constant
        } else if t.allocation.is_some() {
            Storage::Planned
        } else {
            Storage::Unplanned
        };
        info.placement = t.allocation.map(|a| Placement {
            memory_id: a.memory_id,
            offset: a.offset,
            size: t.nbytes,
        });
    }
    info
}

/// Tensor value ids an argument value refers to (itself, or a list's items).
fn tensors_in(plan: &ExecutionPlan, v: usize) -> Vec<usize> {
    match &plan.values[v] {
        EValue::Tensor(_) => vec![v],
        EValue::TensorList(items) => items.iter().map(|&i| i as usize).collect(),
        EValue::OptionalTensorList(items) => items
            .iter()
            .filter(|&&i| i >= 0)
            .map(|&i| i as usize)
            .filter(|&i| plan.values[i].as_tensor().is_some())
            .collect(),
        _ => Vec::new(),
    }
}

/// The typed contents of plan value `v` (lists resolved to their items).
pub fn data_of(values: &[EValue], v: usize) -> ArgData {
    let index = |i: i64| usize::try_from(i).ok();
    match values.get(v) {
        None | Some(EValue::Unset | EValue::Null) => ArgData::None,
        Some(EValue::Int(x)) => ArgData::Int(*x),
        Some(EValue::Bool(b)) => ArgData::Bool(*b),
        Some(EValue::Double(d)) => ArgData::Float(*d),
        Some(EValue::String(s)) => ArgData::Str(s.clone()),
        Some(EValue::Tensor(_)) => ArgData::Tensor(v),
        Some(EValue::IntList(items)) => ArgData::Ints(
            items
                .iter()
                .map(|&i| match index(i).and_then(|i| values.get(i)) {
                    Some(EValue::Int(x)) => Some(*x),
                    _ => None,
                })
                .collect(),
        ),
        Some(EValue::DoubleList(d)) => ArgData::Floats(d.clone()),
        Some(EValue::BoolList(b)) => ArgData::Bools(b.clone()),
        Some(EValue::TensorList(items)) => {
            ArgData::Tensors(items.iter().filter_map(|&i| index(i64::from(i))).collect())
        }
        Some(EValue::OptionalTensorList(items)) => {
            ArgData::OptionalTensors(items.iter().map(|&i| index(i64::from(i))).collect())
        }
    }
}

fn args_of(plan: &ExecutionPlan, args: &[usize]) -> Vec<Arg> {
    args.iter()
        .map(|&a| Arg::new(None, Some(a), data_of(&plan.values, a)))
        .collect()
}

fn instruction_node(
    plan: &ExecutionPlan,
    id: NodeId,
    iid: usize,
    ins: &Instruction,
    defined: &[bool],
) -> Node {
    let mut node = io_node(id, "", NodeKind::Operator, Vec::new(), Vec::new());
    node.instruction_id = Some(iid);
    match ins {
        Instruction::KernelCall { op_index, args } => {
            let op = &plan.operators[*op_index];
            node.set_op(&op.name, &op.overload);
            node.name = node.short_op().to_string();
            // Out-variant convention: inputs, out tensor(s), then the return value(s); the last
            // argument is the returned tensor or a TensorList of the outs.
            let outputs = args
                .last()
                .map(|&l| tensors_in(plan, l))
                .unwrap_or_default();
            let inputs = args
                .iter()
                .flat_map(|&a| tensors_in(plan, a))
                .filter(|t| !outputs.contains(t));
            node.inputs = dedup(inputs);
            node.outputs = outputs;
            node.args = args_of(plan, args);
        }
        Instruction::DelegateCall {
            delegate_index,
            args,
        } => {
            let d = &plan.delegates[*delegate_index];
            node.kind = NodeKind::Delegate;
            node.op = format!("delegate::{}", d.id);
            node.name = d.id.clone();
            node.delegate = Some(*delegate_index);
            // Arguments already available are inputs; the rest are written by the delegate.
            let all = dedup(args.iter().flat_map(|&a| tensors_in(plan, a)));
            let (ins, outs): (Vec<usize>, Vec<usize>) = all.into_iter().partition(|&t| defined[t]);
            node.inputs = ins;
            node.outputs = outs;
            node.args = args_of(plan, args);
        }
        Instruction::MoveCall { move_from, move_to } => {
            node.kind = NodeKind::Move;
            node.op = "move".into();
            node.name = "move".into();
            node.inputs = tensors_in(plan, *move_from);
            node.outputs = tensors_in(plan, *move_to);
            node.args = args_of(plan, &[*move_from, *move_to]);
        }
        Instruction::JumpFalseCall {
            cond_value_index,
            destination_instruction,
        } => {
            node.kind = NodeKind::JumpFalse;
            node.op = "jump_false".into();
            node.name = format!("jump_false to {destination_instruction}");
            node.jump_to = Some(*destination_instruction);
            node.inputs = tensors_in(plan, *cond_value_index);
            node.args = args_of(plan, &[*cond_value_index]);
        }
        Instruction::FreeCall { value_index } => {
            node.kind = NodeKind::Free;
            node.op = "free".into();
            node.name = "free".into();
            node.inputs = tensors_in(plan, *value_index);
            node.args = args_of(plan, &[*value_index]);
        }
        Instruction::Empty => {
            node.op = "none".into();
            node.name = "none".into();
        }
    }
    node
}

fn dedup(it: impl IntoIterator<Item = usize>) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for x in it {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

/// Arena, offset, dtype and byte size: what a view shares with its source.
type StorageKey = (u32, u64, Option<ScalarType>, Option<u64>);

/// Views emit no instruction: a planned tensor read before anyone writes it, with the same arena,
/// offset, dtype and byte size as a tensor produced earlier, aliases the latest such tensor.
fn resolve_views(plan: &ExecutionPlan, values: &mut [ValueInfo], nodes: &[Node]) {
    // first node reading each value (usize::MAX: read by nobody but maybe the output)
    let mut first_use = vec![usize::MAX; values.len()];
    let mut used = vec![false; values.len()];
    for n in nodes {
        for &v in &n.inputs {
            if !used[v] {
                used[v] = true;
                first_use[v] = n.id;
            }
        }
    }
    for &o in &plan.outputs {
        used[o] = true;
    }
    // (memory_id, offset, dtype, nbytes) → producers in node order
    let mut produced: HashMap<StorageKey, Vec<(NodeId, ValueId)>> = HashMap::new();
    for n in nodes {
        for &o in &n.outputs {
            if let Some(p) = values[o].placement {
                produced
                    .entry((p.memory_id, p.offset, values[o].dtype, values[o].nbytes))
                    .or_default()
                    .push((n.id, o));
            }
        }
    }
    for &i in &plan.inputs {
        if let Some(p) = values[i].placement {
            produced
                .entry((p.memory_id, p.offset, values[i].dtype, values[i].nbytes))
                .or_default()
                .insert(0, (0, i));
        }
    }
    for v in 0..values.len() {
        if !used[v] {
            continue;
        }
        let use_at = first_use[v];
        let val = &values[v];
        if val.producer.is_some() || val.storage != Storage::Planned {
            continue;
        }
        let Some(p) = val.placement else { continue };
        let key = (p.memory_id, p.offset, val.dtype, val.nbytes);
        // producers are in node order: the latest one before the first use is the source
        let source = produced.get(&key).and_then(|list| {
            let before = list.partition_point(|&(n, _)| n < use_at);
            before.checked_sub(1).map(|i| list[i].1)
        });
        if let Some(src) = source {
            values[v].alias_of = Some(src);
        }
    }
}

/// `executorch_prim::et_view` (emitted for views ExecuTorch cannot elide: dynamic shapes,
/// unplanned sources) makes its out tensor point at its input's storage: an alias, not a copy.
fn alias_et_views(values: &mut [ValueInfo], nodes: &[Node]) {
    for n in nodes {
        if n.def().map(|d| d.name) != Some("executorch_prim::et_view") {
            continue;
        }
        if let (Some(&src), Some(&out)) = (n.inputs.first(), n.outputs.first()) {
            if src != out && src < values.len() && out < values.len() {
                values[out].alias_of = Some(src);
            }
        }
    }
}

/// Quantization parameters known from explicit quantize/dequantize operators: a quantize writes
/// its output with `(scale, zero_point)` = args 1 and 2; a dequantize reads its input with them.
fn derive_quant(values: &mut [ValueInfo], nodes: &[Node]) {
    let scalar = |a: &Arg| match a.data {
        ArgData::Float(d) => Some(d),
        ArgData::Int(i) => Some(i as f64),
        _ => None,
    };
    for n in nodes {
        let is_q = crate::ops::traits_of(&n.op).quantizes;
        let is_dq = crate::ops::traits_of(&n.op).dequantizes;
        if !(is_q || is_dq) || n.args.len() < 3 {
            continue;
        }
        let (Some(scale), Some(zp)) = (scalar(&n.args[1]), scalar(&n.args[2])) else {
            continue;
        };
        let q = QuantParams {
            scale,
            zero_point: zp as i64,
        };
        let targets: Vec<ValueId> = if is_q {
            n.outputs.clone()
        } else {
            n.inputs.first().copied().into_iter().collect()
        };
        for t in targets {
            values[t].quant = Some(q);
        }
    }
}
