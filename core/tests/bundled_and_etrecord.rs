//! BundledProgram test cases against the `.npy` files they were made from; ETRecord stages,
//! debug-handle maps and the IR's node identity across artifacts.

mod common;

use etscope_core::formats::bundled::{BundledProgram, BundledValue};
use etscope_core::formats::etrecord::{ETRecord, EntryKind};
use etscope_core::formats::npy::read_npy;
use etscope_core::formats::pte::Program;
use etscope_core::ir::from_export::graph_from_export;
use etscope_core::ir::from_pte::graph_from_plan;
use etscope_core::ir::NodeKind;

#[test]
fn bundled_test_cases_equal_their_npy_sources() {
    let dir = common::tiny();
    let b = BundledProgram::parse(&common::read(&dir.join("model_fp32.bpte"))).expect("bpte");
    assert_eq!(b.suites.len(), 1);
    assert_eq!(b.suites[0].method_name, "forward");
    assert_eq!(b.test_case_count(), 3);
    assert_eq!(b.program.plans[0].main_instructions().len(), 4);
    for (i, case) in b.suites[0].test_cases.iter().enumerate() {
        let input = read_npy(&common::read(
            &dir.join(format!("bundled_test_cases/case{i}_input0.npy")),
        ))
        .expect("npy");
        let expected = read_npy(&common::read(
            &dir.join(format!("bundled_test_cases/case{i}_expected_output0.npy")),
        ))
        .expect("npy");
        assert_eq!(case.inputs, vec![BundledValue::Tensor(input)]);
        assert_eq!(case.expected_outputs, vec![BundledValue::Tensor(expected)]);
    }
}

#[test]
fn etrecord_stages_and_maps_match_the_listing() {
    for model in common::models() {
        for variant in [
            "model_fp32",
            "model_int8_qdq_portable",
            "model_int8_cortex_m55",
            "model_fp32_xnnpack",
        ] {
            let path = model.join(format!("{variant}.etrecord"));
            if !path.exists() {
                continue;
            }
            let rec = ETRecord::parse(&common::read(&path))
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let listing = common::json(&model.join(format!("{variant}.etrecord_listing.json")));
            let names: Vec<&str> = listing["entries"]
                .as_array()
                .expect("entries")
                .iter()
                .filter_map(|e| e["name"].as_str())
                .collect();
            assert_eq!(
                rec.entries
                    .iter()
                    .map(|e| e.name.as_str())
                    .collect::<Vec<_>>(),
                names
            );
            // every pickled entry is listed as opaque, never decoded
            for e in &rec.entries {
                if e.name.ends_with("_state_dict")
                    || e.name.ends_with("_constants")
                    || e.name.ends_with("_example_inputs")
                {
                    assert_eq!(e.kind, EntryKind::Pickle, "{}", e.name);
                }
            }
            let stage_names: Vec<&str> = rec.stages.iter().map(|s| s.name.as_str()).collect();
            assert_eq!(stage_names[0], "exported_program");
            assert!(stage_names.contains(&"edge_dialect_exported_program/forward"));
            if variant == "model_int8_cortex_m55" {
                assert!(
                    stage_names.contains(&"edge_after_transform/forward"),
                    "{stage_names:?}"
                );
            }
            let want = &listing["debug_handle_map"]["forward"];
            let got = &rec.debug_handle_map["forward"];
            assert_eq!(got.len(), want.as_object().map_or(0, |o| o.len()));
            for (k, v) in want.as_object().into_iter().flatten() {
                let handles: Vec<u32> = match v {
                    serde_json::Value::Array(a) => a
                        .iter()
                        .filter_map(|x| x.as_u64().map(|h| h as u32))
                        .collect(),
                    x => vec![x.as_u64().unwrap_or(0) as u32],
                };
                assert_eq!(got[&k.parse::<usize>().expect("id")], handles);
            }
            for stage in &rec.stages {
                let g = graph_from_export(&stage.graph, &stage.name, "forward");
                assert!(g.op_count() > 0, "{} {}", path.display(), stage.name);
                assert_eq!(g.op_count(), stage.graph.nodes.len());
            }
        }
    }
}

/// Instruction id ↔ debug handle ↔ ETRecord node: every mapped instruction finds edge-stage nodes
/// with the same handle, and the operator agrees.
#[test]
fn pte_instructions_link_to_etrecord_nodes_through_debug_handles() {
    for model in common::models() {
        let program = Program::parse(common::read(&model.join("model_fp32.pte"))).expect("pte");
        let rec =
            ETRecord::parse(&common::read(&model.join("model_fp32.etrecord"))).expect("etrecord");
        let mut pte = graph_from_plan(&program, 0).expect("plan");
        pte.attach_debug_handles(&rec.debug_handle_map["forward"]);
        let edge = rec.stage("edge").expect("edge stage");
        let edge_graph = graph_from_export(&edge.graph, "edge", "forward");
        let mut linked = 0;
        for n in pte.nodes.iter().filter(|n| n.kind == NodeKind::Operator) {
            for &h in &n.debug_handles {
                let matches: Vec<_> = edge_graph.nodes_with_handle(h).collect();
                assert!(
                    !matches.is_empty(),
                    "{}: instruction {:?} handle {h} has no edge node",
                    model.display(),
                    n.instruction_id
                );
                linked += 1;
            }
        }
        assert!(linked > 0, "{}: nothing linked", model.display());
        // the .pte conv instruction and the edge conv node share a handle
        let conv = pte
            .nodes
            .iter()
            .find(|n| n.op == "aten::convolution")
            .expect("conv");
        let h = conv.debug_handles[0];
        assert!(
            edge_graph
                .nodes_with_handle(h)
                .any(|n| n.op.contains("convolution")),
            "{}",
            model.display()
        );
    }
}

