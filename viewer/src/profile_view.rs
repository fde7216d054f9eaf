//! Profile views: the sortable per-op table (Inspector statistics plus share of total), the
//! rollup by op type, the heat overlay colors for the graph, and a zoomable timeline per run.

use std::collections::BTreeMap;

use egui::{Align2, Color32, FontId, Pos2, Rect, Sense, Stroke, StrokeKind, Ui, Vec2};
use etscope_core::analysis::cost::measured::MeasuredVsEstimate;
use etscope_core::analysis::cost::ESTIMATE_WHAT;
use etscope_core::analysis::profile::{inference_runs, Profile};
use etscope_core::formats::etdump::{ETDump, Event};
use etscope_core::ir::Graph;

use crate::category::{Category, CategoryStyle};

/// Columns of the per-op table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    Instruction,
    Op,
    Count,
    Avg,
    P50,
    Min,
    Max,
    Share,
}

/// Table sort state and unit choice.
#[derive(Debug, Clone)]
pub struct ProfileTableState {
    pub sort: Column,
    pub descending: bool,
    /// Ticks per microsecond; `None` shows raw ticks.
    pub ticks_per_us: Option<f64>,
}

impl Default for ProfileTableState {
    fn default() -> Self {
        ProfileTableState {
            sort: Column::Share,
            descending: true,
            ticks_per_us: None,
        }
    }
}

impl ProfileTableState {
    /// Formats a tick count in the chosen unit.
    pub fn fmt(&self, ticks: f64) -> String {
        match self.ticks_per_us {
            Some(r) => format!("{:.3}", ticks / r),
            None => format!("{ticks:.0}"),
        }
    }

    /// The unit's name.
    pub fn unit(&self) -> &'static str {
        if self.ticks_per_us.is_some() {
            "µs"
        } else {
            "ticks"
        }
    }
}

/// One row as shown (and exported).
#[derive(Debug, Clone, PartialEq)]
pub struct TableRow {
    pub instruction_id: usize,
    pub op: String,
    pub count: usize,
    pub avg: f64,
    pub p50: f64,
    pub min: u64,
    pub max: u64,
    /// Share of the summed time of all rows, 0..1.
    pub share: f64,
}

/// Rows of the table in the state's sort order.
pub fn table_rows(profile: &Profile, state: &ProfileTableState) -> Vec<TableRow> {
    let total: u64 = profile.rows.iter().map(|r| r.stats.total()).sum();
    let mut rows: Vec<TableRow> = profile
        .rows
        .iter()
        .map(|r| TableRow {
            instruction_id: r.instruction_id,
            op: r.op.clone(),
            count: r.stats.count,
            avg: r.stats.avg,
            p50: r.stats.p50,
            min: r.stats.min,
            max: r.stats.max,
            share: if total > 0 {
                r.stats.total() as f64 / total as f64
            } else {
                0.0
            },
        })
        .collect();
    let key = |r: &TableRow| -> f64 {
        match state.sort {
            Column::Instruction | Column::Op => r.instruction_id as f64,
            Column::Count => r.count as f64,
            Column::Avg => r.avg,
            Column::P50 => r.p50,
            Column::Min => r.min as f64,
            Column::Max => r.max as f64,
            Column::Share => r.share,
        }
    };
    if state.sort == Column::Op {
        rows.sort_by(|a, b| {
            a.op.cmp(&b.op)
                .then(a.instruction_id.cmp(&b.instruction_id))
        });
    } else {
        rows.sort_by(|a, b| key(a).total_cmp(&key(b)));
    }
    if state.descending {
        rows.reverse();
    }
    rows
}

/// Per op type: (op, instructions, total ticks, share).
pub fn rollup(profile: &Profile) -> Vec<(String, usize, u64, f64)> {
    let total: u64 = profile.rows.iter().map(|r| r.stats.total()).sum();
    let mut by_op: BTreeMap<&str, (usize, u64)> = BTreeMap::new();
    for r in &profile.rows {
        let e = by_op.entry(r.op.as_str()).or_default();
        e.0 += 1;
        e.1 += r.stats.total();
    }
    let mut out: Vec<(String, usize, u64, f64)> = by_op
        .into_iter()
        .map(|(op, (n, t))| {
            (
                op.to_string(),
                n,
                t,
                if total > 0 {
                    t as f64 / total as f64
                } else {
                    0.0
                },
            )
        })
        .collect();
    out.sort_by_key(|r| std::cmp::Reverse(r.2));
    out
}

