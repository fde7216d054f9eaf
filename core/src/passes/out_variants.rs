//! A `torch.export` stage's functional calls in their kernels' form. Each node's arguments are
//! put in its schema's order, the defaults the export left out filled from the registry's
//! schema, and its outputs appended as the out variant takes them (outs, then the returned
//! value). Calls that only have another operator's kernel are rewritten onto it as the
//! registry's `computed_by` column says (`conv2d` onto `convolution`, `batch_norm` onto
//! `_native_batch_norm_legit_no_training`, `softmax` onto `_softmax`, every view onto
//! `view_copy` with the output's sizes).

use super::{Pass, PassError};
use crate::ir::module::Module;
use crate::ir::{Arg, ArgData, Node, NodeKind};
use crate::ops::{self, ArgDefault, ArgType, FormArg};

/// The pass.
pub struct OutVariants;

impl Pass for OutVariants {
    fn name(&self) -> &'static str {
        "out_variants"
    }

    fn run(&self, mut module: Module, _: &()) -> Result<(Module, bool), PassError> {
        let graph = &mut module.graph;
        let mut changed = false;
        for i in 0..graph.nodes.len() {
            if graph.nodes[i].kind != NodeKind::Operator {
                continue;
            }
            let shapes: Vec<Vec<i64>> = graph.nodes[i]
                .outputs
                .iter()
                .map(|&o| {
                    graph
                        .values
                        .get(o)
                        .map(|v| v.shape.clone())
                        .unwrap_or_default()
                })
                .collect();
            changed |= lower(&mut graph.nodes[i], &shapes);
        }
        Ok((module, changed))
    }
}

/// A literal argument.
fn lit(data: ArgData) -> Arg {
    Arg::new(None, None, data)
}

fn ints(v: &[i64]) -> ArgData {
    ArgData::Ints(v.iter().map(|&x| Some(x)).collect())
}

/// The schema default as argument data (`int[2]` defaults of one int repeat it).
fn default_data(d: &ArgDefault, fixed_len: Option<usize>, ty: &ArgType) -> ArgData {
    match d {
        ArgDefault::None => ArgData::None,
        ArgDefault::Int(i) if *ty == ArgType::Float => ArgData::Float(*i as f64),
        ArgDefault::Int(i) => ArgData::Int(*i),
        ArgDefault::Float(f) => ArgData::Float(*f),
        ArgDefault::Bool(b) => ArgData::Bool(*b),
        ArgDefault::Str(s) => ArgData::Str(s.clone()),
        ArgDefault::Ints(v) if v.len() == 1 => ints(&vec![v[0]; fixed_len.unwrap_or(1)]),
        ArgDefault::Ints(v) => ints(v),
    }
}

/// The node's arguments in its schema's order, with the defaults it leaves out; as given when
/// the registry has no schema.
fn schema_args(node: &Node, schema_of: &str) -> Vec<Arg> {
    let Some(schema) = ops::lookup(schema_of, "").and_then(|id| ops::def(id).parsed_schema())
    else {
        return node.args.clone();
    };
    let named = node.args.iter().any(|a| a.name.is_some());
    schema
        .args
        .iter()
        .enumerate()
        .map(|(k, spec)| {
            let given = if named {
                node.args
                    .iter()
                    .find(|a| a.name.as_deref() == Some(spec.name.as_str()))
            } else {
                node.args.get(k)
            };
            match given {
                Some(a) => a.clone(),
                None => {
                    let data = spec
                        .default
                        .as_ref()
                        .map_or(ArgData::None, |d| default_data(d, spec.fixed_len, &spec.ty));
                    Arg::new(Some(spec.name.clone()), None, data)
                }
            }
        })
        .collect()
}

/// Rewrites one node into its kernel form (a node already in it is left alone); whether it
/// changed the node.
fn lower(node: &mut Node, output_shapes: &[Vec<i64>]) -> bool {
    if let Some(d) = node.def() {
        if node.overload.is_empty() || d.is_out_overload(&node.overload) {
            return false;
        }
    }
    let name = node.op.clone();
    let overload = node.overload.clone();
    // an operator computed by another's kernel: the registry's `computed_by` says which and
    // how the arguments map
    let form = ops::lookup(&name, &overload)
        .map(ops::def)
        .and_then(|d| d.computed_by.map(|f| (d.name, f)));
    let (target, target_overload, mut args) = match form {
        Some((schema_of, form)) => {
            let a = schema_args(node, schema_of);
            let get = |k: usize| a.get(k).cloned().unwrap_or_else(|| lit(ArgData::None));
            let args: Vec<Arg> = form
                .args
                .iter()
                .map(|f| match *f {
                    FormArg::Arg(k) => get(k),
                    FormArg::First => node
                        .args
                        .first()
                        .cloned()
                        .unwrap_or_else(|| lit(ArgData::None)),
                    FormArg::False => lit(ArgData::Bool(false)),
                    FormArg::ZeroPair => lit(ints(&[0, 0])),
                    FormArg::OutputSizes => {
                        lit(ints(&output_shapes.first().cloned().unwrap_or_default()))
                    }
                })
                .collect();
            (form.op, "out", args)
        }
        None => {
            let Some(d) = node.def() else {
                // an operator etscope does not know: its kernel form is the out variant by name
                let args = node.args.clone();
                append_outputs(node, args);
                node.overload = "out".into();
                return true;
            };
            let out = [format!("{overload}_out"), "out".to_string()]
                .into_iter()
                .find(|o| d.is_out_overload(o))
                .or_else(|| d.out_overloads.first().map(|o| o.to_string()));
            let Some(out) = out else {
                return false;
            };
            let mut args = schema_args(node, d.name);
            // a factory's tensor options (dtype, layout, device, pin_memory) are not arguments
            // of its out variant: the out tensor carries them
            if args.iter().any(|a| a.name.as_deref() == Some("layout")) {
                args.retain(|a| {
                    !matches!(
                        a.name.as_deref(),
                        Some("dtype" | "layout" | "device" | "pin_memory")
                    )
                });
            }
            node.set_op(d.name, &out);
            append_outputs(node, args);
            return true;
        }
    };
    args.iter_mut().for_each(|a| a.name = None);
    node.set_op(target, target_overload);
    append_outputs(node, std::mem::take(&mut args));
    true
}

/// Sets the node's arguments to `args`, its out tensors, and the returned value; an operator
/// returning a tensor list takes its outs as one list and returns nothing.
fn append_outputs(node: &mut Node, mut args: Vec<Arg>) {
    if node
        .def()
        .and_then(|d| d.parsed_schema())
        .is_some_and(|s| s.returns_list)
    {
        // the outs as one list, and the same list returned
        let outs = node.outputs.clone();
        for name in [Some("out".to_string()), None] {
            args.push(Arg::new(
                name,
                outs.first().copied(),
                ArgData::Tensors(outs.clone()),
            ));
        }
        node.args = args;
        return;
    }
    for &o in &node.outputs {
        args.push(Arg::new(Some("out".into()), Some(o), ArgData::Tensor(o)));
    }
    if let Some(&first) = node.outputs.first() {
        args.push(Arg::new(None, Some(first), ArgData::Tensor(first)));
    }
    node.args = args;
}
