//! Operator categories and their colors, shared by the graph view, legends and exports.

use egui::Color32;

pub use etscope_core::ops::Category;

/// Colours, labels and the legend of the registry's categories.
pub trait CategoryStyle {
    /// Every category, in legend order.
    const ALL: [Category; 11];
    /// The category of an operator: the registry's, or a guess from the name of one etscope
    /// does not know.
    fn of(op: &str) -> Category;
    /// Fill color of nodes in this category.
    fn color(self) -> Color32;
    /// The legend's label.
    fn label(self) -> &'static str;
}

impl CategoryStyle for Category {
    const ALL: [Category; 11] = [
        Category::Convolution,
        Category::Linear,
        Category::Pooling,
        Category::Elementwise,
        Category::Activation,
        Category::Normalization,
        Category::Quantize,
        Category::DataMovement,
        Category::Delegate,
        Category::Io,
        Category::Other,
    ];

    fn of(op: &str) -> Category {
        etscope_core::ops::category_of(op, "")
    }

    /// Fill color of nodes in this category.
    fn color(self) -> Color32 {
        match self {
            Category::Convolution => Color32::from_rgb(0x3b, 0x6e, 0xc9),
            Category::Linear => Color32::from_rgb(0x6a, 0x4c, 0xb8),
            Category::Pooling => Color32::from_rgb(0x1f, 0x9e, 0x89),
            Category::Elementwise => Color32::from_rgb(0xd0, 0x8a, 0x1a),
            Category::Activation => Color32::from_rgb(0xc2, 0x40, 0x3a),
            Category::Normalization => Color32::from_rgb(0x8c, 0x6d, 0x31),
            Category::Quantize => Color32::from_rgb(0x2e, 0x8b, 0x3e),
            Category::DataMovement => Color32::from_rgb(0x6b, 0x72, 0x80),
            Category::Delegate => Color32::from_rgb(0xb8, 0x3f, 0x94),
            Category::Io => Color32::from_rgb(0x33, 0x33, 0x33),
            Category::Other => Color32::from_rgb(0x55, 0x5f, 0x6d),
        }
    }

    /// Legend label.
    fn label(self) -> &'static str {
        match self {
            Category::Convolution => "convolution",
            Category::Linear => "linear / matmul",
            Category::Pooling => "pooling",
            Category::Elementwise => "elementwise",
            Category::Activation => "activation",
            Category::Normalization => "normalization",
            Category::Quantize => "quantize / dequantize",
            Category::DataMovement => "data movement",
            Category::Delegate => "delegate",
            Category::Io => "input / output",
            Category::Other => "other",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_ops_land_in_sensible_categories() {
        assert_eq!(Category::of("aten::convolution"), Category::Convolution);
        assert_eq!(
            Category::of("cortex_m::quantized_conv2d_nhwc"),
            Category::Convolution
        );
        assert_eq!(
            Category::of("cortex_m::quantized_depthwise_conv2d_nhwc"),
            Category::Convolution
        );
        assert_eq!(Category::of("aten::addmm"), Category::Linear);
        assert_eq!(Category::of("cortex_m::quantized_linear"), Category::Linear);
        assert_eq!(
            Category::of("cortex_m::quantized_avg_pool2d_nhwc"),
            Category::Pooling
        );
        assert_eq!(Category::of("aten::relu"), Category::Activation);
        assert_eq!(Category::of("cortex_m::softmax"), Category::Activation);
        assert_eq!(
            Category::of("cortex_m::quantize_per_tensor"),
            Category::Quantize
        );
        assert_eq!(
            Category::of("quantized_decomposed::dequantize_per_tensor"),
            Category::Quantize
        );
        assert_eq!(
            Category::of("cortex_m::quantized_add"),
            Category::Elementwise
        );
        assert_eq!(Category::of("cortex_m::transpose"), Category::DataMovement);
        assert_eq!(Category::of("aten::permute_copy"), Category::DataMovement);
        assert_eq!(Category::of("delegate::XnnpackBackend"), Category::Delegate);
        assert_eq!(
            Category::of("aten::_native_batch_norm_legit_no_training"),
            Category::Normalization
        );
    }
}
