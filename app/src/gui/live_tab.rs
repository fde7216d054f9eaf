//! The Live tab: choose a target (emulated board, GDB server, debug probe), start, pause, stop;
//! throughput, frames, losses and runs so far; the per-op table of the recent runs. Each snapshot
//! replaces the document's ETDump, so the Profile tab, the graph's heat overlay and the Timeline
//! follow the capture, and captured outputs feed Diff's "vs device capture". Captures are
//! saved where the form says (by default the app's data directory), never silently into the
//! current directory.

use std::path::PathBuf;

use eframe::egui::{self, RichText, ScrollArea};
use etscope_profiler::transport::probe::{list_probes, ProbeEntry};
use etscope_viewer::profile_view;

use super::live::{LiveSession, LiveTarget};
use super::{EtscopeApp, Tab};

/// Which kind of target the form describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TargetKind {
    #[default]
    Board,
    Gdb,
    Probe,
}

/// The connect form's fields (kept across sessions).
#[derive(Debug, Clone)]
pub struct LiveForm {
    pub kind: TargetKind,
    pub runs: u32,
    pub intermediates: bool,
    pub gdb: String,
    pub elf: String,
    pub probe: String,
    pub chip: String,
    pub out: String,
    pub probes: Option<Vec<ProbeEntry>>,
}

impl Default for LiveForm {
    fn default() -> Self {
        LiveForm {
            kind: TargetKind::Board,
            runs: 20,
            intermediates: true,
            gdb: "localhost:3333".into(),
            elf: String::new(),
            probe: String::new(),
            chip: String::new(),
            out: capture_dir().join(DEFAULT_CAPTURE).display().to_string(),
            probes: None,
        }
    }
}

/// The capture's file name when the form names none.
const DEFAULT_CAPTURE: &str = "live_capture.etdp";

/// Where captures go unless the user chooses otherwise: `captures/` in the app's data directory
/// (the one eframe keeps the settings in: `$XDG_DATA_HOME/etscope`, else
/// `~/.local/share/etscope` on Linux), or the temporary directory where there is none.
pub fn capture_dir() -> PathBuf {
    eframe::storage_dir("etscope")
        .map(|d| d.join("captures"))
        .unwrap_or_else(|| std::env::temp_dir().join("etscope-captures"))
}

impl LiveForm {
    /// The capture's path as the form gives it: a relative name (or none) is taken in
    /// [`capture_dir`], never in the current directory.
    pub fn out_path(&self) -> PathBuf {
        let given = PathBuf::from(self.out.trim());
        if given.as_os_str().is_empty() {
            capture_dir().join(DEFAULT_CAPTURE)
        } else if given.is_absolute() {
            given
        } else {
            capture_dir().join(given)
        }
    }

    fn target(&self) -> LiveTarget {
        let elf = (!self.elf.trim().is_empty()).then(|| PathBuf::from(self.elf.trim()));
        match self.kind {
            TargetKind::Board => LiveTarget::Board {
                runs: self.runs.max(1),
                intermediates: self.intermediates,
            },
            TargetKind::Gdb => LiveTarget::Gdb {
                address: self.gdb.trim().to_string(),
                elf,
            },
            TargetKind::Probe => LiveTarget::Probe {
                selector: self.probe.clone(),
                chip: self.chip.trim().to_string(),
                elf,
            },
        }
    }
}

/// Starts a live session on the active document.
pub fn start(app: &mut EtscopeApp, ctx: &egui::Context) -> Result<(), String> {
    if app.live.as_ref().is_some_and(|(_, s)| s.running()) {
        return Err("a live session is already running: stop it first".into());
    }
    let i = app.active;
    let dv = app
        .docs
        .get(i)
        .ok_or("open the program the target runs (.pte) first")?;
    let program = dv
        .doc
        .program
        .clone()
        .ok_or("the document has no program: open the .pte the target runs")?;
    if app.live_form.kind == TargetKind::Probe && app.live_form.chip.trim().is_empty() {
        return Err("a probe needs its chip (a probe-rs target name)".into());
    }
    // a capture already on disk is never overwritten: the next free name is used, and said
    let asked = app.live_form.out_path();
    if let Some(dir) = asked.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("{}: cannot create the directory: {e}", dir.display()))?;
    }
    let out = free_capture_path(&asked);
    if out != asked {
        app.messages.push(format!(
            "{} exists: this capture is saved to {}",
            asked.display(),
            out.display()
        ));
        app.live_form.out = out.display().to_string();
    }
    let session = LiveSession::start(
        program,
        dv.doc.title.clone(),
        dv.doc.input.clone(),
        app.live_form.target(),
        out,
        ctx.clone(),
    );
    app.live = Some((i, session));
    Ok(())
}

