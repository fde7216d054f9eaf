//! Diff mode: two programs (or a host run and a device capture) side by side, nodes colored by
//! their error against the other side, the per-node metrics table, "jump to first divergence",
//! and for the selected pair both tensors' histograms and an error heatmap.

use egui::{Color32, RichText, ScrollArea, Ui};
use etscope_core::analysis::diff::{DiffReport, Source};
use etscope_core::ir::NodeId;
use etscope_core::tensor::TensorData;

use crate::document::StageView;
use crate::graph_view::GraphView;
use crate::profile_view::heat_color;

/// A computed comparison and its view state.
/// A colour (or none) per graph node.
pub type NodeColors = Vec<Option<Color32>>;

pub struct DiffView {
    pub report: DiffReport,
    pub a: Source,
    pub b: Source,
    pub left: GraphView,
    pub right: GraphView,
    /// The selected row of the report.
    pub row: Option<usize>,
    /// Node colours of both sides, computed on the first frame (they depend only on the report
    /// and the two graphs, which a comparison does not change).
    colors: Option<(NodeColors, NodeColors)>,
    /// The table scrolls to the selected row on the next frame.
    scroll_to_row: bool,
}

/// Color for an SNR: ≥ 40 dB cool, ≤ 0 dB hot.
pub fn snr_color(snr_db: f64) -> Color32 {
    let t = if snr_db.is_infinite() && snr_db > 0.0 {
        0.0
    } else {
        (1.0 - snr_db / 40.0).clamp(0.0, 1.0)
    };
    heat_color(t as f32)
}

/// [`snr_color`] lightened for text on the dark background (the cool end is a dark blue).
pub fn snr_text_color(snr_db: f64) -> Color32 {
    let c = snr_color(snr_db);
    let lift = |v: u8| (f32::from(v) + (255.0 - f32::from(v)) * 0.45) as u8;
    Color32::from_rgb(lift(c.r()), lift(c.g()), lift(c.b()))
}

impl DiffView {
    /// A view of `report` over the two sources.
    pub fn new(report: DiffReport, a: Source, b: Source) -> DiffView {
        let canvas = || {
            let mut v = GraphView::default();
            v.show_minimap = false;
            v
        };
        DiffView {
            report,
            a,
            b,
            left: canvas(),
            right: canvas(),
            row: None,
            colors: None,
            scroll_to_row: false,
        }
    }

    /// Node colors for one side: each matched graph node colored by its row's SNR (programs
    /// and stages alike: rows are keyed by graph node).
    pub fn colors(&self, stage: &StageView, left: bool) -> Vec<Option<Color32>> {
        let mut out = vec![None; stage.graph.nodes.len()];
        for r in &self.report.rows {
            let Some(m) = r.metrics else { continue };
            let nodes = if left { &r.a_nodes } else { &r.b_nodes };
            for &n in nodes {
                if let Some(slot) = out.get_mut(n) {
                    *slot = Some(snr_color(m.snr_db));
                }
            }
        }
        out
    }

    /// The row containing graph node `node` of one side.
    pub fn row_of(&self, node: NodeId, left: bool) -> Option<usize> {
        self.report.rows.iter().position(|r| {
            if left {
                r.a_nodes.contains(&node)
            } else {
                r.b_nodes.contains(&node)
            }
        })
    }

    /// Selects the next (`forward`) or previous row where the threshold is crossed, from the
    /// selected row (wrapping); `false` when no row crosses it.
    pub fn step_divergence(&mut self, forward: bool) -> bool {
        let threshold = self.report.threshold;
        let crossing: Vec<usize> = (0..self.report.rows.len())
            .filter(|&i| self.report.rows[i].diverges(&threshold))
            .collect();
        let next = match (self.row, forward) {
            (Some(at), true) => crossing.iter().find(|&&i| i > at).or(crossing.first()),
            (Some(at), false) => crossing.iter().rev().find(|&&i| i < at).or(crossing.last()),
            (None, true) => crossing.first(),
            (None, false) => crossing.last(),
        };
        match next.copied() {
            Some(i) => {
                self.select_row(i);
                true
            }
            None => false,
        }
    }

