//! `etscope memory FILE.pte`: the memory plan per arena.

use std::path::Path;

use anyhow::{anyhow, Result};
use etscope_core::ir::from_pte::graph_from_plan;
use etscope_core::plan::{derive, Finding};
use serde_json::json;

use crate::load;
use crate::table::{bytes, Table};

pub fn run(
    path: &Path,
    method: Option<&str>,
    replan: bool,
    target: &str,
    as_json: bool,
) -> Result<()> {
    if etscope_core::cortex_m::Core::parse(target).is_none() {
        return Err(anyhow!(
            "unknown --core {target:?}: one of {} (every Cortex-M lays ExecuTorch's types out alike)",
            etscope_core::cortex_m::Core::list()
        ));
    }
    let program = load::program(path)?;
    let index = super::pick_plan(&program, method, path)?;
    let graph = graph_from_plan(&program, index)
        .ok_or_else(|| anyhow!("{}: no plan {index}", path.display()))?;
    let plan = derive(&graph);
    // etscope's best fit per arena (`plan` lists every planner), checked before it is shown
    let mut better: Vec<(
        &etscope_core::plan::Arena,
        etscope_core::plan::alternatives::AlgorithmPlan,
    )> = Vec::new();
    if replan {
        for alt in etscope_core::plan::alternatives::alternatives(&graph, &plan) {
            let (Some(arena), Some(bf)) = (
                plan.arenas.iter().find(|a| a.memory_id == alt.memory_id),
                alt.algorithm("best_fit"),
            ) else {
                continue;
            };
            let findings = etscope_core::plan::alternatives::check(arena, bf);
            if !findings.is_empty() {
                return Err(anyhow!(
                    "{}: the re-planned placement fails its check: {:?}",
                    path.display(),
                    findings
                ));
            }
            better.push((arena, bf.clone()));
        }
    }
    let npu = etscope_core::formats::ethos_u::delegates(&program, index);
    let budget = etscope_core::plan::budget::ram_budget(&program, index, &plan);
    let mut listed: Vec<&etscope_core::plan::Arena> = plan.arenas.iter().collect();
    listed.sort_by_key(|a| (a.tensors.is_empty(), a.memory_id));
    listed.truncate(super::MAX_LISTED_ARENAS);
    listed.sort_by_key(|a| a.memory_id);
    if as_json {
        return super::print_json(&json!({
            "ethos_u": npu.iter().map(|(i, v)| match v {
                Ok(v) => json!({"delegate": i, "stream": v}),
                Err(e) => json!({"delegate": i, "error": e.to_string()}),
            }).collect::<Vec<_>>(),
            "method": graph.method,
            "instruction_count": plan.instruction_count,
            "arena_count": plan.arenas.len(),
            // arenas holding tensors first; at most MAX_LISTED_ARENAS in all
            "arenas": listed.iter().map(|a| json!({
                "memory_id": a.memory_id,
                "size": a.size,
                "peak": a.peak,
                "lower_bound": a.lower_bound,
                "waste": a.waste(),
                "tensors": a.tensors,
            })).collect::<Vec<_>>(),
            "findings": plan.findings,
            "target": target,
            "ram_budget": budget,
            "best_fit": replan.then(|| better.iter().map(|(a, bf)| json!({
                "memory_id": a.memory_id,
                "size": bf.peak,
                "executorch_peak": a.peak,
                "lower_bound": a.lower_bound,
                "saved": a.peak.saturating_sub(bf.peak),
                "order": bf.detail,
                "offsets": bf.tensors.iter().map(|t| (t.value, t.offset)).collect::<Vec<_>>(),
            })).collect::<Vec<_>>()),
        }));
    }
    println!(
        "{}: method {}, {} instructions",
        path.display(),
        graph.method,
        plan.instruction_count
    );
    if plan.arenas.len() > listed.len() {
        println!(
            "{} arenas declared; the {} that hold tensors or come first are shown",
            plan.arenas.len(),
            listed.len()
        );
    }
    for a in &listed {
        println!(
            "\narena {}: declared {} ({} B), peak {} B, lower bound {} B, waste {} B ({:.1}%), {} tensors",
            a.memory_id,
            bytes(a.size),
            a.size,
            a.peak,
            a.lower_bound,
            a.waste(),
            if a.size > 0 { 100.0 * a.waste() as f64 / a.size as f64 } else { 0.0 },
            a.tensors.len()
        );
        let mut t = Table::new(&[
            ">value", ">offset", ">size", ">first", ">last", "role", "tensor",
        ]);
        for p in &a.tensors {
            t.row(vec![
                p.value.to_string(),
                p.offset.to_string(),
                p.size.to_string(),
                p.first.to_string(),
                p.last.to_string(),
                format!("{:?}", p.role).to_lowercase(),
                format!(
                    "{}{:?}",
                    p.dtype.map(|d| d.short_name()).unwrap_or_default(),
                    p.shape
                ),
            ]);
        }
        print!("{}", t.render());
    }
    for (i, v) in &npu {
        match v {
            Ok(v) => println!(
                "\nEthos-U delegate {i}: {} (the application provides the scratch buffers in SRAM)",
                v.summary()
            ),
            Err(e) => println!("\nEthos-U delegate {i}: payload not decoded: {e}"),
        }
    }
    for a in &listed {
        let carried = !program.mutable_data_segments.is_empty();
        for t in a
            .tensors
            .iter()
            .filter(|t| !carried && t.role == etscope_core::plan::TensorRole::State)
        {
            println!(
                "\nvalue {} is state kept between calls (read before it is written back): the program does not carry its initial value, so a method starts it from whatever its arena holds (zero on the host); clear it before the first call",
                t.value
            );
        }
    }
    if let Some(b) = &budget {
        println!(
            "\nRAM budget on a 32-bit Arm core ({target}, ExecuTorch 1.5.1's runtime): {} in all",
            bytes(b.total_ram)
        );
        let mut t = Table::new(&["part", ">bytes", "what"]);
        t.row(vec![
            "planned arenas".into(),
            b.planned.to_string(),
            format!(
                "declared by the program ({} of it CMSIS-NN scratch at its peak)",
                b.planned_scratch
            ),
        ]);
        t.row(vec!["method allocator".into(), b.method_allocator.to_string(), format!("Method::load: values, tensor metadata, argument lists ({} without a temp allocator)", b.method.method_allocator_without_temp)]);
        t.row(vec![
            "temp allocator".into(),
            b.temp_allocator.to_string(),
            "keeps the kernel lookups out of the method allocator".into(),
        ]);
        t.row(vec![
            "scratch".into(),
            b.scratch.to_string(),
            "what delegates ask the application for beside the arenas".into(),
        ]);
        t.row(vec![
            "flash".into(),
            b.flash.to_string(),
            "the program, constants included, read in place".into(),
        ]);
        print!("{}", t.render());
        for n in &b.method.not_modelled {
            println!("  not counted: {n}");
        }
    }
    // what "findings" means here: defects of the plan as written, not room to save
    if plan.findings.is_empty() {
        println!(
            "\nplan defects (live tensors sharing a byte, tensors outside their arena, unused tensors): none"
        );
    } else {
        println!("\nplan defects:");
        for f in &plan.findings {
            let msg = match f {
                Finding::Overlap { message, .. }
                | Finding::OutOfArena { message, .. }
                | Finding::UnknownArena { message, .. }
                | Finding::Unused { message, .. } => message,
            };
            println!("  {msg}");
        }
    }
    let waste: u64 = plan.arenas.iter().map(|a| a.waste()).sum();
    if !replan && waste > 0 {
        println!(
            "room: the arenas declare {} over their lower bound; `memory --replan` places them anew with etscope's best fit, `etscope plan` compares every planner",
            bytes(waste)
        );
    }
    if replan {
        println!("\nbest fit (etscope's planner on the same lifetimes, checked; `etscope plan` lists every planner):");
        let mut t = Table::new(&[
            ">arena",
            ">ExecuTorch",
            ">best fit",
            ">lower bound",
            ">saved",
            "order",
        ]);
        for (a, bf) in &better {
            t.row(vec![
                a.memory_id.to_string(),
                bytes(a.peak),
                bytes(bf.peak),
                bytes(a.lower_bound),
                bytes(a.peak.saturating_sub(bf.peak)),
                bf.detail.clone(),
            ]);
        }
        print!("{}", t.render());
    }
    Ok(())
}

/// `etscope memory`'s arguments.
#[derive(Debug, clap::Args)]
pub struct MemoryArgs {
    pub file: std::path::PathBuf,
    #[arg(long)]
    pub method: Option<String>,
    /// Also place every tensor anew with etscope's best-fit planner on the same lifetimes
    /// (checked: no two live tensors share a byte) and show what each arena then needs.
    #[arg(long)]
    pub replan: bool,
    /// The core whose RAM budget is shown (every Cortex-M is a 32-bit Arm target: the same
    /// budget). `--target` is the same.
    #[arg(long = "core", visible_alias = "target", default_value = "m55")]
    pub target: String,
    #[arg(long)]
    pub json: bool,
}

/// Runs `etscope memory` with its arguments.
pub fn main(args: MemoryArgs) -> Result<()> {
    let MemoryArgs {
        file,
        method,
        replan,
        target,
        json,
    } = args;
    run(&file, method.as_deref(), replan, &target, json)
}
