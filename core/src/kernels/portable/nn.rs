//! ExecuTorch's portable neural-network kernels beyond those of `portable.rs`: layer norm, gelu,
//! max pooling with indices, reductions (`mean.out`, `amax.out`) and batched matmul, on float
//! tensors (max pooling and `amax` on any numeric type).

use crate::kernels::cmsis::ops::out_of;
use crate::kernels::ctx::{f32s, Ctx};
use crate::kernels::libm::{Binary, Function};
pub use crate::kernels::math::erf;
use crate::kernels::value::{Buf, RValue};
use crate::kernels::RuntimeError;

/// `aten::native_layer_norm.out(input, normalized_shape, weight?, bias?, eps, out, mean, rstd)`.
pub fn layer_norm(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.tensor(args, 0)?;
    let normalized = ctx.ints(args, 1)?;
    let weight = ctx.opt_tensor(args, 2)?.map(|t| f32s(ctx, t)).transpose()?;
    let bias = ctx.opt_tensor(args, 3)?.map(|t| f32s(ctx, t)).transpose()?;
    let eps = ctx.double(args, 4)?;
    let x = f32s(ctx, input)?;
    let rank = input.shape.len();
    let k = normalized.len();
    if k > rank
        || input.shape[rank - k..]
            .iter()
            .zip(&normalized)
            .any(|(&a, &b)| a as i64 != b)
    {
        return Err(ctx.bad(format!(
            "normalized shape {normalized:?} does not end {:?}",
            input.shape
        )));
    }
    let inner: usize = input.shape[rank - k..].iter().product();
    if inner == 0
        || weight.is_some_and(|w| w.len() != inner)
        || bias.is_some_and(|b| b.len() != inner)
    {
        return Err(ctx.bad("weight or bias does not match the normalized shape"));
    }
    let rows = x.len() / inner;
    let mut out = vec![0f32; x.len()];
    let (mut means, mut rstds) = (vec![0f32; rows], vec![0f32; rows]);
    // as the portable kernel's `layer_norm_scalar`: the sum and the sum of squares in float32,
    // the variance E[x²] − mean², `sqrtf(var + eps)` with eps as a float, each output
    // `(x − mean) / std · w + b` in float32 (w 1 and b 0 when absent), rstd `1.0 / std` in
    // double
    let eps = eps as f32;
    let n = inner as f32;
    for r in 0..rows {
        let row = &x[r * inner..(r + 1) * inner];
        let sum = row.iter().fold(0f32, |a, &v| a + v);
        let sq_sum = row.iter().fold(0f32, |a, &v| a + v * v);
        let mean = sum / n;
        let std = (sq_sum / n - mean * mean + eps).sqrt();
        for (i, &v) in row.iter().enumerate() {
            let w = weight.map_or(1.0, |w| w[i]);
            let b = bias.map_or(0.0, |b| b[i]);
            out[r * inner + i] = (v - mean) / std * w + b;
        }
        means[r] = mean;
        rstds[r] = (1.0 / f64::from(std)) as f32;
    }
    let shape = input.shape.clone();
    let mut stat_shape = shape.clone();
    for d in stat_shape.iter_mut().skip(rank - k) {
        *d = 1;
    }
    let (o_out, o_mean, o_rstd) = (ctx.arg(args, 5)?, ctx.arg(args, 6)?, ctx.arg(args, 7)?);
    ctx.write(o_out, shape, Buf::F32(out))?;
    ctx.write(o_mean, stat_shape.clone(), Buf::F32(means))?;
    ctx.write(o_rstd, stat_shape, Buf::F32(rstds))
}

/// `aten::gelu.out(input, approximate, out)`: exact (`"none"`, through erf) or `"tanh"`.
pub fn gelu(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.tensor(args, 0)?;
    let tanh = matches!(ctx.values.get(ctx.arg(args, 1)?), Some(RValue::String(s)) if s == "tanh");
    // ExecuTorch's float kernel: `tanh`: the inner sum in float, `tanhf`, the rest in double;
    // `none`: `0.5 * x * (1 + erf(x * M_SQRT1_2))` in double, the double-precision `erf`
    let values = f32s(ctx, input)?;
    let form: Box<dyn Fn(f32) -> f32> = if tanh {
        let tanhf = ctx.libm_f32(Function::Tanh)?;
        let beta = (std::f64::consts::SQRT_2 * std::f64::consts::FRAC_2_SQRT_PI * 0.5) as f32;
        let kappa = 0.044715f32;
        Box::new(move |x| {
            let inner = beta * (x + kappa * (x * x * x));
            (0.5 * f64::from(x) * (1.0 + f64::from(tanhf(inner)))) as f32
        })
    } else {
        let erf = ctx.libm_f64(Function::Erf)?;
        Box::new(move |x| {
            let x = f64::from(x);
            (0.5 * x * (1.0 + erf(x * std::f64::consts::FRAC_1_SQRT_2))) as f32
        })
    };
    let out: Vec<f32> = values
        .iter()
        .map(|&x| match x {
            f32::NEG_INFINITY => 0.0,
            f32::INFINITY => f32::INFINITY,
            _ => form(x),
        })
        .collect();
    let shape = input.shape.clone();
    let o = out_of(ctx, args)?;
    ctx.write(o, shape, Buf::F32(out))
}

