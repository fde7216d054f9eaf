//! ExecuTorch's portable math kernels: unary functions (`exp`, `log`, trigonometry, rounding,
//! `abs`, `neg`, predicates), activations (`elu`, `leaky_relu`, `_log_softmax`), and binary ones
//! (`atan2`, `pow`, `fmod`, `remainder`, division with a rounding mode, logical and bitwise
//! operators), with broadcasting. Values are computed in double and stored in the out tensor's
//! type, as the portable kernels compute on their common type and cast; a float32 operation on
//! float32 operands rounds to float32 (within one unit in the last place of the kernel's).

use crate::kernels::cmsis::ops::out_of;
use crate::kernels::ctx::Ctx;
use crate::kernels::libm::{Binary, Function};
use crate::kernels::portable::tensor::{broadcast_operands, operand};
use crate::kernels::value::{Buf, HostTensor};
use crate::kernels::RuntimeError;

type R = Result<(), RuntimeError>;

/// `op.out(self, out)`: `f` of every element, stored in the out tensor's type.
pub fn unary(ctx: &mut Ctx<'_>, args: &[usize], f: impl Fn(f64) -> f64) -> R {
    let input = ctx.shared(args, 0)?;
    let o = out_of(ctx, args)?;
    let like = ctx.out_like(o)?;
    ctx.charge(&[input.buf.len()])?;
    let values: Vec<f64> = input.buf.to_f64().into_iter().map(f).collect();
    ctx.write(o, input.shape.clone(), Buf::from_f64_like(&like, &values))
}

/// `op.out(self, out)` of a `<math.h>` function, as ExecuTorch's
/// `unary_ufunc_realhbbf16_to_floathbf16` calls it: a float64 input through the double-precision
/// function, any other through the single-precision one (`sinf`, `expf`, ...) on the value cast to
/// float, both the device's C library's.
pub fn unary_libm(ctx: &mut Ctx<'_>, args: &[usize], function: Function) -> R {
    let input = ctx.shared(args, 0)?;
    if matches!(input.buf, Buf::F64(_)) {
        let f = ctx.libm_f64(function)?;
        return unary(ctx, args, f);
    }
    let f = ctx.libm_f32(function)?;
    unary(ctx, args, move |x| f64::from(f(x as f32)))
}

/// `aten::rsqrt.out(self, out)`: ExecuTorch's `1.0 / std::sqrt(x)`, the square root in the
/// input's precision (float for all but float64) and the division in double.
pub fn rsqrt(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    if matches!(input.buf, Buf::F64(_)) {
        let sqrt = ctx.libm_f64(Function::Sqrt)?;
        return unary(ctx, args, move |x| 1.0 / sqrt(x));
    }
    let sqrt = ctx.libm_f32(Function::Sqrt)?;
    unary(ctx, args, move |x| 1.0 / f64::from(sqrt(x as f32)))
}

/// `op.out(self, other, out)` of a two-argument `<math.h>` function (`pow`, `atan2`), broadcasting:
/// a float32 result from the single-precision function on float32 operands, as ExecuTorch's
/// `executorch::math::pow`/`atan2` on a float compute type; other types in double (exact for
/// integer results, whatever the library).
pub fn binary_libm(ctx: &mut Ctx<'_>, args: &[usize], function: Binary) -> R {
    let o = out_of(ctx, args)?;
    let like = ctx.out_like(o)?;
    if matches!(like, Buf::F32(_)) {
        let f = ctx.libm_f32_binary(function)?;
        return binary(ctx, args, move |x, y| f64::from(f(x as f32, y as f32)));
    }
    let f = binary_f64_for(ctx, &like, function)?;
    binary(ctx, args, f)
}

