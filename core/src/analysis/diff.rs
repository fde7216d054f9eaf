//! The diff engine: intermediate tensors of two sources for the same input — host runs of
//! programs or ETRecord stages, or what a device captured (ETDump debug events + debug
//! buffer) — matched node by node (the same program: instruction by instruction; a stage and
//! a program of the same export: debug handles, N:M where ops were fused or split; different
//! programs of one model: the module that produced them), brought to a comparable form
//! (dequantized, channels-last undone) and measured: MSE, mean/max abs error, SNR, cosine
//! similarity, and for integer tensors the elements off by one LSB and by more. The first
//! node in topological order whose error crosses the threshold is the first divergence.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::formats::debug_buffer::CapturedTensor;
use crate::ir::{Graph, NodeId, NodeKind};
use crate::runtime::RunResult;
use crate::tensor::TensorData;

use super::diff_groups::{
    handle_groups, module_groups, operator_nodes, quantity_groups, rewrite_groups, structure_groups,
};

/// Intermediate outputs of one source, keyed by graph node.
#[derive(Debug, Clone)]
pub struct Source {
    pub label: String,
    /// The graph (debug handles and module paths attached where known).
    pub graph: Graph,
    /// Node → its out tensors.
    pub tensors: BTreeMap<NodeId, Vec<TensorData>>,
    /// Which export the graph's debug handles belong to (e.g. the ETRecord's path): sources of
    /// the same export are matched by debug handle.
    pub export: Option<String>,
}

impl Source {
    /// From a host run (a program's or a stage's) with capture.
    pub fn from_run(label: &str, graph: Graph, run: &RunResult) -> Source {
        let tensors = run
            .captured
            .iter()
            .filter(|c| c.node < graph.nodes.len())
            .map(|c| (c.node, c.tensors.iter().map(|t| t.to_data()).collect()))
            .collect();
        Source {
            label: label.to_string(),
            graph,
            tensors,
            export: None,
        }
    }

    /// From a run's outputs alone (no node captured): each output held by the node that
    /// wrote it, so [`comparable_output`] compares it as it compares a captured run's.
    pub fn from_outputs(label: &str, graph: Graph, outputs: &[TensorData]) -> Source {
        let mut tensors: BTreeMap<NodeId, Vec<TensorData>> = BTreeMap::new();
        for (k, t) in outputs.iter().enumerate() {
            let Some((node, at)) = output_producer(&graph, k) else {
                continue;
            };
            let held = tensors.entry(node).or_default();
            // the node's other outputs are not kept: the slots before `at` repeat this one
            while held.len() < at {
                held.push(t.clone());
            }
            if held.len() == at {
                held.push(t.clone());
            } else if let Some(slot) = held.get_mut(at) {
                *slot = t.clone();
            }
        }
        Source {
            label: label.to_string(),
            graph,
            tensors,
            export: None,
        }
    }

    /// From tensors captured on a device (the first inference run that captured each).
    pub fn from_captured(label: &str, graph: Graph, captured: &[CapturedTensor]) -> Source {
        let mut tensors: BTreeMap<NodeId, Vec<TensorData>> = BTreeMap::new();
        let mut run_of: BTreeMap<usize, usize> = BTreeMap::new();
        for c in captured
            .iter()
            .filter(|c| !c.is_program_output && c.instruction_id >= 0)
        {
            let iid = c.instruction_id as usize;
            let Some(node) = graph.node_for_instruction(iid).map(|n| n.id) else {
                continue;
            };
            let run = *run_of.entry(iid).or_insert(c.run);
            if run == c.run {
                tensors.entry(node).or_default().push(c.tensor.clone());
            }
        }
        Source {
            label: label.to_string(),
            graph,
            tensors,
            export: None,
        }
    }

