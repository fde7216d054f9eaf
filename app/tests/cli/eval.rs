//! eval: numerics over a dataset — every dataset form gives the same numbers, so do any number
//! of jobs, and shards merged equal the single run; the JSON has the documented shape.

use super::*;

use etscope_core::formats::npy::{read_npy, write_npy};
use etscope_core::tensor::TensorData;

/// `n` samples around the fixture's input (deterministic), as one `[n, …]` array and one file
/// per sample, with labels.
fn dataset(dir: &Path, n: usize) -> (PathBuf, PathBuf, PathBuf) {
    let base = read_npy(&std::fs::read(tiny("input.npy")).expect("input")).expect("npy");
    let x: Vec<f32> = base
        .bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let folder = dir.join("samples");
    std::fs::create_dir_all(&folder).expect("folder");
    let mut all = Vec::new();
    for i in 0..n {
        let sample: Vec<u8> = x
            .iter()
            .enumerate()
            .flat_map(|(k, v)| (v + 0.4 * ((i * 31 + k) as f32 * 0.37).sin()).to_le_bytes())
            .collect();
        let t = TensorData {
            dtype: base.dtype,
            shape: base.shape.clone(),
            bytes: sample.clone(),
        };
        std::fs::write(
            folder.join(format!("s{i:03}.npy")),
            write_npy(&t).expect("npy"),
        )
        .expect("write");
        all.extend(sample);
    }
    let mut shape = vec![n];
    shape.extend(base.shape.iter().skip(1));
    let arr = TensorData {
        dtype: base.dtype,
        shape,
        bytes: all,
    };
    let array = dir.join("all.npy");
    std::fs::write(&array, write_npy(&arr).expect("npy")).expect("write");
    let labels = TensorData {
        dtype: etscope_core::ScalarType::Long,
        shape: vec![n],
        bytes: (0..n as i64).flat_map(|i| (i % 10).to_le_bytes()).collect(),
    };
    let labels_path = dir.join("labels.npy");
    std::fs::write(&labels_path, write_npy(&labels).expect("npy")).expect("write");
    (folder, array, labels_path)
}

/// The summary part of an `eval --json` document (without the accumulators).
fn summary(mut doc: Value) -> Value {
    doc.as_object_mut().expect("object").remove("part");
    doc
}

#[test]
fn eval_is_the_same_for_every_dataset_form_job_count_and_shard_split() {
    let dir = fresh_dir("eval");
    let (folder, array, labels) = dataset(&dir, 23);
    let (a, b) = (tiny("model_fp32.pte"), tiny("model_int8_cortex_m55.pte"));
    let run = |data: &Path, extra: &[&str]| {
        let mut args = vec![
            "eval",
            p(&a),
            p(&b),
            "--data",
            p(data),
            "--labels",
            p(&labels),
            "--json",
        ];
        args.extend_from_slice(extra);
        json(&args)
    };
    let one = run(&array, &["--jobs", "1"]);
    // the documented shape
    assert_eq!(one["samples"], 23);
    let out = &one["outputs"][0];
    for key in [
        "index",
        "top1_agreement",
        "a_accuracy",
        "b_accuracy",
        "rmse",
        "mae",
        "l2r",
        "cosine",
        "snr_db_mean",
        "snr_db_min",
        "confusion",
    ] {
        assert!(out.get(key).is_some(), "outputs[0] has no {key}: {out:#}");
    }
    let confusion: u64 = out["confusion"]
        .as_array()
        .expect("rows")
        .iter()
        .flat_map(|r| {
            r.as_array()
                .expect("row")
                .iter()
                .map(|c| c.as_u64().expect("count"))
        })
        .sum();
    assert_eq!(confusion, 23, "every sample in the confusion matrix once");
    let groups = one["groups"].as_array().expect("groups");
    assert!(!groups.is_empty());
    for key in [
        "module",
        "a_instructions",
        "b_instructions",
        "snr_db_min",
        "snr_db_p5",
        "snr_db_median",
        "rmse_over_scale",
        "worst_samples",
    ] {
        assert!(groups[0].get(key).is_some(), "groups[0] has no {key}");
    }
    assert!(groups[0]["worst_samples"].as_array().expect("list").len() <= 5);
    // an int8 program against its float model: close, not equal
    let agreement = out["top1_agreement"].as_f64().expect("agreement");
    assert!(agreement > 0.8, "{agreement}");
    assert!(out["snr_db_mean"].as_f64().expect("snr") > 15.0, "{out:#}");

    // the same numbers from the folder, and with several jobs
    assert_eq!(
        summary(run(&folder, &["--jobs", "1"])),
        summary(one.clone())
    );
    assert_eq!(summary(run(&array, &["--jobs", "4"])), summary(one.clone()));

    // three shards merged: exactly the single run
    let mut parts = Vec::new();
    for k in 1..=3 {
        let doc = run(&array, &["--shard", &format!("{k}/3"), "--jobs", "2"]);
        assert_eq!(doc["complete"], false);
        let path = dir.join(format!("part{k}.json"));
        std::fs::write(&path, serde_json::to_vec(&doc).expect("json")).expect("write");
        parts.push(path);
    }
    let mut args = vec!["eval", "--json", "--merge"];
    args.extend(parts.iter().map(|p| p.to_str().expect("utf-8")));
    let merged = json(&args);
    assert_eq!(merged["complete"], true);
    assert_eq!(summary(merged), summary(one));
    // a slice given twice is refused, naming it
    let out = etscope(&["eval", "--json", "--merge", p(&parts[0]), p(&parts[0])]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("slice 1 is in both parts"));
    let _ = std::fs::remove_dir_all(&dir);
}

