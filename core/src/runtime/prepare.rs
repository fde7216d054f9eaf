//! Preparation: from an executable graph to the runtime's steps and initial value table, once;
//! and the constants of a `.pte` plan decoded (shared by every run).

use super::value::{Buf, HostTensor, RValue};
use super::{program_err, Action, Runtime, Step, MAX_PREPARED_BYTES};
use crate::formats::pte::{EValue, Program, Tensor};
use crate::ir::from_pte::graph_from_plan;
use crate::ir::{ArgData, Graph, NodeKind, ValueInfo};
use crate::kernels::{element_count, Derived, Device, RuntimeError, Target, MAX_TENSOR_ELEMENTS};
use crate::tensor::undo_dim_order;
use crate::ScalarType;

/// Plan `plan_index` of `program`: its graph, with the constants read from the program.
pub(super) fn program(
    program: &Program,
    plan_index: usize,
    target: Target,
    max_bytes: u64,
) -> Result<Runtime, RuntimeError> {
    let graph = graph_from_plan(program, plan_index).ok_or_else(|| program_err("no graph"))?;
    program_graph(program, plan_index, graph, target, max_bytes)
}

/// `graph` (plan `plan_index` of `program`, or a pass's rewrite of it) with the constants read
/// from the program.
pub(super) fn program_graph(
    program: &Program,
    plan_index: usize,
    graph: Graph,
    target: Target,
    max_bytes: u64,
) -> Result<Runtime, RuntimeError> {
    super::support::check_plan(program, plan_index)?;
    let plan = program
        .plans
        .get(plan_index)
        .ok_or_else(|| program_err(format!("no plan {plan_index}")))?;
    let tensor_of = |v: &ValueInfo| match plan.values.get(v.id) {
        Some(EValue::Tensor(t)) => Ok(t),
        _ => Err(program_err(format!("value {} is not a tensor", v.id))),
    };
    let constant = |v: &ValueInfo| -> Result<HostTensor, RuntimeError> {
        let t = tensor_of(v)?;
        decode(t, program.constant_bytes(t).map_err(program_err)?)
    };
    // a planned tensor the program gives initial data starts from it, as ExecuTorch's runtime
    // copies it into the arena when it loads the method; the others start at zero
    let initial_data = |v: &ValueInfo| -> Result<Option<HostTensor>, RuntimeError> {
        let t = tensor_of(v)?;
        if !t.has_initial_data() {
            return Ok(None);
        }
        let bytes = program
            .initial_bytes(t)
            .map_err(|e| program_err(format!("value {}: its initial data: {e}", v.id)))?;
        decode(t, bytes).map(Some)
    };
    let device = Device {
        target,
        ..Device::default()
    };
    let sources = Sources {
        constant: &constant,
        initial_data: &initial_data,
    };
    let mut runtime = graph_with_plan(graph, sources, device, plan_index, max_bytes)?;
    runtime.dynamic_inputs = runtime
        .inputs
        .iter()
        .map(|&slot| {
            runtime.graph.values.get(slot).is_some_and(|v| {
                matches!(plan.values.get(v.id), Some(EValue::Tensor(t)) if t.shape_dynamism != 0)
            })
        })
        .collect();
    Ok(runtime)
}

/// A tensor's bytes as the program stores them (in its `dim_order`), as a host tensor.
fn decode(t: &Tensor, bytes: &[u8]) -> Result<HostTensor, RuntimeError> {
    let shape: Vec<usize> = t.sizes.iter().map(|&s| s.max(0) as usize).collect();
    let elem = t.scalar_type.element_size().unwrap_or(1);
    let logical = undo_dim_order(&shape, &t.dim_order, elem, bytes).map_err(program_err)?;
    let buf = Buf::from_le_bytes(t.scalar_type, &logical).ok_or_else(|| {
        program_err(format!(
            "tensors of {} stored in the program are not supported",
            t.scalar_type.name()
        ))
    })?;
    Ok(HostTensor {
        dtype: t.scalar_type,
        shape,
        buf,
    })
}

/// Where the data a method starts with comes from.
struct Sources<'a> {
    /// A constant tensor's value.
    constant: &'a dyn Fn(&ValueInfo) -> Result<HostTensor, RuntimeError>,
    /// A planned tensor's initial value, when it has one (else it starts at zero).
    initial_data: &'a dyn Fn(&ValueInfo) -> Result<Option<HostTensor>, RuntimeError>,
}

