//! `etscope fit FILE.pte --part NAME [--json]`: does the program fit the part — every pool
//! ExecuTorch's runtime needs with its exact size and the region a default link puts it in, the
//! program and the code that runs it in flash, each region's use against its size, the
//! estimated latency on the part (`cost --part`), and what-ifs priced the same way (inputs
//! passed as int8, etscope's best-fit planner, the placement advisor's). `--place auto|FILE`
//! reports the placed program instead: each pool and call's weights in the region the
//! placement chose, the estimate before and after, and with `-o` the placement file.

use std::path::Path;

use anyhow::{anyhow, Result};
use etscope_core::analysis::cost::{estimate, CostEstimate};
use etscope_core::analysis::fit::{self, Fit};
use etscope_core::analysis::place;
use etscope_core::part::Part;
use serde_json::{json, Value};

use super::cost::Machine;
use crate::load;
use crate::table::Table;

pub fn run(
    path: &Path,
    method: Option<&str>,
    out: Option<&Path>,
    place: Option<&str>,
    check: bool,
    machine: &Machine<'_>,
    as_json: bool,
) -> Result<()> {
    let (part, options) = super::cost::options(machine)?;
    let part = part.ok_or_else(|| anyhow!("fit needs --part (`etscope parts` lists them)"))?;
    let program = load::program(path)?;
    let index = super::pick_plan(&program, method, path)?;
    let est = estimate(&program, index, options).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let (code, cmsis) = fit::code_sizes(&program, index, part.core);
    let base =
        fit::fit(&program, index, &part, code).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let placement = place
        .map(|how| placement(&part, &base, &est, how))
        .transpose()?;
    let shown = match &placement {
        Some(p) => place::placed_fit(&part, &base, p, &program, index),
        None => base.clone(),
    };
    let shown_est = placement.as_ref().map_or(&est, |p| &p.estimate);
    let mut what_if: Vec<Value> = Vec::new();
    // the cycles of the quantize calls on the inputs (first) and of the dequantize calls on the
    // outputs (last): what passing them as int8 leaves to the application
    let entry: f64 = est
        .rows
        .iter()
        .take_while(|r| r.op.contains("quantize_per_tensor") && !r.op.contains("dequantize"))
        .filter_map(|r| r.cycles)
        .sum();
    let exit: f64 = est
        .rows
        .iter()
        .rev()
        .take_while(|r| r.op.contains("dequantize_per_tensor"))
        .filter_map(|r| r.cycles)
        .sum();
    if let Some(arenas) = fit::arenas_with_int8_inputs(&program, index) {
        let f = fit::refit(&part, &base, arenas);
        what_if.push(json!({
            "change": "inputs passed as int8 (ExecuTorch's QuantizeInputs: the application quantizes)",
            "ram_total": f.ram_total,
            "flash_total": f.flash_total,
            "latency_ms": (est.total_cycles() - entry) / (options.mhz * 1000.0),
            "fits": f.fits,
            "note": "with the part's default link; the arenas re-planned by ExecuTorch's greedy planner with each quantized input's int8 copy as the input (equal to the arena ExecuTorch plans after its own QuantizeInputs, tests/fixtures/quantize_io); the method allocator and the flash as the program's, though ExecuTorch's program has one call fewer (188 B less method allocator there) and adds constant methods for the input's scale and zero point (896 B more flash there). In the default flow, with a model exported with a contiguous multi-channel input that a convolution reads first, ExecuTorch's QuantizeInputs program declares the int8 input contiguous and its Cortex-M convolution refuses it (exported channels-last, it runs); the explicit-layout flow's runs (`lower --quantize-io`, core/tests/quantize_io.rs)",
        }));
    }
    if let Some(arenas) = fit::arenas_with_int8_io(&program, index, true) {
        let f = fit::refit(&part, &base, arenas);
        what_if.push(json!({
            "change": "inputs and outputs passed as int8 (ExecuTorch's QuantizeInputs and QuantizeOutputs: the application quantizes and dequantizes)",
            "ram_total": f.ram_total,
            "flash_total": f.flash_total,
            "latency_ms": (est.total_cycles() - entry - exit) / (options.mhz * 1000.0),
            "fits": f.fits,
            "note": "with the part's default link; the arenas re-planned by ExecuTorch's greedy planner with each quantized input's int8 copy as the input and each dequantized output's int8 codes as the output (`lower --quantize-io=both` writes the program; core/tests/quantize_io.rs checks it against ExecuTorch's own); ExecuTorch's program adds constant methods for each scale and zero point",
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
            "note": "with the part's default link; the same calls in the same order: the estimate does not change",
        }));
    }
    if placement.is_none() {
        let advised = place::advise(&part, &base, &est);
        let f = place::placed_fit(&part, &base, &advised, &program, index);
        let moved = advised.moved().count();
        // an advisor that moves nothing is no what-if (`--place auto` says why)
        if moved > 0 {
            what_if.push(json!({
            "change": format!("placement by the advisor (`--place auto`): {moved} blocks moved"),
            "ram_total": f.ram_total,
            "flash_total": f.flash_total,
            "latency_ms": advised.after_cycles / (options.mhz * 1000.0),
            "fits": f.fits,
            "note": place::note(&part, &advised),
        }));
        }
    }
    let mut doc = to_json(
        &part,
        &shown,
        shown_est.total_cycles(),
        shown_est.total_ms(),
        &what_if,
        &etscope_core::analysis::cost::memory_note::note(&part, &options),
    );
    if let Some(p) = &placement {
        doc["placement"] = placement_json(&part, p, options.mhz, place.unwrap_or_default());
        // the placed program's flash beside the program's: the external constants' entries
        doc["placement"]["program_bytes"] = json!(base.program);
        doc["placement"]["placed_program_bytes"] = json!(shown.program);
    }
    if let Some(dir) = out {
        let w = crate::firmware_files::write(
            dir,
            path,
            &program,
            index,
            &part,
            &shown,
            placement.as_ref().map(|p| (p, &est)),
        )?;
        doc["written"] = json!(w.written);
        if !w.removed.is_empty() {
            doc["removed"] = json!(w.removed);
        }
    }
    doc["flash"]["sources"] = json!(fit::LINKED_SOURCES);
    doc["flash"]["linked"] = json!(true);
    doc["flash"]["build"] = json!(cmsis.build);
    doc["flash"]["runtime_parts"] = json!(cmsis.runtime_parts);
    doc["flash"]["cmsis_nn_functions"] = json!(cmsis.cmsis_nn_functions);
    doc["flash"]["kernel_files"] = json!(cmsis.kernel_files);
    doc["flash"]["kernel_support_files"] = json!(cmsis.support_files);
    doc["flash"]["unknown_ops"] = json!(cmsis.unknown_ops);
    doc["flash"]["unknown_why"] = json!(cmsis.unknown_why);
    // a program lowered for another CMSIS-NN path fails on this part, however well it fits
    let would_not_run: Vec<Value> = est
        .would_not_run
        .iter()
        .map(|(id, why)| json!({"instruction_id": id, "why": why}))
        .collect();
    doc["runs"] = json!(would_not_run.is_empty());
    // calls without a model (a delegate's) are left out of the latency: a lower bound
    doc["unpriced"] = json!(shown_est.unpriced());
    doc["would_not_run"] = json!(would_not_run);
    doc["mhz"] = json!(options.mhz);
    if as_json {
        super::print_json(&doc)?;
        return gate(
            check,
            &shown,
            fit::not_run_note(&part, &est.would_not_run).as_deref(),
        );
    }
    let not_run = fit::not_run_note(&part, &est.would_not_run);
    print!(
        "{}",
        render(
            path,
            (&part, machine.part.unwrap_or(&part.name)),
            options.mhz,
            &shown,
            (
                shown_est.total_ms(),
                placement.is_some().then(|| est.total_ms()),
                shown_est.unpriced()
            ),
            &what_if,
            not_run.as_deref()
        )
    );
    println!(
        "part {}: {}",
        part.name,
        etscope_core::analysis::cost::memory_note::note(&part, &options)
    );
    if let Some(p) = &placement {
        print!("{}", render_placement(&part, p, options.mhz));
        if shown.program > base.program {
            println!(
                "the placed program (its .pte and .ptd) takes {} B of flash, {} B more than the program: each moved constant's entry in the .ptd and its tensor table in the .pte",
                shown.program,
                shown.program - base.program
            );
        }
    }
    if let Some(w) = doc["written"].as_array() {
        for p in w {
            println!("wrote {}", p.as_str().unwrap_or_default());
        }
    }
    if let Some(r) = doc["removed"].as_array() {
        for p in r {
            println!(
                "removed {} (an earlier placed program this placement does not make)",
                p.as_str().unwrap_or_default()
            );
        }
    }
    gate(check, &shown, not_run.as_deref())
}

