//! The Diff tab's "over a dataset": the active document's program (A) against another open
//! program (B) on every sample of a dataset (`--data D [--labels L]`), on a worker with progress
//! and Cancel, with the statistics `etscope eval` prints: per output the accuracies, agreement,
//! SNR and the confusion matrix as a heat map; per matched group the SNR's minimum, 5th
//! percentile and median, rmse/scale and the worst samples.

use std::path::PathBuf;

use eframe::egui::{self, Color32, RichText};
use etscope_core::analysis::diff_sources::PreparedSource;
use etscope_core::analysis::eval::{Slice, Summary};

use super::EtscopeApp;
use crate::eval_runner::{evaluate, outputs_of, Data, Progress};
use crate::job::Job;
use crate::load::dataset::{labels, Dataset};

/// The dataset chosen and the last evaluation.
#[derive(Default)]
pub struct NumericsState {
    pub data: Option<PathBuf>,
    pub labels: Option<PathBuf>,
    pub job: Option<Job<Result<Finished, String>>>,
    pub result: Option<Finished>,
    pub error: Option<String>,
    /// A sample being read to open it in the single-input Diff (its index and the read).
    pub opening: Option<(usize, Job<Result<etscope_core::tensor::TensorData, String>>)>,
    /// A's program graph coloured by each group's 5th-percentile SNR (computed once per result),
    /// and the canvas that shows it.
    pub colors: Vec<Option<Color32>>,
    pub view: etscope_viewer::graph_view::GraphView,
    /// The document the colours are of.
    pub colored_doc: Option<usize>,
    /// The sensitivity sweep running, and its rows.
    pub sensitivity_job: Option<Job<Result<Vec<SensitivityRow>, String>>>,
    pub sensitivity: Option<Vec<SensitivityRow>>,
    /// Start the sweep when the comparison is done (`--sensitivity`).
    pub sweep_after: bool,
    pub start_sweep_pending: bool,
    /// Also run B on the emulated board over the first `board_limit` samples.
    pub board: bool,
    pub board_limit: usize,
}

/// A finished evaluation: what was compared, and its numbers.
pub struct Finished {
    pub a: String,
    pub b: String,
    pub summary: Summary,
    /// B on the emulated board against the host (when asked): `Err` says why it could not run.
    pub board: Option<Result<crate::board_check::BoardCheck, String>>,
}

/// A (the active document) and B (the first other document with a program), when both have
/// programs: what every comparison of this section runs.
fn sides(app: &EtscopeApp) -> Option<(usize, usize)> {
    let a = app.active;
    app.docs.get(a)?.doc.program.as_ref()?;
    let b = (0..app.docs.len()).find(|&j| j != a && app.docs[j].doc.program.is_some())?;
    Some((a, b))
}

/// Starts A (the active document) against B (the first other document with a program).
pub fn start(app: &mut EtscopeApp, ctx: &egui::Context) {
    let state = &mut app.numerics;
    if state.job.is_some() {
        return;
    }
    let Some(data) = state.data.clone() else {
        state.error = Some("no dataset: start etscope with --data D [--labels L]".into());
        return;
    };
    let label_path = state.labels.clone();
    let Some((ia, ib)) = sides(app) else {
        app.numerics.error =
            Some("open two programs: the reference (shown) and the one to compare with it".into());
        return;
    };
    let (doc_a, doc_b) = (&app.docs[ia].doc, &app.docs[ib].doc);
    let (Some(pa), Some(pb)) = (doc_a.program.clone(), doc_b.program.clone()) else {
        return;
    };
    let (ta, tb) = (doc_a.title.clone(), doc_b.title.clone());
    let recs = (doc_a.whole_etrecord_later(), doc_b.whole_etrecord_later());
    let board = app
        .numerics
        .board
        .then_some(app.numerics.board_limit.max(1));
    let ctx = ctx.clone();
    app.numerics.error = None;
    app.numerics.job = Some(Job::spawn(
        "comparing over the dataset",
        move || ctx.request_repaint(),
        move |handle| -> Result<Finished, String> {
            let rec_a = recs.0.map(|read| read()).transpose()?;
            let rec_b = recs.1.map(|read| read()).transpose()?;
            let side =
                |t: &str,
                 p: &etscope_core::formats::pte::Program,
                 r: &Option<etscope_core::formats::etrecord::ETRecord>| {
                    PreparedSource::program(t, p, r.as_ref().map(|r| (r, t)), None)
                        .map_err(|e| format!("{t}: {e}"))
                };
            let (sa, sb) = (side(&ta, &pa, &rec_a)?, side(&tb, &pb, &rec_b)?);
            let shapes = sa.graph.input_shapes();
            let summary = over_dataset(&sa, &sb, &data, label_path.as_deref(), &shapes, handle)?;
            let board = board.map(|limit| {
                board_over(&tb, &pb, &data, &shapes, limit, handle).map_err(|e| format!("{e:#}"))
            });
            Ok(Finished {
                a: ta,
                b: tb,
                summary,
                board,
            })
        },
    ));
}

