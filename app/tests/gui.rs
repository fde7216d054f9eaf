//! The desktop app driven as a user drives it (egui_kittest, headless) on the real reference
//! artifacts: open, search, click, switch stage, read the profile table.

mod tools;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use eframe::egui;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use etscope::gui::{EtscopeApp, StartOptions};

fn tiny(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/tiny_conv_relu_linear")
        .join(name)
}

/// A harness running the app on `files`, stepped until loading finished.
/// Steps the window until the comparison running on its worker thread has arrived.
fn wait_for_diff(harness: &mut Harness<'static, EtscopeApp>) {
    harness.run_steps(1);
    step_while(
        harness,
        |app| app.diff_job.is_some(),
        60,
        "the comparison did not finish",
    );
}

/// Steps the window while `busy` says a worker is still at it, failing after `secs` seconds
/// with `what`.
fn step_while(
    harness: &mut Harness<'static, EtscopeApp>,
    busy: impl Fn(&EtscopeApp) -> bool,
    secs: u64,
    what: &str,
) {
    let started = Instant::now();
    while busy(harness.state()) {
        assert!(started.elapsed() < Duration::from_secs(secs), "{what}");
        harness.step();
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Clicks Diff's "vs device capture" and steps until the comparison has arrived and is drawn.
fn compare_with_the_device_capture(harness: &mut Harness<'static, EtscopeApp>) {
    harness.get_by_label("vs device capture (ETDump)").click();
    wait_for_diff(harness);
    harness.run_steps(3);
}

/// Whether the app is still loading: files, or a program's pass stages computed after a preview.
fn loading(app: &EtscopeApp) -> bool {
    app.job.is_some() || app.docs.iter().any(|d| d.pass_job.is_some())
}

fn app_with(files: &[&str]) -> Harness<'static, EtscopeApp> {
    app_with_paths(files.iter().map(|f| tiny(f)).collect())
}

fn app_with_paths(files: Vec<std::path::PathBuf>) -> Harness<'static, EtscopeApp> {
    app_starting(StartOptions {
        files,
        ..StartOptions::default()
    })
}

fn app_starting(start: StartOptions) -> Harness<'static, EtscopeApp> {
    let ctx = egui::Context::default();
    let app = EtscopeApp::new(&ctx, None, start);
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1500.0, 950.0))
        .build_ui_state(|ui, app: &mut EtscopeApp| app.frame(ui), app);
    // loaded: the files, and the program's pass stages computed after a preview
    step_while(&mut harness, loading, 30, "loading did not finish");
    harness.run_steps(3);
    harness
}

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
fn profile_table_rows_equal_the_cli_numbers() {
    let mut harness = app_with(&["model_fp32.pte", "etdump_profile_5runs.etdp"]);
    harness.get_by_label("Profile").click();
    harness.run_steps(3);
    // `etscope profile --json` on the same files: conv p50 45305 ticks, min 45220, 5 runs
    harness.get_by_label("4 ops over 5 runs");
    harness
        .get_all_by_label("aten::convolution.out")
        .next()
        .expect("conv row");
    harness.get_by_label("45305");
    harness.get_by_label("45220");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_etscope"))
        .args(["profile", "--json", "--pte"])
        .arg(tiny("model_fp32.pte"))
        .arg("--etdump")
        .arg(tiny("etdump_profile_5runs.etdp"))
        .output()
        .expect("cli runs");
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    for r in rows["rows"].as_array().expect("rows") {
        let p50 = format!("{:.0}", r["p50"].as_f64().expect("p50"));
        harness.get_by_label(&p50);
    }
}

#[test]
fn a_bad_file_is_reported_in_the_window_not_a_crash() {
    let harness = app_with(&["model_fp32.pte", "inspector_table.json"]);
    let app = harness.state();
    assert_eq!(app.docs.len(), 1);
    assert!(
        app.messages
            .iter()
            .any(|m| m.contains("inspector_table.json")),
        "{:?}",
        app.messages
    );
}

#[test]
fn diff_mode_compares_the_host_run_with_the_device_capture() {
    let mut harness = app_with(&[
        "model_fp32.pte",
        "etdump.etdp",
        "debug_buffer.bin",
        "input.npy",
    ]);
    assert!(
        harness.state().messages.is_empty(),
        "{:?}",
        harness.state().messages
    );
    harness.get_by_label("Diff").click();
    harness.run_steps(2);
    compare_with_the_device_capture(&mut harness);
    let (view, _) = harness.state().docs[0].diff.as_ref().expect("a comparison");
    assert_eq!(view.report.matched_by, "instruction");
    assert_eq!(view.report.rows.len(), 4);
    assert_eq!(view.report.first_divergence, None);
    harness.get_by_label("no divergence");
}

