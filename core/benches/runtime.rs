//! Host inference benchmark (release): median time of one `Runtime::run` for every reference
//! model's fp32 and Cortex-M int8 programs, next to ExecuTorch's portable runtime on the fp32
//! program as its own ETDump recorded it (`Method::execute` p50 of `etdump_profile_5runs.etdp`,
//! measured when the references were made — another run on this machine class, not this one).
//!
//! `cargo bench -p etscope-core --bench runtime` (needs `../shared/reference`).

use std::path::Path;
use std::time::{Duration, Instant};

use etscope_core::etdump::ETDump;
use etscope_core::npy::read_npy;
use etscope_core::profile::profile;
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
        let et = std::fs::read(dir.join("etdump_profile_5runs.etdp"))
            .ok()
            .and_then(|b| ETDump::parse(&b).ok())
            .and_then(|d| profile(&d, None).method_execute.map(|m| m.p50 / 1000.0));
        for variant in ["model_fp32", "model_int8_cortex_m55"] {
            let program =
                Program::parse(std::fs::read(dir.join(format!("{variant}.pte"))).expect("pte"))
                    .expect("parses");
            let rt = Runtime::new(&program, 0, Target::default()).expect("prepares");
            let us = median_run(&rt, &input).as_secs_f64() * 1e6;
            match (variant, et) {
                ("model_fp32", Some(et)) => println!("{model} {variant}: {us:.0} µs per inference; ExecuTorch portable (its ETDump): {et:.0} µs; ratio {:.2}x", us / et),
                _ => println!("{model} {variant}: {us:.0} µs per inference"),
            }
        }
    }
}
