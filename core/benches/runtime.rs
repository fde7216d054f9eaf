//! Host inference benchmark (release): median time of one `Runtime::run` for every reference
//! model's fp32 and Cortex-M int8 programs. ExecuTorch's portable runtime on the same programs,
//! timed in the same run, comes from `scripts/bench_baselines.py` (it runs this benchmark next to
//! ExecuTorch's pybindings).
//!
//! `cargo bench -p etscope-core --bench runtime` (needs `../shared/reference`).

use std::path::Path;
use std::time::{Duration, Instant};

use etscope_core::npy::read_npy;
use etscope_core::pte::Program;
use etscope_core::runtime::{Runtime, Target};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn median_run(rt: &Runtime, input: &etscope_core::tensor::TensorData) -> Duration {
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < 5 || (start.elapsed() < Duration::from_secs(2) && times.len() < 500) {
        let t = Instant::now();
        let out = rt.run(std::slice::from_ref(input), false).expect("runs");
        times.push(t.elapsed());
        drop(out);
    }
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/reference");
    if !root.is_dir() {
        println!("skipped: ../shared/reference not present");
        return;
    }
    for model in [
        "tiny_conv_relu_linear",
        "ds_cnn_kws",
        "mobilenet_v1_025_vww",
    ] {
        let dir = root.join(model);
        let input = read_npy(&std::fs::read(dir.join("input.npy")).expect("input")).expect("npy");
        for variant in ["model_fp32", "model_int8_cortex_m55"] {
            let program =
                Program::parse(std::fs::read(dir.join(format!("{variant}.pte"))).expect("pte"))
                    .expect("parses");
            let rt = Runtime::new(&program, 0, Target::default()).expect("prepares");
            let us = median_run(&rt, &input).as_secs_f64() * 1e6;
            println!("{model} {variant}: {us:.0} µs per inference");
        }
    }
}