#[test]
fn diff_mode_finds_no_divergence_between_two_correct_programs() {
    let mut harness = app_with(&[
        "model_fp32.pte",
        "model_fp32.etrecord",
        "model_int8_cortex_m55.pte",
        "model_int8_cortex_m55.etrecord",
        "input.npy",
    ]);
    assert_eq!(harness.state().docs.len(), 2);
    harness.state_mut().active = 0;
    harness.get_by_label("Diff").click();
    harness.run_steps(2);
    harness.get_by_label("vs model_int8_cortex_m55.pte").click();
    wait_for_diff(&mut harness);
    harness.run_steps(3);
    let (view, _) = harness.state().docs[0].diff.as_ref().expect("a comparison");
    assert_eq!(view.report.matched_by, "module");
    assert!(
        view.report.rows.iter().any(|r| r.module == ["fc"]),
        "{:?}",
        view.report
            .rows
            .iter()
            .map(|r| &r.module)
            .collect::<Vec<_>>()
    );
    // a correct int8 program: quantization noise is no divergence (fused conv + batch norm +
    // relu is compared against the one quantized op)
    assert_eq!(view.report.first_divergence, None);
    harness.get_by_label("no divergence");
}

#[test]
fn diff_mode_jumps_to_the_op_a_broken_program_gets_wrong() {
    // the shipped DS-CNN sample and its copy with instruction 5's weights negated
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/ds_cnn_kws");
    let mut harness = app_with_paths(
        [
            "model_fp32.pte",
            "model_fp32.etrecord",
            "model_int8_cortex_m55_broken.pte",
            "model_int8_cortex_m55_broken.etrecord",
            "input.npy",
        ]
        .iter()
        .map(|f| assets.join(f))
        .collect(),
    );
    harness.state_mut().active = 0;
    harness.get_by_label("Diff").click();
    harness.run_steps(2);
    harness
        .get_by_label("vs model_int8_cortex_m55_broken.pte")
        .click();
    wait_for_diff(&mut harness);
    harness.run_steps(3);
    let (view, _) = harness.state().docs[0].diff.as_ref().expect("a comparison");
    let first = view
        .report
        .first_divergence
        .expect("the broken op is found");
    assert_eq!(view.report.rows[first].b_instructions, [5]);
    harness.get_by_label("Jump to first divergence").click();
    harness.run_steps(2);
    let (view, _) = harness.state().docs[0].diff.as_ref().expect("a comparison");
    assert_eq!(view.row, Some(first));
    // N and P walk the rows that cross the threshold, wrapping
    let crossing: Vec<usize> = {
        let (view, _) = harness.state().docs[0].diff.as_ref().expect("a comparison");
        (0..view.report.rows.len())
            .filter(|&i| view.report.rows[i].diverges(&view.report.threshold))
            .collect()
    };
    assert_eq!(crossing.first(), Some(&first));
    harness.key_press(egui::Key::N);
    harness.run_steps(1);
    let row =
        |h: &Harness<'static, EtscopeApp>| h.state().docs[0].diff.as_ref().and_then(|d| d.0.row);
    assert_eq!(row(&harness), crossing.get(1).or(crossing.first()).copied());
    harness.key_press(egui::Key::P);
    harness.run_steps(1);
    assert_eq!(row(&harness), Some(first));
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

#[test]
fn diff_mode_compares_the_program_with_a_lowering_stage() {
    let mut harness = app_with(&[
        "model_int8_cortex_m55.pte",
        "model_int8_cortex_m55.etrecord",
        "input.npy",
    ]);
    harness.get_by_label("Diff").click();
    harness.run_steps(2);
    harness
        .get_by_label("vs stage edge_after_transform")
        .click();
    wait_for_diff(&mut harness);
    harness.run_steps(3);
    let (view, _) = harness.state().docs[0].diff.as_ref().expect("a comparison");
    assert_eq!(view.report.matched_by, "debug_handle");
    // the Cortex-M stage and the program compute the same CMSIS-NN arithmetic
    assert!(view
        .report
        .rows
        .iter()
        .filter_map(|r| r.metrics)
        .all(|m| m.max_abs == 0.0));
    harness.get_by_label("no divergence");
}

#[test]
fn the_live_view_streams_the_emulated_board_into_profile_timeline_and_diff() {
    if !tools::available(
        "the_live_view_streams_the_emulated_board_into_profile_timeline_and_diff",
        tools::BOARD,
    ) {
        return;
    }
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/ds_cnn_kws");
    let mut harness = app_with_paths(vec![
        assets.join("model_int8_cortex_m55.pte"),
        assets.join("input.npy"),
    ]);
    let out = std::env::temp_dir().join(format!("etscope-gui-live-{}.etdp", std::process::id()));
    harness.state_mut().live_form.runs = 4;
    harness.state_mut().live_form.out = out.display().to_string();
    harness.state_mut().tab = etscope::gui::Tab::Live;
    harness.run_steps(2);
    harness.get_by_label("▶ Start").click();
    let started = Instant::now();
    harness.run_steps(2);
    while harness
        .state()
        .live
        .as_ref()
        .is_some_and(|(_, s)| s.running())
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the live session did not end"
        );
        harness.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    harness.run_steps(3);
    let app = harness.state();
    assert!(
        app.messages
            .iter()
            .any(|m| m.starts_with("live capture saved")),
        "{:?}",
        app.messages
    );
    let dv = &app.docs[0];
    let prof = dv
        .doc
        .profile
        .as_ref()
        .expect("the capture feeds the profile");
    assert_eq!(prof.runs, 4);
    assert_eq!(prof.rows.len(), 17);
    assert_eq!(dv.timeline_runs.len(), 4, "the timeline shows every run");
    assert_eq!(dv.doc.captured.len(), 17 * 4);
    harness.get_by_label_contains("4 of 4 complete, 0 incomplete");
    harness.get_by_label("Save as…");
    harness.get_by_label_contains("0 frames, 0 bytes in transit");
    // the saved capture reopens, and Diff compares the host run with the device capture
    assert!(out.is_file() && out.with_extension("bin").is_file());
    harness
        .state_mut()
        .compare(etscope::gui::DiffTarget::Device)
        .expect("compares");
    wait_for_diff(&mut harness);
    let (view, _) = harness.state().docs[0].diff.as_ref().expect("a diff");
    assert!(view.report.first_divergence.is_none());
    assert!(view
        .report
        .rows
        .iter()
        .all(|r| r.metrics.as_ref().is_some_and(|m| m.max_abs == 0.0)));
    for f in [
        out.clone(),
        out.with_extension("bin"),
        out.with_extension("etsw"),
    ] {
        let _ = std::fs::remove_file(f);
    }
}

