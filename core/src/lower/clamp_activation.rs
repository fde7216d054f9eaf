//! QuantizedClampActivationPass: a ReLU, hardtanh or clamp left on an int8 tensor after fusion
//! becomes `aten::clamp` with its float bounds quantized by the node's output parameters, so the
//! portable kernel clamps int8 codes.

use crate::dtype::ScalarType;
use crate::ir::{Arg, ArgData};

use super::edit::{op_name, tensor_arg};
use super::fuse_activation::activation_bounds;
use super::qparams::quantize_val;
use super::{LowerError, Module, Options, Pass};

pub struct QuantizedClampActivation;

impl Pass<Options> for QuantizedClampActivation {
    fn name(&self) -> &'static str {
        "QuantizedClampActivationPass"
    }

    fn run(&self, mut m: Module, _: &Options) -> Result<(Module, bool), LowerError> {
        let mut changed = false;
        for i in 0..m.graph.nodes.len() {
            let node = &m.graph.nodes[i];
            let int8_clamp = crate::ops::lookup(op_name(node), "")
                .is_some_and(|id| crate::ops::def(id).cortex_m.int8_clamp);
            if !int8_clamp {
                continue;
            }
            let Some(x) = tensor_arg(node, 0) else {
                continue;
            };
            if m.graph.values[x].dtype != Some(ScalarType::Char) {
                continue;
            }
            let Some(q) = m
                .qparams
                .get(&node.name)
                .and_then(|p| p.outputs.get(&0))
                .filter(|q| !q.per_channel())
                .cloned()
            else {
                continue;
            };
            let Some((lo, hi)) = activation_bounds(node) else {
                continue;
            };
            let quantize = |b: Option<f64>| {
                b.map_or(ArgData::None, |v| {
                    ArgData::Int(quantize_val(v, q.scale(), q.zp(), q.qmin, q.qmax))
                })
            };
            let (lo, hi) = (quantize(lo), quantize(hi));
            let node = &mut m.graph.nodes[i];
            node.set_op("aten::clamp", "default");
            let input = node.args[0].clone();
            node.args = vec![
                input,
                Arg::new(Some("min".into()), None, lo),
                Arg::new(Some("max".into()), None, hi),
            ];
            changed = true;
        }
        Ok((m, changed))
    }
}
