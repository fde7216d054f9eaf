//! Node arguments as a person reads them: the IR keeps them typed, the viewer renders them
//! (`[1, 1]`, `0.0039`, `None`, `%x` for a tensor by its name).

use etscope_core::ir::{Arg, ArgData, Graph};

/// A literal rendering of `arg` (tensors by their value's label).
pub fn render_arg(graph: &Graph, arg: &Arg) -> String {
    let tensor = |v: usize| {
        graph
            .values
            .get(v)
            .map_or_else(|| format!("%v{v}"), |x| format!("%{}", x.label()))
    };
    let list = |items: Vec<String>| format!("[{}]", items.join(", "));
    match &arg.data {
        ArgData::None => "None".into(),
        ArgData::Int(i) => i.to_string(),
        ArgData::Float(f) => format!("{f}"),
        ArgData::Bool(b) => if *b { "True" } else { "False" }.into(),
        ArgData::Str(s) => format!("{s:?}"),
        ArgData::Other(s) => s.clone(),
        ArgData::ScalarType(t) => format!("torch.{}", t.name()),
        ArgData::Ints(v) => list(
            v.iter()
                .map(|x| x.map_or_else(|| "?".into(), |x| x.to_string()))
                .collect(),
        ),
        ArgData::Floats(v) => list(v.iter().map(|x| format!("{x}")).collect()),
        ArgData::Bools(v) => list(v.iter().map(|x| x.to_string()).collect()),
        ArgData::Tensor(v) => tensor(*v),
        ArgData::Tensors(v) => list(v.iter().map(|&t| tensor(t)).collect()),
        ArgData::OptionalTensors(v) => list(
            v.iter()
                .map(|t| t.map_or_else(|| "None".into(), tensor))
                .collect(),
        ),
    }
}

/// The name to show for argument `k` of a node: the argument's own, else the registry
/// schema's; past the schema's arguments, an out variant's out arguments (`out`, or `out0`,
/// `out1`… for several results) and then the value it returns (`returns`), as ExecuTorch's
/// emitter lays a kernel call out; else its position.
pub fn arg_name(node: &etscope_core::ir::Node, k: usize) -> String {
    if let Some(n) = node.args.get(k).and_then(|a| a.name.clone()) {
        return n;
    }
    if node.kind == etscope_core::ir::NodeKind::Delegate {
        // a delegate call has no schema: its arguments are the values it reads and writes
        if let Some(ArgData::Tensor(v)) = node.args.get(k).map(|a| &a.data) {
            if let Some(j) = node.outputs.iter().position(|o| o == v) {
                return format!("output {j}");
            }
            if let Some(j) = node.inputs.iter().position(|i| i == v) {
                return format!("input {j}");
            }
        }
    }
    let Some(schema) = node.def().and_then(|d| d.parsed_schema()) else {
        return k.to_string();
    };
    // an out variant of a factory function has no TensorOptions: torchgen drops `dtype`,
    // `layout`, `device` and `pin_memory` from `.out` overloads (`full.out(size, fill_value,
    // *, out)`), so the emitted call's arguments skip them
    let out_variant = node.overload == "out" || node.overload.ends_with("_out");
    let has = |name: &str| schema.args.iter().any(|a| a.name == name);
    let options = out_variant && has("layout") && has("device") && has("pin_memory");
    let names: Vec<&str> = schema
        .args
        .iter()
        .map(|a| a.name.as_str())
        .filter(|n| !(options && matches!(*n, "dtype" | "layout" | "device" | "pin_memory")))
        .collect();
    if let Some(a) = names.get(k) {
        return a.to_string();
    }
    let results = schema.returns.max(1);
    match k - names.len() {
        j if j < results && results == 1 => "out".into(),
        j if j < results => format!("out{j}"),
        j if j == results => "returns".into(),
        _ => k.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use etscope_core::formats::pte::Program;
    use etscope_core::ir::from_pte::graph_from_plan;

    /// The graph of plan 0 of the program at `rel` (from the workspace root).
    fn graph_of(rel: &str) -> Graph {
        let path = format!("{}/../{rel}", env!("CARGO_MANIFEST_DIR"));
        let program = Program::parse(std::fs::read(&path).expect(&path)).expect("parses");
        graph_from_plan(&program, 0).expect("graph")
    }

    #[test]
    fn a_programs_convolution_arguments_read_as_python_writes_them() {
        let g = graph_of("tests/fixtures/tiny_conv_relu_linear/model_fp32.pte");
        let conv = g
            .nodes
            .iter()
            .find(|n| n.op == "aten::convolution")
            .expect("conv");
        let texts: Vec<String> = conv.args.iter().map(|a| render_arg(&g, a)).collect();
        assert!(texts[0].starts_with("%v"), "{texts:?}");
        assert_eq!(texts[3], "[1, 1]", "stride: {texts:?}");
        assert_eq!(texts[6], "False", "transposed: {texts:?}");
        assert_eq!(arg_name(conv, 3), "stride");
        assert_eq!(arg_name(conv, 8), "groups");
        // the out variant's out argument and the value the call returns
        assert_eq!(conv.args.len(), 11);
        assert_eq!(arg_name(conv, 9), "out");
        assert_eq!(arg_name(conv, 10), "returns");
    }

    #[test]
    fn a_factory_functions_out_variant_is_named_without_tensor_options() {
        let g = graph_of("tests/fixtures/portable_ops/ones/model.pte");
        let full = g.nodes.iter().find(|n| n.op == "aten::full").expect("full");
        let names: Vec<String> = (0..full.args.len()).map(|k| arg_name(full, k)).collect();
        assert_eq!(names, ["size", "fill_value", "out", "returns"]);
    }

    #[test]
    fn a_call_with_several_results_names_each_out_argument() {
        let g = graph_of("assets/ds_cnn_kws/model_fp32.pte");
        let bn = g
            .nodes
            .iter()
            .find(|n| n.op == "aten::_native_batch_norm_legit_no_training")
            .expect("batch norm");
        let names: Vec<String> = (0..bn.args.len()).map(|k| arg_name(bn, k)).collect();
        assert!(
            names.ends_with(&[
                "out0".into(),
                "out1".into(),
                "out2".into(),
                "returns".into()
            ]),
            "{names:?}"
        );
        assert!(
            !names.iter().any(|n| n.parse::<usize>().is_ok()),
            "{names:?}"
        );
    }

    #[test]
    fn every_argument_of_a_cortex_m_program_has_a_name() {
        for file in [
            "assets/ds_cnn_kws/model_int8_cortex_m55.pte",
            "tests/fixtures/tiny_conv_relu_linear/model_int8_cortex_m4_default.pte",
        ] {
            let g = graph_of(file);
            for n in g.nodes.iter().filter(|n| n.op.starts_with("cortex_m::")) {
                for k in 0..n.args.len() {
                    let name = arg_name(n, k);
                    assert!(
                        name.parse::<usize>().is_err(),
                        "{file}: {} argument {k}",
                        n.op
                    );
                }
            }
        }
    }

    #[test]
    fn a_delegate_calls_arguments_are_named_by_what_they_carry() {
        let g = graph_of("tests/fixtures/tiny_conv_relu_linear/model_fp32_xnnpack.pte");
        let call = g
            .nodes
            .iter()
            .find(|n| n.kind == etscope_core::ir::NodeKind::Delegate)
            .expect("the XNNPACK call");
        let names: Vec<String> = (0..call.args.len()).map(|k| arg_name(call, k)).collect();
        assert_eq!(names, ["input 0", "output 0"]);
    }
}
