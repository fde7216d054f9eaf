//! RemovePermutesAroundElementwiseOps (`backends/transforms/remove_permutes_around_elementwise_ops.py`
//! in ExecuTorch 1.5.1): a region of element-wise operators entered only through permutes of one
//! permutation and left only through permutes of its inverse (or into permutes that can absorb
//! it) computes the same in the unpermuted layout, so those permutes are removed. The region
//! grows from each permute's readers downstream and upstream through permutable operators (the
//! ATen pointwise ones — the registry's element-wise trait —, Q/DQ, `cat`, `slice_copy`,
//! constant padding, `mean`/`sum` keeping their dims, views that only add or drop unit dims); a
//! constant input gets a compensating permute, a one-element input needs none; a region that
//! reaches the graph's output or an operator that is not permutable is left alone. Dim arguments
//! inside the region (`cat`, `slice_copy`, `mean`/`sum`, pads, unit-dim views) are mapped back
//! to the unpermuted layout. ExecuTorch's special case for `repeat_interleave` triples is not
//! reproduced: such a region is left alone.

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::{ArgData, Graph, NodeId, NodeKind, Storage, ValueId};

use super::super::edit::{
    ints_arg, make_node, new_tensor, op_name, pos, pos_in, set_nodes, unique_name,
};
use super::super::{LowerError, Module, Options, Pass};
use super::LAYOUT_PERMUTE;

pub struct RemovePermutesAroundElementwise;

type Perm = Vec<usize>;

#[derive(Debug, Default, Clone)]
struct Subgraph {
    start: Perm,
    end: Perm,
    nodes: BTreeSet<NodeId>,
    edges_in: BTreeSet<(NodeId, NodeId)>,
    edges_out: BTreeSet<(NodeId, NodeId)>,
    edges_out_to_update: BTreeSet<(NodeId, NodeId, Vec<usize>)>,
    constant_edges_in: BTreeSet<(ValueId, NodeId)>,
    node_end: BTreeMap<NodeId, Perm>,
    node_start: BTreeMap<NodeId, Perm>,
}

fn is_permute(g: &Graph, n: NodeId) -> bool {
    g.nodes[n].kind == NodeKind::Operator
        && matches!(op_name(&g.nodes[n]), LAYOUT_PERMUTE | "aten::permute_copy")
}

fn is_view(g: &Graph, n: NodeId) -> bool {
    matches!(op_name(&g.nodes[n]), "aten::view_copy" | "aten::view")
}

fn inverse(p: &[usize]) -> Perm {
    let mut inv = vec![0; p.len()];
    for (i, &d) in p.iter().enumerate() {
        inv[d] = i;
    }
    inv
}

/// A permute's normalised permutation.
fn permutation(g: &Graph, n: NodeId) -> Option<Perm> {
    let raw = ints_arg(&g.nodes[n], pos(&g.nodes[n], "dims"))?;
    super::view_map::normalize_permutation(&raw, raw.len())
}

fn out_shape(g: &Graph, n: NodeId) -> Option<&[i64]> {
    g.nodes[n]
        .outputs
        .first()
        .map(|&o| g.values[o].shape.as_slice())
}

fn in_shape(g: &Graph, n: NodeId) -> Option<&[i64]> {
    super::super::edit::tensor_arg(&g.nodes[n], 0).map(|x| g.values[x].shape.as_slice())
}

