//! `etscope profile`: per-operator statistics of an ETDump against its program.

use std::path::Path;

use anyhow::{bail, Result};
use etscope_core::analysis::profile::{profile, DurationStats, TickRate};
use serde_json::{json, Value};

use crate::load;
use crate::table::Table;

pub fn run(
    pte: &Path,
    etdump: &Path,
    etrecord: Option<&Path>,
    ticks_per_us: Option<f64>,
    as_json: bool,
) -> Result<()> {
    let program = load::program(pte)?;
    let dump = load::etdump(etdump)?;
    let record = etrecord.map(load::etrecord).transpose()?;
    let (_, plan) = super::pick_plan(&program, None, pte)?;
    if let Some(t) = ticks_per_us {
        if !(t.is_finite() && t > 0.0) {
            bail!("--ticks-per-us must be a positive number, got {t}");
        }
    }
    load::ensure_etdump_fits(plan, &dump, etdump, pte)?;
    if let (Some(rec), Some(path)) = (&record, etrecord) {
        load::ensure_etrecord_fits(plan, rec, path, pte)?;
    }
    let prof = profile(&dump, Some(plan));
    // a capture saved by etscope stores nanoseconds when its target declared a clock: its raw
    // stream beside it says so
    let declared = match ticks_per_us {
        Some(_) => None,
        None => std::fs::read(etscope_profiler::session::capture_paths(etdump).2)
            .ok()
            .and_then(|raw| etscope_profiler::session::declared_tick_hz(&raw)),
    };
    if let (Some(hz), false) = (declared, as_json) {
        eprintln!(
            "times in µs: {} was captured from a {hz} Hz clock and stores nanoseconds (its raw stream {} says so)",
            etdump.display(),
            etscope_profiler::session::capture_paths(etdump).2.display()
        );
    }
    let rate = ticks_per_us.or(declared.map(|_| 1000.0)).map(TickRate);
    if as_json {
        let rows: Vec<Value> = prof
            .rows
            .iter()
            .map(|r| {
                let mut v = serde_json::to_value(r).unwrap_or(Value::Null);
                if let (Some(rec), Some(obj)) = (&record, v.as_object_mut()) {
                    obj.insert(
                        "debug_handles".into(),
                        json!(rec.debug_handles(&plan.name, r.instruction_id)),
                    );
                }
                if let (Some(rate), Some(obj)) = (rate, v.as_object_mut()) {
                    obj.insert("avg_us".into(), json!(rate.to_us(r.stats.avg)));
                    obj.insert("p50_us".into(), json!(rate.to_us(r.stats.p50)));
                }
                v
            })
            .collect();
        let events: Vec<Value> = prof
            .events
            .iter()
            .map(|e| {
                let mut v = serde_json::to_value(e).unwrap_or(Value::Null);
                if let (Some(rate), Some(obj)) = (rate, v.as_object_mut()) {
                    obj.insert("avg_us".into(), json!(rate.to_us(e.stats.avg)));
                    obj.insert("p50_us".into(), json!(rate.to_us(e.stats.p50)));
                }
                v
            })
            .collect();
        return super::print_json(&json!({
            "runs": prof.runs,
            "ticks_per_us": rate.map(|r| r.0),
            "rows": rows,
            "events": events,
        }));
    }
    let unit = if rate.is_some() { "us" } else { "ticks" };
    let fmt = |x: f64| match rate {
        Some(r) => format!("{:.3}", r.to_us(x)),
        None => format!("{x:.0}"),
    };
    let total: u64 = prof.rows.iter().map(|r| r.stats.total()).sum();
    println!(
        "{}: {} runs, {} profiled instructions, times in {unit}",
        etdump.display(),
        prof.runs,
        prof.rows.len()
    );
    let mut t = Table::new(&[
        ">instr", "op", ">count", ">avg", ">min", ">p10", ">p50", ">p90", ">max", ">share",
    ]);
    for r in &prof.rows {
        let s: &DurationStats = &r.stats;
        t.row(vec![
            r.instruction_id.to_string(),
            r.op.clone(),
            s.count.to_string(),
            fmt(s.avg),
            fmt(s.min as f64),
            fmt(s.p10),
            fmt(s.p50),
            fmt(s.p90),
            fmt(s.max as f64),
            format!(
                "{:.1}%",
                if total > 0 {
                    100.0 * s.total() as f64 / total as f64
                } else {
                    0.0
                }
            ),
        ]);
        for d in &r.delegate_events {
            t.row(vec![
                String::new(),
                format!("  └ {}", d.name),
                d.stats.count.to_string(),
                fmt(d.stats.avg),
                fmt(d.stats.min as f64),
                fmt(d.stats.p10),
                fmt(d.stats.p50),
                fmt(d.stats.p90),
                fmt(d.stats.max as f64),
                String::new(),
            ]);
        }
    }
    print!("{}", t.render());
    for e in &prof.events {
        println!(
            "{} ({}): avg {} p50 {} {unit} over {} events",
            e.event_name,
            e.event_block_name,
            fmt(e.stats.avg),
            fmt(e.stats.p50),
            e.stats.count
        );
    }
    Ok(())
}
