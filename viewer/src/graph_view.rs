//! The graph canvas: draws a laid-out stage with culling (only ranks and nodes inside the view
//! are visited) and level of detail (one mesh of plain boxes when zoomed out, labelled boxes and
//! curved edges when zoomed in), plus a minimap, hover tooltips and selection highlighting.
//!
//! `GraphView` holds only view state (camera, selection); the data comes in per call.

use crate::category::CategoryStyle as _;
use std::collections::BTreeSet;

use egui::{Color32, FontId, Mesh, Pos2, Rect, Sense, Shape, Stroke, StrokeKind, Ui, Vec2};
use etscope_core::ir::{Graph, NodeId};

use crate::document::StageView;
use crate::layout::compound::HEADER;
use crate::layout::{GraphLayout, NODE_HEIGHT};
use crate::view_layout::{module_label, Slot, ViewLayout};

/// Below this on-screen node height, nodes are drawn as plain boxes in one mesh.
const LOD_BOXES_BELOW: f32 = 9.0;
/// Text smaller than this (screen points) is not drawn: the box alone, the tooltip names it.
const LEGIBLE_TEXT: f32 = 9.0;
/// Above this zoom edge labels (tensor shapes) and arrow heads are drawn.
const DETAILS_ABOVE: f32 = 0.8;
/// The minimap's largest size in points; on a small canvas it takes a fifth of each side at most.
const MINIMAP: Vec2 = Vec2::new(200.0, 150.0);
/// Graphs with more nodes than this open with their large modules folded.
const FOLD_MODULES_ABOVE: usize = 150;
/// A module of at least this many nodes is folded when a large graph opens.
const FOLD_MODULES_OF: usize = 8;
/// A module with child modules holding more than this share of the graph is a wrapper: its
/// children are folded instead of it (else the whole model would open as one box).
const WRAPPER_SHARE: f32 = 0.6;
/// Color of collapsed module boxes.
const MODULE_FILL: Color32 = Color32::from_rgb(0x2a, 0x3a, 0x55);

/// Camera, selection and module folding of one graph canvas.
#[derive(Debug, Clone)]
pub struct GraphView {
    /// World point shown at the center of the canvas.
    pub center: Pos2,
    /// Screen points per world unit.
    pub zoom: f32,
    pub selected: Option<NodeId>,
    pub show_minimap: bool,
    fit_pending: bool,
    focus_pending: Option<NodeId>,
    /// The canvas rectangle of the last frame.
    pub last_rect: Rect,
    /// Collapsed module paths.
    pub collapsed: BTreeSet<String>,
    /// How many modules the stage had when the folded set was first chosen (a program's
    /// modules arrive with its ETRecord, after its first frame).
    modules_initialized: Option<usize>,
    /// The drawn layout for `collapsed` (rebuilt when it changes).
    view: Option<ViewLayout>,
}

impl Default for GraphView {
    fn default() -> Self {
        GraphView {
            center: Pos2::ZERO,
            zoom: 1.0,
            selected: None,
            show_minimap: true,
            fit_pending: true,
            focus_pending: None,
            last_rect: Rect::NOTHING,
            collapsed: BTreeSet::new(),
            modules_initialized: None,
            view: None,
        }
    }
}

/// What happened on the canvas this frame.
#[derive(Debug, Default, Clone, Copy)]
pub struct GraphResponse {
    /// A node was clicked (selection already updated).
    pub clicked: Option<NodeId>,
    /// The background was clicked (selection cleared).
    pub cleared: bool,
    pub hovered: Option<NodeId>,
}

