//! `cortex_m::*` convolution-like kernels in CMSIS-NN's integer arithmetic: convolution and
//! depthwise convolution (`arm_convolve_s8`, `arm_depthwise_conv_s8`), transpose convolution
//! (`arm_transpose_conv_wrapper_s8`, including the pinned version's rolling-buffer defect),
//! fully connected (`arm_fully_connected_s8`) and batch matmul (`arm_batch_matmul_s8`): the
//! argument decoding, the reference loops, and the choice of fast path ([`gemm`],
//! [`depthwise`]) with the filter's derived form ([`FilterForm`]).
//!
//! Both forms of each spatial op run here: the `_nhwc` forms of the explicit-layout flow
//! (logical NHWC, contiguous) and the default flow's forms (logical NCHW stored channels-last).
//! Either way the device reads NHWC memory, so each kernel core works on NHWC slices and the
//! argument decoding ([`Act`]) only says where the logical sizes sit.

use super::arith::requantize;
use super::conv_params::{Requant, Window};
use super::core_buffers::{fails_on, CoreCall};
use super::ops::{int32, out_of};
use super::{depthwise, gemm};
use crate::kernels::ctx::{i32s, i8b, i8s, Ctx};
use crate::kernels::layout::{is_channels_last, is_contiguous};
use crate::kernels::value::Buf;
use crate::kernels::{CmsisNn, RuntimeError};

/// Where an op's activations keep their logical dims.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Act {
    /// `_nhwc` ops: sizes `[N, H, W, C]`, row-major.
    Nhwc,
    /// Default-flow ops: sizes `[N, C, H, W]`, stored channels-last.
    Nchw,
}

/// An activation argument as the device reads it: NHWC dims and bytes.
pub(super) struct Nhwc {
    pub dims: [usize; 4],
    pub data: Vec<i8>,
}

/// The NHWC dims of logical `shape` under `act`.
pub(super) fn nhwc_dims(
    ctx: &Ctx<'_>,
    shape: &[usize],
    act: Act,
    what: &str,
) -> Result<[usize; 4], RuntimeError> {
    match (shape, act) {
        ([n, h, w, c], Act::Nhwc) => Ok([*n, *h, *w, *c]),
        ([n, c, h, w], Act::Nchw) => Ok([*n, *h, *w, *c]),
        _ => Err(ctx.bad(format!("{what} must be 4-D, is {shape:?}"))),
    }
}

/// Checks the storage order the op requires (the device kernel refuses anything else).
fn check_layout(
    ctx: &Ctx<'_>,
    shape: &[usize],
    order: &[usize],
    act: Act,
    what: &str,
) -> Result<(), RuntimeError> {
    let ok = match act {
        Act::Nhwc => is_contiguous(order),
        Act::Nchw => is_channels_last(shape, order),
    };
    if ok {
        Ok(())
    } else {
        Err(ctx.bad(format!(
            "{what} is stored with dim_order {order:?}; the kernel needs {}",
            if act == Act::Nhwc {
                "a contiguous one"
            } else {
                "channels-last"
            }
        )))
    }
}

/// Activation argument `k` in NHWC memory order.
pub(super) fn activation_in(
    ctx: &Ctx<'_>,
    args: &[usize],
    k: usize,
    act: Act,
) -> Result<Nhwc, RuntimeError> {
    let t = ctx.stored(args, k)?;
    check_layout(ctx, &t.shape, &t.dim_order, act, "the input")?;
    let dims = nhwc_dims(ctx, &t.shape, act, "input")?;
    let Buf::I8(data) = t.buf else {
        return Err(ctx.bad("the input must be int8"));
    };
    Ok(Nhwc { dims, data })
}

/// A convolution's `input` (NHWC), `weight` and optional `bias` (int32), read by name.
fn conv_operands<'c>(
    ctx: &'c Ctx<'_>,
    args: &[usize],
    act: Act,
) -> Result<
    (
        Nhwc,
        &'c crate::kernels::value::HostTensor,
        Option<Vec<i32>>,
    ),
    RuntimeError,
> {
    let input = activation_in(ctx, args, ctx.named("input")?, act)?;
    let weight = ctx.tensor(args, ctx.named("weight")?)?;
    let bias = ctx
        .opt_tensor(args, ctx.named("bias")?)?
        .map(|b| i32s(ctx, b))
        .transpose()?;
    Ok((input, weight, bias))
}

