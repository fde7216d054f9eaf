//! Where the written program's tensors live: which calls become instructions (views of
//! contiguous tensors and scratch allocations do not), which values share storage, and every
//! non-constant tensor's offset in arena 1 (a first placement, a greedy by size over instruction
//! lifetimes, 16-byte aligned, graph inputs and outputs included; `emit::program` then replaces
//! it with ExecuTorch's planner's).

use std::collections::HashMap;

use crate::ir::{Graph, NodeKind, Storage, ValueId};
use crate::passes::out_variants::OutVariants;
use crate::passes::run_checked;

use super::super::{LowerError, Module};
use super::err;

/// Alignment of planned tensors and of constants in their segment.
pub(super) const TENSOR_ALIGN: u64 = 16;

pub(super) fn align(x: u64, a: u64) -> u64 {
    x.div_ceil(a).saturating_mul(a)
}

/// A call of the program.
pub(super) struct Call {
    pub(super) node: usize,
}

/// The program's layout before serialization.
pub(super) struct Layout {
    pub(super) graph: Graph,
    pub(super) calls: Vec<Call>,
    /// Per value: the value whose storage it shares (a view), else itself.
    pub(super) storage_of: Vec<ValueId>,
    /// Per planned storage value: its offset in arena 1.
    pub(super) offsets: HashMap<ValueId, u64>,
    pub(super) arena: u64,
}

/// Whether a tensor of `shape` stored in `dim_order` is contiguous as PyTorch judges it: its
/// strides are row-major ones, size-1 dims ignored (a channels-last `[n, c, 1, 1]` is).
fn contiguous(shape: &[i64], dim_order: &[u8]) -> bool {
    if dim_order
        .iter()
        .enumerate()
        .all(|(i, &d)| usize::from(d) == i)
    {
        return true;
    }
    // the dims of size > 1, in memory order, must be in logical order
    let big: Vec<u8> = dim_order
        .iter()
        .copied()
        .filter(|&d| shape.get(usize::from(d)).is_some_and(|&s| s != 1))
        .collect();
    big.windows(2).all(|w| w[0] < w[1])
}

fn nbytes(g: &Graph, v: ValueId) -> Result<u64, LowerError> {
    let val = &g.values[v];
    let elem = val
        .dtype
        .and_then(|d| d.element_size())
        .ok_or_else(|| err(format!("value {} has no dtype with a size", val.label())))?;
    val.shape.iter().try_fold(elem as u64, |acc, &s| {
        u64::try_from(s)
            .ok()
            .and_then(|s| acc.checked_mul(s))
            .ok_or_else(|| {
                err(format!(
                    "value {} has an unplannable shape {:?}",
                    val.label(),
                    val.shape
                ))
            })
    })
}

/// ExecuTorch's LegalizePortableDimOrderPass (run by `to_executorch`): the portable kernels of
/// average pooling, `expand_copy`, `mean.dim` and `sum.dim_IntList` take their first input in
/// the default dim order, so one over a tensor in another (the default flow's channels-last
/// activations left in float) gets a `_to_dim_order_copy` to contiguous before it.
fn legalize_portable_dim_order(graph: &mut Graph) {
    use crate::ir::ArgData;
    let needs_default = |n: &crate::ir::Node| {
        matches!(
            (n.def().map(|d| d.name), n.overload.as_str()),
            (
                Some("aten::avg_pool2d" | "aten::_adaptive_avg_pool2d" | "aten::expand_copy"),
                "out"
            ) | (Some("aten::mean"), "out")
                | (Some("aten::sum"), "IntList_out")
        )
    };
    let old = std::mem::take(&mut graph.nodes);
    graph.nodes = old.clone();
    let mut nodes = Vec::with_capacity(old.len() + 2);
    for mut node in old {
        let input = super::super::edit::tensor_arg(&node, 0);
        let default_order = |v: ValueId| {
            let d = &graph.values[v].dim_order;
            d.iter().enumerate().all(|(i, &o)| usize::from(o) == i)
        };
        match input {
            Some(x)
                if node.kind == NodeKind::Operator && needs_default(&node) && !default_order(x) =>
            {
                let (dtype, shape) = super::super::edit::meta(graph, x);
                let rank = shape.len();
                let name = super::super::edit::unique_name(
                    graph,
                    "dim_order_ops__to_dim_order_copy_default",
                );
                let copy = super::super::edit::new_tensor(
                    graph,
                    &name,
                    dtype.unwrap_or(crate::ScalarType::Float),
                    shape,
                    (0..rank as u8).collect(),
                    Storage::Unplanned,
                );
                let dims = ArgData::Ints((0..rank as i64).map(Some).collect());
                let call = super::super::edit::make_node(
                    &name,
                    "dim_order_ops::_to_dim_order_copy",
                    "out",
                    vec![
                        ArgData::Tensor(x),
                        ArgData::Bool(false),
                        dims,
                        ArgData::Tensor(copy),
                        ArgData::Tensor(copy),
                    ],
                    vec![copy],
                );
                super::super::edit::replace_in_node(&mut node, x, copy);
                nodes.push(call);
                nodes.push(node);
            }
            _ => nodes.push(node),
        }
    }
    super::super::edit::set_nodes(graph, nodes);
    // to_executorch traces the graph again: the op now reads a contiguous tensor and writes one,
    // and so do the element-wise and (de)quantizing calls after it
    let mut changed: std::collections::HashSet<ValueId> = graph
        .nodes
        .iter()
        .filter(|n| n.def().map(|d| d.name) == Some("dim_order_ops::_to_dim_order_copy"))
        .flat_map(|n| n.outputs.clone())
        .collect();
    for i in 0..graph.nodes.len() {
        let n = &graph.nodes[i];
        let Some(&x) = n.inputs.first() else { continue };
        let follows = n
            .def()
            .is_some_and(|d| d.traits.elementwise || d.traits.quantizes || d.traits.dequantizes)
            || needs_default(n);
        if !changed.contains(&x) || !follows || n.outputs.len() != 1 {
            continue;
        }
        let o = n.outputs[0];
        if graph.values[o].shape.len() == graph.values[x].shape.len()
            && graph.values[o].dim_order != graph.values[x].dim_order
        {
            graph.values[o].dim_order = graph.values[x].dim_order.clone();
            changed.insert(o);
        }
    }
}

