//! The layout of a whole graph with its modules, as nested boxes (as Model Explorer draws a
//! model): each module instance is laid out on its own, with ports on its top and bottom edges
//! where edges enter and leave it, and is then one box of its parent's level. A module's box
//! therefore holds its nodes and nothing else, boxes nest and never partly overlap, and a folded
//! module is the same box drawn small. A module used in several places (one `nn.ReLU6` shared by
//! three stages), or whose nodes a path leaves and re-enters, is split into instances that are
//! each convex (no path from the instance back into it through other nodes), so contracting them
//! keeps the graph acyclic. A module instance of a single node is that node (no second frame).

use std::collections::{BTreeSet, HashMap};

use etscope_core::ir::{Graph, NodeId, ValueId};

use super::level::{self, Item, ItemKind, LevelEdge, LevelLayout, Spacing};
use super::NODE_HEIGHT;

/// Horizontal padding inside a module's box.
pub const MODULE_PAD: f32 = 10.0;
/// Height of a module box's name strip.
pub const HEADER: f32 = 20.0;
/// Width of a port (the column an edge enters or leaves a module in).
const PORT_WIDTH: f32 = 2.0;
const SPACING: Spacing = Spacing {
    rank_gap: 22.0,
    port_gap: HEADER + 12.0,
    item_gap: 24.0,
    dummy_gap: 12.0,
};

/// What occupies one drawn box of the layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// An IR node.
    Node(NodeId),
    /// A folded module instance (index into the caller's module list).
    Module(usize),
}

/// An edge as drawn: from a box's bottom to another's top, through `points`.
#[derive(Debug, Clone, PartialEq)]
pub struct DrawnEdge {
    /// Slots at its ends.
    pub from: usize,
    pub to: usize,
    /// Graph nodes at its ends (inside folded modules: the nodes the edge really joins).
    pub from_node: NodeId,
    pub to_node: NodeId,
    /// The tensor it carries.
    pub value: ValueId,
    pub points: Vec<[f32; 2]>,
    /// min x, min y, max x, max y of `points` (the canvas culls by it every frame).
    pub bounds: [f32; 4],
}

/// An unfolded module instance's box.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Index into the caller's module list.
    pub module: usize,
    /// x, y (top-left), w, h.
    pub rect: [f32; 4],
    /// Nesting depth (1: a child of the whole model).
    pub depth: usize,
}

/// What the caller knows of its modules (folding and box sizes).
pub struct Modules<'a> {
    /// Module path → index of the caller's module list.
    pub index: HashMap<&'a str, usize>,
    /// Least width of an unfolded module's box (its name must fit the strip).
    pub header_width: Vec<f32>,
    /// Width of a folded module's box.
    pub folded_width: Vec<f32>,
    /// Folded module paths.
    pub folded: &'a BTreeSet<String>,
}

/// The drawn geometry of a graph.
#[derive(Debug, Clone, Default)]
pub struct GraphLayout {
    pub slots: Vec<Slot>,
    /// Per slot: x, y (top-left), w, h.
    pub rects: Vec<[f32; 4]>,
    /// Graph node → slot.
    pub slot_of: Vec<usize>,
    pub edges: Vec<DrawnEdge>,
    /// Unfolded module boxes, outer before inner.
    pub frames: Vec<Frame>,
    /// min x, min y, max x, max y of everything drawn.
    pub bounds: [f32; 4],
    /// Slots sorted by their top edge (for culling and hit tests).
    pub by_y: Vec<usize>,
}

enum Member {
    Node(NodeId),
    Piece(usize),
}

struct Piece {
    module: Option<usize>,
    parent: Option<usize>,
    /// Index of this piece among its parent's members.
    member_index: usize,
    depth: usize,
    members: Vec<Member>,
    folded: bool,
}

/// A graph edge (source, target, tensor) and the level edges it is drawn through, in order:
/// (piece, index of the piece's level edge).
type EdgePath = (NodeId, NodeId, ValueId, Vec<(usize, usize)>);

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum End {
    Member(usize),
    InPort,
    OutPort,
}

/// An edge of one piece's level: its ends and the node whose tensor it carries (the port key).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct SymEdge {
    from: End,
    to: End,
    key: NodeId,
}