/// Color for a share of time (0 → cool, 1 → hot).
pub fn heat_color(t: f32) -> Color32 {
    let t = t.clamp(0.0, 1.0).sqrt();
    let stops = [
        (0.0, [40, 60, 110]),
        (0.4, [60, 150, 160]),
        (0.7, [240, 200, 60]),
        (1.0, [230, 60, 40]),
    ];
    for w in stops.windows(2) {
        let ((a, ca), (b, cb)) = (w[0], w[1]);
        if t <= b {
            let f = (t - a) / (b - a);
            let mix = |i: usize| {
                (f32::from(ca[i] as u8) + (f32::from(cb[i] as u8) - f32::from(ca[i] as u8)) * f)
                    as u8
            };
            return Color32::from_rgb(mix(0), mix(1), mix(2));
        }
    }
    Color32::from_rgb(230, 60, 40)
}

/// Node fill colors for the heat overlay on a `.pte` graph: share of the hottest op → color.
pub fn heat_overlay(graph: &Graph, profile: &Profile) -> Vec<Option<Color32>> {
    let max = profile
        .rows
        .iter()
        .map(|r| r.stats.total())
        .max()
        .unwrap_or(0)
        .max(1);
    let mut by_instr: BTreeMap<usize, u64> = BTreeMap::new();
    for r in &profile.rows {
        by_instr.insert(r.instruction_id, r.stats.total());
    }
    graph
        .nodes
        .iter()
        .map(|n| {
            n.instruction_id
                .and_then(|i| by_instr.get(&i))
                .map(|&t| heat_color(t as f32 / max as f32))
        })
        .collect()
}

/// Draws the heat legend under `what` the colours measure.
pub fn heat_legend_ui(ui: &mut Ui, what: &str) {
    ui.label(what);
    ui.horizontal(|ui| {
        ui.label("0%");
        heat_gradient(ui, Vec2::new(120.0, 14.0));
        ui.label("100%");
    });
}

/// A bar of `size` showing [`heat_color`] from cool (left) to hot (right): the scale of the
/// heat overlay and of the tensor heatmaps.
pub fn heat_gradient(ui: &mut Ui, size: Vec2) {
    const STEPS: usize = 40;
    let (rect, _) = ui.allocate_exact_size(size, Sense::hover());
    let mut mesh = egui::Mesh::default();
    for i in 0..STEPS {
        let x0 = rect.left() + rect.width() * i as f32 / STEPS as f32;
        mesh.add_colored_rect(
            Rect::from_min_size(
                Pos2::new(x0, rect.top()),
                Vec2::new(rect.width() / STEPS as f32 + 0.5, rect.height()),
            ),
            heat_color(i as f32 / (STEPS - 1) as f32),
        );
    }
    ui.painter().add(egui::Shape::mesh(mesh));
}

