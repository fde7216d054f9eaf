//! One stage as the viewer shows it: an IR graph with its layout, labels, categories and module
//! groups, and what a stage of etscope's own lowering adds (its pass, its numbers).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use etscope_core::ir::{Graph, NodeId, NodeKind};

use crate::category::Category;
use crate::layout::{GraphLayout, Modules};

/// One lowering stage as the viewer shows it.
#[derive(Debug, Clone)]
pub struct StageView {
    /// `pte`, `exported`, `edge`, `edge_after_transform`, ...
    pub name: String,
    pub graph: Graph,
    /// Every module unfolded (shared: a canvas holds it for a frame without copying it).
    pub layout: Arc<GraphLayout>,
    pub categories: Vec<Category>,
    /// Short label per node (drawn inside the box).
    pub labels: Vec<String>,
    /// Box width per node.
    pub widths: Vec<f32>,
    /// Module groups from `nn_module_stack` (outer modules before the modules they contain).
    pub modules: Vec<ModuleGroup>,
    /// For a stage that is a pass's output on the program: the pass.
    pub pass: Option<&'static str>,
    /// For a stage of etscope's own lowering of the ETRecord's edge graph: which.
    pub lowering: Option<LoweringStage>,
    /// A stage not built yet: the ETRecord entry it is built from when first shown
    /// ([`crate::document::Document::stage_builder`]); its graph is empty until then. Large stages of an ETRecord
    /// read from its file wait like this (see [`crate::document::EAGER_STAGE_NODES`]).
    pub unbuilt: Option<String>,
}

/// One pass of etscope's Cortex-M lowering, as a stage.
#[derive(Debug, Clone)]
pub struct LoweringStage {
    /// What it was lowered for: `m55 · default`.
    pub group: String,
    /// The pass's position in the flow (1-based) and ExecuTorch's name of it.
    pub index: usize,
    pub pass: &'static str,
    /// Whether the pass changed the graph (an unchanged pass's stage is its input's).
    pub changed: bool,
    /// The module (graph, constants, annotations): what runs it.
    pub module: std::sync::Arc<etscope_core::lower::Module>,
    /// What running it did to the numbers against the pass before (when an input was there).
    pub numerics: Option<etscope_core::lower::execute::Numerics>,
    /// Whether this is the first pass that changed any number.
    pub first_change: bool,
}

impl LoweringStage {
    /// The stage views of a lowering's passes, laid out (worker threads call this).
    pub fn views(
        options: &etscope_core::lower::Options,
        stages: Vec<etscope_core::lower::LoweredStage>,
    ) -> Vec<StageView> {
        let group = format!("{} · {}", options.core.key(), options.flow.name());
        stages
            .into_iter()
            .enumerate()
            .map(|(k, s)| {
                let name = format!("{group} · {} {}", k + 1, s.pass);
                let mut view = StageView::new(&name, s.module.graph.clone());
                view.lowering = Some(LoweringStage {
                    group: group.clone(),
                    index: k + 1,
                    pass: s.pass,
                    changed: s.changed,
                    module: std::sync::Arc::new(s.module),
                    numerics: None,
                    first_change: false,
                });
                view
            })
            .collect()
    }

    /// Puts an attribution's per-pass results on the views of its passes.
    pub fn attach_numerics(
        views: &mut [StageView],
        attribution: &etscope_core::lower::execute::Attribution,
    ) {
        let first = attribution.first_change.as_ref().map(|(p, _)| *p);
        for v in views {
            let Some(l) = v.lowering.as_mut() else {
                continue;
            };
            if let Some((_, n)) = attribution.per_pass.iter().find(|(p, _)| *p == l.pass) {
                l.numerics = Some(n.clone());
                l.first_change = first == Some(l.pass);
            }
        }
    }
}

/// The nodes one `nn.Module` instance produced, and where they are drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct ModuleGroup {
    /// Qualified path, e.g. `blocks.3.attn`.
    pub path: String,
    /// Module class, e.g. `torch.nn.modules.conv.Conv2d`.
    pub class: String,
    /// Nesting depth (1 = child of the root module).
    pub depth: usize,
    /// Levels of modules nested inside this one (0 for a leaf module).
    pub nested: usize,
    pub nodes: Vec<NodeId>,
    /// Bounding box of the member nodes in layout coordinates: min x, min y, max x, max y.
    pub bounds: [f32; 4],
}

impl ModuleGroup {
    /// The class name without its Python package.
    pub fn short_class(&self) -> &str {
        self.class.rsplit('.').next().unwrap_or(&self.class)
    }
}