/// The double-precision `function` for a result that is not float32: the device library's for
/// a float64 one; for an integer `pow` the host's (exact whatever the library: an integer result
/// is representable, and every `pow` returns it).
fn binary_f64_for(
    ctx: &Ctx<'_>,
    like: &Buf,
    function: Binary,
) -> Result<fn(f64, f64) -> f64, RuntimeError> {
    match function {
        Binary::Pow if !matches!(like, Buf::F64(_)) => Ok(f64::powf),
        _ => ctx.libm_f64_binary(function),
    }
}

/// `op.out(self, out)` with a bool out tensor.
pub fn predicate(ctx: &mut Ctx<'_>, args: &[usize], f: impl Fn(f64) -> bool) -> R {
    unary(ctx, args, |x| f64::from(u8::from(f(x))))
}

/// `op.out(self, other, out)` (and `.Scalar_out`), broadcasting.
pub fn binary(ctx: &mut Ctx<'_>, args: &[usize], f: impl Fn(f64, f64) -> f64) -> R {
    let (a, b) = (ctx.shared(args, 0)?, operand(ctx, args, 1)?);
    let o = out_of(ctx, args)?;
    let (shape, x, y) = broadcast_operands(ctx, &a, &b, o)?;
    let like = ctx.out_like(o)?;
    let float32 = matches!(like, Buf::F32(_));
    let values: Vec<f64> = x
        .iter()
        .zip(&y)
        .map(|(&p, &q)| {
            if float32 {
                // float32 operands, a float32 result
                f64::from(f(f64::from(p as f32), f64::from(q as f32)) as f32)
            } else {
                f(p, q)
            }
        })
        .collect();
    ctx.write(o, shape, Buf::from_f64_like(&like, &values))
}

/// `aten::pow.Scalar_out(self: Scalar, exponent: Tensor, out)`.
pub fn pow_scalar_base(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let base = ctx.double(args, 0)?;
    let exponent = ctx.shared(args, 1)?;
    let o = out_of(ctx, args)?;
    let like = ctx.out_like(o)?;
    let values: Vec<f64> = if matches!(like, Buf::F32(_)) {
        let powf = ctx.libm_f32_binary(Binary::Pow)?;
        exponent
            .buf
            .to_f64()
            .into_iter()
            .map(|e| f64::from(powf(base as f32, e as f32)))
            .collect()
    } else {
        let pow = binary_f64_for(ctx, &like, Binary::Pow)?;
        exponent
            .buf
            .to_f64()
            .into_iter()
            .map(|e| pow(base, e))
            .collect()
    };
    ctx.write(
        o,
        exponent.shape.clone(),
        Buf::from_f64_like(&like, &values),
    )
}

/// `aten::div.out_mode(self, other, *, rounding_mode, out)` (and `Scalar_mode_out`):
/// `"trunc"` or `"floor"` rounds the quotient as `floor_divide` does, in the operands' common
/// type; `None` is true division.
pub fn div_mode(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let mode = match ctx.values.get(ctx.arg(args, 2)?) {
        Some(crate::kernels::value::RValue::String(s)) => s.clone(),
        _ => String::new(),
    };
    match mode.as_str() {
        "trunc" => rounded_quotient(ctx, args, Rounding::Trunc),
        "floor" => rounded_quotient(ctx, args, Rounding::Floor),
        "" => binary(ctx, args, |a, b| a / b),
        other => Err(ctx.bad(format!("rounding mode {other:?}"))),
    }
}

/// `aten::remainder.Tensor_out` / `Scalar_out` as ExecuTorch's portable kernel computes it
/// (`utils::remainder_override`), which is not PyTorch's for every type: integers get C's
/// truncated `a % b` (the dividend's sign, so `-6 % 46` is -6 where PyTorch says 40; a zero
/// divisor fails the call), floats `fmod` then the divisor added when the signs differ, all in
/// float32 — a float64 remainder too is rounded to float32 on the way.
pub fn remainder_kernel(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let o = out_of(ctx, args)?;
    let like = ctx.out_like(o)?;
    if !matches!(like, Buf::F32(_) | Buf::F64(_)) {
        return integer_division(ctx, args, "remainder: integer division by zero", |x, y| {
            x % y
        });
    }
    binary(ctx, args, |a, b| {
        let mut rem = (a % b) as f32;
        if ((a < 0.0) != (b < 0.0)) && rem != 0.0 {
            rem = (f64::from(rem) + b) as f32;
        }
        f64::from(rem)
    })
}