/// The out activation's NHWC dims (checked against the op's layout).
pub(super) fn activation_out(
    ctx: &Ctx<'_>,
    o: usize,
    act: Act,
) -> Result<[usize; 4], RuntimeError> {
    let shape = ctx.out_shape(o)?;
    check_layout(
        ctx,
        &shape,
        &ctx.dim_order(o, shape.len()),
        act,
        "the output",
    )?;
    nhwc_dims(ctx, &shape, act, "out")
}

pub(super) fn pair(v: &[i64], i: usize) -> usize {
    v.get(i).or(v.first()).copied().unwrap_or(1).max(0) as usize
}

/// One multiply-accumulate step of the CMSIS-NN int8 kernels, `acc + (x + x_off)·(w + w_off)`,
/// in the wrapping 32-bit arithmetic of the device's registers.
#[inline]
pub(super) fn mac(acc: i32, x: i8, x_off: i32, w: i8, w_off: i32) -> i32 {
    let (x, w) = (
        i32::from(x).wrapping_add(x_off),
        i32::from(w).wrapping_add(w_off),
    );
    acc.wrapping_add(x.wrapping_mul(w))
}

/// `Σ (x + x_off)·w` over one input pixel's channels and one filter tap (wrapping).
#[inline]
fn tap(x: &[i8], w: &[i8], x_off: i32) -> i32 {
    x.iter()
        .zip(w)
        .fold(0i32, |s, (&a, &b)| mac(s, a, x_off, b, 0))
}

/// Refuses a conv-like call whose shapes (`fits`, batch) or per-channel parameters do not
/// match its `oc` output channels.
fn check_channels(
    ctx: &Ctx<'_>,
    fits: bool,
    input: &Nhwc,
    weight: &[usize],
    od: [usize; 4],
    rq: &Requant,
    bias: Option<&[i32]>,
) -> Result<(), RuntimeError> {
    let oc = od[3];
    if !fits
        || od[0] != input.dims[0]
        || rq.multipliers.len() != oc
        || rq.shifts.len() != oc
        || bias.is_some_and(|b| b.len() != oc)
    {
        return Err(ctx.bad(format!(
            "input {:?}, weight {weight:?}, out {od:?} (NHWC) and per-channel params do not fit",
            input.dims
        )));
    }
    Ok(())
}

/// The form of a convolution's filter its fast path reads, derived once per constant (the
/// runtime keeps it, [`crate::kernels::Ctx::derived`]): packed rows for an ungrouped
/// convolution, 32-bit taps for a depthwise one, none for a grouped one (the loops read the
/// filter as it is).
pub enum FilterForm {
    Packed(gemm::PackedRows),
    Widened(depthwise::WidenedFilter),
    Raw,
}

impl FilterForm {
    /// The form of filter `wt` (`w_dims`) for an input of `in_channels` channels.
    pub fn of(
        wt: &[i8],
        w_dims: [usize; 4],
        in_channels: usize,
        depth_multiplier: Option<usize>,
    ) -> FilterForm {
        let [oc, kh, kw, wi] = w_dims;
        match depth_multiplier {
            Some(_) => FilterForm::Widened(depthwise::WidenedFilter::new(wt)),
            None if wi == in_channels => {
                FilterForm::Packed(gemm::PackedRows::new(wt, oc, kh * kw * wi, 0))
            }
            None => FilterForm::Raw,
        }
    }

    /// Whether this is the form [`FilterForm::of`] makes of a `w_dims` filter for this call.
    pub fn fits(
        &self,
        w_dims: [usize; 4],
        in_channels: usize,
        depth_multiplier: Option<usize>,
    ) -> bool {
        let [oc, kh, kw, wi] = w_dims;
        match (self, depth_multiplier) {
            (FilterForm::Widened(w), Some(_)) => w.0.len() == w_dims.iter().product::<usize>(),
            (FilterForm::Packed(p), None) => wi == in_channels && p.fits(oc, kh * kw * wi, 0),
            (FilterForm::Raw, None) => wi != in_channels,
            _ => false,
        }
    }
}