#[test]
fn a_hostile_file_then_a_good_one_in_the_same_window() {
    let h = |name: &str| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/hostile")
            .join(name)
    };
    // an ETDump whose tensor strides reach 2^62: refused with the reason, program still open
    let mut harness = app_with_paths(vec![
        tiny("model_fp32.pte"),
        h("strides.etdp"),
        h("strides.bin"),
    ]);
    assert!(
        harness
            .state()
            .messages
            .iter()
            .any(|m| m.contains("strides.bin") && m.contains("4611686018427387904")),
        "{:?}",
        harness.state().messages
    );
    // a plan with 100,000 arenas opens and its Memory tab draws in bounded time
    let ctx = harness.ctx.clone();
    harness.state_mut().open(vec![h("arenas_100k.pte")], &ctx);
    // (the whole sequence below is bounded from here too)
    let started = Instant::now();
    step_while(&mut harness, loading, 30, "loading did not finish");
    // the Memory tab of 100,000 arenas draws (a frame's cost is the graph_frame benchmark's)
    harness.state_mut().tab = etscope::gui::Tab::Memory;
    harness.run_steps(3);
    assert_eq!(harness.state().tab, etscope::gui::Tab::Memory);
    // a stage whose weights are a pickle nested 100,000 deep: the comparison reports it
    harness
        .state_mut()
        .open(vec![h("deep_pickle.etrecord")], &ctx);
    while harness.state().job.is_some() {
        harness.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    // then a good program opens and works in the same window
    harness
        .state_mut()
        .open(vec![tiny("model_int8_cortex_m55.pte")], &ctx);
    while harness.state().job.is_some() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "loading did not finish"
        );
        harness.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    harness.run_steps(3);
    let app = harness.state();
    let last = app.docs.last().expect("documents");
    assert_eq!(last.doc.title, "model_int8_cortex_m55.pte");
    let pte = last.doc.pte_stage.expect("program stage");
    assert_eq!(last.doc.stages[pte].graph.instruction_count, 6);
    harness.get_by_label_contains("stage pte · 8 nodes");
}

/// The heat overlay is derived once per stage and document revision, not once per frame.
#[test]
fn the_heat_overlay_is_computed_once_not_per_frame() {
    let mut harness = app_with(&["model_fp32.pte", "etdump_profile_5runs.etdp"]);
    harness.run_steps(3);
    let dv = &mut harness.state_mut().docs[0];
    let first = dv.heat_overlay().expect("overlay").as_ptr();
    let again = dv.heat_overlay().expect("overlay").as_ptr();
    assert_eq!(first, again, "the same cached overlay");
    let before = dv.doc.revision;
    let (dump, prof) = (
        dv.doc.etdump.clone().expect("etdump"),
        dv.doc.profile.clone().expect("profile"),
    );
    dv.doc
        .set_live_capture(dump, prof, Vec::new(), Vec::new(), None);
    assert!(dv.doc.revision > before);
    assert!(
        dv.heat_overlay().is_some(),
        "recomputed for the new revision"
    );
}

