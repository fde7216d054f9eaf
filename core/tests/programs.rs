//! Programs with properties the reference set lacks, made by ExecuTorch 1.5.1's own exporter
//! (`tests/fixtures/tools/make_fixtures.py`), run on the host and compared with the outputs
//! ExecuTorch's own portable runtime computed: the portable kernels real programs keep, several
//! methods, weights in an external `.ptd`, and a bundled program the host cannot run.

mod common;

use std::path::{Path, PathBuf};

use common::{assert_matches, npy, numbered};
use std::sync::Arc;

use etscope_core::formats::bundled::BundledProgram;
use etscope_core::formats::flat_tensor::FlatTensorFile;
use etscope_core::formats::pte::Program;
use etscope_core::kernels::libm::Libm;
use etscope_core::runtime::verify::{verify, Tolerance, Verdict};
use etscope_core::runtime::{Runtime, Target};
use etscope_core::tensor::TensorData;

fn programs() -> PathBuf {
    common::fixtures().join("programs")
}

fn run_method(program: &Program, method: &str, inputs: &[TensorData]) -> Vec<TensorData> {
    let plan = program
        .plans
        .iter()
        .position(|p| p.name == method)
        .unwrap_or_else(|| panic!("no method {method}"));
    let mut rt = Runtime::new(program, plan, Target::for_program(program, plan)).expect("prepares");
    // the expected outputs are ExecuTorch's x86 runtime's: its C library is the host's
    rt.set_libm(Libm::Glibc);
    rt.run(inputs, false)
        .expect("runs")
        .outputs
        .iter()
        .map(|t| t.to_data())
        .collect()
}

#[test]
fn portable_kernel_programs_match_executorchs_runtime() {
    let mut checked = 0;
    for name in [
        "cat",
        "slice_select",
        "split",
        "where_compare",
        "clamp_int8",
        "maxpool_mean_amax",
        "bmm",
        "layer_norm_gelu",
        "view_broadcast",
        "dynamic_view",
        // no input at all (arange in the graph), and an int returned beside a tensor
        // (tools/make_io_cases.py)
        "no_input",
        "int_output",
        // a mutable buffer read and written back by `aten::copy_` (tools/make_mutable_state.py):
        // the first call, from the state ExecuTorch's runtime starts with
        "mutable_state",
        // a cache updated in place at given rows (`aten::index_put_`), then read
        "kv_cache",
    ] {
        let dir = programs().join(name);
        let program = Program::parse(common::read(&dir.join("model.pte"))).expect("parses");
        let inputs: Vec<TensorData> = numbered(&dir, "input").iter().map(|p| npy(p)).collect();
        let outputs = run_method(&program, "forward", &inputs);
        let want = numbered(&dir, "output");
        assert_eq!(outputs.len(), want.len(), "{name}");
        for (k, (got, w)) in outputs.iter().zip(&want).enumerate() {
            assert_matches(&format!("{name} output {k}"), got, &npy(w), 1e-6);
            checked += 1;
        }
    }
    assert_eq!(checked, 18);
}

#[test]
fn control_flow_takes_the_branch_executorchs_runtime_takes() {
    // `torch.cond` as ExecuTorch emits it (tools/make_control_flow.py): jumps, one of them to
    // the end of the chain, and moves of each branch's result into the output
    for name in [
        "cond_taken",
        "cond_not_taken",
        "cond_nested_taken",
        "cond_nested_not_taken",
    ] {
        let dir = programs().join(name);
        let program = Program::parse(common::read(&dir.join("model.pte"))).expect("parses");
        let kinds: Vec<&str> = program.plans[0]
            .main_instructions()
            .iter()
            .map(|i| i.kind())
            .collect();
        assert!(
            kinds.contains(&"JumpFalseCall") && kinds.contains(&"MoveCall"),
            "{name}"
        );
        let inputs: Vec<TensorData> = numbered(&dir, "input").iter().map(|p| npy(p)).collect();
        let outputs = run_method(&program, "forward", &inputs);
        assert_matches(name, &outputs[0], &npy(&dir.join("output_0.npy")), 1e-6);
    }
    // the branches' outputs differ, so taking the wrong one cannot pass
    let a = npy(&programs().join("cond_taken/output_0.npy"))
        .to_f64()
        .unwrap();
    let b = npy(&programs().join("cond_not_taken/output_0.npy"))
        .to_f64()
        .unwrap();
    assert!(a.iter().zip(&b).all(|(x, y)| (x - y).abs() > 0.1));
}

#[test]
fn every_method_of_a_multi_method_program_runs() {
    let dir = programs().join("two_methods");
    let program = Program::parse(common::read(&dir.join("model.pte"))).expect("parses");
    let names: Vec<&str> = program.plans.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["forward", "sigmoid"]);
    let x = npy(&dir.join("input_0.npy"));
    for method in names {
        let out = run_method(&program, method, std::slice::from_ref(&x));
        let want = npy(&dir.join(format!("output_{method}.npy")));
        assert_matches(method, &out[0], &want, 1e-6);
    }
}