/// `aten::max_pool2d_with_indices.out(input, kernel, stride, padding, dilation, ceil_mode,
/// out, indices)` on NCHW (or CHW) tensors of any numeric type.
pub fn max_pool2d_with_indices(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.tensor(args, 0)?;
    let get =
        |v: &[i64], i: usize, d: usize| v.get(i).or(v.first()).map_or(d, |&x| x.max(0) as usize);
    let (k, s, p, dl) = (
        ctx.window_ints(args, 1)?,
        ctx.window_ints(args, 2)?,
        ctx.window_ints(args, 3)?,
        ctx.window_ints(args, 4)?,
    );
    let (kh, kw) = (get(&k, 0, 1), get(&k, 1, 1));
    let (sh, sw) = (get(&s, 0, kh).max(1), get(&s, 1, kw).max(1));
    let (ph, pw) = (get(&p, 0, 0), get(&p, 1, 0));
    let (dh, dw) = (get(&dl, 0, 1).max(1), get(&dl, 1, 1).max(1));
    let (o_out, o_idx) = (ctx.arg(args, 6)?, ctx.arg(args, 7)?);
    let out_shape = ctx.out_shape(o_out)?;
    let rank = input.shape.len();
    if !(3..=4).contains(&rank) || out_shape.len() != rank {
        return Err(ctx.bad(format!("max pool of {:?} into {out_shape:?}", input.shape)));
    }
    let (h, w) = (input.shape[rank - 2], input.shape[rank - 1]);
    let (oh, ow) = (out_shape[rank - 2], out_shape[rank - 1]);
    let planes: usize = input.shape[..rank - 2].iter().product();
    if out_shape[..rank - 2].iter().product::<usize>() != planes {
        return Err(ctx.bad("max pool changes the planes"));
    }
    ctx.out_len(&out_shape)?;
    ctx.charge(&[planes, oh, ow, kh, kw])?;
    let x = input.buf.to_f64();
    let mut vals = Vec::with_capacity(planes * oh * ow);
    let mut idx = Vec::with_capacity(planes * oh * ow);
    for pl in 0..planes {
        for y in 0..oh {
            for xo in 0..ow {
                let mut best: Option<(f64, usize)> = None;
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
                        let at = iy as usize * w + ix as usize;
                        let v = x[pl * h * w + at];
                        if best.is_none_or(|(b, _)| v > b || v.is_nan()) {
                            best = Some((v, at));
                        }
                    }
                }
                let (v, at) = best.unwrap_or((f64::NEG_INFINITY, 0));
                vals.push(v);
                idx.push(at as f64);
            }
        }
    }
    let buf = Buf::from_f64_like(&input.buf, &vals);
    let idx_like = ctx.out_like(o_idx)?;
    let idx_shape = ctx.out_shape(o_idx)?;
    ctx.write(o_out, out_shape, buf)?;
    ctx.write(o_idx, idx_shape, Buf::from_f64_like(&idx_like, &idx))
}

/// The reduced dims of `dims` (empty or absent: all) against `rank`.
pub(crate) fn reduced_dims(
    ctx: &Ctx<'_>,
    dims: &[i64],
    rank: usize,
) -> Result<Vec<bool>, RuntimeError> {
    let mut mask = vec![dims.is_empty(); rank];
    for &d in dims {
        mask[ctx.dim(d, rank)?] = true;
    }
    Ok(mask)
}

/// Reduces `x` of `shape` over `mask`ed dims with `f(values) -> value`; returns the kept shape
/// (reduced dims as 1) and the results.
pub(crate) fn reduce(
    x: &[f64],
    shape: &[usize],
    mask: &[bool],
    f: impl Fn(&[f64]) -> f64,
) -> Vec<f64> {
    let kept: Vec<usize> = shape
        .iter()
        .zip(mask)
        .map(|(&s, &m)| if m { 1 } else { s })
        .collect();
    let n_out: usize = kept.iter().product();
    let mut groups: Vec<Vec<f64>> = vec![Vec::new(); n_out];
    let rank = shape.len();
    let mut pos = vec![0usize; rank];
    for &v in x {
        let at = (0..rank).fold(0usize, |acc, d| {
            acc * kept[d] + if mask[d] { 0 } else { pos[d] }
        });
        groups[at].push(v);
        for d in (0..rank).rev() {
            pos[d] += 1;
            if pos[d] < shape[d] {
                break;
            }
            pos[d] = 0;
        }
    }
    groups.iter().map(|g| f(g)).collect()
}

fn reduction(
    ctx: &mut Ctx<'_>,
    args: &[usize],
    f: impl Fn(&[f64]) -> f64,
) -> Result<(), RuntimeError> {
    let input = ctx.tensor(args, 0)?;
    let dims = match ctx.values.get(ctx.arg(args, 1)?) {
        Some(RValue::None) => Vec::new(),
        _ => ctx.ints(args, 1)?,
    };
    let mask = reduced_dims(ctx, &dims, input.shape.len())?;
    let values = reduce(&input.buf.to_f64(), &input.shape, &mask, f);
    let o = out_of(ctx, args)?;
    let shape = ctx.out_shape(o)?;
    let like = ctx.out_like(o)?;
    ctx.write(o, shape, Buf::from_f64_like(&like, &values))
}

/// Whether a reduction's out tensor is float32: the portable kernels accumulate in the out
/// tensor's type (`CTYPE_OUT`), whatever the input's.
fn out_is_f32(ctx: &Ctx<'_>, args: &[usize]) -> Result<bool, RuntimeError> {
    Ok(matches!(ctx.out_like(out_of(ctx, args)?)?, Buf::F32(_)))
}

