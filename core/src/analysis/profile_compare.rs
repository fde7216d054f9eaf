//! Two captures compared operator by operator: each instruction of A matched with one of B —
//! by instruction id when both ran one program, else by the ETRecord's debug handles, the
//! module path or the stack trace (so a re-export still matches), else in order where what is
//! left runs the same operators in the same order — and for each the p50, p90 and jitter of
//! both, the change and its impact on one inference. A CI gate reads [`Comparison::regressions`].

use std::collections::HashMap;

use serde::Serialize;

use crate::analysis::cost::measured::CaptureMachine;

use super::profile::{DurationStats, OpRow, Profile};
use crate::ir::Graph;

/// One capture and what identifies its operators.
#[derive(Clone, Copy)]
pub struct CaptureSide<'a> {
    pub profile: &'a Profile,
    /// The graph of the program the capture ran (with its ETRecord's debug handles and module
    /// paths where one was given). `None` for both sides: one program, matched by instruction.
    pub graph: Option<&'a Graph>,
    /// Ticks per microsecond, when the capture's clock is known.
    pub ticks_per_us: Option<f64>,
}

/// How a row's two instructions were found to be the same operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchedBy {
    /// The same instruction: both captures ran one program, or two exports with the same
    /// operator at every instruction.
    Instruction,
    /// The same set of the ETRecords' debug handles (the same exported nodes).
    DebugHandles,
    /// The same operator at the same module path (the k-th such call on both sides).
    ModulePath,
    /// The same operator from the same source line (the k-th such call on both sides).
    StackTrace,
    /// What no key matched runs the same operators in the same order on both sides.
    Order,
}

impl MatchedBy {
    /// The name used in tables and JSON.
    pub fn key(self) -> &'static str {
        match self {
            MatchedBy::Instruction => "instruction",
            MatchedBy::DebugHandles => "debug_handles",
            MatchedBy::ModulePath => "module_path",
            MatchedBy::StackTrace => "stack_trace",
            MatchedBy::Order => "order",
        }
    }
}

/// The unit both sides are compared in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Microseconds,
    /// Both captures' raw ticks, taken to be of one clock.
    Ticks,
}

impl Unit {
    /// As people read it (`µs`), everywhere a table or a chart names it.
    pub fn label(self) -> &'static str {
        match self {
            Unit::Microseconds => "µs",
            Unit::Ticks => "ticks",
        }
    }

    /// As JSON writes it (`us`, ASCII).
    pub fn key(self) -> &'static str {
        match self {
            Unit::Microseconds => "us",
            Unit::Ticks => "ticks",
        }
    }
}

/// The machine and clock a capture comes from, as it declares them.
#[derive(Debug, Clone, PartialEq)]
pub struct Origin {
    pub machine: CaptureMachine,
    /// The target's tick clock in Hz, when declared.
    pub clock_hz: Option<u32>,
}

impl Origin {
    /// Why a comparison of captures from `a` and `b` compares machines or clocks rather than
    /// two builds (`None`: the same machine and clock, as far as both declare).
    pub fn differs(a: &Origin, b: &Origin) -> Option<String> {
        if a.machine != b.machine {
            return Some(format!(
                "A comes from {}, B from {}: the change compares two machines, not two builds",
                a.machine.describe(),
                b.machine.describe()
            ));
        }
        match (a.clock_hz, b.clock_hz) {
            (Some(x), Some(y)) if x != y => Some(format!(
                "A was timed by a {x} Hz clock, B by a {y} Hz clock: the change compares two clocks"
            )),
            _ => None,
        }
    }
}

/// One side's durations of one operator, in the comparison's unit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spread {
    pub instruction_id: usize,
    pub count: usize,
    pub p10: f64,
    pub p50: f64,
    pub p90: f64,
    /// (p90 − p10) / p50: how much the operator's time varies from run to run.
    pub jitter: f64,
    /// Every run's duration, in run order (warm-up shows as the first runs).
    pub series: Vec<f64>,
}

/// One operator of either side, matched or not.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareRow {
    pub op: String,
    /// The innermost module path, where a graph gives one.
    pub module: Option<String>,
    pub matched_by: Option<MatchedBy>,
    pub a: Option<Spread>,
    pub b: Option<Spread>,
    /// B's p50 over A's, minus one (`0.1`: 10% slower); `None` unless both sides have it.
    pub change: Option<f64>,
    /// What the change adds to one inference: B's p50 − A's p50 (A-only rows lose their p50).
    pub impact: f64,
}

