//! Quantization parameters as the Cortex-M passes carry them (`QuantArgs` in ExecuTorch's Arm
//! backend) and the fixed-point arithmetic the passes compute ahead of time: a real multiplier
//! as a Q31 multiplier and shift (`quantize_multiplier_aot`), and a float bound quantized the
//! way `quantize_val` does.

use std::collections::BTreeMap;

use crate::dtype::ScalarType;

/// A tensor's quantization: per tensor (one scale) or per channel (one per slice of `axis`).
#[derive(Debug, Clone, PartialEq)]
pub struct QuantArgs {
    pub scales: Vec<f64>,
    pub zero_points: Vec<i64>,
    pub qmin: i64,
    pub qmax: i64,
    pub dtype: ScalarType,
    /// The channel axis of a per-channel quantization.
    pub axis: Option<i64>,
}

impl QuantArgs {
    /// The per-tensor scale (the first scale of a per-channel one).
    pub fn scale(&self) -> f64 {
        self.scales.first().copied().unwrap_or(1.0)
    }

    /// The per-tensor zero point.
    pub fn zp(&self) -> i64 {
        self.zero_points.first().copied().unwrap_or(0)
    }

    pub fn per_channel(&self) -> bool {
        self.axis.is_some()
    }
}

/// A node's annotated parameters: per tensor argument index (of its schema arguments) and per
/// output index.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeQParams {
    pub inputs: BTreeMap<usize, QuantArgs>,
    pub outputs: BTreeMap<usize, QuantArgs>,
}

/// `scale` as a Q31 multiplier and a power-of-two shift: `scale = multiplier / 2^31 * 2^shift`,
/// the mantissa rounded half to even as Python's `round` does (ExecuTorch's
/// `quantize_multiplier_aot`).
pub fn quantize_multiplier(scale: f64) -> (i64, i64) {
    if scale == 0.0 || !scale.is_finite() {
        return (0, 0);
    }
    let (mantissa, mut shift) = frexp(scale);
    let mut q = (mantissa * 2f64.powi(31)).round_ties_even() as i64;
    if q == 1 << 31 {
        q /= 2;
        shift += 1;
    }
    (q.clamp(i64::from(i32::MIN), i64::from(i32::MAX)), shift)
}

/// `x = m * 2^e` with `0.5 <= |m| < 1` (C's `frexp`).
fn frexp(x: f64) -> (f64, i64) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64;
    if exp == 0 {
        // subnormal: scale into the normal range first
        let (m, e) = frexp(x * 2f64.powi(64));
        return (m, e - 64);
    }
    let e = exp - 1022;
    let m = f64::from_bits((bits & !(0x7ff << 52)) | (1022 << 52));
    (m, e)
}

/// A float bound quantized as ExecuTorch's `quantize_val` does it: `val / scale + zp` in
/// double, stored into a float32 tensor, rounded half to even, clamped.
pub fn quantize_val(val: f64, scale: f64, zp: i64, qmin: i64, qmax: i64) -> i64 {
    let x = (val / scale + zp as f64) as f32;
    let r = x.round_ties_even() as f64;
    r.clamp(qmin as f64, qmax as f64) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multipliers_match_executorch_for_reference_scales() {
        // tiny_conv_relu_linear, M55 default: quantized_linear's multiplier and shift
        let s = 0.006921723484992981 * 0.0004901179345324636 / 0.004494713619351387;
        assert_eq!(quantize_multiplier(s), (1659749845, -10));
        assert_eq!(quantize_multiplier(0.5), (1 << 30, 0));
        assert_eq!(quantize_multiplier(1.0), (1 << 30, 1));
        assert_eq!(quantize_multiplier(0.0), (0, 0));
    }

    #[test]
    fn frexp_splits_like_c() {
        assert_eq!(frexp(8.0), (0.5, 4));
        assert_eq!(frexp(-0.75), (-0.75, 0));
        let (m, e) = frexp(f64::MIN_POSITIVE / 4.0);
        assert_eq!(m * 2f64.powi(e as i32), f64::MIN_POSITIVE / 4.0);
    }

    #[test]
    fn bounds_quantize_half_to_even() {
        assert_eq!(quantize_val(0.0, 0.1, -128, -128, 127), -128);
        assert_eq!(quantize_val(0.25, 0.1, 0, -128, 127), 2);
        assert_eq!(quantize_val(100.0, 0.1, 0, -128, 127), 127);
    }
}
