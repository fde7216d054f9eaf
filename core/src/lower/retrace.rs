//! Output dtypes after a pass, as ExecuTorch's retrace gives them: once a fold leaves ops reading
//! integer codes, their outputs' dtypes follow from their inputs' (type promotion where the op
//! promotes), as the fake-tensor trace computes them.

use crate::dtype::ScalarType;
use crate::ir::{ArgData, Graph, Node, NodeKind, ValueId};
use crate::ops::OutputDtype;

use super::annotation::{is_dq, is_q};
use super::edit::{is_op, op_name};
use super::Module;

/// The output dtype `node` has after ExecuTorch's retrace, given its inputs' dtypes now, by the
/// registry's `output_dtype` column: type promotion over the tensor operands for the ops that
/// promote (a linear layer of int8 activations and an int32 bias writes int32), the `dtype`
/// argument of a dtype cast, the first operand's dtype for everything else; `None` for ops whose
/// output dtype does not follow their inputs (comparisons, indices, creation, (de)quantizes),
/// which keep theirs.
pub(super) fn retraced_dtype(g: &Graph, node: &Node) -> Option<ScalarType> {
    let dtype_of = |v: ValueId| g.values.get(v).and_then(|x| x.dtype);
    if is_q(node) || is_dq(node) || node.kind != NodeKind::Operator {
        return None;
    }
    // the registry's column: what the output dtype follows from
    // (by name: a pass may have renamed the node's operator)
    let rule = crate::ops::lookup(op_name(node), "").map_or(OutputDtype::FirstInput, |id| {
        crate::ops::def(id).output_dtype
    });
    match rule {
        OutputDtype::Own => None,
        OutputDtype::DtypeArgument => node.args.iter().find_map(|a| match (&a.name, &a.data) {
            (Some(n), ArgData::ScalarType(t)) if n == "dtype" => Some(*t),
            _ => None,
        }),
        OutputDtype::Promoted => node
            .inputs
            .iter()
            .filter_map(|&v| dtype_of(v))
            .reduce(promote),
        OutputDtype::FirstInput => node.inputs.first().and_then(|&v| dtype_of(v)),
    }
}

/// PyTorch's promotion of two tensor dtypes (integers widen; a float wins over an integer).
pub(super) fn promote(a: ScalarType, b: ScalarType) -> ScalarType {
    use ScalarType::*;
    let rank = |t: ScalarType| match t {
        Bool => 0,
        Byte | Char => 1,
        Short => 2,
        Int => 3,
        Long => 4,
        Half | BFloat16 => 5,
        Float => 6,
        Double => 7,
        _ => 1,
    };
    if rank(a) >= rank(b) {
        a
    } else {
        b
    }
}

/// Output dtypes after the fold, as ExecuTorch's retrace gives them: each folded node (and
/// every node reading a value whose dtype changed) takes [`retraced_dtype`]; the `dtype`
/// argument of a folded dtype cast becomes its output quantization's.
pub(super) fn retrace_dtypes(m: &mut Module) {
    retrace_from(m, Vec::new());
}

/// Dtypes propagated as the retrace does: every folded node, and every node reading a value in
/// `changed` (or one whose dtype this changes), takes [`retraced_dtype`].
pub(super) fn retrace_from(m: &mut Module, changed: Vec<ValueId>) {
    let mut changed: Vec<bool> = (0..m.graph.values.len())
        .map(|v| changed.contains(&v))
        .collect();
    for i in 0..m.graph.nodes.len() {
        let node = &m.graph.nodes[i];
        let folded = m.qparams.contains_key(&node.name);
        if !folded
            && !node
                .inputs
                .iter()
                .any(|&v| changed.get(v).copied().unwrap_or(false))
        {
            continue;
        }
        if folded && is_op(node, "dim_order_ops::_to_dim_order_copy") {
            if let Some(q) = m
                .qparams
                .get(&node.name)
                .and_then(|p| p.outputs.values().next())
            {
                let dtype = q.dtype;
                for a in &mut m.graph.nodes[i].args {
                    if a.name.as_deref() == Some("dtype") {
                        a.data = ArgData::ScalarType(dtype);
                    }
                }
            }
        }
        let node = &m.graph.nodes[i];
        let Some(dtype) = retraced_dtype(&m.graph, node) else {
            continue;
        };
        for o in node.outputs.clone() {
            let v = &mut m.graph.values[o];
            if v.dtype != Some(dtype) {
                v.dtype = Some(dtype);
                v.nbytes = v
                    .shape
                    .iter()
                    .try_fold(dtype.element_size().unwrap_or(1) as u64, |acc, &s| {
                        u64::try_from(s).ok().and_then(|s| acc.checked_mul(s))
                    });
                if let Some(c) = changed.get_mut(o) {
                    *c = true;
                }
            }
        }
    }
}
