//! Profile ▸ Compare with: two captures matched operator by operator (core's
//! `analysis::profile_compare`) as a table sorted by impact — how each row was matched, both
//! p50s, B's p90, both jitters, the change, far slower rows in red — and the selected
//! operator's per-run series of both captures as a plot (jitter and warm-up show there).

use egui::{Color32, RichText, Ui};
use egui_plot::{Legend, Line, Plot, PlotPoints};
use etscope_core::analysis::profile_compare::Comparison;

/// Which row's series is plotted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompareState {
    pub selected: Option<usize>,
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
    ui.label(
        RichText::new(format!(
            "A = {a_name}, B = {b_name}: {} operators matched; total p50 {:.1} → {:.1} {unit}{}",
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
    let mut clicked = None;
    let row_height = ui.text_style_height(&egui::TextStyle::Monospace) + 6.0;
    let table_height = (ui.available_height() * 0.6).max(120.0);
    ui.allocate_ui(egui::vec2(ui.available_width(), table_height), |ui| {
        TableBuilder::new(ui)
            .id_salt("profile-compare-table")
            .striped(true)
            .resizable(true)
            .auto_shrink([false, false])
            .max_scroll_height(table_height)
            .column(Width::auto().at_least(44.0))
            .column(Width::initial(200.0).at_least(80.0).clip(true))
            .column(Width::auto().at_least(80.0))
            .columns(Width::auto().at_least(60.0), 7)
            .header(row_height + 2.0, |mut header| {
                for t in [
                    "A #".to_string(),
                    "op".into(),
                    "matched by".into(),
                    format!("A p50 ({unit})"),
                    format!("B p50 ({unit})"),
                    format!("B p90 ({unit})"),
                    "A jitter".into(),
                    "B jitter".into(),
                    "change".into(),
                    format!("impact ({unit})"),
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
                    let num = |ui: &mut Ui, x: Option<f64>| {
                        if let Some(v) = x {
                            ui.monospace(format!("{v:.1}"));
                        }
                    };
                    row.col(|ui| num(ui, sa.map(|s| s.p50)));
                    row.col(|ui| num(ui, sb.map(|s| s.p50)));
                    row.col(|ui| num(ui, sb.map(|s| s.p90)));
                    for s in [sa, sb] {
                        row.col(|ui| {
                            if let Some(s) = s {
                                ui.monospace(format!("{:.0}%", 100.0 * s.jitter));
                            }
                        });
                    }
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
                        ui.monospace(format!("{:+.1}", r.impact));
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
            ui.label(format!(
                "{}: time per run ({unit}), A and B",
                r.op.trim_start_matches("cortex_m::")
            ));
            let line = |s: Option<&etscope_core::analysis::profile_compare::Spread>, name: &str| {
                s.map(|s| {
                    Line::new(
                        name.to_string(),
                        PlotPoints::from_iter(
                            s.series.iter().enumerate().map(|(k, &v)| [k as f64, v]),
                        ),
                    )
                })
            };
            let (la, lb) = (line(r.a.as_ref(), "A"), line(r.b.as_ref(), "B"));
            Plot::new("profile-compare-series")
                .legend(Legend::default())
                .height(ui.available_height().max(120.0))
                .x_axis_label("run")
                .y_axis_label(unit)
                .allow_scroll(false)
                .show(ui, |plot| {
                    if let Some(l) = la {
                        plot.line(l);
                    }
                    if let Some(l) = lb {
                        plot.line(l);
                    }
                });
        }
    }
    clicked
}
