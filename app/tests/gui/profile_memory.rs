//! Profile, timeline, heat overlay and memory: the numbers the command line prints, clocks, the planners.

use super::*;

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
