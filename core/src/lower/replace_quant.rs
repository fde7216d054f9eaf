//! ReplaceQuantNodesPass: `quantized_decomposed::quantize_per_tensor` / `dequantize_per_tensor`
//! of int8 (or int16) within its dtype's range become `cortex_m::quantize_per_tensor` /
//! `dequantize_per_tensor`, the same arguments.

use crate::dtype::ScalarType;
use crate::ir::{ArgData, Node};

use super::edit::{int_arg, is_op, pos};
use super::{LowerError, Module, Options, Pass};

pub struct ReplaceQuantNodes;

/// Whether a per-tensor (de)quantize's range fits the int8/int16 kernel.
pub fn qualifies(node: &Node) -> bool {
    let dtype = match node.args.get(pos(node, "dtype")).map(|a| &a.data) {
        Some(ArgData::ScalarType(t)) => *t,
        _ => return false,
    };
    let (Some(qmin), Some(qmax)) = (
        int_arg(node, pos(node, "quant_min")),
        int_arg(node, pos(node, "quant_max")),
    ) else {
        return false;
    };
    match dtype {
        ScalarType::Char => qmin >= -128 && qmax <= 127,
        ScalarType::Short => qmin >= -32768 && qmax <= 32767,
        _ => false,
    }
}

impl Pass<Options> for ReplaceQuantNodes {
    fn name(&self) -> &'static str {
        "ReplaceQuantNodesPass"
    }

    fn run(&self, mut m: Module, _: &Options) -> Result<(Module, bool), LowerError> {
        let mut changed = false;
        for node in &mut m.graph.nodes {
            let to = if is_op(node, "quantized_decomposed::quantize_per_tensor") {
                "cortex_m::quantize_per_tensor"
            } else if is_op(node, "quantized_decomposed::dequantize_per_tensor") {
                "cortex_m::dequantize_per_tensor"
            } else {
                continue;
            };
            if node.overload == "default" && qualifies(node) {
                node.set_op(to, "default");
                changed = true;
            }
        }
        Ok((m, changed))
    }
}
