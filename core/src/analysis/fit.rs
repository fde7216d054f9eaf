//! Does a program fit a part: every pool ExecuTorch's runtime needs on the core, with its size
//! and the region a default link puts it in ([`crate::part::Link`]); the program in flash (read
//! in place) with the code that runs it where its size is known; per region, used against its
//! size; and what-ifs priced the same way.
//!
//! The pools are [`crate::plan::budget`]'s, which equal ExecuTorch's runtime byte for byte: each
//! planned arena (one per memory id), the method allocator, the temp allocator, a delegate's
//! scratch. The code is what the caller measured ([`CodeSizes`]); a term not measured is `None`
//! and the flash total says it is a lower bound.

use serde::Serialize;
use thiserror::Error;

use crate::formats::pte::Program;
use crate::ir::{Graph, Storage};
use crate::part::Part;
use crate::plan::budget::{ram_budget, RamBudget};

/// One pool of RAM.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pool {
    pub name: String,
    pub bytes: u64,
    pub region: String,
}

/// Code in flash beside the program, where measured (`None`: not measured), and the RAM the
/// runtime's code keeps statically.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct CodeSizes {
    pub runtime: Option<u64>,
    pub kernels: Option<u64>,
    pub cmsis_nn: Option<u64>,
    /// The kernel registry's static table (`.bss` of the runtime): RAM.
    pub kernel_registry_ram: u64,
    /// Whether every operator's kernel was measured.
    pub complete: bool,
    /// How the code was sized.
    /// The linked build the code sizes come from (`part::code::ProgramCode::build`).
    pub build: &'static str,
}

/// A region's use.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RegionUse {
    pub name: String,
    pub used: u64,
    pub size: u64,
}

/// The fit of a program on a part.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fit {
    pub pools: Vec<Pool>,
    pub ram_total: u64,
    pub program: u64,
    pub code: CodeSizes,
    /// The program and every measured code term.
    pub flash_total: u64,
    /// Whether every code term was measured (else `flash_total` is a lower bound).
    pub flash_complete: bool,
    pub regions: Vec<RegionUse>,
    pub fits: bool,
    /// What the budget does not count (a delegate's own allocations, external constants).
    pub not_modelled: Vec<String>,
    /// The planned arenas' sizes (memory ids 1, 2, …) the pools hold.
    #[serde(skip)]
    pub arenas: Vec<u64>,
    /// The runtime's budget behind the other pools, which a what-if of the arenas keeps.
    #[serde(skip)]
    pub budget: RamBudget,
    /// The plan's inputs (the Arm runner keeps a list of their `EValue`s in its pool).
    #[serde(skip)]
    pub inputs: u64,
}

/// What RAM the pools leave out, said with every fit.
pub const STATIC_RAM_NOT_COUNTED: &str = "the stack and the heap (the application sizes them), and the static data of the runtime, the C library and the application besides the kernel registry (216 to 252 bytes of .data in the images linked whole, tests/fixtures/linked_images.json)";

/// The pool of what ExecuTorch's Arm runner takes from its method-allocator pool beyond the
/// arenas and `Method::load`: each arena's rounding to 16 bytes and the inputs' `EValue` list
/// (`fit_files::runner_pools`), so that the pools add up to the pool it is built with.
pub const RUNNER_PADDING: &str = "runner: arena alignment and the inputs' list";

/// Where each code term comes from: real linked images, one build per CMSIS-NN path.
pub const LINKED_SOURCES: &str = "from real linked bare-metal images (Arm GNU toolchain GCC 12.2, newlib-nano, --gc-sections; scripts/code_size/linked/): runtime = an image with no operator registered (ExecuTorch's runtime as its Arm runner links it at -Oz, the runner's main and input preparation, the C library, the compiler's helpers, startup); kernels = what linking each of the program's operators alone added (its kernel at -O3 and its generated registration), each support, runtime and library object once and each kernel family's shared registration once; cmsis_nn = the CMSIS-NN functions those kernels call and what those call, each once, at -O3 (CMSIS-NN dbf45dbf). ExecuTorch at 455652a2, the public commit closest to 1.5.1. Builds: cortex-m55 for Helium cores, cortex-m4 for DSP cores (M4, M7, M33), cortex-m0plus for plain-C cores (an M3's Thumb-2 code was not linked: its figure is the M0+ build's). Within 3 % of seven real images linked whole (tests/fixtures/linked_images.json); a real runner adds its logging, timing and any delegate";

