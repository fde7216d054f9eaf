//! Real-world coverage: every Cortex-M program of ExecuTorch's default flow (M55 and M4) and
//! of the explicit-layout flow, and every per-operator program of the backend
//! (`tests/fixtures/ops/`, a copy of `reference/ops/`), runs on the host and equals ExecuTorch's
//! per-node Python reference bit for bit — except where the device computes something else, and
//! then the host follows the device and the test says how.

mod common;

use std::path::{Path, PathBuf};

use etscope_core::formats::npy::read_npy;
use etscope_core::formats::pte::Program;
use etscope_core::runtime::{CmsisNn, RunResult, Runtime, Target};
use etscope_core::tensor::TensorData;

/// Ops whose CMSIS-NN kernel may differ from the Python reference by 1 LSB (average-pool ties,
/// softmax rounding, M55 quantize, transpose conv and batch matmul in float32 in Python).
const DEVICE_DIFFERS_BY_ONE: [&str; 5] = [
    "avg_pool",
    "softmax",
    "quantize_per_tensor",
    "transpose_conv",
    "batch_matmul",
];

/// Where the device computes something other than the model, and how.
#[derive(Clone, Copy, Debug)]
enum Defect {
    /// CMSIS-NN dbf45dbf's `arm_transpose_conv_s8` with padding % stride ≠ 0: wrong rows, the
    /// last row never written (research: 479 of 486 elements differ, up to 145).
    TransposeConvRows,
    /// `softmax_out` on a channels-last 4-D tensor normalises rows of memory, not of the last
    /// logical dim (research: 38 of 48 differ, up to 93).
    SoftmaxOverMemoryRows,
    /// `transpose_out` / `minimum_out` / `maximum_out` hand CMSIS-NN the logical sizes of a
    /// channels-last tensor as if it were contiguous (the kernels check no `dim_order`): the
    /// right values land in the wrong places (ExecuTorch's own runtime computes the same:
    /// `every_program_computes_what_executorchs_own_runtime_computes`).
    LayoutUnawareKernel(&'static str),
}

fn known_defect(case: &str) -> Option<Defect> {
    use Defect::*;
    Some(match case {
        "quantized_transpose_conv2d__k3_s2_p1_c4to6__default__m55"
        | "quantized_transpose_conv2d__k3_s2_p1_c4to6__explicit__m55" => TransposeConvRows,
        "softmax__dim_last_4d_1x2x3x8__default__m55" => SoftmaxOverMemoryRows,
        "transpose__permute_0231_1x5x3x4__default__m55"
        | "transpose__permute_3120_2x3x4x5__default__m55"
        | "quantize_per_tensor__ties_4d_1x3x5x7__default__m55" => LayoutUnawareKernel("transpose"),
        "minimum__same_4d_1x3x4x5__default__m55" => LayoutUnawareKernel("minimum"),
        "maximum__broadcast_1x2x3x1_4x1x1x3__default__m55" => LayoutUnawareKernel("maximum"),
        _ => return None,
    })
}

fn npy(p: &Path) -> TensorData {
    read_npy(&common::read(p)).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn values(t: &TensorData) -> Vec<f64> {
    t.to_f64().expect("numeric tensor")
}

fn run(pte: &Path, inputs: &[PathBuf], cmsis: CmsisNn) -> RunResult {
    let program = Program::parse(common::read(pte)).expect("program parses");
    run_on(pte, inputs, cmsis, Target::for_program(&program, 0))
}

fn run_on(pte: &Path, inputs: &[PathBuf], cmsis: CmsisNn, target: Target) -> RunResult {
    let program = Program::parse(common::read(pte)).expect("program parses");
    let mut rt =
        Runtime::new(&program, 0, target).unwrap_or_else(|e| panic!("{}: {e}", pte.display()));
    rt.set_cmsis_nn(cmsis);
    let inputs: Vec<TensorData> = inputs.iter().map(|p| npy(p)).collect();
    rt.run(&inputs, true)
        .unwrap_or_else(|e| panic!("{}: {e}", pte.display()))
}

/// The first output tensor the run captured for instruction `iid`.
fn captured(result: &RunResult, iid: usize, label: &str) -> TensorData {
    result
        .captured
        .iter()
        .find(|c| c.instruction_id == Some(iid))
        .and_then(|c| c.tensors.first())
        .unwrap_or_else(|| panic!("{label}: instruction {iid} not captured"))
        .to_data()
}

/// One compared node.
struct NodeDiff {
    target: String,
    differing: usize,
    numel: usize,
    max_abs: f64,
    same_values: bool,
}

/// Compares every node of `index.json` that names an instruction and a `.npy`.
fn compare(result: &RunResult, refdir: &Path) -> Vec<NodeDiff> {
    let index = common::json(&refdir.join("index.json"));
    let mut out = Vec::new();
    for node in index["nodes"].as_array().expect("nodes") {
        let (Some(iid), Some(file)) = (node["instruction_id"].as_u64(), node["npy"].as_str())
        else {
            continue;
        };
        let target = node["target"].as_str().unwrap_or("?").to_string();
        let got = captured(result, iid as usize, &refdir.display().to_string());
        let want = npy(&refdir.join(file));
        assert_eq!(
            (got.dtype, &got.shape),
            (want.dtype, &want.shape),
            "{}: instruction {iid} ({target})",
            refdir.display()
        );
        let (g, w) = (values(&got), values(&want));
        let diffs: Vec<f64> = g
            .iter()
            .zip(&w)
            .map(|(a, b)| (a - b).abs())
            .filter(|&d| d > 0.0)
            .collect();
        let (mut gs, mut ws) = (g.clone(), w.clone());
        gs.sort_by(f64::total_cmp);
        ws.sort_by(f64::total_cmp);
        out.push(NodeDiff {
            target,
            differing: diffs.len(),
            numel: g.len(),
            max_abs: diffs.iter().copied().fold(0.0, f64::max),
            same_values: gs == ws,
        });
    }
    assert!(!out.is_empty(), "{}: no node compared", refdir.display());
    out
}

#[derive(Default, Debug)]
struct Tally {
    programs: usize,
    exact: usize,
    within_one: usize,
    defects: usize,
}

/// Checks one program against its references, following the device where it is known to
/// differ. Returns what it found.
fn check(label: &str, pte: &Path, inputs: &[PathBuf], refdir: &Path, tally: &mut Tally) {
    let result = run(pte, inputs, CmsisNn::default());
    let nodes = compare(&result, refdir);
    let defect = known_defect(label);
    let mut tie_seen = false;
    for (k, n) in nodes.iter().enumerate() {
        if n.differing == 0 {
            tally.exact += 1;
            continue;
        }
        let device_differs = DEVICE_DIFFERS_BY_ONE.iter().any(|op| n.target.contains(op));
        let explained = (n.max_abs <= 1.0 && device_differs) || (tie_seen && n.max_abs <= 2.0);
        if let Some(d) = defect.filter(|_| !explained) {
            check_defect(label, d, n, tie_seen);
            check_defect_fixed_or_explained(label, d, pte, inputs, refdir);
            tally.defects += 1;
            tally.programs += 1;
            return; // the nodes after it compute on the device's (different) values
        }
        if n.max_abs <= 1.0 && device_differs {
            tie_seen = true;
            tally.within_one += 1;
        } else if tie_seen && n.max_abs <= 2.0 {
            tally.within_one += 1; // a device-vs-reference tie upstream, carried forward
        } else {
            panic!(
                "{label}: node {k} ({}) differs in {} of {} elements (max {})",
                n.target, n.differing, n.numel, n.max_abs
            );
        }
    }
    assert!(
        defect.is_none(),
        "{label}: the known device defect did not show"
    );
    tally.programs += 1;
}

fn check_defect(label: &str, defect: Defect, n: &NodeDiff, tie_upstream: bool) {
    match defect {
        Defect::TransposeConvRows => {
            assert!(n.target.contains("transpose_conv"), "{label}: {}", n.target);
            assert_eq!(
                (n.differing, n.numel, n.max_abs),
                (479, 486, 145.0),
                "{label}"
            );
        }
        Defect::SoftmaxOverMemoryRows => {
            assert!(n.target.contains("softmax"), "{label}: {}", n.target);
            assert_eq!((n.differing, n.numel, n.max_abs), (38, 48, 93.0), "{label}");
        }
        Defect::LayoutUnawareKernel(op) => {
            assert!(
                n.target.contains(op),
                "{label}: first difference at {}",
                n.target
            );
            assert!(
                n.same_values || tie_upstream,
                "{label}: {op} should move the right values to the wrong places"
            );
        }
    }
}

/// The transpose-conv defect disappears with the fixed CMSIS-NN; the others are ExecuTorch
/// kernels (no CMSIS-NN version changes them).
fn check_defect_fixed_or_explained(
    label: &str,
    defect: Defect,
    pte: &Path,
    inputs: &[PathBuf],
    refdir: &Path,
) {
    if let Defect::TransposeConvRows = defect {
        let fixed = run(pte, inputs, CmsisNn::Fixed4a8f5b5d);
        for n in compare(&fixed, refdir) {
            assert!(
                n.differing == 0 || (n.max_abs <= 1.0 && n.target.contains("transpose_conv")),
                "{label} with CMSIS-NN 4a8f5b5d: {} differs",
                n.target
            );
        }
    }
}

fn op_cases() -> Vec<PathBuf> {
    let root = common::fixtures().join("ops");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("tests/fixtures/ops")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("model.pte").exists())
        .collect();
    cases.sort();
    cases
}

/// Every operator case's folder name and parsed program.
fn op_programs() -> Vec<(String, Program)> {
    op_cases()
        .into_iter()
        .map(|case| {
            let label = case
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("?")
                .to_string();
            let program = Program::parse(common::read(&case.join("model.pte"))).expect("parses");
            (label, program)
        })
        .collect()
}

fn inputs_of(case: &Path) -> Vec<PathBuf> {
    let mut inputs: Vec<(usize, PathBuf)> = std::fs::read_dir(case)
        .expect("case folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| {
            let stem = p.file_stem()?.to_str()?.to_string();
            let k = stem.strip_prefix("input_")?.parse().ok()?;
            Some((k, p))
        })
        .collect();
    inputs.sort();
    inputs.into_iter().map(|(_, p)| p).collect()
}

