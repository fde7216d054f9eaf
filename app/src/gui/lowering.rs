//! "Lower for": etscope's own Cortex-M lowering of the document's ETRecord, on demand, in the
//! background: the target core and flow picked in the Stages panel, every pass's output added as
//! a stage (grouped under what it was lowered for), cancellable while it runs.

use eframe::egui::{self, RichText, Ui};
use etscope_core::lower::{Core, Flow, Module, Options};
use etscope_viewer::document::{LoweringStage, StageView};

use super::DocView;
use crate::job::Job;

/// A lowering running in a worker: what it lowers for and the job.
pub struct LoweringJob {
    pub options: Options,
    pub job: Job<Result<Vec<StageView>, String>>,
}

/// The panel's choices and the running job.
pub struct LoweringState {
    pub core: Core,
    pub flow: Flow,
    pub job: Option<LoweringJob>,
    /// Why the last lowering failed, shown under the controls.
    pub error: Option<String>,
}

impl Default for LoweringState {
    fn default() -> Self {
        LoweringState::for_core(Core::M55)
    }
}

impl LoweringState {
    /// Lowering for `core` (the open program's, where it tells), default flow.
    pub fn for_core(core: Core) -> Self {
        LoweringState {
            core,
            flow: Flow::Default,
            job: None,
            error: None,
        }
    }
}

/// Starts lowering the document's ETRecord for `options` in a worker.
pub fn start(dv: &mut DocView, options: Options) {
    let Some(whole_etrecord) = dv.doc.whole_etrecord_later() else {
        dv.lowering.error = Some("no ETRecord is open with this program".into());
        return;
    };
    // an input to run the stages on: the one opened with the program, else the ETRecord's own
    let input = dv.doc.input.clone();
    let job = Job::spawn(
        format!("lowering for {}", options.core.key()),
        || {},
        move |handle| -> Result<Vec<StageView>, String> {
            let etr = whole_etrecord()?;
            let module = Module::from_etrecord(&etr, None).map_err(|e| e.to_string())?;
            let edge = module.clone();
            let stages = etscope_core::lower::lower(module, &options).map_err(|e| e.to_string())?;
            if handle.cancelled() {
                return Err("cancelled".to_string());
            }
            let inputs = match input {
                Some(t) => vec![t],
                None => etr.representative_inputs().unwrap_or_default(),
            };
            let attribution = (!inputs.is_empty())
                .then(|| {
                    etscope_core::lower::execute::attribute(
                        &edge,
                        &stages,
                        &inputs,
                        etscope_core::lower::device_for(options.core),
                    )
                    .ok()
                })
                .flatten();
            if handle.cancelled() {
                return Err("cancelled".to_string());
            }
            let mut views = LoweringStage::views(&options, stages);
            if let Some(a) = &attribution {
                LoweringStage::attach_numerics(&mut views, a);
            }
            Ok(views)
        },
    );
    dv.lowering.error = None;
    dv.lowering.job = Some(LoweringJob { options, job });
}

/// Takes a finished lowering into the document's stages.
pub fn poll(dv: &mut DocView) {
    let Some(job) = dv.lowering.job.as_mut() else {
        return;
    };
    let Some(outcome) = job.job.poll() else {
        return;
    };
    let cancelled = job.job.is_cancelled();
    let result = outcome.into_result().and_then(|r| r);
    dv.lowering.job = None;
    match result {
        Ok(views) if !cancelled => {
            let current = dv.doc.stages.get(dv.stage).map(|s| s.name.clone());
            dv.doc.add_lowering(views);
            dv.views.resize_with(
                dv.doc.stages.len(),
                etscope_viewer::graph_view::GraphView::default,
            );
            // stay on the stage shown, wherever it is now
            let back = current
                .and_then(|n| dv.doc.stages.iter().position(|s| s.name == n))
                .or(dv.doc.pte_stage)
                .unwrap_or(0);
            dv.stage = back;
            dv.side_by_side = None;
        }
        Ok(_) => {}
        Err(e) if e == "cancelled" => {}
        Err(e) => dv.lowering.error = Some(e),
    }
}

