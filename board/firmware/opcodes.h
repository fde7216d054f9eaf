/* GENERATED from etscope's operator registry (core/src/ops/table.rs) by
 * core/src/board_image/opcodes.rs: do not edit. Regenerate with
 * ETSCOPE_WRITE_OPCODES=1 cargo test -p etscope-core --test firmware_opcodes
 *
 * The code a board image stores for each firmware kernel, and the operators calling it.
 * Integer kernels run in integer.c, portable kernels through portable.c. */
#ifndef ETSCOPE_OPCODES_H
#define ETSCOPE_OPCODES_H

enum {
  OP_QUANTIZE = 1, /* integer: cortex_m::quantize_per_tensor */
  OP_DEQUANTIZE = 2, /* integer: cortex_m::dequantize_per_tensor */
  OP_CONV_NHWC = 3, /* integer: cortex_m::quantized_conv2d_nhwc */
  OP_DEPTHWISE_NHWC = 4, /* integer: cortex_m::quantized_depthwise_conv2d_nhwc */
  OP_CONV = 5, /* integer: cortex_m::quantized_conv2d */
  OP_DEPTHWISE = 6, /* integer: cortex_m::quantized_depthwise_conv2d */
  OP_LINEAR = 7, /* integer: cortex_m::quantized_linear */
  OP_AVG_POOL_NHWC = 8, /* integer: cortex_m::quantized_avg_pool2d_nhwc */
  OP_AVG_POOL = 9, /* integer: cortex_m::quantized_avg_pool2d */
  OP_MAX_POOL_NHWC = 10, /* integer: cortex_m::quantized_max_pool2d_nhwc */
  OP_MAX_POOL = 11, /* integer: cortex_m::quantized_max_pool2d */
  OP_SOFTMAX = 12, /* integer: cortex_m::softmax */
  OP_TRANSPOSE = 13, /* integer: cortex_m::transpose */
  OP_PAD = 14, /* integer: cortex_m::pad */
  OP_CLONE_DIM_ORDER = 15, /* integer: dim_order_ops::_clone_dim_order */
  OP_QUANTIZED_ADD = 16, /* integer: cortex_m::quantized_add */
  OP_QUANTIZED_MUL = 17, /* integer: cortex_m::quantized_mul */
  OP_QUANTIZED_ACTIVATION = 18, /* integer: cortex_m::quantized_activation */
  OP_MINIMUM = 19, /* integer: cortex_m::minimum */
  OP_MAXIMUM = 20, /* integer: cortex_m::maximum */
  OP_QUANTIZED_DIV = 21, /* integer: cortex_m::quantized_div */
  OP_QUANTIZED_BATCH_MATMUL = 22, /* integer: cortex_m::quantized_batch_matmul */
  OP_TRANSPOSE_CONV_NHWC = 23, /* integer: cortex_m::quantized_transpose_conv2d_nhwc */
  OP_TRANSPOSE_CONV = 24, /* integer: cortex_m::quantized_transpose_conv2d */
  OP_HARDTANH = 25, /* integer: aten::hardtanh */
  OP_ADD = 26, /* portable: aten::add */
  OP_SUB = 27, /* portable: aten::sub */
  OP_MUL = 28, /* portable: aten::mul */
  OP_DIV = 29, /* portable: aten::div */
  OP_ATEN_MAXIMUM = 30, /* portable: aten::maximum */
  OP_ATEN_MINIMUM = 31, /* portable: aten::minimum */
  OP_RELU = 32, /* portable: aten::relu */
  OP_SIGMOID = 33, /* portable: aten::sigmoid */
  OP_TANH = 34, /* portable: aten::tanh */
  OP_NEG = 35, /* portable: aten::neg */
  OP_ABS = 36, /* portable: aten::abs */
  OP_EXP = 37, /* portable: aten::exp */
  OP_LOG = 38, /* portable: aten::log */
  OP_SQRT = 39, /* portable: aten::sqrt */
  OP_RSQRT = 40, /* portable: aten::rsqrt */
  OP_RECIPROCAL = 41, /* portable: aten::reciprocal */
  OP_GELU = 42, /* portable: aten::gelu */
  OP_LEAKY_RELU = 43, /* portable: aten::leaky_relu */
  OP_CLAMP = 44, /* portable: aten::clamp */
  OP_COPY = 45, /* portable: aten::detach_copy, aten::lift_fresh_copy, aten::view_copy, aten::_to_copy, aten::clone, aten::alias_copy, aten::_to_dim_order_copy, dim_order_ops::_to_dim_order_copy, aten::squeeze_copy, aten::unsqueeze_copy */
  OP_PERMUTE_COPY = 46, /* portable: aten::permute_copy */
  OP_EXPAND_COPY = 47, /* portable: aten::expand_copy */
  OP_SLICE_COPY = 48, /* portable: aten::slice_copy */
  OP_SELECT_COPY = 49, /* portable: aten::select_copy */
  OP_T_COPY = 50, /* portable: aten::t_copy */
  OP_TRANSPOSE_COPY = 51, /* portable: aten::transpose_copy */
  OP_CAT = 52, /* portable: aten::cat */
  OP_SPLIT_WITH_SIZES_COPY = 53, /* portable: aten::split_with_sizes_copy */
  OP_AVG_POOL2D = 54, /* portable: aten::avg_pool2d */
  OP_MAX_POOL2D_WITH_INDICES = 55, /* portable: aten::max_pool2d_with_indices */
  OP_UPSAMPLE_NEAREST2D = 56, /* portable: aten::upsample_nearest2d */
  OP_UPSAMPLE_BILINEAR2D = 57, /* portable: aten::upsample_bilinear2d */
  OP_FLOAT_SOFTMAX = 58, /* portable: aten::_softmax */
  OP_LOG_SOFTMAX = 59, /* portable: aten::_log_softmax */
  OP_MEAN = 60, /* portable: aten::mean */
  OP_SUM = 61, /* portable: aten::sum */
  OP_AMAX = 62, /* portable: aten::amax */
  OP_ADDMM = 63, /* portable: aten::addmm */
  OP_MM = 64, /* portable: aten::mm */
  OP_BMM = 65, /* portable: aten::bmm */
  OP_ATEN_LINEAR = 66, /* portable: aten::linear */
  OP_CONVOLUTION = 67, /* portable: aten::convolution */
  OP_EMBEDDING = 68, /* portable: aten::embedding */
  OP_LAYER_NORM = 69, /* portable: aten::native_layer_norm */
  OP_FULL = 70, /* portable: aten::full, aten::full_like */
  OP_EQ = 71, /* portable: aten::eq */
  OP_NE = 72, /* portable: aten::ne */
  OP_LT = 73, /* portable: aten::lt */
  OP_LE = 74, /* portable: aten::le */
  OP_GT = 75, /* portable: aten::gt */
  OP_GE = 76, /* portable: aten::ge */
  OP_WHERE = 77, /* portable: aten::where */
  OP_EXPM1 = 78, /* portable: aten::expm1 */
  OP_LOG2 = 79, /* portable: aten::log2 */
  OP_LOG10 = 80, /* portable: aten::log10 */
  OP_LOG1P = 81, /* portable: aten::log1p */
  OP_SIN = 82, /* portable: aten::sin */
  OP_COS = 83, /* portable: aten::cos */
  OP_TAN = 84, /* portable: aten::tan */
  OP_ASIN = 85, /* portable: aten::asin */
  OP_ACOS = 86, /* portable: aten::acos */
  OP_ATAN = 87, /* portable: aten::atan */
  OP_SINH = 88, /* portable: aten::sinh */
  OP_COSH = 89, /* portable: aten::cosh */
  OP_ASINH = 90, /* portable: aten::asinh */
  OP_ACOSH = 91, /* portable: aten::acosh */
  OP_ATANH = 92, /* portable: aten::atanh */
  OP_ERF = 93, /* portable: aten::erf */
  OP_FLOOR = 94, /* portable: aten::floor */
  OP_CEIL = 95, /* portable: aten::ceil */
  OP_ROUND = 96, /* portable: aten::round */
  OP_TRUNC = 97, /* portable: aten::trunc */
  OP_SIGN = 98, /* portable: aten::sign */
  OP_BITWISE_NOT = 99, /* portable: aten::bitwise_not */
  OP_ISNAN = 100, /* portable: aten::isnan */
  OP_ISINF = 101, /* portable: aten::isinf */
  OP_LOGICAL_NOT = 102, /* portable: aten::logical_not */
  OP_ATAN2 = 103, /* portable: aten::atan2 */
  OP_POW = 104, /* portable: aten::pow */
  OP_FMOD = 105, /* portable: aten::fmod */
  OP_REMAINDER = 106, /* portable: aten::remainder */
  OP_LOGICAL_AND = 107, /* portable: aten::logical_and */
  OP_LOGICAL_OR = 108, /* portable: aten::logical_or */
  OP_LOGICAL_XOR = 109, /* portable: aten::logical_xor */
  OP_BITWISE_AND = 110, /* portable: aten::bitwise_and */
  OP_BITWISE_OR = 111, /* portable: aten::bitwise_or */
  OP_BITWISE_XOR = 112, /* portable: aten::bitwise_xor */
  OP_AMIN = 113, /* portable: aten::amin */
  OP_ARGMAX = 114, /* portable: aten::argmax */
  OP_ARGMIN = 115, /* portable: aten::argmin */
  OP_ANY = 116, /* portable: aten::any */
  OP_ANY_ALL = 117, /* portable: aten::any */
  OP_PROD = 118, /* portable: aten::prod */
  OP_PROD_ALL = 119, /* portable: aten::prod */
  OP_MAX_ALL = 120, /* portable: aten::max */
  OP_MIN_ALL = 121, /* portable: aten::min */
  OP_ADAPTIVE_AVG_POOL2D = 122, /* portable: aten::_adaptive_avg_pool2d */
  OP_CONSTANT_PAD_ND = 123, /* portable: aten::constant_pad_nd */
  OP_FLIP = 124, /* portable: aten::flip */
  OP_INDEX_SELECT = 125, /* portable: aten::index_select */
  OP_CUMSUM = 126, /* portable: aten::cumsum */
  OP_VAR_CORRECTION = 127, /* portable: aten::var */
  OP_VAR_UNBIASED = 128, /* portable: aten::var */
  OP_ELU = 129, /* portable: aten::elu */
  OP_GLU = 130, /* portable: aten::glu */
  OP_FILL = 131, /* portable: aten::fill */
  OP_ZEROS = 132, /* portable: aten::zeros */
  OP_ONES = 133, /* portable: aten::ones */
  OP_ARANGE = 134, /* portable: aten::arange */
  OP_REPEAT = 135, /* portable: aten::repeat */
  OP_ROLL = 136, /* portable: aten::roll */
  OP_STACK = 137, /* portable: aten::stack */
  OP_TRIL = 138, /* portable: aten::tril */
  OP_UNBIND_COPY = 139, /* portable: aten::unbind_copy */
  OP_RSUB = 140, /* portable: aten::rsub */
  OP_FLOOR_DIVIDE = 141, /* portable: aten::floor_divide */
  OP_MEAN_ALL = 142, /* portable: aten::mean */
  OP_SCALAR_TENSOR = 143, /* portable: aten::scalar_tensor */
  OP_FILL_TENSOR = 144, /* portable: aten::fill */
  OP_INDEX = 145, /* portable: aten::index */
  OP_INDEX_PUT = 146, /* portable: aten::index_put */
  OP_INDEX_PUT_IN_PLACE = 147, /* portable: aten::index_put_ */
  OP_COPY_IN_PLACE = 148, /* portable: aten::copy_ */
  OP_COPY_OUT = 149, /* portable: aten::copy */
  OP_ET_VIEW = 150, /* portable: executorch_prim::et_view */
  OP_GATHER = 151, /* portable: aten::gather */
  OP_SCATTER = 152, /* portable: aten::scatter */
  OP_SCATTER_ADD = 153, /* portable: aten::scatter_add */
  OP_SCATTER_VALUE = 154, /* portable: aten::scatter */
  OP_DIAGONAL_COPY = 155, /* portable: aten::diagonal_copy */
  OP_DIV_MODE = 156, /* portable: aten::div */
  OP_MASKED_FILL = 157, /* portable: aten::masked_fill */
  OP_PIXEL_SHUFFLE = 158, /* portable: aten::pixel_shuffle */
  OP_PIXEL_UNSHUFFLE = 159, /* portable: aten::pixel_unshuffle */
  OP_REFLECTION_PAD1D = 160, /* portable: aten::reflection_pad1d */
  OP_REFLECTION_PAD2D = 161, /* portable: aten::reflection_pad2d */
  OP_REFLECTION_PAD3D = 162, /* portable: aten::reflection_pad3d */
  OP_REPLICATION_PAD1D = 163, /* portable: aten::replication_pad1d */
  OP_REPLICATION_PAD2D = 164, /* portable: aten::replication_pad2d */
  OP_REPLICATION_PAD3D = 165, /* portable: aten::replication_pad3d */
  OP_MAX_DIM = 166, /* portable: aten::max */
  OP_MIN_DIM = 167, /* portable: aten::min */
  OP_VAR_MEAN = 168, /* portable: aten::var_mean */
  OP_CLAMP_TENSOR = 169, /* portable: aten::clamp */
  OP_NARROW_COPY = 170, /* portable: aten::narrow_copy */
  OP_SELECT_SCATTER = 171, /* portable: aten::select_scatter */
  OP_SLICE_SCATTER = 172, /* portable: aten::slice_scatter */
  OP_GROUP_NORM = 173, /* portable: aten::native_group_norm */
  OP_LOGIT = 174, /* portable: aten::logit */
  OP_BITWISE_LEFT_SHIFT = 175, /* portable: aten::bitwise_left_shift */
  OP_BITWISE_RIGHT_SHIFT = 176, /* portable: aten::bitwise_right_shift */
  OP_POW_SCALAR = 177, /* portable: aten::pow */
  OP_UNFOLD_COPY = 178, /* portable: aten::unfold_copy */
  OP_AS_STRIDED_COPY = 179, /* portable: aten::as_strided_copy */
  OP_EMPTY = 180, /* portable: aten::empty, dim_order_ops::_empty_dim_order */
  OP_TOPK = 181, /* portable: aten::topk */
  OP_NONZERO = 182, /* portable: aten::nonzero */
  OP_MASKED_SELECT = 183, /* portable: aten::masked_select */
  OP_REPEAT_INTERLEAVE = 184, /* portable: aten::repeat_interleave */
  OP_MASKED_SCATTER = 185, /* portable: aten::masked_scatter */
  OP_CDIST_FORWARD = 186, /* portable: aten::_cdist_forward */
  OP_PDIST_FORWARD = 187, /* portable: aten::_pdist_forward */
  OP_GRID_SAMPLER2D = 188, /* portable: aten::grid_sampler_2d */
  OP_UPSAMPLE_BILINEAR2D_AA = 189, /* portable: aten::_upsample_bilinear2d_aa */
  OP_SPLIT_COPY = 190, /* portable: aten::split_copy */
  OP_BATCH_NORM = 191, /* portable: aten::_native_batch_norm_legit_no_training */
  OP_QD_QUANTIZE = 192, /* portable: quantized_decomposed::quantize_per_tensor */
  OP_QD_DEQUANTIZE = 193, /* portable: quantized_decomposed::dequantize_per_tensor */
  OP_QD_DEQUANTIZE_PER_CHANNEL = 194, /* portable: quantized_decomposed::dequantize_per_channel */
  OP_BATCH_NORM_NO_STATS = 195, /* portable: aten::_native_batch_norm_legit */
};

