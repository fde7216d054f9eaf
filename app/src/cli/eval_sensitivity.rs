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
use etscope_core::analysis::diff_sources::PreparedSource;
use etscope_core::analysis::eval::Evaluation;
use etscope_core::formats::pte::Program;
use etscope_core::lower::{self, Module, Options};

use super::run::DeviceChoice;
use crate::eval_runner::{outputs_of, Data};
use crate::load;
pub use crate::sweep::{Sweep, Variant, NO_INT16};
use crate::table::Table;

/// B's program, what it was lowered for, and the edge module of its ETRecord (beside it),
/// which the variants are lowered from again; `why` says what needs the ETRecord.
fn shipped_edge(
    b: &str,
    choice: &DeviceChoice,
    why: &str,
) -> Result<(Program, Options, Module, bool)> {
    let pte = Path::new(b);
    let program = load::program(pte)?;
    let record = crate::siblings::etrecord_of(pte);
    let rec = load::etrecord(&record).map_err(|e| {
        anyhow!("{why} lowers B's ETRecord again: {e} (put B's .etrecord beside it)")
    })?;
    // an ETRecord beside B that another export wrote would lower another program's variants
    load::ensure_etrecord_fits(&program, program.default_plan_index(), &rec, &record, pte)?;
    let (core, named) = choice.core(&program, program.default_plan_index())?;
    let options = Options::lowered_for(&program, core);
    let edge =
        Module::from_etrecord(&rec, None).map_err(|e| anyhow!("{}: {e}", record.display()))?;
    Ok((program, options, edge, !named))
}

/// Every weighted layer of B kept in float in turn, each variant run over the data
/// ([`crate::sweep::variants`], which the window runs too).
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
    let shipped = crate::sweep::Shipped {
        program: &program,
        evaluation: shipped,
    };
    Ok(crate::sweep::variants(
        &crate::sweep::Sides {
            a,
            b,
            side_a,
            a_outputs: &a_outputs,
            data: d,
        },
        &edge,
        &options,
        assumed,
        which,
        Some(shipped),
        &|p| choice.device(p, 0).map_err(|e| e.to_string()),
    ))
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