#[test]
fn pte_graph_links_producers_to_consumers_and_views_to_sources() {
    let program =
        Program::parse(common::read(&common::tiny().join("model_fp32.pte"))).expect("pte");
    let g = graph_from_plan(&program, 0).expect("plan");
    assert_eq!(g.instruction_count, 4);
    assert_eq!(g.op_count(), 4);
    let ops: Vec<String> = g
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Operator)
        .map(|n| n.qualified_op())
        .collect();
    assert_eq!(
        ops,
        [
            "aten::convolution.out",
            "aten::relu.out",
            "aten::permute_copy.out",
            "aten::addmm.out"
        ]
    );
    // the flatten view (value 21) aliases relu's output (20); addmm reads it, so relu → addmm
    assert_eq!(g.values[21].alias_of, Some(20));
    let relu = g.node_for_instruction(1).expect("relu").id;
    let addmm = g.node_for_instruction(3).expect("addmm").id;
    assert!(g
        .edges
        .iter()
        .any(|e| e.from == relu && e.to == addmm && e.value == 21));
    // constants are inputs without producers; the conv reads the weight and bias
    let conv = g.node_for_instruction(0).expect("conv");
    assert!(conv.inputs.contains(&0) && conv.inputs.contains(&1));
    assert_eq!(conv.outputs, vec![5]);
    assert_eq!(
        conv.args[3].data,
        etscope_core::ir::ArgData::Ints(vec![Some(1), Some(1)])
    );
}

#[test]
fn cortex_m_graph_carries_quantization_and_dim_order() {
    let program = Program::parse(common::read(
        &common::tiny().join("model_int8_cortex_m55.pte"),
    ))
    .expect("pte");
    let g = graph_from_plan(&program, 0).expect("plan");
    let q = g.node_for_instruction(0).expect("quantize");
    assert_eq!(q.op, "cortex_m::quantize_per_tensor");
    let out = &g.values[q.outputs[0]];
    let qp = out.quant.expect("quantize output has scale/zero point");
    assert!((qp.scale - 0.025375546888).abs() < 1e-12);
    assert_eq!(qp.zero_point, 5);
    // the conv reads a planned BYTE scratch tensor nobody writes
    let conv = g
        .nodes
        .iter()
        .find(|n| n.op == "cortex_m::quantized_conv2d_nhwc")
        .expect("conv");
    assert!(conv
        .inputs
        .iter()
        .any(
            |&v| g.values[v].dtype.map(|d| d.name()) == Some("BYTE".into())
                && g.values[v].producer.is_none()
        ));
}

/// Reading an ETRecord releasing as it goes hands every stage's graph over once, equal to the
/// whole read's, and keeps no graph and no weights; nodes of one module or one source line share
/// one copy of their module stack and stack trace.
#[test]
fn a_releasing_read_hands_over_every_stage_and_nodes_share_their_metadata() {
    let mut checked = 0;
    for path in [
        common::fixtures().join("models/unet/model_fp32.etrecord"),
        common::fixtures().join("lowering/ds_cnn_kws_m55_explicit.etrecord"),
    ] {
        let bytes = common::read(&path);
        let whole = ETRecord::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            !whole.released && !whole.archives.is_empty(),
            "{}",
            path.display()
        );
        let mut handed = Vec::new();
        let released =
            ETRecord::parse_reader_releasing(std::io::Cursor::new(&bytes), &mut |name, g| {
                handed.push((name.to_string(), g))
            })
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(released.released && released.archives.is_empty());
        assert_eq!(released.entries, whole.entries);
        assert_eq!(released.debug_handle_map, whole.debug_handle_map);
        assert_eq!(released.stages.len(), whole.stages.len());
        for st in &released.stages {
            assert!(
                st.graph.nodes.is_empty(),
                "{}: {} kept its graph",
                path.display(),
                st.name
            );
            let (_, g) = handed
                .iter()
                .find(|(n, _)| *n == st.name)
                .unwrap_or_else(|| panic!("{}: {} never handed over", path.display(), st.name));
            let full = whole.stage(&st.name).expect("same stages");
            assert_eq!(*g, full.graph, "{}: {}", path.display(), st.name);
        }
        assert_eq!(handed.len(), whole.stages.len());
        // shared metadata: as many module-stack allocations as distinct stacks
        for st in &whole.stages {
            let nodes = &st.graph.nodes;
            let distinct: std::collections::HashSet<_> =
                nodes.iter().map(|n| n.module_stack.clone()).collect();
            let allocations: std::collections::HashSet<usize> = nodes
                .iter()
                .filter(|n| !n.module_stack.is_empty())
                .map(|n| n.module_stack.as_ptr() as usize)
                .collect();
            let non_empty = distinct.iter().filter(|m| !m.is_empty()).count();
            assert_eq!(
                allocations.len(),
                non_empty,
                "{}: {}",
                path.display(),
                st.name
            );
            let traces: std::collections::HashSet<&str> = nodes
                .iter()
                .filter_map(|n| n.stack_trace.as_deref())
                .collect();
            let trace_allocations: std::collections::HashSet<usize> = nodes
                .iter()
                .filter_map(|n| n.stack_trace.as_ref().map(|t| t.as_ptr() as usize))
                .collect();
            assert_eq!(trace_allocations.len(), traces.len());
            assert!(
                non_empty > 0 && non_empty < nodes.len(),
                "{}: {}",
                path.display(),
                st.name
            );
            checked += 1;
        }
    }
    assert!(checked >= 4);
}