struct PieceGeometry {
    size: [f32; 2],
    /// Where the level's content starts inside the box.
    offset: [f32; 2],
    level: LevelLayout,
    in_x: HashMap<NodeId, f32>,
    out_x: HashMap<NodeId, f32>,
    item_of_member: Vec<usize>,
}

impl GraphLayout {
    /// Lays out `graph`, nodes `widths` wide, with its modules (folded as `modules` says).
    pub fn new(graph: &Graph, widths: &[f32], modules: &Modules<'_>) -> GraphLayout {
        let n = graph.nodes.len();
        if n == 0 {
            return GraphLayout::default();
        }
        let mut succ: Vec<Vec<NodeId>> = vec![Vec::new(); n];
        let mut pred: Vec<Vec<NodeId>> = vec![Vec::new(); n];
        let mut pairs: Vec<(NodeId, NodeId, ValueId)> = Vec::new();
        let mut seen_pair = std::collections::HashSet::new();
        for e in &graph.edges {
            if e.from < n && e.to < n && e.from != e.to && seen_pair.insert((e.from, e.to)) {
                succ[e.from].push(e.to);
                pred[e.to].push(e.from);
                pairs.push((e.from, e.to, e.value));
            }
        }
        let order = super::rank::topological_order(n, &succ, &pred);
        let mut tpos = vec![0usize; n];
        for (i, &v) in order.iter().enumerate() {
            tpos[v] = i;
        }
        let mut tree = Tree {
            graph,
            modules,
            succ: &succ,
            tpos: &tpos,
            pieces: Vec::new(),
            stamp: vec![0; n],
            reach: vec![0; n],
            generation: 0,
        };
        tree.build((0..n).collect(), 0, None, None, 0);
        let pieces = tree.pieces;
        // where each node is an item: its piece and member (a folded piece's nodes: the piece)
        let mut holder = vec![(0usize, 0usize); n];
        for (p, piece) in pieces.iter().enumerate() {
            if piece.folded {
                continue;
            }
            for (i, m) in piece.members.iter().enumerate() {
                match *m {
                    Member::Node(v) => holder[v] = (p, i),
                    Member::Piece(c) if pieces[c].folded => {
                        for v in collect_nodes(&pieces, c) {
                            holder[v] = (p, i);
                        }
                    }
                    Member::Piece(_) => {}
                }
            }
        }
        // each graph edge as symbolic edges of the levels it passes through
        let mut sym: Vec<Vec<SymEdge>> = vec![Vec::new(); pieces.len()];
        let mut sym_index: Vec<HashMap<SymEdge, usize>> = vec![HashMap::new(); pieces.len()];
        let mut paths: Vec<EdgePath> = Vec::new();
        let mut add = |p: usize, e: SymEdge, path: &mut Vec<(usize, usize)>| {
            let k = *sym_index[p].entry(e).or_insert_with(|| {
                sym[p].push(e);
                sym[p].len() - 1
            });
            path.push((p, k));
        };
        for &(u, v, value) in &pairs {
            let (hu, hv) = (holder[u], holder[v]);
            if hu == hv {
                continue; // inside one folded module
            }
            let lca = lowest_common(&pieces, hu.0, hv.0);
            let mut path = Vec::new();
            // up from u's piece to the common one
            let (mut p, mut m) = hu;
            while p != lca {
                add(
                    p,
                    SymEdge {
                        from: End::Member(m),
                        to: End::OutPort,
                        key: u,
                    },
                    &mut path,
                );
                m = pieces[p].member_index;
                p = pieces[p].parent.unwrap_or(lca);
            }
            let mu = m;
            // down into v's piece, collected bottom-up, then reversed
            let mut down = Vec::new();
            let (mut q, mut mv) = hv;
            while q != lca {
                down.push((
                    q,
                    SymEdge {
                        from: End::InPort,
                        to: End::Member(mv),
                        key: u,
                    },
                ));
                mv = pieces[q].member_index;
                q = pieces[q].parent.unwrap_or(lca);
            }
            add(
                lca,
                SymEdge {
                    from: End::Member(mu),
                    to: End::Member(mv),
                    key: u,
                },
                &mut path,
            );
            for (q, e) in down.into_iter().rev() {
                add(q, e, &mut path);
            }
            paths.push((u, v, value, path));
        }
        // lay out pieces innermost first (a piece is created before its children)
        let mut geometry: Vec<Option<PieceGeometry>> = (0..pieces.len()).map(|_| None).collect();
        for p in (0..pieces.len()).rev() {
            if pieces[p].folded {
                continue;
            }
            let g = lay_out_piece(p, &pieces, &sym[p], &geometry, widths, modules);
            geometry[p] = Some(g);
        }
        assemble(&pieces, &geometry, &paths, n)
    }

