//! Quantities of two programs of one model found from the programs alone, when no ETRecord names
//! them: the operators that compute a tensor the quantizer observes — convolutions, linear
//! layers, matrix products, pools, adds, concatenations, upsampling, softmax, tabulated functions
//! — are put in one sequence per program (execution order), the two sequences aligned by operator
//! class (longest common subsequence), and the k-th aligned pair of a class made one quantity.
//!
//! A quantity is the tensor after what a lowering fuses into the operator: from the operator,
//! the chain of batch norms and clamping activations (ReLU, ReLU6, hardtanh, clamp) that are
//! each the only reader of the one before. The int8 program folds them into the operator's
//! output range (a convolution whose output range starts at its zero point is relu(conv)); the
//! fp32 program computes them as ops of their own: both sides then hold relu(bn(conv)).
//!
//! Refused (`None`) unless every weighted operator of the program with fewer of them is aligned:
//! a diff is never matched on a guess.

use super::quantity::Quantity;
use super::{Graph, NodeId, NodeKind};

/// The class of an operator that computes an observed tensor, by its name without namespace.
fn class(op: &str) -> Option<&'static str> {
    let short = op.rsplit("::").next().unwrap_or(op);
    Some(match short {
        "convolution"
        | "quantized_conv2d"
        | "quantized_conv2d_nhwc"
        | "quantized_depthwise_conv2d"
        | "quantized_depthwise_conv2d_nhwc"
        | "quantized_transpose_conv2d" => "convolution",
        "addmm" | "mm" | "linear" | "quantized_linear" => "linear",
        "bmm" | "matmul" | "quantized_batch_matmul" => "matmul",
        "max_pool2d"
        | "max_pool2d_with_indices"
        | "quantized_max_pool2d"
        | "quantized_max_pool2d_nhwc" => "max_pool",
        "avg_pool2d"
        | "mean"
        | "adaptive_avg_pool2d"
        | "_adaptive_avg_pool2d"
        | "quantized_avg_pool2d"
        | "quantized_avg_pool2d_nhwc" => "avg_pool",
        "add" | "quantized_add" => "add",
        "mul" | "quantized_mul" => "mul",
        "cat" => "cat",
        "upsample_nearest2d" | "upsample_bilinear2d" => "upsample",
        "_softmax" | "softmax" | "quantized_softmax" => "softmax",
        "sigmoid"
        | "tanh"
        | "hardsigmoid"
        | "hardswish"
        | "gelu"
        | "silu"
        | "elu"
        | "quantized_activation" => "function",
        _ => return None,
    })
}

/// An op a lowering folds into the operator before it.
fn folds_in(op: &str) -> bool {
    let short = op.rsplit("::").next().unwrap_or(op);
    super::quantity::is_batch_norm(op) || matches!(short, "relu" | "relu6" | "hardtanh" | "clamp")
}

/// A multiply or divide by a constant: an int8 program folds it into the output scale of the
/// op before it (hardswish's `/ 6` after its multiply).
fn rescales(g: &Graph, m: &super::Node) -> bool {
    let short = m.op.rsplit("::").next().unwrap_or(&m.op);
    let computed = m
        .inputs
        .iter()
        .filter(|&&v| {
            g.values
                .get(v)
                .and_then(|x| x.producer)
                .is_some_and(|p| !super::quantity::computes_on_constants_only(g, p))
        })
        .count();
    matches!(short, "div" | "mul") && computed == 1
}

fn weighted(class: &str) -> bool {
    matches!(class, "convolution" | "linear" | "matmul")
}

/// The quantity each node of a graph holds, by node id.
pub type NodeQuantities = Vec<Option<Quantity>>;

