//! The diff engine: intermediate tensors of two sources for the same input — host runs of two
//! programs, or a host run and what a device captured (ETDump debug events + debug buffer) —
//! matched node by node (debug handles, N:M where ops were fused or split; instruction ids
//! when both sources are the same program), brought to a comparable form (dequantized,
//! channels-last undone) and measured: MSE, mean/max abs error, SNR, cosine similarity, and
//! for integer tensors the elements off by one LSB and by more. The first node in topological
//! order whose error crosses the threshold is the first divergence.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::debug_buffer::CapturedTensor;
use crate::ir::{Graph, NodeKind};
use crate::runtime::RunResult;
use crate::tensor::TensorData;

/// Intermediate outputs of one source, keyed by instruction id.
#[derive(Debug, Clone)]
pub struct Source {
    pub label: String,
    /// The program's graph (debug handles attached where known).
    pub graph: Graph,
    /// Instruction id → its out tensors.
    pub tensors: BTreeMap<usize, Vec<TensorData>>,
}

impl Source {
    /// From a host run with capture.
    pub fn from_run(label: &str, graph: Graph, run: &RunResult) -> Source {
        let tensors = run
            .captured
            .iter()
            .map(|c| {
                (
                    c.instruction_id,
                    c.tensors.iter().map(|t| t.to_data()).collect(),
                )
            })
            .collect();
        Source {
            label: label.to_string(),
            graph,
            tensors,
        }
    }

    /// From tensors captured on a device (the first inference run that captured each).
    pub fn from_captured(label: &str, graph: Graph, captured: &[CapturedTensor]) -> Source {
        let mut tensors: BTreeMap<usize, Vec<TensorData>> = BTreeMap::new();
        let mut run_of: BTreeMap<usize, usize> = BTreeMap::new();
        for c in captured
            .iter()
            .filter(|c| !c.is_program_output && c.instruction_id >= 0)
        {
            let iid = c.instruction_id as usize;
            let run = *run_of.entry(iid).or_insert(c.run);
            if run == c.run {
                tensors.entry(iid).or_default().push(c.tensor.clone());
            }
        }
        Source {
            label: label.to_string(),
            graph,
            tensors,
        }
    }
}

/// Error measures of one matched pair.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Metrics {
    pub numel: usize,
    pub mse: f64,
    pub mean_abs: f64,
    pub max_abs: f64,
    /// 10·log10(signal power / noise power) with A as the signal; infinite when equal.
    pub snr_db: f64,
    pub cosine: f64,
    /// For integer tensors on both sides: elements differing by exactly one LSB, and by more.
    pub off_by_one: Option<usize>,
    pub off_by_more: Option<usize>,
}

/// One matched group of nodes.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The module both sides' nodes came from (module matching), empty otherwise.
    pub module: Vec<String>,
    pub handles: Vec<u32>,
    pub a_instructions: Vec<usize>,
    pub b_instructions: Vec<usize>,
    pub a_ops: Vec<String>,
    pub b_ops: Vec<String>,
    pub metrics: Option<Metrics>,
    /// Why there are no metrics, when there are none.
    pub note: Option<String>,
}

/// When a row counts as diverged.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Threshold {
    pub min_snr_db: f64,
    pub max_abs: f64,
}

impl Default for Threshold {
    fn default() -> Self {
        Threshold {
            min_snr_db: 20.0,
            max_abs: f64::INFINITY,
        }
    }
}

impl Threshold {
    /// Whether `m` crosses the threshold.
    pub fn crossed(&self, m: &Metrics) -> bool {
        m.snr_db < self.min_snr_db || m.max_abs > self.max_abs
    }
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct DiffReport {
    pub a: String,
    pub b: String,
    /// How nodes were matched: `instruction` (same program) or `module` (`nn_module_stack`).
    pub matched_by: String,
    pub threshold: Threshold,
    /// In topological order of A.
    pub rows: Vec<Row>,
    /// Index in `rows` of the first divergence.
    pub first_divergence: Option<usize>,
}

/// Why two sources cannot be compared.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    #[error("cannot match nodes of {a} and {b}: they are different programs and their nodes carry no module paths (put each program's ETRecord beside it)")]
    NoMatching { a: String, b: String },
}

fn instruction_nodes(g: &Graph) -> Vec<&crate::ir::Node> {
    g.nodes
        .iter()
        .filter(|n| {
            n.instruction_id.is_some() && !matches!(n.kind, NodeKind::Input | NodeKind::Output)
        })
        .collect()
}

