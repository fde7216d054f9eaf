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

/// The last two dimensions at leading index 0: (rows, cols, values).
pub fn slice_2d(t: &TensorData, values: &[f64]) -> (usize, usize, Vec<f64>) {
    let (rows, cols) = match t.shape.len() {
        0 => (1, 1),
        1 => (1, t.shape[0]),
        n => (t.shape[n - 2], t.shape[n - 1]),
    };
    let n = (rows * cols).min(values.len());
    (rows, cols, values[..n].to_vec())
}

/// Shows stats, histogram and heatmap of one tensor.
pub fn tensor_ui(ui: &mut Ui, id: &str, t: &TensorData) {
    let Ok(values) = t.to_f64() else {
        ui.label(format!("{} elements cannot be shown", t.dtype.name()));
        return;
    };
    let s = etscope_core::tensor::stats_of(&values);
    ui.monospace(format!(
        "{}{:?}  min {:.5}  max {:.5}  mean {:.5}  std {:.5}",
        t.dtype.short_name(),
        t.shape,
        s.min,
        s.max,
        s.mean,
        s.std
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
    let (rows, cols, slice) = slice_2d(t, &values);
    if rows * cols > 1 {
        ui.label(format!("slice [..., :{rows}, :{cols}] at leading index 0"));
        let cell = (ui.available_width() / cols as f32).clamp(1.0, 12.0);
        let (rect, _) = ui.allocate_exact_size(
            Vec2::new(cell * cols as f32, cell * rows as f32),
            Sense::hover(),
        );
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
    }
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
}
