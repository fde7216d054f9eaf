//! The Diff tab: host runs against device captures, other programs, stages and cores, and why it cannot compare.

use super::*;

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
    assert_eq!(view.report.matched_by, "quantity");
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
    assert_eq!(view.report.matched_by, "quantity");
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
    harness.get_by_label("Cortex-M4/M7/M33/M35P (DSP)").click();
    harness.run_steps(2);
    assert_eq!(
        harness.state().host.target,
        Some(etscope_core::runtime::Target::CortexMDsp)
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

/// Diff ▸ over a dataset: the two programs on every image of the digits test split on a worker,
/// the numbers `etscope eval` prints, the confusion matrix and the group table on screen.
#[test]
fn the_diff_tab_compares_two_programs_over_a_dataset() {
    let digits = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/digits");
    let mut harness = app_starting(StartOptions {
        files: vec![
            digits.join("cnn_fp32.pte"),
            digits.join("cnn_int8_cortex_m55_default_badcal.pte"),
        ],
        data: Some(digits.join("test_x.npy")),
        labels: Some(digits.join("test_y.npy")),
        ..StartOptions::default()
    });
    harness.state_mut().tab = etscope::gui::Tab::Diff;
    harness.run_steps(2);
    harness.get_by_label("Compare over the dataset").click();
    harness.run_steps(1);
    step_while(
        &mut harness,
        |app| app.numerics.job.is_some(),
        60,
        "the comparison over the dataset did not finish",
    );
    harness.run_steps(3);
    let app = harness.state();
    assert!(app.numerics.error.is_none(), "{:?}", app.numerics.error);
    let done = app.numerics.result.as_ref().expect("a result");
    assert_eq!(done.summary.samples, 360);
    assert_eq!(done.summary.outputs[0].b_accuracy, Some(267.0 / 360.0));
    // B's accuracy and its agreement with A
    assert_eq!(harness.get_all_by_label("74.17%").count(), 2);
    harness.get_by_label("95.83%");
    harness.get_by_label("89.42");
    harness.get_by_label("conv1");
    // A's graph, its groups coloured: every convolution of the badly calibrated model is red
    let colored = app.numerics.colors.iter().filter(|c| c.is_some()).count();
    assert!(colored >= 3, "{colored} nodes coloured");
    // the sensitivity sweep: conv1 kept in float recovers the most (332 of 360)
    harness
        .get_by_label("Sensitivity: each layer of B in float")
        .click();
    harness.run_steps(1);
    step_while(
        &mut harness,
        |app| app.numerics.sensitivity_job.is_some(),
        120,
        "the sensitivity sweep did not finish",
    );
    harness.run_steps(2);
    {
        let app = harness.state();
        assert!(app.numerics.error.is_none(), "{:?}", app.numerics.error);
        let rows = app.numerics.sensitivity.as_ref().expect("rows");
        assert_eq!(rows[0].group, "conv1");
        assert_eq!(rows[0].metric, Some(332.0 / 360.0));
        // the variants `eval --sensitivity` runs: each layer alone quantized too
        assert!(rows.iter().any(|r| r.variant == "only_quantized"));
    }
    // conv1 in float, and conv2 or fc alone quantized (conv1 in float with them), recover alike
    assert_eq!(
        harness
            .get_all_by_label_contains("92.22%  ·  arena")
            .count(),
        3
    );
    harness.get_by_label("only conv2 int8");
    // a worst sample opens the single-input Diff of the two programs on it
    harness.get_by_label("20").click();
    harness.run_steps(1);
    step_while(
        &mut harness,
        |app| app.numerics.opening.is_some() || app.jobs.diff.is_some(),
        60,
        "the sample's comparison did not finish",
    );
    harness.run_steps(3);
    let app = harness.state();
    assert!(app.numerics.error.is_none(), "{:?}", app.numerics.error);
    let dv = &app.docs[app.active];
    assert_eq!(dv.doc.input.as_ref().map(|t| t.numel()), Some(64));
    let (view, _) = dv.diff.as_ref().expect("the single-input diff");
    assert!(!view.report.rows.is_empty());
}

/// Diff ▸ over a dataset with "and run B on the emulated board": B on the board for the first
/// samples, every instruction's output equal to the host's, said above the numbers.
#[test]
fn over_a_dataset_the_board_runs_b_and_says_it_equals_the_host() {
    if !tools::available(
        "over_a_dataset_the_board_runs_b_and_says_it_equals_the_host",
        tools::BOARD,
    ) {
        return;
    }
    let digits = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/digits");
    let mut harness = app_starting(StartOptions {
        files: vec![
            digits.join("resnet_fp32.pte"),
            digits.join("resnet_int8_cortex_m55_default.pte"),
        ],
        data: Some(digits.join("test_x.npy")),
        labels: Some(digits.join("test_y.npy")),
        ..StartOptions::default()
    });
    harness.state_mut().tab = etscope::gui::Tab::Diff;
    harness.run_steps(2);
    harness
        .get_by_label("and run B on the emulated board")
        .click();
    harness.run_steps(1);
    harness.state_mut().numerics.board_limit = 4;
    harness.get_by_label("Compare over the dataset").click();
    harness.run_steps(1);
    step_while(
        &mut harness,
        |app| app.numerics.job.is_some(),
        120,
        "the comparison with the board did not finish",
    );
    harness.run_steps(3);
    let done = harness.state().numerics.result.as_ref().expect("a result");
    let board = done
        .board
        .as_ref()
        .expect("the board ran")
        .as_ref()
        .expect("without an error");
    assert_eq!((board.samples, board.equal), (4, 4));
    assert!(board.differences.is_empty());
    harness.get_by_label_contains("4 samples: every instruction's output");
}