/// Shows the sortable table, with each row's estimate and measured ÷ estimated (outliers in
/// red) when `vs` is given; returns the instruction of a clicked row.
pub fn table_ui(
    ui: &mut Ui,
    profile: &Profile,
    state: &mut ProfileTableState,
    vs: Option<&MeasuredVsEstimate>,
) -> Option<usize> {
    use egui_extras::{Column as Width, TableBuilder};
    let rows = table_rows(profile, state);
    let mut clicked = None;
    let mut sort_by = None;
    let unit = state.unit();
    let row_height = ui.text_style_height(&egui::TextStyle::Monospace) + 6.0;
    // the header row stays while the rows scroll; only the rows in view are laid out; the
    // operator column is cut to its width (the full name in a tooltip) and every column resizes
    let height = ui.available_height();
    // a narrow window scrolls the columns sideways rather than cutting them off
    egui::ScrollArea::horizontal()
        .id_salt("profile-table-columns")
        .show(ui, |ui| {
            TableBuilder::new(ui)
                .id_salt("profile-table")
                .striped(true)
                .resizable(true)
                .auto_shrink([false, false])
                .max_scroll_height(height)
                .column(Width::auto().at_least(44.0))
                .column(Width::initial(240.0).at_least(80.0).clip(true))
                .columns(Width::auto().at_least(56.0), 6)
                .columns(
                    Width::auto().at_least(64.0),
                    if vs.is_some() { 2 } else { 0 },
                )
                .header(row_height + 2.0, |mut header| {
                    for (col, title) in [
                        (Column::Instruction, "instr".to_string()),
                        (Column::Op, "op".to_string()),
                        (Column::Count, "count".to_string()),
                        (Column::Avg, format!("avg ({unit})")),
                        (Column::P50, format!("p50 ({unit})")),
                        (Column::Min, format!("min ({unit})")),
                        (Column::Max, format!("max ({unit})")),
                        (Column::Share, "share".to_string()),
                    ] {
                        let arrow = match (state.sort == col, state.descending) {
                            (true, true) => " ⏷",
                            (true, false) => " ⏶",
                            (false, _) => "",
                        };
                        header.col(|ui| {
                            if ui
                                .button(format!("{title}{arrow}"))
                                .on_hover_text("sort by this column; again to reverse")
                                .clicked()
                            {
                                sort_by = Some(col);
                            }
                        });
                        // the estimate beside the operator's name, where a narrow window shows it
                        if let (Column::Op, Some(v)) = (col, vs) {
                            header.col(|ui| {
                                ui.strong("est. (µs)").on_hover_text(ESTIMATE_WHAT);
                            });
                            header.col(|ui| {
                                ui.strong("meas ÷ est").on_hover_text(ratio_hover(v));
                            });
                        }
                    }
                })
                .body(|body| {
                    body.rows(row_height, rows.len(), |mut row| {
                        let Some(r) = rows.get(row.index()) else {
                            return;
                        };
                        row.col(|ui| {
                            if ui.link(r.instruction_id.to_string()).clicked() {
                                clicked = Some(r.instruction_id);
                            }
                        });
                        row.col(|ui| {
                            let name = egui::RichText::new(&r.op).monospace();
                            ui.add(egui::Label::new(name).truncate());
                        });
                        if let Some(v) = vs {
                            let m = v.row(r.instruction_id);
                            row.col(|ui| match m.and_then(|m| m.estimated_us) {
                                Some(e) => {
                                    ui.monospace(format!("{e:.1}"));
                                }
                                None => {
                                    ui.weak("—");
                                }
                            });
                            row.col(|ui| {
                                if let Some((ratio, m)) = m.and_then(|m| m.ratio.map(|x| (x, m))) {
                                    // with the capture's clock unknown the ratio has no unit: shown
                                    // against the median instead
                                    let text = match (v.measured_in_us, m.relative) {
                                        (true, _) => format!("{ratio:.2}"),
                                        (false, Some(rel)) => format!("{rel:.2}× median"),
                                        (false, None) => String::new(),
                                    };
                                    if m.outlier {
                                        ui.colored_label(Color32::from_rgb(220, 70, 60), text)
                                            .on_hover_text(format!(
                                                "{:.1}× the median ratio",
                                                m.relative.unwrap_or(0.0)
                                            ));
                                    } else {
                                        ui.monospace(text);
                                    }
                                }
                            });
                        }
                        row.col(|ui| {
                            ui.monospace(r.count.to_string());
                        });
                        for v in [r.avg, r.p50, r.min as f64, r.max as f64] {
                            row.col(|ui| {
                                ui.monospace(state.fmt(v));
                            });
                        }
                        row.col(|ui| {
                            ui.monospace(format!("{:.1}%", r.share * 100.0));
                        });
                    });
                });
        });
    if let Some(col) = sort_by {
        if state.sort == col {
            state.descending = !state.descending;
        } else {
            state.sort = col;
            state.descending = !matches!(col, Column::Instruction | Column::Op);
        }
    }
    clicked
}

