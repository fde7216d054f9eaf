//! Executes an ETRecord stage (a `torch.export` graph: exported ATen, edge, or the graph after
//! the Cortex-M passes) through the same kernels as `.pte` programs, with the weights read from
//! the stage's `torch.save` archives. Every node's outputs can be captured for diffs.

use std::collections::BTreeMap;

use super::kernel::Ctx;
use super::value::{Buf, HostTensor, RValue};
use super::{dispatch, RuntimeError};
use crate::dtype::ScalarType;
use crate::export_json::{ExportArg, ExportedGraph, InputKind};
use crate::ir::from_export::split_target;
use crate::tensor::TensorData;

/// What a stage run produced.
#[derive(Debug, Clone)]
pub struct StageRun {
    pub outputs: Vec<HostTensor>,
    /// Node index (in `ExportedGraph::nodes`) → its output tensors.
    pub captured: BTreeMap<usize, Vec<HostTensor>>,
}

fn host(t: &TensorData) -> Result<HostTensor, RuntimeError> {
    let buf = Buf::from_le_bytes(t.dtype, &t.bytes).ok_or_else(|| {
        RuntimeError::Program(format!("tensors of {} are not supported", t.dtype.name()))
    })?;
    Ok(HostTensor {
        dtype: t.dtype,
        shape: t.shape.clone(),
        buf,
    })
}

fn stage_err(node: usize, op: &str, detail: impl Into<String>) -> RuntimeError {
    RuntimeError::BadArgs {
        op: op.to_string(),
        instruction: node,
        detail: detail.into(),
    }
}

