//! The ExecuTorch program (`.pte`) as plain Rust data: extended header, segments, execution plans
//! (values, operators, chains, instructions, delegates) and resolution of constant and delegate bytes.
//!
//! Layout (FORMATS.md): bytes 0..4 root offset, 4..8 identifier `ET12`, optional extended header
//! `eh00` at 8 with `program_size`, `segment_base_offset`, `segment_data_size`; segment `i` lives at
//! `segment_base_offset + segments[i].offset`.
//!
//! **Invariant:** a [`Program`] returned by [`Program::parse`] has every index it stores in range
//! (operator, value, list item, delegate, chain instruction, constant offset, segment), so code
//! holding one may index `values[i]` for any `i` it found inside the program.

pub mod features;
mod outline;
mod patch;
mod read;
pub mod write;
pub mod write_external;
pub mod write_plan;

pub use outline::{
    ArenaSize, CompileSpecText, DelegateSummary, EthosU, InstructionCall, PlanSummary,
};

use serde::Serialize;

use crate::dtype::ScalarType;
use crate::error::{Error, Result};

pub use crate::tensor::MAX_TENSOR_BYTES;

/// The optional extended header (`eh00`) that follows the FlatBuffer identifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ExtendedHeader {
    pub header_length: u32,
    pub program_size: u64,
    pub segment_base_offset: u64,
    pub segment_data_size: u64,
}

/// A segment of the file, with its absolute position already resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Segment {
    /// Offset relative to `segment_base_offset`, as stored.
    pub offset: u64,
    pub size: u64,
    /// Absolute offset in the file.
    pub file_offset: u64,
}

/// `SubsegmentOffsets`: where constants (or mutable data) live inside one segment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SubsegmentOffsets {
    pub segment_index: u32,
    pub offsets: Vec<u64>,
}

/// A `NamedData` entry: a key (e.g. a sha256 of delegate weights) and its segment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NamedData {
    pub key: String,
    pub segment_index: u32,
}

/// Where a planned tensor lives: its arena (`memory_id`, 1-based) and byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Allocation {
    pub memory_id: u32,
    pub offset: u64,
}

/// `ExtraTensorInfo` (mutable or external tensor data).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExtraTensorInfo {
    pub mutable_data_segments_idx: u64,
    pub fully_qualified_name: Option<String>,
    /// 0 = SEGMENT, 1 = EXTERNAL.
    pub location: i8,
    /// 0 = CPU, 1 = CUDA: the device the tensor's memory is on.
    pub device_type: i8,
    pub device_index: i8,
}

/// A tensor value of an execution plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tensor {
    pub scalar_type: ScalarType,
    pub storage_offset: i32,
    pub sizes: Vec<i32>,
    pub dim_order: Vec<u8>,
    pub requires_grad: bool,
    /// Index into the constant segment's offsets (≥ 1 for constants, 0 otherwise).
    pub data_buffer_idx: u32,
    pub allocation: Option<Allocation>,
    pub layout: i8,
    /// 0 = STATIC, 1 = DYNAMIC_BOUND, 2 = DYNAMIC_UNBOUND.
    pub shape_dynamism: i8,
    pub extra: Option<ExtraTensorInfo>,
    /// Number of elements (checked at read time).
    pub numel: u64,
    /// Size in bytes (checked at read time; sub-byte types round up).
    pub nbytes: u64,
}

impl Tensor {
    /// Whether the tensor's data comes from the file (a constant or weight).
    pub fn is_constant(&self) -> bool {
        (self.data_buffer_idx > 0 || self.external_key().is_some()) && self.allocation.is_none()
    }

    /// Which constant data the tensor reads, the same for every tensor that reads the same
    /// data: its constant-segment index (`data_buffer_idx`), or for external data its
    /// `data_buffer_idx` with the high bit set (ExecuTorch numbers external buffers apart, from
    /// 0).
    pub fn constant_id(&self) -> u32 {
        if self.external_key().is_some() {
            0x8000_0000 | self.data_buffer_idx
        } else {
            self.data_buffer_idx
        }
    }

    /// The key of this tensor in external data (`.ptd`), when the program keeps it there.
    pub fn external_key(&self) -> Option<&str> {
        self.extra
            .as_ref()
            .filter(|e| e.location == 1)
            .and_then(|e| e.fully_qualified_name.as_deref())
    }

