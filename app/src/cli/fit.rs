//! `etscope fit FILE.pte --part NAME [--json]`: does the program fit the part — every pool
//! ExecuTorch's runtime needs with its exact size and the region a default link puts it in, the
//! program and the code that runs it in flash, each region's use against its size, the
//! estimated latency on the part (`cost --part`), and what-ifs priced the same way (inputs
//! passed as int8, etscope's best-fit planner).

use std::path::Path;

use anyhow::{anyhow, Result};
use etscope_core::analysis::cost::estimate;
use etscope_core::analysis::fit::{self, Fit};
use etscope_core::part::Part;
use serde_json::{json, Value};

use super::cost::{memory_note, Machine};
use crate::load;
use crate::table::Table;

pub fn run(
    path: &Path,
    method: Option<&str>,
    out: Option<&Path>,
    machine: &Machine<'_>,
    as_json: bool,
) -> Result<()> {
    let (part, options) = super::cost::options(machine)?;
    let part = part.ok_or_else(|| anyhow!("fit needs --part (`etscope parts` lists them)"))?;
    let program = load::program(path)?;
    let (index, _) = super::pick_plan(&program, method, path)?;
    let est = estimate(&program, index, options).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let (code, cmsis) = fit::code_sizes(&program, index, part.core);
    let base =
        fit::fit(&program, index, &part, code).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let mut what_if: Vec<Value> = Vec::new();
    if let Some(arenas) = fit::arenas_with_int8_inputs(&program, index) {
        let f = fit::refit(&part, &base, arenas);
        // the quantize calls on the inputs are gone
        let saved: f64 = est
            .rows
            .iter()
            .take_while(|r| r.op.contains("quantize_per_tensor") && !r.op.contains("dequantize"))
            .filter_map(|r| r.cycles)
            .sum();
        what_if.push(json!({
            "change": "inputs passed as int8 (ExecuTorch's QuantizeInputs: the application quantizes)",
            "ram_total": f.ram_total,
            "flash_total": f.flash_total,
            "latency_ms": (est.total_cycles() - saved) / (options.mhz * 1000.0),
            "fits": f.fits,
            "note": "the arenas re-planned by ExecuTorch's greedy planner with each quantized input's int8 copy as the input (equal to the arena ExecuTorch plans after its own QuantizeInputs, tests/fixtures/quantize_io); the method allocator and the flash as the program's, though ExecuTorch's program has one call fewer (188 B less method allocator there) and adds constant methods for the input's scale and zero point (896 B more flash there). In the default flow ExecuTorch's QuantizeInputs program declares the int8 input contiguous and its Cortex-M convolution refuses it; the explicit-layout flow's runs (`lower --quantize-io`, core/tests/quantize_io.rs)",
        }));
    }
    if let Some(arenas) = best_fit_arenas(&program, index) {
        let f = fit::refit(&part, &base, arenas);
        what_if.push(json!({
            "change": "etscope's best-fit planner (`memory --replan`, `plan --write`): the same calls, each arena placed anew",
            "ram_total": f.ram_total,
            "flash_total": f.flash_total,
            "latency_ms": est.total_ms(),
            "fits": f.fits,
            "note": "the same calls in the same order: the estimate does not change",
        }));
    }
    let mut doc = to_json(
        &part,
        &base,
        est.total_cycles(),
        est.total_ms(),
        &what_if,
        &memory_note(&part, &options),
    );
    if let Some(dir) = out {
        doc["written"] = json!(write_files(dir, path, &program, index, &part, &base)?);
    }
    doc["flash"]["cmsis_nn_functions"] = json!(cmsis.cmsis_nn_functions);
    doc["flash"]["kernel_files"] = json!(cmsis.kernel_files);
    doc["flash"]["kernel_support_files"] = json!(cmsis.support_files);
    doc["flash"]["unknown_ops"] = json!(cmsis.unknown_ops);
    // a program lowered for another CMSIS-NN path fails on this part, however well it fits
    let would_not_run: Vec<Value> = est
        .would_not_run
        .iter()
        .map(|(id, why)| json!({"instruction_id": id, "why": why}))
        .collect();
    doc["runs"] = json!(would_not_run.is_empty());
    doc["would_not_run"] = json!(would_not_run);
    doc["mhz"] = json!(options.mhz);
    if as_json {
        return super::print_json(&doc);
    }
    print!(
        "{}",
        render(path, &part, options.mhz, &base, est.total_ms(), &what_if)
    );
    println!("part {}: {}", part.name, memory_note(&part, &options));
    if let Some(note) = fit::not_run_note(&part, &est.would_not_run) {
        println!("{note}");
    }
    if let Some(w) = doc["written"].as_array() {
        for p in w {
            println!("wrote {}", p.as_str().unwrap_or_default());
        }
    }
    Ok(())
}

