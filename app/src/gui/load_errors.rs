//! The files of the last load that could not be used, shown where the user looks: a card in the
//! central panel naming each file and what is wrong with it (the status bar only repeats the
//! last line).

use std::path::PathBuf;

use eframe::egui::{self, Color32, RichText};

/// The card's background: a dark red no other part of the window uses (the window test finds
/// the card in a screenshot by it).
pub const CARD_FILL: Color32 = Color32::from_rgb(0x4a, 0x16, 0x1a);
const CARD_STROKE: Color32 = Color32::from_rgb(0xe0, 0x5a, 0x4e);
const FILE_COLOR: Color32 = Color32::from_rgb(0xff, 0xb4, 0xa8);
const REASON_COLOR: Color32 = Color32::from_rgb(0xf2, 0xe6, 0xe4);

/// One file that could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// The file's name, when the line names one of the files loaded.
    pub file: Option<String>,
    /// What is wrong (the whole line when no file is named).
    pub reason: String,
}

/// The errors of the last load, until the next load or until dismissed.
#[derive(Debug, Clone, Default)]
pub struct LoadErrors {
    pub errors: Vec<LoadError>,
}

impl LoadErrors {
    /// The loader's error lines (`PATH: reason`) split into file name and reason for the
    /// `paths` of the load.
    pub fn from_lines(lines: &[String], paths: &[PathBuf]) -> LoadErrors {
        let errors = lines
            .iter()
            .map(|line| {
                let named = paths.iter().find_map(|p| {
                    let prefix = format!("{}:", p.display());
                    line.strip_prefix(&prefix).map(|reason| LoadError {
                        file: Some(super::loader::display_name(p)),
                        reason: reason.trim().to_string(),
                    })
                });
                named.unwrap_or_else(|| LoadError {
                    file: None,
                    reason: line.clone(),
                })
            })
            .collect();
        LoadErrors { errors }
    }

    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// Draws the card (nothing when there are no errors); `nothing_open`: no document is open,
    /// so the card says nothing could be opened. Its × dismisses it.
    pub fn card_ui(&mut self, ui: &mut egui::Ui, nothing_open: bool) {
        if self.errors.is_empty() {
            return;
        }
        let mut dismissed = false;
        // many files: the card scrolls, the panel below keeps most of its room
        let max_list = (ui.available_height() * 0.4).max(80.0);
        egui::Frame::new()
            .fill(CARD_FILL)
            .stroke(egui::Stroke::new(1.5, CARD_STROKE))
            .corner_radius(6.0)
            .inner_margin(egui::Margin::same(14))
            .show(ui, |ui| {
                ui.set_width(ui.available_width());
                ui.horizontal(|ui| {
                    let title = if nothing_open {
                        "Nothing could be opened"
                    } else if self.errors.len() == 1 {
                        "A file could not be used"
                    } else {
                        "Some files could not be used"
                    };
                    ui.label(
                        RichText::new(format!("⚠ {title}"))
                            .heading()
                            .color(CARD_STROKE),
                    );
                    ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                        if ui.small_button("×").on_hover_text("dismiss").clicked() {
                            dismissed = true;
                        }
                    });
                });
                ui.add_space(6.0);
                egui::ScrollArea::vertical()
                    .id_salt("load-errors")
                    .max_height(max_list)
                    .show(ui, |ui| self.lines_ui(ui));
            });
        if dismissed {
            self.errors.clear();
        }
    }

    /// Each file's name and what is wrong with it.
    fn lines_ui(&self, ui: &mut egui::Ui) {
        for e in &self.errors {
            if let Some(file) = &e.file {
                ui.label(
                    RichText::new(format!("Could not open {file}"))
                        .strong()
                        .size(16.0)
                        .color(FILE_COLOR),
                );
            }
            ui.add(
                egui::Label::new(RichText::new(&e.reason).size(15.0).color(REASON_COLOR)).wrap(),
            );
            ui.add_space(6.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_split_into_the_file_it_names_and_the_reason() {
        let paths = vec![
            PathBuf::from("/tmp/x/bad.pte"),
            PathBuf::from("/tmp/x/a.etdp"),
        ];
        let e = LoadErrors::from_lines(
            &[
                "/tmp/x/bad.pte: truncated: 12 bytes".to_string(),
                "something else".to_string(),
            ],
            &paths,
        );
        assert_eq!(
            e.errors,
            vec![
                LoadError {
                    file: Some("bad.pte".into()),
                    reason: "truncated: 12 bytes".into()
                },
                LoadError {
                    file: None,
                    reason: "something else".into()
                }
            ]
        );
    }
}
