//! Painting helpers the widgets share: text cut to a width.

use std::sync::Arc;

use egui::{Color32, FontId, Galley, Painter};

/// `text` laid out on one line, cut with an ellipsis at `width` points (where it would not fit
/// whole); the caller places it and names it whole elsewhere (a tooltip).
pub fn cut_to_width(
    painter: &Painter,
    text: String,
    font: FontId,
    color: Color32,
    width: f32,
) -> Arc<Galley> {
    let mut job = egui::text::LayoutJob::simple_singleline(text, font, color);
    job.wrap = egui::text::TextWrapping::truncate_at_width(width);
    painter.layout_job(job)
}
