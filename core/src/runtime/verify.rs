//! BundledProgram verification: run every test case of every method through the host runtime
//! and compare with the expected outputs (`|got − want| ≤ atol + rtol·|want|`, ExecuTorch's
//! defaults rtol 1e-5, atol 1e-8).

use crate::formats::bundled::{BundledProgram, BundledValue};
use crate::runtime::{Runtime, RuntimeError, Target};

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
            let inputs: Vec<_> = case
                .inputs
                .iter()
                .filter_map(|v| {
                    if let BundledValue::Tensor(t) = v {
                        Some(t.clone())
                    } else {
                        None
                    }
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
                    let expected: Vec<_> = case
                        .expected_outputs
                        .iter()
                        .filter_map(|v| {
                            if let BundledValue::Tensor(t) = v {
                                Some(t)
                            } else {
                                None
                            }
                        })
                        .collect();
                    let mut ok = run.outputs.len() == expected.len();
                    for (got, want) in run.outputs.iter().zip(&expected) {
                        let got = got.to_data();
                        if got.shape != want.shape {
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