    /// Centre of node `n`'s box (its own, or its folded module's).
    pub fn center_of(&self, n: NodeId) -> Option<[f32; 2]> {
        let r = self.rects.get(*self.slot_of.get(n)?)?;
        Some([r[0] + r[2] / 2.0, r[1] + r[3] / 2.0])
    }

    /// Slots whose boxes may meet the horizontal band `y0..y1` (by their top edge).
    pub fn slots_between(&self, y0: f32, y1: f32) -> &[usize] {
        let first = self
            .by_y
            .partition_point(|&s| self.rects[s][1] + self.rects[s][3] < y0 - NODE_HEIGHT);
        let last = self.by_y.partition_point(|&s| self.rects[s][1] <= y1);
        self.by_y.get(first..last.max(first)).unwrap_or(&[])
    }

    /// The slot whose box holds world point `p`.
    pub fn slot_at(&self, p: [f32; 2]) -> Option<usize> {
        self.slots_between(p[1], p[1]).iter().copied().find(|&s| {
            let r = self.rects[s];
            p[0] >= r[0] && p[0] <= r[0] + r[2] && p[1] >= r[1] && p[1] <= r[1] + r[3]
        })
    }
}

struct Tree<'a> {
    graph: &'a Graph,
    modules: &'a Modules<'a>,
    succ: &'a [Vec<NodeId>],
    tpos: &'a [usize],
    pieces: Vec<Piece>,
    stamp: Vec<u32>,
    reach: Vec<u32>,
    generation: u32,
}

