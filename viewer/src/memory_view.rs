//! The memory map: per arena, an address × time chart with one box per planned tensor spanning
//! its lifetime, the declared size, peak and lower bound as lines, the live-bytes curve, hover
//! details and click-to-select of the producing node.

use egui::{Align2, Color32, FontId, Pos2, Rect, Sense, Stroke, StrokeKind, Ui, Vec2};
use etscope_core::ir::Graph;
use etscope_core::plan::{Arena, PlannedTensor, TensorRole};

/// Zoom/pan of one chart (visible instruction and byte ranges).
#[derive(Debug, Clone, Default)]
pub struct MemoryViewState {
    pub view: Option<[f64; 4]>,
}

fn role_color(role: TensorRole, i: usize) -> Color32 {
    let shade = (i % 5) as u8 * 12;
    match role {
        TensorRole::Input => Color32::from_rgb(40, 140 + shade, 80),
        TensorRole::Output => Color32::from_rgb(200, 120 + shade, 40),
        TensorRole::Scratch => Color32::from_rgb(130, 130 + shade, 130),
        TensorRole::Intermediate => Color32::from_rgb(50 + shade, 110 + shade, 200),
        TensorRole::State => Color32::from_rgb(170, 80 + shade, 170),
    }
}

/// Draws one arena; `selected_instruction` highlights the tensors it writes or reads. Returns the
/// producing instruction of a clicked box.
pub fn arena_ui(
    ui: &mut Ui,
    arena: &Arena,
    n_instr: usize,
    graph: &Graph,
    selected_instruction: Option<usize>,
    state: &mut MemoryViewState,
) -> Option<usize> {
    let steps = n_instr.max(1) as f64;
    let bytes = arena.size.max(arena.peak).max(1) as f64;
    let [mut x0, mut x1, mut y0, mut y1] = state.view.unwrap_or([0.0, steps, 0.0, bytes * 1.05]);
    let (rect, response) = ui.allocate_exact_size(
        ui.available_size().max(Vec2::new(200.0, 160.0)),
        Sense::click_and_drag(),
    );
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 0.0, ui.visuals().extreme_bg_color);
    let plot = Rect::from_min_max(
        rect.min + Vec2::new(70.0, 22.0),
        rect.max - Vec2::new(8.0, 34.0),
    );
    if let Some(p) = response.hover_pos() {
        let scroll = ui.input(|i| i.smooth_scroll_delta.y);
        if scroll != 0.0 {
            let f = f64::from((-scroll / 300.0).exp());
            let ax = x0 + f64::from((p.x - plot.left()) / plot.width()) * (x1 - x0);
            let ay = y1 - f64::from((p.y - plot.top()) / plot.height()) * (y1 - y0);
            (x0, x1) = (ax - (ax - x0) * f, ax + (x1 - ax) * f);
            (y0, y1) = (ay - (ay - y0) * f, ay + (y1 - ay) * f);
        }
    }
    if response.dragged() {
        let d = response.drag_delta();
        let dx = f64::from(d.x / plot.width()) * (x1 - x0);
        let dy = f64::from(d.y / plot.height()) * (y1 - y0);
        (x0, x1, y0, y1) = (x0 - dx, x1 - dx, y0 + dy, y1 + dy);
    }
    if response.double_clicked() {
        (x0, x1, y0, y1) = (0.0, steps, 0.0, bytes * 1.05);
    }
    state.view = Some([x0, x1, y0, y1]);
    let sx = |t: f64| plot.left() + ((t - x0) / (x1 - x0)) as f32 * plot.width();
    let sy = |b: f64| plot.bottom() - ((b - y0) / (y1 - y0)) as f32 * plot.height();
    let font = FontId::monospace(10.0);
    // axes: bytes in KiB once the arena is a few KiB; instructions at whole steps
    let kib = bytes >= 4096.0;
    for k in 0..=4 {
        let b = y0 + (y1 - y0) * f64::from(k) / 4.0;
        painter.text(
            Pos2::new(plot.left() - 4.0, sy(b)),
            Align2::RIGHT_CENTER,
            if kib {
                format!("{:.1}", b / 1024.0)
            } else {
                format!("{b:.0}")
            },
            font.clone(),
            Color32::GRAY,
        );
    }
    let span = (x1 - x0).max(1.0);
    let step = [
        1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0,
    ]
    .into_iter()
    .find(|s| span / s <= 10.0)
    .unwrap_or(10_000.0);
    let mut t = (x0 / step).ceil() * step;
    while t <= x1 {
        painter.text(
            Pos2::new(sx(t + 0.5), plot.bottom() + 4.0),
            Align2::CENTER_TOP,
            format!("#{t:.0}"),
            font.clone(),
            Color32::GRAY,
        );
        t += step;
    }
    // axis titles, with their units
    painter.text(
        Pos2::new(rect.left() + 4.0, rect.top() + 3.0),
        Align2::LEFT_TOP,
        if kib {
            "offset in the arena (KiB)"
        } else {
            "offset in the arena (B)"
        },
        font.clone(),
        Color32::from_gray(170),
    );
    painter.text(
        Pos2::new(plot.center().x, rect.bottom() - 2.0),
        Align2::CENTER_BOTTOM,
        "instruction (#, in execution order)",
        font.clone(),
        Color32::from_gray(170),
    );
    let mut hovered: Option<&PlannedTensor> = None;
    let pointer = response.hover_pos();
    for (i, t) in arena.tensors.iter().enumerate() {
        let r = Rect::from_min_max(
            Pos2::new(sx(t.first as f64), sy((t.offset + t.size) as f64)),
            Pos2::new(sx(t.last as f64 + 1.0), sy(t.offset as f64)),
        );
        if !r.intersects(plot) {
            continue;
        }
        let r = r.intersect(plot);
        let related =
            selected_instruction.is_some_and(|s| t.producer == Some(s) || t.consumers.contains(&s));
        painter.rect_filled(
            r,
            0.0,
            role_color(t.role, i).gamma_multiply(if related { 1.0 } else { 0.75 }),
        );
        let stroke = if related {
            Stroke::new(2.0, Color32::WHITE)
        } else {
            Stroke::new(0.5, Color32::BLACK)
        };
        painter.rect_stroke(r, 0.0, stroke, StrokeKind::Inside);
        if r.width() > 50.0 && r.height() > 12.0 {
            painter.text(
                r.center(),
                Align2::CENTER_CENTER,
                format!("v{}", t.value),
                font.clone(),
                Color32::WHITE,
            );
        }
        if pointer.is_some_and(|p| r.contains(p)) {
            hovered = Some(t);
        }
    }
    // live bytes as a step line, and the three reference lines
    let mut pts = Vec::new();
    for (step, &b) in arena.live_bytes.iter().enumerate() {
        pts.push(Pos2::new(sx(step as f64), sy(b as f64)));
        pts.push(Pos2::new(sx(step as f64 + 1.0), sy(b as f64)));
    }
    if pts.len() > 1 {
        painter.add(egui::Shape::line(
            pts,
            Stroke::new(1.0, Color32::from_rgb(0xff, 0xe0, 0x80)),
        ));
    }
    let lines = [
        (arena.size, "declared", Color32::from_rgb(230, 80, 80)),
        (arena.peak, "peak", Color32::from_rgb(240, 170, 60)),
        (
            arena.lower_bound,
            "lower bound",
            Color32::from_rgb(90, 200, 120),
        ),
    ];
    for (i, &(value, _, color)) in lines.iter().enumerate() {
        // equal values share one line and one label ("declared = peak = lower bound")
        if lines[..i].iter().any(|l| l.0 == value) {
            continue;
        }
        let names: Vec<&str> = lines.iter().filter(|l| l.0 == value).map(|l| l.1).collect();
        let y = sy(value as f64);
        if y >= plot.top() && y <= plot.bottom() {
            painter.line_segment(
                [Pos2::new(plot.left(), y), Pos2::new(plot.right(), y)],
                Stroke::new(1.0, color),
            );
            painter.text(
                Pos2::new(plot.right() - 2.0, y - 1.0),
                Align2::RIGHT_BOTTOM,
                if kib {
                    format!(
                        "{} {:.1} KiB ({value} B)",
                        names.join(" = "),
                        value as f64 / 1024.0
                    )
                } else {
                    format!("{} {value} B", names.join(" = "))
                },
                font.clone(),
                color,
            );
        }
    }
    painter.rect_stroke(
        plot,
        0.0,
        Stroke::new(1.0, Color32::from_gray(80)),
        StrokeKind::Outside,
    );
    let mut clicked = None;
    if let Some(t) = hovered {
        if response.clicked() {
            clicked = t.producer.or_else(|| t.consumers.first().copied());
        }
        let name_of = |i: usize| {
            graph
                .node_for_instruction(i)
                .map(|n| format!("#{i} {}", n.short_op()))
                .unwrap_or_else(|| format!("#{i}"))
        };
        let role = match t.role {
            TensorRole::Input => "a program input",
            TensorRole::Output => "a program output",
            TensorRole::Scratch => "a kernel's scratch buffer",
            TensorRole::Intermediate => "an intermediate tensor",
            TensorRole::State => "state kept between calls (a mutable buffer)",
        };
        let mut readers: Vec<String> = t.consumers.iter().take(6).map(|&c| name_of(c)).collect();
        if t.consumers.len() > 6 {
            readers.push(format!("and {} more", t.consumers.len() - 6));
        }
        let mut text = format!(
            "v{} {}{:?}, {role}\nbytes {} to {} of this arena ({} B)\nlive from instruction #{} to #{}\n",
            t.value,
            t.dtype.map(|d| d.short_name()).unwrap_or_default(),
            t.shape,
            t.offset,
            t.offset + t.size,
            t.size,
            t.first,
            t.last,
        );
        text.push_str(&match t.producer {
            Some(p) => format!("written by {}", name_of(p)),
            None => "written before the first instruction".into(),
        });
        text.push_str(&if readers.is_empty() {
            "; read by no instruction".to_string()
        } else {
            format!("; read by {}", readers.join(", "))
        });
        if !t.aliases.is_empty() {
            text.push_str(&format!(
                "\nalso seen as v{}",
                t.aliases
                    .iter()
                    .map(|a| a.to_string())
                    .collect::<Vec<_>>()
                    .join(", v")
            ));
        }
        text.push_str("\nclick to select its producer");
        response.on_hover_text_at_pointer(text);
    }
    clicked
}

