//! Whether an ETDump or ETRecord belongs to a program. Neither file names its program, so the
//! check uses what both sides say about the same instructions: an ETDump's operator events name
//! the kernel they timed (`native_call_<op>`), `OPERATOR_CALL` and `DELEGATE_CALL` events say
//! which kind of instruction ran, debug events carry the output's type and size; an ETRecord's
//! `debug_handle_map` and `delegate_map` list the program's instructions and which of them are
//! delegate calls, and its stages give the model's input shapes. One contradiction is enough to
//! refuse, with the reason.

use thiserror::Error;

use crate::formats::etdump::{DebugValue, ETDump, Event};
use crate::formats::etrecord::ETRecord;
use crate::formats::export_json::InputKind;
use crate::formats::pte::{InstructionCall, Program};
use crate::ir::call::elements_of;
use crate::ir::from_export::split_target;
use crate::ops::base_name;
use crate::ScalarType;

/// A file that does not belong to the program it was given with.
#[derive(Debug, Error)]
#[error("{0}")]
pub struct NotThisProgram(pub String);

/// What the checks read of one method: its name, what each main-chain instruction calls, the
/// output (dtype, sizes) of each kernel call and the sizes of each input tensor.
struct Method {
    name: String,
    calls: Vec<InstructionCall>,
    outputs: Vec<Option<(ScalarType, Vec<i64>)>>,
    inputs: Vec<Option<Vec<i64>>>,
}

fn method_of(program: &Program, plan_index: usize) -> Result<Method, NotThisProgram> {
    let no_method = || NotThisProgram(format!("the program has no method {plan_index}"));
    let name = program
        .method_names()
        .get(plan_index)
        .map(|n| n.to_string())
        .ok_or_else(no_method)?;
    let graph = crate::ir::from_pte::graph_from_plan(program, plan_index).ok_or_else(no_method)?;
    let calls = program.instruction_calls(plan_index);
    let outputs = (0..calls.len())
        .map(|iid| {
            let node = graph.node_for_instruction(iid)?;
            if !matches!(calls.get(iid), Some(InstructionCall::Kernel(_))) {
                return None;
            }
            let out = crate::ir::call::CallView::new(&graph, node).out()?;
            Some((out.dtype?, out.shape.clone()))
        })
        .collect();
    let inputs = graph
        .inputs
        .iter()
        .map(|&v| {
            graph
                .values
                .get(v)
                .filter(|t| t.is_tensor())
                .map(|t| t.shape.clone())
        })
        .collect();
    Ok(Method {
        name,
        calls,
        outputs,
        inputs,
    })
}

impl Method {
    /// The operator a kernel-call instruction calls, without its namespace (`convolution.out`).
    fn short_op(&self, id: usize) -> Option<String> {
        match self.calls.get(id)? {
            InstructionCall::Kernel(q) => Some(q.rsplit("::").next().unwrap_or(q).to_string()),
            _ => None,
        }
    }

    fn is_delegate(&self, id: usize) -> bool {
        matches!(self.calls.get(id), Some(InstructionCall::Delegate(_)))
    }
}

/// Checks that `dump` was recorded running plan `plan_index` of `program`.
pub fn check_etdump(
    program: &Program,
    plan_index: usize,
    dump: &ETDump,
) -> Result<(), NotThisProgram> {
    etdump_fits(&method_of(program, plan_index)?, dump)
}

/// Checks that `rec` was made for plan `plan_index` of `program`.
pub fn check_etrecord(
    program: &Program,
    plan_index: usize,
    rec: &ETRecord,
) -> Result<(), NotThisProgram> {
    etrecord_fits(&method_of(program, plan_index)?, rec)
}

