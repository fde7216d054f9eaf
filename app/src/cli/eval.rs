//! `etscope eval A B --data D [--labels L] [--jobs N] [--shard K/N] [--json]`: A (the
//! reference) and B run on every sample of a dataset, their outputs and matched groups
//! compared ([`etscope_core::analysis::eval`]); `eval --merge PART.json…` combines the
//! `--json` documents of shards into the numbers of one run.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use etscope_core::analysis::diff_sources::PreparedSource;
use etscope_core::analysis::eval::{Evaluation, Slice, Summary};

use super::run::DeviceChoice;
use crate::eval_runner::{evaluate, Data, Progress};
use crate::load;
use crate::load::dataset::{labels, Dataset};
use crate::table::Table;

/// A side: a program (its sibling ETRecord, when it belongs to it, gives module paths) or
/// `FILE.etrecord#STAGE`.
pub(super) fn prepare(spec: &str, choice: &DeviceChoice) -> Result<PreparedSource> {
    if let Some((file, stage)) = spec.split_once('#') {
        let file = Path::new(file);
        let rec = load::etrecord(file)?;
        let device = choice.device_for_stage()?;
        return PreparedSource::stage(spec, &rec, &file.display().to_string(), stage, device)
            .with_context(|| spec.to_string());
    }
    let (program, rec) = super::diff::program_and_record(Path::new(spec))?;
    let device = choice.device(&program, program.default_plan_index())?;
    PreparedSource::program(
        spec,
        &program,
        rec.as_ref().map(|(r, export)| (r, export.as_str())),
        Some(device),
    )
    .with_context(|| spec.to_string())
}

/// `K/N` (1-based).
fn parse_shard(s: &str) -> Result<(u64, u64)> {
    let (k, n) = s
        .split_once('/')
        .ok_or_else(|| anyhow!("--shard {s}: expected K/N, e.g. 2/8"))?;
    let (k, n): (u64, u64) = (
        k.trim()
            .parse()
            .map_err(|_| anyhow!("--shard {s}: K is not a number"))?,
        n.trim()
            .parse()
            .map_err(|_| anyhow!("--shard {s}: N is not a number"))?,
    );
    if n == 0 || k == 0 || k > n {
        bail!("--shard {s}: K must be 1..=N");
    }
    Ok((k, n))
}

#[allow(clippy::too_many_arguments)]
pub fn run(
    a: &str,
    b: &str,
    data: &Path,
    labels_path: Option<&Path>,
    jobs: Option<usize>,
    shard: Option<&str>,
    sweep: super::eval_sensitivity::Sweep,
    board: Option<Option<usize>>,
    choice: &DeviceChoice,
    as_json: bool,
) -> Result<()> {
    let side_a = prepare(a, choice)?;
    let side_b = prepare(b, choice)?;
    let shapes = side_a.graph.input_shapes();
    let dataset = Dataset::open(data, shapes.len())?;
    if dataset.is_empty() {
        bail!("{}: no samples", data.display());
    }
    let labels = match labels_path {
        Some(p) => {
            let l = labels(p)?;
            if l.len() != dataset.len() {
                bail!(
                    "{}: {} labels for {} samples",
                    p.display(),
                    l.len(),
                    dataset.len()
                );
            }
            Some(l)
        }
        None => None,
    };
    let (k, n) = shard.map(parse_shard).transpose()?.unwrap_or((1, 1));
    let slice = Slice {
        shard: k,
        shards: n,
        dataset_samples: dataset.len() as u64,
    };
    let d = Data {
        path: data,
        slice,
        jobs: jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .clamp(1, 256),
        progress: if std::io::stderr().is_terminal() && !as_json {
            Progress::Stderr
        } else {
            Progress::Silent
        },
        dataset,
        labels,
        shapes,
    };
    let eval = evaluate(a, b, &side_a, &side_b, &d)?;
    let rows = match sweep {
        super::eval_sensitivity::Sweep::Off => None,
        _ => Some(super::eval_sensitivity::sweep(
            a, b, &side_a, &d, choice, &eval, sweep,
        )?),
    };
    let board = board.map(|limit| board_over(b, &d, limit)).transpose()?;
    print(&eval, rows.as_deref(), board.as_ref(), as_json)
}