/// `aten::mean.out(input, dims?, keepdim, dtype?, out)`: the sum in the out tensor's type,
/// divided by the count (as a float, as the kernel divides).
pub fn mean(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    if out_is_f32(ctx, args)? {
        return reduction(ctx, args, |g| {
            let s: f32 = g.iter().map(|&v| v as f32).sum();
            f64::from(s / g.len().max(1) as f32)
        });
    }
    reduction(ctx, args, |g| {
        g.iter().sum::<f64>() / f64::from(g.len().max(1) as f32)
    })
}

/// `aten::sum.IntList_out(input, dims?, keepdim, dtype?, out)`: in the out tensor's type.
pub fn sum(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let float = out_is_f32(ctx, args)?;
    reduction(ctx, args, move |g| {
        if float {
            f64::from(g.iter().map(|&v| v as f32).sum::<f32>())
        } else {
            g.iter().sum()
        }
    })
}

/// `aten::amax.out(input, dims, keepdim, out)`.
pub fn amax(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    // ExecuTorch: from the first element, `isnan(v) || v > max ? v : max` (a NaN wins, the
    // first of equal zeros stays)
    reduction(ctx, args, |g| match g.split_first() {
        Some((&first, rest)) => rest
            .iter()
            .fold(first, |m, &v| if v.is_nan() || v > m { v } else { m }),
        None => f64::NEG_INFINITY,
    })
}

/// `aten::bmm.out(a[B,M,K], b[B,K,N], out)`.
pub fn bmm(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let (a, b) = (ctx.tensor(args, 0)?, ctx.tensor(args, 1)?);
    let (bt, m, k, n) = match (a.shape.as_slice(), b.shape.as_slice()) {
        ([b0, m, k], [b1, k2, n]) if b0 == b1 && k == k2 => (*b0, *m, *k, *n),
        (x, y) => return Err(ctx.bad(format!("bmm of {x:?} and {y:?}"))),
    };
    let (av, bv) = (f32s(ctx, a)?, f32s(ctx, b)?);
    ctx.charge(&[bt, m, k, n])?;
    let mut out = vec![0f32; ctx.out_len(&[bt, m, n])?];
    for t in 0..bt {
        for i in 0..m {
            for j in 0..n {
                let mut acc = 0f32;
                for p in 0..k {
                    acc += av[(t * m + i) * k + p] * bv[(t * k + p) * n + j];
                }
                out[(t * m + i) * n + j] = acc;
            }
        }
    }
    let o = out_of(ctx, args)?;
    ctx.write(o, vec![bt, m, n], Buf::F32(out))
}

/// Reduces every dim to one value: `f(values)` over the whole tensor into a 0-d (or any
/// one-element) out tensor.
fn reduce_all(
    ctx: &mut Ctx<'_>,
    args: &[usize],
    f: impl Fn(&[f64]) -> f64,
) -> Result<(), RuntimeError> {
    let input = ctx.shared(args, 0)?;
    let v = f(&input.buf.to_f64());
    let o = out_of(ctx, args)?;
    let shape = ctx.out_shape(o)?;
    let like = ctx.out_like(o)?;
    let n = ctx.out_len(&shape)?;
    ctx.write(o, shape, Buf::from_f64_like(&like, &vec![v; n]))
}

/// Over an optional single `dim` argument (`None`: the whole tensor, flattened).
fn reduction_over_dim(
    ctx: &mut Ctx<'_>,
    args: &[usize],
    f: impl Fn(&[f64]) -> f64,
) -> Result<(), RuntimeError> {
    match ctx.values.get(ctx.arg(args, 1)?) {
        Some(RValue::None) => reduce_all(ctx, args, f),
        _ => reduction(ctx, args, f),
    }
}

fn min_of(g: &[f64]) -> f64 {
    // a NaN anywhere is the result, as the portable kernels propagate it
    g.iter().copied().fold(f64::INFINITY, |m, x| {
        if x.is_nan() || m.is_nan() {
            f64::NAN
        } else {
            m.min(x)
        }
    })
}

fn max_of(g: &[f64]) -> f64 {
    g.iter().copied().fold(f64::NEG_INFINITY, |m, x| {
        if x.is_nan() || m.is_nan() {
            f64::NAN
        } else {
            m.max(x)
        }
    })
}

/// The first index of the extreme value (`better(candidate, best)`); a NaN wins.
fn arg_of(g: &[f64], better: fn(f64, f64) -> bool) -> f64 {
    let mut best = 0usize;
    for (i, &x) in g.iter().enumerate() {
        let b = g[best];
        if b.is_nan() {
            break;
        }
        if x.is_nan() || better(x, b) {
            best = i;
        }
    }
    best as f64
}

/// `aten::amin.out(input, dims, keepdim, out)`.
pub fn amin(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    reduction(ctx, args, min_of)
}

/// `aten::argmax.out(input, dim?, keepdim, out)`.
pub fn argmax(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    reduction_over_dim(ctx, args, |g| arg_of(g, |x, b| x > b))
}

/// `aten::argmin.out(input, dim?, keepdim, out)`.
pub fn argmin(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    reduction_over_dim(ctx, args, |g| arg_of(g, |x, b| x < b))
}

/// `aten::any.all_out(input, out)`.
pub fn any_all(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    reduce_all(ctx, args, |g| {
        f64::from(u8::from(g.iter().any(|&x| x != 0.0)))
    })
}

/// `aten::any.out(input, dim, keepdim, out)` and `any.dims_out(input, dims?, keepdim, out)`.
pub fn any(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    reduction_over_dim(ctx, args, |g| {
        f64::from(u8::from(g.iter().any(|&x| x != 0.0)))
    })
}

