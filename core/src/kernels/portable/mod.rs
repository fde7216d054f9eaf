//! ExecuTorch's portable fp32 kernels (`aten::*.out`) the reference programs use: convolution,
//! batch norm (inference), relu and friends, average pooling, permute, addmm / mm, softmax and
//! same-shape elementwise arithmetic. Tensors are NCHW, row-major.

pub mod conv_planes;
pub mod conv_transposed;
pub mod index;
pub mod math;
pub mod nn;
pub mod rearrange;
pub mod shape;
pub mod tensor;

use crate::kernels::ctx::{f32s, Ctx};
use crate::kernels::value::Buf;
use crate::kernels::RuntimeError;

/// Out-variant output: the argument before the trailing return value.
fn out_of(ctx: &Ctx<'_>, args: &[usize]) -> Result<usize, RuntimeError> {
    if args.len() < 2 {
        return Err(ctx.bad("no out argument"));
    }
    Ok(args[args.len() - 2])
}

fn dims4(ctx: &Ctx<'_>, shape: &[usize], what: &str) -> Result<[usize; 4], RuntimeError> {
    match shape {
        [a, b, c, d] => Ok([*a, *b, *c, *d]),
        _ => Err(ctx.bad(format!("{what} must be 4-D, is {shape:?}"))),
    }
}

