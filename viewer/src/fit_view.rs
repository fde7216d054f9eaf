//! A program on a part (`etscope fit`'s answer drawn): one bar per memory region of the part that
//! holds something, filled with what sits in it (each pool, the program, the code) against the
//! region's size, what is free, and red with "over by" when it does not fit. With a placement
//! (`core::analysis::place`), each pool and each call's weights is a block that can be dragged
//! to another region's bar.

use egui::{Color32, Pos2, Rect, RichText, Stroke, Ui};
use etscope_core::analysis::fit::Fit;
use etscope_core::analysis::place::{block_of_pool, Placement};
use etscope_core::part::{Part, RegionKind};

const POOL: Color32 = Color32::from_rgb(70, 130, 200);
const ALLOCATOR: Color32 = Color32::from_rgb(200, 140, 60);
const PROGRAM: Color32 = Color32::from_rgb(120, 170, 90);
const WEIGHTS: Color32 = Color32::from_rgb(160, 200, 110);
const CODE: Color32 = Color32::from_rgb(150, 110, 190);
const OVER: Color32 = Color32::from_rgb(220, 60, 50);

/// A block dragged onto another region's bar: the window applies it and prices the result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    pub block: String,
    pub region: String,
}

/// One segment of a region's bar.
struct Segment {
    what: String,
    bytes: u64,
    colour: Color32,
    /// The block it moves with, when a placement can move it.
    block: Option<String>,
}

/// What one region holds, each a segment: the pools, each call's weights inside the program
/// (with a placement), the rest of the program, the code.
fn contents(part: &Part, fit: &Fit, placement: Option<&Placement>, region: &str) -> Vec<Segment> {
    let movable = |name: &str| {
        let block = block_of_pool(name);
        placement
            .filter(|p| p.blocks.iter().any(|b| b.name == block))
            .map(|_| block.to_string())
    };
    let mut out: Vec<Segment> = fit
        .pools
        .iter()
        .filter(|p| p.region == region)
        .map(|p| Segment {
            colour: if p.name.starts_with("planned") {
                POOL
            } else if p.name.starts_with("weights") {
                WEIGHTS
            } else {
                ALLOCATOR
            },
            what: if p.name.starts_with("weights") {
                format!("{} (a copy; the load image stays in flash)", p.name)
            } else {
                p.name.clone()
            },
            bytes: p.bytes,
            block: movable(&p.name),
        })
        .collect();
    if part.link.constants == region {
        // each call's weights a segment of its own inside the program, the rest after them
        let mut weights = 0u64;
        for b in placement.iter().flat_map(|p| p.blocks.iter()) {
            if b.is_weights() && b.region == b.default_region {
                weights = weights.saturating_add(b.bytes);
                out.push(Segment {
                    what: format!("{} (read in place)", b.name),
                    bytes: b.bytes,
                    colour: WEIGHTS,
                    block: Some(b.name.clone()),
                });
            }
        }
        out.push(Segment {
            what: if weights > 0 {
                "the rest of the program (and the load image of weights copied to RAM)".into()
            } else {
                "the program (weights read in place)".into()
            },
            bytes: fit.program.saturating_sub(weights),
            colour: PROGRAM,
            block: None,
        });
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
        out.push(Segment {
            what,
            bytes: code,
            colour: CODE,
            block: None,
        });
    }
    out
}

