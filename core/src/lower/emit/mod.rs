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

use crate::formats::pte::write::{write_program, ProgramToWrite};
use crate::formats::pte::{
    Allocation, Chain, EValue, ExecutionPlan, Instruction, Operator, Tensor,
};
use crate::ir::{ArgData, Storage, ValueId};
use crate::tensor::TensorData;

mod plan;

use super::{LowerError, Module, Options};
use plan::{align, layout, TENSOR_ALIGN};

const PASS: &str = "emit";

pub(super) fn err(detail: impl Into<String>) -> LowerError {
    super::edit::fail(PASS, detail)
}

/// Writes `module` as a `.pte`, its tensors where ExecuTorch 1.5.1's planner puts them.
pub fn program(module: &Module, options: &Options) -> Result<Vec<u8>, LowerError> {
    let mut lay = layout(module)?;
    let (first, index) = serialize(module, &lay)?;
    // the program once written gives ExecuTorch's planner the graph it plans (values, calls,
    // scratch arguments in the order ExecuTorch creates them); its offsets replace etscope's
    let (offsets, arena) = executorch_offsets(&first, &index, &lay)?;
    lay.offsets = offsets;
    lay.arena = arena;
    let bytes = serialize(module, &lay)?.0;
    runs_once(&bytes, options)?;
    Ok(bytes)
}

/// The operations the check run of a written program may perform (a MobileNet's worth).
const CHECK_RUN_BUDGET: u64 = 1 << 24;

