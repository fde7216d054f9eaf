//! ETDump (`.etdp`) as plain Rust data: runs, profile / allocation / debug events.
//!
//! Layout (FORMATS.md): a size-prefixed FlatBuffer — u32 LE size, then the buffer whose identifier
//! `ED00` sits at file bytes 8..12 (ExecuTorch's Python serializer omits the prefix: `ED00` at 4..8,
//! also read). `run_data[0]` (`Default`) holds load events; each `forward()`
//! adds an `Execute` run.

use flatbuffers::{ForwardsUOffset, Vector};
use serde::Serialize;

use crate::dtype::ScalarType;
use crate::error::{Error, Result};
use crate::formats::flatbuf::{
    check_identifier, root_accepting_unaligned_empty_vectors, verifier_options,
};
use crate::formats::generated::etdump::etdump as fb;
use crate::tensor::checked_tensor_size;

const KIND: &str = "ETDump (.etdp)";

/// A whole ETDump.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ETDump {
    pub version: u32,
    pub runs: Vec<RunData>,
}

/// One block of events (`Default` for loading, `Execute` per inference).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunData {
    pub name: String,
    pub bundled_input_index: i32,
    pub allocators: Vec<String>,
    pub events: Vec<Event>,
}

/// One event; the schema's `Event` table has at most one of these filled.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind")]
pub enum Event {
    Profile(ProfileEvent),
    Allocation(AllocationEvent),
    Debug(DebugEvent),
    /// An `Event` table with no field set.
    Empty,
}

/// A timed span (`native_call_*`, `OPERATOR_CALL`, `DELEGATE_CALL`, `Method::execute`, ...).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileEvent {
    pub name: String,
    pub chain_index: i32,
    pub instruction_id: i32,
    pub delegate_debug_id_int: i32,
    pub delegate_debug_id_str: Option<String>,
    pub delegate_debug_metadata: Vec<u8>,
    pub start_time: u64,
    pub end_time: u64,
}

impl ProfileEvent {
    /// `end - start` in ticks (0 if the clock went backwards).
    pub fn duration(&self) -> u64 {
        self.end_time.saturating_sub(self.start_time)
    }

    /// Whether the event belongs to a delegate's internals (keyed by a delegate debug id).
    pub fn is_delegate_internal(&self) -> bool {
        self.delegate_debug_id_int != -1 || self.delegate_debug_id_str.is_some()
    }
}

/// A memory allocation record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AllocationEvent {
    pub allocator_id: i32,
    pub allocation_size: u64,
}

/// A tensor described in an ETDump; its bytes live in the debug buffer at `offset`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TensorRef {
    pub scalar_type: ScalarType,
    pub sizes: Vec<i64>,
    pub strides: Vec<i64>,
    /// Byte offset into the debug buffer; -1 when nothing was stored (empty outputs).
    pub offset: i64,
}

/// The payload of a debug event.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", content = "value")]
pub enum DebugValue {
    Null,
    Int(i64),
    Bool(bool),
    Float(f32),
    Double(f64),
    Tensor(TensorRef),
    TensorList(Vec<TensorRef>),
    String(String),
}

/// An intermediate (or program) output captured at run time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DebugEvent {
    pub chain_index: u64,
    pub instruction_id: i32,
    pub value: DebugValue,
    /// Set (`output.bool_val`) when the value is a program output.
    pub is_program_output: bool,
    pub delegate_debug_id_int: i32,
    pub delegate_debug_id_str: Option<String>,
    pub name: Option<String>,
}

impl ETDump {
    /// Parses a size-prefixed ETDump.
    pub fn parse(bytes: &[u8]) -> Result<ETDump> {
        if bytes.len() < 12 {
            return Err(Error::Truncated {
                what: "ETDump size prefix and header".into(),
                needed: 12,
                available: bytes.len() as u64,
            });
        }
        let opts = verifier_options(bytes.len());
        let corrupt = |e: flatbuffers::InvalidFlatbuffer| Error::Corrupt {
            kind: KIND,
            detail: e.to_string(),
        };
        // ExecuTorch's Python serializer writes the buffer without the runtime's size prefix
        let mut realigned = None;
        let root = if &bytes[8..12] != b"ED00" && &bytes[4..8] == b"ED00" {
            root_accepting_unaligned_empty_vectors(
                bytes,
                &mut realigned,
                |b| fb::root_as_etdump_with_opts(&opts, b),
                |b| fb::root_as_etdump_with_opts(&opts, b).map(|_| ()),
            )
            .map_err(corrupt)?
        } else {
            check_identifier(bytes, 8, "ED00", KIND)?;
            let declared = u64::from(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]));
            let needed = declared + 4;
            if needed > bytes.len() as u64 {
                return Err(Error::Truncated {
                    what: "ETDump flatbuffer (size prefix)".into(),
                    needed,
                    available: bytes.len() as u64,
                });
            }
            root_accepting_unaligned_empty_vectors(
                &bytes[..needed as usize],
                &mut realigned,
                |b| fb::size_prefixed_root_as_etdump_with_opts(&opts, b),
                |b| fb::size_prefixed_root_as_etdump_with_opts(&opts, b).map(|_| ()),
            )
            .map_err(corrupt)?
        };
        let runs = root
            .run_data()
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(ri, r)| read_run(&r, ri))
            .collect::<Result<_>>()?;
        Ok(ETDump {
            version: root.version(),
            runs,
        })
    }

    /// The runs named `Execute` (one per inference), in order.
    pub fn execute_runs(&self) -> impl Iterator<Item = &RunData> {
        self.runs.iter().filter(|r| r.name == "Execute")
    }

    /// Total number of events over all runs.
    pub fn event_count(&self) -> usize {
        self.runs.iter().map(|r| r.events.len()).sum()
    }
}