    /// Marks the export the graph's debug handles come from.
    pub fn with_export(mut self, export: impl Into<String>) -> Source {
        self.export = Some(export.into());
        self
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
    /// The module the matched nodes came from: the match itself when matched by module, else
    /// the innermost module path of A's nodes (B's when A's carry none); empty when neither
    /// side knows its modules.
    pub module: Vec<String>,
    pub handles: Vec<u32>,
    /// Instruction ids of the matched nodes (empty for stage graphs).
    pub a_instructions: Vec<usize>,
    pub b_instructions: Vec<usize>,
    /// Graph node ids of the matched nodes.
    pub a_nodes: Vec<NodeId>,
    pub b_nodes: Vec<NodeId>,
    pub a_ops: Vec<String>,
    pub b_ops: Vec<String>,
    pub metrics: Option<Metrics>,
    /// The error carried in: the lowest SNR of the matched groups that feed this one (found
    /// through B's graph); `None` when nothing upstream was matched (the program inputs).
    pub snr_in_db: Option<f64>,
    /// Why there are no metrics, when there are none.
    pub note: Option<String>,
}

impl Row {
    /// How many dB of SNR this group lost against the error carried in (the error it added).
    pub fn drop_db(&self) -> Option<f64> {
        let m = self.metrics?;
        // equal going in (or an input): all the error is the op's own, an unbounded loss
        let given = self.snr_in_db.unwrap_or(f64::INFINITY);
        Some(
            if given.is_infinite() && given > 0.0 && m.snr_db.is_finite() {
                f64::INFINITY
            } else {
                given.min(1e9) - m.snr_db
            },
        )
    }

