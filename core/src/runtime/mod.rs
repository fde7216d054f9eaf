//! The host runtime: executes an IR [`Graph`] — a `.pte` execution plan or an ETRecord stage
//! after the out-variant pass, or any pass's output — through the registry's kernels, including
//! the `cortex_m::` int8 kernels with CMSIS-NN arithmetic, and captures every node's outputs.
//!
//! [`Runtime::prepare`] does the work once: each node's kernel is looked up in the registry,
//! argument slots are laid out, constants are decoded (`dim_order` undone) and held shared.
//! Each [`Runtime::run_with`] starts from a copy of that value table whose tensors are shared
//! by reference, so one prepared graph serves any number of runs and no run copies a constant.
//! Programs ([`Runtime::new`]) and stages ([`Runtime::for_stage`]) are two ways to prepare; the
//! run is the same: the chosen core and CMSIS-NN version, cancellation, view semantics (a value
//! that aliases another is refreshed from it before it is read), runs inside the memory plan's
//! arenas, and errors that name the node.

mod prepare;
pub mod stage;
pub mod support;
pub mod verify;

use std::sync::Arc;

use crate::formats::pte::Program;
use crate::ir::{Graph, NodeId, Placement};
use crate::tensor::TensorData;

pub use crate::kernels::cmsis::core_buffers;
pub use crate::kernels::{
    element_count, layout, value, CmsisNn, Device, RuntimeError, Target, Work, DEFAULT_WORK_BUDGET,
    MAX_EXECUTED_INSTRUCTIONS, MAX_TENSOR_ELEMENTS,
};
use crate::kernels::{Ctx, Derived, KernelFn, StoredForms};
use value::{Buf, HostTensor, RValue};

/// One node's captured outputs.
#[derive(Debug, Clone)]
pub struct Captured {
    /// The graph node that wrote them.
    pub node: NodeId,
    /// Its instruction (`.pte` programs).
    pub instruction_id: Option<usize>,
    /// The out tensors in argument order (one for most ops).
    pub tensors: Vec<HostTensor>,
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// The method's outputs in order; a string output is its UTF-8 bytes (a `uint8` vector),
    /// with the text in [`RunResult::texts`].
    pub outputs: Vec<HostTensor>,
    /// Per output, its text when the method returns a string (a training program's
    /// `__et_training_fqn_*` methods return parameter names).
    pub texts: Vec<Option<String>>,
    /// Per executed node, when capture was requested.
    pub captured: Vec<Captured>,
}

/// How to run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Keep every node's out tensors.
    pub capture: bool,
    /// Execute inside the graph's memory plan: every planned tensor is read from and written to
    /// one buffer per arena at its planned offset, so a bad plan shows up as corrupted values
    /// (the default keeps tensors apart).
    pub in_arenas: bool,
    /// Operations the run may perform (`None`: [`DEFAULT_WORK_BUDGET`]).
    pub work_budget: Option<u64>,
    /// Set from another thread to stop the run at the next node.
    pub cancel: Option<Arc<std::sync::atomic::AtomicBool>>,
}

/// A loaded method's memory between calls: its value table and, for arena runs, its arenas.
struct CallState {
    values: Vec<RValue>,
    arenas: Option<Vec<Vec<u8>>>,
}

/// The most bytes a run's non-constant tensors may take together on the host.
pub const MAX_PREPARED_BYTES: u64 = 512 << 20;

/// What one node does at run time, decided once at preparation.
#[derive(Clone)]
enum Action {
    Kernel(KernelFn),
    /// An operator etscope has no kernel for (the run stops here, naming it).
    Unsupported(String),
    Delegate(String),
    Move {
        from: usize,
        to: usize,
    },
    JumpFalse {
        cond: usize,
        to_step: usize,
    },
    Nothing,
}

