//! `etscope profile --pte F --etdump A.etdp --compare B.etdp`: two captures matched operator by
//! operator (core's `analysis::profile_compare`), sorted by impact, as a table, `--json` or
//! `--csv`; `--fail-if-slower PCT` makes it a CI gate (exit 1 naming the operators).

use std::path::Path;

use anyhow::{anyhow, Result};
use etscope_core::analysis::diff_sources::program_graph;
use etscope_core::analysis::profile::profile;
use etscope_core::analysis::profile_compare::{compare, CaptureSide, Comparison};
use etscope_core::ir::Graph;
use serde_json::json;

use crate::load;
use crate::table::Table;

/// What `--compare` was given.
pub struct CompareArgs<'a> {
    pub pte: &'a Path,
    pub etdump: &'a Path,
    pub etrecord: Option<&'a Path>,
    pub ticks_per_us: Option<f64>,
    pub b_etdump: &'a Path,
    /// B's program, when B is a capture of another export (default: A's program).
    pub b_pte: Option<&'a Path>,
    pub b_etrecord: Option<&'a Path>,
    /// B's clock, when it differs from A's.
    pub b_ticks_per_us: Option<f64>,
    pub fail_if_slower: Option<f64>,
    /// Operators under this percentage of A's total p50 are not gated.
    pub gate_min_share: f64,
    pub csv: Option<&'a Path>,
    pub json: bool,
}

/// The CI gate failed: an operator grew by more than the threshold. Exit code 1.
#[derive(Debug)]
pub struct GateFailed(pub String);

impl GateFailed {
    pub const EXIT_CODE: u8 = 1;
}

impl std::fmt::Display for GateFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GateFailed {}

/// One side read and checked: its profile and, for another export, its graph.
struct Loaded {
    profile: etscope_core::analysis::profile::Profile,
    graph: Option<Graph>,
    /// The capture's declared target (a capture saved by etscope from a target with a clock
    /// holds nanoseconds, and says which machine it comes from).
    target: Option<etscope_profiler::wire::TargetInfo>,
}

fn load_side(
    pte: &Path,
    etdump: &Path,
    etrecord: Option<&Path>,
    with_graph: bool,
) -> Result<Loaded> {
    let program = load::program(pte)?;
    let dump = load::etdump(etdump)?;
    let plan = super::pick_plan(&program, None, pte)?;
    load::ensure_etdump_fits(&program, plan, &dump, etdump, pte)?;
    let record = etrecord.map(load::etrecord).transpose()?;
    if let (Some(rec), Some(path)) = (&record, etrecord) {
        load::ensure_etrecord_fits(&program, plan, rec, path, pte)?;
    }
    let graph = if with_graph {
        Some(
            program_graph(&program, record.as_ref())
                .ok_or_else(|| anyhow!("{}: the program has no execution plan", pte.display()))?,
        )
    } else {
        None
    };
    Ok(Loaded {
        profile: profile(&dump, Some(&program.instruction_ops(plan))),
        target: load::capture_target(etdump, &dump),
        graph,
    })
}

pub fn run(args: CompareArgs<'_>) -> Result<()> {
    if let Some(p) = args.fail_if_slower {
        if !(p.is_finite() && p >= 0.0) {
            anyhow::bail!("--fail-if-slower takes a percentage ≥ 0, got {p}");
        }
    }
    // another export is matched by its graph's keys; one program by instruction
    let other_export = args.b_pte.is_some_and(|b| b != args.pte);
    let a = load_side(args.pte, args.etdump, args.etrecord, other_export)?;
    let b_pte = args.b_pte.unwrap_or(args.pte);
    let b_etrecord = args
        .b_etrecord
        .or(if other_export { None } else { args.etrecord });
    let b = load_side(b_pte, args.b_etdump, b_etrecord, other_export)?;
    let (ta, tb) = (&a.target, &b.target);
    let a_rate = load::capture_rate(args.etdump, args.ticks_per_us, ta.as_ref())?;
    // A's rate stands for B too unless B declares its own clock
    let b_given = args
        .b_ticks_per_us
        .or(args.ticks_per_us.filter(|_| tb.is_none()));
    let b_rate = load::capture_rate(args.b_etdump, b_given, tb.as_ref())?;
    fn side(l: &Loaded, rate: Option<f64>) -> CaptureSide<'_> {
        CaptureSide {
            profile: &l.profile,
            graph: l.graph.as_ref(),
            ticks_per_us: rate,
        }
    }
    let cmp = compare(side(&a, a_rate), side(&b, b_rate))
        .map_err(|e| {
            anyhow!(
                "{} vs {}: {e}",
                args.etdump.display(),
                args.b_etdump.display()
            )
        })?
        .from_origins(
            &load::capture_origin(ta.as_ref()),
            &load::capture_origin(tb.as_ref()),
        );
    if let (Some(w), false) = (&cmp.warning, args.json) {
        eprintln!("warning: {w}");
    }
    if let Some(path) = args.csv {
        std::fs::write(path, to_csv(&cmp))
            .map_err(|e| anyhow!("{}: cannot write: {e}", path.display()))?;
    }
    if args.json {
        super::print_json(&to_json(&cmp, args.etdump, args.b_etdump))?;
    } else {
        print!("{}", render(&cmp, args.etdump, args.b_etdump));
    }
    if let Some(pct) = args.fail_if_slower {
        if !(args.gate_min_share.is_finite() && args.gate_min_share >= 0.0) {
            anyhow::bail!(
                "--gate-min-share takes a percentage ≥ 0, got {}",
                args.gate_min_share
            );
        }
        let bad = cmp.regressions(pct / 100.0, args.gate_min_share / 100.0);
        if !bad.is_empty() {
            let names: Vec<String> = bad
                .iter()
                .map(|r| {
                    format!(
                        "{} (instruction {}) {:+.1}%",
                        r.op,
                        r.b.as_ref().map_or(0, |s| s.instruction_id),
                        100.0 * r.change.unwrap_or(0.0)
                    )
                })
                .collect();
            return Err(GateFailed(format!(
                "{}: {} operator(s) of at least {}% of the time grew by more than {pct}% at p50: {}",
                args.b_etdump.display(),
                bad.len(),
                args.gate_min_share,
                names.join(", ")
            ))
            .into());
        }
    }
    Ok(())
}

