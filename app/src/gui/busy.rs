//! The window's one busy indicator and the line a running [`Job`] shows (its name, progress,
//! time and Cancel). A leaf: every tab's wiring uses it, it uses none of them.

use eframe::egui;

use crate::job::Job;

/// How often [`busy`] moves: five steps a second.
const BUSY_STEP: std::time::Duration = std::time::Duration::from_millis(200);

/// A busy indicator that moves five times a second instead of every frame (egui's spinner asks
/// for the next frame at once: behind it the whole window, a graph of tens of thousands of nodes
/// included, was drawn continuously while a load ran, taking CPU and memory from the load).
pub fn busy(ui: &mut egui::Ui) {
    let size = ui.style().spacing.interact_size.y;
    let (rect, response) = ui.allocate_exact_size(egui::vec2(size, size), egui::Sense::hover());
    response.widget_info(|| egui::WidgetInfo::new(egui::WidgetType::ProgressIndicator));
    if !ui.is_rect_visible(rect) {
        return;
    }
    ui.ctx().request_repaint_after(BUSY_STEP);
    let step = (ui.input(|i| i.time) / BUSY_STEP.as_secs_f64()).floor();
    let start = step * std::f64::consts::TAU / 8.0;
    let radius = rect.height() / 2.0 - 2.0;
    let points: Vec<egui::Pos2> = (0..=12)
        .map(|i| {
            let angle = start + f64::from(i) / 12.0 * 1.5 * std::f64::consts::PI;
            let (sin, cos) = angle.sin_cos();
            rect.center() + radius * egui::vec2(cos as f32, sin as f32)
        })
        .collect();
    ui.painter().add(egui::Shape::line(
        points,
        egui::Stroke::new(3.0, ui.visuals().strong_text_color()),
    ));
}

/// A running job's line: the indicator, its name, `done/total` when it reports progress, the
/// seconds it has run and a Cancel button. Returns true when Cancel was clicked (the caller
/// cancels: a job may need more than its flag set).
pub fn job_line<T>(ui: &mut egui::Ui, job: &Job<T>) -> bool {
    let mut cancel = false;
    ui.horizontal(|ui| {
        busy(ui);
        let mut text = job.name().to_string();
        if let Some((done, total)) = job.progress() {
            text.push_str(&format!(" · {done}/{total}"));
        }
        text.push_str(&format!(" · {:.0} s", job.elapsed().as_secs_f64()));
        ui.label(text);
        if job.is_cancelled() {
            ui.weak("cancelling…");
        } else if ui.button("Cancel").clicked() {
            cancel = true;
        }
    });
    cancel
}