/// `aten::convolution.out(input, weight, bias?, stride, padding, dilation, transposed, output_padding, groups, out)`,
/// 2-D (`[N, C, H, W]`) or 1-D (`[N, C, L]`).
pub fn convolution(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.tensor(args, 0)?;
    let weight = ctx.tensor(args, 1)?;
    let bias = ctx.opt_tensor(args, 2)?;
    let stride = ctx.window_ints(args, 3)?;
    let padding = ctx.window_ints(args, 4)?;
    let dilation = ctx.window_ints(args, 5)?;
    let transposed = ctx.bool(args, 6)?;
    let groups = ctx.int(args, 8)?.max(1) as usize;
    // a 1-D convolution ([N, C, L] by [O, C/g, K]) is a 2-D one of height 1
    let one_d = input.shape.len() == 3 && weight.shape.len() == 3;
    let as_2d = |s: &[usize]| {
        if one_d {
            vec![s[0], s[1], 1, s[2]]
        } else {
            s.to_vec()
        }
    };
    let [n, c, h, w] = dims4(ctx, &as_2d(&input.shape), "input")?;
    let [oc, icg, kh, kw] = dims4(ctx, &as_2d(&weight.shape), "weight")?;
    let (stride, padding, dilation) = if one_d {
        let h_too = |v: &[i64], first: i64| [vec![first], v.to_vec()].concat();
        (h_too(&stride, 1), h_too(&padding, 0), h_too(&dilation, 1))
    } else {
        (stride, padding, dilation)
    };
    let x = f32s(ctx, input)?;
    let wt = f32s(ctx, weight)?;
    let b = bias.map(|b| f32s(ctx, b)).transpose()?;
    let get = |v: &[i64], i: usize| v.get(i).or(v.first()).copied().unwrap_or(1).max(0) as usize;
    let (sh, sw, ph, pw, dh, dw) = (
        get(&stride, 0),
        get(&stride, 1),
        get(&padding, 0),
        get(&padding, 1),
        get(&dilation, 0),
        get(&dilation, 1),
    );
    if transposed {
        let output_padding = ctx.window_ints(args, 7)?;
        let output_padding = if one_d {
            [vec![0], output_padding].concat()
        } else {
            output_padding
        };
        let t = conv_transposed::Transposed {
            input: [n, c, h, w],
            weight: [oc, icg, kh, kw],
            groups,
            stride: (sh, sw),
            padding: (ph, pw),
            dilation: (dh, dw),
            output_padding: (get(&output_padding, 0), get(&output_padding, 1)),
        };
        let fits = |len: usize, dims: &[usize]| crate::kernels::element_count(dims) == Some(len);
        let dims = t.out_dims().filter(|_| {
            sh > 0 && sw > 0 && fits(x.len(), &[n, c, h, w]) && fits(wt.len(), &[oc, icg, kh, kw])
        });
        let Some([_, out_c, out_h, out_w]) = dims else {
            return Err(ctx.bad(format!(
                "transposed: input {:?}, weight {:?}, groups {groups} do not fit",
                input.shape, weight.shape
            )));
        };
        if b.is_some_and(|b| b.len() != out_c) {
            return Err(ctx.bad("the bias does not match the output channels"));
        }
        ctx.charge(&[n, out_c, out_h, out_w, icg, kh, kw])?;
        ctx.out_len(&[n, out_c, out_h, out_w])?;
        let out = t
            .run(x, wt, b)
            .ok_or_else(|| ctx.bad("transposed convolution sizes do not fit"))?;
        let o = out_of(ctx, args)?;
        let shape = if one_d {
            vec![n, out_c, out_w]
        } else {
            vec![n, out_c, out_h, out_w]
        };
        return ctx.write(o, shape, Buf::F32(out));
    }
    if sh == 0 || sw == 0 || icg.checked_mul(groups) != Some(c) || oc % groups != 0 {
        return Err(ctx.bad(format!(
            "input {:?}, weight {:?}, groups {groups} do not fit",
            input.shape, weight.shape
        )));
    }
    let span = |len: usize, pad: usize, dil: usize, k: usize, stride: usize| {
        let padded = len.saturating_add(pad.saturating_mul(2));
        let extent = dil.saturating_mul(k.saturating_sub(1)).saturating_add(1);
        padded.saturating_sub(extent) / stride + 1
    };
    let oh = span(h, ph, dh, kh, sh);
    let ow = span(w, pw, dw, kw, sw);
    let fits = |len: usize, dims: &[usize]| crate::kernels::element_count(dims) == Some(len);
    if !fits(x.len(), &[n, c, h, w])
        || !fits(wt.len(), &[oc, icg, kh, kw])
        || b.is_some_and(|b| b.len() != oc)
    {
        return Err(ctx.bad("input, weight and bias lengths do not match their shapes"));
    }
    ctx.charge(&[n, oc, oh, ow, icg, kh, kw])?;
    let mut out = vec![0f32; ctx.out_len(&[n, oc, oh, ow])?];
    let geometry = conv_planes::Geometry {
        input: [n, c, h, w],
        weight: [oc, icg, kh, kw],
        out: [oh, ow],
        groups,
        stride: (sh, sw),
        padding: (ph, pw),
        dilation: (dh, dw),
    };
    if !conv_planes::accumulate(&geometry, x, wt, b, &mut out) {
        return Err(ctx.bad("padding and dilation do not fit the input"));
    }
    let o = out_of(ctx, args)?;
    let shape = if one_d {
        vec![n, oc, ow]
    } else {
        vec![n, oc, oh, ow]
    };
    ctx.write(o, shape, Buf::F32(out))
}

