//! The one model IR every artifact lowers into: per stage a graph whose nodes are operations and
//! whose edges are tensors flowing from a producer to a consumer.
//!
//! - From a `.pte` ([`from_pte`]): nodes are chain-0 instructions (plus one `Input` and one `Output`
//!   node), in instruction order; value ids equal the plan's value indices. Views that emit no
//!   instruction become values with `alias_of` set; their consumers get edges from the source's
//!   producer.
//! - From an ETRecord stage ([`from_export`]): nodes are the graph's call_function nodes.
//! - [`call`]: one node's call read by its schema's argument names; [`target`]: the core a
//!   program was lowered for, from its calls.
//!
//! Node identity across artifacts: instruction id ↔ debug handle ↔ ETRecord node.

pub mod call;
mod check;
pub mod from_export;
pub mod from_pte;
pub mod layout;
pub mod module;
pub mod qparams;
pub mod quantity;
pub mod quantity_structure;
mod stated_quant;
pub mod target;

pub use check::CheckError;

use serde::Serialize;

use crate::dtype::ScalarType;
use crate::formats::export_json::ModuleStack;

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

/// An argument's value, typed: never a rendered string (rendering is the viewer's).
#[derive(Debug, Clone, PartialEq)]
pub enum ArgData {
    None,
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    /// A dtype argument (ExecuTorch's scalar-type code).
    ScalarType(ScalarType),
    /// An int list; an item that is not a known int (a symbolic size) is `None`.
    Ints(Vec<Option<i64>>),
    Floats(Vec<f64>),
    Bools(Vec<bool>),
    /// A tensor, by value id.
    Tensor(ValueId),
    Tensors(Vec<ValueId>),
    OptionalTensors(Vec<Option<ValueId>>),
    /// An argument kind etscope does not model (a layout, a device), kept as its JSON text.
    Other(String),
}

impl ArgData {
    /// The argument's kind as ExecuTorch's `EValue` names it (`Int`, `IntList`, `Tensor`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            ArgData::None => "None",
            ArgData::Int(_) | ArgData::ScalarType(_) => "Int",
            ArgData::Float(_) => "Double",
            ArgData::Bool(_) => "Bool",
            ArgData::Str(_) => "String",
            ArgData::Ints(_) => "IntList",
            ArgData::Floats(_) => "DoubleList",
            ArgData::Bools(_) => "BoolList",
            ArgData::Tensor(_) => "Tensor",
            ArgData::Tensors(_) => "TensorList",
            ArgData::OptionalTensors(_) => "OptionalTensorList",
            ArgData::Other(_) => "Other",
        }
    }

    /// The tensor value ids this argument refers to.
    pub fn tensors(&self) -> Vec<ValueId> {
        match self {
            ArgData::Tensor(v) => vec![*v],
            ArgData::Tensors(vs) => vs.clone(),
            ArgData::OptionalTensors(vs) => vs.iter().flatten().copied().collect(),
            _ => Vec::new(),
        }
    }
}

/// `data` in JSON: an integer, a float, a bool, a string, `null` or a list of these; a tensor is
/// `null` (its value id is the argument's `value`), a tensor list the list of its value ids.
impl Serialize for ArgData {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ArgData::None | ArgData::Tensor(_) => s.serialize_none(),
            ArgData::Int(i) => s.serialize_i64(*i),
            ArgData::Float(f) => s.serialize_f64(*f),
            ArgData::Bool(b) => s.serialize_bool(*b),
            ArgData::Str(t) | ArgData::Other(t) => s.serialize_str(t),
            ArgData::ScalarType(t) => s.serialize_i64(i64::from(t.code())),
            ArgData::Ints(v) => v.serialize(s),
            ArgData::Floats(v) => v.serialize(s),
            ArgData::Bools(v) => v.serialize(s),
            ArgData::Tensors(v) => v.serialize(s),
            ArgData::OptionalTensors(v) => v.serialize(s),
        }
    }
}

