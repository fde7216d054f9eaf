//! The diff compares quantities, not positions: on models made for it by ExecuTorch 1.5.1's
//! exporter (`tests/fixtures/tools/make_diff_cases.py`: a U-Net of double-convolution blocks with
//! batch norms and a functional sigmoid head, residual blocks sharing one ReLU6 module, an
//! encoder–decoder joined by `add` after a float upsample, an MLP of fused and tabulated
//! activations), each in both Cortex-M lowering flows for the M55 and the M4:
//! - the correct int8 program shows no divergence against its fp32 program;
//! - every weighted op broken on purpose — weights and bias negated, or requantization
//!   multipliers halved (instruction ids unchanged) — is the first divergence, at its own row.
//!
//! `cargo test -p etscope-core --test diff_cases -- --nocapture` prints the table in
//! `docs/diff.md`.

mod common;

use std::path::{Path, PathBuf};

use etscope_core::analysis::diff::{diff, DiffReport, Source, Threshold};
use etscope_core::analysis::diff_sources::program_source;
use etscope_core::analysis::fault::{break_op, scale_requantization, weighted};
use etscope_core::formats::etrecord::ETRecord;
use etscope_core::formats::npy::read_npy;
use etscope_core::formats::pte::Program;

const CASES: [&str; 7] = [
    "unet_bn",
    "resid_shared",
    "encdec_add",
    "mlp_acts",
    "resid_bn",
    "kws1d_bn",
    "hswish_se",
];
const VARIANTS: [&str; 4] = [
    "model_int8_m55_default",
    "model_int8_m55_explicit",
    "model_int8_m4_default",
    "model_int8_m4_explicit",
];

fn dir(case: &str) -> PathBuf {
    common::fixtures().join("diff_cases").join(case)
}

/// `variant`'s program from `bytes` run on the case's input, its ETRecord attached.
fn source(case: &Path, variant: &str, bytes: Vec<u8>) -> Source {
    let program = Program::parse(bytes).expect("program");
    let rec = ETRecord::parse(&common::read(&case.join(format!("{variant}.etrecord"))))
        .expect("etrecord");
    let input = read_npy(&common::read(&case.join("input.npy"))).expect("input");
    program_source(variant, &program, Some((&rec, variant)), &[input]).expect("runs")
}

fn rows_of(report: &DiffReport) -> Vec<String> {
    report
        .rows
        .iter()
        .map(|r| {
            format!(
                "{:?} B{:?} {:?} {:?} snr {:?} in {:?} {:?}",
                r.module,
                r.b_instructions,
                r.a_ops,
                r.b_ops,
                r.metrics.map(|m| m.snr_db),
                r.snr_in_db,
                r.note
            )
        })
        .collect()
}

/// The row holding `instruction` is the first divergence, and is compared.
fn found_at_its_row(label: &str, report: &DiffReport, instruction: usize) {
    let holder = report
        .rows
        .iter()
        .position(|r| r.b_instructions.contains(&instruction))
        .unwrap_or_else(|| {
            panic!(
                "{label}: instruction {instruction} in no row: {:#?}",
                rows_of(report)
            )
        });
    assert!(
        report.rows[holder].metrics.is_some(),
        "{label}: the row of instruction {instruction} is not compared: {:?}",
        report.rows[holder].note
    );
    assert_eq!(
        report.first_divergence,
        Some(holder),
        "{label}: first divergence {:?}, the broken op's row {holder}: {:#?}",
        report.first_divergence,
        rows_of(report)
    );
}

