//! ExecuTorch's portable kernels that index with tensors or scatter into a copy: `gather`,
//! `index.Tensor`, `index_put`, `scatter` / `scatter_add`, `slice_scatter`, `diagonal_copy`,
//! `topk`, and the `max` / `min` over a dim with their indices.

use crate::kernels::cmsis::ops::out_of;
use crate::kernels::ctx::Ctx;
use crate::kernels::layout::{broadcast_shape, broadcasts_to, for_each_index as each_index};
use crate::kernels::value::{Buf, RValue};
use crate::kernels::RuntimeError;

type R = Result<(), RuntimeError>;

use crate::kernels::layout::row_major_strides as strides;

/// An index value against a dim of `len` (negative counts from the end).
fn wrap(ctx: &Ctx<'_>, i: f64, len: usize) -> Result<usize, RuntimeError> {
    let i = i as i64;
    let j = if i < 0 { i + len as i64 } else { i };
    usize::try_from(j)
        .ok()
        .filter(|&j| j < len)
        .ok_or_else(|| ctx.bad(format!("index {i} out of range for a dim of {len}")))
}

/// `aten::gather.out(self, dim, index, sparse_grad, out)`: `out[..i..] = self[..index[..i..]..]`
/// along `dim`.
pub fn gather(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let rank = input.shape.len();
    let d = ctx.dim(ctx.int(args, 1)?, rank)?;
    let index = ctx.shared(args, 2)?;
    if index.shape.len() != rank {
        return Err(ctx.bad("index and self ranks differ"));
    }
    let (st, idx) = (strides(&input.shape), index.buf.to_f64());
    let mut sources = Vec::with_capacity(idx.len());
    let mut k = 0;
    let mut err = None;
    each_index(&index.shape, |i| {
        let mut at = 0;
        for (e, (&ii, &s)) in i.iter().zip(&st).enumerate() {
            let c = if e == d {
                match wrap(ctx, idx[k], input.shape[d]) {
                    Ok(c) => c,
                    Err(x) => {
                        err.get_or_insert(x);
                        0
                    }
                }
            } else {
                ii
            };
            at += c * s;
        }
        sources.push(at);
        k += 1;
    });
    if let Some(e) = err {
        return Err(e);
    }
    if sources.iter().any(|&s| s >= input.buf.len()) {
        return Err(ctx.bad("gather reads outside the input"));
    }
    let o = out_of(ctx, args)?;
    let shape = ctx.out_shape(o)?;
    ctx.write(o, shape, input.buf.gather(&sources))
}

/// Advanced indexing of a tensor of `shape` by the optional index tensors of argument 1
/// (broadcast together; an absent entry keeps its dim), as NumPy and PyTorch index: the shape
/// of the result and, per result element, its flat position in the tensor.
fn indexed_positions(
    ctx: &Ctx<'_>,
    args: &[usize],
    shape: &[usize],
) -> Result<(Vec<usize>, Vec<usize>), RuntimeError> {
    let list: Vec<Option<usize>> = match ctx.values.get(ctx.arg(args, 1)?) {
        Some(RValue::OptionalTensorList(v)) => v.clone(),
        Some(RValue::TensorList(v)) => v.iter().map(|&x| Some(x)).collect(),
        _ => return Err(ctx.bad("indices should be a list of tensors")),
    };
    let rank = shape.len();
    if list.len() > rank {
        return Err(ctx.bad("more indices than dims"));
    }
    let mut tensors = Vec::new();
    for (d, e) in list.iter().enumerate() {
        if let Some(v) = e {
            let t = match ctx.values.get(*v) {
                Some(RValue::Tensor(t)) => std::sync::Arc::clone(t),
                _ => return Err(ctx.bad("an index is not a tensor")),
            };
            tensors.push((d, t));
        }
    }
    let Some(first) = tensors.first().map(|(d, _)| *d) else {
        return Err(ctx.bad("no index tensor"));
    };
    let last = tensors.last().map_or(first, |(d, _)| *d);
    let consecutive = tensors.len() == last - first + 1;
    let mut b: Vec<usize> = Vec::new();
    for (_, t) in &tensors {
        b = broadcast_shape(&b, &t.shape)
            .ok_or_else(|| ctx.bad("index tensors do not broadcast"))?;
    }
    let indexed: Vec<bool> = (0..rank)
        .map(|d| tensors.iter().any(|(e, _)| *e == d))
        .collect();
    let rest: Vec<usize> = (0..rank).filter(|&d| !indexed[d]).collect();
    // the result: the broadcast index shape in place of consecutive indexed dims, first otherwise
    let before: Vec<usize> = if consecutive {
        rest.iter().copied().filter(|&d| d < first).collect()
    } else {
        Vec::new()
    };
    let after: Vec<usize> = rest
        .iter()
        .copied()
        .filter(|d| !before.contains(d))
        .collect();
    let out_shape: Vec<usize> = before
        .iter()
        .map(|&d| shape[d])
        .chain(b.iter().copied())
        .chain(after.iter().map(|&d| shape[d]))
        .collect();
    let values: Vec<(usize, Vec<f64>, Vec<usize>)> = tensors
        .iter()
        .map(|(d, t)| {
            (
                *d,
                t.buf.to_f64(),
                crate::kernels::layout::broadcast_index(&t.shape, &b),
            )
        })
        .collect();
    let st = strides(shape);
    let b_strides = strides(&b);
    let mut positions = Vec::new();
    let mut err = None;
    each_index(&out_shape, |i| {
        let (ib, rest_i) = (&i[before.len()..before.len() + b.len()], &i[..before.len()]);
        let after_i = &i[before.len() + b.len()..];
        let flat_b: usize = ib.iter().zip(&b_strides).map(|(a, s)| a * s).sum();
        let mut at = 0;
        for (k, &d) in before.iter().enumerate() {
            at += rest_i[k] * st[d];
        }
        for (k, &d) in after.iter().enumerate() {
            at += after_i[k] * st[d];
        }
        for (d, v, map) in &values {
            match wrap(ctx, v[map[flat_b]], shape[*d]) {
                Ok(c) => at += c * st[*d],
                Err(e) => {
                    err.get_or_insert(e);
                }
            }
        }
        positions.push(at);
    });
    match err {
        Some(e) => Err(e),
        None => Ok((out_shape, positions)),
    }
}

