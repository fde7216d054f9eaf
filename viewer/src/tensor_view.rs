//! A captured tensor: summary statistics, a histogram (egui_plot) and a 2-D heatmap slice.

use egui::{Color32, Pos2, Rect, Sense, Ui, Vec2};
use egui_plot::{Bar, BarChart, Plot};
use etscope_core::tensor::TensorData;

/// Histogram bins over the finite values: (bin centers, counts, bin width).
pub fn histogram(values: &[f64], bins: usize) -> (Vec<f64>, Vec<usize>, f64) {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let (lo, hi) = finite
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    if finite.is_empty() || bins == 0 {
        return (Vec::new(), Vec::new(), 1.0);
    }
    let width = if hi > lo {
        (hi - lo) / bins as f64
    } else {
        1.0
    };
    let mut counts = vec![0usize; bins];
    for v in finite {
        let b = (((v - lo) / width) as usize).min(bins - 1);
        counts[b] += 1;
    }
    let centers = (0..bins).map(|i| lo + width * (i as f64 + 0.5)).collect();
    (centers, counts, width)
}

/// The last two dimensions at `leading` (the flat index over the dimensions before them):
/// (rows, cols, values). A `leading` past the end gives the last slice.
pub fn slice_2d(t: &TensorData, values: &[f64], leading: usize) -> (usize, usize, Vec<f64>) {
    let (rows, cols) = match t.shape.len() {
        0 => (1, 1),
        1 => (1, t.shape[0]),
        n => (t.shape[n - 2], t.shape[n - 1]),
    };
    let plane = rows.saturating_mul(cols).max(1);
    let slices = slice_count(t);
    let start = leading
        .min(slices - 1)
        .saturating_mul(plane)
        .min(values.len());
    let end = start.saturating_add(plane).min(values.len());
    (rows, cols, values[start..end].to_vec())
}

/// How many 2-D slices `slice_2d` can show.
pub fn slice_count(t: &TensorData) -> usize {
    let n = t.shape.len();
    if n <= 2 {
        return 1;
    }
    t.shape[..n - 2].iter().product::<usize>().max(1)
}

/// Shows stats, histogram and heatmap of one tensor.
pub fn tensor_ui(ui: &mut Ui, id: &str, t: &TensorData) {
    tensor_ui_as(ui, id, t, &t.dtype.short_name());
}

/// [`tensor_ui`] with the header naming the values as `what` (the Diff's compared values are
/// real numbers computed from each side's own type, not a tensor of their storage type).
pub fn tensor_ui_as(ui: &mut Ui, id: &str, t: &TensorData, what: &str) {
    let Ok(values) = t.to_f64() else {
        ui.label(format!("{} elements cannot be shown", t.dtype.name()));
        return;
    };
    let s = etscope_core::tensor::stats_of(&values);
    ui.monospace(format!(
        "{what}{:?}  min {:.5}  max {:.5}  mean {:.5}  std {:.5}",
        t.shape, s.min, s.max, s.mean, s.std
    ));
    if s.non_finite > 0 {
        ui.colored_label(
            Color32::from_rgb(230, 80, 80),
            format!("{} non-finite values", s.non_finite),
        );
    }
    let (centers, counts, width) = histogram(&values, 48);
    let bars: Vec<Bar> = centers
        .iter()
        .zip(&counts)
        .map(|(&c, &n)| Bar::new(c, n as f64).width(width))
        .collect();
    Plot::new(format!("hist-{id}"))
        .height(120.0)
        .allow_scroll(false)
        .show(ui, |plot| {
            plot.bar_chart(BarChart::new("histogram", bars).color(Color32::from_rgb(90, 150, 230)));
        });
    // which 2-D slice: the flat index over the leading dimensions (the channel of an NCHW
    // tensor with one batch), kept per view
    let slices = slice_count(t);
    let key = egui::Id::new(("heatmap-slice", id));
    let mut leading = ui
        .data_mut(|d| *d.get_temp_mut_or(key, 0usize))
        .min(slices - 1);
    let (rows, cols, slice) = slice_2d(t, &values, leading);
    if rows * cols > 1 {
        ui.horizontal(|ui| {
            let dims = t.shape.len();
            if slices > 1 {
                ui.label(format!("slice [..., :{rows}, :{cols}] at leading index"));
                ui.add(egui::DragValue::new(&mut leading).range(0..=slices - 1))
                    .on_hover_text(format!(
                        "which of the {slices} slices over dimensions {:?} (for NCHW with one batch: the channel)",
                        &t.shape[..dims.saturating_sub(2)]
                    ));
                ui.label(format!("of {slices}"));
            } else {
                ui.label(format!("[{rows}, {cols}]"));
            }
        });
        ui.data_mut(|d| d.insert_temp(key, leading));
        let cell = (ui.available_width() / cols as f32).clamp(1.0, 12.0);
        let (rect, response) = ui.allocate_exact_size(
            Vec2::new(cell * cols as f32, cell * rows as f32),
            Sense::hover(),
        );
        // one scale for every slice: the whole tensor's min..max
        let (lo, hi) = (s.min, s.max);
        let mut mesh = egui::Mesh::default();
        for (i, v) in slice.iter().enumerate() {
            let (r, c) = (i / cols, i % cols);
            let t = if hi > lo {
                ((v - lo) / (hi - lo)) as f32
            } else {
                0.5
            };
            let color = crate::profile_view::heat_color(t);
            let min = Pos2::new(rect.left() + c as f32 * cell, rect.top() + r as f32 * cell);
            mesh.add_colored_rect(Rect::from_min_size(min, Vec2::splat(cell)), color);
        }
        ui.painter().add(egui::Shape::mesh(mesh));
        if let Some(p) = response.hover_pos() {
            let (c, r) = (
                ((p.x - rect.left()) / cell) as usize,
                ((p.y - rect.top()) / cell) as usize,
            );
            if let Some(v) = slice.get(r * cols + c).filter(|_| c < cols) {
                response.on_hover_text_at_pointer(format!("[{leading}, {r}, {c}] = {v:.6}"));
            }
        }
        color_scale(ui, lo, hi);
    }
}

/// The heatmap's colour scale: the gradient from the tensor's minimum to its maximum.
fn color_scale(ui: &mut Ui, lo: f64, hi: f64) {
    ui.horizontal(|ui| {
        ui.monospace(format!("{lo:.4}"));
        crate::profile_view::heat_gradient(ui, Vec2::new(120.0, 10.0));
        ui.monospace(format!("{hi:.4}"));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_counts_every_finite_value_once() {
        let (centers, counts, w) = histogram(&[0.0, 0.5, 1.0, f64::NAN], 2);
        assert_eq!(counts.iter().sum::<usize>(), 3);
        assert_eq!(centers.len(), 2);
        assert!((w - 0.5).abs() < 1e-12);
    }

    #[test]
    fn a_slice_is_picked_by_its_leading_index() {
        let values: Vec<f64> = (0..24).map(f64::from).collect();
        let t = TensorData {
            dtype: etscope_core::ScalarType::Double,
            shape: vec![1, 3, 2, 4],
            bytes: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        };
        assert_eq!(slice_count(&t), 3);
        let (rows, cols, s) = slice_2d(&t, &values, 1);
        assert_eq!((rows, cols), (2, 4));
        assert_eq!(s, (8..16).map(f64::from).collect::<Vec<_>>());
        // past the end: the last slice, never a panic
        assert_eq!(
            slice_2d(&t, &values, 99).2,
            (16..24).map(f64::from).collect::<Vec<_>>()
        );
    }
}