/// `aten::_native_batch_norm_legit_no_training.out(input, weight?, bias?, mean, var, momentum, eps, out, save_mean, save_invstd)`.
pub fn batch_norm(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.tensor(args, 0)?;
    let weight = ctx.opt_tensor(args, 1)?.map(|t| f32s(ctx, t)).transpose()?;
    let bias = ctx.opt_tensor(args, 2)?.map(|t| f32s(ctx, t)).transpose()?;
    let mean = f32s(ctx, ctx.tensor(args, 3)?)?;
    let var = f32s(ctx, ctx.tensor(args, 4)?)?;
    let eps = ctx.double(args, 6)?;
    let x = f32s(ctx, input)?;
    let c = *input
        .shape
        .get(1)
        .ok_or_else(|| ctx.bad("input needs a channel dimension"))?;
    let inner: usize = input.shape.iter().skip(2).product();
    if mean.len() != c
        || var.len() != c
        || weight.is_some_and(|w| w.len() != c)
        || bias.is_some_and(|b| b.len() != c)
    {
        return Err(ctx.bad(format!(
            "mean/var/weight/bias do not match the {c} channels of {:?}",
            input.shape
        )));
    }
    let mut out = vec![0f32; x.len()];
    for (i, (o, &v)) in out.iter_mut().zip(x).enumerate() {
        let ch = (i / inner.max(1)) % c;
        // as the portable kernel: `1.0 / std::sqrt(var + eps)` in double (eps is a double),
        // then `(x − mean) · invstd · weight + bias` in float32 with weight 1 and bias 0 when
        // absent
        let inv = (1.0 / (f64::from(var[ch]) + eps).sqrt()) as f32;
        let w = weight.map_or(1.0, |w| w[ch]);
        let b = bias.map_or(0.0, |b| b[ch]);
        *o = (v - mean[ch]) * inv * w + b;
    }
    let shape = input.shape.clone();
    let out_v = *args.get(7).ok_or_else(|| ctx.bad("missing out"))?;
    ctx.write(out_v, shape, Buf::F32(out))
}

/// `aten::_native_batch_norm_legit.no_stats_out(input, weight?, bias?, training, momentum, eps,
/// out, save_mean, save_invstd)`: each channel normalised by its own statistics over the batch
/// and the spatial dims (what an `InstanceNorm` exports to), as the portable kernel computes
/// them: per sample the channel's sum and sum of squares in float32, added up over the batch in
/// float32, the mean and E[x²] − mean² in float32, `1 / sqrt(var + eps)` in double, then
/// `(x − mean) · invstd · weight + bias` in float32 (weight 1 and bias 0 when absent).
pub fn batch_norm_no_stats(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.tensor(args, 0)?;
    let weight = ctx.opt_tensor(args, 1)?.map(|t| f32s(ctx, t)).transpose()?;
    let bias = ctx.opt_tensor(args, 2)?.map(|t| f32s(ctx, t)).transpose()?;
    let eps = ctx.double(args, 5)?;
    let x = f32s(ctx, input)?;
    let (n, c) = match input.shape.as_slice() {
        [n, c, ..] => (*n, *c),
        _ => return Err(ctx.bad("input needs a batch and a channel dimension")),
    };
    // sizes from the program: checked before anything is allocated by them (one mean per
    // channel, as many as the planned statistics hold)
    let inner = crate::kernels::element_count(&input.shape[2..]);
    let stats = crate::kernels::element_count(&ctx.out_shape(ctx.arg(args, 7)?)?);
    let (Some(inner), true) = (
        inner,
        inner.and_then(|i| crate::kernels::element_count(&[n, c, i])) == Some(x.len())
            && stats == Some(c),
    ) else {
        return Err(ctx.bad(format!(
            "{:?} does not match its statistics' out tensors",
            input.shape
        )));
    };
    if weight.is_some_and(|w| w.len() != c) || bias.is_some_and(|b| b.len() != c) {
        return Err(ctx.bad(format!(
            "weight/bias do not match the {c} channels of {:?}",
            input.shape
        )));
    }
    ctx.charge(&[n, c, inner.max(1)])?;
    let (mut sums, mut squares) = (vec![0f32; c], vec![0f32; c]);
    for b in 0..n {
        for ch in 0..c {
            let plane = &x[(b * c + ch) * inner..(b * c + ch + 1) * inner];
            sums[ch] += plane.iter().fold(0f32, |a, &v| a + v);
            squares[ch] += plane.iter().fold(0f32, |a, &v| a + v * v);
        }
    }
    let per_channel = n.saturating_mul(inner) as f32;
    let means: Vec<f32> = sums.iter().map(|&s| s / per_channel).collect();
    let invstds: Vec<f32> = squares
        .iter()
        .zip(&means)
        .map(|(&q, &m)| (1.0 / (f64::from(q / per_channel - m * m) + eps).sqrt()) as f32)
        .collect();
    let mut out = vec![0f32; x.len()];
    for (i, (o, &v)) in out.iter_mut().zip(x).enumerate() {
        let ch = (i / inner.max(1)) % c;
        let w = weight.map_or(1.0, |w| w[ch]);
        let b = bias.map_or(0.0, |b| b[ch]);
        *o = (v - means[ch]) * invstds[ch] * w + b;
    }
    let shape = input.shape.clone();
    let (o_out, o_mean, o_invstd) = (ctx.arg(args, 6)?, ctx.arg(args, 7)?, ctx.arg(args, 8)?);
    ctx.write(o_out, shape, Buf::F32(out))?;
    ctx.write(o_mean, vec![c], Buf::F32(means))?;
    ctx.write(o_invstd, vec![c], Buf::F32(invstds))
}

