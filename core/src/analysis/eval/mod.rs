//! Numerics over a dataset: two sources (A the reference, usually fp32; B the program that
//! ships) run on every sample, their outputs and matched groups compared, and the statistics
//! kept as accumulators that stream (memory does not grow with the samples) and merge exactly
//! ([`stats`]): the shards of a dataset merged give the numbers of one run, bit for bit.
//!
//! Per program output: top-1 agreement of A and B, each one's accuracy against labels, the
//! confusion matrix (labels, or A's prediction without them, against B's prediction), RMSE, MAE,
//! L2r (‖a − b‖ / ‖a‖ over every element), cosine, and the per-sample SNR's mean and minimum.
//! Per matched group (the diff's matching): the SNR's minimum, 5th percentile and median over
//! the samples, the SNR it was given (the lowest of the groups feeding it), RMSE in units of the
//! output's quantization scale for integer groups (≈ 0.29, 1/√12, is a well-quantized layer),
//! and the five worst samples.

pub mod stats;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::analysis::diff::{comparable_output, diff, DiffReport, Source, Threshold};
use stats::{DbHistogram, ExactSum, Worst};

/// How many worst samples a group keeps.
pub const WORST: usize = 5;

/// Why an evaluation cannot go on.
#[derive(Debug, Error)]
pub enum EvalError {
    #[error("sample {sample}: {detail}")]
    Sample { sample: u64, detail: String },
    #[error("the parts cannot be merged: {0}")]
    Merge(String),
}

/// One program output's accumulators.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct OutputAcc {
    index: usize,
    agree: u64,
    compared: u64,
    a_correct: u64,
    b_correct: u64,
    labelled: u64,
    /// Classes of the confusion matrix (the output's element count per sample).
    classes: usize,
    /// `classes × classes`, row: the label (A's prediction without labels), column: B's.
    confusion: Vec<u64>,
    sq_err: ExactSum,
    abs_err: ExactSum,
    sq_a: ExactSum,
    sq_b: ExactSum,
    dot: ExactSum,
    numel: u64,
    snr: DbHistogram,
}

/// One matched group's accumulators.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct GroupAcc {
    module: Vec<String>,
    a_instructions: Vec<usize>,
    b_instructions: Vec<usize>,
    snr: DbHistogram,
    snr_in: DbHistogram,
    /// The integer output's quantization scale (B's), when the group ends in one.
    scale: Option<f64>,
    sq_err: ExactSum,
    numel: u64,
    worst: Worst,
}

/// Where a part's samples came from: slice `shard` (1-based) of `shards` of a dataset of
/// `dataset_samples` samples.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slice {
    pub shard: u64,
    pub shards: u64,
    pub dataset_samples: u64,
}

impl Slice {
    /// The whole dataset.
    pub fn whole(dataset_samples: u64) -> Slice {
        Slice {
            shard: 1,
            shards: 1,
            dataset_samples,
        }
    }

    /// The sample indices of this slice (contiguous: slice k of n holds
    /// `[(k-1)·N/n, k·N/n)`).
    pub fn range(&self) -> std::ops::Range<u64> {
        let n = self.dataset_samples;
        let at = |k: u64| (u128::from(n) * u128::from(k) / u128::from(self.shards.max(1))) as u64;
        at(self.shard.saturating_sub(1))..at(self.shard)
    }
}

/// The evaluation's state: what a run of some samples has seen. Serializable as a part that
/// [`Evaluation::merge`] combines with the parts of the other slices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    pub a: String,
    pub b: String,
    pub samples: u64,
    /// The slices merged into this part (their `shard` numbers), of `shards`.
    pub shards_seen: Vec<u64>,
    pub shards: u64,
    pub dataset_samples: u64,
    matched_by: String,
    outputs: Vec<OutputAcc>,
    groups: Vec<GroupAcc>,
}

/// What went wrong with sample `index`, as an [`EvalError`].
fn sample_error(index: u64) -> impl Fn(String) -> EvalError {
    move |detail| EvalError::Sample {
        sample: index,
        detail,
    }
}

impl Evaluation {
    /// An empty evaluation of `a` against `b` over `slice`.
    pub fn new(a: &str, b: &str, slice: &Slice) -> Evaluation {
        Evaluation {
            a: a.to_string(),
            b: b.to_string(),
            samples: 0,
            shards_seen: vec![slice.shard],
            shards: slice.shards,
            dataset_samples: slice.dataset_samples,
            matched_by: String::new(),
            outputs: Vec::new(),
            groups: Vec::new(),
        }
    }

