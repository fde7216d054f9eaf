//! `eval --sensitivity`: for B, a Cortex-M program with its ETRecord beside it, one variant per
//! weighted layer of its edge graph, that layer kept in float (etscope's lowering with the
//! layer's weights dequantized and its annotation gone, [`etscope_core::lower::keep_float`]).
//! Every variant runs over the same data against A. The table ranks the variants by what they
//! recover and prices each in arena and flash bytes and in estimated cycles on the core B was
//! lowered for. `lower --keep-float G -o mixed.pte` writes
//! the chosen one. A variant the host cannot run (a layout its neighbours do not take) is listed
//! with the reason, not run on a guess.

use std::path::Path;

use anyhow::{anyhow, Result};
use etscope_core::analysis::cost::program_cycles;
use etscope_core::analysis::diff_sources::PreparedSource;
use etscope_core::analysis::eval::Evaluation;
use etscope_core::cortex_m::Core;
use etscope_core::formats::pte::Program;
use etscope_core::lower::{self, Module, Options};
use serde::Serialize;

use super::run::DeviceChoice;
use crate::eval_runner::{evaluate_outputs, outputs_of, Data};
use crate::load;
use crate::table::Table;

/// Which variants the sweep runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sweep {
    Off,
    /// Each weighted layer in float alone.
    FloatOnly,
    /// Those, and each layer alone quantized (every other in float).
    All,
}

/// Why the sweep has no int16 variant: the backend has no 16-bit weighted layer to offer.
pub const NO_INT16: &str = "no int16 variants: ExecuTorch 1.5.1's Cortex-M backend computes 16-bit activations only in quantized_div; its convolutions, depthwise convolutions, linears and batch matmuls are int8 (tests/fixtures/ops)";

/// One row of the sensitivity table (`docs/cli-json.md`).
#[derive(Debug, Clone, Serialize)]
pub struct Variant {
    /// What `lower --keep-float` takes.
    pub group: String,
    pub module: String,
    /// `float` (the layer kept in float), `only_quantized` (every other weighted layer kept in
    /// float), or `as_shipped` (B itself, the baseline).
    pub variant: &'static str,
    pub b_accuracy: Option<f64>,
    pub top1_agreement: Option<f64>,
    pub snr_db_mean: Option<f64>,
    /// Planned memory of the variant's arenas.
    pub arena_bytes: Option<u64>,
    /// The variant program's size.
    pub flash_bytes: Option<u64>,
    /// Its estimated cycles per inference on `cycles_core` (the core B was lowered for;
    /// docs/cost-model.md): what a float fallback costs in time.
    pub cycles: Option<f64>,
    pub cycles_core: Option<&'static str>,
    /// Whether `cycles_core` was assumed from B's CMSIS-NN path (`--core` names none, and a
    /// program says only its path: [`Core::standing_for`]).
    pub cycles_core_assumed: bool,
    /// Why the variant has no numbers, when it has none.
    pub error: Option<String>,
}

/// B's program, what it was lowered for, and the edge module of its ETRecord (beside it),
/// which the variants are lowered from again; `why` says what needs the ETRecord.
fn shipped_edge(
    b: &str,
    choice: &DeviceChoice,
    why: &str,
) -> Result<(Program, Options, Module, bool)> {
    let pte = Path::new(b);
    let program = load::program(pte)?;
    let record = pte.with_extension("etrecord");
    let rec = load::etrecord(&record).map_err(|e| {
        anyhow!("{why} lowers B's ETRecord again: {e} (put B's .etrecord beside it)")
    })?;
    // an ETRecord beside B that another export wrote would lower another program's variants
    let plan = program
        .default_plan()
        .ok_or_else(|| anyhow!("{}: no plan", pte.display()))?;
    load::ensure_etrecord_fits(plan, &rec, &record, pte)?;
    let (core, named) = choice.core(&program, program.default_plan_index())?;
    let options = Options::lowered_for(&program, core);
    let edge =
        Module::from_etrecord(&rec, None).map_err(|e| anyhow!("{}: {e}", record.display()))?;
    Ok((program, options, edge, !named))
}

fn row(
    group: &str,
    variant: &'static str,
    eval: &Evaluation,
    program: &Program,
    core: Option<(Core, bool)>,
) -> Variant {
    let s = eval.summary();
    let out = s.outputs.first();
    Variant {
        group: group.to_string(),
        module: group.to_string(),
        variant,
        b_accuracy: out.and_then(|o| o.b_accuracy),
        top1_agreement: out.and_then(|o| o.top1_agreement),
        snr_db_mean: out.and_then(|o| o.snr_db_mean),
        arena_bytes: program.default_plan().map(|p| p.planned_bytes()),
        flash_bytes: Some(program.bytes().len() as u64),
        cycles: core.and_then(|(c, _)| program_cycles(program, c)),
        cycles_core: core.map(|(c, _)| c.key()),
        cycles_core_assumed: core.is_some_and(|(_, assumed)| assumed),
        error: None,
    }
}

