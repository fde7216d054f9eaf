//! `etscope diff A B --input X.npy`: compares intermediate tensors of two sources node by node
//! and names the first divergence. A source is a `.pte` (run on the host; its sibling
//! `.etrecord` supplies debug handles) or `etdump:FILE.etdp+FILE.bin` (captured on a device,
//! for the program on the other side or `--etdump-program`).

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};
use etscope_core::analysis::diff::{diff, Threshold};
use etscope_core::analysis::diff_sources::program_graph;
use etscope_core::formats::debug_buffer::captured_tensors;
use etscope_core::formats::etrecord::ETRecord;

use super::run::DeviceChoice;
use crate::diff_side::{record_now, DiffSide};
use crate::load;
use crate::table::Table;

enum Spec {
    Program(PathBuf),
    Etdump(PathBuf, PathBuf),
    Stage(PathBuf, String),
}

fn parse_spec(s: &str) -> Result<Spec> {
    if let Some(rest) = s.strip_prefix("etdump:") {
        let (d, b) = rest
            .split_once('+')
            .ok_or_else(|| anyhow!("{s}: expected etdump:FILE.etdp+FILE.bin"))?;
        return Ok(Spec::Etdump(d.into(), b.into()));
    }
    if let Some((file, stage)) = s.split_once('#') {
        return Ok(Spec::Stage(file.into(), stage.into()));
    }
    Ok(Spec::Program(s.into()))
}

/// The program at `pte` and its sibling ETRecord (checked to belong to it), if there is one.
pub(super) fn program_and_record(
    pte: &Path,
) -> Result<(
    etscope_core::formats::pte::Program,
    Option<(ETRecord, String)>,
)> {
    let program = load::program(pte)?;
    let sibling = crate::siblings::etrecord_of(pte);
    if !sibling.exists() {
        return Ok((program, None));
    }
    // a neighbour found by name that cannot be read, or belongs to another program, is a
    // warning: the program is compared without it
    let rec = load::etrecord(&sibling).and_then(|rec| {
        load::ensure_etrecord_fits(&program, program.default_plan_index(), &rec, &sibling, pte)?;
        Ok(rec)
    });
    match rec {
        Ok(rec) => Ok((program, Some((rec, sibling.display().to_string())))),
        Err(e) => {
            load::warn_skipped(&sibling, &e);
            Ok((program, None))
        }
    }
}

/// The side `spec` names, resolved: its files read and checked against each other.
fn side(
    spec: &Spec,
    label: &str,
    etdump_program: Option<&Path>,
    choice: &DeviceChoice,
) -> Result<DiffSide> {
    Ok(match spec {
        Spec::Program(pte) => {
            let (program, rec) = program_and_record(pte)?;
            let device = choice.device(&program, 0)?;
            // what `run` says of this program on this core: a call that computes otherwise
            // (a Helium program's linear without its bias on another core) is the divergence
            // a per-row rule may miss when each loses a little
            for n in etscope_core::analysis::device_notes::notes(&program, 0, device) {
                eprintln!(
                    "note: {label}: instruction {} ({}) {}: {}",
                    n.instruction,
                    n.op,
                    if n.kind == "device" {
                        "computes differently on the board"
                    } else {
                        "does not compute what the model means"
                    },
                    n.why
                );
            }
            DiffSide::Program {
                label: label.to_string(),
                record: rec.map(|(r, e)| (record_now(r), e)),
                program,
                device,
            }
        }
        Spec::Stage(file, name) => DiffSide::Stage {
            label: label.to_string(),
            name: name.clone(),
            record: record_now(load::etrecord(file)?),
            export: file.display().to_string(),
            device: choice.device_for_stage()?,
        },
        Spec::Etdump(d, b) => {
            let pte = etdump_program.ok_or_else(|| anyhow!("{}: which program made this ETDump? put a .pte on the other side or pass --etdump-program", d.display()))?;
            let (program, rec) = program_and_record(pte)?;
            let graph = program_graph(&program, rec.as_ref().map(|(r, _)| r))
                .ok_or_else(|| anyhow!("{}: no execution plan", pte.display()))?;
            let dump = load::etdump(d)?;
            load::ensure_etdump_fits(&program, program.default_plan_index(), &dump, d, pte)?;
            let buf = load::bytes(b)?;
            let captured = captured_tensors(&dump, &buf)
                .with_context(|| format!("{} with {}", d.display(), b.display()))?;
            DiffSide::Captured {
                label: label.to_string(),
                graph,
                captured,
                export: rec.map(|(_, export)| export),
            }
        }
    })
}

