//! `profile --estimate` (each operator beside its estimate) and `profile --compare` (two
//! captures matched operator by operator; its JSON, CSV and the CI gate's exit codes).

use super::*;

fn ds(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../assets/ds_cnn_kws")
        .join(name)
}

#[test]
fn a_capture_stands_beside_its_estimate_only_when_it_comes_from_the_modelled_part() {
    let pte = ds("model_int8_cortex_m55.pte");
    let board = fixture("captures/ds_cnn_m55_explicit_board.etdp");
    // the emulated board's capture: QEMU's instruction counts are never priced as a part
    let d = json(&[
        "profile",
        "--pte",
        p(&pte),
        "--etdump",
        p(&board),
        "--estimate",
        "m55",
        "--json",
    ]);
    assert_eq!(d["machine"]["kind"], "emulator");
    assert_eq!(d["estimate"]["compared"], false);
    assert!(d["estimate"]["why"]
        .as_str()
        .is_some_and(|w| w.contains("instruction counts")));
    assert!(d["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .all(|r| r.get("measured_over_estimated").is_none()));
    let text = etscope(&[
        "profile",
        "--pte",
        p(&pte),
        "--etdump",
        p(&board),
        "--estimate",
        "m4",
    ]);
    let out = String::from_utf8_lossy(&text.stdout);
    assert!(
        out.contains("not set against the estimate on Cortex-M4 @ 120 MHz"),
        "{out}"
    );
    assert!(!out.contains("meas÷est"), "{out}");
    // a capture that declares no machine (the same events without their raw stream): refused
    let dir = fresh_dir("undeclared");
    let bare = without_its_raw_stream(&board, &dir);
    let d = json(&[
        "profile",
        "--pte",
        p(&pte),
        "--etdump",
        p(&bare),
        "--estimate",
        "m55",
        "--json",
    ]);
    assert_eq!(d["machine"]["kind"], "undeclared");
    assert_eq!(d["estimate"]["compared"], false);
    // … until the user says which part it came from: then each operator beside its estimate
    let d = json(&[
        "profile",
        "--pte",
        p(&pte),
        "--etdump",
        p(&bare),
        "--capture-core",
        "m55",
        "--ticks-per-us",
        "1000",
        "--estimate",
        "m55",
        "--mhz",
        "400",
        "--json",
    ]);
    assert_eq!(d["estimate"]["compared"], true);
    assert_eq!(d["estimate"]["core"], "m55");
    assert_eq!(d["estimate"]["measured_in_us"], true);
    let cost = json(&["cost", p(&pte), "--core", "m55", "--mhz", "400", "--json"]);
    let rows = d["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 17);
    for r in rows {
        let id = r["instruction_id"].as_u64().expect("id");
        let c = cost["rows"]
            .as_array()
            .and_then(|rs| rs.iter().find(|c| c["instruction_id"].as_u64() == Some(id)))
            .expect("a cost row");
        let est_us = c["cycles"].as_f64().expect("cycles") / 400.0;
        assert!((r["estimated_us"].as_f64().expect("estimated") - est_us).abs() < 1e-6);
        let ratio = r["p50_us"].as_f64().expect("p50") / est_us;
        assert!((r["measured_over_estimated"].as_f64().expect("ratio") - ratio).abs() < 1e-6);
        let rel = r["relative_to_median"].as_f64().expect("relative");
        assert_eq!(r["outlier"], !(0.5..=2.0).contains(&rel));
    }
    // --csv writes what the window's File ▸ export writes, the estimate and the times included
    let csv = dir.join("profile.csv");
    let wrote = etscope(&[
        "profile",
        "--pte",
        p(&pte),
        "--etdump",
        p(&bare),
        "--capture-core",
        "m55",
        "--estimate",
        "m55",
        "--csv",
        p(&csv),
    ]);
    assert!(wrote.status.success());
    let text = std::fs::read_to_string(&csv).expect("csv written");
    let _ = std::fs::remove_dir_all(&dir);
    let header = text.lines().next().expect("header");
    assert!(
        header.starts_with("instruction_id,op,event_name,count,avg,min,max,p10,p50,p90,raw")
            && header.ends_with(",estimated_us,measured_over_estimated,outlier"),
        "{header}"
    );
    assert_eq!(text.lines().count(), 18);
    // a core the capture contradicts is refused, naming both
    let refused = etscope(&[
        "profile",
        "--pte",
        p(&pte),
        "--etdump",
        p(&board),
        "--capture-core",
        "m4",
    ]);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("cortex-m55") && err.contains("m4"), "{err}");
}

#[test]
fn two_exports_captures_compare_through_their_etrecords_in_json_and_csv() {
    let csv = std::env::temp_dir().join(format!("etscope-compare-{}.csv", std::process::id()));
    let d = json(&[
        "profile",
        "--pte",
        p(&ds("model_int8_cortex_m55.pte")),
        "--etrecord",
        p(&ds("model_int8_cortex_m55.etrecord")),
        "--etdump",
        p(&fixture("captures/ds_cnn_m55_explicit_board.etdp")),
        "--compare",
        p(&fixture("captures/ds_cnn_m55_default_board.etdp")),
        "--compare-pte",
        p(&ds("model_int8_cortex_m55_default.pte")),
        "--compare-etrecord",
        p(&ds("model_int8_cortex_m55_default.etrecord")),
        "--csv",
        p(&csv),
        "--json",
    ]);
    assert_eq!(d["unit"], "us");
    assert!(
        d["warning"].is_null(),
        "one machine, one clock: {}",
        d["warning"]
    );
    assert_eq!(d["matched"], 17);
    let rows = d["rows"].as_array().expect("rows");
    for r in rows {
        for k in ["p50", "p90", "jitter", "series", "instruction_id"] {
            assert!(!r["a"][k].is_null() && !r["b"][k].is_null(), "{k}: {r}");
        }
        assert!(r["change"].as_f64().is_some_and(|c| c.abs() < 0.001), "{r}");
    }
    assert!(rows.iter().any(|r| r["matched_by"] == "debug_handles"));
    let text = std::fs::read_to_string(&csv).expect("csv written");
    let _ = std::fs::remove_file(&csv);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("op,module,matched_by,a_instruction,b_instruction,a_p50"));
    assert_eq!(lines.len(), 18);
}

#[test]
fn captures_of_two_machines_are_compared_with_a_warning_saying_so() {
    // the emulated board's capture against the same events with no machine declared
    let board = fixture("captures/ds_cnn_m55_explicit_board.etdp");
    let dir = fresh_dir("machines");
    let bare = without_its_raw_stream(&board, &dir);
    let pte = ds("model_int8_cortex_m55.pte");
    let args = [
        "profile",
        "--pte",
        p(&pte),
        "--etdump",
        p(&board),
        "--compare",
        p(&bare),
        "--compare-ticks-per-us",
        "1000",
    ];
    let d = json(&[&args[..], &["--json"]].concat());
    let w = d["warning"].as_str().expect("a warning");
    assert!(w.contains("two machines") && w.contains("emulator"), "{w}");
    let text = etscope(&args);
    let err = String::from_utf8_lossy(&text.stderr);
    assert!(err.contains("warning: A comes from an emulator"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_ci_gate_fails_with_exit_1_naming_the_operators_that_grew() {
    let args = |pct: &'static str| {
        vec![
            "profile".to_string(),
            "--pte".into(),
            p(&ds("model_fp32.pte")).into(),
            "--etdump".into(),
            p(&ds("etdump_profile_5runs.etdp")).into(),
            "--compare".into(),
            p(&fixture("captures/ds_cnn_fp32_host_debug.etdp")).into(),
            "--ticks-per-us".into(),
            "1000".into(),
            "--fail-if-slower".into(),
            pct.into(),
        ]
    };
    let run = |a: Vec<String>| {
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        etscope(&refs)
    };
    // the convolutions (99% of the time) grew by 0.8–9%; the rest are under 1% of the time
    let pass = run(args("25"));
    assert_eq!(
        pass.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&pass.stderr)
    );
    let fail = run(args("5"));
    let err = String::from_utf8_lossy(&fail.stderr);
    assert_eq!(fail.status.code(), Some(1), "{err}");
    assert!(
        err.contains("aten::convolution.out (instruction 3) +9.1%"),
        "{err}"
    );
    assert!(!err.contains("relu"), "{err}");
    // every operator gated: the short ones, several times slower while logging, fail too
    let mut all = args("25");
    all.extend(["--gate-min-share".to_string(), "0".into()]);
    let err = String::from_utf8_lossy(&run(all).stderr).to_string();
    assert!(err.contains("relu"), "{err}");
}

#[test]
fn a_capture_of_another_program_is_refused_naming_it() {
    let other = fixture("captures/ds_cnn_m55_explicit_board.etdp");
    assert_clean_error(
        &[
            "profile",
            "--pte",
            p(&ds("model_fp32.pte")),
            "--etdump",
            p(&ds("etdump_profile_5runs.etdp")),
            "--compare",
            p(&other),
        ],
        &other,
        &["does not belong"],
    );
    // a clock of no ticks is refused, naming the rate
    let out = etscope(&[
        "profile",
        "--pte",
        p(&ds("model_int8_cortex_m55.pte")),
        "--etdump",
        p(&fixture("captures/ds_cnn_m55_explicit_board.etdp")),
        "--compare",
        p(&fixture("captures/ds_cnn_m55_explicit_board.etdp")),
        "--compare-ticks-per-us",
        "0",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a positive number"));
}

/// A memory plan places tensors; it runs the same calls (a reorder in another order): the
/// estimate, which prices calls, is the program's (what the Memory tab says beside a plan).
#[test]
fn a_replanned_program_costs_the_same_estimated_cycles() {
    let pte = fixture("models/resnet/model_int8_cortex_m55_default.pte");
    let out = std::env::temp_dir().join(format!("etscope-replanned-{}.pte", std::process::id()));
    let plan = etscope(&["plan", p(&pte), "--algorithm", "reorder", "-o", p(&out)]);
    assert!(
        plan.status.success(),
        "{}",
        String::from_utf8_lossy(&plan.stderr)
    );
    let cycles =
        |f: &Path| json(&["cost", p(f), "--core", "m55", "--json"])["total_cycles"].clone();
    let (before, after) = (cycles(&pte), cycles(&out));
    let _ = std::fs::remove_file(&out);
    assert!(before.as_f64().is_some_and(|c| c > 0.0));
    assert_eq!(before, after);
}

/// The same events as `capture` without the raw stream beside it: a capture that declares no
/// machine.
fn without_its_raw_stream(capture: &Path, dir: &Path) -> PathBuf {
    let bare = dir.join("capture.etdp");
    std::fs::copy(capture, &bare).expect("copied");
    bare
}