/// The product of `g` in the out tensor's type, as the portable kernel multiplies: float32
/// rounding at every step, integers wrapping at their width.
fn product_for(like: &Buf) -> fn(&[f64]) -> f64 {
    match like {
        Buf::F32(_) => |g| f64::from(g.iter().fold(1f32, |p, &v| p * v as f32)),
        Buf::I64(_) => |g| g.iter().fold(1i64, |p, &v| p.wrapping_mul(v as i64)) as f64,
        Buf::I32(_) => |g| f64::from(g.iter().fold(1i32, |p, &v| p.wrapping_mul(v as i32))),
        _ => |g| g.iter().product(),
    }
}

/// `aten::prod.out(input, dtype?, out)`.
pub fn prod_all(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let product = product_for(&ctx.out_like(out_of(ctx, args)?)?);
    reduce_all(ctx, args, product)
}

/// `aten::prod.int_out(input, dim, keepdim, dtype?, out)`.
pub fn prod(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let product = product_for(&ctx.out_like(out_of(ctx, args)?)?);
    reduction(ctx, args, product)
}

/// `aten::max.unary_out(input, out)`.
pub fn max_all(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    reduce_all(ctx, args, max_of)
}

/// `aten::min.unary_out(input, out)`.
pub fn min_all(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    reduce_all(ctx, args, min_of)
}

/// `aten::_adaptive_avg_pool2d.out(self, output_size, out)`: window `[floor(i·H/oh),
/// ceil((i+1)·H/oh))` per output row (and the same across), averaged in float32.
pub fn adaptive_avg_pool2d(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.shared(args, 0)?;
    let o = out_of(ctx, args)?;
    let shape = ctx.out_shape(o)?;
    let (r, ro) = (input.shape.len(), shape.len());
    if r < 3 || ro != r {
        return Err(ctx.bad("adaptive pooling of 3-D or 4-D tensors"));
    }
    let (h, w, oh, ow) = (
        input.shape[r - 2],
        input.shape[r - 1],
        shape[ro - 2],
        shape[ro - 1],
    );
    let planes: usize = input.shape[..r - 2].iter().product();
    let x = input.buf.to_f64();
    let start = |i: usize, o: usize, n: usize| i * n / o;
    let end = |i: usize, o: usize, n: usize| ((i + 1) * n).div_ceil(o);
    let mut out = Vec::with_capacity(planes * oh * ow);
    ctx.charge(&[planes, oh, ow, h, w])?;
    for p in 0..planes {
        for y in 0..oh {
            for xo in 0..ow {
                let (y0, y1, x0, x1) = (
                    start(y, oh, h),
                    end(y, oh, h),
                    start(xo, ow, w),
                    end(xo, ow, w),
                );
                let mut sum = 0f32;
                for iy in y0..y1 {
                    for ix in x0..x1 {
                        sum += x[(p * h + iy) * w + ix] as f32;
                    }
                }
                out.push(f64::from(sum / ((y1 - y0) * (x1 - x0)).max(1) as f32));
            }
        }
    }
    let like = ctx.out_like(o)?;
    ctx.write(o, shape, Buf::from_f64_like(&like, &out))
}

/// `aten::native_group_norm.out(input, weight?, bias?, N, C, HxW, group, eps, out, mean, rstd)`:
/// each group normalised by its mean and variance (float32 sums), then scaled per channel.
pub fn group_norm(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.shared(args, 0)?;
    let weight = ctx.opt_tensor(args, 1)?.map(|t| t.buf.to_f64());
    let bias = ctx.opt_tensor(args, 2)?.map(|t| t.buf.to_f64());
    let (n, c, hw, groups) = (
        ctx.int(args, 3)?.max(0) as usize,
        ctx.int(args, 4)?.max(0) as usize,
        ctx.int(args, 5)?.max(0) as usize,
        ctx.int(args, 6)?.max(1) as usize,
    );
    let eps = ctx.double(args, 7)?;
    let x = input.buf.to_f64();
    let sizes_fit = n
        .checked_mul(c)
        .and_then(|nc| nc.checked_mul(hw))
        .is_some_and(|all| all == x.len());
    if c % groups != 0 || !sizes_fit {
        return Err(ctx.bad("group norm sizes do not fit the input"));
    }
    if weight.as_ref().is_some_and(|w| w.len() != c) || bias.as_ref().is_some_and(|b| b.len() != c)
    {
        return Err(ctx.bad("group norm weight or bias does not match the channels"));
    }
    // one mean and one rstd per (sample, group): as many as the planned statistics hold
    let stats_out = ctx.out_shape(ctx.arg(args, 9)?)?;
    if n.checked_mul(groups) != crate::kernels::element_count(&stats_out) {
        return Err(ctx.bad("group norm statistics do not match their out tensors"));
    }
    ctx.charge(&[n, c.max(1), hw.max(1)])?;
    let cg = c / groups;
    let count = cg * hw;
    let mut out = vec![0.0; x.len()];
    let (mut means, mut rstds) = (Vec::new(), Vec::new());
    for b in 0..n {
        for g in 0..groups {
            let base = (b * c + g * cg) * hw;
            let group = &x[base..base + count];
            if count == 0 {
                // an empty group: mean 0, rstd NaN, as the kernel writes
                means.push(0.0);
                rstds.push(f64::NAN);
                continue;
            }
            // as the portable kernel computes: the sum and the sum of squares in float32, the
            // mean, the variance E[x²] − mean² and 1/√(var + eps) in double, and per channel
            // y = scale·x + shift in double, rounded to float32
            let sum = group.iter().fold(0f32, |a, &v| a + v as f32);
            let sq_sum = group.iter().fold(0f32, |a, &v| a + (v as f32) * (v as f32));
            let n = count.max(1) as f64;
            let mean = f64::from(sum) / n;
            let var = f64::from(sq_sum) / n - mean * mean;
            let rstd = 1.0 / (var + eps).sqrt();
            means.push(f64::from(mean as f32));
            rstds.push(f64::from(rstd as f32));
            for ch in 0..cg {
                let channel = g * cg + ch;
                let at0 = base + ch * hw;
                match (&weight, &bias) {
                    (None, None) => {
                        for k in 0..hw {
                            out[at0 + k] = f64::from(((x[at0 + k] - mean) * rstd) as f32);
                        }
                    }
                    _ => {
                        let wv = weight.as_ref().map_or(1.0, |w| w[channel]);
                        let bv = bias.as_ref().map_or(0.0, |b| b[channel]);
                        let scale = rstd * wv;
                        let shift = -scale * mean + bv;
                        for k in 0..hw {
                            out[at0 + k] = f64::from((scale * x[at0 + k] + shift) as f32);
                        }
                    }
                }
            }
        }
    }
    for (k, v) in [(8, out), (9, means), (10, rstds)] {
        let o = ctx.arg(args, k)?;
        ctx.write_values(o, &v)?;
    }
    Ok(())
}