    /// Adds sample `index` from the two sources' runs on it (`label`: its class, if known).
    pub fn add(
        &mut self,
        index: u64,
        a: &Source,
        b: &Source,
        label: Option<i64>,
    ) -> Result<(), EvalError> {
        let fail = sample_error(index);
        // the outputs are compared whatever the matching; groups where the sources can be matched
        // (a program without its ETRecord has no module paths: outputs only, and said so)
        match diff(a, b, Threshold::default()) {
            Ok(report) if !self.matched_by.starts_with("none") => {
                self.add_groups(index, &report, b).map_err(&fail)?
            }
            Ok(_) => {}
            Err(e) if self.samples == 0 => self.matched_by = format!("none: {e}"),
            Err(e) if self.matched_by.starts_with("none") => drop(e),
            Err(e) => return Err(fail(e.to_string())),
        }
        self.add_outputs(index, a, b, label)
    }

    /// Adds sample `index` from the two sources' outputs alone (no group statistics: what the
    /// sensitivity sweep's table needs, from runs that capture nothing else).
    pub fn add_outputs(
        &mut self,
        index: u64,
        a: &Source,
        b: &Source,
        label: Option<i64>,
    ) -> Result<(), EvalError> {
        let fail = sample_error(index);
        let outputs = a.graph.outputs.len().min(b.graph.outputs.len());
        for k in 0..outputs {
            let Some(pair) = comparable_output(a, b, k) else {
                continue;
            };
            let (xa, xb, _) = pair.map_err(|e| fail(format!("output {k}: {e}")))?;
            self.add_output(k, &xa, &xb, label).map_err(&fail)?;
        }
        self.samples += 1;
        Ok(())
    }

    fn add_groups(&mut self, index: u64, report: &DiffReport, b: &Source) -> Result<(), String> {
        if self.groups.is_empty() && self.samples == 0 {
            self.matched_by = report.matched_by.clone();
            self.groups = report
                .rows
                .iter()
                .map(|r| GroupAcc {
                    module: r.module.clone(),
                    a_instructions: r.a_instructions.clone(),
                    b_instructions: r.b_instructions.clone(),
                    snr: DbHistogram::default(),
                    snr_in: DbHistogram::default(),
                    scale: group_scale(b, &r.b_nodes),
                    sq_err: ExactSum::default(),
                    numel: 0,
                    worst: Worst::new(WORST),
                })
                .collect();
        }
        if report.rows.len() != self.groups.len() {
            return Err(format!(
                "{} matched groups, the samples before had {}: the sources changed their matching",
                report.rows.len(),
                self.groups.len()
            ));
        }
        for (g, r) in self.groups.iter_mut().zip(&report.rows) {
            let Some(m) = r.metrics else { continue };
            g.snr.add(m.snr_db);
            if let Some(s) = r.snr_in_db {
                g.snr_in.add(s);
            }
            g.sq_err.add(m.mse * m.numel as f64);
            g.numel += m.numel as u64;
            g.worst.add(m.snr_db, index);
        }
        Ok(())
    }

    fn add_output(
        &mut self,
        k: usize,
        a: &[f64],
        b: &[f64],
        label: Option<i64>,
    ) -> Result<(), String> {
        if a.len() != b.len() || a.is_empty() {
            return Err(format!(
                "output {k}: {} against {} values",
                a.len(),
                b.len()
            ));
        }
        let pos = match self.outputs.iter().position(|o| o.index == k) {
            Some(p) => p,
            None => {
                self.outputs.push(OutputAcc {
                    index: k,
                    agree: 0,
                    compared: 0,
                    a_correct: 0,
                    b_correct: 0,
                    labelled: 0,
                    classes: a.len(),
                    confusion: vec![0; a.len().saturating_mul(a.len()).min(1 << 20)],
                    sq_err: ExactSum::default(),
                    abs_err: ExactSum::default(),
                    sq_a: ExactSum::default(),
                    sq_b: ExactSum::default(),
                    dot: ExactSum::default(),
                    numel: 0,
                    snr: DbHistogram::default(),
                });
                self.outputs.len() - 1
            }
        };
        let o = &mut self.outputs[pos];
        if o.classes != a.len() {
            return Err(format!(
                "output {k} has {} values; earlier samples had {}",
                a.len(),
                o.classes
            ));
        }
        let (pa, pb) = (argmax(a), argmax(b));
        o.compared += 1;
        o.agree += u64::from(pa == pb);
        let truth = match label {
            Some(l) => {
                o.labelled += 1;
                let l = usize::try_from(l).ok();
                o.a_correct += u64::from(l == Some(pa));
                o.b_correct += u64::from(l == Some(pb));
                l
            }
            None => Some(pa),
        };
        if let Some(t) = truth.filter(|&t| t < o.classes) {
            if let Some(cell) = o.confusion.get_mut(t * o.classes + pb) {
                *cell += 1;
            }
        }
        let (mut signal, mut noise) = (ExactSum::default(), ExactSum::default());
        for (&x, &y) in a.iter().zip(b) {
            let d = x - y;
            o.sq_err.add(d * d);
            o.abs_err.add(d.abs());
            o.sq_a.add(x * x);
            o.sq_b.add(y * y);
            o.dot.add(x * y);
            signal.add(x * x);
            noise.add(d * d);
        }
        o.numel += a.len() as u64;
        o.snr.add(snr_db(signal.value(), noise.value()));
        Ok(())
    }