/// Elementwise `aten::<op>.out(input, out)`.
pub fn unary(
    ctx: &mut Ctx<'_>,
    args: &[usize],
    f: impl Fn(f32) -> f32,
) -> Result<(), RuntimeError> {
    let input = ctx.tensor(args, 0)?;
    let out: Vec<f32> = f32s(ctx, input)?.iter().map(|&v| f(v)).collect();
    let shape = input.shape.clone();
    let o = out_of(ctx, args)?;
    ctx.write(o, shape, Buf::F32(out))
}

/// `aten::hardtanh.out(input, min, max, out)`.
pub fn hardtanh(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let (lo, hi) = ctx.range(ctx.double(args, 1)? as f32, ctx.double(args, 2)? as f32)?;
    unary(ctx, args, |x| x.clamp(lo, hi))
}

/// `aten::avg_pool2d.out(input, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override?, out)`.
pub fn avg_pool2d(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.tensor(args, 0)?;
    let kernel = ctx.window_ints(args, 1)?;
    let stride = ctx.window_ints(args, 2)?;
    let padding = ctx.window_ints(args, 3)?;
    let count_include_pad = ctx.bool(args, 5)?;
    let divisor = match ctx.values.get(ctx.arg(args, 6)?) {
        Some(crate::kernels::value::RValue::Int(d)) => Some(*d as f32),
        _ => None,
    };
    let [n, c, h, w] = dims4(ctx, &input.shape, "input")?;
    let get = |v: &[i64], i: usize, d: usize| {
        v.get(i)
            .or(v.first())
            .map(|&x| x.max(0) as usize)
            .unwrap_or(d)
    };
    let (kh, kw) = (get(&kernel, 0, 1), get(&kernel, 1, 1));
    let (sh, sw) = if stride.is_empty() {
        (kh.max(1), kw.max(1))
    } else {
        (get(&stride, 0, kh).max(1), get(&stride, 1, kw).max(1))
    };
    let (ph, pw) = (get(&padding, 0, 0), get(&padding, 1, 0));
    let o = out_of(ctx, args)?;
    let out_shape = ctx.out_shape(o)?;
    let [_, _, oh, ow] = dims4(ctx, &out_shape, "out")?;
    let x = f32s(ctx, input)?;
    let mut out = vec![0f32; ctx.out_len(&[n, c, oh, ow])?];
    for nc in 0..n * c {
        for y in 0..oh {
            for xo in 0..ow {
                let y0 = (y * sh) as isize - ph as isize;
                let x0 = (xo * sw) as isize - pw as isize;
                let (y1, x1) = (
                    (y0 + kh as isize).min((h + ph) as isize),
                    (x0 + kw as isize).min((w + pw) as isize),
                );
                let pool = ((y1 - y0) * (x1 - x0)) as f32;
                let (ys, xs, ye, xe) =
                    (y0.max(0), x0.max(0), y1.min(h as isize), x1.min(w as isize));
                let mut sum = 0f32;
                for iy in ys..ye {
                    for ix in xs..xe {
                        sum += x[(nc * h + iy as usize) * w + ix as usize];
                    }
                }
                let count = divisor.unwrap_or(if count_include_pad {
                    pool
                } else {
                    ((ye - ys) * (xe - xs)) as f32
                });
                out[(nc * oh + y) * ow + xo] = sum / count;
            }
        }
    }
    ctx.write(o, out_shape, Buf::F32(out))
}

