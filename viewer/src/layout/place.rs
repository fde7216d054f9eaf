//! Horizontal placement of ordered ranks: each rank's nodes as close as possible to where their
//! neighbours pull them (the weighted mean of their segments' other ends), keeping their order and
//! minimum gaps, by weighted isotonic regression (pool adjacent violators), swept down and up.
//! Segments between two dummies weigh most (a long edge stays straight, as in `dot`), and a main
//! path (each node its neighbour's first link) weighs more than a side branch.

/// One segment between neighbouring ranks, for placement.
#[derive(Debug, Clone, Copy)]
pub struct Pull {
    pub other: usize,
    /// Where the segment attaches on this node, from its left edge.
    pub mine: f32,
    /// Where on the other node, from its left edge.
    pub theirs: f32,
    pub weight: f32,
}

/// Sweeps (alternately down and up; the last two pull from both sides).
const SWEEPS: usize = 8;

/// Left x of every node. `gap(a, b)` is the least space between neighbours `a` and `b`.
pub fn place(
    ranks: &[Vec<usize>],
    widths: &[f32],
    up: &[Vec<Pull>],
    down: &[Vec<Pull>],
    gap: &dyn Fn(usize, usize) -> f32,
) -> Vec<f32> {
    let mut x = vec![0f32; widths.len()];
    for r in ranks {
        let mut left = 0f32;
        for (i, &v) in r.iter().enumerate() {
            if i > 0 {
                left += gap(r[i - 1], v);
            }
            x[v] = left;
            left += widths[v];
        }
    }
    let both: Vec<Vec<Pull>> = up
        .iter()
        .zip(down)
        .map(|(u, d)| u.iter().chain(d).copied().collect())
        .collect();
    for sweep in 0..SWEEPS {
        if sweep + 2 >= SWEEPS {
            for r in ranks {
                place_rank(r, widths, &both, gap, &mut x);
            }
        } else if sweep % 2 == 0 {
            for r in ranks.iter().skip(1) {
                place_rank(r, widths, up, gap, &mut x);
            }
        } else {
            for r in ranks.iter().rev().skip(1) {
                place_rank(r, widths, down, gap, &mut x);
            }
        }
    }
    x
}

fn place_rank(
    rank: &[usize],
    widths: &[f32],
    pulls: &[Vec<Pull>],
    gap: &dyn Fn(usize, usize) -> f32,
    x: &mut [f32],
) {
    if rank.is_empty() {
        return;
    }
    // offset[i]: the least distance from the first node's left edge to node i's
    let mut offset = Vec::with_capacity(rank.len());
    let mut acc = 0f32;
    for (i, &v) in rank.iter().enumerate() {
        if i > 0 {
            acc += widths[rank[i - 1]] + gap(rank[i - 1], v);
        }
        offset.push(acc);
    }
    // y_i = desired_i − offset_i must become non-decreasing: pool adjacent violators
    let mut blocks: Vec<(f32, f32, usize)> = Vec::new(); // (weighted mean, weight, count)
    for (i, &v) in rank.iter().enumerate() {
        let ps = &pulls[v];
        let total: f32 = ps.iter().map(|p| p.weight).sum();
        let (desired, w) = if total > 0.0 {
            let m = ps
                .iter()
                .map(|p| p.weight * (x[p.other] + p.theirs - p.mine))
                .sum::<f32>()
                / total;
            (m, total)
        } else {
            (x[v], 1e-3)
        };
        let (mut value, mut w, mut count) = (desired - offset[i], w, 1usize);
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
    fn a_chain_is_straight_and_siblings_keep_their_gap() {
        // 0 → 1, 0 → 2 (1 heavier: the main path), widths 40
        let pull = |other, weight| Pull {
            other,
            mine: 20.0,
            theirs: 20.0,
            weight,
        };
        let up = vec![vec![], vec![pull(0, 100.0)], vec![pull(0, 1.0)]];
        let down = vec![vec![pull(1, 100.0), pull(2, 1.0)], vec![], vec![]];
        let x = place(&[vec![0], vec![1, 2]], &[40.0; 3], &up, &down, &|_, _| 10.0);
        assert!((x[1] - x[0]).abs() < 1.0, "{x:?}");
        assert!(x[2] - x[1] >= 50.0 - 1e-3, "{x:?}");
    }
}
