//! ETDumps and ETRecords attach to their own program and are refused by every other one, on
//! every reference model (real files only: each program with each other program's artifacts).

mod common;

use std::path::{Path, PathBuf};

use etscope_core::analysis::identity::{check_etdump, check_etrecord};
use etscope_core::formats::etdump::ETDump;
use etscope_core::formats::etrecord::ETRecord;
use etscope_core::formats::pte::Program;

/// (program, its ETDumps, its ETRecord) for every variant that has them.
fn sets(model: &Path) -> Vec<(PathBuf, Vec<PathBuf>, Option<PathBuf>)> {
    let f = |n: &str| Some(model.join(n)).filter(|p| p.exists());
    let dumps = |names: &[&str]| names.iter().filter_map(|n| f(n)).collect::<Vec<_>>();
    [
        (
            "model_fp32.pte",
            dumps(&["etdump.etdp", "etdump_profile_5runs.etdp"]),
            "model_fp32.etrecord",
        ),
        (
            "model_int8_qdq_portable.pte",
            dumps(&["etdump_int8_qdq.etdp"]),
            "model_int8_qdq_portable.etrecord",
        ),
        (
            "model_fp32_xnnpack.pte",
            dumps(&["etdump_xnnpack.etdp"]),
            "model_fp32_xnnpack.etrecord",
        ),
        (
            "model_int8_cortex_m55.pte",
            Vec::new(),
            "model_int8_cortex_m55.etrecord",
        ),
        (
            "model_int8_cortex_m55_default.pte",
            Vec::new(),
            "model_int8_cortex_m55_default.etrecord",
        ),
    ]
    .into_iter()
    .filter_map(|(p, d, r)| Some((f(p)?, d, f(r))))
    .collect()
}

fn program(p: &Path) -> Program {
    Program::parse(common::read(p)).expect("program")
}

#[test]
fn own_artifacts_attach_and_others_are_refused() {
    let (mut own, mut refused) = (0, 0);
    let all: Vec<_> = common::models().iter().flat_map(|m| sets(m)).collect();
    for (pte, _, _) in &all {
        let prog = program(pte);
        for (other, dumps, record) in &all {
            let same = other == pte;
            for d in dumps {
                let dump = ETDump::parse(&common::read(d)).expect("etdump");
                let verdict = check_etdump(&prog, 0, &dump);
                if same {
                    verdict
                        .unwrap_or_else(|e| panic!("{}: own {}: {e}", pte.display(), d.display()));
                    own += 1;
                } else if verdict.is_err() {
                    refused += 1;
                } else {
                    // only programs that run the very same kernels in the same order can take
                    // each other's profiles (none among the reference variants)
                    panic!("{} accepted {}", pte.display(), d.display());
                }
            }
            if let Some(r) = record {
                let rec = ETRecord::parse(&common::read(r)).expect("etrecord");
                let verdict = check_etrecord(&prog, 0, &rec);
                if same {
                    verdict
                        .unwrap_or_else(|e| panic!("{}: own {}: {e}", pte.display(), r.display()));
                    own += 1;
                } else if verdict.is_err() {
                    refused += 1;
                } else {
                    // an ETRecord says less: variants of one model with the same instruction
                    // kinds and inputs cannot be told apart by it
                    assert_eq!(
                        pte.parent(),
                        r.parent(),
                        "{} accepted another model's {}",
                        pte.display(),
                        r.display()
                    );
                }
            }
        }
    }
    assert!(own >= 5, "own {own}");
    assert!(refused >= 5, "refused {refused}");
}

#[test]
fn the_reason_names_what_contradicts() {
    let tiny = common::tiny();
    let cortex = program(&tiny.join("model_int8_cortex_m55.pte"));
    let xnn = ETDump::parse(&common::read(&tiny.join("etdump_xnnpack.etdp"))).expect("etdump");
    let e = check_etdump(&cortex, 0, &xnn)
        .expect_err("refused")
        .to_string();
    assert!(
        e.contains("delegate") && e.contains("another program"),
        "{e}"
    );
    let fp32 = ETDump::parse(&common::read(&tiny.join("etdump.etdp"))).expect("etdump");
    let e = check_etdump(&cortex, 0, &fp32)
        .expect_err("refused")
        .to_string();
    assert!(e.contains("instruction 0") && e.contains("float32"), "{e}");
}

/// Three models of one input shape (1×3×16×16), each lowered in both Cortex-M flows: each
/// program takes its own ETRecord and refuses the others', whose debug handles name other
/// operators for its kernel calls (before, an ETRecord of another model with the same input
/// and enough instructions was taken, and the diff blamed the whole network).
#[test]
fn an_etrecord_of_another_model_with_the_same_input_is_refused_by_its_operators() {
    let models = ["inception", "resnet", "unet"];
    let flows = ["default", "explicit"];
    let path = |m: &str, f: &str, ext: &str| {
        common::fixtures()
            .join("models")
            .join(m)
            .join(format!("model_int8_cortex_m55_{f}.{ext}"))
    };
    let mut refused_by_operators = 0;
    for m in models {
        for f in flows {
            let prog = program(&path(m, f, "pte"));
            for other in models {
                let rec =
                    ETRecord::parse(&common::read(&path(other, f, "etrecord"))).expect("etrecord");
                let verdict = check_etrecord(&prog, 0, &rec);
                if other == m {
                    verdict.unwrap_or_else(|e| panic!("{m} {f}: its own ETRecord: {e}"));
                } else {
                    let e = verdict.expect_err(&format!("{m} {f} took {other}'s ETRecord"));
                    if e.to_string()
                        .contains("name another operator or output size")
                    {
                        refused_by_operators += 1;
                    }
                }
            }
        }
    }
    assert!(refused_by_operators > 0, "the operator check refused none");
}
