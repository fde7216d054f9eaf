//! ETRecord stages executed on the host with their own weights (restricted `torch.save`
//! reader): each stage's output against ExecuTorch's, and the nodes of the Cortex-M stage
//! against the per-node references.

mod common;

use etscope_core::formats::etrecord::{stage_short_name, ETRecord};
use etscope_core::formats::npy::read_npy;
use etscope_core::tensor::TensorData;

fn max_abs(a: &TensorData, b: &TensorData) -> f64 {
    a.to_f64()
        .expect("a")
        .iter()
        .zip(b.to_f64().expect("b"))
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

#[test]
fn every_stage_of_every_etrecord_runs_and_matches_executorch() {
    let mut stages = 0;
    for model in common::models() {
        let input = read_npy(&common::read(&model.join("input.npy"))).expect("input");
        for (variant, reference, tol) in [
            ("model_fp32", "output_et_fp32.npy", 1e-4),
            ("model_int8_qdq_portable", "output_et_int8_qdq.npy", 0.02),
            (
                "model_int8_cortex_m55",
                "output_int8_cortex_m_python.npy",
                0.02,
            ),
        ] {
            let rec = ETRecord::parse(&common::read(&model.join(format!("{variant}.etrecord"))))
                .expect("etrecord");
            let want = read_npy(&common::read(&model.join(reference))).expect("reference");
            for stage in &rec.stages {
                let weights = rec.stage_weights(stage).unwrap_or_else(|e| {
                    panic!("{} {variant} {}: {e}", model.display(), stage.name)
                });
                let run = common::run_stage(stage, &weights, std::slice::from_ref(&input), false)
                    .unwrap_or_else(|e| {
                        panic!("{} {variant} {}: {e}", model.display(), stage.name)
                    });
                let got = run.outputs[0].to_data();
                assert_eq!(
                    got.shape,
                    want.shape,
                    "{} {variant} {}",
                    model.display(),
                    stage.name
                );
                let gap = max_abs(&got, &want);
                // exported/edge stages of int8 programs quantize in float: within a step or two
                assert!(
                    gap <= tol,
                    "{} {variant} {}: max abs gap {gap}",
                    model.display(),
                    stage_short_name(&stage.name)
                );
                stages += 1;
            }
        }
    }
    assert!(stages >= 7, "ran {stages} stages");
}

#[test]
fn the_cortex_m_stage_equals_the_per_node_references() {
    for model in common::models() {
        let input = read_npy(&common::read(&model.join("input.npy"))).expect("input");
        let rec = ETRecord::parse(&common::read(&model.join("model_int8_cortex_m55.etrecord")))
            .expect("etrecord");
        let stage = rec.stage("edge_after_transform").expect("Cortex-M stage");
        let weights = rec.stage_weights(stage).expect("weights");
        let run = common::run_stage(stage, &weights, &[input], true).expect("runs");
        let dir = model.join("int8_cortex_m_intermediates");
        let index = common::json(&dir.join("index.json"));
        for node in index["nodes"].as_array().expect("nodes") {
            let (Some(i), Some(file)) = (node["index"].as_u64(), node["npy"].as_str()) else {
                continue;
            };
            let want = read_npy(&common::read(&dir.join(file))).expect("npy");
            let got = run
                .captured
                .iter()
                .find(|c| c.node == i as usize + 1)
                .expect("captured")
                .tensors[0]
                .to_data();
            assert_eq!(
                got.bytes,
                want.bytes,
                "{} node {i} ({})",
                model.display(),
                node["target"]
            );
        }
    }
}

#[test]
fn a_corrupt_weight_archive_is_an_error_naming_the_entry() {
    let rec = ETRecord::parse(&common::read(&common::tiny().join("model_fp32.etrecord")))
        .expect("etrecord");
    let mut broken = rec.clone();
    for (name, bytes) in broken.archives.iter_mut() {
        if name.ends_with("_state_dict") {
            let n = bytes.len();
            bytes.truncate(n / 2);
        }
    }
    let stage = broken.stage("edge").expect("edge");
    let e = broken.stage_weights(stage).expect_err("truncated archive");
    assert!(e.to_string().contains("state_dict"), "{e}");
}

#[test]
fn etrecords_of_executorch_0_2_and_0_4_read_right_and_run() {
    use etscope_core::analysis::identity::check_etrecord;
    use etscope_core::formats::export_json::ExportArg;
    use etscope_core::formats::pte::Program;
    use etscope_core::runtime::{Runtime, Target};

    let dir = common::fixtures();
    let x = TensorData::new(
        etscope_core::ScalarType::Float,
        vec![3, 6],
        (0..18)
            .flat_map(|i| (i as f32 * 0.37 - 2.0).to_le_bytes())
            .collect(),
    )
    .expect("x");
    let y = TensorData::new(
        etscope_core::ScalarType::Float,
        vec![3, 6],
        (0..18)
            .flat_map(|i| (1.5 - i as f32 * 0.21).to_le_bytes())
            .collect(),
    )
    .expect("y");
    for version in ["etrecord_v02", "etrecord_v04"] {
        let rec = ETRecord::parse(&common::read(&dir.join(version).join("model.etrecord")))
            .expect("etrecord");
        let edge = rec.stage("edge").expect("edge stage");
        let ops: Vec<&str> = edge.graph.nodes.iter().map(|n| n.target.as_str()).collect();
        assert_eq!(ops.len(), 5, "{version}: {ops:?}");
        for node in &edge.graph.nodes {
            // tensor arguments are tensors with their real type and shape, never defaults
            for (name, arg) in &node.args {
                assert!(
                    !matches!(arg, ExportArg::Other(_)),
                    "{version} {}: {name} unparsed",
                    node.target
                );
            }
            for t in node
                .outputs
                .iter()
                .filter_map(|o| edge.graph.tensors.get(o))
            {
                assert_eq!(t.dtype, etscope_core::ScalarType::Float, "{version}");
                assert!(!t.sizes.is_empty(), "{version} {}", node.target);
            }
        }
        let mul = &edge.graph.nodes[0];
        assert!(
            mul.args
                .iter()
                .all(|(_, a)| matches!(a, ExportArg::Tensor(_))),
            "{version}: {:?}",
            mul.args
        );
        // it belongs to its program, and the stage computes what the program computes
        let program =
            Program::parse(common::read(&dir.join(version).join("model.pte"))).expect("pte");
        check_etrecord(&program, 0, &rec).expect("belongs to its program");
        let weights = rec
            .stage_weights(edge)
            .expect("weights of an old torch.save");
        let stage =
            common::run_stage(edge, &weights, &[x.clone(), y.clone()], false).expect("stage runs");
        let rt = Runtime::new(&program, 0, Target::default()).expect("prepares");
        let pte = rt
            .run(&[x.clone(), y.clone()], false)
            .expect("program runs");
        let gap = max_abs(&stage.outputs[0].to_data(), &pte.outputs[0].to_data());
        assert!(gap < 1e-6, "{version}: stage vs program {gap}");
    }
}