/// `--check`: an error (exit 1) when the program does not fit the part or its core does not
/// run it, after the report is printed.
fn gate(check: bool, f: &Fit, not_run: Option<&str>) -> Result<()> {
    if !check {
        return Ok(());
    }
    if let Some(why) = not_run {
        return Err(super::profile_compare::GateFailed(why.to_string()).into());
    }
    if !f.fits {
        let over: Vec<String> = f
            .regions
            .iter()
            .filter(|r| r.used > r.size)
            .map(|r| format!("{} over by {} B", r.name, r.used - r.size))
            .collect();
        return Err(super::profile_compare::GateFailed(format!(
            "does not fit: {}",
            over.join(", ")
        ))
        .into());
    }
    Ok(())
}

fn placement_json(part: &Part, p: &place::Placement, mhz: f64, how: &str) -> Value {
    let ms = |c: f64| c / (mhz * 1000.0);
    json!({
        "how": if how == "auto" { "auto" } else { "file" },
        "file": (how != "auto").then_some(how),
        "blocks": p.blocks,
        "moved": p.moved().count(),
        "before_ms": ms(p.before_cycles),
        "after_ms": ms(p.after_cycles),
        "bound_ms": ms(p.bound_cycles),
        "optimal": p.after_cycles - p.bound_cycles < 0.5,
        "note": place::note(part, p),
    })
}

