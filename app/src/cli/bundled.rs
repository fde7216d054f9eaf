//! `etscope bundled FILE.bpte`: runs every test case on the host and reports pass/fail.

use std::path::Path;

use anyhow::{bail, Context, Result};
use etscope_core::formats::bundled::BundledProgram;
use etscope_core::runtime::verify::{verify, Tolerance, Verdict};
use etscope_core::runtime::Target;

use crate::load;
use crate::table::Table;

pub fn run(path: &Path, rtol: f64, atol: f64, as_json: bool) -> Result<()> {
    let data = load::bytes(path)?;
    let bundled = BundledProgram::parse(&data).with_context(|| path.display().to_string())?;
    let results = verify(
        &bundled,
        Target::for_program(&bundled.program, 0),
        Tolerance { rtol, atol },
    );
    let failed = results.iter().filter(|r| !r.passed).count();
    if as_json {
        super::print_json(&results)?;
    } else {
        let mut t = Table::new(&[
            "method",
            ">case",
            "result",
            ">max abs diff",
            ">mismatched",
            "error",
        ]);
        for r in &results {
            t.row(vec![
                r.method.clone(),
                r.case.to_string(),
                match r.verdict {
                    Verdict::Passed => "pass",
                    Verdict::Differs => "FAIL",
                    Verdict::CannotRun => "cannot run",
                    Verdict::Error => "error",
                }
                .into(),
                format!("{:.3e}", r.max_abs_diff),
                r.mismatched.to_string(),
                r.error.clone().unwrap_or_default(),
            ]);
        }
        print!("{}", t.render());
        println!(
            "{} of {} test cases passed (rtol {rtol}, atol {atol})",
            results.len() - failed,
            results.len()
        );
    }
    let cannot_run: Vec<_> = results
        .iter()
        .filter(|r| r.verdict == Verdict::CannotRun)
        .collect();
    if !cannot_run.is_empty() && cannot_run.len() == failed {
        return Err(super::CannotRun(format!(
            "{}: {} of {} test cases cannot run on the host: {}",
            path.display(),
            cannot_run.len(),
            results.len(),
            cannot_run[0].error.as_deref().unwrap_or("unsupported")
        ))
        .into());
    }
    if failed > 0 {
        bail!(
            "{}: {failed} of {} test cases failed",
            path.display(),
            results.len()
        );
    }
    Ok(())
}

/// `etscope bundled`'s arguments.
#[derive(Debug, clap::Args)]
pub struct BundledArgs {
    pub file: std::path::PathBuf,
    #[arg(long, default_value_t = 1e-5)]
    pub rtol: f64,
    #[arg(long, default_value_t = 1e-8)]
    pub atol: f64,
    #[arg(long)]
    pub json: bool,
}

/// Runs `etscope bundled` with its arguments.
pub fn main(args: BundledArgs) -> Result<()> {
    let BundledArgs {
        file,
        rtol,
        atol,
        json,
    } = args;
    run(&file, rtol, atol, json)
}
