//! The code a program links on a core, in flash beside the program.
//!
//! From real linked images (`linked_code.json`, `scripts/code_size/linked/`), one build per
//! CMSIS-NN path — Helium (`cortex-m55`), DSP (`cortex-m4`), plain C (`cortex-m0plus`): an image
//! with no operator — ExecuTorch's runtime as its Arm runner links it, the runner's main and
//! input preparation, the C library, the compiler's helpers, startup — then, per operator the
//! program calls, what linking it alone added (its kernel, its registration), each support,
//! runtime and library object once, each kernel family's shared registration once.
//!
//! Then the CMSIS-NN functions the kernels call, closed over what those call, each once
//! (`cmsis_nn_code.json`, `scripts/code_size/cmsis_nn.py`: CMSIS-NN dbf45dbf, -O3), and which
//! CMSIS-NN entry points each kernel calls and the kernel registry's table from the object
//! tables (`executorch_code.json`, `scripts/code_size/executorch.py`). ExecuTorch at 455652a2,
//! the public commit closest to 1.5.1.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use serde::Deserialize;

use crate::cortex_m::{Core, Isa};

#[derive(Deserialize)]
struct CmsisTable {
    paths: BTreeMap<String, CmsisPath>,
}

#[derive(Deserialize)]
struct CmsisPath {
    functions: BTreeMap<String, CmsisFunction>,
}

#[derive(Deserialize)]
struct CmsisFunction {
    size: u64,
    calls: Vec<String>,
}

#[derive(Deserialize)]
struct EtTable {
    operators: BTreeMap<String, String>,
    builds: BTreeMap<String, EtBuild>,
}

#[derive(Deserialize)]
struct EtBuild {
    kernel_registry_bss: u64,
    kernels: BTreeMap<String, EtKernel>,
}

#[derive(Deserialize)]
struct EtKernel {
    cmsis_nn: Vec<String>,
}

#[derive(Deserialize)]
struct LinkedTable {
    builds: BTreeMap<String, LinkedBuild>,
}

#[derive(Deserialize)]
struct LinkedBuild {
    /// The image with no operator: `total` and its parts, which add up to it (`string_merge`
    /// is negative: strings the linker merged across objects).
    baseline: BTreeMap<String, i64>,
    ops: BTreeMap<String, LinkedOp>,
    #[serde(default)]
    failed: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct LinkedOp {
    kernel: i64,
    registration: i64,
    registration_shared: i64,
    /// `group:object` → bytes (support, runtime, libc, libgcc objects the operator pulled in;
    /// negative where its image swapped a baseline object for a smaller one).
    objects: BTreeMap<String, i64>,
}

/// What a program's code comes to on a core.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProgramCode {
    /// The linked build the sizes come from (`cortex-m55`, `cortex-m4`, `cortex-m0plus`): the
    /// core's CMSIS-NN path, compiled for the build's CPU.
    pub build: &'static str,
    /// The whole image without operators (ExecuTorch's runtime as linked, the runner's main,
    /// the C library, the compiler's helpers, startup), its parts in `runtime_parts`.
    pub runtime: u64,
    /// The parts add up to `runtime`; `string_merge` is negative (strings the linker merged
    /// across objects).
    pub runtime_parts: BTreeMap<String, i64>,
    /// The kernel files the operators select and the support files they call, each once.
    pub kernels: u64,
    pub kernel_files: BTreeMap<String, u64>,
    /// The kernels' out-of-line support files (`kernels/portable/cpu/util/…`), each once.
    pub support_files: BTreeMap<String, u64>,
    /// The CMSIS-NN functions linked, each with its size.
    pub cmsis_nn: u64,
    pub cmsis_nn_functions: BTreeMap<String, u64>,
    /// The kernel registry's static table (`MAX_KERNEL_NUM` slots): RAM, not flash.
    pub kernel_registry_ram: u64,
    /// Operators of the program no measured kernel implements (then `kernels` is a lower
    /// bound), and what else was not measured.
    pub unknown_ops: Vec<String>,
    /// Why an unknown operator is, where it is known (its image did not link).
    pub unknown_why: BTreeMap<String, String>,
}