#[test]
fn external_weights_come_from_the_ptd_and_a_missing_one_is_named() {
    let dir = programs().join("external_weights");
    let mut program = Program::parse(common::read(&dir.join("model.pte"))).expect("parses");
    assert_eq!(program.external_keys(), ["fc.bias", "fc.weight"]);
    // without its .ptd the program opens but cannot run, and says which file it needs
    let err = Runtime::new(&program, 0, Target::default())
        .err()
        .expect("needs the .ptd")
        .to_string();
    assert!(err.contains("fc.") && err.contains(".ptd"), "{err}");
    let ptd = FlatTensorFile::parse(common::read(&dir.join("model.ptd"))).expect("ptd parses");
    assert_eq!(ptd.entries.len(), 2);
    program
        .attach_external_data(Arc::new(ptd))
        .expect("attaches");
    let x = npy(&dir.join("input_0.npy"));
    let out = run_method(&program, "forward", &[x]);
    assert_matches(
        "external weights",
        &out[0],
        &npy(&dir.join("output_0.npy")),
        1e-6,
    );
}

#[test]
fn a_ptd_whose_tensor_layout_is_not_the_programs_is_refused_naming_the_tensor() {
    // ExecuTorch's validateTensorLayout: scalar type, sizes and dim order must agree
    let dir = programs().join("external_weights");
    let ptd = FlatTensorFile::parse(common::read(&dir.join("model.ptd"))).expect("ptd parses");
    for change in 0..3 {
        let mut program = Program::parse(common::read(&dir.join("model.pte"))).expect("parses");
        let t = program.plans[0]
            .values
            .iter_mut()
            .find_map(|v| match v {
                etscope_core::formats::pte::EValue::Tensor(t)
                    if t.external_key() == Some("fc.weight") =>
                {
                    Some(t)
                }
                _ => None,
            })
            .expect("fc.weight");
        match change {
            0 => t.scalar_type = etscope_core::ScalarType::Int,
            1 => t.sizes.reverse(),
            _ => t.dim_order.reverse(),
        }
        let err = program
            .attach_external_data(Arc::new(ptd.clone()))
            .expect_err("refused")
            .to_string();
        assert!(
            err.contains("\"fc.weight\"") && err.contains("in the .ptd"),
            "{err}"
        );
    }
}

#[test]
fn a_ptd_is_refused_by_a_program_that_does_not_use_it() {
    let ptd = FlatTensorFile::parse(common::read(&programs().join("external_weights/model.ptd")))
        .expect("ptd parses");
    let mut other =
        Program::parse(common::read(&programs().join("bmm/model.pte"))).expect("parses");
    let err = other
        .attach_external_data(Arc::new(ptd))
        .expect_err("refused")
        .to_string();
    assert!(err.contains("keeps no tensor in external data"), "{err}");
}

#[test]
fn a_truncated_ptd_is_refused_with_what_is_missing() {
    let bytes = common::read(&programs().join("external_weights/model.ptd"));
    for cut in [10, 47, 200, bytes.len() - 1] {
        let err = FlatTensorFile::parse(bytes[..cut].to_vec())
            .expect_err("truncated")
            .to_string();
        assert!(
            err.contains("truncated") || err.contains("corrupt"),
            "cut {cut}: {err}"
        );
    }
}

#[test]
fn a_bundled_program_the_host_cannot_run_is_not_called_wrong() {
    let bundled = BundledProgram::parse(&common::read(
        &programs().join("bundled_xnnpack/model.bpte"),
    ))
    .expect("parses");
    let results = verify(&bundled, Target::default(), Tolerance::default());
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].verdict, Verdict::CannotRun);
    assert!(!results[0].passed);
    let why = results[0].error.as_deref().unwrap_or("");
    assert!(why.contains("XnnpackBackend"), "{why}");
}

#[test]
fn a_bundled_program_that_runs_passes() {
    let bundled = BundledProgram::parse(&common::read(&common::tiny().join("model_fp32.bpte")))
        .expect("parses");
    let results = verify(&bundled, Target::default(), Tolerance::default());
    assert!(
        results.iter().all(|r| r.verdict == Verdict::Passed),
        "{results:?}"
    );
}

#[test]
fn an_et_view_is_an_alias_not_an_overlap() {
    let dir = programs().join("dynamic_view");
    let program = Program::parse(common::read(&dir.join("model.pte"))).expect("parses");
    let graph = etscope_core::ir::from_pte::graph_from_plan(&program, 0).expect("graph");
    let view = graph
        .nodes
        .iter()
        .find(|n| n.op == "executorch_prim::et_view")
        .expect("the program has an et_view");
    let (src, out) = (view.inputs[0], view.outputs[0]);
    assert_eq!(graph.values[out].alias_of, Some(src));
    let plan = etscope_core::plan::derive(&graph);
    assert!(plan.findings.is_empty(), "{:?}", plan.findings);
}