/// `--board [--limit N]`: B (a `.pte`) on the emulated board for the slice's first `limit`
/// samples (all by default).
fn board_over(
    b: &str,
    d: &Data<'_>,
    limit: Option<usize>,
) -> Result<crate::board_check::BoardCheck> {
    if b.contains('#') {
        bail!("eval --board runs a program on the board: {b} is a lowering stage, not a .pte");
    }
    let program = load::program(Path::new(b))?;
    let range = d.slice.range();
    let total = (range.end - range.start) as usize;
    let n = limit.map_or(total, |l| l.min(total));
    let mut samples = (range.start..range.start + n as u64).map(|i| {
        d.dataset
            .sample(i as usize, &d.shapes)
            .map(|inputs| (i, inputs))
            .with_context(|| format!("{}: sample {i}", d.path.display()))
    });
    let show = matches!(d.progress, Progress::Stderr);
    let result = crate::board_check::check(b, &program, &mut samples, &mut |done| {
        if show {
            eprint!("\rboard: {done} / {n} samples");
        }
        true
    });
    if show {
        eprintln!();
    }
    result
}

/// `eval --merge PART.json…`: the parts' accumulators merged.
pub fn merge(parts: &[PathBuf], as_json: bool) -> Result<()> {
    let mut merged: Option<Evaluation> = None;
    for p in parts {
        let text =
            std::fs::read_to_string(p).with_context(|| format!("{}: cannot read", p.display()))?;
        let doc: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("{}: not JSON", p.display()))?;
        let part: Evaluation =
            serde_json::from_value(doc.get("part").cloned().ok_or_else(|| {
                anyhow!("{}: no \"part\" (write it with eval --json)", p.display())
            })?)
            .with_context(|| format!("{}: not an etscope eval part", p.display()))?;
        match &mut merged {
            None => merged = Some(part),
            Some(m) => m.merge(&part).with_context(|| p.display().to_string())?,
        }
    }
    let merged = merged.ok_or_else(|| anyhow!("eval --merge: no parts given"))?;
    print(&merged, None, None, as_json)
}

fn print(
    eval: &Evaluation,
    sensitivity: Option<&[super::eval_sensitivity::Variant]>,
    board: Option<&crate::board_check::BoardCheck>,
    as_json: bool,
) -> Result<()> {
    let summary = eval.summary();
    if as_json {
        let mut doc = serde_json::to_value(&summary)?;
        if let Some(b) = board {
            doc["board"] = serde_json::to_value(b)?;
        }
        if let Some(rows) = sensitivity {
            doc["sensitivity"] = serde_json::to_value(rows)?;
            doc["sensitivity_note"] = super::eval_sensitivity::NO_INT16.into();
        }
        doc["part"] = serde_json::to_value(eval)?;
        return super::print_json(&doc);
    }
    print_text(eval, &summary);
    if let Some(rows) = sensitivity {
        super::eval_sensitivity::print_table(rows);
    }
    if let Some(b) = board {
        crate::board_check::print_text(b);
    }
    Ok(())
}

fn print_text(eval: &Evaluation, s: &Summary) {
    let pct = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{:.2}%", v * 100.0));
    let db = |x: Option<f64>| x.map_or("-".to_string(), etscope_core::analysis::diff::db_label);
    println!(
        "A {}  B {}  · {} samples{}",
        eval.a,
        eval.b,
        s.samples,
        if s.complete {
            ""
        } else {
            " (a shard: merge the others with eval --merge)"
        }
    );
    let mut t = Table::new(&[
        "output",
        "top-1 agree",
        "A acc",
        "B acc",
        "RMSE",
        "MAE",
        "L2r",
        "cosine",
        "SNR mean",
        "SNR min",
    ]);
    for o in &s.outputs {
        t.row(vec![
            o.index.to_string(),
            pct(o.top1_agreement),
            pct(o.a_accuracy),
            pct(o.b_accuracy),
            format!("{:.3e}", o.rmse),
            format!("{:.3e}", o.mae),
            o.l2r.map_or("-".into(), |v| format!("{v:.4}")),
            o.cosine.map_or("-".into(), |v| format!("{v:.5}")),
            db(o.snr_db_mean),
            db(o.snr_db_min),
        ]);
    }
    print!("{}", t.render());
    let mut t = Table::new(&[
        "group",
        "SNR min",
        "p5",
        "median",
        "given",
        "rmse/scale",
        "worst samples",
    ]);
    for g in &s.groups {
        t.row(vec![
            if g.module.is_empty() {
                format!("instr {:?}", g.b_instructions)
            } else {
                g.module.clone()
            },
            db(g.snr_db_min),
            db(g.snr_db_p5),
            db(g.snr_db_median),
            db(g.snr_in_db_median),
            g.rmse_over_scale.map_or("-".into(), |v| format!("{v:.2}")),
            format!("{:?}", g.worst_samples),
        ]);
    }
    print!("{}", t.render());
}

