//! The desktop app driven as a user drives it (egui_kittest, headless) on the real reference
//! artifacts: open, search, click, switch stage, read the profile table.

#[path = "../tools/mod.rs"]
mod tools;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use eframe::egui;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use etscope::gui::{EtscopeApp, StartOptions};

mod browse;
mod diff;
mod live;
mod opening;
mod profile_memory;

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
        |app| app.jobs.diff.is_some(),
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
    app.jobs.load.is_some() || app.docs.iter().any(|d| d.stage_jobs.pass.is_some())
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

/// Clicks the waiting "exported" stage in the Stages list and steps until its build has ended
/// (built or failed) and the result is drawn.
fn show_the_waiting_exported_stage(harness: &mut Harness<'static, EtscopeApp>) {
    harness.get_by_label("exported  (built when shown)").click();
    harness.run_steps(2);
    step_while(
        harness,
        |app| app.docs[app.active].stage_jobs.build.is_some(),
        30,
        "the stage's build did not end",
    );
    harness.run_steps(3);
}
