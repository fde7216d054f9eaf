//! Which tensor of the model a node's output stands for: its *quantity*.
//!
//! A quantized program holds, for each quantize/dequantize pair of its Q/DQ graph, one float
//! tensor of the model — the one the quantizer observed. Where an activation was fused into the
//! op before it (a convolution with a ReLU in its output clamp), that tensor is the
//! activation's output, wherever the activation's module sits; a table lookup stands for the
//! function it tabulates. Two programs of one model (fp32 and int8, either Cortex-M flow) can be
//! compared only where both hold the same quantity, so the diff matches quantities, not
//! positions.
//!
//! A quantity is named across exports by the module that computed it, the operator class and
//! the how-many-th call of that class in that module it is ([`Quantity`]); debug handles are
//! numbered per export and cannot name it. A program's nodes get their quantities from their
//! ETRecord's edge graph (the graph whose Q/DQ nodes say what was observed) through debug
//! handles ([`Graph::attach_quantities`]).

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Graph, NodeId, NodeKind};

/// One tensor of the model: the output of the `call`-th call of operator class `op` in module
/// `module` (empty: the model's own `forward`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Quantity {
    pub module: String,
    pub op: String,
    pub call: usize,
}

impl Quantity {
    /// `enc2.5 relu`, `sigmoid` (a function in `forward`), `act relu #2` (the third call of a
    /// shared module).
    pub fn label(&self) -> String {
        let call = if self.call > 0 {
            format!(" #{}", self.call)
        } else {
            String::new()
        };
        if self.module.is_empty() {
            format!("{}{call}", self.op)
        } else {
            format!("{} {}{call}", self.module, self.op)
        }
    }
}

/// The operator class a quantity is named by: the spellings of one computation in different
/// dialects and decompositions taken as one (`addmm`, `mm` and `linear` are a linear layer;
/// `convolution` and `conv2d` a convolution). `None` for what computes no quantity of its own:
/// quantize / dequantize, data movement, control.
pub fn op_class(op: &str) -> Option<String> {
    let traits = crate::ops::traits_of(op);
    if traits.quantizes
        || traits.dequantizes
        || traits.data_movement
        || op.contains("quantize_per_")
        || op == "memory.alloc"
    {
        return None;
    }
    let short = op.rsplit("::").next().unwrap_or(op);
    let short = short.strip_suffix('_').unwrap_or(short);
    Some(
        match short {
            "addmm" | "mm" | "linear" => "linear",
            "convolution" | "conv2d" | "conv1d" | "conv3d" => "convolution",
            "hardtanh" | "relu6" => "hardtanh",
            other => other,
        }
        .to_string(),
    )
}

impl Graph {
    /// Sets every operator node's [`super::Node::quantity`] from `source`: the ETRecord's edge
    /// graph of this program (nodes matched through debug handles), or this graph itself when
    /// `source` is `None` (an ETRecord stage).
    pub fn attach_quantities(&mut self, source: Option<&Graph>) {
        let quantities = match source {
            Some(source) => quantities_through_handles(self, source),
            None => {
                let keys = source_quantities(self);
                (0..self.nodes.len())
                    .map(|n| {
                        keys.contains_key(&n)
                            .then(|| keys.get(&observed(self, n)).cloned())
                            .flatten()
                    })
                    .collect()
            }
        };
        let quantities = batch_norms_take_over(self, quantities);
        for (node, quantity) in self.nodes.iter_mut().zip(quantities) {
            node.quantity = quantity;
        }
    }
}

/// A batch norm operator, any of the names an export gives it.
pub(crate) fn is_batch_norm(op: &str) -> bool {
    let short = op.rsplit("::").next().unwrap_or(op);
    matches!(
        short,
        "_native_batch_norm_legit_no_training"
            | "native_batch_norm"
            | "_native_batch_norm_legit"
            | "batch_norm"
    )
}

/// A batch norm that alone reads a weighted op's output stands for that op's quantity: a
/// quantizer folds it into the op (conv + bn observed as one), so the float program's op and
/// its batch norm are one tensor of the model, the batch norm's output. Without this, a
/// convolution whose batch norm feeds a residual add (no activation after it) would set the
/// float convolution's output before its batch norm against the int8 one after it.
fn batch_norms_take_over(g: &Graph, mut q: Vec<Option<Quantity>>) -> Vec<Option<Quantity>> {
    let succ = g.successors();
    for n in 0..g.nodes.len() {
        let weighted = crate::ops::traits_of(&g.nodes[n].op).weighted;
        if !weighted || q.get(n).is_none_or(Option::is_none) {
            continue;
        }
        if let [bn] = succ[n].as_slice() {
            if g.nodes.get(*bn).is_some_and(|m| is_batch_norm(&m.op)) {
                let moved = q[n].take();
                q[*bn] = moved;
            }
        }
    }
    q
}

/// The quantity of each node of `g` (by node id): that of the latest node of `source` sharing
/// one of its debug handles, where the node is an operator or delegate call.
fn quantities_through_handles(g: &Graph, source: &Graph) -> Vec<Option<Quantity>> {
    let keys = source_quantities(source);
    let mut by_handle: BTreeMap<u32, NodeId> = BTreeMap::new();
    for &id in keys.keys() {
        for &h in &source.nodes[id].debug_handles {
            // the latest keyed node of a handle (a decomposition's last node)
            by_handle.insert(h, id);
        }
    }
    g.nodes
        .iter()
        .map(|node| {
            if !matches!(node.kind, NodeKind::Operator | NodeKind::Delegate) {
                return None;
            }
            let at = node
                .debug_handles
                .iter()
                .filter_map(|h| by_handle.get(h).copied())
                .max()?;
            keys.get(&observed(source, at)).cloned()
        })
        .collect()
}

