//! The Live tab on the emulated board.

use super::*;

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
    assert_eq!(
        dv.profile.timeline_runs.len(),
        4,
        "the timeline shows every run"
    );
    assert_eq!(dv.doc.captured.len(), 17 * 4);
    harness.get_by_label_contains("4 of 4 complete, 0 incomplete");
    harness.get_by_label("Save as…");
    harness.get_by_label_contains("0 frames, 0 B in transit");
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

/// The Live tab saves captures where its form says — by default in the app's data directory,
/// a bare name there too, never in the current directory — and shows that path.
#[test]
fn a_live_capture_goes_to_the_data_directory_unless_chosen_and_the_path_is_shown() {
    let data = eframe::storage_dir("etscope").expect("a data directory on this system");
    let form = etscope::gui::live_tab::LiveForm::default();
    let default = form.out_path();
    assert!(
        default.is_absolute() && default.starts_with(&data),
        "{}",
        default.display()
    );
    let mut named = form.clone();
    named.out = "mine.etdp".into();
    assert_eq!(
        named.out_path(),
        etscope::gui::live_tab::capture_dir().join("mine.etdp")
    );
    let mut chosen = form;
    let elsewhere = std::env::temp_dir().join("elsewhere.etdp");
    chosen.out = elsewhere.display().to_string();
    assert_eq!(chosen.out_path(), elsewhere);

    let mut harness = app_with(&["model_int8_cortex_m55.pte"]);
    harness.state_mut().tab = etscope::gui::Tab::Live;
    harness.run_steps(2);
    harness.get_by_label(&format!(
        "The capture is saved to {} (+ .bin, .etsw beside it).",
        default.display()
    ));
    harness.get_by_label("Choose…");
}