/// Runs stage graph `g` on `inputs` (user inputs in order) with `weights` (state dict and
/// constants keyed by their fully qualified names).
pub fn run_stage(
    g: &ExportedGraph,
    weights: &BTreeMap<String, TensorData>,
    inputs: &[TensorData],
    capture: bool,
) -> Result<StageRun, RuntimeError> {
    let mut values: Vec<RValue> = Vec::new();
    let work = super::Work::new(super::DEFAULT_WORK_BUDGET, None);
    let mut slot: BTreeMap<String, usize> = BTreeMap::new();
    let user: Vec<&String> = g
        .inputs
        .iter()
        .filter(|(_, k)| *k == InputKind::UserInput)
        .map(|(n, _)| n)
        .collect();
    if user.len() != inputs.len() {
        return Err(RuntimeError::Input {
            index: inputs.len(),
            detail: format!(
                "the stage takes {} inputs, {} given",
                user.len(),
                inputs.len()
            ),
        });
    }
    for (name, given) in user.iter().zip(inputs) {
        slot.insert((*name).clone(), values.len());
        values.push(RValue::Tensor(host(given)?));
    }
    for (name, kind) in &g.inputs {
        if *kind == InputKind::UserInput {
            continue;
        }
        let key = g.input_targets.get(name).unwrap_or(name);
        let t = weights.get(key).ok_or_else(|| {
            RuntimeError::Program(format!(
                "weight {key:?} (graph input {name}) is not in the stage's state dict or constants"
            ))
        })?;
        slot.insert(name.clone(), values.len());
        values.push(RValue::Tensor(host(t)?));
    }
    let mut captured = BTreeMap::new();
    for (ni, node) in g.nodes.iter().enumerate() {
        let (op, overload) = split_target(&node.target);
        // outputs, pre-allocated from the graph's tensor metadata
        let mut outs = Vec::new();
        for o in &node.outputs {
            let meta = g
                .tensors
                .get(o)
                .ok_or_else(|| stage_err(ni, &op, format!("no metadata for output {o}")))?;
            if meta.sizes.iter().any(|&s| s < 0) {
                return Err(stage_err(
                    ni,
                    &op,
                    format!("output {o} has a symbolic shape"),
                ));
            }
            let shape: Vec<usize> = meta.sizes.iter().map(|&s| s.max(0) as usize).collect();
            let n = super::element_count(&shape).ok_or_else(|| {
                stage_err(
                    ni,
                    &op,
                    format!("tensor sizes {:?} are too large", meta.sizes),
                )
            })?;
            let dtype = if meta.dtype == ScalarType::Unknown(0) {
                ScalarType::Float
            } else {
                meta.dtype
            };
            let buf = Buf::zeros(dtype, n).ok_or_else(|| {
                stage_err(
                    ni,
                    &op,
                    format!("outputs of {} are not supported", dtype.name()),
                )
            })?;
            slot.insert(o.clone(), values.len());
            outs.push(values.len());
            values.push(RValue::Tensor(HostTensor { dtype, shape, buf }));
        }
        // arguments as value slots
        let mut args = Vec::with_capacity(node.args.len() + outs.len() + 1);
        for (_, a) in &node.args {
            let v = match a {
                ExportArg::Tensor(n) => {
                    args.push(*slot.get(n).ok_or_else(|| {
                        stage_err(ni, &op, format!("reads {n} before it is defined"))
                    })?);
                    continue;
                }
                ExportArg::None => RValue::None,
                ExportArg::Int(i) => RValue::Int(*i),
                ExportArg::Ints(v) => RValue::IntList(v.clone()),
                ExportArg::Float(f) => RValue::Double(*f),
                ExportArg::Floats(v) => RValue::DoubleList(v.clone()),
                ExportArg::Bool(b) => RValue::Bool(*b),
                ExportArg::Bools(v) => RValue::BoolList(v.clone()),
                ExportArg::String(s) => RValue::String(s.clone()),
                ExportArg::ScalarType(t) => RValue::Int(i64::from(scalar_code(*t))),
                ExportArg::Tensors(ns) => {
                    RValue::TensorList(ns.iter().filter_map(|n| slot.get(n).copied()).collect())
                }
                ExportArg::OptionalTensors(ns) => RValue::OptionalTensorList(
                    ns.iter()
                        .map(|n| n.as_ref().and_then(|n| slot.get(n).copied()))
                        .collect(),
                ),
                ExportArg::Other(s) => RValue::String(s.clone()),
            };
            args.push(values.len());
            values.push(v);
        }
        let qualified = if overload.is_empty() {
            op.clone()
        } else {
            format!("{op}.{overload}")
        };
        match qualified.as_str() {
            "memory.alloc" => {}
            "aten::view_copy.default"
            | "aten::view.default"
            | "aten::flatten.using_ints"
            | "aten::reshape.default"
            | "aten::_unsafe_view.default" => {
                let src = args.first().and_then(|&a| match &values[a] {
                    RValue::Tensor(t) => Some(t.buf.clone()),
                    _ => None,
                });
                if let (Some(buf), Some(&o)) = (src, outs.first()) {
                    if let RValue::Tensor(t) = &mut values[o] {
                        if buf.len() == t.numel() {
                            t.buf = buf;
                        }
                    }
                }
            }
            _ => {
                let (kernel_op, kernel_args) =
                    lower_args(&qualified, &op, &args, &outs, &mut values);
                let mut ctx = Ctx {
                    values: &mut values,
                    op: &kernel_op,
                    instruction: ni,
                    device: super::Device::default(),
                    dim_orders: &[],
                    work: &work,
                };
                dispatch(&mut ctx, &kernel_args).map_err(|e| match e {
                    RuntimeError::UnsupportedOp { .. } => RuntimeError::UnsupportedOp {
                        op: qualified.clone(),
                        instruction: ni,
                    },
                    other => other,
                })?;
            }
        }
        if capture {
            let tensors = outs
                .iter()
                .filter_map(|&o| {
                    if let RValue::Tensor(t) = &values[o] {
                        Some(t.clone())
                    } else {
                        None
                    }
                })
                .collect();
            captured.insert(ni, tensors);
        }
    }
    let outputs = g
        .outputs
        .iter()
        .map(|o| match slot.get(o).map(|&s| &values[s]) {
            Some(RValue::Tensor(t)) => Ok(t.clone()),
            _ => Err(RuntimeError::Program(format!(
                "output {o} was not computed"
            ))),
        })
        .collect::<Result<_, _>>()?;
    Ok(StageRun { outputs, captured })
}

