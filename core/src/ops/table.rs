//! The declarations: one [`OpDef`] per operator etscope knows. A new operator goes here (and
//! its kernel under `crate::kernels`); nothing else in the workspace names it.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::{
    BoardFamily, BoardKernel, Category, CortexMRules, CostModel, FormArg, KernelForm, LayoutRule,
    OpDef, OpId, OutputDtype, QuantizerRole, Schema, Traits,
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
/// An operator's row: its name, overloads (and which are out variants), category, traits and
/// host kernel; the methods below add its schema and what else it has.
const fn op(
    name: &'static str,
    overloads: &'static [&'static str],
    out_overloads: &'static [&'static str],
    category: Category,
    traits: Traits,
    kernel: Option<crate::kernels::KernelFn>,
) -> OpDef {
    OpDef {
        name,
        overloads,
        out_overloads,
        schema: None,
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
        cost: CostModel::Portable,
    }
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

/// What an operator's row adds to it, one method each, so a row reads as one chain.
impl OpDef {
    /// Its schema (`(Tensor self, ...) -> Tensor`), from which arguments are found by name.
    const fn schema(mut self, schema: &'static str) -> OpDef {
        self.schema = Some(schema);
        self
    }

    const fn laid(mut self, layout: LayoutRule) -> OpDef {
        self.layout = layout;
        self
    }

    /// Priced by the CMSIS-NN kernel model `cost` (a backend operator's path).
    const fn priced(mut self, cost: CostModel) -> OpDef {
        self.cost = cost;
        self
    }

    /// Computed on the emulated board by the portable kernel `OP_<symbol>` (image code `code`).
    const fn on_board(mut self, code: u32, symbol: &'static str) -> OpDef {
        self.board = Some(BoardKernel {
            code,
            symbol,
            family: BoardFamily::Portable,
        });
        self
    }

    /// Computed on the emulated board by the integer kernel `OP_<symbol>` beside the dispatch.
    const fn on_board_integer(mut self, code: u32, symbol: &'static str) -> OpDef {
        self.board = Some(BoardKernel {
            code,
            symbol,
            family: BoardFamily::Integer,
        });
        self
    }

    /// `ActivationFusionPass` folds it into its producer's range.
    const fn fused_activation(mut self) -> OpDef {
        self.cortex_m.fused_activation = true;
        self
    }

    /// `ActivationFusionPass` folds an activation after it into its output range.
    const fn takes_fused_activation(mut self) -> OpDef {
        self.cortex_m.takes_fused_activation = true;
        self
    }

    /// `QuantizedClampActivationPass` makes it a clamp on int8 tensors.
    const fn int8_clamp(mut self) -> OpDef {
        self.cortex_m.int8_clamp = true;
        self
    }

    /// Computed by another operator's kernel (`form`).
    const fn computed_by(mut self, form: &'static KernelForm) -> OpDef {
        self.computed_by = Some(form);
        self
    }

    /// `RemovePermutesAroundElementwiseOps` moves a layout permute through it.
    const fn permute_transparent(mut self) -> OpDef {
        self.cortex_m.permute_transparent = true;
        self
    }

    /// How `CortexMQuantizer` annotates it.
    const fn quantizer(mut self, role: QuantizerRole) -> OpDef {
        self.cortex_m.quantizer = role;
        self
    }

    /// The output dtype follows `rule` (not the first input's).
    const fn typed(mut self, rule: OutputDtype) -> OpDef {
        self.output_dtype = rule;
        self
    }

    const fn noted(mut self, rule: NoteFn) -> OpDef {
        self.device_note = Some(rule);
        self
    }
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
    op("aten::convolution", DEFAULT_OUT, OUT, Convolution, WEIGHTED, Some(pt::convolution))
        .schema("(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor")
        .on_board(67, "CONVOLUTION")
        .takes_fused_activation()
        .quantizer(QuantizerRole::Pattern),
    op("aten::conv2d", &["default"], &[], Convolution, WEIGHTED, None)
        .schema("(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0, SymInt[2] dilation=1, SymInt groups=1) -> Tensor")
        .computed_by(&CONV2D),
    op("aten::_native_batch_norm_legit_no_training", DEFAULT_OUT, OUT, Normalization, NONE, Some(pt::batch_norm))
        .schema("(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor)")
        .on_board(191, "BATCH_NORM"),
    op("aten::_native_batch_norm_legit", &["no_stats", "no_stats_out"], &["no_stats_out"], Normalization, NONE, Some(pt::batch_norm_no_stats))
        .schema("(Tensor input, Tensor? weight, Tensor? bias, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)")
        .on_board(195, "BATCH_NORM_NO_STATS"),
    op("aten::batch_norm", &["default"], &[], Normalization, NONE, None)
        .schema("(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor")
        .computed_by(&BATCH_NORM),
    op("aten::native_layer_norm", DEFAULT_OUT, OUT, Normalization, FLOAT_ONLY, Some(nn::layer_norm))
        .schema("(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)")
        .on_board(69, "LAYER_NORM"),
    op("aten::avg_pool2d", DEFAULT_OUT, OUT, Pooling, NONE, Some(pt::avg_pool2d))
        .schema("(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor")
        .on_board(54, "AVG_POOL2D")
        .quantizer(QuantizerRole::Pattern),
    op("aten::max_pool2d", &["default"], &[], Pooling, NONE, None)
        .schema("(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor")
        .takes_fused_activation()
        .quantizer(QuantizerRole::Pattern),
    // the explicit-layout flow's NHWC variants (ExecuTorch 1.5.1 `backends/transforms/
    // channels_last_ops.py`): intermediate stages of the lowering only, no kernel of their own
    op("channels_last::convolution", DEFAULT, NO_OUT, Convolution, WEIGHTED, None)
        .schema("(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups) -> Tensor"),
    op("channels_last::avg_pool2d", DEFAULT, NO_OUT, Pooling, NONE, None)
        .schema("(Tensor input, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor"),
    op("channels_last::max_pool2d", DEFAULT, NO_OUT, Pooling, NONE, None)
        .schema("(Tensor input, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor"),
    op("channels_last::permute_copy", DEFAULT, NO_OUT, DataMovement, MOVE, None)
        .schema("(Tensor input, int[] dims) -> Tensor"),
    op("aten::max_pool2d_with_indices", DEFAULT_OUT, OUT, Pooling, NONE, Some(nn::max_pool2d_with_indices))
        .schema("(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)")
        .on_board(55, "MAX_POOL2D_WITH_INDICES")
        .takes_fused_activation()
        .quantizer(QuantizerRole::Pattern),
    op("aten::addmm", DEFAULT_OUT, OUT, Linear, NONE, Some(pt::addmm))
        .schema("(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor")
        .laid(LayoutRule::Reset)
        .on_board(63, "ADDMM")
        .typed(OutputDtype::Promoted),
    op("aten::mm", DEFAULT_OUT, OUT, Linear, NONE, Some(pt::mm))
        .schema("(Tensor self, Tensor mat2) -> Tensor")
        .laid(LayoutRule::Reset)
        .on_board(64, "MM")
        .typed(OutputDtype::Promoted),
    op("aten::bmm", DEFAULT_OUT, OUT, Linear, NONE, Some(nn::bmm))
        .schema("(Tensor self, Tensor mat2) -> Tensor")
        .laid(LayoutRule::Reset)
        .on_board(65, "BMM")
        .typed(OutputDtype::Promoted)
        .quantizer(QuantizerRole::Pattern),
    op("aten::linear", DEFAULT_OUT, OUT, Linear, WEIGHTED, Some(pt::linear))
        .schema("(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor")
        .laid(LayoutRule::Reset)
        .on_board(66, "ATEN_LINEAR")
        .typed(OutputDtype::Promoted)
        .takes_fused_activation()
        .quantizer(QuantizerRole::Pattern),
    // ---- activations
    op("aten::relu", DEFAULT_OUT, OUT, Activation, ACTIVATION, Some(relu))
        .schema("(Tensor self) -> Tensor")
        .on_board(32, "RELU")
        .fused_activation()
        .int8_clamp()
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::sigmoid", DEFAULT_OUT, OUT, Activation, FLOAT_ACTIVATION, Some(sigmoid))
        .schema("(Tensor self) -> Tensor")
        .on_board(33, "SIGMOID")
        .quantizer(QuantizerRole::Pattern),
    op("aten::tanh", DEFAULT_OUT, OUT, Activation, FLOAT_ACTIVATION, Some(tanh))
        .schema("(Tensor self) -> Tensor")
        .on_board(34, "TANH")
        .quantizer(QuantizerRole::Pattern),
    op("aten::hardtanh", DEFAULT_OUT, OUT, Activation, ACTIVATION, Some(pt::hardtanh))
        .schema("(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor")
        .on_board_integer(25, "HARDTANH")
        .fused_activation()
        .int8_clamp()
        .quantizer(QuantizerRole::SharedQparams)
        .permute_transparent(),
    op("aten::clamp", DEFAULT_OUT, OUT, Activation, ACTIVATION, Some(tensor::clamp))
        .schema("(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor")
        .on_board(44, "CLAMP")
        .fused_activation()
        .int8_clamp()
        .quantizer(QuantizerRole::SharedQparams)
        .permute_transparent(),
    op("aten::gelu", DEFAULT_OUT, OUT, Activation, Traits { float_only: true, ..ELEMENTWISE }, Some(nn::gelu))
        .schema("(Tensor self, *, str approximate='none') -> Tensor")
        .on_board(42, "GELU")
        .quantizer(QuantizerRole::Pattern),
    op("aten::_softmax", DEFAULT_OUT, OUT, Activation, FLOAT_ONLY, Some(pt::softmax))
        .schema("(Tensor self, int dim, bool half_to_float) -> Tensor")
        .on_board(58, "FLOAT_SOFTMAX")
        .quantizer(QuantizerRole::Pattern),
    op("aten::softmax", &["int"], &[], Activation, NONE, None)
        .schema("(Tensor self, int dim, ScalarType? dtype=None) -> Tensor")
        .computed_by(&SOFTMAX),
    op("aten::hardswish", DEFAULT_OUT, OUT, Activation, FLOAT_ACTIVATION, Some(hardswish))
        .schema("(Tensor self) -> Tensor")
        .quantizer(QuantizerRole::Pattern),
    op("aten::hardsigmoid", DEFAULT_OUT, OUT, Activation, FLOAT_ACTIVATION, Some(hardsigmoid))
        .schema("(Tensor self) -> Tensor")
        .fused_activation()
        .quantizer(QuantizerRole::Pattern),
    op("aten::silu", DEFAULT_OUT, OUT, Activation, Traits { float_only: true, ..ELEMENTWISE }, None)
        .schema("(Tensor self) -> Tensor")
        .quantizer(QuantizerRole::Pattern),
    op("aten::elu", DEFAULT_OUT, OUT, Activation, Traits { float_only: true, ..ELEMENTWISE }, Some(math::elu))
        .schema("(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor")
        .on_board(129, "ELU"),
    // ---- elementwise arithmetic and comparison
    op("aten::add", &["Tensor", "Scalar", "out", "Scalar_out"], &["out", "Scalar_out"], Elementwise, ELEMENTWISE, Some(add))
        .schema("(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
        .on_board(26, "ADD")
        .typed(OutputDtype::Promoted)
        .takes_fused_activation()
        .quantizer(QuantizerRole::Pattern)
        .permute_transparent(),
    op("aten::sub", &["Tensor", "Scalar", "out", "Scalar_out"], &["out", "Scalar_out"], Elementwise, ELEMENTWISE, Some(sub))
        .schema("(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
        .on_board(27, "SUB")
        .typed(OutputDtype::Promoted)
        .takes_fused_activation()
        .quantizer(QuantizerRole::Pattern)
        .permute_transparent(),
    op("aten::mul", &["Tensor", "Scalar", "out", "Scalar_out"], &["out", "Scalar_out"], Elementwise, ELEMENTWISE, Some(mul))
        .schema("(Tensor self, Tensor other) -> Tensor")
        .on_board(28, "MUL")
        .typed(OutputDtype::Promoted)
        .quantizer(QuantizerRole::Pattern)
        .permute_transparent(),
    op("aten::div", &["Tensor", "Scalar", "out", "Scalar_out"], &["out", "Scalar_out"], Elementwise, ELEMENTWISE, Some(div))
        .schema("(Tensor self, Tensor other) -> Tensor")
        .on_board(29, "DIV")
        .quantizer(QuantizerRole::Pattern),
    op("aten::maximum", DEFAULT_OUT, OUT, Elementwise, ELEMENTWISE, Some(maximum))
        .schema("(Tensor self, Tensor other) -> Tensor")
        .on_board(30, "ATEN_MAXIMUM")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::minimum", DEFAULT_OUT, OUT, Elementwise, ELEMENTWISE, Some(minimum))
        .schema("(Tensor self, Tensor other) -> Tensor")
        .on_board(31, "ATEN_MINIMUM")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::eq", &["Scalar", "Tensor", "Scalar_out", "Tensor_out"], &["Scalar_out", "Tensor_out"], Elementwise, ELEMENTWISE, Some(eq))
        .schema("(Tensor self, Scalar other) -> Tensor")
        .on_board(71, "EQ")
        .typed(OutputDtype::Own)
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::ne", &["Scalar", "Tensor", "Scalar_out", "Tensor_out"], &["Scalar_out", "Tensor_out"], Elementwise, ELEMENTWISE, Some(ne))
        .schema("(Tensor self, Scalar other) -> Tensor")
        .on_board(72, "NE")
        .typed(OutputDtype::Own)
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::lt", &["Scalar", "Tensor", "Scalar_out", "Tensor_out"], &["Scalar_out", "Tensor_out"], Elementwise, ELEMENTWISE, Some(lt))
        .schema("(Tensor self, Scalar other) -> Tensor")
        .on_board(73, "LT")
        .typed(OutputDtype::Own)
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::le", &["Scalar", "Tensor", "Scalar_out", "Tensor_out"], &["Scalar_out", "Tensor_out"], Elementwise, ELEMENTWISE, Some(le))
        .schema("(Tensor self, Scalar other) -> Tensor")
        .on_board(74, "LE")
        .typed(OutputDtype::Own)
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::gt", &["Scalar", "Tensor", "Scalar_out", "Tensor_out"], &["Scalar_out", "Tensor_out"], Elementwise, ELEMENTWISE, Some(gt))
        .schema("(Tensor self, Scalar other) -> Tensor")
        .on_board(75, "GT")
        .typed(OutputDtype::Own)
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::ge", &["Scalar", "Tensor", "Scalar_out", "Tensor_out"], &["Scalar_out", "Tensor_out"], Elementwise, ELEMENTWISE, Some(ge))
        .schema("(Tensor self, Scalar other) -> Tensor")
        .on_board(76, "GE")
        .typed(OutputDtype::Own)
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::where", &["self", "self_out"], &["self_out"], Elementwise, ELEMENTWISE, Some(tensor::where_))
        .schema("(Tensor condition, Tensor self, Tensor other) -> Tensor")
        .on_board(77, "WHERE")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::exp", DEFAULT_OUT, OUT, Elementwise, Traits { float_only: true, ..ELEMENTWISE }, Some(exp_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(37, "EXP"),
    op("aten::log", DEFAULT_OUT, OUT, Elementwise, Traits { float_only: true, ..ELEMENTWISE }, Some(log_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(38, "LOG")
        .quantizer(QuantizerRole::Pattern),
    op("aten::sqrt", DEFAULT_OUT, OUT, Elementwise, Traits { float_only: true, ..ELEMENTWISE }, Some(sqrt_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(39, "SQRT")
        .quantizer(QuantizerRole::Pattern),
    op("aten::rsqrt", DEFAULT_OUT, OUT, Elementwise, Traits { float_only: true, ..ELEMENTWISE }, Some(rsqrt_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(40, "RSQRT")
        .quantizer(QuantizerRole::Pattern),
    // ---- portable math (kernels/portable/math.rs)
    op("aten::abs", DEFAULT_OUT, OUT, Elementwise, ELEMENTWISE, Some(abs_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(36, "ABS"),
    op("aten::neg", DEFAULT_OUT, OUT, Elementwise, ELEMENTWISE, Some(neg_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(35, "NEG"),
    op("aten::expm1", DEFAULT_OUT, OUT, Elementwise, FLOAT_ELEMENTWISE, Some(expm1_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(78, "EXPM1"),
    op("aten::log2", DEFAULT_OUT, OUT, Elementwise, FLOAT_ELEMENTWISE, Some(log2_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(79, "LOG2")
        .quantizer(QuantizerRole::Pattern),
    op("aten::log10", DEFAULT_OUT, OUT, Elementwise, FLOAT_ELEMENTWISE, Some(log10_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(80, "LOG10")
        .quantizer(QuantizerRole::Pattern),
    op("aten::log1p", DEFAULT_OUT, OUT, Elementwise, FLOAT_ELEMENTWISE, Some(log1p_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(81, "LOG1P")
        .quantizer(QuantizerRole::Pattern),
    op("aten::reciprocal", DEFAULT_OUT, OUT, Elementwise, FLOAT_ELEMENTWISE, Some(reciprocal_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(41, "RECIPROCAL"),
    op("aten::sin", DEFAULT_OUT, OUT, Elementwise, FLOAT_ELEMENTWISE, Some(sin_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(82, "SIN"),
    op("aten::cos", DEFAULT_OUT, OUT, Elementwise, FLOAT_ELEMENTWISE, Some(cos_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(83, "COS"),
    op("aten::tan", DEFAULT_OUT, OUT, Elementwise, FLOAT_ELEMENTWISE, Some(tan_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(84, "TAN"),
    op("aten::asin", DEFAULT_OUT, OUT, Elementwise, FLOAT_ELEMENTWISE, Some(asin_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(85, "ASIN"),
    op("aten::acos", DEFAULT_OUT, OUT, Elementwise, FLOAT_ELEMENTWISE, Some(acos_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(86, "ACOS"),
    op("aten::atan", DEFAULT_OUT, OUT, Elementwise, FLOAT_ELEMENTWISE, Some(atan_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(87, "ATAN"),
    op("aten::sinh", DEFAULT_OUT, OUT, Elementwise, FLOAT_ELEMENTWISE, Some(sinh_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(88, "SINH"),
    op("aten::cosh", DEFAULT_OUT, OUT, Elementwise, FLOAT_ELEMENTWISE, Some(cosh_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(89, "COSH"),
    op("aten::asinh", DEFAULT_OUT, OUT, Elementwise, FLOAT_ELEMENTWISE, Some(asinh_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(90, "ASINH"),
    op("aten::acosh", DEFAULT_OUT, OUT, Elementwise, FLOAT_ELEMENTWISE, Some(acosh_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(91, "ACOSH"),
    op("aten::atanh", DEFAULT_OUT, OUT, Elementwise, FLOAT_ELEMENTWISE, Some(atanh_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(92, "ATANH"),
    op("aten::erf", DEFAULT_OUT, OUT, Elementwise, FLOAT_ELEMENTWISE, Some(erf_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(93, "ERF"),
    op("aten::floor", DEFAULT_OUT, OUT, Elementwise, ELEMENTWISE, Some(floor_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(94, "FLOOR"),
    op("aten::ceil", DEFAULT_OUT, OUT, Elementwise, ELEMENTWISE, Some(ceil_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(95, "CEIL"),
    op("aten::round", DEFAULT_OUT, OUT, Elementwise, ELEMENTWISE, Some(round_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(96, "ROUND"),
    op("aten::trunc", DEFAULT_OUT, OUT, Elementwise, ELEMENTWISE, Some(trunc_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(97, "TRUNC"),
    op("aten::sign", DEFAULT_OUT, OUT, Elementwise, ELEMENTWISE, Some(sign_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(98, "SIGN"),
    op("aten::isnan", DEFAULT_OUT, OUT, Elementwise, ELEMENTWISE, Some(isnan_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(100, "ISNAN"),
    op("aten::isinf", DEFAULT_OUT, OUT, Elementwise, ELEMENTWISE, Some(isinf_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(101, "ISINF"),
    op("aten::logical_not", DEFAULT_OUT, OUT, Elementwise, ELEMENTWISE, Some(logical_not_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(102, "LOGICAL_NOT"),
    op("aten::bitwise_not", DEFAULT_OUT, OUT, Elementwise, ELEMENTWISE, Some(bitwise_not_k))
        .schema("(Tensor self) -> Tensor")
        .on_board(99, "BITWISE_NOT"),
    op("aten::leaky_relu", DEFAULT_OUT, OUT, Activation, ACTIVATION, Some(math::leaky_relu))
        .schema("(Tensor self, Scalar negative_slope=0.01) -> Tensor")
        .on_board(43, "LEAKY_RELU"),
    op("aten::_log_softmax", DEFAULT_OUT, OUT, Activation, FLOAT_ONLY, Some(math::log_softmax))
        .schema("(Tensor self, int dim, bool half_to_float) -> Tensor")
        .on_board(59, "LOG_SOFTMAX"),
    op("aten::atan2", DEFAULT_OUT, OUT, Elementwise, FLOAT_ELEMENTWISE, Some(atan2_k))
        .schema("(Tensor self, Tensor other) -> Tensor")
        .on_board(103, "ATAN2"),
    op("aten::pow", &["Tensor_Scalar", "Tensor_Tensor", "Tensor_Scalar_out", "Tensor_Tensor_out"], &["Tensor_Scalar_out", "Tensor_Tensor_out"], Elementwise, FLOAT_ELEMENTWISE, Some(pow_k))
        .schema("(Tensor self, Tensor exponent) -> Tensor")
        .on_board(104, "POW"),
    op("aten::pow", &["Scalar", "Scalar_out"], &["Scalar_out"], Elementwise, FLOAT_ELEMENTWISE, Some(math::pow_scalar_base))
        .schema("(Scalar self, Tensor exponent) -> Tensor")
        .on_board(177, "POW_SCALAR"),
    op("aten::fmod", &["Tensor", "Scalar", "Tensor_out", "Scalar_out"], &["Tensor_out", "Scalar_out"], Elementwise, ELEMENTWISE, Some(fmod_k))
        .schema("(Tensor self, Tensor other) -> Tensor")
        .on_board(105, "FMOD"),
    op("aten::remainder", &["Tensor", "Scalar", "Tensor_out", "Scalar_out"], &["Tensor_out", "Scalar_out"], Elementwise, ELEMENTWISE, Some(remainder_k))
        .schema("(Tensor self, Tensor other) -> Tensor")
        .on_board(106, "REMAINDER"),
    op("aten::div", &["Tensor_mode", "Scalar_mode", "out_mode", "Scalar_mode_out"], &["out_mode", "Scalar_mode_out"], Elementwise, ELEMENTWISE, Some(math::div_mode))
        .schema("(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor")
        .on_board(156, "DIV_MODE")
        .quantizer(QuantizerRole::Pattern),
    op("aten::logical_and", DEFAULT_OUT, OUT, Elementwise, ELEMENTWISE, Some(logical_and_k))
        .schema("(Tensor self, Tensor other) -> Tensor")
        .on_board(107, "LOGICAL_AND"),
    op("aten::logical_or", DEFAULT_OUT, OUT, Elementwise, ELEMENTWISE, Some(logical_or_k))
        .schema("(Tensor self, Tensor other) -> Tensor")
        .on_board(108, "LOGICAL_OR"),
    op("aten::logical_xor", DEFAULT_OUT, OUT, Elementwise, ELEMENTWISE, Some(logical_xor_k))
        .schema("(Tensor self, Tensor other) -> Tensor")
        .on_board(109, "LOGICAL_XOR"),
    op("aten::bitwise_and", &["Tensor", "Scalar", "Tensor_out", "Scalar_out"], &["Tensor_out", "Scalar_out"], Elementwise, ELEMENTWISE, Some(bitwise_and_k))
        .schema("(Tensor self, Tensor other) -> Tensor")
        .on_board(110, "BITWISE_AND"),
    op("aten::bitwise_left_shift", &["Tensor", "Tensor_Scalar", "Tensor_out", "Tensor_Scalar_out"], &["Tensor_out", "Tensor_Scalar_out"], Elementwise, ELEMENTWISE, Some(left_shift_k))
        .schema("(Tensor self, Tensor other) -> Tensor")
        .on_board(175, "BITWISE_LEFT_SHIFT"),
    op("aten::bitwise_right_shift", &["Tensor", "Tensor_Scalar", "Tensor_out", "Tensor_Scalar_out"], &["Tensor_out", "Tensor_Scalar_out"], Elementwise, ELEMENTWISE, Some(right_shift_k))
        .schema("(Tensor self, Tensor other) -> Tensor")
        .on_board(176, "BITWISE_RIGHT_SHIFT"),
    op("aten::bitwise_or", &["Tensor", "Scalar", "Tensor_out", "Scalar_out"], &["Tensor_out", "Scalar_out"], Elementwise, ELEMENTWISE, Some(bitwise_or_k))
        .schema("(Tensor self, Tensor other) -> Tensor")
        .on_board(111, "BITWISE_OR"),
    op("aten::bitwise_xor", &["Tensor", "Scalar", "Tensor_out", "Scalar_out"], &["Tensor_out", "Scalar_out"], Elementwise, ELEMENTWISE, Some(bitwise_xor_k))
        .schema("(Tensor self, Tensor other) -> Tensor")
        .on_board(112, "BITWISE_XOR"),
    op("aten::scalar_tensor", DEFAULT_OUT, OUT, Other, NONE, Some(math::scalar_tensor))
        .schema("(Scalar s, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor")
        .laid(LayoutRule::Reset)
        .on_board(143, "SCALAR_TENSOR"),
    op("aten::logit", DEFAULT_OUT, OUT, Activation, FLOAT_ELEMENTWISE, Some(math::logit))
        .schema("(Tensor self, float? eps=None) -> Tensor")
        .on_board(174, "LOGIT"),
    op("aten::glu", DEFAULT_OUT, OUT, Activation, FLOAT_ONLY, Some(math::glu))
        .schema("(Tensor self, int dim=-1) -> Tensor")
        .on_board(130, "GLU"),
    op("aten::rsub", &["Scalar", "Scalar_out"], &["Scalar_out"], Elementwise, ELEMENTWISE, Some(math::rsub))
        .schema("(Tensor self, Scalar other, Scalar alpha=1) -> Tensor")
        .on_board(140, "RSUB"),
    op("aten::floor_divide", DEFAULT_OUT, OUT, Elementwise, ELEMENTWISE, Some(math::floor_divide))
        .schema("(Tensor self, Tensor other) -> Tensor")
        .on_board(141, "FLOOR_DIVIDE"),
    op("aten::zeros", DEFAULT_OUT, OUT, Other, NONE, Some(math::zeros))
        .schema("(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor")
        .laid(LayoutRule::Reset)
        .on_board(132, "ZEROS"),
    op("aten::ones", DEFAULT_OUT, OUT, Other, NONE, Some(math::ones))
        .schema("(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor")
        .laid(LayoutRule::Reset)
        .on_board(133, "ONES"),
    op("aten::fill", &["Scalar", "Scalar_out"], &["Scalar_out"], Other, NONE, Some(math::fill))
        .schema("(Tensor self, Scalar value) -> Tensor")
        .on_board(131, "FILL"),
    op("aten::fill", &["Tensor", "Tensor_out"], &["Tensor_out"], Other, NONE, Some(math::fill_tensor))
        .schema("(Tensor self, Tensor value) -> Tensor")
        .on_board(144, "FILL_TENSOR"),
    op("aten::detach_copy", DEFAULT_OUT, OUT, DataMovement, COPY, Some(pt::copy))
        .schema("(Tensor self) -> Tensor")
        .on_board(45, "COPY")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::lift_fresh_copy", DEFAULT_OUT, OUT, DataMovement, COPY, Some(pt::copy))
        .schema("(Tensor self) -> Tensor")
        .on_board(45, "COPY"),
    op("aten::clamp", &["Tensor", "Tensor_out"], &["Tensor_out"], Activation, ELEMENTWISE, Some(math::clamp_tensor))
        .schema("(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor")
        .on_board(169, "CLAMP_TENSOR")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::_adaptive_avg_pool2d", DEFAULT_OUT, OUT, Pooling, NONE, Some(nn::adaptive_avg_pool2d))
        .schema("(Tensor self, SymInt[2] output_size) -> Tensor")
        .on_board(122, "ADAPTIVE_AVG_POOL2D"),
    op("aten::native_group_norm", DEFAULT_OUT, OUT, Normalization, FLOAT_ONLY, Some(nn::group_norm))
        .schema("(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)")
        .on_board(173, "GROUP_NORM"),
    op("aten::cumsum", DEFAULT_OUT, OUT, Other, NONE, Some(nn::cumsum))
        .schema("(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor")
        .on_board(126, "CUMSUM"),
    op("aten::var", &["correction", "correction_out"], &["correction_out"], Other, FLOAT_ONLY, Some(nn::var))
        .schema("(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor")
        .on_board(127, "VAR_CORRECTION"),
    op("aten::var", &["dim", "out"], OUT, Other, FLOAT_ONLY, Some(nn::var_unbiased))
        .schema("(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor")
        .on_board(128, "VAR_UNBIASED"),
    op("aten::var_mean", &["correction", "correction_out"], &["correction_out"], Other, FLOAT_ONLY, Some(nn::var_mean))
        .schema("(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)")
        .on_board(168, "VAR_MEAN"),
    op("aten::max", &["dim", "dim_max"], &["dim_max"], Other, NONE, Some(index::max_dim))
        .schema("(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)")
        .on_board(166, "MAX_DIM"),
    op("aten::min", &["dim", "dim_min"], &["dim_min"], Other, NONE, Some(index::min_dim))
        .schema("(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)")
        .on_board(167, "MIN_DIM"),
    op("aten::topk", &["default", "values"], &["values"], Other, NONE, Some(index::topk))
        .schema("(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)")
        .on_board(181, "TOPK"),
    op("aten::gather", DEFAULT_OUT, OUT, DataMovement, DATA, Some(index::gather))
        .schema("(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor")
        .laid(LayoutRule::Reset)
        .on_board(151, "GATHER")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::index", &["Tensor", "Tensor_out"], &["Tensor_out"], DataMovement, DATA, Some(index::index_tensor))
        .schema("(Tensor self, Tensor?[] indices) -> Tensor")
        .laid(LayoutRule::Reset)
        .on_board(145, "INDEX")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::scatter", &["src", "src_out"], &["src_out"], DataMovement, DATA, Some(index::scatter))
        .schema("(Tensor self, int dim, Tensor index, Tensor src) -> Tensor")
        .on_board(152, "SCATTER"),
    op("aten::scatter_add", DEFAULT_OUT, OUT, DataMovement, DATA, Some(index::scatter_add))
        .schema("(Tensor self, int dim, Tensor index, Tensor src) -> Tensor")
        .on_board(153, "SCATTER_ADD"),
    op("aten::index_put_", &["", "default"], &["", "default"], DataMovement, DATA, Some(index::index_put_in_place))
        .schema("(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor")
        .on_board(147, "INDEX_PUT_IN_PLACE"),
    op("aten::index_put", DEFAULT_OUT, OUT, DataMovement, DATA, Some(index::index_put))
        .schema("(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor")
        .on_board(146, "INDEX_PUT")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::scatter", &["value", "value_out"], &["value_out"], DataMovement, DATA, Some(index::scatter_value))
        .schema("(Tensor self, int dim, Tensor index, Scalar value) -> Tensor")
        .on_board(154, "SCATTER_VALUE"),
    op("aten::masked_scatter", DEFAULT_OUT, OUT, DataMovement, DATA, Some(rearrange::masked_scatter))
        .schema("(Tensor self, Tensor mask, Tensor source) -> Tensor")
        .on_board(185, "MASKED_SCATTER"),
    op("aten::as_strided_copy", DEFAULT_OUT, OUT, DataMovement, DATA, Some(rearrange::as_strided_copy))
        .schema("(Tensor self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor")
        .on_board(179, "AS_STRIDED_COPY")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::empty", &["memory_format", "out"], OUT, Other, NONE, Some(rearrange::empty))
        .schema("(SymInt[] size, *, MemoryFormat? memory_format=None) -> Tensor")
        .on_board(180, "EMPTY"),
    op("dim_order_ops::_empty_dim_order", DEFAULT_OUT, OUT, Other, NONE, Some(rearrange::empty))
        .schema("(int[] size, *, int[]? dim_order=None) -> Tensor")
        .on_board(180, "EMPTY"),
    op("aten::_upsample_bilinear2d_aa", DEFAULT_OUT, OUT, DataMovement, FLOAT_ONLY, Some(nn::upsample_bilinear2d_aa))
        .schema("(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor")
        .on_board(189, "UPSAMPLE_BILINEAR2D_AA"),
    op("aten::nonzero", DEFAULT_OUT, OUT, DataMovement, DATA, Some(rearrange::nonzero))
        .schema("(Tensor self) -> Tensor")
        .on_board(182, "NONZERO"),
    op("aten::masked_select", DEFAULT_OUT, OUT, DataMovement, DATA, Some(rearrange::masked_select))
        .schema("(Tensor self, Tensor mask) -> Tensor")
        .on_board(183, "MASKED_SELECT"),
    op("aten::repeat_interleave", &["Tensor", "Tensor_out"], &["Tensor_out"], DataMovement, DATA, Some(rearrange::repeat_interleave))
        .schema("(Tensor repeats, *, SymInt? output_size=None) -> Tensor")
        .on_board(184, "REPEAT_INTERLEAVE")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::grid_sampler_2d", DEFAULT_OUT, OUT, Other, FLOAT_ONLY, Some(nn::grid_sampler_2d))
        .schema("(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) -> Tensor")
        .on_board(188, "GRID_SAMPLER2D"),
    op("aten::_cdist_forward", DEFAULT_OUT, OUT, Other, FLOAT_ONLY, Some(nn::cdist))
        .schema("(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor")
        .on_board(186, "CDIST_FORWARD"),
    op("aten::_pdist_forward", DEFAULT_OUT, OUT, Other, FLOAT_ONLY, Some(nn::pdist))
        .schema("(Tensor self, float p=2) -> Tensor")
        .on_board(187, "PDIST_FORWARD"),
    op("aten::select_scatter", DEFAULT_OUT, OUT, DataMovement, DATA, Some(rearrange::select_scatter))
        .schema("(Tensor self, Tensor src, int dim, SymInt index) -> Tensor")
        .on_board(171, "SELECT_SCATTER"),
    op("aten::masked_fill", &["Scalar", "Scalar_out"], &["Scalar_out"], Elementwise, NONE, Some(rearrange::masked_fill))
        .schema("(Tensor self, Tensor mask, Scalar value) -> Tensor")
        .on_board(157, "MASKED_FILL"),
    op("aten::pixel_shuffle", DEFAULT_OUT, OUT, DataMovement, DATA, Some(rearrange::pixel_shuffle))
        .schema("(Tensor self, int upscale_factor) -> Tensor")
        .on_board(158, "PIXEL_SHUFFLE")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::pixel_unshuffle", DEFAULT_OUT, OUT, DataMovement, DATA, Some(rearrange::pixel_unshuffle))
        .schema("(Tensor self, int downscale_factor) -> Tensor")
        .on_board(159, "PIXEL_UNSHUFFLE")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::reflection_pad1d", DEFAULT_OUT, OUT, DataMovement, DATA, Some(rearrange::reflection_pad1d))
        .schema("(Tensor self, SymInt[2] padding) -> Tensor")
        .on_board(160, "REFLECTION_PAD1D"),
    op("aten::reflection_pad2d", DEFAULT_OUT, OUT, DataMovement, DATA, Some(rearrange::reflection_pad2d))
        .schema("(Tensor self, SymInt[4] padding) -> Tensor")
        .on_board(161, "REFLECTION_PAD2D"),
    op("aten::reflection_pad3d", DEFAULT_OUT, OUT, DataMovement, DATA, Some(rearrange::reflection_pad3d))
        .schema("(Tensor self, SymInt[6] padding) -> Tensor")
        .on_board(162, "REFLECTION_PAD3D"),
    op("aten::replication_pad1d", DEFAULT_OUT, OUT, DataMovement, DATA, Some(rearrange::replication_pad1d))
        .schema("(Tensor self, SymInt[2] padding) -> Tensor")
        .on_board(163, "REPLICATION_PAD1D"),
    op("aten::replication_pad2d", DEFAULT_OUT, OUT, DataMovement, DATA, Some(rearrange::replication_pad2d))
        .schema("(Tensor self, SymInt[4] padding) -> Tensor")
        .on_board(164, "REPLICATION_PAD2D"),
    op("aten::replication_pad3d", DEFAULT_OUT, OUT, DataMovement, DATA, Some(rearrange::replication_pad3d))
        .schema("(Tensor self, SymInt[6] padding) -> Tensor")
        .on_board(165, "REPLICATION_PAD3D"),
    op("aten::narrow_copy", DEFAULT_OUT, OUT, DataMovement, DATA, Some(rearrange::narrow_copy))
        .schema("(Tensor self, int dim, SymInt start, SymInt length) -> Tensor")
        .on_board(170, "NARROW_COPY"),
    op("aten::unfold_copy", DEFAULT_OUT, OUT, DataMovement, DATA, Some(rearrange::unfold_copy))
        .schema("(Tensor self, int dimension, int size, int step) -> Tensor")
        .on_board(178, "UNFOLD_COPY")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::unbind_copy", &["int", "int_out"], &["int_out"], DataMovement, DATA, Some(tensor::unbind_copy))
        .schema("(Tensor self, int dim=0) -> Tensor[]")
        .on_board(139, "UNBIND_COPY")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::slice_scatter", DEFAULT_OUT, OUT, DataMovement, DATA, Some(index::slice_scatter))
        .schema("(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor")
        .on_board(172, "SLICE_SCATTER"),
    op("aten::diagonal_copy", DEFAULT_OUT, OUT, DataMovement, DATA, Some(index::diagonal_copy))
        .schema("(Tensor self, int offset=0, int dim1=0, int dim2=1) -> Tensor")
        .laid(LayoutRule::Reset)
        .on_board(155, "DIAGONAL_COPY"),
    op("aten::upsample_bilinear2d", &["vec", "vec_out"], &["vec_out"], DataMovement, DATA, Some(shape::upsample_bilinear2d))
        .schema("(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor")
        .on_board(57, "UPSAMPLE_BILINEAR2D"),
    // ---- reductions over all or some dims (kernels/portable/nn.rs)
    op("aten::amin", DEFAULT_OUT, OUT, Other, NONE, Some(nn::amin))
        .schema("(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor")
        .on_board(113, "AMIN")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::argmax", DEFAULT_OUT, OUT, Other, NONE, Some(nn::argmax))
        .schema("(Tensor self, int? dim=None, bool keepdim=False) -> Tensor")
        .on_board(114, "ARGMAX")
        .typed(OutputDtype::Own),
    op("aten::argmin", DEFAULT_OUT, OUT, Other, NONE, Some(nn::argmin))
        .schema("(Tensor self, int? dim=None, bool keepdim=False) -> Tensor")
        .on_board(115, "ARGMIN")
        .typed(OutputDtype::Own),
    op("aten::any", &["all", "all_out"], &["all_out"], Other, NONE, Some(nn::any_all))
        .schema("(Tensor self) -> Tensor")
        .on_board(117, "ANY_ALL"),
    op("aten::any", &["dim", "dims", "out", "dims_out"], &["out", "dims_out"], Other, NONE, Some(nn::any))
        .schema("(Tensor self, int dim, bool keepdim=False) -> Tensor")
        .on_board(116, "ANY"),
    op("aten::prod", &["default", "out"], &["out"], Other, NONE, Some(nn::prod_all))
        .schema("(Tensor self, *, ScalarType? dtype=None) -> Tensor")
        .on_board(119, "PROD_ALL"),
    op("aten::prod", &["dim_int", "int_out"], &["int_out"], Other, NONE, Some(nn::prod))
        .schema("(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor")
        .on_board(118, "PROD"),
    op("aten::max", &["default", "unary_out"], &["unary_out"], Other, NONE, Some(nn::max_all))
        .schema("(Tensor self) -> Tensor")
        .on_board(120, "MAX_ALL"),
    op("aten::min", &["default", "unary_out"], &["unary_out"], Other, NONE, Some(nn::min_all))
        .schema("(Tensor self) -> Tensor")
        .on_board(121, "MIN_ALL"),
    // ---- data movement (kernels/portable/shape.rs)
    op("aten::transpose_copy", &["int", "int_out"], &["int_out"], DataMovement, DATA, Some(shape::transpose_copy))
        .schema("(Tensor self, int dim0, int dim1) -> Tensor")
        .laid(LayoutRule::Reset)
        .on_board(51, "TRANSPOSE_COPY")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::t_copy", DEFAULT_OUT, OUT, DataMovement, DATA, Some(shape::t_copy))
        .schema("(Tensor self) -> Tensor")
        .laid(LayoutRule::Reset)
        .on_board(50, "T_COPY")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::flip", DEFAULT_OUT, OUT, DataMovement, DATA, Some(shape::flip))
        .schema("(Tensor self, int[] dims) -> Tensor")
        .on_board(124, "FLIP")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::roll", DEFAULT_OUT, OUT, DataMovement, DATA, Some(shape::roll))
        .schema("(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor")
        .on_board(136, "ROLL"),
    op("aten::stack", DEFAULT_OUT, OUT, DataMovement, DATA, Some(shape::stack))
        .schema("(Tensor[] tensors, int dim=0) -> Tensor")
        .laid(LayoutRule::Reset)
        .on_board(137, "STACK"),
    op("aten::constant_pad_nd", DEFAULT_OUT, OUT, DataMovement, DATA, Some(shape::constant_pad_nd))
        .schema("(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor")
        .on_board(123, "CONSTANT_PAD_ND")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::upsample_nearest2d", &["vec", "vec_out"], &["vec_out"], DataMovement, DATA, Some(shape::upsample_nearest2d))
        .schema("(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor")
        .on_board(56, "UPSAMPLE_NEAREST2D"),
    op("aten::index_select", DEFAULT_OUT, OUT, DataMovement, DATA, Some(shape::index_select))
        .schema("(Tensor self, int dim, Tensor index) -> Tensor")
        .laid(LayoutRule::Reset)
        .on_board(125, "INDEX_SELECT")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::embedding", DEFAULT_OUT, OUT, DataMovement, DATA, Some(shape::embedding))
        .schema("(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor")
        .laid(LayoutRule::Reset)
        .on_board(68, "EMBEDDING")
        .typed(OutputDtype::Own),
    op("aten::tril", DEFAULT_OUT, OUT, DataMovement, DATA, Some(shape::tril))
        .schema("(Tensor self, int diagonal=0) -> Tensor")
        .on_board(138, "TRIL"),
    op("aten::repeat", DEFAULT_OUT, OUT, DataMovement, DATA, Some(shape::repeat))
        .schema("(Tensor self, SymInt[] repeats) -> Tensor")
        .laid(LayoutRule::Reset)
        .on_board(135, "REPEAT")
        .quantizer(QuantizerRole::SharedQparams),
    // ---- reductions
    op("aten::mean", &["dim", "out"], OUT, Other, FLOAT_ONLY, Some(nn::mean))
        .schema("(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor")
        .on_board(60, "MEAN"),
    op("aten::mean", &["default", "dtype_out"], &["dtype_out"], Other, FLOAT_ONLY, Some(nn::mean_all))
        .schema("(Tensor self, *, ScalarType? dtype=None) -> Tensor")
        .on_board(142, "MEAN_ALL"),
    op("aten::amax", DEFAULT_OUT, OUT, Other, NONE, Some(nn::amax))
        .schema("(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor")
        .on_board(62, "AMAX")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::sum", &["dim_IntList", "IntList_out"], &["IntList_out"], Other, NONE, Some(nn::sum))
        .schema("(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor")
        .on_board(61, "SUM"),
    // ---- data movement
    op("aten::permute_copy", DEFAULT_OUT, OUT, DataMovement, MOVE, Some(pt::permute_copy))
        .schema("(Tensor self, int[] dims) -> Tensor")
        .laid(LayoutRule::Permute(1))
        .on_board(46, "PERMUTE_COPY")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::view_copy", DEFAULT_OUT, OUT, DataMovement, COPY, Some(pt::copy))
        .schema("(Tensor self, SymInt[] size) -> Tensor")
        .laid(LayoutRule::Reset)
        .on_board(45, "COPY")
        .quantizer(QuantizerRole::SharedQparams)
        .computed_by(&VIEW),
    op("aten::view", &["default"], &[], DataMovement, DATA, None)
        .schema("(Tensor(a) self, SymInt[] size) -> Tensor(a)")
        .laid(LayoutRule::Reset)
        .computed_by(&VIEW),
    op("aten::reshape", &["default"], &[], DataMovement, DATA, None)
        .schema("(Tensor(a) self, SymInt[] shape) -> Tensor(a)")
        .laid(LayoutRule::Reset)
        .computed_by(&VIEW),
    op("aten::_unsafe_view", &["default"], &[], DataMovement, DATA, None)
        .schema("(Tensor self, SymInt[] size) -> Tensor")
        .laid(LayoutRule::Reset)
        .computed_by(&VIEW),
    op("aten::flatten", &["using_ints"], &[], DataMovement, DATA, None)
        .schema("(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)")
        .laid(LayoutRule::Reset)
        .computed_by(&VIEW),
    op("aten::_to_copy", DEFAULT_OUT, OUT, DataMovement, DATA, Some(pt::copy))
        .schema("(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor")
        .on_board(45, "COPY")
        .typed(OutputDtype::DtypeArgument),
    op("aten::copy_", &["", "default"], &["", "default"], DataMovement, DATA, Some(shape::copy_in_place))
        .schema("(Tensor self, Tensor src, bool non_blocking=False) -> Tensor")
        .on_board(148, "COPY_IN_PLACE"),
    op("aten::copy", DEFAULT_OUT, OUT, DataMovement, DATA, Some(shape::copy_out))
        .schema("(Tensor self, Tensor src, bool non_blocking=False) -> Tensor")
        .on_board(149, "COPY_OUT"),
    op("aten::clone", DEFAULT_OUT, OUT, DataMovement, COPY, Some(pt::copy))
        .schema("(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor")
        .on_board(45, "COPY")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::alias_copy", DEFAULT_OUT, OUT, DataMovement, DATA, Some(pt::copy))
        .schema("(Tensor self) -> Tensor")
        .on_board(45, "COPY")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::_to_dim_order_copy", DEFAULT_OUT, OUT, DataMovement, DATA, Some(pt::copy))
        .schema("(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, int[]? dim_order=None) -> Tensor")
        .on_board(45, "COPY"),
    op("dim_order_ops::_to_dim_order_copy", DEFAULT_OUT, OUT, DataMovement, COPY, Some(pt::copy))
        .schema("(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, int[]? dim_order=None) -> Tensor")
        .on_board(45, "COPY")
        .typed(OutputDtype::DtypeArgument)
        .quantizer(QuantizerRole::SharedQparams),
    op("dim_order_ops::_clone_dim_order", DEFAULT_OUT, OUT, DataMovement, COPY, Some(pt::copy))
        .schema("(Tensor self, *, bool non_blocking=False, int[]? dim_order=None) -> Tensor")
        .on_board_integer(15, "CLONE_DIM_ORDER")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::squeeze_copy", &["dims", "dim", "default", "dims_out", "dim_out", "out"], &["dims_out", "dim_out", "out"], DataMovement, COPY, Some(pt::copy))
        .laid(LayoutRule::Reset)
        .on_board(45, "COPY")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::unsqueeze_copy", DEFAULT_OUT, OUT, DataMovement, COPY, Some(pt::copy))
        .schema("(Tensor self, int dim) -> Tensor")
        .laid(LayoutRule::Reset)
        .on_board(45, "COPY")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::expand_copy", DEFAULT_OUT, OUT, DataMovement, DATA, Some(shape::expand_copy))
        .schema("(Tensor self, SymInt[] size, *, bool implicit=False) -> Tensor")
        .laid(LayoutRule::Reset)
        .on_board(47, "EXPAND_COPY")
        .quantizer(QuantizerRole::SharedQparams),
    op("executorch_prim::et_view", &["default"], &["default"], DataMovement, COPY, Some(pt::et_view))
        .schema("(Tensor self, int[] size) -> Tensor")
        .laid(LayoutRule::Reset)
        .on_board(150, "ET_VIEW"),
    op("aten::slice_copy", &["Tensor", "Tensor_out"], &["Tensor_out"], DataMovement, DATA, Some(tensor::slice_copy))
        .schema("(Tensor self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor")
        .on_board(48, "SLICE_COPY")
        .quantizer(QuantizerRole::SharedQparams)
        .permute_transparent(),
    op("aten::select_copy", &["int", "int_out"], &["int_out"], DataMovement, DATA, Some(tensor::select_copy))
        .schema("(Tensor self, int dim, SymInt index) -> Tensor")
        .laid(LayoutRule::Reset)
        .on_board(49, "SELECT_COPY")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::split_with_sizes_copy", DEFAULT_OUT, OUT, DataMovement, DATA, Some(tensor::split_with_sizes_copy))
        .schema("(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]")
        .on_board(53, "SPLIT_WITH_SIZES_COPY")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::split_copy", &["Tensor", "Tensor_out"], &["Tensor_out"], DataMovement, DATA, Some(tensor::split_copy))
        .schema("(Tensor self, SymInt split_size, int dim=0) -> Tensor[]")
        .on_board(190, "SPLIT_COPY")
        .quantizer(QuantizerRole::SharedQparams),
    op("aten::cat", DEFAULT_OUT, OUT, DataMovement, NONE, Some(tensor::cat))
        .schema("(Tensor[] tensors, int dim=0) -> Tensor")
        .on_board(52, "CAT")
        .typed(OutputDtype::Promoted)
        .quantizer(QuantizerRole::SharedQparams)
        .permute_transparent(),
    op("aten::full", DEFAULT_OUT, OUT, Other, NONE, Some(tensor::full))
        .schema("(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor")
        .laid(LayoutRule::Reset)
        .on_board(70, "FULL")
        .typed(OutputDtype::Own),
    op("aten::full_like", DEFAULT_OUT, OUT, Other, NONE, Some(tensor::full))
        .schema("(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor")
        .on_board(70, "FULL"),
    op("aten::arange", &["default", "start", "out", "start_out"], &["out", "start_out"], Other, NONE, Some(tensor::arange))
        .schema("(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor")
        .laid(LayoutRule::Reset)
        .on_board(134, "ARANGE")
        .typed(OutputDtype::Own),
    op("memory.alloc", &[""], &[""], DataMovement, NONE, Some(alloc))
        .laid(LayoutRule::Reset),
    // ---- quantized_decomposed
    op("quantized_decomposed::quantize_per_tensor", DEFAULT_OUT, OUT, Quantize, QUANTIZER, Some(quantized::quantize_per_tensor))
        .schema("(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor")
        .on_board(192, "QD_QUANTIZE")
        .permute_transparent(),
    op("quantized_decomposed::dequantize_per_tensor", DEFAULT_OUT, OUT, Quantize, DEQUANTIZER, Some(quantized::dequantize_per_tensor))
        .schema("(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor")
        .on_board(193, "QD_DEQUANTIZE")
        .permute_transparent(),
    op("quantized_decomposed::dequantize_per_channel", DEFAULT_OUT, OUT, Quantize, NONE, Some(quantized::dequantize_per_channel))
        .schema("(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor")
        .on_board(194, "QD_DEQUANTIZE_PER_CHANNEL"),
    // ---- the Cortex-M backend (CMSIS-NN); schemas as ExecuTorch 1.5.1 declares them in
    // backends/cortex_m/ops/operators.yaml (the functional part, before the out argument)
    op("cortex_m::quantize_per_tensor", DEFAULT_OUT, OUT, Quantize, QUANTIZER, Some(cm::quantize))
        .priced(CostModel::CmsisQuantize)
        .schema("(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor")
        .noted(notes::unary)
        .on_board_integer(1, "QUANTIZE"),
    op("cortex_m::dequantize_per_tensor", DEFAULT_OUT, OUT, Quantize, DEQUANTIZER, Some(cm::dequantize))
        .priced(CostModel::CmsisDequantize)
        .schema("(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor")
        .noted(notes::unary)
        .on_board_integer(2, "DEQUANTIZE"),
    op("cortex_m::transpose", DEFAULT_OUT, OUT, DataMovement, MOVE, Some(cm::transpose))
        .priced(CostModel::CmsisTranspose)
        .schema("(Tensor input, int[] perm) -> Tensor")
        .laid(LayoutRule::Permute(1))
        .noted(notes::transpose)
        .on_board_integer(13, "TRANSPOSE"),
    op("cortex_m::pad", DEFAULT_OUT, OUT, DataMovement, MOVE, Some(cm::pad))
        .priced(CostModel::CmsisPad)
        .schema("(Tensor input, int[] pre_pad, int[] post_pad, int pad_value) -> Tensor")
        .on_board_integer(14, "PAD"),
    op("cortex_m::quantized_conv2d", DEFAULT_OUT, OUT, Convolution, WEIGHTED, Some(conv_nchw))
        .priced(CostModel::CmsisConv)
        .schema("(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int input_offset, int output_offset, Tensor requantize_multipliers, Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch) -> Tensor")
        .on_board_integer(5, "CONV"),
    op("cortex_m::quantized_conv2d_nhwc", DEFAULT_OUT, OUT, Convolution, WEIGHTED, Some(conv_nhwc))
        .priced(CostModel::CmsisConv)
        .schema("(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int input_offset, int output_offset, Tensor requantize_multipliers, Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch) -> Tensor")
        .laid(LayoutRule::ChannelsLast)
        .on_board_integer(3, "CONV_NHWC"),
    op("cortex_m::quantized_depthwise_conv2d", DEFAULT_OUT, OUT, Convolution, WEIGHTED, Some(depthwise_nchw))
        .priced(CostModel::CmsisDepthwise)
        .schema("(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int depth_multiplier, int input_offset, int output_offset, Tensor requantize_multipliers, Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch) -> Tensor")
        .on_board_integer(6, "DEPTHWISE"),
    op("cortex_m::quantized_depthwise_conv2d_nhwc", DEFAULT_OUT, OUT, Convolution, WEIGHTED, Some(depthwise_nhwc))
        .priced(CostModel::CmsisDepthwise)
        .schema("(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int depth_multiplier, int input_offset, int output_offset, Tensor requantize_multipliers, Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch) -> Tensor")
        .laid(LayoutRule::ChannelsLast)
        .on_board_integer(4, "DEPTHWISE_NHWC"),
    op("cortex_m::quantized_transpose_conv2d", DEFAULT_OUT, OUT, Convolution, WEIGHTED, Some(transpose_conv_nchw))
        .priced(CostModel::CmsisTransposeConv)
        .schema("(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] output_padding, int[] dilation, int input_offset, int output_offset, Tensor requantize_multipliers, Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch, Tensor output_scratch) -> Tensor")
        .noted(notes::transpose_conv_nchw)
        .on_board_integer(24, "TRANSPOSE_CONV"),
    op("cortex_m::quantized_transpose_conv2d_nhwc", DEFAULT_OUT, OUT, Convolution, WEIGHTED, Some(transpose_conv_nhwc))
        .priced(CostModel::CmsisTransposeConv)
        .schema("(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] output_padding, int[] dilation, int input_offset, int output_offset, Tensor requantize_multipliers, Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch, Tensor output_scratch) -> Tensor")
        .laid(LayoutRule::ChannelsLast)
        .noted(notes::transpose_conv_nhwc)
        .on_board_integer(23, "TRANSPOSE_CONV_NHWC"),
    op("cortex_m::quantized_linear", DEFAULT_OUT, OUT, Linear, WEIGHTED, Some(conv::linear))
        .priced(CostModel::CmsisLinear)
        .schema("(Tensor input, Tensor weights, Tensor? bias, Tensor? kernel_sum, int input_offset, int filter_offset, int output_offset, int[] requantize_multipliers, int[] requantize_shifts, int activation_max, int activation_min) -> Tensor")
        .laid(LayoutRule::Reset)
        .noted(notes::linear)
        .on_board_integer(7, "LINEAR"),
    op("cortex_m::quantized_batch_matmul", DEFAULT_OUT, OUT, Linear, NONE, Some(conv::batch_matmul))
        .priced(CostModel::CmsisBatchMatmul)
        .schema("(Tensor lhs, int lhs_zero_point, Tensor rhs_transposed, int rhs_zero_point, int output_zero_point, int output_multiplier, int output_shift, Tensor scratch) -> Tensor")
        .laid(LayoutRule::Reset)
        .on_board_integer(22, "QUANTIZED_BATCH_MATMUL"),
    op("cortex_m::quantized_avg_pool2d", DEFAULT_OUT, OUT, Pooling, NONE, Some(avg_pool_nchw))
        .priced(CostModel::CmsisAvgPool)
        .schema("(Tensor input, int[] kernel_size, int[] stride, int[] padding, bool ceil_mode, int zero_point, int multiplier, int shift, Tensor scratch) -> Tensor")
        .on_board_integer(9, "AVG_POOL"),
    op("cortex_m::quantized_avg_pool2d_nhwc", DEFAULT_OUT, OUT, Pooling, NONE, Some(avg_pool_nhwc))
        .priced(CostModel::CmsisAvgPool)
        .schema("(Tensor input, int[] kernel_size, int[] stride, int[] padding, bool ceil_mode, int zero_point, int multiplier, int shift, Tensor scratch) -> Tensor")
        .laid(LayoutRule::ChannelsLast)
        .on_board_integer(8, "AVG_POOL_NHWC"),
    op("cortex_m::quantized_max_pool2d", DEFAULT_OUT, OUT, Pooling, MOVE, Some(max_pool_nchw))
        .priced(CostModel::CmsisMaxPool)
        .schema("(Tensor input, int[] kernel_size, int[] stride, int[] padding, int[] dilation, bool ceil_mode, int input_zero_point, int output_zero_point, int activation_min, int activation_max) -> Tensor")
        .on_board_integer(11, "MAX_POOL"),
    op("cortex_m::quantized_max_pool2d_nhwc", DEFAULT_OUT, OUT, Pooling, MOVE, Some(max_pool_nhwc))
        .priced(CostModel::CmsisMaxPool)
        .schema("(Tensor input, int[] kernel_size, int[] stride, int[] padding, int[] dilation, bool ceil_mode, int input_zero_point, int output_zero_point, int activation_min, int activation_max) -> Tensor")
        .laid(LayoutRule::ChannelsLast)
        .on_board_integer(10, "MAX_POOL_NHWC"),
    op("cortex_m::softmax", DEFAULT_OUT, OUT, Activation, NONE, Some(cm::softmax))
        .priced(CostModel::CmsisSoftmax)
        .schema("(Tensor input, int dim, int input_zero_point, int output_zero_point, int input_multiplier, int input_shift, int diff_min) -> Tensor")
        .noted(notes::softmax)
        .on_board_integer(12, "SOFTMAX"),
    op("cortex_m::quantized_add", DEFAULT_OUT, OUT, Elementwise, ELEMENTWISE, Some(cm::add))
        .priced(CostModel::CmsisAdd)
        .schema("(Tensor self, int self_zero_point, int self_multiplier, int self_shift, Tensor other, int other_zero_point, int other_multiplier, int other_shift, int output_zero_point, int output_multiplier, int output_shift, int activation_min, int activation_max) -> Tensor")
        .noted(notes::add)
        .on_board_integer(16, "QUANTIZED_ADD"),
    op("cortex_m::quantized_mul", DEFAULT_OUT, OUT, Elementwise, ELEMENTWISE, Some(cm::mul))
        .priced(CostModel::CmsisMul)
        .schema("(Tensor self, int self_zero_point, Tensor other, int other_zero_point, int output_zero_point, int output_multiplier, int output_shift) -> Tensor")
        .noted(notes::mul_div)
        .on_board_integer(17, "QUANTIZED_MUL"),
    op("cortex_m::quantized_div", DEFAULT_OUT, OUT, Elementwise, ELEMENTWISE, Some(cm::div))
        .priced(CostModel::CmsisDiv)
        .schema("(Tensor self, int self_zero_point, Tensor other, int other_zero_point, int output_zero_point, float output_scale) -> Tensor")
        .noted(notes::mul_div)
        .on_board_integer(21, "QUANTIZED_DIV"),
    op("cortex_m::quantized_activation", DEFAULT_OUT, OUT, Activation, ELEMENTWISE, Some(cm::activation))
        .priced(CostModel::CmsisLut)
        .schema("(Tensor input, Tensor lut) -> Tensor")
        .noted(notes::unary)
        .on_board_integer(18, "QUANTIZED_ACTIVATION"),
    op("cortex_m::minimum", DEFAULT_OUT, OUT, Elementwise, ELEMENTWISE, Some(cm_min))
        .priced(CostModel::CmsisMinMax)
        .schema("(Tensor self, Tensor other) -> Tensor")
        .noted(notes::min_max)
        .on_board_integer(19, "MINIMUM"),
    op("cortex_m::maximum", DEFAULT_OUT, OUT, Elementwise, ELEMENTWISE, Some(cm_max))
        .priced(CostModel::CmsisMinMax)
        .schema("(Tensor self, Tensor other) -> Tensor")
        .noted(notes::min_max)
        .on_board_integer(20, "MAXIMUM"),
    // names the Cortex-M lowering matches in ExecuTorch's ATen and quantizer graphs, which no
    // program etscope runs holds (no kernel: named here so every operator name resolves)
    op("aten::relu_", DEFAULT, NO_OUT, Activation, NONE, None)
        .int8_clamp(),
    op("aten::hardtanh_", DEFAULT, NO_OUT, Activation, NONE, None)
        .int8_clamp(),
    op("aten::pad", DEFAULT, NO_OUT, DataMovement, NONE, None)
        .schema("(Tensor self, SymInt[] pad, str mode=\"constant\", float? value=None) -> Tensor"),
    op("aten::matmul", DEFAULT, NO_OUT, Linear, NONE, None)
        .typed(OutputDtype::Promoted),
    op("quantized_decomposed::quantize_per_channel", DEFAULT, NO_OUT, Quantize, NONE, None),
    op("quantized_decomposed::quantize_per_token", DEFAULT, NO_OUT, Quantize, NONE, None),
    op("quantized_decomposed::dequantize_per_token", DEFAULT, NO_OUT, Quantize, NONE, None),
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
