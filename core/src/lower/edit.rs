//! Small graph edits the lowering passes share: reading a node's arguments by the names its
//! schema gives them ([`pos`]), making values, constants and nodes, rewiring uses, and
//! renumbering after nodes moved.

use crate::dtype::ScalarType;
use crate::ir::{Arg, ArgData, Graph, Node, NodeId, NodeKind, Storage, ValueId, ValueInfo};
use crate::passes::PassError;
use crate::tensor::TensorData;

use super::Module;

/// A pass's refusal.
pub fn fail(pass: &'static str, detail: impl Into<String>) -> PassError {
    PassError::Failed {
        pass,
        detail: detail.into(),
    }
}

/// The position of the argument `node`'s operator schema calls `name` (past every argument when
/// the operator has no such argument, so that reading it gives `None`; a name no schema of the
/// operator has is a bug of the pass, caught in debug builds).
pub fn pos(node: &Node, name: &str) -> usize {
    let found = node.def().and_then(|d| d.arg(name));
    debug_assert!(
        found.is_some() || node.def().and_then(|d| d.parsed_schema()).is_none(),
        "{}: no argument {name:?} in its schema",
        node.qualified_op()
    );
    found.unwrap_or(usize::MAX)
}

/// The position of the argument `name` where `node`'s schema has one: for a pass that reads
/// several operators (or overloads) of which only some take it (`keepdim` of `sum` and not of
/// `sum.default`, `alpha` of `add` and not of `mul`).
pub fn pos_in(node: &Node, name: &str) -> Option<usize> {
    node.def().and_then(|d| d.arg(name))
}

/// Argument `k` of `node` (by position), `None` past the end.
pub fn arg(node: &Node, k: usize) -> Option<&ArgData> {
    node.args.get(k).map(|a| &a.data)
}

/// Argument `k` as a tensor value.
pub fn tensor_arg(node: &Node, k: usize) -> Option<ValueId> {
    match arg(node, k)? {
        ArgData::Tensor(v) => Some(*v),
        _ => None,
    }
}

/// Argument `k` as an int (a bool counts as 0/1).
pub fn int_arg(node: &Node, k: usize) -> Option<i64> {
    match arg(node, k)? {
        ArgData::Int(i) => Some(*i),
        ArgData::Bool(b) => Some(i64::from(*b)),
        _ => None,
    }
}

/// Argument `k` as a float (an int counts).
pub fn float_arg(node: &Node, k: usize) -> Option<f64> {
    match arg(node, k)? {
        ArgData::Float(f) => Some(*f),
        ArgData::Int(i) => Some(*i as f64),
        _ => None,
    }
}

/// Argument `k` as an int list of known ints.
pub fn ints_arg(node: &Node, k: usize) -> Option<Vec<i64>> {
    match arg(node, k)? {
        ArgData::Ints(v) => v.iter().copied().collect(),
        _ => None,
    }
}

/// Argument `k` as a bool.
pub fn bool_arg(node: &Node, k: usize) -> Option<bool> {
    match arg(node, k)? {
        ArgData::Bool(b) => Some(*b),
        _ => None,
    }
}

/// The registry name of the node's operator (`aten::convolution`), or its raw op.
pub fn op_name(node: &Node) -> &str {
    node.def().map_or(node.op.as_str(), |d| d.name)
}

/// Whether `node` is an operator call of `op` (registry name, any overload).
pub fn is_op(node: &Node, op: &str) -> bool {
    node.kind == NodeKind::Operator && op_name(node) == op
}

/// A name no node or value of `graph` has yet: `base`, else `base_1`, `base_2`, ...
pub fn unique_name(graph: &Graph, base: &str) -> String {
    let taken = |n: &str| {
        graph.nodes.iter().any(|x| x.name == n) || graph.values.iter().any(|v| v.name == n)
    };
    if !taken(base) {
        return base.to_string();
    }
    (1..)
        .map(|k| format!("{base}_{k}"))
        .find(|n| !taken(n))
        .unwrap_or_else(|| base.to_string())
}

/// A new tensor value.
pub fn new_tensor(
    graph: &mut Graph,
    name: &str,
    dtype: ScalarType,
    shape: Vec<i64>,
    dim_order: Vec<u8>,
    storage: Storage,
) -> ValueId {
    let id = graph.values.len();
    let nbytes = shape
        .iter()
        .try_fold(dtype.element_size().unwrap_or(1) as u64, |acc, &s| {
            u64::try_from(s).ok().and_then(|s| acc.checked_mul(s))
        });
    graph.values.push(ValueInfo {
        id,
        name: name.to_string(),
        kind: "Tensor",
        dtype: Some(dtype),
        logical_order: Some((0..shape.len()).collect()),
        constant_id: None,
        shape,
        dim_order,
        quant: None,
        storage,
        placement: None,
        alias_of: None,
        producer: None,
        consumers: Vec::new(),
        nbytes,
        data: None,
    });
    id
}

