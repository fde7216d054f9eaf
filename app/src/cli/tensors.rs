//! `etscope tensors`: intermediate outputs captured in an ETDump + debug buffer.

use std::path::Path;

use anyhow::{Context, Result};
use etscope_core::formats::debug_buffer::captured_tensors;
use serde_json::json;

use crate::load;
use crate::table::Table;

pub fn run(
    etdump: &Path,
    buffer: &Path,
    pte: Option<&Path>,
    dump: Option<&Path>,
    as_json: bool,
) -> Result<()> {
    let d = load::etdump(etdump)?;
    let buf = load::bytes(buffer)?;
    let program = pte.map(load::program).transpose()?;
    if let (Some(program), Some(pte)) = (&program, pte) {
        load::ensure_etdump_fits(program, program.default_plan_index(), &d, etdump, pte)?;
    }
    let ops = program
        .as_ref()
        .map(|p| p.instruction_ops(p.default_plan_index()))
        .unwrap_or_default();
    let captured = captured_tensors(&d, &buf)
        .with_context(|| format!("{} with {}", etdump.display(), buffer.display()))?;
    let multi_run = captured
        .iter()
        .any(|c| c.run != captured.first().map_or(0, |f| f.run));
    if let Some(dir) = dump {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("{}: cannot create", dir.display()))?;
    }
    let mut rows = Vec::new();
    let mut output_index = 0usize;
    for c in &captured {
        let stats = c.tensor.stats().ok();
        let op = if c.is_program_output {
            "output".to_string()
        } else {
            ops.get(c.instruction_id.max(0) as usize)
                .cloned()
                .unwrap_or_default()
        };
        let mut file = if c.is_program_output {
            output_index += 1;
            format!("output_{}.npy", output_index - 1)
        } else if c.list_index > 0 {
            format!("instr_{}_{}.npy", c.instruction_id, c.list_index)
        } else {
            format!("instr_{}.npy", c.instruction_id)
        };
        if multi_run {
            file = format!("run{}_{file}", c.run);
        }
        if let Some(dir) = dump {
            let bytes = etscope_core::formats::npy::write_npy(&c.tensor)?;
            let p = dir.join(&file);
            std::fs::write(&p, bytes).with_context(|| format!("{}: cannot write", p.display()))?;
        }
        rows.push(json!({
            "run": c.run,
            "instruction_id": c.instruction_id,
            "list_index": c.list_index,
            "program_output": c.is_program_output,
            "op": op,
            "dtype": c.tensor.dtype.short_name(),
            "shape": c.tensor.shape,
            "stats": stats,
            "file": dump.map(|_| file),
        }));
    }
    if as_json {
        return super::print_json(&rows);
    }
    println!("{}: {} captured tensors", etdump.display(), rows.len());
    let mut t = Table::new(&[
        ">run", ">instr", "op", "dtype", "shape", ">min", ">max", ">mean", ">std",
    ]);
    for r in &rows {
        let s = &r["stats"];
        let num = |k: &str| s[k].as_f64().map(|x| format!("{x:.4}")).unwrap_or_default();
        t.row(vec![
            r["run"].to_string(),
            if r["program_output"] == true {
                "out".into()
            } else {
                r["instruction_id"].to_string()
            },
            r["op"].as_str().unwrap_or("").into(),
            r["dtype"].as_str().unwrap_or("").into(),
            r["shape"].to_string(),
            num("min"),
            num("max"),
            num("mean"),
            num("std"),
        ]);
    }
    print!("{}", t.render());
    if let Some(dir) = dump {
        println!("wrote {} .npy files to {}", rows.len(), dir.display());
    }
    Ok(())
}

/// `etscope tensors`'s arguments.
#[derive(Debug, clap::Args)]
pub struct TensorsArgs {
    #[arg(long)]
    pub etdump: std::path::PathBuf,
    #[arg(long)]
    pub debug_buffer: std::path::PathBuf,
    /// The program, to name each instruction's operator.
    #[arg(long)]
    pub pte: Option<std::path::PathBuf>,
    /// Write each tensor as `.npy` into this directory.
    #[arg(long)]
    pub dump: Option<std::path::PathBuf>,
    #[arg(long)]
    pub json: bool,
}

/// Runs `etscope tensors` with its arguments.
pub fn main(args: TensorsArgs) -> Result<()> {
    let TensorsArgs {
        etdump,
        debug_buffer,
        pte,
        dump,
        json,
    } = args;
    run(
        &etdump,
        &debug_buffer,
        pte.as_deref(),
        dump.as_deref(),
        json,
    )
}
