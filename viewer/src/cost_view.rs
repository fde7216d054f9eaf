//! The estimate without a board in the Profile view: the core and clock picker, the table of
//! every call's estimated cycles (what the Profile tab shows when no capture is open), and the
//! graph's heat overlay from the estimate. Every place says it is an estimate.

use egui::{Color32, RichText, Ui};
use etscope_core::analysis::cost::{Core, CostEstimate, ESTIMATE_WHAT};
use etscope_core::ir::Graph;

use crate::profile_view::heat_color;

/// The core and clock the estimate is made for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostPicker {
    pub core: Core,
    pub mhz: f64,
}

impl Default for CostPicker {
    fn default() -> Self {
        CostPicker::for_core(Core::M4)
    }
}

impl CostPicker {
    /// `core` at the clock parts with it commonly run at.
    pub fn for_core(core: Core) -> CostPicker {
        CostPicker {
            core,
            mhz: core.typical_mhz(),
        }
    }

    /// The picker's row: "Estimate on \[core\] @ \[MHz\] MHz" (what is drawn from it is keyed by
    /// the pick, so nothing needs telling that it changed).
    pub fn ui(&mut self, ui: &mut Ui) {
        ui.label("Estimate on");
        egui::ComboBox::from_id_salt("cost-core")
            .selected_text(self.core.name())
            .show_ui(ui, |ui| {
                for c in etscope_core::analysis::cost::priced_cores() {
                    ui.selectable_value(&mut self.core, c, c.name());
                }
            });
        ui.label("@");
        ui.add(
            egui::DragValue::new(&mut self.mhz)
                .range(1.0..=2000.0)
                .speed(1.0)
                .suffix(" MHz"),
        );
        ui.weak("(estimate, not a measurement)")
            .on_hover_text(ESTIMATE_WHAT);
    }

    /// "Cortex-M4 @ 120 MHz".
    pub fn label(&self) -> String {
        format!("{} @ {} MHz", self.core.name(), self.mhz)
    }
}

/// Node fill colours from the estimate: each call's share of the costliest call.
pub fn estimate_heat_overlay(graph: &Graph, est: &CostEstimate) -> Vec<Option<Color32>> {
    let max = est
        .rows
        .iter()
        .filter_map(|r| r.cycles)
        .fold(0.0_f64, f64::max)
        .max(1.0);
    graph
        .nodes
        .iter()
        .map(|n| {
            let c = est.row(n.instruction_id?)?.cycles?;
            Some(heat_color((c / max) as f32))
        })
        .collect()
}

/// The estimate as a table (instruction, op, CMSIS-NN path, MACs, cycles, µs, share); returns
/// the instruction of a clicked row.
pub fn estimate_table_ui(ui: &mut Ui, est: &CostEstimate) -> Option<usize> {
    use egui_extras::{Column as Width, TableBuilder};
    let mhz = est.options.mhz;
    let total = est.total_cycles();
    ui.label(
        RichText::new(format!(
            "Estimated on {} @ {mhz} MHz: {:.0} cycles, {:.2} ms{}",
            est.options.core.name(),
            total,
            est.total_ms(),
            if est.unpriced() > 0 {
                format!(
                    " — {} calls without a model left out (a lower bound)",
                    est.unpriced()
                )
            } else {
                String::new()
            }
        ))
        .strong(),
    )
    .on_hover_text(ESTIMATE_WHAT);
    for (id, why) in &est.would_not_run {
        ui.colored_label(
            Color32::from_rgb(220, 120, 60),
            format!(
                "instruction {id}: the {} would not run this call as lowered: {why}",
                est.options.core.name()
            ),
        );
    }
    let mut clicked = None;
    let row_height = ui.text_style_height(&egui::TextStyle::Monospace) + 6.0;
    let height = ui.available_height();
    TableBuilder::new(ui)
        .id_salt("estimate-table")
        .striped(true)
        .resizable(true)
        .auto_shrink([false, false])
        .max_scroll_height(height)
        .column(Width::auto().at_least(44.0))
        .column(Width::initial(200.0).at_least(80.0).clip(true))
        .columns(Width::auto().at_least(64.0), 4)
        .column(Width::remainder().at_least(120.0).clip(true))
        .header(row_height + 2.0, |mut header| {
            // the numbers first, the long path last: a narrow window cuts the path, not them
            for t in [
                "instr",
                "op",
                "est. cycles",
                "est. µs",
                "share",
                "MACs",
                "CMSIS-NN path",
            ] {
                header.col(|ui| {
                    ui.strong(t);
                });
            }
        })
        .body(|body| {
            body.rows(row_height, est.rows.len(), |mut row| {
                let Some(r) = est.rows.get(row.index()) else {
                    return;
                };
                row.col(|ui| {
                    if ui.link(r.instruction_id.to_string()).clicked() {
                        clicked = Some(r.instruction_id);
                    }
                });
                row.col(|ui| {
                    let name = RichText::new(r.op.trim_start_matches("cortex_m::")).monospace();
                    ui.add(egui::Label::new(name).truncate());
                });
                match r.cycles {
                    Some(c) => {
                        row.col(|ui| {
                            ui.monospace(format!("{c:.0}"));
                        });
                        row.col(|ui| {
                            ui.monospace(format!("{:.1}", c / mhz));
                        });
                        row.col(|ui| {
                            if total > 0.0 {
                                ui.monospace(format!("{:.1}%", 100.0 * c / total));
                            }
                        });
                    }
                    None => {
                        row.col(|ui| {
                            ui.weak("—");
                        });
                        row.col(|_| {});
                        row.col(|_| {});
                    }
                }
                row.col(|ui| {
                    if r.macs > 0 {
                        ui.monospace(r.macs.to_string());
                    }
                });
                row.col(|ui| {
                    let text = if r.path.is_empty() {
                        r.note.clone().unwrap_or_default()
                    } else {
                        r.path.clone()
                    };
                    let terms: Vec<String> = r
                        .terms
                        .iter()
                        .map(|t| format!("{}: {:.0} cycles", t.name, t.cycles))
                        .collect();
                    ui.add(egui::Label::new(text).truncate())
                        .on_hover_text(terms.join("\n"));
                });
            });
        });
    clicked
}
