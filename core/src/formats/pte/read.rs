//! FlatBuffers → plain types for `.pte`: the only place that touches the generated `Program` code.
//! Every buffer goes through the verifier and every stored index is range-checked here.

use flatbuffers::{ForwardsUOffset, Vector};

use super::*;
use crate::formats::flatbuf::{
    check_identifier, root_accepting_unaligned_empty_vectors, verifier_options,
};
use crate::formats::generated::program::executorch_flatbuffer as fb;
use crate::tensor::checked_tensor_size;

const KIND: &str = "program (.pte)";
const MAGIC: &[u8; 4] = b"eh00";

fn read_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn read_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

pub(super) fn parse_extended_header(bytes: &[u8]) -> Result<Option<ExtendedHeader>> {
    if bytes.len() < 12 || &bytes[8..12] != MAGIC {
        return Ok(None);
    }
    if bytes.len() < 16 {
        return Err(Error::Truncated {
            what: "extended header".into(),
            needed: 16,
            available: bytes.len() as u64,
        });
    }
    let header_length = read_u32(bytes, 12);
    if header_length < 24 {
        return Err(Error::invalid(
            "extended header",
            format!("length {header_length} < 24"),
        ));
    }
    let end = 8 + header_length as usize;
    if bytes.len() < end {
        return Err(Error::Truncated {
            what: "extended header".into(),
            needed: end as u64,
            available: bytes.len() as u64,
        });
    }
    let program_size = read_u64(bytes, 16);
    let segment_base_offset = read_u64(bytes, 24);
    let segment_data_size = if header_length >= 32 {
        read_u64(bytes, 32)
    } else {
        0
    };
    let len = bytes.len() as u64;
    if program_size > len {
        return Err(Error::Truncated {
            what: "program flatbuffer (extended header program_size)".into(),
            needed: program_size,
            available: len,
        });
    }
    let seg_end = segment_base_offset.saturating_add(segment_data_size);
    if segment_data_size > 0 && seg_end > len {
        return Err(Error::Truncated {
            what: "segment data (extended header)".into(),
            needed: seg_end,
            available: len,
        });
    }
    Ok(Some(ExtendedHeader {
        header_length,
        program_size,
        segment_base_offset,
        segment_data_size,
    }))
}

pub(super) fn parse_program(bytes: Vec<u8>) -> Result<Program> {
    // ExecuTorch's runtime tells another schema version ("ET" + two digits) apart from a file
    // that is no program at all; so does etscope
    if let Some(id) = bytes.get(4..8) {
        if id != b"ET12" && id.starts_with(b"ET") && id[2..].iter().all(u8::is_ascii_digit) {
            return Err(Error::invalid(
                "program (.pte)",
                format!(
                    "schema {} is another ExecuTorch program version than the ET12 that ExecuTorch 1.x and etscope read; re-export it with a current ExecuTorch",
                    String::from_utf8_lossy(id)
                ),
            ));
        }
    }
    check_identifier(&bytes, 4, "ET12", KIND)?;
    let header = parse_extended_header(&bytes)?;
    let fb_len = header
        .map(|h| h.program_size as usize)
        .filter(|&n| n > 0)
        .unwrap_or(bytes.len());
    let fb_bytes = &bytes[..fb_len];
    let opts = verifier_options(fb_len);
    let mut realigned = None;
    let root = root_accepting_unaligned_empty_vectors(
        fb_bytes,
        &mut realigned,
        |b| fb::root_as_program_with_opts(&opts, b),
        |b| fb::root_as_program_with_opts(&opts, b).map(|_| ()),
    )
    .map_err(|e| Error::Corrupt {
        kind: KIND,
        detail: e.to_string(),
    })?;

    let segments = read_segments(&root, header, bytes.len() as u64)?;
    let constant_segment = root.constant_segment().map(|s| subsegment(&s));
    if let Some(cs) = &constant_segment {
        // one offset is the placeholder for non-constant tensors: no constant data to load
        if cs.offsets.len() > 1 && cs.segment_index as usize >= segments.len() {
            return Err(Error::out_of_range(
                "constant_segment.segment_index",
                cs.segment_index.into(),
                segments.len(),
            ));
        }
    }
    let mutable_data_segments = root
        .mutable_data_segments()
        .map(|v| v.iter().map(|s| subsegment(&s)).collect())
        .unwrap_or_default();
    let named_data: Vec<NamedData> = root
        .named_data()
        .map(|v| {
            v.iter()
                .map(|n| NamedData {
                    key: n.key().unwrap_or_default().to_string(),
                    segment_index: n.segment_index(),
                })
                .collect()
        })
        .unwrap_or_default();
    for n in &named_data {
        if n.segment_index as usize >= segments.len() {
            return Err(Error::out_of_range(
                format!("named_data[{}].segment_index", n.key),
                n.segment_index.into(),
                segments.len(),
            ));
        }
    }
    // offsets into the buffer the root was verified in: the file's flatbuffer, or its realigned
    // copy, which holds the same bytes at the same offsets followed by the empty vectors it
    // re-points to (those read as empty here)
    let parsed = root._tab.buf();
    let base = parsed.as_ptr() as usize;
    let range_of = |v: Option<Vector<'_, u8>>| -> std::ops::Range<usize> {
        let Some(s) = v.map(|v| v.bytes()) else {
            return 0..0;
        };
        match (s.as_ptr() as usize).checked_sub(base) {
            Some(start) if start + s.len() <= fb_len => start..start + s.len(),
            _ => 0..0,
        }
    };
    let inline_constants = root
        .constant_buffer()
        .map(|v| v.iter().map(|b| range_of(b.storage())).collect())
        .unwrap_or_default();
    let inline_delegate_data = root
        .backend_delegate_data()
        .map(|v| v.iter().map(|b| range_of(b.data())).collect::<Vec<_>>())
        .unwrap_or_default();

    let mut plans = Vec::new();
    for (pi, plan) in root.execution_plan().into_iter().flatten().enumerate() {
        let plan = read_plan(&plan, pi, segments.len(), inline_delegate_data.len())?;
        plans.push(plan);
    }
    let version = root.version();
    let program = Program {
        version,
        extended_header: header,
        plans,
        segments,
        constant_segment,
        mutable_data_segments,
        named_data,
        inline_constants,
        inline_delegate_data,
        bytes,
        external_data: None,
        external_refused: None,
    };
    check_constants(&program)?;
    Ok(program)
}

