//! Every planner etscope has, side by side per arena, each result checked: ExecuTorch's own
//! greedy (reimplemented, [`super::executorch`]), best fit over offsets, the same with outputs
//! sharing memory in place with an input that dies at their operator, and the proven optimum of
//! both lifetime models where the search is small enough.
//!
//! In-place sharing: an operator the registry declares in-place safe on the device (its kernel
//! reads element `i` before it writes element `i`) may write its output over its first input
//! when that input dies at the operator, is not a graph input or output, lives in the same arena
//! and has the same element size, element count and dim order. The two then form one storage
//! item from the input's first use to the output's last, at one offset.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Serialize;

use super::best_fit::{align, best_fit, Item};
use super::{executorch, find_overlaps, reorder, Arena, Finding, MemoryPlan};
use crate::ir::{Graph, ValueId};

/// One tensor's place in an alternative plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TensorPlacement {
    pub value: ValueId,
    pub offset: u64,
    pub size: u64,
}

/// One planner's result for one arena.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AlgorithmPlan {
    /// One of [`ALGORITHMS`].
    pub name: &'static str,
    /// The arena size the placement needs.
    pub peak: u64,
    /// How it was found (the order that won, or "proven optimal").
    pub detail: String,
    /// Every planned tensor of the arena, views at their source's offset.
    pub tensors: Vec<TensorPlacement>,
    /// (dying input, output) pairs placed at one offset, in place.
    pub shares: Vec<(ValueId, ValueId)>,
    /// The chain order the plan assumes (new position → original instruction) when it is not
    /// the program's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<Vec<usize>>,
}

/// Every planner's result for one arena.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArenaAlternatives {
    pub memory_id: u32,
    /// The arena size the program declares.
    pub declared: u64,
    /// The highest byte the program's own placement reaches, rounded up to the alignment (what
    /// ExecuTorch's planner declares for it).
    pub executorch_peak: u64,
    /// The most bytes live at once: no placement without in-place sharing needs less.
    pub lower_bound: u64,
    /// The same with in-place shares counted once.
    pub lower_bound_in_place: u64,
    /// Whether the reimplemented ExecuTorch planner puts every tensor where the file does.
    pub executorch_reproduced: bool,
    pub algorithms: Vec<AlgorithmPlan>,
}

impl ArenaAlternatives {
    /// The smallest plan (the first listed among equals, so ExecuTorch's own when nothing beats it).
    pub fn best(&self) -> Option<&AlgorithmPlan> {
        self.algorithms.iter().min_by_key(|a| a.peak)
    }

    pub fn algorithm(&self, name: &str) -> Option<&AlgorithmPlan> {
        self.algorithms.iter().find(|a| a.name == name)
    }
}

/// Names accepted by `--algorithm`, in the order they are listed.
pub const ALGORITHMS: [&str; 6] = [
    "executorch",
    "best_fit",
    "in_place",
    "exact",
    "exact_in_place",
    "reorder",
];

/// The (input, output) pairs of `graph` that may share memory in place (see the module doc).
pub fn in_place_pairs(graph: &Graph, plan: &MemoryPlan) -> Vec<(ValueId, ValueId)> {
    pairs_at(graph, plan, |k| k)
}

