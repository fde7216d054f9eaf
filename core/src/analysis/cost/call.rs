//! The shape of one kernel call as the program states it: the NHWC geometry of a convolution,
//! a pool or a linear, or the element counts of anything else. `_nhwc` ops give NHWC sizes;
//! the other `cortex_m::` spatial ops give NCHW sizes (stored channels-last).

use crate::formats::pte::{EValue, ExecutionPlan, Tensor};
use crate::kernels::cmsis::core_buffers::int_list;
pub use crate::kernels::cmsis::core_buffers::tensor_arg as tensor_arg_of;
use crate::kernels::cmsis::core_buffers::tensor_arg;

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

/// Elements of a tensor (`None` when a size is negative or the product overflows).
pub fn elements(t: &Tensor) -> Option<usize> {
    t.sizes
        .iter()
        .try_fold(1usize, |n, &s| n.checked_mul(usize::try_from(s).ok()?))
}

/// Bytes of a tensor.
pub fn bytes(t: &Tensor) -> Option<usize> {
    elements(t)?.checked_mul(t.scalar_type.element_size().unwrap_or(1))
}

/// The sizes of a 4-D activation as NHWC.
fn nhwc(t: &Tensor, nhwc_sizes: bool) -> Option<[usize; 4]> {
    let s: Vec<usize> = t
        .sizes
        .iter()
        .map(|&x| usize::try_from(x).ok())
        .collect::<Option<_>>()?;
    match (s.as_slice(), nhwc_sizes) {
        (&[n, h, w, c], true) => Some([n, h, w, c]),
        (&[n, c, h, w], false) => Some([n, h, w, c]),
        _ => None,
    }
}

/// A pair from an int list argument (one value for both; `default` when absent).
fn pair(plan: &ExecutionPlan, args: &[usize], k: usize, default: usize) -> (usize, usize) {
    let v = int_list(plan, args, k);
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
pub fn spatial(plan: &ExecutionPlan, op: &str, args: &[usize]) -> Option<Spatial> {
    let arg = |name: &str| crate::ops::arg_of(op, name);
    let is_nhwc = op.ends_with("_nhwc");
    let input = nhwc(tensor_arg(plan, args, arg("input")?)?, is_nhwc)?;
    let out = nhwc(tensor_arg(plan, args, args.len().checked_sub(1)?)?, is_nhwc)?;
    let (kernel_h, kernel_w) = match arg("kernel_size") {
        Some(k) => pair(plan, args, k, 1),
        None => {
            let w = tensor_arg(plan, args, arg("weight")?)?;
            let h = usize::try_from(*w.sizes.get(1)?).ok()?;
            let x = usize::try_from(*w.sizes.get(2)?).ok()?;
            (h, x)
        }
    };
    let named = |name: &str, default: usize| {
        arg(name).map_or((default, default), |k| pair(plan, args, k, default))
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

/// An int argument.
pub fn int_arg(plan: &ExecutionPlan, args: &[usize], k: usize) -> Option<i64> {
    match plan.values.get(*args.get(k)?)? {
        EValue::Int(v) => Some(*v),
        _ => None,
    }
}

/// The tensors among a call's arguments (tensor lists flattened), the out tensor last.
pub fn tensors<'p>(plan: &'p ExecutionPlan, args: &[usize]) -> Vec<&'p Tensor> {
    let mut out = Vec::new();
    for &a in args {
        match plan.values.get(a) {
            Some(EValue::Tensor(t)) => out.push(t),
            Some(EValue::TensorList(items)) => {
                out.extend(items.iter().filter_map(|&i| plan.tensor(i as usize)))
            }
            _ => {}
        }
    }
    out
}
