//! One level of the layout: items (nodes, module boxes, ports) and the edges between them, laid
//! out in ranks top to bottom. Every edge longer than one rank runs through dummy positions of its
//! own beside the items it passes (as Sugiyama's method and Graphviz `dot` do), so it is never
//! drawn under an item; crossings are reduced ([`super::order`]) and items placed
//! ([`super::place`]). Routes cross a rank's band only vertically, in a column no other item
//! occupies, and bend only in the gaps between bands, where nothing is drawn: no route passes
//! through an item that is not one of its ends.

use super::order::{self, Link};
use super::place::{self, Pull};
use super::rank;
pub use super::ItemKind;

/// An item to place.
#[derive(Debug, Clone, Copy)]
pub struct Item {
    pub w: f32,
    pub h: f32,
    pub kind: ItemKind,
}

/// An edge between two items, leaving `from` at `from_x` (from its left edge) of its bottom and
/// entering `to` at `to_x` of its top.
#[derive(Debug, Clone, Copy)]
pub struct LevelEdge {
    pub from: usize,
    pub from_x: f32,
    pub to: usize,
    pub to_x: f32,
}

/// Distances of a level.
#[derive(Debug, Clone, Copy)]
pub struct Spacing {
    /// Between the bands of two ranks.
    pub rank_gap: f32,
    /// Below the in-port row and above the out-port row.
    pub port_gap: f32,
    /// Between two items of a rank.
    pub item_gap: f32,
    /// Between a dummy and its neighbours.
    pub dummy_gap: f32,
}

/// Where everything of a level went (x, y top-left; the level's top-left corner is 0, 0).
#[derive(Debug, Clone)]
pub struct LevelLayout {
    pub pos: Vec<[f32; 2]>,
    /// Per edge: from its source's exit point to its target's entry point.
    pub routes: Vec<Vec<[f32; 2]>>,
    /// Width and height.
    pub size: [f32; 2],
    /// Each item's width (as given).
    pub widths: Vec<f32>,
}

/// A dummy's width: the column its edge runs in.
const DUMMY_WIDTH: f32 = 2.0;

/// Weight of a segment between two kinds of node (long edges straight, as `dot` weighs them).
fn segment_weight(a_dummy: bool, b_dummy: bool) -> f32 {
    match (a_dummy, b_dummy) {
        (true, true) => 8.0,
        (false, false) => 1.0,
        _ => 2.0,
    }
}

