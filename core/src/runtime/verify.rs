//! BundledProgram verification: run every test case of every method through the host runtime
//! and compare with the expected outputs (`|got − want| ≤ atol + rtol·|want|`, ExecuTorch's
//! defaults rtol 1e-5, atol 1e-8).

use crate::formats::bundled::{BundledProgram, BundledValue};
use crate::runtime::{Runtime, RuntimeError, Target};
use crate::tensor::TensorData;
use crate::ScalarType;

/// The tolerances a case is judged with.
#[derive(Debug, Clone, Copy)]
pub struct Tolerance {
    pub rtol: f64,
    pub atol: f64,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance {
            rtol: 1e-5,
            atol: 1e-8,
        }
    }
}

/// What became of one test case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Ran; every output within the tolerance.
    Passed,
    /// Ran; some output differs from the expected one.
    Differs,
    /// The host cannot run the program: an operator or a program feature etscope does not
    /// implement, or a delegate whose blob only its backend runs. Says nothing about the program's correctness.
    CannotRun,
    /// The program or the test case is inconsistent (bad arguments, inputs that do not fit).
    Error,
}

/// The verdict on one test case.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CaseResult {
    pub method: String,
    pub case: usize,
    pub verdict: Verdict,
    pub passed: bool,
    /// Largest absolute difference over all outputs.
    pub max_abs_diff: f64,
    /// Elements outside the tolerance.
    pub mismatched: usize,
    /// Why the case could not run, if it could not.
    pub error: Option<String>,
}

/// Runs every test case of `bundled`.
pub fn verify(bundled: &BundledProgram, target: Target, tol: Tolerance) -> Vec<CaseResult> {
    let mut out = Vec::new();
    for suite in &bundled.suites {
        let plan = bundled
            .program
            .plans
            .iter()
            .position(|p| p.name == suite.method_name);
        let runtime = plan
            .ok_or_else(|| RuntimeError::Program(format!("no method {:?}", suite.method_name)))
            .and_then(|i| Runtime::new(&bundled.program, i, target));
        for (ci, case) in suite.test_cases.iter().enumerate() {
            let mut result = CaseResult {
                method: suite.method_name.clone(),
                case: ci,
                verdict: Verdict::Error,
                passed: false,
                max_abs_diff: 0.0,
                mismatched: 0,
                error: None,
            };
            // the host runtime binds tensor inputs only: a scalar input is refused by name
            let scalar_input = case
                .inputs
                .iter()
                .position(|v| !matches!(v, BundledValue::Tensor(_)));
            if let Some(k) = scalar_input {
                let (verdict, what) = match &case.inputs[k] {
                    BundledValue::Unset => (Verdict::Error, "a value without a type"),
                    BundledValue::Int(_) => (Verdict::CannotRun, "an int"),
                    BundledValue::Bool(_) => (Verdict::CannotRun, "a bool"),
                    _ => (Verdict::CannotRun, "a double"),
                };
                result.verdict = verdict;
                result.error = Some(format!(
                    "input {k} is {what}: etscope's runtime takes tensor inputs only"
                ));
                out.push(result);
                continue;
            }
            let inputs: Vec<_> = case
                .inputs
                .iter()
                .filter_map(|v| match v {
                    BundledValue::Tensor(t) => Some(t.clone()),
                    _ => None,
                })
                .collect();
            let run = match &runtime {
                Ok(rt) => rt.run(&inputs, false),
                Err(RuntimeError::Unimplemented { method, feature }) => {
                    Err(RuntimeError::Unimplemented {
                        method: method.clone(),
                        feature: feature.clone(),
                    })
                }
                Err(e) => Err(RuntimeError::Program(e.to_string())),
            };
            match run {
                Err(e) => {
                    result.verdict = match e {
                        RuntimeError::UnsupportedOp { .. }
                        | RuntimeError::Delegate { .. }
                        | RuntimeError::Unimplemented { .. } => Verdict::CannotRun,
                        _ => Verdict::Error,
                    };
                    result.error = Some(e.to_string());
                }
                Ok(run) => {
                    // a scalar the method returns is compared in the form the run gives it
                    let expected: Vec<Option<TensorData>> =
                        case.expected_outputs.iter().map(expected_value).collect();
                    let Some(expected) = expected.into_iter().collect::<Option<Vec<_>>>() else {
                        result.verdict = Verdict::Error;
                        result.error = Some("an expected output has no type".into());
                        out.push(result);
                        continue;
                    };
                    let mut ok = run.outputs.len() == expected.len();
                    for (got, want) in run.outputs.iter().zip(&expected) {
                        let got = got.to_data();
                        if got.shape != want.shape
                            || got.dtype.is_integer() != want.dtype.is_integer()
                        {
                            ok = false;
                            continue;
                        }
                        let (Ok(g), Ok(w)) = (got.to_f64(), want.to_f64()) else {
                            ok = false;
                            continue;
                        };
                        for (a, b) in g.iter().zip(&w) {
                            let d = (a - b).abs();
                            result.max_abs_diff = result.max_abs_diff.max(d);
                            if d > tol.atol + tol.rtol * b.abs() {
                                result.mismatched += 1;
                            }
                        }
                    }
                    result.passed = ok && result.mismatched == 0;
                    result.verdict = if result.passed {
                        Verdict::Passed
                    } else {
                        Verdict::Differs
                    };
                }
            }
            out.push(result);
        }
    }
    out
}

