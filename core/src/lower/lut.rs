//! The 256-entry int8 lookup table of a quantized unary activation (`cortex_m::
//! quantized_activation`), as ExecuTorch's `build_activation_lut` computes it ahead of time:
//! each int8 input dequantized, the function applied in double precision, the result quantized
//! with the output parameters rounding half away from zero, clamped to int8; a pole takes the
//! rail, an input where the function is undefined (the log of a negative) the value of the
//! nearest defined entry.

use crate::kernels::math::erf;

/// The activation's function, by the edge op's registry name.
pub fn function(op: &str) -> Option<fn(f64) -> f64> {
    fn sigmoid(x: f64) -> f64 {
        if x >= 0.0 {
            1.0 / (1.0 + (-x).exp())
        } else {
            let e = x.exp();
            e / (1.0 + e)
        }
    }
    Some(match op {
        "aten::sigmoid" => sigmoid,
        "aten::tanh" => f64::tanh,
        "aten::silu" => |x| x * sigmoid(x),
        "aten::gelu" => |x| 0.5 * x * (1.0 + erf(x / std::f64::consts::SQRT_2)),
        "aten::log" => f64::ln,
        "aten::log2" => f64::log2,
        "aten::log10" => f64::log10,
        "aten::log1p" => f64::ln_1p,
        "aten::sqrt" => f64::sqrt,
        "aten::rsqrt" => |x| 1.0 / x.sqrt(),
        _ => return None,
    })
}

fn round_half_away(x: f64) -> i64 {
    if x == 0.0 {
        0
    } else {
        (x.abs() + 0.5).floor().copysign(x) as i64
    }
}

/// The table, indexed by `q + 128`; `None` when the function is undefined on every input.
pub fn build(
    f: fn(f64) -> f64,
    input_scale: f64,
    input_zp: i64,
    output_scale: f64,
    output_zp: i64,
) -> Option<[i8; 256]> {
    let mut defined: Vec<(usize, i8)> = Vec::new();
    let mut undefined: Vec<usize> = Vec::new();
    for q in -128i64..128 {
        let index = (q + 128) as usize;
        let y = f((q - input_zp) as f64 * input_scale);
        let scaled = if y.is_finite() {
            y / output_scale + output_zp as f64
        } else {
            y
        };
        if scaled.is_nan() {
            undefined.push(index);
            continue;
        }
        let q_out = if !scaled.is_finite() {
            if scaled > 0.0 {
                127
            } else {
                -128
            }
        } else {
            round_half_away(scaled)
        };
        defined.push((index, q_out.clamp(-128, 127) as i8));
    }
    if defined.is_empty() {
        return None;
    }
    let mut lut = [0i8; 256];
    for &(i, v) in &defined {
        lut[i] = v;
    }
    for i in undefined {
        // the nearest defined entry (the lower one on a tie, as Python's min keeps the first)
        if let Some(&(_, v)) = defined.iter().min_by_key(|(d, _)| d.abs_diff(i)) {
            lut[i] = v;
        }
    }
    Some(lut)
}