fn digits() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/digits")
}

/// `eval --json` of the digits fp32 CNN against `b` over the test split, with `extra`.
fn digits_eval(b: &Path, extra: &[&str]) -> Value {
    digits_eval_against(&digits().join("cnn_fp32.pte"), b, extra)
}

/// `lower ETRECORD --flow FLOW --keep-float GROUP -o OUT`, which must succeed.
fn lower_keep_float(etrecord: &Path, flow: &str, group: &str, out: &Path) {
    let run = etscope(&[
        "lower",
        p(etrecord),
        "--flow",
        flow,
        "--keep-float",
        group,
        "-o",
        p(out),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

/// `eval A B` over the digits test set with its labels, as JSON.
fn digits_eval_against(a: &Path, b: &Path, extra: &[&str]) -> Value {
    let dir = digits();
    let (x, y) = (dir.join("test_x.npy"), dir.join("test_y.npy"));
    let mut args = vec![
        "eval",
        p(a),
        p(b),
        "--data",
        p(&x),
        "--labels",
        p(&y),
        "--json",
    ];
    args.extend_from_slice(extra);
    json(&args)
}

#[test]
fn the_sensitivity_sweep_runs_every_weighted_layer_in_float_or_says_why_not() {
    let doc = digits_eval(
        &digits().join("cnn_int8_cortex_m55_default_badcal.pte"),
        &["--sensitivity"],
    );
    let rows = doc["sensitivity"].as_array().expect("a sensitivity table");
    assert_eq!(rows[0]["variant"], "as_shipped");
    assert_eq!(rows[0]["b_accuracy"], doc["outputs"][0]["b_accuracy"]);
    let groups: Vec<&str> = rows[1..]
        .iter()
        .map(|r| r["group"].as_str().expect("group"))
        .collect();
    for g in ["conv1", "conv2", "fc"] {
        assert!(groups.contains(&g), "{groups:?}");
    }
    for r in &rows[1..] {
        for key in [
            "group",
            "module",
            "variant",
            "b_accuracy",
            "top1_agreement",
            "snr_db_mean",
            "arena_bytes",
            "flash_bytes",
        ] {
            assert!(r.get(key).is_some(), "{key} missing: {r}");
        }
        assert!(
            r["variant"] == "float" || r["variant"] == "only_quantized",
            "{r}"
        );
        // every variant ran, or says why not (never a guess)
        assert!(r["b_accuracy"].is_number() || r["error"].is_string(), "{r}");
    }
    // the badly calibrated CNN (calibrated on dim images) clips its input: the first
    // convolution kept in float, its input quantization with it, recovers most of the accuracy
    // and ranks first; the others do not help
    assert_eq!(rows[1]["group"], "conv1", "{rows:#?}");
    let shipped = rows[0]["b_accuracy"].as_f64().expect("accuracy");
    let conv1 = rows[1]["b_accuracy"].as_f64().expect("conv1 runs");
    assert!(
        conv1 > shipped + 0.15,
        "conv1 in float: {conv1} against {shipped}"
    );
    for r in rows[2..].iter().filter(|r| r["variant"] == "float") {
        assert!(
            r["b_accuracy"].as_f64().expect("runs") <= shipped + 1e-9,
            "{r}"
        );
    }
    // and only conv1 quantized (the others in float) is as bad as shipping it quantized
    let only_conv1 = rows
        .iter()
        .find(|r| r["variant"] == "only_quantized" && r["group"] == "conv1")
        .expect("conv1 only quantized");
    assert!(
        (only_conv1["b_accuracy"].as_f64().expect("runs") - shipped).abs() < 1e-9,
        "{only_conv1}"
    );
    // a variant that ran is its own program: more flash for the float weights
    let conv2 = rows
        .iter()
        .find(|r| r["group"] == "conv2" && r["variant"] == "float")
        .expect("conv2");
    assert!(
        conv2["flash_bytes"].as_u64() > rows[0]["flash_bytes"].as_u64(),
        "{conv2}"
    );
    // the sweep compares outputs alone (A run once, the variants without capturing anything
    // else): the same numbers as the full evaluation of that variant's program
    let tmp = std::env::temp_dir().join(format!("etscope-sweep-{}.pte", std::process::id()));
    let full = digits_eval(
        &digits().join("cnn_int8_cortex_m55_default_badcal.pte"),
        &["--keep-float", "conv1", "-o", p(&tmp)],
    );
    let _ = std::fs::remove_file(&tmp);
    for key in ["b_accuracy", "top1_agreement", "snr_db_mean"] {
        assert_eq!(rows[1][key], full["outputs"][0][key], "{key}");
    }
    // and priced in time: each row's cycles are `etscope cost` of its program on the core B
    // was lowered for; a float fallback runs the portable kernels and costs more
    // a program names its CMSIS-NN path, not its core: the M55 is assumed for Helium, and the
    // table says so
    assert_eq!(rows[0]["cycles_core"], "m55");
    assert_eq!(rows[0]["cycles_core_assumed"], true);
    let b_cost = json(&[
        "cost",
        p(&digits().join("cnn_int8_cortex_m55_default_badcal.pte")),
        "--core",
        "m55",
        "--json",
    ]);
    assert_eq!(rows[0]["cycles"], b_cost["total_cycles"]);
    for r in rows[1..].iter().filter(|r| r["error"].is_null()) {
        assert!(
            r["cycles"].as_f64().expect("cycles") > rows[0]["cycles"].as_f64().expect("cycles"),
            "{r}"
        );
    }
}

/// The mixed program the sweep points at, written by `lower --keep-float`, runs on the emulated
/// board as on the host: every instruction's output equal, and its accuracy is the sweep's.
#[test]
fn the_mixed_program_runs_on_the_board_as_on_the_host_with_the_accuracy_the_sweep_predicted() {
    let dir = digits();
    let tmp = fresh_dir("mixed");
    let mixed = tmp.join("mixed.pte");
    lower_keep_float(
        &dir.join("cnn_int8_cortex_m55_default_badcal.etrecord"),
        "default",
        "conv1",
        &mixed,
    );
    let doc = digits_eval(&mixed, &[]);
    let accuracy = doc["outputs"][0]["b_accuracy"].as_f64().expect("accuracy");
    assert!((accuracy - 332.0 / 360.0).abs() < 1e-12, "{accuracy}");
    // eval --keep-float -o writes the same program and evaluates it
    let again = tmp.join("again.pte");
    let doc = digits_eval(
        &dir.join("cnn_int8_cortex_m55_default_badcal.pte"),
        &["--keep-float", "conv1", "-o", p(&again)],
    );
    assert_eq!(doc["outputs"][0]["b_accuracy"].as_f64(), Some(accuracy));
    assert_eq!(
        std::fs::read(&again).expect("written"),
        std::fs::read(&mixed).expect("written")
    );
    if !tools::available(
        "the_mixed_program_runs_on_the_board_as_on_the_host_with_the_accuracy_the_sweep_predicted",
        tools::BOARD,
    ) {
        return;
    }
    // two test images on the board, every instruction compared with the host
    let x = read_npy(&std::fs::read(dir.join("test_x.npy")).expect("x")).expect("npy");
    let per = 64 * 4;
    for i in [0usize, 5] {
        let input = tmp.join(format!("s{i}.npy"));
        let t = TensorData {
            dtype: x.dtype,
            shape: vec![1, 8, 8],
            bytes: x.bytes[i * per..(i + 1) * per].to_vec(),
        };
        std::fs::write(&input, write_npy(&t).expect("npy")).expect("write");
        let cap = tmp.join(format!("s{i}.etdp"));
        let run = etscope(&[
            "board",
            "run",
            p(&mixed),
            "--input",
            p(&input),
            "--runs",
            "1",
            "--intermediates",
            "-o",
            p(&cap),
        ]);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let device = format!("etdump:{}+{}", p(&cap), p(&cap.with_extension("bin")));
        let d = json(&["diff", p(&mixed), &device, "--input", p(&input), "--json"]);
        let rows = d["rows"].as_array().expect("rows");
        assert!(!rows.is_empty());
        for r in rows {
            assert_eq!(r["metrics"]["max_abs"], 0.0, "image {i}: {r}");
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

/// The explicit-layout flow, both models: the sweep runs every weighted layer in float (ExecuTorch's
/// explicit-layout validation refuses a float spatial layer; etscope's mixed program is
/// ExecuTorch's own with that check relaxed, `core/tests/digits.rs`), `lower --flow explicit
/// --keep-float G` writes the program whose accuracy the sweep predicted, and the emulated board
/// runs it as the host does, every instruction's output equal.
#[test]
fn the_explicit_flow_sweep_runs_every_layer_in_float_and_its_mixed_program_on_the_board() {
    let dir = digits();
    let tmp = fresh_dir("explicit-mixed");
    for (model, group) in [("cnn", "conv2"), ("resnet", "conv_a")] {
        let a = dir.join(format!("{model}_fp32.pte"));
        let b = dir.join(format!("{model}_int8_cortex_m55_explicit.pte"));
        let doc = digits_eval_against(&a, &b, &["--sensitivity", "--float-only"]);
        let rows = doc["sensitivity"].as_array().expect("a sensitivity table");
        assert!(rows.len() >= 4, "{rows:?}");
        for r in rows {
            assert!(r["error"].is_null(), "{model}: {r}");
            assert!(r["b_accuracy"].is_number(), "{model}: {r}");
        }
        let row = rows
            .iter()
            .find(|r| r["group"] == group)
            .expect("the group's row");
        let mixed = tmp.join(format!("{model}_{group}.pte"));
        lower_keep_float(&b.with_extension("etrecord"), "explicit", group, &mixed);
        let board = tools::available(
            "the_explicit_flow_sweep_runs_every_layer_in_float_and_its_mixed_program_on_the_board",
            tools::BOARD,
        );
        let extra: &[&str] = if board {
            &["--board", "--limit", "3"]
        } else {
            &[]
        };
        let full = digits_eval_against(&a, &mixed, extra);
        for key in ["b_accuracy", "top1_agreement", "snr_db_mean"] {
            assert_eq!(row[key], full["outputs"][0][key], "{model} {group}: {key}");
        }
        if board {
            let board = &full["board"];
            assert_eq!(board["samples"], 3, "{board}");
            assert_eq!(board["equal"], 3, "{board}");
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn the_float_only_sweep_runs_each_layer_in_float_and_nothing_else() {
    let doc = digits_eval(
        &digits().join("cnn_int8_cortex_m55_default_badcal.pte"),
        &["--sensitivity", "--float-only"],
    );
    let rows = doc["sensitivity"].as_array().expect("a sensitivity table");
    let variants: Vec<&str> = rows
        .iter()
        .map(|r| r["variant"].as_str().expect("variant"))
        .collect();
    assert_eq!(variants, ["as_shipped", "float", "float", "float"]);
    assert_eq!(rows[1]["group"], "conv1");
    // the core `--core` names prices the variants (the same Helium path: the same programs)
    let m85 = digits_eval(
        &digits().join("cnn_int8_cortex_m55_default_badcal.pte"),
        &["--sensitivity", "--float-only", "--core", "m85"],
    );
    let rows85 = m85["sensitivity"].as_array().expect("a sensitivity table");
    assert_eq!(rows85[0]["cycles_core"], "m85");
    assert_eq!(rows85[0]["cycles_core_assumed"], false);
    assert_eq!(rows85[1]["b_accuracy"], rows[1]["b_accuracy"]);
    assert!(rows85[0]["cycles"].as_f64() < rows[0]["cycles"].as_f64());
}

/// `eval --board --limit N`: B runs on the emulated board for the first N samples, every
/// instruction's output equal to the host's bit for bit; the text says so and names the board.
#[test]
fn the_board_runs_b_over_the_data_bit_for_bit_the_hosts() {
    if !tools::available(
        "the_board_runs_b_over_the_data_bit_for_bit_the_hosts",
        tools::BOARD,
    ) {
        return;
    }
    for b in [
        "cnn_int8_cortex_m55_default.pte",
        "resnet_int8_cortex_m55_default.pte",
    ] {
        let doc = digits_eval(&digits().join(b), &["--board", "--limit", "3"]);
        let board = &doc["board"];
        assert_eq!(board["samples"], 3, "{board}");
        assert_eq!(board["equal"], 3, "{board}");
        assert!(board["differences"].as_array().is_some_and(Vec::is_empty));
        assert!(
            board["compared"].as_u64().is_some_and(|n| n >= 3 * 4),
            "{board}"
        );
        assert!(board["board"].as_str().is_some_and(|s| s.contains("QEMU")));
    }
    // a lowering stage is not a program the board runs: refused, naming it
    let dir = digits();
    let stage = format!(
        "{}#edge",
        dir.join("cnn_int8_cortex_m55_default.etrecord").display()
    );
    let out = etscope(&[
        "eval",
        p(&dir.join("cnn_fp32.pte")),
        &stage,
        "--data",
        p(&dir.join("test_x.npy")),
        "--board",
        "--limit",
        "1",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a .pte"));
}

/// The sweep lowers B's ETRecord again: one beside B that another export wrote is refused,
/// naming both files, instead of sweeping another program's layers.
#[test]
fn the_sweep_refuses_an_etrecord_that_is_not_bs() {
    let dir = digits();
    let tmp = fresh_dir("sweep-other-etrecord");
    let b = tmp.join("b.pte");
    std::fs::copy(dir.join("cnn_int8_cortex_m55_default_badcal.pte"), &b).expect("copy");
    std::fs::copy(
        dir.join("resnet_int8_cortex_m55_default.etrecord"),
        tmp.join("b.etrecord"),
    )
    .expect("copy");
    let out = etscope(&[
        "eval",
        p(&dir.join("cnn_fp32.pte")),
        p(&b),
        "--data",
        p(&dir.join("test_x.npy")),
        "--sensitivity",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("b.etrecord: does not belong to"), "{err}");
    let _ = std::fs::remove_dir_all(&tmp);
}