    /// Whether the tensor is planned and starts with data from the file: ExecuTorch's runtime
    /// copies that data into the arena when it loads the method (a training program's
    /// parameters, a mutable buffer with its initial state, mutable weights in a `.ptd`).
    pub fn has_initial_data(&self) -> bool {
        self.allocation.is_some() && (self.data_buffer_idx > 0 || self.external_key().is_some())
    }

    /// Sizes as `i64` for generic code.
    pub fn shape(&self) -> Vec<i64> {
        self.sizes.iter().map(|&s| i64::from(s)).collect()
    }
}

/// One `EValue` of an execution plan; list items are value indices, not literals.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", content = "value")]
pub enum EValue {
    /// The union tag was NONE.
    Unset,
    Null,
    Int(i64),
    Bool(bool),
    Double(f64),
    Tensor(Tensor),
    String(String),
    /// Value indices of `Int` values.
    IntList(Vec<i64>),
    DoubleList(Vec<f64>),
    BoolList(Vec<bool>),
    /// Value indices of `Tensor` values.
    TensorList(Vec<i32>),
    /// Value indices of `Tensor` or `Null` values (-1 for none).
    OptionalTensorList(Vec<i32>),
}

impl EValue {
    /// The kind's name as in the schema (`Tensor`, `IntList`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            EValue::Unset => "NONE",
            EValue::Null => "Null",
            EValue::Int(_) => "Int",
            EValue::Bool(_) => "Bool",
            EValue::Double(_) => "Double",
            EValue::Tensor(_) => "Tensor",
            EValue::String(_) => "String",
            EValue::IntList(_) => "IntList",
            EValue::DoubleList(_) => "DoubleList",
            EValue::BoolList(_) => "BoolList",
            EValue::TensorList(_) => "TensorList",
            EValue::OptionalTensorList(_) => "OptionalTensorList",
        }
    }

    /// The tensor, if this value is one.
    pub fn as_tensor(&self) -> Option<&Tensor> {
        match self {
            EValue::Tensor(t) => Some(t),
            _ => None,
        }
    }
}

/// An operator of the plan's operator table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Operator {
    pub name: String,
    pub overload: String,
}

impl Operator {
    /// `name.overload` (or `name` when the overload is empty), e.g. `aten::convolution.out`.
    pub fn qualified(&self) -> String {
        if self.overload.is_empty() {
            self.name.clone()
        } else {
            format!("{}.{}", self.name, self.overload)
        }
    }
}

/// One of the five instruction kinds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind")]
pub enum Instruction {
    KernelCall {
        op_index: usize,
        args: Vec<usize>,
    },
    DelegateCall {
        delegate_index: usize,
        args: Vec<usize>,
    },
    MoveCall {
        move_from: usize,
        move_to: usize,
    },
    JumpFalseCall {
        cond_value_index: usize,
        destination_instruction: usize,
    },
    FreeCall {
        value_index: usize,
    },
    /// An instruction whose union tag was NONE.
    Empty,
}

impl Instruction {
    /// The kind's name as in the schema.
    pub fn kind(&self) -> &'static str {
        match self {
            Instruction::KernelCall { .. } => "KernelCall",
            Instruction::DelegateCall { .. } => "DelegateCall",
            Instruction::MoveCall { .. } => "MoveCall",
            Instruction::JumpFalseCall { .. } => "JumpFalseCall",
            Instruction::FreeCall { .. } => "FreeCall",
            Instruction::Empty => "NONE",
        }
    }
}

/// A stack frame attached to an instruction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Frame {
    pub filename: String,
    pub lineno: i32,
    pub name: String,
    pub context: String,
}

/// A chain of instructions with its inputs and outputs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Chain {
    pub inputs: Vec<usize>,
    pub outputs: Vec<usize>,
    pub instructions: Vec<Instruction>,
    /// One frame list per instruction when present (empty otherwise).
    pub stacktrace: Vec<Vec<Frame>>,
}

/// Where a delegate's processed blob lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum DataLocation {
    /// `Program.backend_delegate_data[index]`.
    Inline,
    /// `Program.segments[index]`.
    Segment,
}

/// A compile spec of a delegate (`value` kept as bytes; often UTF-8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CompileSpec {
    pub key: String,
    pub value: Vec<u8>,
}

impl CompileSpec {
    /// The value as text when it is printable UTF-8, else as hex.
    pub fn value_text(&self) -> String {
        match std::str::from_utf8(&self.value) {
            Ok(s) if s.chars().all(|c| !c.is_control() || c == '\n') => s.to_string(),
            _ => self.value.iter().map(|b| format!("{b:02x}")).collect(),
        }
    }
}