/// Readers of node `n`'s outputs, in node order, once each.
fn users(g: &Graph, n: NodeId) -> Vec<NodeId> {
    let mut out: Vec<NodeId> = g.nodes[n]
        .outputs
        .iter()
        .flat_map(|&o| g.values[o].consumers.iter().copied())
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

fn feeds_output(g: &Graph, n: NodeId) -> bool {
    g.nodes[n].outputs.iter().any(|o| g.outputs.contains(o))
}

/// Positions in `longer` whose removal leaves `shorter`, each a unit dim.
fn extra_ones(longer: &[i64], shorter: &[i64]) -> Option<Vec<usize>> {
    let mut extra = Vec::new();
    let mut j = 0;
    for (i, &d) in longer.iter().enumerate() {
        if j < shorter.len() && d == shorter[j] {
            j += 1;
            continue;
        }
        if d != 1 {
            return None;
        }
        extra.push(i);
    }
    (j == shorter.len()).then_some(extra)
}

/// A view that only adds or drops unit dims.
fn squeeze_unsqueeze_view(g: &Graph, n: NodeId) -> bool {
    if !is_view(g, n) {
        return false;
    }
    let (Some(i), Some(o)) = (in_shape(g, n), out_shape(g, n)) else {
        return false;
    };
    match o.len().cmp(&i.len()) {
        std::cmp::Ordering::Greater => extra_ones(o, i).is_some(),
        std::cmp::Ordering::Less => extra_ones(i, o).is_some(),
        std::cmp::Ordering::Equal => false,
    }
}

/// A reshape of a tensor with at most one dim above one: every layout gives the same elements.
fn permutation_sink_view(g: &Graph, n: NodeId) -> bool {
    is_view(g, n) && in_shape(g, n).is_some_and(|s| s.iter().filter(|&&d| d != 1).count() <= 1)
}

fn numel(g: &Graph, v: ValueId) -> i64 {
    g.values[v].shape.iter().product()
}

/// The node's argument `k` as an int.
fn int_at(g: &Graph, n: NodeId, k: usize) -> Option<i64> {
    match g.nodes[n].args.get(k).map(|a| &a.data) {
        Some(ArgData::Int(i)) => Some(*i),
        _ => None,
    }
}

fn bool_at(g: &Graph, n: NodeId, k: usize) -> bool {
    matches!(
        g.nodes[n].args.get(k).map(|a| &a.data),
        Some(ArgData::Bool(true))
    )
}

fn permutable(g: &Graph, n: NodeId) -> bool {
    let node = &g.nodes[n];
    if node.kind != NodeKind::Operator {
        return false;
    }
    let op = op_name(node);
    match op {
        "aten::constant_pad_nd" => {
            ints_arg(node, pos(node, "pad")).is_some_and(|p| p.len() % 2 == 0)
        }
        "aten::pad" => {
            let mode = node.args.get(pos(node, "mode")).map(|a| &a.data);
            let constant = matches!(mode, None | Some(ArgData::None))
                || matches!(mode, Some(ArgData::Str(s)) if s == "constant");
            constant && ints_arg(node, pos(node, "pad")).is_some_and(|p| p.len() % 2 == 0)
        }
        "aten::mean" | "aten::sum" => pos_in(node, "keepdim").is_some_and(|k| bool_at(g, n, k)),
        // the registry's column (by name: a pass may have renamed the node's operator)
        _ if crate::ops::lookup(op, "")
            .is_some_and(|id| crate::ops::def(id).cortex_m.permute_transparent) =>
        {
            true
        }
        _ => squeeze_unsqueeze_view(g, n) || node.def().is_some_and(|d| d.traits.elementwise),
    }
}

/// Whether dropping the layout at a sink view is safe for everything downstream of it.
fn sink_users_layout_invariant(g: &Graph, sink: NodeId) -> bool {
    let mut frontier: Vec<(NodeId, NodeId)> =
        users(g, sink).into_iter().map(|u| (u, sink)).collect();
    if feeds_output(g, sink) {
        // the graph's output reads it: nothing further depends on its layout there
    }
    let mut visited = BTreeSet::new();
    while let Some((n, producer)) = frontier.pop() {
        if !visited.insert(n) {
            continue;
        }
        if op_name(&g.nodes[n]) == "aten::permute_copy" || permutation_sink_view(g, n) {
            continue;
        }
        let produced_by = |v: ValueId| g.values[v].producer;
        let other_inputs_scalar = g.nodes[n]
            .inputs
            .iter()
            .all(|&v| produced_by(v) == Some(producer) || numel(g, v) == 1);
        if !other_inputs_scalar || !permutable(g, n) {
            return false;
        }
        frontier.extend(users(g, n).into_iter().map(|u| (u, n)));
    }
    true
}

/// A permutation carried across a unit-dim view, from its input rank to its output rank.
fn adapt_across_view(g: &Graph, perm: &[usize], n: NodeId) -> Option<Perm> {
    let (i, o) = (in_shape(g, n)?, out_shape(g, n)?);
    if perm.len() != i.len() {
        return None;
    }
    if o.len() > i.len() {
        let mut p: Vec<usize> = perm.to_vec();
        for index in extra_ones(o, i)? {
            p = p
                .into_iter()
                .map(|x| if x >= index { x + 1 } else { x })
                .collect();
            p.insert(index, index);
        }
        return Some(p);
    }
    if i.len() > o.len() {
        let positions = extra_ones(i, o)?;
        if positions.last().is_some_and(|&l| l >= perm.len()) {
            return None;
        }
        let squeezed: BTreeSet<usize> = positions.iter().map(|&p| perm[p]).collect();
        return Some(
            perm.iter()
                .filter(|x| !squeezed.contains(x))
                .map(|&x| x - squeezed.iter().filter(|&&v| v < x).count())
                .collect(),
        );
    }
    None
}

struct Finder<'a> {
    g: &'a Graph,
    constants: &'a BTreeMap<ValueId, crate::tensor::TensorData>,
}

