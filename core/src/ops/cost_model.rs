//! The registry's cost column: which of the cost model's kernel models prices a call of an
//! operator (`analysis::cost` computes it over the IR). An operator of ExecuTorch's portable
//! kernels is priced by its category; each Cortex-M backend operator names the CMSIS-NN path
//! its kernel takes, so a new backend operator without one is refused by a test
//! (`every_cortex_m_operator_has_a_cmsis_nn_cost_model`), not priced as portable code.

/// How a call of an operator is priced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CostModel {
    /// A portable (aten, quantized_decomposed) kernel: by its category, MACs or elements.
    Portable,
    /// `arm_convolve_*_s8`: a standard convolution.
    CmsisConv,
    /// `arm_depthwise_conv_*_s8`.
    CmsisDepthwise,
    /// `arm_transpose_conv_s8`.
    CmsisTransposeConv,
    /// `arm_fully_connected_s8`.
    CmsisLinear,
    /// `arm_batch_matmul_s8`: one fully connected product per batch.
    CmsisBatchMatmul,
    /// `arm_avgpool_s8`.
    CmsisAvgPool,
    /// `arm_max_pool_s8`.
    CmsisMaxPool,
    /// `arm_softmax_s8`.
    CmsisSoftmax,
    /// `arm_elementwise_add_s8`.
    CmsisAdd,
    /// `arm_elementwise_mul_s8`.
    CmsisMul,
    /// The backend's scalar quantized divide (a float divide per element).
    CmsisDiv,
    /// A lookup-table activation, one byte in, one byte out.
    CmsisLut,
    /// `arm_minimum_s8` / `arm_maximum_s8`.
    CmsisMinMax,
    /// `arm_transpose_s8`.
    CmsisTranspose,
    /// The backend's quantize (float → int8).
    CmsisQuantize,
    /// The backend's dequantize (int8 → float).
    CmsisDequantize,
    /// `pad`: row copies.
    CmsisPad,
}

impl CostModel {
    /// Whether it models a CMSIS-NN (Cortex-M backend) kernel.
    pub const fn is_cmsis_nn(self) -> bool {
        !matches!(self, CostModel::Portable)
    }
}
