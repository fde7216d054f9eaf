//! The layout actually drawn: the stage's graph with collapsed modules folded into one box each
//! (real collapse — the space is reclaimed and the graph is laid out again), plus the boxes of
//! the expanded modules around their members. Pure and testable without a GUI.

use std::collections::BTreeSet;

use etscope_core::ir::{NodeId, ValueId};

use crate::document::StageView;
use crate::layout::{layered, Layout, NODE_HEIGHT};

/// What occupies one position of the drawn layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// An IR node.
    Node(NodeId),
    /// A collapsed module (index into `StageView::modules`).
    Module(usize),
}

/// An edge of the drawn layout: slots and the tensor it carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotEdge {
    pub from: usize,
    pub to: usize,
    pub value: ValueId,
}

/// An expanded module's frame in the drawn layout.
#[derive(Debug, Clone, PartialEq)]
pub struct ModuleFrame {
    /// Index into `StageView::modules`.
    pub module: usize,
    /// min x, min y, max x, max y of its members (layout coordinates).
    pub bounds: [f32; 4],
}

/// The drawn layout of a stage for one set of collapsed modules.
#[derive(Debug, Clone)]
pub struct ViewLayout {
    /// Shared: the canvas holds it for a frame without copying it.
    pub layout: std::sync::Arc<Layout>,
    pub slots: Vec<Slot>,
    /// IR node → slot.
    pub slot_of: Vec<usize>,
    pub edges: Vec<SlotEdge>,
    pub frames: Vec<ModuleFrame>,
    /// The collapsed set this was built for.
    pub collapsed: BTreeSet<String>,
}

fn label_width(chars: usize) -> f32 {
    (chars as f32 * 7.0 + 20.0).clamp(48.0, 320.0)
}

/// The text of a collapsed module box.
pub fn module_label(stage: &StageView, m: usize) -> String {
    let g = &stage.modules[m];
    format!("+ {} ({}, {} ops)", g.path, g.short_class(), g.nodes.len())
}

impl ViewLayout {
    /// Builds the drawn layout; with nothing collapsed it is the stage's own layout.
    pub fn new(stage: &StageView, collapsed: &BTreeSet<String>) -> ViewLayout {
        let n = stage.graph.nodes.len();
        // outermost collapsed module of each node
        let module_index = |path: &str| stage.modules.iter().position(|m| m.path == path);
        let mut slots: Vec<Slot> = Vec::new();
        let mut slot_of = vec![usize::MAX; n];
        let mut module_slot: Vec<Option<usize>> = vec![None; stage.modules.len()];
        for node in &stage.graph.nodes {
            let folded = node
                .module_stack
                .iter()
                .find(|f| collapsed.contains(&f.path))
                .and_then(|f| module_index(&f.path));
            slot_of[node.id] = match folded {
                Some(m) => *module_slot[m].get_or_insert_with(|| {
                    slots.push(Slot::Module(m));
                    slots.len() - 1
                }),
                None => {
                    slots.push(Slot::Node(node.id));
                    slots.len() - 1
                }
            };
        }
        let mut edges: Vec<SlotEdge> = stage
            .graph
            .edges
            .iter()
            .map(|e| SlotEdge {
                from: slot_of[e.from],
                to: slot_of[e.to],
                value: e.value,
            })
            .filter(|e| e.from != e.to)
            .collect();
        edges.sort_by_key(|e| (e.from, e.to, e.value));
        edges.dedup_by_key(|e| (e.from, e.to));
        let layout = if collapsed.is_empty() {
            stage.layout.clone()
        } else {
            let widths: Vec<f32> = slots
                .iter()
                .map(|s| match *s {
                    Slot::Node(v) => stage.layout.width[v],
                    Slot::Module(m) => label_width(module_label(stage, m).chars().count()),
                })
                .collect();
            let pairs: Vec<(usize, usize)> = edges.iter().map(|e| (e.from, e.to)).collect();
            layered(&widths, &pairs)
        };
        let frames = frames(stage, &layout, &slots, &slot_of, collapsed);
        ViewLayout {
            layout: std::sync::Arc::new(layout),
            slots,
            slot_of,
            edges,
            frames,
            collapsed: collapsed.clone(),
        }
    }

    /// Where node `n` is drawn (its own box, or its collapsed module's).
    pub fn pos_of(&self, n: NodeId) -> Option<[f32; 2]> {
        self.slot_of
            .get(n)
            .and_then(|&s| self.layout.pos.get(s))
            .copied()
    }
}

/// Frames of the expanded modules that are not inside a collapsed one.
fn frames(
    stage: &StageView,
    layout: &Layout,
    slots: &[Slot],
    slot_of: &[usize],
    collapsed: &BTreeSet<String>,
) -> Vec<ModuleFrame> {
    let inside_collapsed = |path: &str| {
        collapsed
            .iter()
            .any(|c| path == c || path.starts_with(&format!("{c}.")))
    };
    let mut out = Vec::new();
    for (mi, m) in stage.modules.iter().enumerate() {
        if inside_collapsed(&m.path) {
            continue;
        }
        let mut b = [
            f32::INFINITY,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NEG_INFINITY,
        ];
        for &n in &m.nodes {
            let s = slot_of[n];
            let (p, w) = (layout.pos[s], layout.width[s]);
            let h = NODE_HEIGHT / 2.0;
            b = [
                b[0].min(p[0] - w / 2.0),
                b[1].min(p[1] - h),
                b[2].max(p[0] + w / 2.0),
                b[3].max(p[1] + h),
            ];
        }
        if b[0].is_finite() && slots.len() > 1 {
            out.push(ModuleFrame {
                module: mi,
                bounds: b,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use etscope_core::formats::etrecord::ETRecord;
    use etscope_core::ir::from_export::graph_from_export;

    fn stage() -> StageView {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/tiny_conv_relu_linear/model_fp32.etrecord");
        let rec = ETRecord::parse(&std::fs::read(p).expect("fixture")).expect("etrecord");
        let st = rec.stage("exported").expect("stage");
        StageView::new(
            "exported",
            graph_from_export(&st.graph, "exported", "forward"),
        )
    }

    #[test]
    fn collapsing_a_module_folds_its_nodes_into_one_slot_and_relays_out() {
        let s = stage();
        let all = ViewLayout::new(&s, &BTreeSet::new());
        assert_eq!(all.slots.len(), s.graph.nodes.len());
        let conv = s
            .modules
            .iter()
            .position(|m| m.path == "conv")
            .expect("conv module");
        let folded = ViewLayout::new(&s, &["conv".to_string()].into_iter().collect());
        assert_eq!(
            folded.slots.len(),
            s.graph.nodes.len() - s.modules[conv].nodes.len() + 1
        );
        assert!(folded.slots.contains(&Slot::Module(conv)));
        for &n in &s.modules[conv].nodes {
            assert_eq!(folded.slots[folded.slot_of[n]], Slot::Module(conv));
        }
        assert!(folded.edges.iter().all(|e| e.from != e.to));
        assert!(
            folded.frames.iter().all(|f| f.module != conv),
            "a collapsed module has no frame"
        );
    }
}
