//! diff from the command line: a host run against a device capture, another core, a stage against its program.

use super::*;

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
    assert_eq!(q["matched_by"], "quantity");
    assert!(!q["rows"].as_array().expect("rows").is_empty());
}

#[test]
fn diff_runs_the_host_side_as_the_core_chosen_and_finds_what_that_core_changes() {
    // a capture of ExecuTorch's own runtime on an emulated Cortex-M55, rebuilt from its stream
    let dir = fresh_dir("cli-diff-core");
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
    // and it says, as `run` does, that this core computes the layer without its bias
    let noted = etscope(&[
        "diff",
        p(&pte),
        &spec,
        "--input",
        p(&tiny("input.npy")),
        "--target",
        "m4",
    ]);
    let err = String::from_utf8_lossy(&noted.stderr);
    assert!(
        err.contains("note: ") && err.contains("without its bias"),
        "{err}"
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
    // matched by quantity: the convolution (its input quantize with it) and the linear layer
    assert_eq!(report["matched_by"], "quantity");
    assert_eq!(rows.len(), 2);
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

/// The same model lowered by both flows stores some tensors channels-last in one program and
/// channels-first in the other: once aligned they are equal, so no row may count an element
/// off by one or more LSB where its other metrics see none (the LSB counters compare the aligned
/// codes, as MSE and max abs do). A new user found them counting the stored bytes instead.
#[test]
fn lsb_counts_compare_the_aligned_codes_across_layouts() {
    for (a, b) in [
        (
            "model_int8_cortex_m55_default.pte",
            "model_int8_cortex_m55.pte",
        ),
        (
            "model_int8_cortex_m4_default.pte",
            "model_int8_cortex_m55.pte",
        ),
    ] {
        let d = json(&[
            "diff",
            p(&tiny(a)),
            p(&tiny(b)),
            "--input",
            p(&tiny("input.npy")),
            "--json",
        ]);
        let rows = d["rows"].as_array().expect("rows");
        let mut counted = 0;
        for r in rows {
            let m = &r["metrics"];
            if m["max_abs"].as_f64() == Some(0.0) && !m["off_by_one"].is_null() {
                counted += 1;
                assert_eq!(m["off_by_one"], 0, "{a} vs {b}: {r}");
                assert_eq!(m["off_by_more"], 0, "{a} vs {b}: {r}");
            }
        }
        assert!(
            counted > 0,
            "{a} vs {b}: no equal integer row compared: {d}"
        );
    }
}