    /// Selects a row: both canvases focus their last node of it.
    pub fn select_row(&mut self, i: usize) {
        let Some(r) = self.report.rows.get(i) else {
            return;
        };
        self.row = Some(i);
        self.scroll_to_row = true;
        if let Some(&n) = r.a_nodes.iter().max() {
            self.left.focus(n);
        }
        if let Some(&n) = r.b_nodes.iter().max() {
            self.right.focus(n);
        }
    }

    /// Draws the diff mode.
    pub fn ui(&mut self, ui: &mut Ui, stage_a: &StageView, stage_b: &StageView) {
        ui.horizontal_wrapped(|ui| {
            ui.label(
                RichText::new(format!("A: {}   B: {}", self.report.a, self.report.b)).strong(),
            );
            ui.label(format!(
                "· matched by {} · {} groups",
                self.report.matched_by,
                self.report.rows.len()
            ));
            match self.report.first_divergence {
                Some(i) => {
                    if ui.button("Jump to first divergence").clicked() {
                        self.select_row(i);
                    }
                }
                None => {
                    ui.colored_label(Color32::from_rgb(120, 200, 120), "no divergence");
                }
            }
        });
        ui.horizontal(|ui| {
            // the divergence rule, adjustable: below min SNR and a loss of at least min drop
            // against the SNR carried in
            let mut t = self.report.threshold;
            ui.label("divergence: SNR <");
            let a = ui.add(
                egui::DragValue::new(&mut t.min_snr_db)
                    .range(-50.0..=200.0)
                    .suffix(" dB"),
            );
            ui.label("and a loss ≥");
            let b = ui
                .add(
                    egui::DragValue::new(&mut t.min_drop_db)
                        .range(0.0..=200.0)
                        .suffix(" dB"),
                )
                .on_hover_text(
                    "how much worse than the error carried in (0: any node below the SNR)",
                );
            if a.changed() || b.changed() {
                self.report.rejudge(t);
            }
            ui.separator();
            ui.label("SNR:");
            for (snr, label) in [
                (40.0, "≥ 40 dB"),
                (20.0, "20"),
                (10.0, "10"),
                (0.0, "≤ 0 dB"),
            ] {
                let (r, _) = ui.allocate_exact_size(egui::vec2(14.0, 14.0), egui::Sense::hover());
                ui.painter().rect_filled(r, 2.0, snr_color(snr));
                ui.label(label);
            }
        });
        let height = (ui.available_height() * 0.55).max(220.0);
        if self.colors.is_none() {
            self.colors = Some((self.colors(stage_a, true), self.colors(stage_b, false)));
        }
        let (ca, cb) = self.colors.take().unwrap_or_default();
        let mut clicked: Option<(NodeId, bool)> = None;
        ui.columns(2, |cols| {
            cols[0].allocate_ui(egui::vec2(cols[0].available_width(), height), |ui| {
                if let Some(n) = self.left.show(ui, stage_a, Some(&ca)).clicked {
                    clicked = Some((n, true));
                }
            });
            cols[1].allocate_ui(egui::vec2(cols[1].available_width(), height), |ui| {
                if let Some(n) = self.right.show(ui, stage_b, Some(&cb)).clicked {
                    clicked = Some((n, false));
                }
            });
        });
        self.colors = Some((ca, cb));
        // synced navigation: a click on either side selects the matched group on both
        if let Some((n, left)) = clicked {
            if let Some(row) = self.row_of(n, left) {
                self.select_row(row);
            }
        }
        let mut pick = None;
        // scrolled sideways, not clipped: a narrow window (the inspector open at 1280x800) cut
        // the numbers short (16384 read 1638)
        egui::ScrollArea::horizontal()
            .id_salt("diff-rows-sideways")
            .show(ui, |ui| self.rows_table(ui, &mut pick));
        if let Some(i) = pick {
            self.select_row(i);
        }
    }