/// `arm_convolve_s8` / `arm_depthwise_conv_s8` over NHWC memory: `weight` is `[OC, KH, KW, IC/g]`
/// (or `[1, KH, KW, C·m]` when `depth_multiplier` is given), `form` its derived form. Runs the
/// fast paths ([`depthwise`], [`gemm`]) where they apply (every depthwise call; an ungrouped
/// convolution whose input offset folds) and [`conv_s8_loops`] otherwise; both are
/// CMSIS-NN's arithmetic bit for bit. A `form` made for another filter is not used.
#[allow(clippy::too_many_arguments)]
pub fn conv_s8(
    x: &[i8],
    in_dims: [usize; 4],
    wt: &[i8],
    w_dims: [usize; 4],
    form: &FilterForm,
    bias: Option<&[i32]>,
    depth_multiplier: Option<usize>,
    win: Window,
    input_offset: i32,
    rq: &Requant,
    out_dims: [usize; 4],
) -> Vec<i8> {
    let own;
    let form = if form.fits(w_dims, in_dims[3], depth_multiplier) {
        form
    } else {
        own = FilterForm::of(wt, w_dims, in_dims[3], depth_multiplier);
        &own
    };
    let [_, kh, kw, _] = w_dims;
    match (form, depth_multiplier) {
        (FilterForm::Widened(widened), Some(m)) => {
            return depthwise::depthwise(&depthwise::Depthwise {
                x,
                in_dims,
                wt: widened,
                kernel: (kh, kw),
                depth_multiplier: m,
                bias,
                win,
                input_offset,
                rq,
                out_dims,
            })
        }
        (FilterForm::Packed(packed), None) => {
            let g = gemm::ConvGemm {
                x,
                in_dims,
                packed,
                kernel: (kh, kw),
                bias,
                win,
                input_offset,
                rq,
                out_dims,
            };
            if let Some(out) = gemm::conv(&g) {
                return out;
            }
        }
        _ => {}
    }
    conv_s8_loops(
        x,
        in_dims,
        wt,
        w_dims,
        bias,
        depth_multiplier,
        win,
        input_offset,
        rq,
        out_dims,
    )
}

/// The reference loops of [`conv_s8`], one output element at a time in CMSIS-NN's order: the
/// path for grouped convolutions and offsets the GEMM does not fold, and the oracle its tests
/// compare against.
#[allow(clippy::too_many_arguments)]
pub fn conv_s8_loops(
    x: &[i8],
    [n, h, w, c]: [usize; 4],
    wt: &[i8],
    [wo, kh, kw, wi]: [usize; 4],
    bias: Option<&[i32]>,
    depth_multiplier: Option<usize>,
    win: Window,
    input_offset: i32,
    rq: &Requant,
    [_, oh, ow, oc]: [usize; 4],
) -> Vec<i8> {
    let groups = match depth_multiplier {
        Some(_) => c,
        None => c / wi.max(1),
    };
    let ocg = oc / groups.max(1);
    let _ = wo;
    let (sh, sw) = win.stride;
    let (ph, pw) = win.padding;
    let (dh, dw) = win.dilation;
    let mut out = vec![0i8; n * oh * ow * oc];
    for b in 0..n {
        for y in 0..oh {
            for xo in 0..ow {
                for ch in 0..oc {
                    let mut acc: i32 = bias.map_or(0, |bv| bv[ch]);
                    for ky in 0..kh {
                        let iy = (y * sh + ky * dh) as isize - ph as isize;
                        if iy < 0 || iy >= h as isize {
                            continue;
                        }
                        for kx in 0..kw {
                            let ix = (xo * sw + kx * dw) as isize - pw as isize;
                            if ix < 0 || ix >= w as isize {
                                continue;
                            }
                            let base = ((b * h + iy as usize) * w + ix as usize) * c;
                            if let Some(m) = depth_multiplier {
                                let wv = wt[(ky * kw + kx) * oc + ch];
                                acc = mac(acc, x[base + ch / m], input_offset, wv, 0);
                            } else {
                                let g = ch / ocg.max(1);
                                let wbase = ((ch * kh + ky) * kw + kx) * wi;
                                let px = &x[base + g * wi..][..wi];
                                acc = acc.wrapping_add(tap(px, &wt[wbase..][..wi], input_offset));
                            }
                        }
                    }
                    out[((b * oh + y) * ow + xo) * oc + ch] = rq.apply(acc, ch);
                }
            }
        }
    }
    out
}

fn weight_dims(ctx: &Ctx<'_>, shape: &[usize]) -> Result<[usize; 4], RuntimeError> {
    match shape {
        [a, b, c, d] => Ok([*a, *b, *c, *d]),
        _ => Err(ctx.bad(format!("the weight must be 4-D [O, H, W, I], is {shape:?}"))),
    }
}

