//! Statistics over a dataset that stream and merge exactly: memory does not grow with the
//! number of samples, and the statistics of shards merged equal those of one run bit for bit,
//! whatever the order the samples came in.
//!
//! - [`ExactSum`] — a sum of `f64`s kept exactly (Shewchuk's non-overlapping partials, as
//!   Python's `math.fsum`), read correctly rounded: the same multiset of terms gives the same
//!   result in any order.
//! - [`DbHistogram`] — a value in dB per sample in fixed 0.01 dB bins, with its exact minimum
//!   and mean: percentiles at the bins' resolution, merged by adding counts.
//! - [`Worst`] — the k samples with the lowest value, ties broken by sample index.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// An exact running sum of `f64` values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExactSum {
    /// Non-overlapping partials, smallest magnitude first; their exact sum is the sum.
    partials: Vec<f64>,
    /// Infinities and NaNs added (they make the sum non-finite; kept apart so the partials
    /// stay exact).
    non_finite: f64,
}

impl ExactSum {
    pub fn add(&mut self, x: f64) {
        if !x.is_finite() {
            self.non_finite += x;
            return;
        }
        let mut x = x;
        let mut i = 0;
        for j in 0..self.partials.len() {
            let mut y = self.partials[j];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                self.partials[i] = lo;
                i += 1;
            }
            x = hi;
        }
        self.partials.truncate(i);
        self.partials.push(x);
    }

    /// Adds everything `other` holds (exact).
    pub fn merge(&mut self, other: &ExactSum) {
        for &p in &other.partials {
            self.add(p);
        }
        self.non_finite += other.non_finite;
    }

    /// The sum, correctly rounded to `f64`.
    pub fn value(&self) -> f64 {
        if self.non_finite != 0.0 || self.non_finite.is_nan() {
            return self.non_finite;
        }
        // fsum's final step: add from the largest partial down, then correct the rounding of
        // the last addition when the rest lies exactly halfway
        let p = &self.partials;
        let Some(mut n) = p.len().checked_sub(1) else {
            return 0.0;
        };
        let mut hi = p[n];
        let mut lo = 0.0;
        while n > 0 {
            n -= 1;
            let x = hi;
            let y = p[n];
            hi = x + y;
            let yr = hi - x;
            lo = y - yr;
            if lo != 0.0 {
                break;
            }
        }
        if n > 0 && ((lo < 0.0 && p[n - 1] < 0.0) || (lo > 0.0 && p[n - 1] > 0.0)) {
            let y = lo * 2.0;
            let x = hi + y;
            if y == x - hi {
                hi = x;
            }
        }
        hi
    }
}

/// Bins per dB of a [`DbHistogram`].
const BINS_PER_DB: f64 = 100.0;

/// Values in dB, one per sample.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DbHistogram {
    /// Finite values by bin (`floor(value · 100)`).
    bins: BTreeMap<i64, u64>,
    /// `+inf` values (equal tensors).
    infinite: u64,
    /// `-inf` values (an all-zero reference against a non-zero tensor: no signal, some noise),
    /// counted apart: a bin index cannot hold them.
    #[serde(default)]
    neg_infinite: u64,
    /// NaN values (nothing to compare: an all-zero reference and error).
    undefined: u64,
    count: u64,
    min: Option<f64>,
    sum: ExactSum,
}

impl DbHistogram {
    pub fn add(&mut self, db: f64) {
        self.count += 1;
        if db.is_nan() {
            self.undefined += 1;
            return;
        }
        self.min = Some(self.min.map_or(db, |m| m.min(db)));
        if db == f64::INFINITY {
            self.infinite += 1;
            return;
        }
        if db == f64::NEG_INFINITY {
            self.neg_infinite += 1;
            return;
        }
        // finite dB values of f64 tensors lie within ±3,100 dB: far inside the bins' range
        let bin = (db * BINS_PER_DB)
            .floor()
            .clamp(i64::MIN as f64, i64::MAX as f64) as i64;
        *self.bins.entry(bin).or_default() += 1;
        self.sum.add(db);
    }

    pub fn merge(&mut self, other: &DbHistogram) {
        for (&b, &n) in &other.bins {
            *self.bins.entry(b).or_default() += n;
        }
        self.infinite += other.infinite;
        self.neg_infinite += other.neg_infinite;
        self.undefined += other.undefined;
        self.count += other.count;
        self.min = match (self.min, other.min) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.sum.merge(&other.sum);
    }

    /// Samples counted.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The exact minimum (`None` without a comparable sample).
    pub fn min(&self) -> Option<f64> {
        self.min
    }

    /// The mean of the finite values (equal samples, at `+inf`, left out: their noise is
    /// zero); `-inf` when any sample had no signal but noise, `+inf` when every sample was
    /// equal, `None` without a comparable sample.
    pub fn mean_finite(&self) -> Option<f64> {
        if self.neg_infinite > 0 {
            return Some(f64::NEG_INFINITY);
        }
        let finite: u64 = self.bins.values().sum();
        if finite == 0 {
            return (self.infinite > 0).then_some(f64::INFINITY);
        }
        Some(self.sum.value() / finite as f64)
    }

    /// Samples whose reference was all zero while the other side was not (`-inf` dB).
    pub fn no_signal(&self) -> u64 {
        self.neg_infinite
    }

