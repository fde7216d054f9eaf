//! The Memory tab's part: a picker of the built-in parts, and the program's fit on the one
//! picked (`etscope fit`'s answer, `core::analysis::fit`), with a placement of its pools and
//! each call's weights (`core::analysis::place`): the default link, the advisor's with one
//! click, or blocks dragged to another region; each priced with the part's memory
//! (`fit --place`), computed once per pick or move.

use eframe::egui;
use etscope_core::analysis::cost::{estimate, CostEstimate, CostOptions, MemoryCosts};
use etscope_core::analysis::fit::{self, Fit};
use etscope_core::analysis::place::{self, Choice, Placement};
use etscope_core::formats::pte::Program;
use etscope_core::part::{self, Part};

/// What the part's fit is computed from and what the user chose.
struct Priced {
    base: Fit,
    est: CostEstimate,
    placement: Placement,
    /// The placed program's fit.
    placed: Fit,
}

/// The part picked, the program's fit on it and its placement.
#[derive(Default)]
pub struct PartFit {
    pub part: Option<Part>,
    priced: Option<Result<Priced, String>>,
    /// The blocks moved from the default link (the advisor's, or dragged).
    choices: Vec<Choice>,
    /// Why the last move was refused.
    refusal: Option<String>,
    /// Counts every pick and move (what the Profile tab's estimate follows).
    revision: u64,
    /// A placement asked for before the fit was priced (`--place auto|FILE`): `None` inside
    /// for the advisor's, else the file's choices or why they cannot be read.
    requested: Option<Option<Result<Vec<Choice>, String>>>,
}

impl PartFit {
    /// Picks the built-in part `name` (`None`: none); the placement starts at the default link.
    pub fn pick(&mut self, name: Option<&str>) {
        self.pick_part(name.and_then(part::find));
    }

    /// Picks `part` (a built-in one, or one read from a part file); the placement starts at
    /// the default link.
    pub fn pick_part(&mut self, part: Option<Part>) {
        self.part = part;
        self.priced = None;
        self.revision += 1;
        self.choices.clear();
        self.refusal = None;
    }

    /// The fit on the picked part, as placed.
    pub fn fit(&mut self, program: &Program, plan: usize) -> Option<Result<&Fit, &String>> {
        self.priced(program, plan)?;
        self.priced.as_ref().map(|p| p.as_ref().map(|p| &p.placed))
    }

    /// The placement now shown (`None` before a part is picked or when it cannot be priced).
    pub fn placement(&self) -> Option<&Placement> {
        self.priced.as_ref()?.as_ref().ok().map(|p| &p.placement)
    }

    /// Asks for a placement, applied when the fit is first drawn: `auto` (the advisor's) or a
    /// placement file's path, read now (not inside a frame).
    pub fn request(&mut self, place: &str) {
        self.requested = Some((place != "auto").then(|| {
            std::fs::read_to_string(place)
                .map_err(|e| format!("{place}: {e}"))
                .and_then(|text| place::parse(&text, place).map_err(|e| e.to_string()))
        }));
    }

    /// The choices requested: the advisor's, or the file's.
    fn requested_choices(
        &self,
        requested: Option<Result<Vec<Choice>, String>>,
    ) -> Result<Vec<Choice>, String> {
        let p = match self.priced.as_ref() {
            Some(Ok(p)) => p,
            Some(Err(e)) => return Err(e.clone()),
            None => return Err("no fit yet".into()),
        };
        let part = self.part.as_ref().ok_or("no part")?;
        match requested {
            None => Ok(advised_choices(part, p)),
            Some(file) => file,
        }
    }

    /// The placed estimate, its revision and the part's name (what the Profile tab follows).
    pub fn placed_estimate(&self) -> Option<(u64, &str, &CostEstimate)> {
        let part = self.part.as_ref()?;
        let placement = self.placement()?;
        Some((self.revision, part.name.as_str(), &placement.estimate))
    }

    /// Writes into `dir` what `fit --place FILE -o DIR` writes for this placement: the pool
    /// sizes, the linker fragment, the placement and, when weights move into RAM, the placed
    /// program with its `.ptd` and loader (`None` without a priced placement).
    pub fn write_firmware_files(
        &self,
        dir: &std::path::Path,
        program_path: &std::path::Path,
        program: &Program,
        plan: usize,
    ) -> Option<anyhow::Result<crate::firmware_files::Written>> {
        let part = self.part.as_ref()?;
        let p = self.priced.as_ref()?.as_ref().ok()?;
        Some(crate::firmware_files::write(
            dir,
            program_path,
            program,
            plan,
            part,
            &p.placed,
            Some((&p.placement, &p.est)),
        ))
    }

    /// The placement as `fit --place FILE` reads it back (`None` without one).
    pub fn placement_toml(&self, program_name: &str) -> Option<String> {
        let part = self.part.as_ref()?;
        Some(place::to_toml(self.placement()?, program_name, part))
    }

    fn priced(&mut self, program: &Program, plan: usize) -> Option<()> {
        let part = self.part.as_ref()?;
        if self.priced.is_none() {
            self.priced = Some(price(program, plan, part, &self.choices));
        }
        Some(())
    }

    /// Prices the picked part and applies a requested placement (`--place`), so that the fit
    /// and its estimate are ready where they are read (this tab, or the Profile tab's estimate
    /// before this tab was ever shown); `false` when there is nothing to show.
    pub fn settle(&mut self, program: &Program, plan: usize) -> bool {
        if self.part.is_none() || self.priced(program, plan).is_none() {
            return false;
        }
        if let Some(requested) = self.requested.take() {
            match self.requested_choices(requested) {
                Ok(choices) => self.reprice(program, plan, choices),
                Err(e) => self.refusal = Some(format!("--place: {e}")),
            }
        }
        true
    }

