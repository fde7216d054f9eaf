//! The host runtime against ExecuTorch's own outputs: fp32 programs within 1e-5, int8 Q/DQ
//! programs exactly, and every node of every Cortex-M program bit for bit against the
//! per-node references (CMSIS-NN arithmetic); plus the errors a user meets.

mod common;

use std::path::Path;

use etscope_core::formats::npy::read_npy;
use etscope_core::formats::pte::Program;
use etscope_core::kernels::libm::Libm;
use etscope_core::runtime::{RunOptions, Runtime, RuntimeError, Target};
use etscope_core::tensor::TensorData;

fn npy(p: &Path) -> TensorData {
    read_npy(&common::read(p)).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn run(model: &Path, variant: &str, capture: bool) -> etscope_core::runtime::RunResult {
    let program =
        Program::parse(common::read(&model.join(format!("{variant}.pte")))).expect("program");
    let rt = Runtime::new(&program, 0, Target::CortexM55).expect("prepares");
    rt.run(&[npy(&model.join("input.npy"))], capture)
        .unwrap_or_else(|e| panic!("{} {variant}: {e}", model.display()))
}

/// ExecuTorch's x86 runtime computed `output_et_fp32.npy`: with its C library (glibc), the
/// portable kernels' float32 operations in their order give its output bit for bit.
#[test]
fn fp32_programs_match_executorch_bit_for_bit() {
    for model in common::models() {
        let program = Program::parse(common::read(&model.join("model_fp32.pte"))).expect("program");
        let mut rt = Runtime::new(&program, 0, Target::CortexM55).expect("prepares");
        rt.set_libm(Libm::Glibc);
        let got = rt
            .run(&[npy(&model.join("input.npy"))], false)
            .unwrap_or_else(|e| panic!("{}: {e}", model.display()))
            .outputs[0]
            .to_data();
        let want = npy(&model.join("output_et_fp32.npy"));
        assert_eq!((&got.shape, got.dtype), (&want.shape, want.dtype));
        assert_eq!(got.bytes, want.bytes, "{}", model.display());
    }
}

#[test]
fn int8_qdq_programs_match_executorch_exactly() {
    for model in common::models() {
        let got = run(&model, "model_int8_qdq_portable", false).outputs[0].to_data();
        let want = npy(&model.join("output_et_int8_qdq.npy"));
        assert_eq!(got.bytes, want.bytes, "{}", model.display());
    }
}

#[test]
fn every_cortex_m_node_equals_its_cmsis_nn_reference_bit_for_bit() {
    let mut nodes = 0;
    for model in common::models() {
        let result = run(&model, "model_int8_cortex_m55", true);
        let dir = model.join("int8_cortex_m_intermediates");
        let index = common::json(&dir.join("index.json"));
        for node in index["nodes"].as_array().expect("nodes") {
            let (Some(iid), Some(file)) = (node["instruction_id"].as_u64(), node["npy"].as_str())
            else {
                continue;
            };
            let want = npy(&dir.join(file));
            let got = result
                .captured
                .iter()
                .find(|c| c.instruction_id == Some(iid as usize))
                .expect("captured")
                .tensors[0]
                .to_data();
            assert_eq!(
                (got.dtype, &got.shape),
                (want.dtype, &want.shape),
                "{} instruction {iid}",
                model.display()
            );
            assert_eq!(
                got.bytes,
                want.bytes,
                "{} instruction {iid} ({})",
                model.display(),
                node["target"]
            );
            nodes += 1;
        }
        let want = npy(&model.join("output_int8_cortex_m_python.npy"));
        assert_eq!(
            result.outputs[0].to_data().bytes,
            want.bytes,
            "{} final output",
            model.display()
        );
    }
    assert!(nodes >= 6, "only {nodes} nodes compared");
}

#[test]
fn a_delegate_is_reported_not_run() {
    let program = Program::parse(common::read(&common::tiny().join("model_fp32_xnnpack.pte")))
        .expect("program");
    let rt = Runtime::new(&program, 0, Target::default()).expect("prepares");
    let e = rt
        .run(&[npy(&common::tiny().join("input.npy"))], false)
        .expect_err("delegate");
    assert!(
        matches!(e, RuntimeError::Delegate { ref backend, instruction: 0 } if backend == "XnnpackBackend"),
        "{e}"
    );
}

#[test]
fn an_unknown_operator_is_named_with_its_instruction() {
    let mut bytes = common::read(&common::tiny().join("model_fp32.pte"));
    let at = bytes
        .windows(10)
        .position(|w| w == b"aten::relu")
        .expect("op name in the file");
    bytes[at + 6..at + 10].copy_from_slice(b"selu");
    let program = Program::parse(bytes).expect("still a valid program");
    let rt = Runtime::new(&program, 0, Target::default()).expect("prepares");
    let e = rt
        .run(&[npy(&common::tiny().join("input.npy"))], false)
        .expect_err("unknown op");
    assert!(
        matches!(e, RuntimeError::UnsupportedOp { ref op, instruction: 1 } if op == "aten::selu.out"),
        "{e}"
    );
    assert!(
        e.to_string().contains("aten::selu.out") && e.to_string().contains("instruction 1"),
        "{e}"
    );
}

#[test]
fn inputs_of_the_wrong_shape_or_count_are_refused() {
    let program =
        Program::parse(common::read(&common::tiny().join("model_fp32.pte"))).expect("program");
    let rt = Runtime::new(&program, 0, Target::default()).expect("prepares");
    let wrong = TensorData::new(
        etscope_core::ScalarType::Float,
        vec![1, 3, 4, 4],
        vec![0; 192],
    )
    .expect("tensor");
    let e = rt.run(&[wrong], false).expect_err("shape");
    assert!(
        e.to_string().contains("expected float32[1, 3, 8, 8]"),
        "{e}"
    );
    let e = rt.run(&[], false).expect_err("count");
    assert_eq!(e.to_string(), "the program takes 1 input(s), 0 given");
}

#[test]
fn one_prepared_plan_serves_many_runs() {
    let model = common::tiny();
    let program =
        Program::parse(common::read(&model.join("model_int8_cortex_m55.pte"))).expect("program");
    let rt = Runtime::new(&program, 0, Target::default()).expect("prepares");
    let input = npy(&model.join("input.npy"));
    let a = rt
        .run(std::slice::from_ref(&input), false)
        .expect("run 1")
        .outputs;
    let b = rt
        .run(std::slice::from_ref(&input), true)
        .expect("run 2")
        .outputs;
    assert_eq!(a, b);
}

#[test]
fn running_inside_the_memory_plan_gives_the_same_results_for_sound_plans() {
    for model in common::models() {
        for variant in [
            "model_fp32",
            "model_int8_qdq_portable",
            "model_int8_cortex_m55",
        ] {
            let program = Program::parse(common::read(&model.join(format!("{variant}.pte"))))
                .expect("program");
            let rt = Runtime::new(&program, 0, Target::default()).expect("prepares");
            let input = npy(&model.join("input.npy"));
            let apart = rt
                .run(std::slice::from_ref(&input), false)
                .expect("apart")
                .outputs;
            let planned = rt
                .run_with(
                    std::slice::from_ref(&input),
                    RunOptions {
                        in_arenas: true,
                        ..RunOptions::default()
                    },
                )
                .expect("in arenas")
                .outputs;
            assert_eq!(apart, planned, "{} {variant}", model.display());
        }
    }
}

#[test]
fn a_bad_placement_shows_up_as_corrupted_values_in_arena_runs() {
    // tiny fp32: permute_copy writes v22 (10240 bytes); put it where relu's output v20 (read
    // later by addmm through its view v21) lives, while v20 is still live
    let program =
        Program::parse(common::read(&common::tiny().join("model_fp32.pte"))).expect("program");
    let input = npy(&common::tiny().join("input.npy"));
    let good = Runtime::new(&program, 0, Target::default())
        .expect("prepares")
        .run(std::slice::from_ref(&input), false)
        .expect("run")
        .outputs;
    let mut rt = Runtime::new(&program, 0, Target::default()).expect("prepares");
    rt.override_placement(22, 1, 1024).expect("v22 is planned");
    let opts = RunOptions {
        in_arenas: true,
        ..RunOptions::default()
    };
    // v22 (10240 bytes at offset 1024) overwrites v20 while it is live: the run completes
    // with a different result
    let corrupted = rt
        .run_with(std::slice::from_ref(&input), opts)
        .expect("the run completes inside the arena")
        .outputs;
    assert_ne!(corrupted, good, "the overlap must corrupt the result");
    // the same placement with tensors kept apart changes nothing
    assert_eq!(
        rt.run(std::slice::from_ref(&input), false)
            .expect("apart")
            .outputs,
        good
    );
}

/// The M55 (Helium/MVE) quantize kernel and the scalar one differ on purpose-built inputs:
/// fused rounding of `x·(1/scale)`, and int16 wrap-around instead of saturation, on every full
/// block of 16 elements; the tail uses the scalar arithmetic on both.
#[test]
fn quantize_follows_the_target_core() {
    use etscope_core::kernels::cmsis::ops::quantize_block_mve as mve;
    // a product just above n + 0.5 that rounds to n + 0.5 in f32 first: the scalar kernel
    // rounds half to even (down), the fused multiply-add sees the excess (up)
    let (x, inv) = [0.025375547f32, 0.0037, 0.011, 0.047]
        .iter()
        .map(|&scale| 1.0f32 / scale)
        .flat_map(|inv| (0..40).map(move |n| (inv, n)))
        .flat_map(|(inv, n)| {
            let centre = ((n as f32 + 0.5) / inv).to_bits();
            (centre.saturating_sub(64)..centre + 64).map(move |b| (f32::from_bits(b), inv))
        })
        .find(|&(x, inv)| {
            let p = x * inv;
            p.fract() == 0.5 && f64::from(x) * f64::from(inv) > f64::from(p) && (p as i32) % 2 == 0
        })
        .expect("a tie created by rounding the product exists");
    let scalar = ((x * inv).round_ties_even()) as i32;
    assert_eq!(
        i32::from(mve(x, inv, 0, -128, 127)),
        scalar + 1,
        "fused rounding goes up on {x}"
    );

    // through the runtime on the real tiny Cortex-M program: element 0 of the quantize output
    let program = Program::parse(common::read(
        &common::tiny().join("model_int8_cortex_m55.pte"),
    ))
    .expect("program");
    let mut input = npy(&common::tiny().join("input.npy"));
    // x · (1/scale) ≈ 40000: past int8, inside the rounding trick's range, past int16 → wraps
    input.bytes[0..4].copy_from_slice(&1015.0f32.to_le_bytes());
    let m55 = Runtime::new(&program, 0, Target::CortexM55)
        .expect("m55")
        .run(std::slice::from_ref(&input), true)
        .expect("runs");
    let scalar = Runtime::new(&program, 0, Target::CortexMDsp)
        .expect("scalar")
        .run(std::slice::from_ref(&input), true)
        .expect("runs");
    let q =
        |r: &etscope_core::runtime::RunResult| r.captured[0].tensors[0].to_data().bytes[0] as i8;
    assert_eq!(q(&scalar), 127, "the scalar kernel saturates");
    assert_eq!(
        q(&m55),
        -128,
        "the MVE kernel narrows to int16 without saturating, then clamps"
    );
}

/// A program the `run` fuzz target once failed on (`fuzz/corpus/run/NAME`); it still parses.
fn fuzz_regression(name: &str) -> Program {
    let bytes = common::read(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fuzz/corpus/run/")
            .join(name),
    );
    Program::parse(bytes).expect("the mutated program still parses")
}

/// Runs plan 0 of `program` on zero inputs, as the `run` fuzz target does, and returns the
/// error it must stop with.
fn refused_on_zero_inputs(
    program: &Program,
    target: Target,
) -> etscope_core::runtime::RuntimeError {
    let rt = Runtime::new(program, 0, target).expect("prepares");
    let inputs = etscope_core::board_image::zero_inputs(program, 0);
    rt.run(&inputs, false).expect_err("refused")
}

/// Found by fuzzing (`run`): an input that broadcast to 83 million elements against a 16-element
/// out tensor was expanded before the size check (2.5 GB). Refused before expanding now.
#[test]
fn a_broadcast_larger_than_its_out_tensor_is_refused_before_it_is_computed() {
    let program = fuzz_regression("regression-oom-broadcast-1");
    let err = refused_on_zero_inputs(&program, Target::default());
    assert!(err.to_string().contains("the out tensor holds 16"), "{err}");
}

/// Found by fuzzing (`run`): a depthwise convolution whose `depth_multiplier` is near `i64::MAX`
/// overflowed `channels × multiplier` in the shape check. Refused as not fitting now; window
/// geometry (kernel, stride, padding, dilation) is bounded by `MAX_WINDOW_EXTENT` for the same
/// reason.
#[test]
fn a_huge_depth_multiplier_is_refused_not_overflowed() {
    let program = fuzz_regression("regression-depth-multiplier-overflow-1");
    let err = refused_on_zero_inputs(&program, Target::default());
    assert!(err.to_string().contains("do not fit"), "{err}");
}

/// A stride far beyond any network (2^40) in a real Cortex-M convolution is refused with the
/// argument named, before index arithmetic could overflow on it.
#[test]
fn window_geometry_beyond_the_kernels_limit_is_refused() {
    let dir = common::fixtures().join("ops/quantized_conv2d__k1_c17to19_clamp0to6__default__m55");
    let mut program = Program::parse(common::read(&dir.join("model.pte"))).expect("parses");
    let plan = &mut program.plans[0];
    let conv = plan.chains[0]
        .instructions
        .iter()
        .find_map(|i| match i {
            etscope_core::formats::pte::Instruction::KernelCall { op_index, args }
                if plan.operators[*op_index].name == "cortex_m::quantized_conv2d" =>
            {
                Some(args.clone())
            }
            _ => None,
        })
        .expect("a convolution");
    // argument 3 is the stride, an IntList of indices of Int values
    let etscope_core::formats::pte::EValue::IntList(items) = plan.values[conv[3]].clone() else {
        panic!("stride is an int list");
    };
    for k in items {
        plan.values[k as usize] = etscope_core::formats::pte::EValue::Int(1 << 40);
    }
    let err = refused_on_zero_inputs(&program, Target::default());
    assert!(err.to_string().contains("window geometry"), "{err}");
}

/// Found by fuzzing (`run`, a timeout): a depthwise kernel 50 million rows high and 0 wide was
/// charged 0 work (the product of its extents), yet its row loop ran 50 million times per
/// output element. Every loop extent now counts as at least 1, and the run stops at its budget.
#[test]
fn an_empty_but_tall_kernel_is_charged_for_its_loops() {
    let program = fuzz_regression("regression-timeout-empty-kernel-width-1");
    // refused by the work budget, not by a clock
    let err = refused_on_zero_inputs(&program, Target::CortexM55);
    assert!(err.to_string().contains("work budget"), "{err}");
}
