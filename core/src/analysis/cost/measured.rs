//! A capture beside the estimate: for every profiled instruction, its measured p50 over its
//! estimated time, and whether that ratio is far from the capture's typical one (an outlier:
//! an operator the part runs much slower or faster than the model of its CMSIS-NN path says —
//! a cache miss pattern, a path the build did not take, a slow memory).
//!
//! A capture is set against an estimate only when both are of the same machine: a part whose
//! core the capture declares and the estimate models ([`CaptureMachine::unlike`]). An ETDump
//! that declares no core (ExecuTorch's runtime writes them on whatever ran it, often a PC) and an
//! emulator's instruction counts are never priced as a Cortex-M part.
//!
//! The typical ratio is the median over the priced rows, so a capture whose clock is unknown
//! (raw ticks) still shows which operators stand out; only with a known clock is the ratio
//! itself a speed.

use serde::Serialize;
use thiserror::Error;

use super::{Core, CostEstimate};
use crate::analysis::profile::Profile;

/// The machine a capture's times come from, as the capture declares it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CaptureMachine {
    /// Nothing declared: an ETDump as ExecuTorch's runtime writes it, on whatever ran it.
    Undeclared,
    /// An emulator (QEMU): its ticks count instructions, not a part's cycles.
    Emulator { core: String },
    /// A part, with the core it declares (`model`: the core model of that name, if any).
    Part {
        core: String,
        #[serde(serialize_with = "core_key")]
        model: Option<Core>,
    },
}

impl CaptureMachine {
    /// From a capture's declared core name (`None`: nothing declared) and whether its target
    /// is an emulator.
    pub fn declared(core: Option<&str>, emulated: bool) -> CaptureMachine {
        match core.map(str::trim).filter(|c| !c.is_empty()) {
            None => CaptureMachine::Undeclared,
            Some(c) if emulated => CaptureMachine::Emulator {
                core: c.to_string(),
            },
            Some(c) => CaptureMachine::Part {
                core: c.to_string(),
                model: Core::parse(c),
            },
        }
    }

    /// As tables and notes say it.
    pub fn describe(&self) -> String {
        match self {
            CaptureMachine::Undeclared => {
                "a machine the capture does not declare (an ETDump without a target record, as ExecuTorch's runtime writes on a PC)".into()
            }
            CaptureMachine::Emulator { core } => {
                format!("an emulator ({core}): instruction counts, not cycles")
            }
            CaptureMachine::Part { core, .. } => format!("a {core} part"),
        }
    }

    /// The core an estimate should model to be set against this capture.
    pub fn core(&self) -> Option<Core> {
        match self {
            CaptureMachine::Part { model, .. } => *model,
            CaptureMachine::Emulator { core } => {
                Core::parse(core.split_whitespace().next().unwrap_or(core))
            }
            CaptureMachine::Undeclared => None,
        }
    }

    /// Why this capture cannot be set against an estimate of `core` (`None`: it can).
    pub fn unlike(&self, core: Core) -> Option<String> {
        match self {
            CaptureMachine::Part { model: Some(m), .. } if *m == core => None,
            other => Some(format!(
                "the capture comes from {}; the estimate models a {} part: measured ÷ estimated is shown only for a capture from the part the estimate models",
                other.describe(),
                core.name()
            )),
        }
    }
}

fn core_key<S: serde::Serializer>(c: &Option<Core>, s: S) -> Result<S::Ok, S::Error> {
    match c {
        Some(c) => s.serialize_str(c.key()),
        None => s.serialize_none(),
    }
}

/// A capture that is not of the estimate's machine.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{0}")]
pub struct Unlike(pub String);

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

/// Every row of `profile`, captured on `machine`, against `estimate`; `ticks_per_us` converts
/// the capture's ticks when its clock is known; `band` (> 1) bounds what is not an outlier.
/// Refused when the capture is not of the part the estimate models.
pub fn measured_vs_estimate(
    profile: &Profile,
    machine: &CaptureMachine,
    estimate: &CostEstimate,
    ticks_per_us: Option<f64>,
    band: f64,
) -> Result<MeasuredVsEstimate, Unlike> {
    if let Some(why) = machine.unlike(estimate.options.core) {
        return Err(Unlike(why));
    }
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
    Ok(MeasuredVsEstimate {
        measured_in_us: rate.is_some(),
        median_ratio,
        band,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_capture_of_the_modelled_part_is_set_against_its_estimate() {
        let m4 = CaptureMachine::declared(Some("cortex-m4"), false);
        assert_eq!(m4.unlike(Core::M4), None);
        assert!(m4
            .unlike(Core::M55)
            .is_some_and(|w| w.contains("Cortex-M55")));
        let host = CaptureMachine::declared(None, false);
        assert!(host
            .unlike(Core::M4)
            .is_some_and(|w| w.contains("does not declare")));
        let qemu = CaptureMachine::declared(Some("cortex-m55 (emulated)"), true);
        assert!(qemu
            .unlike(Core::M55)
            .is_some_and(|w| w.contains("instruction counts")));
        assert_eq!(
            qemu.core(),
            Some(Core::M55),
            "the estimate follows the emulated core"
        );
        let other = CaptureMachine::declared(Some("riscv32"), false);
        assert!(other.unlike(Core::M4).is_some());
    }
}
