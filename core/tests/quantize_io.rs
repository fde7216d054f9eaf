//! Inputs passed as int8 (`lower --quantize-io`, ExecuTorch's `QuantizeInputs` before the
//! Cortex-M passes) against ExecuTorch's own program of the same model exported with its
//! `QuantizeInputs` (`tests/fixtures/tools/make_quantize_io.py`): in the explicit-layout flow
//! the same calls and the same outputs on int8 inputs; in the default flow ExecuTorch's program
//! declares its int8 input contiguous, which the Cortex-M convolution refuses, and etscope
//! refuses to write it, saying why.

mod common;

use etscope_core::analysis::diff_sources::PreparedSource;
use etscope_core::formats::etrecord::ETRecord;
use etscope_core::formats::pte::{Instruction, Program};
use etscope_core::lower::{self, quantize_io::quantize_inputs, Core, Flow, Module, Options};
use etscope_core::tensor::TensorData;

fn dir() -> std::path::PathBuf {
    common::fixtures().join("quantize_io")
}

fn lowered(stem: &str, flow: Flow) -> Result<Program, String> {
    let rec =
        ETRecord::parse(&common::read(&dir().join(format!("{stem}.etrecord")))).expect("etrecord");
    let edge = Module::from_etrecord(&rec, None).expect("edge");
    let options = Options {
        flow,
        core: Core::M55,
    };
    let (edge, how) = quantize_inputs(edge).map_err(|e| e.to_string())?;
    // the one input, quantized as the program's own quantize did it
    assert_eq!(how.len(), 1);
    assert!(how[0].scale > 0.0 && (how[0].quant_min, how[0].quant_max) == (-128, 127));
    let stages = lower::lower(edge, &options).map_err(|e| e.to_string())?;
    let bytes = lower::emit::program(&stages.last().expect("passes").module, &options)
        .map_err(|e| e.to_string())?;
    Program::parse(bytes).map_err(|e| e.to_string())
}

/// The kernel calls of the program's `forward` (ExecuTorch's `QuantizeInputs` program also has
/// a method per input quantization parameter).
fn calls(p: &Program) -> Vec<String> {
    let Some(plan) = p.plans.iter().find(|m| m.name == "forward") else {
        return Vec::new();
    };
    plan.chains
        .iter()
        .flat_map(|c| &c.instructions)
        .filter_map(|i| match i {
            Instruction::KernelCall { op_index, .. } => Some(plan.operators[*op_index].qualified()),
            _ => None,
        })
        .collect()
}

#[test]
fn the_explicit_flow_takes_int8_inputs_as_executorchs_quantize_inputs_program_does() {
    let ours = lowered("model_int8_m55_explicit", Flow::Explicit).expect("lowers");
    let theirs = Program::parse(common::read(
        &dir().join("model_int8_m55_explicit_quantized_inputs.pte"),
    ))
    .expect("pte");
    assert!(!calls(&theirs).is_empty());
    assert_eq!(calls(&ours), calls(&theirs));
    // no quantize on entry: the input is the int8 codes
    assert!(!calls(&ours)
        .iter()
        .any(|c| c == "cortex_m::quantize_per_tensor.out"));
    // the same outputs on int8 inputs, bit for bit
    let (a, b) = (
        PreparedSource::program("etscope", &ours, None, None).expect("prepares"),
        PreparedSource::program("executorch", &theirs, None, None).expect("prepares"),
    );
    for seed in 0..8u64 {
        let bytes: Vec<u8> = (0..3 * 48 * 48u64)
            .map(|i| ((i * 2654435761 + seed * 97) >> 7) as u8)
            .collect();
        let input = [TensorData {
            dtype: etscope_core::ScalarType::Char,
            shape: vec![1, 3, 48, 48],
            bytes,
        }];
        let out = |s: &PreparedSource| {
            let run = s.run(&input, None).expect("runs");
            etscope_core::analysis::diff::comparable_output(&run, &run, 0)
                .expect("an output")
                .expect("comparable")
                .0
        };
        assert_eq!(out(&a), out(&b), "input {seed}");
    }
}

#[test]
fn the_default_flow_with_int8_inputs_is_refused_as_executorchs_own_program_fails() {
    let err = lowered("model_int8_m55", Flow::Default).expect_err("refused");
    assert!(
        err.contains("dim_order") && err.contains("channels-last"),
        "{err}"
    );
    // ExecuTorch's own program of it: its convolution refuses the contiguous int8 input
    let theirs = Program::parse(common::read(
        &dir().join("model_int8_m55_quantized_inputs.pte"),
    ))
    .expect("pte");
    let side = PreparedSource::program("executorch", &theirs, None, None).expect("prepares");
    let input = [TensorData {
        dtype: etscope_core::ScalarType::Char,
        shape: vec![1, 3, 48, 48],
        bytes: vec![0; 3 * 48 * 48],
    }];
    let refused = side.run(&input, None).expect_err("the kernel refuses");
    assert!(refused.to_string().contains("channels-last"), "{refused}");
}
