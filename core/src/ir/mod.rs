//! The one model IR every artifact lowers into: per stage a graph whose nodes are operations and
//! whose edges are tensors flowing from a producer to a consumer.
//!
//! - From a `.pte` ([`from_pte`]): nodes are chain-0 instructions (plus one `Input` and one `Output`
//!   node), in instruction order; value ids equal the plan's value indices. Views that emit no
//!   instruction become values with `alias_of` set; their consumers get edges from the source's
//!   producer.
//! - From an ETRecord stage ([`from_export`]): nodes are the graph's call_function nodes.
//!
//! Node identity across artifacts: instruction id ↔ debug handle ↔ ETRecord node.

pub mod from_export;
pub mod from_pte;

use serde::Serialize;

use crate::dtype::ScalarType;
use crate::export_json::ModuleFrame;

/// Index into [`Graph::nodes`].
pub type NodeId = usize;
/// Index into [`Graph::values`].
pub type ValueId = usize;

/// What a node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// The graph's inputs (one node holding every user input).
    Input,
    /// The graph's outputs.
    Output,
    /// A kernel call (`.pte`) or call_function (stage graph).
    Operator,
    /// A call into a backend delegate.
    Delegate,
    /// `MoveCall`.
    Move,
    /// `JumpFalseCall`.
    JumpFalse,
    /// `FreeCall`.
    Free,
}

/// An argument of a node as the inspector shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Arg {
    /// Schema argument name where known (stage graphs).
    pub name: Option<String>,
    /// The value index the argument refers to (`.pte`) or the tensor's value id.
    pub value: Option<ValueId>,
    /// The value kind (`Tensor`, `Int`, `IntList`, ...).
    pub kind: &'static str,
    /// Literal rendering of scalars and lists, resolved (`[1, 1]`); for a `.pte` tensor argument
    /// empty (its [`ValueInfo`] describes it), for a stage tensor `%name`.
    pub literal: String,
}

/// An operation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Node {
    pub id: NodeId,
    /// Display name: `convolution`, or the stage graph's node name.
    pub name: String,
    /// Operator without overload: `aten::convolution`, `cortex_m::quantized_conv2d_nhwc`.
    pub op: String,
    /// Overload: `out`, `default`.
    pub overload: String,
    pub kind: NodeKind,
    pub instruction_id: Option<usize>,
    pub debug_handles: Vec<u32>,
    pub stack_trace: Option<String>,
    pub module_stack: Vec<ModuleFrame>,
    pub args: Vec<Arg>,
    /// Tensor values read (constants included).
    pub inputs: Vec<ValueId>,
    /// Tensor values written.
    pub outputs: Vec<ValueId>,
    /// Delegate backend id for delegate calls.
    pub delegate: Option<usize>,
}

impl Node {
    /// A node with no arguments, ids or metadata yet; `op` starts as `name`.
    pub fn blank(id: NodeId, name: &str, kind: NodeKind) -> Node {
        Node {
            id,
            name: name.into(),
            op: name.into(),
            overload: String::new(),
            kind,
            instruction_id: None,
            debug_handles: Vec::new(),
            stack_trace: None,
            module_stack: Vec::new(),
            args: Vec::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            delegate: None,
        }
    }

    /// The op name after the namespace (`convolution`), used for labels and categories.
    pub fn short_op(&self) -> &str {
        self.op.rsplit("::").next().unwrap_or(&self.op)
    }

    /// `op.overload`, as ExecuTorch's operator table lists it.
    pub fn qualified_op(&self) -> String {
        if self.overload.is_empty() {
            self.op.clone()
        } else {
            format!("{}.{}", self.op, self.overload)
        }
    }
}

/// Per-tensor affine quantization parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct QuantParams {
    pub scale: f64,
    pub zero_point: i64,
}

/// Where a tensor's storage comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Storage {
    /// Data stored in the file.
    Constant,
    /// Placed by the memory plan in an arena.
    Planned,
    /// Neither (runtime-allocated, dynamic, or a stage graph tensor).
    Unplanned,
    /// Not a tensor.
    NotTensor,
}

/// Arena placement of a planned tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Placement {
    /// 1-based arena id.
    pub memory_id: u32,
    pub offset: u64,
    pub size: u64,
}