/// The code plan `plan_index` of `program` links on `core`, as measured.
pub fn code_sizes(
    program: &Program,
    plan_index: usize,
    core: crate::cortex_m::Core,
) -> (CodeSizes, crate::part::code::ProgramCode) {
    let ops = program.operator_names(plan_index);
    let code = crate::part::code::program_code(&ops, core);
    let measured = |bytes: u64| (bytes > 0).then_some(bytes);
    (
        CodeSizes {
            runtime: measured(code.runtime),
            kernels: Some(code.kernels),
            cmsis_nn: Some(code.cmsis_nn),
            kernel_registry_ram: code.kernel_registry_ram,
            complete: code.unknown_ops.is_empty(),
            build: code.build,
        },
        code,
    )
}

impl Fit {
    /// What the code figures are, in a few words (the CLI and the Memory tab say it).
    pub fn code_note(&self) -> String {
        format!(
            "code sized from real linked images of the {} build: runtime, C library and startup in an image with no operator, each operator as linking it added",
            self.code.build
        )
    }
}

/// The calls of plan `plan_index` that `core` refuses (a program lowered for another CMSIS-NN
/// path: `cost`'s `would_not_run`), each with why; empty when it runs there.
pub fn would_not_run(
    program: &Program,
    plan_index: usize,
    core: crate::cortex_m::Core,
) -> Vec<(usize, String)> {
    let options = crate::analysis::cost::CostOptions::compute_only(core, core.typical_mhz());
    crate::analysis::cost::estimate(program, plan_index, options)
        .map(|e| e.would_not_run)
        .unwrap_or_default()
}

/// What `fit` says of a program `part`'s core refuses ([`would_not_run`]): the first call and
/// why, and how many more; `None` when it runs there.
pub fn not_run_note(part: &Part, would_not_run: &[(usize, String)]) -> Option<String> {
    let (id, why) = would_not_run.first()?;
    let more = match would_not_run.len() {
        1 => String::new(),
        n => format!(" (and {} more calls)", n - 1),
    };
    Some(format!(
        "does NOT run as lowered on the {}'s {}: instruction {id}: {why}{more}",
        part.name,
        part.core.name()
    ))
}

/// Why a fit cannot be made.
#[derive(Debug, Error, PartialEq)]
pub enum FitError {
    #[error("no plan {0}")]
    NoPlan(usize),
    #[error("the program's memory cannot be budgeted: {0}")]
    Budget(String),
}

/// The fit of plan `plan_index` of `program` on `part`, its code in flash as `code` measured.
pub fn fit(
    program: &Program,
    plan_index: usize,
    part: &Part,
    code: CodeSizes,
) -> Result<Fit, FitError> {
    let graph = crate::ir::from_pte::graph_from_plan(program, plan_index)
        .ok_or(FitError::NoPlan(plan_index))?;
    let plan = crate::plan::derive(&graph);
    let budget = ram_budget(program, plan_index, &plan)
        .ok_or_else(|| FitError::Budget("ExecuTorch's types are not laid out for it".into()))?;
    let inputs = program.input_count(plan_index).unwrap_or(0) as u64;
    let mut fit = assemble(
        part,
        graph.arenas,
        budget,
        // the program's load image: the .pte and the .ptd its external constants come from
        (program.bytes().len() as u64).saturating_add(program.external_data_bytes() as u64),
        code,
        inputs,
    );
    let external = program.external_keys().len();
    if external > 0 && program.external_data_bytes() == 0 {
        fit.flash_complete = false;
        fit.not_modelled.push(format!(
            "the .ptd that {external} external constants come from (not found beside the program): its bytes are not in flash"
        ));
    }
    Ok(fit)
}