/// The part's regions that hold anything (and, with a placement, every DTCM and SRAM region a
/// block may be dragged to), each a bar; the header says whether it all fits and, with
/// `refused` (why the part's core would not run the program), that it does not run. With a
/// placement, a pool or a call's weights can be dragged to another region's bar: the move is
/// returned, for the caller to apply.
pub fn fit_ui(
    ui: &mut Ui,
    part: &Part,
    fit: &Fit,
    placement: Option<&Placement>,
    refused: Option<&str>,
) -> Option<Move> {
    let verdict = if fit.fits {
        RichText::new(format!("fits {}", part.name)).color(Color32::from_rgb(90, 170, 90))
    } else {
        RichText::new(format!("does NOT fit {}", part.name)).color(OVER)
    };
    ui.label(verdict.strong());
    if let Some(why) = refused {
        ui.label(RichText::new(why).color(OVER).strong());
    }
    let shown: Vec<_> = fit
        .regions
        .iter()
        .filter(|r| {
            let kind = part.region(&r.name).map(|x| x.kind);
            r.used > 0
                || (placement.is_some()
                    && matches!(kind, Some(RegionKind::Dtcm | RegionKind::Sram)))
        })
        .collect();
    let bar = (ui.available_width().min(900.0) - 370.0).max(120.0);
    let drag_id = ui.id().with("fit-drag");
    let mut bars: Vec<(String, Rect)> = Vec::new();
    let mut blocks: Vec<(String, Rect)> = Vec::new();
    let mut dropped: Option<(String, Pos2)> = None;
    for r in shown {
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
            bars.push((r.name.clone(), rect));
            let scale = rect.width() / r.size.max(r.used).max(1) as f32;
            let mut x = rect.left();
            for seg in contents(part, fit, placement, &r.name) {
                let seg_w = seg.bytes as f32 * scale;
                if seg_w <= 0.0 {
                    continue;
                }
                let at = Rect::from_min_size(
                    egui::pos2(x, rect.top()),
                    egui::vec2(seg_w.max(1.0), rect.height()),
                );
                ui.painter().rect_filled(at, 0.0, seg.colour);
                // thin separators keep neighbouring blocks of one colour apart
                ui.painter().vline(
                    at.right(),
                    at.y_range(),
                    Stroke::new(0.5, Color32::from_black_alpha(90)),
                );
                let sense = if seg.block.is_some() {
                    egui::Sense::click_and_drag()
                } else {
                    egui::Sense::hover()
                };
                let resp = ui
                    .interact(at, ui.id().with(("fit", &r.name, &seg.what)), sense)
                    .on_hover_text(match &seg.block {
                        Some(_) => format!(
                            "{}: {} B — drag it to another region's bar to move it there",
                            seg.what, seg.bytes
                        ),
                        None => format!("{}: {} B", seg.what, seg.bytes),
                    });
                if let Some(block) = &seg.block {
                    blocks.push((block.clone(), at));
                    if resp.drag_started() {
                        ui.ctx().data_mut(|d| d.insert_temp(drag_id, block.clone()));
                    }
                    if resp.dragged() {
                        if let Some(pos) = ui.ctx().pointer_interact_pos() {
                            ui.ctx()
                                .layer_painter(egui::LayerId::new(egui::Order::Tooltip, drag_id))
                                .text(
                                    pos + egui::vec2(12.0, -12.0),
                                    egui::Align2::LEFT_BOTTOM,
                                    format!("{block} ({} B)", seg.bytes),
                                    egui::FontId::proportional(13.0),
                                    ui.visuals().strong_text_color(),
                                );
                        }
                    }
                    if resp.drag_stopped() {
                        let pos = ui
                            .ctx()
                            .pointer_interact_pos()
                            .or(resp.interact_pointer_pos());
                        if let Some(pos) = pos {
                            dropped = Some((block.clone(), pos));
                        }
                        ui.ctx().data_mut(|d| d.remove::<String>(drag_id));
                    }
                }
                x += seg_w;
            }
            // the region's end: a part that does not fit runs past it
            let end = rect.left() + r.size as f32 * scale;
            ui.painter().rect_stroke(
                Rect::from_min_max(rect.min, egui::pos2(end, rect.bottom())),
                0.0,
                Stroke::new(1.0, if over { OVER } else { Color32::GRAY }),
                egui::StrokeKind::Inside,
            );
        });
    }
    // where the bars and the blocks are, for a test (or a tool) to drag between them
    ui.ctx().data_mut(|d| {
        d.insert_temp(egui::Id::new("fit-bars"), bars.clone());
        d.insert_temp(egui::Id::new("fit-blocks"), blocks);
    });
    let moved = dropped.and_then(|(block, pos)| {
        let (region, _) = bars
            .iter()
            .find(|(_, r)| r.expand2(egui::vec2(0.0, 3.0)).contains(pos))?;
        let home = placement?.blocks.iter().find(|b| b.name == block)?;
        (home.region != *region).then(|| Move {
            block,
            region: region.clone(),
        })
    });
    ui.horizontal_wrapped(|ui| {
        for (name, colour) in [
            ("planned arenas", POOL),
            ("allocators", ALLOCATOR),
            ("a call's weights", WEIGHTS),
            ("program", PROGRAM),
            ("code", CODE),
        ] {
            ui.colored_label(colour, "■");
            ui.label(name);
        }
        ui.label(format!("· {}", fit.code_note()));
        if !fit.flash_complete {
            ui.label("· flash is a lower bound: an operator's kernel is not measured");
        }
    });
    moved
}
