//! The cost model's multiply-accumulate counts against PyTorch's own: every committed model's
//! fp32 program, summed by operator, equals what `torch.utils.flop_counter` counts on the same
//! edge program (`macs.json`, written by `tests/fixtures/tools/count_macs.py`). A matrix
//! product counts its shared dimension once per output (`bmm` of [b, m, k] × [b, k, n]:
//! b·m·n·k), a convolution its weights per output channel.

mod common;

use std::collections::BTreeMap;

use etscope_core::analysis::cost::{estimate, Core, CostOptions};
use etscope_core::formats::pte::Program;

#[test]
fn every_models_macs_equal_pytorchs_count() {
    let mut checked = Vec::new();
    for folder in ["models", "diff_cases"] {
        let mut dirs: Vec<_> = std::fs::read_dir(common::fixtures().join(folder))
            .expect("fixtures")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join("macs.json").is_file())
            .collect();
        dirs.sort();
        for dir in dirs {
            let truth: serde_json::Value =
                serde_json::from_slice(&common::read(&dir.join("macs.json"))).expect("json");
            let truth: BTreeMap<String, u64> = truth["macs"]
                .as_object()
                .expect("macs")
                .iter()
                .map(|(k, v)| (k.clone(), v.as_u64().expect("count")))
                .collect();
            let program =
                Program::parse(common::read(&dir.join("model_fp32.pte"))).expect("program");
            let options = CostOptions::compute_only(Core::M4, 100.0);
            let e = estimate(&program, 0, options).expect("estimate");
            let mut ours: BTreeMap<String, u64> = BTreeMap::new();
            for r in e.rows.iter().filter(|r| r.macs > 0) {
                let base = r.op.split('.').next().unwrap_or(&r.op).to_string();
                *ours.entry(base).or_default() += r.macs;
            }
            assert_eq!(ours, truth, "{}: MACs by operator", dir.display());
            checked.push(dir);
        }
    }
    assert!(checked.len() >= 10, "{checked:?}");
}