/// The storage order of a tensor value: its `dim_order` when it is a permutation of its dims
/// (ExecuTorch refuses any other), row-major when it has none.
fn storage_order(v: &ValueInfo) -> Result<Vec<usize>, RuntimeError> {
    let rank = v.shape.len();
    if v.dim_order.is_empty() {
        return Ok((0..rank).collect());
    }
    let order: Vec<usize> = v.dim_order.iter().map(|&d| usize::from(d)).collect();
    let mut seen = vec![false; rank];
    let valid = order.len() == rank
        && order
            .iter()
            .all(|&d| d < rank && !std::mem::replace(&mut seen[d], true));
    if !valid {
        return Err(program_err(format!(
            "value {}: dim_order {:?} is not a permutation of its {rank} dims",
            v.id, v.dim_order
        )));
    }
    Ok(order)
}

/// A zero tensor of a value's dtype (float where a stage graph does not say) and sizes.
fn zeros(v: &ValueInfo) -> Result<HostTensor, RuntimeError> {
    let dtype = match v.dtype {
        None | Some(ScalarType::Unknown(0)) => ScalarType::Float,
        Some(d) => d,
    };
    let shape: Vec<usize> = v.shape.iter().map(|&s| s.max(0) as usize).collect();
    let n = element_count(&shape)
        .ok_or_else(|| program_err(format!("tensor sizes {:?} are too large", v.shape)))?;
    let buf = Buf::zeros(dtype, n)
        .ok_or_else(|| program_err(format!("tensors of {} are not supported", dtype.name())))?;
    Ok(HostTensor { dtype, shape, buf })
}

/// A literal argument as a run-time value.
fn literal(d: &ArgData) -> RValue {
    match d {
        ArgData::None | ArgData::Tensor(_) => RValue::None,
        ArgData::Int(i) => RValue::Int(*i),
        ArgData::Float(f) => RValue::Double(*f),
        ArgData::Bool(b) => RValue::Bool(*b),
        ArgData::Str(s) | ArgData::Other(s) => RValue::String(s.clone()),
        ArgData::ScalarType(t) => RValue::Int(i64::from(t.code())),
        ArgData::Ints(v) => RValue::IntList(v.iter().map(|x| x.unwrap_or(0)).collect()),
        ArgData::Floats(v) => RValue::DoubleList(v.clone()),
        ArgData::Bools(v) => RValue::BoolList(v.clone()),
        ArgData::Tensors(v) => RValue::TensorList(v.clone()),
        ArgData::OptionalTensors(v) => RValue::OptionalTensorList(v.clone()),
    }
}

/// The store of derived constant forms: a slot may keep one when it holds a program constant
/// that no instruction writes and that shares storage with nothing.
pub(super) fn derived_store(graph: &Graph, steps: &[Step], slots: usize) -> Derived {
    let mut fixed: Vec<bool> = (0..slots)
        .map(|v| {
            graph.values.get(v).is_some_and(|info| {
                info.storage == crate::ir::Storage::Constant && info.alias_of.is_none()
            })
        })
        .collect();
    for v in &graph.values {
        if let Some(source) = v.alias_of {
            if let Some(f) = fixed.get_mut(source) {
                *f = false;
            }
        }
    }
    for &w in steps.iter().flat_map(|s| &s.writes) {
        if let Some(f) = fixed.get_mut(w) {
            *f = false;
        }
    }
    Derived::new(fixed)
}

pub(super) fn graph(
    graph: Graph,
    constant: &dyn Fn(&ValueInfo) -> Result<HostTensor, RuntimeError>,
    device: Device,
    plan_index: usize,
) -> Result<Runtime, RuntimeError> {
    let sources = Sources {
        constant,
        initial_data: &|_| Ok(None),
    };
    graph_with_plan(graph, sources, device, plan_index, MAX_PREPARED_BYTES)
}

