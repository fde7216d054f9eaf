//! The graph canvas: draws a laid-out stage with culling (only ranks and nodes inside the view
//! are visited) and level of detail (one mesh of plain boxes when zoomed out, labelled boxes and
//! curved edges when zoomed in), plus a minimap, hover tooltips and selection highlighting.
//!
//! `GraphView` holds only view state (camera, selection); the data comes in per call.

use egui::{Align2, Color32, FontId, Mesh, Pos2, Rect, Sense, Shape, Stroke, StrokeKind, Ui, Vec2};
use etscope_core::ir::{Graph, NodeId};

use crate::document::StageView;
use crate::layout::{NODE_HEIGHT, RANK_GAP};

/// Below this on-screen node height, nodes are drawn as plain boxes in one mesh.
const LOD_BOXES_BELOW: f32 = 9.0;
/// Above this zoom edges are drawn as curves.
const CURVES_ABOVE: f32 = 0.55;
/// Below this zoom a whole-graph fit is unreadable; large graphs open at the top instead.
const MIN_READABLE_FIT: f32 = 0.3;
/// Minimap size in points.
const MINIMAP: Vec2 = Vec2::new(200.0, 150.0);

/// Camera and selection of one graph canvas.
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

/// Optional per-node fill colors (heat overlays, diff errors); `None` keeps the category color.
pub type Overlay<'a> = Option<&'a [Option<Color32>]>;

