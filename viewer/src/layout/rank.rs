//! Layering: which row (rank) each item of one level goes in. Longest path from the sources,
//! in-ports alone on the first row and out-ports alone on the last, and sources without inputs
//! pulled down next to their first consumer (a constant or a second input sits where it is used,
//! not at the top with a long edge).

use super::ItemKind;

/// Kahn's algorithm taking ready items in index order; items left in cycles follow in index
/// order (a cycle cannot come from a program's graph; it is broken, never looped on).
pub fn topological_order(n: usize, succs: &[Vec<usize>], preds: &[Vec<usize>]) -> Vec<usize> {
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

/// The rank of every item. Every edge of an acyclic graph points to a higher rank.
pub fn assign(kinds: &[ItemKind], succs: &[Vec<usize>], preds: &[Vec<usize>]) -> Vec<usize> {
    let n = kinds.len();
    let order = topological_order(n, succs, preds);
    let mut at = vec![0usize; n];
    for (i, &v) in order.iter().enumerate() {
        at[v] = i;
    }
    let has_in_ports = kinds.contains(&ItemKind::InPort);
    let first = usize::from(has_in_ports);
    let mut rank = vec![0usize; n];
    for &v in &order {
        if kinds[v] == ItemKind::InPort {
            continue;
        }
        let mut r = first;
        for &p in &preds[v] {
            if at[p] < at[v] {
                r = r.max(rank[p] + 1);
            }
        }
        rank[v] = r;
    }
    // sources pulled down to just above their first consumer
    for &v in order.iter().rev() {
        if kinds[v] == ItemKind::Normal && preds[v].is_empty() && !succs[v].is_empty() {
            let lowest = succs[v]
                .iter()
                .filter(|&&s| kinds[s] != ItemKind::OutPort)
                .map(|&s| rank[s])
                .min();
            if let Some(m) = lowest {
                rank[v] = rank[v].max(m.saturating_sub(1)).max(first);
            }
        }
    }
    let last = kinds
        .iter()
        .zip(&rank)
        .filter(|(k, _)| **k != ItemKind::OutPort)
        .map(|(_, &r)| r + 1)
        .max()
        .unwrap_or(first);
    for v in 0..n {
        if kinds[v] == ItemKind::OutPort {
            rank[v] = last;
        }
    }
    rank
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adjacency(n: usize, edges: &[(usize, usize)]) -> (Vec<Vec<usize>>, Vec<Vec<usize>>) {
        let mut s = vec![Vec::new(); n];
        let mut p = vec![Vec::new(); n];
        for &(a, b) in edges {
            s[a].push(b);
            p[b].push(a);
        }
        (s, p)
    }

    #[test]
    fn ports_take_the_first_and_last_rows_alone() {
        use ItemKind::*;
        // in-port 0 → 2 → 3 → out-port 1; 4 a constant feeding 3
        let kinds = [InPort, OutPort, Normal, Normal, Normal];
        let (s, p) = adjacency(5, &[(0, 2), (2, 3), (3, 1), (4, 3)]);
        let r = assign(&kinds, &s, &p);
        assert_eq!(r, vec![0, 3, 1, 2, 1]);
    }

    #[test]
    fn a_cycle_is_broken_not_looped_on() {
        let kinds = [ItemKind::Normal; 3];
        let (s, p) = adjacency(3, &[(0, 1), (1, 2), (2, 0)]);
        assert_eq!(assign(&kinds, &s, &p).len(), 3);
    }
}
