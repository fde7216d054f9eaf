//! What the integer kernels' tests share: a deterministic generator of operands, requantization
//! parameters and windows, and the output size of a window.

use super::conv_params::{Requant, Window};
use super::gemm::MAX_FOLDED_OFFSET;

/// A small deterministic generator (the tests need no crate for it).
pub struct Lcg(pub u64);
impl Lcg {
    pub fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) as u32
    }
    pub fn below(&mut self, n: usize) -> usize {
        self.next() as usize % n
    }
    pub fn i8s(&mut self, n: usize) -> Vec<i8> {
        (0..n).map(|_| self.next() as i8).collect()
    }
    pub fn offset(&mut self) -> i32 {
        match self.below(4) {
            0 => MAX_FOLDED_OFFSET,
            1 => -MAX_FOLDED_OFFSET,
            _ => self.below(256) as i32 - 128,
        }
    }
}

pub fn requant(r: &mut Lcg, oc: usize) -> Requant {
    Requant {
        multipliers: (0..oc).map(|_| (r.next() >> 1) as i32 | 1 << 30).collect(),
        shifts: (0..oc).map(|_| r.below(20) as i32 - 14).collect(),
        output_offset: r.below(256) as i32 - 128,
        act_min: -128,
        act_max: 127,
    }
}

pub fn window(r: &mut Lcg) -> Window {
    Window {
        stride: (1 + r.below(3), 1 + r.below(3)),
        padding: (r.below(3), r.below(3)),
        dilation: (1 + r.below(2), 1 + r.below(2)),
    }
}

/// Output size of one spatial dim, or `None` when the window does not fit.
pub fn out_size(i: usize, k: usize, s: usize, p: usize, d: usize) -> Option<usize> {
    let span = d * (k - 1) + 1;
    (i + 2 * p >= span).then(|| (i + 2 * p - span) / s + 1)
}

/// A random NHWC input's dims: batch 1–2, height and width 1–9, channels 1–40.
pub fn nhwc(r: &mut Lcg) -> [usize; 4] {
    [
        1 + r.below(2),
        1 + r.below(9),
        1 + r.below(9),
        1 + r.below(40),
    ]
}

/// The output height and width of a `kernel` window over `h × w`, or `None` when it does not
/// fit.
pub fn out_hw(h: usize, w: usize, kernel: (usize, usize), win: &Window) -> Option<(usize, usize)> {
    Some((
        out_size(h, kernel.0, win.stride.0, win.padding.0, win.dilation.0)?,
        out_size(w, kernel.1, win.stride.1, win.padding.1, win.dilation.1)?,
    ))
}
