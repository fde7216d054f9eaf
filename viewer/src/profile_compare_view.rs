//! Profile ▸ Compare with: two captures matched operator by operator (core's
//! `analysis::profile_compare`) as a table sorted by impact — how each row was matched, both
//! p50s, B's p90, both jitters, the change, far slower rows in red — and the selected
//! operator's per-run series of both captures as a plot (jitter and warm-up show there).

use egui::{Color32, RichText, Ui};
use egui_plot::{Legend, Line, Plot, PlotPoints, Points};
use etscope_core::analysis::profile_compare::{Comparison, Spread};

/// Which row's series is plotted (at first the row of the largest impact).
#[derive(Debug, Clone, PartialEq)]
pub struct CompareState {
    pub selected: Option<usize>,
}

impl Default for CompareState {
    fn default() -> Self {
        CompareState { selected: Some(0) }
    }
}

/// A change above this is drawn red, below its negative green.
const NOTABLE: f64 = 0.10;

/// The table and the selected row's series; returns A's instruction of a row whose instruction
/// link was clicked.
pub fn compare_ui(
    ui: &mut Ui,
    cmp: &Comparison,
    a_name: &str,
    b_name: &str,
    state: &mut CompareState,
) -> Option<usize> {
    use egui_extras::{Column as Width, TableBuilder};
    let unit = cmp.unit.label();
    // decimals that mean something: µs to 0.1, ticks whole
    let digits = if unit == "ticks" { 0 } else { 1 };
    ui.label(
        RichText::new(format!(
            "A = {a_name}, B = {b_name}: {} operators matched; total p50 {:.digits$} {unit} in A, {:.digits$} in B{}",
            cmp.matched(),
            cmp.a_total_p50,
            cmp.b_total_p50,
            if cmp.a_total_p50 > 0.0 {
                format!(
                    " ({:+.1}%)",
                    100.0 * (cmp.b_total_p50 / cmp.a_total_p50 - 1.0)
                )
            } else {
                String::new()
            }
        ))
        .strong(),
    );
    if unit == "ticks" {
        ui.weak("raw ticks of both captures, taken to be one clock");
    }
    if let Some(w) = &cmp.warning {
        ui.colored_label(Color32::from_rgb(0xe0, 0xb0, 0x60), format!("⚠ {w}"));
    }
    let mut clicked = None;
    let row_height = ui.text_style_height(&egui::TextStyle::Monospace) + 6.0;
    let table_height = (ui.available_height() * 0.6).max(120.0);
    let width = ui.available_width();
    ui.allocate_ui(egui::vec2(width, table_height), |ui| {
        // a narrow window scrolls the columns sideways rather than cutting them off
        egui::ScrollArea::horizontal()
            .id_salt("profile-compare-columns")
            .show(ui, |ui| {
                TableBuilder::new(ui)
                    .id_salt("profile-compare-table")
                    .striped(true)
                    .resizable(true)
                    .auto_shrink([false, false])
                    .max_scroll_height(table_height)
                    .column(Width::auto().at_least(44.0))
                    .column(Width::initial(200.0).at_least(80.0).clip(true))
                    .column(Width::auto().at_least(80.0))
                    .columns(Width::auto().at_least(60.0), 8)
                    .header(row_height + 2.0, |mut header| {
                        for t in [
                            "A #".to_string(),
                            "op".into(),
                            "matched by".into(),
                            "change".into(),
                            format!("impact ({unit})"),
                            format!("A p50 ({unit})"),
                            format!("A p90 ({unit})"),
                            format!("B p50 ({unit})"),
                            format!("B p90 ({unit})"),
                            "A jitter".into(),
                            "B jitter".into(),
                        ] {
                            header.col(|ui| {
                                ui.strong(t);
                            });
                        }
                    })
                    .body(|body| {
                        body.rows(row_height, cmp.rows.len(), |mut row| {
                            let i = row.index();
                            let Some(r) = cmp.rows.get(i) else {
                                return;
                            };
                            row.set_selected(state.selected == Some(i));
                            let (sa, sb) = (r.a.as_ref(), r.b.as_ref());
                            row.col(|ui| {
                                if let Some(s) = sa {
                                    if ui.link(s.instruction_id.to_string()).clicked() {
                                        clicked = Some(s.instruction_id);
                                    }
                                }
                            });
                            row.col(|ui| {
                                let text = r.op.trim_start_matches("cortex_m::");
                                let resp = ui.add(
                                    egui::Label::new(RichText::new(text).monospace())
                                        .truncate()
                                        .sense(egui::Sense::click()),
                                );
                                if resp.clicked() {
                                    state.selected = Some(i);
                                }
                                if let Some(m) = &r.module {
                                    resp.on_hover_text(m);
                                }
                            });
                            row.col(|ui| {
                                ui.label(match (r.matched_by, sa) {
                                    (Some(m), _) => m.key(),
                                    (None, Some(_)) => "only in A",
                                    (None, None) => "only in B",
                                });
                            });
                            row.col(|ui| {
                                if let Some(c) = r.change {
                                    let color = if c > NOTABLE {
                                        Color32::from_rgb(220, 70, 60)
                                    } else if c < -NOTABLE {
                                        Color32::from_rgb(70, 170, 90)
                                    } else {
                                        ui.visuals().text_color()
                                    };
                                    ui.colored_label(color, format!("{:+.1}%", 100.0 * c));
                                }
                            });
                            row.col(|ui| {
                                ui.monospace(format!("{:+.digits$}", r.impact));
                            });
                            let num = |ui: &mut Ui, x: Option<f64>| {
                                if let Some(v) = x {
                                    ui.monospace(format!("{v:.digits$}"));
                                }
                            };
                            row.col(|ui| num(ui, sa.map(|s| s.p50)));
                            row.col(|ui| num(ui, sa.map(|s| s.p90)));
                            row.col(|ui| num(ui, sb.map(|s| s.p50)));
                            row.col(|ui| num(ui, sb.map(|s| s.p90)));
                            for s in [sa, sb] {
                                row.col(|ui| {
                                    if let Some(s) = s {
                                        ui.monospace(format!("{:.0}%", 100.0 * s.jitter));
                                    }
                                });
                            }
                        });
                    });
            });
    });
    ui.separator();
    let shown = state.selected.and_then(|i| cmp.rows.get(i));
    match shown {
        None => {
            ui.weak("click an operator's name to plot its time in every run of both captures");
        }
        Some(r) => {
            let runs = |s: Option<&Spread>| s.map_or(0, |s| s.series.len());
            // the range each side spans, said in numbers: the chart starts at 0, so a
            // rounding difference is not drawn as a change
            let range = |s: Option<&Spread>| {
                s.filter(|s| !s.series.is_empty())
                    .map_or(String::new(), |s| {
                        let lo = s.series.iter().copied().fold(f64::INFINITY, f64::min);
                        let hi = s.series.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                        format!(" {lo:.digits$}–{hi:.digits$}")
                    })
            };
            ui.label(format!(
                "{}: time per run ({unit}, axis from 0), A ({} runs{}) and B ({} runs{})",
                r.op.trim_start_matches("cortex_m::"),
                runs(r.a.as_ref()),
                range(r.a.as_ref()),
                runs(r.b.as_ref()),
                range(r.b.as_ref())
            ));
            let points = |s: &Spread| -> Vec<[f64; 2]> {
                s.series
                    .iter()
                    .enumerate()
                    .map(|(k, &v)| [k as f64, v])
                    .collect()
            };
            // a line through the runs and a marker on each (a capture of one run is one point)
            let series = |s: Option<&Spread>, name: &str, color: Color32| {
                s.map(|s| {
                    (
                        Line::new(name.to_string(), PlotPoints::from(points(s))).color(color),
                        Points::new(name.to_string(), PlotPoints::from(points(s)))
                            .color(color)
                            .radius(4.0),
                    )
                })
            };
            let (la, lb) = (
                series(r.a.as_ref(), "A", Color32::from_rgb(90, 160, 230)),
                series(r.b.as_ref(), "B", Color32::from_rgb(235, 140, 60)),
            );
            Plot::new("profile-compare-series")
                .width(width)
                .legend(Legend::default())
                .height(ui.available_height().max(120.0))
                .x_axis_label("run")
                .y_axis_label(unit)
                .include_y(0.0)
                .allow_scroll(false)
                .show(ui, |plot| {
                    for (line, dots) in [la, lb].into_iter().flatten() {
                        plot.line(line);
                        plot.points(dots);
                    }
                });
        }
    }
    clicked
}