impl Finder<'_> {
    /// An input value known when the program is built: a weight or constant, or a `full`.
    fn constant(&self, v: ValueId) -> bool {
        self.constants.contains_key(&v)
            || matches!(self.g.values[v].storage, Storage::Constant)
            || self.g.values[v]
                .producer
                .is_some_and(|p| op_name(&self.g.nodes[p]) == "aten::full")
    }

    fn visit(
        &self,
        n: NodeId,
        sg: &mut Subgraph,
        processed: &BTreeSet<NodeId>,
        cur_end: &Perm,
        cur_start: &Perm,
    ) -> bool {
        let g = self.g;
        if sg.nodes.contains(&n) {
            return true;
        }
        if processed.contains(&n) || !permutable(g, n) {
            return false;
        }
        if !squeeze_unsqueeze_view(g, n)
            && out_shape(g, n).is_some_and(|s| s.len() != cur_start.len())
        {
            return false;
        }
        sg.nodes.insert(n);
        sg.node_end.insert(n, cur_end.clone());
        sg.node_start.insert(n, cur_start.clone());
        let (mut down_end, mut down_start) = (cur_end.clone(), cur_start.clone());
        if squeeze_unsqueeze_view(g, n) {
            let Some(adapted) = adapt_across_view(g, cur_start, n) else {
                return false;
            };
            down_end = inverse(&adapted);
            down_start = adapted;
        }
        if feeds_output(g, n) {
            return false;
        }
        for u in users(g, n) {
            if is_permute(g, u) {
                let up = permutation(g, u);
                if up.as_ref() == Some(&down_end) {
                    sg.edges_out.insert((n, u));
                } else {
                    let Some(up) = up.filter(|p| p.len() == down_start.len()) else {
                        return false;
                    };
                    let new: Vec<usize> = up.iter().map(|&d| down_start[d]).collect();
                    sg.edges_out_to_update.insert((n, u, new));
                }
            } else if permutation_sink_view(g, u) {
                if !sink_users_layout_invariant(g, u) {
                    return false;
                }
            } else if !self.visit(u, sg, processed, &down_end, &down_start) {
                return false;
            }
        }
        let mut inputs = g.nodes[n].inputs.clone();
        inputs.dedup();
        for v in inputs {
            match g.values[v].producer {
                Some(p) if is_permute(g, p) => {
                    if permutation(g, p).as_ref() != Some(cur_start) {
                        return false;
                    }
                    sg.edges_in.insert((p, n));
                }
                _ if numel(g, v) == 1 => {}
                _ if self.constant(v) => {
                    let rank = g.values[v].shape.len();
                    if rank > cur_end.len() {
                        return false;
                    }
                    sg.constant_edges_in.insert((v, n));
                }
                Some(p) => {
                    if !self.visit(p, sg, processed, cur_end, cur_start) {
                        return false;
                    }
                }
                None => return false,
            }
        }
        true
    }
}

/// Python's index of `perm` by a possibly negative `i`.
fn pick(perm: &[usize], i: i64) -> Option<i64> {
    let k = if i < 0 { i + perm.len() as i64 } else { i };
    usize::try_from(k)
        .ok()
        .and_then(|k| perm.get(k))
        .map(|&d| d as i64)
}

fn set_arg(g: &mut Graph, n: NodeId, k: usize, data: ArgData) {
    if let Some(a) = g.nodes[n].args.get_mut(k) {
        a.data = data;
    }
}

fn ints(v: Vec<i64>) -> ArgData {
    ArgData::Ints(v.into_iter().map(Some).collect())
}

