//! The reference runtime: executes a `.pte` execution plan on the host, including the
//! `cortex_m::` int8 kernels with CMSIS-NN arithmetic, and captures every instruction's outputs.
//!
//! [`Runtime`] is the immutable prepared plan (constants decoded, views resolved); each
//! [`Runtime::run`] makes its own value table, so one plan serves any number of runs. Tensors
//! are kept apart (not inside the planned arenas) and in logical row-major order; `dim_order`
//! is undone when constants are loaded.

pub mod cmsis;
mod cmsis_conv;
mod cmsis_ops;
mod cmsis_pool;
pub mod core_buffers;
pub mod device_notes;
mod kernel;
pub mod layout;
mod portable;
mod portable_nn;
mod portable_tensor;
mod quantized;
pub mod stage;
pub mod value;
pub mod verify;

use thiserror::Error;

use crate::ir::from_pte::graph_from_plan;
use crate::ir::{Graph, Placement};
use crate::pte::{EValue, Instruction, Program};
use crate::tensor::{undo_dim_order, TensorData};
use cmsis_conv::Act;
use kernel::Ctx;
use value::{Buf, HostTensor, RValue};

/// The core whose arithmetic the Cortex-M kernels reproduce. They differ in `quantize`: scalar
/// cores compute `nearbyint(x · (1/scale))`; Helium/MVE cores (M55) compute, for every full
/// block of 16 elements, a fused multiply-add with a rounding constant and narrow through
/// int16 without saturation (the tail uses the scalar path). Which CMSIS-NN path runs (MVE,
/// DSP, plain C) also decides which buffers a call needs (`core_buffers`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Target {
    /// Cortex-M55/M85 (Helium/MVE). Default: the reference programs target it.
    #[default]
    CortexM55,
    /// Cores with the DSP extension and no Helium: Cortex-M4, M7, M33, M35P.
    CortexMScalar,
    /// Cores with neither: Cortex-M0, M0+, M3, M23 (CMSIS-NN's plain C path).
    CortexMBase,
}

impl Target {
    /// The core named on a command line (`m55`, `cortex-m4`, ...), `None` when unknown.
    pub fn parse(name: &str) -> Option<Target> {
        let n = name.to_ascii_lowercase();
        let n = n
            .trim_start_matches("cortex-")
            .trim_start_matches("cortex_");
        match n {
            "m55" | "m85" | "mve" | "helium" => Some(Target::CortexM55),
            "m4" | "m7" | "m33" | "m35p" | "dsp" | "scalar" => Some(Target::CortexMScalar),
            "m0" | "m0+" | "m3" | "m23" | "base" => Some(Target::CortexMBase),
            _ => None,
        }
    }

    /// The cores this stands for, as a person reads them.
    pub fn name(self) -> &'static str {
        match self {
            Target::CortexM55 => "Cortex-M55/M85 (Helium)",
            Target::CortexMScalar => "Cortex-M4/M7/M33 (DSP)",
            Target::CortexMBase => "Cortex-M0/M3/M23 (plain C)",
        }
    }

    /// Whether CMSIS-NN runs its Helium (MVE) path on this core.
    pub fn has_helium(self) -> bool {
        self == Target::CortexM55
    }

    /// The core a Cortex-M program was lowered for, where the program says: the backend gives
    /// `quantized_linear` a precomputed `kernel_sum` (and no bias) for Helium/MVE cores only, and
    /// `quantized_batch_matmul` a scratch buffer only for MVE; a call a Helium core could not run
    /// (`core_buffers`) was lowered for a core without one. `None` when nothing tells.
    pub fn of_program(program: &Program, plan_index: usize) -> Option<Target> {
        let plan = program.plans.get(plan_index)?;
        for ins in plan.main_instructions() {
            let Instruction::KernelCall { op_index, args } = ins else {
                continue;
            };
            let Some(op) = plan.operators.get(*op_index) else {
                continue;
            };
            let value = |k: usize| args.get(k).and_then(|&a| plan.values.get(a));
            match op.name.as_str() {
                "cortex_m::quantized_linear" => match (value(2), value(3)) {
                    (_, Some(EValue::Tensor(_))) => return Some(Target::CortexM55),
                    (_, Some(EValue::Null)) => return Some(Target::CortexMScalar),
                    _ => {}
                },
                "cortex_m::quantized_batch_matmul" => {
                    if let Some(EValue::Tensor(t)) = value(7) {
                        let bytes: i64 = t.sizes.iter().map(|&s| i64::from(s)).product();
                        return Some(if bytes > 0 {
                            Target::CortexM55
                        } else {
                            Target::CortexMScalar
                        });
                    }
                }
                name => {
                    // a call a Helium core cannot run was lowered for a core without one
                    let call = core_buffers::call_in_program(plan, name, args);
                    if call
                        .and_then(|c| core_buffers::fails_on(Target::CortexM55, c))
                        .is_some()
                    {
                        return Some(Target::CortexMScalar);
                    }
                }
            }
        }
        None
    }

    /// The program's own target where it says, else the default (Cortex-M55).
    pub fn for_program(program: &Program, plan_index: usize) -> Target {
        Target::of_program(program, plan_index).unwrap_or_default()
    }
}

