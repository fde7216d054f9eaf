//! The whole RAM budget of a program: its planned arenas, what ExecuTorch 1.5.1's
//! `Method::load` takes from the method allocator (values, tensor metadata, kernel argument
//! lists, the chain's tables), the temp allocator it needs, scratch the application provides
//! beside the arenas, and what stays in flash.
//!
//! The method allocator is modelled request by request as `method.cpp` and
//! `tensor_parser_portable.cpp` (ExecuTorch 1.5.1) make them — a bump allocator, each request
//! aligned to its type's alignment — over a [`Layout`] of the runtime's types as a target's
//! compiler lays them out (`scripts/method_allocator/probe.sh`). Its totals equal ExecuTorch's
//! own runtime on every loadable program the project holds, with and without a temp allocator:
//! the 1.5.1 wheel on x86-64 and the runtime built for the Cortex-M55 and run on the emulated
//! board (`scripts/method_allocator/`, `tests/fixtures/method_allocator/`). What a delegate's
//! backend allocates in its own `init` is not modelled: a program with delegates says so.

use serde::Serialize;

use crate::formats::pte::{EValue, Instruction, Program};

/// Size and alignment of one type.
pub type SizeAlign = (u64, u64);

/// How a target's compiler lays out the runtime's types (`scripts/method_allocator/probe.sh`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Layout {
    pub name: &'static str,
    pub pointer: SizeAlign,
    pub evalue: SizeAlign,
    pub tensor_impl: SizeAlign,
    pub tensor: SizeAlign,
    pub optional_tensor: SizeAlign,
    pub boxed_list: SizeAlign,
    pub array_ref: SizeAlign,
    pub strides_type: SizeAlign,
    pub sizes_type: SizeAlign,
    pub int64: SizeAlign,
    pub tensor_meta: SizeAlign,
    pub instruction_args: SizeAlign,
    pub backend_delegate: SizeAlign,
    pub chain: SizeAlign,
    pub platform_memory_allocator: SizeAlign,
}

/// 32-bit Arm (arm-none-eabi-g++ 12, `-mcpu=cortex-m55`; the same for every Cortex-M).
pub const ARM32: Layout = Layout {
    name: "arm32",
    pointer: (4, 4),
    evalue: (16, 8),
    tensor_impl: (32, 4),
    tensor: (4, 4),
    optional_tensor: (8, 4),
    boxed_list: (12, 4),
    array_ref: (8, 4),
    strides_type: (4, 4),
    sizes_type: (4, 4),
    int64: (8, 8),
    tensor_meta: (12, 4),
    instruction_args: (8, 4),
    backend_delegate: (40, 8),
    chain: (16, 4),
    platform_memory_allocator: (28, 4),
};

/// x86-64 (g++), the layout of the ExecuTorch wheel the model is checked against.
pub const X86_64: Layout = Layout {
    name: "x86_64",
    pointer: (8, 8),
    evalue: (16, 8),
    tensor_impl: (64, 8),
    tensor: (8, 8),
    optional_tensor: (16, 8),
    boxed_list: (24, 8),
    array_ref: (16, 8),
    strides_type: (4, 4),
    sizes_type: (4, 4),
    int64: (8, 8),
    tensor_meta: (24, 8),
    instruction_args: (16, 8),
    backend_delegate: (56, 8),
    chain: (32, 8),
    platform_memory_allocator: (48, 8),
};

/// `DimOrderType` is one byte; `kTensorDimensionLimit` in ExecuTorch 1.5.1.
const DIM_ORDER: SizeAlign = (1, 1);
const TENSOR_DIMENSION_LIMIT: u64 = 16;

/// A bump allocator from an aligned base, as `MemoryAllocator::allocate` is.
#[derive(Debug, Default, Clone)]
struct Bump {
    cur: u64,
    high: u64,
}

impl Bump {
    fn list(&mut self, (size, align): SizeAlign, n: u64) {
        let start = self.cur.div_ceil(align.max(1)).saturating_mul(align.max(1));
        self.cur = start.saturating_add(size.saturating_mul(n));
        self.high = self.high.max(self.cur);
    }

