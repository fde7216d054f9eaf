//! CortexMCanonicalizeViewCopyPermutePass: chains of views and permutes (each the only reader
//! of the one before) fused until nothing changes — a view to its input's shape and an identity
//! permute removed, a permute that only moves unit dims turned into a view, two views into one,
//! two permutes into their composition (an `aten::permute_copy`), a lone view that only inserts
//! unit dims sunk below the permute after it (so layout boundaries reached from different ranks
//! meet on one permute); in a longer chain the first view/permute pair that can be swapped
//! ([`ViewMap`]) is, and fusing starts again.

use crate::ir::{Arg, ArgData, Graph, NodeId, NodeKind};

use super::super::edit::{ints_arg, op_name, pos, remove_dead, replace_uses, tensor_arg};
use super::super::{LowerError, Module, Options, Pass};
use super::view_map::{normalize_permutation, ViewMap};
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

/// Rewrites node `n` into `op(input, arg)` and gives its output the shape that computes.
fn set_with_shape(g: &mut Graph, n: NodeId, op: &str, input: usize, arg: Vec<i64>) {
    let in_shape = g.values[input].shape.clone();
    let shape = if op == "aten::view_copy" {
        arg.clone()
    } else {
        arg.iter()
            .map(|&d| in_shape.get(d as usize).copied().unwrap_or(1))
            .collect()
    };
    set(g, n, op, input, arg);
    if let Some(&o) = g.nodes[n].outputs.first() {
        g.values[o].shape = shape;
    }
}

fn inverse(perm: &[usize]) -> Vec<usize> {
    let mut inv = vec![0; perm.len()];
    for (i, &d) in perm.iter().enumerate() {
        inv[d] = i;
    }
    inv
}

/// `view(S).permute(P)` as `permute(P').view(S'')`: `(P', S'')`.
fn view_permute_swap(g: &Graph, view: NodeId, permute: NodeId) -> Option<(Vec<i64>, Vec<i64>)> {
    let map = ViewMap::new(&input_shape(g, view), &output_shape(g, view));
    let dims = ints_arg(&g.nodes[permute], pos(&g.nodes[permute], "dims"))?;
    let mapped = map.map_permutation_inverse(&dims)?;
    Some((
        mapped.into_iter().map(|d| d as i64).collect(),
        output_shape(g, permute),
    ))
}

/// `permute(P).view(S)` as `view(S').permute(P')`: `(S', P')`.
fn permute_view_swap(g: &Graph, permute: NodeId, view: NodeId) -> Option<(Vec<i64>, Vec<i64>)> {
    let rank = input_shape(g, permute).len();
    let dims = normalize_permutation(
        &ints_arg(&g.nodes[permute], pos(&g.nodes[permute], "dims"))?,
        rank,
    )?;
    let map = ViewMap::new(&output_shape(g, permute), &output_shape(g, view));
    let order =
        map.map_permutation(&inverse(&dims).iter().map(|&d| d as i64).collect::<Vec<_>>())?;
    let shape = order.iter().map(|&a| map.target()[a]).collect();
    Some((
        shape,
        inverse(&order).into_iter().map(|d| d as i64).collect(),
    ))
}

/// The arguments of `op1` and `op2` swapped, when they are a view and a permute that can be.
fn maybe_swap(g: &Graph, op1: NodeId, op2: NodeId) -> Option<(Vec<i64>, Vec<i64>)> {
    if is_permute(g, op1) && is_view(g, op2) {
        permute_view_swap(g, op1, op2)
    } else if is_view(g, op1) && is_permute(g, op2) {
        view_permute_swap(g, op1, op2)
    } else {
        None
    }
}

/// Whether a view from `input` to `output` only adds unit dims.
fn only_inserts_singletons(input: &[i64], output: &[i64]) -> bool {
    let big = |s: &[i64]| s.iter().copied().filter(|&d| d != 1).collect::<Vec<_>>();
    output.len() > input.len() && big(output) == big(input)
}

/// Fuses and removes along `chain` until nothing changes (ExecuTorch's
/// `_fuse_sequential_ops`); whether anything did.
fn fuse_sequential(g: &mut Graph, chain: &mut Vec<NodeId>) -> bool {
    let mut any = false;
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
                let dims: Vec<i64> = ints_arg(&g.nodes[n], pos(&g.nodes[n], "dims"))
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
                // a lone view that only inserts unit dims sinks below its permute
                if chain.len() == 2
                    && is_view(g, n)
                    && is_permute(g, next)
                    && only_inserts_singletons(&in_shape, &output_shape(g, n))
                {
                    if let Some((dims, shape)) = view_permute_swap(g, n, next) {
                        set_with_shape(g, n, "aten::permute_copy", x, dims);
                        let mid = g.nodes[n].outputs[0];
                        set(g, next, "aten::view_copy", mid, shape);
                        step = true;
                        continue;
                    }
                }
                let fused = if is_view(g, n) && is_view(g, next) {
                    Some(("aten::view_copy", output_shape(g, next)))
                } else if is_permute(g, n) && is_permute(g, next) {
                    let d1 = ints_arg(&g.nodes[n], pos(&g.nodes[n], "dims")).unwrap_or_default();
                    let d2 =
                        ints_arg(&g.nodes[next], pos(&g.nodes[next], "dims")).unwrap_or_default();
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
        any |= step;
        if !step {
            return any;
        }
    }
}

impl Pass<Options> for Canonicalize {
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
            // each swap leaves a fusable pair; the bound only guards against a cycle
            for _ in 0..64 {
                changed |= fuse_sequential(g, &mut chain);
                if chain.len() <= 2 {
                    break;
                }
                let swap = chain
                    .windows(2)
                    .find_map(|w| maybe_swap(g, w[0], w[1]).map(|args| (w[0], w[1], args)));
                let Some((op1, op2, (first, second))) = swap else {
                    break;
                };
                let Some(x) = tensor_arg(&g.nodes[op1], 0) else {
                    break;
                };
                let (kind1, kind2) = (
                    op_name(&g.nodes[op1]).to_string(),
                    op_name(&g.nodes[op2]).to_string(),
                );
                set_with_shape(g, op1, &kind2, x, first);
                let mid = g.nodes[op1].outputs[0];
                set(g, op2, &kind1, mid, second);
                changed = true;
            }
        }
        if changed {
            remove_dead(&mut m.graph);
        }
        Ok((m, changed))
    }
}