fn requant_args(ctx: &Ctx<'_>, args: &[usize]) -> Result<Requant, RuntimeError> {
    let multipliers = i32s(ctx, ctx.tensor(args, ctx.named("requantize_multipliers")?)?)?;
    let shifts = i32s(ctx, ctx.tensor(args, ctx.named("requantize_shifts")?)?)?;
    let out_offset = int32(ctx, args, ctx.named("output_offset")?)?;
    let (act_min, act_max) = ctx.range(
        int32(ctx, args, ctx.named("activation_min")?)?,
        int32(ctx, args, ctx.named("activation_max")?)?,
    )?;
    Ok(Requant {
        multipliers,
        shifts,
        output_offset: out_offset,
        act_min,
        act_max,
    })
}

fn window(ctx: &Ctx<'_>, args: &[usize]) -> Result<Window, RuntimeError> {
    let (s, p, d) = (
        ctx.window_ints(args, ctx.named("stride")?)?,
        ctx.window_ints(args, ctx.named("padding")?)?,
        ctx.window_ints(args, ctx.named("dilation")?)?,
    );
    let win = Window {
        stride: (pair(&s, 0), pair(&s, 1)),
        padding: (pair(&p, 0), pair(&p, 1)),
        dilation: (pair(&d, 0), pair(&d, 1)),
    };
    if win.stride.0 == 0 || win.stride.1 == 0 || win.dilation.0 == 0 || win.dilation.1 == 0 {
        return Err(ctx.bad("zero stride or dilation"));
    }
    Ok(win)
}

/// `quantized_conv2d[_nhwc].out(input, weight[OHWI], bias?, stride, padding, dilation,
/// input_offset, output_offset, multipliers, shifts, act_min, act_max, scratch, out)` and
/// `quantized_depthwise_conv2d[_nhwc].out(input, weight[1,H,W,C·m], bias?, stride, padding,
/// dilation, depth_multiplier, input_offset, output_offset, multipliers, shifts, act_min,
/// act_max, scratch, out)`.
pub fn conv2d(
    ctx: &mut Ctx<'_>,
    args: &[usize],
    depthwise: bool,
    act: Act,
) -> Result<(), RuntimeError> {
    let (input, weight, bias) = conv_operands(ctx, args, act)?;
    let win = window(ctx, args)?;
    let depth_multiplier = if depthwise {
        Some(ctx.int(args, ctx.named("depth_multiplier")?)?.max(1) as usize)
    } else {
        None
    };
    let in_off = int32(ctx, args, ctx.named("input_offset")?)?;
    let rq = requant_args(ctx, args)?;
    let o = out_of(ctx, args)?;
    let od = activation_out(ctx, o, act)?;
    let wd = weight_dims(ctx, &weight.shape)?;
    let [_, _, _, c] = input.dims;
    let [wo, _, _, wi] = wd;
    let oc = od[3];
    let fits = match depth_multiplier {
        Some(m) => wo == 1 && c.checked_mul(m) == Some(wi) && oc == wi,
        None => wi > 0 && c % wi == 0 && wo == oc && oc % (c / wi).max(1) == 0,
    };
    check_channels(ctx, fits, &input, &weight.shape, od, &rq, bias.as_deref())?;
    if let Some(m) = depth_multiplier {
        let call = CoreCall::Depthwise {
            scratch_bytes: scratch_bytes(ctx, args, ctx.named("scratch")?)?,
            batch: input.dims[0],
            in_channels: c,
            out_channels: oc,
            depth_multiplier: m,
            dilation: win.dilation,
        };
        if let Some(why) = fails_on(ctx.device.target, call) {
            return Err(ctx.device_fails(why));
        }
    }
    ctx.out_len(&od)?;
    ctx.charge(&[od.iter().product(), wd[1], wd[2], wd[3]])?;
    let wt = i8s(ctx, weight)?;
    let form = ctx.derived(
        args,
        1,
        |f: &FilterForm| f.fits(wd, c, depth_multiplier),
        || FilterForm::of(wt, wd, c, depth_multiplier),
    )?;
    let out = conv_s8(
        &input.data,
        input.dims,
        wt,
        wd,
        &form,
        bias.as_deref(),
        depth_multiplier,
        win,
        in_off,
        &rq,
        od,
    );
    ctx.write_stored(o, Buf::I8(out))
}