#[test]
fn an_ethos_u_payload_is_decoded() {
    let program =
        Program::parse(common::read(&programs().join("ethos_u55/model.pte"))).expect("parses");
    let plan = &program.plans[0];
    let delegate = plan.delegates.first().expect("one delegate");
    assert_eq!(delegate.id, etscope_core::formats::ethos_u::BACKEND_ID);
    let blob = program.delegate_blob(delegate).expect("payload");
    let vela = etscope_core::formats::ethos_u::decode(blob).expect("a Vela block stream");
    let names: Vec<&str> = vela.blocks.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.first(), Some(&"vela_bin_stream"));
    assert_eq!(names.last(), Some(&"vela_end_stream"));
    assert!(
        vela.command_stream_bytes > 0 && vela.weight_bytes > 0,
        "{vela:?}"
    );
    assert!(vela.scratch_bytes.is_some_and(|s| s > 0), "{vela:?}");
    // the NPU reads the program's int8 input [1, 3, 8, 8] and writes its [1, 5] output
    assert_eq!(vela.inputs.len(), 1);
    assert_eq!(vela.inputs[0].bytes(), 3 * 8 * 8);
    assert_eq!(vela.outputs.len(), 1);
    assert_eq!(vela.outputs[0].bytes(), 5);
    // truncated or foreign payloads are refused, never mis-decoded
    for cut in [0, 20, blob.len() / 2] {
        assert!(
            etscope_core::formats::ethos_u::decode(&blob[..cut]).is_err(),
            "cut {cut}"
        );
    }
    assert!(etscope_core::formats::ethos_u::decode(&[0u8; 64]).is_err());
}

#[test]
fn a_float_kernel_fed_int8_codes_is_named_and_not_run() {
    use etscope_core::analysis::device_notes::notes;
    use etscope_core::runtime::Device;
    // ExecuTorch 1.5.1's Cortex-M flow on a standalone hardswish: aten::hardswish on int8
    let dir = programs().join("cortex_m_hardswish");
    let program = Program::parse(common::read(&dir.join("model.pte"))).expect("parses");
    let found = notes(&program, 0, Device::default());
    assert!(
        found
            .iter()
            .any(|n| n.kind == "lowering" && n.op == "aten::hardswish" && n.why.contains("int8")),
        "{found:?}"
    );
    let rt = Runtime::new(&program, 0, Target::for_program(&program, 0)).expect("prepares");
    // the float kernel refuses integer codes (the host runs hardswish on float tensors only)
    let err = rt
        .run(&[npy(&dir.join("input_0.npy"))], false)
        .expect_err("not run on int8 codes");
    let why = err.to_string();
    assert!(
        why.contains("aten::hardswish") && why.contains("float32 tensors only, not int8"),
        "{why}"
    );
}

#[test]
fn quantization_parameters_that_disagree_across_an_edge_are_named() {
    use etscope_core::analysis::device_notes::notes;
    use etscope_core::formats::pte::{EValue, Instruction};
    use etscope_core::runtime::Device;
    // the tiny model's final quantize → dequantize pair, in a copy whose dequantize scale is
    // rewritten (as a hand-edited or mis-merged export would have it)
    let bytes = common::read(&common::tiny().join("model_int8_qdq_portable.pte"));
    let program = Program::parse(bytes.clone()).expect("parses");
    let plan = &program.plans[0];
    assert!(
        notes(&program, 0, Device::default()).is_empty(),
        "the real program is consistent"
    );
    let scale = plan
        .main_instructions()
        .iter()
        .rev()
        .find_map(|ins| match ins {
            Instruction::KernelCall { op_index, args }
                if plan.operators[*op_index]
                    .name
                    .ends_with("dequantize_per_tensor") =>
            {
                match plan.values[args[1]] {
                    EValue::Double(d) => Some(d),
                    _ => None,
                }
            }
            _ => None,
        })
        .expect("a dequantize with a float scale");
    let needle = scale.to_le_bytes();
    let hits: Vec<usize> = bytes
        .windows(8)
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .collect();
    assert!(!hits.is_empty());
    // the quantize and the dequantize each hold the scale: rewrite one of them at a time
    let mut named = 0;
    for &h in &hits {
        let mut broken = bytes.clone();
        broken[h..h + 8].copy_from_slice(&(scale * 2.0).to_le_bytes());
        let program = Program::parse(broken).expect("still parses");
        let found = notes(&program, 0, Device::default());
        if found
            .iter()
            .any(|n| n.why.contains("rescaled") && n.kind == "lowering")
        {
            named += 1;
        }
    }
    assert_eq!(
        named,
        hits.len(),
        "every one-sided change is named (hits {hits:?})"
    );
}

