//! ActivationFusionPass: a ReLU, hardtanh, clamp or hardsigmoid right after a quantized
//! convolution, linear, add/sub or max pool (its only reader) is removed, and the producer's
//! output range narrowed to the activation's bounds instead. ExecuTorch fuses only where the
//! activation's quantized bounds equal the output range already (a calibrated ReLU output
//! starts at its zero point); a max pool takes the narrowed range itself. A hardsigmoid becomes
//! a rescaled output (scale × 6, zero point + round(1 / (2 scale))).

use crate::ir::{ArgData, Node};

use super::edit::{op_name, replace_uses, set_nodes, tensor_arg};
use super::qparams::quantize_val;
use super::{LowerError, Module, Options, Pass};

pub struct ActivationFusion;

/// The registry's Cortex-M rules of `node`'s operator (none for one it does not know).
fn cortex_m_rules(node: &Node) -> crate::ops::CortexMRules {
    crate::ops::lookup(op_name(node), "")
        .map_or_else(Default::default, |id| crate::ops::def(id).cortex_m)
}

/// A float argument that is a compile-time scalar (`None` for a `None` argument; `Err` for a
/// tensor or anything else).
fn scalar(node: &Node, k: usize) -> Result<Option<f64>, ()> {
    match node.args.get(k).map(|a| &a.data) {
        None | Some(ArgData::None) => Ok(None),
        Some(ArgData::Float(f)) => Ok(Some(*f)),
        Some(ArgData::Int(i)) => Ok(Some(*i as f64)),
        Some(_) => Err(()),
    }
}

/// The activation's float bounds (ExecuTorch's `get_activation_bounds`); `None` when they are
/// not compile-time scalars or the op is no clamp-like activation.
pub fn activation_bounds(node: &Node) -> Option<(Option<f64>, Option<f64>)> {
    match op_name(node) {
        "aten::relu" | "aten::relu_" => Some((Some(0.0), None)),
        "aten::hardsigmoid" => Some((Some(0.0), Some(1.0))),
        "aten::hardtanh" | "aten::hardtanh_" => {
            // hardtanh(x, min_val=-1, max_val=1): defaults when the export left them out
            let lo = if node.args.len() > 1 {
                scalar(node, 1).ok()?
            } else {
                Some(-1.0)
            };
            let hi = if node.args.len() > 2 {
                scalar(node, 2).ok()?
            } else {
                Some(1.0)
            };
            Some((lo, hi))
        }
        "aten::clamp" => Some((scalar(node, 1).ok()?, scalar(node, 2).ok()?)),
        _ => None,
    }
}

impl Pass<Options> for ActivationFusion {
    fn name(&self) -> &'static str {
        "ActivationFusionPass"
    }

    fn run(&self, mut m: Module, _: &Options) -> Result<(Module, bool), LowerError> {
        let mut erase = Vec::new();
        for i in 0..m.graph.nodes.len() {
            let act = &m.graph.nodes[i];
            if !cortex_m_rules(act).fused_activation {
                continue;
            }
            let Some(x) = tensor_arg(act, 0) else {
                continue;
            };
            let Some(p) = m.graph.values[x].producer else {
                continue;
            };
            let producer = &m.graph.nodes[p];
            if !cortex_m_rules(producer).takes_fused_activation
                || m.graph.values[x].consumers.len() > 1
                || m.graph.outputs.contains(&x)
            {
                continue;
            }
            // both ends annotated: the producer by the fold, the activation with its output
            let (Some(act_q), true) = (
                m.qparams.get(&act.name),
                m.qparams.contains_key(&producer.name),
            ) else {
                continue;
            };
            let Some(out) = act_q.outputs.get(&0).filter(|q| !q.per_channel()) else {
                continue;
            };
            let Some((lo, hi)) = activation_bounds(act) else {
                continue;
            };
            let (scale, zp) = (out.scale(), out.zp());
            let qlo = lo.map_or(out.qmin, |v| quantize_val(v, scale, zp, out.qmin, out.qmax));
            let qhi = hi.map_or(out.qmax, |v| quantize_val(v, scale, zp, out.qmin, out.qmax));
            let mut fused = out.clone();
            let is_pool = op_name(producer).starts_with("aten::max_pool2d");
            if is_pool {
                if op_name(act) == "aten::hardsigmoid" {
                    continue;
                }
                fused.qmin = qlo;
                fused.qmax = qhi;
            } else if qlo != out.qmin || qhi != out.qmax {
                continue;
            }
            if op_name(act) == "aten::hardsigmoid" {
                let new_zp = fused.zp() + (1.0 / (2.0 * scale)).round_ties_even() as i64;
                fused.scales = vec![scale * 6.0];
                fused.zero_points = vec![new_zp.clamp(fused.qmin, fused.qmax)];
            }
            let prod_name = producer.name.clone();
            let act_out = act.outputs.first().copied();
            let act_handles = act.debug_handles.clone();
            let prod = &mut m.graph.nodes[p];
            for h in act_handles {
                if !prod.debug_handles.contains(&h) {
                    prod.debug_handles.push(h);
                }
            }
            // the producer now writes the activation's codes, with their scale
            m.graph.values[x].quant = Some(crate::ir::QuantParams {
                scale: fused.scale(),
                zero_point: fused.zp(),
            });
            if let Some(q) = m.qparams.get_mut(&prod_name) {
                q.outputs.insert(0, fused);
            }
            if let Some(o) = act_out {
                replace_uses(&mut m.graph, o, x);
            }
            erase.push(i);
        }
        let changed = !erase.is_empty();
        let nodes = std::mem::take(&mut m.graph.nodes)
            .into_iter()
            .filter(|n| !erase.contains(&n.id))
            .collect();
        set_nodes(&mut m.graph, nodes);
        Ok((m, changed))
    }
}