/// The modules a stage opens with folded: none for a small graph; for a large one the
/// outermost modules of some size that are not wrappers of most of the graph (a GRU becomes one
/// box with its op count; a model wrapped in one module opens at its children).
pub fn initially_folded(stage: &StageView) -> BTreeSet<String> {
    let n = stage.graph.nodes.len();
    let mut folded = BTreeSet::new();
    if n <= FOLD_MODULES_ABOVE {
        return folded;
    }
    // modules come outer before inner, and a module's path prefixes its children's
    for m in &stage.modules {
        let inside_folded = folded
            .iter()
            .any(|f: &String| m.path.starts_with(&format!("{f}.")));
        let wrapper = m.nested > 0 && m.nodes.len() as f32 > WRAPPER_SHARE * n as f32;
        if !inside_folded && !wrapper && m.nodes.len() >= FOLD_MODULES_OF {
            folded.insert(m.path.clone());
        }
    }
    folded
}

/// Optional per-node fill colors (heat overlays, diff errors); `None` keeps the category color.
pub type Overlay<'a> = Option<&'a [Option<Color32>]>;

/// What is under the pointer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hit {
    Node(NodeId),
    Module(usize),
}

impl GraphView {
    /// The same view of the same graph, read again (camera, selection, collapsed modules):
    /// the drawn layout is rebuilt from the new stage.
    pub fn carried_over(&self) -> GraphView {
        GraphView {
            center: self.center,
            zoom: self.zoom,
            selected: self.selected,
            show_minimap: self.show_minimap,
            fit_pending: self.fit_pending,
            focus_pending: self.focus_pending,
            last_rect: self.last_rect,
            collapsed: self.collapsed.clone(),
            modules_initialized: self.modules_initialized,
            view: None,
        }
    }

    /// Fits the whole graph (or, for very large graphs, its readable top) on the next frame.
    pub fn fit(&mut self) {
        self.fit_pending = true;
    }

    /// Selects `node` and centers it on the next frame.
    pub fn focus(&mut self, node: NodeId) {
        self.selected = Some(node);
        self.focus_pending = Some(node);
    }

    /// Where node `n` was drawn in the last frame (screen points).
    pub fn screen_pos(&self, stage: &StageView, n: NodeId) -> Option<Pos2> {
        let p = match &self.view {
            Some(v) => v.pos_of(n)?,
            None => stage.layout.center_of(n)?,
        };
        Some(self.to_screen(self.last_rect, p))
    }

    /// Expands `path` and every module containing it.
    pub fn expand_to(&mut self, path: &str) {
        self.collapsed
            .retain(|c| !(c == path || path.starts_with(&format!("{c}."))));
    }

    /// Collapses or expands one module.
    pub fn toggle_module(&mut self, path: &str) {
        if !self.collapsed.remove(path) {
            self.collapsed.insert(path.to_string());
        }
    }

    /// Whether node `n` is folded into a collapsed module.
    pub fn is_folded(&self, n: NodeId) -> bool {
        self.view.as_ref().is_some_and(|v| {
            v.layout
                .slot_of
                .get(n)
                .is_some_and(|&s| matches!(v.layout.slots.get(s), Some(Slot::Module(_))))
        })
    }

    /// Brings the drawn layout in line with the collapsed set (and the selection's modules).
    fn sync_modules(&mut self, stage: &StageView) {
        if self.modules_initialized != Some(stage.modules.len()) {
            self.modules_initialized = Some(stage.modules.len());
            self.fit_pending = true;
            self.collapsed = initially_folded(stage);
        }
        // the selection is never folded away: open the modules around it
        if let Some(sel) = self.selected {
            let around: Vec<String> = stage
                .modules
                .iter()
                .filter(|m| self.collapsed.contains(&m.path) && m.nodes.contains(&sel))
                .map(|m| m.path.clone())
                .collect();
            for p in around {
                self.collapsed.remove(&p);
            }
        }
        let stale = match &self.view {
            Some(v) => {
                v.collapsed != self.collapsed || v.layout.slot_of.len() != stage.graph.nodes.len()
            }
            None => true,
        };
        if stale {
            // keep the point under the camera while the layout changes
            let anchor = self
                .selected
                .and_then(|n| self.view.as_ref().and_then(|v| v.pos_of(n)).map(|p| (n, p)));
            self.view = Some(ViewLayout::new(stage, &self.collapsed));
            if let (Some((n, before)), Some(v)) = (anchor, &self.view) {
                if let Some(after) = v.pos_of(n) {
                    self.center += Vec2::new(after[0] - before[0], after[1] - before[1]);
                }
            }
        }
    }