fn etdump_fits(plan: &Method, dump: &ETDump) -> Result<(), NotThisProgram> {
    let n = plan.calls.len();
    let fail = |detail: String| {
        Err(NotThisProgram(format!(
            "{detail} (ETDump of another program?)"
        )))
    };
    for run in &dump.runs {
        for ev in &run.events {
            match ev {
                Event::Profile(p) if p.chain_index == 0 => {
                    let id = p.instruction_id.max(0) as usize;
                    if p.instruction_id < 0 || id >= n {
                        return fail(format!(
                            "event {:?} names instruction {}, the program has {n}",
                            p.name, p.instruction_id
                        ));
                    }
                    let delegate_event = p.delegate_debug_id_int >= 0
                        || p.delegate_debug_id_str.is_some()
                        || p.name == "DELEGATE_CALL";
                    let is_delegate = plan.is_delegate(id);
                    if delegate_event && !is_delegate {
                        return fail(format!(
                            "a delegate event at instruction {id}, which calls {} in the program",
                            plan.short_op(id).unwrap_or_else(|| "no delegate".into())
                        ));
                    }
                    if p.name == "OPERATOR_CALL" && is_delegate {
                        return fail(format!(
                            "an operator call at instruction {id}, a delegate call in the program"
                        ));
                    }
                    if let Some(op) = p.name.strip_prefix("native_call_") {
                        match plan.short_op(id) {
                            Some(have) if have == op => {}
                            have => {
                                return fail(format!(
                                    "instruction {id} ran {op}, the program calls {}",
                                    have.unwrap_or_else(|| "a delegate".into())
                                ))
                            }
                        }
                    }
                }
                Event::Debug(d) if d.chain_index == 0 && d.delegate_debug_id_int < 0 => {
                    let id = d.instruction_id.max(0) as usize;
                    if d.instruction_id < 0 || id >= n {
                        return fail(format!(
                            "an intermediate output of instruction {}, the program has {n}",
                            d.instruction_id
                        ));
                    }
                    check_debug_output(plan, id, &d.value).map_err(|e| {
                        NotThisProgram(format!("{} (ETDump of another program?)", e.0))
                    })?;
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// A captured kernel output must have the type and element count of the instruction's output.
fn check_debug_output(plan: &Method, id: usize, value: &DebugValue) -> Result<(), NotThisProgram> {
    let DebugValue::Tensor(t) = value else {
        return Ok(());
    };
    let Some(Some((dtype, want))) = plan.outputs.get(id) else {
        return Ok(());
    };
    let numel = |s: &[i64]| s.iter().try_fold(1i64, |a, &d| a.checked_mul(d));
    if t.scalar_type != *dtype || numel(&t.sizes) != numel(want) {
        return Err(NotThisProgram(format!(
            "instruction {id} captured {}{:?}, the program's output is {}{want:?}",
            t.scalar_type.short_name(),
            t.sizes,
            dtype.short_name()
        )));
    }
    Ok(())
}

fn etrecord_fits(plan: &Method, rec: &ETRecord) -> Result<(), NotThisProgram> {
    let n = plan.calls.len();
    let fail = |detail: String| {
        Err(NotThisProgram(format!(
            "{detail} (ETRecord of another program?)"
        )))
    };
    let delegates: Vec<usize> = rec
        .delegate_map
        .get(&plan.name)
        .map(|v| v.iter().map(|d| d.instruction_id).collect())
        .unwrap_or_default();
    if let Some(map) = rec.debug_handle_map.get(&plan.name) {
        for &id in map.keys() {
            if id >= n {
                return fail(format!(
                    "its debug_handle_map names instruction {id}, the program has {n}"
                ));
            }
            let is_delegate = plan.is_delegate(id);
            if delegates.contains(&id) != is_delegate {
                return fail(format!(
                    "instruction {id} is {} in the program, {} in the ETRecord",
                    if is_delegate {
                        "a delegate call"
                    } else {
                        "a kernel call"
                    },
                    if is_delegate {
                        "not a delegate"
                    } else {
                        "a delegate"
                    }
                ));
            }
        }
    } else if !rec.debug_handle_map.is_empty() {
        return fail(format!("it has no method {:?}", plan.name));
    }
    // what each instruction calls against the operator of the ETRecord's nodes with its debug
    // handles: an ETRecord of another model of the same input names other operators
    let edge = rec.stages.iter().rev().find(|s| {
        mapped_stage(
            &s.name,
            s.graph.nodes.iter().map(|n| n.debug_handles.as_slice()),
        )
    });
    if let (Some(map), Some(stage)) = (rec.debug_handle_map.get(&plan.name), edge) {
        let g = &stage.graph;
        let nodes: Vec<StageNode<'_>> = g
            .nodes
            .iter()
            .map(|n| StageNode {
                handles: n.debug_handles.as_slice(),
                op: split_target(&n.target).0,
                elements: n
                    .outputs
                    .first()
                    .and_then(|o| g.tensors.get(o))
                    .and_then(|t| elements_of(&t.sizes)),
            })
            .collect();
        if let Some(why) = operators_disagree(plan, map, &nodes, &stage.name) {
            return fail(why);
        }
    }
    // the model's inputs: the edge stage's user inputs against the plan's input tensors
    let stage = rec
        .stages
        .iter()
        .find(|s| s.name == format!("edge_dialect_exported_program/{}", plan.name))
        .or_else(|| rec.stages.iter().find(|s| s.name.starts_with("edge")));
    if let Some(stage) = stage {
        let g = &stage.graph;
        let user: Vec<Option<Vec<i64>>> = g
            .inputs
            .iter()
            .filter(|(_, k)| *k == InputKind::UserInput)
            .map(|(name, _)| g.tensors.get(name).map(|t| t.sizes.clone()))
            .collect();
        let program = &plan.inputs;
        if !user.is_empty() && user.len() == program.len() {
            for (k, (a, b)) in user.iter().zip(program).enumerate() {
                if let (Some(a), Some(b)) = (a, b) {
                    if a != b {
                        return fail(format!(
                            "the model's input {k} is {a:?}, the program's is {b:?}"
                        ));
                    }
                }
            }
        } else if !user.is_empty() && !program.is_empty() {
            return fail(format!(
                "the model takes {} inputs, the program {}",
                user.len(),
                program.len()
            ));
        }
    }
    Ok(())
}

/// A node of an ETRecord stage as the operator check reads it: its debug handles, its operator
/// (`namespace::name`) and its first output's element count (`None`: symbolic or not known).
struct StageNode<'a> {
    handles: &'a [u32],
    op: String,
    elements: Option<usize>,
}

/// The stage the operator check reads: an edge stage whose nodes carry debug handles (the
/// last such one, nearest the program).
fn mapped_stage<'a>(name: &str, mut handles: impl Iterator<Item = &'a [u32]>) -> bool {
    name.starts_with("edge") && handles.any(|h| !h.is_empty())
}

/// Why the program's kernel calls and the ETRecord's nodes for the same debug handles name
/// different operators, when most of them do (a stage's op may be renamed on the way to the
/// program — `view_copy` to `et_view`, a clone to its dim-order form — so one difference is
/// not enough); `None` when they agree or cannot be compared.
fn operators_disagree(
    plan: &Method,
    map: &std::collections::BTreeMap<usize, Vec<u32>>,
    nodes: &[StageNode<'_>],
    stage: &str,
) -> Option<String> {
    let mut by_handle: std::collections::BTreeMap<u32, Vec<(&str, Option<usize>)>> =
        std::collections::BTreeMap::new();
    for n in nodes {
        for &h in n.handles {
            by_handle
                .entry(h)
                .or_default()
                .push((base_name(&n.op), n.elements));
        }
    }
    let (mut compared, mut differ) = (0usize, Vec::new());
    for (&id, handles) in map {
        let Some(op) = plan.short_op(id) else {
            continue;
        };
        let op = base_name(&op).to_string();
        let want = plan
            .outputs
            .get(id)
            .and_then(|o| o.as_ref())
            .and_then(|(_, sizes)| elements_of(sizes));
        let named: Vec<(&str, Option<usize>)> = handles
            .iter()
            .filter_map(|h| by_handle.get(h))
            .flatten()
            .copied()
            .collect();
        if named.is_empty() {
            continue;
        }
        compared += 1;
        let agrees = named
            .iter()
            .any(|&(n, k)| n == op && (k.is_none() || want.is_none() || k == want));
        if !agrees {
            let (n, k) = named
                .iter()
                .find(|(n, _)| *n == op)
                .or(named.first())
                .copied()
                .unwrap_or(("", None));
            let size = |k: Option<usize>| k.map_or(String::new(), |k| format!(" of {k} elements"));
            differ.push(format!(
                "instruction {id} calls {op}{}, its node in the ETRecord's {stage} is {n}{}",
                size(want),
                size(k)
            ));
        }
    }
    let first = differ.first()?;
    (compared >= 3 && differ.len() * 2 > compared).then(|| {
        format!(
            "{} of the {compared} kernel calls it maps name another operator or output size than the program's: {first}",
            differ.len()
        )
    })
}

/// [`check_etrecord`]'s operator check over stage graphs built elsewhere (an ETRecord read with
/// its graphs released as each stage was built): `stages` are (entry name, IR graph).
pub fn check_etrecord_operators<'a>(
    program: &Program,
    plan_index: usize,
    rec: &ETRecord,
    stages: impl DoubleEndedIterator<Item = (&'a str, &'a crate::ir::Graph)>,
) -> Result<(), NotThisProgram> {
    let plan = method_of(program, plan_index)?;
    let Some((stage, g)) = stages
        .rev()
        .find(|(name, g)| mapped_stage(name, g.nodes.iter().map(|n| n.debug_handles.as_slice())))
    else {
        return Ok(());
    };
    let nodes: Vec<StageNode<'_>> = g
        .nodes
        .iter()
        .map(|n| StageNode {
            handles: n.debug_handles.as_slice(),
            op: n.op.clone(),
            elements: n
                .outputs
                .first()
                .and_then(|&v| g.values.get(v))
                .and_then(|v| v.elements()),
        })
        .collect();
    match rec
        .debug_handle_map
        .get(&plan.name)
        .and_then(|map| operators_disagree(&plan, map, &nodes, stage))
    {
        Some(why) => Err(NotThisProgram(format!(
            "{why} (ETRecord of another program?)"
        ))),
        None => Ok(()),
    }
}

/// A program's identity as the board and the capture carry it: FNV-1a (64 bit) over the `.pte`
/// file's bytes. Firmware computes it over the program it runs (`etscope_program_id` in the C
/// library); the host refuses a capture whose identity is not the program's.
pub fn program_fingerprint(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
