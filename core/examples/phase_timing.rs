//! Times each phase of opening a large program (development aid; the benchmark is `benches/foundation.rs`).
use std::time::Instant;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
fn main() {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "../shared/reference/stress_large/model_fp32.pte".into());
    let pte = std::fs::read(&path).expect("readable file");
    for _ in 0..3 {
        let t = Instant::now();
        let p = etscope_core::formats::pte::Program::parse(pte.clone()).expect("parses");
        let t1 = t.elapsed();
        let g = etscope_core::ir::from_pte::graph_from_plan(&p, 0).expect("plan 0");
        let t2 = t.elapsed();
        let m = etscope_core::plan::derive(&g);
        let t3 = t.elapsed();
        let frames: usize = p.plans[0].chains[0].stacktrace.iter().map(Vec::len).sum();
        println!(
            "parse {:?} graph {:?} memory {:?}; {} findings, {frames} stack frames",
            t1,
            t2 - t1,
            t3 - t2,
            m.findings.len()
        );
    }
}