/// Checks `perm` is a permutation of `0..rank`.
pub fn check_perm(ctx: &Ctx<'_>, perm: &[i64], rank: usize) -> Result<Vec<usize>, RuntimeError> {
    let mut seen = vec![false; rank];
    let mut out = Vec::with_capacity(rank);
    for &p in perm {
        let d = if p < 0 { p + rank as i64 } else { p };
        if d < 0 || d as usize >= rank || std::mem::replace(&mut seen[d as usize], true) {
            return Err(ctx.bad(format!("{perm:?} is not a permutation of {rank} dims")));
        }
        out.push(d as usize);
    }
    if out.len() != rank {
        return Err(ctx.bad(format!("{perm:?} is not a permutation of {rank} dims")));
    }
    Ok(out)
}

/// `aten::permute_copy.out(input, dims, out)`.
pub fn permute_copy(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.tensor(args, 0)?;
    let perm = check_perm(ctx, &ctx.ints(args, 1)?, input.shape.len())?;
    let shape: Vec<usize> = perm.iter().map(|&p| input.shape[p]).collect();
    let buf = crate::kernels::layout::permute_buf(&input.buf, &input.shape, &perm);
    let o = out_of(ctx, args)?;
    ctx.write(o, shape, buf)
}

/// Copies (`view_copy`, `clone`, dim-order copies, `_to_copy`): the same elements in the out
/// tensor's shape, converted to its type where the copy changes it.
pub fn copy(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let buf = ctx.tensor(args, 0)?.buf.clone();
    let o = out_of(ctx, args)?;
    let shape = ctx.out_shape(o)?;
    let buf = buf.into_like(&ctx.out_like(o)?);
    ctx.write(o, shape, buf)
}

/// `executorch_prim::et_view.default(input, sizes, out)`: the out tensor views the input's
/// storage (the runtime keeps values apart, so the view gets the same elements).
pub fn et_view(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let buf = ctx.tensor(args, 0)?.buf.clone();
    let o = ctx.arg(args, 2)?;
    let shape = ctx.out_shape(o)?;
    ctx.write(o, shape, buf)
}

fn matmul(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut out = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0f32;
            for p in 0..k {
                acc += a[i * k + p] * b[p * n + j];
            }
            out[i * n + j] = acc;
        }
    }
    out
}

fn dims2(ctx: &Ctx<'_>, shape: &[usize]) -> Result<(usize, usize), RuntimeError> {
    match shape {
        [a, b] => Ok((*a, *b)),
        _ => Err(ctx.bad(format!("expected a 2-D tensor, got {shape:?}"))),
    }
}

/// `aten::addmm.out(bias, mat1, mat2, beta, alpha, out)`.
pub fn addmm(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let bias = ctx.tensor(args, 0)?;
    let (a, b) = (ctx.tensor(args, 1)?, ctx.tensor(args, 2)?);
    let (m, k) = dims2(ctx, &a.shape)?;
    let (k2, n) = dims2(ctx, &b.shape)?;
    if k != k2 {
        return Err(ctx.bad(format!("{:?} @ {:?}", a.shape, b.shape)));
    }
    let beta = ctx.double(args, 3)? as f32;
    let alpha = ctx.double(args, 4)? as f32;
    ctx.out_len(&[m, n])?;
    ctx.charge(&[m, k, n])?;
    let mut out = matmul(f32s(ctx, a)?, f32s(ctx, b)?, m, k, n);
    let bv = f32s(ctx, bias)?;
    for (i, o) in out.iter_mut().enumerate() {
        let bi = if bv.len() == n {
            bv[i % n]
        } else if bv.len() == m * n {
            bv[i]
        } else {
            bv.first().copied().unwrap_or(0.0)
        };
        *o = alpha * *o + beta * bi;
    }
    let o = out_of(ctx, args)?;
    ctx.write(o, vec![m, n], Buf::F32(out))
}

