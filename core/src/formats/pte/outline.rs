//! A program's methods as plain facts for code outside the readers and writers: their names,
//! what each main-chain instruction calls, what `info` says of a method and of a delegate. The
//! window, the CLI and the profiler read these instead of the raw plan (`ExecutionPlan`,
//! `Instruction`, `EValue`), which stays with the readers and writers of programs
//! (`core/tests/module_layers.rs::only_the_readers_and_writers_of_programs_name_the_raw_plan`).

use std::collections::BTreeMap;

use serde::Serialize;

use super::{EValue, ExecutionPlan, Instruction, Program};

/// What `info` says of one method.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanSummary {
    pub name: String,
    /// Main-chain instructions.
    pub instructions: usize,
    /// Constant buffers, each counted once (tensors may share one).
    pub constant_buffers: usize,
    pub instruction_kinds: BTreeMap<&'static str, usize>,
    pub chains: usize,
    pub values: usize,
    pub value_kinds: BTreeMap<&'static str, usize>,
    /// Qualified operator names of the operator table.
    pub operators: Vec<String>,
    pub delegates: usize,
    pub delegate_backends: Vec<DelegateSummary>,
    pub inputs: Vec<usize>,
    pub outputs: Vec<usize>,
    pub constant_tensors: usize,
    /// Of those, read from external data (a `.ptd`).
    pub external_constants: usize,
    /// Bytes of the constant buffers, each once at its largest use.
    pub constant_bytes: u64,
    pub planned_tensors: usize,
    pub arena_count: usize,
    /// The first `listed` arenas (a hostile plan can declare millions).
    pub arenas: Vec<ArenaSize>,
}

/// One arena's declared size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ArenaSize {
    pub memory_id: usize,
    pub size: i64,
}

/// What `info` and the inspector say of a delegate call's backend.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DelegateSummary {
    pub id: String,
    pub blob_bytes: usize,
    /// The Ethos-U payload decoded, or why it cannot be (only for the Ethos-U backend).
    pub ethos_u: Option<EthosU>,
    pub compile_specs: Vec<CompileSpecText>,
}

/// An Ethos-U delegate's payload: the Vela command stream, or why it was not decoded (in JSON,
/// the stream or `{"error": …}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum EthosU {
    Decoded(crate::formats::ethos_u::VelaStream),
    NotDecoded { error: String },
}

/// A compile spec as text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CompileSpecText {
    pub key: String,
    pub value: String,
}

/// What one main-chain instruction calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstructionCall {
    /// A kernel call: the operator's qualified name (`aten::convolution.out`).
    Kernel(String),
    /// A delegate call: the backend's id.
    Delegate(String),
    /// Another instruction (a move, a jump, a free): its kind as in the schema.
    Other(&'static str),
}

impl std::fmt::Display for InstructionCall {
    /// The operator, `delegate::<backend>`, or the kind.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InstructionCall::Kernel(op) => f.write_str(op),
            InstructionCall::Delegate(id) => write!(f, "delegate::{id}"),
            InstructionCall::Other(kind) => f.write_str(kind),
        }
    }
}

impl ExecutionPlan {
    /// Each constant's data once ([`super::Tensor::constant_id`]) at its widest read: tensors
    /// may share one (tied weights, views of a constant).
    pub fn constant_widths(&self) -> BTreeMap<u32, u64> {
        let mut widths: BTreeMap<u32, u64> = BTreeMap::new();
        for t in self.values.iter().filter_map(EValue::as_tensor) {
            if t.is_constant() {
                let w = widths.entry(t.constant_id()).or_default();
                *w = (*w).max(t.nbytes);
            }
        }
        widths
    }

    /// What main-chain instruction `iid` calls (`None` past the chain, or for a call whose
    /// operator or delegate index is out of the tables).
    pub fn instruction_call(&self, iid: usize) -> Option<InstructionCall> {
        match self.main_instructions().get(iid)? {
            Instruction::KernelCall { op_index, .. } => self
                .operators
                .get(*op_index)
                .map(|o| InstructionCall::Kernel(o.qualified())),
            Instruction::DelegateCall { delegate_index, .. } => self
                .delegates
                .get(*delegate_index)
                .map(|d| InstructionCall::Delegate(d.id.clone())),
            other => Some(InstructionCall::Other(other.kind())),
        }
    }
}

impl Program {
    /// The names of its methods, in plan order.
    pub fn method_names(&self) -> Vec<&str> {
        self.plans.iter().map(|p| p.name.as_str()).collect()
    }

    /// What each main-chain instruction of plan `plan_index` calls; empty without such a
    /// plan.
    pub fn instruction_calls(&self, plan_index: usize) -> Vec<InstructionCall> {
        let Some(plan) = self.plans.get(plan_index) else {
            return Vec::new();
        };
        (0..plan.main_instructions().len())
            .map(|i| {
                plan.instruction_call(i)
                    .unwrap_or(InstructionCall::Other("KernelCall"))
            })
            .collect()
    }

