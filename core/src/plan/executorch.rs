//! ExecuTorch 1.5.1's default memory planner (`exir/memory_planning.py`: `greedy` through
//! `MemoryPlanningAlgorithmSuite`), reimplemented over the lifetimes of a derived plan, so that
//! etscope can say where ExecuTorch would put every tensor of any graph and prove that a `.pte`
//! was planned that way.
//!
//! What ExecuTorch does, and how each step maps onto etscope's lifetimes:
//! - **which tensors**: every non-constant tensor spec, deduplicated, in the order its node comes
//!   in the graph: user inputs (placeholders) first, then per operator its scratch `alloc` nodes
//!   (the Cortex-M backend inserts them before the call), then its out `alloc` nodes (or a
//!   delegate's outputs); views (`memory.view`) share their base's spec. [`creation_order`] gives
//!   that order from a program's instructions.
//! - **lifetimes** are node indices; an `alloc` sits right before its call, so two specs overlap
//!   in ExecuTorch's node numbering exactly when their instruction ranges (`first..=last` of
//!   [`super::PlannedTensor`]) intersect: the relation is the same, only the numbers differ.
//! - **order**: specs inserted with `bisect.insort` by `allocated_memory` (stable: equal sizes
//!   keep creation order), then reversed: largest first, equal sizes latest-created first.
//! - **placement** (`pick_shared_obj`): the first shared object none of whose tensors lives at
//!   the same time takes the spec at offset 0; else the first shared object where the spec fits
//!   above the highest byte of the tensors it overlaps in time (when that is above 0); else a new
//!   shared object of the spec's size. Objects are then laid end to end in creation order.
//! - **sizes** are rounded up to the alignment (16); the arena is the objects' total plus 64
//!   bytes when the graph holds an XNNPACK delegate.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::{Arena, MemoryPlan, TensorRole};
use crate::ir::{Graph, NodeKind, ValueId};

/// ExecuTorch's default alignment of planned tensors (`exir/memory_planning.py`'s `ALIGNMENT`
/// is passed as 16 by `MemoryPlanningPass`).
pub const ALIGNMENT: u64 = 16;

/// Padding ExecuTorch adds to every arena when the graph holds an XNNPACK delegate.
pub const XNNPACK_PADDING: u64 = 64;

/// Where ExecuTorch's node order first creates a spec: placeholders first (mutable buffers, then
/// user inputs by position), then per instruction its scratch arguments (by argument position),
/// then its outputs.
pub type Creation = (usize, u8, usize);

/// The order in which ExecuTorch's graph creates every planned storage of `graph`, keyed by the
/// storage's root value (views resolved to their source).
pub fn creation_order(graph: &Graph) -> HashMap<ValueId, Creation> {
    let root = |v: ValueId| super::root_of(graph, v);
    let mut order: HashMap<ValueId, Creation> = HashMap::new();
    // mutable buffers are placeholders, before the user inputs
    for v in &graph.values {
        if super::kept_between_calls(graph, v.id) {
            order.entry(root(v.id)).or_insert((0, 0, v.id));
        }
    }
    for (i, &v) in graph.inputs.iter().enumerate() {
        order.entry(root(v)).or_insert((0, 1, i));
    }
    for n in &graph.nodes {
        let Some(j) = n.instruction_id else { continue };
        if !matches!(n.kind, NodeKind::Operator | NodeKind::Delegate) {
            continue;
        }
        for (k, &v) in n.inputs.iter().enumerate() {
            // read before anything writes it: a scratch buffer allocated for this call
            if graph.values.get(v).is_some_and(|x| x.producer.is_none()) {
                order.entry(root(v)).or_insert((j, 2, k));
            }
        }
        for (k, &v) in n.outputs.iter().enumerate() {
            order.entry(root(v)).or_insert((j, 3, k));
        }
    }
    order
}

/// One tensor as the greedy sees it.
#[derive(Debug, Clone, Copy)]
struct Spec {
    /// Index into the arena's tensors.
    index: usize,
    size: u64,
    first: usize,
    last: usize,
}

/// A shared object: a slot of the arena that tensors not live at once take in turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SharedObject {
    pub offset: u64,
    pub size: u64,
    /// (tensor index in the arena, offset inside the object); a write-back spec that has no
    /// tensor of the program's is left out
    pub allocations: Vec<(usize, u64)>,
}

/// ExecuTorch's placement of one arena.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArenaPlan {
    pub memory_id: u32,
    /// The arena size ExecuTorch declares for it.
    pub size: u64,
    /// Per tensor of the arena (same order as [`Arena::tensors`]): its offset.
    pub offsets: Vec<u64>,
    pub shared_objects: Vec<SharedObject>,
}

fn align(x: u64, a: u64) -> u64 {
    x.div_ceil(a).saturating_mul(a)
}

fn overlaps(a: &Spec, b: &Spec) -> bool {
    !(a.last < b.first || a.first > b.last)
}