#[test]
fn every_backend_operator_case_runs_and_matches_the_device() {
    let mut tally = Tally::default();
    let cases = op_cases();
    assert!(cases.len() >= 150, "only {} operator cases", cases.len());
    for case in &cases {
        let label = case.file_name().and_then(|n| n.to_str()).unwrap_or("?");
        check(
            label,
            &case.join("model.pte"),
            &inputs_of(case),
            &case.join("intermediates"),
            &mut tally,
        );
    }
    assert_eq!(tally.programs, cases.len());
    assert_eq!(tally.defects, 8, "{tally:?}");
    assert!(tally.exact > 400, "{tally:?}");
}

#[test]
fn every_operator_of_the_backend_has_a_passing_case_in_both_flows() {
    let cases = op_cases();
    let ops_in = |flow: &str| -> std::collections::BTreeSet<String> {
        cases
            .iter()
            .filter(|c| c.to_string_lossy().contains(&format!("__{flow}__")))
            .flat_map(|c| {
                let program = Program::parse(common::read(&c.join("model.pte"))).expect("parses");
                program.plans[0]
                    .operators
                    .iter()
                    .map(|o| o.name.clone())
                    .collect::<Vec<_>>()
            })
            .filter(|n| n.starts_with("cortex_m::"))
            .collect()
    };
    let default: Vec<String> = ops_in("default").into_iter().collect();
    let explicit: Vec<String> = ops_in("explicit").into_iter().collect();
    for op in [
        "quantized_conv2d",
        "quantized_depthwise_conv2d",
        "quantized_transpose_conv2d",
        "quantized_avg_pool2d",
        "quantized_max_pool2d",
        "quantized_div",
        "quantized_activation",
        "minimum",
        "maximum",
        "quantized_batch_matmul",
        "quantized_linear",
        "softmax",
        "pad",
        "transpose",
        "quantized_add",
        "quantized_mul",
    ] {
        assert!(
            default.contains(&format!("cortex_m::{op}")),
            "default flow: {op}"
        );
    }
    for op in [
        "quantized_conv2d_nhwc",
        "quantized_depthwise_conv2d_nhwc",
        "quantized_transpose_conv2d_nhwc",
        "quantized_avg_pool2d_nhwc",
        "quantized_max_pool2d_nhwc",
    ] {
        assert!(
            explicit.contains(&format!("cortex_m::{op}")),
            "explicit flow: {op}"
        );
    }
    for op in default.iter().chain(&explicit) {
        assert!(
            etscope_core::runtime::supports(&format!("{op}.out")),
            "{op} is in a program but not in the runtime"
        );
    }
}