/// `etscope_pools.h` and `etscope_regions.ld` in `dir` (made if missing); the paths written.
fn write_files(
    dir: &Path,
    path: &Path,
    program: &etscope_core::formats::pte::Program,
    index: usize,
    part: &Part,
    f: &Fit,
) -> Result<Vec<String>> {
    use etscope_core::analysis::fit_files;
    let inputs = program
        .plans
        .get(index)
        .ok_or_else(|| anyhow!("{}: no plan {index}", path.display()))?
        .inputs
        .len();
    let pools = fit_files::runner_pools(
        &f.arenas,
        f.budget.method_allocator,
        f.budget.temp_allocator,
        inputs as u64,
    );
    std::fs::create_dir_all(dir).map_err(|e| anyhow!("{}: {e}", dir.display()))?;
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().to_string());
    let mut written = Vec::new();
    for (file, text) in [
        ("etscope_pools.h", fit_files::header(&name, part, f, pools)),
        (
            "etscope_regions.ld",
            fit_files::linker_fragment(part, pools),
        ),
    ] {
        let p = dir.join(file);
        std::fs::write(&p, text).map_err(|e| anyhow!("{}: cannot write: {e}", p.display()))?;
        written.push(p.display().to_string());
    }
    Ok(written)
}

/// Each arena's size under etscope's best-fit planner, checked (`None` when none is smaller).
fn best_fit_arenas(
    program: &etscope_core::formats::pte::Program,
    index: usize,
) -> Option<Vec<u64>> {
    use etscope_core::plan::{alternatives, derive};
    let graph = etscope_core::ir::from_pte::graph_from_plan(program, index)?;
    let plan = derive(&graph);
    let mut sizes: Vec<u64> = graph.arenas.clone();
    let mut smaller = false;
    for alt in alternatives::alternatives(&graph, &plan) {
        let arena = plan.arenas.iter().find(|a| a.memory_id == alt.memory_id)?;
        let bf = alt.algorithm("best_fit")?;
        if !alternatives::check(arena, bf).is_empty() {
            return None;
        }
        let slot = sizes.get_mut(usize::try_from(alt.memory_id).ok()?.checked_sub(1)?)?;
        if bf.peak < *slot {
            *slot = bf.peak;
            smaller = true;
        }
    }
    smaller.then_some(sizes)
}

fn to_json(part: &Part, f: &Fit, cycles: f64, ms: f64, what_if: &[Value], note: &str) -> Value {
    json!({
        "part": super::parts::to_json(part),
        "fits": f.fits,
        "latency_ms": ms,
        "total_cycles": cycles,
        "memory_note": note,
        "ram": {"total": f.ram_total, "pools": f.pools},
        "flash": {
            "total": f.flash_total,
            "complete": f.flash_complete,
            "program": f.program,
            "runtime": f.code.runtime,
            "kernels": f.code.kernels,
            "cmsis_nn": f.code.cmsis_nn,
            "sources": fit::CODE_SOURCES,
        },
        "regions": f.regions,
        "what_if": what_if,
        "not_modelled": f.not_modelled,
    })
}

fn render(path: &Path, part: &Part, mhz: f64, f: &Fit, ms: f64, what_if: &[Value]) -> String {
    let mut s = format!(
        "{} on {} ({} @ {} MHz): {}\n",
        path.display(),
        part.name,
        part.core.name(),
        mhz,
        if f.fits { "fits" } else { "does NOT fit" }
    );
    let mut t = Table::new(&["pool", ">bytes", "region"]);
    for p in &f.pools {
        t.row(vec![p.name.clone(), p.bytes.to_string(), p.region.clone()]);
    }
    t.row(vec![
        "RAM in all".into(),
        f.ram_total.to_string(),
        String::new(),
    ]);
    s.push_str(&t.render());
    s.push_str(&format!(
        "flash: program {} B + runtime {} B + kernels {} B + CMSIS-NN {} B = {} B{} (object sizes measured per build, not a linked image; the C library not counted)\n",
        f.program,
        f.code.runtime.unwrap_or(0),
        f.code.kernels.unwrap_or(0),
        f.code.cmsis_nn.unwrap_or(0),
        f.flash_total,
        if f.flash_complete {
            ""
        } else {
            " at least (an operator's kernel is not measured)"
        }
    ));
    let mut r = Table::new(&["region", ">used", ">size", ""]);
    for u in f.regions.iter().filter(|u| u.used > 0) {
        r.row(vec![
            u.name.clone(),
            u.used.to_string(),
            u.size.to_string(),
            if u.used > u.size {
                "OVER".into()
            } else {
                String::new()
            },
        ]);
    }
    s.push_str(&r.render());
    s.push_str(&format!(
        "estimated latency: {ms:.3} ms (an estimate, `cost --part {}`)\n",
        part.name
    ));
    for w in what_if {
        s.push_str(&format!(
            "what if {}: RAM {} B, flash {} B, {:.3} ms\n",
            w["change"].as_str().unwrap_or(""),
            w["ram_total"],
            w["flash_total"],
            w["latency_ms"].as_f64().unwrap_or(f64::NAN)
        ));
    }
    s
}
