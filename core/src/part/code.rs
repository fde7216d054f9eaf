//! The code a program links on a core, in flash beside the program.
//!
//! Where a real linked image measured it (the Helium and DSP builds: `linked_code.json`,
//! `scripts/code_size/linked/`): an image with no operator — ExecuTorch's runtime as its Arm
//! runner links it, the runner's main and input preparation, the C library, the compiler's
//! helpers, startup — then, per operator the program calls, what linking it alone added (its
//! kernel, its registration), each support, runtime and library object once, each kernel
//! family's shared registration once. Elsewhere (plain-C cores) the object sizes of
//! `executorch_code.json` (`scripts/code_size/executorch.py`: each kernel file and support file
//! whole, the runtime's objects whole, no C library), which err high.
//!
//! Either way the CMSIS-NN functions the kernels call, closed over what those call, each once
//! (`cmsis_nn_code.json`, `scripts/code_size/cmsis_nn.py`: CMSIS-NN dbf45dbf, -O3), and
//! ExecuTorch at 455652a2, the public commit closest to 1.5.1.

use std::collections::{BTreeMap, BTreeSet};

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
    runtime_text: u64,
    runtime_rodata: u64,
    kernel_registry_bss: u64,
    kernels: BTreeMap<String, EtKernel>,
    support: BTreeMap<String, u64>,
}

#[derive(Deserialize)]
struct EtKernel {
    size: u64,
    support: Vec<String>,
    cmsis_nn: Vec<String>,
}

#[derive(Deserialize)]
struct LinkedTable {
    builds: BTreeMap<String, LinkedBuild>,
}

#[derive(Deserialize)]
struct LinkedBuild {
    baseline: BTreeMap<String, u64>,
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

/// How a program's code was sized.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CodeModel {
    /// Real linked images: one with no operator, one per operator.
    #[default]
    Linked,
    /// Object sizes, each file whole; no C library.
    Objects,
}

/// What a program's code comes to on a core.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProgramCode {
    pub model: CodeModel,
    /// ExecuTorch's runtime; with [`CodeModel::Linked`] the whole image without operators (the
    /// runtime as linked, the runner's main, the C library, the compiler's helpers, startup),
    /// its parts in `runtime_parts`.
    pub runtime: u64,
    pub runtime_parts: BTreeMap<String, u64>,
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

/// The CPU build of the measured tables for `core`'s CMSIS-NN path.
fn build_of(core: Core) -> (&'static str, &'static str) {
    match core.isa() {
        Isa::Mve => ("cortex-m55", "mve"),
        Isa::Dsp => ("cortex-m4", "dsp"),
        Isa::Plain => ("cortex-m0plus", "plain"),
    }
}

/// The code of a program whose operators are `ops` (qualified names) on `core`: from linked
/// images where they were measured for its build, else from object sizes.
pub fn program_code(ops: &[String], core: Core) -> ProgramCode {
    let (build, _) = build_of(core);
    let linked: Option<LinkedTable> = serde_json::from_str(include_str!("linked_code.json")).ok();
    match linked.as_ref().and_then(|t| t.builds.get(build)) {
        Some(b) => linked_code(ops, core, b),
        None => object_code(ops, core),
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
        model: CodeModel::Linked,
        runtime: b.baseline.get("total").copied().unwrap_or(0),
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
    let et: Option<EtTable> = serde_json::from_str(include_str!("executorch_code.json")).ok();
    let calls = et
        .as_ref()
        .and_then(|t| Some((t, t.builds.get(build_of(core).0)?)));
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

/// The code from object sizes, each file whole (plain-C builds, and the kernel registry).
fn object_code(ops: &[String], core: Core) -> ProgramCode {
    let (build, _) = build_of(core);
    let mut out = ProgramCode {
        model: CodeModel::Objects,
        ..ProgramCode::default()
    };
    let et: Option<EtTable> = serde_json::from_str(include_str!("executorch_code.json")).ok();
    let Some((et, b)) = et
        .as_ref()
        .and_then(|t| t.builds.get(build).map(|b| (t, b)))
    else {
        out.unknown_ops
            .push(format!("(no measured ExecuTorch table for {build})"));
        return out;
    };
    out.runtime = b.runtime_text.saturating_add(b.runtime_rodata);
    out.kernel_registry_ram = b.kernel_registry_bss;
    let mut support: BTreeMap<&str, u64> = BTreeMap::new();
    let mut entries: Vec<String> = Vec::new();
    for op in ops {
        let Some((key, kernel)) = et
            .operators
            .get(op)
            .and_then(|k| b.kernels.get(k).map(|v| (k, v)))
        else {
            out.unknown_ops.push(op.clone());
            continue;
        };
        out.kernel_files.insert(key.clone(), kernel.size);
        for f in &kernel.support {
            if let Some(&size) = b.support.get(f) {
                support.insert(f, size);
            }
        }
        entries.extend(kernel.cmsis_nn.iter().cloned());
    }
    out.support_files = support
        .into_iter()
        .map(|(f, s)| (f.to_string(), s))
        .collect();
    out.kernels = out
        .kernel_files
        .values()
        .chain(out.support_files.values())
        .fold(0u64, |a, &s| a.saturating_add(s));
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
    let table: Option<CmsisTable> = serde_json::from_str(include_str!("cmsis_nn_code.json")).ok();
    let functions = table.as_ref().and_then(|t| t.paths.get(build_of(core).1));
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
        // an operator no measured kernel implements makes the figure a lower bound, named
        let lstm = format!("cortex_m::{}.out", "quantized_lstm"); // not an operator of 1.5.1
        let odd = program_code(std::slice::from_ref(&lstm), Core::M55);
        assert_eq!(odd.unknown_ops, [lstm]);
    }
}