    /// The `q`-quantile (0..=1) at the bins' resolution: the lower edge of the bin holding the
    /// ⌈q·n⌉-th smallest comparable value; `+inf` when that sample was equal, `-inf` when it had
    /// no signal but noise.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        let n = self.count - self.undefined;
        if n == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * n as f64).ceil() as u64).max(1);
        if rank <= self.neg_infinite {
            return Some(f64::NEG_INFINITY);
        }
        let mut seen = self.neg_infinite;
        for (&b, &c) in &self.bins {
            seen += c;
            if seen >= rank {
                return Some(b as f64 / BINS_PER_DB);
            }
        }
        Some(f64::INFINITY)
    }
}

/// The `k` samples with the lowest value (worst first; ties: the lower sample index first).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Worst {
    k: usize,
    /// (value, sample index), sorted.
    items: Vec<(f64, u64)>,
}

impl Worst {
    pub fn new(k: usize) -> Worst {
        Worst {
            k,
            items: Vec::new(),
        }
    }

    pub fn add(&mut self, value: f64, sample: u64) {
        if value.is_nan() {
            return;
        }
        self.items.push((value, sample));
        self.items
            .sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        self.items.truncate(self.k);
    }

    pub fn merge(&mut self, other: &Worst) {
        for &(v, s) in &other.items {
            self.add(v, s);
        }
    }

    /// The sample indices, worst first.
    pub fn samples(&self) -> Vec<u64> {
        self.items.iter().map(|&(_, s)| s).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exact_sum_does_not_depend_on_the_order() {
        let terms = [
            1e16,
            1.0,
            -1e16,
            3.5e-7,
            2.0f64.powi(-60),
            123.456,
            -0.1,
            0.1,
            1e-300,
        ];
        let mut forward = ExactSum::default();
        terms.iter().for_each(|&t| forward.add(t));
        let mut backward = ExactSum::default();
        terms.iter().rev().for_each(|&t| backward.add(t));
        assert_eq!(forward.value().to_bits(), backward.value().to_bits());
        // the naive sum loses the 1.0 to the 1e16
        let naive: f64 = terms.iter().sum();
        assert_ne!(naive.to_bits(), forward.value().to_bits());
        // split in two and merged: the same bits
        let (mut a, mut b) = (ExactSum::default(), ExactSum::default());
        terms[..4].iter().for_each(|&t| a.add(t));
        terms[4..].iter().for_each(|&t| b.add(t));
        b.merge(&a);
        assert_eq!(b.value().to_bits(), forward.value().to_bits());
        assert!((forward.value() - (1.0 + 3.5e-7 + 123.456)).abs() < 1e-12);
    }

    #[test]
    fn histogram_quantiles_minimum_and_merge() {
        let mut h = DbHistogram::default();
        for v in [10.0, 20.0, 30.0, 40.0, f64::INFINITY] {
            h.add(v);
        }
        assert_eq!(h.min(), Some(10.0));
        assert_eq!(h.quantile(0.5), Some(30.0));
        assert_eq!(h.quantile(0.05), Some(10.0));
        assert_eq!(h.quantile(1.0), Some(f64::INFINITY));
        assert_eq!(h.mean_finite(), Some(25.0));
        let (mut a, mut b) = (DbHistogram::default(), DbHistogram::default());
        for v in [10.0, 20.0] {
            a.add(v);
        }
        for v in [30.0, 40.0, f64::INFINITY] {
            b.add(v);
        }
        b.merge(&a);
        assert_eq!(b, h);
    }

    #[test]
    fn worst_keeps_the_lowest_with_ties_by_index() {
        let mut w = Worst::new(3);
        for (v, s) in [(5.0, 0), (1.0, 4), (3.0, 2), (1.0, 1), (9.0, 3)] {
            w.add(v, s);
        }
        assert_eq!(w.samples(), vec![1, 4, 2]);
    }

    #[test]
    fn samples_without_signal_are_minus_infinity_not_an_overflowed_bin() {
        // a float side driven to all zeros against a non-zero int8 side: SNR -inf
        let mut h = DbHistogram::default();
        for db in [f64::NEG_INFINITY, 30.0, 31.0, f64::NEG_INFINITY] {
            h.add(db);
        }
        assert_eq!(h.no_signal(), 2);
        assert_eq!(h.quantile(0.05), Some(f64::NEG_INFINITY));
        assert_eq!(h.quantile(0.5), Some(f64::NEG_INFINITY));
        assert_eq!(h.quantile(0.75), Some(30.0));
        assert_eq!(h.mean_finite(), Some(f64::NEG_INFINITY));
        assert_eq!(h.min(), Some(f64::NEG_INFINITY));
        // merged from shards: the same
        let (mut a, mut b) = (DbHistogram::default(), DbHistogram::default());
        a.add(f64::NEG_INFINITY);
        a.add(30.0);
        b.add(31.0);
        b.add(f64::NEG_INFINITY);
        a.merge(&b);
        assert_eq!(a, h);
        assert_eq!(crate::analysis::diff::db_label(f64::NEG_INFINITY), "-inf");
        assert_eq!(crate::analysis::diff::db_label(f64::INFINITY), "inf");
    }
}
