//! ExecuTorch's portable kernels, operator by operator: one program per case made by
//! ExecuTorch's own exporter (`tests/fixtures/tools/make_portable_ops.py`), run on the host and
//! compared with what ExecuTorch's own runtime computed on the same inputs, bit for bit: the
//! kernels' float32 operations in their order (a convolution's bias after its products, a
//! floor division through `fmod`), the C library's functions as glibc computes them. The coverage of
//! `kernels/portable/functions.yaml` that `docs/compatibility.md` states is counted here.

mod common;

use std::path::{Path, PathBuf};

use common::{npy, numbered};

use etscope_core::formats::pte::Program;
use etscope_core::kernels::libm::Libm;
use etscope_core::runtime::{Runtime, Target};
use etscope_core::tensor::TensorData;

fn root() -> PathBuf {
    common::fixtures().join("portable_ops")
}

#[test]
fn every_portable_operator_case_computes_what_executorchs_runtime_computes() {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(root())
        .expect("portable_ops")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("model.pte").exists())
        .collect();
    cases.sort();
    assert!(cases.len() >= 50, "{} cases", cases.len());
    let mut failures = Vec::new();
    for dir in &cases {
        let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("?");
        let program = Program::parse(common::read(&dir.join("model.pte"))).expect("parses");
        let inputs: Vec<TensorData> = numbered(dir, "input").iter().map(|p| npy(p)).collect();
        let run =
            // the expected outputs are ExecuTorch's x86 runtime's: its C library is the host's
            Runtime::new(&program, 0, Target::default()).and_then(|mut rt| {
                rt.set_libm(Libm::Glibc);
                rt.run(&inputs, false)
            });
        let run = match run {
            Ok(r) => r,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let want = numbered(dir, "output");
        if run.outputs.len() != want.len() {
            failures.push(format!(
                "{name}: {} outputs, ExecuTorch {}",
                run.outputs.len(),
                want.len()
            ));
            continue;
        }
        for (k, (got, w)) in run.outputs.iter().zip(&want).enumerate() {
            let (got, w) = (got.to_data(), npy(w));
            if (got.dtype, &got.shape) != (w.dtype, &w.shape) {
                failures.push(format!(
                    "{name} output {k}: {:?}{:?}, ExecuTorch {:?}{:?}",
                    got.dtype, got.shape, w.dtype, w.shape
                ));
                continue;
            }
            let (g, e) = (got.to_f64().expect("numeric"), w.to_f64().expect("numeric"));
            // bit for bit: the same float32 operations in the same order, the C library's
            // functions as glibc computes them (NaN payloads aside)
            for (i, (a, b)) in g.iter().zip(&e).enumerate() {
                let same = (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits();
                if !same {
                    failures.push(format!(
                        "{name} output {k} element {i}: {a} vs ExecuTorch's {b}"
                    ));
                    break;
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// The overloads of ExecuTorch 1.5.1's portable `functions.yaml` the host runtime executes.
fn coverage() -> (Vec<String>, Vec<String>) {
    let list = std::fs::read_to_string(root().join("functions.txt")).expect("functions.txt");
    let (mut covered, mut missing) = (Vec::new(), Vec::new());
    for line in list.lines().filter(|l| !l.is_empty()) {
        let qualified = line.trim_end_matches('.');
        if etscope_core::runtime::supports(qualified) {
            covered.push(line.to_string());
        } else {
            missing.push(line.to_string());
        }
    }
    (covered, missing)
}

/// `docs/compatibility.md` states the coverage this registry has, not another.
#[test]
fn the_documented_portable_coverage_is_the_registrys() {
    let (covered, missing) = coverage();
    let total = covered.len() + missing.len();
    assert_eq!(total, 209, "ExecuTorch 1.5.1's portable library");
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/compatibility.md"),
    )
    .expect("docs/compatibility.md");
    let claim = format!("{} of {total}", covered.len());
    assert!(
        doc.contains(&claim),
        "docs/compatibility.md should say \"{claim}\" portable overloads; missing: {missing:?}"
    );
    for m in &missing {
        assert!(
            doc.contains(&format!("`{m}`")),
            "docs/compatibility.md should list {m} as not run"
        );
    }
}

/// `docs/compatibility.md` lists, under "On the emulated board", exactly the operators the
/// registry says the board firmware runs (`OpDef::board`), with their count.
#[test]
fn the_documented_board_operators_are_the_registrys() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/compatibility.md"),
    )
    .expect("docs/compatibility.md");
    let section = doc
        .split("\n## On the emulated board")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("an \"On the emulated board\" section");
    let table = section
        .split("Portable operators the board does not run yet")
        .next()
        .unwrap_or(section);
    let on_board: Vec<&str> = etscope_core::ops::all()
        .iter()
        .filter(|d| d.board.is_some())
        .map(|d| d.name)
        .collect();
    let portable: std::collections::BTreeSet<&str> = on_board
        .iter()
        .copied()
        .filter(|n| !n.starts_with("cortex_m::"))
        .collect();
    for name in &portable {
        assert!(
            table.contains(&format!("`{name}`")),
            "the board section should list `{name}`"
        );
    }
    let listed = table.matches("`aten::").count()
        + table.matches("`dim_order_ops::").count()
        + table.matches("`executorch_prim::").count()
        + table.matches("`quantized_decomposed::").count();
    assert_eq!(
        listed,
        portable.len(),
        "the board section lists operators the board does not run"
    );
    assert!(table.contains(&format!("**{} portable operators**", portable.len())));
    let cortex_m = on_board
        .iter()
        .filter(|n| n.starts_with("cortex_m::"))
        .count();
    assert!(table.contains(&format!("**All {cortex_m} `cortex_m::` operators**")));
}