/// ExecuTorch's numbering of a dtype argument.
fn scalar_code(t: ScalarType) -> i8 {
    (0..30)
        .find(|&c| ScalarType::from_code(c) == t)
        .unwrap_or(6)
}

/// Maps a functional stage op onto the out-variant kernel and its argument list
/// (`args…, outs…, return`).
fn lower_args(
    qualified: &str,
    op: &str,
    args: &[usize],
    outs: &[usize],
    values: &mut Vec<RValue>,
) -> (String, Vec<usize>) {
    let mut push = |v: RValue| {
        values.push(v);
        values.len() - 1
    };
    // trailing arguments left at their schema defaults are not serialized: fill them
    let mut args = args.to_vec();
    let defaults: Vec<RValue> = match qualified {
        "aten::avg_pool2d.default" => vec![
            RValue::IntList(vec![]),
            RValue::IntList(vec![0, 0]),
            RValue::Bool(false),
            RValue::Bool(true),
            RValue::None,
        ],
        "aten::addmm.default" => vec![RValue::Int(1), RValue::Int(1)],
        "aten::max_pool2d.default" => vec![
            RValue::IntList(vec![]),
            RValue::IntList(vec![0, 0]),
            RValue::IntList(vec![1, 1]),
            RValue::Bool(false),
        ],
        _ => Vec::new(),
    };
    let first_default = match qualified {
        "aten::avg_pool2d.default" | "aten::max_pool2d.default" => 2,
        "aten::addmm.default" => 3,
        _ => usize::MAX,
    };
    for (k, d) in defaults.into_iter().enumerate() {
        if args.len() <= first_default + k {
            args.push(push(d));
        }
    }
    let args = &args[..];
    let arg = |k: usize| args.get(k).copied();
    let (kernel, mut kargs): (String, Vec<usize>) = match qualified {
        "aten::conv2d.default" => {
            // conv2d(input, weight, bias?, stride=1, padding=0, dilation=1, groups=1)
            let ones = |push: &mut dyn FnMut(RValue) -> usize| push(RValue::IntList(vec![1, 1]));
            let input = arg(0).unwrap_or(0);
            let weight = arg(1).unwrap_or(0);
            let bias = arg(2).unwrap_or_else(|| push(RValue::None));
            let stride = arg(3).unwrap_or_else(|| ones(&mut push));
            let padding = arg(4).unwrap_or_else(|| push(RValue::IntList(vec![0, 0])));
            let dilation = arg(5).unwrap_or_else(|| ones(&mut push));
            let transposed = push(RValue::Bool(false));
            let out_pad = push(RValue::IntList(vec![0, 0]));
            let groups = arg(6).unwrap_or_else(|| push(RValue::Int(1)));
            (
                "aten::convolution.out".into(),
                vec![
                    input, weight, bias, stride, padding, dilation, transposed, out_pad, groups,
                ],
            )
        }
        "aten::linear.default" => ("etscope::linear".into(), args.to_vec()),
        "aten::batch_norm.default" => {
            // batch_norm(input, weight, bias, mean, var, training, momentum, eps, cudnn)
            let pick = |k: usize| arg(k).unwrap_or(0);
            (
                "aten::_native_batch_norm_legit_no_training.out".into(),
                vec![
                    pick(0),
                    pick(1),
                    pick(2),
                    pick(3),
                    pick(4),
                    pick(6),
                    pick(7),
                ],
            )
        }
        "aten::softmax.int" => {
            let half = push(RValue::Bool(false));
            (
                "aten::_softmax.out".into(),
                vec![arg(0).unwrap_or(0), arg(1).unwrap_or(0), half],
            )
        }
        _ => (format!("{op}.out"), args.to_vec()),
    };
    kargs.extend_from_slice(outs);
    if let Some(&first) = outs.first() {
        kargs.push(first);
    }
    (kernel, kargs)
}
