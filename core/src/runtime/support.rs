//! What of a `.pte` execution plan the host runtime implements, checked before a run: a
//! program feature that changes what a method computes and that etscope does not implement is
//! refused here, naming the feature, instead of run on a guess. Where ExecuTorch's runtime
//! refuses the same thing when it loads the method, the message says so.
//!
//! `docs/compatibility.md` lists every schema field with what becomes of it; the refusals it
//! names are the ones below.

use crate::formats::pte::{EValue, ExecutionPlan, Instruction, Program};
use crate::kernels::RuntimeError;
use crate::ScalarType;

/// `Tensor.shape_dynamism` of a tensor whose storage the runtime allocates while running.
const DYNAMIC_UNBOUND: i8 = 2;
/// `ExtraTensorInfo.device_type` of host memory.
const DEVICE_CPU: i8 = 0;
/// `ExtraTensorInfo.location` of a tensor kept outside the program (a `.ptd`).
const LOCATION_EXTERNAL: i8 = 1;

/// The first feature of plan `plan_index` that the runtime does not implement, as the error a
/// run gives; `Ok` when the runtime implements everything the plan uses (operators are checked
/// as they are reached: [`RuntimeError::UnsupportedOp`]).
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

/// What of `plan` the runtime does not implement, described for the user.
pub fn unimplemented_feature(plan: &ExecutionPlan) -> Option<String> {
    if plan.chains.is_empty() {
        return Some("a method without chains (ExecuTorch refuses it: \"No chains\")".into());
    }
    // ExecuTorch runs the chains one after another; etscope's graph is the first chain's
    if let Some((k, c)) = plan
        .chains
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, c)| !c.instructions.is_empty())
    {
        return Some(format!(
            "a second instruction chain (chain {k} has {} instructions; etscope runs one chain)",
            c.instructions.len()
        ));
    }
    if let Some(i) = plan
        .main_instructions()
        .iter()
        .position(|i| matches!(i, Instruction::Empty))
    {
        return Some(format!(
            "an instruction without arguments (instruction {i}; ExecuTorch refuses it: \"Unknown instruction\")"
        ));
    }
    if let Some(d) = plan
        .non_const_buffer_devices
        .iter()
        .find(|d| d.device_type != DEVICE_CPU)
    {
        return Some(format!(
            "a memory-planned arena on device type {} index {} (arena {}; etscope runs on host memory only)",
            d.device_type, d.device_index, d.buffer_idx
        ));
    }
    for (i, v) in plan.values.iter().enumerate() {
        if let Some(f) = value_feature(v) {
            return Some(format!("value {i}: {f}"));
        }
    }
    None
}