/// The `--json` document (docs/cli-json.md).
pub fn to_json(cmp: &Comparison, a: &Path, b: &Path) -> serde_json::Value {
    json!({
        "a": a.display().to_string(),
        "b": b.display().to_string(),
        "unit": cmp.unit.key(),
        "warning": cmp.warning,
        "a_total_p50": cmp.a_total_p50,
        "b_total_p50": cmp.b_total_p50,
        "matched": cmp.matched(),
        "rows": cmp.rows,
    })
}

fn cell(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.3}")).unwrap_or_default()
}

/// One line per operator: `op,module,matched_by,a_instruction,b_instruction,a_p50,a_p90,
/// a_jitter,b_p50,b_p90,b_jitter,change,impact`.
pub fn to_csv(cmp: &Comparison) -> String {
    let mut s = String::from(
        "op,module,matched_by,a_instruction,b_instruction,a_p50,a_p90,a_jitter,b_p50,b_p90,b_jitter,change,impact\n",
    );
    let quote = etscope_viewer::export::csv_field;
    for r in &cmp.rows {
        let (a, b) = (r.a.as_ref(), r.b.as_ref());
        let line = [
            quote(&r.op),
            quote(r.module.as_deref().unwrap_or("")),
            r.matched_by.map(|m| m.key()).unwrap_or("").to_string(),
            a.map(|s| s.instruction_id.to_string()).unwrap_or_default(),
            b.map(|s| s.instruction_id.to_string()).unwrap_or_default(),
            cell(a.map(|s| s.p50)),
            cell(a.map(|s| s.p90)),
            cell(a.map(|s| s.jitter)),
            cell(b.map(|s| s.p50)),
            cell(b.map(|s| s.p90)),
            cell(b.map(|s| s.jitter)),
            cell(r.change),
            format!("{:.3}", r.impact),
        ];
        s.push_str(&line.join(","));
        s.push('\n');
    }
    s
}

fn render(cmp: &Comparison, a: &Path, b: &Path) -> String {
    let unit = cmp.unit.label();
    let mut s = format!(
        "A = {}, B = {}: {} operators matched, times in {unit}{}\n",
        a.display(),
        b.display(),
        cmp.matched(),
        if cmp.unit == etscope_core::analysis::profile_compare::Unit::Ticks {
            " (raw ticks of both captures, taken to be one clock)"
        } else {
            ""
        }
    );
    let mut t = Table::new(&[
        "op",
        "matched by",
        ">A #",
        ">B #",
        ">A p50",
        ">B p50",
        ">B p90",
        ">A jitter",
        ">B jitter",
        ">change",
        ">impact",
    ]);
    for r in &cmp.rows {
        let (sa, sb) = (r.a.as_ref(), r.b.as_ref());
        t.row(vec![
            r.op.trim_start_matches("cortex_m::").to_string(),
            r.matched_by
                .map(|m| m.key().to_string())
                .unwrap_or_else(|| {
                    if sa.is_some() {
                        "only in A"
                    } else {
                        "only in B"
                    }
                    .into()
                }),
            sa.map(|x| x.instruction_id.to_string()).unwrap_or_default(),
            sb.map(|x| x.instruction_id.to_string()).unwrap_or_default(),
            cell(sa.map(|x| x.p50)),
            cell(sb.map(|x| x.p50)),
            cell(sb.map(|x| x.p90)),
            sa.map(|x| format!("{:.0}%", 100.0 * x.jitter))
                .unwrap_or_default(),
            sb.map(|x| format!("{:.0}%", 100.0 * x.jitter))
                .unwrap_or_default(),
            r.change
                .map(|c| format!("{:+.1}%", 100.0 * c))
                .unwrap_or_default(),
            format!("{:+.3}", r.impact),
        ]);
    }
    s.push_str(&t.render());
    s.push_str(&format!(
        "total p50: A {:.3} {unit}, B {:.3} {unit} ({})\n",
        cmp.a_total_p50,
        cmp.b_total_p50,
        if cmp.a_total_p50 > 0.0 {
            format!("{:+.1}%", 100.0 * (cmp.b_total_p50 / cmp.a_total_p50 - 1.0))
        } else {
            "—".into()
        }
    ));
    s
}
