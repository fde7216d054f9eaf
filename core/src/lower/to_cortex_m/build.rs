//! What the substitutions share: making the new call (in the old one's place, with its
//! provenance), scratch allocations, reading annotations, and constant tensors laid out anew.

use crate::dtype::ScalarType;
use crate::ir::{ArgData, Node, Storage, ValueId};
use crate::tensor::TensorData;

use super::super::edit::{fail, ints_arg, make_node, new_tensor, pos, unique_name};
use super::super::qparams::{NodeQParams, QuantArgs};
use super::super::{LowerError, Module};
use super::PASS;

/// What a substitution produced: the nodes to place before the old one (helpers, then the
/// new call).
pub(super) struct Replacement {
    pub(super) nodes: Vec<Node>,
}

pub(super) fn bad(node: &Node, what: &str) -> LowerError {
    fail(
        PASS,
        format!("{} ({}): {what}", node.name, node.qualified_op()),
    )
}

/// `op`'s default name for a new node (`cortex_m_quantized_conv2d_default`).
pub(super) fn node_name(m: &Module, target: &str) -> String {
    unique_name(&m.graph, &format!("{}_default", target.replace("::", "_")))
}

/// A new call of `target` writing the old node's output value (same dtype and shape), keeping
/// its debug handles and module stack; `helpers` go before it.
pub(super) fn single(
    m: &mut Module,
    node: &Node,
    target: &str,
    args: Vec<ArgData>,
    helpers: Option<Vec<Node>>,
) -> Replacement {
    let name = node_name(m, target);
    let out = node.outputs.first().copied();
    let mut new = make_node(&name, target, "default", args, out.into_iter().collect());
    new.debug_handles = node.debug_handles.clone();
    new.module_stack = node.module_stack.clone();
    new.stack_trace = node.stack_trace.clone();
    let mut nodes = helpers.unwrap_or_default();
    for h in &mut nodes {
        h.debug_handles = node.debug_handles.clone();
        h.module_stack = node.module_stack.clone();
    }
    nodes.push(new);
    Replacement { nodes }
}

/// An uninitialised scratch buffer (`memory.alloc` of `size` bytes).
pub(super) fn alloc(m: &mut Module, size: i64) -> (Node, ValueId) {
    let name = unique_name(&m.graph, "alloc");
    let v = new_tensor(
        &mut m.graph,
        &name,
        ScalarType::Byte,
        vec![size],
        Vec::new(),
        Storage::Unplanned,
    );
    let mut n = make_node(&name, "memory.alloc", "", Vec::new(), vec![v]);
    n.args.push(crate::ir::Arg::new(
        Some("alloc_arg".into()),
        None,
        ArgData::Str(format!("({size},);1")),
    ));
    (n, v)
}

pub(super) fn input_q<'q>(
    node: &Node,
    q: &'q NodeQParams,
    k: usize,
) -> Result<&'q QuantArgs, LowerError> {
    q.inputs.get(&k).ok_or_else(|| {
        bad(
            node,
            &format!("argument {k} has no quantization parameters"),
        )
    })
}

pub(super) fn output_q<'q>(node: &Node, q: &'q NodeQParams) -> Result<&'q QuantArgs, LowerError> {
    q.outputs
        .get(&0)
        .ok_or_else(|| bad(node, "its output has no quantization parameters"))
}

pub(super) fn int32_tensor(values: &[i64]) -> TensorData {
    let bytes = values
        .iter()
        .flat_map(|&v| (v as i32).to_le_bytes())
        .collect();
    TensorData {
        dtype: ScalarType::Int,
        shape: vec![values.len()],
        bytes,
    }
}

/// The elements of a constant as i64 (integer tensors).
pub(super) fn ints_of(t: &TensorData) -> Result<Vec<i64>, LowerError> {
    t.to_f64()
        .map(|v| v.into_iter().map(|x| x as i64).collect())
        .map_err(|e| fail(PASS, e.to_string()))
}

/// `t` (logical row-major) with its dims permuted by `perm` (output dim i = input dim
/// `perm[i]`), contiguous: the kernels' own permutation, applied to element indices so any
/// element size goes through it.
pub(super) fn permuted(t: &TensorData, perm: &[usize]) -> Result<TensorData, LowerError> {
    let rank = t.shape.len();
    let mut seen = vec![false; rank];
    if perm.len() != rank
        || !perm
            .iter()
            .all(|&p| p < rank && !std::mem::replace(&mut seen[p], true))
    {
        return Err(fail(
            PASS,
            format!(
                "a constant of shape {:?} cannot be permuted by {perm:?}",
                t.shape
            ),
        ));
    }
    let e = t.dtype.element_size().unwrap_or(1);
    let n = t.numel();
    if t.bytes.len() != n.saturating_mul(e) {
        return Err(fail(PASS, "a constant's data is shorter than its shape"));
    }
    let order = crate::kernels::layout::permute(&(0..n).collect::<Vec<usize>>(), &t.shape, perm);
    let bytes = order
        .iter()
        .flat_map(|&i| t.bytes[i * e..(i + 1) * e].iter().copied())
        .collect();
    Ok(TensorData {
        dtype: t.dtype,
        shape: perm.iter().map(|&p| t.shape[p]).collect(),
        bytes,
    })
}

/// The most a stride, padding, dilation or kernel size may be: far beyond any model, small
/// enough that the window arithmetic of the passes cannot overflow.
const MAX_WINDOW: i64 = 1 << 16;

pub(super) fn pair(node: &Node, name: &str, default: [i64; 2]) -> Result<[i64; 2], LowerError> {
    let k = pos(node, name);
    let p = match ints_arg(node, k) {
        None if node.args.get(k).is_none() => default,
        Some(v) if v.len() == 2 => [v[0], v[1]],
        Some(v) if v.len() == 1 => [v[0], v[0]],
        _ => return Err(bad(node, &format!("{name} is not an int pair"))),
    };
    if p.iter().any(|x| !(-MAX_WINDOW..=MAX_WINDOW).contains(x)) {
        return Err(bad(
            node,
            &format!("{name} is {p:?}, beyond any window (|x| <= {MAX_WINDOW})"),
        ));
    }
    Ok(p)
}

pub(super) fn ints(v: &[i64]) -> ArgData {
    ArgData::Ints(v.iter().map(|&x| Some(x)).collect())
}

pub(super) fn dims4(node: &Node, shape: &[i64]) -> Result<[i64; 4], LowerError> {
    <[i64; 4]>::try_from(shape).map_err(|_| bad(node, &format!("shape {shape:?} is not 4-D")))
}

/// Pads `[n, c, h, w]` in the memory order of a tensor with `dim_order`.
pub(super) fn physical(pads: [i64; 4], dim_order: &[u8]) -> [i64; 4] {
    if dim_order == [0, 2, 3, 1] {
        [pads[0], pads[2], pads[3], pads[1]]
    } else {
        pads
    }
}
