//! Element-wise and activation calls: add/sub/mul/div requantization, softmax's fixed-point
//! input scaling, LUT activations.

use crate::dtype::ScalarType;
use crate::ir::{ArgData, Node, ValueId};
use crate::tensor::TensorData;

use super::super::edit::{add_constant, bool_arg, int_arg, op_name, pos, tensor_arg};
use super::super::qparams::{quantize_multiplier, NodeQParams, QuantArgs};
use super::super::{LowerError, Module};
use super::build::*;

/// CMSIS-NN's softmax input integer bits.
pub(super) const SOFTMAX_INPUT_INTEGER_BITS: i64 = 5;

/// `SHIFT_INT8`: the headroom of the add kernel's operands.
pub(super) const SHIFT_INT8: i64 = 20;

/// A binary element-wise call's two operands, the quantization of each, and its output's.
struct Binary<'q> {
    a: ValueId,
    b: ValueId,
    qa: &'q QuantArgs,
    qb: &'q QuantArgs,
    out: &'q QuantArgs,
}

fn binary<'q>(node: &Node, q: &'q NodeQParams) -> Result<Binary<'q>, LowerError> {
    let (qa, qb, out) = (
        input_q(node, q, 0)?,
        input_q(node, q, 1)?,
        output_q(node, q)?,
    );
    Ok(Binary {
        a: tensor_arg(node, 0).ok_or_else(|| bad(node, "no first operand"))?,
        b: tensor_arg(node, pos(node, "other")).ok_or_else(|| bad(node, "no second operand"))?,
        qa,
        qb,
        out,
    })
}

/// `quantized_mul` and `quantized_div`: both operands with their zero points, the output's zero
/// point, then the call's own requantization arguments.
fn mul_div(
    m: &mut Module,
    node: &Node,
    op: &Binary<'_>,
    target: &str,
    tail: Vec<ArgData>,
) -> Replacement {
    let mut args = vec![
        ArgData::Tensor(op.a),
        ArgData::Int(op.qa.zp()),
        ArgData::Tensor(op.b),
        ArgData::Int(op.qb.zp()),
        ArgData::Int(op.out.zp()),
    ];
    args.extend(tail);
    single(m, node, target, args, None)
}

pub(super) fn activation(
    m: &mut Module,
    node: &Node,
    q: &NodeQParams,
) -> Result<Replacement, LowerError> {
    let f = super::super::lut::function(op_name(node)).ok_or_else(|| bad(node, "no function"))?;
    let (inq, outq) = (input_q(node, q, 0)?, output_q(node, q)?);
    let table = super::super::lut::build(f, inq.scale(), inq.zp(), outq.scale(), outq.zp())
        .ok_or_else(|| bad(node, "the function is undefined on every int8 input"))?;
    let x = tensor_arg(node, 0).ok_or_else(|| bad(node, "no input tensor"))?;
    let lut = add_constant(
        m,
        &format!("{}_lut", node.name),
        TensorData {
            dtype: ScalarType::Char,
            shape: vec![256],
            bytes: table.iter().map(|&v| v as u8).collect(),
        },
    );
    Ok(single(
        m,
        node,
        "cortex_m::quantized_activation",
        vec![ArgData::Tensor(x), ArgData::Tensor(lut)],
        None,
    ))
}

pub(super) fn softmax(
    m: &mut Module,
    node: &Node,
    q: &NodeQParams,
) -> Result<Option<Replacement>, LowerError> {
    if bool_arg(node, pos(node, "half_to_float")) == Some(true) {
        return Ok(None);
    }
    let x = tensor_arg(node, 0).ok_or_else(|| bad(node, "no input tensor"))?;
    let dim = int_arg(node, pos(node, "dim")).ok_or_else(|| bad(node, "no dim"))?;
    let (inq, outq) = (input_q(node, q, 0)?, output_q(node, q)?);
    if (outq.scale() - 1.0 / 256.0).abs() > 1e-12 || outq.zp() != -128 {
        return Err(bad(
            node,
            &format!(
                "softmax output must be quantized with CMSIS-NN's scale 1/256 and zero point -128; got {} and {}",
                outq.scale(),
                outq.zp()
            ),
        ));
    }
    let real =
        (inq.scale() * (1u64 << (31 - SOFTMAX_INPUT_INTEGER_BITS)) as f64).min(f64::from(i32::MAX));
    let (mult, shift) = quantize_multiplier(real);
    let term = ((1i64 << SOFTMAX_INPUT_INTEGER_BITS) - 1) as f64
        * 2f64.powi((31 - SOFTMAX_INPUT_INTEGER_BITS) as i32)
        / 2f64.powi(shift as i32);
    let diff_min = -(term.floor() as i64);
    let args = vec![
        ArgData::Tensor(x),
        ArgData::Int(dim),
        ArgData::Int(inq.zp()),
        ArgData::Int(outq.zp()),
        ArgData::Int(mult),
        ArgData::Int(shift),
        ArgData::Int(diff_min),
    ];
    Ok(Some(single(m, node, "cortex_m::softmax", args, None)))
}

