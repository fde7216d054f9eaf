//! `etscope cost FILE.pte --core C [--mhz N] [--flash-wait-states N]` or `--part NAME`: every
//! call's cycles on a Cortex-M core without a board (an estimate: core's `analysis::cost`),
//! totals at the clock. A part gives the core, the clock and the wait states of the region its
//! default link reads the weights from (where a source states them).

use std::path::Path;

use anyhow::{anyhow, Result};
use etscope_core::analysis::cost::{estimate, Core, CostEstimate, CostOptions, MemoryCosts};
use etscope_core::part::Part;
use serde_json::json;

use crate::load;
use crate::table::Table;

/// The `--core` name as a core, or an error listing the choices.
pub fn parse_core(name: &str) -> Result<Core> {
    etscope_core::analysis::cost::priced_core(name).map_err(|e| anyhow!("core: {e}"))
}

/// What `cost` and `fit` were asked to price on: a core, or a part.
#[derive(Debug, Default, Clone)]
pub struct Machine<'a> {
    pub core: Option<&'a str>,
    pub part: Option<&'a str>,
    pub mhz: Option<f64>,
    pub flash_wait_states: Option<u32>,
}

/// The part asked for, if any, and the options of the estimate: `--core` (default m55), or the
/// part's core (a `--core` that contradicts it is refused), `--mhz` or the part's clock, and
/// `--flash-wait-states` or the wait states of the part's constants region.
pub fn options(m: &Machine<'_>) -> Result<(Option<Part>, CostOptions)> {
    let part = m.part.map(crate::part_spec::resolve).transpose()?;
    let named = m.core.map(parse_core).transpose()?;
    let core = match (&part, named) {
        (Some(p), Some(c)) if c != p.core => {
            return Err(anyhow!(
                "--core {} contradicts --part {}, whose core is the {}",
                m.core.unwrap_or_default(),
                p.name,
                p.core.name()
            ))
        }
        // the cost model must have the part's core's timings
        (Some(p), _) => parse_core(p.core.key()).map_err(|e| {
            anyhow!(
                "--part {}: part {:?}: {e}",
                m.part.unwrap_or_default(),
                p.name
            )
        })?,
        (None, Some(c)) => c,
        (None, None) => Core::M55,
    };
    let mhz = m
        .mhz
        .or(part.as_ref().map(|p| p.mhz))
        .unwrap_or_else(|| core.typical_mhz());
    let mut memory = part.as_ref().map(MemoryCosts::of_part).unwrap_or_default();
    if let Some(w) = m.flash_wait_states {
        // without a part, the weights are read from flash lines of 16 bytes
        if part.is_none() {
            memory.weights = etscope_core::analysis::cost::RegionCost::FREE;
        }
        memory.weights.wait_states = w;
        // code read from the same flash waits as long
        if part
            .as_ref()
            .is_some_and(|p| p.link.code == p.link.constants)
        {
            memory.code.wait_states = w;
        }
    }
    Ok((part, CostOptions { core, mhz, memory }))
}

pub fn run(path: &Path, method: Option<&str>, machine: &Machine<'_>, as_json: bool) -> Result<()> {
    let (part, options) = options(machine)?;
    let program = load::program(path)?;
    let index = super::pick_plan(&program, method, path)?;
    let est = estimate(&program, index, options).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    if as_json {
        let mut doc = to_json(&est);
        if let (Some(p), Some(obj)) = (&part, doc.as_object_mut()) {
            obj.insert("part".into(), super::parts::to_json(p));
            obj.insert(
                "memory_note".into(),
                json!(etscope_core::analysis::cost::memory_note::note(p, &options)),
            );
        }
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        if let Some(p) = &part {
            println!(
                "part {}: {}",
                p.name,
                etscope_core::analysis::cost::memory_note::note(p, &options)
            );
        }
        print!("{}", render(&est, path));
        if part.is_none() {
            println!(
                "memory: {}",
                if options.memory.weights.wait_states > 0 {
                    "the weights' reads wait as asked (--flash-wait-states); activations and code at the core's own timing (zero-wait memory): `--part NAME` charges a part's regions"
                } else {
                    "every access at the core's own timing (zero-wait memory): `--part NAME` charges a part's wait states and caches (`etscope parts`)"
                }
            );
        }
        // a simulator's clock is an assumption of the part's, said as `parts` says it
        if let Some(note) = part
            .as_ref()
            .filter(|p| p.mhz == options.mhz)
            .and_then(|p| p.mhz_note.as_ref())
        {
            println!("clock: {note}");
        }
    }
    Ok(())
}

/// The `--json` document (docs/cli-json.md).
pub fn to_json(est: &CostEstimate) -> serde_json::Value {
    let o = &est.options;
    json!({
        "core": o.core.key(),
        "mhz": o.mhz,
        "flash_wait_states": o.memory.weights.wait_states,
        "memory": o.memory,
        "what": etscope_core::analysis::cost::ESTIMATE_WHAT,
        "total_cycles": est.total_cycles(),
        "total_ms": est.total_ms(),
        "unpriced": est.unpriced(),
        "would_not_run": est.would_not_run.iter().map(|(id, why)| json!({"instruction_id": id, "why": why})).collect::<Vec<_>>(),
        "rows": est.rows.iter().map(|r| json!({
            "instruction_id": r.instruction_id,
            "op": r.op,
            "path": r.path,
            "macs": r.macs,
            "cycles": r.cycles,
            "ms": r.cycles.map(|c| c / (o.mhz * 1000.0)),
            "terms": r.terms.iter().map(|t| json!({"name": t.name, "cycles": t.cycles})).collect::<Vec<_>>(),
            "note": r.note,
        })).collect::<Vec<_>>(),
    })
}