/// `aten::elu.out(self, alpha, scale, input_scale, out)`.
pub fn elu(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let (alpha, scale, input_scale) = (
        ctx.double(args, 1)?,
        ctx.double(args, 2)?,
        ctx.double(args, 3)?,
    );
    // ExecuTorch: `x <= 0 ? expm1(x · input_scale) · (alpha · scale) : x · scale` in the
    // tensor's type
    let input = ctx.shared(args, 0)?;
    if matches!(input.buf, Buf::F64(_)) {
        let expm1 = ctx.libm_f64(Function::Expm1)?;
        let negcoef = alpha * scale;
        return unary(ctx, args, move |x| {
            if x <= 0.0 {
                expm1(x * input_scale) * negcoef
            } else {
                x * scale
            }
        });
    }
    let expm1 = ctx.libm_f32(Function::Expm1)?;
    let (alpha, scale, input_scale) = (alpha as f32, scale as f32, input_scale as f32);
    let negcoef = alpha * scale;
    unary(ctx, args, move |x| {
        let x = x as f32;
        f64::from(if x <= 0.0 {
            expm1(x * input_scale) * negcoef
        } else {
            x * scale
        })
    })
}

/// `aten::leaky_relu.out(self, negative_slope, out)`.
pub fn leaky_relu(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let slope = ctx.double(args, 1)?;
    // ExecuTorch: the slope cast to the tensor's type, the product in it
    if matches!(ctx.shared(args, 0)?.buf, Buf::F32(_)) {
        let slope = slope as f32;
        return unary(ctx, args, move |x| {
            let x = x as f32;
            f64::from(if x >= 0.0 { x } else { x * slope })
        });
    }
    unary(ctx, args, move |x| if x >= 0.0 { x } else { x * slope })
}

/// `aten::_log_softmax.out(self, dim, half_to_float, out)`: `x − max − log Σ exp(x − max)`
/// along `dim`.
pub fn log_softmax(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let d = ctx.dim(ctx.int(args, 1)?, input.shape.len())?;
    let size = input.shape.get(d).copied().unwrap_or(1);
    // a 0-dim tensor is one line of one element
    let inner: usize = input.shape.get(d + 1..).map_or(1, |s| s.iter().product());
    let outer: usize = input.shape.get(..d).map_or(1, |s| s.iter().product());
    let x = input.buf.to_f64();
    let mut out = vec![0.0; x.len()];
    ctx.charge(&[outer, inner, size])?;
    // ExecuTorch: max, Σ exp(x − max) and its log in the tensor's type (float for float32)
    let float32 = !matches!(input.buf, Buf::F64(_));
    let f32_fns = if float32 {
        Some((ctx.libm_f32(Function::Exp)?, ctx.libm_f32(Function::Log)?))
    } else {
        None
    };
    let f64_fns = if float32 {
        None
    } else {
        Some((ctx.libm_f64(Function::Exp)?, ctx.libm_f64(Function::Log)?))
    };
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * size + k) * inner + i;
            if let Some((expf, logf)) = f32_fns {
                let max = (0..size)
                    .map(|k| x[at(k)] as f32)
                    .fold(f32::NEG_INFINITY, f32::max);
                let mut sum = 0f32;
                for k in 0..size {
                    sum += expf(x[at(k)] as f32 - max);
                }
                let log_sum = logf(sum);
                for k in 0..size {
                    out[at(k)] = f64::from(x[at(k)] as f32 - max - log_sum);
                }
            } else if let Some((exp, log)) = f64_fns {
                let max = (0..size)
                    .map(|k| x[at(k)])
                    .fold(f64::NEG_INFINITY, f64::max);
                let sum: f64 = (0..size).map(|k| exp(x[at(k)] - max)).sum();
                let log_sum = log(sum);
                for k in 0..size {
                    out[at(k)] = x[at(k)] - max - log_sum;
                }
            }
        }
    }
    let o = out_of(ctx, args)?;
    let like = ctx.out_like(o)?;
    ctx.write(o, input.shape.clone(), Buf::from_f64_like(&like, &out))
}

