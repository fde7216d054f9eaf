//! The Memory tab's part: a picker of the built-in parts, and the program's fit on the one
//! picked (`etscope fit`'s answer, `core::analysis::fit`), computed once per pick.

use eframe::egui;
use etscope_core::analysis::fit::{self, Fit};
use etscope_core::formats::pte::Program;
use etscope_core::part::{self, Part};

/// The part picked and the program's fit on it.
#[derive(Default)]
pub struct PartFit {
    pub part: Option<Part>,
    fit: Option<Result<Fit, String>>,
    /// The calls the part's core refuses (a program lowered for another CMSIS-NN path).
    would_not_run: Vec<(usize, String)>,
}

impl PartFit {
    /// Picks the built-in part `name` (`None`: none).
    pub fn pick(&mut self, name: Option<&str>) {
        self.part = name.and_then(part::find);
        self.fit = None;
    }

    /// The fit on the picked part, computed on first use.
    pub fn fit(&mut self, program: &Program, plan: usize) -> Option<&Result<Fit, String>> {
        let part = self.part.as_ref()?;
        if self.fit.is_none() {
            let (code, _) = fit::code_sizes(program, plan, part.core);
            self.fit = Some(fit::fit(program, plan, part, code).map_err(|e| e.to_string()));
            self.would_not_run = fit::would_not_run(program, plan, part.core);
        }
        self.fit.as_ref()
    }

    /// The picker, then the fit's regions.
    pub fn ui(&mut self, ui: &mut egui::Ui, program: &Program, plan: usize) {
        ui.horizontal(|ui| {
            ui.label("On the part");
            let current = self.part.as_ref().map(|p| p.name.clone());
            let mut picked = current.clone();
            egui::ComboBox::from_id_salt("fit-part")
                .selected_text(current.as_deref().unwrap_or("(pick a part)"))
                .show_ui(ui, |ui| {
                    ui.selectable_value(&mut picked, None, "(none)");
                    for p in part::builtin() {
                        let label = format!("{} — {} @ {} MHz", p.name, p.core.name(), p.mhz);
                        ui.selectable_value(&mut picked, Some(p.name.clone()), label);
                    }
                })
                .response
                .on_hover_text("where a default link puts each pool, the program and its code (`etscope fit --part`; sources in docs/parts.md)");
            if picked != current {
                self.pick(picked.as_deref());
            }
        });
        let Some(part) = self.part.clone() else {
            return;
        };
        // computed first (it fills `would_not_run`), then read
        if self.fit(program, plan).is_none() {
            return;
        }
        let refused = fit::not_run_note(&part, &self.would_not_run);
        match &self.fit {
            Some(Ok(f)) => etscope_viewer::fit_view::fit_ui(ui, &part, f, refused.as_deref()),
            Some(Err(e)) => {
                ui.colored_label(egui::Color32::from_rgb(240, 120, 90), e);
            }
            None => {}
        }
    }
}