/// The pools, regions and totals of a program whose arenas are `arenas` (memory ids 1, 2, …).
fn assemble(
    part: &Part,
    arenas: Vec<u64>,
    budget: RamBudget,
    program: u64,
    code: CodeSizes,
    inputs: u64,
) -> Fit {
    let ram = &part.link.arenas;
    let mut pools: Vec<Pool> = arenas
        .iter()
        .enumerate()
        .filter(|(_, &b)| b > 0)
        .map(|(i, &bytes)| Pool {
            name: format!("planned arena (memory id {})", i + 1),
            bytes,
            region: ram.clone(),
        })
        .collect();
    let runner = super::fit_files::runner_pools(
        &arenas,
        budget.method_allocator,
        budget.temp_allocator,
        inputs,
    );
    let slow: u64 = arenas
        .iter()
        .enumerate()
        .filter(|(i, _)| *i + 1 != 3)
        .map(|(_, &b)| b)
        .fold(budget.method_allocator, u64::saturating_add);
    for (name, bytes) in [
        ("method allocator", budget.method_allocator),
        (
            RUNNER_PADDING,
            runner.method_allocator_pool.saturating_sub(slow),
        ),
        ("temp allocator", budget.temp_allocator),
        ("delegate scratch", budget.scratch),
        ("kernel registry", code.kernel_registry_ram),
    ] {
        if bytes > 0 {
            // the registry is the runtime's .bss: static data, where the link puts the stack
            let region = if name == "kernel registry" {
                part.link.stack.clone()
            } else {
                ram.clone()
            };
            pools.push(Pool {
                name: name.to_string(),
                bytes,
                region,
            });
        }
    }
    totals(part, pools, arenas, budget, program, code, inputs)
}

/// The placed program's fit: each pool in the region `placement` put its block in, and each
/// call's weights the placement copies into RAM as a pool of its own (the load image stays in
/// flash).
pub fn with_placement(
    part: &Part,
    base: &Fit,
    placement: &crate::analysis::place::Placement,
) -> Fit {
    let region_of = |block: &str| {
        placement
            .blocks
            .iter()
            .find(|b| b.name == block)
            .map(|b| b.region.clone())
    };
    let mut pools: Vec<Pool> = base
        .pools
        .iter()
        .map(|p| Pool {
            region: region_of(crate::analysis::place::block_of_pool(&p.name))
                .unwrap_or_else(|| p.region.clone()),
            ..p.clone()
        })
        .collect();
    pools.extend(placement.moved().filter(|b| b.is_weights()).map(|b| Pool {
        name: b.name.clone(),
        bytes: b.bytes,
        region: b.region.clone(),
    }));
    totals(
        part,
        pools,
        base.arenas.clone(),
        base.budget.clone(),
        base.program,
        base.code,
        base.inputs,
    )
}

/// `fit` with a program of `program` bytes in flash (the same pools): the placed program
/// `fit -o` writes, whose moved weights sit in a `.ptd` beside it.
pub fn with_program_bytes(part: &Part, fit: &Fit, program: u64) -> Fit {
    let mut out = totals(
        part,
        fit.pools.clone(),
        fit.arenas.clone(),
        fit.budget.clone(),
        program,
        fit.code,
        fit.inputs,
    );
    out.not_modelled = fit.not_modelled.clone();
    out.flash_complete = fit.flash_complete;
    out
}