/// What the measured ÷ estimated column holds.
fn ratio_hover(v: &MeasuredVsEstimate) -> String {
    format!(
        "measured p50 ÷ estimate ({}); red: over {}× from the median ratio{}",
        v.ratio_meaning(),
        v.band,
        v.median_ratio
            .map(|m| format!(" ({m:.3})"))
            .unwrap_or_default()
    )
}

/// One timed op inside a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub instruction_id: usize,
    pub name: String,
    /// Ticks since the run's first event.
    pub start: u64,
    pub end: u64,
}

/// Spans of every inference run, from the ETDump's `native_call_*` / `DELEGATE_CALL` events.
pub fn timeline(etdump: &ETDump) -> Vec<Vec<Span>> {
    inference_runs(etdump)
        .iter()
        .map(|run| {
            let events: Vec<_> = run
                .events
                .iter()
                .filter_map(|e| match e {
                    Event::Profile(p)
                        if p.chain_index == 0
                            && p.instruction_id >= 0
                            && (p.name.starts_with("native_call_")
                                || p.name == "DELEGATE_CALL") =>
                    {
                        Some(p)
                    }
                    _ => None,
                })
                .collect();
            let t0 = events.iter().map(|p| p.start_time).min().unwrap_or(0);
            events
                .iter()
                .map(|p| Span {
                    instruction_id: p.instruction_id as usize,
                    name: p.name.trim_start_matches("native_call_").to_string(),
                    start: p.start_time - t0,
                    end: p.end_time.max(p.start_time) - t0,
                })
                .collect()
        })
        .collect()
}

/// A round step near `raw` (1, 2 or 5 × a power of ten) and the decimals its labels need.
pub fn nice_step(raw: f64) -> (f64, usize) {
    if !(raw.is_finite() && raw > 0.0) {
        return (1.0, 0);
    }
    let power = raw.log10().floor();
    let base = 10f64.powf(power);
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * base)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * base);
    let decimals = if power < 0.0 { (-power) as usize } else { 0 };
    (step, decimals)
}

/// Zoom and pan of the timeline.
#[derive(Debug, Clone, Default)]
pub struct TimelineState {
    /// Visible tick range.
    pub view: Option<(f64, f64)>,
}