/// The placement `how` names: `auto` (the advisor's) or a placement file's path.
pub fn placement(
    part: &Part,
    base: &Fit,
    est: &CostEstimate,
    how: &str,
) -> Result<place::Placement> {
    if how == "auto" {
        return Ok(place::advise(part, base, est));
    }
    let text = std::fs::read_to_string(how).map_err(|e| anyhow!("{how}: {e}"))?;
    let choices = place::parse(&text, how)?;
    Ok(place::apply(part, base, est, &choices, how)?)
}

/// The board image's addresses for plan `index` of `program` placed as `how` says on the
/// emulated board's part.
pub fn board_placement(
    program: &etscope_core::formats::pte::Program,
    index: usize,
    how: &str,
) -> Result<etscope_core::board_image::BoardPlacement> {
    use etscope_core::analysis::cost::{CostOptions, MemoryCosts};
    use etscope_core::board_image::{board_addresses, BOARD_PART, FIRMWARE_REGIONS};
    let part = etscope_core::part::find(BOARD_PART)
        .ok_or_else(|| anyhow!("no built-in part {BOARD_PART}"))?;
    let options = CostOptions {
        core: part.core,
        mhz: part.mhz,
        memory: MemoryCosts::of_part(&part),
    };
    let est = estimate(program, index, options)?;
    let (code, _) = fit::code_sizes(program, index, part.core);
    let base = fit::fit(program, index, &part, code)?;
    let placed = placement(&part, &base, &est, how)?;
    board_addresses(&part, &placed, program, index, &FIRMWARE_REGIONS)
        .map_err(|e| anyhow!("{how}: {e}"))
}

fn render_placement(part: &Part, p: &place::Placement, mhz: f64) -> String {
    let ms = |c: f64| c / (mhz * 1000.0);
    let mut s = format!(
        "placement: {} blocks moved; estimate {:.3} ms with the default link, {:.3} ms placed{}
",
        p.moved().count(),
        ms(p.before_cycles),
        ms(p.after_cycles),
        if p.after_cycles - p.bound_cycles < 0.5 {
            " (no placement of these blocks does better)".to_string()
        } else {
            format!(
                " (no placement of these blocks goes under {:.3} ms)",
                ms(p.bound_cycles)
            )
        }
    );
    let mut t = Table::new(&[
        "block",
        ">bytes",
        "default",
        "placed",
        ">memory cycles default",
        ">placed",
    ]);
    for b in &p.blocks {
        t.row(vec![
            b.name.clone(),
            b.bytes.to_string(),
            b.default_region.clone(),
            if b.region == b.default_region {
                "—".into()
            } else {
                b.region.clone()
            },
            format!("{:.0}", b.default_memory_cycles),
            format!("{:.0}", b.memory_cycles),
        ]);
    }
    s.push_str(&t.render());
    s.push_str(&format!(
        "{}
",
        place::note(part, p)
    ));
    if p.moved().any(|b| b.is_weights()) {
        s.push_str("with -o DIR: the program with these weights in a .ptd (ExecuTorch's external constants) and the C++ that copies them into their regions\n");
    }
    s
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
        },
        "regions": f.regions,
        "what_if": what_if,
        "not_modelled": f.not_modelled,
    })
}

