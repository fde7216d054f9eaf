//! Whether two lowered graphs are the same program: the same kernel calls in the same order,
//! equal scalar arguments, constant tensors equal bit for bit, and every tensor argument read
//! from the same place (the same graph input, the same constant data, or the same output of
//! the same call). Names are not compared: ExecuTorch's and etscope's passes name new nodes and
//! constants each their own way.

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
    match val.producer {
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