/// The CMSIS-NN version whose kernels the device runs, where behaviour changed between versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CmsisNn {
    /// dbf45dbf, pinned by ExecuTorch 1.5.1: `arm_transpose_conv_s8` computes wrong rows when
    /// `padding % stride != 0` and leaves the last output row unwritten.
    #[default]
    Dbf45dbf,
    /// 4a8f5b5d or later: transpose convolution fixed.
    Fixed4a8f5b5d,
}

impl CmsisNn {
    /// The version named on a command line (a commit prefix), `None` when unknown.
    pub fn parse(name: &str) -> Option<CmsisNn> {
        match name {
            n if n.len() >= 4 && "dbf45dbf".starts_with(n) => Some(CmsisNn::Dbf45dbf),
            n if n.len() >= 4 && "4a8f5b5d".starts_with(n) => Some(CmsisNn::Fixed4a8f5b5d),
            "pinned" | "executorch-1.5.1" => Some(CmsisNn::Dbf45dbf),
            "fixed" | "latest" => Some(CmsisNn::Fixed4a8f5b5d),
            _ => None,
        }
    }
}

/// What the device kernels model: the core and the CMSIS-NN version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Device {
    pub target: Target,
    pub cmsis_nn: CmsisNn,
}

impl Device {
    /// Plan `plan_index` of `program` on its own core (`Target::for_program`) with the pinned
    /// CMSIS-NN.
    pub fn for_program(program: &Program, plan_index: usize) -> Device {
        Device {
            target: Target::for_program(program, plan_index),
            ..Device::default()
        }
    }
}

/// Why a run failed.
#[derive(Debug, Error)]
pub enum RuntimeError {
    /// The program uses an operator this runtime does not implement.
    #[error("instruction {instruction}: operator {op} is not implemented by etscope's runtime")]
    UnsupportedOp { op: String, instruction: usize },
    /// A delegate blob can only run on its backend.
    #[error("instruction {instruction}: delegate {backend} cannot run on the host (its blob is backend code)")]
    Delegate { backend: String, instruction: usize },
    /// The operator's arguments are not what its kernel expects.
    #[error("instruction {instruction} ({op}): {detail}")]
    BadArgs {
        op: String,
        instruction: usize,
        detail: String,
    },
    /// The inputs given do not fit the program.
    #[error("input {index}: {detail}")]
    Input { index: usize, detail: String },
    /// The program itself is inconsistent.
    #[error("program: {0}")]
    Program(String),
    /// The run needs more work than its budget allows (a hostile or corrupted program: huge
    /// windows, loops that jump back forever).
    #[error("instruction {instruction} ({op}): the run exceeds its work budget of {budget} operations; a real program of this size needs far less")]
    WorkBudget {
        op: String,
        instruction: usize,
        budget: u64,
    },
    /// The device's kernel fails (or the core faults) at this call: what ExecuTorch does on the
    /// board, reproduced rather than computed around.
    #[error("instruction {instruction} ({op}) fails on the device: {why}")]
    DeviceFails {
        op: String,
        instruction: usize,
        why: String,
    },
    /// The caller cancelled the run.
    #[error("cancelled at instruction {instruction}")]
    Cancelled { instruction: usize },
}

/// Operations one run may perform by default: far above any real Cortex-M model (MobileNet
/// v1 0.25 needs about 10^7 multiply-accumulates), low enough that a hostile program is refused
/// within seconds.
pub const DEFAULT_WORK_BUDGET: u64 = 1 << 33;
/// Instructions one run may execute (jumps can loop).
pub const MAX_EXECUTED_INSTRUCTIONS: u64 = 1 << 24;

