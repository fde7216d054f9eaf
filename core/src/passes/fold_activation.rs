//! A standalone ReLU folded into the output bounds of the quantize that follows it, as the
//! Cortex-M backend folds activations into the clamp of the quantized op before them:
//! `quantize(relu(x), scale, zp, qmin, qmax)` equals `quantize(x, scale, zp, max(qmin, zp),
//! qmax)` for every `x` (a negative `x` rounds to at most `zp`, which the new lower bound
//! clamps to `zp`, the code of 0). Applies where the ReLU's output feeds only that quantize.

use super::{Pass, PassError};
use crate::ir::module::Module;
use crate::ir::{Arg, ArgData, Graph, NodeKind, Origin, ValueInfo};

/// The pass.
pub struct FoldActivation;

impl Pass for FoldActivation {
    fn name(&self) -> &'static str {
        "fold_activation"
    }

    fn may_change(&self, graph: &Graph) -> bool {
        (0..graph.nodes.len()).any(|relu| foldable(graph, relu).is_some())
    }

    fn run(&self, mut module: Module, _: &()) -> Result<(Module, bool), PassError> {
        let graph = &mut module.graph;
        let mut removed = Vec::new();
        for relu in 0..graph.nodes.len() {
            let Some((quantize, new_min)) = foldable(graph, relu) else {
                continue;
            };
            let (Some(&x), Some(&relu_out)) = (
                graph.nodes[relu].inputs.first(),
                graph.nodes[relu].outputs.first(),
            ) else {
                continue;
            };
            // a new int value: the quantize's bound may be shared with other calls
            let bound = graph.values.len();
            graph
                .values
                .push(ValueInfo::literal(bound, ArgData::Int(new_min)));
            let origin = Origin {
                pass: "fold_activation",
                name: graph.nodes[relu].name.clone(),
                op: graph.nodes[relu].qualified_op(),
                instruction_id: graph.nodes[relu].instruction_id,
            };
            let q = &mut graph.nodes[quantize];
            q.came_from.push(origin);
            // the quantize's input and its lower bound, by their schema names
            let (input, quant_min) = (
                q.def().and_then(|d| d.arg("input")),
                q.def().and_then(|d| d.arg("quant_min")),
            );
            for (k, value, data) in [
                (input, x, ArgData::Tensor(x)),
                (quant_min, bound, ArgData::Int(new_min)),
            ] {
                if let Some(arg) = k.and_then(|k| q.args.get_mut(k)) {
                    *arg = Arg::new(arg.name.clone(), Some(value), data);
                }
            }
            for v in &mut q.inputs {
                if *v == relu_out {
                    *v = x;
                }
            }
            removed.push(relu);
        }
        graph.remove_nodes(&removed);
        let changed = !removed.is_empty();
        Ok((module, changed))
    }
}

/// The quantize a ReLU node folds into and the quantize's new lower bound.
fn foldable(graph: &Graph, relu: usize) -> Option<(usize, i64)> {
    let node = &graph.nodes[relu];
    if node.kind != NodeKind::Operator || node.def()?.name != "aten::relu" {
        return None;
    }
    let out = *node.outputs.first()?;
    if graph.outputs.contains(&out) {
        return None;
    }
    let value = graph.values.get(out)?;
    let [consumer] = value.consumers[..] else {
        return None;
    };
    let q = &graph.nodes[consumer];
    let name = q.def()?.name;
    if name != "quantized_decomposed::quantize_per_tensor"
        && name != "cortex_m::quantize_per_tensor"
    {
        return None;
    }
    // quantize(input, scale, zero_point, quant_min, quant_max, dtype): its input is the ReLU's
    if q.args.first()?.value != Some(out) {
        return None;
    }
    let int = |k: usize| match q.args.get(k)?.data {
        ArgData::Int(i) => Some(i),
        _ => None,
    };
    let def = q.def()?;
    let (zp, qmin, qmax) = (
        int(def.arg("zero_point")?)?,
        int(def.arg("quant_min")?)?,
        int(def.arg("quant_max")?)?,
    );
    (qmin..=qmax)
        .contains(&zp)
        .then_some((consumer, qmin.max(zp)))
}
