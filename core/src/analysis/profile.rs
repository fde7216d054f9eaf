//! Per-operator profile from an ETDump: for every instruction, the durations over all runs and
//! the statistics ExecuTorch's Inspector reports (avg, min, max, p10, p50, p90; percentiles with
//! numpy's linear interpolation), the wrapping `OPERATOR_CALL`, and delegate-internal events
//! grouped under their `DELEGATE_CALL`. Times stay in ticks; [`TickRate`] converts when known.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::formats::etdump::{ETDump, Event, ProfileEvent, RunData};

/// Summary statistics over a list of durations (ticks).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DurationStats {
    pub count: usize,
    pub avg: f64,
    pub min: u64,
    pub max: u64,
    pub p10: f64,
    pub p50: f64,
    pub p90: f64,
    /// Every duration, in run order.
    pub raw: Vec<u64>,
}

impl DurationStats {
    /// Statistics of `raw` (empty input gives zeros).
    pub fn of(raw: Vec<u64>) -> DurationStats {
        let mut sorted = raw.clone();
        sorted.sort_unstable();
        let count = raw.len();
        let sum: f64 = raw.iter().map(|&x| x as f64).sum();
        DurationStats {
            count,
            avg: if count > 0 { sum / count as f64 } else { 0.0 },
            min: sorted.first().copied().unwrap_or(0),
            max: sorted.last().copied().unwrap_or(0),
            p10: percentile(&sorted, 10.0),
            p50: percentile(&sorted, 50.0),
            p90: percentile(&sorted, 90.0),
            raw,
        }
    }

    /// Sum of all durations.
    pub fn total(&self) -> u64 {
        self.raw.iter().sum()
    }
}

/// numpy's default (`linear`) percentile of sorted data.
pub fn percentile(sorted: &[u64], p: f64) -> f64 {
    match sorted.len() {
        0 => 0.0,
        1 => sorted[0] as f64,
        n => {
            let pos = p / 100.0 * (n - 1) as f64;
            let lo = pos.floor() as usize;
            let hi = (lo + 1).min(n - 1);
            let (a, b) = (sorted[lo] as f64, sorted[hi] as f64);
            a + (b - a) * (pos - lo as f64)
        }
    }
}

/// A delegate-internal event (keyed by its delegate debug id), aggregated over runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DelegateEventRow {
    /// `delegate_debug_id_str`, or the integer id as text.
    pub name: String,
    pub stats: DurationStats,
}

/// One instruction's profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpRow {
    pub instruction_id: usize,
    /// `aten::convolution.out` when the program is known, else from the event name.
    pub op: String,
    /// The ETDump event the row is built from (`native_call_convolution.out`, `DELEGATE_CALL`).
    pub event_name: String,
    #[serde(flatten)]
    pub stats: DurationStats,
    /// The wrapping `OPERATOR_CALL` span, when recorded.
    pub operator_call: Option<DurationStats>,
    /// Events inside a delegate call, in first-seen order.
    pub delegate_events: Vec<DelegateEventRow>,
}

/// The per-op profile of one ETDump.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Profile {
    /// Number of runs aggregated.
    pub runs: usize,
    /// Sorted by instruction id.
    pub rows: Vec<OpRow>,
    /// `Method::execute` spans, one per run, when recorded.
    pub method_execute: Option<DurationStats>,
    /// Events of no instruction (`Program::load_method`, `Method::init`, `Method::execute`),
    /// per run block and name in first-seen order, over every run: the Inspector's rows of them.
    pub events: Vec<EventRow>,
}

/// A profile event of no instruction, as the Inspector's table lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventRow {
    /// The run it was recorded in (`Default` for loading, `Execute` for inferences).
    pub event_block_name: String,
    pub event_name: String,
    #[serde(flatten)]
    pub stats: DurationStats,
}

/// Every profile event without an instruction, grouped by run block and name.
fn method_events(etdump: &ETDump) -> Vec<EventRow> {
    let mut groups: Vec<((String, String), Vec<u64>)> = Vec::new();
    for run in &etdump.runs {
        for ev in &run.events {
            let Event::Profile(p) = ev else { continue };
            if (p.chain_index >= 0 && p.instruction_id >= 0) || p.is_delegate_internal() {
                continue;
            }
            let key = (run.name.clone(), p.name.clone());
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, raw)) => raw.push(p.duration()),
                None => groups.push((key, vec![p.duration()])),
            }
        }
    }
    groups
        .into_iter()
        .map(|((block, name), raw)| EventRow {
            event_block_name: block,
            event_name: name,
            stats: DurationStats::of(raw),
        })
        .collect()
}