/// The measured tables, parsed once (they are compiled in; the estimate asks per operator).
fn linked_table() -> Option<&'static LinkedTable> {
    static T: OnceLock<Option<LinkedTable>> = OnceLock::new();
    T.get_or_init(|| serde_json::from_str(include_str!("linked_code.json")).ok())
        .as_ref()
}

fn executorch_table() -> Option<&'static EtTable> {
    static T: OnceLock<Option<EtTable>> = OnceLock::new();
    T.get_or_init(|| serde_json::from_str(include_str!("executorch_code.json")).ok())
        .as_ref()
}

fn cmsis_table() -> Option<&'static CmsisTable> {
    static T: OnceLock<Option<CmsisTable>> = OnceLock::new();
    T.get_or_init(|| serde_json::from_str(include_str!("cmsis_nn_code.json")).ok())
        .as_ref()
}

/// The CPU build of the measured tables for `core`'s CMSIS-NN path.
fn build_of(core: Core) -> (&'static str, &'static str) {
    match core.isa() {
        Isa::Mve => ("cortex-m55", "mve"),
        Isa::Dsp => ("cortex-m4", "dsp"),
        Isa::Plain => ("cortex-m0plus", "plain"),
    }
}

/// The code of a program whose operators are `ops` (qualified names) on `core`, from the
/// linked images of its build.
pub fn program_code(ops: &[String], core: Core) -> ProgramCode {
    let (build, _) = build_of(core);
    match linked_table().and_then(|t| t.builds.get(build)) {
        Some(b) => linked_code(ops, core, b),
        // the tables are compiled in: only a broken build of etscope gets here
        None => ProgramCode {
            build,
            unknown_ops: vec![format!("(no linked table for {build})")],
            ..ProgramCode::default()
        },
    }
}

/// The family whose generated registration an operator's kernel is in.
fn family(op: &str) -> &'static str {
    match op.split("::").next() {
        Some("cortex_m") => "cortex_m",
        Some("quantized_decomposed") => "quantized",
        _ => "portable",
    }
}

fn linked_code(ops: &[String], core: Core, b: &LinkedBuild) -> ProgramCode {
    let mut out = ProgramCode {
        build: build_of(core).0,
        runtime: b
            .baseline
            .get("total")
            .and_then(|&t| u64::try_from(t).ok())
            .unwrap_or(0),
        runtime_parts: b
            .baseline
            .iter()
            .filter(|(k, _)| k.as_str() != "total")
            .map(|(k, &v)| (k.clone(), v))
            .collect(),
        ..ProgramCode::default()
    };
    // the object tables, read once: the CMSIS-NN functions each kernel calls, and the kernel
    // registry's table (the runtime's .bss)
    let calls = executorch_table().and_then(|t| Some((t, t.builds.get(build_of(core).0)?)));
    out.kernel_registry_ram = calls.map_or(0, |(_, b)| b.kernel_registry_bss);
    let mut shared: BTreeMap<&str, i64> = BTreeMap::new();
    let mut once: BTreeMap<&str, i64> = BTreeMap::new();
    let mut kernels: i64 = 0;
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut entries: Vec<String> = Vec::new();
    for op in ops {
        if !seen.insert(op.as_str()) {
            continue;
        }
        let Some(o) = b.ops.get(op) else {
            out.unknown_ops.push(op.clone());
            if let Some(why) = b.failed.get(op) {
                out.unknown_why.insert(
                    op.clone(),
                    format!(
                        "its image did not link: {}",
                        why.chars().take(160).collect::<String>()
                    ),
                );
            }
            continue;
        };
        let own = o.registration.saturating_sub(o.registration_shared);
        kernels = kernels.saturating_add(o.kernel).saturating_add(own);
        out.kernel_files.insert(
            op.clone(),
            u64::try_from(o.kernel.saturating_add(own).max(0)).unwrap_or(0),
        );
        let s = shared.entry(family(op)).or_default();
        *s = (*s).max(o.registration_shared);
        for (obj, &size) in &o.objects {
            once.insert(obj.as_str(), size);
        }
        // the CMSIS-NN functions: the object tables know which each kernel calls
        if let Some(k) = calls.and_then(|(t, b)| b.kernels.get(t.operators.get(op)?)) {
            entries.extend(k.cmsis_nn.iter().cloned());
        }
    }
    let families: i64 = shared.values().sum();
    let objs: i64 = once.values().sum();
    out.support_files = once
        .into_iter()
        .map(|(f, s)| (f.to_string(), u64::try_from(s.max(0)).unwrap_or(0)))
        .collect();
    out.kernels =
        u64::try_from(kernels.saturating_add(families).saturating_add(objs).max(0)).unwrap_or(0);
    out.cmsis_nn_functions = cmsis_nn_closure(entries, core);
    out.cmsis_nn = out
        .cmsis_nn_functions
        .values()
        .fold(0u64, |a, &s| a.saturating_add(s));
    out.unknown_ops.sort();
    out.unknown_ops.dedup();
    out
}