fn subsegment(s: &fb::SubsegmentOffsets<'_>) -> SubsegmentOffsets {
    SubsegmentOffsets {
        segment_index: s.segment_index(),
        offsets: s.offsets().map(|o| o.iter().collect()).unwrap_or_default(),
    }
}

fn read_segments(
    root: &fb::Program<'_>,
    header: Option<ExtendedHeader>,
    file_len: u64,
) -> Result<Vec<Segment>> {
    let Some(list) = root.segments() else {
        return Ok(Vec::new());
    };
    if list.is_empty() {
        return Ok(Vec::new());
    }
    // ExecuTorch's runtime (program.cpp): without an extended header the program is the whole
    // file and there are no segments. The serializer writes such files whenever the segment
    // data is empty, still listing a placeholder segment.
    let Some(header) = header else {
        return Ok(Vec::new());
    };
    let base = header.segment_base_offset;
    let mut out = Vec::with_capacity(list.len());
    for (i, s) in list.iter().enumerate() {
        let file_offset = base
            .checked_add(s.offset())
            .ok_or_else(|| Error::invalid(format!("segment {i}"), "offset overflows"))?;
        let end = file_offset
            .checked_add(s.size())
            .ok_or_else(|| Error::invalid(format!("segment {i}"), "size overflows"))?;
        if end > file_len {
            return Err(Error::Truncated {
                what: format!("segment {i}"),
                needed: end,
                available: file_len,
            });
        }
        out.push(Segment {
            offset: s.offset(),
            size: s.size(),
            file_offset,
        });
    }
    Ok(out)
}

/// Checks that every constant tensor's bytes lie inside the file.
fn check_constants(program: &Program) -> Result<()> {
    for plan in &program.plans {
        for (vi, v) in plan.values.iter().enumerate() {
            if let EValue::Tensor(t) = v {
                // external tensors are checked when their .ptd is attached
                if t.is_constant() && t.external_key().is_none() {
                    program.constant_bytes(t).map_err(|e| match e {
                        Error::Truncated {
                            needed, available, ..
                        } => Error::Truncated {
                            what: format!("constant data of value {vi} in plan {:?}", plan.name),
                            needed,
                            available,
                        },
                        other => other,
                    })?;
                }
            }
        }
    }
    Ok(())
}

fn index(v: i64, len: usize, what: impl FnOnce() -> String) -> Result<usize> {
    if v < 0 || v as u64 >= len as u64 {
        return Err(Error::out_of_range(what(), v, len));
    }
    Ok(v as usize)
}