/// An argument of a node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Arg {
    /// Schema argument name where known (stage graphs; the registry's schema).
    pub name: Option<String>,
    /// The value the argument is (`.pte`: every argument is a value of the plan) or, for a
    /// literal of a stage graph, `None`; a tensor list's first tensor.
    pub value: Option<ValueId>,
    /// The value kind (`Tensor`, `Int`, `IntList`, ...).
    pub kind: &'static str,
    /// The argument's value.
    pub data: ArgData,
}

impl Arg {
    /// An argument holding `data`, the value `value` when it has one.
    pub fn new(name: Option<String>, value: Option<ValueId>, data: ArgData) -> Arg {
        Arg {
            name,
            value,
            kind: data.kind(),
            data,
        }
    }
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
    /// The operator's registry entry, looked up once when the graph is built (`None`: an
    /// operator etscope does not know, a delegate, a control instruction).
    #[serde(skip)]
    pub op_id: Option<crate::ops::OpId>,
    pub kind: NodeKind,
    pub instruction_id: Option<usize>,
    pub debug_handles: Vec<u32>,
    /// Shared with every node of the graph that carries the same trace.
    pub stack_trace: Option<std::sync::Arc<str>>,
    /// Shared with every node of the same module ([`ModuleStack`]).
    pub module_stack: ModuleStack,
    pub args: Vec<Arg>,
    /// Tensor values read (constants included).
    pub inputs: Vec<ValueId>,
    /// Tensor values written.
    pub outputs: Vec<ValueId>,
    /// Delegate backend id for delegate calls.
    pub delegate: Option<usize>,
    /// `JumpFalseCall`: the instruction to continue at when the condition is false.
    pub jump_to: Option<usize>,
    /// Provenance: the nodes a pass merged into this one (besides the node itself).
    pub came_from: Vec<Origin>,
    /// The model's tensor this node's output stands for ([`quantity`]), where an ETRecord says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quantity: Option<quantity::Quantity>,
}

/// A node a pass merged into another, as it was before the pass.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Origin {
    /// The pass that merged it.
    pub pass: &'static str,
    /// Its name and qualified operator.
    pub name: String,
    pub op: String,
    /// Its instruction, when it was one of a program's.
    pub instruction_id: Option<usize>,
}

impl Node {
    /// A node with no arguments, ids or metadata yet; `op` starts as `name`.
    pub fn blank(id: NodeId, name: &str, kind: NodeKind) -> Node {
        Node {
            id,
            name: name.into(),
            op: name.into(),
            overload: String::new(),
            op_id: None,
            kind,
            instruction_id: None,
            debug_handles: Vec::new(),
            stack_trace: None,
            module_stack: ModuleStack::default(),
            args: Vec::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            delegate: None,
            jump_to: None,
            came_from: Vec::new(),
            quantity: None,
        }
    }

    /// Sets the operator and looks it up in the registry.
    pub fn set_op(&mut self, op: &str, overload: &str) {
        self.op = op.to_string();
        self.overload = overload.to_string();
        self.op_id = crate::ops::lookup(op, overload);
    }

    /// The node's category: its operator's in the registry, or a guess from the name of one
    /// etscope does not know; inputs and outputs are `Io`.
    pub fn category(&self) -> crate::ops::Category {
        match (self.kind, self.def()) {
            (NodeKind::Input | NodeKind::Output, _) => crate::ops::Category::Io,
            (NodeKind::Delegate, _) => crate::ops::Category::Delegate,
            (_, Some(d)) => d.category,
            (_, None) => crate::ops::Category::guess(&self.op),
        }
    }

    /// The operator's registry entry.
    pub fn def(&self) -> Option<&'static crate::ops::OpDef> {
        self.op_id.map(crate::ops::def)
    }

    /// The op name after the namespace (`convolution`), used for labels and categories.
    pub fn short_op(&self) -> &str {
        self.op.rsplit("::").next().unwrap_or(&self.op)
    }

    /// The path of the innermost module that produced the node (`blocks.3.conv`), when it
    /// carries one.
    pub fn innermost_module(&self) -> Option<&str> {
        self.module_stack
            .last()
            .map(|f| f.path.as_str())
            .filter(|p| !p.is_empty())
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
    /// Which constant data a constant tensor reads, the same for every value reading the same
    /// data (`.pte`: [`crate::formats::pte::Tensor::constant_id`]; `None` otherwise).
    pub constant_id: Option<u32>,
    /// A non-tensor value's contents (`.pte` plans hold ints, lists and strings as values).
    pub data: Option<ArgData>,
    /// The model's dims in the order this tensor's sizes list them (`[0, 2, 3, 1]`: NHWC of the
    /// model's NCHW tensor), as the program says through its operators (`layout.rs`); `None`
    /// where nothing says.
    pub logical_order: Option<Vec<usize>>,
}

