//! Memory-plan derivation: every planned tensor of a `.pte` plan as a box of address × lifetime
//! per arena, with each arena's declared size, peak and lower bound, and findings (overlapping
//! live tensors, tensors past their arena, unknown arenas).
//!
//! Time is the chain-0 instruction index. A tensor lives from the instruction that writes it
//! (inputs: from 0) to the last instruction that reads it or any view of it (outputs: to the end),
//! both inclusive. `peak` is the highest byte any live tensor reaches at any time; `lower_bound`
//! is the largest sum of live sizes at any time, which no placement can beat. So
//! `lower_bound <= peak <= size` for every sound plan.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::dtype::ScalarType;
use crate::ir::{Graph, Storage, ValueId};

/// What role a planned tensor plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TensorRole {
    Input,
    Output,
    Intermediate,
    /// Read by instructions but never written by one (e.g. Cortex-M scratch buffers).
    Scratch,
}

/// One planned tensor: an address range over an instruction range.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedTensor {
    /// Value index in the plan.
    pub value: ValueId,
    pub offset: u64,
    pub size: u64,
    /// First instruction during which the tensor is live.
    pub first: usize,
    /// Last instruction during which the tensor is live.
    pub last: usize,
    pub role: TensorRole,
    pub dtype: Option<ScalarType>,
    pub shape: Vec<i64>,
    /// Instruction that writes it.
    pub producer: Option<usize>,
    /// Instructions that read it (or one of its views), ascending.
    pub consumers: Vec<usize>,
    /// Views sharing this tensor's storage.
    pub aliases: Vec<ValueId>,
}

/// One memory arena (`memory_id`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Arena {
    pub memory_id: u32,
    /// Declared size (`non_const_buffer_sizes[memory_id]`).
    pub size: u64,
    pub peak: u64,
    pub lower_bound: u64,
    /// Sum of live tensor bytes at each instruction.
    pub live_bytes: Vec<u64>,
    /// Sorted by offset, then first use.
    pub tensors: Vec<PlannedTensor>,
}

impl Arena {
    /// Bytes the plan reserves above what any placement needs.
    pub fn waste(&self) -> u64 {
        self.size.saturating_sub(self.lower_bound)
    }
}

/// Something wrong or notable in a plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Finding {
    /// Two tensors live at the same time share bytes.
    Overlap {
        memory_id: u32,
        a: ValueId,
        b: ValueId,
        from_instruction: usize,
        to_instruction: usize,
        bytes: u64,
        message: String,
    },
    /// A tensor ends past its arena's declared size.
    OutOfArena {
        memory_id: u32,
        value: ValueId,
        end: u64,
        arena_size: u64,
        message: String,
    },
    /// A tensor names an arena the plan does not declare.
    UnknownArena {
        memory_id: u32,
        value: ValueId,
        message: String,
    },
    /// A planned tensor nothing reads or writes.
    Unused {
        memory_id: u32,
        value: ValueId,
        size: u64,
        message: String,
    },
}

/// The derived memory plan of one execution plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryPlan {
    pub instruction_count: usize,
    pub arenas: Vec<Arena>,
    pub findings: Vec<Finding>,
}

/// Derives the memory plan from a `.pte` graph (see [`crate::ir::from_pte`]).
pub fn derive(graph: &Graph) -> MemoryPlan {
    let n = graph.instruction_count;
    let end = n.saturating_sub(1);
    let instr = |node: usize| graph.nodes.get(node).and_then(|x| x.instruction_id);
    let mut aliases: BTreeMap<ValueId, Vec<ValueId>> = BTreeMap::new();
    for v in &graph.values {
        if let Some(src) = v.alias_of {
            aliases.entry(root_of(graph, src)).or_default().push(v.id);
        }
    }
    let is_output = |v: ValueId| graph.outputs.contains(&v);
    let is_input = |v: ValueId| graph.inputs.contains(&v);
    let mut arenas: Vec<Arena> = graph
        .arenas
        .iter()
        .enumerate()
        .map(|(i, &size)| Arena {
            memory_id: i as u32 + 1,
            size,
            peak: 0,
            lower_bound: 0,
            live_bytes: Vec::new(),
            tensors: Vec::new(),
        })
        .collect();
    let mut findings = Vec::new();
    for v in &graph.values {
        if v.storage != Storage::Planned || v.alias_of.is_some() {
            continue;
        }
        let Some(p) = v.placement else { continue };
        let group: Vec<ValueId> = std::iter::once(v.id)
            .chain(aliases.get(&v.id).into_iter().flatten().copied())
            .collect();
        let mut consumers: Vec<usize> = group
            .iter()
            .flat_map(|&g| graph.values[g].consumers.iter().filter_map(|&c| instr(c)))
            .collect();
        consumers.sort_unstable();
        consumers.dedup();
        let producer = v.producer.and_then(instr);
        let input = is_input(v.id);
        let output = group.iter().any(|&g| is_output(g));
        let role = if input {
            TensorRole::Input
        } else if output {
            TensorRole::Output
        } else if producer.is_none() {
            TensorRole::Scratch
        } else {
            TensorRole::Intermediate
        };
        let first = if input {
            0
        } else {
            producer.or_else(|| consumers.first().copied()).unwrap_or(0)
        };
        let last_use = consumers.last().copied();
        let last = if output {
            end
        } else {
            last_use.unwrap_or(first).max(first)
        };
        let Some(arena) = arenas.get_mut((p.memory_id as usize).wrapping_sub(1)) else {
            findings.push(Finding::UnknownArena {
                memory_id: p.memory_id,
                value: v.id,
                message: format!(
                    "value {} is placed in arena {} but the plan declares {} arena(s)",
                    v.id,
                    p.memory_id,
                    graph.arenas.len()
                ),
            });
            continue;
        };
        if !input && !output && producer.is_none() && consumers.is_empty() {
            findings.push(Finding::Unused {
                memory_id: p.memory_id,
                value: v.id,
                size: p.size,
                message: format!(
                    "value {} ({} bytes at offset {}) is planned but never read or written",
                    v.id, p.size, p.offset
                ),
            });
            continue;
        }
        if p.offset + p.size > arena.size {
            findings.push(Finding::OutOfArena {
                memory_id: p.memory_id,
                value: v.id,
                end: p.offset + p.size,
                arena_size: arena.size,
                message: format!(
                    "value {} ends at byte {} but arena {} has {} bytes",
                    v.id,
                    p.offset + p.size,
                    p.memory_id,
                    arena.size
                ),
            });
        }
        arena.tensors.push(PlannedTensor {
            value: v.id,
            offset: p.offset,
            size: p.size,
            first,
            last,
            role,
            dtype: v.dtype,
            shape: v.shape.clone(),
            producer,
            consumers,
            aliases: group[1..].to_vec(),
        });
    }
    for arena in &mut arenas {
        arena.tensors.sort_by_key(|t| (t.offset, t.first, t.value));
        sweep(arena, n.max(1));
        find_overlaps(arena, &mut findings);
    }
    MemoryPlan {
        instruction_count: n,
        arenas,
        findings,
    }
}