/// An expected output as the run gives it: a tensor, or a scalar as a 0-d tensor (ints as
/// int64, doubles as float64, bools as bool), as [`crate::runtime::RunResult`] holds a method's
/// scalar outputs; `None` for a value without a type.
fn expected_value(v: &BundledValue) -> Option<TensorData> {
    let scalar = |dtype: ScalarType, bytes: Vec<u8>| TensorData {
        dtype,
        shape: Vec::new(),
        bytes,
    };
    Some(match v {
        BundledValue::Tensor(t) => t.clone(),
        BundledValue::Int(i) => scalar(ScalarType::Long, i.to_le_bytes().to_vec()),
        BundledValue::Double(d) => scalar(ScalarType::Double, d.to_le_bytes().to_vec()),
        BundledValue::Bool(b) => scalar(ScalarType::Bool, vec![u8::from(*b)]),
        BundledValue::Unset => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundled() -> BundledProgram {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/tiny_conv_relu_linear/model_fp32.bpte"
        );
        BundledProgram::parse(&std::fs::read(path).expect("fixture")).expect("parses")
    }

    #[test]
    fn the_shipped_cases_pass() {
        let results = verify(&bundled(), Target::default(), Tolerance::default());
        assert!(!results.is_empty());
        assert!(
            results.iter().all(|r| r.verdict == Verdict::Passed),
            "{results:?}"
        );
    }

    #[test]
    fn a_scalar_input_cannot_run_and_a_scalar_output_is_compared_not_skipped() {
        let mut b = bundled();
        b.suites[0].test_cases[0].inputs.push(BundledValue::Int(3));
        let r = &verify(&b, Target::default(), Tolerance::default())[0];
        assert_eq!(r.verdict, Verdict::CannotRun, "{r:?}");
        assert!(
            r.error
                .as_deref()
                .unwrap_or("")
                .contains("input 1 is an int"),
            "{r:?}"
        );
        // an expected int the method does not return makes the case differ: it is not dropped
        let mut b = bundled();
        b.suites[0].test_cases[0]
            .expected_outputs
            .push(BundledValue::Int(3));
        let r = &verify(&b, Target::default(), Tolerance::default())[0];
        assert_eq!(r.verdict, Verdict::Differs, "{r:?}");
        assert_eq!(
            expected_value(&BundledValue::Double(2.5)).map(|t| t.to_f64().unwrap()),
            Some(vec![2.5])
        );
    }
}