/// Every node of `g` that computes a quantity, with it: calls counted per module and operator
/// class in node order.
fn source_quantities(g: &Graph) -> BTreeMap<NodeId, Quantity> {
    let mut calls: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut out = BTreeMap::new();
    let decomposed = decomposed_activations(g);
    for n in &g.nodes {
        if !matches!(n.kind, NodeKind::Operator) || computes_on_constants_only(g, n.id) {
            continue;
        }
        // an activation module a graph computes as several ops (the fp32 program's hardswish:
        // add, clamp, mul, div) holds one quantity, at its last op, named as the activation —
        // what a quantized graph keeps as one pattern op
        let op = match decomposed.get(&n.id) {
            Some(Some(name)) => name.clone(),
            Some(None) => continue,
            None => match op_class(&n.op) {
                Some(op) => op,
                None => continue,
            },
        };
        let module = n
            .module_stack
            .last()
            .map(|f| f.path.clone())
            .unwrap_or_default();
        let call = calls.entry((module.clone(), op.clone())).or_default();
        out.insert(
            n.id,
            Quantity {
                module,
                op,
                call: *call,
            },
        );
        *call += 1;
    }
    out
}

/// The activation modules (`nn.Hardswish`, `nn.Hardsigmoid`, `nn.SiLU`, `nn.GELU`, `nn.Mish`)
/// a graph computes as several operators: each such node → `Some(activation)` for the last of
/// its module instance, `None` for the others.
fn decomposed_activations(g: &Graph) -> BTreeMap<NodeId, Option<String>> {
    const ACTIVATIONS: [&str; 5] = ["Hardswish", "Hardsigmoid", "SiLU", "GELU", "Mish"];
    let mut by_module: BTreeMap<String, (String, Vec<NodeId>)> = BTreeMap::new();
    for n in &g.nodes {
        if !matches!(n.kind, NodeKind::Operator) || computes_on_constants_only(g, n.id) {
            continue;
        }
        let Some(frame) = n.module_stack.last() else {
            continue;
        };
        let class = frame.class.rsplit('.').next().unwrap_or(&frame.class);
        if ACTIVATIONS.contains(&class) && op_class(&n.op).is_some() {
            by_module
                .entry(frame.path.clone())
                .or_insert_with(|| (class.to_ascii_lowercase(), Vec::new()))
                .1
                .push(n.id);
        }
    }
    let mut out = BTreeMap::new();
    for (_, (name, nodes)) in by_module {
        if nodes.len() < 2 {
            continue;
        }
        let last = nodes.iter().copied().max();
        for n in nodes {
            out.insert(n, (Some(n) == last).then(|| name.clone()));
        }
    }
    out
}

/// A node whose every input is a constant (a weight's dequantize or transpose): part of no
/// activation's computation.
pub(crate) fn computes_on_constants_only(g: &Graph, n: NodeId) -> bool {
    let node = &g.nodes[n];
    !node.inputs.is_empty()
        && node.inputs.iter().all(|&v| {
            g.values
                .get(v)
                .is_some_and(|x| x.storage == super::Storage::Constant)
        })
}

/// The node whose output `start`'s output stands for once quantized: walking forward through
/// activations consumed with no quantize between (fused into `start`), to the node a quantize
/// reads. `start` itself when the walk reaches no quantize (a float graph: each op is its own).
fn observed(g: &Graph, start: NodeId) -> NodeId {
    let mut at = start;
    for _ in 0..4 {
        let consumers: Vec<NodeId> = g.nodes[at]
            .outputs
            .first()
            .and_then(|&v| g.values.get(v))
            .map(|v| v.consumers.clone())
            .unwrap_or_default();
        let quantized = consumers.iter().any(|&c| {
            let op = &g.nodes[c].op;
            crate::ops::traits_of(op).quantizes || op.ends_with("quantize_per_tensor")
        });
        if quantized {
            return at;
        }
        let [next] = consumers[..] else {
            return start;
        };
        if !crate::ops::traits_of(&g.nodes[next].op).fusable_activation {
            return start;
        }
        at = next;
    }
    start
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_of_one_computation_are_one_class() {
        assert_eq!(op_class("aten::addmm").as_deref(), Some("linear"));
        assert_eq!(op_class("aten::linear").as_deref(), Some("linear"));
        assert_eq!(
            op_class("aten::convolution").as_deref(),
            Some("convolution")
        );
        assert_eq!(op_class("aten::relu").as_deref(), Some("relu"));
        assert_eq!(op_class("quantized_decomposed::quantize_per_tensor"), None);
        assert_eq!(op_class("cortex_m::dequantize_per_tensor"), None);
        assert_eq!(op_class("aten::permute_copy"), None);
    }

    #[test]
    fn labels_name_module_operator_and_call() {
        let q = |module: &str, op: &str, call| Quantity {
            module: module.into(),
            op: op.into(),
            call,
        };
        assert_eq!(q("enc2.5", "relu", 0).label(), "enc2.5 relu");
        assert_eq!(q("", "sigmoid", 0).label(), "sigmoid");
        assert_eq!(q("act", "hardtanh", 2).label(), "act hardtanh #2");
    }
}
