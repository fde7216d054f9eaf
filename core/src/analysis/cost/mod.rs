//! What a program costs on a Cortex-M core without a board: for every instruction the cycles of
//! the path CMSIS-NN (dbf45dbf, pinned by ExecuTorch 1.5.1) or ExecuTorch's portable kernels
//! take on that core for that shape, as named terms, then the total at a clock.
//!
//! The model counts instructions, not time on a bus: each CMSIS-NN loop's instruction mix as
//! GCC compiles it (`loops`, counted with `scripts/cost/loop_mix.py`), times the loop's trip
//! count for the call's shape (`cmsis_conv`, `cmsis_other`), priced at the core's instruction
//! timings from its Technical Reference Manual (`cores`), plus the wait states of the memory
//! each call's weights and activations sit in (`memory`), when a part or a placement gives
//! them, and of fetching the code where the part states its instruction cache. It leaves out
//! bus contention; docs/cost-model.md
//! writes each term down and how it compares with published measurements
//! (`core/tests/cost_model.rs`).
//!
//! - [`cores`] — the cores, their CMSIS-NN path and instruction timings
//! - [`mix`] — an instruction mix and its cycles
//! - [`loops`] — CMSIS-NN's loops as instruction mixes
//! - [`call`] — a call's shape from the program
//! - [`memory`] — a call's memory traffic and what its regions' wait states cost
//! - [`memory_note`] — what the memory terms charge on a part, in words
//! - [`delegates`] — where a delegate's work runs beside a Cortex-M (an NPU, or nowhere)
//! - [`cmsis_conv`], [`cmsis_other`], [`portable`] — one function per kernel path
//! - [`measured`] — a capture's times against the estimate, outliers flagged

pub mod call;
pub mod cmsis_conv;
pub mod cmsis_other;
pub mod cores;
pub mod delegates;
pub mod loops;
pub mod measured;
pub mod memory;
pub mod memory_note;
pub mod mix;
pub mod portable;

pub use cores::{priced_core, priced_cores, Core, Timing};
pub use memory::{MemoryCosts, RegionCost, Traffic};
pub use mix::Mix;

use crate::formats::pte::{InstructionCall, Program};
use crate::ir::call::CallView;
use crate::ir::ValueInfo;
use crate::kernels::cmsis::core_buffers;
use crate::ops::CostModel;
use call::{bytes, spatial};

/// What an estimate is, said wherever one is shown (CLI, JSON, the window).
pub const ESTIMATE_WHAT: &str = "estimate: CMSIS-NN's compiled loops priced at the core's instruction timings, plus the wait states of the memory the data and the code sit in where known (docs/cost-model.md); no bus contention";

/// What the estimate is asked for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostOptions {
    pub core: Core,
    /// Clock in MHz (for milliseconds).
    pub mhz: f64,
    /// What the memory the weights and the arenas sit in costs (zero: zero-wait memory).
    pub memory: MemoryCosts,
}

impl CostOptions {
    /// Compute only: every access at the core's own timing.
    pub fn compute_only(core: Core, mhz: f64) -> CostOptions {
        CostOptions {
            core,
            mhz,
            memory: MemoryCosts::default(),
        }
    }
}

/// The estimated cycles of `program`'s default plan on `core` (every priced call; `None` when
/// the plan cannot be estimated): what a variant of a program costs, for tables that compare
/// variants (the sensitivity sweep).
pub fn program_cycles(program: &Program, core: Core) -> Option<f64> {
    estimate(
        program,
        program.default_plan_index(),
        CostOptions::compute_only(core, core.typical_mhz()),
    )
    .ok()
    .map(|e| e.total_cycles())
}

/// One named part of a row's cycles.
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    pub name: &'static str,
    pub cycles: f64,
    /// Instructions the term executes (what instruction fetch moves): a loop's mix counted, a
    /// library call or float operation taken as one instruction a cycle; 0 for memory terms.
    pub instructions: f64,
}

