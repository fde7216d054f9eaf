//! Inputs passed as int8, before the lowering: ExecuTorch's `QuantizeInputs`
//! (`exir/passes/quantize_io_pass.py`, `quantize_input`) on an edge graph. Each program input
//! that a `quantize_per_tensor` alone reads is replaced by that quantize's output: the program
//! takes the int8 codes and the application quantizes. An input read by anything else is
//! refused, as ExecuTorch refuses it. Not an ExecuTorch Cortex-M pass: `lower --quantize-io`
//! runs it before them (`core/tests/lowering.rs` checks the result against ExecuTorch's own
//! program, `tests/fixtures/quantize_io`).

use crate::ir::NodeKind;

use super::edit::{fail, float_arg, int_arg, op_name, set_nodes};
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
        let arg = |k: usize| {
            int_arg(q, k)
                .ok_or_else(|| fail(PASS, format!("{}: argument {k} is not an integer", q.name)))
        };
        quantization.push(InputQuantization {
            index: k,
            scale: float_arg(q, 1).ok_or_else(|| fail(PASS, format!("{}: no scale", q.name)))?,
            zero_point: arg(2)?,
            quant_min: arg(3)?,
            quant_max: arg(4)?,
        });
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
