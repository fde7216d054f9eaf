//! Whether two lowered graphs are the same program: the same kernel calls in the same order,
//! equal scalar arguments, constant tensors equal bit for bit, and every tensor argument read
//! from the same place (the same graph input, the same constant data, or the same output of
//! the same call). Names are not compared: ExecuTorch's and etscope's passes name new nodes and
//! constants each their own way. Two programs must also place every tensor argument in the same
//! arena at the same offset and declare the same arena sizes.

use crate::ir::{ArgData, Graph, NodeKind, Storage, ValueId};
use crate::tensor::TensorData;

/// A graph with the data of its constants.
pub struct Side<'a> {
    pub graph: &'a Graph,
    pub constant: &'a dyn Fn(ValueId) -> Option<TensorData>,
}

/// Where a tensor argument comes from.
#[derive(Debug, PartialEq)]
enum Source {
    Input(usize),
    Constant(Option<TensorData>),
    Output { call: usize, index: usize },
    Unknown,
}

fn source(side: &Side, calls: &[usize], v: ValueId) -> Source {
    let g = side.graph;
    if let Some(k) = g.inputs.iter().position(|&i| i == v) {
        return Source::Input(k);
    }
    let Some(val) = g.values.get(v) else {
        return Source::Unknown;
    };
    if val.storage == Storage::Constant {
        return Source::Constant((side.constant)(v));
    }
    match val.producer.or_else(|| g.producer_through_aliases(v)) {
        Some(p) => match calls.iter().position(|&c| c == p) {
            Some(call) => Source::Output {
                call,
                index: g.nodes[p].outputs.iter().position(|&o| o == v).unwrap_or(0),
            },
            None => Source::Unknown,
        },
        None => Source::Unknown,
    }
}

/// The operator calls of `g`, in order.
fn calls(g: &Graph) -> Vec<usize> {
    g.nodes
        .iter()
        .filter(|n| matches!(n.kind, NodeKind::Operator | NodeKind::Delegate))
        .map(|n| n.id)
        .collect()
}

/// Every difference between `a` and `b` (empty: the same program), each a sentence naming the
/// call (by position and both names) and what differs.
pub fn differences(a: &Side, b: &Side) -> Vec<String> {
    let (ca, cb) = (calls(a.graph), calls(b.graph));
    let mut out = Vec::new();
    if !a.graph.arenas.is_empty() && !b.graph.arenas.is_empty() && a.graph.arenas != b.graph.arenas
    {
        out.push(format!(
            "arenas of {:?} bytes against {:?}",
            a.graph.arenas, b.graph.arenas
        ));
    }
    if ca.len() != cb.len() {
        out.push(format!("{} calls against {}", ca.len(), cb.len()));
    }
    for (k, (&na, &nb)) in ca.iter().zip(&cb).enumerate() {
        let (x, y) = (&a.graph.nodes[na], &b.graph.nodes[nb]);
        let at = format!("call {k} ({} / {})", x.name, y.name);
        if x.qualified_op() != y.qualified_op() {
            out.push(format!(
                "{at}: {} against {}",
                x.qualified_op(),
                y.qualified_op()
            ));
            continue;
        }
        if x.args.len() != y.args.len() {
            out.push(format!(
                "{at}: {} arguments against {}",
                x.args.len(),
                y.args.len()
            ));
            continue;
        }
        for (i, (p, q)) in x.args.iter().zip(&y.args).enumerate() {
            let same = match (&p.data, &q.data) {
                (ArgData::Tensor(u), ArgData::Tensor(v)) => {
                    let (su, sv) = (source(a, &ca, *u), source(b, &cb, *v));
                    if su != sv {
                        out.push(format!(
                            "{at}: argument {i} ({}) reads {} against {}",
                            p.name.as_deref().unwrap_or("?"),
                            describe(&su),
                            describe(&sv)
                        ));
                    }
                    // where both are programs: the same arena and offset
                    let (pu, pv) = (a.graph.values[*u].placement, b.graph.values[*v].placement);
                    if let (Some(pu), Some(pv)) = (pu, pv) {
                        if (pu.memory_id, pu.offset) != (pv.memory_id, pv.offset) {
                            out.push(format!(
                                "{at}: argument {i} ({}) is placed at arena {} offset {} against arena {} offset {}",
                                p.name.as_deref().unwrap_or("?"),
                                pu.memory_id,
                                pu.offset,
                                pv.memory_id,
                                pv.offset
                            ));
                        }
                    }
                    true
                }
                (ArgData::Tensors(us), ArgData::Tensors(vs)) => {
                    us.len() == vs.len()
                        && us
                            .iter()
                            .zip(vs)
                            .all(|(u, v)| source(a, &ca, *u) == source(b, &cb, *v))
                }
                (l, r) => l == r,
            };
            if !same {
                out.push(format!(
                    "{at}: argument {i} ({}) is {:?} against {:?}",
                    p.name.as_deref().unwrap_or("?"),
                    p.data,
                    q.data
                ));
            }
        }
        for (&u, &v) in x.outputs.iter().zip(&y.outputs) {
            let (vu, vv) = (&a.graph.values[u], &b.graph.values[v]);
            if vu.dtype != vv.dtype || vu.shape != vv.shape || vu.dim_order != vv.dim_order {
                out.push(format!(
                    "{at}: output {:?}{:?} dim_order {:?} against {:?}{:?} dim_order {:?}",
                    vu.dtype, vu.shape, vu.dim_order, vv.dtype, vv.shape, vv.dim_order
                ));
            }
        }
    }
    out
}

