//! Foundation benchmark (release): reading + IR + memory plan of `stress_large/model_fp32.pte`,
//! and ETDump parsing + per-op statistics of `stress_medium/etdump_profile_5runs.etdp`, each
//! next to the FlatBuffers verifier alone over the same bytes, measured in the same run.
//!
//! `cargo bench -p etscope-core --bench foundation` (needs `../shared/reference`).

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use etscope_core::analysis::profile::profile;
use etscope_core::formats::etdump::ETDump;
use etscope_core::formats::flatbuf::{verify_etdump, verify_program};
use etscope_core::formats::pte::Program;
use etscope_core::ir::from_pte::graph_from_plan;
use etscope_core::plan::derive;

/// The allocator the app ships with, so the numbers are the app's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Median wall time of `f` over enough runs to fill ~2 s (at least 5).
/// `setup` runs outside the timed region (the app hands the reader the bytes `fs::read` made);
/// what `f` returns is dropped outside it too (opening, not freeing, is measured).
fn median_with<S, T>(mut setup: impl FnMut() -> S, mut f: impl FnMut(S) -> T) -> Duration {
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < 5 || (start.elapsed() < Duration::from_secs(2) && times.len() < 200) {
        let input = setup();
        let t = Instant::now();
        let result = f(input);
        times.push(t.elapsed());
        drop(result);
    }
    times.sort();
    times[times.len() / 2]
}

fn median<T>(mut f: impl FnMut() -> T) -> Duration {
    median_with(|| (), |()| f())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/reference");
    let pte_path = root.join("stress_large/model_fp32.pte");
    let etdp_path = root.join("stress_medium/etdump_profile_5runs.etdp");
    let (Ok(pte), Ok(etdp)) = (std::fs::read(&pte_path), std::fs::read(&etdp_path)) else {
        println!("skipped: ../shared/reference/stress_* not present");
        return;
    };

    let verify = median(|| verify_program(black_box(&pte)).expect("verifies"));
    let mut summary = (0, 0, 0);
    let full = median_with(
        || pte.clone(),
        |bytes| {
            let program = Program::parse(black_box(bytes)).expect("reads");
            let graph = graph_from_plan(&program, 0).expect("plan");
            let plan = derive(&graph);
            summary = (
                graph.instruction_count,
                graph.values.len(),
                plan.arenas.iter().map(|a| a.tensors.len()).sum::<usize>(),
            );
            (program, graph, plan)
        },
    );
    println!(
        "stress_large .pte ({:.1} MB, {} instructions, {} values, {} planned tensors): read + IR + memory plan {:.1} ms (target <= 100 ms); FlatBuffers verify alone {:.1} ms; ratio {:.2}x",
        pte.len() as f64 / 1e6,
        summary.0,
        summary.1,
        summary.2,
        ms(full),
        ms(verify),
        ms(full) / ms(verify)
    );

    let verify = median(|| verify_etdump(black_box(&etdp)).expect("verifies"));
    let mut rows = 0;
    let full = median(|| {
        let d = ETDump::parse(black_box(&etdp)).expect("parses");
        let p = profile(&d, None);
        rows = p.rows.len();
        (d, p)
    });
    println!(
        "stress_medium ETDump ({:.1} MB, 5 runs, {rows} ops): parse + per-op statistics {:.1} ms (target <= 35 ms; ExecuTorch's Inspector on the same file: scripts/bench_baselines.py); FlatBuffers verify alone {:.1} ms; ratio {:.2}x",
        etdp.len() as f64 / 1e6,
        ms(full),
        ms(verify),
        ms(full) / ms(verify)
    );
}
