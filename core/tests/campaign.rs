//! The differential campaign against ExecuTorch's runtime: random programs made by ExecuTorch's
//! exporter (`scripts/campaign/generate.py`), their inputs and the outputs ExecuTorch 1.5.1's
//! x86 runtime computed, replayed here with the host's C library (`--libm glibc`, what that
//! runtime calls). Every output must be equal bit for bit (NaN where ExecuTorch has NaN), or the
//! program refused naming what etscope does not implement; anything else is a difference.
//!
//! The README's test command replays the committed corpus (`tests/fixtures/campaign`); the whole
//! campaign replays with `ETSCOPE_CAMPAIGN=DIR` and, with `ETSCOPE_CAMPAIGN_REPORT=FILE`, writes
//! its counts there (`docs/campaign.md` records them).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use etscope_core::formats::pte::Program;
use etscope_core::kernels::libm::Libm;
use etscope_core::runtime::{RunOptions, Runtime, RuntimeError, Target};
use etscope_core::tensor::TensorData;
use etscope_core::ScalarType;

/// |etscope − ExecuTorch| ≤ this × max(1, |ExecuTorch|), for programs with an optimized kernel.
const OPTIMIZED_TOLERANCE: f64 = 1e-5;

/// What one program came to.
enum Outcome {
    Equal,
    /// Not bit for bit, within `OPTIMIZED_TOLERANCE`, the program having an operator the wheel
    /// runs with an optimized kernel (named).
    WithinOptimized(String),
    /// Beyond the tolerance, the program having an optimized-kernel operator (named), and
    /// etscope's largest error from PyTorch's float64 answer no larger than ExecuTorch's.
    NearerFloat64(String),
    /// Refused, naming the feature (an operator, a program feature, a C library function).
    Refused(String),
    /// A difference from ExecuTorch: an output, or an error where ExecuTorch ran.
    Differs(String),
}

/// Bit for bit (`tolerance` 0), but any NaN equals any NaN (the payload is the FPU's, not the
/// program's); or within `tolerance` relative.
fn same(got: &TensorData, want: &TensorData, tolerance: f64) -> Result<(), String> {
    if got.dtype != want.dtype || got.shape != want.shape {
        return Err(format!(
            "{:?}{:?} where ExecuTorch has {:?}{:?}",
            got.dtype, got.shape, want.dtype, want.shape
        ));
    }
    if got.bytes == want.bytes {
        return Ok(());
    }
    if !matches!(got.dtype, ScalarType::Float | ScalarType::Double) {
        return Err("integer elements differ".into());
    }
    let (g, w) = (floats(got), floats(want));
    for (k, (&x, &y)) in g.iter().zip(&w).enumerate() {
        let close = tolerance > 0.0 && (x - y).abs() <= tolerance * y.abs().max(1.0);
        if x.to_bits() != y.to_bits() && !(x.is_nan() && y.is_nan()) && !close {
            return Err(format!("element {k}: {x:e} where ExecuTorch has {y:e}"));
        }
    }
    Ok(())
}