/// Lays out one level.
pub fn lay_out(items: &[Item], edges: &[LevelEdge], sp: &Spacing) -> LevelLayout {
    let n = items.len();
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for e in edges {
        if e.from < n && e.to < n && e.from != e.to && !succs[e.from].contains(&e.to) {
            succs[e.from].push(e.to);
            preds[e.to].push(e.from);
        }
    }
    let kinds: Vec<ItemKind> = items.iter().map(|i| i.kind).collect();
    let item_rank = rank::assign(&kinds, &succs, &preds);
    // virtual nodes: the items, then the dummies of long edges
    let mut rank_of = item_rank.clone();
    let mut width: Vec<f32> = items.iter().map(|i| i.w).collect();
    let mut chains: Vec<Option<Vec<usize>>> = Vec::with_capacity(edges.len());
    for e in edges {
        if e.from >= n || e.to >= n || item_rank[e.to] <= item_rank[e.from] {
            chains.push(None);
            continue;
        }
        let mut chain = vec![e.from];
        for r in item_rank[e.from] + 1..item_rank[e.to] {
            chain.push(rank_of.len());
            rank_of.push(r);
            width.push(DUMMY_WIDTH);
        }
        chain.push(e.to);
        chains.push(Some(chain));
    }
    let total = rank_of.len();
    let is_dummy = |v: usize| v >= n;
    // where each segment attaches: fractions for ordering, pixels for placement
    let attach = |v: usize, at: f32| -> (f32, f32) {
        if is_dummy(v) || width[v] <= 0.0 {
            (0.0, width[v] / 2.0)
        } else {
            (at / width[v] - 0.5, at)
        }
    };
    let mut up: Vec<Vec<Link>> = vec![Vec::new(); total];
    let mut down: Vec<Vec<Link>> = vec![Vec::new(); total];
    let mut pull_up: Vec<Vec<Pull>> = vec![Vec::new(); total];
    let mut pull_down: Vec<Vec<Pull>> = vec![Vec::new(); total];
    // a main path: an edge that is its source's first and its target's first
    let primary = |a: usize, b: usize| succs[a].first() == Some(&b) && preds[b].first() == Some(&a);
    for (e, chain) in edges.iter().zip(&chains) {
        let Some(chain) = chain else { continue };
        let main = primary(e.from, e.to);
        for (k, pair) in chain.windows(2).enumerate() {
            let (a, b) = (pair[0], pair[1]);
            let (fa, pa) = attach(a, if k == 0 { e.from_x } else { 0.0 });
            let (fb, pb) = attach(b, if k + 2 == chain.len() { e.to_x } else { 0.0 });
            down[a].push(Link {
                other: b,
                mine: fa,
                theirs: fb,
            });
            up[b].push(Link {
                other: a,
                mine: fb,
                theirs: fa,
            });
            let mut w = segment_weight(is_dummy(a), is_dummy(b));
            if main {
                w *= 100.0;
            }
            pull_down[a].push(Pull {
                other: b,
                mine: pa,
                theirs: pb,
                weight: w,
            });
            pull_up[b].push(Pull {
                other: a,
                mine: pb,
                theirs: pa,
                weight: w,
            });
        }
    }
    let n_ranks = rank_of.iter().max().map_or(0, |m| m + 1);
    // two starts, as dot makes: depth first from the top and from the bottom; the better wins
    let mut ranks: Vec<Vec<usize>> = vec![Vec::new(); n_ranks];
    initial_order(&rank_of, &down, (0..n).collect(), &mut ranks);
    let crossings = order::order(&mut ranks, &up, &down);
    if crossings > 0 {
        let mut from_below: Vec<Vec<usize>> = vec![Vec::new(); n_ranks];
        let mut starts: Vec<usize> = (0..n).collect();
        starts.sort_by_key(|&v| std::cmp::Reverse(rank_of[v]));
        initial_order(&rank_of, &up, starts, &mut from_below);
        if order::order(&mut from_below, &up, &down) < crossings {
            ranks = from_below;
        }
    }
    let gap = |a: usize, b: usize| {
        if is_dummy(a) || is_dummy(b) {
            sp.dummy_gap
        } else {
            sp.item_gap
        }
    };
    let mut x = place::place(&ranks, &width, &pull_up, &pull_down, &gap);
    // bands
    let mut band_h = vec![0f32; n_ranks];
    for v in 0..n {
        band_h[rank_of[v]] = band_h[rank_of[v]].max(items[v].h);
    }
    let only = |r: usize, kind: ItemKind| {
        !ranks[r].is_empty() && ranks[r].iter().all(|&v| v < n && items[v].kind == kind)
    };
    let mut band_y = vec![0f32; n_ranks];
    for r in 1..n_ranks {
        let g = if only(r - 1, ItemKind::InPort) || only(r, ItemKind::OutPort) {
            sp.port_gap
        } else {
            sp.rank_gap
        };
        band_y[r] = band_y[r - 1] + band_h[r - 1] + g;
    }
    let min_x = x.iter().copied().fold(f32::INFINITY, f32::min);
    if min_x.is_finite() {
        for v in &mut x {
            *v -= min_x;
        }
    }
    let pos: Vec<[f32; 2]> = (0..n).map(|v| [x[v], band_y[rank_of[v]]]).collect();
    let routes = edges
        .iter()
        .zip(&chains)
        .map(|(e, chain)| {
            let start = [
                pos.get(e.from).map_or(0.0, |p| p[0]) + e.from_x,
                pos.get(e.from).map_or(0.0, |p| p[1]) + items.get(e.from).map_or(0.0, |i| i.h),
            ];
            let end = [
                pos.get(e.to).map_or(0.0, |p| p[0]) + e.to_x,
                pos.get(e.to).map_or(0.0, |p| p[1]),
            ];
            let mut pts = vec![start];
            if let Some(chain) = chain {
                let r0 = rank_of[e.from];
                pts.push([start[0], band_y[r0] + band_h[r0]]);
                for &d in &chain[1..chain.len() - 1] {
                    let (cx, r) = (x[d] + DUMMY_WIDTH / 2.0, rank_of[d]);
                    pts.push([cx, band_y[r]]);
                    pts.push([cx, band_y[r] + band_h[r]]);
                }
            }
            pts.push(end);
            simplify(pts)
        })
        .collect();
    let right = (0..total).map(|v| x[v] + width[v]).fold(0f32, f32::max);
    let bottom = (0..n_ranks).last().map_or(0.0, |r| band_y[r] + band_h[r]);
    LevelLayout {
        pos,
        routes,
        size: [right, bottom],
        widths: items.iter().map(|i| i.w).collect(),
    }
}