/// A value (tensor or other) of the graph.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ValueInfo {
    pub id: ValueId,
    /// The tensor's name in a stage graph; empty for `.pte` values (see [`ValueInfo::label`]).
    pub name: String,
    /// `Tensor`, `Int`, `IntList`, ... for `.pte` values; `Tensor` for stage tensors.
    pub kind: &'static str,
    pub dtype: Option<ScalarType>,
    pub shape: Vec<i64>,
    pub dim_order: Vec<u8>,
    pub quant: Option<QuantParams>,
    pub storage: Storage,
    pub placement: Option<Placement>,
    /// For views: the value whose storage this one shares.
    pub alias_of: Option<ValueId>,
    pub producer: Option<NodeId>,
    pub consumers: Vec<NodeId>,
    /// Size in bytes where known.
    pub nbytes: Option<u64>,
}

impl ValueInfo {
    /// A display name: the stage name, or `v<index>` for `.pte` values.
    pub fn label(&self) -> String {
        if self.name.is_empty() {
            format!("v{}", self.id)
        } else {
            self.name.clone()
        }
    }

    /// Whether this value is a tensor.
    pub fn is_tensor(&self) -> bool {
        self.storage != Storage::NotTensor
    }
}

/// A tensor flowing from one node to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Edge {
    pub from: NodeId,
    pub to: NodeId,
    pub value: ValueId,
}

/// One stage's graph.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Graph {
    /// `pte`, `exported`, `edge`, `edge_after_transform`, ...
    pub stage: String,
    /// Method name (e.g. `forward`).
    pub method: String,
    pub nodes: Vec<Node>,
    pub values: Vec<ValueInfo>,
    pub edges: Vec<Edge>,
    pub inputs: Vec<ValueId>,
    pub outputs: Vec<ValueId>,
    /// Declared arena sizes, arena `memory_id` at index `memory_id - 1` (`.pte` only).
    pub arenas: Vec<u64>,
    /// Number of chain-0 instructions (`.pte` only; 0 otherwise).
    pub instruction_count: usize,
    /// Instruction id → node, built on first use (lookups from profiles, timelines and
    /// captures are constant time, not a search of the nodes).
    #[serde(skip)]
    pub instruction_index: std::sync::OnceLock<Vec<Option<NodeId>>>,
}

impl Graph {
    /// The node of instruction `id`.
    pub fn node_for_instruction(&self, id: usize) -> Option<&Node> {
        // ids come from the program: the index covers ids up to a bound set by the node count
        let cap = self.nodes.len().saturating_mul(4).max(1024);
        if id >= cap {
            return self.nodes.iter().find(|n| n.instruction_id == Some(id));
        }
        let index = self.instruction_index.get_or_init(|| {
            let mut index = Vec::new();
            for n in &self.nodes {
                if let Some(i) = n.instruction_id.filter(|&i| i < cap) {
                    if index.len() <= i {
                        index.resize(i + 1, None);
                    }
                    index[i].get_or_insert(n.id);
                }
            }
            index
        });
        index
            .get(id)
            .copied()
            .flatten()
            .and_then(|n| self.nodes.get(n))
    }

    /// Nodes carrying `handle` among their debug handles.
    pub fn nodes_with_handle(&self, handle: u32) -> impl Iterator<Item = &Node> {
        self.nodes
            .iter()
            .filter(move |n| n.debug_handles.contains(&handle))
    }

    /// Sets each instruction node's debug handles from an ETRecord `debug_handle_map`.
    pub fn attach_debug_handles(&mut self, map: &std::collections::BTreeMap<usize, Vec<u32>>) {
        for n in &mut self.nodes {
            if let Some(h) = n.instruction_id.and_then(|i| map.get(&i)) {
                n.debug_handles = h.clone();
            }
        }
    }

    /// Gives each node the module stack of the first node of `from` (another stage of the same
    /// export, e.g. the ETRecord's edge graph) that shares one of its debug handles.
    pub fn inherit_module_stacks(&mut self, from: &Graph) {
        for n in &mut self.nodes {
            if !n.module_stack.is_empty() {
                continue;
            }
            if let Some(src) = n.debug_handles.iter().find_map(|&h| {
                from.nodes_with_handle(h)
                    .find(|m| !m.module_stack.is_empty())
            }) {
                n.module_stack = src.module_stack.clone();
            }
        }
    }