/// One executable node.
#[derive(Clone)]
struct Step {
    node: NodeId,
    /// The node's instruction (`.pte`), or its node id (stages): what errors name.
    position: usize,
    /// `op.overload`, for errors.
    op: String,
    /// The operator's registry entry (its schema names the kernel's arguments).
    def: Option<&'static crate::ops::OpDef>,
    action: Action,
    /// The kernel's argument slots in the value table.
    slots: Vec<usize>,
    /// Values read (views refreshed and arena loads before the step).
    reads: Vec<usize>,
    /// Values written (arena stores and captures after it).
    writes: Vec<usize>,
}

/// A prepared graph.
pub struct Runtime {
    plan_index: usize,
    device: Device,
    graph: Graph,
    /// The initial value table: the graph's values, then literal arguments.
    initial: Vec<RValue>,
    /// Per slot, the `dim_order` the value is stored in (empty: row-major).
    dim_orders: Vec<Vec<usize>>,
    steps: Vec<Step>,
    /// Per value, the value whose storage it shares (views).
    alias_of: Vec<Option<usize>>,
    inputs: Vec<usize>,
    outputs: Vec<usize>,
    /// Arena placement of each planned tensor value (views share their source's).
    placements: Vec<Option<Placement>>,
    arena_sizes: Vec<u64>,
    /// Planned tensors that start from the program's data (stored into fresh arenas).
    seeded: Vec<usize>,
    /// Per input, whether the program gives it a dynamic shape (within its planned bound).
    dynamic_inputs: Vec<bool>,
    /// Forms of the fixed constants the kernels derive once (packed weights), shared by runs.
    derived: Derived,
}

fn program_err(e: impl std::fmt::Display) -> RuntimeError {
    RuntimeError::Program(e.to_string())
}

impl Runtime {
    /// Prepares plan `plan_index` of `program` for `target`.
    pub fn new(
        program: &Program,
        plan_index: usize,
        target: Target,
    ) -> Result<Runtime, RuntimeError> {
        prepare::program(program, plan_index, target, MAX_PREPARED_BYTES)
    }

    /// [`Runtime::new`] with another preparation budget: the most bytes the program's
    /// non-constant tensors may take together on the host (default [`MAX_PREPARED_BYTES`]).
    pub fn with_budget(
        program: &Program,
        plan_index: usize,
        target: Target,
        max_bytes: u64,
    ) -> Result<Runtime, RuntimeError> {
        prepare::program(program, plan_index, target, max_bytes)
    }

    /// Prepares `graph`, a rewrite of plan `plan_index` of `program` (a pass's output), with the
    /// program's constants.
    pub fn with_graph(
        program: &Program,
        plan_index: usize,
        graph: Graph,
        target: Target,
    ) -> Result<Runtime, RuntimeError> {
        prepare::program_graph(program, plan_index, graph, target, MAX_PREPARED_BYTES)
    }

