//! `etscope bundled FILE.bpte`: runs every test case on the host and reports pass/fail.

use std::path::Path;

use anyhow::{bail, Context, Result};
use etscope_core::bundled::BundledProgram;
use etscope_core::runtime::verify::{verify, Tolerance};
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
                if r.passed {
                    "pass".into()
                } else {
                    "FAIL".into()
                },
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
    if failed > 0 {
        bail!(
            "{}: {failed} of {} test cases failed",
            path.display(),
            results.len()
        );
    }
    Ok(())
}