/// B on the emulated board over the dataset's first `limit` samples, with progress and cancel.
fn board_over(
    name: &str,
    program: &etscope_core::formats::pte::Program,
    data: &std::path::Path,
    shapes: &[Vec<usize>],
    limit: usize,
    handle: &crate::job::JobHandle,
) -> anyhow::Result<crate::board_check::BoardCheck> {
    let dataset = Dataset::open(data, shapes.len())?;
    let n = limit.min(dataset.len());
    let mut samples = (0..n).map(|i| dataset.sample(i, shapes).map(|inputs| (i as u64, inputs)));
    crate::board_check::check(name, program, &mut samples, &mut |done| {
        handle.progress(done as u64, n as u64);
        !handle.cancelled()
    })
}

/// The dataset at `data` (and its labels) as one run over every sample shares it, reporting to
/// `handle` (progress, and its cancel stops the workers).
fn whole_dataset<'a>(
    data: &'a std::path::Path,
    label_path: Option<&std::path::Path>,
    shapes: &[Vec<usize>],
    handle: &'a crate::job::JobHandle,
) -> Result<Data<'a>, String> {
    let dataset = Dataset::open(data, shapes.len()).map_err(|e| format!("{e:#}"))?;
    let labels = label_path
        .map(|p| labels(p).map_err(|e| format!("{e:#}")))
        .transpose()?;
    Ok(Data {
        path: data,
        slice: Slice::whole(dataset.len() as u64),
        jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
        progress: Progress::Job(handle),
        dataset,
        labels,
        shapes: shapes.to_vec(),
    })
}

/// A against B on every sample of the dataset at `data`, with progress and cancel (the CLI's
/// `eval` loop, `crate::eval_runner`).
fn over_dataset(
    sa: &PreparedSource,
    sb: &PreparedSource,
    data: &std::path::Path,
    label_path: Option<&std::path::Path>,
    shapes: &[Vec<usize>],
    handle: &crate::job::JobHandle,
) -> Result<Summary, String> {
    let d = whole_dataset(data, label_path, shapes, handle)?;
    let eval = evaluate(&sa.label, &sb.label, sa, sb, &d).map_err(|e| format!("{e:#}"))?;
    Ok(eval.summary())
}

/// One row of the window's sensitivity bars.
pub struct SensitivityRow {
    pub group: String,
    /// `float` (the layer kept in float) or `only_quantized` (every other layer in float).
    pub variant: &'static str,
    /// B's accuracy with labels, else its agreement with A.
    pub metric: Option<f64>,
    pub arena_bytes: u64,
    pub flash_bytes: u64,
    /// Estimated cycles per inference on the core B was lowered for, and that core.
    pub cycles: Option<(f64, etscope_core::analysis::cost::Core)>,
    pub error: Option<String>,
}

