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

/// The heat overlay is derived once per stage and document revision, not once per frame: over
/// ten frames of the graph it is computed once, a new capture makes it once more, and what it
/// holds then is the new capture's overlay.
#[test]
fn the_heat_overlay_is_computed_once_not_per_frame() {
    let mut harness = app_with(&["model_fp32.pte", "etdump_profile_5runs.etdp"]);
    harness.state_mut().tab = etscope::gui::Tab::Graph;
    harness.state_mut().docs[0].heat.on = true;
    harness.run_steps(10);
    assert_eq!(
        harness.state().docs[0].heat.computed,
        1,
        "ten frames of the graph computed the overlay once"
    );
    let dv = &mut harness.state_mut().docs[0];
    let (dump, mut prof) = (
        dv.doc.etdump.clone().expect("etdump"),
        dv.doc.profile.clone().expect("profile"),
    );
    // a capture whose first operator takes all the time: another overlay
    for (k, row) in prof.rows.iter_mut().enumerate() {
        let n = row.stats.raw.len();
        row.stats = etscope_core::analysis::profile::DurationStats::of(vec![
            if k == 0 {
                1_000_000
            } else {
                1
            };
            n
        ]);
    }
    let before = dv.doc.revision;
    dv.doc
        .set_live_capture(dump, prof.clone(), Vec::new(), Vec::new(), None);
    assert!(dv.doc.revision > before);
    harness.run_steps(10);
    let dv = &mut harness.state_mut().docs[0];
    assert_eq!(
        dv.heat.computed, 2,
        "once more for the new capture, not per frame"
    );
    let stage = dv.stage;
    let fresh = etscope_viewer::profile_view::heat_overlay(&dv.doc.stages[stage].graph, &prof);
    let cached = dv
        .heat_overlay(Default::default())
        .expect("overlay")
        .to_vec();
    assert_eq!(cached, fresh, "the cache holds the new capture's overlay");
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
        harness.state().docs[0].profile.table.ticks_per_us,
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
    let table = &harness.state().docs[0].profile.table;
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
    // the planners run on a worker, not inside the frame: after the first frame the job is
    // running and no plan is in yet
    assert!(
        harness.state().docs[0].memory.replan_job.is_some()
            && harness.state().docs[0].memory.replan.is_none(),
        "the planners ran inside the frame"
    );
    step_while(
        &mut harness,
        |app| app.docs[0].memory.replan.is_none(),
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
    harness.get_by_label_contains(
        "The program's own RAM in ExecuTorch 1.5.1's runtime (a 32-bit Arm core)",
    );
    harness.get_by_label_contains("method allocator ");
}

/// On a part, the Memory tab draws every region that holds something with what sits in it
/// (the numbers `etscope fit` prints), and says whether it all fits.
#[test]
fn the_memory_tab_on_a_part_shows_each_region_with_what_sits_in_it() {
    let mut harness = app_with(&["model_int8_cortex_m55.pte"]);
    harness.state_mut().tab = etscope::gui::Tab::Memory;
    harness.run_steps(2);
    harness.get_by_value("(pick a part)");
    harness.state_mut().docs[0]
        .memory
        .part_fit
        .pick(Some("nucleo-l4r5zi"));
    harness.run_steps(2);
    harness.get_by_label_contains("fits nucleo-l4r5zi");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_etscope"))
        .args(["fit", "--json", "--part", "nucleo-l4r5zi"])
        .arg(tiny("model_int8_cortex_m55.pte"))
        .output()
        .expect("cli runs");
    let fit: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    for r in fit["regions"].as_array().expect("regions") {
        let used = r["used"].as_u64().expect("used");
        if used > 0 {
            let name = r["name"].as_str().expect("name");
            harness.get_by_label_contains(&format!("{name}: {used} / {} B", r["size"]));
        }
    }
    harness.get_by_label_contains("code sized from real linked images");
}

/// A program lowered for a core without Helium fits a Helium part's memory, and the tab says
/// that part's core does not run it (as `etscope fit` does).
#[test]
fn the_memory_tab_says_when_the_parts_core_does_not_run_the_program() {
    let mut harness = app_with(&["model_int8_cortex_m4_default.pte"]);
    harness.state_mut().tab = etscope::gui::Tab::Memory;
    harness.run_steps(2);
    harness.state_mut().docs[0]
        .memory
        .part_fit
        .pick(Some("alif-e8-hp"));
    harness.run_steps(2);
    harness.get_by_label_contains("does NOT run as lowered on the alif-e8-hp's Cortex-M55");
    harness.state_mut().docs[0]
        .memory
        .part_fit
        .pick(Some("nucleo-l4r5zi"));
    harness.run_steps(2);
    assert!(harness.query_by_label_contains("does NOT run").is_none());
}

fn ds_asset(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../assets/ds_cnn_kws")
        .join(name)
}

fn capture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/captures")
        .join(name)
}

