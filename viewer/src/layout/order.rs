//! Crossing reduction: the left-to-right order of each rank. Barycenter sweeps down and up with
//! adjacent transposition, keeping the order with the fewest crossings seen (as Graphviz `dot`'s
//! mincross does), counted exactly between every pair of neighbouring ranks.

/// One end of an edge segment between neighbouring ranks, seen from a node.
#[derive(Debug, Clone, Copy)]
pub struct Link {
    /// The node at the other end.
    pub other: usize,
    /// Where on this node the segment attaches, as a fraction of its width from its centre
    /// (−0.5 left edge … 0.5 right edge).
    pub mine: f32,
    /// Where on the other node.
    pub theirs: f32,
}

/// Largest rank transposition visits (its cost grows with the square of a rank's degree).
const TRANSPOSE_RANK_LIMIT: usize = 600;
/// Sweeps of the barycenter heuristic (each followed by transposition).
const SWEEPS: usize = 48;

/// Orders every rank in place; `up[v]`/`down[v]` are `v`'s segments to the rank above/below.
/// Returns the crossings left.
pub fn order(ranks: &mut [Vec<usize>], up: &[Vec<Link>], down: &[Vec<Link>]) -> usize {
    let mut idx = vec![0usize; up.len()];
    index(ranks, &mut idx);
    let mut best = ranks.to_vec();
    let mut best_crossings = total_crossings(ranks, down, &idx);
    for sweep in 0..SWEEPS {
        if best_crossings == 0 {
            break;
        }
        // barycenters, and in the second half medians (dot's weighted median): each finds
        // orders the other misses; the best seen is kept
        let median = sweep >= SWEEPS / 2;
        if sweep == SWEEPS / 2 {
            ranks.clone_from_slice(&best);
            index(ranks, &mut idx);
        }
        if sweep % 2 == 0 {
            for rank in ranks.iter_mut().skip(1) {
                sort_by_key(rank, up, &mut idx, median);
            }
        } else {
            for r in (0..ranks.len().saturating_sub(1)).rev() {
                sort_by_key(&mut ranks[r], down, &mut idx, median);
            }
        }
        // every fourth sweep also swaps neighbours that tie, to leave a plateau (as dot does)
        transpose(ranks, up, down, &mut idx, sweep % 4 == 3);
        let c = total_crossings(ranks, down, &idx);
        if c < best_crossings {
            best_crossings = c;
            best = ranks.to_vec();
        }
    }
    ranks.clone_from_slice(&best);
    best_crossings
}

fn index(ranks: &[Vec<usize>], idx: &mut [usize]) {
    for r in ranks {
        for (i, &v) in r.iter().enumerate() {
            idx[v] = i;
        }
    }
}

fn sort_by_key(rank: &mut [usize], links: &[Vec<Link>], idx: &mut [usize], median: bool) {
    let mut keyed: Vec<(f32, usize, usize)> = rank
        .iter()
        .map(|&v| {
            let ls = &links[v];
            let mut at: Vec<f32> = ls
                .iter()
                .map(|l| idx[l.other] as f32 + l.theirs - l.mine)
                .collect();
            let key = if at.is_empty() {
                idx[v] as f32
            } else if median {
                at.sort_by(f32::total_cmp);
                let m = at.len() / 2;
                if at.len() % 2 == 1 {
                    at[m]
                } else {
                    (at[m - 1] + at[m]) / 2.0
                }
            } else {
                at.iter().sum::<f32>() / at.len() as f32
            };
            (key, idx[v], v)
        })
        .collect();
    keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    for (i, (slot, (_, _, v))) in rank.iter_mut().zip(keyed).enumerate() {
        *slot = v;
        idx[v] = i;
    }
}