/* 1 when integer.c runs `op`, 0 when portable.c dispatches it. */
static inline int op_is_integer(unsigned op) {
  switch (op) {
    case OP_QUANTIZE:
    case OP_DEQUANTIZE:
    case OP_CONV_NHWC:
    case OP_DEPTHWISE_NHWC:
    case OP_CONV:
    case OP_DEPTHWISE:
    case OP_LINEAR:
    case OP_AVG_POOL_NHWC:
    case OP_AVG_POOL:
    case OP_MAX_POOL_NHWC:
    case OP_MAX_POOL:
    case OP_SOFTMAX:
    case OP_TRANSPOSE:
    case OP_PAD:
    case OP_CLONE_DIM_ORDER:
    case OP_QUANTIZED_ADD:
    case OP_QUANTIZED_MUL:
    case OP_QUANTIZED_ACTIVATION:
    case OP_MINIMUM:
    case OP_MAXIMUM:
    case OP_QUANTIZED_DIV:
    case OP_QUANTIZED_BATCH_MATMUL:
    case OP_TRANSPOSE_CONV_NHWC:
    case OP_TRANSPOSE_CONV:
    case OP_HARDTANH:
      return 1;
    default:
      return 0;
  }
}

/* The position of each argument in a call of each integer kernel's operators, from the
 * registry's schemas. */
