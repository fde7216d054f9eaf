//! Planning benchmark (release): every planner on `stress_large/model_fp32.pte` (55,901 values),
//! each next to deriving the program's own plan (lifetimes) in the same run, so the figures say
//! what planning costs over reading the plan. Medians over enough runs to fill about 2 s.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use etscope_core::formats::pte::Program;
use etscope_core::ir::from_pte::graph_from_plan;
use etscope_core::plan::{alternatives, best_fit, derive, executorch};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn median<T>(mut f: impl FnMut() -> T) -> Duration {
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < 5 || (start.elapsed() < Duration::from_secs(2) && times.len() < 200) {
        let t = Instant::now();
        let result = f();
        times.push(t.elapsed());
        drop(result);
    }
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/reference");
    let Ok(bytes) = std::fs::read(root.join("stress_large/model_fp32.pte")) else {
        println!("skipped: ../shared/reference/stress_large not present");
        return;
    };
    let program = Program::parse(bytes).expect("program");
    let graph = graph_from_plan(&program, 0).expect("plan");
    let plan = derive(&graph);
    let tensors: usize = plan.arenas.iter().map(|a| a.tensors.len()).sum();
    let lifetimes = median(|| derive(black_box(&graph)));
    let et = median(|| executorch::plan(black_box(&graph), &plan));
    let arena = plan
        .arenas
        .iter()
        .max_by_key(|a| a.tensors.len())
        .expect("an arena");
    let items: Vec<best_fit::Item> = arena
        .tensors
        .iter()
        .enumerate()
        .map(|(i, t)| best_fit::Item {
            size: t.size.div_ceil(16) * 16,
            first: t.first,
            last: t.last,
            members: vec![i],
        })
        .collect();
    let bf = median(|| best_fit::best_fit(black_box(&items)));
    let chain = etscope_core::plan::reorder::Chain::of(&graph).expect("a plain chain");
    for rule in etscope_core::plan::reorder::Rule::ALL {
        let o = median(|| chain.order(black_box(rule)));
        println!("reorder {}: {:.1} ms", rule.describe(), ms(o));
    }
    let all = median(|| alternatives::alternatives(black_box(&graph), &plan));
    println!(
        "stress_large ({} values, {tensors} planned tensors): lifetimes (derive) {:.1} ms; ExecuTorch's greedy {:.1} ms; best fit (4 orders) {:.1} ms; every planner with checks-free alternatives {:.1} ms (target: well under 1 s)",
        graph.values.len(),
        ms(lifetimes),
        ms(et),
        ms(bf),
        ms(all)
    );
}