impl From<crate::sweep::Variant> for SensitivityRow {
    fn from(v: crate::sweep::Variant) -> Self {
        let core = v.cycles_core.and_then(etscope_core::cortex_m::Core::parse);
        SensitivityRow {
            group: v.group,
            variant: v.variant,
            metric: v.b_accuracy.or(v.top1_agreement),
            arena_bytes: v.arena_bytes.unwrap_or(0),
            flash_bytes: v.flash_bytes.unwrap_or(0),
            cycles: v.cycles.zip(core),
            error: v.error,
        }
    }
}

/// Each weighted layer of B kept in float in turn and each alone quantized (B's ETRecord
/// lowered again, [`crate::sweep::variants`] as `eval --sensitivity` runs them), every variant
/// over the dataset against A, on a worker.
fn start_sensitivity(app: &mut EtscopeApp, ctx: &egui::Context) {
    if app.numerics.sensitivity_job.is_some() {
        return;
    }
    let Some(data) = app.numerics.data.clone() else {
        return;
    };
    let label_path = app.numerics.labels.clone();
    // the same two programs the comparison over the dataset compares
    let Some((ia, ib)) = sides(app) else { return };
    let (doc_a, doc_b) = (&app.docs[ia].doc, &app.docs[ib].doc);
    let (Some(pa), Some(pb)) = (doc_a.program.clone(), doc_b.program.clone()) else {
        return;
    };
    let a = (doc_a.title.clone(), pa);
    let Some(read_b) = doc_b.whole_etrecord_later() else {
        app.numerics.error = Some(
            "the sensitivity sweep lowers B's ETRecord again: open B with its .etrecord".into(),
        );
        return;
    };
    let b = (doc_b.title.clone(), pb, read_b);
    let rec_a = doc_a.whole_etrecord_later();
    let ctx = ctx.clone();
    app.numerics.sensitivity_job = Some(Job::spawn(
        "keeping each layer in float",
        move || ctx.request_repaint(),
        move |handle| -> Result<Vec<SensitivityRow>, String> {
            use etscope_core::lower::{Module, Options};
            let (ta, pa) = a;
            let (tb, pb, read_b) = b;
            let rec_a = rec_a.map(|read| read()).transpose()?;
            let rec_b = read_b()?;
            let sa =
                PreparedSource::program(&ta, &pa, rec_a.as_ref().map(|r| (r, ta.as_str())), None)
                    .map_err(|e| format!("{ta}: {e}"))?;
            let shapes = sa.graph.input_shapes();
            let target = etscope_core::kernels::device::Target::for_program(&pb, 0);
            let options =
                Options::lowered_for(&pb, etscope_core::cortex_m::Core::standing_for(target));
            let edge = Module::from_etrecord(&rec_b, None).map_err(|e| format!("{tb}: {e}"))?;
            // A is the same for every variant: its outputs once, the variants' outputs alone
            let d = whole_dataset(&data, label_path.as_deref(), &shapes, handle)?;
            let a_outputs = outputs_of(&ta, &sa, &d).map_err(|e| format!("{e:#}"))?;
            let variants = crate::sweep::variants(
                &crate::sweep::Sides {
                    a: &ta,
                    b: &tb,
                    side_a: &sa,
                    a_outputs: &a_outputs,
                    data: &d,
                },
                &edge,
                &options,
                true,
                crate::sweep::Sweep::All,
                None,
                &|p| Ok(etscope_core::runtime::Device::for_program(p, 0)),
            );
            if handle.cancelled() {
                return Err("cancelled".into());
            }
            let rows: Vec<SensitivityRow> =
                variants.into_iter().map(SensitivityRow::from).collect();
            Ok(rows)
        },
    ));
}