/// Crossings between rank `r` and the rank below it.
fn crossings_below(rank: &[usize], down: &[Vec<Link>], idx: &[usize]) -> usize {
    let mut pairs: Vec<(f32, f32)> = Vec::new();
    for &v in rank {
        for l in &down[v] {
            pairs.push((idx[v] as f32 + l.mine, idx[l.other] as f32 + l.theirs));
        }
    }
    if pairs.len() < 2 {
        return 0;
    }
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    // strict inversions of the lower ends, counted with a Fenwick tree over their ranks
    let mut lower: Vec<f32> = pairs.iter().map(|p| p.1).collect();
    lower.sort_by(f32::total_cmp);
    lower.dedup();
    let mut tree = vec![0usize; lower.len() + 1];
    let mut count = 0usize;
    for (seen, &(_, b)) in pairs.iter().enumerate() {
        let k = lower.partition_point(|&x| x <= b); // values <= b: positions 1..=k
        let mut at_most = 0usize;
        let mut i = k;
        while i > 0 {
            at_most += tree[i];
            i &= i - 1;
        }
        count += seen - at_most;
        let mut i = lower.partition_point(|&x| x < b) + 1;
        while i < tree.len() {
            tree[i] += 1;
            i += i & i.wrapping_neg();
        }
    }
    count
}

/// Crossings over every pair of neighbouring ranks.
pub fn total_crossings(ranks: &[Vec<usize>], down: &[Vec<Link>], idx: &[usize]) -> usize {
    ranks.iter().map(|r| crossings_below(r, down, idx)).sum()
}

/// Crossings among the segments of `v` and `w` when `v` is left of `w`.
fn pair_crossings(v: usize, w: usize, links: &[Vec<Link>], idx: &[usize]) -> usize {
    let mut c = 0;
    for a in &links[v] {
        let pa = idx[a.other] as f32 + a.theirs;
        for b in &links[w] {
            if pa > idx[b.other] as f32 + b.theirs {
                c += 1;
            }
        }
    }
    c
}

/// Swaps neighbours of a rank while that removes crossings.
fn transpose(
    ranks: &mut [Vec<usize>],
    up: &[Vec<Link>],
    down: &[Vec<Link>],
    idx: &mut [usize],
    ties: bool,
) {
    for pass in 0..4 {
        let mut improved = false;
        for rank in ranks.iter_mut() {
            if rank.len() < 2 || rank.len() > TRANSPOSE_RANK_LIMIT {
                continue;
            }
            for i in 0..rank.len() - 1 {
                let (v, w) = (rank[i], rank[i + 1]);
                let keep = pair_crossings(v, w, up, idx) + pair_crossings(v, w, down, idx);
                let swap = pair_crossings(w, v, up, idx) + pair_crossings(w, v, down, idx);
                if swap < keep || ties && pass == 0 && swap == keep && keep > 0 {
                    rank.swap(i, i + 1);
                    idx[w] = i;
                    idx[v] = i + 1;
                    improved = true;
                }
            }
        }
        if !improved {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links(n: usize, edges: &[(usize, usize)]) -> (Vec<Vec<Link>>, Vec<Vec<Link>>) {
        let mut up = vec![Vec::new(); n];
        let mut down = vec![Vec::new(); n];
        for &(a, b) in edges {
            down[a].push(Link {
                other: b,
                mine: 0.0,
                theirs: 0.0,
            });
            up[b].push(Link {
                other: a,
                mine: 0.0,
                theirs: 0.0,
            });
        }
        (up, down)
    }

    #[test]
    fn crossings_are_counted_exactly() {
        // 0,1 over 2,3: 0→3 and 1→2 cross once; 0→2 shares an end with both
        let (_, down) = links(4, &[(0, 3), (1, 2), (0, 2)]);
        let ranks = vec![vec![0, 1], vec![2, 3]];
        let mut idx = vec![0; 4];
        index(&ranks, &mut idx);
        assert_eq!(total_crossings(&ranks, &down, &idx), 1);
    }

    #[test]
    fn a_twisted_ladder_is_straightened() {
        // three chains whose middle rank starts reversed
        let edges = [(0, 5), (1, 4), (2, 3), (3, 6), (4, 7), (5, 8)];
        let (up, down) = links(9, &edges);
        let mut ranks = vec![vec![0, 1, 2], vec![3, 4, 5], vec![6, 7, 8]];
        order(&mut ranks, &up, &down);
        let mut idx = vec![0; 9];
        index(&ranks, &mut idx);
        assert_eq!(total_crossings(&ranks, &down, &idx), 0);
    }
}