fn same_program(a: &Graph, b: &Graph) -> bool {
    let (na, nb) = (instruction_nodes(a), instruction_nodes(b));
    na.len() == nb.len() && na.iter().zip(&nb).all(|(x, y)| x.op == y.op)
}

/// Compares two sources.
pub fn diff(a: &Source, b: &Source, threshold: Threshold) -> Result<DiffReport, DiffError> {
    // The same program: instruction by instruction. Different programs (e.g. fp32 and int8 of
    // one model): debug handles are numbered per export, so nodes are matched by the module
    // that produced them (`nn_module_stack`), N:M.
    let (groups, matched_by) = if same_program(&a.graph, &b.graph) {
        let groups = instruction_nodes(&a.graph)
            .iter()
            .filter_map(|n| n.instruction_id)
            .map(|i| (Vec::new(), Vec::new(), vec![i], vec![i]))
            .collect::<Vec<_>>();
        (groups, "instruction")
    } else {
        (module_groups(&a.graph, &b.graph), "module")
    };
    if groups.is_empty() {
        return Err(DiffError::NoMatching {
            a: a.label.clone(),
            b: b.label.clone(),
        });
    }
    let op_of = |g: &Graph, i: usize| {
        g.node_for_instruction(i)
            .map(|n| n.qualified_op())
            .unwrap_or_default()
    };
    let mut rows = Vec::new();
    for (module, handles, ai, bi) in groups {
        let (Some(&la), Some(&lb)) = (ai.iter().max(), bi.iter().max()) else {
            continue;
        };
        let ta = a.tensors.get(&la).and_then(|v| v.first());
        let tb = b.tensors.get(&lb).and_then(|v| v.first());
        let (metrics, note) = match (ta, tb) {
            (Some(x), Some(y)) => match compare(&a.graph, la, x, &b.graph, lb, y) {
                Ok(m) => (Some(m), None),
                Err(why) => (None, Some(why)),
            },
            (None, _) => (
                None,
                Some(format!("{} captured nothing for instruction {la}", a.label)),
            ),
            (_, None) => (
                None,
                Some(format!("{} captured nothing for instruction {lb}", b.label)),
            ),
        };
        rows.push(Row {
            module,
            a_ops: ai.iter().map(|&i| op_of(&a.graph, i)).collect(),
            b_ops: bi.iter().map(|&i| op_of(&b.graph, i)).collect(),
            handles,
            a_instructions: ai,
            b_instructions: bi,
            metrics,
            note,
        });
    }
    let first_divergence = rows
        .iter()
        .position(|r| r.metrics.as_ref().is_some_and(|m| threshold.crossed(m)));
    Ok(DiffReport {
        a: a.label.clone(),
        b: b.label.clone(),
        matched_by: matched_by.into(),
        threshold,
        rows,
        first_divergence,
    })
}

/// A match: module path (if matched by module), debug handles, A's and B's instructions.
type Group = (Vec<String>, Vec<u32>, Vec<usize>, Vec<usize>);

/// Groups instructions by the innermost module that produced them; a group on each side with
/// the same module path is one match (N:M), compared at the group's last instruction.
fn module_groups(a: &Graph, b: &Graph) -> Vec<Group> {
    let by_module = |g: &Graph| {
        let mut m: BTreeMap<String, (BTreeSet<u32>, Vec<usize>)> = BTreeMap::new();
        for n in instruction_nodes(g) {
            let (Some(frame), Some(i)) = (
                n.module_stack.last().filter(|f| !f.path.is_empty()),
                n.instruction_id,
            ) else {
                continue;
            };
            let e = m.entry(frame.path.clone()).or_default();
            e.0.extend(&n.debug_handles);
            e.1.push(i);
        }
        m
    };
    let (ma, mb) = (by_module(a), by_module(b));
    let mut out: Vec<Group> = ma
        .into_iter()
        .filter_map(|(path, (ha, ia))| {
            let (hb, ib) = mb.get(&path)?;
            let handles: BTreeSet<u32> = ha.union(hb).copied().collect();
            Some((vec![path], handles.into_iter().collect(), ia, ib.clone()))
        })
        .collect();
    out.sort_by_key(|g| g.2.iter().max().copied().unwrap_or(0));
    out
}

/// A tensor as floats: dequantized with the value's quantization parameters when it is an
/// integer tensor that has them.
fn comparable(g: &Graph, iid: usize, t: &TensorData) -> Result<Vec<f64>, String> {
    let values = t.to_f64().map_err(|e| e.to_string())?;
    let quant = g
        .node_for_instruction(iid)
        .and_then(|n| n.outputs.first())
        .and_then(|&v| g.values.get(v))
        .and_then(|v| v.quant);
    Ok(match (t.dtype.is_integer(), quant) {
        (true, Some(q)) => values
            .iter()
            .map(|&x| (x - q.zero_point as f64) * q.scale)
            .collect(),
        _ => values,
    })
}