/// The comparison of two captures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub unit: Unit,
    /// Sorted by the size of their impact, largest first.
    pub rows: Vec<CompareRow>,
    /// The sum of every operator's p50 on each side.
    pub a_total_p50: f64,
    pub b_total_p50: f64,
    /// Set by [`Comparison::from_origins`] when the captures come from different machines or
    /// clocks: said wherever the comparison is shown.
    pub warning: Option<String>,
}

impl Comparison {
    /// Notes where the two captures come from (a warning when they differ).
    pub fn from_origins(mut self, a: &Origin, b: &Origin) -> Comparison {
        self.warning = Origin::differs(a, b);
        self
    }

    /// The matched rows whose p50 grew by more than `fraction` (0.1 = 10%), among those that
    /// take at least `min_share` of A's total p50 (a CI gate leaves out operators too short
    /// for their noise to mean anything).
    pub fn regressions(&self, fraction: f64, min_share: f64) -> Vec<&CompareRow> {
        let floor = min_share * self.a_total_p50;
        self.rows
            .iter()
            .filter(|r| r.change.is_some_and(|c| c > fraction))
            .filter(|r| r.a.as_ref().is_some_and(|a| a.p50 >= floor))
            .collect()
    }

    /// Rows matched on both sides.
    pub fn matched(&self) -> usize {
        self.rows.iter().filter(|r| r.matched_by.is_some()).count()
    }
}

/// Why two captures cannot be compared.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CompareError {
    #[error("one capture's clock is known and the other's is not: give both a tick rate (--ticks-per-us) or neither")]
    MixedUnits,
    #[error("a tick rate of {0} per microsecond is not a positive number")]
    Rate(f64),
}

/// Compares capture `a` with capture `b` (B is the new one: a positive change is slower).
pub fn compare(a: CaptureSide<'_>, b: CaptureSide<'_>) -> Result<Comparison, CompareError> {
    for r in [a.ticks_per_us, b.ticks_per_us].into_iter().flatten() {
        if !(r.is_finite() && r > 0.0) {
            return Err(CompareError::Rate(r));
        }
    }
    let unit = match (a.ticks_per_us, b.ticks_per_us) {
        (Some(_), Some(_)) => Unit::Microseconds,
        (None, None) => Unit::Ticks,
        _ => return Err(CompareError::MixedUnits),
    };
    let pairs = match_rows(a, b);
    let spread = |side: &CaptureSide<'_>, row: &OpRow| spread_of(row, side.ticks_per_us);
    let mut rows = Vec::new();
    let mut used_b = vec![false; b.profile.rows.len()];
    for (ia, ra) in a.profile.rows.iter().enumerate() {
        let sa = spread(&a, ra);
        let row = match pairs.get(&ia) {
            Some(&(ib, how)) => {
                used_b[ib] = true;
                let rb = &b.profile.rows[ib];
                let sb = spread(&b, rb);
                CompareRow {
                    op: ra.op.clone(),
                    module: module_of(a.graph, ra.instruction_id)
                        .or_else(|| module_of(b.graph, rb.instruction_id)),
                    matched_by: Some(how),
                    change: (sa.p50 > 0.0).then(|| sb.p50 / sa.p50 - 1.0),
                    impact: sb.p50 - sa.p50,
                    a: Some(sa),
                    b: Some(sb),
                }
            }
            None => CompareRow {
                op: ra.op.clone(),
                module: module_of(a.graph, ra.instruction_id),
                matched_by: None,
                change: None,
                impact: -sa.p50,
                a: Some(sa),
                b: None,
            },
        };
        rows.push(row);
    }
    for (ib, rb) in b.profile.rows.iter().enumerate() {
        if used_b[ib] {
            continue;
        }
        let sb = spread(&b, rb);
        rows.push(CompareRow {
            op: rb.op.clone(),
            module: module_of(b.graph, rb.instruction_id),
            matched_by: None,
            change: None,
            impact: sb.p50,
            a: None,
            b: Some(sb),
        });
    }
    let total = |f: fn(&CompareRow) -> Option<&Spread>| -> f64 {
        rows.iter().filter_map(f).map(|s| s.p50).sum()
    };
    let (a_total_p50, b_total_p50) = (total(|r| r.a.as_ref()), total(|r| r.b.as_ref()));
    rows.sort_by(|x, y| y.impact.abs().total_cmp(&x.impact.abs()));
    Ok(Comparison {
        unit,
        rows,
        a_total_p50,
        b_total_p50,
        warning: None,
    })
}

