//! An ETRecord stage (a `torch.export` graph: exported ATen, edge, or the graph after the
//! Cortex-M passes) prepared for the runtime: its IR graph through the out-variant pass, with
//! the weights read from the stage's `torch.save` archives as its constants. It then runs
//! exactly as a program does.

use std::collections::BTreeMap;

use super::value::{Buf, HostTensor};
use super::{Device, Runtime, RuntimeError};
use crate::formats::export_json::{ExportedGraph, InputKind};
use crate::ir::from_export::graph_from_export;
use crate::ir::{Graph, NodeKind};
use crate::passes::out_variants::OutVariants;
use crate::passes::run_checked;
use crate::tensor::TensorData;

fn host(t: &TensorData) -> Result<HostTensor, RuntimeError> {
    let buf = Buf::from_le_bytes(t.dtype, &t.bytes).ok_or_else(|| {
        RuntimeError::Program(format!("tensors of {} are not supported", t.dtype.name()))
    })?;
    Ok(HostTensor {
        dtype: t.dtype,
        shape: t.shape.clone(),
        buf,
    })
}

/// The executable graph of stage `g` (named `stage`, method `method`): its IR through the
/// out-variant pass.
pub fn stage_graph(g: &ExportedGraph, stage: &str, method: &str) -> Result<Graph, RuntimeError> {
    let graph = graph_from_export(g, stage, method);
    let graph =
        run_checked(graph, &OutVariants).map_err(|e| RuntimeError::Program(e.to_string()))?;
    // sizes the export leaves symbolic cannot be allocated
    for n in graph.nodes.iter().filter(|n| n.kind == NodeKind::Operator) {
        for &o in &n.outputs {
            if graph.values[o].shape.iter().any(|&s| s < 0) {
                return Err(RuntimeError::BadArgs {
                    op: n.qualified_op(),
                    instruction: n.id,
                    detail: format!("output {} has a symbolic shape", graph.values[o].label()),
                });
            }
        }
    }
    Ok(graph)
}

impl Runtime {
    /// Prepares a stage graph that is not in its kernels' form yet (a lowering pass's output),
    /// with the data of its constants by value id: the out-variant pass, then the program path.
    pub fn for_stage_graph(
        graph: Graph,
        constants: &BTreeMap<crate::ir::ValueId, TensorData>,
        device: Device,
    ) -> Result<Runtime, RuntimeError> {
        let graph =
            run_checked(graph, &OutVariants).map_err(|e| RuntimeError::Program(e.to_string()))?;
        let constant = |v: &crate::ir::ValueInfo| match constants.get(&v.id) {
            Some(t) => host(t),
            None => Err(RuntimeError::Program(format!(
                "constant {} has no data",
                v.label()
            ))),
        };
        Runtime::prepare(graph, &constant, device)
    }

    /// Prepares stage `g` with `weights` (state dict and constants keyed by their fully
    /// qualified names) on `device`.
    pub fn for_stage(
        g: &ExportedGraph,
        stage: &str,
        method: &str,
        weights: &BTreeMap<String, TensorData>,
        device: Device,
    ) -> Result<Runtime, RuntimeError> {
        let graph = stage_graph(g, stage, method)?;
        let constant = |v: &crate::ir::ValueInfo| {
            let key = g.input_targets.get(&v.name).unwrap_or(&v.name);
            let is_weight = g
                .inputs
                .iter()
                .any(|(n, k)| n == &v.name && *k != InputKind::UserInput);
            match weights.get(key) {
                Some(t) if is_weight => host(t),
                _ => Err(RuntimeError::Program(format!(
                    "weight {key:?} (graph input {}) is not in the stage's state dict or constants",
                    v.name
                ))),
            }
        };
        Runtime::prepare(graph, &constant, device)
    }
}