    /// Prepares an executable graph (every operator node in its kernel form: the out-variant
    /// pass's output) whose constants `constant` gives, by value.
    pub fn prepare(
        graph: Graph,
        constant: &dyn Fn(&crate::ir::ValueInfo) -> Result<HostTensor, RuntimeError>,
        device: Device,
    ) -> Result<Runtime, RuntimeError> {
        prepare::graph(graph, constant, device, 0)
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

    /// Whose C library the float kernels' math functions are (newlib, the device's, unless set).
    pub fn set_libm(&mut self, libm: crate::kernels::libm::Libm) {
        self.device.libm = libm;
    }

    /// `device`'s CMSIS-NN version and C library (the core stays the one the runtime was
    /// prepared for).
    pub fn set_device_versions(&mut self, device: &Device) {
        self.set_cmsis_nn(device.cmsis_nn);
        self.set_libm(device.libm);
    }

    /// The plan this runtime executes (0 for a stage).
    pub fn plan_index(&self) -> usize {
        self.plan_index
    }

    /// The graph this runtime executes (node outputs say which values each node writes).
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// Executes the graph on `inputs` (logical order, as `.npy` holds them).
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

    /// Resizes arena `memory_id` for arena runs (a re-planned program's).
    pub fn resize_arena(&mut self, memory_id: u32, size: u64) -> Result<(), RuntimeError> {
        let slot = (memory_id as usize)
            .checked_sub(1)
            .and_then(|i| self.arena_sizes.get_mut(i))
            .ok_or_else(|| program_err(format!("no arena {memory_id}")))?;
        if size > MAX_TENSOR_ELEMENTS as u64 * 4 {
            return Err(program_err(format!(
                "a memory arena of {size} bytes is too large"
            )));
        }
        *slot = size;
        Ok(())
    }

    fn bind_inputs(
        &self,
        values: &mut [RValue],
        inputs: &[TensorData],
    ) -> Result<(), RuntimeError> {
        if inputs.len() != self.inputs.len() {
            return Err(RuntimeError::InputCount {
                expected: self.inputs.len(),
                given: inputs.len(),
            });
        }
        for (k, (&vi, given)) in self.inputs.iter().zip(inputs).enumerate() {
            let RValue::Tensor(slot) = &values[vi] else {
                return Err(RuntimeError::Input {
                    index: k,
                    detail: "the program input is not a tensor".into(),
                });
            };
            let below_bound = self.dynamic_inputs.get(k).copied().unwrap_or(false)
                && slot.dtype == given.dtype
                && slot.shape.len() == given.shape.len()
                && slot.shape != given.shape
                && slot
                    .shape
                    .iter()
                    .zip(&given.shape)
                    .all(|(planned, g)| g <= planned);
            if below_bound {
                // ExecuTorch resizes a dynamic-shape input within its bound and every kernel
                // resizes its out tensor; etscope's kernels write the planned shapes
                return Err(RuntimeError::Unimplemented {
                    method: self.graph.method.clone(),
                    feature: format!(
                        "input {k} of shape {:?}, below the shape {:?} it is planned for (a dynamic-shape method run below its upper bound)",
                        given.shape, slot.shape
                    ),
                });
            }
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
            values[vi] = RValue::tensor(HostTensor {
                dtype: given.dtype,
                shape: given.shape.clone(),
                buf,
            });
        }
        Ok(())
    }

    /// Executes the graph with `options`.
    pub fn run_with(
        &self,
        inputs: &[TensorData],
        options: RunOptions,
    ) -> Result<RunResult, RuntimeError> {
        self.run_keeping_state(inputs, &options).0
    }

    /// [`Runtime::run_with`]'s whole body: one call from a freshly loaded method, handing back
    /// the memory the call leaves (what the tests look into).
    fn run_keeping_state(
        &self,
        inputs: &[TensorData],
        options: &RunOptions,
    ) -> (Result<RunResult, RuntimeError>, Option<CallState>) {
        match self.fresh_state(options) {
            Ok(mut state) => {
                let result = self.run_call(&mut state, inputs, options);
                (result, Some(state))
            }
            Err(e) => (Err(e), None),
        }
    }

    /// Executes the method once per entry of `calls` (each its inputs), as ExecuTorch's runtime
    /// executes a loaded method again and again: what the program's memory holds at the end of
    /// a call is where the next one starts, so state the program keeps between calls (a mutable
    /// buffer written back with `copy_`, a KV cache updated with `index_put_`) carries over.
    pub fn run_calls(
        &self,
        calls: &[Vec<TensorData>],
        options: RunOptions,
    ) -> Result<Vec<RunResult>, RuntimeError> {
        let mut state = self.fresh_state(&options)?;
        calls
            .iter()
            .map(|inputs| self.run_call(&mut state, inputs, &options))
            .collect()
    }

    /// The memory of a method just loaded: the initial values; for arena runs, arenas that are
    /// zero but for the planned tensors the program gives initial data.
    fn fresh_state(&self, options: &RunOptions) -> Result<CallState, RuntimeError> {
        let values = self.initial.clone();
        let arenas = if options.in_arenas {
            let mut arenas: Vec<Vec<u8>> = self
                .arena_sizes
                .iter()
                .map(|&s| vec![0u8; s as usize])
                .collect();
            self.store(&mut arenas, &values, &self.seeded)?;
            Some(arenas)
        } else {
            None
        };
        Ok(CallState { values, arenas })
    }

    /// One call from `state`, leaving the memory as the call leaves it.
    fn run_call(
        &self,
        state: &mut CallState,
        inputs: &[TensorData],
        options: &RunOptions,
    ) -> Result<RunResult, RuntimeError> {
        let work = Work::new(
            options.work_budget.unwrap_or(DEFAULT_WORK_BUDGET),
            options.cancel.clone(),
        );
        // the body works on owned memory, handed back to `state` whatever the call's end
        let mut values = std::mem::take(&mut state.values);
        let mut arenas = state.arenas.take();
        let result = self.execute(&mut values, &mut arenas, inputs, options, &work);
        state.values = values;
        state.arenas = arenas;
        result
    }

    fn execute(
        &self,
        values: &mut Vec<RValue>,
        arenas: &mut Option<Vec<Vec<u8>>>,
        inputs: &[TensorData],
        options: &RunOptions,
        work: &Work,
    ) -> Result<RunResult, RuntimeError> {
        self.bind_inputs(values, inputs)?;
        if let Some(a) = arenas.as_mut() {
            self.store(a, values, &self.inputs)?;
        }
        let mut captured = Vec::new();
        let mut stored_forms = StoredForms::default();
        let mut pc = 0usize;
        let mut executed: u64 = 0;
        while let Some(step) = self.steps.get(pc) {
            self.resolve_views(values, &step.reads);
            if let Some(a) = arenas.as_ref() {
                self.load(a, values, &step.reads)?;
            }
            if work.cancelled() {
                return Err(RuntimeError::Cancelled {
                    instruction: step.position,
                });
            }
            executed += 1;
            if executed > MAX_EXECUTED_INSTRUCTIONS {
                return Err(RuntimeError::WorkBudget {
                    op: "instruction count".into(),
                    instruction: step.position,
                    budget: MAX_EXECUTED_INSTRUCTIONS,
                });
            }
            let mut next = pc + 1;
            match &step.action {
                Action::Kernel(kernel) => {
                    let def = step.def;
                    let names = move |name: &str| def.and_then(|d| d.arg(name));
                    let mut ctx = Ctx {
                        values,
                        op: &step.op,
                        names: &names,
                        instruction: step.position,
                        device: self.device,
                        dim_orders: &self.dim_orders,
                        work,
                        derived: &self.derived,
                        stored_forms: &mut stored_forms,
                    };
                    kernel(&mut ctx, &step.slots)?;
                }
                Action::Unsupported(op) => {
                    return Err(RuntimeError::UnsupportedOp {
                        op: op.clone(),
                        instruction: step.position,
                    })
                }
                Action::Delegate(backend) => {
                    return Err(RuntimeError::Delegate {
                        backend: backend.clone(),
                        instruction: step.position,
                    })
                }
                Action::Move { from, to } => values[*to] = values[*from].clone(),
                Action::JumpFalse { cond, to_step } => {
                    let cond = match &values[*cond] {
                        RValue::Bool(b) => *b,
                        RValue::Tensor(t) => match &t.buf {
                            Buf::Bool(v) => v.first().copied().unwrap_or(false),
                            _ => return Err(program_err("jump condition is not a bool tensor")),
                        },
                        other => return Err(program_err(format!("jump condition is {other:?}"))),
                    };
                    if !cond {
                        next = *to_step;
                    }
                }
                Action::Nothing => {}
            }
            if let Some(a) = arenas.as_mut() {
                self.store(a, values, &step.writes)?;
            }
            if options.capture && !step.writes.is_empty() {
                let tensors = step
                    .writes
                    .iter()
                    .filter_map(|&o| match &values[o] {
                        RValue::Tensor(t) => Some(HostTensor::clone(t)),
                        _ => None,
                    })
                    .collect();
                captured.push(Captured {
                    node: step.node,
                    instruction_id: self.graph.nodes[step.node].instruction_id,
                    tensors,
                });
            }
            pc = next;
        }
        self.resolve_views(values, &self.outputs);
        if let Some(a) = arenas.as_ref() {
            self.load(a, values, &self.outputs)?;
        }
        let outputs = self
            .outputs
            .iter()
            .map(|&o| output_tensor(o, &values[o]))
            .collect::<Result<_, _>>()?;
        let texts = self
            .outputs
            .iter()
            .map(|&o| match &values[o] {
                RValue::String(s) => Some(s.clone()),
                _ => None,
            })
            .collect();
        Ok(RunResult {
            outputs,
            texts,
            captured,
        })
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
                    let loaded = HostTensor {
                        dtype: t.dtype,
                        shape: t.shape.clone(),
                        buf,
                    };
                    values[v] = RValue::tensor(loaded);
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

    /// The contents a view of `src` sees: the source's bytes as stored (its dim order) read in
    /// the view's own shape and dim order, as the device's runtime reads an alias of planned
    /// memory. A flatten of a channels-last tensor sees its elements in channels-last order
    /// (the Cortex-M default flow's `view` before a linear layer on the device); a view in the
    /// same order as its source sees the source as it is.
    fn storage_view(
        &self,
        src: usize,
        src_shape: &[usize],
        view: usize,
        view_shape: &[usize],
        buf: &crate::kernels::value::Buf,
    ) -> crate::kernels::value::Buf {
        let (so, vo) = (self.dim_orders.get(src), self.dim_orders.get(view));
        match (so, vo) {
            (Some(so), Some(vo))
                if so.len() == src_shape.len()
                    && vo.len() == view_shape.len()
                    && !(layout::is_contiguous(so) && layout::is_contiguous(vo))
                    && !(so == vo && src_shape == view_shape) =>
            {
                let stored = layout::to_memory(buf, src_shape, so);
                layout::from_memory(&stored, view_shape, vo)
            }
            _ => buf.clone(),
        }
    }

    /// A view shares its source's storage: before it is read, it takes its source's contents
    /// as stored, read in its own shape and order ([`Runtime::storage_view`]).
    fn resolve_views(&self, values: &mut [RValue], reads: &[usize]) {
        for &v in reads {
            let mut chain = Vec::new();
            let mut cur = v;
            while let Some(src) = self.alias_of.get(cur).copied().flatten() {
                chain.push(cur);
                cur = src;
                if chain.len() > 64 {
                    break;
                }
            }
            for &view in chain.iter().rev() {
                let Some(src) = self.alias_of[view] else {
                    continue;
                };
                if let (RValue::Tensor(s), RValue::Tensor(d)) = (&values[src], &values[view]) {
                    if s.numel() == d.numel() && s.dtype == d.dtype {
                        let refreshed = HostTensor {
                            dtype: d.dtype,
                            shape: d.shape.clone(),
                            buf: self.storage_view(src, &s.shape, view, &d.shape, &s.buf),
                        };
                        values[view] = RValue::tensor(refreshed);
                    }
                }
            }
        }
    }
}

/// A method output as a tensor: scalars (ints, floats, bools) as 0-d tensors and int lists as
/// 1-d ones, as ExecuTorch's Python bindings hand them back as numbers; a string as its UTF-8
/// bytes.
fn output_tensor(o: usize, v: &RValue) -> Result<HostTensor, RuntimeError> {
    use crate::ScalarType;
    let scalar = |dtype: ScalarType, buf: Buf| HostTensor {
        dtype,
        shape: Vec::new(),
        buf,
    };
    Ok(match v {
        RValue::Tensor(t) => HostTensor::clone(t),
        RValue::Int(i) => scalar(ScalarType::Long, Buf::I64(vec![*i])),
        RValue::Double(d) => scalar(ScalarType::Double, Buf::F64(vec![*d])),
        RValue::Bool(b) => scalar(ScalarType::Bool, Buf::Bool(vec![*b])),
        RValue::IntList(items) => HostTensor {
            dtype: ScalarType::Long,
            shape: vec![items.len()],
            buf: Buf::I64(items.clone()),
        },
        RValue::String(text) => HostTensor {
            dtype: ScalarType::Byte,
            shape: vec![text.len()],
            buf: Buf::U8(text.as_bytes().to_vec()),
        },
        other => {
            return Err(program_err(format!(
                "output value {o} is {other:?}, which has no tensor form"
            )))
        }
    })
}

/// Whether the runtime implements an operator (qualified `name.overload`, in its kernel form).
pub fn supports(op: &str) -> bool {
    crate::ops::lookup_qualified(op).is_some_and(|id| {
        let d = crate::ops::def(id);
        let overload = op.rsplit_once('.').map_or("", |(_, o)| o);
        d.kernel.is_some() && (overload.is_empty() || d.is_out_overload(overload))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a constant no instruction writes and no value aliases may keep a derived form: a
    /// cache of anything else could make a run different.
    #[test]
    fn a_written_or_aliased_constant_keeps_no_derived_form() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/tiny_conv_relu_linear"
        );
        let bytes = std::fs::read(format!("{dir}/model_int8_cortex_m55.pte")).expect("fixture");
        let program = Program::parse(bytes).expect("parses");
        let rt = Runtime::new(&program, 0, Target::default()).expect("prepares");
        let constants: Vec<usize> = rt
            .graph
            .values
            .iter()
            .filter(|v| v.storage == crate::ir::Storage::Constant && v.alias_of.is_none())
            .map(|v| v.id)
            .collect();
        let [aliased, written, untouched, ..] = constants[..] else {
            panic!("three constants: {constants:?}");
        };
        let slots = rt.initial.len();
        let as_is = prepare::derived_store(&rt.graph, &rt.steps, slots);
        for c in [aliased, written, untouched] {
            assert!(as_is.is_fixed(c), "constant {c} of the program as it is");
        }
        let mut graph = rt.graph.clone();
        let view = graph
            .values
            .iter()
            .position(|v| v.storage != crate::ir::Storage::Constant)
            .expect("a non-constant value");
        graph.values[view].alias_of = Some(aliased);
        let mut steps = rt.steps.clone();
        steps[0].writes.push(written);
        let store = prepare::derived_store(&graph, &steps, slots);
        assert!(
            !store.is_fixed(aliased),
            "an aliased constant is shared with a view"
        );
        assert!(
            !store.is_fixed(written),
            "a written constant changes between runs"
        );
        assert!(store.is_fixed(untouched));
        assert!(!store.is_fixed(view));
    }

    #[test]
    fn a_run_shares_the_prepared_constants_instead_of_copying_them() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/tiny_conv_relu_linear"
        );
        let bytes = std::fs::read(format!("{dir}/model_fp32.pte")).expect("fixture");
        let program = Program::parse(bytes).expect("parses");
        let rt = Runtime::new(&program, 0, Target::default()).expect("prepares");
        let input = crate::formats::npy::read_npy(
            &std::fs::read(format!("{dir}/input.npy")).expect("input"),
        )
        .expect("npy");
        let constants: Vec<usize> = rt
            .graph
            .values
            .iter()
            .filter(|v| v.storage == crate::ir::Storage::Constant)
            .map(|v| v.id)
            .collect();
        assert!(constants.len() >= 4, "{constants:?}");
        for in_arenas in [false, true] {
            let options = RunOptions {
                in_arenas,
                ..RunOptions::default()
            };
            // the memory run_with's call leaves behind
            let (result, state) = rt.run_keeping_state(std::slice::from_ref(&input), &options);
            result.expect("runs");
            let state = state.expect("a state");
            for &c in &constants {
                match (&rt.initial[c], &state.values[c]) {
                    (RValue::Tensor(a), RValue::Tensor(b)) => {
                        assert!(Arc::ptr_eq(a, b), "constant {c} was copied")
                    }
                    other => panic!("constant {c}: {other:?}"),
                }
            }
            // and a value the run writes is not shared with the prepared table
            let written = rt
                .steps
                .iter()
                .flat_map(|s| s.writes.iter())
                .next()
                .copied();
            let written = written.expect("a step writes");
            match (&rt.initial[written], &state.values[written]) {
                (RValue::Tensor(a), RValue::Tensor(b)) => {
                    assert!(!Arc::ptr_eq(a, b), "value {written} was never written")
                }
                other => panic!("value {written}: {other:?}"),
            }
        }
    }
}