/// One row's durations in the unit (`rate`: ticks per µs).
fn spread_of(row: &OpRow, rate: Option<f64>) -> Spread {
    let scale = |t: f64| rate.map_or(t, |r| t / r);
    let s: &DurationStats = &row.stats;
    let p50 = scale(s.p50);
    let (p10, p90) = (scale(s.p10), scale(s.p90));
    Spread {
        instruction_id: row.instruction_id,
        count: s.count,
        p10,
        p50,
        p90,
        jitter: if p50 > 0.0 { (p90 - p10) / p50 } else { 0.0 },
        series: s.raw.iter().map(|&t| scale(t as f64)).collect(),
    }
}

/// Instruction `iid`'s node in `graph` (the graph's instruction index: no scan per row).
fn node_of(graph: Option<&Graph>, iid: usize) -> Option<&crate::ir::Node> {
    graph?.node_for_instruction(iid)
}

fn module_of(graph: Option<&Graph>, iid: usize) -> Option<String> {
    node_of(graph, iid)
        .and_then(|n| n.module_stack.last())
        .map(|f| f.path.clone())
}

/// For each row index of A, its row index in B and how they were matched.
fn match_rows(a: CaptureSide<'_>, b: CaptureSide<'_>) -> HashMap<usize, (usize, MatchedBy)> {
    let mut pairs: HashMap<usize, (usize, MatchedBy)> = HashMap::new();
    let same_program = match (a.graph, b.graph) {
        (None, None) => true,
        (Some(ga), Some(gb)) => op_sequence(ga) == op_sequence(gb),
        _ => false,
    };
    if same_program {
        let by_id: HashMap<usize, usize> = b
            .profile
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| (r.instruction_id, i))
            .collect();
        for (ia, ra) in a.profile.rows.iter().enumerate() {
            if let Some(&ib) = by_id.get(&ra.instruction_id) {
                pairs.insert(ia, (ib, MatchedBy::Instruction));
            }
        }
        return pairs;
    }
    let mut taken_b = vec![false; b.profile.rows.len()];
    // debug handles identify the exported nodes themselves: the operator may differ (a flow
    // that lowers a convolution to another kernel)
    let handles = |g: Option<&Graph>, r: &OpRow| -> Option<String> {
        let mut h = node_of(g, r.instruction_id)?.debug_handles.clone();
        if h.is_empty() {
            return None;
        }
        h.sort_unstable();
        Some(format!("{h:?}"))
    };
    match_tier(
        a,
        b,
        &mut pairs,
        &mut taken_b,
        MatchedBy::DebugHandles,
        |g, r| handles(g, r),
    );
    match_tier(
        a,
        b,
        &mut pairs,
        &mut taken_b,
        MatchedBy::ModulePath,
        |g, r| module_of(g, r.instruction_id).map(|m| format!("{}@{m}", r.op)),
    );
    match_tier(
        a,
        b,
        &mut pairs,
        &mut taken_b,
        MatchedBy::StackTrace,
        |g, r| {
            node_of(g, r.instruction_id)
                .and_then(|n| n.stack_trace.as_ref())
                .map(|t| format!("{}@{t}", r.op))
        },
    );
    // what is left pairs in order only when it is the same operators in the same order
    let rest_a: Vec<usize> = (0..a.profile.rows.len())
        .filter(|i| !pairs.contains_key(i))
        .collect();
    let rest_b: Vec<usize> = (0..b.profile.rows.len()).filter(|&i| !taken_b[i]).collect();
    let ops = |p: &Profile, idx: &[usize]| -> Vec<String> {
        idx.iter().map(|&i| p.rows[i].op.clone()).collect()
    };
    if !rest_a.is_empty() && ops(a.profile, &rest_a) == ops(b.profile, &rest_b) {
        for (&ia, &ib) in rest_a.iter().zip(&rest_b) {
            pairs.insert(ia, (ib, MatchedBy::Order));
        }
    }
    pairs
}