    /// The matched groups, one row each: the metrics that decide first (SNR carried in, SNR
    /// after, the loss between them, cosine, LSB counts), then the raw errors, then the
    /// operator lists (cut to their column, in full in a tooltip). The header stays while the
    /// rows scroll; only the rows in view are laid out.
    fn rows_table(&mut self, ui: &mut Ui, pick: &mut Option<usize>) {
        use egui_extras::{Column, TableBuilder};
        let row_height = ui.spacing().interact_size.y;
        let height = ui.available_height();
        let mut table = TableBuilder::new(ui)
            .id_salt("diff-rows")
            .striped(true)
            .resizable(true)
            .auto_shrink([false, false])
            .max_scroll_height(height)
            .column(Column::exact(14.0))
            .column(Column::initial(110.0).at_least(50.0).clip(true))
            .columns(Column::auto().at_least(48.0), 9)
            .column(Column::initial(200.0).at_least(60.0).clip(true))
            .column(Column::remainder().at_least(60.0).clip(true));
        if std::mem::take(&mut self.scroll_to_row) {
            if let Some(row) = self.row {
                table = table.scroll_to_row(row, Some(egui::Align::Center));
            }
        }
        let headers: [(&str, &str); 13] = [
            ("", ""),
            (
                "module",
                "the module (or instruction) whose outputs are compared",
            ),
            ("SNR in (dB)", "the SNR of what this group was given"),
            ("SNR (dB)", "the SNR of its output against the other side"),
            ("loss (dB)", "SNR in minus SNR: what this group itself lost"),
            ("cosine", "cosine similarity of the two outputs"),
            ("±1 LSB", "elements off by one quantization step (blank unless both sides hold integer codes of one type)"),
            (">1 LSB", "elements off by more than one step (blank unless both sides hold integer codes of one type)"),
            ("MSE", "mean squared error"),
            ("max abs", "largest absolute error"),
            ("numel", "elements compared"),
            ("A", "operators of side A in this group"),
            ("B", "operators of side B in this group"),
        ];
        let first_divergence = self.report.first_divergence;
        let selected = self.row;
        let rows = &self.report.rows;
        table
            .header(row_height + 2.0, |mut header| {
                for (title, tip) in headers {
                    header.col(|ui| {
                        let r = ui.strong(title);
                        if !tip.is_empty() {
                            r.on_hover_text(tip);
                        }
                    });
                }
            })
            .body(|body| {
                body.rows(row_height, rows.len(), |mut row| {
                    let i = row.index();
                    let Some(r) = rows.get(i) else { return };
                    row.col(|ui| {
                        if Some(i) == first_divergence {
                            ui.label("▶").on_hover_text("the first divergence");
                        }
                    });
                    row.col(|ui| {
                        let label = if r.module.is_empty() {
                            format!("#{}", r.a_instructions.iter().max().copied().unwrap_or(0))
                        } else {
                            r.module.join(",")
                        };
                        let response = ui
                            .add(
                                egui::Button::selectable(selected == Some(i), label.as_str())
                                    .truncate(),
                            )
                            .on_hover_text(label.as_str());
                        if response.clicked() {
                            *pick = Some(i);
                        }
                    });
                    let db = etscope_core::analysis::diff::db_label;
                    match r.metrics {
                        Some(m) => {
                            row.col(|ui| {
                                ui.monospace(r.snr_in_db.map(db).unwrap_or_else(|| "input".into()));
                            });
                            row.col(|ui| {
                                ui.label(
                                    RichText::new(db(m.snr_db))
                                        .monospace()
                                        .color(snr_text_color(m.snr_db)),
                                );
                            });
                            row.col(|ui| {
                                let loss = r
                                    .snr_in_db
                                    .filter(|s| s.is_finite() && m.snr_db.is_finite())
                                    .map(|s| format!("{:.1}", s - m.snr_db));
                                ui.monospace(loss.unwrap_or_default());
                            });
                            row.col(|ui| {
                                ui.monospace(format!("{:.5}", m.cosine));
                            });
                            row.col(|ui| {
                                ui.monospace(
                                    m.off_by_one.map(|x| x.to_string()).unwrap_or_default(),
                                );
                            });
                            row.col(|ui| {
                                ui.monospace(
                                    m.off_by_more.map(|x| x.to_string()).unwrap_or_default(),
                                );
                            });
                            row.col(|ui| {
                                ui.monospace(format!("{:.3e}", m.mse));
                            });
                            row.col(|ui| {
                                ui.monospace(format!("{:.3e}", m.max_abs));
                            });
                            row.col(|ui| {
                                ui.monospace(m.numel.to_string());
                            });
                        }
                        None => {
                            row.col(|ui| {
                                ui.label(r.note.clone().unwrap_or_default());
                            });
                            for _ in 0..8 {
                                row.col(|_| {});
                            }
                        }
                    }
                    let short = etscope_core::analysis::diff::short_ops;
                    for ops in [&r.a_ops, &r.b_ops] {
                        row.col(|ui| {
                            let text = short(ops);
                            ui.add(egui::Label::new(RichText::new(&text).monospace()).truncate())
                                .on_hover_text(text);
                        });
                    }
                });
            });
    }