/// `aten::cumsum.out(self, dim, dtype?, out)`: running sums along `dim` (float32 for float32).
pub fn cumsum(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.shared(args, 0)?;
    let rank = input.shape.len().max(1);
    let d = ctx.dim(ctx.int(args, 1)?, rank)?;
    // in the out tensor's type, each element the one before it plus its input, the first
    // copied as it is (as the portable kernel)
    let float = out_is_f32(ctx, args)?;
    let len = input.shape.get(d).copied().unwrap_or(1);
    let inner: usize = input.shape.get(d + 1..).map_or(1, |s| s.iter().product());
    let outer: usize = input.shape[..d.min(input.shape.len())].iter().product();
    let x = input.buf.to_f64();
    let mut out = x.clone();
    for o in 0..outer {
        for i in 0..inner {
            let mut prev: Option<f64> = None;
            for k in 0..len {
                let at = (o * len + k) * inner + i;
                let v = match (prev, float) {
                    (None, true) => f64::from(x[at] as f32),
                    (None, false) => x[at],
                    (Some(p), true) => f64::from(x[at] as f32 + p as f32),
                    (Some(p), false) => x[at] + p,
                };
                out[at] = v;
                prev = Some(v);
            }
        }
    }
    let o = out_of(ctx, args)?;
    let like = ctx.out_like(o)?;
    ctx.write(o, input.shape.clone(), Buf::from_f64_like(&like, &out))
}

/// The variance of every reduced group with `correction` (`Σ(x − mean)² / (n − correction)`),
/// and the mean.
fn var_and_mean(g: &[f64], correction: f64) -> (f64, f64) {
    let n = g.len() as f64;
    let mean = g.iter().sum::<f64>() / n.max(1.0);
    let ss: f64 = g.iter().map(|&v| (v - mean) * (v - mean)).sum();
    (ss / (n - correction).max(0.0), mean)
}

/// The `correction` argument at `k` (absent: 1, Bessel's correction).
fn correction(ctx: &Ctx<'_>, args: &[usize], k: usize) -> Result<f64, RuntimeError> {
    match ctx.values.get(ctx.arg(args, k)?) {
        Some(RValue::None) => Ok(1.0),
        _ => ctx.double(args, k),
    }
}

/// ExecuTorch's float32 variance: the sum, the mean and the sum of squared deviations in
/// float32, divided by the double `n − correction` (NaN when that is not positive).
fn var_f32(g: &[f64], correction: f64) -> f64 {
    let denominator = g.len() as f64 - correction;
    if g.is_empty() || denominator <= 0.0 {
        return f64::NAN;
    }
    let mut sum = 0f32;
    for &v in g {
        sum += v as f32;
    }
    let mean = sum / g.len() as f32;
    let mut sum2 = 0f32;
    for &v in g {
        let d = v as f32 - mean;
        sum2 += d * d;
    }
    f64::from(sum2) / denominator
}

/// `var.correction_out` and `var.out` for `correction`: in float32 for a float32 out tensor,
/// as the portable kernel computes (`var_f32`), else in double.
fn variance(ctx: &mut Ctx<'_>, args: &[usize], c: f64) -> Result<(), RuntimeError> {
    if out_is_f32(ctx, args)? {
        return reduction(ctx, args, move |g| var_f32(g, c));
    }
    reduction(ctx, args, move |g| var_and_mean(g, c).0)
}

/// `aten::var.correction_out(self, dim?, correction?, keepdim, out)`.
pub fn var(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let c = correction(ctx, args, 2)?;
    variance(ctx, args, c)
}

/// `aten::var.out(self, dim?, unbiased, keepdim, out)`: Bessel's correction when `unbiased`.
pub fn var_unbiased(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let c = if ctx.bool(args, 2)? { 1.0 } else { 0.0 };
    variance(ctx, args, c)
}