enum {
  ARG_QUANTIZE_INPUT = 0,
  ARG_QUANTIZE_SCALE = 1,
  ARG_QUANTIZE_ZERO_POINT = 2,
  ARG_QUANTIZE_QUANT_MIN = 3,
  ARG_QUANTIZE_QUANT_MAX = 4,
  ARG_QUANTIZE_DTYPE = 5,
  ARG_DEQUANTIZE_INPUT = 0,
  ARG_DEQUANTIZE_SCALE = 1,
  ARG_DEQUANTIZE_ZERO_POINT = 2,
  ARG_DEQUANTIZE_QUANT_MIN = 3,
  ARG_DEQUANTIZE_QUANT_MAX = 4,
  ARG_DEQUANTIZE_DTYPE = 5,
  ARG_CONV_NHWC_INPUT = 0,
  ARG_CONV_NHWC_WEIGHT = 1,
  ARG_CONV_NHWC_BIAS = 2,
  ARG_CONV_NHWC_STRIDE = 3,
  ARG_CONV_NHWC_PADDING = 4,
  ARG_CONV_NHWC_DILATION = 5,
  ARG_CONV_NHWC_INPUT_OFFSET = 6,
  ARG_CONV_NHWC_OUTPUT_OFFSET = 7,
  ARG_CONV_NHWC_REQUANTIZE_MULTIPLIERS = 8,
  ARG_CONV_NHWC_REQUANTIZE_SHIFTS = 9,
  ARG_CONV_NHWC_ACTIVATION_MIN = 10,
  ARG_CONV_NHWC_ACTIVATION_MAX = 11,
  ARG_CONV_NHWC_SCRATCH = 12,
  ARG_DEPTHWISE_NHWC_INPUT = 0,
  ARG_DEPTHWISE_NHWC_WEIGHT = 1,
  ARG_DEPTHWISE_NHWC_BIAS = 2,
  ARG_DEPTHWISE_NHWC_STRIDE = 3,
  ARG_DEPTHWISE_NHWC_PADDING = 4,
  ARG_DEPTHWISE_NHWC_DILATION = 5,
  ARG_DEPTHWISE_NHWC_DEPTH_MULTIPLIER = 6,
  ARG_DEPTHWISE_NHWC_INPUT_OFFSET = 7,
  ARG_DEPTHWISE_NHWC_OUTPUT_OFFSET = 8,
  ARG_DEPTHWISE_NHWC_REQUANTIZE_MULTIPLIERS = 9,
  ARG_DEPTHWISE_NHWC_REQUANTIZE_SHIFTS = 10,
  ARG_DEPTHWISE_NHWC_ACTIVATION_MIN = 11,
  ARG_DEPTHWISE_NHWC_ACTIVATION_MAX = 12,
  ARG_DEPTHWISE_NHWC_SCRATCH = 13,
  ARG_CONV_INPUT = 0,
  ARG_CONV_WEIGHT = 1,
  ARG_CONV_BIAS = 2,
  ARG_CONV_STRIDE = 3,
  ARG_CONV_PADDING = 4,
  ARG_CONV_DILATION = 5,
  ARG_CONV_INPUT_OFFSET = 6,
  ARG_CONV_OUTPUT_OFFSET = 7,
  ARG_CONV_REQUANTIZE_MULTIPLIERS = 8,
  ARG_CONV_REQUANTIZE_SHIFTS = 9,
  ARG_CONV_ACTIVATION_MIN = 10,
  ARG_CONV_ACTIVATION_MAX = 11,
  ARG_CONV_SCRATCH = 12,
  ARG_DEPTHWISE_INPUT = 0,
  ARG_DEPTHWISE_WEIGHT = 1,
  ARG_DEPTHWISE_BIAS = 2,
  ARG_DEPTHWISE_STRIDE = 3,
  ARG_DEPTHWISE_PADDING = 4,
  ARG_DEPTHWISE_DILATION = 5,
  ARG_DEPTHWISE_DEPTH_MULTIPLIER = 6,
  ARG_DEPTHWISE_INPUT_OFFSET = 7,
  ARG_DEPTHWISE_OUTPUT_OFFSET = 8,
  ARG_DEPTHWISE_REQUANTIZE_MULTIPLIERS = 9,
  ARG_DEPTHWISE_REQUANTIZE_SHIFTS = 10,
  ARG_DEPTHWISE_ACTIVATION_MIN = 11,
  ARG_DEPTHWISE_ACTIVATION_MAX = 12,
  ARG_DEPTHWISE_SCRATCH = 13,
  ARG_LINEAR_INPUT = 0,
  ARG_LINEAR_WEIGHTS = 1,
  ARG_LINEAR_BIAS = 2,
  ARG_LINEAR_KERNEL_SUM = 3,
  ARG_LINEAR_INPUT_OFFSET = 4,
  ARG_LINEAR_FILTER_OFFSET = 5,
  ARG_LINEAR_OUTPUT_OFFSET = 6,
  ARG_LINEAR_REQUANTIZE_MULTIPLIERS = 7,
  ARG_LINEAR_REQUANTIZE_SHIFTS = 8,
  ARG_LINEAR_ACTIVATION_MAX = 9,
  ARG_LINEAR_ACTIVATION_MIN = 10,
  ARG_AVG_POOL_NHWC_INPUT = 0,
  ARG_AVG_POOL_NHWC_KERNEL_SIZE = 1,
  ARG_AVG_POOL_NHWC_STRIDE = 2,
  ARG_AVG_POOL_NHWC_PADDING = 3,
  ARG_AVG_POOL_NHWC_CEIL_MODE = 4,
  ARG_AVG_POOL_NHWC_ZERO_POINT = 5,
  ARG_AVG_POOL_NHWC_MULTIPLIER = 6,
  ARG_AVG_POOL_NHWC_SHIFT = 7,
  ARG_AVG_POOL_NHWC_SCRATCH = 8,
  ARG_AVG_POOL_INPUT = 0,
  ARG_AVG_POOL_KERNEL_SIZE = 1,
  ARG_AVG_POOL_STRIDE = 2,
  ARG_AVG_POOL_PADDING = 3,
  ARG_AVG_POOL_CEIL_MODE = 4,
  ARG_AVG_POOL_ZERO_POINT = 5,
  ARG_AVG_POOL_MULTIPLIER = 6,
  ARG_AVG_POOL_SHIFT = 7,
  ARG_AVG_POOL_SCRATCH = 8,
  ARG_MAX_POOL_NHWC_INPUT = 0,
  ARG_MAX_POOL_NHWC_KERNEL_SIZE = 1,
  ARG_MAX_POOL_NHWC_STRIDE = 2,
  ARG_MAX_POOL_NHWC_PADDING = 3,
  ARG_MAX_POOL_NHWC_DILATION = 4,
  ARG_MAX_POOL_NHWC_CEIL_MODE = 5,
  ARG_MAX_POOL_NHWC_INPUT_ZERO_POINT = 6,
  ARG_MAX_POOL_NHWC_OUTPUT_ZERO_POINT = 7,
  ARG_MAX_POOL_NHWC_ACTIVATION_MIN = 8,
  ARG_MAX_POOL_NHWC_ACTIVATION_MAX = 9,
  ARG_MAX_POOL_INPUT = 0,
  ARG_MAX_POOL_KERNEL_SIZE = 1,
  ARG_MAX_POOL_STRIDE = 2,
  ARG_MAX_POOL_PADDING = 3,
  ARG_MAX_POOL_DILATION = 4,
  ARG_MAX_POOL_CEIL_MODE = 5,
  ARG_MAX_POOL_INPUT_ZERO_POINT = 6,
  ARG_MAX_POOL_OUTPUT_ZERO_POINT = 7,
  ARG_MAX_POOL_ACTIVATION_MIN = 8,
  ARG_MAX_POOL_ACTIVATION_MAX = 9,
  ARG_SOFTMAX_INPUT = 0,
  ARG_SOFTMAX_DIM = 1,
  ARG_SOFTMAX_INPUT_ZERO_POINT = 2,
  ARG_SOFTMAX_OUTPUT_ZERO_POINT = 3,
  ARG_SOFTMAX_INPUT_MULTIPLIER = 4,
  ARG_SOFTMAX_INPUT_SHIFT = 5,
  ARG_SOFTMAX_DIFF_MIN = 6,
  ARG_TRANSPOSE_INPUT = 0,
  ARG_TRANSPOSE_PERM = 1,
  ARG_PAD_INPUT = 0,
  ARG_PAD_PRE_PAD = 1,
  ARG_PAD_POST_PAD = 2,
  ARG_PAD_PAD_VALUE = 3,
  ARG_CLONE_DIM_ORDER_SELF = 0,
  ARG_CLONE_DIM_ORDER_NON_BLOCKING = 1,
  ARG_CLONE_DIM_ORDER_DIM_ORDER = 2,
  ARG_QUANTIZED_ADD_SELF = 0,
  ARG_QUANTIZED_ADD_SELF_ZERO_POINT = 1,
  ARG_QUANTIZED_ADD_SELF_MULTIPLIER = 2,
  ARG_QUANTIZED_ADD_SELF_SHIFT = 3,
  ARG_QUANTIZED_ADD_OTHER = 4,
  ARG_QUANTIZED_ADD_OTHER_ZERO_POINT = 5,
  ARG_QUANTIZED_ADD_OTHER_MULTIPLIER = 6,
  ARG_QUANTIZED_ADD_OTHER_SHIFT = 7,
  ARG_QUANTIZED_ADD_OUTPUT_ZERO_POINT = 8,
  ARG_QUANTIZED_ADD_OUTPUT_MULTIPLIER = 9,
  ARG_QUANTIZED_ADD_OUTPUT_SHIFT = 10,
  ARG_QUANTIZED_ADD_ACTIVATION_MIN = 11,
  ARG_QUANTIZED_ADD_ACTIVATION_MAX = 12,
  ARG_QUANTIZED_MUL_SELF = 0,
  ARG_QUANTIZED_MUL_SELF_ZERO_POINT = 1,
  ARG_QUANTIZED_MUL_OTHER = 2,
  ARG_QUANTIZED_MUL_OTHER_ZERO_POINT = 3,
  ARG_QUANTIZED_MUL_OUTPUT_ZERO_POINT = 4,
  ARG_QUANTIZED_MUL_OUTPUT_MULTIPLIER = 5,
  ARG_QUANTIZED_MUL_OUTPUT_SHIFT = 6,
  ARG_QUANTIZED_ACTIVATION_INPUT = 0,
  ARG_QUANTIZED_ACTIVATION_LUT = 1,
  ARG_MINIMUM_SELF = 0,
  ARG_MINIMUM_OTHER = 1,
  ARG_MAXIMUM_SELF = 0,
  ARG_MAXIMUM_OTHER = 1,
  ARG_QUANTIZED_DIV_SELF = 0,
  ARG_QUANTIZED_DIV_SELF_ZERO_POINT = 1,
  ARG_QUANTIZED_DIV_OTHER = 2,
  ARG_QUANTIZED_DIV_OTHER_ZERO_POINT = 3,
  ARG_QUANTIZED_DIV_OUTPUT_ZERO_POINT = 4,
  ARG_QUANTIZED_DIV_OUTPUT_SCALE = 5,
  ARG_QUANTIZED_BATCH_MATMUL_LHS = 0,
  ARG_QUANTIZED_BATCH_MATMUL_LHS_ZERO_POINT = 1,
  ARG_QUANTIZED_BATCH_MATMUL_RHS_TRANSPOSED = 2,
  ARG_QUANTIZED_BATCH_MATMUL_RHS_ZERO_POINT = 3,
  ARG_QUANTIZED_BATCH_MATMUL_OUTPUT_ZERO_POINT = 4,
  ARG_QUANTIZED_BATCH_MATMUL_OUTPUT_MULTIPLIER = 5,
  ARG_QUANTIZED_BATCH_MATMUL_OUTPUT_SHIFT = 6,
  ARG_QUANTIZED_BATCH_MATMUL_SCRATCH = 7,
  ARG_TRANSPOSE_CONV_NHWC_INPUT = 0,
  ARG_TRANSPOSE_CONV_NHWC_WEIGHT = 1,
  ARG_TRANSPOSE_CONV_NHWC_BIAS = 2,
  ARG_TRANSPOSE_CONV_NHWC_STRIDE = 3,
  ARG_TRANSPOSE_CONV_NHWC_PADDING = 4,
  ARG_TRANSPOSE_CONV_NHWC_OUTPUT_PADDING = 5,
  ARG_TRANSPOSE_CONV_NHWC_DILATION = 6,
  ARG_TRANSPOSE_CONV_NHWC_INPUT_OFFSET = 7,
  ARG_TRANSPOSE_CONV_NHWC_OUTPUT_OFFSET = 8,
  ARG_TRANSPOSE_CONV_NHWC_REQUANTIZE_MULTIPLIERS = 9,
  ARG_TRANSPOSE_CONV_NHWC_REQUANTIZE_SHIFTS = 10,
  ARG_TRANSPOSE_CONV_NHWC_ACTIVATION_MIN = 11,
  ARG_TRANSPOSE_CONV_NHWC_ACTIVATION_MAX = 12,
  ARG_TRANSPOSE_CONV_NHWC_SCRATCH = 13,
  ARG_TRANSPOSE_CONV_NHWC_OUTPUT_SCRATCH = 14,
  ARG_TRANSPOSE_CONV_INPUT = 0,
  ARG_TRANSPOSE_CONV_WEIGHT = 1,
  ARG_TRANSPOSE_CONV_BIAS = 2,
  ARG_TRANSPOSE_CONV_STRIDE = 3,
  ARG_TRANSPOSE_CONV_PADDING = 4,
  ARG_TRANSPOSE_CONV_OUTPUT_PADDING = 5,
  ARG_TRANSPOSE_CONV_DILATION = 6,
  ARG_TRANSPOSE_CONV_INPUT_OFFSET = 7,
  ARG_TRANSPOSE_CONV_OUTPUT_OFFSET = 8,
  ARG_TRANSPOSE_CONV_REQUANTIZE_MULTIPLIERS = 9,
  ARG_TRANSPOSE_CONV_REQUANTIZE_SHIFTS = 10,
  ARG_TRANSPOSE_CONV_ACTIVATION_MIN = 11,
  ARG_TRANSPOSE_CONV_ACTIVATION_MAX = 12,
  ARG_TRANSPOSE_CONV_SCRATCH = 13,
  ARG_TRANSPOSE_CONV_OUTPUT_SCRATCH = 14,
  ARG_HARDTANH_SELF = 0,
  ARG_HARDTANH_MIN_VAL = 1,
  ARG_HARDTANH_MAX_VAL = 2,
};

#endif