/// A run's remaining work and its cancel flag, shared by the kernels of one run.
#[derive(Debug)]
pub struct Work {
    remaining: std::cell::Cell<u64>,
    budget: u64,
    cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl Work {
    pub fn new(budget: u64, cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>) -> Work {
        Work {
            remaining: std::cell::Cell::new(budget),
            budget,
            cancel,
        }
    }

    /// Takes `units` from the budget: false when it is spent.
    pub fn take(&self, units: u64) -> bool {
        match self.remaining.get().checked_sub(units) {
            Some(r) => {
                self.remaining.set(r);
                true
            }
            None => false,
        }
    }

    /// The budget the run started with.
    pub fn budget(&self) -> u64 {
        self.budget
    }

    pub fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
    }
}

/// One instruction's captured outputs.
#[derive(Debug, Clone)]
pub struct Captured {
    pub instruction_id: usize,
    /// The out tensors in argument order (one for most ops).
    pub tensors: Vec<HostTensor>,
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub outputs: Vec<HostTensor>,
    /// Per executed instruction, when capture was requested.
    pub captured: Vec<Captured>,
}

/// A prepared execution plan.
pub struct Runtime {
    plan_index: usize,
    device: Device,
    /// Per value, the `dim_order` the program stores it in (empty for non-tensors).
    dim_orders: Vec<Vec<usize>>,
    /// The initial value table (constants decoded, scalars and lists resolved).
    initial: Vec<RValue>,
    graph: Graph,
    ops: Vec<String>,
    instructions: Vec<Instruction>,
    delegates: Vec<String>,
    inputs: Vec<usize>,
    outputs: Vec<usize>,
    /// Graph node of each instruction.
    instr_node: Vec<Option<usize>>,
    /// Arena placement of each planned tensor value (views share their source's).
    placements: Vec<Option<Placement>>,
    arena_sizes: Vec<u64>,
}

/// How to run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Keep every instruction's out tensors.
    pub capture: bool,
    /// Execute inside the program's own memory plan: every planned tensor is read from and
    /// written to one buffer per arena at its planned offset, so a bad plan shows up as
    /// corrupted values (the default keeps tensors apart).
    pub in_arenas: bool,
    /// Operations the run may perform (`None`: [`DEFAULT_WORK_BUDGET`]).
    pub work_budget: Option<u64>,
    /// Set from another thread to stop the run at the next instruction.
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

/// The most bytes a run's non-constant tensors may take together on the host.
pub const MAX_PREPARED_BYTES: u64 = 512 << 20;

/// The most elements one host tensor may hold (1 GiB of f32). Shapes come from the program and
/// operator arguments, so a corrupted file could otherwise ask for more memory than exists.
pub const MAX_TENSOR_ELEMENTS: usize = 1 << 28;

/// The element count of `dims`, or `None` when it overflows or exceeds [`MAX_TENSOR_ELEMENTS`].
pub fn element_count(dims: &[usize]) -> Option<usize> {
    dims.iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .filter(|&n| n <= MAX_TENSOR_ELEMENTS)
}

fn program_err(e: impl std::fmt::Display) -> RuntimeError {
    RuntimeError::Program(e.to_string())
}

/// The storage order of a plan tensor: its `dim_order` when it is a permutation of its dims
/// (ExecuTorch refuses any other), row-major when the program gives none.
fn storage_order(t: &crate::pte::Tensor, value: usize) -> Result<Vec<usize>, RuntimeError> {
    let rank = t.sizes.len();
    if t.dim_order.is_empty() {
        return Ok((0..rank).collect());
    }
    let order: Vec<usize> = t.dim_order.iter().map(|&d| usize::from(d)).collect();
    let mut seen = vec![false; rank];
    let valid = order.len() == rank
        && order
            .iter()
            .all(|&d| d < rank && !std::mem::replace(&mut seen[d], true));
    if !valid {
        return Err(program_err(format!(
            "value {value}: dim_order {:?} is not a permutation of its {rank} dims",
            t.dim_order
        )));
    }
    Ok(order)
}

/// A zero tensor of a plan tensor's dtype and sizes.
fn empty_tensor(t: &crate::pte::Tensor) -> Result<HostTensor, RuntimeError> {
    let shape: Vec<usize> = t.sizes.iter().map(|&s| s.max(0) as usize).collect();
    let n = element_count(&shape)
        .ok_or_else(|| program_err(format!("tensor sizes {:?} are too large", t.sizes)))?;
    let buf = Buf::zeros(t.scalar_type, n).ok_or_else(|| {
        program_err(format!(
            "tensors of {} are not supported",
            t.scalar_type.name()
        ))
    })?;
    Ok(HostTensor {
        dtype: t.scalar_type,
        shape,
        buf,
    })
}

