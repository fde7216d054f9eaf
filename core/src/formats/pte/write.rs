//! Plain types → FlatBuffers for `.pte`: the writer beside the reader (`super::read`), so no
//! FlatBuffers type leaves `core::formats`. It writes what ExecuTorch's `to_executorch` writes
//! for the programs etscope makes: execution plans of values, kernel calls, moves, jumps and
//! frees, the operator table and the arena sizes, the constants in one segment behind an `eh00`
//! extended header (ExecuTorch's 128-byte segment alignment). What it does not write — delegates,
//! stack traces, tensors with extra info, non-CPU buffers — it refuses by name instead of
//! dropping.

use flatbuffers::{FlatBufferBuilder, WIPOffset};

use super::{EValue, ExecutionPlan, Instruction, Tensor};
use crate::error::{Error, Result};
use crate::formats::generated::program::executorch_flatbuffer as fb;

const WHAT: &str = "program (.pte) to write";
/// Alignment of the segments after the program (ExecuTorch's default).
const SEGMENT_ALIGN: u64 = 128;
/// The extended header's length (`eh00`, its length, program size, segment base and size).
const HEADER: usize = 32;

/// A program to write: its plans and the constant segment (`data` holding every constant at its
/// `offsets` entry; entry 0 is reserved, as ExecuTorch reserves it).
#[derive(Debug, Clone)]
pub struct ProgramToWrite<'a> {
    pub plans: &'a [ExecutionPlan],
    pub constant_data: &'a [u8],
    pub constant_offsets: &'a [u64],
}

/// The `.pte` bytes of `p`.
pub fn write_program(p: &ProgramToWrite<'_>) -> Result<Vec<u8>> {
    let mut b = FlatBufferBuilder::with_capacity(1 << 16);
    let mut plans = Vec::with_capacity(p.plans.len());
    for plan in p.plans {
        plans.push(write_plan(&mut b, plan)?);
    }
    let plans = b.create_vector(&plans);
    let empty_buffers: Vec<WIPOffset<fb::Buffer>> = Vec::new();
    let constant_buffer = b.create_vector(&empty_buffers);
    let empty_data: Vec<WIPOffset<fb::BackendDelegateInlineData>> = Vec::new();
    let delegate_data = b.create_vector(&empty_data);
    let segments = [fb::DataSegment::create(
        &mut b,
        &fb::DataSegmentArgs {
            offset: 0,
            size: p.constant_data.len() as u64,
        },
    )];
    let segments = b.create_vector(&segments);
    let offsets = b.create_vector(p.constant_offsets);
    let constant_segment = fb::SubsegmentOffsets::create(
        &mut b,
        &fb::SubsegmentOffsetsArgs {
            segment_index: 0,
            offsets: Some(offsets),
        },
    );
    let root = fb::Program::create(
        &mut b,
        &fb::ProgramArgs {
            version: 0,
            execution_plan: Some(plans),
            constant_buffer: Some(constant_buffer),
            backend_delegate_data: Some(delegate_data),
            segments: Some(segments),
            constant_segment: Some(constant_segment),
            mutable_data_segments: None,
            named_data: None,
        },
    );
    b.finish(root, Some("ET12"));
    with_header(b.finished_data(), p.constant_data)
}

fn unsupported(what: impl Into<String>) -> Error {
    Error::invalid(
        WHAT,
        format!("{}: etscope's writer does not write it", what.into()),
    )
}

fn index(what: &str, i: usize) -> Result<i32> {
    i32::try_from(i).map_err(|_| Error::invalid(WHAT, format!("{what} {i} does not fit a program")))
}