    fn view_layout(&self) -> Option<&ViewLayout> {
        self.view.as_ref()
    }

    fn to_screen(&self, rect: Rect, p: [f32; 2]) -> Pos2 {
        rect.center() + (Pos2::new(p[0], p[1]) - self.center) * self.zoom
    }

    fn to_world(&self, rect: Rect, p: Pos2) -> Pos2 {
        self.center + (p - rect.center()) / self.zoom
    }

    fn apply_pending(&mut self, rect: Rect, layout: &GraphLayout) {
        let b = layout.bounds;
        if self.fit_pending && rect.width() > 1.0 {
            // the whole graph, centred (a large graph opens folded, so this stays readable)
            let (w, h) = ((b[2] - b[0]).max(1.0), (b[3] - b[1]).max(1.0));
            self.zoom = ((rect.width() - 40.0) / w)
                .min((rect.height() - 40.0) / h)
                .clamp(0.002, 2.0);
            self.center = Pos2::new((b[0] + b[2]) / 2.0, (b[1] + b[3]) / 2.0);
            self.fit_pending = false;
        }
        if let Some(n) = self.focus_pending.take() {
            if let Some(p) = self.view.as_ref().and_then(|v| v.pos_of(n)) {
                self.center = Pos2::new(p[0], p[1]);
                self.zoom = self.zoom.max(0.9);
            }
        }
    }

    fn hit(&self, world: Pos2) -> Option<Hit> {
        let v = self.view_layout()?;
        let s = v.layout.slot_at([world.x, world.y])?;
        Some(match v.layout.slots[s] {
            Slot::Node(n) => Hit::Node(n),
            Slot::Module(m) => Hit::Module(m),
        })
    }

    /// The name strip of an unfolded module's box under a screen point (innermost wins).
    fn frame_strip_at(&self, rect: Rect, p: Pos2) -> Option<usize> {
        let v = self.view_layout()?;
        let mut hit: Option<(usize, usize)> = None;
        for f in &v.layout.frames {
            let r = self.frame_rect(rect, f.rect);
            let strip = Rect::from_min_size(r.min, Vec2::new(r.width(), HEADER * self.zoom));
            if strip.contains(p) && hit.is_none_or(|(d, _)| f.depth > d) {
                hit = Some((f.depth, f.module));
            }
        }
        hit.map(|(_, m)| m)
    }

    fn frame_rect(&self, rect: Rect, r: [f32; 4]) -> Rect {
        Rect::from_min_max(
            self.to_screen(rect, [r[0], r[1]]),
            self.to_screen(rect, [r[0] + r[2], r[1] + r[3]]),
        )
    }

    /// Draws the canvas and handles navigation, hover, selection and module folding.
    pub fn show(&mut self, ui: &mut Ui, stage: &StageView, overlay: Overlay<'_>) -> GraphResponse {
        let (rect, response) = ui.allocate_exact_size(ui.available_size(), Sense::click_and_drag());
        self.last_rect = rect;
        self.sync_modules(stage);
        // a reference-counted handle, not a copy of the layout
        let Some(layout) = self.view.as_ref().map(|v| std::sync::Arc::clone(&v.layout)) else {
            return GraphResponse::default();
        };
        self.apply_pending(rect, &layout);
        let mut out = GraphResponse::default();
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 0.0, ui.visuals().extreme_bg_color);

        let mini = Vec2::new(
            MINIMAP.x.min(rect.width() * 0.2).max(60.0),
            MINIMAP.y.min(rect.height() * 0.2).max(45.0),
        );
        let minimap_rect = Rect::from_min_size(rect.max - mini - Vec2::splat(8.0), mini);
        let pointer = response.hover_pos();
        let on_minimap = self.show_minimap && pointer.is_some_and(|p| minimap_rect.contains(p));

