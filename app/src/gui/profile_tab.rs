//! The Profile tab's wiring: the estimate on a chosen core and clock (the table when no capture
//! is open, the estimate and measured ÷ estimated columns beside a capture, the heat overlay's
//! fallback), and Profile ▸ Compare with (another open document's capture, or a second capture
//! of this program picked from disk or given as `--compare-capture`).

use std::path::Path;

use eframe::egui::{self, RichText, ScrollArea};
use etscope_core::analysis::cost::measured::{
    measured_vs_estimate, MeasuredVsEstimate, OUTLIER_BAND,
};
use etscope_core::analysis::cost::{estimate, CostEstimate, CostOptions};
use etscope_core::analysis::profile::{profile, Profile};
use etscope_core::analysis::profile_compare::Origin;
use etscope_core::analysis::profile_compare::{compare, CaptureSide, Comparison};
use etscope_core::ir::Graph;
use etscope_viewer::cost_view::{self, CostPicker};
use etscope_viewer::document::{capture_machine, capture_origin};
use etscope_viewer::profile_compare_view::{self, CompareState};
use etscope_viewer::profile_view;

use super::*;

/// What an estimate was made of: the document's revision and the core and clock.
type EstimateKey = (u64, CostPicker);

/// … and a capture against it: the capture's tick rate too (its bits).
type MeasuredKey = (u64, CostPicker, Option<u64>);

/// A document's estimate and its capture against it, each kept for the inputs it was made of.
#[derive(Default)]
pub struct CostCache {
    /// The estimate (`Err`: why there is none).
    estimate: Option<(EstimateKey, Result<CostEstimate, String>)>,
    /// The capture against the estimate, or why it is not set against it (another machine).
    measured: Option<(MeasuredKey, Result<MeasuredVsEstimate, String>)>,
    /// The document revision whose capture's core the estimate last followed.
    followed: Option<u64>,
    /// The Memory tab's placed estimate (its revision, the part's name): used instead of the
    /// compute-only one when the picker is on the part's core.
    placed: Option<(u64, String, CostEstimate)>,
}

impl CostCache {
    /// The estimate of `doc`'s program on `picker`, computed when either changed.
    pub fn estimate(&mut self, doc: &Document, picker: CostPicker) -> Option<&CostEstimate> {
        let placed = self
            .placed
            .as_ref()
            .filter(|p| p.2.options.core == picker.core);
        let key = (
            doc.revision ^ placed.map_or(0, |p| p.0.rotate_left(32)),
            picker,
        );
        if self.estimate.as_ref().map(|e| e.0) != Some(key) {
            let program = doc.program.as_ref()?;
            let made = match placed {
                // the part's memory as the Memory tab places it, at the picker's clock
                Some((_, _, est)) => {
                    let mut est = est.clone();
                    est.options.mhz = picker.mhz;
                    Ok(est)
                }
                None => estimate(
                    program,
                    doc.plan_index,
                    CostOptions::compute_only(picker.core, picker.mhz),
                )
                .map_err(|e| e.to_string()),
            };
            self.estimate = Some((key, made));
        }
        self.estimate.as_ref().and_then(|e| e.1.as_ref().ok())
    }

    /// Follows the Memory tab's placement (`None`: no part picked): its estimate replaces the
    /// compute-only one on the part's core.
    pub fn follow_placement(&mut self, placed: Option<(u64, &str, &CostEstimate)>) {
        let same = match (&self.placed, placed) {
            (Some(a), Some(b)) => a.0 == b.0 && a.1 == b.1,
            (None, None) => true,
            _ => false,
        };
        if !same {
            self.placed = placed.map(|(r, n, e)| (r, n.to_string(), e.clone()));
        }
    }

    /// The part whose placement the estimate on `picker` prices, when it does.
    pub fn placed_part(&self, picker: CostPicker) -> Option<&str> {
        self.placed
            .as_ref()
            .filter(|p| p.2.options.core == picker.core)
            .map(|p| p.1.as_str())
    }

    /// `doc`'s capture against the estimate on `picker` (`Err`: why it is not set against
    /// it — the capture is not of the part the estimate models).
    pub fn measured(
        &mut self,
        doc: &Document,
        picker: CostPicker,
        ticks_per_us: Option<f64>,
    ) -> Option<Result<&MeasuredVsEstimate, &str>> {
        let key = (doc.revision, picker, ticks_per_us.map(f64::to_bits));
        if self.measured.as_ref().map(|m| &m.0) != Some(&key) {
            let prof = doc.profile.as_ref()?;
            let machine = capture_machine(doc.declared_time.as_ref());
            let est = self.estimate(doc, picker)?;
            let m = measured_vs_estimate(prof, &machine, est, ticks_per_us, OUTLIER_BAND)
                .map_err(|e| e.0);
            self.measured = Some((key, m));
        }
        self.measured
            .as_ref()
            .map(|m| m.1.as_ref().map_err(String::as_str))
    }

