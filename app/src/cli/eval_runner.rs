//! One evaluation over the data: A and B run on every sample of a slice, the samples spread
//! over the jobs, their accumulators merged exactly. `eval` and its sensitivity sweep both run
//! through it.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{anyhow, Context, Result};
use etscope_core::analysis::diff_sources::PreparedSource;
use etscope_core::analysis::eval::{Evaluation, Slice};

use crate::load::dataset::Dataset;

/// What every run over the data shares.
pub(super) struct Data<'a> {
    pub path: &'a Path,
    pub dataset: Dataset,
    pub labels: Option<Vec<i64>>,
    pub shapes: Vec<Vec<usize>>,
    pub slice: Slice,
    pub jobs: usize,
    pub show: bool,
}

/// A against B over the slice, the samples spread over the jobs (merged exactly).
pub(super) fn evaluate(
    a: &str,
    b: &str,
    side_a: &PreparedSource,
    side_b: &PreparedSource,
    d: &Data<'_>,
) -> Result<Evaluation> {
    let range = d.slice.range();
    let done = AtomicU64::new(0);
    let total = range.end - range.start;
    let jobs = d.jobs as u64;
    let chunks: Vec<std::ops::Range<u64>> = (0..jobs)
        .map(|j| {
            let at = |j: u64| range.start + total * j / jobs;
            at(j)..at(j + 1)
        })
        .filter(|r| !r.is_empty())
        .collect();
    let parts: Vec<Result<Evaluation>> = std::thread::scope(|scope| {
        let workers: Vec<_> = chunks
            .iter()
            .map(|r| {
                let done = &done;
                let r = r.clone();
                scope.spawn(move || -> Result<Evaluation> {
                    let mut eval = Evaluation::new(a, b, &d.slice);
                    for i in r {
                        let inputs = d
                            .dataset
                            .sample(i as usize, &d.shapes)
                            .with_context(|| format!("{}: sample {i}", d.path.display()))?;
                        let sa = side_a
                            .run(&inputs, None)
                            .with_context(|| format!("{a}: sample {i}"))?;
                        let sb = side_b
                            .run(&inputs, None)
                            .with_context(|| format!("{b}: sample {i}"))?;
                        let label = d.labels.as_ref().and_then(|l| l.get(i as usize).copied());
                        eval.add(i, &sa, &sb, label)?;
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(eval)
                })
            })
            .collect();
        while d.show && workers.iter().any(|w| !w.is_finished()) {
            eprint!("\r{b}: {} / {total} samples", done.load(Ordering::Relaxed));
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|_| Err(anyhow!("an eval worker panicked (a bug)")))
            })
            .collect()
    });
    if d.show {
        eprintln!("\r{b}: {total} / {total} samples");
    }
    let mut eval = Evaluation::new(a, b, &d.slice);
    for part in parts {
        // the workers are one slice: their accumulators add up exactly
        merge_samples(&mut eval, &part?)?;
    }
    Ok(eval)
}

/// Adds a worker's samples (the same slice) to `eval`.
pub(super) fn merge_samples(eval: &mut Evaluation, part: &Evaluation) -> Result<()> {
    let mut part = part.clone();
    // within one slice the workers share its number: merge them as distinct pieces
    part.shards_seen = vec![u64::MAX];
    let seen = eval.shards_seen.clone();
    eval.merge(&part)?;
    eval.shards_seen = seen;
    Ok(())
}
