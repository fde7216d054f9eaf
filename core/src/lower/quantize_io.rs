//! Inputs passed as int8, before the lowering: ExecuTorch's `QuantizeInputs`
//! (`exir/passes/quantize_io_pass.py`, `quantize_input`) on an edge graph. Each program input
//! that a `quantize_per_tensor` alone reads is replaced by that quantize's output: the program
//! takes the int8 codes and the application quantizes. An input read by anything else is
//! refused, as ExecuTorch refuses it. Not an ExecuTorch Cortex-M pass: `lower --quantize-io`
//! runs it before them (`core/tests/lowering.rs` checks the result against ExecuTorch's own
//! program, `tests/fixtures/quantize_io`).

use crate::ir::NodeKind;

use super::edit::{fail, op_name, set_nodes};
use super::{LowerError, Module};

const PASS: &str = "QuantizeInputs";

/// `module` taking its inputs as int8 (every input).
pub fn quantize_inputs(mut module: Module) -> Result<Module, LowerError> {
    let g = &module.graph;
    let mut removed = Vec::new();
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
    Ok(module)
}