/// `aten::mean.dtype_out(self, *, dtype?, out)`: the mean of every element, summed in the out
/// tensor's type as `mean.out` sums.
pub fn mean_all(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let x = ctx.tensor(args, 0)?.buf.to_f64();
    let count = x.len().max(1) as f32;
    let m = if out_is_f32(ctx, args)? {
        f64::from(x.iter().map(|&v| v as f32).sum::<f32>() / count)
    } else {
        x.iter().sum::<f64>() / f64::from(count)
    };
    let o = out_of(ctx, args)?;
    ctx.write_values(o, &[m])
}

/// The C library's `powf` and `pow`: a distance's terms take the first, its root the second.
struct Pow {
    f32: fn(f32, f32) -> f32,
    f64: fn(f64, f64) -> f64,
}

impl Pow {
    /// The functions a `p`-norm calls: none for p = 0, 1, 2 or ∞ (counts, sums, `sqrtf`,
    /// maxima), so a library whose double `pow` is not modelled refuses only the others.
    fn of(ctx: &Ctx<'_>, p: f64) -> Result<Pow, RuntimeError> {
        if p == 0.0 || p == 1.0 || p == 2.0 || p.is_infinite() {
            // not called for these norms
            return Ok(Pow {
                f32: f32::powf,
                f64: f64::powf,
            });
        }
        Ok(Pow {
            f32: ctx.libm_f32_binary(Binary::Pow)?,
            f64: ctx.libm_f64_binary(Binary::Pow)?,
        })
    }
}

/// The `p`-norm distance of two float32 rows, accumulated in float32 as the portable kernel
/// does (`p` = 0 counts differences, ∞ takes the largest).
fn p_distance(a: &[f64], b: &[f64], p: f64, pow: &Pow) -> f64 {
    let diffs = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| ((x as f32) - (y as f32)).abs());
    let d = if p == 0.0 {
        diffs.map(|d| f32::from(u8::from(d != 0.0))).sum::<f32>()
    } else if p.is_infinite() {
        diffs.fold(0.0f32, f32::max)
    } else if p == 1.0 {
        diffs.sum::<f32>()
    } else if p == 2.0 {
        diffs.map(|d| d * d).sum::<f32>().sqrt()
    } else {
        let p32 = p as f32;
        // `Lp::finish`: `std::pow(agg, 1.0 / p)` promotes to the double `pow`
        let agg = diffs.map(|d| (pow.f32)(d, p32)).sum::<f32>();
        return f64::from((pow.f64)(f64::from(agg), 1.0 / f64::from(p32)) as f32);
    };
    f64::from(d)
}

/// `aten::_cdist_forward.out(x1[…, P, M], x2[…, R, M], p, compute_mode?, out[…, P, R])`.
pub fn cdist(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let (a, b) = (ctx.shared(args, 0)?, ctx.shared(args, 1)?);
    let p = ctx.double(args, 2)?;
    let (ra, rb) = (a.shape.len(), b.shape.len());
    if ra < 2
        || rb < 2
        || a.shape[ra - 1] != b.shape[rb - 1]
        || a.shape[..ra - 2] != b.shape[..rb - 2]
    {
        return Err(ctx.bad(format!("cdist of {:?} and {:?}", a.shape, b.shape)));
    }
    let (pn, rn, m) = (a.shape[ra - 2], b.shape[rb - 2], a.shape[ra - 1]);
    let batches: usize = a.shape[..ra - 2].iter().product();
    ctx.charge(&[batches, pn, rn, m])?;
    let (x, y) = (a.buf.to_f64(), b.buf.to_f64());
    let pow = Pow::of(ctx, p)?;
    let mut out = Vec::with_capacity(batches * pn * rn);
    for bt in 0..batches {
        for i in 0..pn {
            let row = &x[(bt * pn + i) * m..(bt * pn + i + 1) * m];
            for j in 0..rn {
                out.push(p_distance(
                    row,
                    &y[(bt * rn + j) * m..(bt * rn + j + 1) * m],
                    p,
                    &pow,
                ));
            }
        }
    }
    let o = out_of(ctx, args)?;
    ctx.write_values(o, &out)
}

/// `aten::_pdist_forward.out(self[N, M], p, out[N·(N−1)/2])`: the distance of every pair of
/// rows `i < j`, in order.
pub fn pdist(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let a = ctx.shared(args, 0)?;
    let p = ctx.double(args, 1)?;
    let [n, m] = <[usize; 2]>::try_from(a.shape.as_slice())
        .map_err(|_| ctx.bad("pdist needs a 2-D tensor"))?;
    ctx.charge(&[n, n, m])?;
    let x = a.buf.to_f64();
    let pow = Pow::of(ctx, p)?;
    let mut out = Vec::with_capacity(n * n.saturating_sub(1) / 2);
    for i in 0..n {
        for j in i + 1..n {
            out.push(p_distance(
                &x[i * m..(i + 1) * m],
                &x[j * m..(j + 1) * m],
                p,
                &pow,
            ));
        }
    }
    let o = out_of(ctx, args)?;
    ctx.write_values(o, &out)
}