#[test]
fn correct_programs_are_clean_and_every_broken_op_is_found_at_its_own_row() {
    let mut table = vec![
        "| model | program | groups | correct program | ops negated, found at their row | multipliers halved, found at their row |".to_string(),
        "|---|---|---|---|---|---|".to_string(),
    ];
    let mut checked = 0;
    for case in CASES {
        let d = dir(case);
        let a = source(&d, "model_fp32", common::read(&d.join("model_fp32.pte")));
        for variant in VARIANTS {
            let label = format!("{case} {variant}");
            let bytes = common::read(&d.join(format!("{variant}.pte")));
            let b = source(&d, variant, bytes.clone());
            let report = diff(&a, &b, Threshold::default()).expect("comparable");
            assert_eq!(report.matched_by, "quantity", "{label}");
            assert_eq!(
                report.first_divergence,
                None,
                "{label}: a correct program diverges: {:#?}",
                rows_of(&report)
            );
            let program = Program::parse(bytes).expect("program");
            let ops = weighted(&program);
            assert!(ops.len() >= 3, "{label}: {} weighted ops", ops.len());
            let (mut negated, mut halved, mut halvable, mut below) = (0, 0, 0, 0);
            // the broken copy diffed against the fp32 program: its op's row is the first
            // divergence
            let check = |broken: Vec<u8>, what: &str, instruction: usize| {
                let report = diff(&a, &source(&d, variant, broken), Threshold::default())
                    .expect("comparable");
                found_at_its_row(&format!("{label}, {what}"), &report, instruction);
            };
            for op in &ops {
                let broken = break_op(&program, op.instruction).expect("breaks");
                check(
                    broken,
                    &format!("{} {} negated", op.instruction, op.op),
                    op.instruction,
                );
                negated += 1;
                // a linear layer's multipliers are an int[] in the value table: refused
                let Ok(scaled) = scale_requantization(&program, op.instruction, 0.5) else {
                    continue;
                };
                halvable += 1;
                let what = format!("{label}, {} {} multipliers halved", op.instruction, op.op);
                let report = diff(&a, &source(&d, variant, scaled), Threshold::default())
                    .expect("comparable");
                if report.first_divergence.is_none() {
                    // a gate's logits halved before a hardsigmoid: an error, but not one the
                    // rule calls a divergence (SNR < 20 dB and a 10 dB loss); its own row
                    // shows it, and no row is blamed
                    let own = report
                        .rows
                        .iter()
                        .find(|r| r.b_instructions.contains(&op.instruction))
                        .and_then(|r| r.metrics)
                        .map(|m| m.snr_db)
                        .unwrap_or(f64::INFINITY);
                    assert!(own < 40.0, "{what}: not found and not visible ({own} dB)");
                    below += 1;
                    continue;
                }
                found_at_its_row(&what, &report, op.instruction);
                halved += 1;
            }
            table.push(format!(
                "| {case} | {} | {} | no divergence | {negated} of {} | {} |",
                variant.trim_start_matches("model_int8_"),
                report.rows.len(),
                ops.len(),
                if halvable == 0 {
                    "— (int[] multipliers)".to_string()
                } else {
                    if below > 0 {
                        format!("{halved} of {halvable} ({below} below the divergence threshold, visible at its own row)")
                    } else {
                        format!("{halved} of {halvable}")
                    }
                }
            ));
            checked += 1;
        }
    }
    assert_eq!(checked, 28);
    println!("{}", table.join("\n"));
}

#[test]
fn a_fused_activation_is_compared_after_itself_on_both_sides() {
    // the U-Net's blocks end in a ReLU module the int8 program folds into the convolution
    // before it: each group's fp32 side ends at that ReLU, never at the batch norm before it
    let d = dir("unet_bn");
    let a = source(&d, "model_fp32", common::read(&d.join("model_fp32.pte")));
    for variant in ["model_int8_m55_explicit", "model_int8_m4_default"] {
        let b = source(&d, variant, common::read(&d.join(format!("{variant}.pte"))));
        let report = diff(&a, &b, Threshold::default()).expect("comparable");
        let mut convs = 0;
        for row in &report.rows {
            if row.b_ops.iter().any(|o| o.contains("quantized_conv2d"))
                && row.a_ops.iter().any(|o| o.contains("batch_norm"))
            {
                assert_eq!(
                    row.a_ops.last().map(String::as_str),
                    Some("aten::relu.out"),
                    "{variant}: {row:?}"
                );
                convs += 1;
            }
        }
        assert_eq!(convs, 6, "{variant}: {:#?}", rows_of(&report));
        // the functional sigmoid after the head is its own row: head against head, sigmoid
        // against the lookup table
        let sigmoid = report
            .rows
            .iter()
            .find(|r| r.a_ops.iter().any(|o| o.contains("sigmoid")))
            .expect("a sigmoid row");
        assert!(
            sigmoid
                .b_ops
                .iter()
                .any(|o| o.contains("quantized_activation"))
                && !sigmoid.a_ops.iter().any(|o| o.contains("convolution")),
            "{variant}: {sigmoid:?}"
        );
    }
}

