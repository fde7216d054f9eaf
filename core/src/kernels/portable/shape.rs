//! ExecuTorch's portable kernels that move elements without arithmetic: transposes, flips,
//! rolls, stacking, constant padding, nearest-neighbour upsampling, indexing by a tensor
//! (`index_select`, `embedding`), lower triangles and repeats. Each builds the source index of
//! every out element and gathers, in the out tensor's declared shape.

use crate::kernels::cmsis::ops::out_of;
use crate::kernels::ctx::Ctx;
use crate::kernels::layout::permute_buf;
use crate::kernels::value::{Buf, RValue};
use crate::kernels::RuntimeError;

type R = Result<(), RuntimeError>;

use crate::kernels::layout::row_major_strides as strides;

/// Calls `f(out_index) -> source offset` for every element of `shape` in row-major order.
pub(super) fn gather_by(
    shape: &[usize],
    mut f: impl FnMut(&[usize]) -> Option<usize>,
) -> Option<Vec<usize>> {
    let n: usize = shape.iter().product();
    let mut index = vec![0usize; shape.len()];
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(f(&index)?);
        for d in (0..shape.len()).rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    Some(out)
}

/// Writes the input's elements at `sources` (one per out element) into the out tensor.
fn write_gathered(ctx: &mut Ctx<'_>, args: &[usize], buf: &Buf, sources: Vec<usize>) -> R {
    let o = out_of(ctx, args)?;
    let shape = ctx.out_shape(o)?;
    if sources.iter().any(|&s| s >= buf.len()) {
        return Err(ctx.bad("an index points outside the input"));
    }
    ctx.write(o, shape, buf.gather(&sources))
}

/// `aten::transpose_copy.int_out(self, dim0, dim1, out)`.
pub fn transpose_copy(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let rank = input.shape.len();
    let (a, b) = (
        ctx.dim(ctx.int(args, 1)?, rank)?,
        ctx.dim(ctx.int(args, 2)?, rank)?,
    );
    let mut perm: Vec<usize> = (0..rank).collect();
    perm.swap(a, b);
    let o = out_of(ctx, args)?;
    let shape = perm.iter().map(|&p| input.shape[p]).collect();
    ctx.write(o, shape, permute_buf(&input.buf, &input.shape, &perm))
}

/// `aten::t_copy.out(self, out)`: a 2-D tensor transposed, fewer dims copied.
pub fn t_copy(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let perm: Vec<usize> = if input.shape.len() == 2 {
        vec![1, 0]
    } else {
        (0..input.shape.len()).collect()
    };
    let o = out_of(ctx, args)?;
    let shape = perm.iter().map(|&p| input.shape[p]).collect();
    ctx.write(o, shape, permute_buf(&input.buf, &input.shape, &perm))
}

/// `aten::flip.out(self, dims, out)`.
pub fn flip(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let rank = input.shape.len();
    let mut flipped = vec![false; rank];
    for d in ctx.ints(args, 1)? {
        flipped[ctx.dim(d, rank)?] = true;
    }
    let (shape, st) = (input.shape.clone(), strides(&input.shape));
    let sources = gather_by(&shape, |i| {
        Some((0..rank).map(|d| if flipped[d] { shape[d] - 1 - i[d] } else { i[d] } * st[d]).sum())
    })
    .unwrap_or_default();
    write_gathered(ctx, args, &input.buf, sources)
}

/// `aten::roll.out(self, shifts, dims, out)`: no dims rolls the flattened tensor.
pub fn roll(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let (shifts, dims) = (ctx.ints(args, 1)?, ctx.ints(args, 2)?);
    let n = input.buf.len();
    let sources: Vec<usize> = if dims.is_empty() {
        let s = shifts
            .first()
            .copied()
            .unwrap_or(0)
            .rem_euclid(n.max(1) as i64) as usize;
        (0..n).map(|i| (i + n - s) % n.max(1)).collect()
    } else {
        let rank = input.shape.len();
        let mut by = vec![0i64; rank];
        for (&s, &d) in shifts.iter().zip(&dims) {
            let d = ctx.dim(d, rank)?;
            by[d] += s;
        }
        let (shape, st) = (input.shape.clone(), strides(&input.shape));
        gather_by(&shape, |i| {
            Some(
                (0..rank)
                    .map(|d| {
                        let len = shape[d] as i64;
                        ((i[d] as i64 - by[d]).rem_euclid(len.max(1)) as usize) * st[d]
                    })
                    .sum(),
            )
        })
        .unwrap_or_default()
    };
    write_gathered(ctx, args, &input.buf, sources)
}

