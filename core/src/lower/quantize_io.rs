//! Inputs and outputs passed as int8, before the lowering: ExecuTorch's `QuantizeInputs` and
//! `QuantizeOutputs` (`exir/passes/quantize_io_pass.py`, `quantize_input`, `quantize_output`)
//! on an edge graph.
//!
//! - Each program input that a `quantize_per_tensor` alone reads is replaced by that quantize's
//!   output: the program takes the int8 codes and the application quantizes. An input read by
//!   anything else is refused, as ExecuTorch refuses it.
//! - Each program output a `dequantize_per_tensor` produces is replaced by the dequantize's
//!   input: the program returns the int8 codes and the application dequantizes. An output
//!   produced by anything else is refused, as ExecuTorch refuses it; the dequantize goes when
//!   nothing else reads it (ExecuTorch's `eliminate_dead_code`).
//!
//! Not ExecuTorch Cortex-M passes: `lower --quantize-io` runs them before them
//! (`core/tests/quantize_io.rs` checks the results against ExecuTorch's own programs,
//! `tests/fixtures/quantize_io`).

use crate::ir::NodeKind;

use super::edit::{fail, float_arg, int_arg, op_name, pos, remove_dead, set_nodes};
use super::{LowerError, Module};

const PASS: &str = "QuantizeInputs";

/// How the application quantizes input `index` before it calls the program:
/// `q = clamp(round(x / scale) + zero_point, quant_min, quant_max)` (what ExecuTorch's
/// `QuantizeInputs` also writes as the methods `input<k>_scale`, `_zp`, `_quant_min`, `_quant_max`).
#[derive(Debug, Clone, PartialEq)]
pub struct InputQuantization {
    pub index: usize,
    pub scale: f64,
    pub zero_point: i64,
    pub quant_min: i64,
    pub quant_max: i64,
}

/// `module` taking its inputs as int8 (every input), and how each is quantized.
pub fn quantize_inputs(mut module: Module) -> Result<(Module, Vec<InputQuantization>), LowerError> {
    let g = &module.graph;
    let mut removed = Vec::new();
    let mut quantization = Vec::new();
    let mut inputs = g.inputs.clone();
    for (k, &v) in g.inputs.iter().enumerate() {
        let value = &g.values[v];
        let [reader] = value.consumers[..] else {
            return Err(fail(
                PASS,
                format!(
                    "input {k} ({}) has {} users; ExecuTorch's QuantizeInputs takes an input read by one quantize",
                    value.name,
                    value.consumers.len()
                ),
            ));
        };
        let q = &g.nodes[reader];
        if q.kind != NodeKind::Operator
            || op_name(q) != "quantized_decomposed::quantize_per_tensor"
            || q.inputs.first() != Some(&v)
        {
            return Err(fail(
                PASS,
                format!(
                    "input {k} ({}) is read by {}, not by a quantize_per_tensor",
                    value.name,
                    q.qualified_op()
                ),
            ));
        }
        let Some(&out) = q.outputs.first() else {
            return Err(fail(PASS, format!("{} has no output", q.name)));
        };
        quantization.push(quantization_of(q, k, PASS)?);
        inputs[k] = out;
        removed.push(reader);
    }
    let nodes = std::mem::take(&mut module.graph.nodes)
        .into_iter()
        .filter(|n| !removed.contains(&n.id))
        .collect();
    module.graph.inputs = inputs;
    for &v in &module.graph.inputs {
        module.graph.values[v].producer = None;
    }
    set_nodes(&mut module.graph, nodes);
    Ok((module, quantization))
}

const OUTPUTS: &str = "QuantizeOutputs";

/// How the application dequantizes output `index` after the call:
/// `x = (q - zero_point) · scale` (ExecuTorch's `QuantizeOutputs` also writes the methods
/// `output<k>_scale`, `_zp`, `_quant_min`, `_quant_max`).
pub type OutputQuantization = InputQuantization;

/// `module` returning its outputs as int8 (every output), and how each is dequantized.
pub fn quantize_outputs(
    mut module: Module,
) -> Result<(Module, Vec<OutputQuantization>), LowerError> {
    let g = &module.graph;
    let mut outputs = g.outputs.clone();
    let mut quantization = Vec::new();
    for (k, &v) in g.outputs.iter().enumerate() {
        let value = &g.values[v];
        let dq = value.producer.and_then(|p| g.nodes.get(p)).filter(|d| {
            d.kind == NodeKind::Operator
                && op_name(d) == "quantized_decomposed::dequantize_per_tensor"
        });
        let Some(dq) = dq else {
            return Err(fail(
                OUTPUTS,
                format!(
                    "output {k} ({}) is not made by a dequantize_per_tensor; ExecuTorch's QuantizeOutputs takes an output the model dequantizes last",
                    value.name
                ),
            ));
        };
        let Some(&codes) = dq.inputs.first() else {
            return Err(fail(OUTPUTS, format!("{} has no input", dq.name)));
        };
        quantization.push(quantization_of(dq, k, OUTPUTS)?);
        outputs[k] = codes;
    }
    // the graph's outputs and its output node's inputs name the int8 codes
    for n in module
        .graph
        .nodes
        .iter_mut()
        .filter(|n| n.kind == NodeKind::Output)
    {
        for v in n.inputs.iter_mut() {
            if let Some(k) = module.graph.outputs.iter().position(|o| o == v) {
                *v = outputs[k];
            }
        }
    }
    module.graph.outputs = outputs;
    module.graph.relink();
    remove_dead(&mut module.graph);
    Ok((module, quantization))
}

/// How `node` (a quantize or dequantize per tensor) quantizes value `index`: its scale, zero
/// point and range, read by name.
fn quantization_of(
    node: &crate::ir::Node,
    index: usize,
    pass: &'static str,
) -> Result<InputQuantization, LowerError> {
    let int = |name: &str| {
        int_arg(node, pos(node, name))
            .ok_or_else(|| fail(pass, format!("{}: no integer {name}", node.name)))
    };
    Ok(InputQuantization {
        index,
        scale: float_arg(node, pos(node, "scale"))
            .ok_or_else(|| fail(pass, format!("{}: no scale", node.name)))?,
        zero_point: int("zero_point")?,
        quant_min: int("quant_min")?,
        quant_max: int("quant_max")?,
    })
}
