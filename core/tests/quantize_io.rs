//! Inputs and outputs passed as int8 (`lower --quantize-io[=inputs|outputs|both]`, ExecuTorch's
//! `QuantizeInputs` and `QuantizeOutputs` before the Cortex-M passes) against ExecuTorch's own
//! programs of the same model exported with them (`tests/fixtures/tools/make_quantize_io.py`):
//! in the explicit-layout flow the same calls and the same outputs; in the default flow this
//! model's program stores its input contiguous, which the Cortex-M convolution refuses, in
//! ExecuTorch's programs as in etscope's, and etscope refuses to write it, saying why.

mod common;

use etscope_core::analysis::diff_sources::PreparedSource;
use etscope_core::formats::etrecord::ETRecord;
use etscope_core::formats::pte::{Instruction, Program};
use etscope_core::lower::quantize_io::{quantize_inputs, quantize_outputs};
use etscope_core::lower::{self, Core, Flow, Module, Options};
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

/// The program as `lower --quantize-io=both|outputs` makes it from the ETRecord `stem`.
fn lowered_with(stem: &str, flow: Flow, inputs: bool) -> Program {
    let rec =
        ETRecord::parse(&common::read(&dir().join(format!("{stem}.etrecord")))).expect("etrecord");
    let mut edge = Module::from_etrecord(&rec, None).expect("edge");
    let options = Options {
        flow,
        core: Core::M55,
    };
    if inputs {
        edge = quantize_inputs(edge).expect("int8 inputs").0;
    }
    let (edge, how) = quantize_outputs(edge).expect("int8 outputs");
    // the one output, dequantized as the program's own dequantize did it
    assert_eq!(how.len(), 1);
    assert!(how[0].scale > 0.0 && (how[0].quant_min, how[0].quant_max) == (-128, 127));
    let stages = lower::lower(edge, &options).expect("lowers");
    Program::parse(
        lower::emit::program(&stages.last().expect("passes").module, &options).expect("writes"),
    )
    .expect("reads")
}

/// Runs `p` on `input`: its first output, as the diff compares it.
fn output_bytes(p: &Program, input: &[TensorData]) -> Vec<f64> {
    let side = PreparedSource::program("p", p, None, None).expect("prepares");
    let run = side.run(input, None).expect("runs");
    let out = etscope_core::analysis::diff::comparable_output(&run, &run, 0)
        .expect("an output")
        .expect("comparable")
        .0;
    out.to_vec()
}

#[test]
fn outputs_returned_as_int8_equal_executorchs_quantize_outputs_program_and_fail_where_it_fails() {
    // explicit flow, inputs and outputs as int8: ExecuTorch's QuantizeInputs + QuantizeOutputs
    let ours = lowered_with("model_int8_m55_explicit", Flow::Explicit, true);
    let theirs = Program::parse(common::read(
        &dir().join("model_int8_m55_explicit_quantized_io.pte"),
    ))
    .expect("pte");
    assert_eq!(calls(&ours), calls(&theirs));
    assert!(!calls(&ours)
        .iter()
        .any(|c| c.contains("quantize_per_tensor")));
    for seed in 0..6u64 {
        let input = [TensorData {
            dtype: etscope_core::ScalarType::Char,
            shape: vec![1, 3, 48, 48],
            bytes: (0..3 * 48 * 48u64)
                .map(|i| ((i * 2654435761 + seed * 131) >> 9) as u8)
                .collect(),
        }];
        let (a, b) = (output_bytes(&ours, &input), output_bytes(&theirs, &input));
        assert_eq!(a.len(), 4, "four int8 logits");
        assert_eq!(a, b, "input {seed}");
    }
    // default flow, outputs alone (the float input stays): this model's default-flow program
    // stores its input contiguous, which the Cortex-M convolution refuses, with or without
    // QuantizeOutputs: ExecuTorch's own QuantizeOutputs program fails there on the host, and
    // etscope's lowering refuses to write it, saying so
    let theirs = Program::parse(common::read(
        &dir().join("model_int8_m55_quantized_outputs.pte"),
    ))
    .expect("pte");
    assert!(!calls(&theirs).iter().any(|c| c.contains("dequantize")));
    let side = PreparedSource::program("executorch", &theirs, None, None).expect("prepares");
    let input = [TensorData {
        dtype: etscope_core::ScalarType::Float,
        shape: vec![1, 3, 48, 48],
        bytes: vec![0; 3 * 48 * 48 * 4],
    }];
    let refused = side.run(&input, None).expect_err("the kernel refuses");
    assert!(refused.to_string().contains("channels-last"), "{refused}");
    let rec =
        ETRecord::parse(&common::read(&dir().join("model_int8_m55.etrecord"))).expect("etrecord");
    let edge = quantize_outputs(Module::from_etrecord(&rec, None).expect("edge"))
        .expect("int8 outputs")
        .0;
    let options = Options {
        flow: Flow::Default,
        core: Core::M55,
    };
    let stages = lower::lower(edge, &options).expect("lowers");
    let err = lower::emit::program(&stages.last().expect("passes").module, &options)
        .expect_err("refused")
        .to_string();
    assert!(err.contains("channels-last"), "{err}");
}