/// NHWC data of `shape` reordered to NCHW.
fn nhwc_to_nchw(data: &[f64], shape: &[usize]) -> Vec<f64> {
    let [n, h, w, c] = [shape[0], shape[1], shape[2], shape[3]];
    let mut out = vec![0.0; data.len()];
    for b in 0..n {
        for y in 0..h {
            for x in 0..w {
                for ch in 0..c {
                    out[((b * c + ch) * h + y) * w + x] = data[((b * h + y) * w + x) * c + ch];
                }
            }
        }
    }
    out
}

fn compare(
    ga: &Graph,
    ia: usize,
    a: &TensorData,
    gb: &Graph,
    ib: usize,
    b: &TensorData,
) -> Result<Metrics, String> {
    let mut xa = comparable(ga, ia, a)?;
    let mut xb = comparable(gb, ib, b)?;
    if a.shape != b.shape {
        let nhwc_of = |s: &[usize]| {
            if s.len() == 4 {
                vec![s[0], s[2], s[3], s[1]]
            } else {
                Vec::new()
            }
        };
        if a.shape.len() == 4 && b.shape == nhwc_of(&a.shape) {
            xb = nhwc_to_nchw(&xb, &b.shape);
        } else if b.shape.len() == 4 && a.shape == nhwc_of(&b.shape) {
            xa = nhwc_to_nchw(&xa, &a.shape);
        } else if a.numel() != b.numel() {
            return Err(format!("shapes differ: {:?} vs {:?}", a.shape, b.shape));
        }
    }
    let mut m = metrics(&xa, &xb);
    if a.dtype.is_integer() && b.dtype.is_integer() && a.dtype == b.dtype {
        let (ra, rb) = (
            a.to_f64().map_err(|e| e.to_string())?,
            b.to_f64().map_err(|e| e.to_string())?,
        );
        let one = ra
            .iter()
            .zip(&rb)
            .filter(|(x, y)| (*x - *y).abs() == 1.0)
            .count();
        let more = ra
            .iter()
            .zip(&rb)
            .filter(|(x, y)| (*x - *y).abs() > 1.0)
            .count();
        m.off_by_one = Some(one);
        m.off_by_more = Some(more);
    }
    Ok(m)
}

/// The metrics of B against A (A is the reference signal).
pub fn metrics(a: &[f64], b: &[f64]) -> Metrics {
    let n = a.len().min(b.len());
    let (mut se, mut sa, mut max, mut sig, mut dot, mut na, mut nb) =
        (0.0, 0.0, 0.0f64, 0.0, 0.0, 0.0, 0.0);
    for (&x, &y) in a.iter().zip(b).take(n) {
        let d = x - y;
        se += d * d;
        sa += d.abs();
        max = max.max(d.abs());
        sig += x * x;
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    let nf = n.max(1) as f64;
    let snr_db = if se == 0.0 {
        f64::INFINITY
    } else if sig == 0.0 {
        f64::NEG_INFINITY
    } else {
        10.0 * (sig / se).log10()
    };
    let cosine = if na == 0.0 && nb == 0.0 {
        1.0
    } else if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    };
    Metrics {
        numel: n,
        mse: se / nf,
        mean_abs: sa / nf,
        max_abs: max,
        snr_db,
        cosine,
        off_by_one: None,
        off_by_more: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_of_equal_and_noisy_signals() {
        let m = metrics(&[1.0, -2.0, 3.0], &[1.0, -2.0, 3.0]);
        assert_eq!(
            (m.mse, m.max_abs, m.snr_db, m.cosine),
            (0.0, 0.0, f64::INFINITY, 1.0)
        );
        let m = metrics(&[1.0, 1.0], &[1.1, 0.9]);
        assert!((m.mse - 0.01).abs() < 1e-12 && (m.max_abs - 0.1).abs() < 1e-12);
        assert!((m.snr_db - 20.0).abs() < 1e-9, "{}", m.snr_db);
    }

    #[test]
    fn channels_last_is_undone_before_comparing() {
        // NCHW [1,2,1,2] = [0,1 | 2,3]; NHWC storage interleaves channels
        assert_eq!(
            nhwc_to_nchw(&[0.0, 2.0, 1.0, 3.0], &[1, 1, 2, 2]),
            vec![0.0, 1.0, 2.0, 3.0]
        );
    }
}