/// `aten::scalar_tensor.out(s, out)`: a 0-d tensor holding `s`.
pub fn scalar_tensor(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let v = ctx.double(args, 0)?;
    fill_with(ctx, args, v)
}

/// Bitwise operators on integer values held in doubles (exact below 2^53).
pub fn bits(a: f64, b: f64, op: fn(i64, i64) -> i64) -> f64 {
    op(a as i64, b as i64) as f64
}

/// Python's `round`: halves to even, as `std::nearbyint` in the default rounding mode.
pub fn round_half_even(x: f64) -> f64 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 {
        2.0 * (x / 2.0).round()
    } else {
        r
    }
}

/// `aten::rsub.Scalar_out(self, other, alpha, out)`: `other − alpha·self`.
pub fn rsub(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let alpha = ctx.double(args, 2)?;
    if matches!(ctx.out_like(out_of(ctx, args)?)?, Buf::F32(_)) {
        // in float32 steps, alpha cast to float first, as the kernel's `val_b - val_alpha * val_a`
        let alpha = alpha as f32;
        return binary(ctx, args, move |a, b| {
            f64::from(b as f32 - alpha * a as f32)
        });
    }
    binary(ctx, args, move |a, b| b - alpha * a)
}

/// `aten::floor_divide.out(self, other, out)`: the quotient rounded down.
pub fn floor_divide(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    rounded_quotient(ctx, args, Rounding::Floor)
}

/// How a rounded quotient rounds.
#[derive(Clone, Copy)]
enum Rounding {
    /// `std::trunc(a / b)`.
    Trunc,
    /// `utils::floor_divide(a, b)`.
    Floor,
}

/// The type `floor_divide.out` and `div.out_mode` compute in: `promoteTypes` of the tensors'
/// dtypes (a double tensor, 0-dim or not, makes it double; a scalar operand only lifts an
/// integer tensor to float32), as ExecuTorch's kernels choose it.
#[derive(Clone, Copy, PartialEq)]
enum ComputeType {
    Integer,
    F32,
    F64,
}

fn compute_type(ctx: &Ctx<'_>, args: &[usize]) -> Result<ComputeType, RuntimeError> {
    use crate::kernels::value::RValue;
    let a = ctx.shared(args, 0)?;
    let b = match ctx.values.get(ctx.arg(args, 1)?) {
        Some(RValue::Tensor(t)) => Some(std::sync::Arc::clone(t)),
        _ => None,
    };
    let float_scalar =
        b.is_none() && matches!(ctx.values.get(ctx.arg(args, 1)?), Some(RValue::Double(_)));
    let tensors: Vec<&HostTensor> = std::iter::once(&*a).chain(b.as_deref()).collect();
    // `promoteTypes` of the tensors' dtypes: a 0-dim double tensor makes it double too (no
    // PyTorch 0-dim rule in ExecuTorch's kernels)
    Ok(if tensors.iter().any(|t| matches!(t.buf, Buf::F64(_))) {
        ComputeType::F64
    } else if float_scalar
        || tensors
            .iter()
            .any(|t| matches!(t.buf, Buf::F32(_) | Buf::F64(_)))
    {
        ComputeType::F32
    } else {
        ComputeType::Integer
    })
}

