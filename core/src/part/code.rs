//! The code a program links on a core: ExecuTorch's runtime, the kernel files its operators
//! select (selective build: each file once, with the support files it calls, each once), and
//! the CMSIS-NN functions those kernels call, closed over what those call, each once. Sizes are
//! object sizes measured with the Arm GNU toolchain per CPU build, not a linked image:
//! `executorch_code.json` (`scripts/code_size/executorch.py` + `compact.py`: ExecuTorch at
//! 455652a2, the public commit closest to 1.5.1, runtime -Oz, kernels -O3) and
//! `cmsis_nn_code.json` (`scripts/code_size/cmsis_nn.py`: CMSIS-NN dbf45dbf, -O3). The C and
//! C++ libraries and the compiler's helpers are not counted.

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

/// What a program's code comes to on a core.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProgramCode {
    /// ExecuTorch's runtime: text and read-only data.
    pub runtime: u64,
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
}

/// The CPU build of the measured tables for `core`'s CMSIS-NN path.
fn build_of(core: Core) -> (&'static str, &'static str) {
    match core.isa() {
        Isa::Mve => ("cortex-m55", "mve"),
        Isa::Dsp => ("cortex-m4", "dsp"),
        Isa::Plain => ("cortex-m0plus", "plain"),
    }
}

/// The code of a program whose operators are `ops` (qualified names) on `core`.
pub fn program_code(ops: &[String], core: Core) -> ProgramCode {
    let (build, _) = build_of(core);
    let mut out = ProgramCode::default();
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