/// `etscope cost --json ARGS PTE`.
fn cost_json(args: &[&str], pte: &std::path::Path) -> serde_json::Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_etscope"))
        .arg("cost")
        .args(args)
        .arg("--json")
        .arg(pte)
        .output()
        .expect("cli runs");
    serde_json::from_slice(&out.stdout).expect("json")
}

/// The Profile tab shows the estimate's total on `machine` as the CLI's `cost` printed it.
fn shows_total(
    harness: &egui_kittest::Harness<'_, etscope::gui::EtscopeApp>,
    machine: &str,
    cost: &serde_json::Value,
) {
    let total = cost["total_cycles"].as_f64().expect("total");
    harness
        .get_all_by_label_contains(&format!("Estimated on {machine}: {total:.0} cycles"))
        .next()
        .expect("the estimate's total, as the CLI prints it");
}

/// Opened with `--part` (and no `--estimate`), the Profile tab estimates on the part's core and
/// clock with its memory as the Memory tab places it, before that tab is ever shown: the total
/// `cost --part` prints.
#[test]
fn a_part_on_the_command_line_sets_the_profile_estimate_to_its_core_and_memory() {
    let pte = ds_asset("model_int8_cortex_m55.pte");
    let mut harness = app_starting(StartOptions {
        files: vec![pte.clone()],
        part: Some("ek-ra8d1".into()),
        no_siblings: true,
        ..StartOptions::default()
    });
    harness.get_by_label("Profile").click();
    harness.run_steps(3);
    let cost = cost_json(&["--part", "ek-ra8d1"], &pte);
    shows_total(&harness, "Cortex-M85 @ 480 MHz", &cost);
    harness.get_by_label_contains("where the Memory tab places it on the ek-ra8d1");
}

/// With no capture the Profile tab lists every call's estimate on the picked core (the numbers
/// `etscope cost` prints), the graph's heat overlay follows the estimate, and picking another
/// core changes both.
#[test]
fn without_a_capture_the_profile_tab_shows_the_estimate_and_the_heat_follows_it() {
    let mut harness = app_starting(StartOptions {
        files: vec![ds_asset("model_int8_cortex_m55.pte")],
        estimate: Some("m55@400".into()),
        no_siblings: true,
        ..StartOptions::default()
    });
    harness.get_by_label("Profile").click();
    harness.run_steps(3);
    let cost = cost_json(
        &["--core", "m55", "--mhz", "400"],
        &ds_asset("model_int8_cortex_m55.pte"),
    );
    shows_total(&harness, "Cortex-M55 @ 400 MHz", &cost);
    for r in cost["rows"].as_array().expect("rows") {
        let c = r["cycles"].as_f64().expect("cycles");
        harness
            .get_all_by_label(&format!("{c:.0}"))
            .next()
            .unwrap_or_else(|| panic!("row {} shows {c:.0} cycles", r["instruction_id"]));
    }
    let picker = harness.state().cost;
    let dv = &mut harness.state_mut().docs[0];
    dv.heat.on = true;
    let colored = dv
        .heat_overlay(picker)
        .expect("an overlay from the estimate")
        .iter()
        .filter(|c| c.is_some())
        .count();
    assert_eq!(colored, 17, "every kernel call is coloured");
    harness.state_mut().cost.core = etscope_core::analysis::cost::Core::M4;
    harness.run_steps(3);
    harness
        .get_all_by_label_contains("Estimated on Cortex-M4 @ 400 MHz")
        .next()
        .expect("the new core's estimate");
}

