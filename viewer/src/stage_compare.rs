//! Two lowering stages side by side: each node marked kept, changed (same op, other
//! arguments), fused (N:M), new or removed against the other stage through the document's
//! cross-stage mapping (debug handles), with selection and zoom synced across the panes. The
//! marks are computed once per stage pair, not per frame.

use egui::{Color32, RichText, Ui};
use etscope_core::ir::{NodeId, NodeKind};

use crate::document::Document;
use crate::graph_view::GraphView;

/// What lowering did to a node, seen from one side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Kept,
    Changed,
    Fused,
    /// Only in the right (later) stage.
    New,
    /// Only in the left (earlier) stage.
    Removed,
}

impl Change {
    pub fn color(self) -> Color32 {
        match self {
            Change::Kept => Color32::from_rgb(90, 110, 130),
            Change::Changed => Color32::from_rgb(220, 180, 60),
            Change::Fused => Color32::from_rgb(150, 100, 220),
            Change::New => Color32::from_rgb(70, 190, 110),
            Change::Removed => Color32::from_rgb(220, 80, 80),
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Change::Kept => "kept",
            Change::Changed => "changed",
            Change::Fused => "fused",
            Change::New => "new",
            Change::Removed => "removed",
        }
    }
}

/// The legend of the side-by-side panes: what each colour means there.
pub fn legend_ui(ui: &mut Ui) {
    ui.label(RichText::new("Legend (side by side)").strong());
    for (c, what) in [
        (Change::Kept, "the same operator in both stages"),
        (
            Change::Changed,
            "replaced by another operator, or other arguments",
        ),
        (Change::Fused, "merged with others (N:M)"),
        (Change::New, "only in the right stage"),
        (Change::Removed, "only in the left stage"),
    ] {
        ui.horizontal(|ui| {
            let (r, _) = ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
            ui.painter().rect_filled(r, 2.0, c.color());
            ui.label(c.label()).on_hover_text(what);
        });
    }
}

/// Two stages of one document side by side.
pub struct StageCompare {
    pub left: usize,
    pub right: usize,
    pub left_view: GraphView,
    pub right_view: GraphView,
    /// Per node of each side.
    pub left_marks: Vec<Option<Change>>,
    pub right_marks: Vec<Option<Change>>,
    left_colors: Vec<Option<Color32>>,
    right_colors: Vec<Option<Color32>>,
    /// Operators without debug handles that both stages run, paired by operator in order
    /// (left, right): a pass-made `pad` both keep is kept, not removed on one side and new on
    /// the other.
    paired: Vec<(NodeId, NodeId)>,
}

/// Pairs what one side marks removed with what the other marks new when they are the same
/// operator, the k-th with the k-th in graph order; marks them kept (or changed, when their
/// arguments differ) and returns the pairs.
fn pair_unmatched(
    doc: &Document,
    (left, right): (usize, usize),
    left_marks: &mut [Option<Change>],
    right_marks: &mut [Option<Change>],
) -> Vec<(NodeId, NodeId)> {
    let (gl, gr) = (&doc.stages[left].graph, &doc.stages[right].graph);
    let mut waiting: std::collections::HashMap<String, std::collections::VecDeque<NodeId>> =
        std::collections::HashMap::new();
    for (n, m) in left_marks.iter().enumerate() {
        if *m == Some(Change::Removed) {
            waiting
                .entry(gl.nodes[n].op.clone())
                .or_default()
                .push_back(n);
        }
    }
    let comparable_args = (doc.stages[left].name == "pte") == (doc.stages[right].name == "pte");
    let mut pairs = Vec::new();
    for (n, m) in right_marks.iter_mut().enumerate() {
        if *m != Some(Change::New) {
            continue;
        }
        let Some(l) = waiting.get_mut(&gr.nodes[n].op).and_then(|q| q.pop_front()) else {
            continue;
        };
        let same_args = !comparable_args
            || gl.nodes[l]
                .args
                .iter()
                .map(|a| crate::args::render_arg(gl, a))
                .eq(gr.nodes[n]
                    .args
                    .iter()
                    .map(|a| crate::args::render_arg(gr, a)));
        let mark = if same_args {
            Change::Kept
        } else {
            Change::Changed
        };
        *m = Some(mark);
        left_marks[l] = Some(mark);
        pairs.push((l, n));
    }
    pairs
}

fn is_op(doc: &Document, stage: usize, n: NodeId) -> bool {
    doc.stages[stage]
        .graph
        .nodes
        .get(n)
        .is_some_and(|x| matches!(x.kind, NodeKind::Operator | NodeKind::Delegate))
}

