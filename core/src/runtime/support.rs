//! The runtime's refusal of what it does not implement: before a plan is prepared, a program
//! feature that changes what a method computes and that etscope does not implement
//! ([`crate::formats::pte::features`]) is refused naming it instead of run on a guess;
//! operators are checked as they are reached ([`RuntimeError::UnsupportedOp`]).

use crate::formats::pte::features::unimplemented_feature;
use crate::formats::pte::Program;
use crate::kernels::RuntimeError;

/// The first feature of plan `plan_index` that the runtime does not implement, as the error a
/// run gives; `Ok` when the runtime implements everything the plan uses.
pub fn check_plan(program: &Program, plan_index: usize) -> Result<(), RuntimeError> {
    let Some(plan) = program.plans.get(plan_index) else {
        return Err(RuntimeError::Program(format!("no plan {plan_index}")));
    };
    match unimplemented_feature(plan) {
        Some(feature) => Err(RuntimeError::Unimplemented {
            method: plan.name.clone(),
            feature,
        }),
        None => Ok(()),
    }
}