/// `aten::stack.out(tensors, dim, out)`: equal shapes joined along a new dim.
pub fn stack(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let list = ctx.tensor_list(args, 0)?;
    let parts: Vec<_> = list
        .iter()
        .map(|&v| match ctx.values.get(v) {
            Some(RValue::Tensor(t)) => Ok(std::sync::Arc::clone(t)),
            _ => Err(ctx.bad(format!("list entry {v} is not a tensor"))),
        })
        .collect::<Result<_, _>>()?;
    let Some(first) = parts.first() else {
        return Err(ctx.bad("stack of no tensors"));
    };
    if parts.iter().any(|p| p.shape != first.shape) {
        return Err(ctx.bad("stack of tensors of different shapes"));
    }
    let rank = first.shape.len() + 1;
    let d = ctx.dim(ctx.int(args, 1)?, rank)?;
    let (outer, inner): (usize, usize) = (
        first.shape[..d].iter().product(),
        first.shape[d..].iter().product(),
    );
    let bufs: Vec<&Buf> = parts.iter().map(|p| &p.buf).collect();
    let all = Buf::concat(&bufs).ok_or_else(|| ctx.bad("stack of tensors of different types"))?;
    let k = parts.len();
    let mut sources = Vec::with_capacity(all.len());
    for o in 0..outer {
        for p in 0..k {
            for i in 0..inner {
                sources.push(p * outer * inner + o * inner + i);
            }
        }
    }
    write_gathered(ctx, args, &all, sources)
}

/// `aten::constant_pad_nd.out(self, pad, value, out)`: `pad` pairs from the last dim backwards.
pub fn constant_pad_nd(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let pad = ctx.window_ints(args, 1)?;
    let value = ctx.double(args, 2)?;
    let rank = input.shape.len();
    let mut before = vec![0i64; rank];
    for (k, pair) in pad.chunks(2).enumerate() {
        let Some(d) = rank.checked_sub(k + 1) else {
            return Err(ctx.bad("more padding than dims"));
        };
        before[d] = pair[0];
    }
    let o = out_of(ctx, args)?;
    let shape = ctx.out_shape(o)?;
    // every out element walks the dims: charged before the walk (a padded size from a file can
    // be large)
    ctx.charge(&[shape.iter().product(), rank])?;
    let st = strides(&input.shape);
    let x = input.buf.to_f64();
    let mut values = Vec::with_capacity(shape.iter().product());
    let mut index = vec![0usize; rank];
    for _ in 0..shape.iter().product::<usize>() {
        let mut at = Some(0usize);
        for d in 0..rank {
            let src = index[d] as i64 - before[d];
            if src < 0 || src >= input.shape[d] as i64 {
                at = None;
                break;
            }
            at = at.map(|a| a + src as usize * st[d]);
        }
        values.push(at.and_then(|a| x.get(a).copied()).unwrap_or(value));
        for d in (0..rank).rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    let like = ctx.out_like(o)?;
    ctx.write(o, shape, Buf::from_f64_like(&like, &values))
}

/// `aten::upsample_nearest2d.vec_out(input, output_size?, scale_factors?, out)`: the source row
/// of out row `y` is `floor(y · in / out)` (scales from the sizes, as the portable kernel
/// computes them when the output size is given).
pub fn upsample_nearest2d(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let o = out_of(ctx, args)?;
    let shape = ctx.out_shape(o)?;
    let [n, c, h, w] =
        <[usize; 4]>::try_from(input.shape.as_slice()).map_err(|_| ctx.bad("input is not 4-D"))?;
    let [n2, c2, oh, ow] =
        <[usize; 4]>::try_from(shape.as_slice()).map_err(|_| ctx.bad("output is not 4-D"))?;
    if (n, c) != (n2, c2) || oh == 0 || ow == 0 {
        return Err(ctx.bad(format!("{:?} cannot upsample to {shape:?}", input.shape)));
    }
    // the scale the kernel uses: given scale factors, else in/out
    let scales = match ctx.values.get(ctx.arg(args, 2)?) {
        Some(RValue::DoubleList(s)) if s.len() == 2 => Some((1.0 / s[0], 1.0 / s[1])),
        _ => None,
    };
    let (sh, sw) = scales.unwrap_or((h as f64 / oh as f64, w as f64 / ow as f64));
    let (sh, sw) = (sh as f32, sw as f32);
    let src = |o: usize, scale: f32, len: usize| ((o as f32 * scale).floor() as usize).min(len - 1);
    let mut sources = Vec::with_capacity(n * c * oh * ow);
    for b in 0..n * c {
        for y in 0..oh {
            for x in 0..ow {
                sources.push((b * h + src(y, sh, h)) * w + src(x, sw, w));
            }
        }
    }
    write_gathered(ctx, args, &input.buf, sources)
}

/// Indices of an index tensor, each within `len`.
fn indices(
    ctx: &Ctx<'_>,
    args: &[usize],
    k: usize,
    len: usize,
) -> Result<Vec<usize>, RuntimeError> {
    let t = ctx.tensor(args, k)?;
    t.buf
        .to_f64()
        .into_iter()
        .map(|i| {
            let i = i as i64;
            let j = if i < 0 { i + len as i64 } else { i };
            usize::try_from(j)
                .ok()
                .filter(|&j| j < len)
                .ok_or_else(|| ctx.bad(format!("index {i} out of range for a dim of {len}")))
        })
        .collect()
}

/// `aten::index_select.out(self, dim, index, out)`.
pub fn index_select(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let rank = input.shape.len().max(1);
    let d = ctx.dim(ctx.int(args, 1)?, rank)?;
    let len = input.shape.get(d).copied().unwrap_or(1);
    let idx = indices(ctx, args, 2, len)?;
    let (outer, inner): (usize, usize) = (
        input.shape[..d.min(input.shape.len())].iter().product(),
        input.shape.get(d + 1..).map_or(1, |s| s.iter().product()),
    );
    let mut sources = Vec::with_capacity(outer * idx.len() * inner);
    for o in 0..outer {
        for &i in &idx {
            for k in 0..inner {
                sources.push((o * len + i) * inner + k);
            }
        }
    }
    write_gathered(ctx, args, &input.buf, sources)
}

/// `aten::embedding.out(weight, indices, padding_idx, scale_grad_by_freq, sparse, out)`: rows
/// of `weight` by index.
pub fn embedding(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let weight = ctx.shared(args, 0)?;
    let [rows, dim] = <[usize; 2]>::try_from(weight.shape.as_slice())
        .map_err(|_| ctx.bad("the weight is not 2-D"))?;
    let idx = indices(ctx, args, 1, rows)?;
    let sources = idx
        .iter()
        .flat_map(|&r| (0..dim).map(move |k| r * dim + k))
        .collect();
    write_gathered(ctx, args, &weight.buf, sources)
}

/// `aten::tril.out(self, diagonal, out)`: elements above the `diagonal` set to 0.
pub fn tril(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let diagonal = ctx.int(args, 1)?;
    let rank = input.shape.len();
    if rank < 2 {
        return Err(ctx.bad("tril of fewer than 2 dims"));
    }
    let (rows, cols) = (input.shape[rank - 2], input.shape[rank - 1]);
    let x = input.buf.to_f64();
    let values: Vec<f64> = x
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let (r, c) = ((i / cols) % rows, i % cols);
            if (c as i64) - (r as i64) > diagonal {
                0.0
            } else {
                v
            }
        })
        .collect();
    let o = out_of(ctx, args)?;
    let like = ctx.out_like(o)?;
    ctx.write(o, input.shape.clone(), Buf::from_f64_like(&like, &values))
}