/// The written program run once on zero inputs, on the core it was lowered for: a program a
/// kernel would refuse or the device would fail on (an edge graph quantized for the
/// explicit-layout flow lowered with the default flow leaves convolutions reading contiguous
/// tensors) is refused here, naming the call and why, instead of being written. What the
/// host runtime cannot judge (an operator or argument form it does not implement, a delegate)
/// does not stop the writing: the program is ExecuTorch's.
fn runs_once(bytes: &[u8], options: &Options) -> Result<(), LowerError> {
    use crate::formats::pte::Program;
    use crate::kernels::RuntimeError;
    let program = Program::parse(bytes.to_vec())
        .map_err(|e| err(format!("the written program does not read back: {e}")))?;
    let device = crate::runtime::Device::for_program(&program, 0);
    let inputs = crate::board_image::zero_inputs(&program, 0);
    // a bounded run: a kernel's storage-order check comes at its call, long before a real
    // program's work; a run that exceeds the budget is not judged
    let run = crate::runtime::Runtime::new(&program, 0, device.target).and_then(|rt| {
        rt.run_with(
            &inputs,
            crate::runtime::RunOptions {
                work_budget: Some(CHECK_RUN_BUDGET),
                ..crate::runtime::RunOptions::default()
            },
        )
    }); // what the device refuses: a kernel's storage-order check, or a call that fails there
    let refused = match &run {
        Err(RuntimeError::BadArgs { detail, .. }) => detail.contains("dim_order"),
        Err(RuntimeError::DeviceFails { .. }) => true,
        _ => false,
    };
    match run {
        Err(e) if refused => {
            let layout = e.to_string().contains("dim_order");
            let hint = if layout && options.flow == super::Flow::Default {
                " (the default flow needs the model exported with channels-last inputs; an \
                 ETRecord quantized for the explicit-layout flow is lowered with `--flow explicit`)"
            } else {
                ""
            };
            Err(err(format!("the lowered program would not run: {e}{hint}")))
        }
        _ => Ok(()),
    }
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

/// Serializes `module` laid out as `lay` (the plan built here as plain types, written by
/// [`crate::formats::pte::write`]); also returns the `EValue` index of every tensor.
fn serialize(
    module: &Module,
    lay: &plan::Layout,
) -> Result<(Vec<u8>, HashMap<ValueId, i32>), LowerError> {
    let g = &lay.graph;
    let mut values: Vec<EValue> = Vec::new();
    let mut tensor_index: HashMap<ValueId, i32> = HashMap::new();
    // constant data, deduplicated: offsets[0] is reserved
    let mut segment: Vec<u8> = Vec::new();
    let mut const_offsets: Vec<u64> = vec![0];
    let mut const_index: HashMap<Vec<u8>, u32> = HashMap::new();

    let push = |values: &mut Vec<EValue>, v: EValue| -> i32 {
        values.push(v);
        (values.len() - 1) as i32
    };
    let mut tensor = |values: &mut Vec<EValue>, v: ValueId| -> Result<i32, LowerError> {
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
            let alloc = Allocation {
                memory_id: 1,
                offset,
            };
            (order, 0, Some(alloc))
        };
        let t = Tensor {
            scalar_type: dtype,
            storage_offset: 0,
            sizes,
            dim_order,
            requires_grad: false,
            data_buffer_idx,
            allocation,
            layout: 0,
            shape_dynamism: 0,
            extra: None,
            // derived by the reader; not written
            numel: 0,
            nbytes: 0,
        };
        values.push(EValue::Tensor(t));
        let i = (values.len() - 1) as i32;
        tensor_index.insert(v, i);
        Ok(i)
    };

    let inputs: Vec<i32> = g
        .inputs
        .iter()
        .map(|&v| tensor(&mut values, v))
        .collect::<Result<_, _>>()?;
    let mut operators: Vec<Operator> = Vec::new();
    let mut instructions = Vec::new();
    for c in &lay.calls {
        let n = &g.nodes[c.node];
        let op_index = match operators
            .iter()
            .position(|o| o.name == n.op && o.overload == n.overload)
        {
            Some(i) => i,
            None => {
                operators.push(Operator {
                    name: n.op.clone(),
                    overload: n.overload.clone(),
                });
                operators.len() - 1
            }
        };
        let mut args = Vec::with_capacity(n.args.len());
        let last = n.args.len().saturating_sub(1);
        for (k, a) in n.args.iter().enumerate() {
            // a multi-output call returns its outs as one list
            if k == last && n.outputs.len() > 1 {
                let items: Vec<i32> = n
                    .outputs
                    .iter()
                    .map(|&o| tensor(&mut values, o))
                    .collect::<Result<_, _>>()?;
                args.push(push(&mut values, EValue::TensorList(items)) as usize);
                continue;
            }
            let index = match &a.data {
                ArgData::Tensor(v) => tensor(&mut values, *v)?,
                ArgData::None => push(&mut values, EValue::Null),
                ArgData::Int(i) => push(&mut values, EValue::Int(*i)),
                ArgData::ScalarType(t) => push(&mut values, EValue::Int(i64::from(t.code()))),
                ArgData::Float(f) => push(&mut values, EValue::Double(*f)),
                ArgData::Bool(v) => push(&mut values, EValue::Bool(*v)),
                ArgData::Str(s) => push(&mut values, EValue::String(s.clone())),
                ArgData::Ints(items) => {
                    let mut idx = Vec::with_capacity(items.len());
                    for i in items {
                        let i = i.ok_or_else(|| {
                            err(format!("{}: a symbolic size cannot be written", n.name))
                        })?;
                        idx.push(i64::from(push(&mut values, EValue::Int(i))));
                    }
                    push(&mut values, EValue::IntList(idx))
                }
                ArgData::Floats(items) => push(&mut values, EValue::DoubleList(items.clone())),
                ArgData::Bools(items) => push(&mut values, EValue::BoolList(items.clone())),
                ArgData::Tensors(vs) => {
                    let items: Vec<i32> = vs
                        .iter()
                        .map(|&v| tensor(&mut values, v))
                        .collect::<Result<_, _>>()?;
                    push(&mut values, EValue::TensorList(items))
                }
                ArgData::OptionalTensors(vs) => {
                    let items: Vec<i32> = vs
                        .iter()
                        .map(|v| v.map_or(Ok(-1), |v| tensor(&mut values, v)))
                        .collect::<Result<_, _>>()?;
                    push(&mut values, EValue::OptionalTensorList(items))
                }
                ArgData::Other(s) => {
                    return Err(err(format!(
                        "{}: argument {k} ({s}) has a kind a program cannot hold",
                        n.name
                    )))
                }
            };
            args.push(index as usize);
        }
        instructions.push(Instruction::KernelCall { op_index, args });
    }
    let outputs: Vec<i32> = g
        .outputs
        .iter()
        .map(|&v| tensor(&mut values, v))
        .collect::<Result<_, _>>()?;
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
    let as_usize = |xs: &[i32]| xs.iter().map(|&x| x as usize).collect::<Vec<usize>>();
    let plan = ExecutionPlan {
        name: g.method.clone(),
        encoded_inp_str: Some(inp),
        encoded_out_str: Some(out),
        values,
        inputs: as_usize(&inputs),
        outputs: as_usize(&outputs),
        chains: vec![Chain {
            inputs: as_usize(&inputs),
            outputs: as_usize(&outputs),
            instructions,
            stacktrace: Vec::new(),
        }],
        operators,
        delegates: Vec::new(),
        non_const_buffer_sizes: vec![0, lay.arena as i64],
        non_const_buffer_devices: Vec::new(),
    };
    let bytes = write_program(&ProgramToWrite {
        plans: std::slice::from_ref(&plan),
        constant_data: &segment,
        constant_offsets: &const_offsets,
    })
    .map_err(|e| err(e.to_string()))?;
    Ok((bytes, tensor_index))
}