/// A capture is never set against an estimate of another machine (a host ETDump that declares
/// no core against a Cortex-M7 estimate; the emulated board's instruction counts), saying why;
/// then Profile ▸ Compare with a second capture of the program (`--compare-capture`): the
/// comparison's table, and an operator's per-run series once its name is clicked.
#[test]
fn a_capture_is_not_priced_as_another_machine_and_compares_with_another() {
    let mut harness = app_starting(StartOptions {
        files: vec![
            ds_asset("model_fp32.pte"),
            ds_asset("etdump_profile_5runs.etdp"),
        ],
        no_siblings: true,
        estimate: Some("m7@280".into()),
        ..StartOptions::default()
    });
    harness.get_by_label("Profile").click();
    harness.run_steps(3);
    harness
        .get_all_by_label_contains("Measured ÷ estimated not shown: the capture comes from a machine the capture does not declare")
        .next()
        .expect("the host capture is not priced as a Cortex-M7");
    assert!(harness.query_by_label("meas ÷ est").is_none());
    // an emulated board's capture says what its times are
    let mut harness = app_starting(StartOptions {
        files: vec![
            ds_asset("model_int8_cortex_m55.pte"),
            capture("ds_cnn_m55_explicit_board.etdp"),
        ],
        no_siblings: true,
        ..StartOptions::default()
    });
    harness.get_by_label("Profile").click();
    harness.run_steps(3);
    harness
        .get_all_by_label_contains(
            "times: QEMU instruction counts of etscope's firmware (not cycles)",
        )
        .next()
        .expect("the emulated board's times named");
    // … and never set against an estimate; the estimate follows the core the capture declares
    harness
        .get_all_by_label_contains(
            "Measured ÷ estimated not shown: the capture comes from an emulator",
        )
        .next()
        .expect("the emulator's counts are not priced as a part");
    harness
        .get_all_by_label_contains("the estimate models a Cortex-M55 part")
        .next()
        .expect("the estimate follows the capture's core");
    // the comparison, as `--compare-capture` starts it
    let mut harness = app_starting(StartOptions {
        files: vec![
            ds_asset("model_fp32.pte"),
            ds_asset("etdump_profile_5runs.etdp"),
        ],
        no_siblings: true,
        compare_capture: Some(capture("ds_cnn_fp32_host_debug.etdp")),
        ..StartOptions::default()
    });
    harness.get_by_label("Profile").click();
    harness.run_steps(3);
    harness
        .get_all_by_label_contains("31 operators matched")
        .next()
        .expect("the comparison's summary");
    harness
        .get_all_by_label("instruction")
        .next()
        .expect("matched by instruction");
    harness
        .get_all_by_label("aten::_softmax.out")
        .next()
        .expect("softmax row")
        .click();
    harness.run_steps(3);
    harness
        .get_all_by_label_contains("aten::_softmax.out: time per run")
        .next()
        .expect("the series plot's title");
}

/// A second capture of another program is refused, naming the file.
#[test]
fn a_capture_of_another_program_is_not_compared() {
    let mut harness = app_starting(StartOptions {
        files: vec![
            ds_asset("model_fp32.pte"),
            ds_asset("etdump_profile_5runs.etdp"),
        ],
        no_siblings: true,
        compare_capture: Some(capture("ds_cnn_m55_explicit_board.etdp")),
        ..StartOptions::default()
    });
    harness.run_steps(2);
    let said = harness.state().messages.join("\n");
    assert!(
        said.contains("ds_cnn_m55_explicit_board.etdp") && said.contains("does not belong"),
        "{said}"
    );
    assert!(harness.state().docs[0].profile.capture_compare.is_none());
}