/// Bytes of the scratch tensor argument `k`.
pub(super) fn scratch_bytes(
    ctx: &Ctx<'_>,
    args: &[usize],
    k: usize,
) -> Result<usize, RuntimeError> {
    let t = ctx.tensor(args, k)?;
    Ok(t.numel()
        .saturating_mul(t.dtype.element_size().unwrap_or(1)))
}

/// Channel counts above which (with strides ≤ 2) `arm_transpose_conv_wrapper_s8` runs the
/// reverse-convolution path instead of `arm_transpose_conv_s8`.
const REVERSE_TCOL_EFFICIENT_THRESHOLD: usize = 16;

/// One transpose convolution over NHWC memory: input, weight `[OC, KH, KW, IC]`, bias, stride
/// and padding as (h, w), the input offset and the per-channel requantization.
pub struct TransposeConv<'a> {
    pub x: &'a [i8],
    pub in_dims: [usize; 4],
    pub wt: &'a [i8],
    pub w_dims: [usize; 4],
    pub bias: Option<&'a [i32]>,
    pub stride: (usize, usize),
    pub padding: (usize, usize),
    pub input_offset: i32,
    pub rq: &'a Requant,
    pub out_dims: [usize; 4],
}

/// The mathematically exact transpose convolution: what `arm_transpose_conv_wrapper_s8`
/// computes on its reverse-convolution path, and on every path from CMSIS-NN 4a8f5b5d on.
pub fn transpose_conv_exact(t: &TransposeConv<'_>) -> Vec<i8> {
    let (x, wt, bias, rq, input_offset) = (t.x, t.wt, t.bias, t.rq, t.input_offset);
    let ([n, ih, iw, ic], [_, kh, kw, _], [_, oh, ow, oc]) = (t.in_dims, t.w_dims, t.out_dims);
    let ((sh, sw), (ph, pw)) = (t.stride, t.padding);
    let mut acc = vec![0i32; n * oh * ow * oc];
    for b in 0..n {
        for y in 0..ih {
            for xi in 0..iw {
                let xin = &x[((b * ih + y) * iw + xi) * ic..][..ic];
                for ky in 0..kh {
                    let oy = (y * sh + ky) as isize - ph as isize;
                    if oy < 0 || oy >= oh as isize {
                        continue;
                    }
                    for kx in 0..kw {
                        let ox = (xi * sw + kx) as isize - pw as isize;
                        if ox < 0 || ox >= ow as isize {
                            continue;
                        }
                        let at = ((b * oh + oy as usize) * ow + ox as usize) * oc;
                        for o in 0..oc {
                            let wrow = &wt[((o * kh + ky) * kw + kx) * ic..][..ic];
                            acc[at + o] = acc[at + o].wrapping_add(tap(xin, wrow, input_offset));
                        }
                    }
                }
            }
        }
    }
    acc.iter()
        .enumerate()
        .map(|(i, &a)| rq.apply(a.wrapping_add(bias.map_or(0, |bv| bv[i % oc])), i % oc))
        .collect()
}