#[test]
fn every_cortex_m_program_of_every_model_and_flow_matches_the_device() {
    let mut tally = Tally::default();
    for model in common::models() {
        for entry in std::fs::read_dir(&model).expect("model folder").flatten() {
            let dir = entry.path();
            let name = dir
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("")
                .to_string();
            let Some(tag) = name.strip_prefix("int8_cortex_m_intermediates") else {
                continue;
            };
            let tag = tag.trim_start_matches('_');
            let pte = model.join(if tag.is_empty() {
                "model_int8_cortex_m55.pte".to_string()
            } else {
                format!("model_int8_cortex_{tag}.pte")
            });
            if !pte.exists() || !dir.join("index.json").exists() {
                continue;
            }
            let label = format!("{}/{}", model.display(), name);
            check(&label, &pte, &[model.join("input.npy")], &dir, &mut tally);
        }
    }
    // the fixture copy alone holds the tiny model in three flows/targets
    assert!(tally.programs >= 3, "{tally:?}");
    assert_eq!(tally.defects, 0, "{tally:?}");
}

#[test]
fn the_target_is_read_from_the_program() {
    let tiny = common::tiny();
    let target = |f: &str| {
        let p = Program::parse(common::read(&tiny.join(f))).expect("parses");
        Target::of_program(&p, 0)
    };
    assert_eq!(
        target("model_int8_cortex_m55_default.pte"),
        Some(Target::CortexM55)
    );
    assert_eq!(
        target("model_int8_cortex_m4_default.pte"),
        Some(Target::CortexMDsp)
    );
    assert_eq!(target("model_fp32.pte"), None);
    // on the command line: the CMSIS-NN path each core runs
    for (name, want) in [
        ("m55", Target::CortexM55),
        ("cortex-m85", Target::CortexM55),
        ("m4", Target::CortexMDsp),
        ("Cortex-M33", Target::CortexMDsp),
        ("m7", Target::CortexMDsp),
        ("m3", Target::CortexMBase),
        ("m0+", Target::CortexMBase),
        ("m23", Target::CortexMBase),
    ] {
        assert_eq!(Target::parse(name), Some(want), "{name}");
    }
    assert_eq!(Target::parse("m99"), None);
}