    /// Sets `picker`'s core to the core `doc`'s capture declares, once per capture (the user
    /// may pick another afterwards).
    pub fn follow_capture(&mut self, doc: &Document, picker: &mut CostPicker) {
        if self.followed == Some(doc.revision) {
            return;
        }
        self.followed = Some(doc.revision);
        if let Some(core) = capture_machine(doc.declared_time.as_ref()).core() {
            picker.core = core;
        }
    }
}

/// The line said where measured ÷ estimated would be and is not.
pub fn unlike_note(ui: &mut egui::Ui, why: &str) {
    ui.label(
        RichText::new(format!("Measured ÷ estimated not shown: {why}."))
            .italics()
            .color(egui::Color32::from_rgb(0xe0, 0xb0, 0x60)),
    );
}

/// A capture B compared with the document's own (A), each named the same way (its file and
/// the program it ran).
pub struct CaptureCompare {
    pub a_name: String,
    pub b_name: String,
    pub result: Result<Comparison, String>,
    pub state: CompareState,
}

/// The comparison of `a`'s capture with `b_profile` (`b_graph`: B's program graph when it is
/// another export; `None`: the same program).
fn compare_docs(
    a: &Document,
    a_rate: Option<f64>,
    b_name: String,
    b_profile: &Profile,
    b_graph: Option<&Graph>,
    b_rate: Option<f64>,
    b_origin: &Origin,
) -> CaptureCompare {
    let result = match &a.profile {
        None => Err("this document has no capture to compare".to_string()),
        Some(pa) => {
            let a_graph = b_graph.and(a.pte_graph());
            compare(
                CaptureSide {
                    profile: pa,
                    graph: a_graph,
                    ticks_per_us: a_rate,
                },
                CaptureSide {
                    profile: b_profile,
                    graph: b_graph,
                    ticks_per_us: b_rate,
                },
            )
            .map(|c| c.from_origins(&capture_origin(a.declared_time.as_ref()), b_origin))
            .map_err(|e| e.to_string())
        }
    };
    CaptureCompare {
        a_name: a.capture_name(),
        b_name,
        result,
        state: CompareState::default(),
    }
}

/// Compares the active document's capture with another document's (a re-export: matched by
/// debug handle, module path or stack trace).
pub(super) fn compare_with_document(app: &mut EtscopeApp, other: usize) {
    let (a, b) = (app.active, other);
    if a == b || b >= app.docs.len() || a >= app.docs.len() {
        return;
    }
    let rate = |d: &DocView| {
        d.doc
            .declared_time
            .as_ref()
            .map(|t| t.ticks_per_us)
            .or(app.settings.ticks_per_us)
    };
    let (ra, rb) = (rate(&app.docs[a]), rate(&app.docs[b]));
    let made = {
        let bd = &app.docs[b].doc;
        let Some(bp) = bd.profile.as_ref() else {
            app.messages
                .push(format!("{} has no capture to compare with", bd.title));
            return;
        };
        compare_docs(
            &app.docs[a].doc,
            ra,
            bd.capture_name(),
            bp,
            bd.pte_graph(),
            rb,
            &capture_origin(bd.declared_time.as_ref()),
        )
    };
    app.docs[a].profile.capture_compare = Some(made);
}

/// Compares the active document's capture with a second capture of its program read from
/// `path` (refused, naming the file, when it belongs to another program).
pub(super) fn compare_with_capture(app: &mut EtscopeApp, path: &Path) {
    let rate = app.ticks_per_us();
    let toolbar_rate = app.settings.ticks_per_us;
    let Some(dv) = app.docs.get_mut(app.active) else {
        return;
    };
    // B's profile, and its declared target: its clock (nanoseconds stored) and its machine
    let read = || -> Result<(Profile, Option<etscope_profiler::wire::TargetInfo>), String> {
        let dump = crate::load::etdump(path).map_err(|e| format!("{e:#}"))?;
        let program = dv
            .doc
            .program
            .as_ref()
            .ok_or_else(|| "this document has no program to compare captures of".to_string())?;
        let plan = dv.doc.plan_index;
        crate::load::ensure_etdump_fits(program, plan, &dump, path, Path::new(&dv.doc.title))
            .map_err(|e| format!("{e:#}"))?;
        let target = crate::load::capture_target(path, &dump);
        Ok((profile(&dump, Some(&program.instruction_ops(plan))), target))
    };
    match read() {
        Ok((b, b_target)) => {
            // B's own clock: the one it declares (nanoseconds stored), else the toolbar's
            let b_rate = b_target.as_ref().map(|_| 1000.0).or(toolbar_rate);
            let file = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let name = format!("{file} ({})", dv.doc.title);
            let origin = crate::load::capture_origin(b_target.as_ref());
            dv.profile.capture_compare =
                Some(compare_docs(&dv.doc, rate, name, &b, None, b_rate, &origin));
        }
        Err(e) => app.messages.push(e),
    }
}

