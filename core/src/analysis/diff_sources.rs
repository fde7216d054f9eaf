//! "A program or a lowering stage, run on an input" as a diff source: the one pipeline the CLI,
//! the window and the tests share. A program's graph carries its ETRecord's debug handles,
//! module paths and quantization parameters when the ETRecord is given; the sources of one
//! export are marked so the diff matches them by debug handle.

use thiserror::Error;

use crate::analysis::diff::Source;
use crate::formats::etrecord::{stage_short_name, ETRecord};
use crate::formats::pte::Program;
use crate::ir::from_export::graph_from_export;
use crate::ir::from_pte::graph_from_plan;
use crate::ir::Graph;
use crate::runtime::{Device, Runtime};
use crate::tensor::TensorData;

/// Why a source could not be made.
#[derive(Debug, Error)]
pub enum SourceError {
    #[error("the program has no execution plan")]
    NoPlan,
    #[error("no stage {name:?}; stages: {available}")]
    NoStage { name: String, available: String },
    #[error("{0}")]
    Run(String),
}

/// Run options that keep every node's outputs (what a diff source is made of).
fn capturing(
    cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
) -> crate::runtime::RunOptions {
    crate::runtime::RunOptions {
        capture: true,
        cancel,
        ..crate::runtime::RunOptions::default()
    }
}

/// A source prepared once and run on any number of inputs (a dataset): the graph the diff
/// matches and the runtime that executes it.
pub struct PreparedSource {
    pub label: String,
    pub graph: Graph,
    runtime: Runtime,
    export: Option<String>,
}

impl PreparedSource {
    /// The default plan of `program` on `device` (its own core when `None`), with `etrecord`'s
    /// debug handles, module paths and quantization parameters where given.
    pub fn program(
        label: &str,
        program: &Program,
        etrecord: Option<(&ETRecord, &str)>,
        device: Option<Device>,
    ) -> Result<PreparedSource, SourceError> {
        let graph = program_graph(program, etrecord.map(|(r, _)| r)).ok_or(SourceError::NoPlan)?;
        // the plan whose graph `program_graph` built
        let plan = program.default_plan_index();
        let device = device.unwrap_or_else(|| Device::for_program(program, plan));
        let mut runtime = Runtime::new(program, plan, device.target)
            .map_err(|e| SourceError::Run(e.to_string()))?;
        runtime.set_device_versions(&device);
        Ok(PreparedSource {
            label: label.to_string(),
            graph,
            runtime,
            export: etrecord.map(|(_, e)| e.to_string()),
        })
    }

    /// ETRecord stage `name` of `rec` (from `export`) with its weights, on `device`.
    pub fn stage(
        label: &str,
        rec: &ETRecord,
        export: &str,
        name: &str,
        device: Device,
    ) -> Result<PreparedSource, SourceError> {
        let stage = rec.stage(name).ok_or_else(|| SourceError::NoStage {
            name: name.to_string(),
            available: rec
                .stages
                .iter()
                .map(|s| stage_short_name(&s.name))
                .collect::<Vec<_>>()
                .join(", "),
        })?;
        let weights = rec
            .stage_weights(stage)
            .map_err(|e| SourceError::Run(e.to_string()))?;
        let method = stage.name.split('/').nth(1).unwrap_or("forward");
        let runtime = Runtime::for_stage(&stage.graph, name, method, &weights, device)
            .map_err(|e| SourceError::Run(e.to_string()))?;
        // the stage as exported (functional calls, named arguments); node ids are the executed
        // graph's
        let mut graph = graph_from_export(&stage.graph, name, method);
        // integer outputs of the Cortex-M passes' ops take the quantization parameters of their
        // counterpart in the edge stage, as a program's do
        match rec.stage("edge").filter(|_| name != "edge") {
            Some(edge) => {
                let edge_graph = graph_from_export(&edge.graph, "edge", method);
                graph.inherit_quant(&edge_graph);
                graph.attach_quantities(Some(&edge_graph));
            }
            None => graph.attach_quantities(None),
        }
        Ok(PreparedSource {
            label: label.to_string(),
            graph,
            runtime,
            export: Some(export.to_string()),
        })
    }

    /// A run on `inputs` keeping only the method's outputs (no intermediate captured): what an
    /// output-only comparison needs, at the cost of the run alone.
    pub fn run_outputs(
        &self,
        inputs: &[TensorData],
        cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    ) -> Result<Vec<TensorData>, SourceError> {
        let run = self
            .runtime
            .run_with(
                inputs,
                crate::runtime::RunOptions {
                    cancel,
                    ..crate::runtime::RunOptions::default()
                },
            )
            .map_err(|e| SourceError::Run(e.to_string()))?;
        Ok(run.outputs.iter().map(|t| t.to_data()).collect())
    }

