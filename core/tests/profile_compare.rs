//! Two captures compared operator by operator, on real captures: two exports of the DS-CNN
//! (ExecuTorch's explicit-layout and default Cortex-M flows, other programs, other
//! instructions) recorded on the emulated Cortex-M55, matched through their ETRecords; and two
//! captures of one fp32 program by ExecuTorch's own runtime (5 plain runs, one run logging its
//! intermediate outputs). Fixtures: tests/fixtures/captures/README.md.

use std::path::{Path, PathBuf};

use etscope_core::analysis::cost::measured::{measured_vs_estimate, CaptureMachine};
use etscope_core::analysis::cost::{estimate, Core, CostOptions};
use etscope_core::analysis::diff_sources::program_graph;
use etscope_core::analysis::profile::{profile, Profile};
use etscope_core::analysis::profile_compare::{compare, CaptureSide, MatchedBy};
use etscope_core::formats::etdump::ETDump;
use etscope_core::formats::etrecord::ETRecord;
use etscope_core::formats::pte::Program;
use etscope_core::ir::Graph;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(rel: &str) -> Vec<u8> {
    std::fs::read(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// A program's graph (with its ETRecord's debug handles when given) and a capture's profile.
fn side(pte: &str, etrecord: Option<&str>, etdump: &str) -> (Graph, Profile) {
    let program = Program::parse(read(pte)).expect("program");
    let record = etrecord.map(|r| ETRecord::parse(&read(r)).expect("etrecord"));
    let graph = program_graph(&program, record.as_ref()).expect("graph");
    let dump = ETDump::parse(&read(etdump)).expect("etdump");
    let prof = profile(&dump, Some(&program.instruction_ops(0)));
    (graph, prof)
}

#[test]
fn two_exports_of_one_model_match_operator_for_operator_through_their_etrecords() {
    let (ga, pa) = side(
        "assets/ds_cnn_kws/model_int8_cortex_m55.pte",
        Some("assets/ds_cnn_kws/model_int8_cortex_m55.etrecord"),
        "tests/fixtures/captures/ds_cnn_m55_explicit_board.etdp",
    );
    let (gb, pb) = side(
        "assets/ds_cnn_kws/model_int8_cortex_m55_default.pte",
        Some("assets/ds_cnn_kws/model_int8_cortex_m55_default.etrecord"),
        "tests/fixtures/captures/ds_cnn_m55_default_board.etdp",
    );
    // saved board captures hold nanoseconds
    let c = compare(
        CaptureSide {
            profile: &pa,
            graph: Some(&ga),
            ticks_per_us: Some(1000.0),
        },
        CaptureSide {
            profile: &pb,
            graph: Some(&gb),
            ticks_per_us: Some(1000.0),
        },
    )
    .expect("compare");
    assert_eq!(c.matched(), pa.rows.len(), "every operator of A matched");
    let by_handles = c
        .rows
        .iter()
        .filter(|r| r.matched_by == Some(MatchedBy::DebugHandles))
        .count();
    assert!(
        by_handles >= pa.rows.len() - 1,
        "{by_handles} of {} by debug handle",
        pa.rows.len()
    );
    for r in &c.rows {
        let (a, b) = (r.a.as_ref().expect("a"), r.b.as_ref().expect("b"));
        // both flows call the same kernel for each operator, so on the emulated board each
        // matched pair runs the same instructions: a wrong pairing (the first depthwise, 365 ms,
        // with a later one, 109 ms) could not pass this
        assert!(
            (b.p50 / a.p50 - 1.0).abs() < 0.001,
            "{} (A {} / B {}): {} vs {}",
            r.op,
            a.instruction_id,
            b.instruction_id,
            a.p50,
            b.p50
        );
        assert_eq!(a.count, 10);
    }
}

#[test]
fn a_second_capture_of_one_program_is_matched_by_instruction_and_gated() {
    let (_, pa) = side(
        "assets/ds_cnn_kws/model_fp32.pte",
        None,
        "assets/ds_cnn_kws/etdump_profile_5runs.etdp",
    );
    let (_, pb) = side(
        "assets/ds_cnn_kws/model_fp32.pte",
        None,
        "tests/fixtures/captures/ds_cnn_fp32_host_debug.etdp",
    );
    let s = |p| CaptureSide {
        profile: p,
        graph: None,
        ticks_per_us: Some(1000.0),
    };
    let c = compare(s(&pa), s(&pb)).expect("compare");
    assert_eq!(c.matched(), 31);
    assert!(c
        .rows
        .iter()
        .all(|r| r.matched_by == Some(MatchedBy::Instruction)));
    // sorted by impact: the largest absolute change first
    assert!(c
        .rows
        .windows(2)
        .all(|w| w[0].impact.abs() >= w[1].impact.abs()));
    // logging every output makes the short operators several times slower; the convolutions,
    // 99% of the time, move by less than 10%
    let small = c.regressions(0.5, 0.0);
    assert!(small.iter().all(|r| !r.op.contains("convolution")));
    assert!(small.len() > 10, "{}", small.len());
    assert!(c.regressions(0.25, 0.01).is_empty());
    let gated = c.regressions(0.05, 0.01);
    assert!(!gated.is_empty() && gated.iter().all(|r| r.op.contains("convolution")));
    assert_eq!(c.rows[0].a.as_ref().map(|a| a.series.len()), Some(5));
}

#[test]
fn a_capture_is_set_against_the_estimate_only_as_the_part_it_models() {
    let pte = "assets/ds_cnn_kws/model_int8_cortex_m55.pte";
    let program = Program::parse(read(pte)).expect("program");
    let (_, prof) = side(
        pte,
        None,
        "tests/fixtures/captures/ds_cnn_m55_explicit_board.etdp",
    );
    let est = estimate(&program, 0, CostOptions::compute_only(Core::M55, 32.0)).expect("estimate");
    // the emulator's instruction counts are not the part's cycles: refused, saying so
    let qemu = CaptureMachine::declared(Some("cortex-m55 (emulated)"), true);
    let why = measured_vs_estimate(&prof, &qemu, &est, Some(1000.0), 2.0).expect_err("unlike");
    assert!(why.0.contains("instruction counts"), "{why}");
    // the same events as a Cortex-M55 part's capture: one typical ratio, outliers around it
    let part = CaptureMachine::declared(Some("Cortex-M55"), false);
    let m = measured_vs_estimate(&prof, &part, &est, Some(1000.0), 2.0).expect("same machine");
    assert!(m.measured_in_us);
    assert_eq!(m.rows.len(), prof.rows.len());
    assert!(m.rows.iter().all(|r| r.estimated_us.is_some()));
    let median = m.median_ratio.expect("median");
    for r in &m.rows {
        let rel = r.relative.expect("relative");
        assert!((rel - r.ratio.expect("ratio") / median).abs() < 1e-9);
        assert_eq!(r.outlier, !(0.5..=2.0).contains(&rel), "{}", r.op);
    }
}