    fn one(&mut self, t: SizeAlign) {
        self.list(t, 1);
    }
}

/// What loading one method takes from the application's allocators.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MethodAllocation {
    pub layout: &'static str,
    /// Bytes of the method allocator `Method::load` uses when a temp allocator of
    /// `temp_allocator` bytes (or more) is given.
    pub method_allocator: u64,
    /// The temp allocator size that keeps every kernel's operator lookup out of the method
    /// allocator (`Method::resolve_operator` falls back below it).
    pub temp_allocator: u64,
    /// The most of it one lookup uses.
    pub temp_allocator_peak: u64,
    /// Bytes of the method allocator when no temp allocator is given (ExecuTorch's example
    /// runners): the lookups' metadata then stays in the method allocator.
    pub method_allocator_without_temp: u64,
    /// What the model leaves out, in words (a delegate's own allocations).
    pub not_modelled: Vec<String>,
}

/// The method allocator and temp allocator `Method::load` of plan `plan_index` needs with
/// `layout`'s types.
pub fn method_allocation(
    program: &Program,
    plan_index: usize,
    layout: &Layout,
) -> Option<MethodAllocation> {
    let plan = program.plans.get(plan_index)?;
    let run = |with_temp: bool| -> (Bump, Bump) {
        let (mut m, mut temp_peak) = (Bump::default(), Bump::default());
        if !with_temp {
            m.one(layout.platform_memory_allocator);
        }
        // parse_values
        m.list(layout.evalue, plan.values.len() as u64);
        if !plan.inputs.is_empty() {
            m.list((1, 1), plan.inputs.len() as u64);
        }
        for v in &plan.values {
            match v {
                EValue::IntList(items) => {
                    let n = items.len() as u64;
                    m.list(layout.pointer, n);
                    m.list(layout.int64, n);
                    m.one(layout.boxed_list);
                }
                EValue::BoolList(_) | EValue::DoubleList(_) | EValue::String(_) => {
                    m.one(layout.array_ref);
                }
                EValue::Tensor(t) => {
                    let dim = t.sizes.len() as u64;
                    if t.shape_dynamism != 0 {
                        m.list(layout.sizes_type, dim);
                        m.list(DIM_ORDER, dim);
                    }
                    m.list(layout.strides_type, dim);
                    m.one(layout.tensor_impl);
                }
                EValue::TensorList(items) => {
                    let n = items.len() as u64;
                    m.list(layout.tensor, n);
                    m.list(layout.pointer, n);
                    m.one(layout.boxed_list);
                }
                EValue::OptionalTensorList(items) => {
                    let n = items.len() as u64;
                    m.list(layout.pointer, n);
                    m.list(layout.optional_tensor, n);
                    m.one(layout.boxed_list);
                }
                _ => {}
            }
        }
        // delegates, then the chains
        m.list(layout.backend_delegate, plan.delegates.len() as u64);
        m.list(layout.chain, plan.chains.len() as u64);
        for chain in &plan.chains {
            let n = chain.instructions.len() as u64;
            m.list(layout.pointer, n); // OpFunction
            m.list(layout.instruction_args, n);
            for ins in &chain.instructions {
                match ins {
                    Instruction::KernelCall { args, .. } => {
                        let n_args = args.len() as u64;
                        m.list(layout.pointer, n_args);
                        // resolve_operator: metadata per argument, a dim order per tensor
                        let mut lookup = Bump::default();
                        let target = if with_temp { &mut lookup } else { &mut m };
                        target.list(layout.tensor_meta, n_args);
                        for &a in args {
                            if let Some(EValue::Tensor(t)) = plan.values.get(a) {
                                target.list(DIM_ORDER, t.sizes.len() as u64);
                            }
                        }
                        temp_peak.high = temp_peak.high.max(lookup.high);
                    }
                    Instruction::DelegateCall { args, .. } => {
                        m.list(layout.pointer, args.len() as u64);
                    }
                    _ => {}
                }
            }
        }
        (m, temp_peak)
    };
    let (with, temp) = run(true);
    let (without, _) = run(false);
    let temp_needed = plan
        .chains
        .iter()
        .flat_map(|c| &c.instructions)
        .filter_map(|i| match i {
            Instruction::KernelCall { args, .. } => Some(args.len() as u64),
            _ => None,
        })
        .map(|n| (layout.tensor_meta.0 + DIM_ORDER.0 * TENSOR_DIMENSION_LIMIT) * n)
        .max()
        .unwrap_or(0);
    let mut not_modelled = Vec::new();
    if !plan.delegates.is_empty() {
        not_modelled.push(format!(
            "what the {} delegate(s) allocate in their backend's init",
            plan.delegates.len()
        ));
    }
    if plan
        .values
        .iter()
        .any(|v| v.as_tensor().is_some_and(|t| t.external_key().is_some()))
    {
        not_modelled.push("the table of external constants (.ptd)".into());
    }
    Some(MethodAllocation {
        layout: layout.name,
        method_allocator: with.high,
        temp_allocator: temp_needed,
        temp_allocator_peak: temp.high,
        method_allocator_without_temp: without.high,
        not_modelled,
    })
}

