//! The `etscope` binary as users and scripts call it: JSON shapes, numbers, exit codes and
//! one-line errors naming the file.

mod tools;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn tiny(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/tiny_conv_relu_linear")
        .join(name)
}

fn etscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_etscope"))
        .args(args)
        .output()
        .expect("etscope runs")
}

/// Runs etscope, killing it if it has not finished after `secs` seconds (a hang guard, not a
/// speed claim: speeds are benchmarks).
fn etscope_or_hang(args: &[&str], secs: u64) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_etscope"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("etscope runs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        if child.try_wait().expect("waits").is_some() {
            return child.wait_with_output().expect("output");
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("{args:?} hung (killed after {secs} s)");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn json(args: &[&str]) -> Value {
    let out = etscope(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: not JSON: {e}"))
}

fn p(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

#[test]
fn info_json_lists_plans_as_scripts_expect() {
    let info = json(&["info", "--json", p(&tiny("model_int8_cortex_m55.pte"))]);
    assert_eq!(info["kind"], "pte");
    let plan = &info["plans"][0];
    assert_eq!(plan["name"], "forward");
    assert_eq!(plan["instructions"], 6);
    assert_eq!(plan["values"], 64);
    assert_eq!(plan["delegates"], 0);
    let ops: Vec<&str> = plan["operators"]
        .as_array()
        .expect("ops")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        ops,
        [
            "cortex_m::quantize_per_tensor.out",
            "cortex_m::transpose.out",
            "cortex_m::quantized_conv2d_nhwc.out",
            "cortex_m::quantized_linear.out",
            "cortex_m::dequantize_per_tensor.out"
        ]
    );
    let x = json(&["info", "--json", p(&tiny("model_fp32_xnnpack.pte"))]);
    assert_eq!(
        x["plans"][0]["delegate_backends"][0]["id"],
        "XnnpackBackend"
    );
    for (file, kind) in [
        ("etdump.etdp", "etdump"),
        ("model_fp32.etrecord", "etrecord"),
        ("model_fp32.bpte", "bpte"),
        ("input.npy", "npy"),
    ] {
        assert_eq!(
            json(&["info", "--json", p(&tiny(file))])["kind"],
            kind,
            "{file}"
        );
    }
}

#[test]
fn memory_json_has_one_arena_per_memory_id_with_bounds() {
    let m = json(&["memory", "--json", p(&tiny("model_fp32.pte"))]);
    let arenas = m["arenas"].as_array().expect("arenas");
    assert_eq!(arenas.len(), 1);
    let a = &arenas[0];
    assert_eq!(a["memory_id"], 1);
    assert_eq!(a["size"], 11312);
    let (lb, peak) = (
        a["lower_bound"].as_u64().expect("lb"),
        a["peak"].as_u64().expect("peak"),
    );
    assert!(0 < lb && lb <= peak && peak <= 11312);
    for t in a["tensors"].as_array().expect("tensors") {
        for key in ["value", "offset", "size", "first", "last"] {
            assert!(t[key].is_u64(), "tensor lacks {key}: {t}");
        }
    }
    assert_eq!(m["findings"], Value::Array(vec![]));
}

#[test]
fn profile_json_rows_carry_inspector_statistics() {
    let out = json(&[
        "profile",
        "--json",
        "--pte",
        p(&tiny("model_fp32.pte")),
        "--etdump",
        p(&tiny("etdump_profile_5runs.etdp")),
    ]);
    let rows = out["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 4);
    // the events of no instruction, as the Inspector's table lists them (ns → ms)
    let inspector: Value = serde_json::from_slice(
        &std::fs::read(tiny("inspector_table_profile_5runs.json")).expect("inspector table"),
    )
    .expect("json");
    let events = out["events"].as_array().expect("events");
    for name in ["Method::init", "Program::load_method", "Method::execute"] {
        let want = inspector
            .as_array()
            .expect("rows")
            .iter()
            .find(|r| r["event_name"] == name)
            .unwrap_or_else(|| panic!("the Inspector lists {name}"));
        let got = events
            .iter()
            .find(|e| e["event_name"] == name)
            .unwrap_or_else(|| panic!("profile --json lists {name}: {events:?}"));
        assert_eq!(got["event_block_name"], want["event_block_name"], "{name}");
        let got_ms: Vec<f64> = got["raw"]
            .as_array()
            .expect("raw")
            .iter()
            .filter_map(Value::as_f64)
            .map(|ns| ns / 1e6)
            .collect();
        let want_ms: Vec<f64> = want["raw"]
            .as_array()
            .expect("raw")
            .iter()
            .filter_map(Value::as_f64)
            .collect();
        assert_eq!(got_ms.len(), want_ms.len(), "{name}");
        for (g, w) in got_ms.iter().zip(&want_ms) {
            assert!(
                (g - w).abs() < 1e-6,
                "{name}: {g} ms vs the Inspector's {w} ms"
            );
        }
    }
    let conv = &rows[0];
    assert_eq!(conv["instruction_id"], 0);
    assert_eq!(conv["op"], "aten::convolution.out");
    assert_eq!(conv["count"], 5);
    // the Inspector: raw [0.055322, 0.04575, 0.04522, 0.04528, 0.045305] ms, p50 0.045305 ms
    let raw: Vec<u64> = conv["raw"]
        .as_array()
        .expect("raw")
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    assert_eq!(raw, [55322, 45750, 45220, 45280, 45305]);
    assert_eq!(conv["p50"].as_f64(), Some(45305.0));
    assert_eq!(conv["min"], 45220);
    for key in ["avg", "max", "p10", "p90"] {
        assert!(conv[key].is_number(), "{key}");
    }
    let with_record = json(&[
        "profile",
        "--json",
        "--pte",
        p(&tiny("model_fp32.pte")),
        "--etdump",
        p(&tiny("etdump_profile_5runs.etdp")),
        "--etrecord",
        p(&tiny("model_fp32.etrecord")),
        "--ticks-per-us",
        "1000",
    ]);
    let with_record = &with_record["rows"];
    assert_eq!(with_record[0]["debug_handles"], serde_json::json!([1]));
    assert!((with_record[0]["p50_us"].as_f64().expect("us") - 45.305).abs() < 1e-9);
}

#[test]
fn tensors_dump_writes_npy_files_equal_to_the_debug_buffer() {
    let dir = std::env::temp_dir().join(format!("etscope-tensors-{}", std::process::id()));
    let rows = json(&[
        "tensors",
        "--json",
        "--etdump",
        p(&tiny("etdump.etdp")),
        "--debug-buffer",
        p(&tiny("debug_buffer.bin")),
        "--pte",
        p(&tiny("model_fp32.pte")),
        "--dump",
        p(&dir),
    ]);
    let rows = rows.as_array().expect("list");
    assert_eq!(rows.len(), 5);
    assert_eq!(rows[0]["op"], "aten::convolution.out");
    let conv = etscope_core::formats::npy::read_npy(
        &std::fs::read(dir.join("instr_0.npy")).expect("written"),
    )
    .expect("npy");
    assert_eq!(conv.shape, vec![1, 4, 8, 8]);
    // the program output equals the reference ExecuTorch output
    let out = etscope_core::formats::npy::read_npy(
        &std::fs::read(dir.join("output_0.npy")).expect("written"),
    )
    .expect("npy");
    let want = etscope_core::formats::npy::read_npy(
        &std::fs::read(tiny("output_et_fp32.npy")).expect("ref"),
    )
    .expect("npy");
    assert_eq!(out.bytes, want.bytes);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn graph_json_has_nodes_edges_and_values() {
    let g = json(&["graph", "--json", p(&tiny("model_fp32.pte"))]);
    assert_eq!(g["stage"], "pte");
    let nodes = g["nodes"].as_array().expect("nodes");
    assert_eq!(nodes.len(), 6, "input + 4 instructions + output");
    assert_eq!(nodes[1]["op"], "aten::convolution");
    assert_eq!(nodes[1]["instruction_id"], 0);
    assert!(!g["edges"].as_array().expect("edges").is_empty());
    let stage = json(&[
        "graph",
        "--json",
        "--stage",
        "edge",
        p(&tiny("model_int8_cortex_m55.etrecord")),
    ]);
    assert_eq!(stage["stage"], "edge");
    let bad = etscope(&["graph", "--stage", "nope", p(&tiny("model_fp32.etrecord"))]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("stages: exported"));
}

fn assert_clean_error(args: &[&str], file: &Path, words: &[&str]) {
    let out = etscope(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(
        err.contains(&file.display().to_string()),
        "names the file: {err}"
    );
    assert!(
        words.iter().any(|w| err.contains(w)),
        "says what is wrong ({words:?}): {err}"
    );
}

#[test]
fn bad_files_give_one_line_errors_naming_the_file() {
    let dir = std::env::temp_dir().join(format!("etscope-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp");
    let pte = std::fs::read(tiny("model_fp32.pte")).expect("pte");
    let etdp = std::fs::read(tiny("etdump_profile_5runs.etdp")).expect("etdp");
    let cases: Vec<(&str, Vec<u8>, &[&str])> = vec![
        (
            "half.pte",
            pte[..pte.len() / 2].to_vec(),
            &["truncated", "corrupt"],
        ),
        ("empty.pte", Vec::new(), &["empty"]),
        (
            "etdump_as.pte",
            etdp.clone(),
            &["holds a etdump", "holds an etdump"],
        ),
        ("noise.pte", vec![0x5a; 64], &["not an ExecuTorch artifact"]),
    ];
    for (name, data, words) in &cases {
        let f = dir.join(name);
        std::fs::write(&f, data).expect("write");
        assert_clean_error(&["info", p(&f)], &f, words);
    }
    let half = dir.join("half.etdp");
    std::fs::write(&half, &etdp[..etdp.len() / 2]).expect("write");
    assert_clean_error(
        &[
            "profile",
            "--pte",
            p(&tiny("model_fp32.pte")),
            "--etdump",
            p(&half),
        ],
        &half,
        &["truncated"],
    );
    // an ETDump of another program
    let other = tiny("etdump_profile_5runs.etdp");
    assert_clean_error(
        &[
            "profile",
            "--pte",
            p(&tiny("model_fp32_xnnpack.pte")),
            "--etdump",
            p(&other),
        ],
        &other,
        &["another program"],
    );
    let missing = dir.join("missing.pte");
    assert_clean_error(&["info", p(&missing)], &missing, &["cannot read"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_dumps_outputs_and_every_instruction_as_npy() {
    let dir = std::env::temp_dir().join(format!("etscope-run-{}", std::process::id()));
    let out = etscope(&[
        "run",
        "--pte",
        p(&tiny("model_int8_cortex_m55.pte")),
        "--input",
        p(&tiny("input.npy")),
        "--dump",
        p(&dir),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = etscope_core::formats::npy::read_npy(
        &std::fs::read(dir.join("output_0.npy")).expect("output"),
    )
    .expect("npy");
    let want = etscope_core::formats::npy::read_npy(
        &std::fs::read(tiny("output_int8_cortex_m_python.npy")).expect("ref"),
    )
    .expect("npy");
    assert_eq!(got.bytes, want.bytes);
    for iid in 0..6 {
        assert!(
            dir.join(format!("instr_{iid}.npy")).exists(),
            "instr_{iid}.npy"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    // a delegate cannot run on the host: a one-line error naming the backend
    let x = etscope(&[
        "run",
        "--pte",
        p(&tiny("model_fp32_xnnpack.pte")),
        "--input",
        p(&tiny("input.npy")),
    ]);
    assert_eq!(x.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&x.stderr).contains("XnnpackBackend cannot run on the host"));
}

#[test]
fn bundled_runs_every_test_case() {
    let v = json(&["bundled", "--json", p(&tiny("model_fp32.bpte"))]);
    let cases = v.as_array().expect("cases");
    assert_eq!(cases.len(), 3);
    assert!(cases.iter().all(|c| c["passed"] == true), "{v}");
}

#[test]
fn diff_of_a_host_run_against_its_device_capture_has_no_divergence() {
    let spec = format!(
        "etdump:{}+{}",
        p(&tiny("etdump.etdp")),
        p(&tiny("debug_buffer.bin"))
    );
    let v = json(&[
        "diff",
        "--json",
        p(&tiny("model_fp32.pte")),
        &spec,
        "--input",
        p(&tiny("input.npy")),
    ]);
    assert_eq!(v["matched_by"], "instruction");
    assert_eq!(v["first_divergence"], Value::Null);
    assert_eq!(v["rows"].as_array().expect("rows").len(), 4);
    let q = json(&[
        "diff",
        "--json",
        p(&tiny("model_fp32.pte")),
        p(&tiny("model_int8_qdq_portable.pte")),
        "--input",
        p(&tiny("input.npy")),
    ]);
    assert_eq!(q["matched_by"], "module");
    assert!(!q["rows"].as_array().expect("rows").is_empty());
}

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(rel)
}

#[test]
fn bundled_says_cannot_run_apart_from_wrong_numbers() {
    let out = etscope(&[
        "bundled",
        p(&fixture("programs/bundled_xnnpack/model.bpte")),
    ]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "cannot run has its own exit code"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot run on the host") && err.contains("XnnpackBackend"),
        "{err}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("cannot run"), "{stdout}");
    let ok = etscope(&["bundled", p(&tiny("model_fp32.bpte"))]);
    assert_eq!(ok.status.code(), Some(0));
}

#[test]
fn a_ptd_is_listed_and_attached_by_its_name() {
    let info = json(&[
        "info",
        "--json",
        p(&fixture("programs/external_weights/model.ptd")),
    ]);
    assert_eq!(info["kind"], "ptd");
    assert_eq!(info["tensors"].as_array().map(Vec::len), Some(2));
    let dir = fixture("programs/external_weights");
    let run = json(&[
        "run",
        "--json",
        "--pte",
        p(&dir.join("model.pte")),
        "--input",
        p(&dir.join("input_0.npy")),
    ]);
    assert_eq!(run["outputs"][0]["shape"], serde_json::json!([3, 4]));
}

#[test]
fn run_models_the_core_the_program_was_lowered_for() {
    // an M4 program's linear layers carry a bias; the run says nothing and uses the DSP path,
    // and an unknown --target is refused with the names it takes
    let m4 = tiny("model_int8_cortex_m4_default.pte");
    let input = tiny("input.npy");
    json(&["run", "--json", "--pte", p(&m4), "--input", p(&input)]);
    let bad = etscope(&[
        "run",
        "--pte",
        p(&m4),
        "--input",
        p(&input),
        "--target",
        "m99",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown core"));
}

#[test]
fn an_ethos_u_delegate_shows_what_the_npu_needs() {
    let info = json(&[
        "info",
        "--json",
        p(&fixture("programs/ethos_u55/model.pte")),
    ]);
    let d = &info["plans"][0]["delegate_backends"][0];
    assert_eq!(d["id"], "EthosUBackend");
    assert!(
        d["ethos_u"]["scratch_bytes"]
            .as_u64()
            .is_some_and(|b| b > 0),
        "{d}"
    );
    assert!(d["ethos_u"]["command_stream_bytes"]
        .as_u64()
        .is_some_and(|b| b > 0));
    let mem = json(&[
        "memory",
        "--json",
        p(&fixture("programs/ethos_u55/model.pte")),
    ]);
    assert_eq!(mem["ethos_u"].as_array().map(Vec::len), Some(1));
}

#[test]
fn an_etdump_of_another_program_is_refused_with_the_reason() {
    let out = etscope(&[
        "profile",
        "--pte",
        p(&tiny("model_int8_cortex_m55.pte")),
        "--etdump",
        p(&tiny("etdump_xnnpack.etdp")),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("etdump_xnnpack.etdp: does not belong to") && err.contains("delegate"),
        "{err}"
    );
}

#[test]
fn board_run_records_every_instruction_and_the_capture_reads_back_everywhere() {
    if !tools::available(
        "board_run_records_every_instruction_and_the_capture_reads_back_everywhere",
        tools::BOARD,
    ) {
        return;
    }
    let dir = std::env::temp_dir().join(format!("etscope-cli-board-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // -o into folders that do not exist yet: board run creates them
    let out = dir.join("captures/today/capture.etdp");
    let pte = tiny("model_int8_cortex_m55.pte");
    let summary = json(&[
        "board",
        "run",
        p(&pte),
        "--input",
        p(&tiny("input.npy")),
        "--runs",
        "4",
        "--intermediates",
        "-o",
        p(&out),
        "--json",
    ]);
    assert_eq!(summary["runs"], 4);
    assert_eq!(summary["lost_frames"], 0);
    assert_eq!(summary["lost_bytes"], 0);
    assert_eq!(summary["core"], "cortex-m55");
    // profile: 4 runs of every instruction of the program
    let rows = json(&["profile", "--pte", p(&pte), "--etdump", p(&out), "--json"]);
    let rows = rows["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 6);
    for (k, r) in rows.iter().enumerate() {
        assert_eq!(r["instruction_id"], k);
        assert_eq!(r["count"], 4);
        assert_eq!(r["raw"].as_array().map(Vec::len), Some(4));
    }
    // tensors: every instruction's output of every run
    let tensors = json(&[
        "tensors",
        "--etdump",
        p(&out),
        "--debug-buffer",
        p(&out.with_extension("bin")),
        "--json",
    ]);
    assert_eq!(tensors.as_array().map(Vec::len), Some(24));
    // the raw stream rebuilds the same ETDump
    let again = dir.join("again.etdp");
    json(&[
        "record",
        "--replay",
        p(&out.with_extension("etsw")),
        "--pte",
        p(&pte),
        "-o",
        p(&again),
        "--json",
    ]);
    assert_eq!(
        std::fs::read(&out).expect("etdp"),
        std::fs::read(&again).expect("etdp")
    );
    // a capture of this program does not rebuild against another one
    let other = etscope(&[
        "record",
        "--replay",
        p(&out.with_extension("etsw")),
        "--pte",
        p(&tiny("model_fp32.pte")),
        "-o",
        p(&dir.join("wrong.etdp")),
    ]);
    assert_eq!(other.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&other.stderr).contains("another program"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn board_run_names_the_operator_the_firmware_lacks() {
    // a standalone hardswish left on int8 codes: an operator the board firmware does not
    // implement
    let pte = fixture("programs/cortex_m_hardswish/model.pte");
    let out = etscope(&["board", "run", p(&pte), "-o", "/tmp/never.etdp"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cortex_m_hardswish/model.pte"), "{err}");
    assert!(err.contains("aten::hardswish.out"), "{err}");
    assert!(err.contains("docs/compatibility.md"), "{err}");
}

#[test]
fn record_from_a_gdb_server_that_is_not_there_fails_at_once() {
    let out = etscope_or_hang(
        &[
            "record",
            "--gdb",
            "127.0.0.1:9",
            "--pte",
            p(&tiny("model_int8_cortex_m55.pte")),
            "-o",
            "/tmp/never.etdp",
        ],
        60,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("GDB server 127.0.0.1:9"), "{err}");
}

#[test]
fn record_reads_a_running_board_through_its_gdb_server() {
    if !tools::available(
        "record_reads_a_running_board_through_its_gdb_server",
        tools::BOARD,
    ) {
        return;
    }
    use etscope_core::board_image::{self, BoardOptions};
    let pte = tiny("model_int8_cortex_m55.pte");
    let program = etscope_core::formats::pte::Program::parse(std::fs::read(&pte).expect("pte"))
        .expect("program");
    let image = board_image::build(
        &program,
        0,
        &board_image::zero_inputs(&program, 0),
        &BoardOptions {
            runs: 3,
            ..BoardOptions::default()
        },
    )
    .expect("image");
    let elf = etscope::board::firmware().expect("firmware");
    let qemu = etscope::board::Qemu::start(&elf, &image.bytes).expect("qemu");
    let out = std::env::temp_dir().join(format!("etscope-cli-record-{}.etdp", std::process::id()));
    let summary = json(&[
        "record",
        "--gdb",
        &qemu.gdb_address(),
        "--elf",
        p(&elf),
        "--pte",
        p(&pte),
        "-o",
        p(&out),
        "--json",
    ]);
    assert_eq!(summary["runs"], 3, "the target announced 3 runs: {summary}");
    assert_eq!(summary["lost_frames"], 0);
    assert_eq!(summary["core"], "cortex-m55");
    // without the ELF, the control block is found by scanning RAM
    drop(qemu);
    let qemu = etscope::board::Qemu::start(&elf, &image.bytes).expect("qemu");
    let summary = json(&[
        "record",
        "--gdb",
        &qemu.gdb_address(),
        "--pte",
        p(&pte),
        "-o",
        p(&out),
        "--json",
    ]);
    assert_eq!(summary["runs"], 3);
    for ext in ["etdp", "etsw"] {
        let _ = std::fs::remove_file(out.with_extension(ext));
    }
}

/// Each crafted file of `tests/fixtures/hostile/` is refused (or shown with its finding) with a
/// message naming the file and the problem, quickly and without a crash.
#[test]
fn hostile_files_are_refused_with_a_clear_error_in_bounded_time() {
    let h = |name: &str| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/hostile")
            .join(name)
    };
    let ds = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/ds_cnn_kws/input.npy");
    let tiny_input = tiny("input.npy");
    let cases: Vec<(Vec<String>, Option<&str>)> = vec![
        (
            vec![
                "run".into(),
                "--pte".into(),
                p(&h("offset_high.pte")).into(),
                "--input".into(),
                p(&tiny_input).into(),
                "--in-arenas".into(),
            ],
            Some("does not fit arena 1"),
        ),
        (
            vec![
                "run".into(),
                "--pte".into(),
                p(&h("pool_window.pte")).into(),
                "--input".into(),
                p(&ds).into(),
            ],
            Some("holds 2147483647, beyond the 1048576"),
        ),
        (
            vec![
                "tensors".into(),
                "--etdump".into(),
                p(&h("strides.etdp")).into(),
                "--debug-buffer".into(),
                p(&h("strides.bin")).into(),
            ],
            Some("strides [4611686018427387904"),
        ),
        (
            vec![
                "diff".into(),
                format!("{}#exported", p(&h("deep_pickle.etrecord"))),
                p(&tiny("model_fp32.pte")).into(),
                "--input".into(),
                p(&tiny_input).into(),
            ],
            Some("nested deeper than 64"),
        ),
        (
            vec![
                "diff".into(),
                format!("{}#exported", p(&h("doubling_pickle.etrecord"))),
                p(&tiny("model_fp32.pte")).into(),
                "--input".into(),
                p(&tiny_input).into(),
            ],
            Some("is not in the stage's state dict"),
        ),
    ];
    for (args, expected) in cases {
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = etscope_or_hang(&argv, 120);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("etscope: error: "), "{err}");
        assert!(err.lines().count() == 1, "one line: {err}");
        if let Some(e) = expected {
            assert!(err.contains(e), "{args:?}: {err}");
        }
    }
    // plans that are wrong but readable are shown with their findings, listing bounded
    let mem = json(&["memory", "--json", p(&h("offset_high.pte"))]);
    assert!(mem["findings"]
        .to_string()
        .contains("ends at byte 18446744069414585024"));
    let mem = json(&["memory", "--json", p(&h("arenas_100k.pte"))]);
    assert_eq!(mem["arena_count"], 100_000);
    assert!(mem["arenas"].as_array().map_or(0, Vec::len) <= 256);
    let info = json(&["info", "--json", p(&h("arenas_100k.pte"))]);
    assert_eq!(info["plans"][0]["arena_count"], 100_000);
}

#[test]
fn diff_runs_the_host_side_as_the_core_chosen_and_finds_what_that_core_changes() {
    // a capture of ExecuTorch's own runtime on an emulated Cortex-M55, rebuilt from its stream
    let dir = std::env::temp_dir().join(format!("etscope-cli-diff-core-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let pte = tiny("model_int8_cortex_m55.pte");
    let stream = fixture(
        "executorch_runtime/m55_qemu_streams/tiny_conv_relu_linear__model_int8_cortex_m55.etsw",
    );
    let out = dir.join("capture.etdp");
    let replay = etscope(&[
        "record",
        "--pte",
        p(&pte),
        "--replay",
        p(&stream),
        "--out",
        p(&out),
    ]);
    assert!(
        replay.status.success(),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
    let spec = format!("etdump:{}+{}", p(&out), p(&out.with_extension("bin")));
    let diff = |extra: &[&str]| {
        let mut args = vec!["diff", "--json", p(&pte), &spec, "--input"];
        let input = tiny("input.npy");
        let input = p(&input).to_string();
        args.push(&input);
        args.extend_from_slice(extra);
        json(&args)
    };
    // the program's own core: every node equal to the board's
    let own = diff(&[]);
    assert_eq!(own["first_divergence"], Value::Null, "{own}");
    assert!(own["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .all(|r| r["metrics"]["max_abs"] == 0.0));
    // run as an M4, the linear layer loses its bias (only Helium reads the kernel sum): the diff
    // against the M55 board names it
    let m4 = diff(&["--target", "m4"]);
    let first = m4["first_divergence"].as_u64().expect("a divergence") as usize;
    let row = &m4["rows"][first];
    assert!(
        row["a_ops"].to_string().contains("quantized_linear"),
        "first divergence {row}"
    );
    let bad = etscope(&[
        "diff",
        p(&pte),
        &spec,
        "--input",
        p(&tiny("input.npy")),
        "--cmsis-nn",
        "v9",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown version"));
    let _ = std::fs::remove_dir_all(dir);
}

/// A plan value of flatc's JSON dump as the typed `data` the CLI must print for it.
fn flatc_data(values: &[Value], v: usize) -> Value {
    let val = &values[v]["val"];
    match values[v]["val_type"].as_str().unwrap_or("") {
        "Int" => val["int_val"].clone(),
        "Double" => val["double_val"].clone(),
        "Bool" => val["bool_val"].clone(),
        "String" => val["string_val"].clone(),
        "IntList" => Value::Array(
            val["items"]
                .as_array()
                .expect("items")
                .iter()
                .map(|i| values[i.as_u64().expect("index") as usize]["val"]["int_val"].clone())
                .collect(),
        ),
        "DoubleList" | "BoolList" => val["items"].clone(),
        "TensorList" | "OptionalTensorList" => val["items"].clone(),
        _ => Value::Null,
    }
}

#[test]
fn graph_json_arguments_carry_their_typed_data_equal_to_the_programs_values() {
    for name in [
        "model_fp32",
        "model_int8_cortex_m55",
        "model_int8_qdq_portable",
    ] {
        let pte = tiny(&format!("{name}.pte"));
        let g = json(&["graph", p(&pte), "--json"]);
        let dump: Value = serde_json::from_slice(
            &std::fs::read(tiny(&format!("flatc/{name}.json"))).expect("flatc dump"),
        )
        .expect("json");
        let values = dump["execution_plan"][0]["values"]
            .as_array()
            .expect("values");
        let mut checked = 0;
        for node in g["nodes"].as_array().expect("nodes") {
            for arg in node["args"].as_array().expect("args") {
                let v = arg["value"]
                    .as_u64()
                    .expect("every .pte argument is a value") as usize;
                assert!(arg.get("literal").is_none(), "rendered strings are gone");
                let want = flatc_data(values, v);
                match (arg["data"].as_f64(), want.as_f64()) {
                    // flatc prints doubles with 12 decimal places
                    (Some(got), Some(w)) if arg["data"].is_f64() => assert!(
                        (got - w).abs() <= 1e-11 + 1e-9 * w.abs(),
                        "{name} {node} {arg}: {w}"
                    ),
                    _ => assert_eq!(arg["data"], want, "{name} {node} {arg}"),
                }
                if !arg["data"].is_null() {
                    checked += 1;
                }
            }
        }
        assert!(checked > 5, "{name}: only {checked} non-tensor arguments");
    }
}

#[test]
fn a_stage_runs_as_a_program_does_and_writes_the_same_outputs() {
    let dir = std::env::temp_dir().join(format!("etscope-run-stage-{}", std::process::id()));
    let (stage_dir, pte_dir) = (dir.join("stage"), dir.join("pte"));
    let rec = tiny("model_int8_cortex_m55.etrecord");
    let input = tiny("input.npy");
    for target in ["m55", "m4", "m0"] {
        let stage = format!("{}#edge_after_transform", p(&rec));
        let a = etscope(&[
            "run",
            &stage,
            "--input",
            p(&input),
            "--target",
            target,
            "--dump",
            p(&stage_dir),
        ]);
        assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
        let b = etscope(&[
            "run",
            p(&tiny("model_int8_cortex_m55.pte")),
            "--input",
            p(&input),
            "--target",
            target,
            "--dump",
            p(&pte_dir),
        ]);
        assert!(b.status.success(), "{}", String::from_utf8_lossy(&b.stderr));
        let read = |d: &Path| std::fs::read(d.join("output_0.npy")).expect("output written");
        assert_eq!(read(&stage_dir), read(&pte_dir), "--target {target}");
        // the stage's nodes are dumped per node, the program's per instruction
        assert!(std::fs::read_dir(&stage_dir).expect("dir").any(|e| e
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .starts_with("node_")));
    }
    let missing = etscope(&[
        "run",
        &format!("{}#no_such_stage", p(&rec)),
        "--input",
        p(&input),
    ]);
    assert_eq!(missing.status.code(), Some(2));
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(
        err.contains("no stage") && err.contains("edge_after_transform"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A neighbour found by name that cannot be used is a warning and skipped: the program still
/// opens (a run that needs the missing weights names them).
#[test]
fn a_broken_neighbour_file_is_a_warning_not_a_refusal() {
    let dir = std::env::temp_dir().join(format!("etscope-neighbour-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    // a program with external weights, its .ptd truncated
    let src = fixture("programs/external_weights");
    let pte = dir.join("model.pte");
    std::fs::copy(src.join("model.pte"), &pte).expect("copy");
    let ptd = std::fs::read(src.join("model.ptd")).expect("ptd");
    std::fs::write(dir.join("model.ptd"), &ptd[..ptd.len() / 3]).expect("write");
    let out = etscope(&["graph", p(&pte)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning:") && err.contains("model.ptd") && err.contains("skipped"),
        "{err}"
    );
    let run = etscope(&["run", p(&pte), "--input", p(&src.join("input_0.npy"))]);
    assert_eq!(run.status.code(), Some(2));
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(err.contains("etscope: error:"), "{err}");
    // a program whose .etrecord beside it is garbage: the diff runs without it
    let a = dir.join("model_fp32.pte");
    std::fs::copy(tiny("model_fp32.pte"), &a).expect("copy");
    std::fs::write(dir.join("model_fp32.etrecord"), b"PK\x03\x04 not a zip").expect("write");
    let out = etscope(&[
        "diff",
        p(&a),
        p(&tiny("model_fp32.pte")),
        "--input",
        p(&tiny("input.npy")),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("model_fp32.etrecord") && err.contains("skipped"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The preparation budget is a flag: its refusal says how to raise it, and raising it runs.
#[test]
fn the_preparation_budget_is_a_flag_whose_refusal_says_how_to_raise_it() {
    let pte = tiny("model_fp32.pte");
    let input = tiny("input.npy");
    let out = etscope(&["run", p(&pte), "--input", p(&input), "--max-memory", "0"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("more than 0 MiB") && err.contains("--max-memory"),
        "{err}"
    );
    let out = etscope(&["run", p(&pte), "--input", p(&input), "--max-memory", "1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `run` starts a method that takes no input without `--input`, and writes a non-tensor output
/// (an int) as a 0-d array: both byte for byte what ExecuTorch's runtime returned, as NumPy
/// saves it.
#[test]
fn run_takes_programs_without_inputs_and_writes_non_tensor_outputs() {
    let dir = std::env::temp_dir().join(format!("etscope-io-{}", std::process::id()));
    for (case, inputs) in [("no_input", 0), ("int_output", 1)] {
        let src = fixture(&format!("programs/{case}"));
        let pte = src.join("model.pte");
        let mut args = vec!["run".to_string(), p(&pte).to_string()];
        for k in 0..inputs {
            args.push("--input".into());
            args.push(p(&src.join(format!("input_{k}.npy"))).to_string());
        }
        let out_dir = dir.join(case);
        args.extend(["--dump".to_string(), p(&out_dir).to_string()]);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = etscope(&argv);
        assert!(
            out.status.success(),
            "{case}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for k in 0.. {
            let want = src.join(format!("output_{k}.npy"));
            if !want.exists() {
                assert!(k > 0);
                break;
            }
            assert_eq!(
                std::fs::read(out_dir.join(format!("output_{k}.npy"))).expect("written"),
                std::fs::read(&want).expect("reference"),
                "{case} output {k}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn board_run_live_piped_to_a_file_prints_one_final_table() {
    if !tools::available(
        "board_run_live_piped_to_a_file_prints_one_final_table",
        tools::BOARD,
    ) {
        return;
    }
    let dir = std::env::temp_dir().join(format!("etscope-cli-live-{}", std::process::id()));
    let out = dir.join("live.etdp");
    // about a second of streaming, so a redraw every half second would show up more than once
    let ds_cnn = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../assets/ds_cnn_kws/model_int8_cortex_m55.pte");
    let started = std::time::Instant::now();
    let run = etscope(&[
        "board",
        "run",
        p(&ds_cnn),
        "--runs",
        "40",
        "--live",
        "-o",
        p(&out),
    ]);
    let took = started.elapsed();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(
        stdout.matches("live: ").count(),
        1,
        "after {took:?}: {stdout}"
    );
    assert!(stdout.contains("live: 40 runs"), "{stdout}");
    assert!(
        !stdout.contains('\x1b'),
        "no terminal control codes in a file"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_stage_against_its_program_names_module_and_instruction_of_every_group() {
    let stage = format!(
        "{}#edge_after_transform",
        p(&tiny("model_int8_cortex_m55.etrecord"))
    );
    let pte = tiny("model_int8_cortex_m55.pte");
    let input = tiny("input.npy");
    let out = etscope(&["diff", &stage, p(&pte), "--input", p(&input)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("> 1 LSB"),
        "the header reads '> 1 LSB': {text}"
    );
    let report = json(&["diff", &stage, p(&pte), "--input", p(&input), "--json"]);
    let rows = report["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 3);
    // every convolution and linear group knows its module, and the program's instruction
    for r in rows.iter().filter(|r| {
        r["b_ops"].as_array().is_some_and(|ops| {
            ops.iter().any(|o| {
                o.as_str()
                    .is_some_and(|s| s.contains("conv") || s.contains("linear"))
            })
        })
    }) {
        assert!(!r["module"].as_array().expect("module").is_empty(), "{r}");
        assert!(
            !r["b_instructions"]
                .as_array()
                .expect("instructions")
                .is_empty(),
            "{r}"
        );
    }
}

/// `lower` keeps its contract: `--json` lists every pass of the flow in ExecuTorch's order, each
/// with a graph in `graph --json`'s schema; `-o` writes a program (folders created) that reads
/// back with the same calls as ExecuTorch's; a file that is no ETRecord and an unknown core are
/// one-line errors.
#[test]
fn lower_lists_every_pass_and_writes_a_program() {
    let lowering = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/lowering");
    let etr = lowering.join("tiny_conv_relu_linear_m4_default.etrecord");
    let v = json(&["lower", p(&etr), "--target", "m4", "--json"]);
    let names: Vec<&str> = v["passes"]
        .as_array()
        .expect("passes")
        .iter()
        .map(|p| p["name"].as_str().expect("name"))
        .collect();
    assert_eq!(
        names,
        [
            "RemoveGetItemPass",
            "FoldAndAnnotateQParamsPass",
            "ReplaceScalarWithTensorArgPass",
            "ReplaceQuantNodesPass",
            "ActivationFusionPass",
            "QuantizedClampActivationPass",
            "DecomposeHardswishPass",
            "AtenToCortexMPass"
        ]
    );
    let last = &v["passes"][7]["graph"];
    assert!(last["nodes"]
        .as_array()
        .is_some_and(|n| n.iter().any(|n| n["op"] == "cortex_m::quantized_linear")));
    let dir = std::env::temp_dir().join(format!("etscope-lower-{}", std::process::id()));
    let out = dir.join("sub/tiny_m4.pte");
    let o = etscope(&["lower", p(&etr), "--target", "m4", "-o", p(&out)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("equals the ETRecord's edge_after_transform"),
        "{text}"
    );
    let ours = json(&["graph", p(&out), "--json"]);
    let theirs = json(&["graph", p(&etr.with_extension("pte")), "--json"]);
    let calls = |g: &Value| -> Vec<String> {
        g["nodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .filter(|n| n["kind"] == "operator")
            .map(|n| format!("{}.{}", n["op"], n["overload"]))
            .collect()
    };
    assert_eq!(calls(&ours), calls(&theirs));
    let _ = std::fs::remove_dir_all(&dir);
    // the explicit-layout flow: its 15 passes, the last with the _nhwc kernels
    let explicit = lowering.join("tiny_conv_relu_linear_m55_explicit.etrecord");
    let v = json(&["lower", p(&explicit), "--flow", "explicit", "--json"]);
    let passes = v["passes"].as_array().expect("passes");
    assert_eq!(passes.len(), 15);
    assert_eq!(
        passes[7]["name"],
        "CortexMReplaceOpsWithChannelsLastVariants"
    );
    assert!(passes[14]["graph"]["nodes"].as_array().is_some_and(|n| n
        .iter()
        .any(|n| n["op"] == "cortex_m::quantized_conv2d_nhwc")));
    let bad = etscope(&["lower", p(&tiny("model_fp32.pte"))]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("expected an etrecord file"));
    let bad = etscope(&["lower", p(&etr), "--target", "m99"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown target"));
}

/// `plan`: every planner per arena in JSON, ExecuTorch's own listing every planned tensor at the
/// file's offset (value ids of `graph --json`); `-o` writes the best plan, which `memory` then
/// declares no larger than that plan's peak and `run` runs with the original's outputs.
#[test]
fn plan_lists_every_planner_and_writes_the_best_plan() {
    let pte = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/models/resnet/model_int8_cortex_m55_default.pte");
    let v = json(&["plan", p(&pte), "--json"]);
    let arena = &v["arenas"][0];
    assert_eq!(arena["memory_id"], 1);
    let names: Vec<&str> = arena["algorithms"]
        .as_array()
        .expect("algorithms")
        .iter()
        .map(|a| a["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names[..2], ["executorch", "best_fit"]);
    let memory = json(&["memory", p(&pte), "--json"]);
    let file: std::collections::BTreeMap<u64, u64> = memory["arenas"][0]["tensors"]
        .as_array()
        .expect("tensors")
        .iter()
        .map(|t| {
            (
                t["value"].as_u64().expect("value"),
                t["offset"].as_u64().expect("offset"),
            )
        })
        .collect();
    let et = &arena["algorithms"][0]["tensors"];
    for (value, offset) in &file {
        assert!(
            et.as_array()
                .expect("tensors")
                .iter()
                .any(|t| t["value"] == *value && t["offset"] == *offset),
            "value {value} at {offset} not in ExecuTorch's listing"
        );
    }
    assert_eq!(arena["executorch_peak"], 9216);
    let best_peak = arena["algorithms"]
        .as_array()
        .expect("algorithms")
        .iter()
        .map(|a| a["peak"].as_u64().expect("peak"))
        .min()
        .expect("a plan");
    assert!(best_peak < 9216 && best_peak >= arena["lower_bound"].as_u64().expect("bound"));
    let dir = std::env::temp_dir().join(format!("etscope-plan-{}", std::process::id()));
    let out = dir.join("sub/resnet_best.pte");
    let o = etscope(&["plan", p(&pte), "--algorithm", "best", "-o", p(&out)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("every offset reproduced") && text.contains("best"),
        "{text}"
    );
    let replanned = json(&["memory", p(&out), "--json"]);
    assert!(replanned["arenas"][0]["size"].as_u64().expect("size") <= best_peak);
    assert_eq!(replanned["findings"], serde_json::json!([]));
    let input = pte.with_file_name("input.npy");
    for (program, dump) in [(&pte, dir.join("a")), (&out, dir.join("b"))] {
        let o = etscope(&[
            "run",
            p(program),
            "--input",
            p(&input),
            "--in-arenas",
            "--dump",
            p(&dump),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let read = |d: &str| std::fs::read(dir.join(d).join("output_0.npy")).expect("output");
    assert_eq!(
        read("a"),
        read("b"),
        "the re-planned program computes the same, in its arenas"
    );
    // the RAM budget on a 32-bit Arm core, every part in bytes
    let budget = &json(&["memory", p(&pte), "--target", "m55", "--json"])["ram_budget"];
    for part in [
        "planned",
        "method_allocator",
        "temp_allocator",
        "scratch",
        "flash",
    ] {
        assert!(budget[part].is_u64(), "{part}: {budget}");
    }
    assert_eq!(budget["planned"], 9216);
    assert_eq!(
        budget["flash"].as_u64(),
        std::fs::metadata(&pte).ok().map(|m| m.len())
    );
    assert!(budget["method_allocator"].as_u64().expect("bytes") > 0);
    let bad = etscope(&["memory", p(&pte), "--target", "m99"]);
    assert_eq!(bad.status.code(), Some(2));
    let bad = etscope(&["plan", p(&pte), "--algorithm", "magic"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown --algorithm"));
    let bad = etscope(&["plan", p(&tiny("input.npy"))]);
    assert_eq!(bad.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `run --calls N` calls the method N times, state carried over: the second call of a program
/// with a mutable buffer gives what ExecuTorch's runtime gave for its second call.
#[test]
fn run_calls_carry_a_programs_state_to_the_next_call() {
    let dir = fixture("programs/mutable_state");
    let out = std::env::temp_dir().join(format!("etscope-calls-{}", std::process::id()));
    let run = etscope(&[
        "run",
        p(&dir.join("model.pte")),
        "--input",
        p(&dir.join("input_0.npy")),
        "--calls",
        "2",
        "--dump",
        p(&out),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let read = |f: &Path| {
        etscope_core::formats::npy::read_npy(&std::fs::read(f).expect("npy"))
            .expect("npy")
            .to_f64()
            .expect("floats")
    };
    let got = read(&out.join("output_0.npy"));
    let want = read(&dir.join("output_second_call.npy"));
    let first = read(&dir.join("output_0.npy"));
    assert_eq!(got.len(), want.len());
    assert!(
        got.iter().zip(&want).all(|(a, b)| (a - b).abs() <= 1e-5),
        "{got:?} vs {want:?}"
    );
    assert!(
        got.iter().zip(&first).any(|(a, b)| (a - b).abs() > 1e-3),
        "the state moved on"
    );
    let _ = std::fs::remove_dir_all(out);
}

fn training(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/training")
        .join(name)
}

#[test]
fn run_picks_forward_by_default_and_any_method_by_name() {
    let dir = training("xor_external");
    let pte = dir.join("model.pte");
    let (x, label) = (dir.join("input_0.npy"), dir.join("input_1.npy"));
    // forward, although the training metadata methods sort before it; its .ptd found beside it
    let out = json(&[
        "run",
        p(&pte),
        "--input",
        p(&x),
        "--input",
        p(&label),
        "--json",
    ]);
    let rows = out["outputs"].as_array().expect("outputs");
    assert_eq!(rows.len(), 10, "{out}");
    let loss: f64 = {
        let want = etscope_core::formats::npy::read_npy(
            &std::fs::read(dir.join("call_0_output_0.npy")).expect("npy"),
        )
        .expect("npy");
        want.to_f64().expect("numeric")[0]
    };
    let got = rows[0]["stats"]["mean"].as_f64().expect("mean");
    assert!(
        (got - loss).abs() <= 1e-6 * (1.0 + loss.abs()),
        "{got} vs {loss}"
    );
    // a metadata method returns the parameters' names
    let out = json(&[
        "run",
        p(&pte),
        "--method",
        "__et_training_fqn_forward",
        "--json",
    ]);
    let texts: Vec<&str> = out["outputs"]
        .as_array()
        .expect("outputs")
        .iter()
        .map(|r| r["text"].as_str().expect("a text output"))
        .collect();
    assert_eq!(
        texts,
        [
            "linear.weight",
            "linear.bias",
            "linear2.weight",
            "linear2.bias"
        ]
    );
    let table = etscope(&["run", p(&pte), "--method", "__et_training_fqn_forward"]);
    assert!(table.status.success());
    assert!(String::from_utf8_lossy(&table.stdout).contains("\"linear2.bias\""));
    // an unknown method is named with the ones there are
    let bad = etscope(&["run", p(&pte), "--method", "backward"]);
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("\"backward\"") && err.contains("__et_training_parameters_index_forward"),
        "{err}"
    );
}

#[test]
fn a_training_program_whose_backward_etscope_lacks_is_refused_naming_the_operator() {
    let dir = training("conv");
    let out = etscope(&[
        "run",
        p(&dir.join("model.pte")),
        "--input",
        p(&dir.join("input_0.npy")),
        "--input",
        p(&dir.join("input_1.npy")),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("aten::convolution_backward") && err.contains("model.pte"),
        "{err}"
    );
    assert!(
        out.stdout.is_empty(),
        "no output may be printed: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// `--libm`: newlib's double-precision `sin` is not modelled, so the default refuses the `sin` of
/// a float64 tensor naming the function and saying what to do, and prints nothing; `--libm glibc`
/// runs it and equals ExecuTorch's x86 runtime's output bit for bit.
#[test]
fn run_refuses_a_c_library_function_newlib_computes_and_the_host_does_not_model() {
    let dir = fixture("programs/sin_float64");
    let (pte, input) = (dir.join("model.pte"), dir.join("input_0.npy"));
    let refused = etscope(&[
        "run",
        pte.to_str().unwrap(),
        "--input",
        input.to_str().unwrap(),
    ]);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("newlib's `sin` is not modelled") && err.contains("--libm glibc"),
        "{err}"
    );
    assert!(
        refused.stdout.is_empty(),
        "printed a result: {}",
        String::from_utf8_lossy(&refused.stdout)
    );
    let out = std::env::temp_dir().join(format!("etscope-libm-{}", std::process::id()));
    let ran = etscope(&[
        "run",
        pte.to_str().unwrap(),
        "--input",
        input.to_str().unwrap(),
        "--libm",
        "glibc",
        "--dump",
        out.to_str().unwrap(),
    ]);
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let got = std::fs::read(out.join("output_0.npy")).expect("output written");
    let want = std::fs::read(dir.join("output_0.npy")).expect("ExecuTorch's output");
    let _ = std::fs::remove_dir_all(&out);
    let data = |b: &[u8]| etscope_core::formats::npy::read_npy(b).expect("npy").bytes;
    assert_eq!(
        data(&got),
        data(&want),
        "sin with --libm glibc differs from ExecuTorch's runtime"
    );
}
