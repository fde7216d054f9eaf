//! Fault injection for testing the diff: a copy of a program in which one weighted operator
//! (the registry's `weighted` trait: convolutions, depthwise and transpose convolutions, fully
//! connected layers, in `cortex_m::` or portable form) has
//! its weights and its bias / kernel sum negated — a sign error as a wrong export or a corrupted
//! weight image gives. Everything else, byte for byte, stays as it was.

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
    let base = program.bytes().as_ptr() as usize;
    let range_of = |args: &[usize], k: usize| {
        let EValue::Tensor(t) = plan.values.get(*args.get(k)?)? else {
            return None;
        };
        if !t.is_constant() {
            return None;
        }
        let bytes = program.constant_bytes(t).ok()?;
        let start = (bytes.as_ptr() as usize).checked_sub(base)?;
        Some(start..start + bytes.len())
    };
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