#[test]
fn programs_without_an_extended_header_load_as_executorch_loads_them() {
    // ExecuTorch's serializer omits the header when there is no segment data but still lists
    // a placeholder segment; the runtime treats a missing header as "no segments".
    let pte = common::fixtures().join("ops/quantized_add__same_3x17__default__m55/model.pte");
    let bytes = common::read(&pte);
    assert_ne!(
        &bytes[8..12],
        b"eh00",
        "fixture should have no extended header"
    );
    let program = Program::parse(bytes).expect("loads");
    assert!(program.extended_header.is_none());
    assert!(program.segments.is_empty());
}

#[test]
fn static_device_notes_flag_exactly_the_programs_the_board_gets_wrong() {
    use etscope_core::analysis::device_notes::notes;
    use etscope_core::runtime::Device;
    let mut flagged = Vec::new();
    for (label, program) in op_programs() {
        let own = Device {
            target: Target::for_program(&program, 0),
            ..Device::default()
        };
        let found: Vec<_> = notes(&program, 0, own)
            .into_iter()
            .filter(|n| n.kind == "device")
            .collect();
        match known_defect(&label) {
            Some(_) => {
                assert_eq!(found.len(), 1, "{label}: {found:?}");
                flagged.push(label);
            }
            None => assert!(found.is_empty(), "{label}: false note {found:?}"),
        }
    }
    assert_eq!(flagged.len(), 8, "{flagged:?}");
    // none on the models' programs, which the board computes right
    for model in common::models() {
        for entry in std::fs::read_dir(&model).expect("model folder").flatten() {
            let path = entry.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with("model_int8_cortex") && name.ends_with(".pte") {
                let program = Program::parse(common::read(&path)).expect("parses");
                let own = Device {
                    target: Target::for_program(&program, 0),
                    ..Device::default()
                };
                let found = notes(&program, 0, own);
                assert!(found.is_empty(), "{}: {found:?}", path.display());
                // (and no lowering note: these models lower cleanly)
            }
        }
    }
    // the fixed CMSIS-NN has no transpose-conv note
    let tc = common::fixtures()
        .join("ops/quantized_transpose_conv2d__k3_s2_p1_c4to6__default__m55/model.pte");
    let program = Program::parse(common::read(&tc)).expect("parses");
    let fixed = Device {
        cmsis_nn: CmsisNn::Fixed4a8f5b5d,
        ..Device::default()
    };
    assert!(notes(&program, 0, fixed).is_empty());
}

