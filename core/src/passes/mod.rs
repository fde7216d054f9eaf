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

use crate::ir::{CheckError, Graph};

/// Why a pass or its check failed.
#[derive(Debug, Error)]
pub enum PassError {
    /// The pass itself refused the graph.
    #[error("pass {pass}: {detail}")]
    Failed { pass: &'static str, detail: String },
    /// The pass returned a graph that breaks an IR invariant.
    #[error("pass {pass} broke the graph: {error}")]
    Broke {
        pass: &'static str,
        error: CheckError,
    },
}

/// A pass's output.
#[derive(Debug, Clone)]
pub struct Rewritten {
    pub graph: Graph,
    /// Whether the pass changed anything (a pass that changes nothing says so).
    pub changed: bool,
}

/// A graph rewrite.
pub trait Pass {
    /// The pass's name (the stage its output becomes).
    fn name(&self) -> &'static str;
    /// The rewritten graph.
    fn run(&self, graph: Graph) -> Result<Rewritten, PassError>;
    /// Whether the pass may change `graph`, told without copying it (a caller that would copy
    /// a large graph only to learn that nothing changes asks first); `true` unless the pass
    /// knows better.
    fn may_change(&self, _graph: &Graph) -> bool {
        true
    }
}

/// Whether any of `passes` may change `graph` ([`Pass::may_change`]): when none does, their
/// pipeline's stages are all unchanged and need not be run.
pub fn any_may_change(graph: &Graph, passes: &[&dyn Pass]) -> bool {
    passes.iter().any(|p| p.may_change(graph))
}

/// The passes etscope applies to a program's graph on its own (each a stage where it changes
/// something).
pub fn program_passes() -> Vec<&'static dyn Pass> {
    vec![&fold_activation::FoldActivation]
}

/// What one pass of a pipeline did.
#[derive(Debug, Clone)]
pub struct PassStage {
    /// The pass's name.
    pub pass: &'static str,
    /// Its output (its `stage` is the pass's name); `None` when the pass changed nothing.
    pub graph: Option<Graph>,
    /// Whether it changed anything.
    pub changed: bool,
}

/// Runs `passes` on `graph` in order, checking the graph after each; returns every pass's
/// output.
pub fn run_pipeline(graph: Graph, passes: &[&dyn Pass]) -> Result<Vec<PassStage>, PassError> {
    let mut stages: Vec<PassStage> = Vec::with_capacity(passes.len());
    let mut current = graph;
    for pass in passes {
        let Rewritten { mut graph, changed } = pass.run(current)?;
        graph.check().map_err(|error| PassError::Broke {
            pass: pass.name(),
            error,
        })?;
        graph.stage = pass.name().to_string();
        stages.push(PassStage {
            pass: pass.name(),
            // a pass that changed nothing keeps no copy: its stage is its input's
            graph: changed.then(|| graph.clone()),
            changed,
        });
        current = graph;
    }
    Ok(stages)
}

/// Runs one pass and checks its output.
pub fn run_checked(graph: Graph, pass: &dyn Pass) -> Result<Graph, PassError> {
    let out = pass.run(graph)?.graph;
    out.check().map_err(|error| PassError::Broke {
        pass: pass.name(),
        error,
    })?;
    Ok(out)
}
