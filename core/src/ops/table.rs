//! The declarations: one [`OpDef`] per operator etscope knows. A new operator goes here (and
//! its kernel under `crate::kernels`); nothing else in the workspace names it.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::{
    BoardFamily, BoardKernel, Category, CortexMRules, FormArg, KernelForm, LayoutRule, OpDef, OpId,
    OutputDtype, QuantizerRole, Schema, Traits,
};
use crate::kernels::cmsis::conv::Act;
use crate::kernels::cmsis::notes::{self, NoteFn};
use crate::kernels::cmsis::{conv, ops as cm, pool};
use crate::kernels::ctx::Ctx;
use crate::kernels::libm::{Binary, Function};
use crate::kernels::portable::{self as pt, index, math, nn, rearrange, shape, tensor};
use crate::kernels::{quantized, RuntimeError};

type R = Result<(), RuntimeError>;

const NONE: Traits = Traits {
    elementwise: false,
    data_movement: false,
    quant_preserving: false,
    in_place_safe: false,
    weighted: false,
    float_only: false,
    fusable_activation: false,
    quantizes: false,
    dequantizes: false,
};
/// Elementwise arithmetic: the device kernel reads element i before writing element i.
const ELEMENTWISE: Traits = Traits {
    elementwise: true,
    in_place_safe: true,
    ..NONE
};
/// A copy or view that keeps quantization parameters.
const MOVE: Traits = Traits {
    data_movement: true,
    quant_preserving: true,
    ..NONE
};
/// A same-shape copy the device can do in place.
const COPY: Traits = Traits {
    data_movement: true,
    quant_preserving: true,
    in_place_safe: true,
    ..NONE
};
/// Data movement whose quantization etscope does not carry across (a dtype may change, or a
/// part of the tensor is taken).
const DATA: Traits = Traits {
    data_movement: true,
    ..NONE
};
/// Quantize / dequantize: elementwise, but the element size changes.
const QUANTIZE: Traits = Traits {
    elementwise: true,
    ..NONE
};
/// A float activation a quantized flow fuses or tabulates.
const ACTIVATION: Traits = Traits {
    fusable_activation: true,
    ..ELEMENTWISE
};
/// A float activation that means nothing on integer codes.
const FLOAT_ACTIVATION: Traits = Traits {
    float_only: true,
    ..ACTIVATION
};
/// Elementwise arithmetic that means nothing on integer codes.
const FLOAT_ELEMENTWISE: Traits = Traits {
    float_only: true,
    ..ELEMENTWISE
};
/// Float-only arithmetic.
const FLOAT_ONLY: Traits = Traits {
    float_only: true,
    ..NONE
};
const QUANTIZER: Traits = Traits {
    quantizes: true,
    ..QUANTIZE
};
const DEQUANTIZER: Traits = Traits {
    dequantizes: true,
    ..QUANTIZE
};
const WEIGHTED: Traits = Traits {
    weighted: true,
    ..NONE
};

/// An operator with an `out` variant: overloads `[functional, "out"]`.
const fn op(
    name: &'static str,
    overloads: &'static [&'static str],
    out_overloads: &'static [&'static str],
    schema: Option<&'static str>,
    category: Category,
    traits: Traits,
    kernel: Option<crate::kernels::KernelFn>,
) -> OpDef {
    OpDef {
        name,
        overloads,
        out_overloads,
        schema,
        category,
        traits,
        kernel,
        board: None,
        device_note: None,
        layout: LayoutRule::Keep,
        output_dtype: OutputDtype::FirstInput,
        cortex_m: CortexMRules {
            fused_activation: false,
            takes_fused_activation: false,
            int8_clamp: false,
            quantizer: QuantizerRole::None,
            permute_transparent: false,
        },
        computed_by: None,
    }
}

const fn laid(mut d: OpDef, layout: LayoutRule) -> OpDef {
    d.layout = layout;
    d
}

/// Computed on the emulated board by the portable kernel `OP_<symbol>` (image code `code`).
const fn on_board(mut d: OpDef, code: u32, symbol: &'static str) -> OpDef {
    d.board = Some(BoardKernel {
        code,
        symbol,
        family: BoardFamily::Portable,
    });
    d
}

/// Computed on the emulated board by the integer kernel `OP_<symbol>` beside the dispatch.
const fn on_board_integer(mut d: OpDef, code: u32, symbol: &'static str) -> OpDef {
    d.board = Some(BoardKernel {
        code,
        symbol,
        family: BoardFamily::Integer,
    });
    d
}

/// `ActivationFusionPass` folds it into its producer's range.
const fn fused_activation(mut d: OpDef) -> OpDef {
    d.cortex_m.fused_activation = true;
    d
}

/// `ActivationFusionPass` folds an activation after it into its output range.
const fn takes_fused_activation(mut d: OpDef) -> OpDef {
    d.cortex_m.takes_fused_activation = true;
    d
}

/// `QuantizedClampActivationPass` makes it a clamp on int8 tensors.
const fn int8_clamp(mut d: OpDef) -> OpDef {
    d.cortex_m.int8_clamp = true;
    d
}

/// Computed by another operator's kernel (`form`).
const fn computed_by(mut d: OpDef, form: &'static KernelForm) -> OpDef {
    d.computed_by = Some(form);
    d
}

use FormArg::{Arg, First, OutputSizes, ZeroPair};
/// `conv2d(input, weight, bias, stride, padding, dilation, groups)` as `convolution.out` with
/// `transposed = False` and no output padding.
const CONV2D: KernelForm = KernelForm {
    op: "aten::convolution",
    args: &[
        Arg(0),
        Arg(1),
        Arg(2),
        Arg(3),
        Arg(4),
        Arg(5),
        FormArg::False,
        ZeroPair,
        Arg(6),
    ],
};
/// `batch_norm` in inference as `_native_batch_norm_legit_no_training.out` (no `training`, no
/// `cudnn_enabled`).
const BATCH_NORM: KernelForm = KernelForm {
    op: "aten::_native_batch_norm_legit_no_training",
    args: &[Arg(0), Arg(1), Arg(2), Arg(3), Arg(4), Arg(6), Arg(7)],
};
/// `softmax(self, dim)` as `_softmax.out` with `half_to_float = False`.
const SOFTMAX: KernelForm = KernelForm {
    op: "aten::_softmax",
    args: &[Arg(0), Arg(1), FormArg::False],
};
/// Every view as `view_copy.out` with the output's sizes.
const VIEW: KernelForm = KernelForm {
    op: "aten::view_copy",
    args: &[First, OutputSizes],
};

/// `RemovePermutesAroundElementwiseOps` moves a layout permute through it.
const fn permute_transparent(mut d: OpDef) -> OpDef {
    d.cortex_m.permute_transparent = true;
    d
}

/// How `CortexMQuantizer` annotates it.
const fn quantizer(mut d: OpDef, role: QuantizerRole) -> OpDef {
    d.cortex_m.quantizer = role;
    d
}

/// The output dtype follows `rule` (not the first input's).
const fn typed(mut d: OpDef, rule: OutputDtype) -> OpDef {
    d.output_dtype = rule;
    d
}

const fn noted(mut d: OpDef, rule: NoteFn) -> OpDef {
    d.device_note = Some(rule);
    d
}

const DEFAULT_OUT: &[&str] = &["default", "out"];
const OUT: &[&str] = &["out"];
const DEFAULT: &[&str] = &["default"];
const NO_OUT: &[&str] = &[];

use Category::*;