fn render(
    path: &Path,
    (part, part_arg): (&Part, &str),
    mhz: f64,
    f: &Fit,
    (ms, default_link_ms, unpriced): (f64, Option<f64>, usize),
    what_if: &[Value],
    not_run: Option<&str>,
) -> String {
    // a part from a file says so (a file may reuse a built-in part's name)
    let shown_part = if part_arg.eq_ignore_ascii_case(&part.name) {
        part.name.clone()
    } else {
        format!("{} (from {part_arg})", part.name)
    };
    let mut s = format!(
        "{} on {} ({} @ {} MHz): {}{}\n",
        path.display(),
        shown_part,
        part.core.name(),
        mhz,
        if f.fits { "fits" } else { "does NOT fit" },
        not_run.map_or(String::new(), |n| {
            format!("{} {n}", if f.fits { ", but" } else { ", and" })
        })
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
        "flash: program {} B + runtime {} B + kernels {} B + CMSIS-NN {} B = {} B{} ({})\n",
        f.program,
        f.code.runtime.unwrap_or(0),
        f.code.kernels.unwrap_or(0),
        f.code.cmsis_nn.unwrap_or(0),
        f.flash_total,
        if f.flash_complete {
            ""
        } else if f.not_modelled.iter().any(|n| n.contains(".ptd")) {
            " at least (the program's .ptd is not beside it)"
        } else {
            " at least (an operator's kernel is not measured)"
        },
        f.code_note()
    ));
    for n in &f.not_modelled {
        s.push_str(&format!("not counted: {n}\n"));
    }
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
    let cost_command = if mhz == part.mhz {
        format!("cost --part {part_arg}")
    } else {
        format!("cost --part {part_arg} --mhz {mhz}")
    };
    let at_least = if unpriced > 0 {
        format!("at least {ms:.3} ms ({unpriced} calls without a model are left out)")
    } else {
        format!("{ms:.3} ms")
    };
    s.push_str(&match default_link_ms {
        None => format!(
            "estimated latency: {at_least} (an estimate, `{cost_command}`)\n"
        ),
        Some(d) => format!(
            "estimated latency: {at_least} as placed (an estimate; {d:.3} ms with the default link, as `{cost_command}` gives)\n"
        ),
    });
    for w in what_if {
        s.push_str(&format!(
            "what if {}{}: RAM {} B, flash {} B, {:.3} ms{}\n",
            w["change"].as_str().unwrap_or(""),
            if default_link_ms.is_some() {
                " (with the default link, not the placement)"
            } else {
                ""
            },
            w["ram_total"],
            w["flash_total"],
            w["latency_ms"].as_f64().unwrap_or(f64::NAN),
            match w["fits"].as_bool() {
                Some(true) => ", fits",
                Some(false) => ", does NOT fit",
                None => "",
            }
        ));
    }
    s
}

/// `etscope fit`'s arguments.
#[derive(Debug, clap::Args)]
pub struct FitArgs {
    pub file: std::path::PathBuf,
    #[arg(long)]
    pub method: Option<String>,
    /// A part (`etscope parts`), or a part file (NAME.toml).
    #[arg(long)]
    pub part: String,
    /// The clock in MHz (default: the part's).
    #[arg(long)]
    pub mhz: Option<f64>,
    /// Write the pool sizes as a C header for ExecuTorch's Arm bare-metal runner
    /// (`etscope_pools.h`) and the part's regions as a linker-script fragment
    /// (`etscope_regions.ld`) into this folder; with --place also the placement
    /// (`placement.toml`) and the estimate per call before and after it (`placed_cost.csv`).
    #[arg(short = 'o', long = "out")]
    pub out: Option<std::path::PathBuf>,
    /// Place the pools and each call's weights in the part's regions: `auto` (the advisor:
    /// the placement that lowers the estimate most under the regions' sizes), or a
    /// placement file (`placement.toml`, as `-o` writes it).
    #[arg(long)]
    pub place: Option<String>,
    /// Exit 1 (after the report) when the program does not fit the part or the part's core
    /// does not run it: a CI gate.
    #[arg(long)]
    pub check: bool,
    #[arg(long)]
    pub json: bool,
}

/// Runs `etscope fit` with its arguments.
pub fn main(args: FitArgs) -> Result<()> {
    let FitArgs {
        file,
        method,
        part,
        mhz,
        out,
        place,
        check,
        json,
    } = args;
    run(
        &file,
        method.as_deref(),
        out.as_deref(),
        place.as_deref(),
        check,
        &super::cost::Machine {
            core: None,
            part: Some(&part),
            mhz,
            flash_wait_states: None,
        },
        json,
    )
}