/// The CMSIS-NN functions `entries` call, closed over their calls, with their sizes on `core`'s
/// CMSIS-NN path.
fn cmsis_nn_closure(entries: Vec<String>, core: Core) -> BTreeMap<String, u64> {
    let functions = cmsis_table().and_then(|t| t.paths.get(build_of(core).1));
    let mut todo = entries;
    let mut linked: BTreeMap<String, u64> = BTreeMap::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    while let Some(f) = todo.pop() {
        if !seen.insert(f.clone()) {
            continue;
        }
        // a call to the C library or a compiler helper is not CMSIS-NN's
        let Some(def) = functions.and_then(|t| t.functions.get(&f)) else {
            continue;
        };
        linked.insert(f, def.size);
        todo.extend(def.calls.iter().cloned());
    }
    linked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_convolution_links_its_kernel_the_wrapper_and_every_path_it_may_take_once() {
        let ops = vec![
            "cortex_m::quantized_conv2d.out".to_string(),
            "cortex_m::quantize_per_tensor.out".to_string(),
        ];
        let mve = program_code(&ops, Core::M55);
        assert!(mve.unknown_ops.is_empty(), "{:?}", mve.unknown_ops);
        assert!(mve.runtime > 30_000 && mve.kernel_registry_ram > 0);
        assert_eq!(mve.kernel_files.len(), 2, "{:?}", mve.kernel_files);
        for f in [
            "arm_convolve_wrapper_s8",
            "arm_convolve_s8",
            "arm_convolve_1x1_s8_fast",
            "arm_nn_mat_mult_nt_t_s8",
        ] {
            assert!(
                mve.cmsis_nn_functions.contains_key(f),
                "{f}: {:?}",
                mve.cmsis_nn_functions
            );
        }
        assert_eq!(mve.cmsis_nn, mve.cmsis_nn_functions.values().sum::<u64>());
        // the same operator twice is linked once
        let twice = program_code(&[ops[0].clone(), ops[0].clone()], Core::M55);
        assert_eq!(twice.kernels, program_code(&ops[..1], Core::M55).kernels);
        // another path, other code
        let plain = program_code(&ops, Core::M0Plus);
        assert!(plain.cmsis_nn > 0 && plain.cmsis_nn != mve.cmsis_nn);
        assert_eq!((plain.build, mve.build), ("cortex-m0plus", "cortex-m55"));
        assert!(
            plain.runtime > mve.runtime,
            "soft float and Thumb-1: a larger image"
        );
        // an operator no measured kernel implements makes the figure a lower bound, named
        let lstm = format!("cortex_m::{}.out", "quantized_lstm"); // not an operator of 1.5.1
        let odd = program_code(std::slice::from_ref(&lstm), Core::M55);
        assert_eq!(odd.unknown_ops, [lstm]);
    }
}
