//! Reading files: info, graph, memory, profile and tensors of every kind, and the refusals of bad, hostile and mismatched files.

use super::*;

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

#[test]
fn bad_files_give_one_line_errors_naming_the_file() {
    let dir = fresh_dir("bad");
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

/// The `.ptd` ExecuTorch's export writes (`_default_external_constant.ptd`) is found beside a
/// program whose own-named `.ptd` is absent, and a run reads its weights from it.
#[test]
fn the_ptd_executorch_writes_is_found_beside_the_program() {
    let dir = fresh_dir("exported-ptd");
    let src = fixture("programs/external_weights");
    let pte = dir.join("exported.pte");
    std::fs::copy(src.join("model.pte"), &pte).expect("copy");
    let input = src.join("input_0.npy");
    let out = etscope(&["run", p(&pte), "--input", p(&input)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("_default_external_constant.ptd"),
        "{err}"
    );
    std::fs::copy(
        src.join("model.ptd"),
        dir.join("_default_external_constant.ptd"),
    )
    .expect("copy");
    let dump = dir.join("out");
    json(&[
        "run",
        p(&pte),
        "--input",
        p(&input),
        "--dump",
        p(&dump),
        "--json",
    ]);
    let want = std::fs::read(src.join("output_0.npy")).expect("expected");
    let got = etscope_core::formats::npy::read_npy(
        &std::fs::read(dump.join("output_0.npy")).expect("output"),
    )
    .expect("npy");
    let want = etscope_core::formats::npy::read_npy(&want).expect("npy");
    assert_eq!(got.shape, want.shape);
    assert_eq!(got.bytes, want.bytes);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A neighbour found by name that cannot be used is a warning and skipped: the program still
/// opens (a run that needs the missing weights names them).
#[test]
fn a_broken_neighbour_file_is_a_warning_not_a_refusal() {
    let dir = fresh_dir("neighbour");
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

/// `info` says where a program does not compute what the model means: a float convolution
/// ExecuTorch's default flow left on int8 codes is named with its instruction.
#[test]
fn info_names_a_float_layer_left_on_int8_codes() {
    let pte = fixture("programs/float_conv_on_int8/model.pte");
    let d = json(&["info", p(&pte), "--json"]);
    let notes = d["plans"][0]["notes"].as_array().expect("notes");
    assert!(
        notes.iter().any(|n| n["instruction"] == 1
            && n["op"] == "aten::convolution"
            && n["kind"] == "lowering"),
        "{notes:?}"
    );
    let text = String::from_utf8_lossy(&etscope(&["info", p(&pte)]).stdout).to_string();
    assert!(
        text.contains("note: instruction 1 (aten::convolution)"),
        "{text}"
    );
}

/// A program whose FlatBuffer has a byte flipped is refused in one line naming the file, the
/// verifier's trace of where it looked folded into that line (a new user found five to eight
/// lines). Flips across the tiny program's FlatBuffer; at least one yields such a trace.
#[test]
fn a_flipped_byte_is_refused_in_one_line_with_the_verifiers_trace() {
    let dir = fresh_dir("flipped");
    let original = std::fs::read(tiny("model_int8_cortex_m55.pte")).expect("fixture");
    let mut traced = 0;
    for at in (8..original.len().min(4096)).step_by(29) {
        let mut bytes = original.clone();
        bytes[at] ^= 0xa5;
        let file = dir.join(format!("flip_{at}.pte"));
        std::fs::write(&file, &bytes).expect("write");
        let out = etscope(&["info", p(&file)]);
        if out.status.success() {
            continue;
        }
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "flip at {at}: {err}");
        assert!(err.contains(&format!("flip_{at}.pte")), "{err}");
        traced += usize::from(err.contains("while verifying"));
    }
    assert!(traced > 0, "no flip gave a verifier trace to fold");
    let _ = std::fs::remove_dir_all(&dir);
}