fn describe(s: &Source) -> String {
    match s {
        Source::Input(k) => format!("graph input {k}"),
        Source::Constant(Some(t)) => format!("a constant {}{:?}", t.dtype.name(), t.shape),
        Source::Constant(None) => "a constant without data".into(),
        Source::Output { call, index } => format!("output {index} of call {call}"),
        Source::Unknown => "an undefined value".into(),
    }
}

/// What one pass did to a graph, by node name (a kept node keeps its name through a pass).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Changes {
    /// Nodes present before and after, with the same operator and arguments.
    pub kept: usize,
    /// Nodes present before and after with another operator or other arguments.
    pub changed: Vec<String>,
    /// Operators of the nodes the pass added.
    pub added: Vec<String>,
    /// Operators of the nodes the pass removed.
    pub removed: Vec<String>,
}

impl Changes {
    /// One line: `removed 14 (dequantize_per_tensor ×8, …), added 3 (…), changed 2`.
    pub fn summary(&self) -> String {
        fn counted(ops: &[String]) -> String {
            let mut counts: Vec<(String, usize)> = Vec::new();
            for op in ops {
                let short = op.rsplit("::").next().unwrap_or(op).to_string();
                match counts.iter_mut().find(|(o, _)| *o == short) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((short, 1)),
                }
            }
            counts
                .iter()
                .map(|(o, n)| {
                    if *n > 1 {
                        format!("{o} ×{n}")
                    } else {
                        o.clone()
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        }
        let mut parts = Vec::new();
        if !self.removed.is_empty() {
            parts.push(format!(
                "removed {} ({})",
                self.removed.len(),
                counted(&self.removed)
            ));
        }
        if !self.added.is_empty() {
            parts.push(format!(
                "added {} ({})",
                self.added.len(),
                counted(&self.added)
            ));
        }
        if !self.changed.is_empty() {
            parts.push(format!(
                "changed {} ({})",
                self.changed.len(),
                counted(&self.changed)
            ));
        }
        if parts.is_empty() {
            "nothing".into()
        } else {
            parts.join("; ")
        }
    }
}

/// What changed from `before` to `after`.
pub fn changes(before: &Graph, after: &Graph) -> Changes {
    use std::collections::HashMap;
    let ops = |g: &Graph| -> HashMap<String, usize> {
        g.nodes
            .iter()
            .filter(|n| matches!(n.kind, NodeKind::Operator | NodeKind::Delegate))
            .map(|n| (n.name.clone(), n.id))
            .collect()
    };
    let (b, a) = (ops(before), ops(after));
    let mut out = Changes::default();
    for n in before.nodes.iter().filter(|n| b.contains_key(&n.name)) {
        match a.get(&n.name) {
            None => out.removed.push(n.qualified_op()),
            Some(&id) => {
                let m = &after.nodes[id];
                // no pass renumbers values: tensor arguments compare by id
                let same_args = n.args.len() == m.args.len()
                    && n.args.iter().zip(&m.args).all(|(x, y)| x.data == y.data);
                if n.qualified_op() == m.qualified_op() && same_args {
                    out.kept += 1;
                } else {
                    out.changed.push(m.qualified_op());
                }
            }
        }
    }
    for n in after.nodes.iter().filter(|n| a.contains_key(&n.name)) {
        if !b.contains_key(&n.name) {
            out.added.push(n.qualified_op());
        }
    }
    out
}

/// The data of constant `v` of plan `plan_index` of `program`, logical (row-major) bytes.
pub fn program_constant(
    program: &crate::formats::pte::Program,
    plan_index: usize,
    v: ValueId,
) -> Option<TensorData> {
    let (dtype, shape, bytes) = program.constant_logical(plan_index, v)?;
    Some(TensorData {
        dtype,
        shape,
        bytes,
    })
}

/// Every difference between plan 0 of two programs: their kernel calls in order, scalar
/// arguments, tensor arguments' sources and constant data (see [`differences`]).
pub fn program_differences(
    a: &crate::formats::pte::Program,
    b: &crate::formats::pte::Program,
) -> Vec<String> {
    use crate::ir::from_pte::graph_from_plan;
    let (Some(ga), Some(gb)) = (
        graph_from_plan(a, a.default_plan_index()),
        graph_from_plan(b, b.default_plan_index()),
    ) else {
        return vec!["a program has no execution plan".into()];
    };
    let ca = |v: ValueId| program_constant(a, a.default_plan_index(), v);
    let cb = |v: ValueId| program_constant(b, b.default_plan_index(), v);
    differences(
        &Side {
            graph: &ga,
            constant: &ca,
        },
        &Side {
            graph: &gb,
            constant: &cb,
        },
    )
}
