//! A capture beside the estimate: for every profiled instruction, its measured p50 over its
//! estimated time, and whether that ratio is far from the capture's typical one (an outlier:
//! an operator the part runs much slower or faster than the model of its CMSIS-NN path says —
//! a cache miss pattern, a path the build did not take, a slow memory).
//!
//! The typical ratio is the median over the priced rows, so a capture whose clock is unknown
//! (raw ticks) or that counts something else than cycles (QEMU's instruction counts) still
//! shows which operators stand out; only with a known clock is the ratio itself a speed.

use serde::Serialize;

use super::CostEstimate;
use crate::analysis::profile::Profile;

/// Measured ÷ estimated further than this factor from the capture's median ratio is an
/// outlier (the CLI's, the Profile tab's and the Live tab's band).
pub const OUTLIER_BAND: f64 = 2.0;

/// One profiled instruction against its estimate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasuredRow {
    pub instruction_id: usize,
    pub op: String,
    /// The capture's p50, in µs with a clock, else in ticks.
    pub measured_p50: f64,
    /// The estimate in µs at the estimate's clock; `None` where the call has no model.
    pub estimated_us: Option<f64>,
    /// `measured_p50 / estimated_us`.
    pub ratio: Option<f64>,
    /// `ratio` over the median ratio.
    pub relative: Option<f64>,
    /// `relative` outside [1/band, band].
    pub outlier: bool,
}

/// A capture against an estimate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasuredVsEstimate {
    /// Whether `measured_p50` is in µs (the capture's clock known) or raw ticks.
    pub measured_in_us: bool,
    pub median_ratio: Option<f64>,
    pub band: f64,
    pub rows: Vec<MeasuredRow>,
}

impl MeasuredVsEstimate {
    /// The row of instruction `id` (rows are in instruction order, as the profile's).
    pub fn row(&self, id: usize) -> Option<&MeasuredRow> {
        self.rows
            .binary_search_by_key(&id, |r| r.instruction_id)
            .ok()
            .and_then(|i| self.rows.get(i))
    }

    /// What a ratio is, as tables say it: µs over µs with the capture's clock, else ticks
    /// (which only the ratio over the median makes comparable).
    pub fn ratio_meaning(&self) -> &'static str {
        if self.measured_in_us {
            "µs over µs"
        } else {
            "the capture's clock is unknown: ticks per estimated µs, compared through the median ratio"
        }
    }

    /// Rows flagged as outliers.
    pub fn outliers(&self) -> impl Iterator<Item = &MeasuredRow> {
        self.rows.iter().filter(|r| r.outlier)
    }
}

/// Every row of `profile` against `estimate`; `ticks_per_us` converts the capture's ticks when
/// its clock is known; `band` (> 1) bounds what is not an outlier.
pub fn measured_vs_estimate(
    profile: &Profile,
    estimate: &CostEstimate,
    ticks_per_us: Option<f64>,
    band: f64,
) -> MeasuredVsEstimate {
    let mhz = estimate.options.mhz;
    let rate = ticks_per_us.filter(|r| r.is_finite() && *r > 0.0);
    let mut rows: Vec<MeasuredRow> = profile
        .rows
        .iter()
        .map(|r| {
            let measured_p50 = rate.map_or(r.stats.p50, |t| r.stats.p50 / t);
            let estimated_us = estimate
                .row(r.instruction_id)
                .and_then(|e| e.cycles)
                .map(|c| c / mhz);
            let ratio = estimated_us
                .filter(|&e| e > 0.0 && measured_p50 > 0.0)
                .map(|e| measured_p50 / e);
            MeasuredRow {
                instruction_id: r.instruction_id,
                op: r.op.clone(),
                measured_p50,
                estimated_us,
                ratio,
                relative: None,
                outlier: false,
            }
        })
        .collect();
    let mut ratios: Vec<f64> = rows.iter().filter_map(|r| r.ratio).collect();
    ratios.sort_by(f64::total_cmp);
    let median_ratio = match ratios.len() {
        0 => None,
        n if n % 2 == 1 => Some(ratios[n / 2]),
        n => Some((ratios[n / 2 - 1] + ratios[n / 2]) / 2.0),
    };
    let band = if band.is_finite() && band > 1.0 {
        band
    } else {
        OUTLIER_BAND
    };
    if let Some(m) = median_ratio {
        for r in &mut rows {
            r.relative = r.ratio.map(|x| x / m);
            r.outlier = r.relative.is_some_and(|x| x > band || x < 1.0 / band);
        }
    }
    MeasuredVsEstimate {
        measured_in_us: rate.is_some(),
        median_ratio,
        band,
        rows,
    }
}
