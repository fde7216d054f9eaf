//! `etscope plan FILE.pte`: every planner of the program's memory, side by side per arena,
//! each checked; `-o` writes the program re-planned with the chosen one.

use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use etscope_core::ir::from_pte::graph_from_plan;
use etscope_core::plan::alternatives::{
    alternatives, check_in, write_program, AlgorithmPlan, ArenaAlternatives, ALGORITHMS,
};
use etscope_core::plan::derive;
use serde_json::json;

use crate::load;
use crate::table::{bytes, Table};

/// The chosen plan of an arena: `best` (the smallest) or one by name, falling back to
/// ExecuTorch's own where the named one does not apply (no in-place pair, no proven optimum).
/// A reordered plan holds for one chain order: when it is the best of any arena, every arena
/// takes its reordered plan.
fn chosen<'a>(
    all: &'a [ArenaAlternatives],
    a: &'a ArenaAlternatives,
    algorithm: &str,
) -> Option<&'a AlgorithmPlan> {
    let reordered = algorithm == "reorder"
        || (algorithm == "best"
            && all
                .iter()
                .any(|x| x.best().is_some_and(|b| b.order.is_some())));
    if reordered {
        a.algorithm("reorder")
    } else if algorithm == "best" {
        a.algorithms
            .iter()
            .filter(|p| p.order.is_none())
            .min_by_key(|p| p.peak)
    } else {
        a.algorithm(algorithm).or_else(|| a.algorithm("executorch"))
    }
}

pub fn run(
    path: &Path,
    method: Option<&str>,
    algorithm: &str,
    out: Option<&Path>,
    as_json: bool,
) -> Result<()> {
    if algorithm != "best" && !ALGORITHMS.contains(&algorithm) {
        bail!(
            "unknown --algorithm {algorithm:?}: one of best, {}",
            ALGORITHMS.join(", ")
        );
    }
    let program = load::program(path)?;
    let index = super::pick_plan(&program, method, path)?;
    let graph = graph_from_plan(&program, index)
        .ok_or_else(|| anyhow!("{}: no plan {index}", path.display()))?;
    let plan = derive(&graph);
    let arenas = alternatives(&graph, &plan);
    for a in &arenas {
        for alg in &a.algorithms {
            let findings = check_in(&plan, a.memory_id, alg);
            if !findings.is_empty() {
                bail!(
                    "{}: arena {}: the {} plan fails its check: {findings:?}",
                    path.display(),
                    a.memory_id,
                    alg.name
                );
            }
        }
    }
    if let Some(out) = out {
        write(path, out, index, &arenas, algorithm)?;
    }
    if as_json {
        return super::print_json(&json!({
            "method": graph.method,
            "instruction_count": plan.instruction_count,
            "arenas": arenas.iter().map(|a| json!({
                "memory_id": a.memory_id,
                "declared": a.declared,
                "executorch_peak": a.executorch_peak,
                "executorch_reproduced": a.executorch_reproduced,
                "lower_bound": a.lower_bound,
                "lower_bound_in_place": a.lower_bound_in_place,
                "best": a.best().map(|b| b.name),
                "algorithms": a.algorithms,
            })).collect::<Vec<_>>(),
        }));
    }
    println!(
        "{}: method {}, {} instructions",
        path.display(),
        graph.method,
        plan.instruction_count
    );
    for a in &arenas {
        println!(
            "\narena {}: declared {} ({} B); ExecuTorch's plan reaches {} B{}",
            a.memory_id,
            bytes(a.declared),
            a.declared,
            a.executorch_peak,
            if a.executorch_reproduced {
                ", every offset reproduced by etscope's ExecuTorch 1.5.1 planner"
            } else {
                "; etscope's ExecuTorch 1.5.1 planner places it otherwise (another planner or version wrote this file)"
            }
        );
        println!(
            "lower bound {} B (most bytes live at once); with in-place sharing {} B",
            a.lower_bound, a.lower_bound_in_place
        );
        let mut t = Table::new(&[">", "algorithm", ">peak", ">saved", "how"]);
        let best = a.best().map(|b| b.name);
        for alg in &a.algorithms {
            t.row(vec![
                if Some(alg.name) == best { "best" } else { "" }.into(),
                alg.name.into(),
                bytes(alg.peak),
                bytes(a.executorch_peak.saturating_sub(alg.peak)),
                alg.detail.clone(),
            ]);
        }
        print!("{}", t.render());
    }
    if let Some(out) = out {
        println!("\nwrote {} (re-planned: {algorithm})", out.display());
    }
    Ok(())
}