/// `aten::repeat.out(self, repeats, out)`: the tensor tiled `repeats` times per dim (leading
/// repeats add dims).
pub fn repeat(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let repeats = ctx.ints(args, 1)?;
    if repeats.len() < input.shape.len() {
        return Err(ctx.bad("fewer repeats than dims"));
    }
    let lead = repeats.len() - input.shape.len();
    let mut in_shape = vec![1usize; lead];
    in_shape.extend_from_slice(&input.shape);
    let o = out_of(ctx, args)?;
    let shape = ctx.out_shape(o)?;
    if shape.len() != in_shape.len() {
        return Err(ctx.bad("the out tensor's rank is not the repeats'"));
    }
    let st = strides(&in_shape);
    let sources = gather_by(&shape, |i| {
        Some(
            (0..shape.len())
                .map(|d| (i[d] % in_shape[d].max(1)) * st[d])
                .sum(),
        )
    })
    .unwrap_or_default();
    write_gathered(ctx, args, &input.buf, sources)
}

/// `aten::expand_copy.out(self, size, implicit, out)`: the input broadcast to the out tensor's
/// shape (size-1 dims repeated, leading dims added).
pub fn expand_copy(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let o = out_of(ctx, args)?;
    let shape = ctx.out_shape(o)?;
    if !crate::kernels::layout::broadcasts_to(&input.shape, &shape) {
        return Err(ctx.bad(format!("{:?} does not expand to {shape:?}", input.shape)));
    }
    ctx.charge(&[shape.iter().product()])?;
    let sources = crate::kernels::layout::broadcast_index(&input.shape, &shape);
    write_gathered(ctx, args, &input.buf, sources)
}

