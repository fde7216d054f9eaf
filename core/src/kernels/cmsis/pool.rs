//! `cortex_m::*` pooling kernels as CMSIS-NN runs them: `arm_avgpool_s8` (integer average of the
//! valid window, ties away from zero; the op's zero point, multiplier and shift are not used)
//! and `arm_max_pool_s8` (clamped to the activation bounds a following ReLU sets), in both the
//! explicit-layout `_nhwc` form and the default flow's channels-last NCHW form.

use super::arith::average_round_away;
use super::conv::{activation_in, activation_out, pair, scratch_bytes, Act, Nhwc};
use super::core_buffers::{fails_on, CoreCall};
use super::ops::{int32, out_of};
use crate::kernels::ctx::Ctx;
use crate::kernels::value::Buf;
use crate::kernels::RuntimeError;

/// Kernel, stride and padding of a pooling op as (h, w) pairs.
#[derive(Clone, Copy)]
pub struct PoolWindow {
    pub kernel: (usize, usize),
    pub stride: (usize, usize),
    pub padding: (usize, usize),
}

/// Applies `f(window values) -> output` over NHWC windows clipped to the input, then clamps to
/// `[lo, hi]`.
pub fn pool_s8(
    x: &[i8],
    [n, h, w, c]: [usize; 4],
    win: PoolWindow,
    [_, oh, ow, _]: [usize; 4],
    (lo, hi): (i32, i32),
    f: impl Fn(&[i32]) -> i32,
) -> Vec<i8> {
    let (kh, kw) = win.kernel;
    let (sh, sw) = win.stride;
    let (ph, pw) = win.padding;
    let mut out = vec![0i8; n * oh * ow * c];
    let mut window = Vec::new();
    for b in 0..n {
        for y in 0..oh {
            for xo in 0..ow {
                let y0 = (y * sh) as isize - ph as isize;
                let x0 = (xo * sw) as isize - pw as isize;
                for ch in 0..c {
                    window.clear();
                    for iy in y0.max(0)..(y0 + kh as isize).min(h as isize) {
                        for ix in x0.max(0)..(x0 + kw as isize).min(w as isize) {
                            window.push(i32::from(
                                x[((b * h + iy as usize) * w + ix as usize) * c + ch],
                            ));
                        }
                    }
                    out[((b * oh + y) * ow + xo) * c + ch] = f(&window).clamp(lo, hi) as i8;
                }
            }
        }
    }
    out
}

fn window(ctx: &Ctx<'_>, args: &[usize]) -> Result<PoolWindow, RuntimeError> {
    let (k, s, p) = (
        ctx.window_ints(args, ctx.named("kernel_size")?)?,
        ctx.window_ints(args, ctx.named("stride")?)?,
        ctx.window_ints(args, ctx.named("padding")?)?,
    );
    let win = PoolWindow {
        kernel: (pair(&k, 0), pair(&k, 1)),
        stride: (pair(&s, 0), pair(&s, 1)),
        padding: (
            p.first().map_or(0, |&v| v.max(0) as usize),
            p.get(1).or(p.first()).map_or(0, |&v| v.max(0) as usize),
        ),
    };
    if win.stride.0 == 0 || win.stride.1 == 0 {
        return Err(ctx.bad("zero stride"));
    }
    Ok(win)
}

/// Pools `input` (argument 0 as `activation_in` reads it) into the call's out tensor.
fn pool(
    ctx: &mut Ctx<'_>,
    args: &[usize],
    act: Act,
    input: Nhwc,
    bounds: (i32, i32),
    f: impl Fn(&[i32]) -> i32,
) -> Result<(), RuntimeError> {
    let win = window(ctx, args)?;
    let o = out_of(ctx, args)?;
    let od = activation_out(ctx, o, act)?;
    if od[3] != input.dims[3] || od[0] != input.dims[0] {
        return Err(ctx.bad(format!(
            "pooling {:?} into {od:?} (NHWC) changes the batch or channel count",
            input.dims
        )));
    }
    ctx.out_len(&od)?;
    // a window wider than the padded input has no meaning (PyTorch refuses it); the loops
    // visit the window clipped to the input
    let [_, h, w, _] = input.dims;
    if win.kernel.0 > h.saturating_add(2 * win.padding.0)
        || win.kernel.1 > w.saturating_add(2 * win.padding.1)
    {
        return Err(ctx.bad(format!(
            "a {}×{} window over a {h}×{w} input padded by {:?}",
            win.kernel.0, win.kernel.1, win.padding
        )));
    }
    ctx.charge(&[
        od.iter().product(),
        win.kernel.0.min(h),
        win.kernel.1.min(w),
    ])?;
    let out = pool_s8(&input.data, input.dims, win, od, bounds, f);
    ctx.write_stored(o, Buf::I8(out))
}

/// `quantized_avg_pool2d[_nhwc].out(input, kernel, stride, padding, ceil_mode, zero_point,
/// multiplier, shift, scratch, out)`.
pub fn avg_pool2d(ctx: &mut Ctx<'_>, args: &[usize], act: Act) -> Result<(), RuntimeError> {
    let input = activation_in(ctx, args, ctx.named("input")?, act)?;
    let call = CoreCall::AvgPool {
        scratch_bytes: scratch_bytes(ctx, args, ctx.named("scratch")?)?,
        channels: input.dims[3],
    };
    if let Some(why) = fails_on(ctx.device.target, call) {
        return Err(ctx.device_fails(why));
    }
    pool(ctx, args, act, input, (-128, 127), |win| {
        average_round_away(win.iter().sum(), win.len() as i32)
    })
}

/// `quantized_max_pool2d[_nhwc].out(input, kernel, stride, padding, dilation, ceil_mode,
/// input_zero_point, output_zero_point, activation_min, activation_max, out)`.
pub fn max_pool2d(ctx: &mut Ctx<'_>, args: &[usize], act: Act) -> Result<(), RuntimeError> {
    let d = ctx.ints(args, ctx.named("dilation")?)?;
    if d.iter().any(|&v| v != 1) {
        return Err(ctx.bad(format!("dilation {d:?}: arm_max_pool_s8 has none")));
    }
    let bounds = ctx.range(
        int32(ctx, args, ctx.named("activation_min")?)?,
        int32(ctx, args, ctx.named("activation_max")?)?,
    )?;
    let input = activation_in(ctx, args, ctx.named("input")?, act)?;
    pool(ctx, args, act, input, bounds, |win| {
        win.iter().copied().max().unwrap_or(-128)
    })
}