/// Range-checked value indices; `what` names the list only when an index is bad.
fn indices(
    v: Option<Vector<'_, i32>>,
    len: usize,
    what: impl Fn() -> String,
) -> Result<Vec<usize>> {
    v.into_iter()
        .flatten()
        .enumerate()
        .map(|(k, i)| index(i.into(), len, || format!("{}[{k}]", what())))
        .collect()
}

fn read_plan(
    plan: &fb::ExecutionPlan<'_>,
    pi: usize,
    n_segments: usize,
    n_inline: usize,
) -> Result<ExecutionPlan> {
    let name = plan.name().unwrap_or_default().to_string();
    let ctx = |what: &str| format!("plan {name:?} {what}");
    let raw_values = plan.values();
    let n_values = raw_values.map(|v| v.len()).unwrap_or(0);
    let mut values = Vec::with_capacity(n_values);
    for (vi, v) in raw_values.into_iter().flatten().enumerate() {
        values.push(read_evalue(&v, vi, n_values).map_err(|e| prefix(e, &ctx("")))?);
    }
    let operators: Vec<Operator> = plan
        .operators()
        .into_iter()
        .flatten()
        .map(|o| Operator {
            name: o.name().unwrap_or_default().to_string(),
            overload: o.overload().unwrap_or_default().to_string(),
        })
        .collect();
    let delegates =
        read_delegates(plan.delegates(), n_segments, n_inline).map_err(|e| prefix(e, &ctx("")))?;
    let mut chains = Vec::new();
    for (ci, c) in plan.chains().into_iter().flatten().enumerate() {
        chains.push(
            read_chain(&c, ci, n_values, operators.len(), delegates.len())
                .map_err(|e| prefix(e, &ctx("")))?,
        );
    }
    let _ = pi;
    Ok(ExecutionPlan {
        encoded_inp_str: plan
            .container_meta_type()
            .and_then(|c| c.encoded_inp_str())
            .map(str::to_string),
        encoded_out_str: plan
            .container_meta_type()
            .and_then(|c| c.encoded_out_str())
            .map(str::to_string),
        inputs: indices(plan.inputs(), n_values, || ctx("inputs"))?,
        outputs: indices(plan.outputs(), n_values, || ctx("outputs"))?,
        non_const_buffer_sizes: plan
            .non_const_buffer_sizes()
            .map(|v| v.iter().collect())
            .unwrap_or_default(),
        non_const_buffer_devices: plan
            .non_const_buffer_device()
            .into_iter()
            .flatten()
            .map(|d| BufferDevice {
                buffer_idx: d.buffer_idx(),
                device_type: d.device_type().0,
                device_index: d.device_index(),
            })
            .collect(),
        name,
        values,
        chains,
        operators,
        delegates,
    })
}

pub(super) fn prefix(e: Error, ctx: &str) -> Error {
    match e {
        Error::OutOfRange { what, index, len } => Error::OutOfRange {
            what: format!("{ctx}{what}"),
            index,
            len,
        },
        Error::TooLarge {
            what,
            claimed,
            limit,
        } => Error::TooLarge {
            what: format!("{ctx}{what}"),
            claimed,
            limit,
        },
        Error::Invalid { what, detail } => Error::Invalid {
            what: format!("{ctx}{what}"),
            detail,
        },
        other => other,
    }
}

