//! Fully connected and batch matrix multiplication: the linear layer's kernel sums on Helium
//! (its bias on the other paths), a batch matmul's right operand transposed.

use crate::dtype::ScalarType;
use crate::ir::{ArgData, Node, Storage};

use super::super::edit::{add_constant, make_node, meta, new_tensor, pos, tensor_arg};
use super::super::qparams::{quantize_multiplier, NodeQParams};
use super::super::scratch::{self};
use super::super::{Isa, LowerError, Module};
use super::build::*;

pub(super) fn linear(
    m: &mut Module,
    node: &Node,
    q: &NodeQParams,
    isa: Isa,
) -> Result<Replacement, LowerError> {
    let x = tensor_arg(node, 0).ok_or_else(|| bad(node, "no input tensor"))?;
    let weight =
        tensor_arg(node, pos(node, "weight")).ok_or_else(|| bad(node, "no weight tensor"))?;
    let bias = tensor_arg(node, pos(node, "bias"));
    let (inq, wq, outq) = (
        input_q(node, q, 0)?,
        input_q(node, q, 1)?,
        output_q(node, q)?,
    );
    if wq.zp() != 0 {
        return Err(bad(
            node,
            &format!(
                "cortex_m::quantized_linear assumes symmetric weights; weight_zp={}",
                wq.zp()
            ),
        ));
    }
    let (mult, shift) = quantize_multiplier(inq.scale() * wq.scale() / outq.scale());
    let (bias_arg, kernel_sum_arg) = if isa == Isa::Mve {
        let w = m
            .constant(weight)
            .ok_or_else(|| bad(node, "its weight is not a constant"))?;
        let [out_f, in_f] = w.shape[..] else {
            return Err(bad(
                node,
                &format!("its weight has sizes {:?}, not [out, in]", w.shape),
            ));
        };
        let wv = ints_of(w)?;
        if Some(wv.len()) != out_f.checked_mul(in_f) {
            return Err(bad(
                node,
                &format!("its weight holds {} values, not {out_f}×{in_f}", wv.len()),
            ));
        }
        let b = match bias {
            Some(b) => Some(ints_of(
                m.constant(b)
                    .ok_or_else(|| bad(node, "its bias is not a constant"))?,
            )?),
            None => None,
        };
        if let Some(b) = b.as_ref().filter(|b| b.len() != out_f) {
            return Err(bad(
                node,
                &format!("its bias holds {} values for {out_f} outputs", b.len()),
            ));
        }
        let input_offset = -inq.zp();
        let weight_offset = -wq.zp();
        let sums: Vec<i64> = (0..out_f)
            .map(|o| {
                let s: i64 = wv[o * in_f..(o + 1) * in_f]
                    .iter()
                    .map(|&v| (v + weight_offset) as i32 as i64)
                    .sum::<i64>() as i32 as i64;
                let mut k = (s.wrapping_mul(input_offset)) as i32 as i64;
                if let Some(b) = &b {
                    k = (k + b[o]) as i32 as i64;
                }
                k
            })
            .collect();
        let mut data = int32_tensor(&sums);
        data.shape = vec![1, out_f];
        let ks = add_constant(m, &format!("{}_kernel_sum", node.name), data);
        (ArgData::None, ArgData::Tensor(ks))
    } else {
        (bias.map_or(ArgData::None, ArgData::Tensor), ArgData::None)
    };
    let args = vec![
        ArgData::Tensor(x),
        ArgData::Tensor(weight),
        bias_arg,
        kernel_sum_arg,
        ArgData::Int(-inq.zp()),
        ArgData::Int(-wq.zp()),
        ArgData::Int(outq.zp()),
        ints(&[mult]),
        ints(&[shift]),
        ArgData::Int(outq.qmax),
        ArgData::Int(outq.qmin),
    ];
    Ok(single(m, node, "cortex_m::quantized_linear", args, None))
}

pub(super) fn bmm(
    m: &mut Module,
    node: &Node,
    q: &NodeQParams,
    isa: Isa,
) -> Result<Replacement, LowerError> {
    let (lq, rq, outq) = (
        input_q(node, q, 0)?,
        input_q(node, q, 1)?,
        output_q(node, q)?,
    );
    let (mult, shift) = quantize_multiplier(lq.scale() * rq.scale() / outq.scale());
    let lhs = tensor_arg(node, 0).ok_or_else(|| bad(node, "no left operand"))?;
    let rhs = tensor_arg(node, pos(node, "mat2")).ok_or_else(|| bad(node, "no right operand"))?;
    let mut helpers = Vec::new();
    let rhs_t = match m.constant(rhs).cloned() {
        Some(data) => add_constant(
            m,
            &format!("{}_rhs_transposed", node.name),
            permuted(&data, &[0, 2, 1])?,
        ),
        None => {
            let (dtype, shape) = meta(&m.graph, rhs);
            let [b, k, n] = <[i64; 3]>::try_from(shape.as_slice())
                .map_err(|_| bad(node, &format!("right operand of shape {shape:?}")))?;
            let name = node_name(m, "cortex_m::transpose");
            let v = new_tensor(
                &mut m.graph,
                &name,
                dtype.unwrap_or(ScalarType::Char),
                vec![b, n, k],
                Vec::new(),
                Storage::Unplanned,
            );
            helpers.push(make_node(
                &name,
                "cortex_m::transpose",
                "default",
                vec![ArgData::Tensor(rhs), ints(&[0, 2, 1])],
                vec![v],
            ));
            v
        }
    };
    // CMSIS-NN sizes the scratch as a fully connected layer's with the transposed rhs's rows
    let rhs_cols = meta(&m.graph, rhs_t).1.get(1).copied().unwrap_or(0);
    let (alloc_node, scratch_v) = alloc(m, scratch::fully_connected(isa, rhs_cols));
    helpers.push(alloc_node);
    let args = vec![
        ArgData::Tensor(lhs),
        ArgData::Int(-lq.zp()),
        ArgData::Tensor(rhs_t),
        ArgData::Int(-rq.zp()),
        ArgData::Int(outq.zp()),
        ArgData::Int(mult),
        ArgData::Int(shift),
        ArgData::Tensor(scratch_v),
    ];
    Ok(single(
        m,
        node,
        "cortex_m::quantized_batch_matmul",
        args,
        Some(helpers),
    ))
}