/// A backend delegate of a plan (e.g. `XnnpackBackend`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Delegate {
    pub id: String,
    pub location: DataLocation,
    pub index: usize,
    pub compile_specs: Vec<CompileSpec>,
}

/// One method of the program (usually `forward`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExecutionPlan {
    pub name: String,
    pub encoded_inp_str: Option<String>,
    pub encoded_out_str: Option<String>,
    pub values: Vec<EValue>,
    pub inputs: Vec<usize>,
    pub outputs: Vec<usize>,
    pub chains: Vec<Chain>,
    pub operators: Vec<Operator>,
    pub delegates: Vec<Delegate>,
    /// Arena sizes; entry 0 is reserved, arena `memory_id` has size `non_const_buffer_sizes[memory_id]`.
    pub non_const_buffer_sizes: Vec<i64>,
    /// The device of each arena not on the host (`non_const_buffer_device`; absent: all CPU).
    pub non_const_buffer_devices: Vec<BufferDevice>,
}

/// `NonConstBufferDevice`: the device one memory-planned arena lives on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BufferDevice {
    /// Index into `non_const_buffer_sizes`.
    pub buffer_idx: i32,
    /// 0 = CPU, 1 = CUDA.
    pub device_type: i8,
    pub device_index: i8,
}

impl ExecutionPlan {
    /// The instructions of chain 0 (the ones ETDump `instruction_id`s index), empty if no chain.
    pub fn main_instructions(&self) -> &[Instruction] {
        self.chains
            .first()
            .map(|c| c.instructions.as_slice())
            .unwrap_or(&[])
    }

    /// The tensor at value index `i`, if that value is a tensor.
    pub fn tensor(&self, i: usize) -> Option<&Tensor> {
        self.values.get(i).and_then(EValue::as_tensor)
    }

    /// Number of arenas (`memory_id` 1..=n).
    pub fn arena_count(&self) -> usize {
        self.non_const_buffer_sizes.len().saturating_sub(1)
    }

    /// The bytes of all its arenas together (a negative size counts as none).
    pub fn planned_bytes(&self) -> u64 {
        self.non_const_buffer_sizes
            .iter()
            .map(|&b| u64::try_from(b).unwrap_or(0))
            .fold(0, u64::saturating_add)
    }
}

/// A parsed `.pte` file; owns the file bytes so constants and blobs resolve without copies.
#[derive(Debug, Clone)]
pub struct Program {
    pub version: u32,
    pub extended_header: Option<ExtendedHeader>,
    pub plans: Vec<ExecutionPlan>,
    pub segments: Vec<Segment>,
    pub constant_segment: Option<SubsegmentOffsets>,
    pub mutable_data_segments: Vec<SubsegmentOffsets>,
    pub named_data: Vec<NamedData>,
    /// Byte ranges (in `bytes`) of the deprecated inline `constant_buffer` entries.
    pub(crate) inline_constants: Vec<std::ops::Range<usize>>,
    /// Byte ranges (in `bytes`) of `backend_delegate_data` entries.
    pub(crate) inline_delegate_data: Vec<std::ops::Range<usize>>,
    pub(crate) bytes: Vec<u8>,
    /// The `.ptd` holding the tensors stored outside the program, once attached.
    pub(crate) external_data: Option<std::sync::Arc<crate::formats::flat_tensor::FlatTensorFile>>,
    /// Why a `.ptd` offered for it was not attached (said where a missing tensor is named).
    pub(crate) external_refused: Option<String>,
}

impl Program {
    /// Parses and validates a `.pte` file held in memory.
    pub fn parse(bytes: Vec<u8>) -> Result<Program> {
        read::parse_program(bytes)
    }

    /// The whole file.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The size of the attached external data file (`.ptd`), 0 without one.
    pub fn external_data_bytes(&self) -> usize {
        self.external_data.as_ref().map_or(0, |d| d.file_bytes())
    }

