//! etscope's Cortex-M lowering against ExecuTorch's, pass by pass: the ETRecords in
//! `tests/fixtures/lowering/` (made by `tests/fixtures/tools/make_pass_stages.py`) hold
//! ExecuTorch 1.5.1's output of every pass as a stage; each etscope pass applied to the `edge`
//! stage must give the same program, and the last one the ETRecord's `edge_after_transform`.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use etscope_core::formats::etrecord::{ETRecord, Stage};
use etscope_core::formats::export_json::InputKind;
use etscope_core::ir::from_export::graph_from_export;
use etscope_core::ir::{Graph, ValueId};
use etscope_core::lower::compare::{differences, Side};
use etscope_core::lower::{self, Core, Flow, Module, Options};
use etscope_core::tensor::TensorData;

fn fixtures() -> PathBuf {
    common::fixtures().join("lowering")
}

/// The fixture's target and flow from its name (`tiny_conv_relu_linear_m55_default`).
fn options_of(stem: &str) -> Options {
    let mut parts = stem.rsplit('_');
    let flow = parts
        .next()
        .and_then(Flow::parse)
        .expect("flow in the name");
    let cpu = parts.next().and_then(Core::parse).expect("cpu in the name");
    Options { flow, core: cpu }
}

/// A stage's graph and its constants by value id.
fn stage_side(etr: &ETRecord, stage: &Stage) -> (Graph, BTreeMap<ValueId, TensorData>) {
    let graph = graph_from_export(&stage.graph, &stage.name, "forward");
    let weights = etr.stage_weights(stage).expect("stage weights");
    let mut constants = BTreeMap::new();
    for (name, kind) in &stage.graph.inputs {
        if *kind == InputKind::UserInput {
            continue;
        }
        let key = stage.graph.input_targets.get(name).unwrap_or(name);
        if let (Some(id), Some(t)) = (
            graph.values.iter().position(|v| &v.name == name),
            weights.get(key),
        ) {
            constants.insert(id, t.clone());
        }
    }
    (graph, constants)
}

