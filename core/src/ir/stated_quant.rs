//! The quantization a program states without an ETRecord: a `quantize_per_tensor` names the
//! scale and zero point of the tensor it writes, a `dequantize_per_tensor` those of the tensor it
//! reads; a view, a layout change, a max pool or a concatenation of int8 tensors keeps its
//! input's. Every other integer tensor of a Cortex-M program has its scale folded into the
//! multipliers of the ops around it, and stays without one.

use super::{ArgData, Graph, NodeKind, QuantParams};
use crate::ops::Category;

impl Graph {
    /// Sets `quant` on the tensors the program's own quantize and dequantize calls describe
    /// (and on what keeps their codes unchanged), where it is not set yet.
    pub fn quant_from_qdq(&mut self) {
        let params = |args: &[super::Arg]| -> Option<QuantParams> {
            let scale = match args.get(1).map(|a| &a.data) {
                Some(ArgData::Float(s)) => *s,
                _ => return None,
            };
            let zero_point = match args.get(2).map(|a| &a.data) {
                Some(ArgData::Int(z)) => *z,
                _ => return None,
            };
            (scale.is_finite() && scale > 0.0).then_some(QuantParams { scale, zero_point })
        };
        for i in 0..self.nodes.len() {
            let node = &self.nodes[i];
            if node.kind != NodeKind::Operator {
                continue;
            }
            let traits = crate::ops::traits_of(&node.op);
            let keeps = node.def().is_some_and(|d| {
                d.category == Category::DataMovement
                    || node.op.ends_with("max_pool2d")
                    || node.op.ends_with("max_pool2d_nhwc")
                    || node.op.ends_with("max_pool2d_with_indices")
                    || node.op == "aten::cat"
            });
            let (target, q) = if traits.quantizes {
                (node.outputs.first().copied(), params(&node.args))
            } else if traits.dequantizes {
                (node.inputs.first().copied(), params(&node.args))
            } else if keeps {
                let q = node
                    .inputs
                    .first()
                    .and_then(|&v| self.values.get(v))
                    .filter(|v| v.dtype.is_some_and(|d| d.is_integer()))
                    .and_then(|v| v.quant);
                (node.outputs.first().copied(), q)
            } else {
                continue;
            };
            if let (Some(v), Some(q)) = (target, q) {
                if let Some(val) = self.values.get_mut(v) {
                    if val.quant.is_none() && val.dtype.is_some_and(|d| d.is_integer()) {
                        val.quant = Some(q);
                    }
                }
            }
        }
        // views share their source's codes
        for v in 0..self.values.len() {
            if self.values[v].quant.is_none() {
                if let Some(src) = self.values[v].alias_of {
                    self.values[v].quant = self.values.get(src).and_then(|s| s.quant);
                }
            }
        }
    }
}