/// Reads sample `i` of the dataset on a worker; [`poll`] then opens the single-input Diff of
/// the two programs on it.
fn open_sample(app: &mut EtscopeApp, i: usize, ctx: &egui::Context) {
    let Some(data) = app.numerics.data.clone() else {
        return;
    };
    let shapes = app
        .docs
        .get(app.active)
        .and_then(|d| d.doc.pte_graph())
        .map(|g| g.input_shapes())
        .unwrap_or_default();
    let ctx = ctx.clone();
    let job = Job::spawn(
        format!("reading sample {i}"),
        move || ctx.request_repaint(),
        move |_| -> Result<etscope_core::tensor::TensorData, String> {
            let dataset =
                Dataset::open(&data, shapes.len().max(1)).map_err(|e| format!("{e:#}"))?;
            let mut inputs = dataset.sample(i, &shapes).map_err(|e| format!("{e:#}"))?;
            if inputs.len() != 1 {
                return Err(format!(
                    "sample {i} has {} inputs; the single-input Diff takes one",
                    inputs.len()
                ));
            }
            Ok(inputs.remove(0))
        },
    );
    app.numerics.opening = Some((i, job));
}

/// Takes a finished evaluation from its worker.
pub fn poll(app: &mut EtscopeApp) {
    if let Some(job) = &mut app.numerics.sensitivity_job {
        if let Some(outcome) = job.poll() {
            app.numerics.sensitivity_job = None;
            match outcome.into_result().and_then(|r| r) {
                Ok(rows) => app.numerics.sensitivity = Some(rows),
                Err(e) if e == "cancelled" => {}
                Err(e) => app.numerics.error = Some(e),
            }
        }
    }
    if let Some((i, job)) = &mut app.numerics.opening {
        if let Some(outcome) = job.poll() {
            let i = *i;
            app.numerics.opening = None;
            match outcome.into_result().and_then(|r| r) {
                Ok(input) => {
                    let other = sides(app).map(|(_, b)| b);
                    if let (Some(dv), Some(j)) = (app.docs.get_mut(app.active), other) {
                        dv.doc.input = Some(input);
                        app.messages
                            .push(format!("comparing sample {i} of the dataset, node by node"));
                        if let Err(e) = app.compare(super::DiffTarget::Document(j)) {
                            app.numerics.error = Some(e);
                        }
                    }
                }
                Err(e) => app.numerics.error = Some(e),
            }
        }
    }
    let Some(job) = &mut app.numerics.job else {
        return;
    };
    let Some(outcome) = job.poll() else { return };
    app.numerics.job = None;
    match outcome.into_result().and_then(|r| r) {
        Ok(done) => {
            // each group's A instructions take the colour of its 5th-percentile SNR
            let colors = app.docs.get(app.active).and_then(|dv| {
                let stage = &dv.doc.stages[dv.doc.pte_stage?];
                let mut c = vec![None; stage.graph.nodes.len()];
                for g in &done.summary.groups {
                    let Some(p5) = g.snr_db_p5 else { continue };
                    for &i in &g.a_instructions {
                        if let Some(n) = stage.graph.node_for_instruction(i) {
                            if let Some(slot) = c.get_mut(n.id) {
                                *slot = Some(etscope_viewer::diff_view::snr_color(p5));
                            }
                        }
                    }
                }
                Some(c)
            });
            app.numerics.colored_doc = colors.as_ref().map(|_| app.active);
            app.numerics.colors = colors.unwrap_or_default();
            app.numerics.view = etscope_viewer::graph_view::GraphView::default();
            app.numerics.result = Some(done);
            if std::mem::take(&mut app.numerics.sweep_after) {
                app.numerics.start_sweep_pending = true;
            }
        }
        Err(e) if e == "cancelled" => {}
        Err(e) => app.numerics.error = Some(e),
    }
}

fn pct(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{:.2}%", v * 100.0))
}

fn db(x: Option<f64>) -> String {
    x.map_or("-".into(), etscope_core::analysis::diff::db_label)
}