pub(super) fn add(m: &mut Module, node: &Node, q: &NodeQParams) -> Result<Replacement, LowerError> {
    let alpha = match node.args.get(pos(node, "alpha")).map(|a| &a.data) {
        None => 1,
        Some(ArgData::Int(a)) => *a,
        Some(ArgData::Float(f)) if f.fract() == 0.0 => *f as i64,
        Some(other) => {
            return Err(bad(
                node,
                &format!("alpha {other:?}: quantized_add can only express an integer one"),
            ))
        }
    };
    let is_sub = op_name(node) == "aten::sub";
    let op = binary(node, q)?;
    let (q1, q2, outq) = (op.qa, op.qb, op.out);
    let coefficient = if is_sub { -alpha } else { alpha };
    let s1 = q1.scale();
    let s2 = coefficient.unsigned_abs() as f64 * q2.scale();
    let max2 = 2.0 * s1.max(s2);
    let (m1, sh1) = quantize_multiplier(s1 / max2);
    let (mut m2, sh2) = quantize_multiplier(s2 / max2);
    if coefficient < 0 {
        m2 = -m2;
    }
    let (mo, sho) = quantize_multiplier(max2 / (outq.scale() * (1i64 << SHIFT_INT8) as f64));
    if sho > 0 {
        let span = |a: &QuantArgs| [a.qmin - a.zp(), a.qmax - a.zp()];
        let sign = if coefficient < 0 { -1.0 } else { 1.0 };
        let mut worst: f64 = 0.0;
        for d1 in span(q1) {
            for d2 in span(q2) {
                worst = worst.max((d1 as f64 * s1 + sign * d2 as f64 * s2).abs());
            }
        }
        if worst * (1i64 << SHIFT_INT8) as f64 / max2 * 2f64.powi(sho as i32) >= 2f64.powi(31) {
            return Err(bad(
                node,
                "the output scale needs a requantization the int32 kernel cannot hold",
            ));
        }
    }
    let args = vec![
        ArgData::Tensor(op.a),
        ArgData::Int(q1.zp()),
        ArgData::Int(m1),
        ArgData::Int(sh1),
        ArgData::Tensor(op.b),
        ArgData::Int(q2.zp()),
        ArgData::Int(m2),
        ArgData::Int(sh2),
        ArgData::Int(outq.zp()),
        ArgData::Int(mo),
        ArgData::Int(sho),
        ArgData::Int(outq.qmin),
        ArgData::Int(outq.qmax),
    ];
    Ok(single(m, node, "cortex_m::quantized_add", args, None))
}

pub(super) fn mul(m: &mut Module, node: &Node, q: &NodeQParams) -> Result<Replacement, LowerError> {
    let op = binary(node, q)?;
    let (mo, sho) = quantize_multiplier(op.qa.scale() * op.qb.scale() / op.out.scale());
    let tail = vec![ArgData::Int(mo), ArgData::Int(sho)];
    Ok(mul_div(m, node, &op, "cortex_m::quantized_mul", tail))
}

pub(super) fn div(m: &mut Module, node: &Node, q: &NodeQParams) -> Result<Replacement, LowerError> {
    let op = binary(node, q)?;
    // no fixed-point division in CMSIS-NN: the kernel divides in float by this scale
    let effective_scale = op.qa.scale() / (op.qb.scale() * op.out.scale());
    let tail = vec![ArgData::Float(effective_scale)];
    Ok(mul_div(m, node, &op, "cortex_m::quantized_div", tail))
}
