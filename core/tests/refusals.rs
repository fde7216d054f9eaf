//! Program features etscope does not implement are refused before a run, naming them
//! (`formats::pte::features`, `runtime::support`): each feature is put into a real program
//! made by ExecuTorch's exporter, and preparing it must fail with
//! [`RuntimeError::Unimplemented`] naming that feature, never run.

use etscope_core::formats::pte::features::{
    unimplemented_feature, DEVICE_CPU, DYNAMIC_UNBOUND, LOCATION_EXTERNAL,
};
use etscope_core::formats::pte::{
    BufferDevice, EValue, ExtraTensorInfo, Instruction, Program, Tensor,
};
use etscope_core::runtime::support::check_plan;
use etscope_core::runtime::{Runtime, RuntimeError, Target};
use etscope_core::ScalarType;

fn tiny() -> Program {
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/tiny_conv_relu_linear/model_fp32.pte"
    ))
    .expect("fixture");
    Program::parse(bytes).expect("parses")
}

/// `change` applied to the first planned tensor of the tiny program: what preparing it says.
fn refusal(change: impl Fn(&mut Tensor)) -> String {
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
    let on_device = |t: &mut Tensor| {
        t.extra = Some(ExtraTensorInfo {
            mutable_data_segments_idx: 0,
            fully_qualified_name: None,
            location: 0,
            device_type: 1,
            device_index: 0,
        })
    };
    assert!(refusal(on_device).contains("device type 1"));
    let nameless = |t: &mut Tensor| {
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
        .push(BufferDevice {
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