/// `aten::var_mean.correction_out(self, dim?, correction?, keepdim, out0, out1)`.
pub fn var_mean(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let c = correction(ctx, args, 2)?;
    let input = ctx.shared(args, 0)?;
    let dims = match ctx.values.get(ctx.arg(args, 1)?) {
        Some(RValue::None) => Vec::new(),
        _ => ctx.ints(args, 1)?,
    };
    let mask = reduced_dims(ctx, &dims, input.shape.len())?;
    let x = input.buf.to_f64();
    // as the portable kernel: both NaN where `n − correction` is not positive; a float32 out
    // tensor sums and divides in float32
    let float32 = out_is_f32(ctx, args)?;
    let undefined = |g: &[f64]| g.is_empty() || g.len() as f64 - c <= 0.0;
    let vars = reduce(&x, &input.shape, &mask, |g| match (undefined(g), float32) {
        (true, _) => f64::NAN,
        (false, true) => var_f32(g, c),
        (false, false) => var_and_mean(g, c).0,
    });
    let means = reduce(&x, &input.shape, &mask, |g| match (undefined(g), float32) {
        (true, _) => f64::NAN,
        (false, true) => f64::from(g.iter().fold(0f32, |a, &v| a + v as f32) / g.len() as f32),
        (false, false) => var_and_mean(g, c).1,
    });
    for (k, v) in [(4, vars), (5, means)] {
        let o = ctx.arg(args, k)?;
        ctx.write_values(o, &v)?;
    }
    Ok(())
}

/// `grid_sampler_2d`'s source coordinate of a normalised grid value, in float32 as the
/// portable kernel computes it: unnormalised, then clipped (border) or reflected and clipped.
fn grid_source(coord: f32, size: usize, padding: i64, align_corners: bool) -> f32 {
    let n = size as f32;
    let clip = |c: f32| c.max(0.0).min(n - 1.0);
    let c = if align_corners {
        ((coord + 1.0) / 2.0) * (n - 1.0)
    } else {
        ((coord + 1.0) * n - 1.0) / 2.0
    };
    let reflect = |c: f32, twice_low: i64, twice_high: i64| {
        if twice_low == twice_high {
            return 0.0;
        }
        let min = twice_low as f32 / 2.0;
        let span = (twice_high - twice_low) as f32 / 2.0;
        let c = (c - min).abs();
        let extra = c % span;
        let flips = (c / span).floor() as i64;
        if flips % 2 == 0 {
            extra + min
        } else {
            span - extra + min
        }
    };
    match padding {
        1 => clip(c),
        2 => {
            let s = size as i64;
            clip(if align_corners {
                reflect(c, 0, 2 * (s - 1))
            } else {
                reflect(c, -1, 2 * s - 1)
            })
        }
        _ => c,
    }
}

/// `aten::grid_sampler_2d.out(input[N, C, H, W], grid[N, Ho, Wo, 2], interpolation_mode,
/// padding_mode, align_corners, out[N, C, Ho, Wo])`: bilinear (0) or nearest (1) sampling at
/// the grid's normalised (x, y), zeros (0), border (1) or reflection (2) outside, in float32 as
/// the portable kernel computes it. Bicubic (2) is refused.
pub fn grid_sampler_2d(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.shared(args, 0)?;
    let grid = ctx.shared(args, 1)?;
    let mode = ctx.int(args, 2)?;
    let padding = ctx.int(args, 3)?;
    let align = ctx.bool(args, 4)?;
    let [n, c, h, w] = <[usize; 4]>::try_from(input.shape.as_slice())
        .map_err(|_| ctx.bad("grid_sampler_2d: the input must be 4-D"))?;
    let [gn, oh, ow, two] = <[usize; 4]>::try_from(grid.shape.as_slice())
        .map_err(|_| ctx.bad("grid_sampler_2d: the grid must be 4-D"))?;
    if gn != n || two != 2 || !(0..=2).contains(&padding) {
        return Err(ctx.bad(format!(
            "grid {:?} for input {:?}, padding mode {padding}",
            grid.shape, input.shape
        )));
    }
    if mode != 0 && mode != 1 {
        return Err(ctx.bad(format!(
            "interpolation mode {mode} (bicubic) is not implemented on the host"
        )));
    }
    ctx.charge(&[n, c, oh, ow, 4])?;
    let (x, g) = (input.buf.to_f64(), grid.buf.to_f64());
    let at = |b: usize, ch: usize, yy: i64, xx: i64| -> f32 {
        x[((b * c + ch) * h + yy as usize) * w + xx as usize] as f32
    };
    let inside = |yy: i64, xx: i64| yy >= 0 && yy < h as i64 && xx >= 0 && xx < w as i64;
    let clip = |v: i64, size: usize| v.clamp(0, size as i64 - 1);
    let mut out = Vec::with_capacity(n * c * oh * ow);
    for b in 0..n {
        for ch in 0..c {
            for yo in 0..oh {
                for xo in 0..ow {
                    let gi = ((b * oh + yo) * ow + xo) * 2;
                    let ix = grid_source(g[gi] as f32, w, padding, align);
                    let iy = grid_source(g[gi + 1] as f32, h, padding, align);
                    let v = if mode == 1 {
                        let (xn, yn) = (ix.round_ties_even() as i64, iy.round_ties_even() as i64);
                        if padding == 0 {
                            if inside(yn, xn) {
                                at(b, ch, yn, xn)
                            } else {
                                0.0
                            }
                        } else {
                            at(b, ch, clip(yn, h), clip(xn, w))
                        }
                    } else {
                        let (x0, y0) = (ix.floor() as i64, iy.floor() as i64);
                        let (x1, y1) = (x0 + 1, y0 + 1);
                        let weights = [
                            (y0, x0, (x1 as f32 - ix) * (y1 as f32 - iy)),
                            (y0, x1, (ix - x0 as f32) * (y1 as f32 - iy)),
                            (y1, x0, (x1 as f32 - ix) * (iy - y0 as f32)),
                            (y1, x1, (ix - x0 as f32) * (iy - y0 as f32)),
                        ];
                        if padding == 0 {
                            let mut acc = 0.0f32;
                            for (yy, xx, wt) in weights {
                                if inside(yy, xx) {
                                    acc += at(b, ch, yy, xx) * wt;
                                }
                            }
                            acc
                        } else {
                            weights.iter().fold(0.0f32, |acc, &(yy, xx, wt)| {
                                acc + at(b, ch, clip(yy, h), clip(xx, w)) * wt
                            })
                        }
                    };
                    out.push(f64::from(v));
                }
            }
        }
    }
    let o = out_of(ctx, args)?;
    ctx.write_values(o, &out)
}

