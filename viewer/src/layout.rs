//! Layered (Sugiyama-style) layout for dataflow graphs: longest-path ranks top to bottom,
//! barycenter sweeps to reduce crossings, and x placement that keeps chains straight.
//!
//! Pure geometry on node widths and edges, so it is tested without a GUI and reused by the
//! graph view, the SVG export and the benchmarks. Runs in O((N + E) · sweeps).

/// Vertical distance between ranks.
pub const RANK_GAP: f32 = 64.0;
/// Minimum horizontal gap between neighbours in a rank.
pub const NODE_GAP: f32 = 24.0;
/// Node box height.
pub const NODE_HEIGHT: f32 = 30.0;

/// Where every node goes.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// Center of each node.
    pub pos: Vec<[f32; 2]>,
    /// Width of each node (as given).
    pub width: Vec<f32>,
    /// Rank (row) of each node.
    pub rank: Vec<usize>,
    /// Nodes of each rank, left to right.
    pub ranks: Vec<Vec<usize>>,
    /// Bounding box: min x, min y, max x, max y.
    pub bounds: [f32; 4],
}

/// Lays out `widths.len()` nodes connected by `edges` (`from → to`). Cycles are broken by
/// ignoring edges that point back in the given node order.
pub fn layered(widths: &[f32], edges: &[(usize, usize)]) -> Layout {
    let n = widths.len();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in edges {
        if a < n && b < n && a != b {
            preds[b].push(a);
            succs[a].push(b);
        }
    }
    let order = topological_order(n, &succs, &preds);
    let mut position_in_order = vec![0usize; n];
    for (i, &v) in order.iter().enumerate() {
        position_in_order[v] = i;
    }
    // longest-path ranks over forward edges
    let mut rank = vec![0usize; n];
    for &v in &order {
        for &p in &preds[v] {
            if position_in_order[p] < position_in_order[v] {
                rank[v] = rank[v].max(rank[p] + 1);
            }
        }
    }
    // pull sources down next to their first consumer so inputs/constants sit near their use
    for &v in order.iter().rev() {
        if preds[v].is_empty() && !succs[v].is_empty() {
            let min_succ = succs[v].iter().map(|&s| rank[s]).min().unwrap_or(1);
            rank[v] = min_succ.saturating_sub(1).max(rank[v]);
        }
    }
    let n_ranks = rank.iter().max().map_or(0, |m| m + 1);
    let mut ranks: Vec<Vec<usize>> = vec![Vec::new(); n_ranks];
    for &v in &order {
        ranks[rank[v]].push(v);
    }
    let mut x = vec![0f32; n];
    place_ranks(&ranks, widths, &mut x);
    // A node is its neighbour's "primary" partner when each is the other's first link: the
    // main path of a fork. Primary nodes weigh more when a rank is placed, so the main path
    // stays straight and side branches move aside (instead of the whole chain drifting).
    let primary_down: Vec<f32> = (0..n)
        .map(|v| {
            weight(
                preds[v]
                    .first()
                    .is_some_and(|&p| succs[p].first() == Some(&v)),
            )
        })
        .collect();
    let primary_up: Vec<f32> = (0..n)
        .map(|v| {
            weight(
                succs[v]
                    .first()
                    .is_some_and(|&s| preds[s].first() == Some(&v)),
            )
        })
        .collect();
    for sweep in 0..4 {
        let down = sweep % 2 == 0;
        let (neighbours, weights) = if down {
            (&preds, &primary_down)
        } else {
            (&succs, &primary_up)
        };
        let seq: Vec<usize> = if down {
            (1..n_ranks).collect()
        } else {
            (0..n_ranks.saturating_sub(1)).rev().collect()
        };
        for r in seq {
            reorder_by_barycenter(&mut ranks[r], neighbours, &x);
            place_rank(&ranks[r], widths, neighbours, weights, &mut x);
        }
    }
    let mut pos = vec![[0f32; 2]; n];
    let mut bounds = [
        f32::INFINITY,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NEG_INFINITY,
    ];
    for v in 0..n {
        let y = rank[v] as f32 * RANK_GAP;
        pos[v] = [x[v], y];
        bounds[0] = bounds[0].min(x[v] - widths[v] / 2.0);
        bounds[1] = bounds[1].min(y - NODE_HEIGHT / 2.0);
        bounds[2] = bounds[2].max(x[v] + widths[v] / 2.0);
        bounds[3] = bounds[3].max(y + NODE_HEIGHT / 2.0);
    }
    if n == 0 {
        bounds = [0.0; 4];
    }
    Layout {
        pos,
        width: widths.to_vec(),
        rank,
        ranks,
        bounds,
    }
}