impl GraphView {
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
        stage.layout.pos.get(n).map(|&p| self.to_screen(self.last_rect, p))
    }

    fn to_screen(&self, rect: Rect, p: [f32; 2]) -> Pos2 {
        rect.center() + (Pos2::new(p[0], p[1]) - self.center) * self.zoom
    }

    fn to_world(&self, rect: Rect, p: Pos2) -> Pos2 {
        self.center + (p - rect.center()) / self.zoom
    }

    fn apply_pending(&mut self, rect: Rect, stage: &StageView) {
        let b = stage.layout.bounds;
        if self.fit_pending && rect.width() > 1.0 {
            let (w, h) = ((b[2] - b[0]).max(1.0), (b[3] - b[1]).max(1.0));
            let whole = ((rect.width() - 40.0) / w).min((rect.height() - 40.0) / h).clamp(0.002, 2.0);
            if whole >= MIN_READABLE_FIT {
                self.zoom = whole;
                self.center = Pos2::new((b[0] + b[2]) / 2.0, (b[1] + b[3]) / 2.0);
            } else {
                // Too large to read whole: start readable at the top (the inputs), fitting the
                // width when that is readable; the minimap shows where this is.
                self.zoom = ((rect.width() - 40.0) / w).clamp(MIN_READABLE_FIT, 0.8);
                let half_h = rect.height() / 2.0 / self.zoom;
                let top_x = stage.layout.ranks.first().and_then(|r| r.first()).map_or((b[0] + b[2]) / 2.0, |&v| stage.layout.pos[v][0]);
                self.center = Pos2::new(top_x, b[1] + half_h - 10.0);
            }
            self.fit_pending = false;
        }
        if let Some(n) = self.focus_pending.take() {
            if let Some(p) = stage.layout.pos.get(n) {
                self.center = Pos2::new(p[0], p[1]);
                self.zoom = self.zoom.max(0.9);
            }
        }
    }

    /// Node under a world point.
    pub fn node_at(stage: &StageView, world: Pos2) -> Option<NodeId> {
        let l = &stage.layout;
        let r = ((world.y + NODE_HEIGHT / 2.0) / RANK_GAP).floor();
        if r < 0.0 {
            return None;
        }
        let rank = l.ranks.get(r as usize)?;
        let y = r * RANK_GAP;
        if (world.y - y).abs() > NODE_HEIGHT / 2.0 {
            return None;
        }
        let i = rank.partition_point(|&v| l.pos[v][0] + l.width[v] / 2.0 < world.x);
        rank.get(i).copied().filter(|&v| (world.x - l.pos[v][0]).abs() <= l.width[v] / 2.0)
    }

    /// Draws the canvas and handles navigation, hover and selection.
    pub fn show(&mut self, ui: &mut Ui, stage: &StageView, overlay: Overlay<'_>) -> GraphResponse {
        let (rect, response) = ui.allocate_exact_size(ui.available_size(), Sense::click_and_drag());
        self.last_rect = rect;
        self.apply_pending(rect, stage);
        let mut out = GraphResponse::default();
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 0.0, ui.visuals().extreme_bg_color);

        let minimap_rect = Rect::from_min_size(rect.max - MINIMAP - Vec2::splat(8.0), MINIMAP);
        let pointer = response.hover_pos();
        let on_minimap = self.show_minimap && pointer.is_some_and(|p| minimap_rect.contains(p));

        // navigation: drag pans, wheel zooms around the pointer, the minimap recenters
        if response.dragged() {
            if on_minimap || response.interact_pointer_pos().is_some_and(|p| self.show_minimap && minimap_rect.contains(p)) {
                if let Some(p) = response.interact_pointer_pos() {
                    self.center = minimap_to_world(stage, minimap_rect, p);
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

        let world_min = self.to_world(rect, rect.min);
        let world_max = self.to_world(rect, rect.max);
        let view = Rect::from_min_max(world_min, world_max);
        let hovered = pointer.filter(|_| !on_minimap).and_then(|p| Self::node_at(stage, self.to_world(rect, p)));
        out.hovered = hovered;

        self.paint_edges(&painter, rect, view, stage);
        self.paint_nodes(&painter, rect, view, stage, overlay, hovered);
        if self.show_minimap {
            self.paint_minimap(&painter, minimap_rect, view, stage, overlay);
        }

        if response.clicked() && !on_minimap {
            match hovered {
                Some(n) => {
                    self.selected = Some(n);
                    out.clicked = Some(n);
                }
                None => {
                    self.selected = None;
                    out.cleared = true;
                }
            }
        }
        if let Some(n) = hovered {
            response.on_hover_ui_at_pointer(|ui| node_tooltip(ui, &stage.graph, n));
        } else if let Some(p) = pointer.filter(|_| !on_minimap && self.zoom > 0.25) {
            if let Some(e) = self.edge_near(rect, view, stage, p) {
                response.on_hover_ui_at_pointer(|ui| edge_tooltip(ui, &stage.graph, e));
            }
        }
        out
    }

    fn edge_points(&self, rect: Rect, stage: &StageView, from: NodeId, to: NodeId) -> (Pos2, Pos2) {
        let l = &stage.layout;
        let a = self.to_screen(rect, [l.pos[from][0], l.pos[from][1] + NODE_HEIGHT / 2.0]);
        let b = self.to_screen(rect, [l.pos[to][0], l.pos[to][1] - NODE_HEIGHT / 2.0]);
        (a, b)
    }

    fn edge_visible(view: Rect, stage: &StageView, from: NodeId, to: NodeId) -> bool {
        let (a, b) = (stage.layout.pos[from], stage.layout.pos[to]);
        let bbox = Rect::from_two_pos(Pos2::new(a[0], a[1]), Pos2::new(b[0], b[1]));
        bbox.intersects(view)
    }

    fn paint_edges(&self, painter: &egui::Painter, rect: Rect, view: Rect, stage: &StageView) {
        let selected = self.selected;
        let base = Color32::from_gray(120);
        let into = Color32::from_rgb(0x4f, 0xa3, 0xff);
        let out_of = Color32::from_rgb(0xff, 0x9f, 0x43);
        let mut mesh = Mesh::default();
        let curves = self.zoom >= CURVES_ABOVE;
        let width = (1.2 * self.zoom.sqrt()).clamp(0.6, 2.0);
        for e in &stage.graph.edges {
            if !Self::edge_visible(view, stage, e.from, e.to) {
                continue;
            }
            let (a, b) = self.edge_points(rect, stage, e.from, e.to);
            let (color, w) = match selected {
                Some(s) if e.to == s => (into, width * 2.0),
                Some(s) if e.from == s => (out_of, width * 2.0),
                _ => (base, width),
            };
            if curves {
                let dy = (b.y - a.y).abs().max(20.0) * 0.5;
                let shape = egui::epaint::CubicBezierShape::from_points_stroke(
                    [a, a + Vec2::new(0.0, dy), b - Vec2::new(0.0, dy), b],
                    false,
                    Color32::TRANSPARENT,
                    Stroke::new(w, color),
                );
                painter.add(shape);
                if self.zoom > 0.8 {
                    arrow_head(painter, b, color, 5.0 * self.zoom.min(1.5));
                }
            } else {
                add_segment(&mut mesh, a, b, w, color);
            }
        }
        if !mesh.is_empty() {
            painter.add(Shape::mesh(mesh));
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn paint_nodes(&self, painter: &egui::Painter, rect: Rect, view: Rect, stage: &StageView, overlay: Overlay<'_>, hovered: Option<NodeId>) {
        let l = &stage.layout;
        let node_h = NODE_HEIGHT * self.zoom;
        let boxes_only = node_h < LOD_BOXES_BELOW;
        let neighbours: Vec<NodeId> = match self.selected {
            Some(s) => stage.graph.edges.iter().filter(|e| e.from == s || e.to == s).map(|e| if e.from == s { e.to } else { e.from }).collect(),
            None => Vec::new(),
        };
        let max_half_width = 140.0;
        let first_rank = (((view.min.y - NODE_HEIGHT) / RANK_GAP).floor().max(0.0)) as usize;
        let last_rank = (((view.max.y + NODE_HEIGHT) / RANK_GAP).ceil().max(0.0)) as usize;
        let mut mesh = Mesh::default();
        let font = FontId::proportional((12.0 * self.zoom).clamp(6.0, 18.0));
        for rank in l.ranks.iter().take(last_rank + 1).skip(first_rank) {
            let start = rank.partition_point(|&v| l.pos[v][0] < view.min.x - max_half_width);
            for &v in &rank[start..] {
                if l.pos[v][0] > view.max.x + max_half_width {
                    break;
                }
                let c = self.to_screen(rect, l.pos[v]);
                let size = Vec2::new(l.width[v] * self.zoom, node_h);
                let r = Rect::from_center_size(c, size);
                if !r.intersects(rect) {
                    continue;
                }
                let fill = overlay.and_then(|o| o.get(v).copied().flatten()).unwrap_or_else(|| stage.categories[v].color());
                if boxes_only {
                    mesh.add_colored_rect(r, fill);
                    if self.selected == Some(v) {
                        painter.rect_stroke(r.expand(2.0), 1.0, Stroke::new(2.0, Color32::WHITE), StrokeKind::Outside);
                    }
                    continue;
                }
                let radius = (4.0 * self.zoom).min(6.0);
                painter.rect_filled(r, radius, fill);
                let outline = if self.selected == Some(v) {
                    Some(Stroke::new(2.5, Color32::WHITE))
                } else if neighbours.contains(&v) {
                    Some(Stroke::new(1.5, Color32::from_rgb(0xff, 0xe0, 0x80)))
                } else if hovered == Some(v) {
                    Some(Stroke::new(1.0, Color32::from_gray(230)))
                } else {
                    None
                };
                if let Some(s) = outline {
                    painter.rect_stroke(r, radius, s, StrokeKind::Outside);
                }
                if node_h >= 14.0 {
                    painter.text(c, Align2::CENTER_CENTER, &stage.labels[v], font.clone(), Color32::WHITE);
                }
            }
        }
        if !mesh.is_empty() {
            painter.add(Shape::mesh(mesh));
        }
    }

    fn paint_minimap(&self, painter: &egui::Painter, mini: Rect, view: Rect, stage: &StageView, overlay: Overlay<'_>) {
        painter.rect_filled(mini, 4.0, Color32::from_black_alpha(200));
        painter.rect_stroke(mini, 4.0, Stroke::new(1.0, Color32::from_gray(90)), StrokeKind::Inside);
        let l = &stage.layout;
        let n = l.pos.len();
        let step = (n / 4000).max(1);
        let mut mesh = Mesh::default();
        for v in (0..n).step_by(step) {
            let p = world_to_minimap(stage, mini, Pos2::new(l.pos[v][0], l.pos[v][1]));
            let fill = overlay.and_then(|o| o.get(v).copied().flatten()).unwrap_or_else(|| stage.categories[v].color());
            mesh.add_colored_rect(Rect::from_center_size(p, Vec2::splat(2.0)), fill);
        }
        painter.add(Shape::mesh(mesh));
        let a = world_to_minimap(stage, mini, view.min);
        let b = world_to_minimap(stage, mini, view.max);
        // keep the frame visible even when the view is a sliver of a huge graph
        let frame = Rect::from_center_size(Rect::from_two_pos(a, b).center(), Rect::from_two_pos(a, b).size().max(Vec2::splat(6.0))).intersect(mini);
        painter.rect_stroke(frame, 0.0, Stroke::new(1.5, Color32::from_rgb(0xff, 0xe0, 0x80)), StrokeKind::Inside);
    }

    fn edge_near(&self, rect: Rect, view: Rect, stage: &StageView, p: Pos2) -> Option<usize> {
        let mut best: Option<(f32, usize)> = None;
        for (i, e) in stage.graph.edges.iter().enumerate() {
            if !Self::edge_visible(view, stage, e.from, e.to) {
                continue;
            }
            let (a, b) = self.edge_points(rect, stage, e.from, e.to);
            let d = distance_to_segment(p, a, b);
            if d < 5.0 && best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, i));
            }
        }
        best.map(|(_, i)| i)
    }
}

