//! The explicit-layout flow's passes: spatial ops moved into NHWC with layout permutes around
//! them, squeezes as views, and view/permute chains canonicalised so inverse permutes between
//! NHWC ops cancel and permutes that only move unit dims become views.
//!
//! - [`ConvertConv1dToConv2d`] — ConvertConv1dToConv2dPass
//! - [`ChannelsLastVariants`] — CortexMReplaceOpsWithChannelsLastVariants
//! - [`SqueezeToView`] — ReplaceSqueezeAndUnsqueezeWithViewPass
//! - [`Canonicalize`] — CortexMCanonicalizeViewCopyPermutePass (fusing, sinking unit-dim views,
//!   swapping views and permutes by `view_map::ViewMap`)
//! - [`RemovePermutesAroundElementwise`] — RemovePermutesAroundElementwiseOps
//! - [`ValidateExplicitLayout`] — ValidateCortexMExplicitLayoutPass

mod canonicalize;
mod elementwise_permutes;
mod variants;
mod view_map;

pub use canonicalize::Canonicalize;
pub use elementwise_permutes::RemovePermutesAroundElementwise;
pub use variants::ChannelsLastVariants;

use crate::ir::{ArgData, Storage};

use super::edit::{
    fail, ints_arg, make_node, meta, new_tensor, op_name, pos, pos_in, replace_in_node, set_nodes,
    tensor_arg, unique_name,
};
use super::{LowerError, Module, Options, Pass};

/// The layout permute the explicit flow inserts.
pub const LAYOUT_PERMUTE: &str = "channels_last::permute_copy";

/// ConvertConv1dToConv2dPass: a 1-D convolution whose weight is a constant `[O, I, K]` becomes a
/// 2-D one of unit height — the weight reshaped to `[O, I, 1, K]` in place, the input unsqueezed
/// at dim 2 before it, its output squeezed at dim 2 after it, stride, padding, dilation and
/// output padding given their unit height first.
pub struct ConvertConv1dToConv2d;

impl Pass<Options> for ConvertConv1dToConv2d {
    fn name(&self) -> &'static str {
        "ConvertConv1dToConv2dPass"
    }

    fn run(&self, mut m: Module, _: &Options) -> Result<(Module, bool), LowerError> {
        let old = std::mem::take(&mut m.graph.nodes);
        m.graph.nodes = old.clone();
        let mut nodes = Vec::with_capacity(old.len() + 4);
        let mut changed = false;
        for mut node in old {
            let conv1d = op_name(&node) == "aten::convolution"
                && node.args.len() == 9
                && ints_arg(&node, pos(&node, "stride")).is_some_and(|s| s.len() == 1);
            let weight = pos_in(&node, "weight")
                .and_then(|k| tensor_arg(&node, k))
                .filter(|&w| m.graph.values[w].shape.len() == 3 && m.constants.contains_key(&w));
            let (Some(w), Some(x), Some(&out), true) =
                (weight, tensor_arg(&node, 0), node.outputs.first(), conv1d)
            else {
                nodes.push(node);
                continue;
            };
            let unit_height = |shape: &[i64]| {
                let mut s = shape.to_vec();
                s.insert(2.min(s.len()), 1);
                s
            };
            // the weight, reshaped in place (its data is the same row-major bytes)
            m.graph.values[w].shape = unit_height(&m.graph.values[w].shape);
            m.graph.values[w].dim_order = Vec::new();
            m.graph.values[w].logical_order = Some((0..4).collect());
            if let Some(data) = m.constants.get_mut(&w) {
                data.shape.insert(2, 1);
            }
            let (x_dtype, x_shape) = meta(&m.graph, x);
            let (o_dtype, o_shape) = meta(&m.graph, out);
            let x_name = unique_name(&m.graph, "aten_unsqueeze_copy_default");
            let x2 = new_tensor(
                &mut m.graph,
                &x_name,
                x_dtype.unwrap_or(crate::ScalarType::Float),
                unit_height(&x_shape),
                Vec::new(),
                Storage::Unplanned,
            );
            let unsqueeze = make_node(
                &x_name,
                "aten::unsqueeze_copy",
                "default",
                vec![ArgData::Tensor(x), ArgData::Int(2)],
                vec![x2],
            );
            let y_name = unique_name(&m.graph, &format!("{}_2d", node.name));
            let y2 = new_tensor(
                &mut m.graph,
                &y_name,
                o_dtype.unwrap_or(crate::ScalarType::Float),
                unit_height(&o_shape),
                Vec::new(),
                Storage::Unplanned,
            );
            let squeeze = make_node(
                &unique_name(&m.graph, "aten_squeeze_copy_dim"),
                "aten::squeeze_copy",
                "dim",
                vec![ArgData::Tensor(y2), ArgData::Int(2)],
                vec![out],
            );
            replace_in_node(&mut node, x, x2);
            for (k, first) in [(3, 1), (4, 0), (5, 1), (7, 0)] {
                if let Some(v) = ints_arg(&node, k) {
                    let mut list = vec![Some(first)];
                    list.extend(v.into_iter().map(Some));
                    node.args[k].data = ArgData::Ints(list);
                }
            }
            node.outputs = vec![y2];
            m.graph.values[out].dim_order = Vec::new();
            nodes.push(unsqueeze);
            nodes.push(node);
            nodes.push(squeeze);
            changed = true;
        }
        set_nodes(&mut m.graph, nodes);
        Ok((m, changed))
    }
}

/// ReplaceSqueezeAndUnsqueezeWithViewPass: a squeeze or unsqueeze is a view to its output's
/// sizes.
pub struct SqueezeToView;

impl Pass<Options> for SqueezeToView {
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

/// ValidateCortexMExplicitLayoutPass: every spatial op moved to NHWC, every layout permute a
/// permutation of an int8 tensor of rank 1 to 4. ExecuTorch refuses every spatial op left
/// channels-first; a layer the caller kept in float on purpose ([`Module::kept_float`], `lower
/// --keep-float`) reading a float tensor is let through: it runs channels-first on its portable
/// kernel, the int8 transposes ExecuTorch's layout passes placed around it bring its neighbours'
/// NHWC tensors to it and back (`tests/fixtures/tools/make_digits.py` makes ExecuTorch's own
/// program of this kind, its validation relaxed the same way, and
/// `core/tests/digits.rs::an_explicit_flow_layer_kept_in_float_equals_executorchs_own` compares).
pub struct ValidateExplicitLayout;

impl Pass<Options> for ValidateExplicitLayout {
    fn name(&self) -> &'static str {
        "ValidateCortexMExplicitLayoutPass"
    }

    fn run(&self, m: Module, _: &Options) -> Result<(Module, bool), LowerError> {
        for n in &m.graph.nodes {
            let kept_float = m.kept_float.contains(&n.name)
                && n.inputs.first().is_some_and(|&v| {
                    m.graph.values[v].dtype == Some(crate::dtype::ScalarType::Float)
                });
            if !kept_float
                && matches!(
                    op_name(n),
                    "aten::convolution" | "aten::avg_pool2d" | "aten::max_pool2d"
                )
            {
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