/// `arm_transpose_conv_s8` as CMSIS-NN dbf45dbf runs it: input rows scattered into a rolling
/// int32 buffer of `max(KH, SH)` rows, rows written out as they complete. When the padding is
/// not a multiple of the stride the first input rows land in the wrong buffer rows and the last
/// output row is never written: those elements keep what `out` held (the arena's old bytes).
pub fn transpose_conv_rolling(t: &TransposeConv<'_>, out: &mut [i8]) {
    let (x, wt, bias, rq, input_offset) = (t.x, t.wt, t.bias, t.rq, t.input_offset);
    let ([n, ih, iw, ic], [_, kh, kw, _], [_, oh, ow, oc]) = (t.in_dims, t.w_dims, t.out_dims);
    let ((sh, sw), (ph, pw)) = (t.stride, t.padding);
    let buf_x_elements = (iw.saturating_sub(1)) * sw + kw.max(sw);
    let buf_x = buf_x_elements * oc;
    let buf_size = kh.max(sh) * buf_x;
    let mut buf = vec![0i32; buf_size];
    let reset = |row: &mut [i32]| {
        for (i, v) in row.iter_mut().enumerate() {
            *v = bias.map_or(0, |bv| bv[i % oc]);
        }
    };
    let mut out_pos = 0usize;
    let emit = |buf: &[i32], buf_row: usize, out: &mut [i8], out_pos: &mut usize| {
        let start = buf_row + oc * pw;
        for k in 0..ow * oc {
            let acc = buf.get(start + k).copied().unwrap_or(0);
            if let Some(slot) = out.get_mut(*out_pos) {
                *slot = rq.apply(acc, k % oc);
            }
            *out_pos += 1;
        }
    };
    for b in 0..n {
        reset(&mut buf);
        let mut buf_row = 0usize;
        for j in 0..ih {
            let skip_top = (ph as isize - (j * sh) as isize).max(0) as usize;
            let skip_bottom = ((j * sh + kh) as isize - (ph + oh) as isize - 1).max(0) as usize;
            let rows = kh as isize - skip_top as isize - skip_bottom as isize;
            let lhs = &x[((b * ih + j) * iw) * ic..][..iw * ic];
            for (xi, xin) in lhs.chunks(ic.max(1)).enumerate() {
                for o in 0..oc {
                    let mut index = buf_row;
                    for i_row in 0..rows.max(0) as usize {
                        let ky = skip_top + i_row;
                        for kx in 0..kw {
                            let wrow = &wt[((o * kh + ky) * kw + kx) * ic..][..ic];
                            let at = index + (xi * sw + kx) * oc + o;
                            if let Some(v) = buf.get_mut(at) {
                                *v = v.wrapping_add(tap(xin, wrow, input_offset));
                            }
                        }
                        index = (index + buf_x) % buf_size.max(1);
                    }
                }
            }
            if skip_top == 0 {
                for _ in 0..sh {
                    emit(&buf, buf_row, out, &mut out_pos);
                    reset(&mut buf[buf_row..buf_row + buf_x]);
                    buf_row = (buf_row + buf_x) % buf_size.max(1);
                }
            }
        }
        for y in 0..kh.saturating_sub(sh) {
            let row = ih * sh + y;
            if row >= ph && row < ph + oh {
                emit(&buf, buf_row, out, &mut out_pos);
            }
            buf_row = (buf_row + buf_x) % buf_size.max(1);
        }
    }
}

/// `quantized_transpose_conv2d[_nhwc].out(input, weight[OHWI], bias?, stride, padding,
/// output_padding, dilation, input_offset, output_offset, multipliers, shifts, act_min,
/// act_max, scratch, output_scratch, out)`: `arm_transpose_conv_wrapper_s8` of the device's
/// CMSIS-NN version.
pub fn transpose_conv2d(ctx: &mut Ctx<'_>, args: &[usize], act: Act) -> Result<(), RuntimeError> {
    let (input, weight, bias) = conv_operands(ctx, args, act)?;
    let (s, p) = (
        ctx.window_ints(args, ctx.named("stride")?)?,
        ctx.window_ints(args, ctx.named("padding")?)?,
    );
    let stride = (pair(&s, 0), pair(&s, 1));
    let padding = (pair(&p, 0), pair(&p, 1));
    if stride.0 == 0 || stride.1 == 0 {
        return Err(ctx.bad("zero stride"));
    }
    let in_off = int32(ctx, args, ctx.named("input_offset")?)?;
    let rq = requant_args(ctx, args)?;
    let o = out_of(ctx, args)?;
    let od = activation_out(ctx, o, act)?;
    let wd = weight_dims(ctx, &weight.shape)?;
    let oc = od[3];
    let fits = wd[0] == oc && wd[3] == input.dims[3];
    check_channels(ctx, fits, &input, &weight.shape, od, &rq, bias.as_deref())?;
    ctx.out_len(&od)?;
    let wt = i8s(ctx, weight)?;
    let reverse_path =
        stride.0 <= 2 && stride.1 <= 2 && input.dims[3] > REVERSE_TCOL_EFFICIENT_THRESHOLD;
    ctx.charge(&[input.dims.iter().product(), wd[0], wd[1], wd[2]])?;
    // the rolling buffer also writes out and resets `stride` rows of the output width per
    // input row, whatever the kernel: a huge stride is that much work
    let row_width = od[2].saturating_mul(oc).max(1);
    ctx.charge(&[input.dims[0], input.dims[1], stride.0.max(1), row_width, 2])?;
    let tc = TransposeConv {
        x: &input.data,
        in_dims: input.dims,
        wt,
        w_dims: wd,
        bias: bias.as_deref(),
        stride,
        padding,
        input_offset: in_off,
        rq: &rq,
        out_dims: od,
    };
    let out = if reverse_path || ctx.device.cmsis_nn == CmsisNn::Fixed4a8f5b5d {
        transpose_conv_exact(&tc)
    } else {
        let mut out = i8b(ctx, &ctx.stored_out(o)?.buf)?.to_vec();
        transpose_conv_rolling(&tc, &mut out);
        out
    };
    ctx.write_stored(o, Buf::I8(out))
}

