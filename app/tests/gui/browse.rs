//! Looking at a program: stages, search, selection, the inspector, the method list, help.

use super::*;

#[test]
fn opening_shows_the_node_count_and_stages() {
    let harness = app_with(&[
        "model_int8_cortex_m55.pte",
        "model_int8_cortex_m55.etrecord",
    ]);
    let app = harness.state();
    assert!(app.messages.is_empty(), "{:?}", app.messages);
    assert_eq!(app.docs.len(), 1);
    // 6 instructions + input + output
    harness.get_by_label_contains("stage pte · 8 nodes");
    for stage in ["exported", "edge", "edge_after_transform", "pte"] {
        harness.get_by_label_contains(&format!("{stage}  ("));
    }
}

#[test]
fn search_then_enter_selects_the_node() {
    let mut harness = app_with(&["model_int8_cortex_m55.pte"]);
    let field = harness.get_by_role(egui::accesskit::Role::TextInput);
    field.focus();
    field.type_text("quantized_linear");
    harness.run_steps(2);
    harness.key_press(egui::Key::Enter);
    harness.run_steps(3);
    let app = harness.state();
    let dv = &app.docs[0];
    let node = dv.selected().expect("a node is selected");
    assert_eq!(
        dv.doc.stages[dv.stage].graph.nodes[node].op,
        "cortex_m::quantized_linear"
    );
    // the inspector shows it
    harness.get_by_label("cortex_m::quantized_linear");
}

#[test]
fn clicking_a_node_shows_its_op_and_tensors_in_the_inspector() {
    let mut harness = app_with(&["model_fp32.pte"]);
    let (pos, conv) = {
        let dv = &harness.state().docs[0];
        let stage = &dv.doc.stages[dv.stage];
        let conv = stage.graph.node_for_instruction(0).expect("conv").id;
        (
            dv.views[dv.stage].screen_pos(stage, conv).expect("drawn"),
            conv,
        )
    };
    harness.hover_at(pos);
    harness.drag_at(pos);
    harness.drop_at(pos);
    harness.run_steps(3);
    assert_eq!(harness.state().docs[0].selected(), Some(conv));
    harness.get_by_label("aten::convolution");
    // input x, the conv weight (a constant) and its output tensor
    assert!(
        harness
            .get_all_by_label_contains("v4 float32[1, 3, 8, 8]")
            .count()
            >= 2,
        "listed as argument and as tensor"
    );
    assert!(
        harness
            .get_all_by_label_contains("v0 float32[4, 3, 3, 3]")
            .count()
            >= 2,
        "listed as argument and as tensor"
    );
    assert!(
        harness
            .get_all_by_label_contains("v5 float32[1, 4, 8, 8]")
            .count()
            >= 2,
        "listed as argument and as tensor"
    );
    assert_eq!(
        harness.get_all_by_label("constant (in the file)").count(),
        2,
        "weight and bias"
    );
}

#[test]
fn switching_stage_keeps_the_selection_through_debug_handles() {
    let mut harness = app_with(&["model_fp32.pte", "model_fp32.etrecord"]);
    {
        let app = harness.state_mut();
        let dv = &mut app.docs[0];
        dv.select_instruction(0); // aten::convolution, debug handle 1
    }
    harness.run_steps(2);
    harness.get_by_label_contains("edge  (").click();
    harness.run_steps(3);
    let dv = &harness.state().docs[0];
    let stage = &dv.doc.stages[dv.stage];
    assert_eq!(stage.name, "edge");
    let n = dv.selected().expect("selection followed");
    assert!(
        stage.graph.nodes[n].op.contains("convolution"),
        "{}",
        stage.graph.nodes[n].op
    );
    assert!(stage.graph.nodes[n].debug_handles.contains(&1));
}

#[test]
fn help_lists_the_shortcuts_and_ctrl_f_focuses_the_search() {
    let mut harness = app_with(&["model_fp32.pte"]);
    harness.get_by_label("Help").click();
    harness.run_steps(2);
    harness.get_by_label("Keyboard shortcuts");
    harness.get_by_label("Ctrl+F");
    harness.get_by_label_contains(env!("CARGO_PKG_VERSION"));
    harness.key_press(egui::Key::Escape);
    harness.run_steps(1);
    harness.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::F);
    harness.run_steps(2);
    let focused = harness
        .ctx
        .memory(|m| m.has_focus(egui::Id::new(etscope::gui::SEARCH_ID)));
    assert!(focused, "Ctrl+F puts the cursor in the search box");
}