/// `src` (argument `k`) broadcast to the shape of `target` and converted to its type.
fn broadcast_into(
    ctx: &mut Ctx<'_>,
    args: &[usize],
    k: usize,
    target: usize,
) -> Result<(Vec<usize>, Buf), RuntimeError> {
    let src = ctx.shared(args, k)?;
    let shape = ctx.out_shape(target)?;
    if !crate::kernels::layout::broadcasts_to(&src.shape, &shape) {
        return Err(ctx.bad(format!("{:?} does not broadcast to {shape:?}", src.shape)));
    }
    ctx.charge(&[shape.iter().product()])?;
    let sources = crate::kernels::layout::broadcast_index(&src.shape, &shape);
    if sources.iter().any(|&s| s >= src.buf.len()) {
        return Err(ctx.bad("an index points outside the source"));
    }
    let buf = src.buf.gather(&sources).into_like(&ctx.out_like(target)?);
    Ok((shape, buf))
}

/// `aten::copy_(self, src, non_blocking)`, in place: `src` broadcast to `self`'s shape and
/// converted to its type, written into `self` (and into the returned value, which is `self`).
/// ExecuTorch writes a mutated buffer back with it at the end of a method.
pub fn copy_in_place(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let dst = ctx.arg(args, 0)?;
    let (shape, buf) = broadcast_into(ctx, args, 1, dst)?;
    let ret = *args.last().ok_or_else(|| ctx.bad("no arguments"))?;
    if ret != dst && args.len() > 3 {
        ctx.write(ret, shape.clone(), buf.clone())?;
    }
    ctx.write(dst, shape, buf)
}

/// `aten::copy.out(self, src, non_blocking, out)`: `src` broadcast to `self`'s shape (the out
/// tensor's) and converted to its type.
pub fn copy_out(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let o = out_of(ctx, args)?;
    let (shape, buf) = broadcast_into(ctx, args, 1, o)?;
    ctx.write(o, shape, buf)
}

/// `aten::upsample_bilinear2d.vec_out(input, output_size?, align_corners, scale_factors?,
/// out)`: each out pixel interpolated from its four neighbours, the source coordinate computed
/// in float32 as the portable kernel computes it (`(o + 0.5)·scale − 0.5`, clamped at 0, or
/// `o·(in − 1)/(out − 1)` with aligned corners).
pub fn upsample_bilinear2d(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let align = ctx.bool(args, 2)?;
    let o = out_of(ctx, args)?;
    let shape = ctx.out_shape(o)?;
    let [n, c, h, w] =
        <[usize; 4]>::try_from(input.shape.as_slice()).map_err(|_| ctx.bad("input is not 4-D"))?;
    let [_, _, oh, ow] =
        <[usize; 4]>::try_from(shape.as_slice()).map_err(|_| ctx.bad("output is not 4-D"))?;
    let factors = match ctx.values.get(ctx.arg(args, 3)?) {
        Some(RValue::DoubleList(s)) if s.len() == 2 => Some((s[0], s[1])),
        _ => None,
    };
    let scale = |inp: usize, out: usize, factor: Option<f64>| -> f32 {
        if align {
            if out > 1 {
                (inp as f32 - 1.0) / (out as f32 - 1.0)
            } else {
                0.0
            }
        } else {
            match factor {
                Some(f) if f > 0.0 => (1.0 / f) as f32,
                _ => inp as f32 / out as f32,
            }
        }
    };
    let (sh, sw) = (
        scale(h, oh, factors.map(|f| f.0)),
        scale(w, ow, factors.map(|f| f.1)),
    );
    let source = |o: usize, s: f32, len: usize| -> (usize, usize, f32) {
        let real = if align {
            o as f32 * s
        } else {
            ((o as f32 + 0.5) * s - 0.5).max(0.0)
        };
        let i0 = (real as usize).min(len - 1);
        let i1 = (i0 + 1).min(len - 1);
        (i0, i1, real - i0 as f32)
    };
    let x = input.buf.to_f64();
    let mut out = Vec::with_capacity(n * c * oh * ow);
    ctx.charge(&[n * c, oh, ow])?;
    for p in 0..n * c {
        let at = |y: usize, xx: usize| x[(p * h + y) * w + xx] as f32;
        for y in 0..oh {
            let (y0, y1, ly) = source(y, sh, h);
            for xo in 0..ow {
                let (x0, x1, lx) = source(xo, sw, w);
                let v = (1.0 - ly) * ((1.0 - lx) * at(y0, x0) + lx * at(y0, x1))
                    + ly * ((1.0 - lx) * at(y1, x0) + lx * at(y1, x1));
                out.push(f64::from(v));
            }
        }
    }
    let like = ctx.out_like(o)?;
    ctx.write(o, shape, Buf::from_f64_like(&like, &out))
}