        // navigation: drag pans, wheel zooms around the pointer, the minimap recenters
        if response.dragged() {
            let press = response.interact_pointer_pos();
            if self.show_minimap && (on_minimap || press.is_some_and(|p| minimap_rect.contains(p)))
            {
                if let Some(p) = press {
                    self.center = minimap_to_world(&layout, minimap_rect, p);
                }
            } else {
                self.center -= response.drag_delta() / self.zoom;
            }
        }
        if let Some(p) = pointer {
            let (scroll, pinch) = ui.input(|i| (i.smooth_scroll_delta.y, i.zoom_delta()));
            let factor = pinch * (scroll / 400.0).exp();
            if (factor - 1.0).abs() > 1e-4 {
                let before = self.to_world(rect, p);
                self.zoom = (self.zoom * factor).clamp(0.002, 8.0);
                let after = self.to_world(rect, p);
                self.center += before - after;
            }
        }

        let view = Rect::from_min_max(self.to_world(rect, rect.min), self.to_world(rect, rect.max));
        let hit = pointer
            .filter(|_| !on_minimap)
            .and_then(|p| self.hit(self.to_world(rect, p)));
        let hovered = match hit {
            Some(Hit::Node(n)) => Some(n),
            _ => None,
        };
        out.hovered = hovered;

        self.paint_edges(&painter, rect, view, &layout, stage);
        self.paint_frames(&painter, rect, view, stage, &layout);
        self.paint_nodes(&painter, rect, view, stage, &layout, overlay, hovered);
        if self.show_minimap {
            self.paint_minimap(&painter, minimap_rect, view, stage, &layout, overlay);
        }

