//! The smallest arena for a few items, proven by search.
//!
//! Any placement can be pushed down, item by item, until each sits at 0 or on top of an item it
//! lives with, without growing; placing the items one by one at their lowest feasible offset in
//! the order of those pushed-down offsets gives a placement no larger. So the minimum over every
//! order of "lowest fit" placements is the optimum. The search walks those orders depth first,
//! cutting a branch as soon as its arena reaches the best found, and stops early when the best
//! meets the lower bound (the most bytes live at once). It gives up after a budget of steps, and
//! then claims nothing.

use super::best_fit::{fit, live_together, Item};

/// Placement steps the search may take before it gives up.
pub const STEP_BUDGET: u64 = 2_000_000;

/// Items beyond which the search is not attempted.
pub const MAX_ITEMS: usize = 24;

struct Search<'a> {
    items: &'a [Item],
    offsets: Vec<u64>,
    placed: Vec<bool>,
    best: u64,
    best_offsets: Vec<u64>,
    lower_bound: u64,
    steps: u64,
    gave_up: bool,
}

impl Search<'_> {
    fn lowest(&self, i: usize) -> u64 {
        let t = &self.items[i];
        let mut taken: Vec<(u64, u64)> = (0..self.items.len())
            .filter(|&j| {
                self.placed[j] && self.items[j].size > 0 && live_together(t, &self.items[j])
            })
            .map(|j| {
                (
                    self.offsets[j],
                    self.offsets[j].saturating_add(self.items[j].size),
                )
            })
            .collect();
        fit(&mut taken, t.size, false)
    }

    fn walk(&mut self, depth: usize, peak: u64) {
        if self.gave_up || self.best == self.lower_bound {
            return;
        }
        if depth == self.items.len() {
            if peak < self.best {
                self.best = peak;
                self.best_offsets = self.offsets.clone();
            }
            return;
        }
        for i in 0..self.items.len() {
            if self.placed[i] {
                continue;
            }
            self.steps += 1;
            if self.steps > STEP_BUDGET {
                self.gave_up = true;
                return;
            }
            let offset = self.lowest(i);
            let top = peak.max(offset.saturating_add(self.items[i].size));
            if top >= self.best {
                continue;
            }
            self.placed[i] = true;
            self.offsets[i] = offset;
            self.walk(depth + 1, top);
            self.placed[i] = false;
            if self.gave_up || self.best == self.lower_bound {
                return;
            }
        }
    }
}

/// The optimal placement of `items` (offsets, arena size), starting from a known placement of
/// size `start` (the search only looks for smaller ones); `None` when there are too many items
/// or the budget ran out before the optimum was proven.
pub fn exact(items: &[Item], start: (&[u64], u64), lower_bound: u64) -> Option<(Vec<u64>, u64)> {
    if items.len() > MAX_ITEMS {
        return None;
    }
    let mut s = Search {
        items,
        offsets: vec![0; items.len()],
        placed: vec![false; items.len()],
        best: start.1,
        best_offsets: start.0.to_vec(),
        lower_bound,
        steps: 0,
        gave_up: false,
    };
    s.walk(0, 0);
    (!s.gave_up).then_some((s.best_offsets, s.best))
}