    /// Adds `other`'s samples (another slice of the same dataset, the same two sources).
    pub fn merge(&mut self, other: &Evaluation) -> Result<(), EvalError> {
        let bad = |why: String| Err(EvalError::Merge(why));
        if other.a != self.a || other.b != self.b {
            return bad(format!(
                "one part compares {} with {}, the other {} with {}",
                self.a, self.b, other.a, other.b
            ));
        }
        if other.shards != self.shards || other.dataset_samples != self.dataset_samples {
            return bad(format!(
                "one part is of {} slices of {} samples, the other of {} of {}",
                self.shards, self.dataset_samples, other.shards, other.dataset_samples
            ));
        }
        if let Some(s) = other
            .shards_seen
            .iter()
            .find(|s| self.shards_seen.contains(s))
        {
            return bad(format!("slice {s} is in both parts"));
        }
        if self.samples == 0 {
            let seen = self.shards_seen.clone();
            *self = other.clone();
            self.shards_seen.extend(seen);
            self.shards_seen.sort_unstable();
            return Ok(());
        }
        if other.samples > 0 {
            if other.groups.len() != self.groups.len()
                || other
                    .groups
                    .iter()
                    .zip(&self.groups)
                    .any(|(x, y)| x.module != y.module || x.b_instructions != y.b_instructions)
            {
                return bad("the parts matched their groups differently".into());
            }
            for (g, o) in self.groups.iter_mut().zip(&other.groups) {
                g.snr.merge(&o.snr);
                g.snr_in.merge(&o.snr_in);
                g.sq_err.merge(&o.sq_err);
                g.numel += o.numel;
                g.worst.merge(&o.worst);
            }
            for o in &other.outputs {
                match self.outputs.iter_mut().find(|x| x.index == o.index) {
                    Some(x) if x.classes == o.classes => x.merge(o),
                    Some(_) => return bad(format!("output {} differs in size", o.index)),
                    None => self.outputs.push(o.clone()),
                }
            }
            self.outputs.sort_by_key(|o| o.index);
        }
        self.samples += other.samples;
        self.shards_seen.extend(&other.shards_seen);
        self.shards_seen.sort_unstable();
        Ok(())
    }

    /// The numbers, as `eval --json` prints them.
    pub fn summary(&self) -> Summary {
        Summary {
            samples: self.samples,
            complete: self.shards_seen.len() as u64 == self.shards,
            matched_by: self.matched_by.clone(),
            outputs: self.outputs.iter().map(OutputAcc::summary).collect(),
            groups: self.groups.iter().map(GroupAcc::summary).collect(),
        }
    }
}

impl OutputAcc {
    fn merge(&mut self, o: &OutputAcc) {
        self.agree += o.agree;
        self.compared += o.compared;
        self.a_correct += o.a_correct;
        self.b_correct += o.b_correct;
        self.labelled += o.labelled;
        for (x, y) in self.confusion.iter_mut().zip(&o.confusion) {
            *x += y;
        }
        self.sq_err.merge(&o.sq_err);
        self.abs_err.merge(&o.abs_err);
        self.sq_a.merge(&o.sq_a);
        self.sq_b.merge(&o.sq_b);
        self.dot.merge(&o.dot);
        self.numel += o.numel;
        self.snr.merge(&o.snr);
    }

