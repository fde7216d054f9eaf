//! ReplaceScalarWithTensorArgPass: `add/sub/mul/div.Scalar` become their `.Tensor` overloads,
//! the scalar a `full([1], value)` of the tensor's dtype placed before the call.

use crate::ir::{ArgData, Storage};

use super::edit::{make_node, new_tensor, op_name, pos_in, unique_name};
use super::{LowerError, Module, Options, Pass};

pub struct ReplaceScalarWithTensorArg;

const OPS: [&str; 4] = ["aten::add", "aten::sub", "aten::mul", "aten::div"];

impl Pass<Options> for ReplaceScalarWithTensorArg {
    fn name(&self) -> &'static str {
        "ReplaceScalarWithTensorArgPass"
    }

    fn run(&self, mut m: Module, _: &Options) -> Result<(Module, bool), LowerError> {
        let mut nodes = Vec::with_capacity(m.graph.nodes.len());
        let mut changed = false;
        for mut node in std::mem::take(&mut m.graph.nodes) {
            let scalar = OPS.contains(&op_name(&node))
                && node.overload == "Scalar"
                && node.args.len() >= 2
                && (node.args.len() != 3 || matches!(op_name(&node), "aten::add" | "aten::sub"));
            // the scalar operand, by its schema name (`other` of add, sub, mul and div)
            let other = pos_in(&node, "other").unwrap_or(usize::MAX);
            let value = match node.args.get(other).map(|a| &a.data) {
                Some(ArgData::Float(f)) => Some(*f),
                Some(ArgData::Int(i)) => Some(*i as f64),
                _ => None,
            };
            let dtype = node
                .inputs
                .first()
                .and_then(|&v| m.graph.values.get(v))
                .and_then(|v| v.dtype);
            if let (true, Some(value), Some(dtype)) = (scalar, value, dtype) {
                let name = unique_name(&m.graph, "aten_full_default");
                let out = new_tensor(
                    &mut m.graph,
                    &name,
                    dtype,
                    vec![1],
                    vec![0],
                    Storage::Unplanned,
                );
                let mut full = make_node(
                    &name,
                    "aten::full",
                    "default",
                    vec![
                        ArgData::Ints(vec![Some(1)]),
                        ArgData::Float(value),
                        ArgData::ScalarType(dtype),
                    ],
                    vec![out],
                );
                full.debug_handles = node.debug_handles.clone();
                full.module_stack = node.module_stack.clone();
                nodes.push(full);
                let op = node.op.clone();
                node.set_op(&op, "Tensor");
                if let Some(arg) = node.args.get_mut(other) {
                    arg.data = ArgData::Tensor(out);
                    arg.value = Some(out);
                    arg.kind = "Tensor";
                }
                node.inputs.push(out);
                changed = true;
            }
            nodes.push(node);
        }
        super::edit::set_nodes(&mut m.graph, nodes);
        Ok((m, changed))
    }
}