/// A priced kernel call: the path taken, its MACs and its terms.
#[derive(Debug, Clone, PartialEq)]
pub struct Priced {
    pub path: String,
    pub macs: u64,
    pub terms: Vec<Term>,
    /// Bytes of weights the loops read, re-reads counted (the memory terms' input).
    pub weight_reads: f64,
}

impl Priced {
    fn new(path: &str, macs: u64) -> Priced {
        Priced {
            path: path.to_string(),
            macs,
            terms: Vec::new(),
            weight_reads: 0.0,
        }
    }

    fn add(&mut self, term: Term) {
        if term.cycles > 0.0 {
            self.terms.push(term);
        }
    }

    fn add_cycles(&mut self, name: &'static str, cycles: f64) {
        self.add(Term {
            name,
            cycles,
            instructions: cycles,
        });
    }

    /// Instructions the call executes.
    pub fn instructions(&self) -> f64 {
        self.terms.iter().map(|t| t.instructions).sum()
    }

    /// `bytes` bytes of weights read by the loops (priced where the weights sit, `memory`).
    fn weights_read(&mut self, bytes: f64) {
        self.weight_reads += bytes;
    }

    /// The sum of the terms.
    pub fn cycles(&self) -> f64 {
        self.terms.iter().map(|t| t.cycles).sum()
    }
}

/// Prices mixes on one core.
pub struct Pricer {
    pub core: Core,
    pub timing: Timing,
}

/// Thumb-1 (Cortex-M0+) executes more instructions for the same C than Thumb-2: the M0+ build
/// of `arm_nn_mat_mult_nt_t_s8`'s plain column loop is 24 instructions where the M3's is 10.
const THUMB1_EXPANSION: f64 = 2.4;

impl Pricer {
    /// A pricer for `core`; `None` for a core the model has no timings of.
    pub fn new(core: Core) -> Option<Pricer> {
        Some(Pricer {
            core,
            timing: core.timing()?,
        })
    }

    /// ExecuTorch's per-call overhead on this core.
    pub fn call_overhead(&self) -> f64 {
        self.mix("ExecuTorch call overhead", loops::CALL_OVERHEAD)
            .cycles
    }

    fn mix(&self, name: &'static str, m: Mix) -> Term {
        let expansion = if self.core == Core::M0Plus {
            THUMB1_EXPANSION
        } else {
            1.0
        };
        Term {
            name,
            cycles: m.cycles(&self.timing) * expansion,
            instructions: m.instructions() * expansion,
        }
    }
}

/// One instruction's estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct CostRow {
    pub instruction_id: usize,
    pub op: String,
    pub path: String,
    pub macs: u64,
    /// `None` when etscope has no model of the call (the reason is in `note`).
    pub cycles: Option<f64>,
    pub terms: Vec<Term>,
    /// The call's memory traffic (priced rows only).
    pub traffic: Option<Traffic>,
    pub note: Option<String>,
}

/// A program's estimate on one core.
#[derive(Debug, Clone, PartialEq)]
pub struct CostEstimate {
    pub options: CostOptions,
    pub rows: Vec<CostRow>,
    /// Calls the core would not run (the program was lowered for another core), with why;
    /// the run fails there on a board.
    pub would_not_run: Vec<(usize, String)>,
}

impl CostEstimate {
    /// Cycles of every priced row.
    pub fn total_cycles(&self) -> f64 {
        // from +0: an empty sum of floats is -0, which prints as "-0.000 ms"
        self.rows
            .iter()
            .filter_map(|r| r.cycles)
            .fold(0.0, |a, c| a + c)
    }

    /// Milliseconds at the clock.
    pub fn total_ms(&self) -> f64 {
        self.total_cycles() / (self.options.mhz * 1000.0)
    }

    /// Rows without a model (the total leaves them out).
    pub fn unpriced(&self) -> usize {
        self.rows.iter().filter(|r| r.cycles.is_none()).count()
    }