fn write_plan<'b>(
    b: &mut FlatBufferBuilder<'b>,
    plan: &ExecutionPlan,
) -> Result<WIPOffset<fb::ExecutionPlan<'b>>> {
    if !plan.delegates.is_empty() {
        return Err(unsupported(format!("plan {:?}: delegates", plan.name)));
    }
    if !plan.non_const_buffer_devices.is_empty() {
        return Err(unsupported(format!("plan {:?}: buffer devices", plan.name)));
    }
    let mut values = Vec::with_capacity(plan.values.len());
    for (k, v) in plan.values.iter().enumerate() {
        values.push(write_value(b, v).map_err(|e| match e {
            Error::Invalid { detail, .. } => {
                Error::invalid(WHAT, format!("plan {:?}, value {k}: {detail}", plan.name))
            }
            other => other,
        })?);
    }
    let values = b.create_vector(&values);
    let as_i32 = |what: &str, xs: &[usize]| -> Result<Vec<i32>> {
        xs.iter().map(|&x| index(what, x)).collect()
    };
    let inputs = as_i32("input", &plan.inputs)?;
    let outputs = as_i32("output", &plan.outputs)?;
    let inputs = b.create_vector(&inputs);
    let outputs = b.create_vector(&outputs);
    let mut chains = Vec::with_capacity(plan.chains.len());
    for chain in &plan.chains {
        if !chain.stacktrace.is_empty() {
            return Err(unsupported(format!("plan {:?}: stack traces", plan.name)));
        }
        let mut instructions = Vec::with_capacity(chain.instructions.len());
        for ins in &chain.instructions {
            instructions.push(write_instruction(b, ins)?);
        }
        let instructions = b.create_vector(&instructions);
        let ci = as_i32("chain input", &chain.inputs)?;
        let co = as_i32("chain output", &chain.outputs)?;
        let ci = b.create_vector(&ci);
        let co = b.create_vector(&co);
        chains.push(fb::Chain::create(
            b,
            &fb::ChainArgs {
                inputs: Some(ci),
                outputs: Some(co),
                instructions: Some(instructions),
                stacktrace: None,
            },
        ));
    }
    let chains = b.create_vector(&chains);
    let ops: Vec<_> = plan
        .operators
        .iter()
        .map(|o| {
            let name = b.create_string(&o.name);
            let overload = b.create_string(&o.overload);
            fb::Operator::create(
                b,
                &fb::OperatorArgs {
                    name: Some(name),
                    overload: Some(overload),
                },
            )
        })
        .collect();
    let ops = b.create_vector(&ops);
    let delegates: Vec<WIPOffset<fb::BackendDelegate>> = Vec::new();
    let delegates = b.create_vector(&delegates);
    let sizes = b.create_vector(&plan.non_const_buffer_sizes);
    let meta = match (&plan.encoded_inp_str, &plan.encoded_out_str) {
        (None, None) => None,
        (inp, out) => {
            let inp = inp.as_deref().map(|s| b.create_string(s));
            let out = out.as_deref().map(|s| b.create_string(s));
            Some(fb::ContainerMetadata::create(
                b,
                &fb::ContainerMetadataArgs {
                    encoded_inp_str: inp,
                    encoded_out_str: out,
                },
            ))
        }
    };
    let name = b.create_string(&plan.name);
    Ok(fb::ExecutionPlan::create(
        b,
        &fb::ExecutionPlanArgs {
            name: Some(name),
            container_meta_type: meta,
            values: Some(values),
            inputs: Some(inputs),
            outputs: Some(outputs),
            chains: Some(chains),
            operators: Some(ops),
            delegates: Some(delegates),
            non_const_buffer_sizes: Some(sizes),
            non_const_buffer_device: None,
        },
    ))
}

