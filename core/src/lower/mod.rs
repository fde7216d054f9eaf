//! etscope's own Cortex-M lowering: ExecuTorch 1.5.1's Cortex-M backend passes
//! (`backends/cortex_m/passes/cortex_m_pass_manager.py`), each a small module of etscope's, run
//! in the pass manager's order (default or explicit-layout flow, [`pass_list`]) on an ETRecord's
//! `edge` stage. Every pass's output is a stage of
//! its own (a [`Module`]: the graph, its constants and the quantization parameters the passes
//! annotate), and the last one is the graph ExecuTorch's `edge_after_transform` holds.
//!
//! - [`remove_getitem`] — `max_pool2d_with_indices` + `getitem` → `max_pool2d`
//! - [`fold_qparams`] — dequantize/quantize pairs around an annotated op folded into its
//!   input/output quantization parameters (FoldAndAnnotateQParamsPass)
//! - [`scalar_to_tensor`] — `add/sub/mul/div.Scalar` → `.Tensor` with a `full` operand
//! - [`replace_quant`] — int8/int16 quantize/dequantize → `cortex_m::` ones
//! - [`fuse_activation`] — ReLU/hardtanh/clamp/hardsigmoid folded into the producer's range
//! - [`clamp_activation`] — the activations left on int8 tensors as clamps with quantized bounds
//! - [`decompose_hardswish`] — a hardswish after a layer as `x * min(x, 3)`, the rest in parameters
//! - [`layout`] — the explicit flow's channels-last variants, views and permute canonicalisation
//! - [`to_cortex_m`] — annotated ATen ops → `cortex_m::` kernels with their multipliers, shifts,
//!   weight layouts, kernel sums and scratch buffers for the target ([`scratch`])
//!
//! What ExecuTorch's serialized ETRecord does not keep, etscope infers: the quantizer's
//! "quantized" annotation of a node is taken to be "a dequantize feeds it or a quantize consumes
//! it" ([`fold_qparams`]).

mod annotation;
pub mod clamp_activation;
pub mod compare;
pub mod decompose_hardswish;
mod edit;
pub mod emit;
pub mod execute;
pub mod fold_qparams;
pub mod fuse_activation;
pub mod keep_float;
pub mod layout;
pub mod lut;
pub mod quantize_io;
pub mod remove_getitem;
pub mod replace_quant;
mod retrace;
pub mod scalar_to_tensor;
pub mod scratch;
pub mod to_cortex_m;

use std::collections::BTreeMap;

use crate::formats::export_json::{ExportedGraph, InputKind};
use crate::ir::from_export::graph_from_export;
pub use crate::ir::module::Module;
pub use crate::ir::qparams::{self, NodeQParams, QuantArgs};
use crate::passes::PassError;
use crate::tensor::TensorData;

/// The lowering flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Flow {
    /// `use_explicit_layout=False`: NCHW-sized tensors, channels-last in memory.
    Default,
    /// `use_explicit_layout=True`: `_nhwc` operators and explicit transposes.
    Explicit,
}

impl Flow {
    /// Parses `default` / `explicit`.
    pub fn parse(s: &str) -> Option<Flow> {
        match s {
            "default" => Some(Flow::Default),
            "explicit" => Some(Flow::Explicit),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Flow::Default => "default",
            Flow::Explicit => "explicit",
        }
    }
}

pub use crate::cortex_m::{Core, Isa};

/// What to lower for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    pub flow: Flow,
    pub core: Core,
}

impl Options {
    /// What `program` was lowered for: the explicit flow when it calls `_nhwc` kernels, else the
    /// default flow; on `core`, which the caller knows (a program says only its CMSIS-NN path,
    /// [`crate::kernels::Target::for_program`], not which core of that path).
    pub fn lowered_for(program: &crate::formats::pte::Program, core: Core) -> Options {
        let explicit = program
            .operator_names(program.default_plan_index())
            .iter()
            .any(|o| o.split('.').next().is_some_and(|n| n.ends_with("_nhwc")));
        Options {
            flow: if explicit {
                Flow::Explicit
            } else {
                Flow::Default
            },
            core,
        }
    }
}

/// The host kernels' device for `core`'s CMSIS-NN path.
pub fn device_for(core: Core) -> crate::runtime::Device {
    crate::runtime::Device {
        target: core.kernel_target(),
        ..Default::default()
    }
}

/// Why a stage cannot be lowered.
pub type LowerError = PassError;

impl Module {
    /// The module of stage `g` (an ETRecord's `edge` graph) with `weights` (its state dict and
    /// constants by fully qualified name).
    pub fn from_stage(
        g: &ExportedGraph,
        stage: &str,
        method: &str,
        weights: &BTreeMap<String, TensorData>,
    ) -> Result<Module, LowerError> {
        let graph = graph_from_export(g, stage, method);
        let mut constants = BTreeMap::new();
        for (name, kind) in &g.inputs {
            if *kind == InputKind::UserInput {
                continue;
            }
            let key = g.input_targets.get(name).unwrap_or(name);
            let Some(id) = graph.values.iter().position(|v| &v.name == name) else {
                continue;
            };
            let data = weights.get(key).ok_or_else(|| PassError::Failed {
                pass: "read",
                detail: format!(
                    "weight {key:?} (graph input {name}) is not in the stage's state dict or constants"
                ),
            })?;
            constants.insert(id, data.clone());
        }
        Ok(Module {
            graph,
            constants,
            qparams: BTreeMap::new(),
            kept_float: Default::default(),
        })
    }