impl Runtime {
    /// Prepares plan `plan_index` of `program` for `target`.
    pub fn new(
        program: &Program,
        plan_index: usize,
        target: Target,
    ) -> Result<Runtime, RuntimeError> {
        let plan = program
            .plans
            .get(plan_index)
            .ok_or_else(|| program_err(format!("no plan {plan_index}")))?;
        let graph = graph_from_plan(program, plan_index).ok_or_else(|| program_err("no graph"))?;
        let mut initial = Vec::with_capacity(plan.values.len());
        let mut prepared: u64 = 0;
        let mut dim_orders = Vec::with_capacity(plan.values.len());
        for (vi, v) in plan.values.iter().enumerate() {
            dim_orders.push(match v {
                EValue::Tensor(t) => storage_order(t, vi)?,
                _ => Vec::new(),
            });
            initial.push(match v {
                EValue::Unset | EValue::Null => RValue::None,
                EValue::Int(i) => RValue::Int(*i),
                EValue::Double(d) => RValue::Double(*d),
                EValue::Bool(b) => RValue::Bool(*b),
                EValue::String(s) => RValue::String(s.clone()),
                EValue::IntList(items) => RValue::IntList(
                    items
                        .iter()
                        .map(|&i| match plan.values.get(i as usize) {
                            Some(EValue::Int(x)) => *x,
                            _ => 0,
                        })
                        .collect(),
                ),
                EValue::DoubleList(d) => RValue::DoubleList(d.clone()),
                EValue::BoolList(b) => RValue::BoolList(b.clone()),
                EValue::TensorList(items) => {
                    RValue::TensorList(items.iter().map(|&i| i as usize).collect())
                }
                EValue::OptionalTensorList(items) => RValue::OptionalTensorList(
                    items
                        .iter()
                        .map(|&i| (i >= 0).then_some(i as usize))
                        .collect(),
                ),
                EValue::Tensor(t) if t.is_constant() => {
                    let bytes = program.constant_bytes(t).map_err(program_err)?;
                    let shape: Vec<usize> = t.sizes.iter().map(|&s| s.max(0) as usize).collect();
                    let elem = t.scalar_type.element_size().unwrap_or(1);
                    let logical =
                        undo_dim_order(&shape, &t.dim_order, elem, bytes).map_err(program_err)?;
                    let buf = Buf::from_le_bytes(t.scalar_type, &logical).ok_or_else(|| {
                        program_err(format!(
                            "constants of {} are not supported",
                            t.scalar_type.name()
                        ))
                    })?;
                    RValue::Tensor(HostTensor {
                        dtype: t.scalar_type,
                        shape,
                        buf,
                    })
                }
                EValue::Tensor(t) => {
                    // every non-constant tensor is allocated here: their sum is bounded, not only
                    // each one (a program can declare thousands of large tensors)
                    prepared = prepared.saturating_add(t.nbytes);
                    if prepared > MAX_PREPARED_BYTES {
                        return Err(program_err(format!(
                            "the program's tensors need more than {} MiB on the host (value {vi})",
                            MAX_PREPARED_BYTES >> 20
                        )));
                    }
                    RValue::Tensor(empty_tensor(t)?)
                }
            });
        }
        let mut instr_node = vec![None; plan.main_instructions().len()];
        for n in &graph.nodes {
            if let Some(i) = n.instruction_id {
                if let Some(slot) = instr_node.get_mut(i) {
                    *slot = Some(n.id);
                }
            }
        }
        let placements = graph.values.iter().map(|v| v.placement).collect();
        let arena_sizes = graph.arenas.clone();
        if let Some(&s) = arena_sizes
            .iter()
            .find(|&&s| s > MAX_TENSOR_ELEMENTS as u64 * 4)
        {
            return Err(program_err(format!(
                "a memory arena of {s} bytes is too large"
            )));
        }
        Ok(Runtime {
            instr_node,
            placements,
            arena_sizes,
            plan_index,
            device: Device {
                target,
                cmsis_nn: CmsisNn::default(),
            },
            dim_orders,
            initial,
            graph,
            ops: plan.operators.iter().map(|o| o.qualified()).collect(),
            instructions: plan.main_instructions().to_vec(),
            delegates: plan.delegates.iter().map(|d| d.id.clone()).collect(),
            inputs: plan.inputs.clone(),
            outputs: plan.outputs.clone(),
        })
    }

    /// The target core the kernels model.
    pub fn target(&self) -> Target {
        self.device.target
    }

    /// The device (core and CMSIS-NN version) the kernels model.
    pub fn device(&self) -> Device {
        self.device
    }