/// The marks of every node of `from` against `to` (`from_is_left`: removed vs new).
fn marks(doc: &Document, from: usize, to: usize, from_is_left: bool) -> Vec<Option<Change>> {
    let graph = &doc.stages[from].graph;
    graph
        .nodes
        .iter()
        .map(|n| {
            if !is_op(doc, from, n.id) {
                return None;
            }
            let there: Vec<NodeId> = doc
                .corresponding(from, n.id, to)
                .into_iter()
                .filter(|&m| is_op(doc, to, m))
                .collect();
            Some(match there.as_slice() {
                [] if from_is_left => Change::Removed,
                [] => Change::New,
                [m] => {
                    let back: Vec<NodeId> = doc
                        .corresponding(to, *m, from)
                        .into_iter()
                        .filter(|&k| is_op(doc, from, k))
                        .collect();
                    let other = &doc.stages[to].graph.nodes[*m];
                    // a program's out-variant arguments are not a stage's: compare arguments
                    // only between two stage graphs
                    let comparable_args =
                        (doc.stages[from].name == "pte") == (doc.stages[to].name == "pte");
                    let (g_to, g_from) = (&doc.stages[to].graph, &doc.stages[from].graph);
                    let same_args = !comparable_args
                        || other
                            .args
                            .iter()
                            .map(|a| crate::args::render_arg(g_to, a))
                            .eq(n.args.iter().map(|a| crate::args::render_arg(g_from, a)));
                    if back.len() > 1 {
                        Change::Fused
                    } else if other.short_op() == n.short_op() && same_args {
                        Change::Kept
                    } else {
                        Change::Changed
                    }
                }
                _ => Change::Fused,
            })
        })
        .collect()
}

impl StageCompare {
    /// Stages `left` and `right` of `doc`, marked.
    pub fn new(doc: &Document, left: usize, right: usize) -> Option<StageCompare> {
        if left >= doc.stages.len() || right >= doc.stages.len() || left == right {
            return None;
        }
        let mut left_marks = marks(doc, left, right, true);
        let mut right_marks = marks(doc, right, left, false);
        let paired = pair_unmatched(doc, (left, right), &mut left_marks, &mut right_marks);
        let colors = |m: &[Option<Change>]| m.iter().map(|c| c.map(Change::color)).collect();
        Some(StageCompare {
            left,
            right,
            left_colors: colors(&left_marks),
            right_colors: colors(&right_marks),
            left_marks,
            right_marks,
            paired,
            left_view: GraphView::default(),
            right_view: GraphView::default(),
        })
    }

    /// Selects `node` on one side and its counterparts on the other (the first of them
    /// selected and focused). Returns the counterparts.
    pub fn select(&mut self, doc: &Document, node: NodeId, on_left: bool) -> Vec<NodeId> {
        let (from, to) = if on_left {
            (self.left, self.right)
        } else {
            (self.right, self.left)
        };
        let mut there = doc.corresponding(from, node, to);
        if there.is_empty() {
            there = self
                .paired
                .iter()
                .filter_map(|&(l, r)| match on_left {
                    true if l == node => Some(r),
                    false if r == node => Some(l),
                    _ => None,
                })
                .collect();
        }
        let (this, other) = if on_left {
            (&mut self.left_view, &mut self.right_view)
        } else {
            (&mut self.right_view, &mut self.left_view)
        };
        // both panes show the pair: the chosen node and its counterpart, each centred
        this.focus(node);
        other.selected = there.first().copied();
        if let Some(&m) = there.first() {
            other.focus(m);
        }
        there
    }

    /// How many nodes of each kind each side has (for the legend).
    pub fn counts(&self) -> Vec<(Change, usize, usize)> {
        [
            Change::Kept,
            Change::Changed,
            Change::Fused,
            Change::New,
            Change::Removed,
        ]
        .into_iter()
        .map(|c| {
            let n = |m: &[Option<Change>]| m.iter().filter(|x| **x == Some(c)).count();
            (c, n(&self.left_marks), n(&self.right_marks))
        })
        .collect()
    }

    /// Draws both panes with the legend; clicks select across the mapping, zoom follows.
    pub fn ui(&mut self, ui: &mut Ui, doc: &Document) {
        ui.horizontal_wrapped(|ui| {
            ui.label(
                RichText::new(format!(
                    "{}  ↔  {}",
                    doc.stages[self.left].name, doc.stages[self.right].name
                ))
                .strong(),
            );
            for (c, l, r) in self.counts() {
                let (rect, _) =
                    ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
                ui.painter().rect_filled(rect, 2.0, c.color());
                ui.label(format!("{} {l} | {r}", c.label()));
            }
        });
        let zoom_before = (self.left_view.zoom, self.right_view.zoom);
        let mut clicked = None;
        ui.columns(2, |cols| {
            let r = self.left_view.show(
                &mut cols[0],
                &doc.stages[self.left],
                Some(&self.left_colors),
            );
            if let Some(n) = r.clicked {
                clicked = Some((n, true));
            }
            let r = self.right_view.show(
                &mut cols[1],
                &doc.stages[self.right],
                Some(&self.right_colors),
            );
            if let Some(n) = r.clicked {
                clicked = Some((n, false));
            }
        });
        // zoom follows the pane that changed it
        if self.left_view.zoom != zoom_before.0 {
            self.right_view.zoom = self.left_view.zoom;
        } else if self.right_view.zoom != zoom_before.1 {
            self.left_view.zoom = self.right_view.zoom;
        }
        if let Some((n, on_left)) = clicked {
            self.select(doc, n, on_left);
        }
    }
}
