//! Fault injection for testing the diff: a copy of a program in which one weighted operator
//! (the registry's `weighted` trait: convolutions, depthwise and transpose convolutions, fully
//! connected layers, in `cortex_m::` or portable form) has
//! its weights and its bias / kernel sum negated — a sign error as a wrong export or a corrupted
//! weight image gives ([`break_op`]) — or its requantization multipliers scaled — a magnitude
//! error as a wrong scale gives ([`scale_requantization`]). Everything else, byte for byte,
//! stays as it was: instruction ids do not change.

use std::ops::Range;

use crate::error::{Error, Result};
use crate::formats::pte::{EValue, Instruction, Program};

/// A weighted instruction and the file ranges of its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Weighted {
    pub instruction: usize,
    pub op: String,
    pub weights: Range<usize>,
    /// Bias (int32 or float) or kernel sum (int32), where the op has one.
    pub sums: Option<Range<usize>>,
}

/// The weighted instructions of the default plan, in order.
pub fn weighted(program: &Program) -> Vec<Weighted> {
    let Some(plan) = program.default_plan() else {
        return Vec::new();
    };
    let range_of = |args: &[usize], k: usize| constant_range(program, plan, *args.get(k)?);
    plan.main_instructions()
        .iter()
        .enumerate()
        .filter_map(|(i, ins)| {
            let Instruction::KernelCall { op_index, args } = ins else {
                return None;
            };
            // weighted operators take the weights as argument 1 and an int32 / float bias as
            // argument 2 (a Helium linear layer: a kernel sum as argument 3)
            let operator = plan.operators.get(*op_index)?;
            let def = crate::ops::def(crate::ops::lookup(&operator.name, &operator.overload)?);
            if !def.traits.weighted {
                return None;
            }
            let op = operator.name.clone();
            let sums = range_of(args, 2).or_else(|| {
                def.short_name()
                    .ends_with("linear")
                    .then(|| range_of(args, 3))
                    .flatten()
            });
            Some(Weighted {
                instruction: i,
                op,
                weights: range_of(args, 1)?,
                sums,
            })
        })
        .collect()
}

/// The file range of plan value `value`'s bytes, where it is a constant tensor stored in the
/// program's file.
fn constant_range(
    program: &Program,
    plan: &crate::formats::pte::ExecutionPlan,
    value: usize,
) -> Option<Range<usize>> {
    let EValue::Tensor(t) = plan.values.get(value)? else {
        return None;
    };
    if !t.is_constant() {
        return None;
    }
    let bytes = program.constant_bytes(t).ok()?;
    let start = (bytes.as_ptr() as usize).checked_sub(program.bytes().as_ptr() as usize)?;
    Some(start..start + bytes.len())
}

/// A copy of `program`'s file with instruction `instruction`'s weights and bias / kernel sum
/// negated (int8 weights, int32 sums; float weights and biases flip their sign bit).
pub fn break_op(program: &Program, instruction: usize) -> Result<Vec<u8>> {
    let w = weighted(program)
        .into_iter()
        .find(|w| w.instruction == instruction)
        .ok_or_else(|| {
            Error::invalid(
                "fault injection",
                format!("instruction {instruction} is no weighted operator with constant weights"),
            )
        })?;
    // float weights flip their sign bit, integer ones are negated
    // `weighted` found the instruction, so the program has its default plan
    let plan = program
        .default_plan()
        .ok_or_else(|| Error::invalid("fault injection", "the program has no execution plan"))?;
    let float = plan
        .main_instructions()
        .get(instruction)
        .and_then(|ins| match ins {
            Instruction::KernelCall { args, .. } => args.get(1),
            _ => None,
        })
        .and_then(|&a| plan.values.get(a))
        .is_some_and(
            |v| matches!(v, EValue::Tensor(t) if t.scalar_type == crate::ScalarType::Float),
        );
    let mut bytes = program.bytes().to_vec();
    if float {
        for c in bytes[w.weights.clone()].chunks_exact_mut(4) {
            c[3] ^= 0x80;
        }
    } else {
        for b in &mut bytes[w.weights.clone()] {
            *b = (*b as i8).wrapping_neg() as u8;
        }
    }
    if let Some(sums) = w.sums {
        for c in bytes[sums].chunks_exact_mut(4) {
            if float {
                c[3] ^= 0x80;
            } else {
                let v = i32::from_le_bytes([c[0], c[1], c[2], c[3]]).wrapping_neg();
                c.copy_from_slice(&v.to_le_bytes());
            }
        }
    }
    Ok(bytes)
}

/// A copy of `program`'s file with instruction `instruction`'s requantization multipliers (the
/// schema's `requantize_multipliers` argument, a constant int32 tensor of Q31 values) multiplied
/// by `factor`, each rounded and kept within int32. Refused, naming why, for an operator without
/// such a tensor (a linear layer's multipliers are an `int[]` inside the program's value table,
/// not bytes of a constant).
pub fn scale_requantization(program: &Program, instruction: usize, factor: f64) -> Result<Vec<u8>> {
    let refuse = |why: String| Error::invalid("fault injection", why);
    let plan = program
        .default_plan()
        .ok_or_else(|| refuse("the program has no execution plan".into()))?;
    let Some(Instruction::KernelCall { op_index, args }) =
        plan.main_instructions().get(instruction)
    else {
        return Err(refuse(format!(
            "instruction {instruction} is no kernel call"
        )));
    };
    let operator = plan
        .operators
        .get(*op_index)
        .ok_or_else(|| refuse(format!("instruction {instruction} names no operator")))?;
    let def = crate::ops::lookup(&operator.name, &operator.overload)
        .map(crate::ops::def)
        .ok_or_else(|| refuse(format!("{} is not in the registry", operator.name)))?;
    let at = def
        .parsed_schema()
        .and_then(|s| {
            s.args
                .iter()
                .position(|a| a.name == "requantize_multipliers")
        })
        .ok_or_else(|| refuse(format!("{} has no requantize_multipliers", operator.name)))?;
    let range = args
        .get(at)
        .and_then(|&v| constant_range(program, plan, v))
        .ok_or_else(|| {
            refuse(format!(
                "{}'s requantize_multipliers are no constant tensor in the file",
                operator.name
            ))
        })?;
    let mut out = program.bytes().to_vec();
    for c in out[range].chunks_exact_mut(4) {
        let m = i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64 * factor;
        let m = m.round().clamp(i32::MIN as f64, i32::MAX as f64) as i32;
        c.copy_from_slice(&m.to_le_bytes());
    }
    Ok(out)
}