    /// Models another CMSIS-NN version.
    pub fn set_cmsis_nn(&mut self, version: CmsisNn) {
        self.device.cmsis_nn = version;
    }

    /// The plan this runtime executes.
    pub fn plan_index(&self) -> usize {
        self.plan_index
    }

    /// The IR graph of the plan (node outputs say which values each instruction writes).
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// Executes the plan on `inputs` (logical order, as `.npy` holds them).
    pub fn run(&self, inputs: &[TensorData], capture: bool) -> Result<RunResult, RuntimeError> {
        self.run_with(
            inputs,
            RunOptions {
                capture,
                ..RunOptions::default()
            },
        )
    }

    /// Places value `value` at `offset` of arena `memory_id` for arena runs: what would happen
    /// if the planner had put it there.
    pub fn override_placement(
        &mut self,
        value: usize,
        memory_id: u32,
        offset: u64,
    ) -> Result<(), RuntimeError> {
        let slot = self
            .placements
            .get_mut(value)
            .ok_or_else(|| program_err(format!("no value {value}")))?;
        let p = slot
            .as_mut()
            .ok_or_else(|| program_err(format!("value {value} is not planned")))?;
        p.memory_id = memory_id;
        p.offset = offset;
        Ok(())
    }

    /// Executes the plan with `options`.
    pub fn run_with(
        &self,
        inputs: &[TensorData],
        options: RunOptions,
    ) -> Result<RunResult, RuntimeError> {
        let capture = options.capture;
        let work = Work::new(
            options.work_budget.unwrap_or(DEFAULT_WORK_BUDGET),
            options.cancel.clone(),
        );
        let mut executed: u64 = 0;
        let mut arenas: Option<Vec<Vec<u8>>> = options.in_arenas.then(|| {
            self.arena_sizes
                .iter()
                .map(|&s| vec![0u8; s as usize])
                .collect()
        });
        let mut values = self.initial.clone();
        if inputs.len() != self.inputs.len() {
            return Err(RuntimeError::Input {
                index: inputs.len(),
                detail: format!(
                    "the program takes {} inputs, {} given",
                    self.inputs.len(),
                    inputs.len()
                ),
            });
        }
        for (k, (&vi, given)) in self.inputs.iter().zip(inputs).enumerate() {
            let RValue::Tensor(slot) = &values[vi] else {
                return Err(RuntimeError::Input {
                    index: k,
                    detail: "the program input is not a tensor".into(),
                });
            };
            if slot.shape != given.shape || slot.dtype != given.dtype {
                return Err(RuntimeError::Input {
                    index: k,
                    detail: format!(
                        "expected {}{:?}, got {}{:?}",
                        slot.dtype.short_name(),
                        slot.shape,
                        given.dtype.short_name(),
                        given.shape
                    ),
                });
            }
            let buf = Buf::from_le_bytes(given.dtype, &given.bytes).ok_or_else(|| {
                RuntimeError::Input {
                    index: k,
                    detail: "unsupported dtype".into(),
                }
            })?;
            values[vi] = RValue::Tensor(HostTensor {
                dtype: given.dtype,
                shape: given.shape.clone(),
                buf,
            });
        }
        if let Some(a) = &mut arenas {
            self.store(a, &values, &self.inputs)?;
        }
        let mut captured = Vec::new();
        let mut pc = 0usize;
        let mut steps = 0usize;
        while pc < self.instructions.len() {
            steps += 1;
            if steps > self.instructions.len() * 1000 + 1000 {
                return Err(program_err("the chain does not terminate (jump loop)"));
            }
            let node = self
                .instr_node
                .get(pc)
                .copied()
                .flatten()
                .map(|i| &self.graph.nodes[i]);
            if let Some(n) = node {
                self.resolve_views(&mut values, &n.inputs);
                if let Some(a) = &arenas {
                    self.load(a, &mut values, &n.inputs)?;
                }
            }
            let mut next = pc + 1;
            if work.cancelled() {
                return Err(RuntimeError::Cancelled { instruction: pc });
            }
            executed += 1;
            if executed > MAX_EXECUTED_INSTRUCTIONS {
                return Err(RuntimeError::WorkBudget {
                    op: "instruction count".into(),
                    instruction: pc,
                    budget: MAX_EXECUTED_INSTRUCTIONS,
                });
            }
            match &self.instructions[pc] {
                Instruction::KernelCall { op_index, args } => {
                    let op = self.ops.get(*op_index).cloned().unwrap_or_default();
                    let mut ctx = Ctx {
                        values: &mut values,
                        op: &op,
                        instruction: pc,
                        device: self.device,
                        dim_orders: &self.dim_orders,
                        work: &work,
                    };
                    dispatch(&mut ctx, args)?;
                }
                Instruction::DelegateCall { delegate_index, .. } => {
                    return Err(RuntimeError::Delegate {
                        backend: self
                            .delegates
                            .get(*delegate_index)
                            .cloned()
                            .unwrap_or_default(),
                        instruction: pc,
                    });
                }
                Instruction::MoveCall { move_from, move_to } => {
                    values[*move_to] = values[*move_from].clone()
                }
                Instruction::JumpFalseCall {
                    cond_value_index,
                    destination_instruction,
                } => {
                    let cond = match &values[*cond_value_index] {
                        RValue::Bool(b) => *b,
                        RValue::Tensor(HostTensor {
                            buf: Buf::Bool(v), ..
                        }) => v.first().copied().unwrap_or(false),
                        other => return Err(program_err(format!("jump condition is {other:?}"))),
                    };
                    if !cond {
                        next = *destination_instruction;
                    }
                }
                Instruction::FreeCall { .. } | Instruction::Empty => {}
            }
            if let (Some(a), Some(n)) = (&mut arenas, node) {
                self.store(a, &values, &n.outputs)?;
            }
            if capture {
                if let Some(n) = node {
                    let tensors = n
                        .outputs
                        .iter()
                        .filter_map(|&o| match &values[o] {
                            RValue::Tensor(t) => Some(t.clone()),
                            _ => None,
                        })
                        .collect();
                    captured.push(Captured {
                        instruction_id: pc,
                        tensors,
                    });
                }
            }
            pc = next;
        }
        self.resolve_views(&mut values, &self.outputs);
        if let Some(a) = &arenas {
            self.load(a, &mut values, &self.outputs)?;
        }
        let outputs = self
            .outputs
            .iter()
            .map(|&o| match &values[o] {
                RValue::Tensor(t) => Ok(t.clone()),
                other => Err(program_err(format!(
                    "output value {o} is {other:?}, not a tensor"
                ))),
            })
            .collect::<Result<_, _>>()?;
        Ok(RunResult { outputs, captured })
    }