fn relu(c: &mut Ctx<'_>, a: &[usize]) -> R {
    pt::unary(c, a, |x| x.max(0.0))
}
fn sigmoid(c: &mut Ctx<'_>, a: &[usize]) -> R {
    // ExecuTorch: `1 / (1 + exp(-x))` in float, the device's `expf`
    let expf = c.libm_f32(Function::Exp)?;
    pt::unary(c, a, move |x| 1.0 / (1.0 + expf(-x)))
}
fn hardswish(c: &mut Ctx<'_>, a: &[usize]) -> R {
    pt::unary(c, a, math::hardswish_f32)
}
fn hardsigmoid(c: &mut Ctx<'_>, a: &[usize]) -> R {
    pt::unary(c, a, math::hardsigmoid_f32)
}
fn tanh(c: &mut Ctx<'_>, a: &[usize]) -> R {
    math::unary_libm(c, a, Function::Tanh)
}
fn add(c: &mut Ctx<'_>, a: &[usize]) -> R {
    tensor::binary(c, a, |x, y| x + y, true)
}
fn sub(c: &mut Ctx<'_>, a: &[usize]) -> R {
    tensor::binary(c, a, |x, y| x - y, true)
}
fn mul(c: &mut Ctx<'_>, a: &[usize]) -> R {
    tensor::binary(c, a, |x, y| x * y, false)
}
fn div(c: &mut Ctx<'_>, a: &[usize]) -> R {
    tensor::binary(c, a, |x, y| x / y, false)
}
fn maximum(c: &mut Ctx<'_>, a: &[usize]) -> R {
    tensor::binary(c, a, tensor::max_override, false)
}
fn minimum(c: &mut Ctx<'_>, a: &[usize]) -> R {
    tensor::binary(c, a, tensor::min_override, false)
}
fn eq(c: &mut Ctx<'_>, a: &[usize]) -> R {
    tensor::compare(c, a, |x, y| x == y)
}
fn ne(c: &mut Ctx<'_>, a: &[usize]) -> R {
    tensor::compare(c, a, |x, y| x != y)
}
fn lt(c: &mut Ctx<'_>, a: &[usize]) -> R {
    tensor::compare(c, a, |x, y| x < y)
}
fn le(c: &mut Ctx<'_>, a: &[usize]) -> R {
    tensor::compare(c, a, |x, y| x <= y)
}
fn gt(c: &mut Ctx<'_>, a: &[usize]) -> R {
    tensor::compare(c, a, |x, y| x > y)
}
fn ge(c: &mut Ctx<'_>, a: &[usize]) -> R {
    tensor::compare(c, a, |x, y| x >= y)
}
fn cm_min(c: &mut Ctx<'_>, a: &[usize]) -> R {
    cm::min_max(c, a, false)
}
fn cm_max(c: &mut Ctx<'_>, a: &[usize]) -> R {
    cm::min_max(c, a, true)
}
fn conv_nchw(c: &mut Ctx<'_>, a: &[usize]) -> R {
    conv::conv2d(c, a, false, Act::Nchw)
}
fn conv_nhwc(c: &mut Ctx<'_>, a: &[usize]) -> R {
    conv::conv2d(c, a, false, Act::Nhwc)
}
fn depthwise_nchw(c: &mut Ctx<'_>, a: &[usize]) -> R {
    conv::conv2d(c, a, true, Act::Nchw)
}
fn depthwise_nhwc(c: &mut Ctx<'_>, a: &[usize]) -> R {
    conv::conv2d(c, a, true, Act::Nhwc)
}
fn transpose_conv_nchw(c: &mut Ctx<'_>, a: &[usize]) -> R {
    conv::transpose_conv2d(c, a, Act::Nchw)
}
fn transpose_conv_nhwc(c: &mut Ctx<'_>, a: &[usize]) -> R {
    conv::transpose_conv2d(c, a, Act::Nhwc)
}
fn avg_pool_nchw(c: &mut Ctx<'_>, a: &[usize]) -> R {
    pool::avg_pool2d(c, a, Act::Nchw)
}
fn avg_pool_nhwc(c: &mut Ctx<'_>, a: &[usize]) -> R {
    pool::avg_pool2d(c, a, Act::Nhwc)
}
fn max_pool_nchw(c: &mut Ctx<'_>, a: &[usize]) -> R {
    pool::max_pool2d(c, a, Act::Nchw)
}
fn max_pool_nhwc(c: &mut Ctx<'_>, a: &[usize]) -> R {
    pool::max_pool2d(c, a, Act::Nhwc)
}

macro_rules! unary_fns {
    ($($name:ident => $f:expr;)*) => {
        $(fn $name(c: &mut Ctx<'_>, a: &[usize]) -> R {
            math::unary(c, a, $f)
        })*
    };
}

unary_fns! {
    abs_k => f64::abs;
    neg_k => |x: f64| -x;
    reciprocal_k => |x: f64| 1.0 / x;
    floor_k => f64::floor;
    ceil_k => f64::ceil;
    round_k => math::round_half_even;
    trunc_k => f64::trunc;
    // ExecuTorch: `(x > 0) - (x < 0)`, a NaN kept: -0 gives +0
    sign_k => |x: f64| if x.is_nan() { x } else { f64::from(i8::from(x > 0.0) - i8::from(x < 0.0)) };
    bitwise_not_k => |x: f64| -x - 1.0;
}

macro_rules! libm_fns {
    ($($name:ident => $f:ident;)*) => {
        $(fn $name(c: &mut Ctx<'_>, a: &[usize]) -> R {
            math::unary_libm(c, a, Function::$f)
        })*
    };
}

// `<math.h>` functions, the device's C library's (`crate::kernels::libm`)
libm_fns! {
    exp_k => Exp;
    expm1_k => Expm1;
    log_k => Log;
    log2_k => Log2;
    log10_k => Log10;
    log1p_k => Log1p;
    sqrt_k => Sqrt;
    sin_k => Sin;
    cos_k => Cos;
    tan_k => Tan;
    asin_k => Asin;
    acos_k => Acos;
    atan_k => Atan;
    sinh_k => Sinh;
    cosh_k => Cosh;
    asinh_k => Asinh;
    acosh_k => Acosh;
    atanh_k => Atanh;
    erf_k => Erf;
}

fn rsqrt_k(c: &mut Ctx<'_>, a: &[usize]) -> R {
    math::rsqrt(c, a)
}

fn isnan_k(c: &mut Ctx<'_>, a: &[usize]) -> R {
    math::predicate(c, a, f64::is_nan)
}
fn isinf_k(c: &mut Ctx<'_>, a: &[usize]) -> R {
    math::predicate(c, a, f64::is_infinite)
}
fn logical_not_k(c: &mut Ctx<'_>, a: &[usize]) -> R {
    math::predicate(c, a, |x| x == 0.0)
}
fn atan2_k(c: &mut Ctx<'_>, a: &[usize]) -> R {
    math::binary_libm(c, a, Binary::Atan2)
}
fn pow_k(c: &mut Ctx<'_>, a: &[usize]) -> R {
    math::binary_libm(c, a, Binary::Pow)
}
fn fmod_k(c: &mut Ctx<'_>, a: &[usize]) -> R {
    math::binary(c, a, |x, y| x % y)
}
fn remainder_k(c: &mut Ctx<'_>, a: &[usize]) -> R {
    math::remainder_kernel(c, a)
}
fn logical_and_k(c: &mut Ctx<'_>, a: &[usize]) -> R {
    math::binary(c, a, |x, y| f64::from(u8::from(x != 0.0 && y != 0.0)))
}
fn logical_or_k(c: &mut Ctx<'_>, a: &[usize]) -> R {
    math::binary(c, a, |x, y| f64::from(u8::from(x != 0.0 || y != 0.0)))
}
fn logical_xor_k(c: &mut Ctx<'_>, a: &[usize]) -> R {
    math::binary(c, a, |x, y| f64::from(u8::from((x != 0.0) != (y != 0.0))))
}
fn bitwise_and_k(c: &mut Ctx<'_>, a: &[usize]) -> R {
    math::binary(c, a, |x, y| math::bits(x, y, |p, q| p & q))
}
fn bitwise_or_k(c: &mut Ctx<'_>, a: &[usize]) -> R {
    math::binary(c, a, |x, y| math::bits(x, y, |p, q| p | q))
}
fn bitwise_xor_k(c: &mut Ctx<'_>, a: &[usize]) -> R {
    math::binary(c, a, |x, y| math::bits(x, y, |p, q| p ^ q))
}
fn left_shift_k(c: &mut Ctx<'_>, a: &[usize]) -> R {
    math::binary(c, a, |x, y| math::bits(x, y, math::shift_left))
}
fn right_shift_k(c: &mut Ctx<'_>, a: &[usize]) -> R {
    math::binary(c, a, |x, y| math::bits(x, y, math::shift_right))
}

/// `memory.alloc`: the runtime allocates every tensor before the run; nothing to do.
fn alloc(_: &mut Ctx<'_>, _: &[usize]) -> R {
    Ok(())
}

