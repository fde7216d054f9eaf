//! CortexMReplaceOpsWithChannelsLastVariants: an annotated 4-D convolution, average pool or
//! max pool becomes its `channels_last::` variant computing in NHWC, between a layout permute of
//! its input to NHWC (`[0, 2, 3, 1]`) and one of its output back (`[0, 3, 1, 2]`) into the value
//! its readers read.

use crate::ir::{ArgData, Storage};

use super::super::edit::{
    bool_arg, ints_arg, make_node, new_tensor, op_name, pos, set_nodes, tensor_arg, unique_name,
};
use super::super::{LowerError, Module, Options, Pass};
use super::LAYOUT_PERMUTE;

pub struct ChannelsLastVariants;

/// Whether `q` holds per-tensor parameters at index 0.
fn per_tensor(q: Option<&super::super::QuantArgs>) -> bool {
    q.is_some_and(|q| !q.per_channel())
}

impl Pass<Options> for ChannelsLastVariants {
    fn name(&self) -> &'static str {
        "CortexMReplaceOpsWithChannelsLastVariants"
    }

    fn run(&self, mut m: Module, _: &Options) -> Result<(Module, bool), LowerError> {
        let old = std::mem::take(&mut m.graph.nodes);
        m.graph.nodes = old.clone();
        let mut nodes = Vec::with_capacity(old.len() + 8);
        let mut changed = false;
        for mut node in old {
            let target = match op_name(&node) {
                "aten::convolution" => "channels_last::convolution",
                "aten::avg_pool2d" => "channels_last::avg_pool2d",
                "aten::max_pool2d" => "channels_last::max_pool2d",
                _ => {
                    nodes.push(node);
                    continue;
                }
            };
            let (Some(x), Some(&out)) = (tensor_arg(&node, 0), node.outputs.first()) else {
                nodes.push(node);
                continue;
            };
            let rank4 = m.graph.values[out].shape.len() == 4;
            let q = m.qparams.get(&node.name);
            let (qin, qout) = (
                q.and_then(|q| q.inputs.get(&0)),
                q.and_then(|q| q.outputs.get(&0)),
            );
            let eligible = rank4
                && match target {
                    "channels_last::convolution" => per_tensor(qin) && per_tensor(qout),
                    "channels_last::avg_pool2d" => {
                        per_tensor(qin)
                            && per_tensor(qout)
                            && matches!(
                                node.args
                                    .get(pos(&node, "divisor_override"))
                                    .map(|a| &a.data),
                                None | Some(ArgData::None)
                            )
                    }
                    _ => {
                        let dilation =
                            ints_arg(&node, pos(&node, "dilation")).unwrap_or_else(|| vec![1, 1]);
                        let ceil = bool_arg(&node, pos(&node, "ceil_mode")).unwrap_or(false);
                        let same = match (qin, qout) {
                            (Some(i), Some(o)) => {
                                !o.per_channel()
                                    && (i.scale() - o.scale()).abs() <= 1e-6
                                    && i.zp() == o.zp()
                            }
                            (Some(_), None) => true,
                            _ => false,
                        };
                        per_tensor(qin) && dilation.iter().all(|&d| d == 1) && !ceil && same
                    }
                };
            if !eligible {
                nodes.push(node);
                continue;
            }
            let nhwc = |shape: &[i64]| vec![shape[0], shape[2], shape[3], shape[1]];
            let (dtype, x_shape) = {
                let v = &m.graph.values[x];
                (
                    v.dtype.unwrap_or(crate::dtype::ScalarType::Char),
                    v.shape.clone(),
                )
            };
            if x_shape.len() != 4 {
                nodes.push(node);
                continue;
            }
            let out_shape = m.graph.values[out].shape.clone();
            let in_name = unique_name(&m.graph, "channels_last_permute_copy_default");
            let x_nhwc = new_tensor(
                &mut m.graph,
                &in_name,
                dtype,
                nhwc(&x_shape),
                Vec::new(),
                Storage::Unplanned,
            );
            let permute_in = make_node(
                &in_name,
                LAYOUT_PERMUTE,
                "default",
                vec![
                    ArgData::Tensor(x),
                    ArgData::Ints(vec![Some(0), Some(2), Some(3), Some(1)]),
                ],
                vec![x_nhwc],
            );
            let op_out_name =
                unique_name(&m.graph, &format!("{}_default", target.replace("::", "_")));
            let out_dtype = m.graph.values[out].dtype.unwrap_or(dtype);
            let y_nhwc = new_tensor(
                &mut m.graph,
                &op_out_name,
                out_dtype,
                nhwc(&out_shape),
                Vec::new(),
                Storage::Unplanned,
            );
            let out_name = unique_name(&m.graph, "channels_last_permute_copy_default");
            let permute_out = make_node(
                &out_name,
                LAYOUT_PERMUTE,
                "default",
                vec![
                    ArgData::Tensor(y_nhwc),
                    ArgData::Ints(vec![Some(0), Some(3), Some(1), Some(2)]),
                ],
                vec![out],
            );
            // the op itself, in NHWC, keeping its name, annotations and provenance
            node.set_op(target, "default");
            super::super::edit::replace_in_node(&mut node, x, x_nhwc);
            node.outputs = vec![y_nhwc];
            m.graph.values[out].dim_order = Vec::new();
            nodes.push(permute_in);
            nodes.push(node);
            nodes.push(permute_out);
            changed = true;
        }
        set_nodes(&mut m.graph, nodes);
        Ok((m, changed))
    }
}