/// [`in_place_pairs`] with the instruction at `position(k)` of the chain for the program's
/// instruction `k` (a reordered chain's lifetimes in `plan`).
fn pairs_at(
    graph: &Graph,
    plan: &MemoryPlan,
    position: impl Fn(usize) -> usize,
) -> Vec<(ValueId, ValueId)> {
    let mut tensor: HashMap<ValueId, (u32, &super::PlannedTensor)> = HashMap::new();
    for a in &plan.arenas {
        for t in &a.tensors {
            tensor.insert(t.value, (a.memory_id, t));
        }
    }
    let io: HashSet<ValueId> = graph.inputs.iter().chain(&graph.outputs).copied().collect();
    let mut pairs = Vec::new();
    for n in &graph.nodes {
        let Some(k) = n.instruction_id.map(&position) else {
            continue;
        };
        if !n.def().is_some_and(|d| d.traits.in_place_safe) || n.outputs.len() != 1 {
            continue;
        }
        let (Some(&x), Some(&y)) = (n.inputs.first(), n.outputs.first()) else {
            continue;
        };
        let (Some(&(ma, tx)), Some(&(mb, ty))) = (tensor.get(&x), tensor.get(&y)) else {
            continue;
        };
        let (vx, vy) = (&graph.values[x], &graph.values[y]);
        let same_layout = vx.dtype.and_then(|d| d.element_size())
            == vy.dtype.and_then(|d| d.element_size())
            && vx.shape.iter().product::<i64>() == vy.shape.iter().product::<i64>()
            && vx.dim_order == vy.dim_order
            && tx.size == ty.size;
        let dies_here = tx.last == k && ty.first == k && tx.aliases.is_empty();
        if ma == mb && same_layout && dies_here && !io.contains(&x) && !io.contains(&y) {
            pairs.push((x, y));
        }
    }
    pairs
}

/// Storage items of `arena`: one per tensor, or merged along `pairs`.
/// A tensor's lifetime on a time axis with the binding of the inputs as step 0 and instruction
/// `k` as step `k + 1`: every input is live from step 0, and one no instruction reads only
/// there (its bytes may hold what an instruction makes, as ExecuTorch's planner lets them).
fn span(t: &super::PlannedTensor) -> (usize, usize) {
    use super::TensorRole;
    let (first, last) = (t.first.saturating_add(1), t.last.saturating_add(1));
    match t.role {
        TensorRole::Input if t.is_unread_input() => (0, 0),
        TensorRole::Input => (0, last),
        _ => (first, last),
    }
}

fn items(arena: &Arena, pairs: &[(ValueId, ValueId)]) -> Vec<Item> {
    let index: HashMap<ValueId, usize> = arena
        .tensors
        .iter()
        .enumerate()
        .map(|(i, t)| (t.value, i))
        .collect();
    // union-find over tensor indices
    let mut parent: Vec<usize> = (0..arena.tensors.len()).collect();
    fn find(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    for (x, y) in pairs {
        if let (Some(&a), Some(&b)) = (index.get(x), index.get(y)) {
            let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
            parent[rb] = ra;
        }
    }
    let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..arena.tensors.len() {
        let r = find(&mut parent, i);
        groups.entry(r).or_default().push(i);
    }
    groups
        .into_values()
        .map(|members| {
            let ts = members.iter().map(|&i| &arena.tensors[i]);
            Item {
                size: ts.clone().map(|t| align(t.size)).max().unwrap_or(0),
                first: ts.clone().map(|t| span(t).0).min().unwrap_or(0),
                last: ts.map(|t| span(t).1).max().unwrap_or(0),
                members,
            }
        })
        .collect()
}

/// The most bytes `items` hold at once.
fn most_live(items: &[Item]) -> u64 {
    let mut events: Vec<(usize, bool, u64)> = Vec::with_capacity(items.len() * 2);
    for it in items {
        events.push((it.first, true, it.size));
        events.push((it.last + 1, false, it.size));
    }
    // at one step, ends before starts
    events.sort_unstable_by_key(|&(step, starts, _)| (step, starts));
    let (mut live, mut most) = (0u64, 0u64);
    for (_, starts, size) in events {
        if starts {
            live = live.saturating_add(size);
            most = most.max(live);
        } else {
            live = live.saturating_sub(size);
        }
    }
    most
}

fn placements(graph: &Graph, arena: &Arena, offset_of: &[u64]) -> Vec<TensorPlacement> {
    let mut out = Vec::new();
    for (t, &offset) in arena.tensors.iter().zip(offset_of) {
        out.push(TensorPlacement {
            value: t.value,
            offset,
            size: t.size,
        });
        for &a in &t.aliases {
            out.push(TensorPlacement {
                value: a,
                offset,
                size: graph.values.get(a).and_then(|v| v.nbytes).unwrap_or(t.size),
            });
        }
    }
    out
}

/// A placement of storage items as a plan of the arena's tensors.
struct Placed<'a> {
    items: &'a [Item],
    offsets: &'a [u64],
    peak: u64,
    shares: &'a [(ValueId, ValueId)],
}