#[test]
fn diff_mode_runs_the_host_as_the_core_chosen() {
    // ExecuTorch's own runtime on an emulated Cortex-M55: its capture, rebuilt from the stream
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let pte = tiny("model_int8_cortex_m55.pte");
    let program = etscope_core::formats::pte::Program::parse(std::fs::read(&pte).expect("pte"))
        .expect("parses");
    let dir = std::env::temp_dir().join(format!("etscope-gui-host-core-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out = dir.join("capture.etdp");
    etscope_profiler::session::save_capture(
        &fixtures.join(
            "executorch_runtime/m55_qemu_streams/tiny_conv_relu_linear__model_int8_cortex_m55.etsw",
        ),
        &program,
        "model_int8_cortex_m55.pte",
        &out,
    )
    .expect("capture rebuilt");
    let mut harness = app_with_paths(vec![
        pte,
        out.clone(),
        out.with_extension("bin"),
        tiny("input.npy"),
    ]);
    assert!(
        harness.state().messages.is_empty(),
        "{:?}",
        harness.state().messages
    );
    harness.get_by_label("Diff").click();
    harness.run_steps(2);
    // the program's own core (it says M55): the host equals the board on every node
    harness.get_by_value("the program's own core: Cortex-M55/M85 (Helium)");
    compare_with_the_device_capture(&mut harness);
    let (view, _) = harness.state().docs[0].diff.as_ref().expect("a comparison");
    assert_eq!(view.report.first_divergence, None);
    // chosen as an M4: the linear layer runs without its bias, and the diff names it
    harness
        .get_by_value("the program's own core: Cortex-M55/M85 (Helium)")
        .click();
    harness.run_steps(2);
    harness.get_by_label("Cortex-M4/M7/M33 (DSP)").click();
    harness.run_steps(2);
    assert_eq!(
        harness.state().host.target,
        Some(etscope_core::runtime::Target::CortexMScalar)
    );
    compare_with_the_device_capture(&mut harness);
    let (view, _) = harness.state().docs[0].diff.as_ref().expect("a comparison");
    let first = view.report.first_divergence.expect("a divergence");
    assert!(
        view.report.rows[first]
            .a_ops
            .iter()
            .any(|o| o.contains("quantized_linear")),
        "{:?}",
        view.report.rows[first].a_ops
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// A capture that declares its clock drives every µs figure, whatever rate the toolbar holds;
/// the toolbar's rate applies only to ETDumps that declare none, and the toolbar says which.
#[test]
fn times_follow_the_captures_declared_clock_not_the_toolbar() {
    let mut harness = app_with(&["model_fp32.pte", "etdump_profile_5runs.etdp"]);
    harness.run_steps(3);
    // a user rate that would be 1000× off for nanoseconds
    harness.state_mut().settings.ticks_per_us = Some(1.0);
    harness.state_mut().tab = etscope::gui::Tab::Profile;
    harness.run_steps(2);
    assert_eq!(
        harness.state().docs[0].profile_table.ticks_per_us,
        Some(1.0),
        "an ETDump that declares nothing: the toolbar's rate"
    );
    harness.get_by_label("time");
    // a live capture from a 32 MHz target (stored in ns) arrives
    let dv = &mut harness.state_mut().docs[0];
    let (dump, prof) = (
        dv.doc.etdump.clone().expect("etdump"),
        dv.doc.profile.clone().expect("profile"),
    );
    dv.doc
        .set_live_capture(dump, prof, Vec::new(), Vec::new(), Some(32_000_000));
    harness.run_steps(2);
    let table = &harness.state().docs[0].profile_table;
    assert_eq!(table.ticks_per_us, Some(1000.0), "the capture's clock");
    assert_eq!(table.fmt(32_000.0), "32.000", "32,000 ns are 32 µs");
    assert_eq!(table.unit(), "µs");
    harness.get_by_label("times in µs");
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

#[test]
fn the_program_is_handed_over_before_its_etrecord_and_etdump_are_attached() {
    use std::cell::RefCell;
    let previews = RefCell::new(Vec::new());
    let paths = [
        tiny("model_fp32.pte"),
        tiny("model_fp32.etrecord"),
        tiny("etdump.etdp"),
    ];
    let show = |d| previews.borrow_mut().push(d);
    let loaded = etscope::gui::loader::load_in_phases(
        &paths,
        None,
        &|_| {},
        Some(&show),
        etscope_viewer::document::EAGER_STAGE_NODES,
    );
    let mut errors = loaded.errors;
    assert!(errors.is_empty(), "{errors:?}");
    let mut previews = previews.into_inner();
    assert_eq!(previews.len(), 1, "one preview, sent once");
    // the program went to the window (moved, not copied): the loader keeps no document
    assert!(loaded.documents.is_empty());
    let mut shown = previews.remove(0);
    assert_eq!(shown.len(), 1);
    // the preview is the program alone, graph laid out, nothing attached yet
    assert_eq!(shown[0].stages.len(), 1);
    assert!(shown[0].etrecord.is_none() && shown[0].etdump.is_none());
    let nodes = shown[0].stages[0].graph.nodes.len();
    assert!(nodes > 0);
    // what was read meanwhile attaches to the shown document: the ETRecord's stages and the
    // ETDump's profile
    assert_eq!(loaded.pending.len(), 2);
    etscope::gui::loader::attach_pending(&mut shown, loaded.pending, &mut errors);
    assert!(errors.is_empty(), "{errors:?}");
    let doc = &shown[0];
    assert!(doc.stages.len() > 1, "ETRecord stages attached");
    assert!(doc.etdump.is_some() && doc.profile.is_some());
    assert_eq!(
        doc.stages[doc.pte_stage.expect("program stage")]
            .graph
            .nodes
            .len(),
        nodes
    );
    assert!(doc.files.iter().any(|f| f == "model_fp32.etrecord"));
    // and the same document as a load without a preview makes
    let (plain, _) = etscope::gui::loader::load(&paths, None, &|_| {});
    let names = |d: &etscope_viewer::document::Document| -> Vec<String> {
        d.stages
            .iter()
            .filter(|s| s.pass.is_none())
            .map(|s| format!("{} {}", s.name, s.graph.nodes.len()))
            .collect()
    };
    assert_eq!(names(doc), names(&plain[0]));
}

/// What the loader keeps of an ETRecord once its stages are built: names and maps, not the
/// exported graphs (freed at once: tens of MB for a large program); lowering and running a
/// stage read the file again and get every graph, equal to parsing it afresh. The program's
/// pass stages, left out while a preview is on screen, are added once the window has the
/// document.
#[test]
fn an_etrecords_graphs_are_released_once_built_and_read_again_when_needed() {
    let paths = [tiny("model_fp32.pte"), tiny("model_fp32.etrecord")];
    let shown = std::cell::RefCell::new(Vec::new());
    let show = |d| shown.borrow_mut().push(d);
    let loaded = etscope::gui::loader::load_in_phases(
        &paths,
        None,
        &|_| {},
        Some(&show),
        etscope_viewer::document::EAGER_STAGE_NODES,
    );
    let mut errors = loaded.errors;
    let mut docs = shown.into_inner().remove(0);
    etscope::gui::loader::attach_pending(&mut docs, loaded.pending, &mut errors);
    assert!(errors.is_empty(), "{errors:?}");
    let doc = &docs[0];
    let held = doc.etrecord.as_ref().expect("attached");
    assert!(held.released);
    assert!(held.stages.iter().all(|s| s.graph.nodes.is_empty()));
    assert!(doc.can_lower(), "the stage names are kept");
    let whole = doc
        .whole_etrecord()
        .expect("an ETRecord")
        .expect("read again");
    let fresh = etscope_core::formats::etrecord::ETRecord::parse(
        &std::fs::read(tiny("model_fp32.etrecord")).expect("fixture"),
    )
    .expect("parses");
    assert_eq!(whole.stages, fresh.stages);
    assert!(whole.stages.iter().all(|s| !s.graph.nodes.is_empty()));
    // the preview was shown: the pass stages come after, in the window
    assert!(doc.pass_stages_deferred);
    assert!(doc.stages.iter().all(|s| s.pass.is_none()));
    let mut harness = app_with(&["model_fp32.pte", "model_fp32.etrecord"]);
    step_while(
        &mut harness,
        |app| app.docs.iter().any(|d| d.pass_job.is_some()),
        50,
        "the pass stages did not arrive",
    );
    let app = harness.state();
    assert!(!app.docs[0].doc.pass_stages_deferred);
    assert_eq!(app.docs[0].views.len(), app.docs[0].doc.stages.len());
    // the same pass stages as a program opened with them computed at once
    let passes = |d: &etscope_viewer::document::Document| -> Vec<(String, usize)> {
        d.stages
            .iter()
            .filter(|s| s.pass.is_some())
            .map(|s| (s.name.clone(), s.graph.nodes.len()))
            .collect()
    };
    let at_once = etscope_viewer::document::Document::from_program_bytes(
        "model_fp32.pte",
        std::fs::read(tiny("model_fp32.pte")).expect("fixture"),
    )
    .expect("opens");
    assert_eq!(passes(&app.docs[0].doc), passes(&at_once));
}

#[test]
fn a_program_alone_has_no_preview_and_the_preview_gives_way_to_one_document() {
    let previews = std::cell::Cell::new(0);
    let count = |_| previews.set(previews.get() + 1);
    let loaded = etscope::gui::loader::load_in_phases(
        &[tiny("model_fp32.pte")],
        None,
        &|_| {},
        Some(&count),
        etscope_viewer::document::EAGER_STAGE_NODES,
    );
    assert_eq!((loaded.documents.len(), previews.get()), (1, 0));
    // an ETDump and its debug buffer attach at once: no second copy of the program either
    let loaded = etscope::gui::loader::load_in_phases(
        &[
            tiny("model_fp32.pte"),
            tiny("etdump.etdp"),
            tiny("debug_buffer.bin"),
        ],
        None,
        &|_| {},
        Some(&count),
        etscope_viewer::document::EAGER_STAGE_NODES,
    );
    let (docs, errors) = (loaded.documents, loaded.errors);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!((docs.len(), previews.get()), (1, 0));
    assert!(docs[0].etdump.is_some());
    // in the window: however the frames fell, one document remains, with every stage
    let harness = app_with(&["model_fp32.pte", "model_fp32.etrecord", "etdump.etdp"]);
    let app = harness.state();
    assert_eq!(app.docs.len(), 1);
    assert!(!app.docs[0].preview);
    assert!(app.docs[0].doc.stages.len() > 1);
}

/// A fresh directory holding copies of fixtures under new names.
fn directory_with(test: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("etscope-gui-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    for (from, to) in files {
        std::fs::copy(tiny(from), dir.join(to)).expect("copy fixture");
    }
    dir
}

#[test]
fn a_program_opened_alone_brings_the_files_beside_it_and_each_can_be_removed() {
    let dir = directory_with(
        "siblings",
        &[
            ("model_fp32.pte", "model_fp32.pte"),
            ("model_fp32.etrecord", "model_fp32.etrecord"),
            ("etdump.etdp", "model_fp32.etdp"),
            ("debug_buffer.bin", "model_fp32.bin"),
            ("input.npy", "input.npy"),
        ],
    );
    let mut harness = app_with_paths(vec![dir.join("model_fp32.pte")]);
    {
        let app = harness.state();
        assert!(app.messages.is_empty(), "{:?}", app.messages);
        assert_eq!(app.docs.len(), 1);
        let doc = &app.docs[0].doc;
        assert!(doc.etrecord.is_some(), "the ETRecord found by name");
        assert!(
            doc.profile.is_some() && !doc.captured.is_empty(),
            "ETDump + debug buffer"
        );
        assert!(doc.input.is_some(), "input.npy");
        assert_eq!(app.docs[0].sources.found.len(), 4);
    }
    // announced where the stages are, each with its remove button
    harness.get_by_label("Found beside the program by name:");
    for name in [
        "model_fp32.etrecord",
        "model_fp32.etdp",
        "model_fp32.bin",
        "input.npy",
    ] {
        harness.get_by_label(name);
    }
    // the first remove button is the ETRecord's
    harness
        .get_all_by_label("remove")
        .next()
        .expect("remove")
        .click();
    harness.run_steps(2);
    step_while(&mut harness, loading, 30, "reopening did not finish");
    harness.run_steps(3);
    let app = harness.state();
    assert_eq!(app.docs.len(), 1);
    let dv = &app.docs[0];
    assert!(dv.doc.etrecord.is_none(), "removed, and not found again");
    assert!(
        dv.doc.profile.is_some() && dv.doc.input.is_some(),
        "the others stay"
    );
    assert_eq!(dv.sources.declined, vec![dir.join("model_fp32.etrecord")]);
    assert!(!dv.doc.files.iter().any(|f| f.ends_with(".etrecord")));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_file_beside_the_program_that_belongs_to_another_is_skipped_with_a_warning() {
    let dir = directory_with(
        "foreign_sibling",
        &[
            ("model_fp32.pte", "model_fp32.pte"),
            ("model_int8_cortex_m55.etrecord", "model_fp32.etrecord"),
        ],
    );
    let harness = app_with_paths(vec![dir.join("model_fp32.pte")]);
    let app = harness.state();
    assert_eq!(app.docs.len(), 1, "the program is open");
    assert!(app.docs[0].doc.etrecord.is_none());
    assert!(
        app.messages
            .iter()
            .any(|m| m.contains("model_fp32.etrecord")
                && m.contains("found beside the program by name; skipped")),
        "{:?}",
        app.messages
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_diff_tab_says_why_it_cannot_compare() {
    // two programs and no input array anywhere near them
    let dir = directory_with(
        "no_input",
        &[
            ("model_fp32.pte", "model_fp32.pte"),
            ("model_int8_cortex_m55.pte", "model_int8_cortex_m55.pte"),
        ],
    );
    let start = StartOptions {
        files: vec![
            dir.join("model_fp32.pte"),
            dir.join("model_int8_cortex_m55.pte"),
        ],
        tab: Some(etscope::gui::Tab::Diff),
        ..StartOptions::default()
    };
    let ctx = egui::Context::default();
    let app = EtscopeApp::new(&ctx, None, start);
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1500.0, 950.0))
        .build_ui_state(|ui, app: &mut EtscopeApp| app.frame(ui), app);
    step_while(&mut harness, loading, 30, "loading did not finish");
    harness.run_steps(3);
    harness.state_mut().active = 0;
    harness.run_steps(2);
    harness.get_by_label("vs model_int8_cortex_m55.pte").click();
    harness.run_steps(3);
    // the reason is in the Diff tab, where the user clicked, not only in the status bar
    harness.get_by_label_contains("Cannot compare: open an input array (.npy)");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_live_capture_never_overwrites_one_on_disk() {
    use etscope::gui::live_tab::{copy_capture, free_capture_path};
    let dir = directory_with("captures", &[]);
    let out = dir.join("live_capture.etdp");
    assert_eq!(free_capture_path(&out), out, "a free name is kept");
    std::fs::write(&out, b"old").expect("write");
    assert_eq!(free_capture_path(&out), dir.join("live_capture-2.etdp"));
    // a companion alone also takes the name
    std::fs::write(dir.join("live_capture-2.etsw"), b"raw").expect("write");
    assert_eq!(free_capture_path(&out), dir.join("live_capture-3.etdp"));
    // Save as copies the capture with its companions, and never over another capture's
    std::fs::write(dir.join("live_capture.bin"), b"tensors").expect("write");
    let copy = dir.join("kept.etdp");
    copy_capture(&out, &copy).expect("copied");
    assert_eq!(std::fs::read(&copy).expect("etdp"), b"old");
    assert_eq!(
        std::fs::read(dir.join("kept.bin")).expect("bin"),
        b"tensors"
    );
    std::fs::write(dir.join("other.bin"), b"someone else's").expect("write");
    let e = copy_capture(&out, &dir.join("other.etdp")).expect_err("refused");
    assert!(
        e.contains("other.bin") && e.contains("never overwritten"),
        "{e}"
    );
    assert!(!dir.join("other.etdp").exists(), "nothing half-copied");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_memory_tab_shows_the_best_plan_beside_the_programs_plan() {
    let mut harness = app_with(&["model_int8_qdq_portable.pte"]);
    harness.state_mut().tab = etscope::gui::Tab::Memory;
    harness.run_steps(1);
    // the planners run on a worker, not inside the frame
    step_while(
        &mut harness,
        |app| app.docs[0].replan.is_none(),
        60,
        "the memory planners did not finish",
    );
    harness.run_steps(2);
    let best = {
        let doc = &harness.state().docs[0].doc;
        let alts = etscope_core::plan::alternatives::alternatives(
            doc.pte_graph().expect("a program"),
            doc.memory.as_ref().expect("a plan"),
        );
        alts[0].best().expect("a plan").clone()
    };
    assert_ne!(
        best.name, "executorch",
        "the portable int8 tiny model has room to save"
    );
    harness.get_by_label_contains(&format!("{}: {} B, ", best.name, best.peak));
    harness.get_by_label_contains(&format!("as {} places it", best.name));
    harness.get_by_label("as the program places it");
    harness.get_by_label_contains("gap reuse (offsets instead of shared objects)");
    // the whole RAM budget above the charts, every part named with its bytes
    harness.get_by_label_contains("RAM on a 32-bit Arm core (ExecuTorch 1.5.1's runtime)");
    harness.get_by_label_contains("method allocator ");
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

/// Clicks the waiting "exported" stage in the Stages list and steps until its build has ended
/// (built or failed) and the result is drawn.
fn show_the_waiting_exported_stage(harness: &mut Harness<'static, EtscopeApp>) {
    harness.get_by_label("exported  (built when shown)").click();
    harness.run_steps(2);
    step_while(
        harness,
        |app| app.docs[app.active].stage_build.is_some(),
        30,
        "the stage's build did not end",
    );
    harness.run_steps(3);
}

/// A stage above the eager size waits in the Stages list ("built when shown"); shown, it is
/// built on a worker and drawn, equal to the stage an eager load builds.
#[test]
fn a_large_stage_is_built_when_first_shown() {
    let files = vec![
        tiny("model_int8_cortex_m55.pte"),
        tiny("model_int8_cortex_m55.etrecord"),
    ];
    let eager = app_with_paths(files.clone());
    let mut harness = app_starting(StartOptions {
        files,
        eager_stage_nodes: Some(0),
        ..StartOptions::default()
    });
    let stage_of = |app: &EtscopeApp| {
        let dv = &app.docs[app.active];
        dv.doc
            .stages
            .iter()
            .position(|s| s.name == "exported")
            .expect("an exported stage")
    };
    let i = stage_of(harness.state());
    assert!(harness.state().docs[0].doc.stages[i].unbuilt.is_some());
    show_the_waiting_exported_stage(&mut harness);
    let app = harness.state();
    let dv = &app.docs[app.active];
    assert_eq!(dv.stage, i);
    let built = &dv.doc.stages[i];
    assert!(built.unbuilt.is_none());
    let whole = &eager.state().docs[0].doc.stages[stage_of(eager.state())];
    assert_eq!(built.graph, whole.graph);
    harness.get_by_label(&format!("exported  ({} ops)", whole.graph.op_count()));
    assert!(app.messages.is_empty(), "{:?}", app.messages);
}

/// An ETRecord that vanishes before a waiting stage is shown: the stage cannot be built, the
/// window says so (naming the file) and stays usable; the stage is not retried every frame.
#[test]
fn a_waiting_stage_whose_etrecord_vanished_is_reported() {
    let dir = std::env::temp_dir().join(format!("etscope-gui-vanished-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for f in [
        "model_int8_cortex_m55.pte",
        "model_int8_cortex_m55.etrecord",
    ] {
        std::fs::copy(tiny(f), dir.join(f)).expect("copy");
    }
    let mut harness = app_starting(StartOptions {
        files: vec![
            dir.join("model_int8_cortex_m55.pte"),
            dir.join("model_int8_cortex_m55.etrecord"),
        ],
        eager_stage_nodes: Some(0),
        no_siblings: true,
        ..StartOptions::default()
    });
    std::fs::remove_file(dir.join("model_int8_cortex_m55.etrecord")).expect("remove");
    show_the_waiting_exported_stage(&mut harness);
    let app = harness.state();
    assert!(
        app.messages
            .iter()
            .any(|m| m.contains("building the stage exported")
                && m.contains("model_int8_cortex_m55.etrecord")),
        "{:?}",
        app.messages
    );
    assert!(app.docs[app.active].stage_build.is_none());
    harness.get_by_label("exported  (could not be built)");
    // the program is still there to look at
    harness.get_by_label("pte  (6 ops)").click();
    harness.run_steps(2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A program opened with an ETRecord that cannot be read (damaged inside): the program stays on
/// screen and the ETRecord is one error line naming it (the preview was dropped with it before).
#[test]
fn a_program_with_a_damaged_etrecord_stays_and_the_etrecord_is_named() {
    let dir = std::env::temp_dir().join(format!("etscope-gui-damaged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::copy(tiny("model_int8_cortex_m55.pte"), dir.join("model.pte")).expect("copy");
    let mut bytes = std::fs::read(tiny("model_int8_cortex_m55.etrecord")).expect("etrecord");
    let at = bytes.len() / 3;
    bytes[at..at + 200].fill(b'x');
    std::fs::write(dir.join("model.etrecord"), &bytes).expect("write");
    let harness = app_starting(StartOptions {
        files: vec![dir.join("model.pte"), dir.join("model.etrecord")],
        no_siblings: true,
        ..StartOptions::default()
    });
    let app = harness.state();
    assert_eq!(app.docs.len(), 1, "the program stays");
    assert!(app.docs[0].doc.program.is_some() && app.docs[0].doc.etrecord.is_none());
    assert!(
        app.messages.iter().any(|m| m.contains("model.etrecord")),
        "{:?}",
        app.messages
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_method_list_shows_forward_first_and_switches_to_any_other_method() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/training/xor");
    let mut harness = app_with_paths(vec![dir.join("model.pte")]);
    {
        let app = harness.state();
        assert!(app.messages.is_empty(), "{:?}", app.messages);
        let dv = &app.docs[0];
        assert_eq!(dv.doc.plan().map(|p| p.name.as_str()), Some("forward"));
    }
    // the menu bar's method list names the method shown; picking another shows its graph
    harness.get_by_value("forward").click();
    harness.run_steps(2);
    harness.get_by_label("__et_training_fqn_forward").click();
    harness.run_steps(3);
    let app = harness.state();
    let dv = &app.docs[0];
    assert_eq!(
        dv.doc.plan().map(|p| p.name.as_str()),
        Some("__et_training_fqn_forward")
    );
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

/// Diff's "C library" picker: the device's newlib by default, ExecuTorch's x86 glibc on choice;
/// the host runs follow it.
#[test]
fn the_diff_tab_picks_whose_c_library_the_host_runs_compute_with() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/portable_ops/tan");
    let mut harness = app_with_paths(vec![dir.join("model.pte"), dir.join("input_0.npy")]);
    harness.get_by_label("Diff").click();
    harness.run_steps(2);
    assert_eq!(
        harness.state().host.libm,
        etscope_core::kernels::libm::Libm::Newlib
    );
    harness.get_by_value("newlib").click();
    harness.run_steps(2);
    harness
        .get_by_label("glibc (ExecuTorch's x86 runtime)")
        .click();
    harness.run_steps(2);
    assert_eq!(
        harness.state().host.libm,
        etscope_core::kernels::libm::Libm::Glibc
    );
    let program = etscope_core::formats::pte::Program::parse(
        std::fs::read(dir.join("model.pte")).expect("pte"),
    )
    .expect("parses");
    assert_eq!(
        harness.state().host.device_for(&program).libm,
        etscope_core::kernels::libm::Libm::Glibc
    );
}

/// One loader: the same set of files opened in the window and with `etscope open` gives the
/// same documents (titles, files attached, stages, profile, captured tensors) and the same error
/// line for every file not used — a renamed file, an empty one, an ETDump of another program.
#[test]
fn a_set_of_files_opens_the_same_in_the_window_and_on_the_command_line() {
    let dir = std::env::temp_dir().join(format!("etscope-open-both-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut files = Vec::new();
    for (from, to) in [
        ("model_fp32.pte", "model_fp32.pte"),
        ("model_fp32.etrecord", "model_fp32.etrecord"),
        ("etdump.etdp", "etdump.etdp"),
        ("debug_buffer.bin", "debug_buffer.bin"),
        ("etdump_xnnpack.etdp", "etdump_xnnpack.etdp"),
        ("etdump.etdp", "renamed.pte"),
    ] {
        std::fs::copy(tiny(from), dir.join(to)).expect("copy fixture");
        files.push(dir.join(to));
    }
    std::fs::write(dir.join("empty.etdp"), b"").expect("write");
    files.push(dir.join("empty.etdp"));

    let cli = std::process::Command::new(env!("CARGO_BIN_EXE_etscope"))
        .arg("open")
        .arg("--json")
        .arg("--no-siblings")
        .args(&files)
        .output()
        .expect("runs etscope open");
    assert!(
        cli.status.success(),
        "{}",
        String::from_utf8_lossy(&cli.stderr)
    );
    let from_cli: serde_json::Value = serde_json::from_slice(&cli.stdout).expect("JSON");

    let harness = app_starting(StartOptions {
        files: files.clone(),
        no_siblings: true,
        ..StartOptions::default()
    });
    let app = harness.state();
    let docs: Vec<etscope_viewer::document::Document> =
        app.docs.iter().map(|dv| dv.doc.clone()).collect();
    let in_window = etscope::load::batch::Opened::of(&docs, &app.messages);
    let in_window = serde_json::to_value(&in_window).expect("JSON");
    assert_eq!(
        in_window, from_cli,
        "the window and `etscope open` disagree"
    );

    // and what that is: one program with its ETRecord, ETDump and debug buffer; three refusals
    let documents = from_cli["documents"].as_array().expect("documents");
    assert_eq!(documents.len(), 1, "{from_cli:#}");
    let files_of = documents[0]["files"].as_array().expect("files").len();
    assert_eq!(files_of, 4, "{from_cli:#}");
    assert_eq!(documents[0]["profile"], true);
    let errors: Vec<&str> = from_cli["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .filter_map(|e| e.as_str())
        .collect();
    assert_eq!(errors.len(), 3, "{errors:#?}");
    assert!(
        errors
            .iter()
            .any(|e| e.contains("renamed.pte") && e.contains("holds")),
        "{errors:#?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.contains("empty.etdp") && e.contains("empty")),
        "{errors:#?}"
    );
    assert!(
        errors.iter().any(|e| e.contains("etdump_xnnpack.etdp")),
        "{errors:#?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
