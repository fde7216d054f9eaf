//! Logical layout from what the program says, never from shapes: for every tensor, the
//! model's dims in the order its sizes list them. Graph inputs and constants are in the
//! model's order; each operator's registry [`LayoutRule`] says what its output is — the same
//! order as its input, NHWC of the model's NCHW (the explicit-layout flow's `_nhwc` operators),
//! a permutation of its input's (`transpose`, `permute_copy`), or a new tensor (views, matrix
//! products). A diff then brings both sides into the model's order, even when a tensor's
//! channel count equals its height and width and the shapes alone cannot tell.

use super::{ArgData, Graph, NodeKind};
use crate::ops::LayoutRule;

/// The model's order of a rank.
fn identity(rank: usize) -> Vec<usize> {
    (0..rank).collect()
}

/// Sets `logical_order` on every tensor value the nodes define, in node order.
pub fn derive_logical_orders(g: &mut Graph) {
    for v in &mut g.values {
        v.logical_order = None;
        if v.is_tensor() && v.producer.is_none() {
            // inputs, constants, state: as the model has them
            v.logical_order = Some(identity(v.shape.len()));
        }
    }
    for i in 0..g.nodes.len() {
        let node = &g.nodes[i];
        let input_order = node
            .inputs
            .first()
            .and_then(|&v| g.values.get(v))
            .and_then(|v| v.logical_order.clone());
        let rule = match node.kind {
            NodeKind::Operator => node.def().map_or(LayoutRule::Reset, |d| d.layout),
            NodeKind::Input | NodeKind::Move => LayoutRule::Keep,
            _ => LayoutRule::Reset,
        };
        let perm = match rule {
            LayoutRule::Permute(k) => match node.args.get(k).map(|a| &a.data) {
                Some(ArgData::Ints(p)) => p
                    .iter()
                    .map(|x| x.and_then(|x| usize::try_from(x).ok()))
                    .collect::<Option<Vec<usize>>>(),
                _ => None,
            },
            _ => None,
        };
        let outputs = node.outputs.clone();
        for o in outputs {
            let Some(rank) = g.values.get(o).map(|v| v.shape.len()) else {
                continue;
            };
            let order = match rule {
                LayoutRule::Reset => Some(identity(rank)),
                LayoutRule::ChannelsLast if rank == 4 => Some(vec![0, 2, 3, 1]),
                LayoutRule::ChannelsLast => Some(identity(rank)),
                LayoutRule::Keep => input_order
                    .clone()
                    .filter(|o| o.len() == rank)
                    .or_else(|| Some(identity(rank))),
                LayoutRule::Permute(_) => match (&input_order, &perm) {
                    (Some(inp), Some(p)) if p.len() == rank && inp.len() == rank => {
                        p.iter().map(|&d| inp.get(d).copied()).collect()
                    }
                    _ => None,
                },
            };
            if let Some(v) = g.values.get_mut(o) {
                if v.producer == Some(node.id) || node.kind == NodeKind::Input {
                    v.logical_order = order;
                }
            }
        }
    }
    // views share their source's order where the ranks agree
    for v in 0..g.values.len() {
        if let Some(src) = g.values[v].alias_of {
            let rank = g.values[v].shape.len();
            let order = g
                .values
                .get(src)
                .and_then(|s| s.logical_order.clone())
                .filter(|o| o.len() == rank && g.values[src].shape == g.values[v].shape);
            g.values[v].logical_order = order.or_else(|| Some(identity(rank)));
        }
    }
}