/// `out` when neither it nor its companions (`.bin`, `.etsw`) exist, else `STEM-2.etdp`,
/// `STEM-3.etdp`, … the first whose three files are all free.
pub fn free_capture_path(out: &std::path::Path) -> PathBuf {
    let taken = |p: &std::path::Path| {
        let (etdp, bin, raw) = etscope_profiler::session::capture_paths(p);
        etdp.exists() || bin.exists() || raw.exists()
    };
    if !taken(out) {
        return out.to_path_buf();
    }
    let stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "live_capture".into());
    let ext = out
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_else(|| "etdp".into());
    (2u32..)
        .map(|n| out.with_file_name(format!("{stem}-{n}.{ext}")))
        .find(|p| !taken(p))
        .unwrap_or_else(|| out.to_path_buf())
}

/// Copies the capture at `from` (`.etdp`, and its `.bin` and `.etsw` when present) to `to`'s
/// names; refuses to replace an existing capture (the dialog asked, but the companions were not
/// shown to the user).
pub fn copy_capture(from: &std::path::Path, to: &std::path::Path) -> Result<(), String> {
    use etscope_profiler::session::capture_paths;
    let (from_etdp, from_bin, from_raw) = capture_paths(from);
    let (to_etdp, to_bin, to_raw) = capture_paths(to);
    if to_etdp == from_etdp {
        return Ok(());
    }
    let pairs: Vec<_> = [(from_etdp, to_etdp), (from_bin, to_bin), (from_raw, to_raw)]
        .into_iter()
        .filter(|(a, _)| a.exists())
        .collect();
    // every name is checked before anything is written: no half-copied capture
    if let Some((_, b)) = pairs.iter().find(|(_, b)| b.exists() && b != to) {
        return Err(format!(
            "{}: exists; choose another name (a capture is never overwritten)",
            b.display()
        ));
    }
    for (a, b) in pairs {
        std::fs::copy(&a, &b).map_err(|e| format!("{}: cannot write: {e}", b.display()))?;
    }
    Ok(())
}

/// Applies the worker's news to the document it feeds.
pub fn poll(app: &mut EtscopeApp) {
    let Some((doc, session)) = &mut app.live else {
        return;
    };
    let was_running = session.running();
    if session.poll() {
        if let (Some(s), Some(dv)) = (&session.latest, app.docs.get_mut(*doc)) {
            dv.doc.set_live_capture(
                s.etdump.clone(),
                s.profile.clone(),
                s.debug_buffer.clone(),
                s.captured.clone(),
                s.tick_hz,
            );
            if let (Some(hz), Some(core)) = (s.tick_hz.filter(|&h| h > 0), &s.core) {
                dv.doc.declared_time = Some(etscope_viewer::document::DeclaredTime::from_target(
                    hz,
                    core,
                    etscope_profiler::session::is_emulated(core),
                ));
            }
            dv.profile.timeline_runs = etscope_viewer::profile_view::timeline(&s.etdump);
            dv.heat.on = true;
        }
    }
    if was_running && !session.running() {
        if let Some((saved, error)) = &session.ended {
            if let Some(p) = saved {
                app.messages
                    .push(format!("live capture saved: {}", p.display()));
            }
            if let Some(e) = error {
                app.messages.push(format!("live: {e}"));
            }
        }
    }
}

/// One line of the capture's figures: the value on one line (changing figures that wrap make
/// the rows below jump every frame).
fn stat(ui: &mut egui::Ui, label: &str, value: String) {
    ui.label(label);
    ui.add(egui::Label::new(egui::RichText::new(value).monospace()).extend());
    ui.end_row();
}

