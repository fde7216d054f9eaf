//! Pictures of the window (`--screenshot`, a PNG of the graph canvas) and the `--timings`
//! milestones with the process's memory, printed for the first-frame and peak-memory scripts.

use std::path::PathBuf;

use eframe::egui;

use super::*;

/// The `--timings` milestones already printed.
#[derive(Debug, Default)]
pub(super) struct TimingsReported {
    pub(super) first_graph: bool,
    pub(super) attached: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ScreenshotState {
    Idle,
    Waiting(u32),
    Requested,
}

impl EtscopeApp {
    pub(super) fn handle_screenshots(&mut self, ctx: &egui::Context) {
        let images: Vec<std::sync::Arc<egui::ColorImage>> = ctx.input(|i| {
            i.raw
                .events
                .iter()
                .filter_map(|e| {
                    if let egui::Event::Screenshot { image, .. } = e {
                        Some(image.clone())
                    } else {
                        None
                    }
                })
                .collect()
        });
        for image in images {
            if let Some((path, rect)) = self.launch.pending_png.take() {
                let result = save_png(&image, Some(rect), ctx.pixels_per_point(), &path);
                self.messages.push(match result {
                    Ok(()) => format!("saved {}", path.display()),
                    Err(e) => format!("{}: {e}", path.display()),
                });
            } else if self.launch.screenshot == ScreenshotState::Requested {
                if let Some(path) = &self.launch.options.screenshot {
                    if let Err(e) = save_png(&image, None, ctx.pixels_per_point(), path) {
                        eprintln!("etscope: error: {}: {e}", path.display());
                    }
                }
                if self.docs.is_empty() && !self.launch.options.files.is_empty() {
                    // each file's error was printed when its load ended; the run failed
                    if let Ok(mut failure) = self.launch.exit_failure.lock() {
                        *failure = Some("none of the files opened".into());
                    }
                }
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
        }
        if let ScreenshotState::Waiting(n) = self.launch.screenshot {
            let building = self.docs.iter().any(|d| {
                d.stage_jobs.build.is_some()
                    || d.memory.replan_job.is_some()
                    || d.stage_jobs.pass.is_some()
            });
            if self.jobs.diff.is_some()
                || self.jobs.method.is_some()
                || self.numerics.job.is_some()
                || self.numerics.sensitivity_job.is_some()
                || building
                || self.live.as_ref().is_some_and(|(_, l)| l.running())
            {
                // a comparison, a stage being built or a live capture is still running: the
                // picture waits for it
                ctx.request_repaint();
            } else if n == 0 {
                ctx.send_viewport_cmd(egui::ViewportCommand::Screenshot(egui::UserData::default()));
                self.launch.screenshot = ScreenshotState::Requested;
            } else {
                self.launch.screenshot = ScreenshotState::Waiting(n - 1);
            }
            ctx.request_repaint();
        }
    }
    /// Asks for a PNG of `rect` (the graph canvas) to be saved at `path`.
    pub fn request_png(&mut self, path: PathBuf, rect: egui::Rect, ctx: &egui::Context) {
        self.launch.pending_png = Some((path, rect));
        ctx.send_viewport_cmd(egui::ViewportCommand::Screenshot(egui::UserData::default()));
    }
    /// `--timings`: prints the time since launch of the first frame that drew a graph and of the
    /// first frame with every file attached, then closes the window.
    pub(super) fn report_timings(&mut self, ctx: &egui::Context) {
        let Some(launched) = self.launch.options.timings else {
            return;
        };
        let ms = launched.elapsed().as_secs_f64() * 1e3;
        let shown = (self.tab == Tab::Graph)
            .then(|| self.docs.get(self.active))
            .flatten()
            .map(|dv| (dv.doc.stages[dv.stage].graph.nodes.len(), dv.preview));
        if let Some((nodes, preview)) = shown {
            if !self.launch.timings_reported.first_graph {
                self.launch.timings_reported.first_graph = true;
                let what = if preview {
                    ", files still attaching"
                } else {
                    ""
                };
                eprintln!("etscope: first graph drawn after {ms:.0} ms ({nodes} nodes{what})");
            }
            if self.jobs.load.is_none() && !self.launch.timings_reported.attached {
                self.launch.timings_reported.attached = true;
                let files: usize = self.docs.iter().map(|dv| dv.doc.files.len()).sum();
                let resident = resident_mb()
                    .map(|(now, peak)| format!(", {now:.0} MB resident (peak {peak:.0} MB)"))
                    .unwrap_or_default();
                eprintln!(
                    "etscope: all {files} files attached and drawn after {ms:.0} ms{resident}"
                );
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
        } else if self.jobs.load.is_none()
            && self.launch.applied
            && !self.launch.timings_reported.attached
        {
            self.launch.timings_reported.attached = true;
            eprintln!("etscope: nothing to draw after {ms:.0} ms");
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
    }
}

/// The process's resident memory now and its peak so far, in MB (Linux; `None` elsewhere).
fn resident_mb() -> Option<(f64, f64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb = |key: &str| -> Option<f64> {
        let line = status.lines().find(|l| l.starts_with(key))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    Some((kb("VmRSS:")? * 1024.0 / 1e6, kb("VmHWM:")? * 1024.0 / 1e6))
}

fn save_png(
    image: &egui::ColorImage,
    crop: Option<egui::Rect>,
    ppp: f32,
    path: &std::path::Path,
) -> Result<(), String> {
    let [w, h] = image.size;
    let (x0, y0, x1, y1) = match crop {
        Some(r) => (
            ((r.min.x * ppp).max(0.0) as usize).min(w),
            ((r.min.y * ppp).max(0.0) as usize).min(h),
            ((r.max.x * ppp) as usize).min(w),
            ((r.max.y * ppp) as usize).min(h),
        ),
        None => (0, 0, w, h),
    };
    let (cw, ch) = (x1.saturating_sub(x0), y1.saturating_sub(y0));
    let mut rgba = Vec::with_capacity(cw * ch * 4);
    for y in y0..y1 {
        for x in x0..x1 {
            rgba.extend_from_slice(&image.pixels[y * w + x].to_array());
        }
    }
    let img =
        image::RgbaImage::from_raw(cw as u32, ch as u32, rgba).ok_or("screenshot has no pixels")?;
    img.save(path).map_err(|e| e.to_string())
}