fn read_evalue(v: &fb::EValue<'_>, vi: usize, n_values: usize) -> Result<EValue> {
    use fb::KernelTypes as K;
    let what = |s: &str| format!("values[{vi}].{s}");
    let list = |items: Option<Vector<'_, i32>>, s: &str, allow_neg: bool| -> Result<Vec<i32>> {
        items
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(k, i)| {
                if (allow_neg && i == -1) || (i >= 0 && (i as usize) < n_values) {
                    Ok(i)
                } else {
                    Err(Error::out_of_range(
                        what(&format!("{s}[{k}]")),
                        i.into(),
                        n_values,
                    ))
                }
            })
            .collect()
    };
    Ok(match v.val_type() {
        K::NONE => EValue::Unset,
        K::Null => EValue::Null,
        K::Int => EValue::Int(v.val_as_int().map(|x| x.int_val()).unwrap_or(0)),
        K::Bool => EValue::Bool(v.val_as_bool().map(|x| x.bool_val()).unwrap_or(false)),
        K::Double => EValue::Double(v.val_as_double().map(|x| x.double_val()).unwrap_or(0.0)),
        K::String => EValue::String(
            v.val_as_string()
                .and_then(|x| x.string_val())
                .unwrap_or_default()
                .to_string(),
        ),
        K::IntList => {
            let items: Vec<i64> = v
                .val_as_int_list()
                .and_then(|x| x.items())
                .map(|x| x.iter().collect())
                .unwrap_or_default();
            for (k, &i) in items.iter().enumerate() {
                index(i, n_values, || what(&format!("IntList[{k}]")))?;
            }
            EValue::IntList(items)
        }
        K::DoubleList => EValue::DoubleList(
            v.val_as_double_list()
                .and_then(|x| x.items())
                .map(|x| x.iter().collect())
                .unwrap_or_default(),
        ),
        K::BoolList => EValue::BoolList(
            v.val_as_bool_list()
                .and_then(|x| x.items())
                .map(|x| x.iter().collect())
                .unwrap_or_default(),
        ),
        K::TensorList => EValue::TensorList(list(
            v.val_as_tensor_list().and_then(|x| x.items()),
            "TensorList",
            false,
        )?),
        K::OptionalTensorList => EValue::OptionalTensorList(list(
            v.val_as_optional_tensor_list().and_then(|x| x.items()),
            "OptionalTensorList",
            true,
        )?),
        K::Tensor => match v.val_as_tensor() {
            Some(t) => EValue::Tensor(read_tensor(&t, vi)?),
            None => {
                return Err(Error::invalid(
                    what("Tensor"),
                    "tag says Tensor but no table",
                ))
            }
        },
        other => {
            return Err(Error::invalid(
                what("val_type"),
                format!("unknown EValue tag {}", other.0),
            ))
        }
    })
}

fn read_tensor(t: &fb::Tensor<'_>, vi: usize) -> Result<Tensor> {
    let scalar_type = ScalarType::from_code(t.scalar_type().0);
    let sizes: Vec<i32> = t.sizes().map(|v| v.iter().collect()).unwrap_or_default();
    let dim_order: Vec<u8> = t
        .dim_order()
        .map(|v| v.iter().collect())
        .unwrap_or_default();
    let what = || format!("values[{vi}] tensor");
    let (numel, nbytes) =
        checked_tensor_size(sizes.iter().map(|&s| i64::from(s)), scalar_type, "tensor")
            .map_err(|e| prefix(e, &format!("{} ", what())))?;
    if !dim_order.is_empty() {
        let mut seen = 0u128;
        let valid = dim_order.len() == sizes.len()
            && dim_order.len() <= 128
            && dim_order.iter().all(|&d| {
                let bit = 1u128.checked_shl(u32::from(d)).unwrap_or(0);
                let fresh = (d as usize) < sizes.len() && seen & bit == 0;
                seen |= bit;
                fresh
            });
        if !valid {
            return Err(Error::invalid(
                what(),
                format!(
                    "dim_order {dim_order:?} is not a permutation of {} dims",
                    sizes.len()
                ),
            ));
        }
    }
    let allocation = t.allocation_info().map(|a| Allocation {
        memory_id: a.memory_id(),
        offset: (u64::from(a.memory_offset_high()) << 32) | u64::from(a.memory_offset_low()),
    });
    let extra = t.extra_tensor_info().map(|e| ExtraTensorInfo {
        mutable_data_segments_idx: e.mutable_data_segments_idx(),
        fully_qualified_name: e.fully_qualified_name().map(str::to_string),
        location: e.location().0,
        device_type: e.device_type().0,
        device_index: e.device_index(),
    });
    Ok(Tensor {
        scalar_type,
        storage_offset: t.storage_offset(),
        sizes,
        dim_order,
        requires_grad: t.requires_grad(),
        data_buffer_idx: t.data_buffer_idx(),
        allocation,
        layout: t.layout(),
        shape_dynamism: t.shape_dynamism().0,
        extra,
        numel,
        nbytes,
    })
}

