//! The Cortex-M backend's other kernels: pools, softmax, elementwise add/mul, the LUT
//! activation, min/max, quantize and dequantize (ExecuTorch's own loops, Helium-vectorised on
//! MVE cores), pad and transpose (copies).

use super::call::Spatial;
use super::loops::*;
use super::{Priced, Pricer};
use crate::kernels::Target;

fn f(n: usize) -> f64 {
    n as f64
}

/// `quantized_avg_pool2d` / `quantized_max_pool2d` (`arm_avgpool_s8`, `arm_max_pool_s8`).
pub fn pool(p: &Pricer, g: &Spatial, average: bool) -> Priced {
    let mut out = Priced::new(
        if average {
            "arm_avgpool_s8"
        } else {
            "arm_max_pool_s8"
        },
        0,
    );
    let taps = f(g.kernel_h.min(g.in_h) * g.kernel_w.min(g.in_w)) * f(g.outputs());
    let m = match p.core.kernel_target() {
        Target::CortexM55 => POOL_MVE_TAP_16 * (taps / 16.0),
        _ => POOL_TAP * taps,
    };
    out.add(p.mix("window sums", m));
    out.add(p.mix("outputs", POOL_OUT * f(g.outputs())));
    out
}

/// `softmax` (`arm_softmax_s8`) over `n` elements.
pub fn softmax(p: &Pricer, n: usize) -> Priced {
    let mut out = Priced::new("arm_softmax_s8", 0);
    out.add(p.mix("max, exp-sum and output passes", SOFTMAX_ELEMENT * f(n)));
    out
}

/// `quantized_add` / `quantized_mul` (`arm_elementwise_add_s8`, `_mul_s8`) of `n` outputs.
pub fn elementwise(p: &Pricer, n: usize, name: &'static str) -> Priced {
    let mut out = Priced::new(name, 0);
    let m = match p.core.kernel_target() {
        Target::CortexM55 => ELEMENTWISE_MVE_16 * (f(n) / 16.0),
        _ => ELEMENTWISE_DSP * f(n),
    };
    out.add(p.mix("elements", m));
    out
}

/// A byte-wise unary or binary kernel of `n` outputs (LUT activation, min, max, transpose).
pub fn bytewise(p: &Pricer, n: usize, name: &'static str) -> Priced {
    let mut out = Priced::new(name, 0);
    out.add(p.mix("elements", BYTE_ELEMENT * f(n)));
    out
}

/// `quantize_per_tensor` of `n` elements: Helium blocks of 16 and a scalar tail on MVE cores,
/// a scalar loop (a float multiply and a rounding per element) elsewhere.
pub fn quantize(p: &Pricer, n: usize, quantize: bool) -> Priced {
    let mut out = Priced::new(
        if quantize {
            "quantize_per_tensor"
        } else {
            "dequantize_per_tensor"
        },
        0,
    );
    let (vector, scalar) = if quantize {
        (QUANTIZE_MVE_16, QUANTIZE_SCALAR)
    } else {
        (DEQUANTIZE_MVE_16, DEQUANTIZE_SCALAR)
    };
    let tail = if p.core.kernel_target() == Target::CortexM55 {
        out.path.push_str(" (MVE blocks of 16)");
        out.add(p.mix("blocks of 16", vector * f(n / 16)));
        n % 16
    } else {
        n
    };
    if tail > 0 {
        out.add(p.mix("scalar elements", scalar * f(tail)));
        // a multiply, and for quantize the rounding (VCVTR / a soft-float conversion) too
        let ops = if quantize { 3.0 } else { 2.0 };
        out.add_cycles(
            "float multiply and rounding",
            p.timing.float_op * ops * f(tail),
        );
    }
    out
}

/// `pad` and other copies: `bytes` bytes out in `rows` contiguous runs.
pub fn copy(p: &Pricer, bytes: usize, rows: usize, name: &'static str) -> Priced {
    let mut out = Priced::new(name, 0);
    let per4 = match p.core.kernel_target() {
        Target::CortexM55 => MEMCPY_MVE_16 * 0.25,
        _ => MEMCPY_4,
    };
    out.add(p.mix("bytes", per4 * (f(bytes) / 4.0)));
    out.add(p.mix("runs", HELPER_CALL * f(rows)));
    out
}