/// An observed operator: its class, its output's element count, the node holding the tensor.
type Observed = (&'static str, usize, NodeId);

/// Whether what `n` computes reaches the program's outputs with nothing computed after it (only
/// quantizes, dequantizes and data movement): a program that folds a final function into the
/// operator (a hardsigmoid into a linear layer's output range) holds it there, the other after
/// ops of its own; such a pair is left to the output's row.
fn terminal(g: &Graph, succ: &[Vec<NodeId>], n: NodeId) -> bool {
    let mut stack = vec![n];
    let mut seen = std::collections::HashSet::new();
    let mut reaches = false;
    while let Some(x) = stack.pop() {
        for &s in succ.get(x).map(Vec::as_slice).unwrap_or(&[]) {
            let Some(m) = g.nodes.get(s) else { continue };
            match m.kind {
                NodeKind::Output => reaches = true,
                NodeKind::Operator => {
                    let t = crate::ops::traits_of(&m.op);
                    let passive = t.quantizes
                        || t.dequantizes
                        || m.def()
                            .is_some_and(|d| d.category == crate::ops::Category::DataMovement);
                    if !passive {
                        return false;
                    }
                    if seen.insert(s) {
                        stack.push(s);
                    }
                }
                _ => {}
            }
        }
    }
    reaches
}

/// The program's observed operators in execution order (`succ`: its successors).
fn sequence(g: &Graph, succ: &[Vec<NodeId>]) -> Vec<Observed> {
    let mut out = Vec::new();
    for n in &g.nodes {
        if n.kind != NodeKind::Operator {
            continue;
        }
        let Some(c) = class(&n.op) else { continue };
        // a fused op's own chain is its anchor's, not a quantity of its own; a program that
        // runs it in float reaches it through a dequantize (and leaves through a quantize)
        let (mut holder, mut at) = (n.id, n.id);
        for _ in 0..12 {
            let Some(&[next]) = succ.get(at).map(Vec::as_slice) else {
                break;
            };
            let Some(m) = g.nodes.get(next).filter(|m| m.kind == NodeKind::Operator) else {
                break;
            };
            let t = crate::ops::traits_of(&m.op);
            if folds_in(&m.op) || rescales(g, m) {
                holder = next;
            } else if !(t.quantizes || t.dequantizes) {
                break;
            }
            at = next;
        }
        let numel = g
            .nodes
            .get(holder)
            .and_then(|h| h.outputs.first())
            .and_then(|&v| g.values.get(v))
            .map_or(0, |v| v.shape.iter().map(|&d| d.max(0) as usize).product());
        out.push((c, numel, holder));
    }
    out
}

/// Longest common subsequence of the two sequences, an element matching one of the same class
/// and size: the aligned index pairs, in order.
fn align(a: &[Observed], b: &[Observed]) -> Option<Vec<(usize, usize)>> {
    let same = |x: &Observed, y: &Observed| x.0 == y.0 && x.1 == y.1;
    let (n, m) = (a.len(), b.len());
    // a table of n·m cells: refused past a size no program of this tool's reach needs
    if n.checked_mul(m)? > 50_000_000 {
        return None;
    }
    let mut t = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            t[at(i, j)] = if same(&a[i], &b[j]) {
                t[at(i + 1, j + 1)] + 1
            } else {
                t[at(i + 1, j)].max(t[at(i, j + 1)])
            };
        }
    }
    let (mut i, mut j, mut pairs) = (0, 0, Vec::new());
    while i < n && j < m {
        if same(&a[i], &b[j]) {
            pairs.push((i, j));
            i += 1;
            j += 1;
        } else if t[at(i + 1, j)] >= t[at(i, j + 1)] {
            i += 1;
        } else {
            j += 1;
        }
    }
    Some(pairs)
}

/// The quantity each node of `a` and of `b` holds, found from the programs alone; `None` when
/// the weighted operators cannot all be aligned.
pub fn structural_quantities(a: &Graph, b: &Graph) -> Option<(NodeQuantities, NodeQuantities)> {
    let (succ_a, succ_b) = (a.successors(), b.successors());
    let (sa, sb) = (sequence(a, &succ_a), sequence(b, &succ_b));
    let pairs = align(&sa, &sb)?;
    let count = |s: &[Observed]| s.iter().filter(|(c, _, _)| weighted(c)).count();
    let aligned = pairs.iter().filter(|&&(i, _)| weighted(sa[i].0)).count();
    if aligned == 0 || aligned < count(&sa).min(count(&sb)) {
        return None;
    }
    let mut qa = vec![None; a.nodes.len()];
    let mut qb = vec![None; b.nodes.len()];
    let mut calls: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, j) in pairs {
        if terminal(a, &succ_a, sa[i].2) != terminal(b, &succ_b, sb[j].2) {
            continue;
        }
        let c = sa[i].0;
        let k = calls.entry(c).or_insert(0);
        let q = Quantity {
            module: String::new(),
            op: c.to_string(),
            call: *k,
        };
        *k += 1;
        // two operators folded into one holder (an add whose ReLU ends a convolution's chain)
        // keep the first quantity
        if let (Some(x), Some(y)) = (qa.get_mut(sa[i].2), qb.get_mut(sb[j].2)) {
            if x.is_none() && y.is_none() {
                *x = Some(q.clone());
                *y = Some(q);
            }
        }
    }
    Some((qa, qb))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_pair_a_float_operator_with_its_cortex_m_kernel() {
        assert_eq!(
            class("aten::convolution"),
            class("cortex_m::quantized_conv2d_nhwc")
        );
        assert_eq!(class("aten::addmm"), class("cortex_m::quantized_linear"));
        assert_eq!(
            class("aten::sigmoid"),
            class("cortex_m::quantized_activation")
        );
        assert_eq!(class("aten::permute_copy"), None);
        assert!(folds_in("aten::relu") && folds_in("aten::hardtanh"));
    }

    #[test]
    fn alignment_skips_what_one_side_lacks() {
        let a = [
            ("convolution", 8, 0),
            ("add", 8, 1),
            ("convolution", 8, 2),
            ("linear", 4, 3),
            ("linear", 2, 4),
        ];
        let b = [
            ("convolution", 8, 0),
            ("convolution", 8, 1),
            ("function", 8, 2),
            ("linear", 2, 3),
            ("linear", 4, 4),
        ];
        // two heads in another order: only the one of the same size is paired
        assert_eq!(align(&a, &b), Some(vec![(0, 0), (2, 1), (4, 3)]));
    }
}