/// `aten::index.Tensor_out(self, indices, out)`: advanced indexing by a list of optional index
/// tensors (broadcast together; an absent entry keeps its dim), as NumPy and PyTorch index.
pub fn index_tensor(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let (out_shape, sources) = indexed_positions(ctx, args, &input.shape)?;
    let o = out_of(ctx, args)?;
    let shape = ctx.out_shape(o)?;
    if shape.iter().product::<usize>() != sources.len() {
        return Err(ctx.bad(format!(
            "indexing gives {out_shape:?}, the out tensor is {shape:?}"
        )));
    }
    ctx.write(o, shape, input.buf.gather(&sources))
}

/// `aten::index_put.out(self, indices, values, accumulate, out)`: a copy of `self` with
/// `values` (broadcast to the indexed shape) written, or added with `accumulate`, where
/// `self[indices]` reads.
pub fn index_put(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let (shape, buf) = index_put_values(ctx, args)?;
    let o = out_of(ctx, args)?;
    ctx.write(o, shape, buf)
}

/// `aten::index_put_(self, indices, values, accumulate)`, in place (a KV cache's update after
/// ExecuTorch's reinplace pass): `self` itself, and the returned value, which is `self`.
pub fn index_put_in_place(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let (shape, buf) = index_put_values(ctx, args)?;
    let dst = ctx.arg(args, 0)?;
    let ret = *args.last().ok_or_else(|| ctx.bad("no arguments"))?;
    if ret != dst && args.len() > 4 {
        ctx.write(ret, shape.clone(), buf.clone())?;
    }
    ctx.write(dst, shape, buf)
}