fn graph_with_plan(
    graph: Graph,
    sources: Sources<'_>,
    device: Device,
    plan_index: usize,
    max_bytes: u64,
) -> Result<Runtime, RuntimeError> {
    let n = graph.values.len();
    let mut initial = Vec::with_capacity(n);
    let mut dim_orders = Vec::with_capacity(n);
    let mut prepared: u64 = 0;
    let mut seeded = Vec::new();
    for v in &graph.values {
        if !v.is_tensor() {
            dim_orders.push(Vec::new());
            initial.push(v.data.as_ref().map_or(RValue::None, literal));
            continue;
        }
        dim_orders.push(storage_order(v)?);
        if v.storage == crate::ir::Storage::Constant {
            initial.push(RValue::tensor((sources.constant)(v)?));
            continue;
        }
        // every non-constant tensor is allocated here: their sum is bounded, not only each one
        // (a program can declare thousands of large tensors), and checked before allocating
        let bytes = v.nbytes.unwrap_or_else(|| {
            v.shape
                .iter()
                .fold(4u64, |acc, &d| acc.saturating_mul(d.max(0) as u64))
        });
        prepared = prepared.saturating_add(bytes);
        if prepared > max_bytes {
            return Err(RuntimeError::OverBudget {
                limit_mib: max_bytes >> 20,
                value: v.id,
            });
        }
        let t = match (v.storage == crate::ir::Storage::Planned)
            .then(|| (sources.initial_data)(v))
            .transpose()?
            .flatten()
        {
            Some(t) => {
                seeded.push(v.id);
                t
            }
            None => zeros(v)?,
        };
        initial.push(RValue::tensor(t));
    }
    let mut steps = Vec::new();
    let mut instruction_step = Vec::new();
    let mut jumps = Vec::new();
    for node in &graph.nodes {
        if matches!(node.kind, NodeKind::Input | NodeKind::Output) {
            continue;
        }
        let position = node.instruction_id.unwrap_or(node.id);
        if let Some(i) = node.instruction_id {
            if instruction_step.len() <= i {
                instruction_step.resize(i + 1, None);
            }
            instruction_step[i] = Some(steps.len());
        }
        let value_of = |k: usize| node.args.get(k).and_then(|a| a.value).filter(|&v| v < n);
        let missing = || program_err(format!("node {} ({}) lacks an argument", node.id, node.op));
        let mut slots = Vec::new();
        let action = match node.kind {
            NodeKind::Operator => {
                let kernel = node.def().and_then(|d| {
                    (node.overload.is_empty() || d.is_out_overload(&node.overload))
                        .then_some(d.kernel)
                        .flatten()
                });
                for a in &node.args {
                    // a stage graph's tensor list names its first tensor as its value; a
                    // program's names the list value
                    let list_of_stage =
                        matches!(a.data, ArgData::Tensors(_) | ArgData::OptionalTensors(_))
                            && a.value
                                .is_some_and(|v| v < n && graph.values[v].is_tensor());
                    slots.push(match (&a.data, a.value) {
                        (ArgData::Tensor(t), _) if *t < n => *t,
                        (_, Some(v)) if v < n && !list_of_stage => v,
                        (d, _) => {
                            initial.push(literal(d));
                            dim_orders.push(Vec::new());
                            initial.len() - 1
                        }
                    });
                }
                match kernel {
                    Some(k) => Action::Kernel(k),
                    None => Action::Unsupported(node.qualified_op()),
                }
            }
            NodeKind::Delegate => Action::Delegate(
                node.op
                    .strip_prefix("delegate::")
                    .unwrap_or(&node.op)
                    .to_string(),
            ),
            NodeKind::Move => Action::Move {
                from: value_of(0).ok_or_else(missing)?,
                to: value_of(1).ok_or_else(missing)?,
            },
            NodeKind::JumpFalse => {
                jumps.push((steps.len(), node.jump_to.unwrap_or(usize::MAX)));
                Action::JumpFalse {
                    cond: value_of(0).ok_or_else(missing)?,
                    to_step: usize::MAX,
                }
            }
            _ => Action::Nothing,
        };
        steps.push(Step {
            node: node.id,
            position,
            op: node.qualified_op(),
            def: node.def(),
            action,
            slots,
            reads: node.inputs.clone(),
            writes: node.outputs.clone(),
        });
    }
    // a jump to an instruction past the chain ends the run
    for (at, destination) in jumps {
        let to = instruction_step
            .get(destination)
            .copied()
            .flatten()
            .unwrap_or(steps.len());
        if let Action::JumpFalse { to_step, .. } = &mut steps[at].action {
            *to_step = to;
        }
    }
    let placements = graph.values.iter().map(|v| v.placement).collect();
    let alias_of = graph.values.iter().map(|v| v.alias_of).collect();
    let arena_sizes = graph.arenas.clone();
    if let Some(&s) = arena_sizes
        .iter()
        .find(|&&s| s > MAX_TENSOR_ELEMENTS as u64 * 4)
    {
        return Err(program_err(format!(
            "a memory arena of {s} bytes is too large"
        )));
    }
    let derived = derived_store(&graph, &steps, initial.len());
    Ok(Runtime {
        plan_index,
        derived,
        device,
        inputs: graph.inputs.clone(),
        outputs: graph.outputs.clone(),
        graph,
        initial,
        dim_orders,
        steps,
        alias_of,
        placements,
        arena_sizes,
        seeded,
        dynamic_inputs: Vec::new(),
    })
}