/// Kahn's algorithm, taking ready nodes in index order; nodes left in cycles follow in index order.
fn topological_order(n: usize, succs: &[Vec<usize>], preds: &[Vec<usize>]) -> Vec<usize> {
    let mut indegree: Vec<usize> = preds.iter().map(Vec::len).collect();
    let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<usize>> = (0..n)
        .filter(|&v| indegree[v] == 0)
        .map(std::cmp::Reverse)
        .collect();
    let mut order = Vec::with_capacity(n);
    let mut placed = vec![false; n];
    while order.len() < n {
        let next = match ready.pop() {
            Some(std::cmp::Reverse(v)) => v,
            // a cycle: break it at the lowest unplaced node
            None => match (0..n).find(|&v| !placed[v]) {
                Some(v) => v,
                None => break,
            },
        };
        if placed[next] {
            continue;
        }
        placed[next] = true;
        order.push(next);
        for &s in &succs[next] {
            indegree[s] = indegree[s].saturating_sub(1);
            if indegree[s] == 0 && !placed[s] {
                ready.push(std::cmp::Reverse(s));
            }
        }
    }
    order
}

fn weight(primary: bool) -> f32 {
    if primary {
        1.0e4
    } else {
        1.0
    }
}

/// Initial placement: every rank packed around x = 0.
fn place_ranks(ranks: &[Vec<usize>], widths: &[f32], x: &mut [f32]) {
    for r in ranks {
        let total: f32 = r.iter().map(|&v| widths[v] + NODE_GAP).sum();
        let mut left = -total / 2.0;
        for &v in r {
            x[v] = left + widths[v] / 2.0;
            left += widths[v] + NODE_GAP;
        }
    }
}

fn barycenter(v: usize, neighbours: &[Vec<usize>], x: &[f32]) -> Option<f32> {
    let ns = &neighbours[v];
    (!ns.is_empty()).then(|| ns.iter().map(|&u| x[u]).sum::<f32>() / ns.len() as f32)
}

/// Sorts a rank by the mean x of each node's neighbours in the other direction (stable: nodes
/// without neighbours keep their current x).
fn reorder_by_barycenter(rank: &mut [usize], neighbours: &[Vec<usize>], x: &[f32]) {
    let mut keyed: Vec<(f32, usize)> = rank
        .iter()
        .map(|&v| (barycenter(v, neighbours, x).unwrap_or(x[v]), v))
        .collect();
    keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (slot, (_, v)) in rank.iter_mut().zip(keyed) {
        *slot = v;
    }
}