    /// [`Program::instruction_calls`] as names: the operator, `delegate::<backend>`, or the
    /// kind.
    pub fn instruction_ops(&self, plan_index: usize) -> Vec<String> {
        self.instruction_calls(plan_index)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// The scalar type and shape of input `k` of plan `plan_index`, when it is a tensor.
    pub fn input_tensor(
        &self,
        plan_index: usize,
        k: usize,
    ) -> Option<(crate::ScalarType, Vec<usize>)> {
        let plan = self.plans.get(plan_index)?;
        let t = plan.tensor(*plan.inputs.get(k)?)?;
        Some((
            t.scalar_type,
            t.sizes.iter().map(|&s| s.max(0) as usize).collect(),
        ))
    }

    /// The qualified names of plan `plan_index`'s operator table (empty without such a plan).
    pub fn operator_names(&self, plan_index: usize) -> Vec<String> {
        self.plans
            .get(plan_index)
            .map(|p| p.operators.iter().map(|o| o.qualified()).collect())
            .unwrap_or_default()
    }

    /// The data of constant value `v` of plan `plan_index` in logical (row-major) order: its
    /// scalar type, shape and bytes (`None` for a value that is no constant tensor, or whose
    /// data cannot be read).
    pub fn constant_logical(
        &self,
        plan_index: usize,
        v: usize,
    ) -> Option<(crate::ScalarType, Vec<usize>, Vec<u8>)> {
        let t = self.plans.get(plan_index)?.tensor(v)?;
        let bytes = self.constant_bytes(t).ok()?;
        let shape: Vec<usize> = t.sizes.iter().map(|&s| s.max(0) as usize).collect();
        let elem = t.scalar_type.element_size()?;
        let logical = crate::tensor::undo_dim_order(&shape, &t.dim_order, elem, bytes).ok()?;
        Some((t.scalar_type, shape, logical))
    }

    /// The bytes of all plan `plan_index`'s arenas together.
    pub fn planned_bytes(&self, plan_index: usize) -> Option<u64> {
        self.plans.get(plan_index).map(ExecutionPlan::planned_bytes)
    }

    /// The number of inputs of plan `plan_index`.
    pub fn input_count(&self, plan_index: usize) -> Option<usize> {
        self.plans.get(plan_index).map(|p| p.inputs.len())
    }

    /// Whether main-chain instruction `iid` of plan `plan_index` is a kernel call.
    pub fn is_kernel_call(&self, plan_index: usize, iid: usize) -> bool {
        self.plans
            .get(plan_index)
            .and_then(|p| p.main_instructions().get(iid))
            .is_some_and(|i| matches!(i, Instruction::KernelCall { .. }))
    }

    /// Delegate `index` of plan `plan_index`: its backend, blob size and compile specs.
    pub fn delegate_summary(&self, plan_index: usize, index: usize) -> Option<DelegateSummary> {
        let d = self.plans.get(plan_index)?.delegates.get(index)?;
        let blob = self.delegate_blob(d);
        Some(DelegateSummary {
            id: d.id.clone(),
            blob_bytes: blob.as_ref().map_or(0, |b| b.len()),
            ethos_u: (d.id == crate::formats::ethos_u::BACKEND_ID).then(|| {
                match blob.and_then(crate::formats::ethos_u::decode) {
                    Ok(v) => EthosU::Decoded(v),
                    Err(e) => EthosU::NotDecoded {
                        error: e.to_string(),
                    },
                }
            }),
            compile_specs: d
                .compile_specs
                .iter()
                .map(|c| CompileSpecText {
                    key: c.key.clone(),
                    value: c.value_text(),
                })
                .collect(),
        })
    }

    /// What `info` says of plan `plan_index`, its first `listed_arenas` arenas listed.
    pub fn plan_summary(&self, plan_index: usize, listed_arenas: usize) -> Option<PlanSummary> {
        let plan = self.plans.get(plan_index)?;
        let mut kinds: BTreeMap<&'static str, usize> = BTreeMap::new();
        for c in &plan.chains {
            for i in &c.instructions {
                *kinds.entry(i.kind()).or_default() += 1;
            }
        }
        let mut value_kinds: BTreeMap<&'static str, usize> = BTreeMap::new();
        let (mut constants, mut external, mut planned) = (0usize, 0usize, 0usize);
        let buffers = plan.constant_widths();
        for v in &plan.values {
            *value_kinds.entry(v.kind()).or_default() += 1;
            if let EValue::Tensor(t) = v {
                if t.is_constant() {
                    constants += 1;
                    external += usize::from(t.external_key().is_some());
                } else if t.allocation.is_some() {
                    planned += 1;
                }
            }
        }
        Some(PlanSummary {
            name: plan.name.clone(),
            instructions: plan.main_instructions().len(),
            constant_buffers: buffers.len(),
            instruction_kinds: kinds,
            chains: plan.chains.len(),
            values: plan.values.len(),
            value_kinds,
            operators: plan.operators.iter().map(|o| o.qualified()).collect(),
            delegates: plan.delegates.len(),
            delegate_backends: (0..plan.delegates.len())
                .filter_map(|d| self.delegate_summary(plan_index, d))
                .collect(),
            inputs: plan.inputs.clone(),
            outputs: plan.outputs.clone(),
            constant_tensors: constants,
            external_constants: external,
            constant_bytes: buffers.values().sum(),
            planned_tensors: planned,
            arena_count: plan.arena_count(),
            arenas: plan
                .non_const_buffer_sizes
                .iter()
                .enumerate()
                .skip(1)
                .take(listed_arenas)
                .map(|(memory_id, &size)| ArenaSize { memory_id, size })
                .collect(),
        })
    }
}