/// Ranks filled in depth-first order along `links` from `starts` in turn: a chain starts
/// together.
fn initial_order(
    rank_of: &[usize],
    links: &[Vec<Link>],
    starts: Vec<usize>,
    ranks: &mut [Vec<usize>],
) {
    let mut seen = vec![false; rank_of.len()];
    let mut stack = Vec::new();
    for start in starts {
        if seen[start] {
            continue;
        }
        stack.push(start);
        while let Some(v) = stack.pop() {
            if seen[v] {
                continue;
            }
            seen[v] = true;
            ranks[rank_of[v]].push(v);
            for l in links[v].iter().rev() {
                if !seen[l.other] {
                    stack.push(l.other);
                }
            }
        }
    }
    for (v, s) in seen.iter().enumerate() {
        if !s {
            ranks[rank_of[v]].push(v);
        }
    }
}

/// Drops repeated points and the middle of three points on one vertical or horizontal line.
fn simplify(pts: Vec<[f32; 2]>) -> Vec<[f32; 2]> {
    let mut out: Vec<[f32; 2]> = Vec::with_capacity(pts.len());
    for p in pts {
        if out
            .last()
            .is_some_and(|q| (q[0] - p[0]).abs() < 1e-3 && (q[1] - p[1]).abs() < 1e-3)
        {
            continue;
        }
        if out.len() >= 2 {
            let (a, b) = (out[out.len() - 2], out[out.len() - 1]);
            let vertical = (a[0] - b[0]).abs() < 1e-3 && (b[0] - p[0]).abs() < 1e-3;
            let horizontal = (a[1] - b[1]).abs() < 1e-3 && (b[1] - p[1]).abs() < 1e-3;
            if vertical || horizontal {
                out.pop();
            }
        }
        out.push(p);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SP: Spacing = Spacing {
        rank_gap: 30.0,
        port_gap: 20.0,
        item_gap: 20.0,
        dummy_gap: 10.0,
    };

    fn node(w: f32) -> Item {
        Item {
            w,
            h: 30.0,
            kind: ItemKind::Normal,
        }
    }

    fn edge(from: usize, to: usize, w: f32) -> LevelEdge {
        LevelEdge {
            from,
            from_x: w / 2.0,
            to,
            to_x: w / 2.0,
        }
    }

    #[test]
    fn a_skip_edge_runs_beside_the_chain_it_skips() {
        // 0 → 1 → 2 → 3 and 0 → 3: the skip must not be drawn through 1 or 2
        let items = [node(60.0); 4];
        let edges = [
            edge(0, 1, 60.0),
            edge(1, 2, 60.0),
            edge(2, 3, 60.0),
            edge(0, 3, 60.0),
        ];
        let l = lay_out(&items, &edges, &SP);
        let skip = &l.routes[3];
        assert!(skip.len() > 2, "{skip:?}");
        for v in [1, 2] {
            let [x, y] = l.pos[v];
            for p in skip {
                let inside = p[0] > x && p[0] < x + 60.0 && p[1] > y && p[1] < y + 30.0;
                assert!(
                    !inside,
                    "skip point {p:?} inside node {v} at {:?}",
                    l.pos[v]
                );
            }
            assert!(skip
                .iter()
                .all(|p| p[0] <= x || p[0] >= x + 60.0 || p[1] <= y || p[1] >= y + 30.0));
        }
        // the main path stays one column
        assert!((l.pos[1][0] - l.pos[0][0]).abs() < 1.0, "{:?}", l.pos);
        assert!((l.pos[3][0] - l.pos[2][0]).abs() < 1.0, "{:?}", l.pos);
    }
}