/// Draws the runs as rows of bars; scroll zooms, drag pans. Returns a clicked instruction.
pub fn timeline_ui(
    ui: &mut Ui,
    runs: &[Vec<Span>],
    state: &mut TimelineState,
    units: &ProfileTableState,
) -> Option<usize> {
    let end = runs
        .iter()
        .flat_map(|r| r.iter().map(|s| s.end))
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let (mut lo, mut hi) = state.view.unwrap_or((0.0, end));
    let row_h = 26.0;
    let height = (runs.len() as f32 * (row_h + 6.0) + 24.0).max(60.0);
    let (rect, response) = ui.allocate_exact_size(
        Vec2::new(ui.available_width(), height),
        Sense::click_and_drag(),
    );
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 0.0, ui.visuals().extreme_bg_color);
    let label_w = 56.0;
    let plot = Rect::from_min_max(
        Pos2::new(rect.left() + label_w, rect.top() + 18.0),
        rect.max,
    );
    let to_x =
        |t: f64, lo: f64, hi: f64| plot.left() + ((t - lo) / (hi - lo)) as f32 * plot.width();
    if let Some(p) = response.hover_pos() {
        let scroll = ui.input(|i| i.smooth_scroll_delta.y);
        if scroll != 0.0 {
            let at = lo + f64::from((p.x - plot.left()) / plot.width()) * (hi - lo);
            let f = f64::from((-scroll / 300.0).exp());
            lo = at - (at - lo) * f;
            hi = at + (hi - at) * f;
        }
    }
    if response.dragged() {
        let dt = f64::from(response.drag_delta().x / plot.width()) * (hi - lo);
        lo -= dt;
        hi -= dt;
    }
    if response.double_clicked() {
        lo = 0.0;
        hi = end;
    }
    if hi - lo < 1.0 {
        hi = lo + 1.0;
    }
    state.view = Some((lo, hi));
    // axis: each label beside its line, right of it (left of it for the last), and left out
    // where it would run into the previous one
    let font = FontId::monospace(10.0);
    let mut last_label_end = f32::NEG_INFINITY;
    // ticks at round times in the shown unit (1, 2 or 5 × a power of ten), labelled with the
    // decimals the step needs
    let scale = units.ticks_per_us.unwrap_or(1.0);
    let (step, decimals) = nice_step((hi - lo) / scale / 5.0);
    let mut k = (lo / scale / step).ceil();
    let mut marks = Vec::new();
    while k * step * scale <= hi && marks.len() < 20 {
        marks.push(k * step);
        k += 1.0;
    }
    for (i, &shown) in marks.iter().enumerate() {
        let t = shown * scale;
        let x = to_x(t, lo, hi);
        painter.line_segment(
            [Pos2::new(x, plot.top() - 4.0), Pos2::new(x, plot.bottom())],
            Stroke::new(0.5, Color32::from_gray(70)),
        );
        let galley = painter.layout_no_wrap(
            format!("{shown:.decimals$} {}", units.unit()),
            font.clone(),
            Color32::GRAY,
        );
        let width = galley.size().x;
        let left = if i + 1 == marks.len() && x + 3.0 + width > plot.right() {
            x - 3.0 - width
        } else {
            x + 3.0
        };
        if left > last_label_end + 8.0 {
            last_label_end = left + width;
            painter.galley(Pos2::new(left, rect.top() + 2.0), galley, Color32::GRAY);
        }
    }
    let mut clicked = None;
    let pointer = response.hover_pos();
    let mut tip: Option<String> = None;
    for (ri, run) in runs.iter().enumerate() {
        let y0 = plot.top() + ri as f32 * (row_h + 6.0);
        painter.text(
            Pos2::new(rect.left() + 4.0, y0 + row_h / 2.0),
            Align2::LEFT_CENTER,
            format!("run {ri}"),
            font.clone(),
            Color32::GRAY,
        );
        for s in run {
            let (x0, x1) = (to_x(s.start as f64, lo, hi), to_x(s.end as f64, lo, hi));
            if x1 < plot.left() || x0 > plot.right() {
                continue;
            }
            let r = Rect::from_min_max(
                Pos2::new(x0.max(plot.left()), y0),
                Pos2::new(x1.min(plot.right()).max(x0 + 1.0), y0 + row_h),
            );
            painter.rect_filled(r, 1.0, Category::of(&s.name).color());
            if r.width() > 6.0 {
                painter.rect_stroke(r, 1.0, Stroke::new(0.5, Color32::BLACK), StrokeKind::Inside);
            }
            if r.width() > 40.0 {
                // the name inside its bar, cut to fit (the tooltip has it whole)
                let galley = crate::paint::cut_to_width(
                    &painter,
                    s.name.clone(),
                    font.clone(),
                    Color32::WHITE,
                    r.width() - 6.0,
                );
                let at = r.center() - galley.size() / 2.0;
                painter.galley(at, galley, Color32::WHITE);
            }
            if pointer.is_some_and(|p| r.contains(p)) {
                tip = Some(format!(
                    "#{} {}: {} {}",
                    s.instruction_id,
                    s.name,
                    units.fmt((s.end - s.start) as f64),
                    units.unit()
                ));
                if response.clicked() {
                    clicked = Some(s.instruction_id);
                }
            }
        }
    }
    if let Some(t) = tip {
        response.on_hover_text_at_pointer(t);
    }
    clicked
}

#[cfg(test)]
mod tests {
    use super::nice_step;

    #[test]
    fn timeline_ticks_fall_on_round_times() {
        assert_eq!(nice_step(0.37), (0.5, 1));
        assert_eq!(nice_step(3.0), (5.0, 0));
        assert_eq!(nice_step(180.0), (200.0, 0));
        assert_eq!(nice_step(0.0012), (0.002, 3));
        assert_eq!(nice_step(f64::NAN), (1.0, 0));
    }
}