/// `quantized_linear.out(input, weights[out,in], bias?, kernel_sum?, input_offset,
/// filter_offset, output_offset, multipliers, shifts, act_max, act_min, out)`:
/// `arm_fully_connected_s8`. With `kernel_sum` (the MVE path) the accumulator is
/// `Σ x·w + filter_offset·Σ x + kernel_sum`; without it (or on a core without MVE, which never
/// reads it), `Σ (x+input_offset)(w+filter_offset) + bias`.
pub fn linear(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.stored(args, ctx.named("input")?)?;
    let weight = ctx.tensor(args, ctx.named("weights")?)?;
    let bias = ctx
        .opt_tensor(args, ctx.named("bias")?)?
        .map(|t| i32s(ctx, t))
        .transpose()?;
    let kernel_sum = ctx
        .opt_tensor(args, ctx.named("kernel_sum")?)?
        .map(|t| i32s(ctx, t))
        .transpose()?;
    // Only the MVE path reads the kernel sum (`ctx->buf`); on a core without Helium a program
    // lowered for one (kernel sum, no bias) runs without its bias, and on a Helium core a call
    // without one fails.
    let call = CoreCall::Linear {
        kernel_sum: kernel_sum.is_some(),
    };
    if let Some(why) = fails_on(ctx.device.target, call) {
        return Err(ctx.device_fails(why));
    }
    let kernel_sum = kernel_sum.filter(|_| ctx.device.target.has_helium());
    let in_off = int32(ctx, args, ctx.named("input_offset")?)?;
    let f_off = int32(ctx, args, ctx.named("filter_offset")?)?;
    let out_off = int32(ctx, args, ctx.named("output_offset")?)?;
    let mults = ctx.ints(args, ctx.named("requantize_multipliers")?)?;
    let shifts = ctx.ints(args, ctx.named("requantize_shifts")?)?;
    let (act_max, act_min) = (
        int32(ctx, args, ctx.named("activation_max")?)?,
        int32(ctx, args, ctx.named("activation_min")?)?,
    );
    let (act_min, act_max) = ctx.range(act_min, act_max)?;
    let [outs, ins] = match weight.shape.as_slice() {
        [a, b] => [*a, *b],
        s => return Err(ctx.bad(format!("weights must be 2-D, are {s:?}"))),
    };
    let x = i8b(ctx, &input.buf)?;
    if ins == 0
        || x.len() % ins != 0
        || mults.is_empty()
        || mults.len() != shifts.len()
        || (mults.len() != 1 && mults.len() != outs)
    {
        return Err(ctx.bad(format!(
            "input {:?} does not fit weights {:?}",
            input.shape, weight.shape
        )));
    }
    let w = i8s(ctx, weight)?;
    let rows = x.len() / ins;
    if w.len() != outs.saturating_mul(ins)
        || bias.as_ref().is_some_and(|b| b.len() != outs)
        || kernel_sum.as_ref().is_some_and(|k| k.len() != outs)
    {
        return Err(ctx.bad(format!(
            "weights {:?}, bias and kernel sum lengths do not fit {outs} outputs",
            weight.shape
        )));
    }
    ctx.charge(&[rows, outs, ins])?;
    let mut out = vec![0i8; ctx.out_len(&[rows, outs])?];
    // with a kernel sum the device multiplies the raw operands and adds the offsets' terms
    let (dot_in_off, dot_f_off) = match kernel_sum {
        Some(_) => (0, 0),
        None => (in_off, f_off),
    };
    let fc = gemm::FullyConnected {
        x,
        w,
        rows,
        ins,
        outs,
        input_offset: dot_in_off,
        filter_offset: dot_f_off,
    };
    let packed = gemm::offset_folds(dot_f_off)
        .then(|| {
            ctx.derived(
                args,
                1,
                |p: &gemm::PackedRows| p.fits(outs, ins, dot_f_off),
                || gemm::PackedRows::new(w, outs, ins, dot_f_off),
            )
        })
        .transpose()?;
    let dots = packed
        .and_then(|packed| gemm::fully_connected(&fc, &packed))
        .unwrap_or_else(|| fully_connected_loops(&fc));
    for r in 0..rows {
        let xsum = x[r * ins..(r + 1) * ins]
            .iter()
            .fold(0i32, |s, &v| s.wrapping_add(i32::from(v)));
        for o in 0..outs {
            let dot = dots[r * outs + o];
            let acc = match &kernel_sum {
                Some(ks) => dot
                    .wrapping_add(f_off.wrapping_mul(xsum))
                    .wrapping_add(ks.get(o).copied().unwrap_or(0)),
                None => {
                    dot.wrapping_add(bias.as_ref().and_then(|b| b.get(o)).copied().unwrap_or(0))
                }
            };
            let k = if mults.len() == 1 { 0 } else { o };
            let v = requantize(acc, mults[k] as i32, shifts[k] as i32).wrapping_add(out_off);
            out[r * outs + o] = v.clamp(act_min, act_max) as i8;
        }
    }
    let o = out_of(ctx, args)?;
    ctx.write_stored(o, Buf::I8(out))
}