/// Every part of a program's RAM (and flash) on a 32-bit target, in bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RamBudget {
    /// The planned arenas as the program declares them.
    pub planned: u64,
    /// `Method::load`'s method allocator (with a temp allocator given).
    pub method_allocator: u64,
    /// The temp allocator that keeps the lookups out of the method allocator.
    pub temp_allocator: u64,
    /// Scratch the application provides beside the arenas (an Ethos-U delegate's); the
    /// Cortex-M backend's CMSIS-NN scratch is planned inside the arenas.
    pub scratch: u64,
    /// The program itself (constants included), read in place from flash.
    pub flash: u64,
    /// Of `planned`, the CMSIS-NN scratch buffers at their peak.
    pub planned_scratch: u64,
    pub total_ram: u64,
    pub method: MethodAllocation,
}

/// The RAM budget of plan `plan_index` of `program` (whose memory plan is `plan`) on a 32-bit
/// Arm target; its Ethos-U delegates' scratch is what their command streams ask the
/// application for.
pub fn ram_budget(
    program: &Program,
    plan_index: usize,
    plan: &super::MemoryPlan,
) -> Option<RamBudget> {
    let method = method_allocation(program, plan_index, &ARM32)?;
    let npu_scratch = crate::formats::ethos_u::delegates(program, plan_index)
        .iter()
        .filter_map(|(_, v)| v.as_ref().ok())
        .map(|v| {
            u64::from(v.scratch_bytes.unwrap_or(0)) + u64::from(v.fast_scratch_bytes.unwrap_or(0))
        })
        .fold(0u64, u64::saturating_add);
    let planned: u64 = program
        .plans
        .get(plan_index)?
        .non_const_buffer_sizes
        .iter()
        .skip(1)
        .map(|&s| u64::try_from(s).unwrap_or(0))
        .fold(0u64, u64::saturating_add);
    let planned_scratch = plan
        .arenas
        .iter()
        .map(|a| {
            // the most scratch bytes live at once: a sweep over their lifetimes
            let mut events: Vec<(usize, bool, u64)> = Vec::new();
            for t in a
                .tensors
                .iter()
                .filter(|t| t.role == super::TensorRole::Scratch)
            {
                events.push((t.first, true, t.size));
                events.push((t.last.saturating_add(1), false, t.size));
            }
            events.sort_unstable_by_key(|&(step, starts, _)| (step, starts));
            let (mut live, mut most) = (0u64, 0u64);
            for (_, starts, size) in events {
                live = if starts {
                    live.saturating_add(size)
                } else {
                    live.saturating_sub(size)
                };
                most = most.max(live);
            }
            most
        })
        .fold(0u64, u64::saturating_add);
    let total_ram = planned
        .saturating_add(method.method_allocator)
        .saturating_add(method.temp_allocator)
        .saturating_add(npu_scratch);
    Some(RamBudget {
        planned,
        method_allocator: method.method_allocator,
        temp_allocator: method.temp_allocator,
        scratch: npu_scratch,
        flash: program.bytes().len() as u64,
        planned_scratch,
        total_ram,
        method,
    })
}