impl Tree<'_> {
    /// The module path of node `v` at nesting `depth` (0: outermost), empty paths skipped.
    fn path_at(&self, v: NodeId, depth: usize) -> Option<&str> {
        self.graph.nodes[v]
            .module_stack
            .iter()
            .map(|f| f.path.as_str())
            .filter(|p| !p.is_empty())
            .nth(depth)
    }

    fn build(
        &mut self,
        nodes: Vec<NodeId>,
        depth: usize,
        module: Option<usize>,
        parent: Option<usize>,
        member_index: usize,
    ) -> usize {
        let id = self.pieces.len();
        self.pieces.push(Piece {
            module,
            parent,
            member_index,
            depth,
            members: Vec::new(),
            folded: false,
        });
        // the next level's modules, in order of first appearance
        let mut groups: Vec<(String, Vec<NodeId>)> = Vec::new();
        let mut group_of: HashMap<String, usize> = HashMap::new();
        let mut slots: Vec<Result<NodeId, usize>> = Vec::new();
        for &v in &nodes {
            match self.path_at(v, depth) {
                None => slots.push(Ok(v)),
                Some(path) => {
                    let g = match group_of.get(path) {
                        Some(&g) => g,
                        None => {
                            groups.push((path.to_string(), Vec::new()));
                            group_of.insert(path.to_string(), groups.len() - 1);
                            slots.push(Err(groups.len() - 1));
                            groups.len() - 1
                        }
                    };
                    groups[g].1.push(v);
                }
            }
        }
        let mut members = Vec::new();
        for slot in slots {
            match slot {
                Ok(v) => members.push(Member::Node(v)),
                Err(g) => {
                    let (path, set) = std::mem::take(&mut groups[g]);
                    let index = self.modules.index.get(path.as_str()).copied();
                    for piece in self.split(set) {
                        if piece.len() == 1 || index.is_none() {
                            if index.is_none() {
                                // a module the caller does not list: its nodes stand alone
                                for &v in &piece {
                                    members.push(Member::Node(v));
                                }
                            } else {
                                members.push(Member::Node(piece[0]));
                            }
                            continue;
                        }
                        let at = members.len();
                        let child = if self.modules.folded.contains(&path) {
                            let c = self.pieces.len();
                            self.pieces.push(Piece {
                                module: index,
                                parent: Some(id),
                                member_index: at,
                                depth: depth + 1,
                                members: piece.into_iter().map(Member::Node).collect(),
                                folded: true,
                            });
                            c
                        } else {
                            self.build(piece, depth + 1, index, Some(id), at)
                        };
                        members.push(Member::Piece(child));
                    }
                }
            }
        }
        self.pieces[id].members = members;
        id
    }

    /// Splits a module's nodes into convex, connected instances, in topological order.
    fn split(&mut self, set: Vec<NodeId>) -> Vec<Vec<NodeId>> {
        let mut out = Vec::new();
        for piece in self.convex_pieces(set) {
            let parts = self.components(&piece);
            if parts.len() == 1 {
                out.push(piece);
            } else {
                for part in parts {
                    out.extend(self.split(part));
                }
            }
        }
        out
    }

    fn next_generation(&mut self) -> u32 {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.reach.iter_mut().for_each(|s| *s = 0);
            self.generation = 1;
        }
        self.generation
    }

    /// The nodes no path leaving the set reaches form the first piece; the rest are split again.
    fn convex_pieces(&mut self, mut rest: Vec<NodeId>) -> Vec<Vec<NodeId>> {
        rest.sort_by_key(|&v| self.tpos[v]);
        let mut out = Vec::new();
        while !rest.is_empty() {
            let g = self.next_generation();
            for &v in &rest {
                self.stamp[v] = g;
            }
            let last = rest.iter().map(|&v| self.tpos[v]).max().unwrap_or(0);
            let mut stack: Vec<NodeId> = Vec::new();
            for &v in &rest {
                for &s in &self.succ[v] {
                    if self.stamp[s] != g && self.tpos[s] < last && self.reach[s] != g {
                        self.reach[s] = g;
                        stack.push(s);
                    }
                }
            }
            while let Some(w) = stack.pop() {
                for &s in &self.succ[w] {
                    if self.tpos[s] <= last && self.reach[s] != g {
                        self.reach[s] = g;
                        stack.push(s);
                    }
                }
            }
            let (tail, head): (Vec<NodeId>, Vec<NodeId>) =
                rest.iter().partition(|&&v| self.reach[v] == g);
            if tail.is_empty() || head.is_empty() {
                out.push(rest);
                break;
            }
            out.push(head);
            rest = tail;
        }
        out
    }

    /// Weakly connected parts of a set (edges inside it only).
    fn components(&mut self, set: &[NodeId]) -> Vec<Vec<NodeId>> {
        let local: HashMap<NodeId, usize> = set.iter().enumerate().map(|(i, &v)| (v, i)).collect();
        let mut parent: Vec<usize> = (0..set.len()).collect();
        fn find(p: &mut [usize], mut i: usize) -> usize {
            while p[i] != i {
                p[i] = p[p[i]];
                i = p[i];
            }
            i
        }
        for (i, &v) in set.iter().enumerate() {
            for s in &self.succ[v] {
                if let Some(&j) = local.get(s) {
                    let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                    if a != b {
                        parent[a.max(b)] = a.min(b);
                    }
                }
            }
        }
        let mut parts: Vec<Vec<NodeId>> = Vec::new();
        let mut part_of: HashMap<usize, usize> = HashMap::new();
        for (i, &v) in set.iter().enumerate() {
            let r = find(&mut parent, i);
            let k = *part_of.entry(r).or_insert_with(|| {
                parts.push(Vec::new());
                parts.len() - 1
            });
            parts[k].push(v);
        }
        parts
    }
}

fn collect_nodes(pieces: &[Piece], p: usize) -> Vec<NodeId> {
    let mut out = Vec::new();
    let mut stack = vec![p];
    while let Some(q) = stack.pop() {
        for m in &pieces[q].members {
            match *m {
                Member::Node(v) => out.push(v),
                Member::Piece(c) => stack.push(c),
            }
        }
    }
    out
}