/// The "over a dataset" section of the Diff tab.
pub fn ui(app: &mut EtscopeApp, ui: &mut egui::Ui) {
    ui.separator();
    ui.horizontal(|ui| {
        match &app.numerics.data {
            Some(d) => {
                ui.monospace(d.display().to_string());
                if let Some(l) = &app.numerics.labels {
                    ui.weak(format!("labels {}", l.display()));
                }
            }
            None => {
                ui.weak("start etscope with --data D [--labels L] to compare the two programs on every sample");
            }
        }
    });
    let mut start_clicked = false;
    if let Some(job) = &app.numerics.job {
        if super::busy::job_line(ui, job) {
            job.cancel();
        }
    } else if app.numerics.data.is_some() {
        ui.horizontal(|ui| {
            if ui.button("Compare over the dataset").clicked() {
                start_clicked = true;
            }
            ui.checkbox(&mut app.numerics.board, "and run B on the emulated board")
                .on_hover_text("QEMU mps3-an547 (Cortex-M55) with etscope's firmware, one boot per sample: every instruction's output compared bit for bit with the host's (they must be equal)");
            if app.numerics.board {
                ui.label("first");
                ui.add(egui::DragValue::new(&mut app.numerics.board_limit).range(1..=100_000));
                ui.label("samples");
            }
        });
    }
    if start_clicked {
        let ctx = ui.ctx().clone();
        start(app, &ctx);
    }
    let mut sweep_clicked = std::mem::take(&mut app.numerics.start_sweep_pending);
    if let Some(job) = &app.numerics.sensitivity_job {
        if super::busy::job_line(ui, job) {
            job.cancel();
        }
    } else if app.numerics.result.is_some()
        && ui
            .button("Sensitivity: each layer of B in float")
            .on_hover_text("lowers B's ETRecord again with one weighted layer kept in float at a time, and runs every variant over the dataset")
            .clicked()
    {
        sweep_clicked = true;
    }
    if sweep_clicked {
        let ctx = ui.ctx().clone();
        start_sensitivity(app, &ctx);
    }
    if let Some(e) = &app.numerics.error {
        ui.colored_label(Color32::from_rgb(240, 150, 90), e);
    }
    let Some(done) = &app.numerics.result else {
        return;
    };
    match &done.board {
        Some(Ok(c)) => {
            let color = if c.differences.is_empty() {
                Color32::from_rgb(110, 200, 120)
            } else {
                Color32::from_rgb(240, 90, 80)
            };
            ui.colored_label(color, c.headline());
            for d in c.differences.iter().take(10) {
                ui.monospace(d.line());
            }
        }
        Some(Err(e)) => {
            ui.colored_label(
                Color32::from_rgb(240, 150, 90),
                format!("board: not run: {e}"),
            );
        }
        None => {}
    }
    let s = &done.summary;
    let mut clicked: Option<usize> = None;
    // one dB axis for every group's box: from the lowest minimum to the highest 95th percentile
    let finite = |x: Option<f64>| x.filter(|v| v.is_finite());
    let lo = s
        .groups
        .iter()
        .filter_map(|g| finite(g.snr_db_min))
        .fold(f64::INFINITY, f64::min);
    let hi = s
        .groups
        .iter()
        .filter_map(|g| finite(g.snr_db_quartiles[2]).or(finite(g.snr_db_median)))
        .fold(f64::NEG_INFINITY, f64::max);
    let range = if lo.is_finite() && hi.is_finite() && hi > lo {
        (lo, hi)
    } else {
        (0.0, 60.0)
    };
    ui.label(format!(
        "A {}  ·  B {}  ·  {} samples  ·  matched by {}",
        done.a, done.b, s.samples, s.matched_by
    ));
    egui::Grid::new("numerics-outputs")
        .striped(true)
        .show(ui, |ui| {
            for h in [
                "output",
                "A accuracy",
                "B accuracy",
                "top-1 agreement",
                "SNR mean dB",
                "SNR min dB",
                "L2r",
                "cosine",
            ] {
                ui.label(RichText::new(h).strong());
            }
            ui.end_row();
            for o in &s.outputs {
                ui.label(o.index.to_string());
                ui.label(pct(o.a_accuracy));
                ui.label(pct(o.b_accuracy));
                ui.label(pct(o.top1_agreement));
                ui.label(db(o.snr_db_mean));
                ui.label(db(o.snr_db_min));
                ui.label(o.l2r.map_or("-".into(), |v| format!("{v:.4}")));
                ui.label(o.cosine.map_or("-".into(), |v| format!("{v:.5}")));
                ui.end_row();
            }
        });
    ui.horizontal_top(|ui| {
        if let Some(o) = s.outputs.first() {
            ui.vertical(|ui| {
                ui.label(RichText::new("confusion: label (rows) × B's class (columns)").weak())
                    .on_hover_text(
                        "rows: the label (A's top-1 without labels); columns: B's top-1",
                    );
                confusion(ui, &o.confusion);
            });
        }
        egui::ScrollArea::horizontal()
            .id_salt("numerics-groups-scroll")
            .show(ui, |ui| {
                egui::Grid::new("numerics-groups")
                    .striped(true)
                    .show(ui, |ui| {
                        for h in [
                            "group",
                            "SNR dB over the samples",
                            "SNR min",
                            "p5",
                            "median",
                            "given",
                            "rmse/scale",
                            "worst samples",
                        ] {
                            ui.label(RichText::new(h).strong());
                        }
                        ui.end_row();
                        for g in &s.groups {
                            ui.label(if g.module.is_empty() {
                                format!("instr {:?}", g.b_instructions)
                            } else {
                                g.module.clone()
                            });
                            box_plot(ui, g, range);
                            ui.label(db(g.snr_db_min));
                            ui.label(db(g.snr_db_p5));
                            ui.label(db(g.snr_db_median));
                            ui.label(db(g.snr_in_db_median));
                            let rs = g.rmse_over_scale;
                            let text = rs.map_or("-".into(), |v| format!("{v:.2}"));
                            // about 0.29 is a well-quantized layer; far above it, a range problem
                            match rs {
                                Some(v) if v > 2.0 => {
                                    ui.colored_label(Color32::from_rgb(240, 120, 90), text)
                                }
                                _ => ui.label(text),
                            };
                            ui.horizontal(|ui| {
                                for &w in &g.worst_samples {
                                    let b = ui.small_button(w.to_string()).on_hover_text(
                                        "compare the two programs on this sample, node by node",
                                    );
                                    if b.clicked() {
                                        clicked = Some(w as usize);
                                    }
                                }
                            });
                            ui.end_row();
                        }
                    });
            });
    });
    if let Some(i) = clicked {
        let ctx = ui.ctx().clone();
        open_sample(app, i, &ctx);
    }
    if let Some(rows) = &app.numerics.sensitivity {
        let shipped = app
            .numerics
            .result
            .as_ref()
            .and_then(|d| d.summary.outputs.first())
            .and_then(|o| o.b_accuracy.or(o.top1_agreement));
        sensitivity_bars(ui, rows, shipped);
    }
    // A's program, each matched group in the colour of its 5th-percentile SNR
    let (docs, numerics) = (&app.docs, &mut app.numerics);
    if let Some(dv) = numerics.colored_doc.and_then(|d| docs.get(d)) {
        if let Some(stage) = dv.doc.pte_stage.and_then(|p| dv.doc.stages.get(p)) {
            ui.label(
                RichText::new(format!(
                    "{}: each group in the colour of its 5th-percentile SNR over the samples",
                    dv.doc.title
                ))
                .weak(),
            );
            let size = egui::vec2(
                ui.available_width(),
                260.0_f32.min(ui.available_height().max(120.0)),
            );
            ui.allocate_ui(size, |ui| {
                numerics.view.show(ui, stage, Some(&numerics.colors));
            });
        }
    }
}

