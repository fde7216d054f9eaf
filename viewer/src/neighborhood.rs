//! The selected node's neighbourhood (its producers and consumers, one hop) as a small
//! interactive egui_graphs view, laid out with the same layered layout as the main canvas.
//! Clicking a neighbour selects it in the main view.

use crate::category::CategoryStyle as _;
use egui::{Pos2, Ui};
use egui_graphs::{
    GraphChange, GraphView, Layout, LayoutState, SettingsInteraction, SettingsNavigation,
    SettingsStyle,
};
use etscope_core::ir::NodeId;
use petgraph::stable_graph::{NodeIndex, StableGraph};
use serde::{Deserialize, Serialize};

use crate::document::StageView;
use crate::layout::layered;

/// A layout that keeps the positions it was given.
#[derive(Debug, Default)]
pub struct Fixed;

/// State of [`Fixed`] (none).
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct FixedState;

impl LayoutState for FixedState {}

impl Layout<FixedState> for Fixed {
    fn from_state(_: FixedState) -> impl Layout<FixedState> {
        Fixed
    }

    fn next<N, E, Ty, Ix, Dn, De>(
        &mut self,
        _: &mut egui_graphs::Graph<N, E, Ty, Ix, Dn, De>,
        _: &egui::Ui,
    ) where
        N: Clone,
        E: Clone,
        Ty: petgraph::EdgeType,
        Ix: petgraph::stable_graph::IndexType,
        Dn: egui_graphs::DisplayNode<N, E, Ty, Ix>,
        De: egui_graphs::DisplayEdge<N, E, Ty, Ix, Dn>,
    {
    }

    fn state(&self) -> FixedState {
        FixedState
    }
}

/// The neighbourhood graph of one node (payload: the IR node id).
pub struct Neighbourhood {
    pub center: NodeId,
    graph: egui_graphs::Graph<NodeId, ()>,
}

impl Neighbourhood {
    /// Builds the one-hop neighbourhood of `center` in `stage`.
    pub fn new(stage: &StageView, center: NodeId) -> Neighbourhood {
        let g = &stage.graph;
        let mut members = vec![center];
        for e in &g.edges {
            if e.to == center && !members.contains(&e.from) {
                members.push(e.from);
            }
            if e.from == center && !members.contains(&e.to) {
                members.push(e.to);
            }
        }
        members.truncate(24);
        let local = |n: NodeId| members.iter().position(|&m| m == n);
        let mut edges: Vec<(usize, usize)> = g
            .edges
            .iter()
            .filter_map(|e| Some((local(e.from)?, local(e.to)?)))
            .collect();
        edges.sort_unstable();
        edges.dedup();
        let widths: Vec<f32> = members
            .iter()
            .map(|&m| stage.widths[m].min(120.0))
            .collect();
        let layout = layered(&widths, &edges);
        let mut sg: StableGraph<NodeId, ()> = StableGraph::new();
        let idx: Vec<NodeIndex> = members.iter().map(|&m| sg.add_node(m)).collect();
        for &(a, b) in &edges {
            sg.add_edge(idx[a], idx[b], ());
        }
        let mut graph: egui_graphs::Graph<NodeId, ()> = egui_graphs::to_graph(&sg);
        for (i, &m) in members.iter().enumerate() {
            if let Some(n) = graph.node_mut(idx[i]) {
                n.set_location(Pos2::new(layout[i][0] * 1.2, layout[i][1] * 1.6));
                n.set_label(stage.labels[m].clone());
                n.set_color(stage.categories[m].color());
                n.set_selected(m == center);
            }
        }
        Neighbourhood { center, graph }
    }

    /// Shows the view; returns a neighbour the user clicked.
    pub fn ui(&mut self, ui: &mut Ui) -> Option<NodeId> {
        let interactions = SettingsInteraction::new()
            .with_node_clicking_enabled(true)
            .with_dragging_enabled(true);
        let navigation = SettingsNavigation::new()
            .with_fit_to_screen_enabled(true)
            .with_zoom_and_pan_enabled(false);
        let style = SettingsStyle::new().with_labels_always(true);
        let id = Some(format!("neighbourhood-{}", self.center));
        let response = GraphView::<FixedState, Fixed>::new()
            .with_interactions(&interactions)
            .with_navigations(&navigation)
            .with_styles(&style)
            .with_id(id)
            .show(ui, &mut self.graph);
        response.changes.iter().find_map(|c| match c {
            GraphChange::NodeClicked { node } => self
                .graph
                .node(*node)
                .map(|n| *n.payload())
                .filter(|&n| n != self.center),
            _ => None,
        })
    }
}