/// Every operator etscope knows.
pub(super) static OPS: &[OpDef] = &[
    // ---- portable aten: convolution, normalization, pooling, linear algebra
    quantizer(takes_fused_activation(on_board(op("aten::convolution", DEFAULT_OUT, OUT, Some("(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor"), Convolution, WEIGHTED, Some(pt::convolution)), 67, "CONVOLUTION")), QuantizerRole::Pattern),
    computed_by(op("aten::conv2d", &["default"], &[], Some("(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0, SymInt[2] dilation=1, SymInt groups=1) -> Tensor"), Convolution, WEIGHTED, None), &CONV2D),
    on_board(op("aten::_native_batch_norm_legit_no_training", DEFAULT_OUT, OUT, Some("(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor)"), Normalization, NONE, Some(pt::batch_norm)), 191, "BATCH_NORM"),
    computed_by(op("aten::batch_norm", &["default"], &[], Some("(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor"), Normalization, NONE, None), &BATCH_NORM),
    on_board(op("aten::native_layer_norm", DEFAULT_OUT, OUT, Some("(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)"), Normalization, FLOAT_ONLY, Some(nn::layer_norm)), 69, "LAYER_NORM"),
    quantizer(on_board(op("aten::avg_pool2d", DEFAULT_OUT, OUT, Some("(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor"), Pooling, NONE, Some(pt::avg_pool2d)), 54, "AVG_POOL2D"), QuantizerRole::Pattern),
    quantizer(takes_fused_activation(op("aten::max_pool2d", &["default"], &[], Some("(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor"), Pooling, NONE, None)), QuantizerRole::Pattern),
    // the explicit-layout flow's NHWC variants (ExecuTorch 1.5.1 `backends/transforms/
    // channels_last_ops.py`): intermediate stages of the lowering only, no kernel of their own
    op("channels_last::convolution", DEFAULT, NO_OUT, Some("(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups) -> Tensor"), Convolution, WEIGHTED, None),
    op("channels_last::avg_pool2d", DEFAULT, NO_OUT, Some("(Tensor input, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor"), Pooling, NONE, None),
    op("channels_last::max_pool2d", DEFAULT, NO_OUT, Some("(Tensor input, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor"), Pooling, NONE, None),
    op("channels_last::permute_copy", DEFAULT, NO_OUT, Some("(Tensor input, int[] dims) -> Tensor"), DataMovement, MOVE, None),
    quantizer(takes_fused_activation(on_board(op("aten::max_pool2d_with_indices", DEFAULT_OUT, OUT, Some("(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)"), Pooling, NONE, Some(nn::max_pool2d_with_indices)), 55, "MAX_POOL2D_WITH_INDICES")), QuantizerRole::Pattern),
    typed(on_board(laid(op("aten::addmm", DEFAULT_OUT, OUT, Some("(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"), Linear, NONE, Some(pt::addmm)), LayoutRule::Reset), 63, "ADDMM"), OutputDtype::Promoted),
    typed(on_board(laid(op("aten::mm", DEFAULT_OUT, OUT, Some("(Tensor self, Tensor mat2) -> Tensor"), Linear, NONE, Some(pt::mm)), LayoutRule::Reset), 64, "MM"), OutputDtype::Promoted),
    quantizer(typed(on_board(laid(op("aten::bmm", DEFAULT_OUT, OUT, Some("(Tensor self, Tensor mat2) -> Tensor"), Linear, NONE, Some(nn::bmm)), LayoutRule::Reset), 65, "BMM"), OutputDtype::Promoted), QuantizerRole::Pattern),
    quantizer(takes_fused_activation(typed(on_board(laid(op("aten::linear", DEFAULT_OUT, OUT, Some("(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor"), Linear, WEIGHTED, Some(pt::linear)), LayoutRule::Reset), 66, "ATEN_LINEAR"), OutputDtype::Promoted)), QuantizerRole::Pattern),
    // ---- activations
    quantizer(int8_clamp(fused_activation(on_board(op("aten::relu", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Activation, ACTIVATION, Some(relu)), 32, "RELU"))), QuantizerRole::SharedQparams),
    quantizer(on_board(op("aten::sigmoid", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Activation, FLOAT_ACTIVATION, Some(sigmoid)), 33, "SIGMOID"), QuantizerRole::Pattern),
    quantizer(on_board(op("aten::tanh", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Activation, FLOAT_ACTIVATION, Some(tanh)), 34, "TANH"), QuantizerRole::Pattern),
    permute_transparent(quantizer(int8_clamp(fused_activation(on_board_integer(op("aten::hardtanh", DEFAULT_OUT, OUT, Some("(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor"), Activation, ACTIVATION, Some(pt::hardtanh)), 25, "HARDTANH"))), QuantizerRole::SharedQparams)),
    permute_transparent(quantizer(int8_clamp(fused_activation(on_board(op("aten::clamp", DEFAULT_OUT, OUT, Some("(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor"), Activation, ACTIVATION, Some(tensor::clamp)), 44, "CLAMP"))), QuantizerRole::SharedQparams)),
    quantizer(on_board(op("aten::gelu", DEFAULT_OUT, OUT, Some("(Tensor self, *, str approximate='none') -> Tensor"), Activation, Traits { float_only: true, ..ELEMENTWISE }, Some(nn::gelu)), 42, "GELU"), QuantizerRole::Pattern),
    quantizer(on_board(op("aten::_softmax", DEFAULT_OUT, OUT, Some("(Tensor self, int dim, bool half_to_float) -> Tensor"), Activation, FLOAT_ONLY, Some(pt::softmax)), 58, "FLOAT_SOFTMAX"), QuantizerRole::Pattern),
    computed_by(op("aten::softmax", &["int"], &[], Some("(Tensor self, int dim, ScalarType? dtype=None) -> Tensor"), Activation, NONE, None), &SOFTMAX),
    quantizer(op("aten::hardswish", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Activation, FLOAT_ACTIVATION, Some(hardswish)), QuantizerRole::Pattern),
    quantizer(fused_activation(op("aten::hardsigmoid", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Activation, FLOAT_ACTIVATION, Some(hardsigmoid))), QuantizerRole::Pattern),
    quantizer(op("aten::silu", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Activation, Traits { float_only: true, ..ELEMENTWISE }, None), QuantizerRole::Pattern),
    on_board(op("aten::elu", DEFAULT_OUT, OUT, Some("(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor"), Activation, Traits { float_only: true, ..ELEMENTWISE }, Some(math::elu)), 129, "ELU"),
    // ---- elementwise arithmetic and comparison
    permute_transparent(quantizer(takes_fused_activation(typed(on_board(op("aten::add", &["Tensor", "Scalar", "out", "Scalar_out"], &["out", "Scalar_out"], Some("(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"), Elementwise, ELEMENTWISE, Some(add)), 26, "ADD"), OutputDtype::Promoted)), QuantizerRole::Pattern)),
    permute_transparent(quantizer(takes_fused_activation(typed(on_board(op("aten::sub", &["Tensor", "Scalar", "out", "Scalar_out"], &["out", "Scalar_out"], Some("(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"), Elementwise, ELEMENTWISE, Some(sub)), 27, "SUB"), OutputDtype::Promoted)), QuantizerRole::Pattern)),
    permute_transparent(quantizer(typed(on_board(op("aten::mul", &["Tensor", "Scalar", "out", "Scalar_out"], &["out", "Scalar_out"], Some("(Tensor self, Tensor other) -> Tensor"), Elementwise, ELEMENTWISE, Some(mul)), 28, "MUL"), OutputDtype::Promoted), QuantizerRole::Pattern)),
    quantizer(on_board(op("aten::div", &["Tensor", "Scalar", "out", "Scalar_out"], &["out", "Scalar_out"], Some("(Tensor self, Tensor other) -> Tensor"), Elementwise, ELEMENTWISE, Some(div)), 29, "DIV"), QuantizerRole::Pattern),
    quantizer(on_board(op("aten::maximum", DEFAULT_OUT, OUT, Some("(Tensor self, Tensor other) -> Tensor"), Elementwise, ELEMENTWISE, Some(maximum)), 30, "ATEN_MAXIMUM"), QuantizerRole::SharedQparams),
    quantizer(on_board(op("aten::minimum", DEFAULT_OUT, OUT, Some("(Tensor self, Tensor other) -> Tensor"), Elementwise, ELEMENTWISE, Some(minimum)), 31, "ATEN_MINIMUM"), QuantizerRole::SharedQparams),
    quantizer(typed(on_board(op("aten::eq", &["Scalar", "Tensor", "Scalar_out", "Tensor_out"], &["Scalar_out", "Tensor_out"], Some("(Tensor self, Scalar other) -> Tensor"), Elementwise, ELEMENTWISE, Some(eq)), 71, "EQ"), OutputDtype::Own), QuantizerRole::SharedQparams),
    quantizer(typed(on_board(op("aten::ne", &["Scalar", "Tensor", "Scalar_out", "Tensor_out"], &["Scalar_out", "Tensor_out"], Some("(Tensor self, Scalar other) -> Tensor"), Elementwise, ELEMENTWISE, Some(ne)), 72, "NE"), OutputDtype::Own), QuantizerRole::SharedQparams),
    quantizer(typed(on_board(op("aten::lt", &["Scalar", "Tensor", "Scalar_out", "Tensor_out"], &["Scalar_out", "Tensor_out"], Some("(Tensor self, Scalar other) -> Tensor"), Elementwise, ELEMENTWISE, Some(lt)), 73, "LT"), OutputDtype::Own), QuantizerRole::SharedQparams),
    quantizer(typed(on_board(op("aten::le", &["Scalar", "Tensor", "Scalar_out", "Tensor_out"], &["Scalar_out", "Tensor_out"], Some("(Tensor self, Scalar other) -> Tensor"), Elementwise, ELEMENTWISE, Some(le)), 74, "LE"), OutputDtype::Own), QuantizerRole::SharedQparams),
    quantizer(typed(on_board(op("aten::gt", &["Scalar", "Tensor", "Scalar_out", "Tensor_out"], &["Scalar_out", "Tensor_out"], Some("(Tensor self, Scalar other) -> Tensor"), Elementwise, ELEMENTWISE, Some(gt)), 75, "GT"), OutputDtype::Own), QuantizerRole::SharedQparams),
    quantizer(typed(on_board(op("aten::ge", &["Scalar", "Tensor", "Scalar_out", "Tensor_out"], &["Scalar_out", "Tensor_out"], Some("(Tensor self, Scalar other) -> Tensor"), Elementwise, ELEMENTWISE, Some(ge)), 76, "GE"), OutputDtype::Own), QuantizerRole::SharedQparams),
    quantizer(on_board(op("aten::where", &["self", "self_out"], &["self_out"], Some("(Tensor condition, Tensor self, Tensor other) -> Tensor"), Elementwise, ELEMENTWISE, Some(tensor::where_)), 77, "WHERE"), QuantizerRole::SharedQparams),
    on_board(op("aten::exp", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, Traits { float_only: true, ..ELEMENTWISE }, Some(exp_k)), 37, "EXP"),
    quantizer(on_board(op("aten::log", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, Traits { float_only: true, ..ELEMENTWISE }, Some(log_k)), 38, "LOG"), QuantizerRole::Pattern),
    quantizer(on_board(op("aten::sqrt", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, Traits { float_only: true, ..ELEMENTWISE }, Some(sqrt_k)), 39, "SQRT"), QuantizerRole::Pattern),
    quantizer(on_board(op("aten::rsqrt", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, Traits { float_only: true, ..ELEMENTWISE }, Some(rsqrt_k)), 40, "RSQRT"), QuantizerRole::Pattern),
    // ---- portable math (kernels/portable/math.rs)
    on_board(op("aten::abs", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, ELEMENTWISE, Some(abs_k)), 36, "ABS"),
    on_board(op("aten::neg", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, ELEMENTWISE, Some(neg_k)), 35, "NEG"),
    on_board(op("aten::expm1", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, FLOAT_ELEMENTWISE, Some(expm1_k)), 78, "EXPM1"),
    quantizer(on_board(op("aten::log2", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, FLOAT_ELEMENTWISE, Some(log2_k)), 79, "LOG2"), QuantizerRole::Pattern),
    quantizer(on_board(op("aten::log10", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, FLOAT_ELEMENTWISE, Some(log10_k)), 80, "LOG10"), QuantizerRole::Pattern),
    quantizer(on_board(op("aten::log1p", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, FLOAT_ELEMENTWISE, Some(log1p_k)), 81, "LOG1P"), QuantizerRole::Pattern),
    on_board(op("aten::reciprocal", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, FLOAT_ELEMENTWISE, Some(reciprocal_k)), 41, "RECIPROCAL"),
    on_board(op("aten::sin", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, FLOAT_ELEMENTWISE, Some(sin_k)), 82, "SIN"),
    on_board(op("aten::cos", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, FLOAT_ELEMENTWISE, Some(cos_k)), 83, "COS"),
    on_board(op("aten::tan", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, FLOAT_ELEMENTWISE, Some(tan_k)), 84, "TAN"),
    on_board(op("aten::asin", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, FLOAT_ELEMENTWISE, Some(asin_k)), 85, "ASIN"),
    on_board(op("aten::acos", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, FLOAT_ELEMENTWISE, Some(acos_k)), 86, "ACOS"),
    on_board(op("aten::atan", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, FLOAT_ELEMENTWISE, Some(atan_k)), 87, "ATAN"),
    on_board(op("aten::sinh", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, FLOAT_ELEMENTWISE, Some(sinh_k)), 88, "SINH"),
    on_board(op("aten::cosh", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, FLOAT_ELEMENTWISE, Some(cosh_k)), 89, "COSH"),
    on_board(op("aten::asinh", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, FLOAT_ELEMENTWISE, Some(asinh_k)), 90, "ASINH"),
    on_board(op("aten::acosh", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, FLOAT_ELEMENTWISE, Some(acosh_k)), 91, "ACOSH"),
    on_board(op("aten::atanh", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, FLOAT_ELEMENTWISE, Some(atanh_k)), 92, "ATANH"),
    on_board(op("aten::erf", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, FLOAT_ELEMENTWISE, Some(erf_k)), 93, "ERF"),
    on_board(op("aten::floor", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, ELEMENTWISE, Some(floor_k)), 94, "FLOOR"),
    on_board(op("aten::ceil", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, ELEMENTWISE, Some(ceil_k)), 95, "CEIL"),
    on_board(op("aten::round", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, ELEMENTWISE, Some(round_k)), 96, "ROUND"),
    on_board(op("aten::trunc", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, ELEMENTWISE, Some(trunc_k)), 97, "TRUNC"),
    on_board(op("aten::sign", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, ELEMENTWISE, Some(sign_k)), 98, "SIGN"),
    on_board(op("aten::isnan", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, ELEMENTWISE, Some(isnan_k)), 100, "ISNAN"),
    on_board(op("aten::isinf", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, ELEMENTWISE, Some(isinf_k)), 101, "ISINF"),
    on_board(op("aten::logical_not", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, ELEMENTWISE, Some(logical_not_k)), 102, "LOGICAL_NOT"),
    on_board(op("aten::bitwise_not", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, ELEMENTWISE, Some(bitwise_not_k)), 99, "BITWISE_NOT"),
    on_board(op("aten::leaky_relu", DEFAULT_OUT, OUT, Some("(Tensor self, Scalar negative_slope=0.01) -> Tensor"), Activation, ACTIVATION, Some(math::leaky_relu)), 43, "LEAKY_RELU"),
    on_board(op("aten::_log_softmax", DEFAULT_OUT, OUT, Some("(Tensor self, int dim, bool half_to_float) -> Tensor"), Activation, FLOAT_ONLY, Some(math::log_softmax)), 59, "LOG_SOFTMAX"),
    on_board(op("aten::atan2", DEFAULT_OUT, OUT, Some("(Tensor self, Tensor other) -> Tensor"), Elementwise, FLOAT_ELEMENTWISE, Some(atan2_k)), 103, "ATAN2"),
    on_board(op("aten::pow", &["Tensor_Scalar", "Tensor_Tensor", "Tensor_Scalar_out", "Tensor_Tensor_out"], &["Tensor_Scalar_out", "Tensor_Tensor_out"], Some("(Tensor self, Tensor exponent) -> Tensor"), Elementwise, FLOAT_ELEMENTWISE, Some(pow_k)), 104, "POW"),
    on_board(op("aten::pow", &["Scalar", "Scalar_out"], &["Scalar_out"], Some("(Scalar self, Tensor exponent) -> Tensor"), Elementwise, FLOAT_ELEMENTWISE, Some(math::pow_scalar_base)), 177, "POW_SCALAR"),
    on_board(op("aten::fmod", &["Tensor", "Scalar", "Tensor_out", "Scalar_out"], &["Tensor_out", "Scalar_out"], Some("(Tensor self, Tensor other) -> Tensor"), Elementwise, ELEMENTWISE, Some(fmod_k)), 105, "FMOD"),
    on_board(op("aten::remainder", &["Tensor", "Scalar", "Tensor_out", "Scalar_out"], &["Tensor_out", "Scalar_out"], Some("(Tensor self, Tensor other) -> Tensor"), Elementwise, ELEMENTWISE, Some(remainder_k)), 106, "REMAINDER"),
    quantizer(on_board(op("aten::div", &["Tensor_mode", "Scalar_mode", "out_mode", "Scalar_mode_out"], &["out_mode", "Scalar_mode_out"], Some("(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor"), Elementwise, ELEMENTWISE, Some(math::div_mode)), 156, "DIV_MODE"), QuantizerRole::Pattern),
    on_board(op("aten::logical_and", DEFAULT_OUT, OUT, Some("(Tensor self, Tensor other) -> Tensor"), Elementwise, ELEMENTWISE, Some(logical_and_k)), 107, "LOGICAL_AND"),
    on_board(op("aten::logical_or", DEFAULT_OUT, OUT, Some("(Tensor self, Tensor other) -> Tensor"), Elementwise, ELEMENTWISE, Some(logical_or_k)), 108, "LOGICAL_OR"),
    on_board(op("aten::logical_xor", DEFAULT_OUT, OUT, Some("(Tensor self, Tensor other) -> Tensor"), Elementwise, ELEMENTWISE, Some(logical_xor_k)), 109, "LOGICAL_XOR"),
    on_board(op("aten::bitwise_and", &["Tensor", "Scalar", "Tensor_out", "Scalar_out"], &["Tensor_out", "Scalar_out"], Some("(Tensor self, Tensor other) -> Tensor"), Elementwise, ELEMENTWISE, Some(bitwise_and_k)), 110, "BITWISE_AND"),
    on_board(op("aten::bitwise_left_shift", &["Tensor", "Tensor_Scalar", "Tensor_out", "Tensor_Scalar_out"], &["Tensor_out", "Tensor_Scalar_out"], Some("(Tensor self, Tensor other) -> Tensor"), Elementwise, ELEMENTWISE, Some(left_shift_k)), 175, "BITWISE_LEFT_SHIFT"),
    on_board(op("aten::bitwise_right_shift", &["Tensor", "Tensor_Scalar", "Tensor_out", "Tensor_Scalar_out"], &["Tensor_out", "Tensor_Scalar_out"], Some("(Tensor self, Tensor other) -> Tensor"), Elementwise, ELEMENTWISE, Some(right_shift_k)), 176, "BITWISE_RIGHT_SHIFT"),
    on_board(op("aten::bitwise_or", &["Tensor", "Scalar", "Tensor_out", "Scalar_out"], &["Tensor_out", "Scalar_out"], Some("(Tensor self, Tensor other) -> Tensor"), Elementwise, ELEMENTWISE, Some(bitwise_or_k)), 111, "BITWISE_OR"),
    on_board(op("aten::bitwise_xor", &["Tensor", "Scalar", "Tensor_out", "Scalar_out"], &["Tensor_out", "Scalar_out"], Some("(Tensor self, Tensor other) -> Tensor"), Elementwise, ELEMENTWISE, Some(bitwise_xor_k)), 112, "BITWISE_XOR"),
    on_board(laid(op("aten::scalar_tensor", DEFAULT_OUT, OUT, Some("(Scalar s, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"), Other, NONE, Some(math::scalar_tensor)), LayoutRule::Reset), 143, "SCALAR_TENSOR"),
    on_board(op("aten::logit", DEFAULT_OUT, OUT, Some("(Tensor self, float? eps=None) -> Tensor"), Activation, FLOAT_ELEMENTWISE, Some(math::logit)), 174, "LOGIT"),
    on_board(op("aten::glu", DEFAULT_OUT, OUT, Some("(Tensor self, int dim=-1) -> Tensor"), Activation, FLOAT_ONLY, Some(math::glu)), 130, "GLU"),
    on_board(op("aten::rsub", &["Scalar", "Scalar_out"], &["Scalar_out"], Some("(Tensor self, Scalar other, Scalar alpha=1) -> Tensor"), Elementwise, ELEMENTWISE, Some(math::rsub)), 140, "RSUB"),
    on_board(op("aten::floor_divide", DEFAULT_OUT, OUT, Some("(Tensor self, Tensor other) -> Tensor"), Elementwise, ELEMENTWISE, Some(math::floor_divide)), 141, "FLOOR_DIVIDE"),
    on_board(laid(op("aten::zeros", DEFAULT_OUT, OUT, Some("(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"), Other, NONE, Some(math::zeros)), LayoutRule::Reset), 132, "ZEROS"),
    on_board(laid(op("aten::ones", DEFAULT_OUT, OUT, Some("(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"), Other, NONE, Some(math::ones)), LayoutRule::Reset), 133, "ONES"),
    on_board(op("aten::fill", &["Scalar", "Scalar_out"], &["Scalar_out"], Some("(Tensor self, Scalar value) -> Tensor"), Other, NONE, Some(math::fill)), 131, "FILL"),
    on_board(op("aten::fill", &["Tensor", "Tensor_out"], &["Tensor_out"], Some("(Tensor self, Tensor value) -> Tensor"), Other, NONE, Some(math::fill_tensor)), 144, "FILL_TENSOR"),
    quantizer(on_board(op("aten::detach_copy", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), DataMovement, COPY, Some(pt::copy)), 45, "COPY"), QuantizerRole::SharedQparams),
    on_board(op("aten::lift_fresh_copy", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), DataMovement, COPY, Some(pt::copy)), 45, "COPY"),
    quantizer(on_board(op("aten::clamp", &["Tensor", "Tensor_out"], &["Tensor_out"], Some("(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor"), Activation, ELEMENTWISE, Some(math::clamp_tensor)), 169, "CLAMP_TENSOR"), QuantizerRole::SharedQparams),
    on_board(op("aten::_adaptive_avg_pool2d", DEFAULT_OUT, OUT, Some("(Tensor self, SymInt[2] output_size) -> Tensor"), Pooling, NONE, Some(nn::adaptive_avg_pool2d)), 122, "ADAPTIVE_AVG_POOL2D"),
    on_board(op("aten::native_group_norm", DEFAULT_OUT, OUT, Some("(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)"), Normalization, FLOAT_ONLY, Some(nn::group_norm)), 173, "GROUP_NORM"),
    on_board(op("aten::cumsum", DEFAULT_OUT, OUT, Some("(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor"), Other, NONE, Some(nn::cumsum)), 126, "CUMSUM"),
    on_board(op("aten::var", &["correction", "correction_out"], &["correction_out"], Some("(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor"), Other, FLOAT_ONLY, Some(nn::var)), 127, "VAR_CORRECTION"),
    on_board(op("aten::var", &["dim", "out"], OUT, Some("(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor"), Other, FLOAT_ONLY, Some(nn::var_unbiased)), 128, "VAR_UNBIASED"),
    on_board(op("aten::var_mean", &["correction", "correction_out"], &["correction_out"], Some("(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)"), Other, FLOAT_ONLY, Some(nn::var_mean)), 168, "VAR_MEAN"),
    on_board(op("aten::max", &["dim", "dim_max"], &["dim_max"], Some("(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"), Other, NONE, Some(index::max_dim)), 166, "MAX_DIM"),
    on_board(op("aten::min", &["dim", "dim_min"], &["dim_min"], Some("(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"), Other, NONE, Some(index::min_dim)), 167, "MIN_DIM"),
    on_board(op("aten::topk", &["default", "values"], &["values"], Some("(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)"), Other, NONE, Some(index::topk)), 181, "TOPK"),
    quantizer(on_board(laid(op("aten::gather", DEFAULT_OUT, OUT, Some("(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor"), DataMovement, DATA, Some(index::gather)), LayoutRule::Reset), 151, "GATHER"), QuantizerRole::SharedQparams),
    quantizer(on_board(laid(op("aten::index", &["Tensor", "Tensor_out"], &["Tensor_out"], Some("(Tensor self, Tensor?[] indices) -> Tensor"), DataMovement, DATA, Some(index::index_tensor)), LayoutRule::Reset), 145, "INDEX"), QuantizerRole::SharedQparams),
    on_board(op("aten::scatter", &["src", "src_out"], &["src_out"], Some("(Tensor self, int dim, Tensor index, Tensor src) -> Tensor"), DataMovement, DATA, Some(index::scatter)), 152, "SCATTER"),
    on_board(op("aten::scatter_add", DEFAULT_OUT, OUT, Some("(Tensor self, int dim, Tensor index, Tensor src) -> Tensor"), DataMovement, DATA, Some(index::scatter_add)), 153, "SCATTER_ADD"),
    on_board(op("aten::index_put_", &["", "default"], &["", "default"], Some("(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor"), DataMovement, DATA, Some(index::index_put_in_place)), 147, "INDEX_PUT_IN_PLACE"),
    quantizer(on_board(op("aten::index_put", DEFAULT_OUT, OUT, Some("(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor"), DataMovement, DATA, Some(index::index_put)), 146, "INDEX_PUT"), QuantizerRole::SharedQparams),
    on_board(op("aten::scatter", &["value", "value_out"], &["value_out"], Some("(Tensor self, int dim, Tensor index, Scalar value) -> Tensor"), DataMovement, DATA, Some(index::scatter_value)), 154, "SCATTER_VALUE"),
    on_board(op("aten::masked_scatter", DEFAULT_OUT, OUT, Some("(Tensor self, Tensor mask, Tensor source) -> Tensor"), DataMovement, DATA, Some(rearrange::masked_scatter)), 185, "MASKED_SCATTER"),
    quantizer(on_board(op("aten::as_strided_copy", DEFAULT_OUT, OUT, Some("(Tensor self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor"), DataMovement, DATA, Some(rearrange::as_strided_copy)), 179, "AS_STRIDED_COPY"), QuantizerRole::SharedQparams),
    on_board(op("aten::empty", &["memory_format", "out"], OUT, Some("(SymInt[] size, *, MemoryFormat? memory_format=None) -> Tensor"), Other, NONE, Some(rearrange::empty)), 180, "EMPTY"),
    on_board(op("dim_order_ops::_empty_dim_order", DEFAULT_OUT, OUT, Some("(int[] size, *, int[]? dim_order=None) -> Tensor"), Other, NONE, Some(rearrange::empty)), 180, "EMPTY"),
    on_board(op("aten::_upsample_bilinear2d_aa", DEFAULT_OUT, OUT, Some("(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor"), DataMovement, FLOAT_ONLY, Some(nn::upsample_bilinear2d_aa)), 189, "UPSAMPLE_BILINEAR2D_AA"),
    on_board(op("aten::nonzero", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), DataMovement, DATA, Some(rearrange::nonzero)), 182, "NONZERO"),
    on_board(op("aten::masked_select", DEFAULT_OUT, OUT, Some("(Tensor self, Tensor mask) -> Tensor"), DataMovement, DATA, Some(rearrange::masked_select)), 183, "MASKED_SELECT"),
    quantizer(on_board(op("aten::repeat_interleave", &["Tensor", "Tensor_out"], &["Tensor_out"], Some("(Tensor repeats, *, SymInt? output_size=None) -> Tensor"), DataMovement, DATA, Some(rearrange::repeat_interleave)), 184, "REPEAT_INTERLEAVE"), QuantizerRole::SharedQparams),
    on_board(op("aten::grid_sampler_2d", DEFAULT_OUT, OUT, Some("(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) -> Tensor"), Other, FLOAT_ONLY, Some(nn::grid_sampler_2d)), 188, "GRID_SAMPLER2D"),
    on_board(op("aten::_cdist_forward", DEFAULT_OUT, OUT, Some("(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor"), Other, FLOAT_ONLY, Some(nn::cdist)), 186, "CDIST_FORWARD"),
    on_board(op("aten::_pdist_forward", DEFAULT_OUT, OUT, Some("(Tensor self, float p=2) -> Tensor"), Other, FLOAT_ONLY, Some(nn::pdist)), 187, "PDIST_FORWARD"),
    on_board(op("aten::select_scatter", DEFAULT_OUT, OUT, Some("(Tensor self, Tensor src, int dim, SymInt index) -> Tensor"), DataMovement, DATA, Some(rearrange::select_scatter)), 171, "SELECT_SCATTER"),
    on_board(op("aten::masked_fill", &["Scalar", "Scalar_out"], &["Scalar_out"], Some("(Tensor self, Tensor mask, Scalar value) -> Tensor"), Elementwise, NONE, Some(rearrange::masked_fill)), 157, "MASKED_FILL"),
    quantizer(on_board(op("aten::pixel_shuffle", DEFAULT_OUT, OUT, Some("(Tensor self, int upscale_factor) -> Tensor"), DataMovement, DATA, Some(rearrange::pixel_shuffle)), 158, "PIXEL_SHUFFLE"), QuantizerRole::SharedQparams),
    quantizer(on_board(op("aten::pixel_unshuffle", DEFAULT_OUT, OUT, Some("(Tensor self, int downscale_factor) -> Tensor"), DataMovement, DATA, Some(rearrange::pixel_unshuffle)), 159, "PIXEL_UNSHUFFLE"), QuantizerRole::SharedQparams),
    on_board(op("aten::reflection_pad1d", DEFAULT_OUT, OUT, Some("(Tensor self, SymInt[2] padding) -> Tensor"), DataMovement, DATA, Some(rearrange::reflection_pad1d)), 160, "REFLECTION_PAD1D"),
    on_board(op("aten::reflection_pad2d", DEFAULT_OUT, OUT, Some("(Tensor self, SymInt[4] padding) -> Tensor"), DataMovement, DATA, Some(rearrange::reflection_pad2d)), 161, "REFLECTION_PAD2D"),
    on_board(op("aten::reflection_pad3d", DEFAULT_OUT, OUT, Some("(Tensor self, SymInt[6] padding) -> Tensor"), DataMovement, DATA, Some(rearrange::reflection_pad3d)), 162, "REFLECTION_PAD3D"),
    on_board(op("aten::replication_pad1d", DEFAULT_OUT, OUT, Some("(Tensor self, SymInt[2] padding) -> Tensor"), DataMovement, DATA, Some(rearrange::replication_pad1d)), 163, "REPLICATION_PAD1D"),
    on_board(op("aten::replication_pad2d", DEFAULT_OUT, OUT, Some("(Tensor self, SymInt[4] padding) -> Tensor"), DataMovement, DATA, Some(rearrange::replication_pad2d)), 164, "REPLICATION_PAD2D"),
    on_board(op("aten::replication_pad3d", DEFAULT_OUT, OUT, Some("(Tensor self, SymInt[6] padding) -> Tensor"), DataMovement, DATA, Some(rearrange::replication_pad3d)), 165, "REPLICATION_PAD3D"),
    on_board(op("aten::narrow_copy", DEFAULT_OUT, OUT, Some("(Tensor self, int dim, SymInt start, SymInt length) -> Tensor"), DataMovement, DATA, Some(rearrange::narrow_copy)), 170, "NARROW_COPY"),
    quantizer(on_board(op("aten::unfold_copy", DEFAULT_OUT, OUT, Some("(Tensor self, int dimension, int size, int step) -> Tensor"), DataMovement, DATA, Some(rearrange::unfold_copy)), 178, "UNFOLD_COPY"), QuantizerRole::SharedQparams),
    quantizer(on_board(op("aten::unbind_copy", &["int", "int_out"], &["int_out"], Some("(Tensor self, int dim=0) -> Tensor[]"), DataMovement, DATA, Some(tensor::unbind_copy)), 139, "UNBIND_COPY"), QuantizerRole::SharedQparams),
    on_board(op("aten::slice_scatter", DEFAULT_OUT, OUT, Some("(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor"), DataMovement, DATA, Some(index::slice_scatter)), 172, "SLICE_SCATTER"),
    on_board(laid(op("aten::diagonal_copy", DEFAULT_OUT, OUT, Some("(Tensor self, int offset=0, int dim1=0, int dim2=1) -> Tensor"), DataMovement, DATA, Some(index::diagonal_copy)), LayoutRule::Reset), 155, "DIAGONAL_COPY"),
    on_board(op("aten::upsample_bilinear2d", &["vec", "vec_out"], &["vec_out"], Some("(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor"), DataMovement, DATA, Some(shape::upsample_bilinear2d)), 57, "UPSAMPLE_BILINEAR2D"),
    // ---- reductions over all or some dims (kernels/portable/nn.rs)
    quantizer(on_board(op("aten::amin", DEFAULT_OUT, OUT, Some("(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor"), Other, NONE, Some(nn::amin)), 113, "AMIN"), QuantizerRole::SharedQparams),
    typed(on_board(op("aten::argmax", DEFAULT_OUT, OUT, Some("(Tensor self, int? dim=None, bool keepdim=False) -> Tensor"), Other, NONE, Some(nn::argmax)), 114, "ARGMAX"), OutputDtype::Own),
    typed(on_board(op("aten::argmin", DEFAULT_OUT, OUT, Some("(Tensor self, int? dim=None, bool keepdim=False) -> Tensor"), Other, NONE, Some(nn::argmin)), 115, "ARGMIN"), OutputDtype::Own),
    on_board(op("aten::any", &["all", "all_out"], &["all_out"], Some("(Tensor self) -> Tensor"), Other, NONE, Some(nn::any_all)), 117, "ANY_ALL"),
    on_board(op("aten::any", &["dim", "dims", "out", "dims_out"], &["out", "dims_out"], Some("(Tensor self, int dim, bool keepdim=False) -> Tensor"), Other, NONE, Some(nn::any)), 116, "ANY"),
    on_board(op("aten::prod", &["default", "out"], &["out"], Some("(Tensor self, *, ScalarType? dtype=None) -> Tensor"), Other, NONE, Some(nn::prod_all)), 119, "PROD_ALL"),
    on_board(op("aten::prod", &["dim_int", "int_out"], &["int_out"], Some("(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"), Other, NONE, Some(nn::prod)), 118, "PROD"),
    on_board(op("aten::max", &["default", "unary_out"], &["unary_out"], Some("(Tensor self) -> Tensor"), Other, NONE, Some(nn::max_all)), 120, "MAX_ALL"),
    on_board(op("aten::min", &["default", "unary_out"], &["unary_out"], Some("(Tensor self) -> Tensor"), Other, NONE, Some(nn::min_all)), 121, "MIN_ALL"),
    // ---- data movement (kernels/portable/shape.rs)
    quantizer(on_board(laid(op("aten::transpose_copy", &["int", "int_out"], &["int_out"], Some("(Tensor self, int dim0, int dim1) -> Tensor"), DataMovement, DATA, Some(shape::transpose_copy)), LayoutRule::Reset), 51, "TRANSPOSE_COPY"), QuantizerRole::SharedQparams),
    quantizer(on_board(laid(op("aten::t_copy", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), DataMovement, DATA, Some(shape::t_copy)), LayoutRule::Reset), 50, "T_COPY"), QuantizerRole::SharedQparams),
    quantizer(on_board(op("aten::flip", DEFAULT_OUT, OUT, Some("(Tensor self, int[] dims) -> Tensor"), DataMovement, DATA, Some(shape::flip)), 124, "FLIP"), QuantizerRole::SharedQparams),
    on_board(op("aten::roll", DEFAULT_OUT, OUT, Some("(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor"), DataMovement, DATA, Some(shape::roll)), 136, "ROLL"),
    on_board(laid(op("aten::stack", DEFAULT_OUT, OUT, Some("(Tensor[] tensors, int dim=0) -> Tensor"), DataMovement, DATA, Some(shape::stack)), LayoutRule::Reset), 137, "STACK"),
    quantizer(on_board(op("aten::constant_pad_nd", DEFAULT_OUT, OUT, Some("(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor"), DataMovement, DATA, Some(shape::constant_pad_nd)), 123, "CONSTANT_PAD_ND"), QuantizerRole::SharedQparams),
    on_board(op("aten::upsample_nearest2d", &["vec", "vec_out"], &["vec_out"], Some("(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor"), DataMovement, DATA, Some(shape::upsample_nearest2d)), 56, "UPSAMPLE_NEAREST2D"),
    quantizer(on_board(laid(op("aten::index_select", DEFAULT_OUT, OUT, Some("(Tensor self, int dim, Tensor index) -> Tensor"), DataMovement, DATA, Some(shape::index_select)), LayoutRule::Reset), 125, "INDEX_SELECT"), QuantizerRole::SharedQparams),
    typed(on_board(laid(op("aten::embedding", DEFAULT_OUT, OUT, Some("(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor"), DataMovement, DATA, Some(shape::embedding)), LayoutRule::Reset), 68, "EMBEDDING"), OutputDtype::Own),
    on_board(op("aten::tril", DEFAULT_OUT, OUT, Some("(Tensor self, int diagonal=0) -> Tensor"), DataMovement, DATA, Some(shape::tril)), 138, "TRIL"),
    quantizer(on_board(laid(op("aten::repeat", DEFAULT_OUT, OUT, Some("(Tensor self, SymInt[] repeats) -> Tensor"), DataMovement, DATA, Some(shape::repeat)), LayoutRule::Reset), 135, "REPEAT"), QuantizerRole::SharedQparams),
    // ---- reductions
    on_board(op("aten::mean", &["dim", "out"], OUT, Some("(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"), Other, FLOAT_ONLY, Some(nn::mean)), 60, "MEAN"),
    on_board(op("aten::mean", &["default", "dtype_out"], &["dtype_out"], Some("(Tensor self, *, ScalarType? dtype=None) -> Tensor"), Other, FLOAT_ONLY, Some(nn::mean_all)), 142, "MEAN_ALL"),
    quantizer(on_board(op("aten::amax", DEFAULT_OUT, OUT, Some("(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor"), Other, NONE, Some(nn::amax)), 62, "AMAX"), QuantizerRole::SharedQparams),
    on_board(op("aten::sum", &["dim_IntList", "IntList_out"], &["IntList_out"], Some("(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"), Other, NONE, Some(nn::sum)), 61, "SUM"),
    // ---- data movement
    quantizer(on_board(laid(op("aten::permute_copy", DEFAULT_OUT, OUT, Some("(Tensor self, int[] dims) -> Tensor"), DataMovement, MOVE, Some(pt::permute_copy)), LayoutRule::Permute(1)), 46, "PERMUTE_COPY"), QuantizerRole::SharedQparams),
    computed_by(quantizer(on_board(laid(op("aten::view_copy", DEFAULT_OUT, OUT, Some("(Tensor self, SymInt[] size) -> Tensor"), DataMovement, COPY, Some(pt::copy)), LayoutRule::Reset), 45, "COPY"), QuantizerRole::SharedQparams), &VIEW),
    computed_by(laid(op("aten::view", &["default"], &[], Some("(Tensor(a) self, SymInt[] size) -> Tensor(a)"), DataMovement, DATA, None), LayoutRule::Reset), &VIEW),
    computed_by(laid(op("aten::reshape", &["default"], &[], Some("(Tensor(a) self, SymInt[] shape) -> Tensor(a)"), DataMovement, DATA, None), LayoutRule::Reset), &VIEW),
    computed_by(laid(op("aten::_unsafe_view", &["default"], &[], Some("(Tensor self, SymInt[] size) -> Tensor"), DataMovement, DATA, None), LayoutRule::Reset), &VIEW),
    computed_by(laid(op("aten::flatten", &["using_ints"], &[], Some("(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)"), DataMovement, DATA, None), LayoutRule::Reset), &VIEW),
    typed(on_board(op("aten::_to_copy", DEFAULT_OUT, OUT, Some("(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor"), DataMovement, DATA, Some(pt::copy)), 45, "COPY"), OutputDtype::DtypeArgument),
    on_board(op("aten::copy_", &["", "default"], &["", "default"], Some("(Tensor self, Tensor src, bool non_blocking=False) -> Tensor"), DataMovement, DATA, Some(shape::copy_in_place)), 148, "COPY_IN_PLACE"),
    on_board(op("aten::copy", DEFAULT_OUT, OUT, Some("(Tensor self, Tensor src, bool non_blocking=False) -> Tensor"), DataMovement, DATA, Some(shape::copy_out)), 149, "COPY_OUT"),
    quantizer(on_board(op("aten::clone", DEFAULT_OUT, OUT, Some("(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor"), DataMovement, COPY, Some(pt::copy)), 45, "COPY"), QuantizerRole::SharedQparams),
    quantizer(on_board(op("aten::alias_copy", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), DataMovement, DATA, Some(pt::copy)), 45, "COPY"), QuantizerRole::SharedQparams),
    on_board(op("aten::_to_dim_order_copy", DEFAULT_OUT, OUT, Some("(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, int[]? dim_order=None) -> Tensor"), DataMovement, DATA, Some(pt::copy)), 45, "COPY"),
    quantizer(typed(on_board(op("dim_order_ops::_to_dim_order_copy", DEFAULT_OUT, OUT, Some("(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, int[]? dim_order=None) -> Tensor"), DataMovement, COPY, Some(pt::copy)), 45, "COPY"), OutputDtype::DtypeArgument), QuantizerRole::SharedQparams),
    quantizer(on_board_integer(op("dim_order_ops::_clone_dim_order", DEFAULT_OUT, OUT, Some("(Tensor self, *, bool non_blocking=False, int[]? dim_order=None) -> Tensor"), DataMovement, COPY, Some(pt::copy)), 15, "CLONE_DIM_ORDER"), QuantizerRole::SharedQparams),
    quantizer(on_board(laid(op("aten::squeeze_copy", &["dims", "dim", "default", "dims_out", "dim_out", "out"], &["dims_out", "dim_out", "out"], None, DataMovement, COPY, Some(pt::copy)), LayoutRule::Reset), 45, "COPY"), QuantizerRole::SharedQparams),
    quantizer(on_board(laid(op("aten::unsqueeze_copy", DEFAULT_OUT, OUT, Some("(Tensor self, int dim) -> Tensor"), DataMovement, COPY, Some(pt::copy)), LayoutRule::Reset), 45, "COPY"), QuantizerRole::SharedQparams),
    quantizer(on_board(laid(op("aten::expand_copy", DEFAULT_OUT, OUT, Some("(Tensor self, SymInt[] size, *, bool implicit=False) -> Tensor"), DataMovement, DATA, Some(shape::expand_copy)), LayoutRule::Reset), 47, "EXPAND_COPY"), QuantizerRole::SharedQparams),
    on_board(laid(op("executorch_prim::et_view", &["default"], &["default"], Some("(Tensor self, int[] size) -> Tensor"), DataMovement, COPY, Some(pt::et_view)), LayoutRule::Reset), 150, "ET_VIEW"),
    permute_transparent(quantizer(on_board(op("aten::slice_copy", &["Tensor", "Tensor_out"], &["Tensor_out"], Some("(Tensor self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor"), DataMovement, DATA, Some(tensor::slice_copy)), 48, "SLICE_COPY"), QuantizerRole::SharedQparams)),
    quantizer(on_board(laid(op("aten::select_copy", &["int", "int_out"], &["int_out"], Some("(Tensor self, int dim, SymInt index) -> Tensor"), DataMovement, DATA, Some(tensor::select_copy)), LayoutRule::Reset), 49, "SELECT_COPY"), QuantizerRole::SharedQparams),
    quantizer(on_board(op("aten::split_with_sizes_copy", DEFAULT_OUT, OUT, Some("(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]"), DataMovement, DATA, Some(tensor::split_with_sizes_copy)), 53, "SPLIT_WITH_SIZES_COPY"), QuantizerRole::SharedQparams),
    quantizer(on_board(op("aten::split_copy", &["Tensor", "Tensor_out"], &["Tensor_out"], Some("(Tensor self, SymInt split_size, int dim=0) -> Tensor[]"), DataMovement, DATA, Some(tensor::split_copy)), 190, "SPLIT_COPY"), QuantizerRole::SharedQparams),
    permute_transparent(quantizer(typed(on_board(op("aten::cat", DEFAULT_OUT, OUT, Some("(Tensor[] tensors, int dim=0) -> Tensor"), DataMovement, NONE, Some(tensor::cat)), 52, "CAT"), OutputDtype::Promoted), QuantizerRole::SharedQparams)),
    typed(on_board(laid(op("aten::full", DEFAULT_OUT, OUT, Some("(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"), Other, NONE, Some(tensor::full)), LayoutRule::Reset), 70, "FULL"), OutputDtype::Own),
    on_board(op("aten::full_like", DEFAULT_OUT, OUT, Some("(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"), Other, NONE, Some(tensor::full)), 70, "FULL"),
    typed(on_board(laid(op("aten::arange", &["default", "start", "out", "start_out"], &["out", "start_out"], Some("(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"), Other, NONE, Some(tensor::arange)), LayoutRule::Reset), 134, "ARANGE"), OutputDtype::Own),
    laid(op("memory.alloc", &[""], &[""], None, DataMovement, NONE, Some(alloc)), LayoutRule::Reset),
    // ---- quantized_decomposed
    permute_transparent(on_board(op("quantized_decomposed::quantize_per_tensor", DEFAULT_OUT, OUT, Some("(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"), Quantize, QUANTIZER, Some(quantized::quantize_per_tensor)), 192, "QD_QUANTIZE")),
    permute_transparent(on_board(op("quantized_decomposed::dequantize_per_tensor", DEFAULT_OUT, OUT, Some("(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"), Quantize, DEQUANTIZER, Some(quantized::dequantize_per_tensor)), 193, "QD_DEQUANTIZE")),
    on_board(op("quantized_decomposed::dequantize_per_channel", DEFAULT_OUT, OUT, Some("(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"), Quantize, NONE, Some(quantized::dequantize_per_channel)), 194, "QD_DEQUANTIZE_PER_CHANNEL"),
    // ---- the Cortex-M backend (CMSIS-NN); schemas as ExecuTorch 1.5.1 declares them in
    // backends/cortex_m/ops/operators.yaml (the functional part, before the out argument)
    on_board_integer(noted(op("cortex_m::quantize_per_tensor", DEFAULT_OUT, OUT, Some("(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"), Quantize, QUANTIZER, Some(cm::quantize)), notes::unary), 1, "QUANTIZE"),
    on_board_integer(noted(op("cortex_m::dequantize_per_tensor", DEFAULT_OUT, OUT, Some("(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"), Quantize, DEQUANTIZER, Some(cm::dequantize)), notes::unary), 2, "DEQUANTIZE"),
    on_board_integer(noted(laid(op("cortex_m::transpose", DEFAULT_OUT, OUT, Some("(Tensor input, int[] perm) -> Tensor"), DataMovement, MOVE, Some(cm::transpose)), LayoutRule::Permute(1)), notes::transpose), 13, "TRANSPOSE"),
    on_board_integer(op("cortex_m::pad", DEFAULT_OUT, OUT, Some("(Tensor input, int[] pre_pad, int[] post_pad, int pad_value) -> Tensor"), DataMovement, MOVE, Some(cm::pad)), 14, "PAD"),
    on_board_integer(op("cortex_m::quantized_conv2d", DEFAULT_OUT, OUT, Some("(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int input_offset, int output_offset, Tensor requantize_multipliers, Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch) -> Tensor"), Convolution, WEIGHTED, Some(conv_nchw)), 5, "CONV"),
    on_board_integer(laid(op("cortex_m::quantized_conv2d_nhwc", DEFAULT_OUT, OUT, Some("(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int input_offset, int output_offset, Tensor requantize_multipliers, Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch) -> Tensor"), Convolution, WEIGHTED, Some(conv_nhwc)), LayoutRule::ChannelsLast), 3, "CONV_NHWC"),
    on_board_integer(op("cortex_m::quantized_depthwise_conv2d", DEFAULT_OUT, OUT, Some("(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int depth_multiplier, int input_offset, int output_offset, Tensor requantize_multipliers, Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch) -> Tensor"), Convolution, WEIGHTED, Some(depthwise_nchw)), 6, "DEPTHWISE"),
    on_board_integer(laid(op("cortex_m::quantized_depthwise_conv2d_nhwc", DEFAULT_OUT, OUT, Some("(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int depth_multiplier, int input_offset, int output_offset, Tensor requantize_multipliers, Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch) -> Tensor"), Convolution, WEIGHTED, Some(depthwise_nhwc)), LayoutRule::ChannelsLast), 4, "DEPTHWISE_NHWC"),
    on_board_integer(noted(op("cortex_m::quantized_transpose_conv2d", DEFAULT_OUT, OUT, Some("(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] output_padding, int[] dilation, int input_offset, int output_offset, Tensor requantize_multipliers, Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch, Tensor output_scratch) -> Tensor"), Convolution, WEIGHTED, Some(transpose_conv_nchw)), notes::transpose_conv_nchw), 24, "TRANSPOSE_CONV"),
    on_board_integer(noted(laid(op("cortex_m::quantized_transpose_conv2d_nhwc", DEFAULT_OUT, OUT, Some("(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] output_padding, int[] dilation, int input_offset, int output_offset, Tensor requantize_multipliers, Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch, Tensor output_scratch) -> Tensor"), Convolution, WEIGHTED, Some(transpose_conv_nhwc)), LayoutRule::ChannelsLast), notes::transpose_conv_nhwc), 23, "TRANSPOSE_CONV_NHWC"),
    on_board_integer(noted(laid(op("cortex_m::quantized_linear", DEFAULT_OUT, OUT, Some("(Tensor input, Tensor weights, Tensor? bias, Tensor? kernel_sum, int input_offset, int filter_offset, int output_offset, int[] requantize_multipliers, int[] requantize_shifts, int activation_max, int activation_min) -> Tensor"), Linear, WEIGHTED, Some(conv::linear)), LayoutRule::Reset), notes::linear), 7, "LINEAR"),
    on_board_integer(laid(op("cortex_m::quantized_batch_matmul", DEFAULT_OUT, OUT, Some("(Tensor lhs, int lhs_zero_point, Tensor rhs_transposed, int rhs_zero_point, int output_zero_point, int output_multiplier, int output_shift, Tensor scratch) -> Tensor"), Linear, NONE, Some(conv::batch_matmul)), LayoutRule::Reset), 22, "QUANTIZED_BATCH_MATMUL"),
    on_board_integer(op("cortex_m::quantized_avg_pool2d", DEFAULT_OUT, OUT, Some("(Tensor input, int[] kernel_size, int[] stride, int[] padding, bool ceil_mode, int zero_point, int multiplier, int shift, Tensor scratch) -> Tensor"), Pooling, NONE, Some(avg_pool_nchw)), 9, "AVG_POOL"),
    on_board_integer(laid(op("cortex_m::quantized_avg_pool2d_nhwc", DEFAULT_OUT, OUT, Some("(Tensor input, int[] kernel_size, int[] stride, int[] padding, bool ceil_mode, int zero_point, int multiplier, int shift, Tensor scratch) -> Tensor"), Pooling, NONE, Some(avg_pool_nhwc)), LayoutRule::ChannelsLast), 8, "AVG_POOL_NHWC"),
    on_board_integer(op("cortex_m::quantized_max_pool2d", DEFAULT_OUT, OUT, Some("(Tensor input, int[] kernel_size, int[] stride, int[] padding, int[] dilation, bool ceil_mode, int input_zero_point, int output_zero_point, int activation_min, int activation_max) -> Tensor"), Pooling, MOVE, Some(max_pool_nchw)), 11, "MAX_POOL"),
    on_board_integer(laid(op("cortex_m::quantized_max_pool2d_nhwc", DEFAULT_OUT, OUT, Some("(Tensor input, int[] kernel_size, int[] stride, int[] padding, int[] dilation, bool ceil_mode, int input_zero_point, int output_zero_point, int activation_min, int activation_max) -> Tensor"), Pooling, MOVE, Some(max_pool_nhwc)), LayoutRule::ChannelsLast), 10, "MAX_POOL_NHWC"),
    on_board_integer(noted(op("cortex_m::softmax", DEFAULT_OUT, OUT, Some("(Tensor input, int dim, int input_zero_point, int output_zero_point, int input_multiplier, int input_shift, int diff_min) -> Tensor"), Activation, NONE, Some(cm::softmax)), notes::softmax), 12, "SOFTMAX"),
    on_board_integer(noted(op("cortex_m::quantized_add", DEFAULT_OUT, OUT, Some("(Tensor self, int self_zero_point, int self_multiplier, int self_shift, Tensor other, int other_zero_point, int other_multiplier, int other_shift, int output_zero_point, int output_multiplier, int output_shift, int activation_min, int activation_max) -> Tensor"), Elementwise, ELEMENTWISE, Some(cm::add)), notes::add), 16, "QUANTIZED_ADD"),
    on_board_integer(noted(op("cortex_m::quantized_mul", DEFAULT_OUT, OUT, Some("(Tensor self, int self_zero_point, Tensor other, int other_zero_point, int output_zero_point, int output_multiplier, int output_shift) -> Tensor"), Elementwise, ELEMENTWISE, Some(cm::mul)), notes::mul_div), 17, "QUANTIZED_MUL"),
    on_board_integer(noted(op("cortex_m::quantized_div", DEFAULT_OUT, OUT, Some("(Tensor self, int self_zero_point, Tensor other, int other_zero_point, int output_zero_point, float output_scale) -> Tensor"), Elementwise, ELEMENTWISE, Some(cm::div)), notes::mul_div), 21, "QUANTIZED_DIV"),
    on_board_integer(noted(op("cortex_m::quantized_activation", DEFAULT_OUT, OUT, Some("(Tensor input, Tensor lut) -> Tensor"), Activation, ELEMENTWISE, Some(cm::activation)), notes::unary), 18, "QUANTIZED_ACTIVATION"),
    on_board_integer(noted(op("cortex_m::minimum", DEFAULT_OUT, OUT, Some("(Tensor self, Tensor other) -> Tensor"), Elementwise, ELEMENTWISE, Some(cm_min)), notes::min_max), 19, "MINIMUM"),
    on_board_integer(noted(op("cortex_m::maximum", DEFAULT_OUT, OUT, Some("(Tensor self, Tensor other) -> Tensor"), Elementwise, ELEMENTWISE, Some(cm_max)), notes::min_max), 20, "MAXIMUM"),
    // names the Cortex-M lowering matches in ExecuTorch's ATen and quantizer graphs, which no
    // program etscope runs holds (no kernel: named here so every operator name resolves)
    int8_clamp(op("aten::relu_", DEFAULT, NO_OUT, None, Activation, NONE, None)),
    int8_clamp(op("aten::hardtanh_", DEFAULT, NO_OUT, None, Activation, NONE, None)),
    op("aten::pad", DEFAULT, NO_OUT, None, DataMovement, NONE, None),
    typed(op("aten::matmul", DEFAULT, NO_OUT, None, Linear, NONE, None), OutputDtype::Promoted),
    op("quantized_decomposed::quantize_per_channel", DEFAULT, NO_OUT, None, Quantize, NONE, None),
    op("quantized_decomposed::quantize_per_token", DEFAULT, NO_OUT, None, Quantize, NONE, None),
    op("quantized_decomposed::dequantize_per_token", DEFAULT, NO_OUT, None, Quantize, NONE, None),
];

/// Name → the entries of that name (one per overload family).
pub(super) fn by_name() -> &'static HashMap<&'static str, Vec<OpId>> {
    static INDEX: OnceLock<HashMap<&'static str, Vec<OpId>>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut m: HashMap<&'static str, Vec<OpId>> = HashMap::new();
        for (i, d) in OPS.iter().enumerate() {
            let id = OpId(u16::try_from(i).unwrap_or(u16::MAX));
            m.entry(d.name).or_default().push(id);
        }
        m
    })
}

/// The parsed schema of `d`, parsed once.
pub(super) fn parsed_schema(d: &OpDef) -> Option<&'static Schema> {
    static PARSED: OnceLock<Vec<Option<Schema>>> = OnceLock::new();
    let all = PARSED.get_or_init(|| {
        OPS.iter()
            .map(|d| d.schema.and_then(Schema::parse))
            .collect()
    });
    let i = OPS.iter().position(|x| std::ptr::eq(x, d))?;
    all.get(i)?.as_ref()
}
