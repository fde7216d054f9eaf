//! Static notes on what a program computes differently from the model, before anything runs
//! (CLI `run`, the inspector):
//! - `device`: `cortex_m::` calls whose device kernel misreads the program's tensor layout, hit
//!   a known CMSIS-NN defect, or were lowered for another core (the host runtime reproduces
//!   each, so a diff points at the op);
//! - `lowering`: what the lowering left that no runtime computes as meant — a float-only
//!   portable kernel fed int8 codes, an activation left in float between quantized ops.

use serde::Serialize;

use crate::formats::pte::{EValue, ExecutionPlan, Instruction, Tensor};
use crate::kernels::cmsis::core_buffers::{
    call_in_program, fails_on, int_list, tensor_arg, CoreCall,
};
use crate::kernels::{CmsisNn, Device};

/// One instruction the device computes differently from the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceNote {
    pub instruction: usize,
    pub op: String,
    /// `device` (the board's kernel computes something else) or `lowering` (the program
    /// itself does not compute what the model means).
    pub kind: &'static str,
    pub why: String,
}

/// Portable operators that only make sense on real values.
const FLOAT_ONLY: [&str; 14] = [
    "aten::hardswish",
    "aten::hardsigmoid",
    "aten::sigmoid",
    "aten::tanh",
    "aten::gelu",
    "aten::silu",
    "aten::elu",
    "aten::exp",
    "aten::log",
    "aten::sqrt",
    "aten::rsqrt",
    "aten::_softmax",
    "aten::native_layer_norm",
    "aten::mean",
];

/// Activations a quantized flow is expected to fuse or tabulate.
const ACTIVATIONS: [&str; 7] = [
    "aten::relu",
    "aten::hardtanh",
    "aten::clamp",
    "aten::hardswish",
    "aten::hardsigmoid",
    "aten::sigmoid",
    "aten::tanh",
];

fn producer_op(plan: &ExecutionPlan, value: usize) -> Option<&str> {
    plan.main_instructions().iter().find_map(|ins| match ins {
        Instruction::KernelCall { op_index, args }
            if args.len() >= 2 && args[args.len() - 2] == value =>
        {
            plan.operators.get(*op_index).map(|o| o.name.as_str())
        }
        _ => None,
    })
}

fn consumer_ops(plan: &ExecutionPlan, value: usize) -> Vec<&str> {
    plan.main_instructions()
        .iter()
        .filter_map(|ins| match ins {
            Instruction::KernelCall { op_index, args } if args.first() == Some(&value) => {
                plan.operators.get(*op_index).map(|o| o.name.as_str())
            }
            _ => None,
        })
        .collect()
}

fn number(plan: &ExecutionPlan, v: usize) -> Option<f64> {
    match plan.values.get(v)? {
        EValue::Double(d) => Some(*d),
        EValue::Int(i) => Some(*i as f64),
        _ => None,
    }
}

/// A dequantize whose scale or zero point is not the one its input was quantized with.
fn qparams_note(plan: &ExecutionPlan, args: &[usize]) -> Option<String> {
    let input = *args.first()?;
    let (q_args, q_op) = plan.main_instructions().iter().find_map(|ins| match ins {
        Instruction::KernelCall { op_index, args: qa }
            if qa.len() >= 2 && qa[qa.len() - 2] == input =>
        {
            let name = plan.operators.get(*op_index)?.name.as_str();
            (name.ends_with("quantize_per_tensor") && !name.ends_with("dequantize_per_tensor"))
                .then_some((qa, name))
        }
        _ => None,
    })?;
    let (s_in, z_in) = (
        number(plan, *q_args.get(1)?)?,
        number(plan, *q_args.get(2)?)?,
    );
    let (s_out, z_out) = (number(plan, *args.get(1)?)?, number(plan, *args.get(2)?)?);
    let same_scale = ((s_in - s_out) / s_in.abs().max(f64::MIN_POSITIVE)).abs() < 1e-6;
    (!same_scale || z_in != z_out).then(|| {
        format!(
            "dequantizes with scale {s_out}, zero point {z_out}, but {q_op} wrote its input with scale {s_in}, zero point {z_in}: every value comes out rescaled"
        )
    })
}