    /// The keys (fully qualified names) of the tensors this program keeps in external data,
    /// sorted, without repeats.
    pub fn external_keys(&self) -> Vec<&str> {
        let mut keys: Vec<&str> = self
            .plans
            .iter()
            .flat_map(|p| &p.values)
            .filter_map(|v| match v {
                EValue::Tensor(t) => t.external_key(),
                _ => None,
            })
            .collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    /// Records why the `.ptd` offered for this program was refused, so a run that needs one of
    /// its tensors says so rather than asking for a file that is there.
    pub fn note_refused_external_data(&mut self, why: String) {
        self.external_refused = Some(why);
    }

    /// Attaches the `.ptd` file that holds this program's external tensors, checking that it
    /// has every key with enough bytes (a `.ptd` of another program is refused with the key
    /// it lacks).
    pub fn attach_external_data(
        &mut self,
        data: std::sync::Arc<crate::formats::flat_tensor::FlatTensorFile>,
    ) -> Result<()> {
        let keys = self.external_keys();
        if keys.is_empty() {
            return Err(Error::invalid(
                "external data",
                "the program keeps no tensor in external data",
            ));
        }
        for plan in &self.plans {
            for v in &plan.values {
                let EValue::Tensor(t) = v else { continue };
                let Some(key) = t.external_key() else {
                    continue;
                };
                let blob = data.get(key).ok_or_else(|| {
                    Error::invalid(
                        "external data",
                        format!("has no tensor {key:?}: it belongs to another program"),
                    )
                })?;
                // ExecuTorch's `validateTensorLayout`: the .ptd's layout is the program's
                if let Some(layout) = data
                    .entries
                    .iter()
                    .find(|e| e.key == key)
                    .and_then(|e| e.layout.as_ref())
                {
                    if layout.scalar_type != t.scalar_type
                        || layout.sizes != t.sizes
                        || layout.dim_order != t.dim_order
                    {
                        return Err(Error::invalid(
                            "external data",
                            format!(
                                "tensor {key:?} is {}{:?} (dim order {:?}) in the .ptd, the program's is {}{:?} (dim order {:?})",
                                layout.scalar_type.short_name(),
                                layout.sizes,
                                layout.dim_order,
                                t.scalar_type.short_name(),
                                t.sizes,
                                t.dim_order
                            ),
                        ));
                    }
                }
                if (blob.len() as u64) < t.nbytes {
                    return Err(Error::invalid(
                        "external data",
                        format!(
                            "tensor {key:?} has {} bytes, the program needs {}",
                            blob.len(),
                            t.nbytes
                        ),
                    ));
                }
            }
        }
        self.external_data = Some(data);
        Ok(())
    }

    /// Number of inline `constant_buffer` entries (deprecated storage).
    pub fn inline_constant_count(&self) -> usize {
        self.inline_constants.len()
    }

    /// Number of inline delegate data entries.
    pub fn inline_delegate_data_count(&self) -> usize {
        self.inline_delegate_data.len()
    }

    /// The bytes of segment `i`.
    pub fn segment_bytes(&self, i: usize) -> Result<&[u8]> {
        let seg = self
            .segments
            .get(i)
            .ok_or_else(|| Error::out_of_range("segment index", i as i64, self.segments.len()))?;
        slice_of(
            &self.bytes,
            seg.file_offset,
            seg.size,
            &format!("segment {i}"),
        )
    }

    /// The plan a tool runs when no method is named: `forward`, as ExecuTorch's `Module` runs,
    /// else the first (a training program's `__et_training_*` plans sort before its `forward`).
    pub fn default_plan_index(&self) -> usize {
        self.plans
            .iter()
            .position(|p| p.name == "forward")
            .unwrap_or(0)
    }

    /// The plan a tool runs when no method is named ([`Program::default_plan_index`]).
    pub fn default_plan(&self) -> Option<&ExecutionPlan> {
        self.plans.get(self.default_plan_index())
    }

    /// The plan named `method`.
    pub fn plan_index(&self, method: &str) -> Option<usize> {
        self.plans.iter().position(|p| p.name == method)
    }

    /// The data of a constant tensor, from the constant segment (or the deprecated inline buffer).
    pub fn constant_bytes(&self, tensor: &Tensor) -> Result<&[u8]> {
        if let Some(key) = tensor.external_key() {
            let data = self.external_data.as_ref().ok_or_else(|| {
                let remedy = match &self.external_refused {
                    Some(why) => format!("{why}; give the .ptd this program was exported with"),
                    None => "put it beside the program under the program's name with .ptd (or as the _default_external_constant.ptd ExecuTorch's export writes), or open it with the program".to_string(),
                };
                Error::invalid(
                    "constant tensor",
                    format!("{key:?} is stored in external data (a .ptd) that is not attached: {remedy}"),
                )
            })?;
            let blob = data
                .get(key)
                .ok_or_else(|| Error::invalid("external data", format!("has no tensor {key:?}")))?;
            return slice_of(blob, 0, tensor.nbytes, &format!("external tensor {key:?}"));
        }
        let idx = tensor.data_buffer_idx as usize;
        if idx == 0 {
            return Err(Error::invalid(
                "constant tensor",
                "data_buffer_idx is 0 (not a constant)",
            ));
        }
        if let Some(cs) = &self.constant_segment {
            if !cs.offsets.is_empty() {
                let off = *cs.offsets.get(idx).ok_or_else(|| {
                    Error::out_of_range("data_buffer_idx", idx as i64, cs.offsets.len())
                })?;
                let seg = self.segment_bytes(cs.segment_index as usize)?;
                return slice_of(seg, off, tensor.nbytes, &format!("constant {idx}"));
            }
        }
        let range = self.inline_constants.get(idx).ok_or_else(|| {
            Error::out_of_range(
                "data_buffer_idx (inline constant_buffer)",
                idx as i64,
                self.inline_constants.len(),
            )
        })?;
        let data = &self.bytes[range.clone()];
        slice_of(data, 0, tensor.nbytes, &format!("inline constant {idx}"))
    }

    /// The data a planned tensor starts with when its method is loaded
    /// ([`Tensor::has_initial_data`]), as ExecuTorch's `getTensorDataPtr` finds it: from the
    /// `.ptd` under its fully qualified name when it is stored externally, else at
    /// `mutable_data_segments[0].offsets[data_buffer_idx]` (the runtime always reads the first
    /// mutable data segment, whatever `mutable_data_segments_idx` says).
    pub fn initial_bytes(&self, tensor: &Tensor) -> Result<&[u8]> {
        if !tensor.has_initial_data() {
            return Err(Error::invalid(
                "planned tensor",
                "has no initial data (no data_buffer_idx and not external)",
            ));
        }
        if tensor.external_key().is_some() {
            return self.constant_bytes(tensor);
        }
        let idx = tensor.data_buffer_idx as usize;
        let segment = self.mutable_data_segments.first().ok_or_else(|| {
            Error::invalid(
                "planned tensor with initial data",
                "the program has no mutable_data_segments",
            )
        })?;
        let off = *segment.offsets.get(idx).ok_or_else(|| {
            Error::out_of_range(
                "data_buffer_idx (mutable_data_segments[0])",
                idx as i64,
                segment.offsets.len(),
            )
        })?;
        let seg = self.segment_bytes(segment.segment_index as usize)?;
        slice_of(seg, off, tensor.nbytes, &format!("mutable data {idx}"))
    }

    /// The processed blob of a delegate.
    pub fn delegate_blob(&self, delegate: &Delegate) -> Result<&[u8]> {
        match delegate.location {
            DataLocation::Segment => self.segment_bytes(delegate.index),
            DataLocation::Inline => {
                let range = self
                    .inline_delegate_data
                    .get(delegate.index)
                    .ok_or_else(|| {
                        Error::out_of_range(
                            "delegate inline data index",
                            delegate.index as i64,
                            self.inline_delegate_data.len(),
                        )
                    })?;
                Ok(&self.bytes[range.clone()])
            }
        }
    }

    /// The bytes stored under a `named_data` key (delegate-owned weights).
    pub fn named_data_bytes(&self, key: &str) -> Result<&[u8]> {
        let entry = self
            .named_data
            .iter()
            .find(|n| n.key == key)
            .ok_or_else(|| Error::invalid("named data", format!("no entry named {key:?}")))?;
        self.segment_bytes(entry.segment_index as usize)
    }
}

/// `data[offset..offset+len]` or a `Truncated` error naming `what`.
pub(crate) fn slice_of<'a>(data: &'a [u8], offset: u64, len: u64, what: &str) -> Result<&'a [u8]> {
    let end = offset.checked_add(len).ok_or_else(|| Error::TooLarge {
        what: what.to_string(),
        claimed: u128::from(offset) + u128::from(len),
        limit: u64::MAX,
    })?;
    if end > data.len() as u64 {
        return Err(Error::Truncated {
            what: what.to_string(),
            needed: end,
            available: data.len() as u64,
        });
    }
    Ok(&data[offset as usize..end as usize])
}
