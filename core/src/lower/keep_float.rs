//! Layers kept in float: before the lowering, the weighted layers of the given modules get their
//! weights (and biases) as float constants, dequantized as ExecuTorch's `dequantize_per_tensor`
//! / `_per_channel` compute them, in place of the dequantize of the int8 constant. The quantizer
//! annotates a weighted layer with its weight ([`super::annotation`]), so such a layer is not
//! annotated: its input stays a dequantize, it runs as the float operator on its portable
//! kernel, and the next layer quantizes its output again. This is the mixed program an
//! engineer would make by leaving those layers out of the quantizer.

use crate::dtype::ScalarType;
use crate::ir::{ArgData, NodeKind, ValueId};
use crate::tensor::TensorData;

use super::edit::{
    add_constant, float_arg, int_arg, op_name, remove_dead, replace_in_node, tensor_arg,
};
use super::{LowerError, Module};

const PASS: &str = "keep_float";

/// `module` with the weighted layers of `modules` (module paths as `eval` names its groups)
/// kept in float. Refuses a module path that names no weighted layer, listing those there are.
pub fn keep_float(mut module: Module, modules: &[String]) -> Result<Module, LowerError> {
    let fail = |detail: String| super::edit::fail(PASS, detail);
    let weighted =
        |op: &str| crate::ops::lookup(op, "").is_some_and(|id| crate::ops::def(id).traits.weighted);
    let layers: Vec<(usize, String)> = module
        .graph
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Operator && weighted(op_name(n)))
        .filter_map(|n| n.innermost_module().map(|m| (n.id, m.to_string())))
        .collect();
    for want in modules {
        if !layers.iter().any(|(_, m)| m == want) {
            let mut known: Vec<&str> = layers.iter().map(|(_, m)| m.as_str()).collect();
            known.dedup();
            return Err(fail(format!(
                "no weighted layer in module {want:?}; the weighted layers are in {known:?}"
            )));
        }
    }
    for (node, _) in layers.iter().filter(|(_, m)| modules.contains(m)) {
        for k in [1, 2] {
            let Some(v) = tensor_arg(&module.graph.nodes[*node], k) else {
                continue;
            };
            let Some(data) = dequantized(&module, v)? else {
                continue;
            };
            let name = format!("{}_float", module.graph.values[v].name);
            let c = add_constant(&mut module, &name, data);
            replace_in_node(&mut module.graph.nodes[*node], v, c);
        }
    }
    module.graph.relink();
    remove_dead(&mut module.graph);
    Ok(module)
}

/// The float data a dequantize of a constant produces (`None` when `v` is not one).
fn dequantized(m: &Module, v: ValueId) -> Result<Option<TensorData>, LowerError> {
    let fail = |detail: String| super::edit::fail(PASS, detail);
    let Some(dq) = m.graph.values[v].producer.map(|p| &m.graph.nodes[p]) else {
        return Ok(None);
    };
    let op = op_name(dq);
    let per_channel = op.ends_with("dequantize_per_channel");
    if !(per_channel || op.ends_with("dequantize_per_tensor")) {
        return Ok(None);
    }
    let Some(q) = tensor_arg(dq, 0).and_then(|x| m.constant(x)) else {
        return Ok(None);
    };
    let codes = q.to_f64().map_err(|e| fail(format!("{}: {e}", dq.name)))?;
    let (scales, zps, axis) = if per_channel {
        let tensor = |k: usize| -> Result<Vec<f64>, LowerError> {
            let t = tensor_arg(dq, k)
                .and_then(|x| m.constant(x))
                .ok_or_else(|| fail(format!("{}: argument {k} is not a constant", dq.name)))?;
            t.to_f64().map_err(|e| fail(format!("{}: {e}", dq.name)))
        };
        let axis = int_arg(dq, 3).unwrap_or(0);
        let zps = match dq.args.get(2).map(|a| &a.data) {
            Some(ArgData::Tensor(_)) => tensor(2)?,
            _ => Vec::new(),
        };
        (tensor(1)?, zps, Some(axis))
    } else {
        let scale = float_arg(dq, 1).ok_or_else(|| fail(format!("{}: no scale", dq.name)))?;
        let zp = int_arg(dq, 2).unwrap_or(0) as f64;
        (vec![scale], vec![zp], None)
    };
    let rank = q.shape.len();
    let (channels, inner) = match axis {
        Some(a) => {
            let a = usize::try_from(if a < 0 { a + rank as i64 } else { a })
                .ok()
                .filter(|&a| a < rank)
                .ok_or_else(|| fail(format!("{}: axis {a} of a rank-{rank} tensor", dq.name)))?;
            (q.shape[a], q.shape[a + 1..].iter().product::<usize>())
        }
        None => (1, codes.len()),
    };
    if scales.len() != channels {
        return Err(fail(format!(
            "{}: {} scales for {channels} channels",
            dq.name,
            scales.len()
        )));
    }
    let values: Vec<f32> = codes
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let ch = (i / inner.max(1)) % channels.max(1);
            let zp = zps.get(ch).or(zps.first()).copied().unwrap_or(0.0);
            // ExecuTorch: (q - zero_point) * scale, in float32
            ((c - zp) as f32) * (scales[ch] as f32)
        })
        .collect();
    Ok(Some(TensorData {
        dtype: ScalarType::Float,
        shape: q.shape.clone(),
        bytes: values.iter().flat_map(|x| x.to_le_bytes()).collect(),
    }))
}