fn root_of(graph: &Graph, mut v: ValueId) -> ValueId {
    for _ in 0..64 {
        match graph.values.get(v).and_then(|x| x.alias_of) {
            Some(src) => v = src,
            None => break,
        }
    }
    v
}

/// Fills `live_bytes`, `peak` and `lower_bound` with one pass over lifetime events.
fn sweep(arena: &mut Arena, steps: usize) {
    let clamp = |t: &PlannedTensor| (t.first.min(steps - 1), t.last.min(steps - 1));
    let mut delta = vec![0i128; steps + 1];
    for t in &arena.tensors {
        let (f, l) = clamp(t);
        delta[f] += i128::from(t.size);
        delta[l + 1] -= i128::from(t.size);
    }
    // tensors ordered by the step they start and the step after they end
    let mut by_start: Vec<usize> = (0..arena.tensors.len()).collect();
    by_start.sort_unstable_by_key(|&i| clamp(&arena.tensors[i]).0);
    let mut by_end = by_start.clone();
    by_end.sort_unstable_by_key(|&i| clamp(&arena.tensors[i]).1 + 1);
    let (mut next_start, mut next_end) = (0, 0);
    let mut live = 0i128;
    let mut tops: BTreeMap<u64, usize> = BTreeMap::new();
    arena.live_bytes = Vec::with_capacity(steps);
    for (step, d) in delta.iter().take(steps).enumerate() {
        live += d;
        while next_end < by_end.len() && clamp(&arena.tensors[by_end[next_end]]).1 < step {
            let t = &arena.tensors[by_end[next_end]];
            let top = t.offset + t.size;
            if let Some(c) = tops.get_mut(&top) {
                *c -= 1;
                if *c == 0 {
                    tops.remove(&top);
                }
            }
            next_end += 1;
        }
        while next_start < by_start.len() && clamp(&arena.tensors[by_start[next_start]]).0 <= step {
            let t = &arena.tensors[by_start[next_start]];
            *tops.entry(t.offset + t.size).or_insert(0) += 1;
            next_start += 1;
        }
        let bytes = live.max(0) as u64;
        arena.live_bytes.push(bytes);
        arena.lower_bound = arena.lower_bound.max(bytes);
        if let Some((&top, _)) = tops.last_key_value() {
            arena.peak = arena.peak.max(top);
        }
    }
}

/// Reports pairs of tensors whose lifetimes and byte ranges both intersect.
fn find_overlaps(arena: &Arena, findings: &mut Vec<Finding>) {
    let mut order: Vec<usize> = (0..arena.tensors.len()).collect();
    order.sort_by_key(|&i| (arena.tensors[i].first, arena.tensors[i].offset));
    let mut live: Vec<usize> = Vec::new();
    for &i in &order {
        let a = &arena.tensors[i];
        live.retain(|&j| arena.tensors[j].last >= a.first);
        for &j in &live {
            let b = &arena.tensors[j];
            let lo = a.offset.max(b.offset);
            let hi = (a.offset + a.size).min(b.offset + b.size);
            if lo < hi && a.size > 0 && b.size > 0 {
                let (from, to) = (a.first.max(b.first), a.last.min(b.last));
                findings.push(Finding::Overlap {
                    memory_id: arena.memory_id,
                    a: b.value,
                    b: a.value,
                    from_instruction: from,
                    to_instruction: to,
                    bytes: hi - lo,
                    message: format!(
                        "values {} and {} share {} bytes at offset {} of arena {} while both live (instructions {}..={})",
                        b.value, a.value, hi - lo, lo, arena.memory_id, from, to
                    ),
                });
            }
        }
        live.push(i);
    }
}