/// The "Lower for" controls.
pub fn controls(dv: &mut DocView, ui: &mut Ui) {
    if !dv.doc.can_lower() {
        return;
    }
    ui.add_space(4.0);
    ui.horizontal_wrapped(|ui| {
        ui.label("Lower for").on_hover_text(
            "etscope's own Cortex-M lowering of the ETRecord's edge graph (ExecuTorch 1.5.1's \
             pass list): every pass becomes a stage",
        );
        egui::ComboBox::from_id_salt("lower-cpu")
            .selected_text(dv.lowering.core.key())
            .width(56.0)
            .show_ui(ui, |ui| {
                for cpu in Core::ALL {
                    ui.selectable_value(&mut dv.lowering.core, cpu, cpu.key())
                        .on_hover_text(format!("CMSIS-NN path: {:?}", cpu.isa()));
                }
            });
        egui::ComboBox::from_id_salt("lower-flow")
            .selected_text(dv.lowering.flow.name())
            .width(64.0)
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut dv.lowering.flow, Flow::Default, "default");
                ui.selectable_value(&mut dv.lowering.flow, Flow::Explicit, "explicit")
                    .on_hover_text(
                        "the explicit-layout flow: _nhwc kernels and explicit transposes",
                    );
            });
        match &dv.lowering.job {
            Some(running) => {
                if super::busy::job_line(ui, &running.job) {
                    running.job.cancel();
                }
            }
            None => {
                if ui.button("Lower").clicked() {
                    let options = Options {
                        core: dv.lowering.core,
                        flow: dv.lowering.flow,
                    };
                    start(dv, options);
                }
            }
        }
    });
    if let Some(e) = &dv.lowering.error {
        ui.colored_label(egui::Color32::from_rgb(240, 150, 90), e);
    }
}

/// The stage list's entry for a lowering stage: `2 FoldAndAnnotateQParams (7 ops)`, an
/// unchanged pass said so.
pub fn label(l: &LoweringStage, ops: usize) -> RichText {
    use etscope_core::lower::execute::Numerics;
    let pass = l.pass.strip_suffix("Pass").unwrap_or(l.pass);
    if !l.changed {
        return RichText::new(format!("{} {pass}  (no change)", l.index)).weak();
    }
    let numbers = match &l.numerics {
        Some(Numerics::Within { snr_db, .. }) | Some(Numerics::Diverges { snr_db, .. }) => {
            format!(" · {snr_db:.1} dB")
        }
        _ => String::new(),
    };
    let text = RichText::new(format!("{} {pass}  ({ops} ops){numbers}", l.index));
    if l.first_change {
        text.color(egui::Color32::from_rgb(240, 190, 90))
    } else {
        text
    }
}

/// What the stage list says on hover: what running the pass did to the numbers.
pub fn numerics_hover(l: &LoweringStage) -> String {
    use etscope_core::lower::execute::Numerics;
    let what = match &l.numerics {
        None => return "not run (no input: open an input .npy with the program)".into(),
        Some(Numerics::Unchanged) => "the pass changed nothing".to_string(),
        Some(Numerics::Equal) => {
            "every node's numbers equal the pass before (to float32 rounding)".to_string()
        }
        Some(Numerics::Within { snr_db, node }) => {
            format!("numbers change within the diff's rule: lowest SNR {snr_db:.1} dB, at {node}")
        }
        Some(Numerics::Diverges { snr_db, node }) => {
            format!("diverges from the pass before at {node}: SNR {snr_db:.1} dB")
        }
        Some(Numerics::Failed(e)) => format!("not compared: {e}"),
    };
    if l.first_change {
        format!("{what}\nthe first pass that changes any number")
    } else {
        what
    }
}