    /// The module of an ETRecord's `edge` stage (`edge_dialect_exported_program/<method>`; the
    /// first method when `method` is `None`) with its weights: what the lowering starts from.
    pub fn from_etrecord(
        etr: &crate::formats::etrecord::ETRecord,
        method: Option<&str>,
    ) -> Result<Module, LowerError> {
        const EDGE: &str = "edge_dialect_exported_program";
        let stage = etr
            .stages
            .iter()
            .filter(|s| s.name.starts_with(EDGE))
            .find(|s| method.is_none_or(|m| s.name == format!("{EDGE}/{m}")))
            .ok_or_else(|| PassError::Failed {
                pass: "read",
                detail: format!(
                    "the ETRecord holds no edge stage ({EDGE}/{}): it was saved without \
                     to_edge, and the Cortex-M passes start from the edge graph",
                    method.unwrap_or("forward")
                ),
            })?;
        let weights = etr.stage_weights(stage).map_err(|e| PassError::Failed {
            pass: "read",
            detail: e.to_string(),
        })?;
        let method = stage.name.split('/').nth(1).unwrap_or("forward");
        Module::from_stage(&stage.graph, "edge", method, &weights)
    }

    /// The host runtime of this module on `device` (its graph through the out-variant pass).
    pub fn runtime(
        &self,
        device: crate::runtime::Device,
    ) -> Result<crate::runtime::Runtime, crate::runtime::RuntimeError> {
        crate::runtime::Runtime::for_stage_graph(self.graph.clone(), &self.constants, device)
    }
}

/// One pass of the lowering: a [`crate::passes::Pass`] whose options say what it lowers for.
pub use crate::passes::Pass;

/// A lowering pass as the pass list holds it.
pub type LowerPass = dyn Pass<Options>;

/// The passes of `flow`, in ExecuTorch 1.5.1's order.
pub fn pass_list(flow: Flow) -> Result<Vec<&'static LowerPass>, LowerError> {
    match flow {
        Flow::Default => Ok(vec![
            &remove_getitem::RemoveGetItem,
            &fold_qparams::FoldAndAnnotateQParams,
            &scalar_to_tensor::ReplaceScalarWithTensorArg,
            &replace_quant::ReplaceQuantNodes,
            &fuse_activation::ActivationFusion,
            &clamp_activation::QuantizedClampActivation,
            &decompose_hardswish::DecomposeHardswish,
            &to_cortex_m::AtenToCortexM,
        ]),
        Flow::Explicit => Ok(vec![
            &remove_getitem::RemoveGetItem,
            &fold_qparams::FoldAndAnnotateQParams,
            &scalar_to_tensor::ReplaceScalarWithTensorArg,
            &fuse_activation::ActivationFusion,
            &clamp_activation::QuantizedClampActivation,
            &decompose_hardswish::DecomposeHardswish,
            &layout::ConvertConv1dToConv2d,
            &layout::ChannelsLastVariants,
            &layout::SqueezeToView,
            &layout::Canonicalize,
            &layout::RemovePermutesAroundElementwise,
            &layout::Canonicalize,
            &layout::ValidateExplicitLayout,
            &replace_quant::ReplaceQuantNodes,
            &to_cortex_m::AtenToCortexM,
        ]),
    }
}

/// One pass's output.
#[derive(Debug, Clone)]
pub struct LoweredStage {
    /// The pass's class name.
    pub pass: &'static str,
    /// Its output (the stage is named after the pass).
    pub module: Module,
    /// Whether the pass changed anything.
    pub changed: bool,
    /// Operator nodes before and after.
    pub ops_before: usize,
    pub ops_after: usize,
}

/// Lowers `module` (an `edge` stage) pass by pass, checking the graph after each; returns every
/// pass's output, in order.
pub fn lower(module: Module, options: &Options) -> Result<Vec<LoweredStage>, LowerError> {
    // sizes no model has are refused before any pass does arithmetic on them
    for v in &module.graph.values {
        let dims: Option<Vec<usize>> = v.shape.iter().map(|&d| usize::try_from(d).ok()).collect();
        let fits = dims
            .as_deref()
            .and_then(crate::kernels::element_count)
            .is_some_and(|n| n <= crate::kernels::MAX_TENSOR_ELEMENTS);
        if !fits {
            return Err(PassError::Failed {
                pass: "read",
                detail: format!(
                    "value {} has sizes {:?}, which no tensor has",
                    v.name, v.shape
                ),
            });
        }
    }
    let mut out = Vec::new();
    crate::passes::drive(
        module,
        &pass_list(options.flow)?,
        options,
        |k, pass| stage_name(k + 1, pass),
        |step| {
            out.push(LoweredStage {
                pass: step.pass,
                ops_before: step.ops_before,
                ops_after: step.module.graph.op_count(),
                module: step.module.clone(),
                changed: step.changed,
            })
        },
    )?;
    Ok(out)
}

/// The stage name of pass `k` (1-based): `pass_02_FoldAndAnnotateQParamsPass`, as the ground
/// truth ETRecords of `tests/fixtures/tools/make_pass_stages.py` name ExecuTorch's.
pub fn stage_name(k: usize, pass: &str) -> String {
    format!("pass_{k:02}_{pass}")
}
