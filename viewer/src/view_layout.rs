//! The layout actually drawn: the stage's graph with folded modules drawn as one box each (real
//! folding — the space is reclaimed and the graph is laid out again), unfolded modules as the
//! boxes around their members. Pure and testable without a GUI.

use std::collections::BTreeSet;
use std::sync::Arc;

use etscope_core::ir::NodeId;

use crate::layout::GraphLayout;
pub use crate::layout::Slot;
pub use crate::stage_view::module_label;
use crate::stage_view::StageView;

/// The drawn layout of a stage for one set of folded modules.
#[derive(Debug, Clone)]
pub struct ViewLayout {
    /// Shared: the canvas holds it for a frame without copying it.
    pub layout: Arc<GraphLayout>,
    /// The folded set this was built for.
    pub collapsed: BTreeSet<String>,
}

impl ViewLayout {
    /// Builds the drawn layout; with nothing folded it is the stage's own layout.
    pub fn new(stage: &StageView, collapsed: &BTreeSet<String>) -> ViewLayout {
        let layout = if collapsed.is_empty() {
            Arc::clone(&stage.layout)
        } else {
            Arc::new(stage.lay_out(collapsed))
        };
        ViewLayout {
            layout,
            collapsed: collapsed.clone(),
        }
    }

    /// Where node `n` is drawn (the centre of its own box, or of its folded module's).
    pub fn pos_of(&self, n: NodeId) -> Option<[f32; 2]> {
        self.layout.center_of(n)
    }
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
    fn folding_a_module_draws_its_nodes_as_one_box_and_relays_out() {
        let s = stage();
        let all = ViewLayout::new(&s, &BTreeSet::new());
        assert_eq!(all.layout.slots.len(), s.graph.nodes.len());
        let conv = s
            .modules
            .iter()
            .position(|m| m.path == "conv")
            .expect("conv module");
        let folded = ViewLayout::new(&s, &["conv".to_string()].into_iter().collect());
        let l = &folded.layout;
        if s.modules[conv].nodes.len() > 1 {
            assert_eq!(
                l.slots.len(),
                s.graph.nodes.len() - s.modules[conv].nodes.len() + 1
            );
            assert!(l.slots.contains(&Slot::Module(conv)));
            for &n in &s.modules[conv].nodes {
                assert_eq!(l.slots[l.slot_of[n]], Slot::Module(conv));
            }
        }
        assert!(l.edges.iter().all(|e| e.from != e.to));
        assert!(
            l.frames.iter().all(|f| f.module != conv),
            "a folded module has no frame"
        );
    }
}