#[allow(clippy::too_many_arguments)]
pub fn run(
    a: &str,
    b: &str,
    inputs: &[PathBuf],
    etdump_program: Option<&Path>,
    device: &DeviceChoice,
    threshold: Threshold,
    as_json: bool,
) -> Result<()> {
    let (sa, sb) = (parse_spec(a)?, parse_spec(b)?);
    let tensors = inputs
        .iter()
        .map(|p| {
            etscope_core::formats::npy::read_npy(&load::bytes(p)?)
                .with_context(|| p.display().to_string())
        })
        .collect::<Result<Vec<_>>>()?;
    let other_program = |s: &Spec| match s {
        Spec::Program(p) => Some(p.clone()),
        Spec::Etdump(..) | Spec::Stage(..) => None,
    };
    let prog_for_a = etdump_program
        .map(Path::to_path_buf)
        .or_else(|| other_program(&sb));
    let prog_for_b = etdump_program
        .map(Path::to_path_buf)
        .or_else(|| other_program(&sa));
    let src_a = side(&sa, a, prog_for_a.as_deref(), device)?
        .source(&tensors, None)
        .map_err(|e| anyhow!(e))?;
    let src_b = side(&sb, b, prog_for_b.as_deref(), device)?
        .source(&tensors, None)
        .map_err(|e| anyhow!(e))?;
    let report = diff(&src_a, &src_b, threshold)?;
    if as_json {
        return super::print_json(&report);
    }
    println!(
        "A = {a}\nB = {b}\nmatched by {}, {} node groups",
        report.matched_by,
        report.rows.len()
    );
    let mut t = Table::new(&[
        "", "module", "instr", "A ops", "B ops", ">numel", ">MSE", ">max abs", ">SNR in",
        ">SNR dB", ">cosine", ">±1 LSB", ">> 1 LSB",
    ]);
    for (i, r) in report.rows.iter().enumerate() {
        let mark = if Some(i) == report.first_divergence {
            "▶"
        } else {
            ""
        };
        // A's instructions; a stage has none, so the program's on the other side
        let instructions = if r.a_instructions.is_empty() {
            &r.b_instructions
        } else {
            &r.a_instructions
        };
        let ids = instructions
            .iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let short = etscope_core::analysis::diff::short_ops;
        match &r.metrics {
            Some(m) => t.row(vec![
                mark.into(),
                r.module.join(","),
                ids,
                short(&r.a_ops),
                short(&r.b_ops),
                m.numel.to_string(),
                format!("{:.3e}", m.mse),
                format!("{:.3e}", m.max_abs),
                r.snr_in_db.map(db).unwrap_or_else(|| "input".into()),
                db(m.snr_db),
                format!("{:.6}", m.cosine),
                m.off_by_one.map(|x| x.to_string()).unwrap_or_default(),
                m.off_by_more.map(|x| x.to_string()).unwrap_or_default(),
            ]),
            None => t.row(vec![
                mark.into(),
                r.module.join(","),
                ids,
                short(&r.a_ops),
                short(&r.b_ops),
                r.note.clone().unwrap_or_default(),
            ]),
        }
    }
    print!("{}", t.render());
    let (min_snr, min_drop) = (threshold.min_snr_db, threshold.min_drop_db);
    let limit = if threshold.max_abs.is_finite() {
        format!(", max abs <= {}", threshold.max_abs)
    } else {
        String::new()
    };
    // nodes by instruction where they have one (a program), else by operator (a stage)
    let at = |ids: &[usize], ops: &[String]| {
        if ids.is_empty() {
            ops.join(", ")
        } else {
            format!("instruction {ids:?} ({})", ops.join(", "))
        }
    };
    let compared = report.rows.iter().filter(|r| r.metrics.is_some()).count();
    let partly = if compared < report.rows.len() {
        format!(
            "; {compared} of {} rows compared, the others say why",
            report.rows.len()
        )
    } else {
        String::new()
    };
    match report.first_divergence.and_then(|i| report.rows.get(i)) {
        Some(r) => {
            let snr = r.metrics.map(|m| db(m.snr_db)).unwrap_or_default();
            // what the op lost is said only against what it was given
            let given = match (r.snr_in_db, r.drop_db()) {
                (Some(s), _) if s.is_infinite() && s > 0.0 => {
                    "equal going in: the op made the difference".to_string()
                }
                (Some(s), Some(lost)) => {
                    format!("{} dB carried in, the op lost {} dB", db(s), db(lost))
                }
                _ => "nothing compared before it".to_string(),
            };
            // the rule that fired: the SNR and its loss, or the largest difference
            let by_snr = r
                .metrics
                .is_some_and(|m| m.snr_db < min_snr && r.drop_db().is_some_and(|d| d >= min_drop));
            let rule = if by_snr {
                format!("SNR < {min_snr} dB and a loss >= {min_drop} dB")
            } else {
                format!(
                    "max abs {:.3e} > {:e}",
                    r.metrics.map_or(0.0, |m| m.max_abs),
                    threshold.max_abs
                )
            };
            println!(
                "first divergence: A {} vs B {}: SNR {snr} dB, {given} (rule: {rule}){partly}",
                at(&r.a_instructions, &r.a_ops),
                at(&r.b_instructions, &r.b_ops),
            )
        }
        None => {
            println!(
                "no divergence (no node below {min_snr} dB SNR that lost >= {min_drop} dB against what it was given{limit}){partly}"
            );
            // each node losing a little can still leave an output far below the rule's SNR
            // the last row compared: the rows are in the graph's order, the outputs last
            let last = report
                .rows
                .iter()
                .rev()
                .find_map(|r| r.metrics.as_ref().map(|m| (r.module.join(","), m.snr_db)));
            if let Some((name, snr)) = last.filter(|(_, snr)| *snr < min_snr) {
                println!(
                    "but the last row compared ({name}) is at {} dB SNR, below {min_snr} dB: the loss is spread over several nodes, none of which lost {min_drop} dB alone (the SNR-in and loss columns show where it accumulates)",
                    db(snr)
                );
            }
        }
    }
    Ok(())
}

