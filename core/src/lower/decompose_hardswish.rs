//! DecomposeHardswishPass: a quantized hardswish right after a convolution or linear layer (its
//! only reader) becomes `x * min(x, 3)` with the rest folded into quantization parameters:
//! `hardswish(x) = x * (clamp(x, -3, 3) + 3) / 6`, the lower clamp already in the layer's range
//! (the quantizer clamps it to [-3, ∞)), the `+ 3` a shift of the second operand's zero point by
//! `round(3 / scale)`, the `/ 6` a sixfold output scale. The minimum's bound is an int8 constant,
//! 3 quantized with the layer's output parameters.

use crate::dtype::ScalarType;
use crate::ir::{ArgData, Storage};
use crate::tensor::TensorData;

use super::edit::{
    add_constant, make_node, new_tensor, op_name, set_nodes, tensor_arg, unique_name,
};
use super::qparams::{quantize_val, NodeQParams};
use super::{LowerError, Module, Options, Pass};

pub struct DecomposeHardswish;

impl Pass<Options> for DecomposeHardswish {
    fn name(&self) -> &'static str {
        "DecomposeHardswishPass"
    }

    fn run(&self, mut m: Module, _: &Options) -> Result<(Module, bool), LowerError> {
        let mut changed = false;
        let count = m.graph.nodes.len();
        let mut nodes = Vec::with_capacity(count + 4);
        // the minimum and mul of a hardswish, placed right after its layer
        let mut after: Vec<(usize, Vec<crate::ir::Node>)> = Vec::new();
        let mut erased = Vec::new();
        for i in 0..count {
            let hs = m.graph.nodes[i].clone();
            if op_name(&hs) != "aten::hardswish" {
                continue;
            }
            let Some(x) = tensor_arg(&hs, 0) else {
                continue;
            };
            let Some(p) = m.graph.values[x].producer else {
                continue;
            };
            let layer = &m.graph.nodes[p];
            if !matches!(op_name(layer), "aten::linear" | "aten::convolution")
                || m.graph.values[x].consumers.len() > 1
            {
                continue;
            }
            let (Some(layer_q), Some(hs_q)) = (
                m.qparams.get(&layer.name).cloned(),
                m.qparams.get(&hs.name).cloned(),
            ) else {
                continue;
            };
            let (Some(lo), Some(hs_in), Some(hs_out)) = (
                layer_q.outputs.get(&0),
                hs_q.inputs.get(&0),
                hs_q.outputs.get(&0),
            ) else {
                continue;
            };
            let bound = quantize_val(3.0, lo.scale(), lo.zp(), lo.qmin, lo.qmax);
            let c = add_constant(
                &mut m,
                "_lifted_tensor_constant",
                TensorData {
                    dtype: ScalarType::Char,
                    shape: Vec::new(),
                    bytes: vec![bound as i8 as u8],
                },
            );
            let (dtype, shape, dim_order) = {
                let v = &m.graph.values[x];
                (
                    v.dtype.unwrap_or(ScalarType::Char),
                    v.shape.clone(),
                    v.dim_order.clone(),
                )
            };
            let min_name = unique_name(&m.graph, "aten_minimum_default");
            let min_out = new_tensor(
                &mut m.graph,
                &min_name,
                dtype,
                shape,
                dim_order,
                Storage::Unplanned,
            );
            let mut minimum = make_node(
                &min_name,
                "aten::minimum",
                "default",
                vec![ArgData::Tensor(x), ArgData::Tensor(c)],
                vec![min_out],
            );
            let layer = &m.graph.nodes[p];
            minimum.debug_handles = layer.debug_handles.clone();
            minimum.module_stack = layer.module_stack.clone();
            m.qparams.insert(min_name, layer_q.clone());
            let mul_name = unique_name(&m.graph, "aten_mul_tensor");
            let mut mul = make_node(
                &mul_name,
                "aten::mul",
                "Tensor",
                vec![ArgData::Tensor(x), ArgData::Tensor(min_out)],
                hs.outputs.clone(),
            );
            mul.debug_handles = hs.debug_handles.clone();
            mul.module_stack = hs.module_stack.clone();
            let mut shifted = hs_in.clone();
            shifted.zero_points = vec![hs_in.zp() - (3.0 / hs_in.scale()).round_ties_even() as i64];
            let mut out = hs_out.clone();
            out.scales = vec![hs_out.scale() * 6.0];
            let mut q = NodeQParams::default();
            q.inputs.insert(0, hs_in.clone());
            q.inputs.insert(1, shifted);
            q.outputs.insert(0, out);
            m.qparams.insert(mul_name, q);
            after.push((p, vec![minimum, mul]));
            erased.push(i);
            changed = true;
        }
        if !changed {
            return Ok((m, false));
        }
        for (i, node) in std::mem::take(&mut m.graph.nodes).into_iter().enumerate() {
            if erased.contains(&i) {
                continue;
            }
            nodes.push(node);
            if let Some((_, extra)) = after.iter_mut().find(|(p, _)| *p == i) {
                nodes.append(extra);
            }
        }
        set_nodes(&mut m.graph, nodes);
        Ok((m, true))
    }
}
