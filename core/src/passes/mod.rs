//! Graph passes: each a small module that takes a graph and returns a rewritten one. A
//! pipeline runs them in order and checks the graph after each ([`crate::ir::Graph::check`]),
//! naming the pass that broke an invariant; every pass's output is a stage of its own (listed,
//! executed, compared like any other).
//!
//! - [`out_variants`] — a `torch.export` stage's functional calls in their kernels' form: the
//!   step from an ETRecord stage to an executable graph
//! - [`fold_activation`] — a standalone int8 ReLU / clamp folded into the output bounds of the
//!   Cortex-M convolution or linear layer before it

pub mod fold_activation;
pub mod out_variants;

use thiserror::Error;

use crate::ir::module::{Module, ModuleCheckError};
use crate::ir::Graph;

/// Why a pass or its check failed.
#[derive(Debug, Error)]
pub enum PassError {
    /// The pass itself refused the module.
    #[error("pass {pass}: {detail}")]
    Failed { pass: &'static str, detail: String },
    /// The pass returned a module that breaks an invariant ([`Module::check`]).
    #[error("pass {pass} broke the graph: {error}")]
    Broke {
        pass: &'static str,
        error: ModuleCheckError,
    },
}

/// A rewrite of a [`Module`]: etscope's own graph passes (options `()`) and the Cortex-M
/// lowering's (options `lower::Options`) are this one trait, run by one driver ([`drive`]).
pub trait Pass<O: ?Sized = ()>: Sync {
    /// The pass's name (the stage its output becomes).
    fn name(&self) -> &'static str;
    /// The rewritten module and whether anything changed (a pass that changes nothing says so).
    fn run(&self, module: Module, options: &O) -> Result<(Module, bool), PassError>;
    /// Whether the pass may change `graph`, told without copying it (a caller that would copy
    /// a large graph only to learn that nothing changes asks first); `true` unless the pass
    /// knows better.
    fn may_change(&self, _graph: &Graph) -> bool {
        true
    }
}

/// Whether any of `passes` may change `graph` ([`Pass::may_change`]): when none does, their
/// pipeline's stages are all unchanged and need not be run.
pub fn any_may_change<O: ?Sized>(graph: &Graph, passes: &[&dyn Pass<O>]) -> bool {
    passes.iter().any(|p| p.may_change(graph))
}

/// The passes etscope applies to a program's graph on its own (each a stage where it changes
/// something).
pub fn program_passes() -> Vec<&'static dyn Pass> {
    vec![&fold_activation::FoldActivation]
}

/// One step of a pipeline, as [`drive`] hands it to its caller.
pub struct Step<'a> {
    /// 0-based position in the pipeline.
    pub index: usize,
    pub pass: &'static str,
    /// The pass's output, checked and named (its graph's `stage`).
    pub module: &'a Module,
    pub changed: bool,
    /// Operator nodes before the pass.
    pub ops_before: usize,
}

/// The one pass driver: checks `module`, runs `passes` on it in order, drops the quantization parameters of
/// the nodes a pass removed, checks the whole module after each ([`Module::check`]: the graph,
/// its constants and its quantization parameters), naming the
/// pass that broke it, names each output's stage `stage_name(index, pass)`, and hands every
/// step to `each`. Returns the last output.
pub fn drive<O: ?Sized>(
    module: Module,
    passes: &[&dyn Pass<O>],
    options: &O,
    stage_name: impl Fn(usize, &str) -> String,
    mut each: impl FnMut(Step<'_>),
) -> Result<Module, PassError> {
    // a module inconsistent from the start is refused as such, not blamed on the first pass
    module.check().map_err(|error| PassError::Failed {
        pass: "input",
        detail: format!("the graph given to the passes is not consistent: {error}"),
    })?;
    let mut current = module;
    for (index, pass) in passes.iter().enumerate() {
        let ops_before = current.graph.op_count();
        let (mut next, changed) = pass.run(current, options)?;
        next.retain_live_parameters();
        next.check().map_err(|error| PassError::Broke {
            pass: pass.name(),
            error,
        })?;
        next.graph.stage = stage_name(index, pass.name());
        each(Step {
            index,
            pass: pass.name(),
            module: &next,
            changed,
            ops_before,
        });
        current = next;
    }
    Ok(current)
}

/// What one pass of a graph pipeline did.
#[derive(Debug, Clone)]
pub struct PassStage {
    /// The pass's name.
    pub pass: &'static str,
    /// Its output (its `stage` is the pass's name); `None` when the pass changed nothing.
    pub graph: Option<Graph>,
    /// Whether it changed anything.
    pub changed: bool,
}

/// Runs graph passes on a program's `graph` ([`drive`]); returns every pass's output.
pub fn run_pipeline(graph: Graph, passes: &[&dyn Pass]) -> Result<Vec<PassStage>, PassError> {
    let mut stages: Vec<PassStage> = Vec::with_capacity(passes.len());
    drive(
        Module::of_graph(graph),
        passes,
        &(),
        |_, pass| pass.to_string(),
        |step| {
            stages.push(PassStage {
                pass: step.pass,
                // a pass that changed nothing keeps no copy: its stage is its input's
                graph: step.changed.then(|| step.module.graph.clone()),
                changed: step.changed,
            })
        },
    )?;
    Ok(stages)
}

/// Runs one pass on `module` and checks its output (the stage name stays the input's).
pub fn run_checked_module(module: Module, pass: &dyn Pass) -> Result<Module, PassError> {
    let stage = module.graph.stage.clone();
    drive(module, &[pass], &(), |_, _| stage.clone(), |_| {})
}

/// Runs one pass on a graph with nothing beside it and checks its output.
pub fn run_checked(graph: Graph, pass: &dyn Pass) -> Result<Graph, PassError> {
    Ok(run_checked_module(Module::of_graph(graph), pass)?.graph)
}
