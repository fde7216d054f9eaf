//! `etscope profile`: per-operator statistics of an ETDump against its program, and with
//! `--estimate CORE` each beside its estimate on that core (measured ÷ estimated, outliers
//! flagged).

use std::path::Path;

use anyhow::{anyhow, bail, Result};
use etscope_core::analysis::cost::measured::{measured_vs_estimate, CaptureMachine, OUTLIER_BAND};
use etscope_core::analysis::cost::{estimate, CostOptions};
use etscope_core::analysis::profile::{profile, DurationStats, TickRate};
use serde_json::{json, Value};

use crate::load;
use crate::table::Table;

/// What `profile` was given.
pub struct ProfileRun<'a> {
    pub pte: &'a Path,
    pub etdump: &'a Path,
    pub etrecord: Option<&'a Path>,
    pub ticks_per_us: Option<f64>,
    pub estimate: Option<&'a str>,
    pub mhz: Option<f64>,
    pub capture_core: Option<&'a str>,
    pub csv: Option<&'a Path>,
    pub json: bool,
}

pub fn run(args: ProfileRun<'_>) -> Result<()> {
    let ProfileRun {
        pte,
        etdump,
        etrecord,
        ticks_per_us,
        json: as_json,
        ..
    } = args;
    let program = load::program(pte)?;
    let dump = load::etdump(etdump)?;
    let record = etrecord.map(load::etrecord).transpose()?;
    let plan_index = super::pick_plan(&program, None, pte)?;
    let method = program.method_names()[plan_index];
    load::ensure_etdump_fits(&program, plan_index, &dump, etdump, pte)?;
    if let (Some(rec), Some(path)) = (&record, etrecord) {
        load::ensure_etrecord_fits(&program, plan_index, rec, path, pte)?;
    }
    let prof = profile(&dump, Some(&program.instruction_ops(plan_index)));
    // a capture saved by etscope stores nanoseconds when its target declared a clock: its raw
    // stream beside it says so
    let target = load::capture_target(etdump, &dump);
    let emulated = target
        .as_ref()
        .is_some_and(|t| etscope_profiler::session::is_emulated(&t.core));
    let rate = load::capture_rate(etdump, ticks_per_us, target.as_ref())?;
    if let (Some(t), None, false) = (&target, ticks_per_us, as_json) {
        eprintln!(
            "times in µs: {} was captured from a {} Hz clock and stores nanoseconds (as it declares)",
            etdump.display(),
            t.tick_hz
        );
    }
    if emulated && !as_json {
        println!("times: {}", etscope_viewer::document::EMULATED_TIMES);
    }
    let rate = rate.map(TickRate);
    let machine = match (&target, args.capture_core) {
        (None, None) => CaptureMachine::Undeclared,
        (None, Some(c)) => {
            super::cost::parse_core(c)?;
            CaptureMachine::declared(Some(c), false)
        }
        (Some(t), given) => {
            if let Some(c) = given.filter(|c| !t.core.eq_ignore_ascii_case(c)) {
                bail!(
                    "{}: the capture declares its target core {:?}; --capture-core {c} contradicts it",
                    etdump.display(),
                    t.core
                );
            }
            load::capture_origin(Some(t)).machine
        }
    };
    // the estimate asked for, and why it is not set against the capture when it is not
    let mut unlike: Option<(CostOptions, String)> = None;
    let vs = match args.estimate {
        Some(core) => {
            let core = super::cost::parse_core(core)?;
            let options =
                CostOptions::compute_only(core, args.mhz.unwrap_or_else(|| core.typical_mhz()));
            let est = estimate(&program, plan_index, options)
                .map_err(|e| anyhow!("{}: {e}", pte.display()))?;
            match measured_vs_estimate(&prof, &machine, &est, rate.map(|r| r.0), OUTLIER_BAND) {
                Ok(m) => Some((options, m)),
                Err(why) => {
                    unlike = Some((options, why.0));
                    None
                }
            }
        }
        None => None,
    };
    if let Some(path) = args.csv {
        let csv = etscope_viewer::export::profile_csv(
            &prof,
            rate.map(|r| r.0),
            vs.as_ref().map(|v| &v.1),
            emulated.then_some(etscope_viewer::document::EMULATED_TIMES),
        );
        std::fs::write(path, csv).map_err(|e| anyhow!("{}: cannot write: {e}", path.display()))?;
    }
    if as_json {
        let rows: Vec<Value> = prof
            .rows
            .iter()
            .map(|r| {
                let mut v = serde_json::to_value(r).unwrap_or(Value::Null);
                if let (Some(rec), Some(obj)) = (&record, v.as_object_mut()) {
                    obj.insert(
                        "debug_handles".into(),
                        json!(rec.debug_handles(method, r.instruction_id)),
                    );
                }
                if let (Some(rate), Some(obj)) = (rate, v.as_object_mut()) {
                    obj.insert("avg_us".into(), json!(rate.to_us(r.stats.avg)));
                    obj.insert("p50_us".into(), json!(rate.to_us(r.stats.p50)));
                }
                if let (Some((_, m)), Some(obj)) = (&vs, v.as_object_mut()) {
                    let row = m.row(r.instruction_id);
                    obj.insert(
                        "estimated_us".into(),
                        json!(row.and_then(|x| x.estimated_us)),
                    );
                    obj.insert(
                        "measured_over_estimated".into(),
                        json!(row.and_then(|x| x.ratio)),
                    );
                    obj.insert(
                        "relative_to_median".into(),
                        json!(row.and_then(|x| x.relative)),
                    );
                    obj.insert("outlier".into(), json!(row.is_some_and(|x| x.outlier)));
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
            "times": if emulated {
                etscope_viewer::document::EMULATED_TIMES
            } else {
                "the capture's own clock"
            },
            "rows": rows,
            "events": events,
            "machine": &machine,
            "estimate": match (&vs, &unlike) {
                (Some((o, m)), _) => json!({
                    "core": o.core.key(),
                    "mhz": o.mhz,
                    "what": etscope_core::analysis::cost::ESTIMATE_WHAT,
                    "compared": true,
                    "measured_in_us": m.measured_in_us,
                    "median_ratio": m.median_ratio,
                    "band": m.band,
                }),
                (None, Some((o, why))) => json!({
                    "core": o.core.key(),
                    "mhz": o.mhz,
                    "what": etscope_core::analysis::cost::ESTIMATE_WHAT,
                    "compared": false,
                    "why": why,
                }),
                (None, None) => Value::Null,
            },
        }));
    }
    let unit = if rate.is_some() { "µs" } else { "ticks" };
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
    if let Some((o, why)) = &unlike {
        println!(
            "not set against the estimate on {} @ {} MHz: {why} (`etscope cost` prints the estimate alone)",
            o.core.name(),
            o.mhz
        );
    }
    if let Some((o, m)) = &vs {
        println!(
            "estimated on {} @ {} MHz: an estimate (docs/cost-model.md), not a measurement; measured ÷ estimated ({}), flagged when over {}× from the median ({})",
            o.core.name(),
            o.mhz,
            m.ratio_meaning(),
            m.band,
            m.median_ratio
                .map(|x| format!("median {x:.3}"))
                .unwrap_or_else(|| "no priced row".into())
        );
    }
    let mut header = vec![
        ">instr", "op", ">count", ">avg", ">min", ">p10", ">p50", ">p90", ">max", ">share",
    ];
    if vs.is_some() {
        header.extend([">est. µs", ">meas÷est", "flag"]);
    }
    let mut t = Table::new(&header);
    for r in &prof.rows {
        let s: &DurationStats = &r.stats;
        let mut cells = vec![
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
        ];
        if let Some((_, m)) = &vs {
            let row = m.row(r.instruction_id);
            cells.push(
                row.and_then(|x| x.estimated_us)
                    .map(|e| format!("{e:.1}"))
                    .unwrap_or_else(|| "—".into()),
            );
            cells.push(
                row.and_then(|x| x.ratio)
                    .map(|x| format!("{x:.3}"))
                    .unwrap_or_default(),
            );
            cells.push(match row.and_then(|x| x.relative) {
                Some(rel) if row.is_some_and(|x| x.outlier) => {
                    format!("outlier ({rel:.1}× median)")
                }
                _ => String::new(),
            });
        }
        t.row(cells);
        for d in &r.delegate_events {
            t.row(
                vec![
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
                ]
                .into_iter()
                .chain(std::iter::repeat_n(
                    String::new(),
                    if vs.is_some() { 3 } else { 0 },
                ))
                .collect(),
            );
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

/// `etscope profile`'s arguments.
#[derive(Debug, clap::Args)]
pub struct ProfileArgs {
    #[arg(long)]
    pub pte: std::path::PathBuf,
    /// The ETDump (`.etdp`, e.g. a saved capture); not with --live.
    #[arg(long, required_unless_present = "live")]
    pub etdump: Option<std::path::PathBuf>,
    /// Capture from a running target and refresh the table as runs arrive (same target
    /// options as `record`); the capture is saved to --out.
    #[arg(long)]
    pub live: bool,
    #[command(flatten)]
    pub target: super::record::TargetArgs,
    /// With --live: where to save the capture.
    #[arg(long, short = 'o', default_value = "live_capture.etdp")]
    pub out: std::path::PathBuf,
    /// ETRecord of the same program: adds debug handles to the rows.
    #[arg(long)]
    pub etrecord: Option<std::path::PathBuf>,
    /// Ticks per microsecond (1000 for a host ETDump in ns; core MHz for Cortex-M cycles).
    #[arg(long)]
    pub ticks_per_us: Option<f64>,
    /// Beside every measured time, the estimate on this core (m0plus, m3, m4, m7, m33,
    /// m55, m85; `etscope cost`) and measured ÷ estimated, far-off ratios flagged — only
    /// when the capture comes from a part with that core (declared by the capture, or
    /// by --capture-core); a host's or an emulator's capture is never priced as a part.
    /// `--core` names the same.
    #[arg(long, visible_alias = "core", value_name = "CORE")]
    pub estimate: Option<String>,
    /// The estimate's clock in MHz (default: a clock parts with the core commonly run at).
    #[arg(long, requires = "estimate")]
    pub mhz: Option<f64>,
    /// The core of the part the ETDump was captured on, for a capture that declares none
    /// (an ETDump a board wrote over its UART); refused when the capture declares another.
    #[arg(long)]
    pub capture_core: Option<String>,
    /// A second capture B to compare with this one (A), operator by operator: p50, p90,
    /// jitter and the change, sorted by impact.
    #[arg(long, conflicts_with = "live")]
    pub compare: Option<std::path::PathBuf>,
    /// B's program, when B was captured running another export of the model (matched by
    /// debug handle, module path or stack trace); default: --pte.
    #[arg(long, requires = "compare")]
    pub compare_pte: Option<std::path::PathBuf>,
    /// B's ETRecord (its debug handles and module paths, for matching another export).
    #[arg(long, requires = "compare")]
    pub compare_etrecord: Option<std::path::PathBuf>,
    /// B's ticks per microsecond, when its clock differs from A's (default: --ticks-per-us).
    #[arg(long, requires = "compare")]
    pub compare_ticks_per_us: Option<f64>,
    /// With --compare: exit 1 when any matched operator's p50 grew by more than PCT percent
    /// (a CI gate).
    #[arg(long, requires = "compare", value_name = "PCT")]
    pub fail_if_slower: Option<f64>,
    /// With --fail-if-slower: operators under PCT percent of A's total p50 are not gated
    /// (their run-to-run noise is larger than any threshold).
    #[arg(
        long,
        requires = "fail_if_slower",
        value_name = "PCT",
        default_value_t = 1.0
    )]
    pub gate_min_share: f64,
    /// Also write the comparison (with --compare) or the table as CSV to this file.
    #[arg(long)]
    pub csv: Option<std::path::PathBuf>,
    #[arg(long)]
    pub json: bool,
}

/// Runs `etscope profile` with its arguments.
pub fn main(args: ProfileArgs) -> Result<()> {
    let ProfileArgs {
        pte,
        etdump,
        live,
        target,
        out,
        etrecord,
        ticks_per_us,
        estimate,
        mhz,
        capture_core,
        compare,
        compare_pte,
        compare_etrecord,
        compare_ticks_per_us,
        fail_if_slower,
        gate_min_share,
        csv,
        json,
    } = args;
    match (live, etdump, compare) {
        (true, _, _) => super::record::record(&pte, &target, &out, None, true, json),
        (false, Some(etdump), Some(b)) => {
            super::profile_compare::run(super::profile_compare::CompareArgs {
                pte: &pte,
                etdump: &etdump,
                etrecord: etrecord.as_deref(),
                ticks_per_us,
                b_etdump: &b,
                b_pte: compare_pte.as_deref(),
                b_etrecord: compare_etrecord.as_deref(),
                b_ticks_per_us: compare_ticks_per_us,
                fail_if_slower,
                gate_min_share,
                csv: csv.as_deref(),
                json,
            })
        }
        (false, Some(etdump), None) => run(ProfileRun {
            pte: &pte,
            etdump: &etdump,
            etrecord: etrecord.as_deref(),
            ticks_per_us,
            estimate: estimate.as_deref(),
            mhz,
            capture_core: capture_core.as_deref(),
            csv: csv.as_deref(),
            json,
        }),
        (false, None, _) => anyhow::bail!("profile needs --etdump FILE or --live"),
    }
}