fn render(est: &CostEstimate, path: &Path) -> String {
    let o = &est.options;
    let total = est.total_cycles();
    let mut s = format!(
        "{}: estimated on {} @ {} MHz{} — an estimate from CMSIS-NN's compiled loops and the core's instruction timings, not a measurement\n",
        path.display(),
        o.core.name(),
        o.mhz,
        if o.memory.weights.wait_states > 0 {
            format!(
                ", {} wait states on weight reads",
                o.memory.weights.wait_states
            )
        } else {
            String::new()
        }
    );
    for (id, why) in &est.would_not_run {
        s.push_str(&format!(
            "warning: instruction {id}: the {} would not run this call as lowered: {why}\n",
            o.core.name()
        ));
    }
    let mut t = Table::new(&[">#", "op", "path", ">MACs", ">cycles", ">ms", ">share"]);
    for r in &est.rows {
        t.row(vec![
            r.instruction_id.to_string(),
            r.op.trim_start_matches("cortex_m::").to_string(),
            if r.path.is_empty() {
                r.note.clone().unwrap_or_default()
            } else {
                r.path.clone()
            },
            if r.macs > 0 {
                r.macs.to_string()
            } else {
                String::new()
            },
            r.cycles
                .map(|c| format!("{c:.0}"))
                .unwrap_or_else(|| "—".into()),
            r.cycles
                .map(|c| format!("{:.3}", c / (o.mhz * 1000.0)))
                .unwrap_or_default(),
            r.cycles
                .filter(|_| total > 0.0)
                .map(|c| format!("{:.1}%", 100.0 * c / total))
                .unwrap_or_default(),
        ]);
    }
    s.push_str(&t.render());
    s.push_str(&format!(
        "total: {:.0} cycles, {:.2} ms at {} MHz{}\n",
        total,
        est.total_ms(),
        o.mhz,
        if est.unpriced() > 0 {
            format!(
                " — {} calls without a model are left out, so this is a lower bound",
                est.unpriced()
            )
        } else {
            String::new()
        }
    ));
    if !est.would_not_run.is_empty() {
        s.push_str(&format!(
            "this core does not run {} calls as the program was lowered (above): the total prices a run that fails or computes wrongly here\n",
            est.would_not_run.len()
        ));
    }
    // float layers left in an int8 Cortex-M program: usually what the quantizer left out
    let float_layers: Vec<&etscope_core::analysis::cost::CostRow> = est
        .rows
        .iter()
        .filter(|r| r.path.starts_with("portable convolution/matmul"))
        .collect();
    let cmsis = est.rows.iter().any(|r| r.op.starts_with("cortex_m::"));
    let float_cycles: f64 = float_layers.iter().filter_map(|r| r.cycles).sum();
    if cmsis && !float_layers.is_empty() && total > 0.0 {
        s.push_str(&format!(
            "{} convolution or matmul calls run in float on portable kernels (instructions {}): {:.0} % of the cycles; the quantizer left them out (a Cortex-M lowering quantizes only what its quantizer annotated)\n",
            float_layers.len(),
            float_layers
                .iter()
                .map(|r| r.instruction_id.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            100.0 * float_cycles / total
        ));
    }
    s
}

/// `etscope cost`'s arguments.
#[derive(Debug, clap::Args)]
pub struct CostArgs {
    pub file: std::path::PathBuf,
    #[arg(long)]
    pub method: Option<String>,
    /// m0plus (m0), m3, m4, m7, m33 (m35p), m55 or m85; any spelling (`cortex-m4`, `M0+`).
    /// `--target` is the same. Default: the part's core, else m55.
    #[arg(long, visible_alias = "target")]
    pub core: Option<String>,
    /// A part (`etscope parts`), or a part file (NAME.toml): its core, clock and the wait
    /// states of the memory its weights are read from.
    #[arg(long)]
    pub part: Option<String>,
    /// Clock in MHz (default: the part's, else a clock parts with the core commonly run at).
    #[arg(long)]
    pub mhz: Option<f64>,
    /// Wait states of the flash the weights are read from, on every 16-byte line read
    /// (default: the part's constants region's where its source states them, else 0).
    #[arg(long)]
    pub flash_wait_states: Option<u32>,
    #[arg(long)]
    pub json: bool,
}

/// Runs `etscope cost` with its arguments.
pub fn main(args: CostArgs) -> Result<()> {
    let CostArgs {
        file,
        method,
        core,
        part,
        mhz,
        flash_wait_states,
        json,
    } = args;
    run(
        &file,
        method.as_deref(),
        &Machine {
            core: core.as_deref(),
            part: part.as_deref(),
            mhz,
            flash_wait_states,
        },
        json,
    )
}
