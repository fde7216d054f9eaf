//! CortexMCanonicalizeViewCopyPermutePass: chains of views and permutes (each the only reader
//! of the one before) fused until nothing changes — a view to its input's shape and an identity
//! permute removed, a permute that only moves unit dims turned into a view, two views into one,
//! two permutes into their composition (an `aten::permute_copy`). ExecuTorch also swaps a view
//! and a permute to expose more fusing; a chain of three or more that still mixes them is
//! refused rather than canonicalised differently.

use crate::ir::{Arg, ArgData, Graph, NodeId, NodeKind};

use super::super::edit::{fail, ints_arg, op_name, remove_dead, replace_uses, tensor_arg};
use super::super::{LowerError, LowerPass, Module, Options};
use super::LAYOUT_PERMUTE;

pub struct Canonicalize;

fn is_view(g: &Graph, n: NodeId) -> bool {
    op_name(&g.nodes[n]) == "aten::view_copy"
}

fn is_permute(g: &Graph, n: NodeId) -> bool {
    matches!(op_name(&g.nodes[n]), LAYOUT_PERMUTE | "aten::permute_copy")
}

fn input_shape(g: &Graph, n: NodeId) -> Vec<i64> {
    tensor_arg(&g.nodes[n], 0).map_or(Vec::new(), |x| g.values[x].shape.clone())
}

fn output_shape(g: &Graph, n: NodeId) -> Vec<i64> {
    g.nodes[n]
        .outputs
        .first()
        .map_or(Vec::new(), |&o| g.values[o].shape.clone())
}

/// Whether permuting `shape` by `dims` keeps every dim larger than one in its order.
fn singleton_permutation(shape: &[i64], dims: &[i64]) -> bool {
    let big: Vec<i64> = dims
        .iter()
        .copied()
        .filter(|&d| shape.get(d as usize).is_some_and(|&s| s != 1))
        .collect();
    big.windows(2).all(|w| w[0] < w[1])
}

/// Rewrites node `n` into `op(input, arg)`.
fn set(g: &mut Graph, n: NodeId, op: &str, input: usize, arg: Vec<i64>) {
    let node = &mut g.nodes[n];
    node.set_op(op, "default");
    let second = if op == "aten::view_copy" {
        "size"
    } else {
        "dims"
    };
    node.args = vec![
        Arg::new(Some("input".into()), Some(input), ArgData::Tensor(input)),
        Arg::new(
            Some(second.into()),
            None,
            ArgData::Ints(arg.into_iter().map(Some).collect()),
        ),
    ];
    node.inputs = vec![input];
}

/// Removes node `n` from the chain, its readers reading `replacement` instead.
fn bypass(g: &mut Graph, n: NodeId, replacement: usize) {
    if let Some(&o) = g.nodes[n].outputs.first() {
        replace_uses(g, o, replacement);
    }
    g.relink();
}

impl LowerPass for Canonicalize {
    fn name(&self) -> &'static str {
        "CortexMCanonicalizeViewCopyPermutePass"
    }

    fn run(&self, mut m: Module, _: &Options) -> Result<(Module, bool), LowerError> {
        let g = &mut m.graph;
        // chains: each starts at a view/permute, follows single readers that are one too
        let mut seen = vec![false; g.nodes.len()];
        let mut chains: Vec<Vec<NodeId>> = Vec::new();
        for n in 0..g.nodes.len() {
            if seen[n]
                || g.nodes[n].kind != NodeKind::Operator
                || !(is_view(g, n) || is_permute(g, n))
            {
                continue;
            }
            let mut chain = vec![n];
            seen[n] = true;
            let mut cur = n;
            while let Some(&o) = g.nodes[cur].outputs.first() {
                let users = &g.values[o].consumers;
                if users.len() != 1 || g.outputs.contains(&o) {
                    break;
                }
                let u = users[0];
                if !(is_view(g, u) || is_permute(g, u)) || seen[u] {
                    break;
                }
                seen[u] = true;
                chain.push(u);
                cur = u;
            }
            chains.push(chain);
        }
        let mut changed = false;
        for mut chain in chains {
            loop {
                let mut step = false;
                let mut i = 0;
                while i < chain.len() {
                    let n = chain[i];
                    let Some(x) = tensor_arg(&g.nodes[n], 0) else {
                        break;
                    };
                    let in_shape = input_shape(g, n);
                    if is_view(g, n) && in_shape == output_shape(g, n) {
                        bypass(g, n, x);
                        chain.remove(i);
                        step = true;
                        continue;
                    }
                    if is_permute(g, n) {
                        let rank = in_shape.len() as i64;
                        let dims: Vec<i64> = ints_arg(&g.nodes[n], 1)
                            .unwrap_or_default()
                            .iter()
                            .map(|d| d.rem_euclid(rank.max(1)))
                            .collect();
                        if dims.iter().enumerate().all(|(k, &d)| d == k as i64) {
                            bypass(g, n, x);
                            chain.remove(i);
                            step = true;
                            continue;
                        }
                        if singleton_permutation(&in_shape, &dims) {
                            let out = output_shape(g, n);
                            set(g, n, "aten::view_copy", x, out);
                            step = true;
                            continue;
                        }
                    }
                    if i + 1 < chain.len() {
                        let next = chain[i + 1];
                        let fused = if is_view(g, n) && is_view(g, next) {
                            Some(("aten::view_copy", output_shape(g, next)))
                        } else if is_permute(g, n) && is_permute(g, next) {
                            let d1 = ints_arg(&g.nodes[n], 1).unwrap_or_default();
                            let d2 = ints_arg(&g.nodes[next], 1).unwrap_or_default();
                            let composed = d2
                                .iter()
                                .map(|&d| d1.get(d as usize).copied().unwrap_or(d))
                                .collect();
                            Some(("aten::permute_copy", composed))
                        } else {
                            None
                        };
                        if let Some((op, arg)) = fused {
                            // one call does both: it writes what the second wrote
                            set(g, n, op, x, arg);
                            let keep = g.nodes[n].outputs[0];
                            let second = g.nodes[next].outputs[0];
                            g.values[keep].shape = g.values[second].shape.clone();
                            replace_uses(g, second, keep);
                            g.relink();
                            chain.remove(i + 1);
                            step = true;
                            continue;
                        }
                    }
                    i += 1;
                }
                changed |= step;
                if !step {
                    break;
                }
            }
            let mixed = chain.len() > 2
                && chain.iter().any(|&n| is_view(g, n))
                && chain.iter().any(|&n| is_permute(g, n));
            if mixed {
                return Err(fail(
                    self.name(),
                    format!(
                        "{}: a view/permute chain that needs reordering is not canonicalised by etscope yet",
                        g.nodes[chain[0]].name
                    ),
                ));
            }
        }
        if changed {
            remove_dead(&mut m.graph);
        }
        Ok((m, changed))
    }
}
