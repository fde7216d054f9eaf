//! How the diff matches two graphs' nodes into groups compared as one: a program and its
//! rewrite by the pass's own node map, a stage and a program of one export by debug handle
//! (N:M where operators were fused or split, a fused activation absorbed into its producer),
//! two programs of one model by the quantity each node's output stands for (the model's tensor
//! the quantizer observed, [`crate::ir::quantity`]), else by the module that produced them.

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::quantity::Quantity;
use crate::ir::{Graph, Node, NodeId, NodeKind};

/// A match: module path (if matched by module), debug handles, A's and B's nodes.
pub(super) type Group = (Vec<String>, Vec<u32>, Vec<NodeId>, Vec<NodeId>);

/// A program and a pass's rewrite of it (another stage of the same plan: surviving nodes keep
/// their instruction ids, with the same operator): matched instruction by instruction, the
/// nodes only one side has joining the group they follow. `None` when the graphs are not that.
pub(super) fn rewrite_groups(a: &Graph, b: &Graph) -> Option<Vec<Group>> {
    if a.stage == b.stage
        || a.method != b.method
        || a.instruction_count == 0
        || b.instruction_count == 0
    {
        return None;
    }
    let in_b: BTreeMap<usize, &Node> = operator_nodes(b)
        .into_iter()
        .filter_map(|n| n.instruction_id.map(|i| (i, n)))
        .collect();
    // the instructions a pass merged into a node of B (its provenance) join that node's group
    let merged_into: BTreeMap<usize, usize> = operator_nodes(b)
        .into_iter()
        .filter_map(|m| m.instruction_id.map(|i| (m, i)))
        .flat_map(|(m, i)| {
            m.came_from
                .iter()
                .filter_map(move |o| o.instruction_id.map(|from| (from, i)))
        })
        .collect();
    let mut groups: Vec<Group> = Vec::new();
    let mut group_of: BTreeMap<usize, usize> = BTreeMap::new();
    let mut pending: Vec<(usize, NodeId)> = Vec::new();
    for n in operator_nodes(a) {
        let Some(i) = n.instruction_id else { continue };
        if let Some(&into) = merged_into.get(&i) {
            pending.push((into, n.id));
            continue;
        }
        let Some(m) = in_b.get(&i) else { continue };
        if m.op != n.op {
            return None;
        }
        group_of.insert(i, groups.len());
        groups.push((Vec::new(), Vec::new(), vec![n.id], vec![m.id]));
    }
    for (into, node) in pending {
        let g = group_of.get(&into).copied()?;
        groups[g].2.push(node);
        groups[g].2.sort_unstable();
    }
    (!groups.is_empty()).then(|| absorb_fused(a, b, groups))
}

/// Groups nodes of A and B that share debug handles (transitively): N:M matches within one
/// export (a stage and the program lowered from it).
pub(super) fn handle_groups(a: &Graph, b: &Graph) -> Vec<Group> {
    let mut parent: BTreeMap<u32, u32> = BTreeMap::new();
    fn find(p: &mut BTreeMap<u32, u32>, x: u32) -> u32 {
        let mut r = x;
        while let Some(&q) = p.get(&r) {
            if q == r {
                break;
            }
            r = q;
        }
        p.insert(x, r);
        r
    }
    for g in [a, b] {
        for n in operator_nodes(g) {
            for &h in &n.debug_handles {
                parent.entry(h).or_insert(h);
            }
            if let Some((&first, rest)) = n.debug_handles.split_first() {
                for &h in rest {
                    let (ra, rb) = (find(&mut parent, first), find(&mut parent, h));
                    parent.insert(ra, rb);
                }
            }
        }
    }
    type Sides = (BTreeSet<u32>, BTreeSet<NodeId>, BTreeSet<NodeId>);
    let mut groups: BTreeMap<u32, Sides> = BTreeMap::new();
    for (side, g) in [a, b].into_iter().enumerate() {
        for n in operator_nodes(g) {
            let Some(&h) = n.debug_handles.first() else {
                continue;
            };
            let root = find(&mut parent, h);
            let e = groups.entry(root).or_default();
            e.0.extend(&n.debug_handles);
            if side == 0 {
                e.1.insert(n.id);
            } else {
                e.2.insert(n.id);
            }
        }
    }
    let mut out: Vec<Group> = groups
        .into_values()
        .filter(|(_, x, y)| !x.is_empty() && !y.is_empty())
        .map(|(h, x, y)| {
            (
                Vec::new(),
                h.into_iter().collect(),
                x.into_iter().collect(),
                y.into_iter().collect(),
            )
        })
        .collect();
    out.sort_by_key(|g| g.2.iter().max().copied().unwrap_or(0));
    absorb_fused(a, b, out)
}

