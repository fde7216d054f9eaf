//! Finding the real ExecuTorch reference artifacts: the copies in `tests/fixtures/` (always
//! present) and, for sweeps over every model, `../shared/reference/` when it exists.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The models made with ExecuTorch's exporter for what the reference set lacks
/// (`tests/fixtures/models/<name>/`, `tests/fixtures/tools/make_models.py`).
pub const MADE_MODELS: [&str; 6] = [
    "audio_gru",
    "unet",
    "transformer",
    "embedder",
    "resnet",
    "inception",
];

/// `tests/fixtures/` at the workspace root.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// `../shared/reference/` next to the checkout, when present.
pub fn shared_reference() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/reference");
    p.is_dir().then_some(p)
}

/// Model folders to sweep: every non-stress model of `shared/reference` when present, else the
/// fixture copies.
pub fn models() -> Vec<PathBuf> {
    let root = shared_reference().unwrap_or_else(fixtures);
    let mut out: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("reference folder readable")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.join("model_fp32.pte").exists()
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("stress"))
        })
        .collect();
    out.sort();
    assert!(
        !out.is_empty(),
        "no reference models under {}",
        root.display()
    );
    out
}

/// The tiny model from the fixtures (always available).
pub fn tiny() -> PathBuf {
    fixtures().join("tiny_conv_relu_linear")
}

/// Reads a file (tests only).
pub fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Reads and parses a JSON file (tests only).
pub fn json(p: &Path) -> serde_json::Value {
    serde_json::from_slice(&read(p)).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The `.pte` variants that exist for a model, with their flatc dump names.
pub fn pte_variants(model: &Path) -> Vec<(PathBuf, PathBuf)> {
    [
        "model_fp32",
        "model_int8_qdq_portable",
        "model_int8_cortex_m55",
        "model_fp32_xnnpack",
    ]
    .iter()
    .map(|v| {
        (
            model.join(format!("{v}.pte")),
            model.join("flatc").join(format!("{v}.json")),
        )
    })
    .filter(|(p, j)| p.exists() && j.exists())
    .collect()
}

/// Runs `stage` of an ETRecord with `weights` on `inputs` through the one runtime (the
/// out-variant pass, then the program path), on the default device.
#[allow(dead_code)]
pub fn run_stage(
    stage: &etscope_core::formats::etrecord::Stage,
    weights: &std::collections::BTreeMap<String, etscope_core::tensor::TensorData>,
    inputs: &[etscope_core::tensor::TensorData],
    capture: bool,
) -> Result<etscope_core::runtime::RunResult, etscope_core::runtime::RuntimeError> {
    let name = etscope_core::formats::etrecord::stage_short_name(&stage.name);
    let method = stage.name.split('/').nth(1).unwrap_or("forward");
    etscope_core::runtime::Runtime::for_stage(
        &stage.graph,
        &name,
        method,
        weights,
        etscope_core::runtime::Device::default(),
    )?
    .run(inputs, capture)
}

/// A `.npy` file's tensor, or a panic naming the file.
#[allow(dead_code)]
pub fn npy(p: &Path) -> etscope_core::tensor::TensorData {
    etscope_core::formats::npy::read_npy(&read(p))
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// `dir/prefix_0.npy`, `dir/prefix_1.npy`, ... as far as they exist.
#[allow(dead_code)]
pub fn numbered(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    (0..)
        .map(|k| dir.join(format!("{prefix}_{k}.npy")))
        .take_while(|p| p.exists())
        .collect()
}

/// `got` equals ExecuTorch's output: exactly for integer and bool tensors, and for floats
/// within `rel` (relative to 1 + |want|: float32 rounding of another summation order).
#[allow(dead_code)]
pub fn assert_matches(
    label: &str,
    got: &etscope_core::tensor::TensorData,
    want: &etscope_core::tensor::TensorData,
    rel: f64,
) {
    assert_eq!(
        (got.dtype, &got.shape),
        (want.dtype, &want.shape),
        "{label}"
    );
    let (g, w) = (
        got.to_f64().expect("numeric"),
        want.to_f64().expect("numeric"),
    );
    let float = matches!(want.dtype, etscope_core::ScalarType::Float);
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        let tol = if float { rel * (1.0 + b.abs()) } else { 0.0 };
        assert!((a - b).abs() <= tol, "{label}: element {i}: {a} vs {b}");
    }
}

/// Every `.rs` file under the workspace's `dirs` (paths from the workspace root), recursively,
/// sorted: the house tests read the sources through this.
pub fn rust_sources(dirs: &[&str]) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut stack: Vec<PathBuf> = dirs.iter().map(|d| root.join(d)).collect();
    let mut out = Vec::new();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The operators ExecuTorch's x86 wheel runs with its optimized kernels
/// (`kernels/optimized/optimized.yaml`, ExecuTorch 1.4 and 1.5): vectorized, other summation
/// orders, polynomial `erf`; no Cortex-M build runs them, so etscope models the portable kernels
/// and a program with one of these is compared within a tolerance when not bit for bit.
pub const OPTIMIZED_IN_THE_X86_WHEEL: &[&str] = &[
    "_fft_c2r.out",
    "_fft_r2c.out",
    "_log_softmax.out",
    "add.out",
    "add.Scalar_out",
    "bmm.out",
    "div.out",
    "div.Scalar_out",
    "elu.out",
    "exp.out",
    "gelu.out",
    "grid_sampler_2d.out",
    "le.Scalar_out",
    "le.Tensor_out",
    "linear.out",
    "mm.out",
    "mul.out",
    "mul.Scalar_out",
    "native_layer_norm.out",
    "sub.out",
    "sum.IntList_out",
    "sub.Scalar_out",
    "where.self_out",
];

/// The operators of `program` that ExecuTorch's x86 wheel runs with an optimized kernel
/// (`namespace`-less `name.overload`).
#[allow(dead_code)]
pub fn optimized_in_the_x86_wheel(program: &etscope_core::formats::pte::Program) -> Vec<String> {
    let mut ops: Vec<String> = program
        .plans
        .iter()
        .flat_map(|p| &p.operators)
        .map(|o| format!("{}.{}", o.name.trim_start_matches("aten::"), o.overload))
        .filter(|o| OPTIMIZED_IN_THE_X86_WHEEL.contains(&o.as_str()))
        .collect();
    ops.dedup();
    ops
}