/// What of one value the runtime does not implement.
fn value_feature(v: &EValue) -> Option<String> {
    let t = match v {
        EValue::Unset => {
            return Some(
                "a value without a type (ExecuTorch refuses it: \"Unknown KernelTypes value\")"
                    .into(),
            )
        }
        EValue::Tensor(t) => t,
        _ => return None,
    };
    if t.storage_offset != 0 {
        return Some(format!(
            "a tensor with storage_offset {} (ExecuTorch refuses it too: \"Non-zero storage offset not supported\")",
            t.storage_offset
        ));
    }
    if t.shape_dynamism == DYNAMIC_UNBOUND {
        return Some(
            "a tensor of unbounded dynamic shape (DYNAMIC_UNBOUND; ExecuTorch's portable runtime refuses it too)"
                .into(),
        );
    }
    if matches!(t.scalar_type, ScalarType::Unknown(_)) {
        return Some(format!(
            "a tensor of scalar type {} (ExecuTorch refuses it too: invalid ScalarType)",
            t.scalar_type.name()
        ));
    }
    if crate::kernels::value::Buf::zeros(t.scalar_type, 0).is_none() {
        return Some(format!(
            "a tensor of scalar type {} (the host runtime holds bool, 8- to 64-bit integers, float and double)",
            t.scalar_type.name()
        ));
    }
    if let Some(e) = &t.extra {
        if e.device_type != DEVICE_CPU {
            return Some(format!(
                "a tensor on device type {} index {} (etscope runs on host memory only)",
                e.device_type, e.device_index
            ));
        }
        if e.location == LOCATION_EXTERNAL && e.fully_qualified_name.is_none() {
            return Some(
                "a tensor stored externally without a fully qualified name (ExecuTorch refuses it too)"
                    .into(),
            );
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::pte::ExtraTensorInfo;
    use crate::runtime::{Runtime, Target};

    fn tiny() -> Program {
        let bytes = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/tiny_conv_relu_linear/model_fp32.pte"
        ))
        .expect("fixture");
        Program::parse(bytes).expect("parses")
    }

    /// `change` applied to the first planned tensor of the tiny program: what preparing it says.
    fn refusal(change: impl Fn(&mut crate::formats::pte::Tensor)) -> String {
        let mut program = tiny();
        let t = program.plans[0]
            .values
            .iter_mut()
            .find_map(|v| match v {
                EValue::Tensor(t) if t.allocation.is_some() => Some(t),
                _ => None,
            })
            .expect("a planned tensor");
        change(t);
        match Runtime::new(&program, 0, Target::default()) {
            Err(e @ RuntimeError::Unimplemented { .. }) => e.to_string(),
            Err(e) => panic!("refused for another reason: {e}"),
            Ok(_) => panic!("prepared"),
        }
    }

    #[test]
    fn the_program_as_exported_is_accepted() {
        assert_eq!(unimplemented_feature(&tiny().plans[0]), None);
    }

    #[test]
    fn each_unimplemented_tensor_feature_is_refused_naming_it() {
        assert!(refusal(|t| t.storage_offset = 4).contains("storage_offset 4"));
        assert!(refusal(|t| t.shape_dynamism = DYNAMIC_UNBOUND).contains("DYNAMIC_UNBOUND"));
        assert!(refusal(|t| t.scalar_type = ScalarType::Unknown(40)).contains("UNKNOWN(40)"));
        assert!(refusal(|t| t.scalar_type = ScalarType::Half).contains("scalar type HALF"));
        let on_device = |t: &mut crate::formats::pte::Tensor| {
            t.extra = Some(ExtraTensorInfo {
                mutable_data_segments_idx: 0,
                fully_qualified_name: None,
                location: 0,
                device_type: 1,
                device_index: 0,
            })
        };
        assert!(refusal(on_device).contains("device type 1"));
        let nameless = |t: &mut crate::formats::pte::Tensor| {
            t.extra = Some(ExtraTensorInfo {
                mutable_data_segments_idx: 0,
                fully_qualified_name: None,
                location: LOCATION_EXTERNAL,
                device_type: DEVICE_CPU,
                device_index: 0,
            })
        };
        assert!(refusal(nameless).contains("without a fully qualified name"));
    }

    #[test]
    fn a_second_chain_and_an_empty_instruction_are_refused() {
        let mut program = tiny();
        let first = program.plans[0].chains[0].clone();
        program.plans[0].chains.push(first);
        let err = check_plan(&program, 0).expect_err("two chains").to_string();
        assert!(err.contains("second instruction chain"), "{err}");
        // a trailing chain without instructions is what ExecuTorch skips
        program.plans[0].chains[1].instructions.clear();
        assert!(check_plan(&program, 0).is_ok());
        program.plans[0].chains[0]
            .instructions
            .push(Instruction::Empty);
        let err = check_plan(&program, 0).expect_err("empty").to_string();
        assert!(err.contains("Unknown instruction"), "{err}");
        program.plans[0].chains[0].instructions.pop();
        program.plans[0]
            .non_const_buffer_devices
            .push(crate::formats::pte::BufferDevice {
                buffer_idx: 1,
                device_type: 1,
                device_index: 0,
            });
        let err = check_plan(&program, 0)
            .expect_err("on a device")
            .to_string();
        assert!(err.contains("arena 1"), "{err}");
        program.plans[0].non_const_buffer_devices.clear();
        program.plans[0].values.push(EValue::Unset);
        let err = check_plan(&program, 0).expect_err("unset").to_string();
        assert!(err.contains("without a type"), "{err}");
    }
}