/// A pass's output is a stage: listed after the program, and compared with the program's run
/// in the Diff tab (the relu folded into its quantize: no divergence).
#[test]
fn a_pass_stage_is_listed_and_compared_with_its_program() {
    let mut harness = app_with(&["model_int8_qdq_portable.pte", "input.npy"]);
    harness.run_steps(3);
    harness.get_by_label("pte + fold_activation  (15 ops)");
    // the program's relu corresponds to the quantize it was folded into
    {
        let doc = &harness.state().docs[0].doc;
        let pte = doc.pte_stage.expect("program");
        let pass = doc
            .stages
            .iter()
            .position(|s| s.pass == Some("fold_activation"))
            .expect("pass stage");
        let relu = doc.stages[pte]
            .graph
            .node_for_instruction(5)
            .expect("relu")
            .id;
        let into = doc.corresponding(pte, relu, pass);
        assert_eq!(into.len(), 1);
        assert_eq!(
            doc.stages[pass].graph.nodes[into[0]].instruction_id,
            Some(6),
            "the quantize after it"
        );
    }
    harness.state_mut().tab = etscope::gui::Tab::Diff;
    harness.run_steps(2);
    harness.get_by_label("vs stage fold_activation").click();
    wait_for_diff(&mut harness);
    harness.run_steps(3);
    let (view, _) = harness.state().docs[0].diff.as_ref().expect("a comparison");
    assert_eq!(view.report.matched_by, "instruction");
    assert_eq!(view.report.first_divergence, None, "{:?}", view.report.rows);
}

/// "Lower for" on a program with its ETRecord: every pass of etscope's lowering becomes a
/// stage under one header (an unchanged pass says so), and the program compared with the last
/// pass's stage is equal at every node.
#[test]
fn lower_for_adds_every_pass_as_a_stage_and_the_last_equals_the_program() {
    let lowering = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/lowering");
    let mut harness = app_with_paths(vec![
        lowering.join("tiny_conv_relu_linear_m55_default.pte"),
        lowering.join("tiny_conv_relu_linear_m55_default.etrecord"),
        tiny("input.npy"),
    ]);
    harness.get_by_label("Lower").click();
    harness.run_steps(1);
    step_while(
        &mut harness,
        |app| app.docs[0].lowering.job.is_some(),
        30,
        "lowering did not finish",
    );
    harness.run_steps(2);
    harness.get_by_label("etscope lowering · m55 · default");
    harness.get_by_label("8 AtenToCortexM  (7 ops)");
    harness.get_by_label("3 ReplaceScalarWithTensorArg  (no change)");
    let names: Vec<String> = harness.state().docs[0]
        .doc
        .stages
        .iter()
        .filter(|s| s.lowering.is_some())
        .map(|s| s.name.clone())
        .collect();
    assert_eq!(names.len(), 8, "{names:?}");
    // with the input opened beside it, every pass ran and was compared with the one before
    let numerics: Vec<_> = harness.state().docs[0]
        .doc
        .stages
        .iter()
        .filter_map(|s| s.lowering.as_ref())
        .map(|l| l.numerics.clone())
        .collect();
    assert!(
        numerics.iter().all(|n| matches!(
            n,
            Some(etscope_core::lower::execute::Numerics::Equal)
                | Some(etscope_core::lower::execute::Numerics::Unchanged)
        )),
        "{numerics:?}"
    );
    harness.get_by_label("Diff").click();
    harness.run_steps(2);
    harness
        .get_by_label("vs stage m55 · default · 8 AtenToCortexMPass")
        .click();
    wait_for_diff(&mut harness);
    harness.run_steps(3);
    let (view, _) = harness.state().docs[0].diff.as_ref().expect("a comparison");
    assert_eq!(view.report.matched_by, "debug_handle");
    assert_eq!(view.report.first_divergence, None);
    // equal at every node: bit for bit, or to float32 rounding of a dequantized view
    for r in &view.report.rows {
        if let Some(m) = r.metrics {
            assert!(
                m.max_abs == 0.0 || m.snr_db > 130.0,
                "{:?}: {m:?}",
                r.module
            );
        }
    }
}

#[test]
fn the_method_list_shows_forward_first_and_switches_to_any_other_method() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/training/xor");
    let mut harness = app_with_paths(vec![dir.join("model.pte")]);
    {
        let app = harness.state();
        assert!(app.messages.is_empty(), "{:?}", app.messages);
        let dv = &app.docs[0];
        assert_eq!(dv.doc.method_name(), Some("forward"));
    }
    // the menu bar's method list names the method shown; picking another shows its graph
    harness.get_by_value("forward").click();
    harness.run_steps(2);
    harness.get_by_label("__et_training_fqn_forward").click();
    harness.run_steps(1);
    // the other method's document is built on a worker, not inside the frame
    step_while(
        &mut harness,
        |app| app.jobs.method.is_some(),
        30,
        "the method was not built",
    );
    harness.run_steps(3);
    let app = harness.state();
    let dv = &app.docs[0];
    assert_eq!(dv.doc.method_name(), Some("__et_training_fqn_forward"));
    assert_eq!(
        dv.doc.pte_graph().map(|g| g.method.as_str()),
        Some("__et_training_fqn_forward")
    );
    // a method of four strings and no instructions: input and output nodes only
    assert_eq!(dv.doc.pte_graph().map(|g| g.nodes.len()), Some(2));
    assert!(
        app.messages.iter().any(|m| m.contains("showing method")),
        "{:?}",
        app.messages
    );
}