pub(super) fn layout(module: &Module) -> Result<Layout, LowerError> {
    let mut graph = run_checked(module.graph.clone(), &OutVariants)?;
    legalize_portable_dim_order(&mut graph);
    // to_executorch traces the graph again: a max pool's indices come out in its values' layout
    for i in 0..graph.nodes.len() {
        let n = &graph.nodes[i];
        if n.def().map(|d| d.name) == Some("aten::max_pool2d_with_indices") {
            if let (Some(&values), Some(&indices)) = (n.outputs.first(), n.outputs.get(1)) {
                graph.values[indices].dim_order = graph.values[values].dim_order.clone();
            }
        }
    }
    let mut storage_of: Vec<ValueId> = (0..graph.values.len()).collect();
    let mut calls = Vec::new();
    for n in &graph.nodes {
        if n.kind != NodeKind::Operator {
            if n.kind == NodeKind::Delegate {
                return Err(err(format!(
                    "{}: delegate calls cannot be written yet",
                    n.name
                )));
            }
            continue;
        }
        match n.def().map(|d| d.name) {
            Some("memory.alloc") => continue,
            // a view of a row-major tensor shares its storage (ExecuTorch's memory.view)
            Some("aten::view_copy") => {
                let (Some(&src), Some(&out)) = (n.inputs.first(), n.outputs.first()) else {
                    return Err(err(format!("{}: a view without input or output", n.name)));
                };
                let (s, o) = (&graph.values[src], &graph.values[out]);
                if contiguous(&s.shape, &s.dim_order) && contiguous(&o.shape, &o.dim_order) {
                    storage_of[out] = storage_of[src];
                    continue;
                }
            }
            _ => {}
        }
        calls.push(Call { node: n.id });
    }
    // lifetimes over instruction indices, per storage
    let last = calls.len().saturating_sub(1);
    let mut life: HashMap<ValueId, (usize, usize)> = HashMap::new();
    let touch = |v: ValueId, at: usize, life: &mut HashMap<ValueId, (usize, usize)>| {
        let e = life.entry(v).or_insert((at, at));
        e.0 = e.0.min(at);
        e.1 = e.1.max(at);
    };
    let planned = |v: ValueId| {
        let val = &graph.values[v];
        val.is_tensor() && val.storage != Storage::Constant
    };
    for &v in &graph.inputs {
        touch(storage_of[v], 0, &mut life);
    }
    for &v in &graph.outputs {
        touch(storage_of[v], last, &mut life);
    }
    for (k, c) in calls.iter().enumerate() {
        let n = &graph.nodes[c.node];
        for v in n
            .inputs
            .iter()
            .chain(&n.outputs)
            .copied()
            .filter(|&v| planned(v))
        {
            touch(storage_of[v], k, &mut life);
        }
    }
    // a view's reads and writes count for its base (`storage_of` above): place the bases
    let mut order: Vec<(ValueId, u64)> = Vec::new();
    for &v in life.keys() {
        order.push((v, nbytes(&graph, v)?));
    }
    order.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut placed: Vec<(u64, u64, usize, usize)> = Vec::new();
    let mut offsets = HashMap::new();
    let mut arena = 0u64;
    for (v, size) in order {
        let (s, e) = life[&v];
        let mut offset = 0u64;
        loop {
            let clash = placed.iter().find(|&&(o, z, ps, pe)| {
                ps <= e
                    && s <= pe
                    && offset < o.saturating_add(z)
                    && o < offset.saturating_add(size.max(1))
            });
            match clash {
                Some(&(o, z, _, _)) => offset = align(o.saturating_add(z), TENSOR_ALIGN),
                None => break,
            }
        }
        placed.push((offset, size, s, e));
        offsets.insert(v, offset);
        arena = arena.max(align(offset.saturating_add(size), TENSOR_ALIGN));
    }
    if arena > u64::from(u32::MAX) {
        return Err(err(format!(
            "the planned tensors need an arena of {arena} bytes, more than a 32-bit core addresses"
        )));
    }
    Ok(Layout {
        graph,
        calls,
        storage_of,
        offsets,
        arena,
    })
}