/// `a / b` rounded by `rounding` in the operands' compute type, as the portable kernels'
/// `div.out_mode` and `floor_divide.out` compute it: integers exactly (a zero divisor fails the
/// call), floats in their own precision, floor as Python's `(a − fmod(a, b)) / b`, one less
/// where the remainder's sign differs from the divisor's, and `±∞` (the sign of `a`) for a zero
/// divisor.
fn rounded_quotient(ctx: &mut Ctx<'_>, args: &[usize], rounding: Rounding) -> R {
    match (compute_type(ctx, args)?, rounding) {
        (ComputeType::F64, Rounding::Floor) => binary(ctx, args, floor_divide_f64),
        (ComputeType::F64, Rounding::Trunc) => binary(ctx, args, |p, q| (p / q).trunc()),
        (ComputeType::F32, Rounding::Floor) => binary(ctx, args, |p, q| {
            f64::from(floor_divide_f32(p as f32, q as f32))
        }),
        (ComputeType::F32, Rounding::Trunc) => {
            binary(ctx, args, |p, q| f64::from((p as f32 / q as f32).trunc()))
        }
        (ComputeType::Integer, _) => {
            integer_division(ctx, args, "integer division by zero", |p, q| {
                let (p, q) = (p as i64, q as i64);
                let quotient = p.wrapping_div(q);
                let exact = p.wrapping_rem(q) == 0;
                let floor = matches!(rounding, Rounding::Floor) && (p < 0) != (q < 0) && !exact;
                (if floor { quotient - 1 } else { quotient }) as f64
            })
        }
    }
}

/// `binary` over integer operands, `f` given a non-zero divisor: a zero divisor anywhere fails
/// the call with `refusal`, as the portable kernels check it.
fn integer_division(
    ctx: &mut Ctx<'_>,
    args: &[usize],
    refusal: &str,
    f: impl Fn(f64, f64) -> f64,
) -> R {
    let divided_by_zero = std::cell::Cell::new(false);
    binary(ctx, args, |x, y| {
        if y == 0.0 {
            divided_by_zero.set(true);
            return 0.0;
        }
        f(x, y)
    })?;
    if divided_by_zero.get() {
        return Err(ctx.bad(refusal));
    }
    Ok(())
}

/// `utils::floor_divide` for each float type, in that type's arithmetic.
macro_rules! floor_divide_in {
    ($name:ident, $f:ty) => {
        fn $name(a: $f, b: $f) -> $f {
            if b == 0.0 {
                return if a.is_sign_negative() {
                    <$f>::NEG_INFINITY
                } else {
                    <$f>::INFINITY
                };
            }
            let m = a % b;
            let div = (a - m) / b;
            if m != 0.0 && b.is_sign_negative() != m.is_sign_negative() {
                div - 1.0
            } else {
                div
            }
        }
    };
}
floor_divide_in!(floor_divide_f32, f32);
floor_divide_in!(floor_divide_f64, f64);

/// The out tensor filled with `v`.
fn fill_with(ctx: &mut Ctx<'_>, args: &[usize], v: f64) -> R {
    let o = out_of(ctx, args)?;
    let n = ctx.out_len(&ctx.out_shape(o)?)?;
    ctx.write_values(o, &vec![v; n])
}

/// `aten::zeros.out(size, out)`.
pub fn zeros(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    fill_with(ctx, args, 0.0)
}

/// `aten::ones.out(size, out)`.
pub fn ones(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    fill_with(ctx, args, 1.0)
}

/// `aten::fill.Scalar_out(self, value, out)`.
pub fn fill(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let v = ctx.double(args, 1)?;
    fill_with(ctx, args, v)
}

/// `aten::fill.Tensor_out(self, value, out)`: every element the 0-d tensor `value`.
pub fn fill_tensor(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let v = ctx.tensor(args, 1)?.buf.to_f64();
    let v = *v
        .first()
        .ok_or_else(|| ctx.bad("the fill value is an empty tensor"))?;
    fill_with(ctx, args, v)
}