/// Places one rank's nodes as close as possible to their neighbours' barycenters while keeping
/// their order and minimum gaps: weighted isotonic regression (pool adjacent violators) on
/// positions shifted by the cumulative widths. A single-child chain lands exactly under its
/// parent; in a crowded rank the heavier (primary) nodes stay closest to where they want to be.
fn place_rank(
    rank: &[usize],
    widths: &[f32],
    neighbours: &[Vec<usize>],
    weights: &[f32],
    x: &mut [f32],
) {
    if rank.is_empty() {
        return;
    }
    // offset[i]: minimum distance from node 0's center to node i's center
    let mut offset = Vec::with_capacity(rank.len());
    let mut acc = 0f32;
    for (i, &v) in rank.iter().enumerate() {
        if i > 0 {
            acc += widths[rank[i - 1]] / 2.0 + NODE_GAP + widths[v] / 2.0;
        }
        offset.push(acc);
    }
    // y_i = desired_i - offset_i must become non-decreasing: pool adjacent violators
    let mut blocks: Vec<(f32, f32, usize)> = Vec::new(); // (weighted mean, weight, count)
    for (i, &v) in rank.iter().enumerate() {
        // a primary node continues its primary neighbour's line exactly; others go to the
        // barycenter of their neighbours
        let desired = if weights[v] > 1.0 {
            neighbours[v].first().map(|&u| x[u])
        } else {
            None
        }
        .or_else(|| barycenter(v, neighbours, x))
        .unwrap_or(x[v]);
        let (mut value, mut w, mut count) = (desired - offset[i], weights[v], 1usize);
        while let Some(&(m, bw, c)) = blocks.last() {
            if m <= value {
                break;
            }
            blocks.pop();
            value = (m * bw + value * w) / (bw + w);
            w += bw;
            count += c;
        }
        blocks.push((value, w, count));
    }
    let mut i = 0;
    for (value, _, count) in blocks {
        for _ in 0..count {
            x[rank[i]] = value + offset[i];
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_is_one_straight_column() {
        let edges: Vec<(usize, usize)> = (0..9).map(|i| (i, i + 1)).collect();
        let l = layered(&[80.0; 10], &edges);
        for v in 0..10 {
            assert_eq!(l.rank[v], v);
            assert!(
                (l.pos[v][0] - l.pos[0][0]).abs() < 1e-3,
                "node {v} at {:?}",
                l.pos[v]
            );
        }
    }

    #[test]
    fn a_diamond_splits_and_rejoins_without_overlap() {
        // 0 → 1, 0 → 2, 1 → 3, 2 → 3
        let l = layered(&[60.0; 4], &[(0, 1), (0, 2), (1, 3), (2, 3)]);
        assert_eq!(l.rank, vec![0, 1, 1, 2]);
        let gap = (l.pos[1][0] - l.pos[2][0]).abs();
        assert!(gap >= 60.0 + NODE_GAP - 1e-3, "siblings overlap: {gap}");
        // the main path (first links: 0 → 1 → 3) stays straight, the side branch moves aside
        assert!((l.pos[1][0] - l.pos[0][0]).abs() < 1.0, "{:?}", l.pos);
        assert!((l.pos[3][0] - l.pos[1][0]).abs() < 1.0, "{:?}", l.pos);
    }

    #[test]
    fn barycenter_sweeps_uncross_a_twisted_pair() {
        // two parallel chains whose second rank starts crossed: a0→b1, a1→b0
        let l = layered(&[40.0; 6], &[(0, 3), (1, 2), (2, 4), (3, 5)]);
        let left_top = if l.pos[0][0] < l.pos[1][0] { 0 } else { 1 };
        let child_of_left = if left_top == 0 { 3 } else { 2 };
        let other = if child_of_left == 3 { 2 } else { 3 };
        assert!(
            l.pos[child_of_left][0] < l.pos[other][0],
            "edges cross: {:?}",
            l.pos
        );
    }

    #[test]
    fn a_long_chain_with_side_branches_stays_straight() {
        // main path 0 → 1 → … with a side node hanging off every main node and rejoining
        let main = 400;
        let mut edges = Vec::new();
        let mut widths = vec![80.0; main];
        for i in 0..main - 1 {
            edges.push((i, i + 1));
            let side = widths.len();
            widths.push(80.0);
            edges.push((i, side));
            edges.push((side, i + 1));
        }
        let l = layered(&widths, &edges);
        let drift = (l.pos[main - 1][0] - l.pos[0][0]).abs();
        assert!(
            drift < 200.0,
            "main path drifted {drift} px over {main} ranks"
        );
    }

    #[test]
    fn cycles_and_bad_edges_do_not_hang_or_panic() {
        let l = layered(&[10.0; 3], &[(0, 1), (1, 2), (2, 0), (5, 1), (1, 1)]);
        assert_eq!(l.pos.len(), 3);
        assert!(l.bounds.iter().all(|b| b.is_finite()));
        assert_eq!(layered(&[], &[]).bounds, [0.0; 4]);
    }
}