    fn arena_range(
        &self,
        arenas: &[Vec<u8>],
        v: usize,
        nbytes: usize,
    ) -> Result<Option<(usize, std::ops::Range<usize>)>, RuntimeError> {
        let Some(p) = self.placements.get(v).copied().flatten() else {
            return Ok(None);
        };
        let a = (p.memory_id as usize)
            .checked_sub(1)
            .filter(|&a| a < arenas.len())
            .ok_or_else(|| {
                program_err(format!(
                    "value {v} is placed in arena {} which the plan does not declare",
                    p.memory_id
                ))
            })?;
        let start = p.offset as usize;
        let end = start.checked_add(nbytes).filter(|&e| e <= arenas[a].len()).ok_or_else(|| {
            program_err(format!("value {v} ({nbytes} bytes at offset {start}) does not fit arena {} of {} bytes", p.memory_id, arenas[a].len()))
        })?;
        Ok(Some((a, start..end)))
    }

    /// Reads planned tensors from their arenas.
    fn load(
        &self,
        arenas: &[Vec<u8>],
        values: &mut [RValue],
        ids: &[usize],
    ) -> Result<(), RuntimeError> {
        for &v in ids {
            let RValue::Tensor(t) = &values[v] else {
                continue;
            };
            let nbytes = t.numel() * t.dtype.element_size().unwrap_or(1);
            if let Some((a, range)) = self.arena_range(arenas, v, nbytes)? {
                if let Some(buf) = Buf::from_le_bytes(t.dtype, &arenas[a][range]) {
                    if let RValue::Tensor(t) = &mut values[v] {
                        t.buf = buf;
                    }
                }
            }
        }
        Ok(())
    }

    /// Writes planned tensors into their arenas.
    fn store(
        &self,
        arenas: &mut [Vec<u8>],
        values: &[RValue],
        ids: &[usize],
    ) -> Result<(), RuntimeError> {
        for &v in ids {
            let RValue::Tensor(t) = &values[v] else {
                continue;
            };
            let bytes = t.buf.to_le_bytes();
            if let Some((a, range)) = self.arena_range(arenas, v, bytes.len())? {
                arenas[a][range].copy_from_slice(&bytes);
            }
        }
        Ok(())
    }