    /// Whether this group crosses `threshold` (with the error carried into it): a divergence.
    pub fn diverges(&self, threshold: &Threshold) -> bool {
        self.metrics
            .as_ref()
            .is_some_and(|m| threshold.crossed_with(m, self.snr_in_db))
    }
}

/// An SNR for tables, said as what it is: one decimal; `inf` for equal tensors, `-inf` for a
/// reference that is all zero against a tensor that is not (no signal, some noise), `n/a` where
/// nothing could be compared. The one formatter every view uses.
pub fn db_label(x: f64) -> String {
    if x.is_nan() {
        "n/a".into()
    } else if x == f64::NEG_INFINITY {
        "-inf".into()
    } else if x.is_infinite() || x >= 1e9 {
        "inf".into()
    } else {
        format!("{x:.1}")
    }
}

/// Operators joined for display: `conv2d+relu` (namespace and `.out` dropped).
pub fn short_ops(ops: &[String]) -> String {
    ops.iter()
        .map(|o| {
            o.rsplit("::")
                .next()
                .unwrap_or(o)
                .trim_end_matches(".out")
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("+")
}

/// When a row counts as a divergence: its SNR is below `min_snr_db` **and** at least
/// `min_drop_db` below the SNR carried into it (the op added the error, it did not just pass on
/// what came before), or its largest difference exceeds `max_abs`. Quantization noise grows
/// gradually through a correct network; a faulty op loses tens of dB at once.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Threshold {
    pub min_snr_db: f64,
    pub min_drop_db: f64,
    pub max_abs: f64,
}

impl Default for Threshold {
    fn default() -> Self {
        Threshold {
            min_snr_db: 20.0,
            min_drop_db: 10.0,
            max_abs: f64::INFINITY,
        }
    }
}

impl Threshold {
    /// Whether `m` (with `snr_in` carried in) crosses the threshold.
    pub fn crossed_with(&self, m: &Metrics, snr_in: Option<f64>) -> bool {
        let added = snr_in.unwrap_or(f64::INFINITY) - m.snr_db;
        (m.snr_db < self.min_snr_db && added >= self.min_drop_db) || m.max_abs > self.max_abs
    }

    /// Whether `m` crosses the threshold with nothing carried in.
    pub fn crossed(&self, m: &Metrics) -> bool {
        self.crossed_with(m, None)
    }
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct DiffReport {
    pub a: String,
    pub b: String,
    /// How nodes were matched: `instruction` (same program), `debug_handle` (same export),
    /// `quantity` (programs of one model: the model's tensor each holds, from their ETRecords)
    /// or `module` (`nn_module_stack`).
    pub matched_by: String,
    pub threshold: Threshold,
    /// In topological order of A.
    pub rows: Vec<Row>,
    /// Index in `rows` of the first divergence.
    pub first_divergence: Option<usize>,
}

impl DiffReport {
    /// Judges the rows again under another threshold (no tensors are compared again).
    pub fn rejudge(&mut self, threshold: Threshold) {
        self.threshold = threshold;
        self.first_divergence = self.rows.iter().position(|r| r.diverges(&threshold));
    }
}

/// Why two sources cannot be compared.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    #[error("cannot match nodes of {a} and {b}: they share no debug handles and their nodes carry no module paths (put each program's ETRecord beside it)")]
    NoMatching { a: String, b: String },
}

fn same_program(a: &Graph, b: &Graph) -> bool {
    let (na, nb) = (operator_nodes(a), operator_nodes(b));
    a.stage == b.stage && na.len() == nb.len() && na.iter().zip(&nb).all(|(x, y)| x.op == y.op)
}

/// Compares two sources.
pub fn diff(a: &Source, b: &Source, threshold: Threshold) -> Result<DiffReport, DiffError> {
    let same_export = a.export.is_some() && a.export == b.export;
    let (groups, matched_by) = if same_program(&a.graph, &b.graph) {
        (
            operator_nodes(&a.graph)
                .iter()
                .map(|n| (Vec::new(), Vec::new(), vec![n.id], vec![n.id]))
                .collect::<Vec<_>>(),
            "instruction",
        )
    } else if let Some(groups) = rewrite_groups(&a.graph, &b.graph) {
        (groups, "instruction")
    } else if let Some(groups) = quantity_groups(&a.graph, &b.graph) {
        // where both hold the same tensor of the model; before debug handles even within one
        // export, where one handle's activation is fused into the op of another handle
        (groups, "quantity")
    } else if same_export && !handle_groups(&a.graph, &b.graph).is_empty() {
        (handle_groups(&a.graph, &b.graph), "debug_handle")
    } else {
        // without the quantities an ETRecord gives, by the module that produced each node
        // (`nn_module_stack`), N:M; without modules either, by the quantities the programs'
        // structure shows
        let by_module = module_groups(&a.graph, &b.graph);
        match structure_groups(&a.graph, &b.graph) {
            Some(groups) if by_module.is_empty() => (groups, "structure"),
            _ => (by_module, "module"),
        }
    };
    if groups.is_empty() {
        return Err(DiffError::NoMatching {
            a: a.label.clone(),
            b: b.label.clone(),
        });
    }
    let op_of = |g: &Graph, n: NodeId| g.nodes.get(n).map(|n| n.qualified_op()).unwrap_or_default();
    let instr_of = |g: &Graph, ns: &[NodeId]| {
        ns.iter()
            .filter_map(|&n| g.nodes.get(n).and_then(|x| x.instruction_id))
            .collect::<Vec<_>>()
    };
    let mut rows = Vec::new();
    for (module, handles, an, bn) in groups {
        let (Some(&la), Some(&lb)) = (an.iter().max(), bn.iter().max()) else {
            continue;
        };
        let ta = a.tensors.get(&la).and_then(|v| v.first());
        let tb = b.tensors.get(&lb).and_then(|v| v.first());
        let (metrics, note) = match (ta, tb) {
            (Some(x), Some(y)) => match compare(&a.graph, la, x, &b.graph, lb, y) {
                Ok(m) => (Some(m), None),
                // the groups' last nodes hold different quantities (a float GRU island ends
                // in its output sequence on one side, its last hidden state on the other):
                // compare the tensors both groups hand on that have one shape
                Err(why) => match exits_compared(a, &an, b, &bn) {
                    Some((m, at)) => (Some(m), Some(at)),
                    None => (None, Some(why)),
                },
            },
            (None, _) => (
                None,
                Some(format!(
                    "{} captured nothing for {}",
                    a.label,
                    op_of(&a.graph, la)
                )),
            ),
            (_, None) => (
                None,
                Some(format!(
                    "{} captured nothing for {}",
                    b.label,
                    op_of(&b.graph, lb)
                )),
            ),
        };
        let module = if module.is_empty() {
            innermost_modules(&a.graph, &an)
                .or_else(|| innermost_modules(&b.graph, &bn))
                .unwrap_or_default()
        } else {
            module
        };
        rows.push(Row {
            module,
            a_ops: an.iter().map(|&n| op_of(&a.graph, n)).collect(),
            b_ops: bn.iter().map(|&n| op_of(&b.graph, n)).collect(),
            handles,
            a_instructions: instr_of(&a.graph, &an),
            b_instructions: instr_of(&b.graph, &bn),
            a_nodes: an,
            b_nodes: bn,
            metrics,
            snr_in_db: None,
            note,
        });
    }
    output_rows(a, b, &mut rows);
    carried_in(&b.graph, &mut rows);
    let first_divergence = rows.iter().position(|r| r.diverges(&threshold));
    Ok(DiffReport {
        a: a.label.clone(),
        b: b.label.clone(),
        matched_by: matched_by.into(),
        threshold,
        rows,
        first_divergence,
    })
}

/// The node writing program output `k` of `g`, and the position of that output among the
/// node's out tensors (what its capture holds); `None` for an output that is an input.
fn output_producer(g: &Graph, k: usize) -> Option<(NodeId, usize)> {
    // a view's storage is its source's: the node that wrote the source wrote the output
    let v = g.storage_of(*g.outputs.get(k)?);
    let node = g.values.get(v)?.producer?;
    let n = g.nodes.get(node)?;
    if !matches!(n.kind, NodeKind::Operator | NodeKind::Delegate) {
        return None;
    }
    let at = n.outputs.iter().position(|&o| o == v).unwrap_or(0);
    Some((node, at))
}

/// Whatever the matching found, the report ends with the programs' outputs compared with each
/// other (one row per output both sides have), unless the last matched group already ends at
/// them: a divergence a group boundary hides (a fused activation on one side, a LUT head on the
/// other) cannot leave the outputs unjudged.
fn output_rows(a: &Source, b: &Source, rows: &mut Vec<Row>) {
    let n = a.graph.outputs.len().min(b.graph.outputs.len());
    for k in 0..n {
        let (Some((pa, ia)), Some((pb, ib))) =
            (output_producer(&a.graph, k), output_producer(&b.graph, k))
        else {
            continue;
        };
        let covered = rows
            .iter()
            .any(|r| r.a_nodes.iter().max() == Some(&pa) && r.b_nodes.iter().max() == Some(&pb));
        if covered {
            continue;
        }
        let ta = a
            .tensors
            .get(&pa)
            .and_then(|v| v.get(ia).or_else(|| v.first()));
        let tb = b
            .tensors
            .get(&pb)
            .and_then(|v| v.get(ib).or_else(|| v.first()));
        let (metrics, note) = match (ta, tb) {
            (Some(x), Some(y)) => match compare(&a.graph, pa, x, &b.graph, pb, y) {
                Ok(m) => (Some(m), None),
                Err(why) => (None, Some(why)),
            },
            _ => (None, Some("an output was not captured".to_string())),
        };
        let op =
            |g: &Graph, n: NodeId| g.nodes.get(n).map(|x| x.qualified_op()).unwrap_or_default();
        let instr = |g: &Graph, ns: &[NodeId]| {
            ns.iter()
                .filter_map(|&n| g.nodes.get(n).and_then(|x| x.instruction_id))
                .collect()
        };
        // the output's row holds what computes it and no other row holds (a gate's linear
        // layer whose tabulated activation the fp32 program decomposes)
        let covered_a: BTreeSet<NodeId> = rows.iter().flat_map(|r| r.a_nodes.clone()).collect();
        let covered_b: BTreeSet<NodeId> = rows.iter().flat_map(|r| r.b_nodes.clone()).collect();
        let an = uncovered_ancestors(&a.graph, pa, &covered_a);
        let bn = uncovered_ancestors(&b.graph, pb, &covered_b);
        rows.push(Row {
            module: vec![format!("program output {k}")],
            a_ops: an.iter().map(|&n| op(&a.graph, n)).collect(),
            b_ops: bn.iter().map(|&n| op(&b.graph, n)).collect(),
            handles: Vec::new(),
            a_instructions: instr(&a.graph, &an),
            b_instructions: instr(&b.graph, &bn),
            a_nodes: an,
            b_nodes: bn,
            metrics,
            snr_in_db: None,
            note,
        });
    }
}

/// `end` and the operator nodes it is computed from that are not in `covered` (walking back
/// through views, stopping at covered nodes), in node order.
fn uncovered_ancestors(g: &Graph, end: NodeId, covered: &BTreeSet<NodeId>) -> Vec<NodeId> {
    let operators: BTreeSet<NodeId> = operator_nodes(g).iter().map(|n| n.id).collect();
    let mut seen = BTreeSet::from([end]);
    let mut stack = vec![end];
    while let Some(n) = stack.pop() {
        let Some(node) = g.nodes.get(n) else { continue };
        for &v in &node.inputs {
            let Some(p) = g.writer(v) else {
                continue;
            };
            if operators.contains(&p)
                && !covered.contains(&p)
                && seen.len() < 4096
                && seen.insert(p)
            {
                stack.push(p);
            }
        }
    }
    seen.into_iter().collect()
}

/// The distinct innermost module paths of `nodes`, in node order; `None` when none has one.
fn innermost_modules(g: &Graph, nodes: &[NodeId]) -> Option<Vec<String>> {
    let mut paths: Vec<String> = Vec::new();
    for path in nodes
        .iter()
        .filter_map(|&n| g.nodes.get(n).and_then(|x| x.innermost_module()))
    {
        if !paths.iter().any(|p| p == path) {
            paths.push(path.to_string());
        }
    }
    (!paths.is_empty()).then_some(paths)
}

/// Fills each row's `snr_in_db`: the lowest SNR of the rows whose B nodes produce its inputs,
/// looking back through unmatched B nodes.
fn carried_in(g: &Graph, rows: &mut [Row]) {
    let mut row_of: BTreeMap<NodeId, usize> = BTreeMap::new();
    for (i, r) in rows.iter().enumerate() {
        for &n in &r.b_nodes {
            row_of.insert(n, i);
        }
    }
    let producers = |n: NodeId| -> Vec<NodeId> {
        g.nodes
            .get(n)
            .into_iter()
            .flat_map(|x| &x.inputs)
            .filter_map(|&v| g.writer(v))
            .collect()
    };
    for i in 0..rows.len() {
        let mut upstream = BTreeSet::new();
        let mut stack: Vec<NodeId> = rows[i].b_nodes.iter().flat_map(|&n| producers(n)).collect();
        let mut seen = BTreeSet::new();
        while let Some(n) = stack.pop() {
            if !seen.insert(n) || seen.len() > 4096 {
                continue;
            }
            match row_of.get(&n) {
                Some(&r) if r == i => {}
                Some(&r) => {
                    upstream.insert(r);
                }
                None => stack.extend(producers(n)),
            }
        }
        rows[i].snr_in_db = upstream
            .iter()
            .filter_map(|&r| rows[r].metrics.map(|m| m.snr_db))
            .reduce(f64::min);
    }
}

/// A tensor as floats: dequantized with the value's quantization parameters when it is an
/// integer tensor that has them.
fn comparable(g: &Graph, node: NodeId, t: &TensorData) -> Result<Vec<f64>, String> {
    let values = t.to_f64().map_err(|e| e.to_string())?;
    let quant = g
        .nodes
        .get(node)
        .and_then(|n| n.outputs.first())
        .and_then(|&v| g.values.get(v))
        .and_then(|v| v.quant);
    Ok(match (t.dtype.is_integer(), quant) {
        (true, Some(q)) => values
            .iter()
            .map(|&x| (x - q.zero_point as f64) * q.scale)
            .collect(),
        // an 8- or 16-bit activation with no scale the program states (no ETRecord beside
        // it, no quantize or dequantize next to it): its codes are not real values, and no
        // SNR is made of them
        (true, None) if matches!(t.dtype.element_size(), Some(1 | 2)) => {
            return Err(format!(
                "{} {}: its program states no scale for it (an ETRecord beside the program gives one); not compared with a float tensor",
                t.dtype.short_name(),
                g.nodes.get(node).map(|n| n.qualified_op()).unwrap_or_default()
            ))
        }
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

/// A's values, B's values and their common shape.
pub type Aligned = (Vec<f64>, Vec<f64>, Vec<usize>);

/// Data whose sizes list the model's dims in `order` (`shape[i]` is model dim `order[i]`),
/// rearranged into the model's order; `None` when `order` is no permutation of the rank.
fn to_model_order(
    data: &[f64],
    shape: &[usize],
    order: &[usize],
) -> Option<(Vec<f64>, Vec<usize>)> {
    let rank = shape.len();
    if order.len() != rank || (0..rank).any(|d| !order.contains(&d)) {
        return None;
    }
    if order.iter().enumerate().all(|(i, &d)| i == d) {
        return Some((data.to_vec(), shape.to_vec()));
    }
    let mut model_shape = vec![0; rank];
    for (i, &d) in order.iter().enumerate() {
        model_shape[d] = shape[i];
    }
    if crate::kernels::element_count(shape) != Some(data.len()) {
        return None;
    }
    // model dim m is the data's dim j where order[j] = m
    let perm = crate::kernels::layout::inverse(order);
    let out = crate::kernels::layout::permute(data, shape, &perm);
    Some((out, model_shape))
}

/// The logical order (see `ir::layout`) of node `n`'s first output, where the program says.
fn order_of(g: &Graph, n: NodeId) -> Option<&[usize]> {
    let v = *g.nodes.get(n)?.outputs.first()?;
    g.values.get(v)?.logical_order.as_deref()
}

/// Both sides of a pair as values in one logical layout (NCHW where one side holds NHWC):
/// equal integer types as stored (LSB counts stay meaningful), otherwise real values through
/// each side's quantization parameters. Returns A's values, B's values and the shape.
fn aligned(
    ga: &Graph,
    ia: usize,
    a: &TensorData,
    gb: &Graph,
    ib: usize,
    b: &TensorData,
) -> Result<Aligned, String> {
    let (mut xa, mut xb) = if a.dtype == b.dtype && a.dtype.is_integer() {
        (
            a.to_f64().map_err(|e| e.to_string())?,
            b.to_f64().map_err(|e| e.to_string())?,
        )
    } else {
        (comparable(ga, ia, a)?, comparable(gb, ib, b)?)
    };
    // both sides in the model's order, as their programs say
    if let (Some(oa), Some(ob)) = (order_of(ga, ia), order_of(gb, ib)) {
        if let (Some((ma, sa)), Some((mb, sb))) = (
            to_model_order(&xa, &a.shape, oa),
            to_model_order(&xb, &b.shape, ob),
        ) {
            // equal, or equal but for unit dims (a 1-D convolution computed as a 2-D one of
            // height 1): the same elements in the same order
            let squeezed = |s: &[usize]| s.iter().copied().filter(|&d| d != 1).collect::<Vec<_>>();
            if sa == sb || (ma.len() == mb.len() && squeezed(&sa) == squeezed(&sb)) {
                return Ok((ma, mb, sa));
            }
        }
    }
    // where a program says nothing: channels-last recognised by its shape
    let mut shape = a.shape.clone();
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
            shape = b.shape.clone();
        } else if a.numel() != b.numel() {
            return Err(format!("shapes differ: {:?} vs {:?}", a.shape, b.shape));
        }
    }
    Ok((xa, xb, shape))
}

/// The tensors of a matched pair (A's node `na`, B's node `nb`) as the metrics compare them:
/// in one logical layout (channels-last undone), dequantized unless both are the same integer
/// type. `None` when a side captured nothing.
pub fn comparable_pair(
    a: &Source,
    na: NodeId,
    b: &Source,
    nb: NodeId,
) -> Option<Result<(TensorData, TensorData), String>> {
    let ta = a.tensors.get(&na)?.first()?;
    let tb = b.tensors.get(&nb)?.first()?;
    Some(
        aligned(&a.graph, na, ta, &b.graph, nb, tb).map(|(xa, xb, shape)| {
            let as_data = |v: &[f64]| TensorData {
                dtype: crate::ScalarType::Double,
                shape: shape.clone(),
                bytes: v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            };
            (as_data(&xa), as_data(&xb))
        }),
    )
}

/// Program output `k` of both sides as the metrics compare them (one logical layout,
/// dequantized unless both are the same integer type), with its logical sizes; `None` when a
/// side has no such output or did not capture it.
pub fn comparable_output(a: &Source, b: &Source, k: usize) -> Option<Result<Aligned, String>> {
    let (pa, ia) = output_producer(&a.graph, k)?;
    let (pb, ib) = output_producer(&b.graph, k)?;
    let ta = a
        .tensors
        .get(&pa)
        .and_then(|v| v.get(ia).or_else(|| v.first()))?;
    let tb = b
        .tensors
        .get(&pb)
        .and_then(|v| v.get(ib).or_else(|| v.first()))?;
    Some(aligned(&a.graph, pa, ta, &b.graph, pb, tb))
}

/// The nodes of `group` whose out tensors leave it (used by a node outside the group, or a
/// graph output), latest first.
fn exits(g: &Graph, group: &[NodeId]) -> Vec<NodeId> {
    let mut out: Vec<NodeId> = group
        .iter()
        .copied()
        .filter(|&n| {
            let Some(node) = g.nodes.get(n) else {
                return false;
            };
            node.outputs.iter().any(|v| {
                g.outputs.contains(v)
                    || g.values
                        .get(*v)
                        .is_some_and(|x| x.consumers.iter().any(|c| !group.contains(c)))
            })
        })
        .collect();
    out.sort_unstable_by(|x, y| y.cmp(x));
    out
}

/// Where two groups whose last nodes differ in shape hold one quantity: the latest pair of
/// their exits with one shape, else one side's last node or an exit and the latest node of the
/// other side with the same operator and shape (a GRU island ends at the `cat` of its output
/// sequence on one side; on the other that `cat` feeds a `select` inside the group); compared,
/// with a note saying where.
fn exits_compared(
    a: &Source,
    an: &[NodeId],
    b: &Source,
    bn: &[NodeId],
) -> Option<(Metrics, String)> {
    let op = |g: &Graph, n: NodeId| g.nodes.get(n).map(|n| n.qualified_op()).unwrap_or_default();
    let latest = |group: &[NodeId]| {
        let mut v = group.to_vec();
        v.sort_unstable_by(|x, y| y.cmp(x));
        v
    };
    let (ea, eb) = (exits(&a.graph, an), exits(&b.graph, bn));
    let (la, lb) = (latest(an), latest(bn));
    let same_op = |na: NodeId, nb: NodeId| op(&a.graph, na) == op(&b.graph, nb);
    // exits against exits; then each exit or last node of one side against the other side's
    // nodes of its operator, latest first
    let mut pairs: Vec<(NodeId, NodeId)> = ea
        .iter()
        .flat_map(|&x| eb.iter().map(move |&y| (x, y)))
        .collect();
    for &y in eb.iter().chain(lb.first()) {
        pairs.extend(la.iter().filter(|&&x| same_op(x, y)).map(|&x| (x, y)));
    }
    for &x in ea.iter().chain(la.first()) {
        pairs.extend(lb.iter().filter(|&&y| same_op(x, y)).map(|&y| (x, y)));
    }
    pairs.into_iter().find_map(|(na, nb)| {
        let x = a.tensors.get(&na).and_then(|v| v.first())?;
        let y = b.tensors.get(&nb).and_then(|v| v.first())?;
        if x.shape != y.shape {
            return None;
        }
        let m = compare(&a.graph, na, x, &b.graph, nb, y).ok()?;
        let at = format!(
            "compared where both groups hold a {:?} tensor: {} (node {na}) and {} (node {nb}); their last nodes differ in shape",
            x.shape,
            op(&a.graph, na),
            op(&b.graph, nb)
        );
        Some((m, at))
    })
}

fn compare(
    ga: &Graph,
    ia: usize,
    a: &TensorData,
    gb: &Graph,
    ib: usize,
    b: &TensorData,
) -> Result<Metrics, String> {
    let (xa, xb, _) = aligned(ga, ia, a, gb, ib, b)?;
    let mut m = metrics(&xa, &xb);
    if a.dtype.is_integer() && b.dtype.is_integer() && a.dtype == b.dtype {
        // `aligned` gives both sides' integer codes, element against element in the model's
        // order: the codes compared as the other metrics compare them, not as stored
        let one = xa
            .iter()
            .zip(&xb)
            .filter(|(x, y)| (*x - *y).abs() == 1.0)
            .count();
        let more = xa
            .iter()
            .zip(&xb)
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
    fn a_tensor_in_another_logical_order_is_brought_into_the_models() {
        // NCHW [1,2,1,3] = 0..6; its NHWC [1,1,3,2] interleaves the channels
        let nchw: Vec<f64> = (0..6).map(f64::from).collect();
        let nhwc = [0.0, 3.0, 1.0, 4.0, 2.0, 5.0];
        let (back, shape) = to_model_order(&nhwc, &[1, 1, 3, 2], &[0, 2, 3, 1]).expect("perm");
        assert_eq!(shape, [1, 2, 1, 3]);
        assert_eq!(back, nchw);
        // equal channel count, height and width: only the order says
        let cube: Vec<f64> = (0..8).map(f64::from).collect();
        let (as_nchw, _) = to_model_order(&cube, &[1, 2, 2, 2], &[0, 2, 3, 1]).expect("perm");
        assert_ne!(as_nchw, cube);
        assert_eq!(nhwc_to_nchw(&cube, &[1, 2, 2, 2]), as_nchw);
        assert!(to_model_order(&cube, &[1, 2, 2, 2], &[0, 0, 1, 2]).is_none());
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