fn read_delegates(
    list: Option<Vector<'_, ForwardsUOffset<fb::BackendDelegate<'_>>>>,
    n_segments: usize,
    n_inline: usize,
) -> Result<Vec<Delegate>> {
    let mut out = Vec::new();
    for (di, d) in list.into_iter().flatten().enumerate() {
        let processed = d.processed().ok_or_else(|| {
            Error::invalid(format!("delegates[{di}]"), "no processed data reference")
        })?;
        let (location, limit) = match processed.location() {
            fb::DataLocation::INLINE => (DataLocation::Inline, n_inline),
            fb::DataLocation::SEGMENT => (DataLocation::Segment, n_segments),
            other => {
                return Err(Error::invalid(
                    format!("delegates[{di}]"),
                    format!("unknown data location {}", other.0),
                ))
            }
        };
        let index = index(processed.index().into(), limit, || {
            format!("delegates[{di}].processed.index")
        })?;
        let compile_specs = d
            .compile_specs()
            .into_iter()
            .flatten()
            .map(|c| CompileSpec {
                key: c.key().unwrap_or_default().to_string(),
                value: c.value().map(|v| v.bytes().to_vec()).unwrap_or_default(),
            })
            .collect();
        out.push(Delegate {
            id: d.id().unwrap_or_default().to_string(),
            location,
            index,
            compile_specs,
        });
    }
    Ok(out)
}

fn read_chain(
    c: &fb::Chain<'_>,
    ci: usize,
    n_values: usize,
    n_ops: usize,
    n_delegates: usize,
) -> Result<Chain> {
    let raw = c.instructions();
    let n_instr = raw.map(|v| v.len()).unwrap_or(0);
    let mut instructions = Vec::with_capacity(n_instr);
    for (ii, ins) in raw.into_iter().flatten().enumerate() {
        let w = |s: &str| format!("chains[{ci}].instructions[{ii}].{s}");
        let val = |i: i32, s: &str| index(i.into(), n_values, || w(s));
        use fb::InstructionArguments as A;
        let parsed = match ins.instr_args_type() {
            A::NONE => Instruction::Empty,
            A::KernelCall => {
                let k = ins
                    .instr_args_as_kernel_call()
                    .ok_or_else(|| Error::invalid(w("instr_args"), "missing KernelCall"))?;
                Instruction::KernelCall {
                    op_index: index(k.op_index().into(), n_ops, || w("op_index"))?,
                    args: indices(k.args(), n_values, || w("args"))?,
                }
            }
            A::DelegateCall => {
                let d = ins
                    .instr_args_as_delegate_call()
                    .ok_or_else(|| Error::invalid(w("instr_args"), "missing DelegateCall"))?;
                Instruction::DelegateCall {
                    delegate_index: index(d.delegate_index().into(), n_delegates, || {
                        w("delegate_index")
                    })?,
                    args: indices(d.args(), n_values, || w("args"))?,
                }
            }
            A::MoveCall => {
                let m = ins
                    .instr_args_as_move_call()
                    .ok_or_else(|| Error::invalid(w("instr_args"), "missing MoveCall"))?;
                Instruction::MoveCall {
                    move_from: val(m.move_from(), "move_from")?,
                    move_to: val(m.move_to(), "move_to")?,
                }
            }
            A::JumpFalseCall => {
                let j = ins
                    .instr_args_as_jump_false_call()
                    .ok_or_else(|| Error::invalid(w("instr_args"), "missing JumpFalseCall"))?;
                Instruction::JumpFalseCall {
                    cond_value_index: val(j.cond_value_index(), "cond_value_index")?,
                    // the chain's length itself ends the chain, as ExecuTorch's runtime
                    // takes it (the emitter jumps there past a `cond`'s last branch)
                    destination_instruction: index(
                        j.destination_instruction().into(),
                        n_instr.saturating_add(1),
                        || w("destination_instruction"),
                    )?,
                }
            }
            A::FreeCall => {
                let f = ins
                    .instr_args_as_free_call()
                    .ok_or_else(|| Error::invalid(w("instr_args"), "missing FreeCall"))?;
                Instruction::FreeCall {
                    value_index: val(f.value_index(), "value_index")?,
                }
            }
            other => {
                return Err(Error::invalid(
                    w("instr_args_type"),
                    format!("unknown instruction tag {}", other.0),
                ))
            }
        };
        instructions.push(parsed);
    }
    let stacktrace = c
        .stacktrace()
        .into_iter()
        .flatten()
        .map(|fl| {
            fl.items()
                .into_iter()
                .flatten()
                .map(|f| Frame {
                    filename: f.filename().unwrap_or_default().to_string(),
                    lineno: f.lineno(),
                    name: f.name().unwrap_or_default().to_string(),
                    context: f.context().unwrap_or_default().to_string(),
                })
                .collect()
        })
        .collect();
    Ok(Chain {
        inputs: indices(c.inputs(), n_values, || format!("chains[{ci}].inputs"))?,
        outputs: indices(c.outputs(), n_values, || format!("chains[{ci}].outputs"))?,
        instructions,
        stacktrace,
    })
}