fn from_items(
    graph: &Graph,
    arena: &Arena,
    name: &'static str,
    detail: String,
    p: Placed<'_>,
) -> AlgorithmPlan {
    let mut per_tensor = vec![0u64; arena.tensors.len()];
    for (it, &o) in p.items.iter().zip(p.offsets) {
        for &m in &it.members {
            per_tensor[m] = o;
        }
    }
    AlgorithmPlan {
        name,
        peak: p.peak,
        detail,
        tensors: placements(graph, arena, &per_tensor),
        shares: p.shares.to_vec(),
        order: None,
    }
}

/// Every planner on every arena of `plan` (derived from `graph`) that holds tensors.
pub fn alternatives(graph: &Graph, plan: &MemoryPlan) -> Vec<ArenaAlternatives> {
    let et = executorch::plan(graph, plan);
    let control_flow = graph
        .nodes
        .iter()
        .any(|n| n.kind == crate::ir::NodeKind::JumpFalse);
    let pairs = in_place_pairs(graph, plan);
    let mut out = Vec::new();
    for arena in plan.arenas.iter().filter(|a| !a.tensors.is_empty()) {
        let ids: HashSet<ValueId> = arena.tensors.iter().map(|t| t.value).collect();
        let shares: Vec<(ValueId, ValueId)> = pairs
            .iter()
            .copied()
            .filter(|(x, y)| ids.contains(x) && ids.contains(y))
            .collect();
        let mut algorithms = Vec::new();
        let mut reproduced = false;
        if let Some(p) = et.get(&arena.memory_id) {
            reproduced = arena
                .tensors
                .iter()
                .zip(&p.offsets)
                .all(|(t, &o)| t.offset == o);
            algorithms.push(AlgorithmPlan {
                name: "executorch",
                peak: p.size,
                detail: if control_flow {
                    // ExecuTorch plans the graph of each `cond` branch on its own
                    format!(
                        "{} shared objects; the greedy over the whole chain, not ExecuTorch's plan of a program with control flow",
                        p.shared_objects.len()
                    )
                } else {
                    format!("{} shared objects", p.shared_objects.len())
                },
                tensors: placements(graph, arena, &p.offsets),
                shares: Vec::new(),
                order: None,
            });
        }
        let plain = items(arena, &[]);
        let merged = items(arena, &shares);
        let lower_bound = most_live(&plain);
        let lower_bound_in_place = most_live(&merged);
        let (order, offsets, peak) = best_fit(&plain);
        algorithms.push(from_items(
            graph,
            arena,
            "best_fit",
            order.into(),
            Placed {
                items: &plain,
                offsets: &offsets,
                peak,
                shares: &[],
            },
        ));
        let (order_ip, offsets_ip, peak_ip) = best_fit(&merged);
        if !shares.is_empty() {
            algorithms.push(from_items(
                graph,
                arena,
                "in_place",
                format!(
                    "{order_ip}, {} in-place share{}",
                    shares.len(),
                    if shares.len() == 1 { "" } else { "s" }
                ),
                Placed {
                    items: &merged,
                    offsets: &offsets_ip,
                    peak: peak_ip,
                    shares: &shares,
                },
            ));
        }
        if let Some((o, p)) = super::exact::exact(&plain, (&offsets, peak), lower_bound) {
            algorithms.push(from_items(
                graph,
                arena,
                "exact",
                "proven optimal".into(),
                Placed {
                    items: &plain,
                    offsets: &o,
                    peak: p,
                    shares: &[],
                },
            ));
        }
        if !shares.is_empty() {
            if let Some((o, p)) =
                super::exact::exact(&merged, (&offsets_ip, peak_ip), lower_bound_in_place)
            {
                algorithms.push(from_items(
                    graph,
                    arena,
                    "exact_in_place",
                    "proven optimal with in-place shares".into(),
                    Placed {
                        items: &merged,
                        offsets: &o,
                        peak: p,
                        shares: &shares,
                    },
                ));
            }
        }
        out.push(ArenaAlternatives {
            memory_id: arena.memory_id,
            declared: arena.size,
            executorch_peak: align(arena.peak),
            lower_bound,
            lower_bound_in_place,
            executorch_reproduced: reproduced,
            algorithms,
        });
    }
    add_reordered(graph, plan, &mut out);
    out
}

