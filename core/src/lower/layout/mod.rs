//! The explicit-layout flow's passes: spatial ops moved into NHWC with layout permutes around
//! them, squeezes as views, and view/permute chains canonicalised so inverse permutes between
//! NHWC ops cancel and permutes that only move unit dims become views.
//!
//! - [`ConvertConv1dToConv2d`] — refuses an annotated 1-D convolution (not implemented yet)
//! - [`ChannelsLastVariants`] — CortexMReplaceOpsWithChannelsLastVariants
//! - [`SqueezeToView`] — ReplaceSqueezeAndUnsqueezeWithViewPass
//! - [`Canonicalize`] — CortexMCanonicalizeViewCopyPermutePass (fusing, without the view/permute
//!   swaps: a chain that would need one is refused)
//! - [`RemovePermutesAroundElementwise`] — refuses permutes around an element-wise op (not
//!   implemented yet)
//! - [`ValidateExplicitLayout`] — ValidateCortexMExplicitLayoutPass

mod canonicalize;
mod variants;

pub use canonicalize::Canonicalize;
pub use variants::ChannelsLastVariants;

use crate::ir::{ArgData, NodeKind};

use super::edit::{fail, op_name, tensor_arg};
use super::{LowerError, LowerPass, Module, Options};

/// The layout permute the explicit flow inserts.
pub const LAYOUT_PERMUTE: &str = "channels_last::permute_copy";

/// ConvertConv1dToConv2dPass.
pub struct ConvertConv1dToConv2d;

impl LowerPass for ConvertConv1dToConv2d {
    fn name(&self) -> &'static str {
        "ConvertConv1dToConv2dPass"
    }

    fn run(&self, m: Module, _: &Options) -> Result<(Module, bool), LowerError> {
        for n in &m.graph.nodes {
            let conv1d = op_name(n) == "aten::convolution"
                && tensor_arg(n, 1).is_some_and(|w| m.graph.values[w].shape.len() == 3);
            if conv1d {
                return Err(fail(
                    self.name(),
                    format!(
                        "{}: turning a 1-D convolution into a 2-D one is not implemented in etscope yet",
                        n.name
                    ),
                ));
            }
        }
        Ok((m, false))
    }
}

/// ReplaceSqueezeAndUnsqueezeWithViewPass: a squeeze or unsqueeze is a view to its output's
/// sizes.
pub struct SqueezeToView;

impl LowerPass for SqueezeToView {
    fn name(&self) -> &'static str {
        "ReplaceSqueezeAndUnsqueezeWithViewPass"
    }

    fn run(&self, mut m: Module, _: &Options) -> Result<(Module, bool), LowerError> {
        let mut changed = false;
        for i in 0..m.graph.nodes.len() {
            let n = &m.graph.nodes[i];
            if !matches!(op_name(n), "aten::squeeze_copy" | "aten::unsqueeze_copy") {
                continue;
            }
            let (Some(x), Some(&o)) = (tensor_arg(n, 0), n.outputs.first()) else {
                continue;
            };
            let shape = m.graph.values[o].shape.clone();
            let node = &mut m.graph.nodes[i];
            node.set_op("aten::view_copy", "default");
            node.args = vec![
                crate::ir::Arg::new(Some("self".into()), Some(x), ArgData::Tensor(x)),
                crate::ir::Arg::new(
                    Some("size".into()),
                    None,
                    ArgData::Ints(shape.iter().map(|&s| Some(s)).collect()),
                ),
            ];
            changed = true;
        }
        Ok((m, changed))
    }
}

/// RemovePermutesAroundElementwiseOps: moving permutes across element-wise ops is not
/// implemented yet; a graph that has one there is refused, every other passes unchanged.
pub struct RemovePermutesAroundElementwise;

impl LowerPass for RemovePermutesAroundElementwise {
    fn name(&self) -> &'static str {
        "RemovePermutesAroundElementwiseOps"
    }

    fn run(&self, m: Module, _: &Options) -> Result<(Module, bool), LowerError> {
        let permute = |v: usize| {
            m.graph.values[v].producer.is_some_and(|p| {
                matches!(
                    op_name(&m.graph.nodes[p]),
                    LAYOUT_PERMUTE | "aten::permute_copy"
                )
            })
        };
        for n in &m.graph.nodes {
            let elementwise = n.kind == NodeKind::Operator
                && n.def().is_some_and(|d| d.traits.elementwise)
                && n.inputs.len() >= 2;
            if elementwise && n.inputs.iter().any(|&v| permute(v)) {
                return Err(fail(
                    self.name(),
                    format!(
                        "{}: moving layout permutes across an element-wise op is not implemented in etscope yet",
                        n.name
                    ),
                ));
            }
        }
        Ok((m, false))
    }
}

/// ValidateCortexMExplicitLayoutPass: every spatial op moved to NHWC, every layout permute a
/// permutation of an int8 tensor of rank 1 to 4.
pub struct ValidateExplicitLayout;

impl LowerPass for ValidateExplicitLayout {
    fn name(&self) -> &'static str {
        "ValidateCortexMExplicitLayoutPass"
    }

    fn run(&self, m: Module, _: &Options) -> Result<(Module, bool), LowerError> {
        for n in &m.graph.nodes {
            if matches!(
                op_name(n),
                "aten::convolution" | "aten::avg_pool2d" | "aten::max_pool2d"
            ) {
                return Err(fail(
                    self.name(),
                    format!(
                        "Cortex-M explicit layout requires every quantized spatial operator to be \
                         NHWC-eligible, but {} ({}) was not: use the default flow for this model",
                        n.name,
                        n.qualified_op()
                    ),
                ));
            }
        }
        Ok((m, false))
    }
}
