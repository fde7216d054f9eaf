//! Models the reference set lacks, made by ExecuTorch 1.5.1's exporter
//! (`tests/fixtures/tools/make_models.py`): a 1-D convolutional audio model with a GRU, a U-Net
//! with upsampling and concatenation, a transformer block, an embedding model, a residual
//! network. Each fp32 program runs on the host within 1e-5 of ExecuTorch's runtime; each
//! Cortex-M program (default and explicit-layout flow, M55) runs, shows no divergence against its
//! fp32 program, and a negated op is found.

mod common;

use std::path::PathBuf;

use etscope_core::analysis::diff::{diff, Threshold};
use etscope_core::analysis::diff_sources::program_source;
use etscope_core::analysis::fault::{break_op, weighted};
use etscope_core::formats::etrecord::ETRecord;
use etscope_core::formats::npy::read_npy;
use etscope_core::formats::pte::Program;
use etscope_core::kernels::libm::Libm;
use etscope_core::runtime::{Runtime, Target};

fn dir(name: &str) -> PathBuf {
    common::fixtures().join("models").join(name)
}

/// Bit for bit, with ExecuTorch's x86 C library (glibc); the transformer's `native_layer_norm`
/// ran as the wheel's optimized kernel, which at this width calls the portable arithmetic.
#[test]
fn fp32_programs_compute_what_executorchs_runtime_computes() {
    for name in common::MADE_MODELS {
        let d = dir(name);
        let program = Program::parse(common::read(&d.join("model_fp32.pte"))).expect("program");
        let input = read_npy(&common::read(&d.join("input.npy"))).expect("input");
        let want = read_npy(&common::read(&d.join("output_et_fp32.npy"))).expect("output");
        let mut rt = Runtime::new(&program, 0, Target::default()).expect("prepares");
        rt.set_libm(Libm::Glibc);
        let got = rt
            .run(&[input], false)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .outputs[0]
            .to_data();
        assert_eq!((&got.shape, got.dtype), (&want.shape, want.dtype), "{name}");
        assert_eq!(
            got.bytes,
            want.bytes,
            "{name}: differs from ExecuTorch's runtime (its wheel ran {:?} with optimized kernels)",
            common::optimized_in_the_x86_wheel(&program)
        );
    }
}

#[test]
fn cortex_m_programs_show_no_divergence_and_a_negated_op_is_found() {
    let mut checked = 0;
    for name in common::MADE_MODELS {
        let d = dir(name);
        // both flows: the explicit one's `_nhwc` operators compute in NHWC between layout
        // permutes, and the diff reads each tensor's layout from the program
        for variant in [
            "model_int8_cortex_m55_default",
            "model_int8_cortex_m55_explicit",
        ] {
            let int8 = d.join(format!("{variant}.pte"));
            if !int8.exists() {
                // ExecuTorch 1.5.1's Cortex-M backend cannot lower it (case.json says why)
                continue;
            }
            let input = read_npy(&common::read(&d.join("input.npy"))).expect("input");
            let source = |variant: &str, bytes: Vec<u8>| {
                let program = Program::parse(bytes).expect("program");
                let rec = ETRecord::parse(&common::read(&d.join(format!("{variant}.etrecord"))))
                    .expect("etrecord");
                program_source(
                    variant,
                    &program,
                    Some((&rec, variant)),
                    std::slice::from_ref(&input),
                )
                .unwrap_or_else(|e| panic!("{name} {variant}: {e}"))
            };
            let fp32 = source("model_fp32", common::read(&d.join("model_fp32.pte")));
            let bytes = common::read(&int8);
            let q = source(variant, bytes.clone());
            let report = diff(&fp32, &q, Threshold::default()).expect("comparable");
            assert_eq!(
                report.first_divergence, None,
                "{name} {variant}: {:?}",
                report.rows
            );
            // the last weighted op's weights negated: the diff names it
            let program = Program::parse(bytes).expect("program");
            let op = weighted(&program).last().cloned().expect("a weighted op");
            let broken = source(variant, break_op(&program, op.instruction).expect("breaks"));
            let report = diff(&fp32, &broken, Threshold::default()).expect("comparable");
            let first = report
                .first_divergence
                .unwrap_or_else(|| panic!("{name} {variant}: the negated {} was not found", op.op));
            assert!(
                report.rows[first].b_instructions.contains(&op.instruction),
                "{name} {variant}: negated instruction {}, first divergence {:?}",
                op.instruction,
                report.rows[first].b_instructions
            );
            checked += 1;
        }
    }
    assert!(
        checked >= 6,
        "{checked} Cortex-M programs of the made models"
    );
}
