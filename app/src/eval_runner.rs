//! One evaluation over the data: A and B run on every sample of a slice, the samples spread
//! over the jobs, their accumulators merged exactly. `eval`, its sensitivity sweep and the
//! window's Diff ▸ over a dataset all run through it; progress goes to the terminal or to the
//! window's job, which can cancel it.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{anyhow, Context, Result};
use etscope_core::analysis::diff_sources::PreparedSource;
use etscope_core::analysis::eval::{Evaluation, Slice};
use etscope_core::tensor::TensorData;

use crate::load::dataset::Dataset;

/// Where a run over the data reports how far it is.
pub enum Progress<'a> {
    Silent,
    /// A line on the terminal's standard error.
    Stderr,
    /// The window's job: its progress bar, and its cancel button stops the workers.
    Job(&'a crate::job::JobHandle),
}

/// What every run over the data shares.
pub struct Data<'a> {
    pub path: &'a Path,
    pub dataset: Dataset,
    pub labels: Option<Vec<i64>>,
    pub shapes: Vec<Vec<usize>>,
    pub slice: Slice,
    pub jobs: usize,
    pub progress: Progress<'a>,
}

/// The slice's samples spread over the jobs: each worker starts from `init()` and folds its
/// samples into it with `step(acc, index, inputs)`; returns the workers' accumulators in slice
/// order. `what` names the work on the progress line.
fn spread<T: Send>(
    what: &str,
    d: &Data<'_>,
    init: impl Fn() -> T + Sync,
    step: impl Fn(&mut T, u64, &[TensorData]) -> Result<()> + Sync,
) -> Result<Vec<T>> {
    let range = d.slice.range();
    let done = AtomicU64::new(0);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let total = range.end - range.start;
    let jobs = d.jobs as u64;
    let chunks: Vec<std::ops::Range<u64>> = (0..jobs)
        .map(|j| {
            let at = |j: u64| range.start + total * j / jobs;
            at(j)..at(j + 1)
        })
        .filter(|r| !r.is_empty())
        .collect();
    let parts: Vec<Result<T>> = std::thread::scope(|scope| {
        let workers: Vec<_> = chunks
            .iter()
            .map(|r| {
                let (done, stop, init, step) = (&done, &stop, &init, &step);
                let r = r.clone();
                scope.spawn(move || -> Result<T> {
                    let mut acc = init();
                    for i in r {
                        if stop.load(Ordering::Relaxed) {
                            return Err(anyhow!("cancelled"));
                        }
                        let inputs = d
                            .dataset
                            .sample(i as usize, &d.shapes)
                            .with_context(|| format!("{}: sample {i}", d.path.display()))?;
                        step(&mut acc, i, &inputs)?;
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(acc)
                })
            })
            .collect();
        while !matches!(d.progress, Progress::Silent) && workers.iter().any(|w| !w.is_finished()) {
            let n = done.load(Ordering::Relaxed);
            match d.progress {
                Progress::Stderr => eprint!("\r{what}: {n} / {total} samples"),
                Progress::Job(handle) => {
                    handle.progress(n, total);
                    if handle.cancelled() {
                        stop.store(true, Ordering::Relaxed);
                    }
                }
                Progress::Silent => {}
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|_| Err(anyhow!("an eval worker panicked (a bug)")))
            })
            .collect()
    });
    if matches!(d.progress, Progress::Stderr) {
        eprintln!("\r{what}: {total} / {total} samples");
    }
    parts.into_iter().collect()
}

/// The workers' evaluations of one slice as one (their accumulators add up exactly).
fn merged(a: &str, b: &str, d: &Data<'_>, parts: Vec<Evaluation>) -> Result<Evaluation> {
    let mut eval = Evaluation::new(a, b, &d.slice);
    for part in &parts {
        merge_samples(&mut eval, part)?;
    }
    Ok(eval)
}

/// A against B over the slice, the samples spread over the jobs (merged exactly).
pub fn evaluate(
    a: &str,
    b: &str,
    side_a: &PreparedSource,
    side_b: &PreparedSource,
    d: &Data<'_>,
) -> Result<Evaluation> {
    let parts = spread(
        b,
        d,
        || Evaluation::new(a, b, &d.slice),
        |eval, i, inputs| {
            let sa = side_a
                .run(inputs, None)
                .with_context(|| format!("{a}: sample {i}"))?;
            let sb = side_b
                .run(inputs, None)
                .with_context(|| format!("{b}: sample {i}"))?;
            let label = d.labels.as_ref().and_then(|l| l.get(i as usize).copied());
            eval.add(i, &sa, &sb, label)?;
            Ok(())
        },
    )?;
    merged(a, b, d, parts)
}

/// A's outputs on every sample of the slice, in slice order: run once, then compared with
/// every variant of the sensitivity sweep.
pub fn outputs_of(a: &str, side_a: &PreparedSource, d: &Data<'_>) -> Result<Vec<Vec<TensorData>>> {
    let parts = spread(a, d, Vec::new, |outs, i, inputs| {
        outs.push(
            side_a
                .run_outputs(inputs, None)
                .with_context(|| format!("{a}: sample {i}"))?,
        );
        Ok(())
    })?;
    Ok(parts.into_iter().flatten().collect())
}

/// A's outputs (`a_outputs`, from [`outputs_of`] over the same slice) against B's over the
/// slice: output statistics only, B run without capturing anything else.
pub fn evaluate_outputs(
    a: &str,
    b: &str,
    side_a: &PreparedSource,
    a_outputs: &[Vec<TensorData>],
    side_b: &PreparedSource,
    d: &Data<'_>,
) -> Result<Evaluation> {
    let start = d.slice.range().start;
    let parts = spread(
        b,
        d,
        || Evaluation::new(a, b, &d.slice),
        |eval, i, inputs| {
            let outs_a = usize::try_from(i - start)
                .ok()
                .and_then(|k| a_outputs.get(k))
                .ok_or_else(|| anyhow!("{a}: no outputs kept for sample {i}"))?;
            let outs_b = side_b
                .run_outputs(inputs, None)
                .with_context(|| format!("{b}: sample {i}"))?;
            let label = d.labels.as_ref().and_then(|l| l.get(i as usize).copied());
            eval.add_outputs(
                i,
                &side_a.outputs_source(outs_a),
                &side_b.outputs_source(&outs_b),
                label,
            )?;
            Ok(())
        },
    )?;
    merged(a, b, d, parts)
}

/// Adds a worker's samples (the same slice) to `eval`.
pub fn merge_samples(eval: &mut Evaluation, part: &Evaluation) -> Result<()> {
    let mut part = part.clone();
    // within one slice the workers share its number: merge them as distinct pieces
    part.shards_seen = vec![u64::MAX];
    let seen = eval.shards_seen.clone();
    eval.merge(&part)?;
    eval.shards_seen = seen;
    Ok(())
}