    /// The source of outputs `outputs` of this program's run (see [`Self::run_outputs`]).
    pub fn outputs_source(&self, outputs: &[TensorData]) -> Source {
        Source::from_outputs(&self.label, self.graph.clone(), outputs)
    }

    /// A run on `inputs`, every node's outputs captured.
    pub fn run(
        &self,
        inputs: &[TensorData],
        cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    ) -> Result<Source, SourceError> {
        let run = self
            .runtime
            .run_with(inputs, capturing(cancel))
            .map_err(|e| SourceError::Run(e.to_string()))?;
        let source = Source::from_run(&self.label, self.graph.clone(), &run);
        Ok(match &self.export {
            Some(e) => source.with_export(e.clone()),
            None => source,
        })
    }
}

/// The default plan's graph ([`Program::default_plan_index`]), with `etrecord`'s debug handles, and the module paths and quantization
/// parameters of its `edge` stage, where given.
pub fn program_graph(program: &Program, etrecord: Option<&ETRecord>) -> Option<Graph> {
    let mut graph = graph_from_plan(program, program.default_plan_index())?;
    if let Some(rec) = etrecord {
        if let Some(map) = rec.debug_handle_map.get(&graph.method) {
            graph.attach_debug_handles(map);
        }
        if let Some(edge) = rec.stage("edge") {
            let edge_graph = graph_from_export(&edge.graph, "edge", &graph.method);
            graph.inherit_module_stacks(&edge_graph);
            graph.inherit_quant(&edge_graph);
            graph.attach_quantities(Some(&edge_graph));
        }
    }
    // what the program's own quantize and dequantize calls state, where nothing else did
    graph.quant_from_qdq();
    Some(graph)
}

/// Plan 0 of `program` run on `inputs` (on the core the program was lowered for), every
/// instruction's outputs captured. `export` names the ETRecord, so that a stage of it is matched
/// by debug handle.
pub fn program_source(
    label: &str,
    program: &Program,
    etrecord: Option<(&ETRecord, &str)>,
    inputs: &[TensorData],
) -> Result<Source, SourceError> {
    program_source_cancellable(label, program, etrecord, inputs, None, None)
}

/// [`program_source`] on `device` (the program's own core and the pinned CMSIS-NN when
/// `None`), whose run stops when `cancel` is set (the window's Cancel button).
pub fn program_source_cancellable(
    label: &str,
    program: &Program,
    etrecord: Option<(&ETRecord, &str)>,
    inputs: &[TensorData],
    device: Option<Device>,
    cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
) -> Result<Source, SourceError> {
    PreparedSource::program(label, program, etrecord, device)?.run(inputs, cancel)
}

/// `graph` — a pass's rewrite of the default plan of `program` (a stage of [`crate::passes`]) — run on
/// `inputs` with the program's constants on `device`, every node's outputs captured; it is
/// matched with its program instruction by instruction.
pub fn rewrite_source(
    label: &str,
    program: &Program,
    graph: Graph,
    inputs: &[TensorData],
    device: Device,
    cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
) -> Result<Source, SourceError> {
    let options = capturing(cancel);
    let run = Runtime::with_graph(
        program,
        program.default_plan_index(),
        graph.clone(),
        device.target,
    )
    .and_then(|mut rt| {
        rt.set_device_versions(&device);
        rt.run_with(inputs, options)
    })
    .map_err(|e| SourceError::Run(e.to_string()))?;
    Ok(Source::from_run(label, graph, &run))
}

/// Stage `name` (short name: `exported`, `edge`, `edge_after_transform`) of `rec` run on
/// `inputs` with the ETRecord's own weights, every node's outputs captured.
pub fn stage_source(
    label: &str,
    rec: &ETRecord,
    export: &str,
    name: &str,
    inputs: &[TensorData],
) -> Result<Source, SourceError> {
    stage_source_cancellable(label, rec, export, name, inputs, Device::default(), None)
}

/// [`stage_source`] on `device`, whose run stops when `cancel` is set.
pub fn stage_source_cancellable(
    label: &str,
    rec: &ETRecord,
    export: &str,
    name: &str,
    inputs: &[TensorData],
    device: Device,
    cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
) -> Result<Source, SourceError> {
    PreparedSource::stage(label, rec, export, name, device)?.run(inputs, cancel)
}
