//! Placements by offset rather than by ExecuTorch's shared objects: every storage item (one
//! tensor, or tensors sharing memory in place) at an offset of its own, 16-byte aligned, the
//! lowest or the tightest gap among the items live at the same time, so a gap left between two
//! of ExecuTorch's shared objects is reused. Several orders are tried (largest first, earliest
//! first, longest-lived first) and the smallest arena kept.

use serde::Serialize;

/// Offsets are multiples of this, as ExecuTorch's planner aligns them.
pub const ALIGNMENT: u64 = 16;

/// Something to place: bytes (aligned) over an inclusive instruction range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Item {
    pub size: u64,
    pub first: usize,
    pub last: usize,
    /// The arena's tensors (indices into [`super::Arena::tensors`]) that live in it.
    pub members: Vec<usize>,
}

pub(super) fn align(x: u64) -> u64 {
    x.div_ceil(ALIGNMENT).saturating_mul(ALIGNMENT)
}

pub(super) fn live_together(a: &Item, b: &Item) -> bool {
    a.first <= b.last && b.first <= a.last
}

/// The lowest offset (or the tightest gap, with `tightest`) at which `item` fits between the
/// byte ranges `taken` (sorted by start) of the items it lives with.
pub(super) fn fit(taken: &mut [(u64, u64)], size: u64, tightest: bool) -> u64 {
    taken.sort_unstable();
    let (mut candidate, mut best): (u64, Option<(u64, u64)>) = (0, None);
    for &(lo, hi) in taken.iter() {
        if candidate.saturating_add(size) <= lo {
            let gap = lo - candidate;
            if best.is_none_or(|(_, g)| tightest && gap < g) {
                best = Some((candidate, gap));
            }
            if !tightest {
                break;
            }
        }
        candidate = candidate.max(align(hi));
    }
    best.map_or(candidate, |(o, _)| o)
}

/// Placed items by lifetime: which of them live at the same time as a new one, in
/// `O(log T + k)` for `k` answers (a segment tree over instruction indices for the items alive
/// at the new item's first instruction, and the items starting later within its lifetime by
/// their first instruction).
struct TimeIndex {
    leaves: usize,
    covering: Vec<Vec<usize>>,
    starts: std::collections::BTreeMap<usize, Vec<usize>>,
}

impl TimeIndex {
    fn new(steps: usize) -> TimeIndex {
        let leaves = steps.max(1).next_power_of_two();
        TimeIndex {
            leaves,
            covering: vec![Vec::new(); 2 * leaves],
            starts: std::collections::BTreeMap::new(),
        }
    }

    fn insert(&mut self, i: usize, first: usize, last: usize) {
        self.starts.entry(first).or_default().push(i);
        // canonical nodes of [first, last] (leaves clamped to the tree)
        let (mut lo, mut hi) = (
            first.min(self.leaves - 1) + self.leaves,
            last.min(self.leaves - 1) + self.leaves + 1,
        );
        while lo < hi {
            if lo & 1 == 1 {
                self.covering[lo].push(i);
                lo += 1;
            }
            if hi & 1 == 1 {
                hi -= 1;
                self.covering[hi].push(i);
            }
            lo /= 2;
            hi /= 2;
        }
    }

    fn live_with(&self, first: usize, last: usize, out: &mut Vec<usize>) {
        let mut node = first.min(self.leaves - 1) + self.leaves;
        while node >= 1 {
            out.extend_from_slice(&self.covering[node]);
            node /= 2;
        }
        if last > first {
            for list in self.starts.range(first + 1..=last).map(|(_, l)| l) {
                out.extend_from_slice(list);
            }
        }
    }
}

/// Places `items` in `order`, each at the lowest (or tightest) gap among the items placed before
/// it that live at the same time. Returns offsets by item and the arena size.
pub fn place(items: &[Item], order: &[usize], tightest: bool) -> (Vec<u64>, u64) {
    let steps = items
        .iter()
        .map(|t| t.last.max(t.first))
        .max()
        .map_or(1, |m| m + 1);
    let mut index = TimeIndex::new(steps);
    let mut offsets = vec![u64::MAX; items.len()];
    let mut size = 0u64;
    let (mut live, mut taken) = (Vec::new(), Vec::new());
    for &i in order {
        let t = &items[i];
        live.clear();
        index.live_with(t.first, t.last.max(t.first), &mut live);
        taken.clear();
        taken.extend(
            live.iter()
                .filter(|&&j| items[j].size > 0)
                .map(|&j| (offsets[j], offsets[j].saturating_add(items[j].size))),
        );
        let offset = fit(&mut taken, t.size, tightest);
        offsets[i] = offset;
        size = size.max(offset.saturating_add(t.size));
        index.insert(i, t.first, t.last.max(t.first));
    }
    (offsets, size)
}

/// The best of the tried orders: (which order, offsets by item, arena size).
pub fn best_fit(items: &[Item]) -> (&'static str, Vec<u64>, u64) {
    let n = items.len();
    let key = |i: usize| (items[i].first, i);
    let mut by_size: Vec<usize> = (0..n).collect();
    by_size.sort_by_key(|&i| (std::cmp::Reverse(items[i].size), key(i)));
    let mut by_first: Vec<usize> = (0..n).collect();
    by_first.sort_by_key(|&i| (items[i].first, std::cmp::Reverse(items[i].size), i));
    let mut by_span: Vec<usize> = (0..n).collect();
    by_span.sort_by_key(|&i| {
        (
            std::cmp::Reverse(items[i].last - items[i].first.min(items[i].last)),
            std::cmp::Reverse(items[i].size),
            i,
        )
    });
    let candidates = [
        ("largest first, tightest gap", &by_size, true),
        ("largest first, lowest gap", &by_size, false),
        ("earliest first, tightest gap", &by_first, true),
        ("longest-lived first, tightest gap", &by_span, true),
    ];
    let mut best: Option<(&'static str, Vec<u64>, u64)> = None;
    for (name, order, tightest) in candidates {
        let (offsets, size) = place(items, order, tightest);
        if best.as_ref().is_none_or(|b| size < b.2) {
            best = Some((name, offsets, size));
        }
    }
    best.unwrap_or(("empty", Vec::new(), 0))
}
