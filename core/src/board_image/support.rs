//! What the board firmware runs: an operator's firmware kernel from the registry, and the check
//! that refuses a plan with an operator, a dtype or a program feature the firmware does not
//! implement (before any image is built).

use super::BoardImageError;
use crate::formats::pte::{EValue, ExecutionPlan, Instruction, Program};
use crate::ops::{BoardFamily, BoardKernel, OpDef};

/// The registry entry and firmware kernel of a qualified operator name in its out form
/// (`cortex_m::pad.out`); `None` when the firmware has no kernel for it.
pub fn board_kernel(qualified: &str) -> Option<(&'static OpDef, BoardKernel)> {
    let def = crate::ops::def(crate::ops::lookup_qualified(qualified)?);
    let overload = qualified.rsplit_once('.').map_or("", |(_, o)| o);
    if !def.is_out_overload(overload) {
        return None;
    }
    Some((def, def.board?))
}

/// Every operator the firmware runs (for messages and docs), from the registry.
pub fn supported_operators() -> Vec<String> {
    crate::ops::all()
        .iter()
        .filter(|d| d.board.is_some())
        .map(|d| format!("{}.out", d.name))
        .collect()
}

/// Whether every instruction of plan `plan_index` is one the firmware runs (the reason if not).
pub fn check_supported(program: &Program, plan_index: usize) -> Result<(), BoardImageError> {
    let plan = program
        .plans
        .get(plan_index)
        .ok_or(BoardImageError::NoPlan(plan_index))?;
    if let Some(feature) = crate::formats::pte::features::unimplemented_feature(plan) {
        return Err(BoardImageError::Feature(feature));
    }
    // the firmware's arenas start at zero: a planned tensor the program gives initial data
    // (a training program's parameters, a buffer's initial state) would start wrong
    if let Some(v) = plan
        .values
        .iter()
        .position(|v| v.as_tensor().is_some_and(|t| t.has_initial_data()))
    {
        return Err(BoardImageError::Feature(format!(
            "a planned tensor with initial data (value {v})"
        )));
    }
    for (i, ins) in plan.main_instructions().iter().enumerate() {
        match ins {
            Instruction::KernelCall { op_index, args } => {
                let op = plan
                    .operators
                    .get(*op_index)
                    .map_or_else(|| format!("operator #{op_index}"), |o| o.qualified());
                let host_runs = host_has_kernel(&op);
                let Some((def, kernel)) = board_kernel(&op) else {
                    return Err(BoardImageError::Unsupported {
                        instruction: i,
                        op,
                        host_runs,
                    });
                };
                // the firmware's quantize and dequantize handle int8 and int16 codes
                let int_side = match def.name {
                    "cortex_m::quantize_per_tensor" => {
                        args.len().checked_sub(2).and_then(|k| args.get(k))
                    }
                    "cortex_m::dequantize_per_tensor" => args.first(),
                    _ => None,
                };
                let dtype = int_side
                    .and_then(|&v| plan.values.get(v))
                    .and_then(|v| v.as_tensor())
                    .map(|t| t.scalar_type);
                if let Some(held) = unheld_type(plan, kernel, args) {
                    return Err(BoardImageError::Unsupported {
                        instruction: i,
                        op: format!("{op} on {held} tensors"),
                        host_runs,
                    });
                }
                if dtype.is_some_and(|d| {
                    !matches!(d, crate::ScalarType::Char | crate::ScalarType::Short)
                }) {
                    return Err(BoardImageError::Unsupported {
                        instruction: i,
                        op: format!(
                            "{op} on {} codes",
                            dtype.map_or_else(|| "?".to_string(), |d| d.short_name())
                        ),
                        host_runs,
                    });
                }
            }
            other => {
                return Err(BoardImageError::NotAKernelCall {
                    instruction: i,
                    kind: other.kind(),
                })
            }
        }
    }
    Ok(())
}

/// A tensor type among the arguments of a portable kernel that the firmware's kernels do not
/// hold (half, bfloat16, quantized and bit types), by name.
fn unheld_type(plan: &ExecutionPlan, kernel: BoardKernel, args: &[usize]) -> Option<String> {
    use crate::ScalarType as S;
    if kernel.family != BoardFamily::Portable {
        return None;
    }
    let tensor_type = |v: usize| {
        plan.values
            .get(v)
            .and_then(|v| v.as_tensor())
            .map(|t| t.scalar_type)
    };
    let mut types = Vec::new();
    for &a in args {
        match plan.values.get(a) {
            Some(EValue::TensorList(items) | EValue::OptionalTensorList(items)) => types.extend(
                items
                    .iter()
                    .filter_map(|&i| usize::try_from(i).ok().and_then(tensor_type)),
            ),
            _ => types.extend(tensor_type(a)),
        }
    }
    types
        .into_iter()
        .find(|t| {
            !matches!(
                t,
                S::Byte | S::Char | S::Short | S::Int | S::Long | S::Float | S::Double | S::Bool
            )
        })
        .map(|t| t.name().to_string())
}

/// Whether the host runtime has a kernel for `qualified` (`namespace::name.overload`): its own,
/// or another operator's that computes it.
fn host_has_kernel(qualified: &str) -> bool {
    crate::ops::lookup_qualified(qualified)
        .map(crate::ops::def)
        .is_some_and(|d| d.kernel.is_some() || d.computed_by.is_some())
}