/// Every weighted layer of B kept in float in turn, each variant run over the data.
pub fn sweep(
    a: &str,
    b: &str,
    side_a: &PreparedSource,
    d: &Data<'_>,
    choice: &DeviceChoice,
    shipped: &Evaluation,
    which: Sweep,
) -> Result<Vec<Variant>> {
    let (program, options, edge, assumed) = shipped_edge(b, choice, "--sensitivity")?;
    // A is the same for every variant: its outputs are computed once, and each variant runs
    // without capturing intermediates (the table compares outputs)
    let a_outputs = outputs_of(a, side_a, d)?;
    let groups = lower::keep_float::weighted_modules(&edge);
    let core = Some(options.core)
        .filter(|c| c.timing().is_some())
        .map(|c| (c, assumed));
    let mut rows = vec![row("", "as_shipped", shipped, &program, core)];
    let variants: Vec<(String, &'static str, Vec<String>)> = groups
        .iter()
        .map(|g| (g.clone(), "float", vec![g.clone()]))
        .chain(
            groups
                .iter()
                .filter(|_| groups.len() > 1 && which == Sweep::All)
                .map(|g| {
                    let others: Vec<String> = groups.iter().filter(|o| *o != g).cloned().collect();
                    (g.clone(), "only_quantized", others)
                }),
        )
        .collect();
    for (g, variant, kept) in variants {
        let made = mixed_program(&edge, &kept, &options);
        let label = format!("{b} with {} in float", kept.join(","));
        let result = made.and_then(|p| {
            let device = choice.device(&p, 0).map_err(|e| e.to_string())?;
            let side = PreparedSource::program(&label, &p, None, Some(device))
                .map_err(|e| e.to_string())?;
            let eval = evaluate_outputs(a, &label, side_a, &a_outputs, &side, d)
                .map_err(|e| format!("{e:#}"))?;
            Ok(row(&g, variant, &eval, &p, core))
        });
        rows.push(result.unwrap_or_else(|error| Variant {
            group: g.clone(),
            module: g.clone(),
            variant,
            b_accuracy: None,
            top1_agreement: None,
            snr_db_mean: None,
            arena_bytes: None,
            flash_bytes: None,
            cycles: None,
            cycles_core: None,
            cycles_core_assumed: false,
            error: Some(error),
        }));
    }
    let key = |v: &Variant| {
        v.b_accuracy
            .or(v.top1_agreement)
            .unwrap_or(f64::NEG_INFINITY)
    };
    // the float variants, the most recovered first (accuracy with labels, else agreement with
    // A), failures last; then the only-quantized ones, the least harmful first
    rows[1..].sort_by(|x, y| {
        (x.variant != "float")
            .cmp(&(y.variant != "float"))
            .then(key(y).total_cmp(&key(x)))
    });
    Ok(rows)
}

/// `eval --keep-float G… -o OUT`: B (a Cortex-M `.pte` with its ETRecord beside it) with those
/// groups kept in float, written to `out`; returns its path, the program to evaluate.
pub fn write_mixed(b: &str, kept: &[String], out: &Path, choice: &DeviceChoice) -> Result<String> {
    let (_, options, edge, _) = shipped_edge(b, choice, "--keep-float")?;
    let mixed = mixed_program(&edge, kept, &options).map_err(|e| anyhow!("{b}: {e}"))?;
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| anyhow!("{}: {e}", dir.display()))?;
    }
    std::fs::write(out, mixed.bytes())
        .map_err(|e| anyhow!("{}: cannot write: {e}", out.display()))?;
    eprintln!(
        "wrote {} ({} kept in float)",
        out.display(),
        kept.join(", ")
    );
    Ok(out.display().to_string())
}

/// B's edge module lowered with `kept` in float and written as a program.
pub fn mixed_program(edge: &Module, kept: &[String], options: &Options) -> Result<Program, String> {
    let bytes = lower::keep_float::mixed_program(edge, kept, options).map_err(|e| e.to_string())?;
    Program::parse(bytes).map_err(|e| e.to_string())
}

pub fn print_table(rows: &[Variant]) {
    let pct = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{:.2}%", v * 100.0));
    let mut t = Table::new(&[
        "group",
        "variant",
        "B acc",
        "top-1 agree",
        "SNR mean",
        "arena B",
        "flash B",
        "est. cycles",
        "",
    ]);
    for r in rows {
        t.row(vec![
            if r.group.is_empty() {
                "(as shipped)".into()
            } else {
                r.group.clone()
            },
            r.variant.to_string(),
            pct(r.b_accuracy),
            pct(r.top1_agreement),
            r.snr_db_mean.map_or("-".into(), |v| format!("{v:.1}")),
            r.arena_bytes.map_or("-".into(), |v| v.to_string()),
            r.flash_bytes.map_or("-".into(), |v| v.to_string()),
            match (r.cycles, r.cycles_core) {
                (Some(c), Some(core)) => format!("{c:.0} ({core})"),
                _ => "-".into(),
            },
            r.error.clone().unwrap_or_default(),
        ]);
    }
    println!("sensitivity (float: the group kept in float; only_quantized: every other weighted layer in float; eval --keep-float GROUP -o mixed.pte writes one):");
    print!("{}", t.render());
    if let Some(core) = rows
        .iter()
        .find(|r| r.cycles_core_assumed)
        .and_then(|r| r.cycles_core)
    {
        println!(
            "est. cycles on the {core}: assumed from B's CMSIS-NN path (a program does not name its core; --core names it)"
        );
    }
    println!("{NO_INT16}");
}