    /// The same estimate with its data placed elsewhere: each call's weights at
    /// `weights(instruction_id)`, each arena at `arena(memory_id)`; the compute terms kept.
    pub fn placed(
        &self,
        weights: impl Fn(usize) -> RegionCost,
        arena: impl Fn(u32) -> RegionCost,
    ) -> CostEstimate {
        let mut out = self.clone();
        for row in &mut out.rows {
            let (Some(traffic), Some(_)) = (&row.traffic, row.cycles) else {
                continue;
            };
            row.terms.retain(|t| !memory::is_memory_term(t));
            row.terms.extend(traffic.terms(
                weights(row.instruction_id),
                &arena,
                self.options.memory.dcache_bytes,
            ));
            row.cycles = Some(row.terms.iter().map(|t| t.cycles).sum());
        }
        out
    }

    /// The row of instruction `id` (rows are in instruction order).
    pub fn row(&self, id: usize) -> Option<&CostRow> {
        self.rows
            .binary_search_by_key(&id, |r| r.instruction_id)
            .ok()
            .and_then(|i| self.rows.get(i))
    }
}

/// Errors of the estimate.
#[derive(Debug, thiserror::Error)]
pub enum CostError {
    #[error("the program has no execution plan {0}")]
    NoPlan(usize),
    #[error("clock {0} MHz is not a Cortex-M clock (between 1 and 2000 MHz; the clock is in MHz, not Hz)")]
    Clock(f64),
    #[error("the cost model has no timings of the {0}")]
    Unpriced(&'static str),
}

/// The estimate of plan `plan_index` of `program` under `options`: each kernel call priced
/// from its IR node ([`CallView`], arguments by schema name), in instruction order.
pub fn estimate(
    program: &Program,
    plan_index: usize,
    options: CostOptions,
) -> Result<CostEstimate, CostError> {
    let graph = crate::ir::from_pte::graph_from_plan(program, plan_index)
        .ok_or(CostError::NoPlan(plan_index))?;
    if !(1.0..=2000.0).contains(&options.mhz) {
        return Err(CostError::Clock(options.mhz));
    }
    let pricer = Pricer::new(options.core).ok_or(CostError::Unpriced(options.core.name()))?;
    let memory = options.memory;
    let code = CodeFetch::new(program, plan_index, options.core, memory.icache_bytes);
    let mut rows = Vec::new();
    let mut would_not_run = Vec::new();
    for (id, call) in program.instruction_calls(plan_index).iter().enumerate() {
        match call {
            InstructionCall::Kernel(qualified) => {
                let Some(node) = graph.node_for_instruction(id) else {
                    rows.push(unpriced(id, qualified, "the call has no node"));
                    continue;
                };
                let view = CallView::new(&graph, node);
                if let Some(why) = view
                    .core_call()
                    .and_then(|c| core_buffers::not_as_lowered_on(options.core.kernel_target(), c))
                {
                    would_not_run.push((id, why.to_string()));
                }
                match price_call(&pricer, &view) {
                    Ok(mut priced) => {
                        priced.add(pricer.mix("ExecuTorch call overhead", loops::CALL_OVERHEAD));
                        let mut traffic = Traffic::of_call(&view, priced.weight_reads);
                        traffic.code_bytes = code.bytes_of(id);
                        traffic.instructions = priced.instructions();
                        priced.terms.extend(traffic.terms(
                            memory.weights,
                            |_| memory.arenas,
                            memory.dcache_bytes,
                        ));
                        priced.terms.extend(traffic.code_term(
                            memory.code,
                            memory.icache_bytes,
                            code.instruction_bytes,
                        ));
                        rows.push(CostRow {
                            instruction_id: id,
                            op: qualified.clone(),
                            path: priced.path.clone(),
                            macs: priced.macs,
                            cycles: Some(priced.cycles()),
                            terms: priced.terms,
                            traffic: Some(traffic),
                            note: None,
                        });
                    }
                    Err(why) => rows.push(unpriced(id, qualified, &why)),
                }
            }
            InstructionCall::Delegate(name) => {
                if delegates::host(name) == delegates::DelegateHost::NotOnCortexM {
                    would_not_run.push((id, delegates::not_on_cortex_m(name)));
                }
                rows.push(unpriced(
                    id,
                    &format!("delegate {name}"),
                    &delegates::unpriced_why(name),
                ));
            }
            // moves, frees and jumps are pointer work, a few cycles each
            InstructionCall::Other(_) => {}
        }
    }
    Ok(CostEstimate {
        options,
        rows,
        would_not_run,
    })
}

/// The code each call fetches through an instruction cache of a known size, in steady state
/// (the inference repeated): a fully associative LRU cache of whole operators' code. A call
/// misses, and fetches its operator's code (its kernel and the CMSIS-NN functions it calls, as
/// linked), when the distinct code run since the same operator last ran, its own included,
/// does not fit in the cache; else it hits and fetches nothing. Only the Cortex-M backend's
/// operators are sized: a portable kernel's linked code holds every dtype's instantiation (77 KB
/// for `add.out`), far more than a call runs, so its calls are not charged (`None`), as an
/// operator not measured is not.
struct CodeFetch {
    /// Bytes each call (by instruction id) fetches; `None`: its code not sized.
    fetched: std::collections::BTreeMap<usize, Option<u64>>,
    instruction_bytes: f64,
}

impl CodeFetch {
    fn new(program: &Program, plan_index: usize, core: Core, icache_bytes: Option<u32>) -> Self {
        let thumb1 = matches!(core, Core::M0 | Core::M0Plus | Core::M23);
        let mut fetch = CodeFetch {
            fetched: std::collections::BTreeMap::new(),
            instruction_bytes: if thumb1 { 2.0 } else { 4.0 },
        };
        // not known: not charged; none: every instruction (the term counts them)
        let Some(cache) = icache_bytes.filter(|&b| b > 0).map(u64::from) else {
            return fetch;
        };
        let calls: Vec<(usize, String)> = program
            .instruction_calls(plan_index)
            .iter()
            .enumerate()
            .filter_map(|(id, c)| match c {
                InstructionCall::Kernel(op) => Some((id, op.clone())),
                _ => None,
            })
            .collect();
        let mut size: std::collections::BTreeMap<&str, Option<u64>> =
            std::collections::BTreeMap::new();
        for (_, op) in &calls {
            size.entry(op.as_str()).or_insert_with(|| {
                if !op.starts_with("cortex_m::") {
                    return None;
                }
                let c = crate::part::code::program_code(std::slice::from_ref(op), core);
                c.unknown_ops
                    .is_empty()
                    .then(|| c.kernels.saturating_add(c.cmsis_nn))
            });
        }
        let bytes = |op: &str| size.get(op).copied().flatten().unwrap_or(0);
        let n = calls.len();
        for (i, (id, op)) in calls.iter().enumerate() {
            let Some(own) = size.get(op.as_str()).copied().flatten() else {
                fetch.fetched.insert(*id, None);
                continue;
            };
            let mut seen: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
            let mut between = 0u64;
            let mut hit = false;
            // back through the repeated sequence to the operator's last run (itself, for an
            // operator called once: everything else ran in between)
            for back in 1..=n {
                let (_, other) = &calls[(i + n - back) % n];
                if other == op {
                    hit = between.saturating_add(own) <= cache;
                    break;
                }
                if seen.insert(other.as_str()) {
                    between = between.saturating_add(bytes(other));
                }
                if between.saturating_add(own) > cache {
                    break;
                }
            }
            fetch.fetched.insert(*id, Some(if hit { 0 } else { own }));
        }
        fetch
    }