#[test]
fn an_activation_left_in_float_between_quantized_ops_is_named() {
    use etscope_core::analysis::device_notes::notes;
    use etscope_core::runtime::Device;
    // F.relu6 is not among the quantizer's fused patterns: ExecuTorch 1.5.1 leaves a float
    // hardtanh between a dequantize and a quantize
    let mut flagged = 0;
    for (label, program) in op_programs() {
        let lowering: Vec<_> = notes(&program, 0, Device::default())
            .into_iter()
            .filter(|n| n.kind == "lowering")
            .collect();
        if label.starts_with("quantized_conv2d__k3_c3to4_relu6_functional") {
            assert!(
                lowering
                    .iter()
                    .any(|n| n.op == "aten::hardtanh" && n.why.contains("left in float")),
                "{label}: {lowering:?}"
            );
            flagged += 1;
        } else {
            assert!(lowering.is_empty(), "{label}: {lowering:?}");
        }
    }
    assert!(flagged >= 2, "{flagged}");
}

/// `pte` run on the host for `target` gives exactly `want` (an output of ExecuTorch's own
/// runtime) as its first output. Returns the host's output.
fn same_output_as_executorch(
    label: &str,
    pte: &Path,
    inputs: &[PathBuf],
    target: Target,
    want: &Path,
) -> TensorData {
    let result = run_on(pte, inputs, CmsisNn::default(), target);
    let got = result
        .outputs
        .first()
        .unwrap_or_else(|| panic!("{label}: no output"))
        .to_data();
    let want = npy(want);
    assert_eq!(
        (&got.shape, got.dtype),
        (&want.shape, want.dtype),
        "{label}: output"
    );
    let differing = got
        .bytes
        .chunks(4)
        .zip(want.bytes.chunks(4))
        .filter(|(a, b)| a != b)
        .count();
    assert_eq!(
        differing, 0,
        "{label}: {differing} elements differ from ExecuTorch's runtime"
    );
    got
}

