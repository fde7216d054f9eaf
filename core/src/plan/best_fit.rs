//! A better plan than ExecuTorch's greedy over shared objects, on the same lifetimes: every
//! tensor placed at an offset of its own (16-byte aligned, as ExecuTorch aligns), the lowest
//! or the tightest gap among the tensors live at the same time, so a gap left between two
//! shared objects is reused. Three orders are tried (largest first, earliest first, longest-lived
//! first) and the smallest arena kept. The result is checked ([`check`]) before it is returned.

use serde::Serialize;

use super::{find_overlaps, Finding, MemoryPlan, PlannedTensor};
use crate::ir::ValueId;

/// Offsets are multiples of this, as ExecuTorch's planner aligns them.
pub const ALIGNMENT: u64 = 16;

/// One arena re-planned.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArenaReplan {
    pub memory_id: u32,
    /// The program's declared size.
    pub declared: u64,
    /// The highest byte the program's own placement reaches.
    pub executorch_peak: u64,
    /// The size the new placement needs.
    pub size: u64,
    /// The most bytes live at once: no placement under this lifetime model needs less.
    pub lower_bound: u64,
    /// Which order gave it.
    pub order: &'static str,
    /// The new offset of every planned value (views with their source).
    pub offsets: Vec<(ValueId, u64)>,
}

/// A plan re-placed arena by arena.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Replan {
    pub arenas: Vec<ArenaReplan>,
}

fn align(x: u64) -> u64 {
    x.div_ceil(ALIGNMENT).saturating_mul(ALIGNMENT)
}

fn live_together(a: &PlannedTensor, b: &PlannedTensor) -> bool {
    a.first <= b.last && b.first <= a.last
}

/// Places `tensors` in `order` (indices), each at the tightest gap (`tightest`) or the lowest
/// offset among those placed before it that live at the same time. Returns offsets by index and
/// the arena size.
fn place(tensors: &[PlannedTensor], order: &[usize], tightest: bool) -> (Vec<u64>, u64) {
    let mut offsets = vec![u64::MAX; tensors.len()];
    let mut placed: Vec<usize> = Vec::with_capacity(tensors.len());
    let mut size = 0u64;
    for &i in order {
        let t = &tensors[i];
        let mut conflicts: Vec<(u64, u64)> = placed
            .iter()
            .filter(|&&j| live_together(t, &tensors[j]) && tensors[j].size > 0)
            .map(|&j| (offsets[j], offsets[j].saturating_add(tensors[j].size)))
            .collect();
        conflicts.sort_unstable();
        let (mut candidate, mut best): (u64, Option<(u64, u64)>) = (0, None);
        for &(lo, hi) in &conflicts {
            if candidate.saturating_add(t.size) <= lo {
                let gap = lo - candidate;
                let better = match best {
                    None => true,
                    Some((_, g)) => tightest && gap < g,
                };
                if better {
                    best = Some((candidate, gap));
                }
                if !tightest {
                    break;
                }
            }
            candidate = candidate.max(align(hi));
        }
        let offset = best.map_or(candidate, |(o, _)| o);
        offsets[i] = offset;
        size = size.max(offset.saturating_add(t.size));
        placed.push(i);
    }
    (offsets, size)
}

/// Re-places every arena of `plan`; `None` for an arena the check would refuse (never, for a
/// plan this module made).
pub fn best_fit(plan: &MemoryPlan) -> Replan {
    let mut arenas = Vec::new();
    for arena in &plan.arenas {
        let t = &arena.tensors;
        let n = t.len();
        let mut by_size: Vec<usize> = (0..n).collect();
        by_size.sort_by_key(|&i| (std::cmp::Reverse(t[i].size), t[i].first, t[i].value));
        let mut by_first: Vec<usize> = (0..n).collect();
        by_first.sort_by_key(|&i| (t[i].first, std::cmp::Reverse(t[i].size), t[i].value));
        let mut by_span: Vec<usize> = (0..n).collect();
        by_span.sort_by_key(|&i| {
            (
                std::cmp::Reverse(t[i].last - t[i].first.min(t[i].last)),
                std::cmp::Reverse(t[i].size),
                t[i].value,
            )
        });
        let candidates = [
            ("largest first, tightest gap", place(t, &by_size, true)),
            ("largest first, lowest gap", place(t, &by_size, false)),
            ("earliest first, tightest gap", place(t, &by_first, true)),
            (
                "longest-lived first, tightest gap",
                place(t, &by_span, true),
            ),
        ];
        let Some((order, (offsets, size))) =
            candidates.into_iter().min_by_key(|(_, (_, size))| *size)
        else {
            continue;
        };
        let offsets = t
            .iter()
            .zip(&offsets)
            .flat_map(|(tensor, &o)| {
                std::iter::once((tensor.value, o))
                    .chain(tensor.aliases.iter().map(move |&a| (a, o)))
            })
            .collect();
        arenas.push(ArenaReplan {
            memory_id: arena.memory_id,
            declared: arena.size,
            executorch_peak: arena.peak,
            size,
            lower_bound: arena.lower_bound,
            order,
            offsets,
        });
    }
    Replan { arenas }
}

/// The plan with `replan`'s offsets and sizes, and what its check finds (nothing, for a sound
/// plan: no two tensors live at once share a byte, none ends past its arena).
pub fn check(plan: &MemoryPlan, replan: &Replan) -> Vec<Finding> {
    let mut findings = Vec::new();
    for arena in &plan.arenas {
        let Some(r) = replan
            .arenas
            .iter()
            .find(|r| r.memory_id == arena.memory_id)
        else {
            continue;
        };
        let mut moved = arena.clone();
        moved.size = r.size;
        for t in &mut moved.tensors {
            if let Some(&(_, o)) = r.offsets.iter().find(|(v, _)| *v == t.value) {
                t.offset = o;
            }
            if t.offset.saturating_add(t.size) > r.size {
                findings.push(Finding::OutOfArena {
                    memory_id: arena.memory_id,
                    value: t.value,
                    end: t.offset.saturating_add(t.size),
                    arena_size: r.size,
                    message: format!("value {} ends past the re-planned arena", t.value),
                });
            }
        }
        find_overlaps(&moved, &mut findings);
    }
    findings
}