/// Pairs the unmatched rows whose key (with its occurrence number: the k-th row of that key)
/// is the same on both sides.
fn match_tier(
    a: CaptureSide<'_>,
    b: CaptureSide<'_>,
    pairs: &mut HashMap<usize, (usize, MatchedBy)>,
    taken_b: &mut [bool],
    how: MatchedBy,
    key: impl Fn(Option<&Graph>, &OpRow) -> Option<String>,
) {
    let keyed = |side: &CaptureSide<'_>, skip: &dyn Fn(usize) -> bool| {
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut out: HashMap<(String, usize), usize> = HashMap::new();
        for (i, r) in side.profile.rows.iter().enumerate() {
            if skip(i) {
                continue;
            }
            if let Some(k) = key(side.graph, r) {
                let n = seen.entry(k.clone()).or_default();
                out.insert((k, *n), i);
                *n += 1;
            }
        }
        out
    };
    let in_b = keyed(&b, &|i| taken_b[i]);
    let in_a = keyed(&a, &|i| pairs.contains_key(&i));
    for (k, ia) in in_a {
        if let Some(&ib) = in_b.get(&k) {
            pairs.insert(ia, (ib, how));
            taken_b[ib] = true;
        }
    }
}

/// The qualified operator of every instruction, in order.
fn op_sequence(g: &Graph) -> Vec<(usize, String)> {
    g.nodes
        .iter()
        .filter_map(|n| {
            n.instruction_id
                .map(|i| (i, format!("{}.{}", n.op, n.overload)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(iid: usize, op: &str, raw: Vec<u64>) -> OpRow {
        OpRow {
            instruction_id: iid,
            op: op.into(),
            event_name: format!("native_call_{op}"),
            stats: DurationStats::of(raw),
            operator_call: None,
            delegate_events: Vec::new(),
        }
    }

    fn profile(rows: Vec<OpRow>) -> Profile {
        Profile {
            runs: rows.first().map_or(0, |r| r.stats.count),
            rows,
            method_execute: None,
            events: Vec::new(),
        }
    }

    fn side(p: &Profile) -> CaptureSide<'_> {
        CaptureSide {
            profile: p,
            graph: None,
            ticks_per_us: None,
        }
    }

    #[test]
    fn one_program_matches_by_instruction_and_sorts_by_impact() {
        let a = profile(vec![
            row(0, "conv", vec![100, 100, 100]),
            row(1, "add", vec![10, 10, 10]),
        ]);
        let b = profile(vec![
            row(0, "conv", vec![100, 104, 100]),
            row(1, "add", vec![30, 30, 31]),
        ]);
        let c = compare(side(&a), side(&b)).expect("compare");
        assert_eq!(c.matched(), 2);
        assert_eq!(c.rows[0].op, "add");
        assert_eq!(c.rows[0].matched_by, Some(MatchedBy::Instruction));
        assert!((c.rows[0].change.expect("change") - 2.0).abs() < 1e-12);
        assert_eq!(c.regressions(0.1, 0.0).len(), 1);
        assert!(c.regressions(2.5, 0.0).is_empty());
        // add takes 10 of 110 ticks: left out of a gate on operators above 10%
        assert!(c.regressions(0.1, 0.1).is_empty());
        assert_eq!(c.unit, Unit::Ticks);
        assert!((c.a_total_p50 - 110.0).abs() < 1e-12);
    }

    #[test]
    fn jitter_and_series_are_in_the_unit() {
        let a = profile(vec![row(0, "conv", vec![1000, 2000, 3000])]);
        let s = CaptureSide {
            ticks_per_us: Some(1000.0),
            ..side(&a)
        };
        let c = compare(s, s).expect("compare");
        let sa = c.rows[0].a.as_ref().expect("a");
        assert_eq!(sa.series, vec![1.0, 2.0, 3.0]);
        assert!((sa.p50 - 2.0).abs() < 1e-12);
        assert!((sa.jitter - (2.8 - 1.2) / 2.0).abs() < 1e-9);
        assert_eq!(c.rows[0].change, Some(0.0));
    }

    #[test]
    fn a_known_clock_is_not_compared_with_raw_ticks() {
        let a = profile(vec![row(0, "conv", vec![1])]);
        let with = CaptureSide {
            ticks_per_us: Some(1.0),
            ..side(&a)
        };
        assert_eq!(
            compare(with, side(&a)).err(),
            Some(CompareError::MixedUnits)
        );
        let bad = CaptureSide {
            ticks_per_us: Some(0.0),
            ..side(&a)
        };
        assert_eq!(compare(bad, bad).err(), Some(CompareError::Rate(0.0)));
    }
}