/// The sensitivity sweep as bars: B's accuracy (or agreement) with each layer in float, the
/// shipped program's as a line, each bar's cost in arena and flash bytes beside it.
fn sensitivity_bars(ui: &mut egui::Ui, rows: &[SensitivityRow], shipped: Option<f64>) {
    ui.label(
        RichText::new(
            "each layer of B kept in float, then each alone quantized: accuracy (agreement without labels) against bytes",
        )
        .weak(),
    );
    let width = 260.0;
    for r in rows {
        ui.horizontal(|ui| {
            let name = if r.variant == "only_quantized" {
                format!("only {} int8", r.group)
            } else {
                r.group.clone()
            };
            ui.add_sized([130.0, 16.0], egui::Label::new(name).truncate())
                .on_hover_text(if r.variant == "only_quantized" {
                    "this layer alone quantized, every other weighted layer in float"
                } else {
                    "this layer kept in float, every other as shipped"
                });
            let (rect, _) = ui.allocate_exact_size(egui::vec2(width, 14.0), egui::Sense::hover());
            let painter = ui.painter_at(rect);
            painter.rect_filled(rect, 2.0, ui.visuals().extreme_bg_color);
            if let Some(m) = r.metric {
                let better = shipped.is_none_or(|s| m > s + 1e-9);
                let color = if better {
                    Color32::from_rgb(70, 160, 110)
                } else {
                    Color32::from_rgb(120, 120, 130)
                };
                let bar = egui::Rect::from_min_size(
                    rect.min,
                    egui::vec2(width * m.clamp(0.0, 1.0) as f32, rect.height()),
                );
                painter.rect_filled(bar, 2.0, color);
            }
            if let Some(s) = shipped {
                let x = rect.min.x + width * s.clamp(0.0, 1.0) as f32;
                painter.line_segment(
                    [
                        egui::pos2(x, rect.min.y - 2.0),
                        egui::pos2(x, rect.max.y + 2.0),
                    ],
                    egui::Stroke::new(2.0, Color32::from_rgb(240, 190, 90)),
                );
            }
            match (&r.error, r.metric) {
                (Some(e), _) => {
                    ui.colored_label(Color32::from_rgb(240, 150, 90), e);
                }
                (None, Some(m)) => {
                    ui.label(format!(
                        "{:.2}%  ·  arena {} B  ·  flash {} B{}",
                        m * 100.0,
                        r.arena_bytes,
                        r.flash_bytes,
                        r.cycles
                            .map(|(c, core)| format!(
                                "  ·  est. {:.0} k cycles on {}",
                                c / 1000.0,
                                core.name()
                            ))
                            .unwrap_or_default()
                    ));
                }
                (None, None) => {
                    ui.weak("-");
                }
            }
        });
    }
}

