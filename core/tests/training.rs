//! Programs whose planned tensors start with data from the file, made by ExecuTorch 1.5.1's own
//! exporter (`tests/fixtures/tools/make_training.py`) and run on the host against what
//! ExecuTorch's own runtime computed: training programs (`forward` returns the loss, the
//! gradients and the parameters; the parameters are planned tensors whose initial values sit in
//! the program's mutable data segment or in a `.ptd`), their `__et_training_*` metadata methods,
//! and an inference program whose mutated buffer starts at its registered value. What the host
//! does not implement (a training program whose backward needs an operator etscope lacks) is
//! refused naming it.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::{assert_matches, npy, numbered};
use etscope_core::formats::flat_tensor::FlatTensorFile;
use etscope_core::formats::pte::{EValue, Program};
use etscope_core::runtime::{RunOptions, RunResult, Runtime, RuntimeError, Target};
use etscope_core::tensor::TensorData;

fn cases() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(common::fixtures().join("training"))
        .expect("tests/fixtures/training")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("case.json").exists())
        .collect();
    dirs.sort();
    dirs
}

fn program_of(dir: &Path) -> Program {
    let mut program = Program::parse(common::read(&dir.join("model.pte"))).expect("parses");
    let ptd = dir.join("model.ptd");
    if ptd.exists() {
        let data = FlatTensorFile::parse(common::read(&ptd)).expect("ptd parses");
        program
            .attach_external_data(Arc::new(data))
            .expect("attaches");
    }
    program
}

fn forward_calls(
    program: &Program,
    dir: &Path,
    calls: usize,
    in_arenas: bool,
) -> Result<Vec<RunResult>, RuntimeError> {
    let plan = program.plan_index("forward").expect("a forward method");
    assert_eq!(
        program.default_plan_index(),
        plan,
        "forward is what runs by default"
    );
    let rt = Runtime::new(program, plan, Target::default())?;
    let inputs: Vec<TensorData> = numbered(dir, "input").iter().map(|p| npy(p)).collect();
    rt.run_calls(
        &vec![inputs; calls],
        RunOptions {
            in_arenas,
            ..RunOptions::default()
        },
    )
}

#[test]
fn every_output_of_every_call_matches_executorchs_runtime_or_the_program_is_refused_by_name() {
    let mut ran = Vec::new();
    for dir in cases() {
        let case = common::json(&dir.join("case.json"));
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let program = program_of(&dir);
        let initial = program.plans[program.plan_index("forward").unwrap()]
            .values
            .iter()
            .filter(|v| matches!(v, EValue::Tensor(t) if t.has_initial_data()))
            .count();
        assert_eq!(
            initial as u64,
            case["planned_tensors_with_initial_data"].as_u64().unwrap(),
            "{name}: planned tensors with initial data"
        );
        assert!(initial > 0, "{name}: the case must exercise initial data");
        let calls = case["calls"].as_u64().unwrap() as usize;
        let operators: Vec<&str> = case["operators"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o.as_str().unwrap())
            .collect();
        let missing: Vec<&str> = operators
            .iter()
            .copied()
            .filter(|op| !etscope_core::runtime::supports(op))
            .collect();
        for in_arenas in [false, true] {
            let label = format!("{name} (in arenas: {in_arenas})");
            match forward_calls(&program, &dir, calls, in_arenas) {
                Ok(results) => {
                    assert!(missing.is_empty(), "{label}: ran without {missing:?}");
                    for (c, result) in results.iter().enumerate() {
                        let want = numbered(&dir, &format!("call_{c}_output"));
                        assert_eq!(
                            want.len() as u64,
                            case["outputs_per_call"].as_u64().unwrap()
                        );
                        assert_eq!(result.outputs.len(), want.len(), "{label}: call {c}");
                        for (k, (got, w)) in result.outputs.iter().zip(&want).enumerate() {
                            assert_matches(
                                &format!("{label}: call {c} output {k}"),
                                &got.to_data(),
                                &npy(w),
                                2e-6,
                            );
                        }
                    }
                    ran.push(name.clone());
                }
                Err(RuntimeError::UnsupportedOp { op, .. }) => {
                    assert!(
                        missing.contains(&op.as_str()),
                        "{label}: refused {op}, which the runtime implements"
                    );
                }
                Err(e) => panic!("{label}: {e}"),
            }
        }
    }
    for must in [
        "softmax_cross_entropy",
        "xor",
        "xor_external",
        "mlp_mse",
        "initialized_buffer",
    ] {
        assert!(ran.iter().any(|r| r == must), "{must} did not run: {ran:?}");
    }
}

#[test]
fn a_training_program_whose_backward_needs_a_missing_operator_is_refused_naming_it() {
    let dir = common::fixtures().join("training/conv");
    let program = program_of(&dir);
    let err = forward_calls(&program, &dir, 1, false)
        .expect_err("refused")
        .to_string();
    assert!(err.contains("aten::convolution_backward"), "{err}");
}

#[test]
fn the_training_metadata_methods_return_what_executorchs_runtime_returns() {
    let mut checked = 0;
    for dir in cases() {
        let case = common::json(&dir.join("case.json"));
        let program = program_of(&dir);
        let names: Vec<&str> = program.plans.iter().map(|p| p.name.as_str()).collect();
        let want_names: Vec<&str> = case["methods"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap())
            .collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(sorted, want_names, "{}", dir.display());
        for (method, want) in case["other_methods"].as_object().unwrap() {
            let plan = program.plan_index(method).expect("method");
            let rt = Runtime::new(&program, plan, Target::default()).expect("prepares");
            let result = rt.run(&[], false).expect("runs");
            let want = want.as_array().unwrap();
            assert_eq!(result.outputs.len(), want.len(), "{method}");
            for (k, w) in want.iter().enumerate() {
                match w {
                    serde_json::Value::String(s) => {
                        assert_eq!(result.texts[k].as_deref(), Some(s.as_str()), "{method} {k}");
                        assert_eq!(result.outputs[k].to_data().bytes, s.as_bytes());
                    }
                    serde_json::Value::Number(n) => {
                        assert_eq!(result.texts[k], None);
                        let got = result.outputs[k].to_data().to_f64().unwrap();
                        assert_eq!(got, [n.as_f64().unwrap()], "{method} {k}");
                    }
                    other => panic!("{method}: unexpected {other}"),
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 20, "{checked}");
}

#[test]
fn parameters_start_from_the_program_not_from_zero() {
    // the second call of a program whose buffer is mutated starts from what the first left,
    // and the first from the registered value: [0.5, 1.5, 2.5, 3.5] + 1
    let dir = common::fixtures().join("training/initialized_buffer");
    let program = program_of(&dir);
    let results = forward_calls(&program, &dir, 2, false).expect("runs");
    let x = npy(&dir.join("input_0.npy")).to_f64().unwrap();
    for (c, r) in results.iter().enumerate() {
        let got = r.outputs[0].to_data().to_f64().unwrap();
        for (i, (g, xi)) in got.iter().zip(&x).enumerate() {
            let steps = i as f64 + 0.5 + (c + 1) as f64;
            assert!(
                (g - xi * steps).abs() <= 1e-5 * (1.0 + g.abs()),
                "call {c} element {i}"
            );
        }
    }
}
