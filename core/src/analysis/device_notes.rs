//! Static notes on what a program computes differently from the model, before anything runs
//! (CLI `run`, the inspector):
//! - `device`: `cortex_m::` calls whose device kernel misreads the program's tensor layout, hit
//!   a known CMSIS-NN defect, or were lowered for another core (the host runtime reproduces
//!   each, so a diff points at the op);
//! - `lowering`: what the lowering left that no runtime computes as meant — a float-only
//!   portable kernel fed int8 codes, an activation left in float between quantized ops.

use serde::Serialize;

use crate::formats::pte::{EValue, ExecutionPlan, Instruction, Program};
use crate::kernels::cmsis::core_buffers::{call_in_program, fails_on, tensor_arg};
use crate::kernels::cmsis::notes::Call;
use crate::kernels::Device;
use crate::ops::traits_of as traits;

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
            traits(name).quantizes.then_some((qa, name))
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
    if int && traits(op).float_only {
        return Some(format!(
            "a float-only kernel ({op}) applied to {} codes: it computes on the integers, not on the values they stand for",
            x.scalar_type.short_name()
        ));
    }
    // a float weighted layer left on quantized codes (ExecuTorch's default flow can leave a
    // convolution so): no requantization, its integers are not the layer's output
    if int && traits(op).weighted && !op.starts_with("cortex_m::") {
        return Some(format!(
            "a float weighted layer ({op}) applied to {} codes: it multiplies and adds the integers with no requantization, not the values they stand for",
            x.scalar_type.short_name()
        ));
    }
    if !int && traits(op).fusable_activation {
        let from_dq = producer_op(plan, *args.first()?).is_some_and(|p| traits(p).dequantizes);
        let out = *args.get(args.len().checked_sub(2)?)?;
        let to_q = consumer_ops(plan, out).iter().any(|c| traits(c).quantizes);
        if from_dq && to_q {
            return Some(format!(
                "{op} left in float between a dequantize and a quantize: the quantizer did not fuse it into the op before (a float round trip on the device)"
            ));
        }
    }
    None
}

/// The note for instruction `id` of plan `plan_index` of `program` on `device`, if the board
/// computes something else.
pub fn note_for(
    program: &Program,
    plan_index: usize,
    id: usize,
    device: Device,
) -> Option<DeviceNote> {
    note_in(program.plans.get(plan_index)?, id, device)
}

fn note_in(plan: &ExecutionPlan, id: usize, device: Device) -> Option<DeviceNote> {
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
    if traits(&op).dequantizes {
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
    let rule = crate::ops::lookup(&op, "").and_then(|id| crate::ops::def(id).device_note)?;
    rule(&Call {
        plan,
        op: &op,
        args,
        out,
        device,
    })
    .and_then(note)
}

/// Every note of plan `plan_index` of `program` on `device`, in instruction order.
pub fn notes(program: &Program, plan_index: usize, device: Device) -> Vec<DeviceNote> {
    let Some(plan) = program.plans.get(plan_index) else {
        return Vec::new();
    };
    (0..plan.main_instructions().len())
        .filter_map(|i| note_in(plan, i, device))
        .collect()
}
