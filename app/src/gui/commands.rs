//! What the user asked for in a frame, applied after it is drawn: keyboard shortcuts, dropped
//! files and every [`Command`].

use std::path::PathBuf;

use eframe::egui;

use super::*;

impl EtscopeApp {
    /// The keyboard shortcuts listed in Help ▸ Keyboard shortcuts ([`SHORTCUTS`]).
    pub(super) fn handle_shortcuts(&mut self, ctx: &egui::Context) {
        use egui::{Key, KeyboardShortcut, Modifiers};
        let pressed = |m: Modifiers, k: Key| {
            ctx.input_mut(|i| i.consume_shortcut(&KeyboardShortcut::new(m, k)))
        };
        if pressed(Modifiers::COMMAND, Key::O) {
            self.commands.push(Command::OpenDialog);
        }
        if pressed(Modifiers::COMMAND, Key::F) {
            self.tab = Tab::Graph;
            ctx.memory_mut(|m| m.request_focus(egui::Id::new(panels::SEARCH_ID)));
        }
        if pressed(Modifiers::COMMAND, Key::W) && !self.docs.is_empty() {
            self.commands.push(Command::CloseDocument(self.active));
        }
        // plain keys act only while no text field has the keyboard
        if ctx.egui_wants_keyboard_input() {
            return;
        }
        let Some(dv) = self.docs.get_mut(self.active) else {
            return;
        };
        if pressed(Modifiers::NONE, Key::F) {
            match (&mut dv.diff, self.tab) {
                (Some((view, _)), Tab::Diff) => {
                    view.left.fit();
                    view.right.fit();
                }
                _ => {
                    if let Some(v) = dv.views.get_mut(dv.stage) {
                        v.fit();
                    }
                }
            }
        }
        for (key, forward) in [(Key::N, true), (Key::P, false)] {
            if pressed(Modifiers::NONE, key) {
                if let Some((view, _)) = &mut dv.diff {
                    self.tab = Tab::Diff;
                    if !view.step_divergence(forward) {
                        self.messages
                            .push("no row crosses the divergence threshold".into());
                    }
                }
            }
        }
    }
    pub(super) fn handle_dropped_files(&mut self, ctx: &egui::Context) {
        let dropped: Vec<PathBuf> = ctx.input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        });
        if !dropped.is_empty() {
            self.commands.push(Command::Open(dropped));
        }
    }
    pub(super) fn apply_commands(&mut self, ctx: &egui::Context) {
        for c in std::mem::take(&mut self.commands) {
            match c {
                Command::Open(paths) => self.open(paths, ctx),
                Command::OpenDialog => {
                    let started = std::time::Instant::now();
                    let picked = rfd::FileDialog::new()
                        .add_filter(
                            "ExecuTorch artifacts",
                            &["pte", "bpte", "etdp", "etrecord", "bin"],
                        )
                        .add_filter("all files", &["*"])
                        .pick_files();
                    match picked {
                        Some(paths) => self.open(paths, ctx),
                        None if started.elapsed().as_millis() < 50 => self.messages.push(
                            "no file dialog is available here (it needs xdg-desktop-portal or zenity): pass files on the command line or drop them on the window".into(),
                        ),
                        None => {}
                    }
                }
                Command::SaveCaptureAs(saved) => {
                    let started = std::time::Instant::now();
                    let name = saved
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_else(|| "capture.etdp".into());
                    let picked = rfd::FileDialog::new()
                        .add_filter("ETDump", &["etdp"])
                        .set_file_name(name)
                        .save_file();
                    match picked {
                        Some(to) => match live_tab::copy_capture(&saved, &to) {
                            Ok(()) => self
                                .messages
                                .push(format!("capture saved as {}", to.display())),
                            Err(e) => self.messages.push(e),
                        },
                        None if started.elapsed().as_millis() < 50 => self.messages.push(
                            "no file dialog is available here (it needs xdg-desktop-portal or zenity): the capture stays where it was saved".into(),
                        ),
                        None => {}
                    }
                }
                Command::ChooseCaptureFile => {
                    let started = std::time::Instant::now();
                    let current = self.live_form.out_path();
                    let mut dialog = rfd::FileDialog::new().add_filter("ETDump", &["etdp"]);
                    if let Some(dir) = current.parent().filter(|d| d.is_dir()) {
                        dialog = dialog.set_directory(dir);
                    }
                    if let Some(name) = current.file_name() {
                        dialog = dialog.set_file_name(name.to_string_lossy());
                    }
                    match dialog.save_file() {
                        Some(to) => self.live_form.out = to.display().to_string(),
                        None if started.elapsed().as_millis() < 50 => self.messages.push(
                            "no file dialog is available here (it needs xdg-desktop-portal or zenity): type the capture's path in the field".into(),
                        ),
                        None => {}
                    }
                }
                Command::CompareProfileWith(other) => {
                    profile_tab::compare_with_document(self, other);
                }
                Command::CompareCapture(path) => profile_tab::compare_with_capture(self, &path),
                Command::CompareCaptureDialog => {
                    let started = std::time::Instant::now();
                    match rfd::FileDialog::new()
                        .add_filter("ETDump", &["etdp"])
                        .pick_file()
                    {
                        Some(path) => profile_tab::compare_with_capture(self, &path),
                        None if started.elapsed().as_millis() < 50 => self.messages.push(
                            "no file dialog is available here (it needs xdg-desktop-portal or zenity): pass --compare-capture FILE on the command line".into(),
                        ),
                        None => {}
                    }
                }
                Command::CloseDocument(i) => {
                    if i < self.docs.len() {
                        self.take_document(i);
                    }
                }
                Command::RemoveFound { doc, path } => {
                    if self.jobs.load.is_none() && doc < self.docs.len() {
                        if matches!(&self.live, Some((d, _)) if *d == doc) {
                            self.messages
                                .push("stop the live session before removing a file".into());
                            continue;
                        }
                        let dv = self.take_document(doc);
                        let mut declined = dv.sources.declined.clone();
                        declined.push(path.clone());
                        let given: Vec<PathBuf> = dv
                            .sources
                            .given
                            .into_iter()
                            .filter(|p| p != &path)
                            .collect();
                        self.open_declining(given, declined, ctx);
                    }
                }
                Command::SelectMethod { doc, method } => self.select_method(doc, &method),
                Command::Export(kind) => panels::export(self, kind, ctx),
                Command::Compare(target) => {
                    let result = self.compare(target);
                    if let Some(dv) = self.docs.get_mut(self.active) {
                        dv.diff_error = result.as_ref().err().cloned();
                    }
                    if let Err(e) = result {
                        self.messages.push(e);
                    }
                }
            }
        }
    }
}