/// A group's SNR across the samples as a box: whiskers from the minimum to the 95th
/// percentile, the box from the 25th to the 75th, the median a line, the 5th a tick; all on
/// the shared `range` (dB).
fn box_plot(ui: &mut egui::Ui, g: &etscope_core::analysis::eval::GroupSummary, range: (f64, f64)) {
    let (w, h) = (160.0, 14.0);
    let (rect, response) = ui.allocate_exact_size(egui::vec2(w, h), egui::Sense::hover());
    let painter = ui.painter_at(rect);
    let x = |db: Option<f64>| {
        db.filter(|v| v.is_finite()).map(|v| {
            let t = ((v - range.0) / (range.1 - range.0)).clamp(0.0, 1.0) as f32;
            rect.min.x + t * w
        })
    };
    let y = rect.center().y;
    let stroke = egui::Stroke::new(1.5, ui.visuals().strong_text_color());
    let [q1, q3, p95] = g.snr_db_quartiles;
    if let (Some(a), Some(b)) = (x(g.snr_db_min), x(p95).or(x(q3))) {
        painter.line_segment([egui::pos2(a, y), egui::pos2(b, y)], stroke);
    }
    if let (Some(a), Some(b)) = (x(q1), x(q3)) {
        let fill = g
            .snr_db_median
            .filter(|v| v.is_finite())
            .map_or(Color32::GRAY, etscope_viewer::diff_view::snr_color);
        let r = egui::Rect::from_min_max(
            egui::pos2(a, rect.min.y + 1.0),
            egui::pos2(b.max(a + 2.0), rect.max.y - 1.0),
        );
        painter.rect_filled(r, 1.0, fill);
    }
    if let Some(m) = x(g.snr_db_median) {
        painter.line_segment(
            [egui::pos2(m, rect.min.y), egui::pos2(m, rect.max.y)],
            stroke,
        );
    }
    if let Some(p5) = x(g.snr_db_p5) {
        painter.line_segment([egui::pos2(p5, y - 4.0), egui::pos2(p5, y + 4.0)], stroke);
    }
    response.on_hover_text(format!(
        "min {} · p5 {} · p25 {} · median {} · p75 {} · p95 {} dB (axis {:.0} to {:.0} dB)",
        db(g.snr_db_min),
        db(g.snr_db_p5),
        db(q1),
        db(g.snr_db_median),
        db(q3),
        db(p95),
        range.0,
        range.1
    ));
}