fn lowest_common(pieces: &[Piece], mut a: usize, mut b: usize) -> usize {
    while pieces[a].depth > pieces[b].depth {
        a = pieces[a].parent.unwrap_or(0);
    }
    while pieces[b].depth > pieces[a].depth {
        b = pieces[b].parent.unwrap_or(0);
    }
    while a != b {
        a = pieces[a].parent.unwrap_or(0);
        b = pieces[b].parent.unwrap_or(0);
    }
    a
}

fn lay_out_piece(
    p: usize,
    pieces: &[Piece],
    edges: &[SymEdge],
    geometry: &[Option<PieceGeometry>],
    widths: &[f32],
    modules: &Modules<'_>,
) -> PieceGeometry {
    let piece = &pieces[p];
    let mut items: Vec<Item> = Vec::new();
    let mut item_of_member = Vec::with_capacity(piece.members.len());
    for m in &piece.members {
        let (w, h) = match *m {
            Member::Node(v) => (widths.get(v).copied().unwrap_or(60.0), NODE_HEIGHT),
            Member::Piece(c) => match &geometry[c] {
                Some(g) => (g.size[0], g.size[1]),
                None => (
                    pieces[c]
                        .module
                        .and_then(|i| modules.folded_width.get(i).copied())
                        .unwrap_or(120.0),
                    NODE_HEIGHT,
                ),
            },
        };
        item_of_member.push(items.len());
        items.push(Item {
            w,
            h,
            kind: ItemKind::Normal,
        });
    }
    let mut in_item: HashMap<NodeId, usize> = HashMap::new();
    let mut out_item: HashMap<NodeId, usize> = HashMap::new();
    for e in edges {
        for (end, kind, map) in [
            (e.from, ItemKind::InPort, &mut in_item),
            (e.to, ItemKind::OutPort, &mut out_item),
        ] {
            if matches!(end, End::InPort | End::OutPort) && !map.contains_key(&e.key) {
                map.insert(e.key, items.len());
                items.push(Item {
                    w: PORT_WIDTH,
                    h: 0.0,
                    kind,
                });
            }
        }
    }
    let port_x = |end: End, key: NodeId, leaving: bool| -> (usize, f32) {
        match end {
            End::InPort => (in_item[&key], PORT_WIDTH / 2.0),
            End::OutPort => (out_item[&key], PORT_WIDTH / 2.0),
            End::Member(i) => {
                let item = item_of_member[i];
                let centre = items[item].w / 2.0;
                let x = match &piece.members[i] {
                    Member::Piece(c) => geometry[*c].as_ref().and_then(|g| {
                        if leaving {
                            g.out_x.get(&key).copied()
                        } else {
                            g.in_x.get(&key).copied()
                        }
                    }),
                    Member::Node(_) => None,
                };
                (item, x.unwrap_or(centre))
            }
        }
    };
    let level_edges: Vec<LevelEdge> = edges
        .iter()
        .map(|e| {
            let (from, from_x) = port_x(e.from, e.key, true);
            let (to, to_x) = port_x(e.to, e.key, false);
            LevelEdge {
                from,
                from_x,
                to,
                to_x,
            }
        })
        .collect();
    let level = level::lay_out(&items, &level_edges, &SPACING);
    let root = piece.parent.is_none();
    let (mut size, mut offset) = (level.size, [0.0, 0.0]);
    if !root {
        let top = if in_item.is_empty() {
            HEADER + 8.0
        } else {
            0.0
        };
        let bottom = if out_item.is_empty() { MODULE_PAD } else { 0.0 };
        let least = piece
            .module
            .and_then(|i| modules.header_width.get(i).copied())
            .unwrap_or(0.0);
        let w = (level.size[0] + 2.0 * MODULE_PAD).max(least);
        offset = [(w - level.size[0]) / 2.0, top];
        size = [w, top + level.size[1] + bottom];
    }
    let x_of = |item: usize| offset[0] + level.pos[item][0] + PORT_WIDTH / 2.0;
    let in_x = in_item.iter().map(|(&k, &i)| (k, x_of(i))).collect();
    let out_x = out_item.iter().map(|(&k, &i)| (k, x_of(i))).collect();
    PieceGeometry {
        size,
        offset,
        level,
        in_x,
        out_x,
        item_of_member,
    }
}