/// Maps the dim arguments of the region's nodes to the unpermuted layout.
fn update_dims(g: &mut Graph, n: NodeId, start: &[usize]) {
    match op_name(&g.nodes[n]) {
        "aten::cat" | "aten::slice_copy" => {
            let k = pos(&g.nodes[n], "dim");
            if let Some(d) = int_at(g, n, k).and_then(|d| pick(start, d)) {
                set_arg(g, n, k, ArgData::Int(d));
            }
        }
        "aten::mean" | "aten::sum" => {
            let Some(k) = pos_in(&g.nodes[n], "dim") else {
                return;
            };
            if let Some(dims) = ints_arg(&g.nodes[n], k) {
                let mapped: Option<Vec<i64>> = dims.iter().map(|&d| pick(start, d)).collect();
                if let Some(m) = mapped {
                    set_arg(g, n, k, ints(m));
                }
            }
        }
        "aten::constant_pad_nd" | "aten::pad" => {
            let k = pos(&g.nodes[n], "pad");
            let Some(pad) = ints_arg(&g.nodes[n], k) else {
                return;
            };
            let rank = start.len();
            let mut pairs = vec![[0i64, 0]; rank];
            for (k, c) in pad.chunks(2).enumerate() {
                if let (Some(d), [a, b]) = (rank.checked_sub(1 + k), c) {
                    pairs[d] = [*a, *b];
                }
            }
            let inv = inverse(start);
            let remapped: Vec<[i64; 2]> = (0..rank).map(|d| pairs[inv[d]]).collect();
            let mut out: Vec<i64> = remapped
                .iter()
                .rev()
                .flat_map(|p| p.iter().copied())
                .collect();
            while out.len() > 2 && out[out.len() - 2..] == [0, 0] {
                out.truncate(out.len() - 2);
            }
            set_arg(g, n, k, ints(out));
        }
        "aten::view_copy" | "aten::view" => {
            let (Some(i), Some(o)) = (
                in_shape(g, n).map(<[i64]>::to_vec),
                out_shape(g, n).map(<[i64]>::to_vec),
            ) else {
                return;
            };
            if start.len() != i.len() {
                return;
            }
            let inv = inverse(start);
            let unpermuted: Vec<i64> = (0..i.len()).map(|k| i[inv[k]]).collect();
            let shape = if o.len() > i.len() {
                let Some(ones_at) = extra_ones(&o, &i) else {
                    return;
                };
                let mut s = unpermuted;
                for p in ones_at {
                    s.insert(p, 1);
                }
                s
            } else if i.len() > o.len() {
                let Some(ones_at) = extra_ones(&i, &o) else {
                    return;
                };
                if ones_at.last().is_some_and(|&l| l >= start.len()) {
                    return;
                }
                let mut drop: Vec<usize> = ones_at.iter().map(|&p| start[p]).collect();
                drop.sort_unstable_by(|a, b| b.cmp(a));
                let mut s = unpermuted;
                for d in drop {
                    s.remove(d);
                }
                s
            } else {
                return;
            };
            let k = pos(&g.nodes[n], "size");
            set_arg(g, n, k, ints(shape.clone()));
            if let Some(&out) = g.nodes[n].outputs.first() {
                g.values[out].shape = shape;
            }
        }
        _ => {}
    }
}

fn edges_current(g: &Graph, sg: &Subgraph) -> bool {
    let reads = |n: NodeId, from: NodeId| {
        g.nodes[from]
            .outputs
            .iter()
            .any(|o| g.nodes[n].inputs.contains(o))
    };
    sg.edges_in.iter().all(|&(p, n)| {
        is_permute(g, p)
            && reads(n, p)
            && permutation(g, p).as_ref() == Some(sg.node_start.get(&n).unwrap_or(&sg.start))
    }) && sg
        .edges_out
        .iter()
        .all(|&(n, p)| is_permute(g, p) && reads(p, n))
        && sg
            .edges_out_to_update
            .iter()
            .all(|(n, p, _)| is_permute(g, *p) && reads(*p, *n))
        && sg
            .constant_edges_in
            .iter()
            .all(|&(v, n)| g.nodes[n].inputs.contains(&v))
}

fn removes_a_permute(g: &Graph, sg: &Subgraph) -> bool {
    if !sg.edges_out.is_empty() {
        return true;
    }
    sg.edges_in
        .iter()
        .any(|&(p, _)| users(g, p).iter().all(|u| sg.edges_in.contains(&(p, *u))))
}