/// Best fit with in-place shares on a memory-aware order of the chain, per arena, when some
/// order needs fewer bytes in all than every plan in the program's own order.
fn add_reordered(graph: &Graph, plan: &MemoryPlan, arenas: &mut [ArenaAlternatives]) {
    let current: u64 = arenas
        .iter()
        .map(|a| a.best().map_or(0, |b| b.peak))
        .fold(0u64, u64::saturating_add);
    let mut best: Option<(u64, Vec<AlgorithmPlan>)> = None;
    let Some(chain) = reorder::Chain::of(graph) else {
        return;
    };
    for rule in reorder::Rule::ALL {
        let Some(order) = chain.order(rule) else {
            return;
        };
        if order.iter().enumerate().all(|(i, &k)| i == k) {
            continue;
        }
        let relifed = reorder::relifed(plan, &order);
        let mut position = vec![0usize; order.len()];
        for (new, &old) in order.iter().enumerate() {
            position[old] = new;
        }
        let pairs = pairs_at(graph, &relifed, |k| position.get(k).copied().unwrap_or(k));
        let shares_of = |arena: &Arena| -> Vec<(ValueId, ValueId)> {
            let ids: HashSet<ValueId> = arena.tensors.iter().map(|t| t.value).collect();
            pairs
                .iter()
                .copied()
                .filter(|(x, y)| ids.contains(x) && ids.contains(y))
                .collect()
        };
        // an order whose bound is no better than what is already placed is not placed
        let bound: u64 = relifed
            .arenas
            .iter()
            .filter(|a| !a.tensors.is_empty())
            .map(|a| most_live(&items(a, &shares_of(a))))
            .fold(0u64, u64::saturating_add);
        if bound >= current {
            continue;
        }
        let mut plans = Vec::new();
        for a in arenas.iter() {
            let Some(arena) = relifed.arenas.iter().find(|x| x.memory_id == a.memory_id) else {
                return;
            };
            let shares = shares_of(arena);
            let merged = items(arena, &shares);
            let (how, offsets, peak) = best_fit(&merged);
            let mut p = from_items(
                graph,
                arena,
                "reorder",
                format!(
                    "{}; {how}, {} in-place shares",
                    rule.describe(),
                    shares.len()
                ),
                Placed {
                    items: &merged,
                    offsets: &offsets,
                    peak,
                    shares: &shares,
                },
            );
            p.order = Some(order.clone());
            plans.push(p);
        }
        let total: u64 = plans.iter().map(|p| p.peak).fold(0u64, u64::saturating_add);
        if total < current && best.as_ref().is_none_or(|(t, _)| total < *t) {
            best = Some((total, plans));
        }
    }
    if let Some((_, plans)) = best {
        for (a, p) in arenas.iter_mut().zip(plans) {
            a.algorithms.push(p);
        }
    }
}

/// `plan` with the lifetimes of the chain order `alg` assumes (itself when `alg` keeps
/// ExecuTorch's order).
fn under_order_of<'p>(plan: &'p MemoryPlan, alg: &AlgorithmPlan) -> Cow<'p, MemoryPlan> {
    match &alg.order {
        Some(order) => Cow::Owned(reorder::relifed(plan, order)),
        None => Cow::Borrowed(plan),
    }
}