    /// The selected pair: both tensors (stats, histogram, heatmap) and the error heatmap.
    pub fn pair_ui(&self, ui: &mut Ui) {
        let Some(r) = self.row.and_then(|i| self.report.rows.get(i)) else {
            ui.label("Select a row or a node to see both tensors.");
            return;
        };
        ui.heading(if r.module.is_empty() {
            "matched pair".to_string()
        } else {
            r.module.join(",")
        });
        ui.label(format!("A: {}", r.a_ops.join(" + ")));
        ui.label(format!("B: {}", r.b_ops.join(" + ")));
        let (Some(&na), Some(&nb)) = (r.a_nodes.iter().max(), r.b_nodes.iter().max()) else {
            return;
        };
        // what each side holds (shape, type, quantization), then the values as compared
        for (label, src, node) in [("A", &self.a, na), ("B", &self.b, nb)] {
            if let Some(t) = src.tensors.get(&node).and_then(|v| v.first()) {
                let quant = src
                    .graph
                    .nodes
                    .get(node)
                    .and_then(|n| n.outputs.first())
                    .and_then(|&v| src.graph.values.get(v))
                    .and_then(|v| v.quant)
                    .map(|q| format!("  q(scale {:.6}, zp {})", q.scale, q.zero_point))
                    .unwrap_or_default();
                ui.monospace(format!(
                    "{label} holds {}{:?}{quant}",
                    t.dtype.short_name(),
                    t.shape
                ));
            }
        }
        match etscope_core::analysis::diff::comparable_pair(&self.a, na, &self.b, nb) {
            Some(Ok((ta, tb))) => {
                ui.small(format!(
                    "compared as {:?} (dequantized, in the model's layout)",
                    ta.shape
                ));
                ScrollArea::vertical()
                    .id_salt("diff-tensors")
                    .show(ui, |ui| {
                        // real values (dequantized), whatever type each side holds
                        ui.label(RichText::new("A").strong());
                        crate::tensor_view::tensor_ui_as(ui, "diff-a", &ta, "values");
                        ui.label(RichText::new("B").strong());
                        crate::tensor_view::tensor_ui_as(ui, "diff-b", &tb, "values");
                        error_heatmap(ui, &ta, &tb);
                    });
            }
            Some(Err(why)) => {
                ui.label(why);
            }
            None => {
                ui.label("one side captured nothing for this group");
            }
        }
    }
}

/// |A − B| over the last two dimensions (at leading index 0), when the shapes agree.
fn error_heatmap(ui: &mut Ui, a: &TensorData, b: &TensorData) {
    let (Ok(x), Ok(y)) = (a.to_f64(), b.to_f64()) else {
        return;
    };
    if a.shape != b.shape {
        ui.label(format!(
            "error heatmap needs equal shapes ({:?} vs {:?})",
            a.shape, b.shape
        ));
        return;
    }
    let err: Vec<f64> = x.iter().zip(&y).map(|(p, q)| (p - q).abs()).collect();
    let t = TensorData {
        dtype: etscope_core::ScalarType::Double,
        shape: a.shape.clone(),
        bytes: err.iter().flat_map(|v| v.to_le_bytes()).collect(),
    };
    ui.label(RichText::new("|A − B|").strong());
    crate::tensor_view::tensor_ui_as(ui, "diff-err", &t, "|A − B|");
}
