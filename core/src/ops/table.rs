//! The declarations: one [`OpDef`] per operator etscope knows. A new operator goes here (and
//! its kernel under `crate::kernels`); nothing else in the workspace names it.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::{Category, LayoutRule, OpDef, OpId, Schema, Traits};
use crate::kernels::cmsis::conv::Act;
use crate::kernels::cmsis::notes::{self, NoteFn};
use crate::kernels::cmsis::{conv, ops as cm, pool};
use crate::kernels::ctx::Ctx;
use crate::kernels::portable::{self as pt, nn, tensor};
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
    }
}

const fn laid(mut d: OpDef, layout: LayoutRule) -> OpDef {
    d.layout = layout;
    d
}

const fn on_board(mut d: OpDef, code: u32) -> OpDef {
    d.board = Some(code);
    d
}

const fn noted(mut d: OpDef, rule: NoteFn) -> OpDef {
    d.device_note = Some(rule);
    d
}

const DEFAULT_OUT: &[&str] = &["default", "out"];
const OUT: &[&str] = &["out"];

use Category::*;

fn relu(c: &mut Ctx<'_>, a: &[usize]) -> R {
    pt::unary(c, a, |x| x.max(0.0))
}
fn sigmoid(c: &mut Ctx<'_>, a: &[usize]) -> R {
    pt::unary(c, a, |x| 1.0 / (1.0 + (-x).exp()))
}
fn tanh(c: &mut Ctx<'_>, a: &[usize]) -> R {
    pt::unary(c, a, f32::tanh)
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
    tensor::binary(c, a, f64::max, false)
}
fn minimum(c: &mut Ctx<'_>, a: &[usize]) -> R {
    tensor::binary(c, a, f64::min, false)
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
/// `memory.alloc`: the runtime allocates every tensor before the run; nothing to do.
fn alloc(_: &mut Ctx<'_>, _: &[usize]) -> R {
    Ok(())
}

/// Every operator etscope knows.
pub(super) static OPS: &[OpDef] = &[
    // ---- portable aten: convolution, normalization, pooling, linear algebra
    op("aten::convolution", DEFAULT_OUT, OUT, Some("(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor"), Convolution, WEIGHTED, Some(pt::convolution)),
    op("aten::conv2d", &["default"], &[], Some("(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0, SymInt[2] dilation=1, SymInt groups=1) -> Tensor"), Convolution, WEIGHTED, None),
    op("aten::_native_batch_norm_legit_no_training", DEFAULT_OUT, OUT, Some("(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor)"), Normalization, NONE, Some(pt::batch_norm)),
    op("aten::batch_norm", &["default"], &[], Some("(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor"), Normalization, NONE, None),
    op("aten::native_layer_norm", DEFAULT_OUT, OUT, Some("(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)"), Normalization, FLOAT_ONLY, Some(nn::layer_norm)),
    op("aten::avg_pool2d", DEFAULT_OUT, OUT, Some("(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor"), Pooling, NONE, Some(pt::avg_pool2d)),
    op("aten::max_pool2d", &["default"], &[], Some("(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor"), Pooling, NONE, None),
    op("aten::max_pool2d_with_indices", DEFAULT_OUT, OUT, Some("(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)"), Pooling, NONE, Some(nn::max_pool2d_with_indices)),
    laid(op("aten::addmm", DEFAULT_OUT, OUT, Some("(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"), Linear, NONE, Some(pt::addmm)), LayoutRule::Reset),
    laid(op("aten::mm", DEFAULT_OUT, OUT, Some("(Tensor self, Tensor mat2) -> Tensor"), Linear, NONE, Some(pt::mm)), LayoutRule::Reset),
    laid(op("aten::bmm", DEFAULT_OUT, OUT, Some("(Tensor self, Tensor mat2) -> Tensor"), Linear, NONE, Some(nn::bmm)), LayoutRule::Reset),
    laid(op("aten::linear", DEFAULT_OUT, OUT, Some("(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor"), Linear, WEIGHTED, Some(pt::linear)), LayoutRule::Reset),
    // ---- activations
    op("aten::relu", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Activation, ACTIVATION, Some(relu)),
    op("aten::sigmoid", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Activation, FLOAT_ACTIVATION, Some(sigmoid)),
    op("aten::tanh", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Activation, FLOAT_ACTIVATION, Some(tanh)),
    op("aten::hardtanh", DEFAULT_OUT, OUT, Some("(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor"), Activation, ACTIVATION, Some(pt::hardtanh)),
    op("aten::clamp", DEFAULT_OUT, OUT, Some("(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor"), Activation, ACTIVATION, Some(tensor::clamp)),
    op("aten::gelu", DEFAULT_OUT, OUT, Some("(Tensor self, *, str approximate='none') -> Tensor"), Activation, Traits { float_only: true, ..ELEMENTWISE }, Some(nn::gelu)),
    op("aten::_softmax", DEFAULT_OUT, OUT, Some("(Tensor self, int dim, bool half_to_float) -> Tensor"), Activation, FLOAT_ONLY, Some(pt::softmax)),
    op("aten::softmax", &["int"], &[], Some("(Tensor self, int dim, ScalarType? dtype=None) -> Tensor"), Activation, NONE, None),
    op("aten::hardswish", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Activation, FLOAT_ACTIVATION, None),
    op("aten::hardsigmoid", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Activation, FLOAT_ACTIVATION, None),
    op("aten::silu", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Activation, Traits { float_only: true, ..ELEMENTWISE }, None),
    op("aten::elu", DEFAULT_OUT, OUT, Some("(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor"), Activation, Traits { float_only: true, ..ELEMENTWISE }, None),
    // ---- elementwise arithmetic and comparison
    op("aten::add", &["Tensor", "Scalar", "out", "Scalar_out"], &["out", "Scalar_out"], Some("(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"), Elementwise, ELEMENTWISE, Some(add)),
    op("aten::sub", &["Tensor", "Scalar", "out", "Scalar_out"], &["out", "Scalar_out"], Some("(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"), Elementwise, ELEMENTWISE, Some(sub)),
    op("aten::mul", &["Tensor", "Scalar", "out", "Scalar_out"], &["out", "Scalar_out"], Some("(Tensor self, Tensor other) -> Tensor"), Elementwise, ELEMENTWISE, Some(mul)),
    op("aten::div", &["Tensor", "Scalar", "out", "Scalar_out"], &["out", "Scalar_out"], Some("(Tensor self, Tensor other) -> Tensor"), Elementwise, ELEMENTWISE, Some(div)),
    op("aten::maximum", DEFAULT_OUT, OUT, Some("(Tensor self, Tensor other) -> Tensor"), Elementwise, ELEMENTWISE, Some(maximum)),
    op("aten::minimum", DEFAULT_OUT, OUT, Some("(Tensor self, Tensor other) -> Tensor"), Elementwise, ELEMENTWISE, Some(minimum)),
    op("aten::eq", &["Scalar", "Tensor", "Scalar_out", "Tensor_out"], &["Scalar_out", "Tensor_out"], Some("(Tensor self, Scalar other) -> Tensor"), Elementwise, ELEMENTWISE, Some(eq)),
    op("aten::ne", &["Scalar", "Tensor", "Scalar_out", "Tensor_out"], &["Scalar_out", "Tensor_out"], Some("(Tensor self, Scalar other) -> Tensor"), Elementwise, ELEMENTWISE, Some(ne)),
    op("aten::lt", &["Scalar", "Tensor", "Scalar_out", "Tensor_out"], &["Scalar_out", "Tensor_out"], Some("(Tensor self, Scalar other) -> Tensor"), Elementwise, ELEMENTWISE, Some(lt)),
    op("aten::le", &["Scalar", "Tensor", "Scalar_out", "Tensor_out"], &["Scalar_out", "Tensor_out"], Some("(Tensor self, Scalar other) -> Tensor"), Elementwise, ELEMENTWISE, Some(le)),
    op("aten::gt", &["Scalar", "Tensor", "Scalar_out", "Tensor_out"], &["Scalar_out", "Tensor_out"], Some("(Tensor self, Scalar other) -> Tensor"), Elementwise, ELEMENTWISE, Some(gt)),
    op("aten::ge", &["Scalar", "Tensor", "Scalar_out", "Tensor_out"], &["Scalar_out", "Tensor_out"], Some("(Tensor self, Scalar other) -> Tensor"), Elementwise, ELEMENTWISE, Some(ge)),
    op("aten::where", &["self", "self_out"], &["self_out"], Some("(Tensor condition, Tensor self, Tensor other) -> Tensor"), Elementwise, ELEMENTWISE, Some(tensor::where_)),
    op("aten::exp", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, Traits { float_only: true, ..ELEMENTWISE }, None),
    op("aten::log", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, Traits { float_only: true, ..ELEMENTWISE }, None),
    op("aten::sqrt", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, Traits { float_only: true, ..ELEMENTWISE }, None),
    op("aten::rsqrt", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), Elementwise, Traits { float_only: true, ..ELEMENTWISE }, None),
    // ---- reductions
    op("aten::mean", &["dim", "out"], OUT, Some("(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"), Other, FLOAT_ONLY, Some(nn::mean)),
    op("aten::amax", DEFAULT_OUT, OUT, Some("(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor"), Other, NONE, Some(nn::amax)),
    op("aten::sum", &["dim_IntList", "IntList_out"], &["IntList_out"], Some("(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"), Other, NONE, Some(nn::sum)),
    // ---- data movement
    laid(op("aten::permute_copy", DEFAULT_OUT, OUT, Some("(Tensor self, int[] dims) -> Tensor"), DataMovement, MOVE, Some(pt::permute_copy)), LayoutRule::Permute(1)),
    laid(op("aten::view_copy", DEFAULT_OUT, OUT, Some("(Tensor self, SymInt[] size) -> Tensor"), DataMovement, COPY, Some(pt::copy)), LayoutRule::Reset),
    laid(op("aten::view", &["default"], &[], Some("(Tensor(a) self, SymInt[] size) -> Tensor(a)"), DataMovement, DATA, None), LayoutRule::Reset),
    laid(op("aten::reshape", &["default"], &[], Some("(Tensor(a) self, SymInt[] shape) -> Tensor(a)"), DataMovement, DATA, None), LayoutRule::Reset),
    laid(op("aten::_unsafe_view", &["default"], &[], Some("(Tensor self, SymInt[] size) -> Tensor"), DataMovement, DATA, None), LayoutRule::Reset),
    laid(op("aten::flatten", &["using_ints"], &[], Some("(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)"), DataMovement, DATA, None), LayoutRule::Reset),
    op("aten::_to_copy", DEFAULT_OUT, OUT, Some("(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor"), DataMovement, DATA, Some(pt::copy)),
    op("aten::clone", DEFAULT_OUT, OUT, Some("(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor"), DataMovement, COPY, Some(pt::copy)),
    op("aten::alias_copy", DEFAULT_OUT, OUT, Some("(Tensor self) -> Tensor"), DataMovement, DATA, Some(pt::copy)),
    op("aten::_to_dim_order_copy", DEFAULT_OUT, OUT, Some("(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, int[]? dim_order=None) -> Tensor"), DataMovement, DATA, Some(pt::copy)),
    op("dim_order_ops::_to_dim_order_copy", DEFAULT_OUT, OUT, Some("(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, int[]? dim_order=None) -> Tensor"), DataMovement, COPY, Some(pt::copy)),
    on_board(op("dim_order_ops::_clone_dim_order", DEFAULT_OUT, OUT, Some("(Tensor self, *, bool non_blocking=False, int[]? dim_order=None) -> Tensor"), DataMovement, COPY, Some(pt::copy)), 15),
    laid(op("aten::squeeze_copy", &["dims", "dim", "default", "dims_out", "dim_out", "out"], &["dims_out", "dim_out", "out"], None, DataMovement, COPY, Some(pt::copy)), LayoutRule::Reset),
    laid(op("aten::unsqueeze_copy", DEFAULT_OUT, OUT, Some("(Tensor self, int dim) -> Tensor"), DataMovement, COPY, Some(pt::copy)), LayoutRule::Reset),
    laid(op("aten::expand_copy", DEFAULT_OUT, OUT, Some("(Tensor self, SymInt[] size, *, bool implicit=False) -> Tensor"), DataMovement, DATA, Some(pt::copy)), LayoutRule::Reset),
    laid(op("executorch_prim::et_view", &["default"], &["default"], Some("(Tensor self, int[] size) -> Tensor"), DataMovement, COPY, Some(pt::et_view)), LayoutRule::Reset),
    op("aten::slice_copy", &["Tensor", "Tensor_out"], &["Tensor_out"], Some("(Tensor self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor"), DataMovement, DATA, Some(tensor::slice_copy)),
    laid(op("aten::select_copy", &["int", "int_out"], &["int_out"], Some("(Tensor self, int dim, SymInt index) -> Tensor"), DataMovement, DATA, Some(tensor::select_copy)), LayoutRule::Reset),
    op("aten::split_with_sizes_copy", DEFAULT_OUT, OUT, Some("(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]"), DataMovement, DATA, Some(tensor::split_with_sizes_copy)),
    op("aten::split_copy", &["Tensor", "Tensor_out"], &["Tensor_out"], Some("(Tensor self, SymInt split_size, int dim=0) -> Tensor[]"), DataMovement, DATA, Some(tensor::split_copy)),
    op("aten::cat", DEFAULT_OUT, OUT, Some("(Tensor[] tensors, int dim=0) -> Tensor"), DataMovement, NONE, Some(tensor::cat)),
    laid(op("aten::full", DEFAULT_OUT, OUT, Some("(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"), Other, NONE, Some(tensor::full)), LayoutRule::Reset),
    op("aten::full_like", DEFAULT_OUT, OUT, Some("(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"), Other, NONE, Some(tensor::full)),
    laid(op("aten::arange", &["default", "start", "out", "start_out"], &["out", "start_out"], Some("(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"), Other, NONE, Some(tensor::arange)), LayoutRule::Reset),
    laid(op("memory.alloc", &[""], &[""], None, DataMovement, NONE, Some(alloc)), LayoutRule::Reset),
    // ---- quantized_decomposed
    op("quantized_decomposed::quantize_per_tensor", DEFAULT_OUT, OUT, Some("(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"), Quantize, QUANTIZER, Some(quantized::quantize_per_tensor)),
    op("quantized_decomposed::dequantize_per_tensor", DEFAULT_OUT, OUT, Some("(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"), Quantize, DEQUANTIZER, Some(quantized::dequantize_per_tensor)),
    op("quantized_decomposed::dequantize_per_channel", DEFAULT_OUT, OUT, Some("(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"), Quantize, NONE, Some(quantized::dequantize_per_channel)),
    // ---- the Cortex-M backend (CMSIS-NN)
    on_board(noted(op("cortex_m::quantize_per_tensor", DEFAULT_OUT, OUT, None, Quantize, QUANTIZER, Some(cm::quantize)), notes::unary), 1),
    on_board(noted(op("cortex_m::dequantize_per_tensor", DEFAULT_OUT, OUT, None, Quantize, DEQUANTIZER, Some(cm::dequantize)), notes::unary), 2),
    on_board(noted(laid(op("cortex_m::transpose", DEFAULT_OUT, OUT, None, DataMovement, MOVE, Some(cm::transpose)), LayoutRule::Permute(1)), notes::transpose), 13),
    on_board(op("cortex_m::pad", DEFAULT_OUT, OUT, None, DataMovement, MOVE, Some(cm::pad)), 14),
    on_board(op("cortex_m::quantized_conv2d", DEFAULT_OUT, OUT, None, Convolution, WEIGHTED, Some(conv_nchw)), 5),
    on_board(laid(op("cortex_m::quantized_conv2d_nhwc", DEFAULT_OUT, OUT, None, Convolution, WEIGHTED, Some(conv_nhwc)), LayoutRule::ChannelsLast), 3),
    on_board(op("cortex_m::quantized_depthwise_conv2d", DEFAULT_OUT, OUT, None, Convolution, WEIGHTED, Some(depthwise_nchw)), 6),
    on_board(laid(op("cortex_m::quantized_depthwise_conv2d_nhwc", DEFAULT_OUT, OUT, None, Convolution, WEIGHTED, Some(depthwise_nhwc)), LayoutRule::ChannelsLast), 4),
    noted(op("cortex_m::quantized_transpose_conv2d", DEFAULT_OUT, OUT, None, Convolution, WEIGHTED, Some(transpose_conv_nchw)), notes::transpose_conv_nchw),
    noted(laid(op("cortex_m::quantized_transpose_conv2d_nhwc", DEFAULT_OUT, OUT, None, Convolution, WEIGHTED, Some(transpose_conv_nhwc)), LayoutRule::ChannelsLast), notes::transpose_conv_nhwc),
    on_board(noted(laid(op("cortex_m::quantized_linear", DEFAULT_OUT, OUT, None, Linear, WEIGHTED, Some(conv::linear)), LayoutRule::Reset), notes::linear), 7),
    laid(op("cortex_m::quantized_batch_matmul", DEFAULT_OUT, OUT, None, Linear, NONE, Some(conv::batch_matmul)), LayoutRule::Reset),
    on_board(op("cortex_m::quantized_avg_pool2d", DEFAULT_OUT, OUT, None, Pooling, NONE, Some(avg_pool_nchw)), 9),
    on_board(laid(op("cortex_m::quantized_avg_pool2d_nhwc", DEFAULT_OUT, OUT, None, Pooling, NONE, Some(avg_pool_nhwc)), LayoutRule::ChannelsLast), 8),
    on_board(op("cortex_m::quantized_max_pool2d", DEFAULT_OUT, OUT, None, Pooling, MOVE, Some(max_pool_nchw)), 11),
    on_board(laid(op("cortex_m::quantized_max_pool2d_nhwc", DEFAULT_OUT, OUT, None, Pooling, MOVE, Some(max_pool_nhwc)), LayoutRule::ChannelsLast), 10),
    on_board(noted(op("cortex_m::softmax", DEFAULT_OUT, OUT, None, Activation, NONE, Some(cm::softmax)), notes::softmax), 12),
    noted(op("cortex_m::quantized_add", DEFAULT_OUT, OUT, None, Elementwise, ELEMENTWISE, Some(cm::add)), notes::add),
    noted(op("cortex_m::quantized_mul", DEFAULT_OUT, OUT, None, Elementwise, ELEMENTWISE, Some(cm::mul)), notes::mul_div),
    noted(op("cortex_m::quantized_div", DEFAULT_OUT, OUT, None, Elementwise, ELEMENTWISE, Some(cm::div)), notes::mul_div),
    noted(op("cortex_m::quantized_activation", DEFAULT_OUT, OUT, None, Activation, ELEMENTWISE, Some(cm::activation)), notes::unary),
    noted(op("cortex_m::minimum", DEFAULT_OUT, OUT, None, Elementwise, ELEMENTWISE, Some(cm_min)), notes::min_max),
    noted(op("cortex_m::maximum", DEFAULT_OUT, OUT, None, Elementwise, ELEMENTWISE, Some(cm_max)), notes::min_max),
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