/// The totals and each region's use of `pools` with the program and its code where the
/// part's link puts them.
fn totals(
    part: &Part,
    pools: Vec<Pool>,
    arenas: Vec<u64>,
    budget: RamBudget,
    program: u64,
    code: CodeSizes,
    inputs: u64,
) -> Fit {
    let ram_total = pools
        .iter()
        .map(|p| p.bytes)
        .fold(0u64, u64::saturating_add);
    let measured = [code.runtime, code.kernels, code.cmsis_nn];
    let code_total = measured
        .iter()
        .flatten()
        .fold(0u64, |a, &b| a.saturating_add(b));
    let flash_total = program.saturating_add(code_total);
    use crate::part::RegionKind;
    let kind_of = |name: &str| part.region(name).map(|r| r.kind);
    // code run from RAM is copied there at start from the non-volatile region the constants
    // are read from (code executed in place from external flash is not copied)
    let code_copied = matches!(
        kind_of(&part.link.code),
        Some(RegionKind::Itcm | RegionKind::Dtcm | RegionKind::Sram)
    ) && matches!(
        kind_of(&part.link.constants),
        Some(RegionKind::Flash | RegionKind::Mram)
    );
    let regions: Vec<RegionUse> = part
        .regions
        .iter()
        .map(|r| {
            let mut used = pools
                .iter()
                .filter(|p| p.region == r.name)
                .fold(0u64, |a, p| a.saturating_add(p.bytes));
            if part.link.constants == r.name {
                used = used.saturating_add(program);
            }
            // code run from RAM (copied to ITCM at start) keeps its load image in the
            // non-volatile region the constants are read from
            if part.link.code == r.name || (code_copied && part.link.constants == r.name) {
                used = used.saturating_add(code_total);
            }
            RegionUse {
                name: r.name.clone(),
                used,
                size: r.size,
            }
        })
        .collect();
    Fit {
        fits: regions.iter().all(|r| r.used <= r.size),
        pools,
        ram_total,
        program,
        code,
        flash_total,
        flash_complete: code.complete && measured.iter().all(Option::is_some),
        regions,
        not_modelled: budget
            .method
            .not_modelled
            .iter()
            .cloned()
            .chain([STATIC_RAM_NOT_COUNTED.to_string()])
            .collect(),
        arenas,
        budget,
        inputs,
    }
}

/// What the program's planned arenas become when its float inputs are passed as int8 (as
/// ExecuTorch's `QuantizeInputs` makes a program take them): each input that only a quantize
/// reads is gone from the arena, the quantize's output is the input, and ExecuTorch's greedy
/// planner places the rest again. `None` when no input is quantized on entry.
pub fn arenas_with_int8_inputs(program: &Program, plan_index: usize) -> Option<Vec<u64>> {
    arenas_with_int8_io(program, plan_index, false)
}

/// The arenas as [`arenas_with_int8_inputs`], and with `outputs` the outputs returned as int8
/// too (ExecuTorch's `QuantizeOutputs`: each output a dequantize makes is the dequantize's int8
/// input, the float tensor gone from the arena). `None` when nothing changes.
pub fn arenas_with_int8_io(
    program: &Program,
    plan_index: usize,
    outputs: bool,
) -> Option<Vec<u64>> {
    let mut graph = crate::ir::from_pte::graph_from_plan(program, plan_index)?;
    let inputs = quantized_inputs_as_inputs(&mut graph);
    // what was asked changed something: the outputs when asked, else the inputs
    let changed = if outputs {
        quantized_outputs_as_outputs(&mut graph)
    } else {
        inputs
    };
    if !changed {
        return None;
    }
    let plan = crate::plan::derive(&graph);
    let placed = crate::plan::executorch::plan(&graph, &plan);
    Some(
        (1..=graph.arenas.len())
            .map(|id| {
                u32::try_from(id)
                    .ok()
                    .and_then(|id| placed.get(&id))
                    .map_or(0, |a| a.size)
            })
            .collect(),
    )
}

/// Rewrites `graph` so that each input read only by a quantize is replaced by that quantize's
/// output; whether any was.
fn quantized_inputs_as_inputs(graph: &mut Graph) -> bool {
    let mut changed = false;
    for k in 0..graph.inputs.len() {
        let v = graph.inputs[k];
        let [reader] = graph.values[v].consumers[..] else {
            continue;
        };
        let node = &graph.nodes[reader];
        let quantizes = node.def().is_some_and(|d| d.traits.quantizes);
        let Some(&q) = node.outputs.first() else {
            continue;
        };
        if !quantizes || node.inputs.first() != Some(&v) {
            continue;
        }
        graph.inputs[k] = q;
        graph.values[q].producer = None;
        graph.values[v].storage = Storage::Unplanned;
        graph.values[v].placement = None;
        changed = true;
    }
    changed
}

/// Rewrites `graph` so that each output a dequantize makes is replaced by the dequantize's
/// input; whether any was.
fn quantized_outputs_as_outputs(graph: &mut Graph) -> bool {
    let mut changed = false;
    for k in 0..graph.outputs.len() {
        let o = graph.outputs[k];
        let Some(node) = graph.values[o].producer.and_then(|p| graph.nodes.get(p)) else {
            continue;
        };
        let dequantizes = node.def().is_some_and(|d| d.traits.dequantizes);
        let Some(&codes) = node.inputs.first() else {
            continue;
        };
        if !dequantizes
            || graph.values[o]
                .consumers
                .iter()
                .any(|&c| graph.nodes[c].kind != crate::ir::NodeKind::Output)
        {
            continue;
        }
        graph.outputs[k] = codes;
        graph.values[o].storage = Storage::Unplanned;
        graph.values[o].placement = None;
        changed = true;
    }
    changed
}