/// What is wrong with `alg` as a placement of arena `memory_id` of `plan`, under the lifetimes
/// of the chain order it assumes.
pub fn check_in(plan: &MemoryPlan, memory_id: u32, alg: &AlgorithmPlan) -> Vec<Finding> {
    let plan = under_order_of(plan, alg);
    match plan.arenas.iter().find(|a| a.memory_id == memory_id) {
        Some(arena) => check(arena, alg),
        None => vec![Finding::UnknownArena {
            memory_id,
            value: 0,
            message: format!("the plan has no arena {memory_id}"),
        }],
    }
}

/// What is wrong with `alg` as a placement of `arena`: tensors live at once that share bytes
/// (other than its declared in-place shares at one offset), tensors past its peak.
pub fn check(arena: &Arena, alg: &AlgorithmPlan) -> Vec<Finding> {
    let at: HashMap<ValueId, u64> = alg.tensors.iter().map(|t| (t.value, t.offset)).collect();
    let mut moved = arena.clone();
    moved.size = alg.peak;
    let mut findings = Vec::new();
    for t in &mut moved.tensors {
        match at.get(&t.value) {
            Some(&o) => t.offset = o,
            None => findings.push(Finding::Unused {
                memory_id: arena.memory_id,
                value: t.value,
                size: t.size,
                message: format!("{} does not place value {}", alg.name, t.value),
            }),
        }
        if t.offset.saturating_add(t.size) > alg.peak {
            findings.push(Finding::OutOfArena {
                memory_id: arena.memory_id,
                value: t.value,
                end: t.offset.saturating_add(t.size),
                arena_size: alg.peak,
                message: format!("value {} ends past the {} arena", t.value, alg.name),
            });
        }
    }
    let shared: HashSet<(ValueId, ValueId)> = alg
        .shares
        .iter()
        .flat_map(|&(x, y)| [(x, y), (y, x)])
        .collect();
    let mut overlaps = Vec::new();
    find_overlaps(&moved, &mut overlaps);
    findings.extend(overlaps.into_iter().filter(|f| match f {
        Finding::Overlap { a, b, .. } => !(shared.contains(&(*a, *b)) && at.get(a) == at.get(b)),
        _ => true,
    }));
    findings
}

/// `program` (the `.pte` bytes) with plan `plan_index` re-placed: each listed arena's tensors
/// at the chosen plan's offsets and the arena declared at that plan's peak.
pub fn write_program(
    program: &[u8],
    plan_index: usize,
    chosen: &[(u32, &AlgorithmPlan)],
) -> crate::error::Result<Vec<u8>> {
    use crate::formats::pte::write_plan::{with_plan, NewPlacement};
    let mut placements = Vec::new();
    let mut sizes = BTreeMap::new();
    let order = chosen.iter().find_map(|(_, alg)| alg.order.as_deref());
    for &(memory_id, alg) in chosen {
        sizes.insert(memory_id, alg.peak);
        placements.extend(alg.tensors.iter().map(|t| NewPlacement {
            value: t.value,
            memory_id,
            offset: t.offset,
        }));
    }
    with_plan(program, plan_index, &placements, &sizes, order)
}

/// Arena `memory_id` of `plan` with its tensors where `alg` puts them, over the lifetimes of the
/// chain order `alg` assumes (time is then that order's instruction index): the same declared
/// size (so both draw on the same axes), `alg`'s peak.
pub fn moved(plan: &MemoryPlan, memory_id: u32, alg: &AlgorithmPlan) -> Option<Arena> {
    let plan = under_order_of(plan, alg);
    let arena = plan.arenas.iter().find(|a| a.memory_id == memory_id)?;
    let at: HashMap<ValueId, u64> = alg.tensors.iter().map(|t| (t.value, t.offset)).collect();
    let mut out = arena.clone();
    for t in &mut out.tensors {
        if let Some(&o) = at.get(&t.value) {
            t.offset = o;
        }
    }
    out.tensors.sort_by_key(|t| (t.offset, t.first, t.value));
    out.peak = alg.peak;
    Some(out)
}
