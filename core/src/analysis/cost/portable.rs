//! ExecuTorch's portable kernels (plain C++ loops, every float operation on the FPU, or on the
//! soft-float library on cores without one): priced per element or per MAC by the operator's
//! category in the registry. A coarser model than the CMSIS-NN paths; the row says so.
//!
//! Their constant operands are read where they sit like CMSIS-NN's weights: the portable
//! convolution and matmul loops load one weight element per MAC (no reuse in registers), an
//! elementwise or copy loop one constant element per output element.

use super::mix::Mix;
use super::{Priced, Pricer};
use crate::dtype::ScalarType;
use crate::ir::call::CallView;
use crate::ir::Storage;
use crate::ops::Category;

/// Loop overhead of one element of a portable elementwise loop (index, loads, store).
const ELEMENT: Mix = Mix::scalar(6.0, 2.0, 1.0, 0.0, 1.0);
/// One MAC of the portable convolution or matmul loops (index arithmetic, two loads).
const MAC: Mix = Mix::scalar(5.0, 2.0, 0.0, 1.0, 1.0);
/// One element of a copy (permute, cat, slice: an index computation per element).
const MOVE: Mix = Mix::scalar(4.0, 1.0, 1.0, 0.5, 0.5);

/// Operators whose portable kernel calls a C library function per element (`expf`, `tanhf`,
/// `logf`, `powf`, …), by base name: `aten::tanh.out` is one, `aten::hardtanh.out` (a clamp),
/// `hardsigmoid` and `logical_and` are not.
const TRANSCENDENTAL: &[&str] = &[
    "exp",
    "exp2",
    "expm1",
    "log",
    "log1p",
    "log2",
    "log10",
    "logit",
    "tanh",
    "sigmoid",
    "silu",
    "gelu",
    "elu",
    "glu",
    "softplus",
    "erf",
    "erfinv",
    "pow",
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "atan2",
    "sinh",
    "cosh",
    "asinh",
    "acosh",
    "atanh",
    "softmax",
    "_softmax",
    "log_softmax",
    "_log_softmax",
    "fmod",
    "remainder",
];

fn transcendental(op: &str) -> bool {
    // an in-place `tanh_` as `tanh`
    TRANSCENDENTAL.contains(&crate::ops::base_name(op).trim_end_matches('_'))
}

/// The length of the sum behind one output element (MACs = outputs × this), from the operands
/// the operator's schema names: a matrix product's shared dimension (`addmm`: `mat1`'s last,
/// `baddbmm`: `batch1`'s, `linear`: `weight`'s, `mm`/`bmm`/`matmul`: `self`'s), a convolution's
/// weight elements per output channel (in-channels ÷ groups × kernel).
fn reduction(call: &CallView<'_>, category: Category) -> Option<usize> {
    let last = |name: &str| {
        call.tensor(name)
            .and_then(|t| t.shape.last())
            .and_then(|&d| usize::try_from(d).ok())
    };
    match category {
        Category::Linear => last("mat1")
            .or_else(|| last("batch1"))
            .or_else(|| last("weight"))
            .or_else(|| last("self")),
        _ => call.tensors().get(1).and_then(|t| {
            let n = t.elements()?;
            let o = usize::try_from(*t.shape.first()?).ok()?;
            n.checked_div(o)
        }),
    }
}

/// A portable kernel call in `category`.
pub fn price(p: &Pricer, call: &CallView<'_>, category: Category) -> Priced {
    let op = call.op();
    let ts = call.tensors();
    // a convolution or matmul's MACs count its output (its out argument, last); anything else
    // by its largest operand: an op with several outputs (batch norm's mean and invstd) lists
    // small tensors last
    let out_elems = match category {
        Category::Convolution | Category::Linear => ts.last().and_then(|t| t.elements()),
        _ => ts.iter().filter_map(|t| t.elements()).max(),
    }
    .unwrap_or(0) as f64;
    let float = ts
        .last()
        .is_some_and(|t| t.dtype == Some(ScalarType::Float));
    let fop = if float { p.timing.float_op } else { 0.0 };
    // the widest constant operand (a weight, not its bias), read once per MAC or per output
    let constant_element = ts
        .iter()
        .take(ts.len().saturating_sub(1))
        .filter(|t| t.storage == Storage::Constant && t.shape.len() >= 2)
        .filter_map(|t| t.dtype.and_then(|d| d.element_size()))
        .max()
        .or_else(|| {
            ts.iter()
                .take(ts.len().saturating_sub(1))
                .filter(|t| t.storage == Storage::Constant)
                .filter_map(|t| t.dtype.and_then(|d| d.element_size()))
                .max()
        })
        .unwrap_or(0) as f64;
    let mut out = Priced::new("portable kernel", 0);
    match category {
        Category::Convolution | Category::Linear => {
            let k = reduction(call, category).unwrap_or(1) as f64;
            let macs = out_elems * k;
            out.weights_read(macs * constant_element);
            out.path = "portable convolution/matmul loop (coarse: per MAC)".into();
            out.macs = macs as u64;
            out.add(p.mix("MAC loop", MAC * macs));
            out.add_cycles(
                "float multiply-adds",
                if float {
                    p.timing.float_mac * macs
                } else {
                    0.0
                },
            );
        }
        Category::DataMovement => {
            out.path = "portable copy (coarse: per element)".into();
            out.add(p.mix("elements", MOVE * out_elems));
            out.weights_read(out_elems * constant_element);
        }
        _ => {
            out.path = "portable elementwise loop (coarse: per element)".into();
            out.add(p.mix("elements", ELEMENT * out_elems));
            out.weights_read(out_elems * constant_element);
            let per = if transcendental(op) {
                if float {
                    p.timing.float_transcendental
                } else {
                    20.0
                }
            } else {
                fop * 2.0
            };
            out.add_cycles("float operations", per * out_elems);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::transcendental;

    #[test]
    fn a_library_call_per_element_is_named_by_the_operator_not_a_substring() {
        for op in [
            "aten::tanh.out",
            "aten::exp.out",
            "aten::_softmax.out",
            "aten::pow.Tensor_Scalar_out",
        ] {
            assert!(transcendental(op), "{op}");
        }
        for op in [
            "aten::hardtanh.out",
            "aten::hardsigmoid.out",
            "aten::logical_and.out",
            "aten::add.out",
        ] {
            assert!(!transcendental(op), "{op}");
        }
    }
}