/// A new constant tensor holding `data` (contiguous), named uniquely after `name`.
pub fn add_constant(module: &mut Module, name: &str, data: TensorData) -> ValueId {
    let name = unique_name(&module.graph, name);
    let shape = data.shape.iter().map(|&s| s as i64).collect::<Vec<_>>();
    let dim_order = Vec::new();
    let id = new_tensor(
        &mut module.graph,
        &name,
        data.dtype,
        shape,
        dim_order,
        Storage::Constant,
    );
    module.constants.insert(id, data);
    id
}

/// A new operator node (not yet placed in the graph's node list): `args` named from the
/// operator's schema, inputs from its tensor arguments, writing `outputs`.
pub fn make_node(
    name: &str,
    op: &str,
    overload: &str,
    args: Vec<ArgData>,
    outputs: Vec<ValueId>,
) -> Node {
    let mut node = Node::blank(0, name, NodeKind::Operator);
    node.set_op(op, overload);
    let names: Vec<String> = node
        .def()
        .and_then(|d| d.parsed_schema())
        .map(|s| s.args.iter().map(|a| a.name.clone()).collect())
        .unwrap_or_default();
    for (k, data) in args.into_iter().enumerate() {
        for t in data.tensors() {
            if !node.inputs.contains(&t) {
                node.inputs.push(t);
            }
        }
        let value = data.tensors().first().copied();
        node.args.push(Arg::new(names.get(k).cloned(), value, data));
    }
    node.outputs = outputs;
    node
}

/// Makes every read of value `from` (node inputs, tensor arguments, graph outputs) read `to`.
pub fn replace_uses(graph: &mut Graph, from: ValueId, to: ValueId) {
    for n in &mut graph.nodes {
        replace_in_node(n, from, to);
    }
    for o in &mut graph.outputs {
        if *o == from {
            *o = to;
        }
    }
}

/// Makes `node`'s reads of `from` read `to`.
pub fn replace_in_node(node: &mut Node, from: ValueId, to: ValueId) {
    let mut touched = false;
    for v in &mut node.inputs {
        if *v == from {
            *v = to;
            touched = true;
        }
    }
    if touched {
        let mut seen = Vec::new();
        node.inputs.retain(|v| {
            let new = !seen.contains(v);
            seen.push(*v);
            new
        });
    }
    for a in &mut node.args {
        let changed = match &mut a.data {
            ArgData::Tensor(v) if *v == from => {
                *v = to;
                true
            }
            ArgData::Tensors(vs) => swap_all(vs.iter_mut(), from, to),
            ArgData::OptionalTensors(vs) => swap_all(vs.iter_mut().flatten(), from, to),
            _ => false,
        };
        if changed {
            a.value = a.data.tensors().first().copied();
        }
    }
}

fn swap_all<'a>(vs: impl Iterator<Item = &'a mut ValueId>, from: ValueId, to: ValueId) -> bool {
    let mut any = false;
    for v in vs {
        if *v == from {
            *v = to;
            any = true;
        }
    }
    any
}

/// Puts `nodes` in place as the graph's node list: ids renumbered, producers, consumers and
/// edges derived again.
pub fn set_nodes(graph: &mut Graph, nodes: Vec<Node>) {
    graph.nodes = nodes;
    for (i, n) in graph.nodes.iter_mut().enumerate() {
        n.id = i;
    }
    graph.instruction_index = Default::default();
    graph.relink();
}

/// Nodes whose outputs nobody reads (and that are not graph outputs), removed, repeatedly (FX's
/// `eliminate_dead_code` for the side-effect-free operators the passes leave behind).
pub fn remove_dead(graph: &mut Graph) -> bool {
    let mut any = false;
    loop {
        let dead: Vec<NodeId> = graph
            .nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Operator && !n.outputs.is_empty())
            .filter(|n| {
                n.outputs.iter().all(|&o| {
                    !graph.outputs.contains(&o)
                        && graph.values.get(o).is_none_or(|v| v.consumers.is_empty())
                })
            })
            .map(|n| n.id)
            .collect();
        if dead.is_empty() {
            return any;
        }
        any = true;
        graph.remove_nodes(&dead);
    }
}

/// The dtype and shape of value `v`.
pub fn meta(graph: &Graph, v: ValueId) -> (Option<ScalarType>, Vec<i64>) {
    graph
        .values
        .get(v)
        .map_or((None, Vec::new()), |x| (x.dtype, x.shape.clone()))
}

/// The `dim_order` of a 4-D tensor PyTorch stores channels-last (`[0, 2, 3, 1]`; `[0, 2, 1, 3]`
/// when it has one channel, as its strides say).
pub fn channels_last_dim_order(shape: &[i64]) -> Vec<u8> {
    let [_, c, _, w] = <[i64; 4]>::try_from(shape).unwrap_or([1; 4]);
    let (c, w) = (c.max(1), w.max(1));
    let h = shape.get(2).copied().unwrap_or(1).max(1);
    crate::formats::export_json::dim_order_of_strides(&[h * w * c, 1, w * c, c])
}