    /// What call `id` fetches: `Some(0)` when no cache is known (the term is then not
    /// charged, or charged per instruction with none).
    fn bytes_of(&self, id: usize) -> Option<u64> {
        self.fetched.get(&id).copied().unwrap_or(Some(0))
    }
}

fn unpriced(id: usize, op: &str, why: &str) -> CostRow {
    CostRow {
        instruction_id: id,
        op: op.to_string(),
        path: String::new(),
        macs: 0,
        cycles: None,
        terms: Vec::new(),
        traffic: None,
        note: Some(why.to_string()),
    }
}

/// One kernel call priced by its operator's cost column, or why it cannot be.
fn price_call(p: &Pricer, call: &CallView<'_>) -> Result<Priced, String> {
    let name = call.op();
    let shape = || format!("{name}: the program does not give the call's shapes");
    let out_elems = || {
        call.tensors()
            .last()
            .and_then(|t| t.elements())
            .ok_or_else(shape)
    };
    // the node's registry entry, looked up when the graph was built: its cost column says
    // which kernel model prices the call
    let Some(id) = call.node.op_id else {
        return Err(format!(
            "{name}: an operator etscope does not know; no cost model"
        ));
    };
    let def = crate::ops::def(id);
    match def.cost {
        CostModel::CmsisConv => {
            let g = spatial(call).ok_or_else(shape)?;
            let wi = call
                .tensor("weight")
                .and_then(|w| w.shape.get(3).and_then(|&s| usize::try_from(s).ok()))
                .ok_or_else(shape)?;
            Ok(cmsis_conv::conv(p, &g, wi))
        }
        CostModel::CmsisDepthwise => {
            let g = spatial(call).ok_or_else(shape)?;
            let m = call
                .int("depth_multiplier")
                .and_then(|m| usize::try_from(m).ok())
                .ok_or_else(shape)?;
            Ok(cmsis_conv::depthwise(p, &g, m))
        }
        CostModel::CmsisTransposeConv => {
            let g = spatial(call).ok_or_else(shape)?;
            let wi = call
                .tensor("weight")
                .and_then(|w| w.shape.get(3).and_then(|&s| usize::try_from(s).ok()))
                .ok_or_else(shape)?;
            Ok(cmsis_conv::transpose_conv(p, &g, wi))
        }
        CostModel::CmsisLinear => {
            let w = call.tensor("weights").ok_or_else(shape)?;
            let (cols, k) = match w.shape.as_slice() {
                &[n, k] => (usize::try_from(n).ok(), usize::try_from(k).ok()),
                _ => (None, None),
            };
            let (cols, k) = (cols.ok_or_else(shape)?, k.ok_or_else(shape)?);
            let input = call
                .tensor("input")
                .and_then(ValueInfo::elements)
                .ok_or_else(shape)?;
            Ok(cmsis_conv::linear(p, input / k.max(1), cols, k, false))
        }
        CostModel::CmsisBatchMatmul => {
            let lhs = call.tensor("lhs").ok_or_else(shape)?;
            let rhs = call.tensor("rhs_transposed").ok_or_else(shape)?;
            let dims = |t: &crate::ir::ValueInfo| -> Option<(usize, usize, usize)> {
                let s: Vec<usize> = t
                    .shape
                    .iter()
                    .map(|&x| usize::try_from(x).ok())
                    .collect::<Option<_>>()?;
                let n = s.len();
                if n < 2 {
                    return None;
                }
                Some((s[..n - 2].iter().product(), s[n - 2], s[n - 1]))
            };
            let ((b, m, k), (_, n, _)) =
                (dims(lhs).ok_or_else(shape)?, dims(rhs).ok_or_else(shape)?);
            let mut one = cmsis_conv::linear(p, m, n, k, true);
            for t in &mut one.terms {
                t.cycles *= b as f64;
            }
            one.weight_reads *= b as f64;
            one.macs *= b as u64;
            Ok(one)
        }
        CostModel::CmsisAvgPool => Ok(cmsis_other::pool(
            p,
            &spatial(call).ok_or_else(shape)?,
            true,
        )),
        CostModel::CmsisMaxPool => Ok(cmsis_other::pool(
            p,
            &spatial(call).ok_or_else(shape)?,
            false,
        )),
        CostModel::CmsisSoftmax => Ok(cmsis_other::softmax(p, out_elems()?)),
        CostModel::CmsisAdd => Ok(cmsis_other::elementwise(
            p,
            out_elems()?,
            "arm_elementwise_add_s8",
        )),
        CostModel::CmsisMul => Ok(cmsis_other::elementwise(
            p,
            out_elems()?,
            "arm_elementwise_mul_s8",
        )),
        CostModel::CmsisDiv => {
            let mut e =
                cmsis_other::elementwise(p, out_elems()?, "quantized_div (scalar, float divide)");
            e.add_cycles("float divides", p.timing.float_div * out_elems()? as f64);
            Ok(e)
        }
        CostModel::CmsisLut => {
            // one table entry read per element, from wherever the table (a constant) sits
            let n = out_elems()?;
            let mut priced = cmsis_other::bytewise(p, n, "LUT activation");
            priced.weights_read(n as f64);
            Ok(priced)
        }
        CostModel::CmsisMinMax => Ok(cmsis_other::bytewise(
            p,
            out_elems()?,
            "arm_minimum_s8 / arm_maximum_s8",
        )),
        CostModel::CmsisTranspose => Ok(cmsis_other::bytewise(p, out_elems()?, "arm_transpose_s8")),
        CostModel::CmsisQuantize => Ok(cmsis_other::quantize(p, out_elems()?, true)),
        CostModel::CmsisDequantize => Ok(cmsis_other::quantize(p, out_elems()?, false)),
        CostModel::CmsisPad => {
            let out = call.tensors().last().copied().ok_or_else(shape)?;
            let b = bytes(out).ok_or_else(shape)?;
            let last = out
                .shape
                .last()
                .and_then(|&s| usize::try_from(s).ok())
                .unwrap_or(1);
            Ok(cmsis_other::copy(
                p,
                b,
                out.elements().unwrap_or(0) / last.max(1),
                "pad (row copies)",
            ))
        }
        CostModel::Portable => Ok(portable::price(p, call, def.category)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn fixture(rel: &str) -> Program {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures")
            .join(rel);
        Program::parse(std::fs::read(&path).expect("fixture")).expect("parses")
    }

    fn options(core: Core) -> CostOptions {
        CostOptions::compute_only(core, 100.0)
    }

    #[test]
    fn every_kernel_call_of_a_cortex_m_program_is_priced_and_the_rows_add_up() {
        let p = fixture("tiny_conv_relu_linear/model_int8_cortex_m4_default.pte");
        for core in priced_cores() {
            let e = estimate(&p, 0, options(core)).expect("estimate");
            let calls = p
                .instruction_calls(0)
                .iter()
                .filter(|c| matches!(c, InstructionCall::Kernel(_)))
                .count();
            assert_eq!(e.rows.len(), calls, "{core:?}");
            assert_eq!(e.unpriced(), 0, "{core:?}");
            let sum: f64 = e.rows.iter().filter_map(|r| r.cycles).sum();
            assert!((sum - e.total_cycles()).abs() < 1e-6);
            assert!(e.total_cycles() > 0.0);
            assert!((e.total_ms() - e.total_cycles() / 100_000.0).abs() < 1e-9);
        }
    }

    #[test]
    fn slower_cores_cost_more_cycles_and_wait_states_add_to_weight_reads() {
        let p = fixture("tiny_conv_relu_linear/model_int8_cortex_m4_default.pte");
        let cycles = |core, ws| {
            estimate(
                &p,
                0,
                CostOptions {
                    memory: MemoryCosts {
                        weights: RegionCost {
                            wait_states: ws,
                            line_bytes: 16,
                        },
                        ..MemoryCosts::default()
                    },
                    ..options(core)
                },
            )
            .expect("estimate")
            .total_cycles()
        };
        assert!(cycles(Core::M0Plus, 0) > cycles(Core::M4, 0));
        assert!(cycles(Core::M4, 0) > cycles(Core::M7, 0));
        assert!(cycles(Core::M4, 5) > cycles(Core::M4, 0));
    }

    #[test]
    fn code_fetch_is_charged_per_call_past_a_small_instruction_cache_and_not_when_resident() {
        let p = fixture("tiny_conv_relu_linear/model_int8_cortex_m4_default.pte");
        let code_cycles = |icache_bytes| {
            let o = CostOptions {
                memory: MemoryCosts {
                    code: RegionCost {
                        wait_states: 5,
                        line_bytes: 16,
                    },
                    icache_bytes,
                    ..MemoryCosts::default()
                },
                ..options(Core::M4)
            };
            let e = estimate(&p, 0, o).expect("estimate");
            e.rows
                .iter()
                .flat_map(|r| &r.terms)
                .filter(|t| t.name == memory::CODE_TERM)
                .map(|t| t.cycles)
                .sum::<f64>()
        };
        let linked = crate::part::code::program_code(
            &["cortex_m::quantized_conv2d.out".to_string()],
            Core::M4,
        );
        // a 1 KiB cache: each call fetches its kernel's code once, the convolution's included
        assert!(
            code_cycles(Some(1024))
                >= ((linked.kernels + linked.cmsis_nn) as f64 / 16.0).ceil() * 5.0
        );
        // a cache the kernels fit in: resident; a cache not known: not charged
        assert_eq!(code_cycles(Some(1 << 20)), 0.0);
        assert_eq!(code_cycles(None), 0.0);
        // no cache: every instruction executed, four bytes each
        assert!(code_cycles(Some(0)) > 0.0);
    }

    /// The instruction cache is an LRU of whole operators' code over the repeated inference:
    /// with room for a convolution's and a depthwise convolution's code, DS-CNN's alternating
    /// layers find theirs still there, and only the calls after other operators ran miss.
    #[test]
    fn a_call_whose_code_the_cache_still_holds_fetches_nothing() {
        let p = Program::parse(
            std::fs::read(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../assets/ds_cnn_kws/model_int8_cortex_m55_default.pte"),
            )
            .expect("the shipped DS-CNN"),
        )
        .expect("a program");
        let size = |op: &str| {
            let c = crate::part::code::program_code(&[op.to_string()], Core::M55);
            c.kernels + c.cmsis_nn
        };
        let room = size("cortex_m::quantized_conv2d.out")
            + size("cortex_m::quantized_depthwise_conv2d.out")
            + 16;
        let o = CostOptions {
            memory: MemoryCosts {
                code: RegionCost {
                    wait_states: 8,
                    line_bytes: 16,
                },
                icache_bytes: Some(u32::try_from(room).expect("small")),
                ..MemoryCosts::default()
            },
            ..options(Core::M55)
        };
        let e = estimate(&p, 0, o).expect("estimate");
        let layers: Vec<bool> = e
            .rows
            .iter()
            .filter(|r| r.op.contains("conv2d"))
            .map(|r| r.terms.iter().any(|t| t.name == memory::CODE_TERM))
            .collect();
        let misses = layers.iter().filter(|&&m| m).count();
        assert!(misses > 0 && misses < layers.len() / 2, "{layers:?}");
    }

    /// The first row `pick` chooses of `rel` estimated on `core` with the weights behind
    /// `wait_states` per 16-byte line, and the cycles of its weights' wait states.
    fn weight_waits(
        rel: &str,
        core: Core,
        wait_states: u32,
        pick: impl Fn(&CostRow) -> bool,
    ) -> (CostRow, f64) {
        let slow = CostOptions {
            memory: MemoryCosts {
                weights: RegionCost {
                    wait_states,
                    line_bytes: 16,
                },
                ..MemoryCosts::default()
            },
            ..options(core)
        };
        let e = estimate(&fixture(rel), 0, slow).expect("estimate");
        let row = e.rows.into_iter().find(|r| pick(r)).expect("the row");
        let waits = row
            .terms
            .iter()
            .find(|t| t.name == memory::WEIGHT_TERM)
            .map(|t| t.cycles)
            .expect("its weights' wait states");
        (row, waits)
    }

    #[test]
    fn a_lookup_table_activation_reads_one_entry_per_element_where_the_table_sits() {
        let (_, waits) = weight_waits(
            "ops/quantized_activation__sigmoid_2x19__default__m55/model.pte",
            Core::M55,
            2,
            |r| r.path.contains("LUT"),
        );
        // 2 × 19 elements, one byte each: three 16-byte lines' worth, two wait states each
        assert_eq!(waits, (38.0f64 / 16.0).ceil() * 2.0);
    }

    #[test]
    fn a_float_layer_reads_its_weights_where_they_sit_once_per_mac() {
        let (conv, waits) =
            weight_waits("tiny_conv_relu_linear/model_fp32.pte", Core::M4, 4, |r| {
                r.op.contains("convolution")
            });
        // four bytes per MAC, a 16-byte line per four MACs, four wait states a line
        assert_eq!(waits, (conv.macs as f64 * 4.0 / 16.0).ceil() * 4.0);
    }

    #[test]
    fn a_call_the_core_would_not_run_is_named() {
        // lowered for the M4: its linear carries no kernel sum, which Helium's kernel needs
        let p = fixture("tiny_conv_relu_linear/model_int8_cortex_m4_default.pte");
        let on_m55 = estimate(&p, 0, options(Core::M55)).expect("estimate");
        assert_eq!(on_m55.would_not_run.len(), 1);
        let (id, why) = &on_m55.would_not_run[0];
        assert!(on_m55
            .row(*id)
            .is_some_and(|r| r.op.contains("quantized_linear")));
        assert!(why.contains("kernel sum"), "{why}");
        assert!(estimate(&p, 0, options(Core::M4))
            .expect("estimate")
            .would_not_run
            .is_empty());
    }

    #[test]
    fn a_delegate_call_is_left_unpriced_with_the_reason() {
        let p = fixture("programs/ethos_u55/model.pte");
        let e = estimate(&p, 0, options(Core::M55)).expect("estimate");
        let row = e
            .rows
            .iter()
            .find(|r| r.op.starts_with("delegate"))
            .expect("a delegate row");
        assert!(row.cycles.is_none());
        assert!(row.note.as_deref().unwrap_or("").contains("Vela"));
        assert!(
            e.would_not_run.is_empty(),
            "the NPU runs it beside the core"
        );
    }

    #[test]
    fn an_xnnpack_program_does_not_run_on_a_cortex_m_and_its_empty_total_is_plus_zero() {
        let p = fixture("tiny_conv_relu_linear/model_fp32_xnnpack.pte");
        let e = estimate(&p, 0, options(Core::M4)).expect("estimate");
        assert_eq!(e.would_not_run.len(), 1, "{:?}", e.would_not_run);
        assert!(e.would_not_run[0].1.contains("XnnpackBackend"));
        assert_eq!(e.unpriced(), 1);
        assert!(e.total_cycles().is_sign_positive() && e.total_cycles() == 0.0);
    }

    #[test]
    fn a_portable_convolution_and_matmul_count_their_outputs_macs() {
        // the digits CNN in fp32: conv 1→8 3×3 on 8×8, conv 8→16 3×3 to 4×4, linear 256→10
        let p = fixture("digits/cnn_fp32.pte");
        let e = estimate(&p, 0, options(Core::M4)).expect("estimate");
        let macs: Vec<u64> = e
            .rows
            .iter()
            .filter(|r| r.macs > 0)
            .map(|r| r.macs)
            .collect();
        assert_eq!(macs, vec![8 * 8 * 8 * 9, 16 * 4 * 4 * 8 * 9, 10 * 256]);
        assert!(e.rows.iter().all(|r| r.path.contains("coarse")));
    }

    #[test]
    fn a_bad_clock_is_refused() {
        let p = fixture("tiny_conv_relu_linear/model_int8_cortex_m4_default.pte");
        let mut o = options(Core::M4);
        for mhz in [0.0, f64::NAN, 1e9, 0.001] {
            o.mhz = mhz;
            assert!(
                matches!(estimate(&p, 0, o), Err(CostError::Clock(_))),
                "{mhz}"
            );
        }
        assert!(matches!(
            estimate(&p, 7, options(Core::M4)),
            Err(CostError::NoPlan(7))
        ));
    }
}