/// ExecuTorch 0.4's flatc wrote an empty `[long]` at 4 mod 8
/// (`tests/fixtures/tools/make_unaligned_empty_vector.py`); ExecuTorch's runtime loads and runs
/// it, so etscope does too, with the same output.
#[test]
fn an_empty_vector_aligned_to_four_only_is_read_as_the_runtime_reads_it() {
    let dir = programs().join("unaligned_empty_vector");
    let bytes = common::read(&dir.join("model.pte"));
    // the file has the property: the plain FlatBuffers verifier refuses it
    let strict =
        etscope_core::formats::flatbuf::verify_program(&bytes).expect_err("strict verifier");
    assert!(strict.to_string().contains("unaligned"), "{strict}");

    let program = Program::parse(bytes.clone()).expect("parses as ExecuTorch loads it");
    let outputs = run_method(&program, "forward", &[npy(&dir.join("input_0.npy"))]);
    assert_eq!(outputs.len(), 1);
    assert_matches(
        "0-d output",
        &outputs[0],
        &npy(&dir.join("output_0.npy")),
        1e-6,
    );
    assert_eq!(outputs[0].to_f64().expect("numeric"), vec![3.0]);

    // only an *empty* vector is re-pointed: give it one element and the error stands
    let length_word = (strict.to_string())
        .split("position ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse::<usize>().ok())
        .expect("the verifier names the position")
        - 4;
    let mut non_empty = bytes;
    non_empty[length_word..length_word + 4].copy_from_slice(&1u32.to_le_bytes());
    let err = Program::parse(non_empty).expect_err("a non-empty unaligned vector is refused");
    assert!(err.to_string().contains("unaligned"), "{err}");
}

/// Found by fuzzing (`run`): a program with an unaligned empty vector *and* inline constant
/// buffers; the constants' offsets were taken against the file while the root had been read
/// from its realigned copy (subtract overflow). Offsets are taken in the buffer the root was
/// read from now, and every inline constant stays inside the file.
#[test]
fn inline_constants_of_a_realigned_program_lie_inside_the_file() {
    let bytes = common::read(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fuzz/corpus/run/regression-realigned-inline-constants-1"),
    );
    let strict =
        etscope_core::formats::flatbuf::verify_program(&bytes).expect_err("needs realigning");
    assert!(strict.to_string().contains("unaligned"), "{strict}");
    let len = bytes.len();
    let program = Program::parse(bytes).expect("parses once realigned");
    for plan in &program.plans {
        for v in &plan.values {
            if let etscope_core::formats::pte::EValue::Tensor(t) = v {
                if let Ok(b) = program.constant_bytes(t) {
                    assert!(b.len() <= len);
                }
            }
        }
    }
}

/// A method called again starts from the memory the last call left, as ExecuTorch's runtime
/// executes a loaded method: the second call of a program with state (a mutable buffer written
/// back with `copy_`, a cache updated with `index_put_`) gives what ExecuTorch's runtime gave for
/// its second call of the same inputs.
#[test]
fn a_second_call_starts_from_the_state_the_first_left() {
    for (name, differ) in [("mutable_state", true), ("kv_cache", false)] {
        let dir = programs().join(name);
        let program = Program::parse(common::read(&dir.join("model.pte"))).expect("parses");
        let inputs: Vec<TensorData> = numbered(&dir, "input").iter().map(|p| npy(p)).collect();
        let runtime = Runtime::new(&program, 0, Target::default()).expect("prepares");
        let calls = runtime
            .run_calls(&[inputs.clone(), inputs.clone()], Default::default())
            .expect("runs twice");
        let (first, second) = (calls[0].outputs[0].to_data(), calls[1].outputs[0].to_data());
        assert_matches(
            &format!("{name} first call"),
            &first,
            &npy(&dir.join("output_0.npy")),
            1e-6,
        );
        assert_matches(
            &format!("{name} second call"),
            &second,
            &npy(&dir.join("output_second_call.npy")),
            1e-6,
        );
        assert_eq!(
            first != second,
            differ,
            "{name}: the calls differ as ExecuTorch's do"
        );
        // in arenas too: the arenas keep the state
        let in_arenas = runtime
            .run_calls(
                &[inputs.clone(), inputs],
                etscope_core::runtime::RunOptions {
                    in_arenas: true,
                    ..Default::default()
                },
            )
            .expect("runs twice in arenas");
        assert_matches(
            &format!("{name} second call in arenas"),
            &in_arenas[1].outputs[0].to_data(),
            &npy(&dir.join("output_second_call.npy")),
            1e-6,
        );
    }
}