/// `etscope eval`'s arguments.
#[derive(Debug, clap::Args)]
pub struct EvalArgs {
    /// The reference (a .pte, or FILE.etrecord#STAGE); omitted with --merge.
    #[arg(required_unless_present = "merge")]
    pub a: Option<String>,
    /// The program compared with it.
    #[arg(required_unless_present = "merge")]
    pub b: Option<String>,
    /// A folder of .npy samples, or one .npy/.npz whose leading dimension is the sample.
    #[arg(long, required_unless_present = "merge")]
    pub data: Option<std::path::PathBuf>,
    /// Class indices, one per sample (.npy).
    #[arg(long)]
    pub labels: Option<std::path::PathBuf>,
    /// Samples run in parallel (default: every core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Run the K-th of N contiguous slices of the dataset (`K/N`).
    #[arg(long)]
    pub shard: Option<String>,
    /// Also run B with each weighted layer kept in float (B's ETRecord beside it) and rank
    /// the variants by what they recover, with their arena and flash bytes.
    #[arg(long)]
    pub sensitivity: bool,
    /// With --sensitivity: only the float variants (each weighted layer in float alone),
    /// not the only-quantized ones (every other layer in float), which take as long again.
    #[arg(long, requires = "sensitivity")]
    pub float_only: bool,
    /// Write B with these groups kept in float (what --sensitivity names them) to `-o`, and
    /// evaluate that program instead of B.
    #[arg(long, value_delimiter = ',', requires = "out")]
    pub keep_float: Vec<String>,
    /// Where --keep-float writes the mixed program (.pte).
    #[arg(short = 'o', long = "out")]
    pub out: Option<std::path::PathBuf>,
    /// Merge these `eval --json` documents (shards of one dataset) instead of running.
    #[arg(long, num_args = 1.., conflicts_with_all = ["a", "b", "data", "shard"])]
    pub merge: Vec<std::path::PathBuf>,
    /// Also run B (a .pte) on the emulated board (QEMU Cortex-M55) for each sample and say
    /// where the board's outputs differ from the host's, instruction by instruction (they
    /// must not). One boot per sample.
    #[arg(long, conflicts_with = "merge")]
    pub board: bool,
    /// With --board: the board runs only the first N samples (of the slice).
    #[arg(long, requires = "board")]
    pub limit: Option<usize>,
    #[command(flatten)]
    pub device: super::run::DeviceChoice,
    #[arg(long)]
    pub json: bool,
}

/// Runs `etscope eval` with its arguments.
pub fn main(args: EvalArgs) -> Result<()> {
    let EvalArgs {
        a,
        b,
        data,
        labels,
        jobs,
        shard,
        sensitivity,
        float_only,
        keep_float,
        out,
        merge,
        board,
        limit,
        device,
        json,
    } = args;
    match (a, b, data) {
        (Some(a), Some(b), Some(data)) if merge.is_empty() => {
            let b = match out.as_deref().filter(|_| !keep_float.is_empty()) {
                Some(out) => super::eval_sensitivity::write_mixed(&b, &keep_float, out, &device)?,
                None => b,
            };
            run(
                &a,
                &b,
                &data,
                labels.as_deref(),
                jobs,
                shard.as_deref(),
                match (sensitivity, float_only) {
                    (false, _) => super::eval_sensitivity::Sweep::Off,
                    (true, true) => super::eval_sensitivity::Sweep::FloatOnly,
                    (true, false) => super::eval_sensitivity::Sweep::All,
                },
                board.then_some(limit),
                &device,
                json,
            )
        }
        _ => self::merge(&merge, json),
    }
}