/// ExecuTorch's outputs of `tests/fixtures/executorch_runtime` (`provenance.json` says how they
/// were made).
fn executorch_outputs() -> PathBuf {
    common::fixtures().join("executorch_runtime")
}

/// Every Cortex-M program of the models present (the fixture copy or `../shared/reference`)
/// with ExecuTorch's output for it under `dir`, as (label, pte, input, expected output).
fn model_programs_with_outputs(dir: &str) -> Vec<(String, PathBuf, PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for model in common::models() {
        let name = model.file_name().and_then(|n| n.to_str()).unwrap_or("?");
        for variant in [
            "model_int8_cortex_m55",
            "model_int8_cortex_m55_default",
            "model_int8_cortex_m4_default",
        ] {
            let pte = model.join(format!("{variant}.pte"));
            let want = executorch_outputs()
                .join(dir)
                .join(format!("{name}__{variant}.npy"));
            if pte.exists() && want.exists() {
                out.push((
                    format!("{name}/{variant}"),
                    pte,
                    model.join("input.npy"),
                    want,
                ));
            }
        }
    }
    out
}

/// What ExecuTorch 1.5.1's own runtime computes with its own `cortex_m` kernels over the
/// CMSIS-NN it pins, built for an x86-64 host: the plain C path of a core with neither the DSP
/// extension nor Helium (a Cortex-M0/M3: `Target::CortexMBase`). For every
/// operator case and every Cortex-M model program, etscope's host run for such a core gives the
/// same output byte for byte. That includes the cases where ExecuTorch's Python reference is not
/// what the device computes — the kernels that ignore `dim_order`, the default-flow softmax, the
/// pinned transpose convolution, average-pool ties — so the device, not the Python reference,
/// is what the host follows there.
#[test]
fn every_program_computes_what_executorchs_own_runtime_computes() {
    let provenance = common::json(&executorch_outputs().join("provenance.json"));
    let mut unlike_python = Vec::new();
    let cases = op_cases();
    for case in &cases {
        let label = case.file_name().and_then(|n| n.to_str()).unwrap_or("?");
        assert!(
            provenance["ops"][label].is_string(),
            "{label}: no ExecuTorch-runtime output"
        );
        let got = same_output_as_executorch(
            label,
            &case.join("model.pte"),
            &inputs_of(case),
            Target::CortexMBase,
            &executorch_outputs()
                .join("x86_64_ops")
                .join(format!("{label}.npy")),
        );
        if values(&got) != values(&npy(&case.join("output.npy"))) {
            unlike_python.push(label.to_string());
        }
    }
    assert_eq!(cases.len(), 153);
    // the README's count of programs where the device and the Python reference disagree
    assert_eq!(unlike_python.len(), 24, "{unlike_python:?}");
    // where the device is not the Python reference, the runtime is on the device's side
    for label in [
        "transpose__permute_0231_1x5x3x4__default__m55",
        "transpose__permute_3120_2x3x4x5__default__m55",
        "quantize_per_tensor__ties_4d_1x3x5x7__default__m55",
        "minimum__same_4d_1x3x4x5__default__m55",
        "maximum__broadcast_1x2x3x1_4x1x1x3__default__m55",
        "softmax__dim_last_4d_1x2x3x8__default__m55",
        "quantized_transpose_conv2d__k3_s2_p1_c4to6__default__m55",
        "quantized_avg_pool2d__k2_s2_c5__explicit__m55",
    ] {
        assert!(
            unlike_python.iter().any(|l| l == label),
            "{label}: expected to differ from the Python reference"
        );
    }
    let models = model_programs_with_outputs("x86_64_models");
    for (label, pte, input, want) in &models {
        same_output_as_executorch(
            label,
            pte,
            std::slice::from_ref(input),
            Target::CortexMBase,
            want,
        );
    }
    assert!(models.len() >= 3, "only {} model programs", models.len());
}