/// Fusion-aware ends of N:M groups: a node that only one side has (its module has no
/// counterpart: a batch norm folded into a quantized convolution, a ReLU fused into it, the
/// Q/DQ pair around an op) and that is the single consumer of a group's last node joins that
/// group, so the group compares the same quantity on both sides (conv + bn + relu against the
/// one fused op).
pub(super) fn absorb_fused(a: &Graph, b: &Graph, mut groups: Vec<Group>) -> Vec<Group> {
    let extend = |g: &Graph, covered: &BTreeSet<NodeId>, nodes: &mut Vec<NodeId>| {
        for _ in 0..64 {
            let Some(&last) = nodes.iter().max() else {
                return;
            };
            let consumers: BTreeSet<NodeId> = g
                .nodes
                .get(last)
                .into_iter()
                .flat_map(|n| &n.outputs)
                .filter_map(|&v| g.values.get(v))
                .flat_map(|v| v.consumers.iter().copied())
                .collect();
            let [next] = consumers.into_iter().collect::<Vec<_>>()[..] else {
                return;
            };
            // only what computes from the group alone (an activation, a batch norm, a Q/DQ):
            // an op that also reads another branch (a residual add, a concatenation) would
            // mix that branch into the group's quantity
            let from_group_only = |n: &crate::ir::Node| {
                n.inputs.iter().all(|&v| {
                    g.values.get(v).is_some_and(|val| {
                        val.storage == crate::ir::Storage::Constant
                            || val.producer.is_some_and(|p| nodes.contains(&p))
                    })
                })
            };
            let absorbable = g.nodes.get(next).is_some_and(|n| {
                matches!(n.kind, NodeKind::Operator)
                    && !covered.contains(&next)
                    && from_group_only(n)
            });
            if !absorbable {
                return;
            }
            nodes.push(next);
        }
    };
    let covered_a: BTreeSet<NodeId> = groups.iter().flat_map(|g| g.2.iter().copied()).collect();
    let covered_b: BTreeSet<NodeId> = groups.iter().flat_map(|g| g.3.iter().copied()).collect();
    for g in &mut groups {
        extend(a, &covered_a, &mut g.2);
        extend(b, &covered_b, &mut g.3);
    }
    groups
}

/// Groups nodes by the innermost module that produced them; a group on each side with the same
/// module path is one match (N:M), compared at the group's last node.
pub(super) fn module_groups(a: &Graph, b: &Graph) -> Vec<Group> {
    let by_module = |g: &Graph| {
        let mut m: BTreeMap<String, (BTreeSet<u32>, Vec<NodeId>)> = BTreeMap::new();
        for n in operator_nodes(g) {
            let Some(path) = n.innermost_module() else {
                continue;
            };
            let e = m.entry(path.to_string()).or_default();
            e.0.extend(&n.debug_handles);
            e.1.push(n.id);
        }
        m
    };
    let (ma, mb) = (by_module(a), by_module(b));
    let mut out: Vec<Group> = ma
        .into_iter()
        .filter_map(|(path, (ha, ia))| {
            let (hb, ib) = mb.get(&path)?;
            let handles: BTreeSet<u32> = ha.union(hb).copied().collect();
            Some((vec![path], handles.into_iter().collect(), ia, ib.clone()))
        })
        .collect();
    out.sort_by_key(|g| g.2.iter().max().copied().unwrap_or(0));
    absorb_fused(a, b, out)
}

/// Two programs of one model matched by quantity: a group ends where both hold the same tensor
/// of the model (a convolution with a fused ReLU and the float ReLU after a convolution and a
/// batch norm), compared at each side's last node holding it (a group's nodes are its holders
/// and what flows into them, so its last node is a holder); a node that holds no quantity of
/// the other side (the batch norm, a layout change, a quantize) joins the group its output
/// flows into. `None` when the graphs share no quantity (no ETRecords).
/// Groups of two programs no ETRecord describes, by the quantities their structure shows
/// ([`crate::ir::quantity_structure`]); `None` when it cannot tell them.
pub(super) fn structure_groups(a: &Graph, b: &Graph) -> Option<Vec<Group>> {
    let (qa, qb) = crate::ir::quantity_structure::structural_quantities(a, b)?;
    let with = |g: &Graph, q: Vec<Option<Quantity>>| {
        let mut g = g.clone();
        for (n, q) in g.nodes.iter_mut().zip(q) {
            n.quantity = q;
        }
        g
    };
    quantity_groups(&with(a, qa), &with(b, qb))
}