/// What the colours and lines of the charts mean (drawn once above them).
pub fn legend_ui(ui: &mut Ui) {
    ui.horizontal_wrapped(|ui| {
        // each mark stays with its words: an item that does not fit the rest of the row starts
        // the next one (a group never wraps inside itself)
        let fits = |ui: &mut Ui, mark: f32, label: &str| {
            let text = ui.fonts_mut(|f| {
                f.layout_no_wrap(
                    label.to_string(),
                    egui::TextStyle::Body.resolve(ui.style()),
                    Color32::WHITE,
                )
                .size()
                .x
            });
            let need = mark + ui.spacing().item_spacing.x * 2.0 + text;
            if ui.available_size_before_wrap().x < need {
                ui.end_row();
            }
        };
        let swatch = |ui: &mut Ui, color: Color32, label: &str| {
            fits(ui, 12.0, label);
            ui.horizontal(|ui| {
                let (r, _) = ui.allocate_exact_size(Vec2::new(12.0, 12.0), Sense::hover());
                ui.painter().rect_filled(r, 2.0, color);
                ui.label(label);
            });
        };
        let line = |ui: &mut Ui, color: Color32, label: &str| {
            fits(ui, 18.0, label);
            ui.horizontal(|ui| {
                let (r, _) = ui.allocate_exact_size(Vec2::new(18.0, 12.0), Sense::hover());
                ui.painter()
                    .line_segment([r.left_center(), r.right_center()], Stroke::new(2.0, color));
                ui.label(label);
            });
        };
        swatch(ui, role_color(TensorRole::Input, 0), "input");
        swatch(ui, role_color(TensorRole::Intermediate, 0), "intermediate");
        swatch(ui, role_color(TensorRole::Output, 0), "output");
        swatch(ui, role_color(TensorRole::Scratch, 0), "scratch");
        swatch(ui, role_color(TensorRole::State, 0), "state");
        line(ui, Color32::from_rgb(0xff, 0xe0, 0x80), "bytes live");
        line(ui, Color32::from_rgb(230, 80, 80), "declared size");
        line(ui, Color32::from_rgb(240, 170, 60), "peak");
        line(ui, Color32::from_rgb(90, 200, 120), "lower bound");
    });
}