/// Without ETRecords, the quantities come from the programs' structure
/// (`ir::quantity_structure`): every correct program is still clean; a row whose int8 tensor has
/// no scale its program states says so instead of an SNR; every broken op whose row is compared
/// is the first divergence at that row; one whose row cannot be compared is found at a compared
/// row after it, or — when what follows hides it (a sigmoid head) — not at all, and is counted:
/// never placed before its row.
#[test]
fn without_etrecords_correct_programs_are_clean_and_faults_are_never_placed_early() {
    let plain = |d: &Path, variant: &str, bytes: Vec<u8>| {
        let program = Program::parse(bytes).expect("program");
        let input = read_npy(&common::read(&d.join("input.npy"))).expect("input");
        program_source(variant, &program, None, &[input]).expect("runs")
    };
    let (mut own_row, mut later_row, mut unseen, mut faults) = (0, 0, 0, 0);
    for case in CASES {
        let d = dir(case);
        let a = plain(&d, "model_fp32", common::read(&d.join("model_fp32.pte")));
        for variant in VARIANTS {
            let label = format!("{case} {variant} without ETRecords");
            let bytes = common::read(&d.join(format!("{variant}.pte")));
            let report = diff(&a, &plain(&d, variant, bytes.clone()), Threshold::default())
                .expect("matched");
            assert_eq!(report.matched_by, "structure", "{label}");
            assert_eq!(
                report.first_divergence,
                None,
                "{label}: {:#?}",
                rows_of(&report)
            );
            for r in report.rows.iter().filter(|r| r.metrics.is_none()) {
                assert!(
                    r.note
                        .as_deref()
                        .is_some_and(|n| n.contains("states no scale")),
                    "{label}: a row neither compared nor saying why: {r:?}"
                );
            }
            let program = Program::parse(bytes).expect("program");
            for op in weighted(&program) {
                faults += 1;
                let broken = break_op(&program, op.instruction).expect("breaks");
                let report =
                    diff(&a, &plain(&d, variant, broken), Threshold::default()).expect("matched");
                let what = format!("{label}, {} {} negated", op.instruction, op.op);
                let own = report
                    .rows
                    .iter()
                    .position(|r| r.b_instructions.contains(&op.instruction))
                    .unwrap_or_else(|| panic!("{what}: in no row: {:#?}", rows_of(&report)));
                let compared = report.rows[own].metrics.is_some();
                match report.first_divergence {
                    Some(first) if compared => {
                        assert_eq!(first, own, "{what}: {:#?}", rows_of(&report));
                        own_row += 1;
                    }
                    Some(first) => {
                        assert!(first > own, "{what}: placed early: {:#?}", rows_of(&report));
                        later_row += 1;
                    }
                    None => {
                        assert!(
                            !compared,
                            "{what}: missed at its compared row: {:#?}",
                            rows_of(&report)
                        );
                        unseen += 1;
                    }
                }
            }
        }
    }
    println!("without ETRecords: {own_row} faults at their own row, {later_row} at a compared row after it, {unseen} hidden by what follows their uncompared row");
    assert_eq!(own_row + later_row + unseen, faults);
    assert!(own_row > 0 && later_row > 0);
}

/// Every int8 program against its own ETRecord's edge stage shows no divergence, in both flows
/// for the M55 and the M4: where one handle covers a pattern of several edge nodes that becomes
/// several calls (a convolution, a minimum and a multiply for a hardswish), the first call takes
/// the pattern's first quantized tensor and the last call its last (`Graph::inherit_quant`).
#[test]
fn every_int8_program_equals_its_own_edge_stage() {
    use etscope_core::analysis::diff_sources::stage_source_cancellable;
    use etscope_core::runtime::Device;
    // `hswish_se` too: its fp32 program decomposes hardswish, so fp32-vs-int8 rows are coarse
    // there (docs/diff.md), but against its own edge stage every pattern is one row
    for case in CASES {
        let d = dir(case);
        let input = read_npy(&common::read(&d.join("input.npy"))).expect("input");
        for variant in VARIANTS {
            let label = format!("{case} {variant}");
            let rec = ETRecord::parse(&common::read(&d.join(format!("{variant}.etrecord"))))
                .expect("etrecord");
            let program =
                Program::parse(common::read(&d.join(format!("{variant}.pte")))).expect("program");
            let device = Device {
                target: etscope_core::runtime::Target::for_program(&program, 0),
                ..Device::default()
            };
            let a = stage_source_cancellable(
                "edge",
                &rec,
                variant,
                "edge",
                std::slice::from_ref(&input),
                device,
                None,
            )
            .expect("the stage runs");
            let b = source(&d, variant, common::read(&d.join(format!("{variant}.pte"))));
            let report = diff(&a, &b, Threshold::default()).expect("comparable");
            assert_eq!(
                report.first_divergence,
                None,
                "{label}: {:#?}",
                rows_of(&report)
            );
        }
    }
}