/// `fit` of a program whose arenas are `arenas` instead (a what-if), the rest as `base` measured.
pub fn refit(part: &Part, base: &Fit, arenas: Vec<u64>) -> Fit {
    assemble(
        part,
        arenas,
        base.budget.clone(),
        base.program,
        base.code,
        base.inputs,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pools_add_up_and_a_region_counts_what_the_link_puts_in_it() {
        let part = crate::part::find("nucleo-l4r5zi").expect("a built-in part");
        let budget = RamBudget {
            planned: 1000,
            method_allocator: 300,
            temp_allocator: 40,
            scratch: 0,
            flash: 5000,
            planned_scratch: 0,
            total_ram: 1340,
            method: crate::plan::budget::MethodAllocation::default(),
        };
        let fit = assemble(
            &part,
            vec![600, 400],
            budget.clone(),
            5000,
            CodeSizes {
                runtime: Some(100_000),
                kernels: None,
                cmsis_nn: Some(7000),
                kernel_registry_ram: 0,
                complete: true,
                build: "cortex-m4",
            },
            1,
        );
        // the runner's pool: 608 + 400 (each arena rounded to 16) + 300 + 16 (one input's
        // EValue): 24 bytes beyond the arenas and the method allocator
        let padding = fit
            .pools
            .iter()
            .find(|p| p.name == RUNNER_PADDING)
            .expect("the runner's padding");
        assert_eq!(padding.bytes, 24);
        assert_eq!(fit.ram_total, 1364);
        assert_eq!(fit.pools.len(), 5);
        assert_eq!(fit.flash_total, 112_000);
        assert!(!fit.flash_complete);
        let ram = fit
            .regions
            .iter()
            .find(|r| r.name == "SRAM1")
            .expect("SRAM1");
        assert_eq!(ram.used, 1364);
        let flash = fit
            .regions
            .iter()
            .find(|r| r.name == "Flash")
            .expect("flash");
        assert_eq!(flash.used, 112_000);
        assert!(fit.fits);
        // an arena larger than the region does not fit
        let big = assemble(&part, vec![10 << 20], budget, 5000, CodeSizes::default(), 0);
        assert!(!big.fits);
    }

    /// On a part whose link copies code into ITCM and keeps static data with the stack in
    /// DTCM (the Alif E8's HP core), the code is in ITCM and in MRAM (its load image), the
    /// kernel registry (the runtime's .bss) where the stack is; every fit says what it leaves out.
    #[test]
    fn code_run_from_ram_keeps_its_load_image_and_the_registry_sits_with_static_data() {
        let part = crate::part::find("alif-e8-hp").expect("a built-in part");
        let code = CodeSizes {
            runtime: Some(50_000),
            kernels: Some(20_000),
            cmsis_nn: Some(10_000),
            kernel_registry_ram: 24_000,
            complete: true,
            build: "cortex-m55",
        };
        let budget = RamBudget {
            planned: 4096,
            method_allocator: 300,
            temp_allocator: 0,
            scratch: 0,
            flash: 9000,
            planned_scratch: 0,
            total_ram: 4396,
            method: crate::plan::budget::MethodAllocation::default(),
        };
        let fit = assemble(&part, vec![4096], budget, 9000, code, 1);
        let used = |name: &str| fit.regions.iter().find(|r| r.name == name).map(|r| r.used);
        assert_eq!(part.link.code, "ITCM");
        assert_eq!(used("ITCM"), Some(80_000));
        assert_eq!(used(&part.link.constants), Some(89_000));
        let registry = fit
            .pools
            .iter()
            .find(|p| p.name == "kernel registry")
            .expect("the registry");
        assert_eq!(registry.region, part.link.stack);
        assert!(fit.not_modelled.iter().any(|n| n.contains("the stack")));
    }
}