fn write_value<'b>(b: &mut FlatBufferBuilder<'b>, v: &EValue) -> Result<WIPOffset<fb::EValue<'b>>> {
    let (ty, val) = match v {
        EValue::Unset => return Err(unsupported("a value without a kind")),
        EValue::Null => (
            fb::KernelTypes::Null,
            fb::Null::create(b, &fb::NullArgs {}).as_union_value(),
        ),
        EValue::Int(i) => (
            fb::KernelTypes::Int,
            fb::Int::create(b, &fb::IntArgs { int_val: *i }).as_union_value(),
        ),
        EValue::Bool(x) => (
            fb::KernelTypes::Bool,
            fb::Bool::create(b, &fb::BoolArgs { bool_val: *x }).as_union_value(),
        ),
        EValue::Double(d) => (
            fb::KernelTypes::Double,
            fb::Double::create(b, &fb::DoubleArgs { double_val: *d }).as_union_value(),
        ),
        EValue::String(s) => {
            let s = b.create_string(s);
            (
                fb::KernelTypes::String,
                fb::String::create(
                    b,
                    &fb::StringArgs {
                        string_val: Some(s),
                    },
                )
                .as_union_value(),
            )
        }
        EValue::IntList(items) => {
            let items = b.create_vector(items);
            (
                fb::KernelTypes::IntList,
                fb::IntList::create(b, &fb::IntListArgs { items: Some(items) }).as_union_value(),
            )
        }
        EValue::DoubleList(items) => {
            let items = b.create_vector(items);
            (
                fb::KernelTypes::DoubleList,
                fb::DoubleList::create(b, &fb::DoubleListArgs { items: Some(items) })
                    .as_union_value(),
            )
        }
        EValue::BoolList(items) => {
            let items = b.create_vector(items);
            (
                fb::KernelTypes::BoolList,
                fb::BoolList::create(b, &fb::BoolListArgs { items: Some(items) }).as_union_value(),
            )
        }
        EValue::TensorList(items) => {
            let items = b.create_vector(items);
            (
                fb::KernelTypes::TensorList,
                fb::TensorList::create(b, &fb::TensorListArgs { items: Some(items) })
                    .as_union_value(),
            )
        }
        EValue::OptionalTensorList(items) => {
            let items = b.create_vector(items);
            (
                fb::KernelTypes::OptionalTensorList,
                fb::OptionalTensorList::create(
                    b,
                    &fb::OptionalTensorListArgs { items: Some(items) },
                )
                .as_union_value(),
            )
        }
        EValue::Tensor(t) => (
            fb::KernelTypes::Tensor,
            write_tensor(b, t)?.as_union_value(),
        ),
    };
    Ok(fb::EValue::create(
        b,
        &fb::EValueArgs {
            val_type: ty,
            val: Some(val),
        },
    ))
}

fn write_tensor<'b>(
    b: &mut FlatBufferBuilder<'b>,
    t: &Tensor,
) -> Result<WIPOffset<fb::Tensor<'b>>> {
    if t.extra.is_some() {
        return Err(unsupported("a tensor with extra tensor info"));
    }
    let allocation = t.allocation.map(|a| {
        fb::AllocationDetails::create(
            b,
            &fb::AllocationDetailsArgs {
                memory_id: a.memory_id,
                memory_offset_low: a.offset as u32,
                memory_offset_high: (a.offset >> 32) as u32,
            },
        )
    });
    let sizes = b.create_vector(&t.sizes);
    let dim_order = b.create_vector(&t.dim_order);
    Ok(fb::Tensor::create(
        b,
        &fb::TensorArgs {
            scalar_type: fb::ScalarType(t.scalar_type.code()),
            storage_offset: t.storage_offset,
            sizes: Some(sizes),
            dim_order: Some(dim_order),
            requires_grad: t.requires_grad,
            data_buffer_idx: t.data_buffer_idx,
            allocation_info: allocation,
            layout: t.layout,
            shape_dynamism: fb::TensorShapeDynamism(t.shape_dynamism),
            extra_tensor_info: None,
        },
    ))
}

