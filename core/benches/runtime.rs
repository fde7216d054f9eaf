//! Host inference benchmark (release): median time of one `Runtime::run` for every reference
//! model's fp32 and Cortex-M int8 programs and for `stress_large`, and the memory one run
//! takes: the bytes it allocates (a counting allocator around mimalloc) next to the program's
//! constant bytes, and the peak resident memory of one run of the largest program. ExecuTorch's
//! portable runtime on the same programs, timed in the same run, comes from
//! `scripts/bench_baselines.py` (it runs this benchmark next to ExecuTorch's pybindings).
//!
//! `cargo bench -p etscope-core --bench runtime` (needs `../shared/reference`);
//! `ETSCOPE_BENCH_ONLY=SUBSTRING` keeps the cases whose `model/variant` contains it.

use std::alloc::{GlobalAlloc, Layout};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use etscope_core::formats::npy::read_npy;
use etscope_core::formats::pte::{EValue, Program};
use etscope_core::runtime::{Runtime, Target};

/// mimalloc, counting the bytes handed out.
struct Counting;

static ALLOCATED: AtomicU64 = AtomicU64::new(0);
static INNER: mimalloc::MiMalloc = mimalloc::MiMalloc;

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATED.fetch_add(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to mimalloc
        unsafe { INNER.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to mimalloc
        unsafe { INNER.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATED.fetch_add(new_size as u64, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to mimalloc
        unsafe { INNER.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

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

/// Bytes of constant tensor data in plan 0.
fn constant_bytes(program: &Program) -> u64 {
    program.plans[0]
        .values
        .iter()
        .filter_map(|v| match v {
            EValue::Tensor(t) if t.is_constant() => Some(t.nbytes),
            _ => None,
        })
        .sum()
}

/// Peak resident memory since the last reset, in bytes (Linux `VmHWM`).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Resets the peak resident memory to the current one (Linux `clear_refs` 5).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/reference");
    if !root.is_dir() {
        println!("skipped: ../shared/reference not present");
        return;
    }
    let mut cases: Vec<(&str, &str)> = Vec::new();
    for model in [
        "tiny_conv_relu_linear",
        "ds_cnn_kws",
        "mobilenet_v1_025_vww",
    ] {
        for variant in [
            "model_fp32",
            "model_int8_cortex_m55",
            "model_int8_cortex_m55_default",
            "model_int8_cortex_m4_default",
        ] {
            cases.push((model, variant));
        }
    }
    cases.push(("stress_large", "model_fp32"));
    // `ETSCOPE_BENCH_ONLY=mobilenet_v1_025_vww/model_int8_cortex_m55` times only the cases whose
    // `model/variant` contains it (to profile one program)
    if let Ok(only) = std::env::var("ETSCOPE_BENCH_ONLY") {
        cases.retain(|(m, v)| format!("{m}/{v}").contains(&only));
    }
    println!("| program | median run | allocated by one run | its constants |");
    println!("|---|---|---|---|");
    for (model, variant) in cases {
        let dir = root.join(model);
        let path = dir.join(format!("{variant}.pte"));
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let input = read_npy(&std::fs::read(dir.join("input.npy")).expect("input")).expect("npy");
        let program = Program::parse(bytes).expect("parses");
        // each program on the core it was lowered for
        let rt = Runtime::new(&program, 0, Target::for_program(&program, 0)).expect("prepares");
        let us = median_run(&rt, &input).as_secs_f64() * 1e6;
        let before = ALLOCATED.load(Ordering::Relaxed);
        let out = rt.run(std::slice::from_ref(&input), false).expect("runs");
        let allocated = ALLOCATED.load(Ordering::Relaxed) - before;
        drop(out);
        let time = if us >= 1000.0 {
            format!("{:.2} ms", us / 1000.0)
        } else {
            format!("{us:.0} µs")
        };
        println!(
            "| {model} {variant} | {time} | {:.2} MB | {:.2} MB |",
            allocated as f64 / 1e6,
            constant_bytes(&program) as f64 / 1e6
        );
    }
    // peak resident memory of one run of the largest reference program, over what the prepared
    // runtime already holds
    let dir = root.join("stress_large");
    let program =
        Program::parse(std::fs::read(dir.join("model_fp32.pte")).expect("pte")).expect("parses");
    let input = read_npy(&std::fs::read(dir.join("input.npy")).expect("input")).expect("npy");
    let rt = Runtime::new(&program, 0, Target::default()).expect("prepares");
    let prepared = peak_rss();
    reset_peak_rss();
    let out = rt.run(std::slice::from_ref(&input), false).expect("runs");
    drop(out);
    if let (Some(prepared), Some(peak)) = (prepared, peak_rss()) {
        println!(
            "stress_large: peak resident {:.1} MB after preparing, {:.1} MB during one run",
            prepared as f64 / 1e6,
            peak as f64 / 1e6
        );
    }
}