fn read_run(r: &fb::RunData<'_>, ri: usize) -> Result<RunData> {
    let events = r
        .events()
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(ei, e)| read_event(&e).map_err(|err| in_event(err, ri, ei)))
        .collect::<Result<_>>()?;
    Ok(RunData {
        name: r.name().unwrap_or_default().to_string(),
        bundled_input_index: r.bundled_input_index(),
        allocators: r
            .allocators()
            .into_iter()
            .flatten()
            .map(|a| a.name().unwrap_or_default().to_string())
            .collect(),
        events,
    })
}

fn in_event(e: Error, ri: usize, ei: usize) -> Error {
    match e {
        Error::Invalid { what, detail } => Error::Invalid {
            what: format!("run_data[{ri}].events[{ei}] {what}"),
            detail,
        },
        Error::TooLarge {
            what,
            claimed,
            limit,
        } => Error::TooLarge {
            what: format!("run_data[{ri}].events[{ei}] {what}"),
            claimed,
            limit,
        },
        other => other,
    }
}

fn read_event(e: &fb::Event<'_>) -> Result<Event> {
    if let Some(p) = e.profile_event() {
        return Ok(Event::Profile(ProfileEvent {
            name: p.name().unwrap_or_default().to_string(),
            chain_index: p.chain_index(),
            instruction_id: p.instruction_id(),
            delegate_debug_id_int: p.delegate_debug_id_int(),
            delegate_debug_id_str: p.delegate_debug_id_str().map(str::to_string),
            delegate_debug_metadata: p
                .delegate_debug_metadata()
                .map(|m| m.bytes().to_vec())
                .unwrap_or_default(),
            start_time: p.start_time(),
            end_time: p.end_time(),
        }));
    }
    if let Some(a) = e.allocation_event() {
        return Ok(Event::Allocation(AllocationEvent {
            allocator_id: a.allocator_id(),
            allocation_size: a.allocation_size(),
        }));
    }
    if let Some(d) = e.debug_event() {
        let entry = d.debug_entry();
        let value = match entry {
            Some(v) => read_value(&v)?,
            None => DebugValue::Null,
        };
        return Ok(Event::Debug(DebugEvent {
            chain_index: d.chain_index(),
            instruction_id: d.instruction_id(),
            value,
            is_program_output: entry
                .and_then(|v| v.output())
                .map(|b| b.bool_val())
                .unwrap_or(false),
            delegate_debug_id_int: d.delegate_debug_id_int(),
            delegate_debug_id_str: d.delegate_debug_id_str().map(str::to_string),
            name: d.name().map(str::to_string),
        }));
    }
    Ok(Event::Empty)
}

fn read_tensor(t: &fb::Tensor<'_>) -> Result<TensorRef> {
    let scalar_type = ScalarType::from_code(t.scalar_type().0);
    let sizes: Vec<i64> = t.sizes().map(|v| v.iter().collect()).unwrap_or_default();
    let strides: Vec<i64> = t.strides().map(|v| v.iter().collect()).unwrap_or_default();
    checked_tensor_size(sizes.iter().copied(), scalar_type, "debug tensor")?;
    Ok(TensorRef {
        scalar_type,
        sizes,
        strides,
        offset: t.offset(),
    })
}

fn read_tensors(v: Option<Vector<'_, ForwardsUOffset<fb::Tensor<'_>>>>) -> Result<Vec<TensorRef>> {
    v.into_iter().flatten().map(|t| read_tensor(&t)).collect()
}

fn read_value(v: &fb::Value<'_>) -> Result<DebugValue> {
    use fb::ValueType as V;
    let missing = |s: &str| Error::invalid("debug value", format!("tag {s} without its field"));
    Ok(match v.val() {
        V::Null => DebugValue::Null,
        V::Int => DebugValue::Int(v.int_value().ok_or_else(|| missing("Int"))?.int_val()),
        V::Bool => DebugValue::Bool(v.bool_value().ok_or_else(|| missing("Bool"))?.bool_val()),
        V::Float => DebugValue::Float(v.float_value().ok_or_else(|| missing("Float"))?.float_val()),
        V::Double => DebugValue::Double(
            v.double_value()
                .ok_or_else(|| missing("Double"))?
                .double_val(),
        ),
        V::Tensor => {
            DebugValue::Tensor(read_tensor(&v.tensor().ok_or_else(|| missing("Tensor"))?)?)
        }
        V::TensorList => DebugValue::TensorList(read_tensors(
            v.tensor_list()
                .ok_or_else(|| missing("TensorList"))?
                .tensors(),
        )?),
        V::String => DebugValue::String(String::new()),
        other => {
            return Err(Error::invalid(
                "debug value",
                format!("unknown value type {}", other.0),
            ))
        }
    })
}