/// A second capture is read with its own clock: one that declares it (its raw stream beside it)
/// is not compared with one whose clock is unknown, whatever the document's is.
#[test]
fn a_second_capture_is_compared_in_its_own_clock_or_refused() {
    let dir = std::env::temp_dir().join(format!("etscope-gui-clock-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    // the same capture without its raw stream: its clock unknown
    let bare = dir.join("bare.etdp");
    std::fs::copy(capture("ds_cnn_m55_explicit_board.etdp"), &bare).expect("copy");
    let mut harness = app_starting(StartOptions {
        files: vec![ds_asset("model_int8_cortex_m55.pte"), bare],
        no_siblings: true,
        compare_capture: Some(capture("ds_cnn_m55_explicit_board.etdp")),
        ..StartOptions::default()
    });
    harness.run_steps(2);
    let cc = harness.state().docs[0]
        .profile
        .capture_compare
        .as_ref()
        .expect("a comparison");
    let err = cc.result.as_ref().expect_err("refused");
    assert!(err.contains("clock"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// On a part whose flash has wait states, "Advise" places the program as `fit --place auto`
/// does (the same estimate before and after), and dragging one call's weights from flash to
/// the DTCM bar prices that move as `fit --place FILE` does.
#[test]
fn the_memory_tab_advises_a_placement_and_a_dragged_block_is_priced_as_the_cli_prices_it() {
    let pte = ds_asset("model_int8_cortex_m55.pte");
    let mut harness = app_starting(StartOptions {
        files: vec![pte.clone()],
        no_siblings: true,
        ..StartOptions::default()
    });
    harness.state_mut().tab = etscope::gui::Tab::Memory;
    harness.run_steps(2);
    harness.state_mut().docs[0]
        .memory
        .part_fit
        .pick(Some("ek-ra8d1"));
    harness.run_steps(2);
    let cli = |place: Option<&std::path::Path>| -> serde_json::Value {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_etscope"));
        c.args(["fit", "--json", "--part", "ek-ra8d1"]).arg(&pte);
        if let Some(p) = place {
            c.arg("--place").arg(p);
        } else {
            c.args(["--place", "auto"]);
        }
        let out = c.output().expect("cli runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("json")
    };
    let line = |p: &serde_json::Value| {
        format!(
            "estimate {:.3} ms with the default link, {:.3} ms as placed ({} blocks moved)",
            p["before_ms"].as_f64().expect("before"),
            p["after_ms"].as_f64().expect("after"),
            p["moved"]
        )
    };
    // the default link first: nothing moved
    harness.get_by_label_contains("ms as placed (0 blocks moved)");
    // what the estimate charges for memory, as `fit` says it (and what it cannot: unsourced)
    let memory_note = cli(None)["memory_note"]
        .as_str()
        .expect("memory note")
        .to_string();
    harness.get_by_label_contains(&format!("estimate's memory terms: {memory_note}"));
    harness.get_by_label("Advise").click();
    harness.run_steps(2);
    let auto = cli(None);
    assert!(auto["placement"]["moved"].as_u64().expect("moved") > 0);
    harness.get_by_label_contains(&line(&auto["placement"]));
    // back to the default link, then drag the first call's weights onto the DTCM bar
    harness.get_by_label("Default link").click();
    harness.run_steps(2);
    let (bars, blocks) = harness.ctx.data(|d| {
        (
            d.get_temp::<Vec<(String, egui::Rect)>>(egui::Id::new("fit-bars"))
                .expect("the bars"),
            d.get_temp::<Vec<(String, egui::Rect)>>(egui::Id::new("fit-blocks"))
                .expect("the blocks"),
        )
    });
    let (block, from) = blocks
        .iter()
        .find(|(b, _)| b.starts_with("weights of #"))
        .cloned()
        .expect("a call's weights in flash");
    let (_, to) = bars
        .iter()
        .find(|(r, _)| r == "DTCM")
        .cloned()
        .expect("the DTCM bar");
    let press = |pos: egui::Pos2, pressed: bool| egui::Event::PointerButton {
        pos,
        button: egui::PointerButton::Primary,
        pressed,
        modifiers: egui::Modifiers::NONE,
    };
    harness.event(egui::Event::PointerMoved(from.center()));
    harness.run_steps(1);
    harness.event(press(from.center(), true));
    harness.run_steps(1);
    for k in 1..=5 {
        let t = k as f32 / 5.0;
        harness.event(egui::Event::PointerMoved(
            from.center().lerp(to.center(), t),
        ));
        harness.run_steps(1);
    }
    harness.event(press(to.center(), false));
    harness.run_steps(2);
    let placed = harness.state().docs[0]
        .memory
        .part_fit
        .placement()
        .expect("a placement")
        .blocks
        .iter()
        .find(|b| b.name == block)
        .map(|b| b.region.clone());
    assert_eq!(placed.as_deref(), Some("DTCM"), "{block} was not moved");
    let dir = std::env::temp_dir().join(format!("etscope-drag-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("placement.toml");
    std::fs::write(
        &file,
        format!("[[place]]\nblock = {block:?}\nregion = \"DTCM\"\n"),
    )
    .expect("write");
    let one = cli(Some(&file));
    assert_eq!(one["placement"]["moved"], 1);
    harness.get_by_label_contains(&line(&one["placement"]));
    // File ▸ Export for the firmware writes what `fit --place FILE -o DIR` writes, byte for byte
    // (the placed program, its .ptd and loader among them)
    let (from_window, from_cli) = (dir.join("window"), dir.join("cli"));
    let dv = &harness.state().docs[0];
    let written = dv
        .memory
        .part_fit
        .write_firmware_files(
            &from_window,
            &pte,
            dv.doc.program.as_ref().expect("program"),
            dv.doc.plan_index,
        )
        .expect("a placement to export")
        .expect("written");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_etscope"))
        .args(["fit", "--json", "--part", "ek-ra8d1"])
        .arg(&pte)
        .arg("--place")
        .arg(&file)
        .arg("-o")
        .arg(&from_cli)
        .output()
        .expect("cli runs");
    assert!(out.status.success());
    let names = |d: &std::path::Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .expect("dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().to_string())
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(&from_window), names(&from_cli));
    assert_eq!(written.written.len(), names(&from_cli).len());
    assert!(names(&from_cli).contains(&"model_int8_cortex_m55.ptd".to_string()));
    for n in names(&from_cli) {
        assert!(
            std::fs::read(from_window.join(&n)).expect("window's")
                == std::fs::read(from_cli.join(&n)).expect("cli's"),
            "{n} differs between the window's export and the CLI's"
        );
    }
    // the Profile tab's estimate on the part's core prices the memory as placed
    harness.state_mut().cost = etscope_viewer::cost_view::CostPicker {
        core: etscope_core::cortex_m::Core::M85,
        mhz: 480.0,
    };
    harness.get_by_label("Profile").click();
    harness.run_steps(3);
    harness.get_by_label_contains("where the Memory tab places it on the ek-ra8d1");
    let total = one["total_cycles"].as_f64().expect("cycles");
    let app = harness.state_mut();
    let dv = &mut app.docs[0];
    let est = dv
        .profile
        .cost
        .estimate(
            &dv.doc,
            etscope_viewer::cost_view::CostPicker {
                core: etscope_core::cortex_m::Core::M85,
                mhz: 480.0,
            },
        )
        .expect("an estimate");
    assert!((est.total_cycles() - total).abs() < 1e-6 * total);
}

/// `--part FILE.toml` opens the window on a part of the user's own, read as the CLI reads it
/// (it said "no such part"); the tab names the part and the fit `fit --part FILE` gives.
#[test]
fn a_part_file_on_the_command_line_opens_the_memory_tab_on_that_part() {
    let dir = std::env::temp_dir().join(format!("etscope-gui-part-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("mine.toml");
    std::fs::write(
        &file,
        "[[part]]\nname = \"my-m55\"\ncore = \"m55\"\nmhz = 200\n[part.link]\ncode = \"flash\"\nconstants = \"flash\"\narenas = \"ram\"\nstack = \"ram\"\n[[part.region]]\nname = \"flash\"\nkind = \"flash\"\nbase = \"0x0\"\nsize = 1048576\nwait_states = 3\n[[part.region]]\nname = \"ram\"\nkind = \"sram\"\nbase = \"0x20000000\"\nsize = 524288\n",
    )
    .expect("write");
    let pte = ds_asset("model_int8_cortex_m55.pte");
    let mut harness = app_starting(StartOptions {
        files: vec![pte.clone()],
        part: Some(file.display().to_string()),
        no_siblings: true,
        ..StartOptions::default()
    });
    harness.state_mut().tab = etscope::gui::Tab::Memory;
    harness.run_steps(3);
    assert!(
        harness.state().messages.is_empty(),
        "{:?}",
        harness.state().messages
    );
    harness.get_by_label_contains("fits my-m55");
    // the Profile tab's estimate: the part's core and clock, as `cost --part FILE`
    let cost = cost_json(&["--part", &file.display().to_string()], &pte);
    harness.get_by_label("Profile").click();
    harness.run_steps(3);
    shows_total(&harness, "Cortex-M55 @ 200 MHz", &cost);
    let _ = std::fs::remove_dir_all(&dir);
}