/// `pick_shared_obj`, returning the object's index and the offset inside it.
fn pick(objects: &mut Vec<(u64, Vec<(Spec, u64)>)>, spec: Spec) -> (usize, u64) {
    if let Some(i) = objects
        .iter()
        .position(|(_, allocs)| allocs.iter().all(|(s, _)| !overlaps(s, &spec)))
    {
        objects[i].1.push((spec, 0));
        return (i, 0);
    }
    for (i, (size, allocs)) in objects.iter_mut().enumerate() {
        let top = allocs
            .iter()
            .filter(|(s, _)| overlaps(s, &spec))
            .map(|(s, o)| o.saturating_add(s.size))
            .max()
            .unwrap_or(0);
        if top > 0 && top.saturating_add(spec.size) <= *size {
            allocs.push((spec, top));
            return (i, top);
        }
    }
    objects.push((spec.size, vec![(spec, 0)]));
    (objects.len() - 1, 0)
}

/// ExecuTorch's greedy over one arena's tensors, in `creation` order.
///
/// `steps` is the method's instruction count: ExecuTorch's graph ends with an output node after
/// the last instruction, where the outputs and the mutable buffers are still alive, and where
/// each mutated buffer's write-back leaves one more spec of the buffer's size (the output node
/// keeps the spec the in-place copy had before it was aliased onto the buffer): it is placed
/// like any other, and takes no offset of the program's.
///
/// Lifetimes are counted in ExecuTorch's node numbering: the placeholders (mutable buffers,
/// then user inputs) first, the instructions after them; a placeholder no instruction reads
/// ([`super::PlannedTensor::is_unread_input`]) lives only among the placeholders, so it shares
/// with what the instructions make but not with another input.
pub fn plan_arena(
    arena: &Arena,
    creation: &HashMap<ValueId, Creation>,
    padding: u64,
    steps: usize,
) -> ArenaPlan {
    let t = &arena.tensors;
    let is_placeholder = |c: &Creation| c.0 == 0 && c.1 <= 1;
    let mut placeholders: Vec<Creation> =
        creation.values().copied().filter(is_placeholder).collect();
    placeholders.sort_unstable();
    let shift = placeholders.len();
    let steps = steps.saturating_add(shift);
    let mut specs: Vec<(Creation, Spec)> = t
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let c = creation
                .get(&p.value)
                .copied()
                .unwrap_or((p.first, 4, p.value));
            let at_output = matches!(p.role, TensorRole::Output | TensorRole::State);
            let mut first = p.first.saturating_add(shift);
            let mut last = p.last.saturating_add(shift);
            if is_placeholder(&c) {
                // every placeholder is live while the inputs are bound; one no instruction
                // reads dies there, before the first instruction's tensors
                first = 0;
                if p.is_unread_input() && !at_output {
                    last = shift.saturating_sub(1);
                }
            }
            (
                c,
                Spec {
                    index: i,
                    size: align(p.size, ALIGNMENT),
                    first,
                    last: if at_output { steps.max(last) } else { last },
                },
            )
        })
        .collect();
    for (k, p) in t.iter().filter(|p| p.role == TensorRole::State).enumerate() {
        specs.push((
            (steps, 5, k),
            Spec {
                index: usize::MAX,
                size: align(p.size, ALIGNMENT),
                first: steps,
                last: steps,
            },
        ));
    }
    // insort by size (stable) then reverse: size descending, equal sizes latest-created first
    specs.sort_by(|(ca, a), (cb, b)| b.size.cmp(&a.size).then(cb.cmp(ca)));
    let mut objects: Vec<(u64, Vec<(Spec, u64)>)> = Vec::new();
    for &(_, spec) in &specs {
        pick(&mut objects, spec);
    }
    let mut offsets = vec![0u64; t.len()];
    let mut shared_objects = Vec::with_capacity(objects.len());
    let mut total = 0u64;
    for (size, allocs) in objects {
        for &(s, inner) in &allocs {
            if let Some(o) = offsets.get_mut(s.index) {
                *o = total.saturating_add(inner);
            }
        }
        shared_objects.push(SharedObject {
            offset: total,
            size,
            allocations: allocs
                .iter()
                .filter(|(s, _)| s.index < t.len())
                .map(|&(s, o)| (s.index, o))
                .collect(),
        });
        total = total.saturating_add(size);
    }
    ArenaPlan {
        memory_id: arena.memory_id,
        size: total.saturating_add(padding),
        offsets,
        shared_objects,
    }
}

/// ExecuTorch's plan of every arena of `plan` (derived from `graph`), keyed by memory id.
pub fn plan(graph: &Graph, plan: &MemoryPlan) -> BTreeMap<u32, ArenaPlan> {
    let creation = creation_order(graph);
    let padding = if graph
        .nodes
        .iter()
        .any(|n| n.kind == NodeKind::Delegate && n.op.to_ascii_lowercase().contains("xnnpack"))
    {
        XNNPACK_PADDING
    } else {
        0
    };
    plan.arenas
        .iter()
        .filter(|a| !a.tensors.is_empty())
        .map(|a| {
            (
                a.memory_id,
                plan_arena(a, &creation, padding, plan.instruction_count),
            )
        })
        .collect()
}