/// Shifts as the portable kernels compute them on integers: `a << b` and `a >> b`
/// (arithmetic), a shift past the width giving 0 (or the sign, shifting right).
pub fn shift_left(a: i64, b: i64) -> i64 {
    u32::try_from(b)
        .ok()
        .and_then(|b| a.checked_shl(b))
        .unwrap_or(0)
}

/// See [`shift_left`].
pub fn shift_right(a: i64, b: i64) -> i64 {
    u32::try_from(b)
        .ok()
        .and_then(|b| a.checked_shr(b))
        .unwrap_or(if a < 0 { -1 } else { 0 })
}

/// `aten::logit.out(self, eps?, out)`: `log(x / (1 − x))`, `x` clamped to `[eps, 1 − eps]`
/// when `eps` is given.
pub fn logit(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let eps = ctx.opt_double(args, 1)?;
    // ExecuTorch: `xi = (CTYPE_OUT) x`, compared with the double `eps` and `1 - eps` (assigned
    // back rounded), then `log(xi / (1 - xi))` in the out type
    let out = out_of(ctx, args)?;
    if matches!(ctx.out_like(out)?, Buf::F32(_)) {
        let logf = ctx.libm_f32(Function::Log)?;
        return unary(ctx, args, move |x| {
            let mut xi = x as f32;
            if let Some(e) = eps {
                if f64::from(xi) < e {
                    xi = e as f32;
                } else if f64::from(xi) > 1.0 - e {
                    xi = (1.0 - e) as f32;
                }
            }
            f64::from(logf(xi / (1.0 - xi)))
        });
    }
    let log = ctx.libm_f64(Function::Log)?;
    unary(ctx, args, move |x| {
        let x = match eps {
            Some(e) if x < e => e,
            Some(e) if x > 1.0 - e => 1.0 - e,
            _ => x,
        };
        log(x / (1.0 - x))
    })
}

/// `aten::glu.out(self, dim, out)`: the first half along `dim` times the sigmoid of the second.
pub fn glu(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let d = ctx.dim(ctx.int(args, 1)?, input.shape.len())?;
    let size = input.shape[d];
    if size % 2 != 0 {
        return Err(ctx.bad(format!("glu halves dim {d} of odd size {size}")));
    }
    let (outer, inner): (usize, usize) = (
        input.shape[..d].iter().product(),
        input.shape[d + 1..].iter().product(),
    );
    let half = size / 2;
    let x = input.buf.to_f64();
    // ExecuTorch: `a * (1 / (1 + exp(-b)))` in the input's floating type (float for others)
    let gate: Box<dyn Fn(f64, f64) -> f64> = if matches!(input.buf, Buf::F64(_)) {
        let exp = ctx.libm_f64(Function::Exp)?;
        Box::new(move |a, b| a * (1.0 / (1.0 + exp(-b))))
    } else {
        let expf = ctx.libm_f32(Function::Exp)?;
        Box::new(move |a, b| f64::from((a as f32) * (1.0 / (1.0 + expf(-(b as f32))))))
    };
    let mut values = Vec::with_capacity(x.len() / 2);
    for o in 0..outer {
        for k in 0..half {
            for i in 0..inner {
                let a = x[(o * size + k) * inner + i];
                let b = x[(o * size + half + k) * inner + i];
                values.push(gate(a, b));
            }
        }
    }
    let o = out_of(ctx, args)?;
    let shape = ctx.out_shape(o)?;
    let like = ctx.out_like(o)?;
    ctx.write(o, shape, Buf::from_f64_like(&like, &values))
}