/// dB for tables ([`etscope_core::analysis::diff::db_label`]).
fn db(x: f64) -> String {
    etscope_core::analysis::diff::db_label(x)
}

/// `etscope diff`'s arguments.
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    pub a: String,
    pub b: String,
    #[arg(long = "input", required = true)]
    pub inputs: Vec<std::path::PathBuf>,
    /// The program an `etdump:` source was captured from (default: the other side's .pte).
    #[arg(long)]
    pub etdump_program: Option<std::path::PathBuf>,
    /// A node diverges below this signal-to-noise ratio (dB)...
    #[arg(long, default_value_t = 20.0)]
    pub min_snr: f64,
    /// ...when it also lost at least this many dB against the error carried into it (0: any
    /// node below --min-snr diverges).
    #[arg(long, default_value_t = 10.0)]
    pub min_drop: f64,
    /// A node also diverges above this max abs error.
    #[arg(long)]
    pub max_abs: Option<f64>,
    /// The core and CMSIS-NN version a `.pte` side runs as on the host.
    #[command(flatten)]
    pub device: super::run::DeviceChoice,
    #[arg(long)]
    pub json: bool,
}

/// Runs `etscope diff` with its arguments.
pub fn main(args: DiffArgs) -> Result<()> {
    let DiffArgs {
        a,
        b,
        inputs,
        etdump_program,
        min_snr,
        min_drop,
        max_abs,
        device,
        json,
    } = args;
    run(
        &a,
        &b,
        &inputs,
        etdump_program.as_deref(),
        &device,
        etscope_core::analysis::diff::Threshold {
            min_snr_db: min_snr,
            min_drop_db: min_drop,
            max_abs: max_abs.unwrap_or(f64::INFINITY),
        },
        json,
    )
}