/// Rewrites one region; whether it did. Compensating permutes of constants are pushed to
/// `added` (each with the node it goes before), placed once every region is rewritten.
fn apply(m: &mut Module, sg: &Subgraph, added: &mut Vec<(NodeId, crate::ir::Node)>) -> bool {
    let g = &mut m.graph;
    if !edges_current(g, sg) || (!sg.edges_out_to_update.is_empty() && !removes_a_permute(g, sg)) {
        return false;
    }
    for &n in &sg.nodes {
        if is_view(g, n) {
            let perm = sg.node_start.get(&n).unwrap_or(&sg.start);
            if in_shape(g, n).is_some_and(|s| s.len() != perm.len()) {
                return false;
            }
        }
    }
    for &n in &sg.nodes {
        let start = sg
            .node_start
            .get(&n)
            .cloned()
            .unwrap_or_else(|| sg.start.clone());
        update_dims(g, n, &start);
    }
    // incoming permutes skipped
    for &(p, n) in &sg.edges_in {
        let (Some(&po), Some(src)) = (
            g.nodes[p].outputs.first(),
            super::super::edit::tensor_arg(&g.nodes[p], 0),
        ) else {
            continue;
        };
        super::super::edit::replace_in_node(&mut g.nodes[n], po, src);
    }
    // constants get a compensating permute (or a view, when of lower rank)
    for &(c, n) in &sg.constant_edges_in {
        let end = sg
            .node_end
            .get(&n)
            .cloned()
            .unwrap_or_else(|| sg.end.clone());
        let shape = g.values[c].shape.clone();
        let dtype = g.values[c].dtype.unwrap_or(crate::ScalarType::Float);
        let (op, arg, new_shape) = if shape.len() == end.len() {
            let s: Vec<i64> = end.iter().map(|&d| shape[d]).collect();
            (
                "aten::permute_copy",
                end.iter().map(|&d| d as i64).collect::<Vec<_>>(),
                s,
            )
        } else if shape.len() < end.len() {
            let mut padded = vec![1i64; end.len() - shape.len()];
            padded.extend(&shape);
            let target: Vec<i64> = end.iter().map(|&d| padded[d]).collect();
            let target = target[end.len() - shape.len()..].to_vec();
            ("aten::view_copy", target.clone(), target)
        } else {
            continue;
        };
        let name = unique_name(
            g,
            if op == "aten::permute_copy" {
                "aten_permute_copy_default"
            } else {
                "aten_view_copy_default"
            },
        );
        let v = new_tensor(g, &name, dtype, new_shape, Vec::new(), Storage::Unplanned);
        added.push((
            n,
            make_node(
                &name,
                op,
                "default",
                vec![ArgData::Tensor(c), ints(arg)],
                vec![v],
            ),
        ));
        super::super::edit::replace_in_node(&mut g.nodes[n], c, v);
    }
    // outgoing permutes skipped: their readers read the region's value
    for &(n, p) in &sg.edges_out {
        let (Some(&po), Some(&no)) = (g.nodes[p].outputs.first(), g.nodes[n].outputs.first())
        else {
            continue;
        };
        super::super::edit::replace_uses(g, po, no);
    }
    for (_, p, new) in &sg.edges_out_to_update {
        let k = pos(&g.nodes[*p], "dims");
        set_arg(g, *p, k, ints(new.iter().map(|&d| d as i64).collect()));
    }
    // region values take the unpermuted shapes
    for &n in &sg.nodes {
        if is_view(g, n) {
            continue;
        }
        let start = sg
            .node_start
            .get(&n)
            .cloned()
            .unwrap_or_else(|| sg.start.clone());
        if let Some(&o) = g.nodes[n].outputs.first() {
            let s = g.values[o].shape.clone();
            if s.len() == start.len() {
                let inv = inverse(&start);
                g.values[o].shape = (0..s.len()).map(|k| s[inv[k]]).collect();
            }
        }
    }
    g.relink();
    true
}

impl Pass<Options> for RemovePermutesAroundElementwise {
    fn name(&self) -> &'static str {
        "RemovePermutesAroundElementwiseOps"
    }

    fn run(&self, mut m: Module, _: &Options) -> Result<(Module, bool), LowerError> {
        let mut found = Vec::new();
        {
            let finder = Finder {
                g: &m.graph,
                constants: &m.constants,
            };
            let g = &m.graph;
            let mut processed = BTreeSet::new();
            for p in 0..g.nodes.len() {
                if !is_permute(g, p) {
                    continue;
                }
                let Some(start) = permutation(g, p) else {
                    continue;
                };
                let end = inverse(&start);
                for u in users(g, p) {
                    if !permutable(g, u) {
                        continue;
                    }
                    let mut sg = Subgraph {
                        start: start.clone(),
                        end: end.clone(),
                        ..Subgraph::default()
                    };
                    if finder.visit(u, &mut sg, &processed, &end, &start) {
                        processed.extend(sg.nodes.iter().copied());
                        found.push(sg);
                    }
                }
            }
        }
        let mut changed = false;
        let mut added = Vec::new();
        for sg in &found {
            changed |= apply(&mut m, sg, &mut added);
        }
        if !added.is_empty() {
            let g = &mut m.graph;
            let mut nodes = Vec::with_capacity(g.nodes.len() + added.len());
            for (i, node) in std::mem::take(&mut g.nodes).into_iter().enumerate() {
                for (_, new) in added.iter().filter(|(n, _)| *n == i) {
                    nodes.push(new.clone());
                }
                nodes.push(node);
            }
            set_nodes(g, nodes);
        }
        if changed {
            super::super::edit::remove_dead(&mut m.graph);
        }
        Ok((m, changed))
    }
}