fn index_put_values(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(Vec<usize>, Buf), RuntimeError> {
    let input = ctx.shared(args, 0)?;
    let values = ctx.shared(args, 2)?;
    let accumulate = ctx.bool(args, 3)?;
    let (shape, positions) = indexed_positions(ctx, args, &input.shape)?;
    if !broadcasts_to(&values.shape, &shape) {
        return Err(ctx.bad(format!(
            "values {:?} do not broadcast to {shape:?}",
            values.shape
        )));
    }
    ctx.charge(&[positions.len().max(input.buf.len())])?;
    let v = values.buf.to_f64();
    let map = crate::kernels::layout::broadcast_index(&values.shape, &shape);
    let mut out = input.buf.to_f64();
    for (&at, &k) in positions.iter().zip(&map) {
        if let (Some(o), Some(&x)) = (out.get_mut(at), v.get(k)) {
            *o = if accumulate { *o + x } else { x };
        }
    }
    let like = ctx.out_like(ctx.arg(args, 0)?)?;
    Ok((input.shape.clone(), Buf::from_f64_like(&like, &out)))
}

/// `scatter.src_out(self, dim, index, src, out)` (`add`: `scatter_add.out`): a copy of `self`
/// with `src[..i..]` written (or added) at `index[..i..]` along `dim`.
fn scatter_into(ctx: &mut Ctx<'_>, args: &[usize], add: bool) -> R {
    let input = ctx.shared(args, 0)?;
    let rank = input.shape.len();
    let d = ctx.dim(ctx.int(args, 1)?, rank)?;
    let index = ctx.shared(args, 2)?;
    if rank == 0 || index.shape.len() > rank {
        return Err(ctx.bad(format!(
            "scatter of an index {:?} into {:?}: a 0-dim self, or an index of more dims than self, is not implemented",
            index.shape, input.shape
        )));
    }
    // a scalar value (`scatter.value_out`) is every source element
    let (src_shape, sv) = match ctx.values.get(ctx.arg(args, 3)?) {
        Some(RValue::Tensor(t)) => (t.shape.clone(), t.buf.to_f64()),
        _ => (
            index.shape.clone(),
            vec![ctx.double(args, 3)?; index.buf.len()],
        ),
    };
    let (st, sst, idx) = (
        strides(&input.shape),
        strides(&src_shape),
        index.buf.to_f64(),
    );
    let mut out = input.buf.to_f64();
    // float32 sums round to float32 at every add, as the kernel's `out[i] += src[j]`
    let float32 = matches!(input.buf, Buf::F32(_));
    let mut k = 0;
    let mut err = None;
    each_index(&index.shape, |i| {
        let mut at = 0;
        let mut from = 0;
        for (e, &ii) in i.iter().enumerate() {
            let c = if e == d {
                match wrap(ctx, idx[k], input.shape[d]) {
                    Ok(c) => c,
                    Err(x) => {
                        err.get_or_insert(x);
                        0
                    }
                }
            } else {
                ii
            };
            at += c * st[e];
            from += ii * sst.get(e).copied().unwrap_or(0);
        }
        if let (Some(o), Some(&v)) = (out.get_mut(at), sv.get(from)) {
            *o = match (add, float32) {
                (false, _) => v,
                (true, true) => f64::from(*o as f32 + v as f32),
                (true, false) => *o + v,
            };
        }
        k += 1;
    });
    if let Some(e) = err {
        return Err(e);
    }
    let o = out_of(ctx, args)?;
    let like = ctx.out_like(o)?;
    ctx.write(o, input.shape.clone(), Buf::from_f64_like(&like, &out))
}

/// `aten::scatter.src_out(self, dim, index, src, out)`.
pub fn scatter(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    scatter_into(ctx, args, false)
}

/// `aten::scatter.value_out(self, dim, index, value, out)`: `value` at every index.
pub fn scatter_value(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    scatter_into(ctx, args, false)
}

/// `aten::scatter_add.out(self, dim, index, src, out)`.
pub fn scatter_add(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    scatter_into(ctx, args, true)
}

/// `aten::slice_scatter.out(self, src, dim, start?, end?, step, out)`.
pub fn slice_scatter(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let src = ctx.shared(args, 1)?;
    let rank = input.shape.len();
    let d = ctx.dim(ctx.int(args, 2)?, rank)?;
    let len = input.shape[d] as i64;
    let clampi = |v: i64| (if v < 0 { v + len } else { v }).clamp(0, len);
    let opt = |k: usize| -> Result<Option<i64>, RuntimeError> {
        match ctx.values.get(ctx.arg(args, k)?) {
            Some(RValue::None) => Ok(None),
            _ => ctx.int(args, k).map(Some),
        }
    };
    let start = clampi(opt(3)?.unwrap_or(0));
    let end = clampi(opt(4)?.unwrap_or(len));
    let step = ctx.int(args, 5)?.max(1);
    let (st, sst, sv) = (strides(&input.shape), strides(&src.shape), src.buf.to_f64());
    let mut out = input.buf.to_f64();
    let count = ((end - start).max(0) + step - 1) / step;
    if src.shape.get(d).copied() != Some(count as usize) {
        return Err(ctx.bad("src does not fit the slice"));
    }
    each_index(&src.shape, |i| {
        let at: usize = i
            .iter()
            .enumerate()
            .map(|(e, &ii)| if e == d { (start + ii as i64 * step) as usize } else { ii } * st[e])
            .sum();
        let from: usize = i.iter().zip(&sst).map(|(a, s)| a * s).sum();
        if let (Some(o), Some(&v)) = (out.get_mut(at), sv.get(from)) {
            *o = v;
        }
    });
    let o = out_of(ctx, args)?;
    let like = ctx.out_like(o)?;
    ctx.write(o, input.shape.clone(), Buf::from_f64_like(&like, &out))
}

/// `aten::diagonal_copy.out(self, offset, dim1, dim2, out)`: the diagonal moved to the last dim.
pub fn diagonal_copy(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let rank = input.shape.len();
    let offset = ctx.int(args, 1)?;
    let (d1, d2) = (
        ctx.dim(ctx.int(args, 2)?, rank)?,
        ctx.dim(ctx.int(args, 3)?, rank)?,
    );
    let st = strides(&input.shape);
    let (r0, c0) = if offset >= 0 {
        (0, offset as usize)
    } else {
        ((-offset) as usize, 0)
    };
    let n = input.shape[d1]
        .saturating_sub(r0)
        .min(input.shape[d2].saturating_sub(c0));
    let kept: Vec<usize> = (0..rank).filter(|&d| d != d1 && d != d2).collect();
    let mut shape: Vec<usize> = kept.iter().map(|&d| input.shape[d]).collect();
    shape.push(n);
    let mut sources = Vec::new();
    each_index(&shape, |i| {
        let k = i[i.len() - 1];
        let mut at = (r0 + k) * st[d1] + (c0 + k) * st[d2];
        for (e, &d) in kept.iter().enumerate() {
            at += i[e] * st[d];
        }
        sources.push(at);
    });
    let o = out_of(ctx, args)?;
    let out_shape = ctx.out_shape(o)?;
    ctx.write(o, out_shape, input.buf.gather(&sources))
}

/// Along `dim`, every line's values and the index of each, in line order.
fn lines(shape: &[usize], d: usize) -> (usize, usize, usize) {
    let outer: usize = shape[..d].iter().product();
    let inner: usize = shape[d + 1..].iter().product();
    (outer, shape[d], inner)
}

/// `aten::max.dim_max(self, dim, keepdim, max, max_indices)` / `min.dim_min`: the extreme of
/// each line along `dim` and its first index (a NaN wins).
fn extreme_dim(ctx: &mut Ctx<'_>, args: &[usize], max: bool) -> R {
    let input = ctx.shared(args, 0)?;
    let d = ctx.dim(ctx.int(args, 1)?, input.shape.len())?;
    let (outer, len, inner) = lines(&input.shape, d);
    let x = input.buf.to_f64();
    let (mut values, mut indices) = (Vec::new(), Vec::new());
    for o in 0..outer {
        for i in 0..inner {
            let mut best = 0;
            for k in 0..len {
                let (v, b) = (
                    x[(o * len + k) * inner + i],
                    x[(o * len + best) * inner + i],
                );
                if b.is_nan() {
                    break;
                }
                if v.is_nan() || (max && v > b) || (!max && v < b) {
                    best = k;
                }
            }
            values.push(x[(o * len + best) * inner + i]);
            indices.push(best as f64);
        }
    }
    let (ov, oi) = (ctx.arg(args, 3)?, ctx.arg(args, 4)?);
    ctx.write_values(ov, &values)?;
    ctx.write_values(oi, &indices)
}

/// `aten::max.dim_max(self, dim, keepdim, max, max_indices)`.
pub fn max_dim(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    extreme_dim(ctx, args, true)
}

/// `aten::min.dim_min(self, dim, keepdim, min, min_indices)`.
pub fn min_dim(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    extreme_dim(ctx, args, false)
}

/// `aten::topk.values(self, k, dim, largest, sorted, values, indices)`: the `k` largest (or
/// smallest) of each line along `dim`, in order, ties by their index.
pub fn topk(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let k = usize::try_from(ctx.int(args, 1)?).map_err(|_| ctx.bad("negative k"))?;
    let d = ctx.dim(ctx.int(args, 2)?, input.shape.len())?;
    let largest = ctx.bool(args, 3)?;
    let (outer, len, inner) = lines(&input.shape, d);
    if k > len {
        return Err(ctx.bad(format!("k {k} is more than the dim's {len}")));
    }
    let x = input.buf.to_f64();
    let mut values = vec![0.0; outer * k * inner];
    let mut indices = vec![0.0; outer * k * inner];
    for o in 0..outer {
        for i in 0..inner {
            let mut order: Vec<usize> = (0..len).collect();
            let at = |j: usize| x[(o * len + j) * inner + i];
            order.sort_by(|&p, &q| {
                let (a, b) = (at(p), at(q));
                let c = if largest {
                    b.total_cmp(&a)
                } else {
                    a.total_cmp(&b)
                };
                c.then(p.cmp(&q))
            });
            for (r, &j) in order.iter().take(k).enumerate() {
                values[(o * k + r) * inner + i] = at(j);
                indices[(o * k + r) * inner + i] = j as f64;
            }
        }
    }
    let (ov, oi) = (ctx.arg(args, 5)?, ctx.arg(args, 6)?);
    ctx.write_values(ov, &values)?;
    ctx.write_values(oi, &indices)
}
