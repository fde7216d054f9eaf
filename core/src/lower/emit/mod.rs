//! A lowered module written as a `.pte` program, as ExecuTorch's `to_executorch` writes one for
//! these graphs: every call in its out-variant form (arguments, out tensors, the returned
//! value), one `EValue` per argument (lists as lists of value indices), views of contiguous
//! tensors and scratch allocations as values without instructions, every non-constant tensor
//! placed in arena 1 (a greedy by size over instruction lifetimes, 16-byte aligned; graph inputs
//! and outputs included), constants deduplicated into one segment behind an `eh00` extended
//! header. The kernel calls, their order and their arguments are ExecuTorch's, and so are the
//! offsets: the program is written once, ExecuTorch's planner (reimplemented,
//! [`crate::plan::executorch`]) plans it, and it is written again with those offsets.

use std::collections::HashMap;

use flatbuffers::{FlatBufferBuilder, WIPOffset};

use crate::dtype::ScalarType;
use crate::formats::generated::program::executorch_flatbuffer as fb;
use crate::ir::{ArgData, Storage, ValueId};
use crate::tensor::TensorData;

mod plan;

use super::{LowerError, Module, Options};
use plan::{align, layout, TENSOR_ALIGN};

const PASS: &str = "emit";
/// Alignment of the segments after the program (ExecuTorch's default).
const SEGMENT_ALIGN: u64 = 128;

pub(super) fn err(detail: impl Into<String>) -> LowerError {
    super::edit::fail(PASS, detail)
}

fn fb_scalar(t: ScalarType) -> fb::ScalarType {
    fb::ScalarType(t.code())
}

/// Writes `module` as a `.pte`, its tensors where ExecuTorch 1.5.1's planner puts them.
pub fn program(module: &Module, _options: &Options) -> Result<Vec<u8>, LowerError> {
    let mut lay = layout(module)?;
    let (first, index) = serialize(module, &lay)?;
    // the program once written gives ExecuTorch's planner the graph it plans (values, calls,
    // scratch arguments in the order ExecuTorch creates them); its offsets replace etscope's
    let (offsets, arena) = executorch_offsets(&first, &index, &lay)?;
    lay.offsets = offsets;
    lay.arena = arena;
    Ok(serialize(module, &lay)?.0)
}

/// ExecuTorch's planner on a written program: the offset of every planned storage of `lay` and
/// the arena size.
fn executorch_offsets(
    written: &[u8],
    index: &HashMap<ValueId, i32>,
    lay: &plan::Layout,
) -> Result<(HashMap<ValueId, u64>, u64), LowerError> {
    use crate::formats::pte::Program;
    use crate::plan::{derive, executorch};
    let program = Program::parse(written.to_vec())
        .map_err(|e| err(format!("the written program does not read back: {e}")))?;
    let graph = crate::ir::from_pte::graph_from_plan(&program, 0)
        .ok_or_else(|| err("the written program has no plan"))?;
    let plan = derive(&graph);
    let placed = executorch::plan(&graph, &plan);
    let mut by_evalue: HashMap<usize, u64> = HashMap::new();
    let mut arena = 0u64;
    for a in &plan.arenas {
        let Some(p) = placed.get(&a.memory_id) else {
            continue;
        };
        arena = arena.max(p.size);
        for (t, &o) in a.tensors.iter().zip(&p.offsets) {
            by_evalue.insert(t.value, o);
            for &alias in &t.aliases {
                by_evalue.insert(alias, o);
            }
        }
    }
    let mut offsets = HashMap::new();
    for (&v, &i) in index {
        if let Some(&o) = usize::try_from(i).ok().and_then(|i| by_evalue.get(&i)) {
            offsets.insert(lay.storage_of[v], o);
        }
    }
    Ok((offsets, arena))
}