/// The reference loop of a fully connected layer's accumulators, one at a time in CMSIS-NN's
/// order: the path for offsets [`gemm::fully_connected`] does not fold, and its tests' oracle.
pub fn fully_connected_loops(f: &gemm::FullyConnected<'_>) -> Vec<i32> {
    let (k, outs) = (f.ins, f.outs);
    let mut acc = vec![0i32; f.rows * outs];
    for r in 0..f.rows {
        let xr = &f.x[r * k..(r + 1) * k];
        for o in 0..outs {
            acc[r * outs + o] = xr
                .iter()
                .zip(&f.w[o * k..(o + 1) * k])
                .fold(0i32, |s, (&a, &b)| {
                    mac(s, a, f.input_offset, b, f.filter_offset)
                });
        }
    }
    acc
}

/// `quantized_batch_matmul.out(lhs[B,M,K], lhs_offset, rhs_transposed[B,N,K], rhs_offset,
/// output_offset, output_multiplier, output_shift, scratch, out[B,M,N])`: `arm_batch_matmul_s8`,
/// `Σ (l + lhs_offset)(r + rhs_offset)` requantized per tensor.
pub fn batch_matmul(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let (lhs, rhs) = (ctx.stored(args, 0)?, ctx.stored(args, 2)?);
    let (l_off, r_off, o_off) = (
        int32(ctx, args, 1)?,
        int32(ctx, args, 3)?,
        int32(ctx, args, 4)?,
    );
    let (mult, shift) = (int32(ctx, args, 5)?, int32(ctx, args, 6)?);
    let (b, m, k, n) = match (lhs.shape.as_slice(), rhs.shape.as_slice()) {
        ([b, m, k], [rb, n, rk]) if b == rb && k == rk => (*b, *m, *k, *n),
        (l, r) => return Err(ctx.bad(format!("lhs {l:?} and transposed rhs {r:?} do not fit"))),
    };
    let scratch_bytes = scratch_bytes(ctx, args, 7)?;
    if let Some(why) = fails_on(ctx.device.target, CoreCall::BatchMatmul { scratch_bytes }) {
        return Err(ctx.device_fails(why));
    }
    let (lv, rv) = (i8b(ctx, &lhs.buf)?, i8b(ctx, &rhs.buf)?);
    ctx.charge(&[b, m, n, k])?;
    let mut out = vec![0i8; ctx.out_len(&[b, m, n])?];
    for bi in 0..b {
        for i in 0..m {
            let row = &lv[(bi * m + i) * k..][..k];
            for j in 0..n {
                let col = &rv[(bi * n + j) * k..][..k];
                let acc = row
                    .iter()
                    .zip(col)
                    .fold(0i32, |s, (&a, &w)| mac(s, a, l_off, w, r_off));
                out[(bi * m + i) * n + j] = requantize(acc, mult, shift)
                    .wrapping_add(o_off)
                    .clamp(-128, 127) as i8;
            }
        }
    }
    let o = out_of(ctx, args)?;
    ctx.write_stored(o, Buf::I8(out))
}