fn lowered_fixtures(flow: Flow) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .expect("fixtures")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "etrecord"))
        .filter(|p| {
            let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
            options_of(stem).flow == flow
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no lowering fixtures");
    files
}

#[test]
fn every_pass_of_both_flows_equals_executorchs() {
    let mut all = Vec::new();
    let mut files = lowered_fixtures(Flow::Default);
    files.extend(lowered_fixtures(Flow::Explicit));
    for path in files {
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        let options = options_of(stem);
        let etr = ETRecord::parse(&std::fs::read(&path).expect("read")).expect("parse");
        let edge = etr
            .stage("edge_dialect_exported_program/forward")
            .expect("edge stage");
        let weights = etr.stage_weights(edge).expect("weights");
        let module = Module::from_stage(&edge.graph, "edge", "forward", &weights).expect("module");
        let stages = lower::lower(module, &options)
            .unwrap_or_else(|e| panic!("{stem}: lowering failed: {e}"));
        let mut failures = Vec::new();
        for (k, s) in stages.iter().enumerate() {
            let name = format!("{}/forward", lower::stage_name(k + 1, s.pass));
            let truth = etr
                .stage(&name)
                .unwrap_or_else(|| panic!("{stem}: no stage {name}"));
            let (g, c) = stage_side(&etr, truth);
            let theirs = |v: ValueId| c.get(&v).cloned();
            let ours = |v: ValueId| s.module.constants.get(&v).cloned();
            let diffs = differences(
                &Side {
                    graph: &s.module.graph,
                    constant: &ours,
                },
                &Side {
                    graph: &g,
                    constant: &theirs,
                },
            );
            if !diffs.is_empty() {
                failures.push(format!("{stem} {name}:\n  {}", diffs.join("\n  ")));
            }
        }
        all.extend(failures);
    }
    assert!(all.is_empty(), "{}", all.join("\n"));
}

/// The lowered module of a fixture, and the fixture's ETRecord.
fn lower_fixture(path: &Path) -> (ETRecord, Options, Vec<lower::LoweredStage>) {
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let options = options_of(stem);
    let etr = ETRecord::parse(&std::fs::read(path).expect("read")).expect("parse");
    let edge = etr
        .stage("edge_dialect_exported_program/forward")
        .expect("edge stage");
    let weights = etr.stage_weights(edge).expect("weights");
    let module = Module::from_stage(&edge.graph, "edge", "forward", &weights).expect("module");
    let stages = lower::lower(module, &options).expect("lowers");
    (etr, options, stages)
}

#[test]
fn the_lowered_graph_runs_bit_equal_to_executorchs_program() {
    use etscope_core::formats::pte::Program;
    use etscope_core::runtime::Runtime;
    for path in lowered_fixtures(Flow::Default) {
        let (etr, options, stages) = lower_fixture(&path);
        let inputs = etr.representative_inputs().expect("inputs");
        assert!(
            !inputs.is_empty(),
            "{}: no representative input",
            path.display()
        );
        let device = lower::device_for(options.core);
        let last = &stages.last().expect("passes").module;
        let ours = last
            .runtime(device)
            .expect("prepares")
            .run(&inputs, false)
            .expect("runs");
        let pte = std::fs::read(path.with_extension("pte")).expect("pte");
        let program = Program::parse(pte).expect("program");
        let theirs = Runtime::new(&program, 0, device.target)
            .expect("prepares")
            .run(&inputs, false)
            .expect("runs");
        assert_eq!(ours.outputs.len(), theirs.outputs.len());
        for (a, b) in ours.outputs.iter().zip(&theirs.outputs) {
            assert_eq!(a.dtype, b.dtype, "{}", path.display());
            assert_eq!(a.shape, b.shape, "{}", path.display());
            assert_eq!(a.buf, b.buf, "{}: outputs differ", path.display());
        }
    }
}

#[test]
fn scratch_sizes_equal_cmsis_nns_own() {
    use etscope_core::lower::scratch::{self, ConvGeometry};
    use etscope_core::lower::Isa;
    let v: serde_json::Value = serde_json::from_slice(
        &std::fs::read(fixtures().join("cmsis_nn_buffer_sizes.json")).expect("read"),
    )
    .expect("json");
    let rows = v["rows"].as_array().expect("rows");
    assert!(rows.len() > 1000);
    let mut bad = Vec::new();
    for row in rows {
        let r: Vec<i64> = row
            .as_array()
            .expect("row")
            .iter()
            .map(|x| x.as_i64().expect("int"))
            .collect();
        let [h, w, c_in, c_out, kh, kw, s, p, d] = r[..9] else {
            panic!("short row")
        };
        let out = |i: i64, k: i64| (i + 2 * p - d * (k - 1) - 1) / s + 1;
        let g = |filter: [i64; 4]| ConvGeometry {
            input: [1, h, w, c_in],
            filter,
            output: [1, out(h, kh), out(w, kw), c_out],
            padding: [p, p],
            stride: [s, s],
            dilation: [d, d],
        };
        let tout = |i: i64, k: i64| ((i - 1) * s - 2 * p + d * (k - 1) + 1).max(1);
        let transposed = ConvGeometry {
            output: [1, tout(h, kh), tout(w, kw), c_out],
            ..g([c_out, kh, kw, c_in])
        };
        for (b, isa) in [Isa::Mve, Isa::Dsp, Isa::Plain].into_iter().enumerate() {
            let want = &r[9 + 6 * b..15 + 6 * b];
            let (tconv, reverse) = scratch::transpose_conv(isa, &transposed);
            let got = [
                scratch::conv(isa, &g([c_out, kh, kw, c_in])),
                if c_out % c_in == 0 {
                    scratch::depthwise(isa, &g([c_out, kh, kw, 1]))
                } else {
                    -1
                },
                scratch::avgpool(isa, c_in),
                scratch::fully_connected(isa, c_out),
                tconv,
                reverse,
            ];
            if got[..] != *want {
                bad.push(format!("{isa:?} {:?}: {got:?} against {want:?}", &r[..9]));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {} rows differ:\n{}",
        bad.len(),
        rows.len(),
        bad[..bad.len().min(20)].join("\n")
    );
}

#[test]
fn the_written_program_equals_executorchs_and_runs_bit_equal_at_every_instruction() {
    use etscope_core::formats::pte::Program;
    use etscope_core::lower::compare::program_differences;
    use etscope_core::runtime::Runtime;
    for path in lowered_fixtures(Flow::Default) {
        let (etr, options, stages) = lower_fixture(&path);
        let last = &stages.last().expect("passes").module;
        let bytes = lower::emit::program(last, &options).expect("writes");
        let ours = Program::parse(bytes).expect("our program reads back");
        let theirs = Program::parse(std::fs::read(path.with_extension("pte")).expect("pte"))
            .expect("their program");
        let diffs = program_differences(&ours, &theirs);
        assert!(
            diffs.is_empty(),
            "{}:\n{}",
            path.display(),
            diffs.join("\n")
        );
        // every instruction's output, bit for bit, on the ETRecord's input
        let inputs = etr.representative_inputs().expect("inputs");
        let device = lower::device_for(options.core);
        let run = |p: &Program| {
            Runtime::new(p, 0, device.target)
                .expect("prepares")
                .run(&inputs, true)
                .expect("runs")
        };
        let (a, b) = (run(&ours), run(&theirs));
        assert_eq!(a.captured.len(), b.captured.len(), "{}", path.display());
        for (x, y) in a.captured.iter().zip(&b.captured) {
            assert_eq!(x.instruction_id, y.instruction_id);
            for (s, t) in x.tensors.iter().zip(&y.tensors) {
                assert_eq!(
                    (s.dtype, &s.shape, &s.buf),
                    (t.dtype, &t.shape, &t.buf),
                    "{}: instruction {:?} differs",
                    path.display(),
                    x.instruction_id
                );
            }
        }
        // and inside its own memory plan
        let in_arenas = Runtime::new(&ours, 0, device.target)
            .expect("prepares")
            .run_with(
                &inputs,
                etscope_core::runtime::RunOptions {
                    in_arenas: true,
                    ..Default::default()
                },
            )
            .expect("runs in its arenas");
        assert_eq!(
            in_arenas.outputs[0].buf,
            b.outputs[0].buf,
            "{}",
            path.display()
        );
    }
}

/// Lowers the ETRecord at `etr_path` for `cpu` (default flow) and checks the result against
/// what ExecuTorch made from the same edge graph: the lowered graph equals the ETRecord's
/// `edge_after_transform`, the written program equals the `.pte` beside it, and both run
/// bit-equal on the ETRecord's input.
fn check_against_executorch(etr_path: &Path, cpu: Core) {
    check_flow_against_executorch(etr_path, cpu, Flow::Default)
}

fn check_flow_against_executorch(etr_path: &Path, cpu: Core, flow: Flow) {
    use etscope_core::formats::pte::Program;
    use etscope_core::lower::compare::program_differences;
    use etscope_core::runtime::Runtime;
    let options = Options { flow, core: cpu };
    let etr = ETRecord::parse(&std::fs::read(etr_path).expect("read")).expect("parse");
    let module = Module::from_etrecord(&etr, None).expect("edge");
    let stages =
        lower::lower(module, &options).unwrap_or_else(|e| panic!("{}: {e}", etr_path.display()));
    let last = &stages.last().expect("passes").module;
    let truth = etr.stage("edge_after_transform").expect("after transform");
    let (g, c) = stage_side(&etr, truth);
    let theirs = |v: ValueId| c.get(&v).cloned();
    let ours = |v: ValueId| last.constants.get(&v).cloned();
    let diffs = differences(
        &Side {
            graph: &last.graph,
            constant: &ours,
        },
        &Side {
            graph: &g,
            constant: &theirs,
        },
    );
    assert!(
        diffs.is_empty(),
        "{}:\n{}",
        etr_path.display(),
        diffs.join("\n")
    );
    let written =
        Program::parse(lower::emit::program(last, &options).expect("writes")).expect("reads");
    let reference =
        Program::parse(std::fs::read(etr_path.with_extension("pte")).expect("pte")).expect("pte");
    let diffs = program_differences(&written, &reference);
    assert!(
        diffs.is_empty(),
        "{}:\n{}",
        etr_path.display(),
        diffs.join("\n")
    );
    let inputs = etr.representative_inputs().expect("inputs");
    let target = lower::device_for(cpu).target;
    let run = |p: &Program| Runtime::new(p, 0, target).and_then(|rt| rt.run(&inputs, false));
    match (run(&written), run(&reference)) {
        (Ok(a), Ok(b)) => {
            for (x, y) in a.outputs.iter().zip(&b.outputs) {
                assert_eq!(x.buf, y.buf, "{}: outputs differ", etr_path.display());
            }
        }
        // an operator the host runtime refuses: both stop there, with one message
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{}", etr_path.display()),
        (a, b) => panic!(
            "{}: one program runs, the other does not: {:?} / {:?}",
            etr_path.display(),
            a.err(),
            b.err()
        ),
    }
}

/// Every default-flow ETRecord of the reference set (`../shared/reference`, when present).
#[test]
fn every_reference_etrecord_of_both_flows_lowers_to_executorchs_program() {
    let Some(root) = common::shared_reference() else {
        eprintln!("../shared/reference is absent: only the fixtures are checked");
        return;
    };
    let mut checked = 0;
    for model in common::models() {
        for (variant, cpu) in [("m55_default", Core::M55), ("m4_default", Core::M4)] {
            let etr_path = model.join(format!("model_int8_cortex_{variant}.etrecord"));
            if etr_path.exists() {
                check_against_executorch(&etr_path, cpu);
                checked += 1;
            }
        }
    }
    assert!(
        checked >= 6,
        "only {checked} reference ETRecords under {}",
        root.display()
    );
}

/// The models the reference set lacks (a 1-D audio GRU, a U-Net with upsampling and
/// concatenation, an embedding model with a LUT activation), made with ExecuTorch's exporter
/// (`tests/fixtures/tools/make_models.py`): each lowers to ExecuTorch's program.
#[test]
fn the_made_models_lower_to_executorchs_programs() {
    let dir = common::fixtures().join("models");
    let (mut default, mut explicit) = (0, 0);
    for entry in std::fs::read_dir(&dir).expect("models") {
        let path = entry.expect("entry").path();
        let etr = path.join("model_int8_cortex_m55_default.etrecord");
        if etr.exists() {
            check_against_executorch(&etr, Core::M55);
            default += 1;
        }
        // the explicit-layout flow: 1-D convolutions turned 2-D, views and permutes
        // canonicalised, permutes around element-wise regions (a residual add) removed
        let etr = path.join("model_int8_cortex_m55_explicit.etrecord");
        if etr.exists() {
            check_flow_against_executorch(&etr, Core::M55, Flow::Explicit);
            explicit += 1;
        }
    }
    assert!(default >= 3, "only {default} models");
    assert!(explicit >= 4, "only {explicit} explicit-flow models");
}

/// Every pass stage runs (its annotations put back as Q/DQ), and the first pass that changes
/// any node's numbers is the one that brings in CMSIS-NN's integer arithmetic.
#[test]
fn numeric_attribution_names_the_pass_that_brings_in_integer_arithmetic() {
    use etscope_core::lower::execute::{attribute, Numerics};
    let cases = [
        (
            fixtures().join("ds_cnn_kws_m4_default.etrecord"),
            Core::M4,
            true,
        ),
        (
            common::fixtures().join("models/unet/model_int8_cortex_m55_default.etrecord"),
            Core::M55,
            true,
        ),
        (
            fixtures().join("tiny_conv_relu_linear_m55_default.etrecord"),
            Core::M55,
            false,
        ),
    ];
    for (path, cpu, changes) in cases {
        let etr = ETRecord::parse(&std::fs::read(&path).expect("read")).expect("parse");
        let edge = Module::from_etrecord(&etr, None).expect("edge");
        let options = Options {
            flow: Flow::Default,
            core: cpu,
        };
        let stages = lower::lower(edge.clone(), &options).expect("lowers");
        let inputs = etr.representative_inputs().expect("inputs");
        let a = attribute(&edge, &stages, &inputs, lower::device_for(cpu)).expect("runs");
        for (pass, n) in &a.per_pass {
            assert!(
                !matches!(n, Numerics::Failed(_) | Numerics::Diverges { .. }),
                "{}: {pass}: {n:?}",
                path.display()
            );
        }
        match (&a.first_change, changes) {
            (Some((pass, Numerics::Within { snr_db, .. })), true) => {
                assert_eq!(*pass, "AtenToCortexMPass", "{}", path.display());
                assert!(
                    (30.0..90.0).contains(snr_db),
                    "{}: {snr_db}",
                    path.display()
                );
            }
            (None, false) => {}
            (other, _) => panic!("{}: {other:?}", path.display()),
        }
    }
}

/// Every case of the Cortex-M backend's per-operator programs — default flow for the M55
/// (Helium) and the M4 (DSP), explicit-layout flow for the M55 (ETRecords made by
/// `tests/fixtures/tools/make_op_etrecords.py` from the reference generator's models) — lowers
/// to ExecuTorch's program, or is refused naming what etscope does not do yet (2 explicit-flow
/// cases: a 1-D convolution, layout permutes around an element-wise op).
#[test]
fn every_operator_case_lowers_to_executorchs_program() {
    let dir = fixtures().join("ops");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("op ETRecords")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "etrecord"))
        .collect();
    cases.sort();
    let mut equal = std::collections::BTreeMap::new();
    let mut refused = Vec::new();
    for path in &cases {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        let mut parts = stem.rsplit("__");
        let cpu = parts
            .next()
            .and_then(Core::parse)
            .expect("core in the name");
        let flow = parts
            .next()
            .and_then(Flow::parse)
            .expect("flow in the name");
        let etr = ETRecord::parse(&std::fs::read(path).expect("read")).expect("parse");
        let options = Options { flow, core: cpu };
        if let Err(e) = lower::lower(Module::from_etrecord(&etr, None).expect("edge"), &options) {
            let text = e.to_string();
            assert!(
                text.contains("not implemented in etscope yet"),
                "{stem}: {text}"
            );
            refused.push(stem);
            continue;
        }
        check_flow_against_executorch(path, cpu, flow);
        *equal.entry((flow.name(), cpu.key())).or_insert(0) += 1;
    }
    assert_eq!(equal.get(&("default", "m55")), Some(&87), "{equal:?}");
    assert_eq!(equal.get(&("default", "m4")), Some(&87), "{equal:?}");
    assert_eq!(equal.get(&("explicit", "m55")), Some(&83), "{equal:?}");
    assert!(refused.is_empty(), "{refused:?}");
}

/// The edge module of one operator's ETRecord (`tests/fixtures/lowering/ops`).
fn op_module(name: &str) -> Module {
    let path = fixtures().join("ops").join(format!("{name}.etrecord"));
    let rec = ETRecord::parse(&std::fs::read(&path).expect("etrecord")).expect("parses");
    Module::from_etrecord(&rec, None).expect("edge")
}

/// The lowering's error for `m` (a panic, short, if it lowers).
fn refusal(m: Module) -> String {
    match lower::lower(
        m,
        &Options {
            flow: Flow::Default,
            core: Core::M55,
        },
    ) {
        Ok(stages) => panic!("lowered through {} passes", stages.len()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn arguments_and_weights_no_exporter_writes_are_errors_naming_the_node() {
    use etscope_core::ir::ArgData;
    let conv = "quantized_conv2d__k3_c3to4_relu6_functional__default__m55";
    let options = Options {
        flow: Flow::Default,
        core: Core::M55,
    };
    assert!(
        lower::lower(op_module(conv), &options).is_ok(),
        "the program as exported lowers"
    );
    // a convolution of 0 groups (it divided by zero)
    let mut m = op_module(conv);
    let node = m
        .graph
        .nodes
        .iter_mut()
        .find(|n| n.op.ends_with("convolution"))
        .expect("a convolution");
    node.args[8].data = ArgData::Int(0);
    let err = refusal(m);
    assert!(err.contains("0 groups"), "{err}");
    // a 0-d weight
    let mut m = op_module(conv);
    let w = m
        .graph
        .nodes
        .iter()
        .find(|n| n.op.ends_with("convolution"))
        .and_then(|n| n.args[1].value)
        .expect("weight");
    // the weight reaches the convolution through its dequantize: the constant behind it
    let dq = m.graph.values[w].producer.expect("the weight's dequantize");
    let key = m.graph.nodes[dq].args[0].value.expect("the int8 weight");
    let c = m.constants.get_mut(&key).expect("constant");
    c.shape.clear();
    c.bytes.truncate(c.dtype.element_size().unwrap_or(1));
    let err = refusal(m);
    // refused before any pass: the constant's sizes are not its value's
    assert!(
        err.contains("not consistent") && err.contains("has sizes []"),
        "{err}"
    );
    // a linear whose weight holds fewer values than its sizes say
    let linear = "quantized_linear__in16_out10_bias__default__m4";
    let mut m = op_module(linear);
    for c in m.constants.values_mut() {
        if c.shape.len() == 2 {
            c.shape[1] += 1;
        }
    }
    let err = refusal(m);
    assert!(
        err.contains("not consistent") && err.contains("has sizes [10, 17]"),
        "{err}"
    );
    // quantization parameters no quantizer writes
    let mut m = op_module(conv);
    let q = m
        .graph
        .nodes
        .iter_mut()
        .find(|n| n.op.contains("quantize_per_tensor"))
        .expect("a quantize");
    q.args[3].data = ArgData::Int(127);
    q.args[4].data = ArgData::Int(-128);
    let err = refusal(m);
    assert!(err.contains("quant_min 127 > quant_max -128"), "{err}");
}
