//! The shape of one kernel call as the program states it, read through its IR node
//! ([`CallView`], each argument by its schema name): the NHWC geometry of a convolution, a pool
//! or a linear, or the element counts of anything else. `_nhwc` ops give NHWC sizes; the other
//! `cortex_m::` spatial ops give NCHW sizes (stored channels-last).

use crate::ir::call::CallView;
use crate::ir::ValueInfo;
/// A convolution-like call's geometry (NHWC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spatial {
    pub batch: usize,
    pub in_h: usize,
    pub in_w: usize,
    pub in_ch: usize,
    pub out_h: usize,
    pub out_w: usize,
    pub out_ch: usize,
    pub kernel_h: usize,
    pub kernel_w: usize,
    pub stride: (usize, usize),
    pub padding: (usize, usize),
    pub dilation: (usize, usize),
}

impl Spatial {
    /// Output pixels of every image (`batch · out_h · out_w`).
    pub fn pixels(&self) -> usize {
        self.batch * self.out_h * self.out_w
    }

    /// Output elements.
    pub fn outputs(&self) -> usize {
        self.pixels() * self.out_ch
    }
}

/// Bytes of a tensor.
pub fn bytes(t: &ValueInfo) -> Option<usize> {
    t.elements()?
        .checked_mul(t.dtype.and_then(|d| d.element_size()).unwrap_or(1))
}

/// The sizes of a 4-D activation as NHWC.
fn nhwc(t: &ValueInfo, nhwc_sizes: bool) -> Option<[usize; 4]> {
    let s: Vec<usize> = t
        .shape
        .iter()
        .map(|&x| usize::try_from(x).ok())
        .collect::<Option<_>>()?;
    match (s.as_slice(), nhwc_sizes) {
        (&[n, h, w, c], true) => Some([n, h, w, c]),
        (&[n, c, h, w], false) => Some([n, h, w, c]),
        _ => None,
    }
}

/// A pair from int list argument `k` (one value for both; `default` when absent).
fn pair(call: &CallView<'_>, k: usize, default: usize) -> (usize, usize) {
    let v = call.ints_at(k);
    let at = |i: usize| {
        v.get(i)
            .or(v.first())
            .and_then(|&x| usize::try_from(x).ok())
            .unwrap_or(default)
    };
    (at(0), at(1))
}

/// The geometry of a `cortex_m::` convolution, depthwise convolution or pool call, each
/// argument read by its schema name: `input`, the out tensor last, the kernel from the `weight`
/// (`[O,H,W,I]` or `[1,H,W,C·m]`) or from the pool's `kernel_size`, `stride`, `padding` and
/// `dilation` (a pool without one, and a transposed convolution's `output_padding`, are not it).
pub fn spatial(call: &CallView<'_>) -> Option<Spatial> {
    let is_nhwc = call.op().ends_with("_nhwc");
    let input = nhwc(call.tensor("input")?, is_nhwc)?;
    let out = nhwc(call.out()?, is_nhwc)?;
    let (kernel_h, kernel_w) = match call.position("kernel_size") {
        Some(k) => pair(call, k, 1),
        None => {
            let w = call.tensor("weight")?;
            let h = usize::try_from(*w.shape.get(1)?).ok()?;
            let x = usize::try_from(*w.shape.get(2)?).ok()?;
            (h, x)
        }
    };
    let named = |name: &str, default: usize| {
        call.position(name)
            .map_or((default, default), |k| pair(call, k, default))
    };
    let (stride, padding, dilation) = (
        named("stride", 1),
        named("padding", 0),
        named("dilation", 1),
    );
    Some(Spatial {
        batch: input[0],
        in_h: input[1],
        in_w: input[2],
        in_ch: input[3],
        out_h: out[1],
        out_w: out[2],
        out_ch: out[3],
        kernel_h,
        kernel_w,
        stride,
        padding,
        dilation,
    })
}