/// `aten::mm.out(a, b, out)`.
pub fn mm(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let (a, b) = (ctx.tensor(args, 0)?, ctx.tensor(args, 1)?);
    let (m, k) = dims2(ctx, &a.shape)?;
    let (k2, n) = dims2(ctx, &b.shape)?;
    if k != k2 {
        return Err(ctx.bad(format!(
            "{:?} @ {:?}: inner dimensions differ",
            a.shape, b.shape
        )));
    }
    ctx.out_len(&[m, n])?;
    ctx.charge(&[m, k, n])?;
    let out = matmul(f32s(ctx, a)?, f32s(ctx, b)?, m, k, n);
    let o = out_of(ctx, args)?;
    ctx.write(o, vec![m, n], Buf::F32(out))
}

/// `aten::_softmax.out(input, dim, half_to_float, out)`.
pub fn softmax(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.tensor(args, 0)?;
    let rank = input.shape.len() as i64;
    let dim = ctx.int(args, 1)?;
    let dim = if dim < 0 { dim + rank } else { dim };
    if dim < 0 || dim >= rank {
        return Err(ctx.bad(format!("dim {dim} out of range for {:?}", input.shape)));
    }
    let d = dim as usize;
    let size = input.shape[d];
    let inner: usize = input.shape[d + 1..].iter().product();
    let outer: usize = input.shape[..d].iter().product();
    let x = f32s(ctx, input)?;
    let expf = ctx.libm_f32(crate::kernels::libm::Function::Exp)?;
    let mut out = vec![0f32; x.len()];
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * size + k) * inner + i;
            let max = (0..size)
                .map(|k| x[at(k)])
                .fold(f32::NEG_INFINITY, f32::max);
            let mut sum = 0f32;
            for k in 0..size {
                let e = expf(x[at(k)] - max);
                out[at(k)] = e;
                sum += e;
            }
            for k in 0..size {
                out[at(k)] /= sum;
            }
        }
    }
    let shape = input.shape.clone();
    let o = out_of(ctx, args)?;
    ctx.write(o, shape, Buf::F32(out))
}

/// `aten::linear(input, weight[out,in], bias?)` → `input @ weight^T + bias` (stage graphs).
pub fn linear(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let (x, wt) = (ctx.tensor(args, 0)?, ctx.tensor(args, 1)?);
    let (outs, ins) = dims2(ctx, &wt.shape)?;
    let xv = f32s(ctx, x)?;
    if ins == 0 || xv.len() % ins != 0 {
        return Err(ctx.bad(format!(
            "input {:?} does not fit weight {:?}",
            x.shape, wt.shape
        )));
    }
    let bias = match args.get(2).and_then(|&v| ctx.values.get(v)) {
        Some(crate::kernels::value::RValue::Tensor(b)) => Some(f32s(ctx, b)?.to_vec()),
        _ => None,
    };
    let w = f32s(ctx, wt)?;
    let rows = xv.len() / ins;
    if bias.as_ref().is_some_and(|b| b.len() != outs) {
        return Err(ctx.bad(format!(
            "bias of {} for {outs} outputs",
            bias.as_ref().map_or(0, Vec::len)
        )));
    }
    ctx.charge(&[rows, outs, ins])?;
    let mut out = vec![0f32; ctx.out_len(&[rows, outs])?];
    for r in 0..rows {
        for o in 0..outs {
            let mut acc = 0f32;
            for i in 0..ins {
                acc += xv[r * ins + i] * w[o * ins + i];
            }
            out[r * outs + o] = acc + bias.as_ref().map_or(0.0, |b| b[o]);
        }
    }
    let o = out_of(ctx, args)?;
    let shape = ctx.out_shape(o)?;
    ctx.write(o, shape, Buf::F32(out))
}
