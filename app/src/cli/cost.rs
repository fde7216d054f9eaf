//! `etscope cost FILE.pte --core C [--mhz N] [--flash-wait-states N]`: every call's cycles on a
//! Cortex-M core without a board (an estimate: core's `analysis::cost`), totals at the clock.

use std::path::Path;

use anyhow::{anyhow, Result};
use etscope_core::analysis::cost::{estimate, Core, CostEstimate, CostOptions};
use serde_json::json;

use crate::load;
use crate::table::Table;

/// The `--core` name as a core, or an error listing the choices.
pub fn parse_core(name: &str) -> Result<Core> {
    etscope_core::analysis::cost::priced_core(name).map_err(|e| anyhow!("--core: {e}"))
}

pub fn run(
    path: &Path,
    method: Option<&str>,
    core: &str,
    mhz: Option<f64>,
    flash_wait_states: u32,
    as_json: bool,
) -> Result<()> {
    let core = parse_core(core)?;
    let program = load::program(path)?;
    let (index, _) = super::pick_plan(&program, method, path)?;
    let options = CostOptions {
        core,
        mhz: mhz.unwrap_or_else(|| core.typical_mhz()),
        flash_wait_states,
    };
    let est = estimate(&program, index, options).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&to_json(&est))?);
    } else {
        print!("{}", render(&est, path));
    }
    Ok(())
}

/// The `--json` document (docs/cli-json.md).
pub fn to_json(est: &CostEstimate) -> serde_json::Value {
    let o = &est.options;
    json!({
        "core": o.core.key(),
        "mhz": o.mhz,
        "flash_wait_states": o.flash_wait_states,
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
        if o.flash_wait_states > 0 {
            format!(", {} flash wait states on weight reads", o.flash_wait_states)
        } else {
            String::new()
        }
    );
    for (id, why) in &est.would_not_run {
        s.push_str(&format!(
            "warning: instruction {id}: the {} would not run this call: {why}\n",
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
    s
}