impl ValueInfo {
    /// A value that is not a tensor, holding `data` (an int, a list, ...).
    pub fn literal(id: ValueId, data: ArgData) -> ValueInfo {
        ValueInfo {
            id,
            name: String::new(),
            kind: data.kind(),
            dtype: None,
            shape: Vec::new(),
            dim_order: Vec::new(),
            quant: None,
            storage: Storage::NotTensor,
            placement: None,
            alias_of: None,
            producer: None,
            consumers: Vec::new(),
            nbytes: None,
            data: Some(data),
            logical_order: None,
            constant_id: None,
        }
    }

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

/// Debug handle → the module stack of the first node (in graph order) that carries the handle
/// and a module stack.
pub type ModulesByHandle = std::collections::HashMap<u32, ModuleStack>;

/// [`ModulesByHandle`] of nodes given as (debug handles, module stack), in graph order.
pub fn modules_by_handle<'a>(
    nodes: impl Iterator<Item = (&'a [u32], &'a ModuleStack)>,
) -> ModulesByHandle {
    let mut map = ModulesByHandle::new();
    for (handles, stack) in nodes.filter(|(_, s)| !s.is_empty()) {
        for &h in handles {
            map.entry(h).or_insert_with(|| stack.clone());
        }
    }
    map
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
    /// The sizes of the graph's inputs (a symbolic or negative size as 0), as a caller shapes
    /// data for them.
    pub fn input_shapes(&self) -> Vec<Vec<usize>> {
        self.inputs
            .iter()
            .map(|&v| {
                self.values
                    .get(v)
                    .map(|x| {
                        x.shape
                            .iter()
                            .map(|&d| usize::try_from(d).unwrap_or(0))
                            .collect()
                    })
                    .unwrap_or_default()
            })
            .collect()
    }

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

    /// The value whose storage `v` shares: `v` itself, or the source of the view chain it
    /// ends (views emit no instruction and have no producer of their own).
    pub fn storage_of(&self, v: ValueId) -> ValueId {
        let mut v = v;
        for _ in 0..64 {
            match self.values.get(v).and_then(|x| x.alias_of) {
                Some(src) => v = src,
                None => break,
            }
        }
        v
    }

    /// The node that wrote `v`: its producer, or, for a view without one, the producer of
    /// the value it views (the first along the chain).
    pub fn writer(&self, v: ValueId) -> Option<NodeId> {
        let mut v = v;
        for _ in 0..64 {
            let info = self.values.get(v)?;
            if let Some(p) = info.producer {
                return Some(p);
            }
            v = info.alias_of?;
        }
        None
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
        let by_handle = modules_by_handle(
            from.nodes
                .iter()
                .map(|n| (n.debug_handles.as_slice(), &n.module_stack)),
        );
        self.inherit_module_stacks_by_handle(&by_handle);
    }

    /// [`Graph::inherit_module_stacks`] from a map made once ([`modules_by_handle`]), e.g. from
    /// a stage's exported graph that is not built into a graph of its own.
    pub fn inherit_module_stacks_by_handle(&mut self, by_handle: &ModulesByHandle) {
        for n in &mut self.nodes {
            if !n.module_stack.is_empty() {
                continue;
            }
            if let Some(stack) = n.debug_handles.iter().find_map(|h| by_handle.get(h)) {
                n.module_stack = stack.clone();
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
                    crate::ops::traits_of(&n.op)
                        .quantizes
                        .then(|| n.outputs.first().and_then(|&o| from.values[o].quant))
                        .flatten()
                }) {
                    return Some(q);
                }
                // activations fused into the op (relu, hardtanh, clamp)
                let next = consumers.iter().find(|&&c| {
                    let t = crate::ops::traits_of(&from.nodes[c].op);
                    t.fusable_activation && !t.float_only
                })?;
                v = *from.nodes[*next].outputs.first()?;
            }
            None
        };
        // the nodes of this graph sharing each handle, in order: when a pattern of several
        // edge nodes (conv → clamp → hardswish, one handle) becomes several calls here (conv,
        // minimum, mul), the first call takes the first quantized tensor of the pattern and the
        // last call the last; a call between them has no quantization this graph can tell
        let mut siblings: std::collections::HashMap<u32, Vec<NodeId>> =
            std::collections::HashMap::new();
        for n in &self.nodes {
            if matches!(n.kind, NodeKind::Operator | NodeKind::Delegate) {
                for &h in &n.debug_handles {
                    siblings.entry(h).or_default().push(n.id);
                }
            }
        }
        for n in 0..self.nodes.len() {
            let handles = self.nodes[n].debug_handles.clone();
            let Some(q) = handles.iter().find_map(|&h| {
                let quants: Vec<QuantParams> = from
                    .nodes_with_handle(h)
                    .filter_map(|m| m.outputs.first().and_then(|&o| quant_after(o)))
                    .collect();
                let group = siblings.get(&h).map_or(&[][..], Vec::as_slice);
                let at = group.iter().position(|&x| x == n).unwrap_or(0);
                match (quants.as_slice(), group.len()) {
                    ([], _) => None,
                    (qs, 1) => qs.last().copied(),
                    (qs, m) if at + 1 == m => qs.last().copied(),
                    (qs, _) if at == 0 => qs.first().copied(),
                    _ => None,
                }
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

    /// Each node's successors (the nodes reading one of its outputs), once each, in edge order.
    pub fn successors(&self) -> Vec<Vec<NodeId>> {
        let mut succ: Vec<Vec<NodeId>> = vec![Vec::new(); self.nodes.len()];
        for e in &self.edges {
            if let Some(s) = succ.get_mut(e.from) {
                if !s.contains(&e.to) {
                    s.push(e.to);
                }
            }
        }
        succ
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

    /// Removes `nodes` (ids) and renumbers the rest; producers, consumers and edges are derived
    /// again.
    pub fn remove_nodes(&mut self, nodes: &[NodeId]) {
        if nodes.is_empty() {
            return;
        }
        self.nodes.retain(|n| !nodes.contains(&n.id));
        for (i, n) in self.nodes.iter_mut().enumerate() {
            n.id = i;
        }
        self.instruction_index = Default::default();
        self.relink();
    }

    /// Derives each value's producer from the nodes' outputs, then consumers and edges.
    /// Gives back the spare capacity building left in the graph's vectors (a large graph's
    /// node, value and edge lists grow by doubling: up to half of them unused).
    pub fn shrink_to_fit(&mut self) {
        self.nodes.shrink_to_fit();
        self.values.shrink_to_fit();
        self.edges.shrink_to_fit();
        for n in &mut self.nodes {
            n.args.shrink_to_fit();
            n.inputs.shrink_to_fit();
            n.outputs.shrink_to_fit();
            n.debug_handles.shrink_to_fit();
        }
        for v in &mut self.values {
            v.consumers.shrink_to_fit();
            v.shape.shrink_to_fit();
        }
    }

    pub fn relink(&mut self) {
        for v in &mut self.values {
            v.producer = None;
        }
        for n in &self.nodes {
            for &o in &n.outputs {
                if let Some(v) = self.values.get_mut(o) {
                    v.producer.get_or_insert(n.id);
                }
            }
        }
        self.link();
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

/// Carries quantization parameters across quantization-preserving ops (the registry's trait), forward and backward,
/// through chains of up to four of them.
pub(crate) fn propagate_quant_through_moves(values: &mut [ValueInfo], nodes: &[Node]) {
    for _ in 0..4 {
        for n in nodes
            .iter()
            .filter(|n| n.def().is_some_and(|d| d.traits.quant_preserving))
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
