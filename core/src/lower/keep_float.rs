//! Layers kept in float: before the lowering, the weighted layers of the given modules get their
//! weights (and biases) as float constants, dequantized as ExecuTorch's `dequantize_per_tensor`
//! / `_per_channel` compute them, in place of the dequantize of the int8 constant. The quantizer
//! annotates a weighted layer with its weight (`super::annotation`), so such a layer is not
//! annotated: its input stays a dequantize, it runs as the float operator on its portable
//! kernel, and the next layer quantizes its output again. This is the mixed program an
//! engineer would make by leaving those layers out of the quantizer.

use crate::dtype::ScalarType;
use crate::ir::{ArgData, NodeKind, ValueId};
use crate::tensor::TensorData;

use super::edit::{
    add_constant, float_arg, int_arg, op_name, pos, remove_dead, replace_in_node, tensor_arg,
};
use super::{LowerError, Module};

const PASS: &str = "keep_float";

/// `module` with the weighted layers of `modules` (module paths as `eval` names its groups)
/// kept in float. Refuses a module path that names no weighted layer, listing those there are.
pub fn keep_float(
    mut module: Module,
    modules: &[String],
    flow: super::Flow,
) -> Result<Module, LowerError> {
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
    let kept: Vec<usize> = layers
        .iter()
        .filter(|(_, m)| modules.contains(m))
        .map(|(n, _)| *n)
        .collect();
    for &node in &kept {
        float_input(&mut module, node);
        let name = module.graph.nodes[node].name.clone();
        module.kept_float.insert(name);
    }
    // in the default flow the quantized layers read channels-last activations: a float
    // convolution's output goes to channels-last before the next one quantizes it
    if flow == super::Flow::Default {
        for &node in kept.iter().rev() {
            channels_last_after(&mut module, node);
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

/// The module paths of `m`'s weighted layers, in graph order: the groups `keep_float` takes.
pub fn weighted_modules(m: &Module) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in &m.graph.nodes {
        let weighted = n.kind == NodeKind::Operator
            && crate::ops::lookup(op_name(n), "")
                .is_some_and(|id| crate::ops::def(id).traits.weighted);
        if let (true, Some(path)) = (weighted, n.innermost_module()) {
            if !out.iter().any(|p| p == path) {
                out.push(path.to_string());
            }
        }
    }
    out
}

/// `edge` (an ETRecord's edge module) with `kept` in float, lowered for `options` and written
/// as a `.pte`.
pub fn mixed_program(
    edge: &Module,
    kept: &[String],
    options: &super::Options,
) -> Result<Vec<u8>, LowerError> {
    let stages = super::lower(keep_float(edge.clone(), kept, options.flow)?, options)?;
    let last = &stages
        .last()
        .ok_or_else(|| super::edit::fail(PASS, "the lowering ran no pass"))?
        .module;
    super::emit::program(last, options)
}

/// A layer that reads the program's input through its own input quantization (the quantizer's
/// annotation of the layer's input: quantizes, dequantizes and views between the input and the
/// layer, `input → q → dq → unsqueeze → q → dq → layer`) reads the float input instead, the
/// views done in float: left in float, the layer has no input quantization. An input another
/// layer quantized is left as it is.
fn float_input(m: &mut Module, layer: usize) {
    let g = &m.graph;
    let is_qdq = |name: &str| name.ends_with("quantize_per_tensor");
    let is_view = |name: &str| {
        matches!(
            name,
            "aten::unsqueeze_copy" | "aten::squeeze_copy" | "aten::view_copy" | "aten::view"
        )
    };
    let Some(mut v) = tensor_arg(&g.nodes[layer], 0) else {
        return;
    };
    let mut reader = layer;
    let mut views = Vec::new(); // nearest the layer first
    let mut quantized = false;
    loop {
        if g.values[v].consumers != [reader] {
            return;
        }
        // the program's input (no producer, or its placeholder node) ends the walk
        let Some(p) = g.values[v]
            .producer
            .map(|p| &g.nodes[p])
            .filter(|p| p.kind == NodeKind::Operator)
        else {
            break;
        };
        let name = op_name(p);
        if is_qdq(name) {
            quantized = true;
        } else if is_view(name) && p.inputs.len() == 1 {
            views.push(p.id);
        } else {
            return;
        }
        let Some(u) = tensor_arg(p, 0) else { return };
        reader = p.id;
        v = u;
    }
    if !quantized || !g.inputs.contains(&v) {
        return;
    }
    let x = v;
    // the views, farthest from the layer first, read float and write float
    let mut at = x;
    for &vw in views.iter().rev() {
        let Some(old) = tensor_arg(&m.graph.nodes[vw], 0) else {
            return;
        };
        replace_in_node(&mut m.graph.nodes[vw], old, at);
        let Some(&o) = m.graph.nodes[vw].outputs.first() else {
            return;
        };
        m.graph.values[o].dtype = Some(ScalarType::Float);
        m.graph.values[o].quant = None;
        at = o;
    }
    if let Some(old) = tensor_arg(&m.graph.nodes[layer], 0) {
        replace_in_node(&mut m.graph.nodes[layer], old, at);
    }
}

/// A `_to_dim_order_copy` to channels-last after a 4-D layer whose output is not stored so,
/// and the element-wise calls and (de)quantizes after it stored channels-last too (what the
/// default flow's quantized layers read).
fn channels_last_after(m: &mut Module, layer: usize) {
    use super::edit::{channels_last_dim_order, make_node, new_tensor, replace_uses, unique_name};
    let Some(&out) = m.graph.nodes[layer].outputs.first() else {
        return;
    };
    let shape = m.graph.values[out].shape.clone();
    if shape.len() != 4 {
        return;
    }
    let order = channels_last_dim_order(&shape);
    if m.graph.values[out].dim_order == order {
        return;
    }
    let name = unique_name(&m.graph, "dim_order_ops__to_dim_order_copy_default");
    let dtype = m.graph.values[out].dtype.unwrap_or(ScalarType::Float);
    let c = new_tensor(
        &mut m.graph,
        &name,
        dtype,
        shape,
        order.clone(),
        crate::ir::Storage::Unplanned,
    );
    replace_uses(&mut m.graph, out, c);
    let mut copy = make_node(
        &name,
        "dim_order_ops::_to_dim_order_copy",
        "default",
        vec![ArgData::Tensor(out)],
        vec![c],
    );
    // the keyword arguments by name, as the exporter writes them
    copy.args.push(crate::ir::Arg::new(
        Some("non_blocking".into()),
        None,
        ArgData::Bool(false),
    ));
    copy.args.push(crate::ir::Arg::new(
        Some("dim_order".into()),
        None,
        ArgData::Ints(order.iter().map(|&d| Some(i64::from(d))).collect()),
    ));
    copy.module_stack = m.graph.nodes[layer].module_stack.clone();
    copy.debug_handles = m.graph.nodes[layer].debug_handles.clone();
    let mut nodes = std::mem::take(&mut m.graph.nodes);
    nodes.insert(layer + 1, copy);
    super::edit::set_nodes(&mut m.graph, nodes);
    // the element-wise calls and (de)quantizes after it keep the order
    let mut frontier = vec![c];
    while let Some(v) = frontier.pop() {
        for reader in m.graph.values[v].consumers.clone() {
            let n = &m.graph.nodes[reader];
            let follows = n.def().is_some_and(|d| {
                d.traits.elementwise || d.traits.quantizes || d.traits.dequantizes
            }) || op_name(n).ends_with("quantize_per_tensor");
            if !follows || n.inputs.first() != Some(&v) {
                continue;
            }
            for o in n.outputs.clone() {
                if m.graph.values[o].shape.len() == 4 && m.graph.values[o].dim_order != order {
                    m.graph.values[o].dim_order = order.clone();
                    frontier.push(o);
                }
            }
        }
    }
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
        let axis = int_arg(dq, pos(dq, "axis")).unwrap_or(0);
        let zps = match dq.args.get(pos(dq, "zero_points")).map(|a| &a.data) {
            Some(ArgData::Tensor(_)) => tensor(2)?,
            _ => Vec::new(),
        };
        (tensor(1)?, zps, Some(axis))
    } else {
        let scale = float_arg(dq, pos(dq, "scale"))
            .ok_or_else(|| fail(format!("{}: no scale", dq.name)))?;
        let zp = int_arg(dq, pos(dq, "zero_point")).unwrap_or(0) as f64;
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