fn minimap_scale(stage: &StageView, mini: Rect) -> (f32, Pos2) {
    let b = stage.layout.bounds;
    let (w, h) = ((b[2] - b[0]).max(1.0), (b[3] - b[1]).max(1.0));
    let s = ((mini.width() - 8.0) / w).min((mini.height() - 8.0) / h);
    (s, Pos2::new((b[0] + b[2]) / 2.0, (b[1] + b[3]) / 2.0))
}

fn world_to_minimap(stage: &StageView, mini: Rect, p: Pos2) -> Pos2 {
    let (s, c) = minimap_scale(stage, mini);
    mini.center() + (p - c) * s
}

fn minimap_to_world(stage: &StageView, mini: Rect, p: Pos2) -> Pos2 {
    let (s, c) = minimap_scale(stage, mini);
    c + (p - mini.center()) / s
}

fn add_segment(mesh: &mut Mesh, a: Pos2, b: Pos2, width: f32, color: Color32) {
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
    let pts = vec![tip, tip + Vec2::new(-size * 0.6, -size), tip + Vec2::new(size * 0.6, -size)];
    painter.add(Shape::convex_polygon(pts, color, Stroke::NONE));
}

fn distance_to_segment(p: Pos2, a: Pos2, b: Pos2) -> f32 {
    let ab = b - a;
    let t = if ab.length_sq() > 0.0 { ((p - a).dot(ab) / ab.length_sq()).clamp(0.0, 1.0) } else { 0.0 };
    (a + ab * t - p).length()
}

/// One line per tensor: `float32[1, 4, 8, 8]` plus placement and quantization when known.
pub fn value_summary(graph: &Graph, v: usize) -> String {
    let Some(val) = graph.values.get(v) else { return format!("value {v}") };
    let mut s = format!("{} {}{:?}", val.label(), val.dtype.map(|d| d.short_name()).unwrap_or_default(), val.shape);
    if let Some(q) = val.quant {
        s.push_str(&format!(" q(scale {:.6}, zp {})", q.scale, q.zero_point));
    }
    if let Some(p) = val.placement {
        s.push_str(&format!(" @arena {} +{} ({} B)", p.memory_id, p.offset, p.size));
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

fn edge_tooltip(ui: &mut Ui, graph: &Graph, e: usize) {
    let edge = graph.edges[e];
    ui.strong(value_summary(graph, edge.value));
    ui.label(format!("from {} to {}", graph.nodes[edge.from].name, graph.nodes[edge.to].name));
}