    /// Applies `choices` anew (after a move or the advisor).
    fn reprice(&mut self, program: &Program, plan: usize, choices: Vec<Choice>) {
        let Some(part) = self.part.as_ref() else {
            return;
        };
        match price(program, plan, part, &choices) {
            Ok(p) => {
                self.choices = choices;
                self.priced = Some(Ok(p));
                self.refusal = None;
                self.revision += 1;
            }
            Err(e) => self.refusal = Some(e),
        }
    }

    /// The picker, the placement's controls and estimate, then the fit's regions.
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
        if !self.settle(program, plan) {
            return;
        }
        let mut asked = None;
        let moved = match &self.priced {
            Some(Ok(p)) => {
                // the calls the part's core refuses (a program lowered for another CMSIS-NN path)
                let refused = fit::not_run_note(&part, &p.est.would_not_run);
                asked = placement_bar(ui, &part, p, self.refusal.as_deref());
                etscope_viewer::fit_view::fit_ui(
                    ui,
                    &part,
                    &p.placed,
                    Some(&p.placement),
                    refused.as_deref(),
                )
            }
            Some(Err(e)) => {
                ui.colored_label(egui::Color32::from_rgb(240, 120, 90), e);
                None
            }
            None => None,
        };
        if let Some(m) = moved {
            let mut choices = self.choices.clone();
            choices.retain(|c| c.block != m.block);
            choices.push(Choice {
                block: m.block,
                region: m.region,
                bytes: None,
            });
            self.reprice(program, plan, choices);
        }
        // the advisor or the default link asked for in the bar above
        if let Some(asked) = asked {
            self.reprice(program, plan, asked);
        }
    }
}

/// The program's fit, estimate and placement on `part` with `choices` applied.
fn price(
    program: &Program,
    plan: usize,
    part: &Part,
    choices: &[Choice],
) -> Result<Priced, String> {
    let options = CostOptions {
        core: part.core,
        mhz: part.mhz,
        memory: MemoryCosts::of_part(part),
    };
    let est = estimate(program, plan, options).map_err(|e| e.to_string())?;
    let (code, _) = fit::code_sizes(program, plan, part.core);
    let base = fit::fit(program, plan, part, code).map_err(|e| e.to_string())?;
    let placement =
        place::apply(part, &base, &est, choices, "the Memory tab").map_err(|e| e.to_string())?;
    let placed = place::placed_fit(part, &base, &placement, program, plan);
    Ok(Priced {
        base,
        est,
        placement,
        placed,
    })
}

/// "Placement [Default link] [Advise]", the estimate before and after, and what it rests on;
/// the choices asked for, if a button was pressed.
fn placement_bar(
    ui: &mut egui::Ui,
    part: &Part,
    p: &Priced,
    refusal: Option<&str>,
) -> Option<Vec<Choice>> {
    let ms = |c: f64| c / (part.mhz * 1000.0);
    let mut asked = None;
    // wrapped: a long estimate line must not widen the tab past the window (it clipped the
    // notes and the region bars below it)
    ui.horizontal_wrapped(|ui| {
        ui.label("Placement");
        if ui
            .button("Default link")
            .on_hover_text("every pool and the weights where the part's default link puts them")
            .clicked()
        {
            asked = Some(Vec::new());
        }
        if ui
            .button("Advise")
            .on_hover_text("the placement that lowers the estimate most under the regions' sizes (`etscope fit --place auto`); the File menu's Export placement on the part writes it")
            .clicked()
        {
            asked = Some(advised_choices(part, p));
        }
        let pl = &p.placement;
        ui.label(format!(
            "estimate {:.3} ms with the default link, {:.3} ms as placed ({} blocks moved){}",
            ms(pl.before_cycles),
            ms(pl.after_cycles),
            pl.moved().count(),
            if pl.after_cycles - pl.bound_cycles < 0.5 {
                String::new()
            } else {
                format!("; no placement goes under {:.3} ms", ms(pl.bound_cycles))
            }
        ));
    });
    ui.label(
        egui::RichText::new(place::note(part, &p.placement))
            .small()
            .color(egui::Color32::GRAY),
    );
    // what the estimate charges for memory on this part, and what it cannot (unsourced)
    ui.label(
        egui::RichText::new(format!(
            "estimate's memory terms: {}",
            etscope_core::analysis::cost::memory_note::note(part, &p.est.options)
        ))
        .small()
        .color(egui::Color32::GRAY),
    );
    if p.placed.program > p.base.program {
        // what `fit --place` says too: the external constants' entries cost flash
        ui.label(
            egui::RichText::new(format!(
                "the placed program (its .pte and .ptd: File > Export for the firmware on the part) takes {} B of flash, {} B more than the program: each moved constant's entry",
                p.placed.program,
                p.placed.program - p.base.program
            ))
            .small()
            .color(egui::Color32::GRAY),
        );
    }
    if let Some(why) = refusal {
        ui.colored_label(egui::Color32::from_rgb(240, 120, 90), why);
    }
    asked
}

/// The advisor's placement as choices.
fn advised_choices(part: &Part, p: &Priced) -> Vec<Choice> {
    place::advise(part, &p.base, &p.est)
        .moved()
        .map(|b| Choice {
            block: b.name.clone(),
            region: b.region.clone(),
            bytes: None,
        })
        .collect()
}