/// The Profile tab.
pub(super) fn ui(app: &mut EtscopeApp, ui: &mut egui::Ui) {
    let rate = app.ticks_per_us();
    let before = app.cost;
    ui.horizontal(|ui| app.cost.ui(ui));
    if app.cost != before {
        app.cost_follows_program = false;
    }
    let others: Vec<(usize, String)> = app
        .docs
        .iter()
        .enumerate()
        .filter(|(i, d)| *i != app.active && d.doc.profile.is_some())
        .map(|(i, d)| (i, d.doc.title.clone()))
        .collect();
    let active = app.active;
    let Some(dv) = app.docs.get_mut(active) else {
        return;
    };
    dv.profile.cost.follow_capture(&dv.doc, &mut app.cost);
    // a part picked (the Memory tab, `--part`): its memory as placed prices the estimate on
    // its core, whether or not the Memory tab was shown
    if let Some(program) = dv.doc.program.as_ref() {
        if dv
            .memory
            .part_fit
            .settle(program, program.default_plan_index())
        {
            dv.profile
                .cost
                .follow_placement(dv.memory.part_fit.placed_estimate());
        }
    }
    let picker = app.cost;
    if dv.doc.profile.is_some() {
        ui.horizontal_wrapped(|ui| {
            ui.label("Compare with:");
            for (i, title) in &others {
                if ui
                    .button(format!("{title}'s capture"))
                    .on_hover_text("another export's capture: operators matched by debug handle, module path or stack trace")
                    .clicked()
                {
                    app.commands.push(Command::CompareProfileWith(*i));
                }
            }
            if ui
                .button("another capture of this program…")
                .clicked()
            {
                app.commands.push(Command::CompareCaptureDialog);
            }
            if dv.profile.capture_compare.is_some() && ui.button("close the comparison").clicked() {
                dv.profile.capture_compare = None;
            }
        });
    }
    let mut clicked = None;
    if let Some(cc) = dv.profile.capture_compare.as_mut() {
        match &cc.result {
            Err(e) => {
                ui.colored_label(egui::Color32::from_rgb(220, 70, 60), e);
            }
            Ok(cmp) => {
                clicked = profile_compare_view::compare_ui(
                    ui,
                    cmp,
                    &cc.a_name,
                    &cc.b_name,
                    &mut cc.state,
                );
            }
        }
    } else if dv.doc.profile.is_some() {
        // borrowed field by field: neither the profile nor its estimate is cloned per frame
        let (doc, table, cost) = (&dv.doc, &mut dv.profile.table, &mut dv.profile.cost);
        let vs = cost.measured(doc, picker, rate);
        if let Some(profile) = &doc.profile {
            ui.heading(format!(
                "{} ops over {} runs",
                profile.rows.len(),
                profile.runs
            ));
            if let Some(note) = time_note(doc) {
                ui.label(RichText::new(note).italics());
            }
            if let Some(Err(why)) = vs {
                unlike_note(ui, why);
            }
            let vs = vs.and_then(Result::ok);
            let table_height = (ui.available_height() * 0.62).max(200.0);
            ui.allocate_ui(egui::vec2(ui.available_width(), table_height), |ui| {
                clicked = profile_view::table_ui(ui, profile, table, vs);
            });
            ui.separator();
            ui.label(RichText::new("By op type").strong());
            ScrollArea::vertical()
                .id_salt("rollup-scroll")
                .show(ui, |ui| {
                    egui::Grid::new("rollup").striped(true).show(ui, |ui| {
                        ui.label("op");
                        ui.label("instructions");
                        // every run's time: the table above is per run
                        ui.label(format!(
                            "total over the {} runs ({})",
                            profile.runs,
                            table.unit()
                        ));
                        ui.label("share");
                        ui.end_row();
                        for (op, n, total, share) in profile_view::rollup(profile) {
                            ui.monospace(op);
                            ui.monospace(n.to_string());
                            ui.monospace(table.fmt(total as f64));
                            ui.monospace(format!("{:.1}%", share * 100.0));
                            ui.end_row();
                        }
                    });
                });
        }
    } else {
        let placed_on = dv.profile.cost.placed_part(picker).map(str::to_string);
        match dv.profile.cost.estimate(&dv.doc, picker) {
            Some(est) => {
                ui.weak("No capture is open: every call's estimated cost on the chosen core. Drop an ETDump on the window to see measured times beside it.");
                if let Some(part) = placed_on {
                    ui.weak(format!("The memory terms price the data where the Memory tab places it on the {part}."));
                }
                clicked = cost_view::estimate_table_ui(ui, est);
            }
            None => {
                ui.label(
                    "No ETDump is open: drop one (e.g. etdump_profile_5runs.etdp) on the window.",
                );
            }
        }
    }
    if let Some(i) = clicked {
        dv.select_instruction(i);
        app.tab = Tab::Graph;
    }
}

/// What a capture's times are, where the window knows: an emulated board's are QEMU's
/// instruction counts, not cycles.
pub fn time_note(doc: &Document) -> Option<String> {
    doc.declared_time
        .as_ref()
        .filter(|t| t.emulated)
        .map(|_| format!("times: {}", etscope_viewer::document::EMULATED_TIMES))
}