/// The `lowering` note for a portable call, if any.
fn lowering_note(plan: &ExecutionPlan, op: &str, args: &[usize]) -> Option<String> {
    let x = tensor_arg(plan, args, 0)?;
    let int = matches!(
        x.scalar_type,
        crate::ScalarType::Char | crate::ScalarType::Byte | crate::ScalarType::QInt8
    );
    if int && FLOAT_ONLY.contains(&op) {
        return Some(format!(
            "a float-only kernel ({op}) applied to {} codes: it computes on the integers, not on the values they stand for",
            x.scalar_type.short_name()
        ));
    }
    if !int && ACTIVATIONS.contains(&op) {
        let from_dq =
            producer_op(plan, *args.first()?).is_some_and(|p| p.ends_with("dequantize_per_tensor"));
        let out = *args.get(args.len().checked_sub(2)?)?;
        let to_q = consumer_ops(plan, out)
            .iter()
            .any(|c| c.ends_with("quantize_per_tensor") && !c.ends_with("dequantize_per_tensor"));
        if from_dq && to_q {
            return Some(format!(
                "{op} left in float between a dequantize and a quantize: the quantizer did not fuse it into the op before (a float round trip on the device)"
            ));
        }
    }
    None
}

/// Whether a tensor's bytes are in row-major order of its logical sizes (size-1 dims may sit
/// anywhere in `dim_order`).
fn row_major_bytes(t: &Tensor) -> bool {
    let order: Vec<usize> = t
        .dim_order
        .iter()
        .map(|&d| usize::from(d))
        .filter(|&d| t.sizes.get(d).is_some_and(|&s| s > 1))
        .collect();
    order.windows(2).all(|w| w[0] < w[1])
}

fn numel(t: &Tensor) -> i64 {
    t.sizes.iter().map(|&s| i64::from(s)).product()
}

