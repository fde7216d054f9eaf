//! The parameters every convolution-like kernel shares: the per-channel requantization
//! (`arm_nn_requantize`, the output offset and the activation clamp) and a window's geometry.

use super::arith::requantize;

/// Per-output-channel requantization and clamping.
pub struct Requant {
    pub multipliers: Vec<i32>,
    pub shifts: Vec<i32>,
    pub output_offset: i32,
    pub act_min: i32,
    pub act_max: i32,
}

impl Requant {
    /// The device's output for accumulator `acc` of channel `ch`.
    #[inline]
    pub fn apply(&self, acc: i32, ch: usize) -> i8 {
        requantize(acc, self.multipliers[ch], self.shifts[ch])
            .wrapping_add(self.output_offset)
            .clamp(self.act_min, self.act_max) as i8
    }
}

/// Geometry of a 2-D window op: stride, padding, dilation as (h, w).
#[derive(Clone, Copy)]
pub struct Window {
    pub stride: (usize, usize),
    pub padding: (usize, usize),
    pub dilation: (usize, usize),
}