/// Every operator and model program with ExecuTorch's output under `<board>_ops` /
/// `<board>_models` gives that output on the host for `target`. Returns how many were compared.
fn compare_with_board(board: &str, target: Target) -> (usize, usize) {
    let dir = executorch_outputs().join(format!("{board}_ops"));
    let mut ops = 0;
    for case in op_cases() {
        let label = case.file_name().and_then(|n| n.to_str()).unwrap_or("?");
        let want = dir.join(format!("{label}.npy"));
        if want.exists() {
            same_output_as_executorch(
                label,
                &case.join("model.pte"),
                &inputs_of(&case),
                target,
                &want,
            );
            ops += 1;
        }
    }
    let models = model_programs_with_outputs(&format!("{board}_models"));
    for (label, pte, input, want) in &models {
        same_output_as_executorch(label, pte, std::slice::from_ref(input), target, want);
    }
    (ops, models.len())
}

/// Every operator program lowered for the board's core (its name ends in `suffix`) has the
/// board's output under `<board>_ops`.
fn assert_every_program_of(suffix: &str, board: &str) {
    for case in op_cases() {
        let label = case.file_name().and_then(|n| n.to_str()).unwrap_or("?");
        if label.ends_with(suffix) {
            let want = executorch_outputs().join(format!("{board}_ops/{label}.npy"));
            assert!(want.exists(), "{label}: no output from {board}");
        }
    }
}

/// The same runtime, kernels and CMSIS-NN built for Cortex-M55 with Helium and run on QEMU's
/// mps3-an547: every program lowered for the M55 (and every M4 program that runs there at all)
/// gives, on the host for the M55, the board's output byte for byte — the MVE-only arithmetic
/// (quantize's vector rounding, the linear layers' kernel sum) included.
#[test]
fn every_m55_program_computes_what_executorch_computes_on_an_emulated_cortex_m55() {
    assert_every_program_of("__m55", "m55_qemu");
    let (ops, models) = compare_with_board("m55_qemu", Target::CortexM55);
    assert!(
        ops >= 141 && models >= 2,
        "{ops} operator, {models} model programs"
    );
}

/// Built for Cortex-M4 (the DSP path) and run on QEMU's mps2-an386: every program lowered for
/// the M4 (and every M55 program that runs there) gives, on the host for the M4, the board's
/// output byte for byte.
#[test]
fn every_m4_program_computes_what_executorch_computes_on_an_emulated_cortex_m4() {
    assert_every_program_of("__m4", "m4_qemu");
    let (ops, models) = compare_with_board("m4_qemu", Target::CortexMDsp);
    assert!(
        ops >= 143 && models >= 2,
        "{ops} operator, {models} model programs"
    );
}

/// A program lowered for Helium passes its linear layers a kernel sum and no bias; a core
/// without Helium never reads the kernel sum. Run for such a core, each of those layers gets a
/// device note (and computes without its bias, as the oracle test above shows).
#[test]
fn a_helium_program_run_for_a_core_without_helium_is_told_it_loses_its_bias() {
    use etscope_core::analysis::device_notes::notes;
    use etscope_core::runtime::Device;
    let tiny = common::tiny();
    let linear_notes = |file: &str, target: Target| {
        let program = Program::parse(common::read(&tiny.join(file))).expect("parses");
        let plan = &program.plans[0];
        let layers = plan
            .operators
            .iter()
            .filter(|o| o.name == "cortex_m::quantized_linear")
            .count();
        let device = Device {
            target,
            ..Device::default()
        };
        let found = notes(&program, 0, device)
            .into_iter()
            .filter(|n| n.op == "cortex_m::quantized_linear" && n.why.contains("without its bias"))
            .count();
        (layers, found)
    };
    let (layers, found) = linear_notes("model_int8_cortex_m55.pte", Target::CortexMDsp);
    assert!(
        layers >= 1 && found >= layers,
        "{found} notes for {layers} layers"
    );
    assert_eq!(
        linear_notes("model_int8_cortex_m55.pte", Target::CortexM55).1,
        0
    );
    assert_eq!(
        linear_notes("model_int8_cortex_m4_default.pte", Target::CortexMDsp).1,
        0
    );
}

