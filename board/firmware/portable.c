/* Dispatch of the portable (aten) operators the board runs: every opcodes.h code op_is_integer()
 * rejects goes to its family's kernel (portable_*.c). The families, as the host computes them
 * (core/src/kernels/portable): every kernel reads its tensors in logical (row-major) order
 * whatever their dim order, computes in the host's types and order of operations (float32 where
 * the host rounds to float32, double elsewhere) and writes its out tensor in that tensor's dim
 * order, so each output equals the host's bit for bit. */
#include <stdint.h>

#include "portable.h"

int run_portable(uint32_t op, const uint32_t *a, uint32_t n) {
  switch (op) {
    case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_ATEN_MAXIMUM: case OP_ATEN_MINIMUM:
    case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
      return binary(op, a, n);
    case OP_WHERE: return where_op(a, n);
    case OP_RELU: case OP_SIGMOID: case OP_TANH: case OP_NEG: case OP_ABS: case OP_EXP: case OP_LOG:
    case OP_SQRT: case OP_RSQRT: case OP_RECIPROCAL: case OP_GELU: case OP_LEAKY_RELU: case OP_CLAMP:
      return unary(op, a, n);
    case OP_COPY: return copy_op(a, n);
    case OP_PERMUTE_COPY: case OP_T_COPY: case OP_TRANSPOSE_COPY: return permute_op(op, a, n);
    case OP_EXPAND_COPY: return expand_op(a, n);
    case OP_SLICE_COPY: case OP_SELECT_COPY: return slice_op(op, a, n);
    case OP_CAT: return cat_op(a, n);
    case OP_SPLIT_WITH_SIZES_COPY: return split_op(a, n);
    case OP_FULL: return full_op(a, n);
    case OP_EMBEDDING: return embedding_op(a, n);
    case OP_AVG_POOL2D: return avg_pool_op(a, n);
    case OP_MAX_POOL2D_WITH_INDICES: return max_pool_op(a, n);
    case OP_UPSAMPLE_NEAREST2D: return nearest_op(a, n);
    case OP_UPSAMPLE_BILINEAR2D: return bilinear_op(a, n);
    case OP_FLOAT_SOFTMAX: case OP_LOG_SOFTMAX: return softmax_op(op, a, n);
    case OP_MEAN: case OP_SUM: case OP_AMAX: case OP_AMIN: case OP_ARGMAX: case OP_ARGMIN: case OP_ANY:
    case OP_ANY_ALL: case OP_PROD: case OP_PROD_ALL: case OP_MAX_ALL: case OP_MIN_ALL:
      return reduce_op(op, a, n);
    case OP_ADAPTIVE_AVG_POOL2D: return adaptive_pool_op(a, n);
    case OP_CONSTANT_PAD_ND: return constant_pad_op(a, n);
    case OP_FLIP: return flip_op(a, n);
    case OP_INDEX_SELECT: return index_select_op(a, n);
    case OP_CUMSUM: return cumsum_op(a, n);
    case OP_VAR_CORRECTION: case OP_VAR_UNBIASED: return var_op(op, a, n);
    case OP_ELU: return elu_op(a, n);
    case OP_GLU: return glu_op(a, n);
    case OP_FILL: case OP_ZEROS: case OP_ONES: case OP_SCALAR_TENSOR: case OP_FILL_TENSOR:
      return fill_op(op, a, n);
    case OP_ARANGE: return arange_op(a, n);
    case OP_REPEAT: return repeat_op(a, n);
    case OP_ROLL: return roll_op(a, n);
    case OP_STACK: return stack_op(a, n);
    case OP_TRIL: return tril_op(a, n);
    case OP_UNBIND_COPY: return unbind_op(a, n);
    case OP_RSUB: return rsub_op(a, n);
    case OP_FLOOR_DIVIDE: return div_mode_op(op, a, n);
    case OP_MEAN_ALL: return mean_all_op(a, n);
    case OP_INDEX: return index_op(a, n);
    case OP_INDEX_PUT: case OP_INDEX_PUT_IN_PLACE: return index_put_op(op, a, n);
    case OP_COPY_IN_PLACE: case OP_COPY_OUT: return copy_into_op(op, a, n);
    case OP_ET_VIEW: return 0;
    case OP_GATHER: return gather_op(a, n);
    case OP_SCATTER: case OP_SCATTER_ADD: case OP_SCATTER_VALUE: return scatter_op(op, a, n);
    case OP_DIAGONAL_COPY: return diagonal_op(a, n);
    case OP_DIV_MODE: return div_mode_op(op, a, n);
    case OP_MASKED_FILL: return masked_fill_op(a, n);
    case OP_PIXEL_SHUFFLE: case OP_PIXEL_UNSHUFFLE: return pixel_shuffle_op(op, a, n);
    case OP_REFLECTION_PAD1D: case OP_REFLECTION_PAD2D: case OP_REFLECTION_PAD3D:
    case OP_REPLICATION_PAD1D: case OP_REPLICATION_PAD2D: case OP_REPLICATION_PAD3D:
      return pad_mode_op(op, a, n);
    case OP_MAX_DIM: case OP_MIN_DIM: return extreme_dim_op(op, a, n);
    case OP_VAR_MEAN: return var_mean_op(a, n);
    case OP_CLAMP_TENSOR: return clamp_tensor_op(a, n);
    case OP_NARROW_COPY: return narrow_op(a, n);
    case OP_SELECT_SCATTER: case OP_SLICE_SCATTER: return scatter_dim_op(op, a, n);
    case OP_GROUP_NORM: return group_norm_op(a, n);
    case OP_LOGIT: return logit_op(a, n);
    case OP_BITWISE_LEFT_SHIFT: case OP_BITWISE_RIGHT_SHIFT: return math_binary(op, a, n);
    case OP_POW_SCALAR: return pow_scalar_op(a, n);
    case OP_UNFOLD_COPY: return unfold_op(a, n);
    case OP_AS_STRIDED_COPY: return as_strided_op(a, n);
    case OP_EMPTY: return fill_op(OP_ZEROS, a, n);
    case OP_TOPK: return topk_op(a, n);
    case OP_NONZERO: return nonzero_op(a, n);
    case OP_MASKED_SELECT: return masked_select_op(a, n);
    case OP_REPEAT_INTERLEAVE: return repeat_interleave_op(a, n);
    case OP_MASKED_SCATTER: return masked_scatter_op(a, n);
    case OP_CDIST_FORWARD: case OP_PDIST_FORWARD: return distance_op(op, a, n);
    case OP_GRID_SAMPLER2D: return grid_sampler_op(a, n);
    case OP_UPSAMPLE_BILINEAR2D_AA: return upsample_aa_op(a, n);
    case OP_SPLIT_COPY: return split_op(a, n);
    case OP_BATCH_NORM: return batch_norm_op(a, n);
    case OP_BATCH_NORM_NO_STATS: return batch_norm_no_stats_op(a, n);
    case OP_QD_QUANTIZE: case OP_QD_DEQUANTIZE: case OP_QD_DEQUANTIZE_PER_CHANNEL: return qd_op(op, a, n);
    case OP_ADDMM: case OP_MM: case OP_BMM: return matmul_op(op, a, n);
    case OP_ATEN_LINEAR: return linear_op(a, n);
    case OP_CONVOLUTION: return convolution_op(a, n);
    case OP_LAYER_NORM: return layer_norm_op(a, n);
    case OP_EXPM1: case OP_LOG2: case OP_LOG10: case OP_LOG1P: case OP_SIN: case OP_COS: case OP_TAN:
    case OP_ASIN: case OP_ACOS: case OP_ATAN: case OP_SINH: case OP_COSH: case OP_ASINH: case OP_ACOSH:
    case OP_ATANH: case OP_ERF: case OP_FLOOR: case OP_CEIL: case OP_ROUND: case OP_TRUNC: case OP_SIGN:
    case OP_BITWISE_NOT: case OP_ISNAN: case OP_ISINF: case OP_LOGICAL_NOT:
      return math_unary(op, a, n);
    case OP_ATAN2: case OP_POW: case OP_FMOD: case OP_REMAINDER: case OP_LOGICAL_AND: case OP_LOGICAL_OR:
    case OP_LOGICAL_XOR: case OP_BITWISE_AND: case OP_BITWISE_OR: case OP_BITWISE_XOR:
      return math_binary(op, a, n);
    default:
      return fail("operator not implemented by the board firmware");
  }
}