/// One output index's window of `_upsample_bilinear2d_aa`: input indices `min..max` and their
/// normalised triangle-filter weights, in float32 as the portable kernel computes them.
fn aa_weights(out_index: usize, scale: f32, size: usize) -> (usize, Vec<f32>) {
    let filter = |x: f32| {
        let x = x.abs();
        if x < 1.0 {
            1.0 - x
        } else {
            0.0
        }
    };
    let center = scale * (out_index as f32 + 0.5);
    let support = if scale >= 1.0 { scale } else { 1.0 };
    let invscale = if scale >= 1.0 { 1.0 / scale } else { 1.0 };
    let lo = ((center - support + 0.5) as i64).max(0);
    let hi = ((center + support + 0.5) as i64).min(size as i64);
    let fallback = || {
        let i = (center as i64).min(size as i64 - 1).max(0) as usize;
        (i, vec![1.0])
    };
    if hi <= lo {
        return fallback();
    }
    let mut total = 0.0f32;
    for x in lo..hi {
        total += filter((x as f32 - center + 0.5) * invscale);
    }
    if total <= 0.0 {
        return fallback();
    }
    let weights = (lo..hi)
        .map(|x| filter((x as f32 - center + 0.5) * invscale) / total)
        .collect();
    (lo as usize, weights)
}

/// `aten::_upsample_bilinear2d_aa.out(self, output_size, align_corners, scales_h?, scales_w?,
/// out)`: antialiased bilinear resizing (a triangle filter as wide as the scale when
/// shrinking), accumulated in float32 as the portable kernel does.
pub fn upsample_bilinear2d_aa(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.shared(args, 0)?;
    let size = ctx.ints(args, 1)?;
    let align = ctx.bool(args, 2)?;
    let opt = |k: usize| -> Result<Option<f64>, RuntimeError> {
        match ctx.values.get(ctx.arg(args, k)?) {
            Some(RValue::None) => Ok(None),
            _ => ctx.double(args, k).map(Some),
        }
    };
    let (scale_h, scale_w) = (opt(3)?, opt(4)?);
    let [n, c, h, w] = <[usize; 4]>::try_from(input.shape.as_slice())
        .map_err(|_| ctx.bad("the input must be 4-D"))?;
    let [oh, ow] = <[i64; 2]>::try_from(size.as_slice())
        .ok()
        .filter(|s| s[0] > 0 && s[1] > 0)
        .map(|s| [s[0] as usize, s[1] as usize])
        .ok_or_else(|| ctx.bad(format!("output size {size:?}")))?;
    // the scale the kernel uses: (in − 1)/(out − 1) with aligned corners, else 1/scale (the
    // given one, or out/in)
    let kernel_scale = |i: usize, o: usize, given: Option<f64>| -> f32 {
        if align {
            if o > 1 {
                ((i - 1) as f64 / (o - 1) as f64) as f32
            } else {
                0.0
            }
        } else {
            let s = given.unwrap_or(o as f64 / i as f64);
            (1.0 / s) as f32
        }
    };
    let given = scale_h.zip(scale_w);
    let (sh, sw) = (
        kernel_scale(h, oh, given.map(|g| g.0)),
        kernel_scale(w, ow, given.map(|g| g.1)),
    );
    ctx.charge(&[n, c, oh, ow, h.max(1), w.max(1)])?;
    let x = input.buf.to_f64();
    let rows: Vec<(usize, Vec<f32>)> = (0..oh).map(|o| aa_weights(o, sh, h)).collect();
    let cols: Vec<(usize, Vec<f32>)> = (0..ow).map(|o| aa_weights(o, sw, w)).collect();
    let mut out = Vec::with_capacity(n * c * oh * ow);
    for b in 0..n {
        for ch in 0..c {
            let plane = &x[(b * c + ch) * h * w..][..h * w];
            for (y0, wy) in &rows {
                for (x0, wx) in &cols {
                    let mut v = 0.0f32;
                    for (dy, &hw) in wy.iter().enumerate() {
                        for (dx, &ww) in wx.iter().enumerate() {
                            v += plane[(y0 + dy) * w + x0 + dx] as f32 * hw * ww;
                        }
                    }
                    out.push(f64::from(v));
                }
            }
        }
    }
    let o = out_of(ctx, args)?;
    ctx.write_values(o, &out)
}

#[cfg(test)]
mod tests {
    use crate::kernels::math::erf;

    #[test]
    fn erf_is_accurate_to_double_precision_where_gelu_needs_it() {
        for (x, want) in [
            (0.0, 0.0),
            (0.5, 0.520_499_877_813_046_5),
            (1.0, 0.842_700_792_949_714_9),
            (-2.0, -0.995_322_265_018_952_7),
            (3.0, 0.999_977_909_503_001_4),
        ] {
            assert!((erf(x) - want).abs() < 1e-14, "erf({x}) = {}", erf(x));
        }
    }
}