pub(super) fn quantity_groups(a: &Graph, b: &Graph) -> Option<Vec<Group>> {
    let holders = |g: &Graph| {
        let mut m: BTreeMap<Quantity, Vec<NodeId>> = BTreeMap::new();
        for n in operator_nodes(g) {
            if let Some(q) = &n.quantity {
                m.entry(q.clone()).or_default().push(n.id);
            }
        }
        m
    };
    let (ha, hb) = (holders(a), holders(b));
    let mut common: Vec<(NodeId, Quantity)> = ha
        .iter()
        .filter(|(q, _)| hb.contains_key(*q))
        .filter_map(|(q, ns)| Some((*ns.iter().max()?, q.clone())))
        .collect();
    if common.is_empty() {
        return None;
    }
    common.sort();
    let index: BTreeMap<&Quantity, usize> = common
        .iter()
        .enumerate()
        .map(|(i, (_, q))| (q, i))
        .collect();
    let ga = assign_downstream(a, &ha, &index);
    let gb = assign_downstream(b, &hb, &index);
    let mut groups: Vec<Group> = common
        .iter()
        .map(|_| (Vec::new(), Vec::new(), Vec::new(), Vec::new()))
        .collect();
    for (side, assigned) in [ga, gb].into_iter().enumerate() {
        for (n, g) in assigned.into_iter().enumerate() {
            let Some(g) = g else { continue };
            if side == 0 {
                groups[g].2.push(n);
            } else {
                groups[g].3.push(n);
            }
        }
    }
    // a row is named by a module path (what `eval` lists and `--keep-float` takes): its
    // weighted layer's module, else the compared tensor's, else the tensor itself (`sigmoid`,
    // `relu #1` for functions of `forward`)
    for (g, (_, q)) in groups.iter_mut().zip(&common) {
        let weighted = g.2.iter().find_map(|&n| {
            let node = a.nodes.get(n)?;
            crate::ops::traits_of(&node.op)
                .weighted
                .then(|| node.innermost_module())
                .flatten()
        });
        let name = match weighted {
            Some(m) => m.to_string(),
            None if !q.module.is_empty() && q.call == 0 => q.module.clone(),
            None => q.label(),
        };
        g.0 = vec![name];
    }
    Some(groups)
}

/// Each operator node's group: the group of the quantity it holds, else the earliest group
/// its output flows into (looking through views); `None` for nodes whose output reaches no
/// group (what follows the last compared quantity: the output rows judge it).
fn assign_downstream(
    g: &Graph,
    holders: &BTreeMap<Quantity, Vec<NodeId>>,
    index: &BTreeMap<&Quantity, usize>,
) -> Vec<Option<usize>> {
    let mut group: Vec<Option<usize>> = vec![None; g.nodes.len()];
    for (q, ns) in holders {
        if let Some(&i) = index.get(q) {
            for &n in ns {
                group[n] = Some(i);
            }
        }
    }
    let mut views: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (v, info) in g.values.iter().enumerate() {
        if let Some(src) = info.alias_of {
            views.entry(src).or_default().push(v);
        }
    }
    let operators: BTreeSet<NodeId> = operator_nodes(g).iter().map(|n| n.id).collect();
    for n in (0..g.nodes.len()).rev() {
        if group[n].is_some() || !operators.contains(&n) {
            continue;
        }
        let mut values: Vec<usize> = g.nodes[n].outputs.clone();
        let mut k = 0;
        while k < values.len() && values.len() < 256 {
            if let Some(vs) = views.get(&values[k]) {
                values.extend(vs);
            }
            k += 1;
        }
        group[n] = values
            .iter()
            .filter_map(|&v| g.values.get(v))
            .flat_map(|v| v.consumers.iter())
            .filter_map(|&c| group.get(c).copied().flatten())
            .min();
    }
    group
}

pub(super) fn operator_nodes(g: &Graph) -> Vec<&crate::ir::Node> {
    g.nodes
        .iter()
        .filter(|n| {
            matches!(n.kind, NodeKind::Operator | NodeKind::Delegate) && n.op != "memory.alloc"
        })
        .collect()
}