/// The note for instruction `id` of `plan` on `device`, if the board computes something else.
pub fn note_for(plan: &ExecutionPlan, id: usize, device: Device) -> Option<DeviceNote> {
    let Instruction::KernelCall { op_index, args } = plan.main_instructions().get(id)? else {
        return None;
    };
    let op = plan.operators.get(*op_index)?.name.clone();
    let out = args
        .len()
        .checked_sub(2)
        .and_then(|k| tensor_arg(plan, args, k));
    let note = |why: String| {
        Some(DeviceNote {
            instruction: id,
            op: op.clone(),
            kind: "device",
            why,
        })
    };
    if op.ends_with("dequantize_per_tensor") {
        if let Some(why) = qparams_note(plan, args) {
            return Some(DeviceNote {
                instruction: id,
                op: op.clone(),
                kind: "lowering",
                why,
            });
        }
    }
    if op.starts_with("aten::") {
        return lowering_note(plan, &op, args).map(|why| DeviceNote {
            instruction: id,
            op: op.clone(),
            kind: "lowering",
            why,
        });
    }
    if let Some(why) = call_in_program(plan, &op, args).and_then(|c| fails_on(device.target, c)) {
        return note(format!("fails on this core: {why}"));
    }
    match op.as_str() {
        "cortex_m::softmax" => {
            let x = tensor_arg(plan, args, 0)?;
            (!row_major_bytes(x)).then_some(())?;
            note(format!(
                "the kernel normalises rows of {} consecutive bytes of a tensor stored with dim_order {:?}: \
                 it mixes elements of different rows (ExecuTorch 1.5.1 softmax_out checks the logical dim only)",
                x.sizes.last().copied().unwrap_or(0),
                x.dim_order
            ))
        }
        "cortex_m::transpose" | "cortex_m::minimum" | "cortex_m::maximum" => {
            let out = out?;
            let n_in = if op == "cortex_m::transpose" { 1 } else { 2 };
            let operands: Vec<&Tensor> = (0..n_in)
                .filter_map(|k| tensor_arg(plan, args, k))
                .collect();
            // right on the board when every buffer is row-major, or (elementwise) when each
            // operand is a scalar or has the output's sizes and storage order
            let all_row_major = operands.iter().all(|t| row_major_bytes(t)) && row_major_bytes(out);
            let elementwise_ok = op != "cortex_m::transpose"
                && operands.iter().all(|t| {
                    numel(t) <= 1 || (t.sizes == out.sizes && t.dim_order == out.dim_order)
                });
            (!all_row_major && !elementwise_ok).then_some(())?;
            let misread = operands
                .iter()
                .copied()
                .chain(std::iter::once(out))
                .find(|t| !row_major_bytes(t))
                .map(|t| t.dim_order.clone())
                .unwrap_or_default();
            note(format!(
                "the kernel hands CMSIS-NN logical sizes over a buffer stored with dim_order {misread:?}: \
                 the right values land in the wrong places (ExecuTorch 1.5.1 checks no dim_order here)"
            ))
        }
        "cortex_m::quantized_add"
        | "cortex_m::quantized_mul"
        | "cortex_m::quantized_div"
        | "cortex_m::quantize_per_tensor"
        | "cortex_m::dequantize_per_tensor"
        | "cortex_m::quantized_activation" => {
            let b_arg = match op.as_str() {
                "cortex_m::quantized_add" => 4,
                "cortex_m::quantized_mul" | "cortex_m::quantized_div" => 2,
                _ => usize::MAX,
            };
            let a = tensor_arg(plan, args, 0)?;
            let b = tensor_arg(plan, args, b_arg);
            let same = |t: &Tensor| {
                t.sizes != a.sizes
                    || row_major_bytes(t) == row_major_bytes(a) && t.dim_order == a.dim_order
            };
            let mismatch = b.is_some_and(|b| b.sizes == a.sizes && !same(b))
                || out.is_some_and(|o| {
                    o.sizes == a.sizes && !same(o) && !(row_major_bytes(o) && row_major_bytes(a))
                });
            mismatch.then_some(())?;
            note(format!(
                "an elementwise kernel over operands stored in different orders (dim_order {:?} vs {:?}): \
                 elements are paired by memory position, not by index",
                a.dim_order,
                b.filter(|b| !same(b)).or(out).map(|t| t.dim_order.clone()).unwrap_or_default()
            ))
        }
        "cortex_m::quantized_linear" => {
            let kernel_sum = matches!(
                call_in_program(plan, &op, args),
                Some(CoreCall::Linear { kernel_sum: true })
            );
            (kernel_sum && !device.target.has_helium()).then_some(())?;
            note(
                "the program was lowered for a Helium core: its bias is folded into a kernel sum that only \
                 CMSIS-NN's MVE path reads, so on this core the layer runs without its bias"
                    .to_string(),
            )
        }
        "cortex_m::quantized_transpose_conv2d" | "cortex_m::quantized_transpose_conv2d_nhwc" => {
            if device.cmsis_nn != CmsisNn::Dbf45dbf {
                return None;
            }
            let x = tensor_arg(plan, args, 0)?;
            let channels = if op.ends_with("_nhwc") {
                x.sizes.get(3)
            } else {
                x.sizes.get(1)
            }
            .copied()
            .unwrap_or(0);
            let (stride, pad) = (int_list(plan, args, 3), int_list(plan, args, 4));
            let (sh, ph) = (
                stride.first().copied().unwrap_or(1),
                pad.first().copied().unwrap_or(0),
            );
            let sw = stride.get(1).copied().unwrap_or(sh);
            let reverse_path = sh <= 2 && sw <= 2 && channels > 16;
            (sh > 0 && ph % sh != 0 && !reverse_path).then_some(())?;
            note(format!(
                "padding {ph} is not a multiple of stride {sh}: CMSIS-NN dbf45dbf's arm_transpose_conv_s8 \
                 (pinned by ExecuTorch 1.5.1) computes wrong rows and never writes the last one (fixed in 4a8f5b5d)"
            ))
        }
        _ => None,
    }
}

/// Every note of `plan` on `device`, in instruction order.
pub fn notes(plan: &ExecutionPlan, device: Device) -> Vec<DeviceNote> {
    (0..plan.main_instructions().len())
        .filter_map(|i| note_for(plan, i, device))
        .collect()
}