/// Programs run on a core they were not lowered for: ExecuTorch's own runtime fails 15 M4
/// programs on the emulated M55 (12 with `ARM_CMSIS_NN_ARG_ERROR`, 3 with a fault) and 14 M55
/// programs on the emulated M4 (average pooling's missing scratch); the lists are in
/// `tests/fixtures/executorch_runtime/provenance.json`. The host run stops at a call with the
/// board's reason for exactly those, and the static notes name the call; every other program
/// runs (and equals the board's output: the tests above).
#[test]
fn programs_lowered_for_another_core_fail_where_the_board_fails() {
    check_failures(
        "m55_qemu",
        "failed_on_m55",
        Target::CortexM55,
        15,
        Target::CortexMDsp,
    );
    check_failures(
        "m4_qemu",
        "failed_on_m4",
        Target::CortexMDsp,
        14,
        Target::CortexM55,
    );
}

/// Runs every program for `target` and checks it fails exactly where `board` failed
/// (`expected` programs), each of them lowered for `lowered_for`.
fn check_failures(board: &str, list: &str, target: Target, expected: usize, lowered_for: Target) {
    use etscope_core::analysis::device_notes::notes;
    use etscope_core::runtime::{Device, RuntimeError};
    let provenance = common::json(&executorch_outputs().join("provenance.json"));
    let failed = provenance[board][list].as_object().expect("failure list");
    assert_eq!(failed.len(), expected);
    let device = Device {
        target,
        ..Device::default()
    };
    let mut checked = 0;
    let mut programs: Vec<(String, PathBuf, Vec<PathBuf>)> = op_cases()
        .into_iter()
        .map(|c| {
            let label = c
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("?")
                .to_string();
            let inputs = inputs_of(&c);
            (label, c.join("model.pte"), inputs)
        })
        .collect();
    for (label, pte, input, _) in model_programs_with_outputs("x86_64_models") {
        programs.push((label.replace('/', "__"), pte, vec![input]));
    }
    for (label, pte, inputs) in &programs {
        let program = Program::parse(common::read(pte)).expect("parses");
        let mut rt = Runtime::new(&program, 0, target).expect("prepares");
        rt.set_cmsis_nn(CmsisNn::default());
        let data: Vec<TensorData> = inputs.iter().map(|p| npy(p)).collect();
        let run = rt.run(&data, false);
        let device_notes: Vec<_> = notes(&program, 0, device)
            .into_iter()
            .filter(|n| n.why.starts_with("fails on this core"))
            .collect();
        match failed.get(label.as_str()).and_then(|w| w.as_str()) {
            Some(board) => {
                let Err(RuntimeError::DeviceFails { why, .. }) = run else {
                    panic!("{label}: the board fails ({board}), the host run did not");
                };
                let faults = board.starts_with("rc=99");
                assert_eq!(why.contains("faults"), faults, "{label}: {why} vs {board}");
                assert!(
                    faults || why.contains("ARM_CMSIS_NN_ARG_ERROR"),
                    "{label}: {why}"
                );
                // the first call the notes name is where the run stopped
                assert!(
                    device_notes
                        .first()
                        .is_some_and(|n| n.why.ends_with(why.as_str())),
                    "{label}: {device_notes:?}"
                );
                // and the program says what it was lowered for
                assert_eq!(Target::for_program(&program, 0), lowered_for, "{label}");
                checked += 1;
            }
            None => {
                assert!(run.is_ok(), "{label}: {:?}", run.err());
                assert!(device_notes.is_empty(), "{label}: {device_notes:?}");
            }
        }
    }
    // every operator program of the list; its model programs when ../shared is there
    let op_failures = failed.keys().filter(|k| !k.contains("__model_")).count();
    assert!(checked >= op_failures, "{checked} failures checked");
}