/// A float tensor's elements widened to f64 (exactly: widening keeps every value and sign);
/// empty for another dtype.
fn floats(t: &TensorData) -> Vec<f64> {
    match t.dtype {
        ScalarType::Float | ScalarType::Double => t.to_f64().unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Whether `got`'s largest error from `reference` (float64) is no larger than `want`'s.
fn at_least_as_near(got: &TensorData, want: &TensorData, reference: &TensorData) -> bool {
    let (g, w, r) = (floats(got), floats(want), floats(reference));
    if g.is_empty() || g.len() != w.len() || g.len() != r.len() {
        return false;
    }
    let worst = |x: &[f64]| {
        x.iter()
            .zip(&r)
            .map(|(x, r)| (x - r).abs())
            .fold(0.0, f64::max)
    };
    worst(&g) <= worst(&w)
}

fn refusal(e: &RuntimeError) -> bool {
    matches!(
        e,
        RuntimeError::UnsupportedOp { .. }
            | RuntimeError::Unimplemented { .. }
            | RuntimeError::Unmodelled { .. }
            | RuntimeError::Delegate { .. }
    )
}

fn replay(dir: &Path) -> Outcome {
    let case = common::json(&dir.join("case.json"));
    let program = match Program::parse(common::read(&dir.join("model.pte"))) {
        Ok(p) => p,
        Err(e) => return Outcome::Differs(format!("does not parse: {e}")),
    };
    let Some(methods) = case["methods"].as_object() else {
        return Outcome::Differs("case.json names no methods".into());
    };
    let optimized = common::optimized_in_the_x86_wheel(&program);
    let (mut within, mut nearer) = (false, false);
    for (name, calls) in methods {
        let Some(plan) = program.plan_index(name) else {
            return Outcome::Differs(format!("no method {name}"));
        };
        let mut rt = match Runtime::new(&program, plan, Target::for_program(&program, plan)) {
            Ok(rt) => rt,
            Err(e) if refusal(&e) => return Outcome::Refused(e.to_string()),
            Err(e) => return Outcome::Differs(format!("{name}: prepares: {e}")),
        };
        rt.set_libm(Libm::Glibc);
        let calls = calls.as_array().cloned().unwrap_or_default();
        let files = |call: &serde_json::Value, key: &str| -> Vec<PathBuf> {
            call[key]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| f.as_str())
                .map(|f| dir.join(f))
                .collect()
        };
        let inputs: Vec<Vec<TensorData>> = calls
            .iter()
            .map(|c| files(c, "inputs").iter().map(|p| common::npy(p)).collect())
            .collect();
        let results = match rt.run_calls(&inputs, RunOptions::default()) {
            Ok(r) => r,
            Err(e) if refusal(&e) => return Outcome::Refused(e.to_string()),
            Err(e) => return Outcome::Differs(format!("{name}: {e}")),
        };
        for (k, (call, result)) in calls.iter().zip(&results).enumerate() {
            let want = files(call, "outputs");
            let references = files(call, "references");
            if want.len() != result.outputs.len() {
                return Outcome::Differs(format!(
                    "{name} call {k}: {} outputs where ExecuTorch has {}",
                    result.outputs.len(),
                    want.len()
                ));
            }
            for (i, (got, path)) in result.outputs.iter().zip(&want).enumerate() {
                let (got, want) = (got.to_data(), common::npy(path));
                if let Err(e) = same(&got, &want, 0.0) {
                    if optimized.is_empty() {
                        return Outcome::Differs(format!("{name} call {k} output {i}: {e}"));
                    }
                    if let Err(e) = same(&got, &want, OPTIMIZED_TOLERANCE) {
                        match references.get(i) {
                            Some(r) if at_least_as_near(&got, &want, &common::npy(r)) => {
                                nearer = true
                            }
                            _ => {
                                return Outcome::Differs(format!(
                                    "{name} call {k} output {i} (with {optimized:?}): {e}"
                                ))
                            }
                        }
                    } else {
                        within = true;
                    }
                }
            }
        }
    }
    if nearer {
        Outcome::NearerFloat64(optimized.join(", "))
    } else if within {
        Outcome::WithinOptimized(optimized.join(", "))
    } else {
        Outcome::Equal
    }
}

/// What a refusal names, with the numbers and shapes that vary from program to program taken
/// out (`input N of shape [..]`), so refusals of one feature count together.
fn feature(message: &str) -> String {
    let after = message.split_once("): ").map(|(_, m)| m).unwrap_or(message);
    let mut out = String::new();
    let mut in_list = false;
    for c in after.chars() {
        match c {
            '[' => {
                in_list = true;
                out.push_str("[..]");
            }
            ']' => in_list = false,
            _ if in_list => {}
            '0'..='9' => {
                if !out.ends_with('N') {
                    out.push('N');
                }
            }
            _ => out.push(c),
        }
    }
    out
}

#[test]
fn random_programs_compute_what_executorchs_runtime_computes() {
    let root = std::env::var_os("ETSCOPE_CAMPAIGN")
        .map(PathBuf::from)
        .unwrap_or_else(|| common::fixtures().join("campaign"));
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("case.json").exists())
        .collect();
    dirs.sort();
    assert!(!dirs.is_empty(), "{}: no programs", root.display());
    let (mut equal, mut refused, mut differs) =
        (0usize, BTreeMap::<String, usize>::new(), Vec::new());
    let mut within = BTreeMap::<String, usize>::new();
    let mut nearer = BTreeMap::<String, usize>::new();
    for dir in &dirs {
        match replay(dir) {
            Outcome::Equal => equal += 1,
            Outcome::WithinOptimized(ops) => *within.entry(ops).or_default() += 1,
            Outcome::NearerFloat64(ops) => *nearer.entry(ops).or_default() += 1,
            Outcome::Refused(why) => *refused.entry(feature(&why)).or_default() += 1,
            Outcome::Differs(why) => differs.push(format!("{}: {why}", dir.display())),
        }
    }
    let skipped = std::fs::read_dir(&root)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.path().extension().is_some_and(|x| x == "skipped"))
                .count()
        })
        .unwrap_or(0);
    let report = serde_json::json!({
        "programs": dirs.len(),
        "equal_bit_for_bit": equal,
        "within_tolerance_with_an_optimized_x86_kernel": within,
        "nearer_float64_than_an_optimized_x86_kernel": nearer,
        "refused": refused,
        "differ": differs.len(),
        "rejected_by_executorch": skipped,
    });
    if let Some(path) = std::env::var_os("ETSCOPE_CAMPAIGN_REPORT") {
        std::fs::write(
            &path,
            serde_json::to_string_pretty(&report).unwrap_or_default(),
        )
        .expect("report written");
    }
    assert!(
        differs.is_empty(),
        "{} of {} programs differ from ExecuTorch:\n{}",
        differs.len(),
        dirs.len(),
        differs.join("\n")
    );
}