/// Serializes `module` laid out as `lay`; also returns the `EValue` index of every tensor.
fn serialize(
    module: &Module,
    lay: &plan::Layout,
) -> Result<(Vec<u8>, HashMap<ValueId, i32>), LowerError> {
    let g = &lay.graph;
    let mut b = FlatBufferBuilder::with_capacity(1 << 16);
    let mut values: Vec<WIPOffset<fb::EValue>> = Vec::new();
    let mut tensor_index: HashMap<ValueId, i32> = HashMap::new();
    // constant data, deduplicated: offsets[0] is reserved
    let mut segment: Vec<u8> = Vec::new();
    let mut const_offsets: Vec<u64> = vec![0];
    let mut const_index: HashMap<Vec<u8>, u32> = HashMap::new();

    macro_rules! push_value {
        ($ty:expr, $val:expr) => {{
            let v = fb::EValue::create(
                &mut b,
                &fb::EValueArgs {
                    val_type: $ty,
                    val: Some($val),
                },
            );
            values.push(v);
            (values.len() - 1) as i32
        }};
    }

    let mut tensor = |b: &mut FlatBufferBuilder<'static>,
                      values: &mut Vec<WIPOffset<fb::EValue>>,
                      v: ValueId|
     -> Result<i32, LowerError> {
        if let Some(&i) = tensor_index.get(&v) {
            return Ok(i);
        }
        let val = &g.values[v];
        let dtype = val
            .dtype
            .ok_or_else(|| err(format!("value {} has no dtype", val.label())))?;
        let sizes: Vec<i32> = val
            .shape
            .iter()
            .map(|&s| i32::try_from(s).map_err(|_| err(format!("value {}: size {s}", val.label()))))
            .collect::<Result<_, _>>()?;
        let (dim_order, data_buffer_idx, allocation) = if val.storage == Storage::Constant {
            let data: &TensorData = module
                .constants
                .get(&v)
                .ok_or_else(|| err(format!("constant {} has no data", val.label())))?;
            let idx = match const_index.get(&data.bytes) {
                Some(&i) => i,
                None => {
                    let at = align(segment.len() as u64, TENSOR_ALIGN);
                    segment.resize(at as usize, 0);
                    segment.extend_from_slice(&data.bytes);
                    const_offsets.push(at);
                    let i = (const_offsets.len() - 1) as u32;
                    const_index.insert(data.bytes.clone(), i);
                    i
                }
            };
            // constants are stored row-major, as their data is
            ((0..sizes.len() as u8).collect::<Vec<u8>>(), idx, None)
        } else {
            let storage = lay.storage_of[v];
            let offset = *lay.offsets.get(&storage).unwrap_or(&0);
            let order = if val.dim_order.is_empty() {
                (0..sizes.len() as u8).collect()
            } else {
                val.dim_order.clone()
            };
            let alloc = fb::AllocationDetails::create(
                b,
                &fb::AllocationDetailsArgs {
                    memory_id: 1,
                    memory_offset_low: offset as u32,
                    memory_offset_high: (offset >> 32) as u32,
                },
            );
            (order, 0, Some(alloc))
        };
        let sizes = b.create_vector(&sizes);
        let dim_order = b.create_vector(&dim_order);
        let t = fb::Tensor::create(
            b,
            &fb::TensorArgs {
                scalar_type: fb_scalar(dtype),
                storage_offset: 0,
                sizes: Some(sizes),
                dim_order: Some(dim_order),
                requires_grad: false,
                data_buffer_idx,
                allocation_info: allocation,
                layout: 0,
                shape_dynamism: fb::TensorShapeDynamism::STATIC,
                extra_tensor_info: None,
            },
        );
        let e = fb::EValue::create(
            b,
            &fb::EValueArgs {
                val_type: fb::KernelTypes::Tensor,
                val: Some(t.as_union_value()),
            },
        );
        values.push(e);
        let i = (values.len() - 1) as i32;
        tensor_index.insert(v, i);
        Ok(i)
    };

    let inputs: Vec<i32> = g
        .inputs
        .iter()
        .map(|&v| tensor(&mut b, &mut values, v))
        .collect::<Result<_, _>>()?;
    let mut operators: Vec<(String, String)> = Vec::new();
    let mut instructions = Vec::new();
    for c in &lay.calls {
        let n = &g.nodes[c.node];
        let key = (n.op.clone(), n.overload.clone());
        let op_index = match operators.iter().position(|o| *o == key) {
            Some(i) => i,
            None => {
                operators.push(key);
                operators.len() - 1
            }
        } as i32;
        let mut args = Vec::with_capacity(n.args.len());
        let last = n.args.len().saturating_sub(1);
        for (k, a) in n.args.iter().enumerate() {
            // a multi-output call returns its outs as one list
            if k == last && n.outputs.len() > 1 {
                let items: Vec<i32> = n
                    .outputs
                    .iter()
                    .map(|&o| tensor(&mut b, &mut values, o))
                    .collect::<Result<_, _>>()?;
                let items = b.create_vector(&items);
                let l = fb::TensorList::create(&mut b, &fb::TensorListArgs { items: Some(items) });
                args.push(push_value!(fb::KernelTypes::TensorList, l.as_union_value()));
                continue;
            }
            let index = match &a.data {
                ArgData::Tensor(v) => tensor(&mut b, &mut values, *v)?,
                ArgData::None => {
                    let x = fb::Null::create(&mut b, &fb::NullArgs {});
                    push_value!(fb::KernelTypes::Null, x.as_union_value())
                }
                ArgData::Int(i) => {
                    let x = fb::Int::create(&mut b, &fb::IntArgs { int_val: *i });
                    push_value!(fb::KernelTypes::Int, x.as_union_value())
                }
                ArgData::ScalarType(t) => {
                    let x = fb::Int::create(
                        &mut b,
                        &fb::IntArgs {
                            int_val: i64::from(t.code()),
                        },
                    );
                    push_value!(fb::KernelTypes::Int, x.as_union_value())
                }
                ArgData::Float(f) => {
                    let x = fb::Double::create(&mut b, &fb::DoubleArgs { double_val: *f });
                    push_value!(fb::KernelTypes::Double, x.as_union_value())
                }
                ArgData::Bool(v) => {
                    let x = fb::Bool::create(&mut b, &fb::BoolArgs { bool_val: *v });
                    push_value!(fb::KernelTypes::Bool, x.as_union_value())
                }
                ArgData::Str(s) => {
                    let s = b.create_string(s);
                    let x = fb::String::create(
                        &mut b,
                        &fb::StringArgs {
                            string_val: Some(s),
                        },
                    );
                    push_value!(fb::KernelTypes::String, x.as_union_value())
                }
                ArgData::Ints(items) => {
                    let mut idx = Vec::with_capacity(items.len());
                    for i in items {
                        let i = i.ok_or_else(|| {
                            err(format!("{}: a symbolic size cannot be written", n.name))
                        })?;
                        let x = fb::Int::create(&mut b, &fb::IntArgs { int_val: i });
                        idx.push(i64::from(push_value!(
                            fb::KernelTypes::Int,
                            x.as_union_value()
                        )));
                    }
                    let items = b.create_vector(&idx);
                    let x = fb::IntList::create(&mut b, &fb::IntListArgs { items: Some(items) });
                    push_value!(fb::KernelTypes::IntList, x.as_union_value())
                }
                ArgData::Floats(items) => {
                    let items = b.create_vector(items);
                    let x =
                        fb::DoubleList::create(&mut b, &fb::DoubleListArgs { items: Some(items) });
                    push_value!(fb::KernelTypes::DoubleList, x.as_union_value())
                }
                ArgData::Bools(items) => {
                    let items = b.create_vector(items);
                    let x = fb::BoolList::create(&mut b, &fb::BoolListArgs { items: Some(items) });
                    push_value!(fb::KernelTypes::BoolList, x.as_union_value())
                }
                ArgData::Tensors(vs) => {
                    let items: Vec<i32> = vs
                        .iter()
                        .map(|&v| tensor(&mut b, &mut values, v))
                        .collect::<Result<_, _>>()?;
                    let items = b.create_vector(&items);
                    let x =
                        fb::TensorList::create(&mut b, &fb::TensorListArgs { items: Some(items) });
                    push_value!(fb::KernelTypes::TensorList, x.as_union_value())
                }
                ArgData::OptionalTensors(vs) => {
                    let items: Vec<i32> = vs
                        .iter()
                        .map(|v| v.map_or(Ok(-1), |v| tensor(&mut b, &mut values, v)))
                        .collect::<Result<_, _>>()?;
                    let items = b.create_vector(&items);
                    let x = fb::OptionalTensorList::create(
                        &mut b,
                        &fb::OptionalTensorListArgs { items: Some(items) },
                    );
                    push_value!(fb::KernelTypes::OptionalTensorList, x.as_union_value())
                }
                ArgData::Other(s) => {
                    return Err(err(format!(
                        "{}: argument {k} ({s}) has a kind a program cannot hold",
                        n.name
                    )))
                }
            };
            args.push(index);
        }
        let args = b.create_vector(&args);
        let kc = fb::KernelCall::create(
            &mut b,
            &fb::KernelCallArgs {
                op_index,
                args: Some(args),
            },
        );
        instructions.push(fb::Instruction::create(
            &mut b,
            &fb::InstructionArgs {
                instr_args_type: fb::InstructionArguments::KernelCall,
                instr_args: Some(kc.as_union_value()),
            },
        ));
    }
    let outputs: Vec<i32> = g
        .outputs
        .iter()
        .map(|&v| tensor(&mut b, &mut values, v))
        .collect::<Result<_, _>>()?;

    let values = b.create_vector(&values);
    let inputs_v = b.create_vector(&inputs);
    let outputs_v = b.create_vector(&outputs);
    let instructions = b.create_vector(&instructions);
    let chain = fb::Chain::create(
        &mut b,
        &fb::ChainArgs {
            inputs: Some(inputs_v),
            outputs: Some(outputs_v),
            instructions: Some(instructions),
            stacktrace: None,
        },
    );
    let chains = b.create_vector(&[chain]);
    let ops: Vec<_> = operators
        .iter()
        .map(|(name, overload)| {
            let name = b.create_string(name);
            let overload = b.create_string(overload);
            fb::Operator::create(
                &mut b,
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
    let sizes = b.create_vector(&[0i64, lay.arena as i64]);
    let leaf = r#"{"type": null, "context": null, "children_spec": []}"#;
    let leaves = |n: usize| vec![leaf; n].join(", ");
    let inp = format!(
        r#"[1, {{"type": "builtins.tuple", "context": "null", "children_spec": [{{"type": "builtins.tuple", "context": "null", "children_spec": [{}]}}, {{"type": "builtins.dict", "context": "[]", "children_spec": []}}]}}]"#,
        leaves(inputs.len())
    );
    let out = if outputs.len() == 1 {
        format!("[1, {leaf}]")
    } else {
        format!(
            r#"[1, {{"type": "builtins.tuple", "context": "null", "children_spec": [{}]}}]"#,
            leaves(outputs.len())
        )
    };
    let inp = b.create_string(&inp);
    let out = b.create_string(&out);
    let meta = fb::ContainerMetadata::create(
        &mut b,
        &fb::ContainerMetadataArgs {
            encoded_inp_str: Some(inp),
            encoded_out_str: Some(out),
        },
    );
    let name = b.create_string(&g.method);
    let plan = fb::ExecutionPlan::create(
        &mut b,
        &fb::ExecutionPlanArgs {
            name: Some(name),
            container_meta_type: Some(meta),
            values: Some(values),
            inputs: Some(inputs_v),
            outputs: Some(outputs_v),
            chains: Some(chains),
            operators: Some(ops),
            delegates: Some(delegates),
            non_const_buffer_sizes: Some(sizes),
            non_const_buffer_device: None,
        },
    );
    let plans = b.create_vector(&[plan]);
    let empty_buffers: Vec<WIPOffset<fb::Buffer>> = Vec::new();
    let constant_buffer = b.create_vector(&empty_buffers);
    let empty_data: Vec<WIPOffset<fb::BackendDelegateInlineData>> = Vec::new();
    let delegate_data = b.create_vector(&empty_data);
    let seg_len = segment.len() as u64;
    let segments = [fb::DataSegment::create(
        &mut b,
        &fb::DataSegmentArgs {
            offset: 0,
            size: seg_len,
        },
    )];
    let segments = b.create_vector(&segments);
    let offsets = b.create_vector(&const_offsets);
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
    let flat = b.finished_data();
    Ok((with_header(flat, &segment)?, tensor_index))
}

/// The flatbuffer with the `eh00` extended header inserted after its identifier and the
/// segment data appended at the next 128-byte boundary.
fn with_header(flat: &[u8], segment: &[u8]) -> Result<Vec<u8>, LowerError> {
    const HEADER: usize = 32;
    if flat.len() < 8 {
        return Err(err(
            "the flatbuffer is shorter than its root offset and identifier",
        ));
    }
    let root = u32::from_le_bytes([flat[0], flat[1], flat[2], flat[3]]);
    let program_size = (flat.len() + HEADER) as u64;
    let base = align(program_size, SEGMENT_ALIGN);
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