    /// Views emit no instruction: refresh each view read next from its source's contents.
    fn resolve_views(&self, values: &mut [RValue], reads: &[usize]) {
        for &v in reads {
            let mut chain = Vec::new();
            let mut cur = v;
            while let Some(src) = self.graph.values.get(cur).and_then(|x| x.alias_of) {
                chain.push(cur);
                cur = src;
                if chain.len() > 64 {
                    break;
                }
            }
            for &view in chain.iter().rev() {
                let Some(src) = self.graph.values[view].alias_of else {
                    continue;
                };
                if let (RValue::Tensor(s), RValue::Tensor(d)) = (&values[src], &values[view]) {
                    if s.numel() == d.numel() && s.dtype == d.dtype {
                        let buf = s.buf.clone();
                        if let RValue::Tensor(d) = &mut values[view] {
                            d.buf = buf;
                        }
                    }
                }
            }
        }
    }
}

/// Runs one kernel call.
fn dispatch(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let op = ctx.op.to_string();
    // `name.out` → `name`, `name.Overload_out` → `name.Overload`
    let name = op.strip_suffix(".out").unwrap_or(&op);
    let name = name.strip_suffix("_out").unwrap_or(name);
    match name {
        "aten::convolution" => portable::convolution(ctx, args),
        "aten::_native_batch_norm_legit_no_training" => portable::batch_norm(ctx, args),
        "aten::relu" => portable::unary(ctx, args, |x| x.max(0.0)),
        "aten::sigmoid" => portable::unary(ctx, args, |x| 1.0 / (1.0 + (-x).exp())),
        "aten::tanh" => portable::unary(ctx, args, f32::tanh),
        "aten::hardtanh" => portable::hardtanh(ctx, args),
        "aten::avg_pool2d" => portable::avg_pool2d(ctx, args),
        "aten::permute_copy" => portable::permute_copy(ctx, args),
        "aten::view_copy"
        | "aten::_to_copy"
        | "aten::clone"
        | "dim_order_ops::_to_dim_order_copy"
        | "dim_order_ops::_clone_dim_order"
        | "aten::squeeze_copy.dims"
        | "aten::squeeze_copy.dim"
        | "aten::squeeze_copy"
        | "aten::unsqueeze_copy"
        | "aten::alias_copy"
        | "aten::_to_dim_order_copy"
        | "aten::expand_copy" => portable::copy(ctx, args),
        "executorch_prim::et_view.default" => portable::et_view(ctx, args),
        "aten::addmm" => portable::addmm(ctx, args),
        "aten::mm" => portable::mm(ctx, args),
        "etscope::linear" => portable::linear(ctx, args),
        "aten::_softmax" => portable::softmax(ctx, args),
        "aten::add" | "aten::add.Scalar" => portable_tensor::binary(ctx, args, |a, b| a + b, true),
        "aten::sub" | "aten::sub.Scalar" => portable_tensor::binary(ctx, args, |a, b| a - b, true),
        "aten::mul" | "aten::mul.Scalar" => portable_tensor::binary(ctx, args, |a, b| a * b, false),
        "aten::div" | "aten::div.Scalar" => portable_tensor::binary(ctx, args, |a, b| a / b, false),
        "aten::maximum" => portable_tensor::binary(ctx, args, f64::max, false),
        "aten::minimum" => portable_tensor::binary(ctx, args, f64::min, false),
        "aten::eq.Scalar" | "aten::eq.Tensor" => portable_tensor::compare(ctx, args, |a, b| a == b),
        "aten::ne.Scalar" | "aten::ne.Tensor" => portable_tensor::compare(ctx, args, |a, b| a != b),
        "aten::lt.Scalar" | "aten::lt.Tensor" => portable_tensor::compare(ctx, args, |a, b| a < b),
        "aten::le.Scalar" | "aten::le.Tensor" => portable_tensor::compare(ctx, args, |a, b| a <= b),
        "aten::gt.Scalar" | "aten::gt.Tensor" => portable_tensor::compare(ctx, args, |a, b| a > b),
        "aten::ge.Scalar" | "aten::ge.Tensor" => portable_tensor::compare(ctx, args, |a, b| a >= b),
        "aten::where.self" => portable_tensor::where_(ctx, args),
        "aten::clamp" => portable_tensor::clamp(ctx, args),
        "aten::slice_copy.Tensor" => portable_tensor::slice_copy(ctx, args),
        "aten::select_copy.int" => portable_tensor::select_copy(ctx, args),
        "aten::split_with_sizes_copy" => portable_tensor::split_with_sizes_copy(ctx, args),
        "aten::split_copy.Tensor" => portable_tensor::split_copy(ctx, args),
        "aten::cat" => portable_tensor::cat(ctx, args),
        "aten::full" | "aten::full_like" => portable_tensor::full(ctx, args),
        "aten::native_layer_norm" => portable_nn::layer_norm(ctx, args),
        "aten::gelu" => portable_nn::gelu(ctx, args),
        "aten::max_pool2d_with_indices" => portable_nn::max_pool2d_with_indices(ctx, args),
        "aten::mean.dim" | "aten::mean" => portable_nn::mean(ctx, args),
        "aten::amax" => portable_nn::amax(ctx, args),
        "aten::sum.IntList" => portable_nn::sum(ctx, args),
        "aten::bmm" => portable_nn::bmm(ctx, args),
        "quantized_decomposed::quantize_per_tensor" => quantized::quantize_per_tensor(ctx, args),
        "quantized_decomposed::dequantize_per_tensor" => {
            quantized::dequantize_per_tensor(ctx, args)
        }
        "quantized_decomposed::dequantize_per_channel" => {
            quantized::dequantize_per_channel(ctx, args)
        }
        "cortex_m::quantize_per_tensor" => cmsis_ops::quantize(ctx, args),
        "cortex_m::dequantize_per_tensor" => cmsis_ops::dequantize(ctx, args),
        "cortex_m::transpose" => cmsis_ops::transpose(ctx, args),
        "cortex_m::pad" => cmsis_ops::pad(ctx, args),
        "cortex_m::quantized_conv2d" => cmsis_conv::conv2d(ctx, args, false, Act::Nchw),
        "cortex_m::quantized_conv2d_nhwc" => cmsis_conv::conv2d(ctx, args, false, Act::Nhwc),
        "cortex_m::quantized_depthwise_conv2d" => cmsis_conv::conv2d(ctx, args, true, Act::Nchw),
        "cortex_m::quantized_depthwise_conv2d_nhwc" => {
            cmsis_conv::conv2d(ctx, args, true, Act::Nhwc)
        }
        "cortex_m::quantized_transpose_conv2d" => {
            cmsis_conv::transpose_conv2d(ctx, args, Act::Nchw)
        }
        "cortex_m::quantized_transpose_conv2d_nhwc" => {
            cmsis_conv::transpose_conv2d(ctx, args, Act::Nhwc)
        }
        "cortex_m::quantized_linear" => cmsis_conv::linear(ctx, args),
        "cortex_m::quantized_batch_matmul" => cmsis_conv::batch_matmul(ctx, args),
        "cortex_m::quantized_avg_pool2d" => cmsis_pool::avg_pool2d(ctx, args, Act::Nchw),
        "cortex_m::quantized_avg_pool2d_nhwc" => cmsis_pool::avg_pool2d(ctx, args, Act::Nhwc),
        "cortex_m::quantized_max_pool2d" => cmsis_pool::max_pool2d(ctx, args, Act::Nchw),
        "cortex_m::quantized_max_pool2d_nhwc" => cmsis_pool::max_pool2d(ctx, args, Act::Nhwc),
        "cortex_m::softmax" => cmsis_ops::softmax(ctx, args),
        "cortex_m::quantized_add" => cmsis_ops::add(ctx, args),
        "cortex_m::quantized_mul" => cmsis_ops::mul(ctx, args),
        "cortex_m::quantized_div" => cmsis_ops::div(ctx, args),
        "cortex_m::quantized_activation" => cmsis_ops::activation(ctx, args),
        "cortex_m::minimum" => cmsis_ops::min_max(ctx, args, false),
        "cortex_m::maximum" => cmsis_ops::min_max(ctx, args, true),
        _ => Err(RuntimeError::UnsupportedOp {
            op,
            instruction: ctx.instruction,
        }),
    }
}

/// The Helium/MVE quantize of one element (exposed for tests of the device arithmetic).
pub fn cmsis_quantize_for_tests(x: f32, inv: f32, zp: i32, qmin: i32, qmax: i32) -> i8 {
    cmsis_ops::quantize_block_mve(x, inv, zp, qmin, qmax)
}

/// Whether the runtime implements an operator (qualified `name.overload`).
pub fn supports(op: &str) -> bool {
    let mut values = Vec::new();
    let work = Work::new(0, None);
    let mut ctx = Ctx {
        values: &mut values,
        op,
        instruction: 0,
        device: Device::default(),
        dim_orders: &[],
        work: &work,
    };
    !matches!(
        dispatch(&mut ctx, &[]),
        Err(RuntimeError::UnsupportedOp { .. })
    )
}