/// `aten::clamp.Tensor_out(self, min?, max?, out)`: bounds as tensors, all three broadcast.
pub fn clamp_tensor(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    use crate::kernels::layout::{broadcast_index, broadcast_shape};
    let x = ctx.shared(args, 0)?;
    let lo = ctx.opt_tensor(args, 1)?.cloned();
    let hi = ctx.opt_tensor(args, 2)?.cloned();
    let o = out_of(ctx, args)?;
    let shape = ctx.out_shape(o)?;
    let mut all = x.shape.clone();
    for t in [&lo, &hi].into_iter().flatten() {
        all = broadcast_shape(&all, &t.shape).ok_or_else(|| ctx.bad("bounds do not broadcast"))?;
    }
    if all != shape {
        return Err(ctx.bad(format!(
            "clamp broadcasts to {all:?}, the out tensor is {shape:?}"
        )));
    }
    let pick = |t: &crate::kernels::value::HostTensor| {
        let v = t.buf.to_f64();
        broadcast_index(&t.shape, &shape)
            .into_iter()
            .map(move |i| v[i])
            .collect::<Vec<f64>>()
    };
    let xv = pick(&x);
    let (lv, hv) = (lo.as_ref().map(pick), hi.as_ref().map(pick));
    let values: Vec<f64> = (0..xv.len())
        .map(|i| {
            let mut v = xv[i];
            if let Some(l) = &lv {
                v = if v.is_nan() { v } else { v.max(l[i]) };
            }
            if let Some(h) = &hv {
                v = if v.is_nan() { v } else { v.min(h[i]) };
            }
            v
        })
        .collect();
    let like = ctx.out_like(o)?;
    ctx.write(o, shape, Buf::from_f64_like(&like, &values))
}

/// `hardswish(x) = x · min(max(x + 3, 0), 6) / 6` in float, in ATen's order (the Cortex-M
/// quantizer keeps it as one op in the Q/DQ edge graph; ExecuTorch's portable library has no
/// kernel for it, so ATen's CPU kernel is what runs it).
pub fn hardswish_f32(x: f32) -> f32 {
    x * (x + 3.0).clamp(0.0, 6.0) / 6.0
}

/// `hardsigmoid(x) = min(max(x + 3, 0), 6) / 6` in float, as ATen computes it.
pub fn hardsigmoid_f32(x: f32) -> f32 {
    (x + 3.0).clamp(0.0, 6.0) / 6.0
}

#[cfg(test)]
mod tests {
    #[test]
    fn hardswish_and_hardsigmoid_equal_pytorchs_bit_for_bit() {
        // torch 2.13.0+cu130: F.hardswish / F.hardsigmoid on these float32 inputs
        let x: [u32; 12] = [
            0xc0800000, 0xc0400000, 0xbfc00000, 0xbe99999a, 0x00000000, 0x3f333333, 0x3f800000,
            0x4039999a, 0x40400000, 0x40b00000, 0x3a83126f, 0xc03fef9e,
        ];
        let swish: [u32; 12] = [
            0x80000000, 0x80000000, 0xbec00000, 0xbe0a3d71, 0x00000000, 0x3edd0369, 0x3f2aaaab,
            0x403681b5, 0x40400000, 0x40b00000, 0x3a031d9e, 0xba0304d1,
        ];
        let sigmoid: [u32; 12] = [
            0x00000000, 0x00000000, 0x3e800000, 0x3ee66667, 0x3f000000, 0x3f1dddde, 0x3f2aaaab,
            0x3f7bbbbc, 0x3f800000, 0x3f800000, 0x3f000aec, 0x392ec000,
        ];
        for k in 0..12 {
            let v = f32::from_bits(x[k]);
            assert_eq!(
                super::hardswish_f32(v).to_bits(),
                swish[k],
                "hardswish({v})"
            );
            assert_eq!(
                super::hardsigmoid_f32(v).to_bits(),
                sigmoid[k],
                "hardsigmoid({v})"
            );
        }
    }
    use super::*;

    #[test]
    fn rounding_and_bits_follow_the_portable_kernels() {
        let r: Vec<f64> = [0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6]
            .iter()
            .map(|&x| round_half_even(x))
            .collect();
        assert_eq!(r, [0.0, 2.0, 2.0, -0.0, -2.0, 2.0, -3.0]);
        assert_eq!(bits(6.0, 3.0, |a, b| a & b), 2.0);
    }
}
