//! lower and plan: every pass listed and a program written; every planner and the best plan written.

use super::*;

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
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown core \"m99\""));
}

/// `lower --flow default -o` of an ETRecord quantized for the explicit-layout flow would write a
/// program whose convolutions read contiguous tensors, which the kernels refuse: it is refused
/// before anything is written, naming the call and the flow to use; the explicit flow writes a
/// program that runs.
#[test]
fn lower_refuses_to_write_a_program_its_kernels_would_refuse() {
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/diff_cases/unet_bn");
    let etr = case.join("model_int8_m4_explicit.etrecord");
    let dir = std::env::temp_dir().join(format!("etscope-lower-flow-{}", std::process::id()));
    let out = dir.join("default.pte");
    let refused = etscope(&["lower", p(&etr), "--target", "m4", "-o", p(&out)]);
    assert_eq!(refused.status.code(), Some(2));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("would not run")
            && err.contains("the kernel needs channels-last")
            && err.contains("--flow explicit"),
        "{err}"
    );
    assert!(!out.exists(), "nothing is written");
    let out = dir.join("explicit.pte");
    let wrote = etscope(&[
        "lower",
        p(&etr),
        "--target",
        "m4",
        "--flow",
        "explicit",
        "-o",
        p(&out),
    ]);
    assert!(
        wrote.status.success(),
        "{}",
        String::from_utf8_lossy(&wrote.stderr)
    );
    let ran = etscope(&["run", p(&out), "--input", p(&case.join("input.npy"))]);
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
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