/// Groups nodes by their module stacks, outer modules first (bounds are set by
/// [`StageView::relayout`]).
pub fn module_groups(graph: &Graph) -> Vec<ModuleGroup> {
    let mut by_path: BTreeMap<String, ModuleGroup> = BTreeMap::new();
    for n in &graph.nodes {
        for (depth, f) in n
            .module_stack
            .iter()
            .enumerate()
            .filter(|(_, f)| !f.path.is_empty())
        {
            let g = by_path
                .entry(f.path.clone())
                .or_insert_with(|| ModuleGroup {
                    path: f.path.clone(),
                    class: f.class.clone(),
                    depth,
                    nested: 0,
                    nodes: Vec::new(),
                    bounds: [0.0; 4],
                });
            g.nodes.push(n.id);
        }
    }
    // paths sort so that a module's descendants follow it directly
    let paths: Vec<(String, usize)> = by_path
        .values()
        .map(|g| (g.path.clone(), g.depth))
        .collect();
    for (i, (path, depth)) in paths.iter().enumerate() {
        let prefix = format!("{path}.");
        let nested = paths[i + 1..]
            .iter()
            .take_while(|(p, _)| p.starts_with(&prefix))
            .map(|(_, d)| d - depth)
            .max()
            .unwrap_or(0);
        if let Some(g) = by_path.get_mut(path) {
            g.nested = nested;
        }
    }
    let mut groups: Vec<ModuleGroup> = by_path.into_values().collect();
    groups.sort_by_key(|g| (g.depth, g.nodes.first().copied()));
    groups
}

/// Label width estimate (pixels at zoom 1) used for layout.
fn label_width(label: &str) -> f32 {
    (label.chars().count() as f32 * 8.2 + 20.0).clamp(48.0, 300.0)
}

impl StageView {
    /// Lays out a graph for display.
    pub fn new(name: &str, mut graph: Graph) -> StageView {
        // a stage lives as long as its document: the slack of building it is given back
        graph.shrink_to_fit();
        let labels: Vec<String> = graph
            .nodes
            .iter()
            .map(|n| match (n.kind, n.instruction_id) {
                (NodeKind::Input | NodeKind::Output, _) => n.name.clone(),
                (_, Some(i)) => format!("{} #{i}", n.short_op()),
                _ => n.short_op().to_string(),
            })
            .collect();
        let widths: Vec<f32> = labels.iter().map(|l| label_width(l)).collect();
        let categories = graph.nodes.iter().map(|n| n.category()).collect();
        let mut view = StageView {
            name: name.to_string(),
            graph,
            layout: Arc::new(GraphLayout::default()),
            categories,
            labels,
            widths,
            // grouped with the layout, once (`relayout`)
            modules: Vec::new(),
            pass: None,
            lowering: None,
            unbuilt: None,
        };
        view.relayout();
        view
    }

    /// Lays the stage out again with every module unfolded (after its module stacks changed),
    /// and sets each module's bounds.
    pub fn relayout(&mut self) {
        self.modules = module_groups(&self.graph);
        let layout = self.lay_out(&BTreeSet::new());
        for (i, m) in self.modules.iter_mut().enumerate() {
            let mut b = [
                f32::INFINITY,
                f32::INFINITY,
                f32::NEG_INFINITY,
                f32::NEG_INFINITY,
            ];
            let rects = layout
                .frames
                .iter()
                .filter(|f| f.module == i)
                .map(|f| f.rect)
                .chain(m.nodes.iter().filter_map(|&n| {
                    layout
                        .slot_of
                        .get(n)
                        .and_then(|&s| layout.rects.get(s))
                        .copied()
                }));
            for r in rects {
                b = [
                    b[0].min(r[0]),
                    b[1].min(r[1]),
                    b[2].max(r[0] + r[2]),
                    b[3].max(r[1] + r[3]),
                ];
            }
            m.bounds = if b[0].is_finite() { b } else { [0.0; 4] };
        }
        self.layout = Arc::new(layout);
    }

    /// The stage's layout with the modules in `folded` drawn as one box each.
    pub fn lay_out(&self, folded: &BTreeSet<String>) -> GraphLayout {
        let modules = Modules {
            index: self
                .modules
                .iter()
                .enumerate()
                .map(|(i, m)| (m.path.as_str(), i))
                .collect(),
            header_width: self.modules.iter().map(|m| header_width(&m.path)).collect(),
            folded_width: (0..self.modules.len())
                .map(|i| label_width(&module_label(self, i)).max(header_width("")))
                .collect(),
            folded,
        };
        GraphLayout::new(&self.graph, &self.widths, &modules)
    }
}

/// The text of a folded module's box.
pub fn module_label(stage: &StageView, m: usize) -> String {
    let g = &stage.modules[m];
    format!("+ {} ({}, {} ops)", g.path, g.short_class(), g.nodes.len())
}

/// The least width of an unfolded module's box: room for its path in the name strip.
fn header_width(path: &str) -> f32 {
    (path.chars().count() as f32 * 6.5 + 30.0).clamp(60.0, 260.0)
}