fn assemble(
    pieces: &[Piece],
    geometry: &[Option<PieceGeometry>],
    paths: &[EdgePath],
    n: usize,
) -> GraphLayout {
    let mut out = GraphLayout {
        slot_of: vec![usize::MAX; n],
        ..GraphLayout::default()
    };
    // each piece's content origin in world coordinates, outer pieces first
    let mut origin = vec![[0f32; 2]; pieces.len()];
    for p in 0..pieces.len() {
        let Some(g) = &geometry[p] else { continue };
        let base = [origin[p][0] + g.offset[0], origin[p][1] + g.offset[1]];
        for (i, m) in pieces[p].members.iter().enumerate() {
            let item = g.item_of_member[i];
            let at = [
                base[0] + g.level.pos[item][0],
                base[1] + g.level.pos[item][1],
            ];
            match *m {
                Member::Node(v) => {
                    out.slot_of[v] = out.slots.len();
                    out.slots.push(Slot::Node(v));
                    out.rects
                        .push([at[0], at[1], widths_of(g, item), NODE_HEIGHT]);
                }
                Member::Piece(c) => match &geometry[c] {
                    Some(cg) => {
                        origin[c] = at;
                        if let Some(module) = pieces[c].module {
                            out.frames.push(Frame {
                                module,
                                rect: [at[0], at[1], cg.size[0], cg.size[1]],
                                depth: pieces[c].depth,
                            });
                        }
                    }
                    None => {
                        let slot = out.slots.len();
                        for v in collect_nodes(pieces, c) {
                            out.slot_of[v] = slot;
                        }
                        out.slots.push(Slot::Module(pieces[c].module.unwrap_or(0)));
                        out.rects
                            .push([at[0], at[1], widths_of(g, item), NODE_HEIGHT]);
                    }
                },
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    for (u, v, value, path) in paths {
        let mut points: Vec<[f32; 2]> = Vec::new();
        for &(p, k) in path {
            let Some(g) = &geometry[p] else { continue };
            let base = [origin[p][0] + g.offset[0], origin[p][1] + g.offset[1]];
            for q in &g.level.routes[k] {
                let w = [base[0] + q[0], base[1] + q[1]];
                if points
                    .last()
                    .is_none_or(|l| (l[0] - w[0]).abs() > 1e-3 || (l[1] - w[1]).abs() > 1e-3)
                {
                    points.push(w);
                }
            }
        }
        let (from, to) = (out.slot_of[*u], out.slot_of[*v]);
        // a folded module's edges that join the same boxes along one route are drawn once
        if !seen.insert((from, to, path.clone())) {
            continue;
        }
        let bounds = points.iter().fold(
            [
                f32::INFINITY,
                f32::INFINITY,
                f32::NEG_INFINITY,
                f32::NEG_INFINITY,
            ],
            |b, p| {
                [
                    b[0].min(p[0]),
                    b[1].min(p[1]),
                    b[2].max(p[0]),
                    b[3].max(p[1]),
                ]
            },
        );
        out.edges.push(DrawnEdge {
            from,
            to,
            from_node: *u,
            to_node: *v,
            value: *value,
            points,
            bounds,
        });
    }
    let mut b = [
        f32::INFINITY,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NEG_INFINITY,
    ];
    let mut grow = |x0: f32, y0: f32, x1: f32, y1: f32| {
        b = [b[0].min(x0), b[1].min(y0), b[2].max(x1), b[3].max(y1)];
    };
    for r in out.rects.iter().chain(out.frames.iter().map(|f| &f.rect)) {
        grow(r[0], r[1], r[0] + r[2], r[1] + r[3]);
    }
    for e in out.edges.iter().filter(|e| !e.points.is_empty()) {
        grow(e.bounds[0], e.bounds[1], e.bounds[2], e.bounds[3]);
    }
    out.bounds = if b[0].is_finite() { b } else { [0.0; 4] };
    let mut by_y: Vec<usize> = (0..out.slots.len()).collect();
    by_y.sort_by(|&a, &c| out.rects[a][1].total_cmp(&out.rects[c][1]));
    out.by_y = by_y;
    out
}

fn widths_of(g: &PieceGeometry, item: usize) -> f32 {
    g.level.widths[item]
}
