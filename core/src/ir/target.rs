//! The core a Cortex-M program was lowered for, where the program says, read from its calls
//! through the IR: the backend gives `quantized_linear` a precomputed `kernel_sum` (and no bias)
//! for Helium/MVE cores only, and `quantized_batch_matmul` a scratch buffer only for MVE; a call
//! a Helium core could not run (`core_buffers::fails_on`) was lowered for a core without one.

use super::call::CallView;
use super::{ArgData, NodeKind};
use crate::formats::pte::Program;
use crate::kernels::cmsis::core_buffers::fails_on;
use crate::kernels::{Device, Target};

impl Target {
    /// The core plan `plan_index` of `program` was lowered for, `None` when nothing tells (a
    /// program with no `cortex_m::` call is not looked at further).
    pub fn of_program(program: &Program, plan_index: usize) -> Option<Target> {
        let cortex_m = program
            .operator_names(plan_index)
            .iter()
            .any(|o| o.starts_with("cortex_m::"));
        if !cortex_m {
            return None;
        }
        let graph = super::from_pte::graph_from_plan(program, plan_index)?;
        for node in graph.nodes.iter().filter(|n| n.kind == NodeKind::Operator) {
            let call = CallView::new(&graph, node);
            match call.op() {
                "cortex_m::quantized_linear" => {
                    let k = call.position("kernel_sum");
                    match k.and_then(|k| call.arg_at(k)) {
                        Some(ArgData::Tensor(_)) => return Some(Target::CortexM55),
                        // the program's `None` (an unset value tells nothing)
                        Some(ArgData::None)
                            if k.and_then(|k| node.args.get(k)?.value)
                                .and_then(|v| graph.values.get(v))
                                .is_some_and(|v| v.kind == "Null") =>
                        {
                            return Some(Target::CortexMDsp)
                        }
                        _ => {}
                    }
                }
                "cortex_m::quantized_batch_matmul" => {
                    if let Some(t) = call.tensor("scratch") {
                        let elements: i64 = t.shape.iter().product();
                        return Some(if elements > 0 {
                            Target::CortexM55
                        } else {
                            Target::CortexMDsp
                        });
                    }
                }
                _ => {
                    // a call a Helium core cannot run was lowered for a core without one
                    if call
                        .core_call()
                        .and_then(|c| fails_on(Target::CortexM55, c))
                        .is_some()
                    {
                        return Some(Target::CortexMDsp);
                    }
                }
            }
        }
        None
    }

    /// The program's own target where it says, else the default (Cortex-M55).
    pub fn for_program(program: &Program, plan_index: usize) -> Target {
        Target::of_program(program, plan_index).unwrap_or_default()
    }
}

impl Device {
    /// Plan `plan_index` of `program` on its own core (`Target::for_program`) with the pinned
    /// CMSIS-NN.
    pub fn for_program(program: &Program, plan_index: usize) -> Device {
        Device {
            target: Target::for_program(program, plan_index),
            ..Device::default()
        }
    }
}