fn write_instruction<'b>(
    b: &mut FlatBufferBuilder<'b>,
    ins: &Instruction,
) -> Result<WIPOffset<fb::Instruction<'b>>> {
    let (ty, args) = match ins {
        Instruction::KernelCall { op_index, args } => {
            let args: Vec<i32> = args
                .iter()
                .map(|&a| index("argument", a))
                .collect::<Result<_>>()?;
            let args = b.create_vector(&args);
            let op_index = index("operator", *op_index)?;
            (
                fb::InstructionArguments::KernelCall,
                fb::KernelCall::create(
                    b,
                    &fb::KernelCallArgs {
                        op_index,
                        args: Some(args),
                    },
                )
                .as_union_value(),
            )
        }
        Instruction::MoveCall { move_from, move_to } => {
            let args = fb::MoveCallArgs {
                move_from: index("value", *move_from)?,
                move_to: index("value", *move_to)?,
            };
            (
                fb::InstructionArguments::MoveCall,
                fb::MoveCall::create(b, &args).as_union_value(),
            )
        }
        Instruction::JumpFalseCall {
            cond_value_index,
            destination_instruction,
        } => {
            let args = fb::JumpFalseCallArgs {
                cond_value_index: index("value", *cond_value_index)?,
                destination_instruction: index("instruction", *destination_instruction)?,
            };
            (
                fb::InstructionArguments::JumpFalseCall,
                fb::JumpFalseCall::create(b, &args).as_union_value(),
            )
        }
        Instruction::FreeCall { value_index } => {
            let args = fb::FreeCallArgs {
                value_index: index("value", *value_index)?,
            };
            (
                fb::InstructionArguments::FreeCall,
                fb::FreeCall::create(b, &args).as_union_value(),
            )
        }
        Instruction::DelegateCall { .. } => return Err(unsupported("a delegate call")),
        Instruction::Empty => return Err(unsupported("an instruction without a kind")),
    };
    Ok(fb::Instruction::create(
        b,
        &fb::InstructionArgs {
            instr_args_type: ty,
            instr_args: Some(args),
        },
    ))
}

/// The flatbuffer with the `eh00` extended header inserted after its identifier and the
/// segment data appended at the next 128-byte boundary.
fn with_header(flat: &[u8], segment: &[u8]) -> Result<Vec<u8>> {
    if flat.len() < 8 {
        return Err(Error::invalid(
            WHAT,
            "the flatbuffer is shorter than its root offset and identifier",
        ));
    }
    let root = u32::from_le_bytes([flat[0], flat[1], flat[2], flat[3]]);
    let program_size = (flat.len() + HEADER) as u64;
    let base = program_size.div_ceil(SEGMENT_ALIGN) * SEGMENT_ALIGN;
    let mut out = Vec::with_capacity(base as usize + segment.len());
    out.extend_from_slice(&(root + HEADER as u32).to_le_bytes());
    out.extend_from_slice(&flat[4..8]);
    out.extend_from_slice(b"eh00");
    out.extend_from_slice(&(HEADER as u32).to_le_bytes());
    out.extend_from_slice(&program_size.to_le_bytes());
    out.extend_from_slice(&base.to_le_bytes());
    out.extend_from_slice(&(segment.len() as u64).to_le_bytes());
    out.extend_from_slice(&flat[8..]);
    out.resize(base as usize, 0);
    out.extend_from_slice(segment);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::pte::Program;

    /// What the reader reads back from the writer's bytes equals what was written.
    #[test]
    fn a_written_program_reads_back_as_written() {
        let bytes = std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../tests/fixtures/tiny_conv_relu_linear/model_fp32.pte"),
        )
        .expect("fixture");
        let original = Program::parse(bytes).expect("reads");
        let segment = original
            .constant_segment
            .as_ref()
            .expect("a constant segment");
        let data = original
            .segment_bytes(segment.segment_index as usize)
            .expect("segment bytes");
        let written = write_program(&ProgramToWrite {
            plans: &original.plans,
            constant_data: data,
            constant_offsets: &segment.offsets,
        })
        .expect("writes");
        let again = Program::parse(written).expect("reads back");
        assert_eq!(again.plans, original.plans);
        for plan in 0..original.plans.len() {
            for (k, v) in original.plans[plan].values.iter().enumerate() {
                if let EValue::Tensor(t) = v {
                    if t.is_constant() {
                        assert_eq!(
                            again.constant_bytes(t).expect("data"),
                            original.constant_bytes(t).expect("data"),
                            "value {k}"
                        );
                    }
                }
            }
        }
    }
}