        let strip = if hit.is_none() {
            pointer.and_then(|p| self.frame_strip_at(rect, p))
        } else {
            None
        };
        if response.clicked() && !on_minimap {
            match (hit, strip) {
                (Some(Hit::Node(n)), _) => {
                    self.selected = Some(n);
                    out.clicked = Some(n);
                }
                (Some(Hit::Module(m)), _) | (None, Some(m)) => {
                    let path = stage.modules[m].path.clone();
                    self.toggle_module(&path);
                }
                (None, None) => {
                    self.selected = None;
                    out.cleared = true;
                }
            }
        }
        match hit {
            Some(Hit::Node(n)) => {
                response.on_hover_ui_at_pointer(|ui| node_tooltip(ui, &stage.graph, n));
            }
            Some(Hit::Module(m)) => {
                response.on_hover_text_at_pointer(format!(
                    "{}\nclick to expand",
                    module_label(stage, m)
                ));
            }
            None => {
                if let Some(p) = pointer.filter(|_| !on_minimap && self.zoom > 0.25) {
                    if let Some(value) = self.edge_near(rect, view, &layout, p) {
                        response.on_hover_ui_at_pointer(|ui| edge_tooltip(ui, &stage.graph, value));
                    } else if let Some(m) = strip {
                        response.on_hover_text_at_pointer(format!(
                            "{} — click to collapse",
                            stage.modules[m].path
                        ));
                    }
                }
            }
        }
        out
    }

    fn edge_visible(view: Rect, e: &crate::layout::DrawnEdge) -> bool {
        let b = e.bounds;
        !e.points.is_empty()
            && Rect::from_min_max(Pos2::new(b[0], b[1]), Pos2::new(b[2], b[3])).intersects(view)
    }

    fn selected_slot(&self) -> Option<usize> {
        self.selected.and_then(|n| {
            self.view
                .as_ref()
                .and_then(|v| v.layout.slot_of.get(n).copied())
        })
    }

    fn paint_edges(
        &self,
        painter: &egui::Painter,
        rect: Rect,
        view: Rect,
        layout: &GraphLayout,
        stage: &StageView,
    ) {
        let selected = self.selected_slot();
        let base = Color32::from_gray(120);
        let into = Color32::from_rgb(0x4f, 0xa3, 0xff);
        let out_of = Color32::from_rgb(0xff, 0x9f, 0x43);
        let mut mesh = Mesh::default();
        let width = (1.2 * self.zoom.sqrt()).clamp(0.6, 2.0);
        let details = self.zoom >= DETAILS_ABOVE;
        let font = FontId::monospace((9.0 * self.zoom.sqrt()).min(12.0));
        // edge labels only where they cover neither a box nor another label
        let mut labels: Vec<Rect> = Vec::new();
        for e in &layout.edges {
            if !Self::edge_visible(view, e) {
                continue;
            }
            let pts: Vec<Pos2> = e.points.iter().map(|&p| self.to_screen(rect, p)).collect();
            let (color, w) = match selected {
                Some(s) if e.to == s => (into, width * 2.0),
                Some(s) if e.from == s => (out_of, width * 2.0),
                _ => (base, width),
            };
            for pair in pts.windows(2) {
                add_segment(&mut mesh, pair[0], pair[1], w, color);
            }
            if !details {
                continue;
            }
            if let Some(&tip) = pts.last() {
                arrow_head(painter, tip, color, 5.0 * self.zoom.min(1.5));
            }
            // tensor shapes on edges, as Netron draws them: beside the edge's first segment
            let label = short_shape(&stage.graph, e.value);
            if label.is_empty() || pts.len() < 2 {
                continue;
            }
            let galley = painter.layout_no_wrap(label, font.clone(), Color32::from_gray(160));
            // on the side the edge does not turn to
            let at = if pts[1].x > pts[0].x + 1.0 {
                pts[0] + Vec2::new(-4.0 - galley.size().x, 4.0 * self.zoom)
            } else {
                pts[0] + Vec2::new(4.0, 4.0 * self.zoom)
            };
            let r = Rect::from_min_size(at, galley.size());
            let blocked =
                labels.iter().any(|l| l.intersects(r)) || self.covers_a_box(rect, layout, r);
            if !blocked {
                labels.push(r);
                painter.galley(at, galley, Color32::from_gray(160));
            }
        }
        if !mesh.is_empty() {
            painter.add(Shape::mesh(mesh));
        }
    }

    /// Whether the screen rectangle `r` overlaps a drawn box.
    fn covers_a_box(&self, rect: Rect, layout: &GraphLayout, r: Rect) -> bool {
        let (a, b) = (self.to_world(rect, r.min), self.to_world(rect, r.max));
        layout.slots_between(a.y, b.y).iter().any(|&s| {
            let q = layout.rects[s];
            q[0] < b.x && q[0] + q[2] > a.x && q[1] < b.y && q[1] + q[3] > a.y
        })
    }

    fn paint_frames(
        &self,
        painter: &egui::Painter,
        rect: Rect,
        view: Rect,
        stage: &StageView,
        layout: &GraphLayout,
    ) {
        let font_px = 0.7 * HEADER * self.zoom;
        let font = FontId::proportional(font_px.min(14.0));
        for f in &layout.frames {
            let b = f.rect;
            if !Rect::from_min_size(Pos2::new(b[0], b[1]), Vec2::new(b[2], b[3])).intersects(view) {
                continue;
            }
            let r = self.frame_rect(rect, b);
            let m = &stage.modules[f.module];
            let shade = 18 + 10 * (f.depth as u8 % 4);
            painter.rect_filled(
                r,
                6.0,
                Color32::from_rgba_unmultiplied(120, 150, 220, shade),
            );
            painter.rect_stroke(
                r,
                6.0,
                Stroke::new(1.0, Color32::from_rgba_unmultiplied(140, 170, 230, 90)),
                StrokeKind::Inside,
            );
            // the name in the box's own strip (the layout keeps it clear of nodes and of
            // inner boxes), when legible
            if font_px >= LEGIBLE_TEXT && r.width() > 30.0 {
                let text = format!("{} ({})", m.path, m.short_class());
                let galley = crate::paint::cut_to_width(
                    painter,
                    text,
                    font.clone(),
                    Color32::from_gray(200),
                    r.width() - 12.0,
                );
                painter.galley(r.min + Vec2::new(6.0, 2.0), galley, Color32::from_gray(200));
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn paint_nodes(
        &self,
        painter: &egui::Painter,
        rect: Rect,
        view: Rect,
        stage: &StageView,
        layout: &GraphLayout,
        overlay: Overlay<'_>,
        hovered: Option<NodeId>,
    ) {
        let node_h = NODE_HEIGHT * self.zoom;
        let boxes_only = node_h < LOD_BOXES_BELOW;
        let selected = self.selected_slot();
        let neighbours: Vec<usize> = match selected {
            Some(s) => layout
                .edges
                .iter()
                .filter(|e| e.from == s || e.to == s)
                .map(|e| if e.from == s { e.to } else { e.from })
                .collect(),
            None => Vec::new(),
        };
        let mut mesh = Mesh::default();
        let font_px = 14.0 * self.zoom;
        let font = FontId::proportional(font_px.min(18.0));
        // a folded module's name stays legible further out (it carries the picture there):
        // at least 11 points while its box is 14 points high
        let module_px = if node_h >= 14.0 {
            font_px.max(11.0).min(node_h * 0.75).min(18.0)
        } else {
            font_px
        };
        let module_font = FontId::proportional(module_px);
        {
            for &s in layout.slots_between(view.min.y, view.max.y) {
                let q = layout.rects[s];
                if q[0] > view.max.x || q[0] + q[2] < view.min.x {
                    continue;
                }
                let r = self.frame_rect(rect, q);
                let c = r.center();
                let (fill, label) = match layout.slots[s] {
                    Slot::Node(n) => (
                        overlay
                            .and_then(|o| o.get(n).copied().flatten())
                            .unwrap_or_else(|| stage.categories[n].color()),
                        None,
                    ),
                    Slot::Module(m) => (MODULE_FILL, Some(module_label(stage, m))),
                };
                if boxes_only {
                    mesh.add_colored_rect(r, fill);
                    if selected == Some(s) {
                        painter.rect_stroke(
                            r.expand(2.0),
                            1.0,
                            Stroke::new(2.0, Color32::WHITE),
                            StrokeKind::Outside,
                        );
                    }
                    continue;
                }
                let radius = (4.0 * self.zoom).min(6.0);
                painter.rect_filled(r, radius, fill);
                let is_hovered = matches!(layout.slots[s], Slot::Node(n) if hovered == Some(n));
                let outline = if selected == Some(s) {
                    Some(Stroke::new(2.5, Color32::WHITE))
                } else if neighbours.contains(&s) {
                    Some(Stroke::new(1.5, Color32::from_rgb(0xff, 0xe0, 0x80)))
                } else if label.is_some() {
                    Some(Stroke::new(1.2, Color32::from_rgb(0x8a, 0xa4, 0xd0)))
                } else if is_hovered {
                    Some(Stroke::new(1.0, Color32::from_gray(230)))
                } else {
                    None
                };
                if let Some(st) = outline {
                    painter.rect_stroke(r, radius, st, StrokeKind::Outside);
                }
                let (text_px, text_font) = match layout.slots[s] {
                    Slot::Module(_) => (module_px, &module_font),
                    Slot::Node(_) => (font_px, &font),
                };
                if text_px >= LEGIBLE_TEXT {
                    let text = match (&label, layout.slots[s]) {
                        (Some(l), _) => l.as_str(),
                        (None, Slot::Node(n)) => stage.labels[n].as_str(),
                        (None, Slot::Module(_)) => "",
                    };
                    // text only where it fits: cut to the box (the tooltip names it whole)
                    if r.width() >= 24.0 && !text.is_empty() {
                        let galley = crate::paint::cut_to_width(
                            painter,
                            text.to_string(),
                            text_font.clone(),
                            Color32::WHITE,
                            r.width() - 6.0,
                        );
                        painter.galley(c - galley.size() / 2.0, galley, Color32::WHITE);
                    }
                }
            }
        }
        if !mesh.is_empty() {
            painter.add(Shape::mesh(mesh));
        }
    }

    fn paint_minimap(
        &self,
        painter: &egui::Painter,
        mini: Rect,
        view: Rect,
        stage: &StageView,
        layout: &GraphLayout,
        overlay: Overlay<'_>,
    ) {
        painter.rect_filled(mini, 4.0, Color32::from_black_alpha(200));
        painter.rect_stroke(
            mini,
            4.0,
            Stroke::new(1.0, Color32::from_gray(90)),
            StrokeKind::Inside,
        );
        // the graph's shape: module boxes, then every box (a sample of a huge graph)
        let mut mesh = Mesh::default();
        for f in &layout.frames {
            let r = f.rect;
            let a = world_to_minimap(layout, mini, Pos2::new(r[0], r[1]));
            let b = world_to_minimap(layout, mini, Pos2::new(r[0] + r[2], r[1] + r[3]));
            mesh.add_colored_rect(
                Rect::from_min_max(a, b),
                Color32::from_rgba_unmultiplied(120, 150, 220, 30),
            );
        }
        let n = layout.rects.len();
        let step = (n / 4000).max(1);
        for s in (0..n).step_by(step) {
            let q = layout.rects[s];
            let a = world_to_minimap(layout, mini, Pos2::new(q[0], q[1]));
            let b = world_to_minimap(layout, mini, Pos2::new(q[0] + q[2], q[1] + q[3]));
            let fill = match layout.slots[s] {
                Slot::Node(node) => overlay
                    .and_then(|o| o.get(node).copied().flatten())
                    .unwrap_or_else(|| stage.categories[node].color()),
                Slot::Module(_) => MODULE_FILL,
            };
            let r = Rect::from_min_max(a, b);
            mesh.add_colored_rect(
                Rect::from_center_size(r.center(), r.size().max(Vec2::splat(1.5))),
                fill,
            );
        }
        painter.add(Shape::mesh(mesh));
        let a = world_to_minimap(layout, mini, view.min);
        let b = world_to_minimap(layout, mini, view.max);
        // keep the frame visible even when the view is a sliver of a huge graph
        let frame = Rect::from_two_pos(a, b);
        let frame = Rect::from_center_size(frame.center(), frame.size().max(Vec2::splat(6.0)))
            .intersect(mini);
        painter.rect_stroke(
            frame,
            0.0,
            Stroke::new(1.5, Color32::from_rgb(0xff, 0xe0, 0x80)),
            StrokeKind::Inside,
        );
    }

    /// The value carried by the edge nearest to `p` (within 5 points).
    fn edge_near(&self, rect: Rect, view: Rect, layout: &GraphLayout, p: Pos2) -> Option<usize> {
        let mut best: Option<(f32, usize)> = None;
        for e in &layout.edges {
            if !Self::edge_visible(view, e) {
                continue;
            }
            for pair in e.points.windows(2) {
                let (a, b) = (self.to_screen(rect, pair[0]), self.to_screen(rect, pair[1]));
                let d = distance_to_segment(p, a, b);
                if d < 5.0 && best.is_none_or(|(bd, _)| d < bd) {
                    best = Some((d, e.value));
                }
            }
        }
        best.map(|(_, value)| value)
    }
}

fn minimap_scale(layout: &GraphLayout, mini: Rect) -> (f32, Pos2) {
    let b = layout.bounds;
    let (w, h) = ((b[2] - b[0]).max(1.0), (b[3] - b[1]).max(1.0));
    let s = ((mini.width() - 8.0) / w).min((mini.height() - 8.0) / h);
    (s, Pos2::new((b[0] + b[2]) / 2.0, (b[1] + b[3]) / 2.0))
}

fn world_to_minimap(layout: &GraphLayout, mini: Rect, p: Pos2) -> Pos2 {
    let (s, c) = minimap_scale(layout, mini);
    mini.center() + (p - c) * s
}

fn minimap_to_world(layout: &GraphLayout, mini: Rect, p: Pos2) -> Pos2 {
    let (s, c) = minimap_scale(layout, mini);
    c + (p - mini.center()) / s
}

/// A segment as two triangles (no feathering: thousands go into one mesh). A vertical or
/// horizontal one is centred on a pixel row or column and at least a pixel wide, else a thin
/// line on a pixel boundary covers no pixel's centre and is not drawn at all.
fn add_segment(mesh: &mut Mesh, a: Pos2, b: Pos2, width: f32, color: Color32) {
    let width = width.max(1.0);
    let centre = |v: f32| (v - 0.5).round() + 0.5;
    let (a, b) = if (a.x - b.x).abs() < 0.01 {
        (Pos2::new(centre(a.x), a.y), Pos2::new(centre(a.x), b.y))
    } else if (a.y - b.y).abs() < 0.01 {
        (Pos2::new(a.x, centre(a.y)), Pos2::new(b.x, centre(a.y)))
    } else {
        (a, b)
    };
    let dir = (b - a).normalized();
    let n = Vec2::new(-dir.y, dir.x) * (width / 2.0);
    let base = mesh.vertices.len() as u32;
    for p in [a + n, a - n, b - n, b + n] {
        mesh.colored_vertex(p, color);
    }
    mesh.add_triangle(base, base + 1, base + 2);
    mesh.add_triangle(base, base + 2, base + 3);
}

fn arrow_head(painter: &egui::Painter, tip: Pos2, color: Color32, size: f32) {
    let pts = vec![
        tip,
        tip + Vec2::new(-size * 0.6, -size),
        tip + Vec2::new(size * 0.6, -size),
    ];
    painter.add(Shape::convex_polygon(pts, color, Stroke::NONE));
}

fn distance_to_segment(p: Pos2, a: Pos2, b: Pos2) -> f32 {
    let ab = b - a;
    let t = if ab.length_sq() > 0.0 {
        ((p - a).dot(ab) / ab.length_sq()).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (a + ab * t - p).length()
}

/// `f32 1×4×8×8`: dtype and shape, compact, for edge labels.
pub fn short_shape(graph: &Graph, v: usize) -> String {
    let Some(val) = graph.values.get(v) else {
        return String::new();
    };
    let Some(d) = val.dtype else {
        return String::new();
    };
    let dims: Vec<String> = val.shape.iter().map(i64::to_string).collect();
    let short = d
        .short_name()
        .replace("float", "f")
        .replace("uint", "u")
        .replace("int", "i");
    format!("{short} {}", dims.join("×"))
}

/// One line per tensor: `float32[1, 4, 8, 8]` plus placement and quantization when known.
pub fn value_summary(graph: &Graph, v: usize) -> String {
    let Some(val) = graph.values.get(v) else {
        return format!("value {v}");
    };
    let mut s = format!(
        "{} {}{:?}",
        val.label(),
        val.dtype.map(|d| d.short_name()).unwrap_or_default(),
        val.shape
    );
    if let Some(q) = val.quant {
        s.push_str(&format!(" q(scale {:.6}, zp {})", q.scale, q.zero_point));
    }
    if let Some(p) = val.placement {
        s.push_str(&format!(
            " @arena {} +{} ({} B)",
            p.memory_id, p.offset, p.size
        ));
    }
    s
}

fn node_tooltip(ui: &mut Ui, graph: &Graph, n: NodeId) {
    let node = &graph.nodes[n];
    ui.strong(node.qualified_op());
    if let Some(i) = node.instruction_id {
        ui.label(format!("instruction {i}"));
    }
    for &o in &node.outputs {
        ui.label(format!("out: {}", value_summary(graph, o)));
    }
}

fn edge_tooltip(ui: &mut Ui, graph: &Graph, value: usize) {
    ui.strong(value_summary(graph, value));
    if let Some(p) = graph.producer_through_aliases(value) {
        ui.label(format!("from {}", graph.nodes[p].name));
    }
}