/// Writes the re-planned program and reads it back: every tensor where the plan put it, every
/// arena declared at that plan's peak, nothing live at once sharing a byte.
fn write(
    path: &Path,
    out: &Path,
    index: usize,
    arenas: &[ArenaAlternatives],
    algorithm: &str,
) -> Result<()> {
    let data = load::bytes(path)?;
    if data.get(4..8) != Some(b"ET12".as_slice()) {
        bail!(
            "{}: -o writes a program (.pte) re-planned; this file is not one (a BundledProgram holds its program inside: export that program, then plan it)",
            path.display()
        );
    }
    let picks: Vec<(u32, &AlgorithmPlan)> = arenas
        .iter()
        .filter_map(|a| chosen(arenas, a, algorithm).map(|c| (a.memory_id, c)))
        .collect();
    let written =
        write_program(&data, index, &picks).with_context(|| path.display().to_string())?;
    let reread =
        etscope_core::formats::pte::Program::parse(written.clone()).with_context(|| {
            format!(
                "{}: the re-planned program does not read back",
                out.display()
            )
        })?;
    let graph = graph_from_plan(&reread, index)
        .ok_or_else(|| anyhow!("{}: no plan {index} after writing", out.display()))?;
    let replanned = derive(&graph);
    for (memory_id, alg) in &picks {
        let arena = replanned
            .arenas
            .iter()
            .find(|a| a.memory_id == *memory_id)
            .ok_or_else(|| anyhow!("{}: arena {memory_id} lost", out.display()))?;
        if arena.size != alg.peak {
            bail!(
                "{}: arena {memory_id} reads back as {} B, not {} B",
                out.display(),
                arena.size,
                alg.peak
            );
        }
        for t in &alg.tensors {
            let got = graph
                .values
                .get(t.value)
                .and_then(|v| v.placement)
                .map(|p| p.offset);
            if got != Some(t.offset) {
                bail!(
                    "{}: value {} reads back at {got:?}, not {}",
                    out.display(),
                    t.value,
                    t.offset
                );
            }
        }
    }
    let bad: Vec<_> = replanned
        .findings
        .iter()
        .filter(|f| !matches!(f, etscope_core::plan::Finding::Overlap { a, b, .. } if picks.iter().any(|(_, alg)| alg.shares.iter().any(|s| *s == (*a, *b) || *s == (*b, *a)))))
        .collect();
    if !bad.is_empty() {
        bail!(
            "{}: the re-planned program has findings: {bad:?}",
            out.display()
        );
    }
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
    }
    std::fs::write(out, &written).with_context(|| out.display().to_string())
}

/// `etscope plan`'s arguments.
#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    pub file: std::path::PathBuf,
    #[arg(long)]
    pub method: Option<String>,
    /// `best` (the smallest valid plan per arena), or executorch, best_fit, in_place, exact,
    /// exact_in_place, reorder (a memory-aware chain order; written into the program).
    #[arg(long, default_value = "best")]
    pub algorithm: String,
    #[arg(long)]
    pub json: bool,
    /// Write the program re-planned with the chosen algorithm (new offsets, arenas declared
    /// at the plan's peak; everything else unchanged).
    #[arg(short = 'o', long = "out")]
    pub out: Option<std::path::PathBuf>,
}

/// Runs `etscope plan` with its arguments.
pub fn main(args: PlanArgs) -> Result<()> {
    let PlanArgs {
        file,
        method,
        algorithm,
        json,
        out,
    } = args;
    run(&file, method.as_deref(), &algorithm, out.as_deref(), json)
}
