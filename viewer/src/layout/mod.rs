//! Layered layout of dataflow graphs, as Graphviz `dot` draws them and as Model Explorer nests
//! modules: ranks top to bottom ([`rank`]), long edges through dummy positions of their own,
//! crossings reduced ([`order`]), items placed ([`place`]), one level at a time ([`level`]), and
//! modules as nested boxes with ports ([`compound`]).
//!
//! Pure geometry, tested without a GUI and shared by the graph canvas, the SVG export,
//! `etscope graph --layout --json` and the benchmarks.

pub mod compound;
pub mod level;
pub mod order;
pub mod place;
pub mod rank;

pub use compound::{DrawnEdge, Frame, GraphLayout, Modules, Slot};

/// What an item of a level is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    /// A node or a module's box.
    Normal,
    /// Where an edge from outside enters the level (the first row).
    InPort,
    /// Where an edge leaves the level (the last row).
    OutPort,
}

/// Node box height.
pub const NODE_HEIGHT: f32 = 26.0;
/// Least horizontal gap between two boxes of a rank.
pub const NODE_GAP: f32 = 24.0;

/// A plain layered layout of `widths.len()` boxes joined by `edges` (no modules): the centre of
/// each box.
pub fn layered(widths: &[f32], edges: &[(usize, usize)]) -> Vec<[f32; 2]> {
    let items: Vec<level::Item> = widths
        .iter()
        .map(|&w| level::Item {
            w,
            h: NODE_HEIGHT,
            kind: level::ItemKind::Normal,
        })
        .collect();
    let level_edges: Vec<level::LevelEdge> = edges
        .iter()
        .filter(|&&(a, b)| a < widths.len() && b < widths.len())
        .map(|&(a, b)| level::LevelEdge {
            from: a,
            from_x: widths[a] / 2.0,
            to: b,
            to_x: widths[b] / 2.0,
        })
        .collect();
    let l = level::lay_out(
        &items,
        &level_edges,
        &level::Spacing {
            rank_gap: 34.0,
            port_gap: 34.0,
            item_gap: NODE_GAP,
            dummy_gap: 12.0,
        },
    );
    l.pos
        .iter()
        .zip(widths)
        .map(|(p, w)| [p[0] + w / 2.0, p[1] + NODE_HEIGHT / 2.0])
        .collect()
}