/// The confusion matrix as a heat map: each cell shaded by its share of its row, the count in it.
fn confusion(ui: &mut egui::Ui, m: &[Vec<u64>]) {
    let n = m.len();
    if n == 0 || n > 64 {
        ui.weak(format!("{n} classes"));
        return;
    }
    let cell = 22.0;
    // class numbers along the top (B's class) and the left (the label), as the CLI's table
    let margin = 18.0;
    let (outer, _) = ui.allocate_exact_size(
        egui::vec2(cell * n as f32 + margin, cell * n as f32 + margin),
        egui::Sense::hover(),
    );
    let rect = egui::Rect::from_min_size(
        outer.min + egui::vec2(margin, margin),
        egui::vec2(cell * n as f32, cell * n as f32),
    );
    let ticks = ui.painter_at(outer);
    for k in 0..n {
        let font = egui::FontId::monospace(9.0);
        let color = ui.visuals().weak_text_color();
        ticks.text(
            egui::pos2(
                rect.min.x + (k as f32 + 0.5) * cell,
                outer.min.y + margin / 2.0,
            ),
            egui::Align2::CENTER_CENTER,
            k.to_string(),
            font.clone(),
            color,
        );
        ticks.text(
            egui::pos2(
                outer.min.x + margin / 2.0,
                rect.min.y + (k as f32 + 0.5) * cell,
            ),
            egui::Align2::CENTER_CENTER,
            k.to_string(),
            font,
            color,
        );
    }
    let painter = ui.painter_at(rect);
    for (r, row) in m.iter().enumerate() {
        let total: u64 = row.iter().sum();
        for (c, &count) in row.iter().enumerate() {
            let share = if total > 0 {
                count as f32 / total as f32
            } else {
                0.0
            };
            let base = if r == c {
                Color32::from_rgb(70, 160, 110)
            } else {
                Color32::from_rgb(220, 90, 70)
            };
            let fill = Color32::from_rgba_unmultiplied(
                base.r(),
                base.g(),
                base.b(),
                (share * 230.0) as u8 + 12,
            );
            let at = rect.min + egui::vec2(c as f32 * cell, r as f32 * cell);
            let cell_rect = egui::Rect::from_min_size(at, egui::vec2(cell - 1.0, cell - 1.0));
            painter.rect_filled(cell_rect, 2.0, fill);
            if count > 0 {
                painter.text(
                    cell_rect.center(),
                    egui::Align2::CENTER_CENTER,
                    count.to_string(),
                    egui::FontId::monospace(9.0),
                    ui.visuals().strong_text_color(),
                );
            }
        }
    }
}
