//! Memory-plan derivation: every planned tensor of a `.pte` plan as a box of address × lifetime
//! per arena, with each arena's declared size, peak and lower bound, and findings (overlapping
//! live tensors, tensors past their arena, unknown arenas).
//!
//! Time is the chain-0 instruction index. A tensor lives from the instruction that writes it
//! (inputs: from 0) to the last instruction that reads it or any view of it (outputs: to the end),
//! both inclusive; one read before it is written (a mutable buffer's state) lives throughout. `peak` is the highest byte any live tensor reaches at any time; `lower_bound`
//! is the largest sum of live sizes at any time, which no placement can beat. So
//! `lower_bound <= peak <= size` for every sound plan.

pub mod alternatives;
pub mod best_fit;
pub mod budget;
pub mod exact;
pub mod executorch;
pub mod reorder;

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
    /// Read before an instruction writes it: state kept from one call to the next (a mutable
    /// buffer, e.g. a recurrent model's state), alive for the whole method.
    State,
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

impl PlannedTensor {
    /// An input no instruction reads: live only while the inputs are bound (ExecuTorch's node
    /// numbering gives such a placeholder no life among the instructions), so its bytes may
    /// hold what an instruction makes, though not another input.
    pub fn is_unread_input(&self) -> bool {
        self.role == TensorRole::Input && self.consumers.is_empty()
    }
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
        let state = !input && kept_between_calls(graph, v.id);
        let role = if input {
            TensorRole::Input
        } else if state {
            TensorRole::State
        } else if output {
            TensorRole::Output
        } else if producer.is_none() {
            TensorRole::Scratch
        } else {
            TensorRole::Intermediate
        };
        let first = if input || state {
            0
        } else {
            producer.or_else(|| consumers.first().copied()).unwrap_or(0)
        };
        let last_use = consumers.last().copied();
        let last = if output || state {
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
        if p.offset.saturating_add(p.size) > arena.size {
            findings.push(Finding::OutOfArena {
                memory_id: p.memory_id,
                value: v.id,
                end: p.offset.saturating_add(p.size),
                arena_size: arena.size,
                message: format!(
                    "value {} ends at byte {} but arena {} has {} bytes",
                    v.id,
                    p.offset.saturating_add(p.size),
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
    let used = arenas.iter().filter(|a| !a.tensors.is_empty()).count();
    let curve = used.saturating_mul(n.max(1)) <= MAX_LIVE_BYTE_ENTRIES;
    for arena in &mut arenas {
        arena.tensors.sort_by_key(|t| (t.offset, t.first, t.value));
        sweep(arena, n.max(1), curve && !arena.tensors.is_empty());
        find_overlaps(arena, &mut findings);
    }
    MemoryPlan {
        instruction_count: n,
        arenas,
        findings,
    }
}

/// Whether value `v` is state a method keeps from one call to the next (a mutable buffer): an
/// instruction reads it before another writes it back (`copy_` at the end of a method), or its
/// only writer updates it in place (`index_put_` on a KV cache after ExecuTorch's reinplace
/// pass, whose first argument is the value it writes).
pub(crate) fn kept_between_calls(graph: &Graph, v: ValueId) -> bool {
    let Some(val) = graph.values.get(v) else {
        return false;
    };
    if graph.inputs.contains(&v) {
        return false;
    }
    let Some(writer) = val.producer.and_then(|p| graph.nodes.get(p)) else {
        return false;
    };
    let in_place = writer.op.ends_with('_') && writer.args.first().and_then(|a| a.value) == Some(v);
    let read_before = match writer.instruction_id {
        Some(w) => val
            .consumers
            .iter()
            .filter_map(|&c| graph.nodes.get(c).and_then(|n| n.instruction_id))
            .any(|c| c < w),
        None => false,
    };
    in_place || read_before
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

/// Most per-instruction live-byte entries kept over all arenas (8 bytes each); beyond it the
/// arenas keep peak and lower bound but no per-instruction curve. Instruction and arena counts
/// come from the file.
pub const MAX_LIVE_BYTE_ENTRIES: usize = 16 << 20;

/// One byte past a tensor (saturating: offsets and sizes come from the file).
fn end_of(t: &PlannedTensor) -> u64 {
    t.offset.saturating_add(t.size)
}

/// Fills `peak` and `lower_bound` (and `live_bytes` per instruction when `curve`) with one pass
/// over the arena's lifetime events: memory and time proportional to its tensors, not to the
/// program's instruction count.
fn sweep(arena: &mut Arena, steps: usize, curve: bool) {
    let clamp = |t: &PlannedTensor| (t.first.min(steps - 1), t.last.min(steps - 1));
    // (step, tensor, starts?) — ends take effect at last + 1
    let mut events: Vec<(usize, usize, bool)> = Vec::with_capacity(arena.tensors.len() * 2);
    // an input no instruction reads is live only while the inputs are bound, before the first
    // instruction: it counts towards the inputs' bytes, not towards any instruction's
    let unread = PlannedTensor::is_unread_input;
    let inputs: u64 = arena
        .tensors
        .iter()
        .filter(|t| t.role == TensorRole::Input)
        .fold(0u64, |acc, t| acc.saturating_add(t.size));
    let unread_top = arena
        .tensors
        .iter()
        .filter(|t| unread(t))
        .map(end_of)
        .max()
        .unwrap_or(0);
    for (i, t) in arena.tensors.iter().enumerate() {
        if unread(t) {
            continue;
        }
        let (f, l) = clamp(t);
        events.push((f, i, true));
        events.push((l + 1, i, false));
    }
    // at one step, ends before starts
    events.sort_unstable_by_key(|&(step, i, starts)| (step, starts, i));
    let mut live = 0i128;
    let mut tops: BTreeMap<u64, usize> = BTreeMap::new();
    arena.live_bytes = if curve {
        Vec::with_capacity(steps)
    } else {
        Vec::new()
    };
    let mut k = 0;
    while k < events.len() {
        let step = events[k].0;
        if step >= steps {
            break;
        }
        if curve {
            let prev = live.max(0) as u64;
            while arena.live_bytes.len() < step {
                arena.live_bytes.push(prev);
            }
        }
        while k < events.len() && events[k].0 == step {
            let (_, i, starts) = events[k];
            let t = &arena.tensors[i];
            let top = end_of(t);
            if starts {
                live += i128::from(t.size);
                *tops.entry(top).or_insert(0) += 1;
            } else {
                live -= i128::from(t.size);
                if let Some(c) = tops.get_mut(&top) {
                    *c -= 1;
                    if *c == 0 {
                        tops.remove(&top);
                    }
                }
            }
            k += 1;
        }
        let bytes = live.max(0) as u64;
        arena.lower_bound = arena.lower_bound.max(bytes);
        if let Some((&top, _)) = tops.last_key_value() {
            arena.peak = arena.peak.max(top);
        }
    }
    if curve {
        let last = live.max(0) as u64;
        while arena.live_bytes.len() < steps {
            arena.live_bytes.push(last);
        }
    }
    arena.lower_bound = arena.lower_bound.max(inputs);
    arena.peak = arena.peak.max(unread_top);
}

/// Reports pairs of tensors whose lifetimes and byte ranges both intersect. An input no
/// instruction reads holds nothing anyone needs once the inputs are bound, so sharing its bytes
/// with a tensor an instruction makes is no overlap (ExecuTorch's planner does it); with another
/// input it is.
pub(crate) fn find_overlaps(arena: &Arena, findings: &mut Vec<Finding>) {
    let unread = PlannedTensor::is_unread_input;
    let mut order: Vec<usize> = (0..arena.tensors.len()).collect();
    order.sort_by_key(|&i| (arena.tensors[i].first, arena.tensors[i].offset));
    let mut live: Vec<usize> = Vec::new();
    for &i in &order {
        let a = &arena.tensors[i];
        live.retain(|&j| arena.tensors[j].last >= a.first);
        for &j in &live {
            let b = &arena.tensors[j];
            let lo = a.offset.max(b.offset);
            let hi = end_of(a).min(end_of(b));
            let harmless = (unread(a) && b.role != TensorRole::Input)
                || (unread(b) && a.role != TensorRole::Input);
            if lo < hi && a.size > 0 && b.size > 0 && !harmless {
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