    fn summary(&self) -> OutputSummary {
        let ratio = |n: u64, d: u64| (d > 0).then(|| n as f64 / d as f64);
        let numel = self.numel.max(1) as f64;
        let (sa, sb) = (self.sq_a.value(), self.sq_b.value());
        OutputSummary {
            index: self.index,
            top1_agreement: ratio(self.agree, self.compared),
            a_accuracy: ratio(self.a_correct, self.labelled),
            b_accuracy: ratio(self.b_correct, self.labelled),
            rmse: (self.sq_err.value() / numel).sqrt(),
            mae: self.abs_err.value() / numel,
            l2r: finite_or_none(self.sq_err.value().sqrt() / sa.sqrt()),
            cosine: finite_or_none(self.dot.value() / (sa.sqrt() * sb.sqrt())),
            snr_db_mean: self.snr.mean_finite(),
            snr_db_min: self.snr.min(),
            confusion: self
                .confusion
                .chunks(self.classes.max(1))
                .map(|r| r.to_vec())
                .collect(),
        }
    }
}

impl GroupAcc {
    fn summary(&self) -> GroupSummary {
        let rmse = (self.numel > 0).then(|| (self.sq_err.value() / self.numel as f64).sqrt());
        GroupSummary {
            module: self.module.join("/"),
            a_instructions: self.a_instructions.clone(),
            b_instructions: self.b_instructions.clone(),
            snr_db_min: self.snr.min(),
            snr_db_p5: self.snr.quantile(0.05),
            snr_db_median: self.snr.quantile(0.5),
            snr_db_quartiles: [
                self.snr.quantile(0.25),
                self.snr.quantile(0.75),
                self.snr.quantile(0.95),
            ],
            snr_in_db_median: self.snr_in.quantile(0.5),
            rmse_over_scale: match (rmse, self.scale) {
                (Some(r), Some(s)) if s > 0.0 => Some(r / s),
                _ => None,
            },
            worst_samples: self.worst.samples(),
        }
    }
}

/// What `eval --json` prints (`docs/cli-json.md`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub samples: u64,
    /// Every slice of the dataset is in (a lone shard's summary says `false`).
    pub complete: bool,
    pub matched_by: String,
    pub outputs: Vec<OutputSummary>,
    pub groups: Vec<GroupSummary>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutputSummary {
    pub index: usize,
    pub top1_agreement: Option<f64>,
    /// `None` without labels.
    pub a_accuracy: Option<f64>,
    pub b_accuracy: Option<f64>,
    pub rmse: f64,
    pub mae: f64,
    pub l2r: Option<f64>,
    pub cosine: Option<f64>,
    pub snr_db_mean: Option<f64>,
    pub snr_db_min: Option<f64>,
    pub confusion: Vec<Vec<u64>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupSummary {
    pub module: String,
    pub a_instructions: Vec<usize>,
    pub b_instructions: Vec<usize>,
    pub snr_db_min: Option<f64>,
    pub snr_db_p5: Option<f64>,
    pub snr_db_median: Option<f64>,
    /// The 25th, 75th and 95th percentiles (with min, p5 and median: a box plot).
    pub snr_db_quartiles: [Option<f64>; 3],
    /// The median SNR the group was given (the lowest of the groups feeding it).
    pub snr_in_db_median: Option<f64>,
    pub rmse_over_scale: Option<f64>,
    pub worst_samples: Vec<u64>,
}

fn finite_or_none(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// The index of the largest value (the first of equals); NaN never wins.
fn argmax(v: &[f64]) -> usize {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] || v[best].is_nan() {
            best = i;
        }
    }
    best
}

/// 10·log10(signal / noise): `+inf` when equal, NaN when both are zero.
fn snr_db(signal: f64, noise: f64) -> f64 {
    if noise == 0.0 {
        return if signal == 0.0 {
            f64::NAN
        } else {
            f64::INFINITY
        };
    }
    10.0 * (signal / noise).log10()
}

/// B's quantization scale of the integer tensor a group ends in.
fn group_scale(b: &Source, nodes: &[crate::ir::NodeId]) -> Option<f64> {
    let last = *nodes.iter().max()?;
    let out = *b.graph.nodes.get(last)?.outputs.first()?;
    let v = b.graph.values.get(out)?;
    if !v.dtype.is_some_and(|d| d.is_integer()) {
        return None;
    }
    v.quant.as_ref().map(|q| q.scale)
}