    /// Gives each integer output without quantization parameters the parameters its
    /// counterpart in `from` (same debug handle) is quantized with: the scale and zero point of
    /// the `quantize_per_tensor` that consumes the counterpart's output (Q/DQ edge graphs
    /// carry them; Cortex-M programs fold them into multipliers and shifts).
    pub fn inherit_quant(&mut self, from: &Graph) {
        // the quantize that follows a value, looking through activations fused into the op
        let quant_after = |start: ValueId| {
            let mut v = start;
            for _ in 0..4 {
                let consumers = &from.values.get(v)?.consumers;
                if let Some(q) = consumers.iter().find_map(|&c| {
                    let n = &from.nodes[c];
                    n.short_op()
                        .starts_with("quantize_per_tensor")
                        .then(|| n.outputs.first().and_then(|&o| from.values[o].quant))
                        .flatten()
                }) {
                    return Some(q);
                }
                let next = consumers.iter().find(|&&c| {
                    let op = from.nodes[c].short_op();
                    ["relu", "hardtanh", "clamp", "relu6"]
                        .iter()
                        .any(|a| op.starts_with(a))
                })?;
                v = *from.nodes[*next].outputs.first()?;
            }
            None
        };
        for n in 0..self.nodes.len() {
            let handles = self.nodes[n].debug_handles.clone();
            let Some(q) = handles.iter().find_map(|&h| {
                from.nodes_with_handle(h)
                    .find_map(|m| m.outputs.first().and_then(|&o| quant_after(o)))
            }) else {
                continue;
            };
            for o in self.nodes[n].outputs.clone() {
                let v = &mut self.values[o];
                if v.quant.is_none() && v.dtype.is_some_and(|d| d.is_integer()) {
                    v.quant = Some(q);
                }
            }
        }
        propagate_quant_through_moves(&mut self.values, &self.nodes);
    }

    /// Recomputes `edges` and each value's consumers from node inputs/outputs, following aliases
    /// back to the producing node.
    pub(crate) fn link(&mut self) {
        for v in &mut self.values {
            v.consumers.clear();
        }
        let mut edges = Vec::new();
        for n in &self.nodes {
            for &v in &n.inputs {
                let producer = self.producer_through_aliases(v);
                if let Some(p) = producer {
                    if p != n.id {
                        edges.push(Edge {
                            from: p,
                            to: n.id,
                            value: v,
                        });
                    }
                }
            }
        }
        for n in 0..self.nodes.len() {
            for k in 0..self.nodes[n].inputs.len() {
                let v = self.nodes[n].inputs[k];
                if let Some(val) = self.values.get_mut(v) {
                    if !val.consumers.contains(&n) {
                        val.consumers.push(n);
                    }
                }
            }
        }
        edges.dedup();
        self.edges = edges;
    }

    /// The node producing `v`, looking through view aliases.
    pub fn producer_through_aliases(&self, mut v: ValueId) -> Option<NodeId> {
        for _ in 0..64 {
            let val = self.values.get(v)?;
            if let Some(p) = val.producer {
                return Some(p);
            }
            v = val.alias_of?;
        }
        None
    }

    /// Count of operator and delegate nodes.
    pub fn op_count(&self) -> usize {
        self.nodes
            .iter()
            .filter(|n| matches!(n.kind, NodeKind::Operator | NodeKind::Delegate))
            .count()
    }
}

/// Ops that move quantized values without requantizing them: their output keeps the input's
/// quantization parameters (and the other way round).
const QUANT_PRESERVING: [&str; 12] = [
    "cortex_m::pad",
    "cortex_m::transpose",
    "cortex_m::quantized_max_pool2d",
    "cortex_m::quantized_max_pool2d_nhwc",
    "aten::view_copy",
    "aten::permute_copy",
    "aten::clone",
    "aten::squeeze_copy",
    "aten::unsqueeze_copy",
    "dim_order_ops::_clone_dim_order",
    "dim_order_ops::_to_dim_order_copy",
    "executorch_prim::et_view",
];

/// Carries quantization parameters across [`QUANT_PRESERVING`] ops, forward and backward,
/// through chains of up to four of them.
pub(crate) fn propagate_quant_through_moves(values: &mut [ValueInfo], nodes: &[Node]) {
    for _ in 0..4 {
        for n in nodes
            .iter()
            .filter(|n| QUANT_PRESERVING.contains(&n.op.as_str()))
        {
            let (Some(&i), Some(&o)) = (n.inputs.first(), n.outputs.first()) else {
                continue;
            };
            if i >= values.len() || o >= values.len() {
                continue;
            }
            match (values[i].quant, values[o].quant) {
                (Some(q), None) => values[o].quant = Some(q),
                (None, Some(q)) => values[i].quant = Some(q),
                _ => {}
            }
        }
    }
}