/// Draws the Live tab.
pub fn ui(app: &mut EtscopeApp, ui: &mut egui::Ui) {
    let running = app.live.as_ref().is_some_and(|(_, s)| s.running());
    let mut start_clicked = false;
    let mut choose_clicked = false;
    ui.add_enabled_ui(!running, |ui| {
        let f = &mut app.live_form;
        ui.horizontal(|ui| {
            ui.label(RichText::new("Target").strong());
            ui.radio_value(&mut f.kind, TargetKind::Board, "Emulated board (QEMU Cortex-M55)");
            ui.radio_value(&mut f.kind, TargetKind::Gdb, "GDB server");
            ui.radio_value(&mut f.kind, TargetKind::Probe, "Debug probe (probe-rs)");
        });
        egui::Grid::new("live-form").num_columns(2).show(ui, |ui| {
            match f.kind {
                TargetKind::Board => {
                    ui.label("inferences");
                    ui.add(egui::DragValue::new(&mut f.runs).range(1..=100_000));
                    ui.end_row();
                    ui.label("outputs");
                    ui.checkbox(&mut f.intermediates, "send every instruction's output (for Diff)");
                    ui.end_row();
                }
                TargetKind::Gdb => {
                    ui.label("address");
                    ui.text_edit_singleline(&mut f.gdb)
                        .on_hover_text("HOST:PORT (OpenOCD 3333, J-Link 2331, QEMU -gdb) or unix:PATH");
                    ui.end_row();
                }
                TargetKind::Probe => {
                    ui.label("probe");
                    ui.horizontal(|ui| {
                        let selected = if f.probe.is_empty() {
                            "the only one attached".to_string()
                        } else {
                            f.probe.clone()
                        };
                        egui::ComboBox::from_id_salt("probe-list")
                            .selected_text(selected)
                            .show_ui(ui, |ui| {
                                ui.selectable_value(&mut f.probe, String::new(), "the only one attached");
                                for p in f.probes.iter().flatten() {
                                    ui.selectable_value(
                                        &mut f.probe,
                                        p.selector.clone(),
                                        format!("{}  {}", p.selector, p.name),
                                    );
                                }
                            });
                        if ui.button("Refresh probes").clicked() {
                            f.probes = Some(list_probes());
                        }
                        if let Some(p) = &f.probes {
                            ui.label(format!("{} found", p.len()));
                        }
                    });
                    ui.end_row();
                    ui.label("chip");
                    ui.text_edit_singleline(&mut f.chip)
                        .on_hover_text("probe-rs target name, e.g. STM32H743ZITx");
                    ui.end_row();
                }
            }
            if f.kind != TargetKind::Board {
                ui.label("firmware ELF");
                ui.text_edit_singleline(&mut f.elf).on_hover_text(
                    "the control block is at its _SEGGER_RTT symbol; empty: scan 0x20000000..+512 KiB",
                );
                ui.end_row();
            }
            ui.label("save capture to");
            ui.horizontal(|ui| {
                ui.add(egui::TextEdit::singleline(&mut f.out).desired_width(420.0))
                    .on_hover_text("OUT.etdp (+ OUT.bin for outputs); the raw stream goes to OUT.etsw as it arrives; a name without a folder goes into the app's data directory");
                if ui.button("Choose…").clicked() {
                    choose_clicked = true;
                }
            });
            ui.end_row();
        });
        ui.label(format!(
            "The capture is saved to {} (+ .bin, .etsw beside it).",
            f.out_path().display()
        ));
        if ui.button("▶ Start").clicked() {
            start_clicked = true;
        }
    });
    if choose_clicked {
        app.commands.push(super::Command::ChooseCaptureFile);
    }
    if start_clicked {
        if let Err(e) = start(app, ui.ctx()) {
            app.messages.push(e);
        }
    }
    let Some((doc, session)) = &mut app.live else {
        ui.label("Profiles arrive here while the target runs: per-op table, graph heat overlay and timeline update with every run.");
        return;
    };
    ui.separator();
    ui.horizontal(|ui| {
        if session.running() {
            super::busy::busy(ui);
            let label = if session.paused {
                "▶ Resume"
            } else {
                "⏸ Pause"
            };
            if ui.button(label).clicked() {
                let p = !session.paused;
                session.set_paused(p);
            }
            if ui.button("⏹ Stop and save").clicked() {
                session.stop();
            }
        }
        match (&session.connected, &session.ended) {
            (_, Some((Some(saved), None))) => {
                ui.label(format!("stopped; capture saved to {}", saved.display()));
                if ui
                    .button("Save as…")
                    .on_hover_text("copy the capture (.etdp, .bin, .etsw) to a name of your choice")
                    .clicked()
                {
                    app.commands
                        .push(super::Command::SaveCaptureAs(saved.clone()));
                }
            }
            (_, Some((saved, Some(e)))) => {
                ui.colored_label(egui::Color32::from_rgb(230, 120, 60), e);
                if let Some(s) = saved {
                    ui.label(format!("(saved to {})", s.display()));
                }
            }
            (Some(c), None) => {
                ui.label(format!("connected: {c}"));
            }
            (None, None) => {
                ui.label("connecting…");
            }
            (_, Some((None, None))) => {
                ui.label("stopped");
            }
        }
    });
    if session.running() {
        ui.ctx()
            .request_repaint_after(std::time::Duration::from_millis(250));
    }
    let Some(s) = &session.latest else {
        return;
    };
    let w = s.stats.wire;
    let c = s.stats.capture;
    egui::Grid::new("live-stats")
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            stat(
                ui,
                "target",
                format!(
                    "{} · {} Hz ticks",
                    s.core.as_deref().unwrap_or("?"),
                    s.tick_hz.unwrap_or(0)
                ),
            );
            let of = session
                .expected_runs
                .map(|m| format!(" of {m}"))
                .unwrap_or_default();
            stat(
                ui,
                "runs",
                format!("{}{of} complete, {} incomplete", c.runs, c.incomplete_runs),
            );
            stat(
                ui,
                "throughput",
                format!(
                    "{:.1} KiB in {:.1} s ({:.1} KiB/s)",
                    w.bytes as f64 / 1024.0,
                    s.stats.elapsed.as_secs_f64(),
                    s.stats.bytes_per_second() / 1024.0
                ),
            );
            stat(ui, "frames", w.frames.to_string());
            stat(
                ui,
                "lost",
                format!(
                    "{} frames, {} B in transit ({} CRC, {} malformed); target dropped {} frames, {} B",
                    w.lost_frames, w.lost_bytes, w.crc_errors, w.bad_payloads, c.device_dropped_frames, c.device_dropped_bytes
                ),
            );
            stat(ui, "target restarts", w.restarts.to_string());
            stat(ui, "captured outputs", s.captured.len().to_string());
        });
    for l in s.logs.iter().rev().take(3) {
        ui.label(format!("target: {l}"));
    }
    ui.separator();
    let profile = s.profile.clone();
    let doc_index = *doc;
    let mut clicked = None;
    if let Some(dv) = app.docs.get_mut(doc_index) {
        ui.label(
            RichText::new(format!(
                "{} ops over the last {} runs",
                profile.rows.len(),
                profile.runs
            ))
            .strong(),
        );
        if let Some(note) = super::profile_tab::time_note(&dv.doc) {
            ui.label(RichText::new(note).italics());
        }
        dv.profile.cost.follow_capture(&dv.doc, &mut app.cost);
        let before = app.cost;
        ui.horizontal(|ui| app.cost.ui(ui));
        if app.cost != before {
            app.cost_follows_program = false;
        }
        // the live profile changes every frame: measured against the (cached) estimate here
        let machine = etscope_viewer::document::capture_machine(dv.doc.declared_time.as_ref());
        let vs = dv.profile.cost.estimate(&dv.doc, app.cost).map(|est| {
            etscope_core::analysis::cost::measured::measured_vs_estimate(
                &profile,
                &machine,
                est,
                dv.doc.declared_time.as_ref().map(|t| t.ticks_per_us),
                etscope_core::analysis::cost::measured::OUTLIER_BAND,
            )
        });
        if let Some(Err(why)) = &vs {
            super::profile_tab::unlike_note(ui, &why.0);
        }
        let vs = vs.and_then(Result::ok);
        ScrollArea::vertical().id_salt("live-table").show(ui, |ui| {
            clicked = profile_view::table_ui(ui, &profile, &mut dv.profile.table, vs.as_ref());
        });
        if let Some(i) = clicked {
            dv.select_instruction(i);
            app.tab = Tab::Graph;
        }
    }
}
