//! One side of a comparison, as `etscope diff` and the window's Diff tab both resolve it: a
//! program run on the host, an ETRecord stage run with its weights, a pass's rewrite or a stage
//! of etscope's lowering run on the same core, or the tensors a device captured on the
//! program's graph. [`DiffSide::source`] turns each into the [`Source`] the diff compares, on
//! whatever thread the caller runs it (the window's worker, the CLI's main thread), stopped at
//! the next instruction when `cancel` is set.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use etscope_core::analysis::diff::Source;
use etscope_core::analysis::diff_sources::{
    program_source_cancellable, rewrite_source, stage_source_cancellable,
};
use etscope_core::formats::debug_buffer::CapturedTensor;
use etscope_core::formats::etrecord::ETRecord;
use etscope_core::formats::pte::Program;
use etscope_core::ir::Graph;
use etscope_core::runtime::Device;
use etscope_core::tensor::TensorData;

/// An ETRecord as the side gets it: read when the side is run (the window may have released
/// its graphs; the CLI has it read already).
pub type LaterRecord = Box<dyn FnOnce() -> Result<ETRecord, String> + Send>;

/// An ETRecord read already, as a [`LaterRecord`].
pub fn record_now(rec: ETRecord) -> LaterRecord {
    Box::new(move || Ok(rec))
}

/// One side of a comparison.
pub enum DiffSide {
    /// A program run on the host on `device`, with the ETRecord that names its nodes (and
    /// that record's label: a stage and a program match by debug handle, two programs by
    /// module).
    Program {
        label: String,
        program: Program,
        record: Option<(LaterRecord, String)>,
        device: Device,
    },
    /// An ETRecord's stage `name`, run with its weights, called `label`.
    Stage {
        label: String,
        name: String,
        record: LaterRecord,
        export: String,
        device: Device,
    },
    /// A pass's rewrite of `program`'s graph.
    Rewrite {
        name: String,
        program: Program,
        graph: Graph,
        device: Device,
    },
    /// A stage of etscope's lowering of the program's ETRecord.
    Lowered {
        name: String,
        module: Arc<etscope_core::lower::Module>,
        export: String,
        device: Device,
    },
    /// The tensors a device captured (an ETDump with its debug buffer) on the program's graph.
    Captured {
        label: String,
        graph: Graph,
        captured: Vec<CapturedTensor>,
        /// The label of the ETRecord the graph carries, when it has one.
        export: Option<String>,
    },
}

impl DiffSide {
    /// What the report calls this side.
    pub fn label(&self) -> &str {
        match self {
            DiffSide::Program { label, .. }
            | DiffSide::Captured { label, .. }
            | DiffSide::Stage { label, .. } => label,
            DiffSide::Rewrite { name, .. } | DiffSide::Lowered { name, .. } => name,
        }
    }

    /// The side's tensors for `inputs`: a host run (stopped when `cancel` is set) or the
    /// captured ones. An error names the side.
    pub fn source(
        self,
        inputs: &[TensorData],
        cancel: Option<Arc<AtomicBool>>,
    ) -> Result<Source, String> {
        let label = self.label().to_string();
        let named = |e: String| format!("{label}: {e}");
        match self {
            DiffSide::Program {
                label,
                program,
                record,
                device,
            } => {
                let record = match record {
                    Some((read, export)) => Some((read()?, export)),
                    None => None,
                };
                let record = record.as_ref().map(|(r, e)| (r, e.as_str()));
                program_source_cancellable(&label, &program, record, inputs, Some(device), cancel)
                    .map_err(|e| named(format!("{e:#}")))
            }
            DiffSide::Stage {
                label,
                name,
                record,
                export,
                device,
            } => {
                stage_source_cancellable(&label, &record()?, &export, &name, inputs, device, cancel)
                    .map_err(|e| named(format!("{e:#}")))
            }
            DiffSide::Rewrite {
                name,
                program,
                graph,
                device,
            } => rewrite_source(&name, &program, graph, inputs, device, cancel)
                .map_err(|e| named(format!("{e:#}"))),
            DiffSide::Lowered {
                name,
                module,
                export,
                device,
            } => etscope_core::lower::execute::source(&name, &export, &module, inputs, device)
                .map_err(|e| named(format!("{e:#}"))),
            DiffSide::Captured {
                label,
                graph,
                captured,
                export,
            } => {
                let source = Source::from_captured(&label, graph, &captured);
                Ok(match export {
                    Some(e) => source.with_export(e),
                    None => source,
                })
            }
        }
    }
}
