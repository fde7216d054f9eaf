//! A program on a part (`etscope fit`'s answer drawn): one bar per memory region of the part that
//! holds something, filled with what sits in it (each pool, the program, the code) against the
//! region's size, what is free, and red with "over by" when it does not fit.

use egui::{Color32, RichText, Stroke, Ui};
use etscope_core::analysis::fit::Fit;
use etscope_core::part::Part;

const POOL: Color32 = Color32::from_rgb(70, 130, 200);
const ALLOCATOR: Color32 = Color32::from_rgb(200, 140, 60);
const PROGRAM: Color32 = Color32::from_rgb(120, 170, 90);
const CODE: Color32 = Color32::from_rgb(150, 110, 190);
const OVER: Color32 = Color32::from_rgb(220, 60, 50);

/// What one region holds: (what, bytes, colour).
fn contents(part: &Part, fit: &Fit, region: &str) -> Vec<(String, u64, Color32)> {
    let mut out: Vec<(String, u64, Color32)> = fit
        .pools
        .iter()
        .filter(|p| p.region == region)
        .map(|p| {
            let colour = if p.name.starts_with("planned") {
                POOL
            } else {
                ALLOCATOR
            };
            (p.name.clone(), p.bytes, colour)
        })
        .collect();
    if part.link.constants == region {
        out.push((
            "the program (weights read in place)".into(),
            fit.program,
            PROGRAM,
        ));
    }
    let code = [fit.code.runtime, fit.code.kernels, fit.code.cmsis_nn]
        .iter()
        .flatten()
        .sum::<u64>();
    if part.link.code == region && code > 0 {
        let what = if fit.flash_complete {
            "code (ExecuTorch's runtime, the kernels, CMSIS-NN)".to_string()
        } else {
            "code measured (an operator's kernel is not)".to_string()
        };
        out.push((what, code, CODE));
    }
    out
}

/// The part's regions that hold anything, each a bar; the header says whether it all fits and,
/// with `refused` (why the part's core would not run the program), that it does not run.
pub fn fit_ui(ui: &mut Ui, part: &Part, fit: &Fit, refused: Option<&str>) {
    let verdict = if fit.fits {
        RichText::new(format!("fits {}", part.name)).color(Color32::from_rgb(90, 170, 90))
    } else {
        RichText::new(format!("does NOT fit {}", part.name)).color(OVER)
    };
    ui.label(verdict.strong());
    if let Some(why) = refused {
        ui.label(RichText::new(why).color(OVER).strong());
    }
    let used: Vec<_> = fit.regions.iter().filter(|r| r.used > 0).collect();
    let bar = (ui.available_width().min(900.0) - 370.0).max(120.0);
    for r in used {
        ui.horizontal(|ui| {
            let over = r.used > r.size;
            let label = if over {
                format!(
                    "{}: {} / {} B, over by {}",
                    r.name,
                    r.used,
                    r.size,
                    r.used - r.size
                )
            } else {
                format!(
                    "{}: {} / {} B, {} free",
                    r.name,
                    r.used,
                    r.size,
                    r.size - r.used
                )
            };
            ui.add_sized(
                [360.0, 16.0],
                egui::Label::new(RichText::new(label).color(if over {
                    OVER
                } else {
                    Color32::GRAY
                }))
                .truncate(),
            );
            // every bar as wide: its fill is the share of the region in use
            let (rect, _) = ui.allocate_exact_size(egui::vec2(bar, 16.0), egui::Sense::hover());
            let scale = rect.width() / r.size.max(r.used).max(1) as f32;
            let mut x = rect.left();
            for (what, bytes, colour) in contents(part, fit, &r.name) {
                let seg_w = bytes as f32 * scale;
                if seg_w <= 0.0 {
                    continue;
                }
                let seg = egui::Rect::from_min_size(
                    egui::pos2(x, rect.top()),
                    egui::vec2(seg_w, rect.height()),
                );
                ui.painter().rect_filled(seg, 0.0, colour);
                ui.interact(
                    seg,
                    ui.id().with(("fit", &r.name, &what)),
                    egui::Sense::hover(),
                )
                .on_hover_text(format!("{what}: {bytes} B"));
                x += seg_w;
            }
            // the region's end: a part that does not fit runs past it
            let end = rect.left() + r.size as f32 * scale;
            ui.painter().rect_stroke(
                egui::Rect::from_min_max(rect.min, egui::pos2(end, rect.bottom())),
                0.0,
                Stroke::new(1.0, if over { OVER } else { Color32::GRAY }),
                egui::StrokeKind::Inside,
            );
        });
    }
    ui.horizontal_wrapped(|ui| {
        for (name, colour) in [
            ("planned arenas", POOL),
            ("allocators", ALLOCATOR),
            ("program", PROGRAM),
            ("code", CODE),
        ] {
            ui.colored_label(colour, "■");
            ui.label(name);
        }
        ui.label("· code: object sizes measured per build, not a linked image");
        if !fit.flash_complete {
            ui.label("· flash is a lower bound: an operator's kernel is not measured");
        }
    });
}