/// Ticks per microsecond: how ticks become time (1000 for a host ETDump in ns; the core clock in
/// MHz for Cortex-M cycle counts).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TickRate(pub f64);

impl TickRate {
    /// Ticks → microseconds.
    pub fn to_us(self, ticks: f64) -> f64 {
        ticks / self.0
    }
}

/// The runs that hold inferences: those named `Execute`, or every run if none is.
pub fn inference_runs(etdump: &ETDump) -> Vec<&RunData> {
    let execute: Vec<&RunData> = etdump.execute_runs().collect();
    if execute.is_empty() {
        etdump.runs.iter().collect()
    } else {
        execute
    }
}

#[derive(Default)]
struct Acc {
    event_name: String,
    main: Vec<u64>,
    operator_call: Vec<u64>,
    delegate: Vec<(String, Vec<u64>)>,
}

/// Aggregates per-instruction statistics; `ops` (if given: what each main-chain instruction
/// calls, [`crate::formats::pte::Program::instruction_ops`]) names them.
pub fn profile(etdump: &ETDump, ops: Option<&[String]>) -> Profile {
    let runs = inference_runs(etdump);
    let mut acc: BTreeMap<usize, Acc> = BTreeMap::new();
    let mut method_execute = Vec::new();
    for run in &runs {
        for ev in &run.events {
            let Event::Profile(p) = ev else { continue };
            if p.name == "Method::execute" {
                method_execute.push(p.duration());
                continue;
            }
            if p.chain_index != 0 || p.instruction_id < 0 {
                continue;
            }
            let a = acc.entry(p.instruction_id as usize).or_default();
            add_event(a, p);
        }
    }
    let rows = acc
        .into_iter()
        .filter(|(_, a)| !a.main.is_empty() || !a.delegate.is_empty())
        .map(|(iid, a)| {
            let op = ops
                .and_then(|o| o.get(iid))
                .filter(|o| !o.is_empty())
                .cloned()
                .unwrap_or_else(|| a.event_name.trim_start_matches("native_call_").to_string());
            OpRow {
                instruction_id: iid,
                op,
                event_name: a.event_name,
                stats: DurationStats::of(a.main),
                operator_call: (!a.operator_call.is_empty())
                    .then(|| DurationStats::of(a.operator_call)),
                delegate_events: a
                    .delegate
                    .into_iter()
                    .map(|(name, raw)| DelegateEventRow {
                        name,
                        stats: DurationStats::of(raw),
                    })
                    .collect(),
            }
        })
        .collect();
    Profile {
        runs: runs.len(),
        rows,
        method_execute: (!method_execute.is_empty()).then(|| DurationStats::of(method_execute)),
        events: method_events(etdump),
    }
}

fn add_event(a: &mut Acc, p: &ProfileEvent) {
    if p.is_delegate_internal() {
        let name = p
            .delegate_debug_id_str
            .clone()
            .unwrap_or_else(|| format!("delegate event {}", p.delegate_debug_id_int));
        match a.delegate.iter_mut().find(|(n, _)| *n == name) {
            Some((_, raw)) => raw.push(p.duration()),
            None => a.delegate.push((name, vec![p.duration()])),
        }
    } else if p.name == "OPERATOR_CALL" {
        a.operator_call.push(p.duration());
    } else if p.name.starts_with("native_call_") || p.name == "DELEGATE_CALL" {
        if a.event_name.is_empty() {
            a.event_name = p.name.clone();
        }
        a.main.push(p.duration());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_match_numpy_linear() {
        let s = [10, 20, 30, 40, 50];
        assert_eq!(percentile(&s, 50.0), 30.0);
        assert!((percentile(&s, 10.0) - 14.0).abs() < 1e-12);
        assert!((percentile(&s, 90.0) - 46.0).abs() < 1e-12);
        assert_eq!(percentile(&[7], 90.0), 7.0);
    }
}
