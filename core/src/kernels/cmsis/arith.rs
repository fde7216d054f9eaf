//! CMSIS-NN's integer arithmetic, bit for bit: requantization with double rounding
//! (`arm_nn_requantize`), saturating doubling high multiply, rounding division by a power of
//! two, the fixed-point exponential and reciprocal of `arm_nn_softmax_common_s8`, and the
//! integer average of `arm_avgpool_s8` (ties away from zero).

/// `arm_nn_doubling_high_mult_no_sat`: (a·b + 2^30) >> 31.
pub fn doubling_high_mult_no_sat(a: i32, b: i32) -> i32 {
    ((i64::from(a) * i64::from(b) + (1i64 << 30)) >> 31) as i32
}

/// `arm_nn_doubling_high_mult`: rounding doubling high multiply, saturating the one overflow.
pub fn doubling_high_mult(a: i32, b: i32) -> i32 {
    if a == i32::MIN && b == i32::MIN {
        return i32::MAX;
    }
    let mut mult: i64 = 1 << 30;
    if (a < 0) ^ (b < 0) {
        mult = 1 - mult;
    }
    mult += i64::from(a) * i64::from(b);
    (mult / (1i64 << 31)) as i32
}

/// `arm_nn_divide_by_power_of_two`: arithmetic shift rounding half away from zero.
pub fn divide_by_power_of_two(dividend: i32, exponent: i32) -> i32 {
    if exponent <= 0 {
        return dividend;
    }
    let exponent = exponent.min(31);
    let mask = ((1i64 << exponent) - 1) as i32;
    let remainder = dividend & mask;
    let mut result = dividend >> exponent;
    let mut threshold = mask >> 1;
    if result < 0 {
        threshold += 1;
    }
    if remainder > threshold {
        result += 1;
    }
    result
}

/// `arm_nn_requantize` (double rounding): `val · 2^max(shift,0)`, doubling high multiply by
/// `multiplier`, then a rounding right shift by `max(-shift,0)`.
pub fn requantize(val: i32, multiplier: i32, shift: i32) -> i32 {
    let left = shift.max(0);
    // a shift of i32::MIN (a corrupted program) saturates instead of overflowing the negation
    let right = 0i32.saturating_sub(shift).max(0);
    divide_by_power_of_two(
        doubling_high_mult_no_sat(val.wrapping_mul(1i32.wrapping_shl(left as u32)), multiplier),
        right,
    )
}

fn select_if_nonzero(cond: i32, if_nonzero: i32, otherwise: i32) -> i32 {
    if cond != 0 {
        if_nonzero
    } else {
        otherwise
    }
}

/// `arm_nn_exp_on_negative_values`: exp(x) for x ≤ 0 in Q5.26 → Q0.31.
pub fn exp_on_negative_values(val: i32) -> i32 {
    let shift = 24;
    let val_mod_minus_quarter = (val & ((1 << shift) - 1)) - (1 << shift);
    let remainder = val_mod_minus_quarter.wrapping_sub(val);
    let x = (val_mod_minus_quarter << 5) + (1 << 28);
    let x2 = doubling_high_mult(x, x);
    let inner = doubling_high_mult(
        divide_by_power_of_two(doubling_high_mult(x2, x2), 2) + doubling_high_mult(x2, x),
        715_827_883,
    ) + x2;
    let mut result =
        1_895_147_668 + doubling_high_mult(1_895_147_668, x + divide_by_power_of_two(inner, 1));
    for (k, constant) in [
        1_672_461_947,
        1_302_514_674,
        790_015_084,
        290_630_308,
        39_332_535,
        720_401,
        242,
    ]
    .into_iter()
    .enumerate()
    {
        let bit = remainder & (1 << (shift + k as i32));
        result = select_if_nonzero(bit, doubling_high_mult(result, constant), result);
    }
    if val == 0 {
        i32::MAX
    } else {
        result
    }
}

/// Saturating multiply by 2^exp.
fn saturating_mul_pow2(x: i32, exp: u32) -> i32 {
    let wide = i64::from(x) << exp;
    wide.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}

/// `arm_nn_one_over_one_plus_x_for_x_in_0_1`: 1/(1+x) for x in [0, 1) as Q0.31.
pub fn one_over_one_plus_x(val: i32) -> i32 {
    let sum = i64::from(val) + i64::from(i32::MAX);
    let half_denominator = ((sum + if sum >= 0 { 1 } else { -1 }) / 2) as i32;
    let mut x = 1_515_870_810i32.wrapping_add(doubling_high_mult(half_denominator, -1_010_580_540));
    let one = 1 << 29;
    for _ in 0..3 {
        let half_denominator_times_x = doubling_high_mult(half_denominator, x);
        let one_minus = one - half_denominator_times_x;
        x = x.wrapping_add(saturating_mul_pow2(doubling_high_mult(x, one_minus), 2));
    }
    saturating_mul_pow2(x, 1)
}

/// Bits of the sum's integer part in `arm_nn_softmax_common_s8`.
const ACCUM_BITS: i32 = 12;

/// One row of `arm_softmax_s8`: int8 in, int8 out (zero point -128, scale 1/256).
pub fn softmax_row_s8(
    input: &[i8],
    multiplier: i32,
    left_shift: i32,
    diff_min: i32,
    out: &mut [i8],
) {
    let Some(&max) = input.iter().max() else {
        return;
    };
    let mask = 1i32.wrapping_shl(left_shift.max(0) as u32);
    let scaled = |v: i8| {
        doubling_high_mult(
            (i32::from(v) - i32::from(max)).wrapping_mul(mask),
            multiplier,
        )
    };
    let mut sum: i32 = 0;
    for &v in input {
        let diff = i32::from(v) - i32::from(max);
        if diff >= diff_min {
            sum = sum.wrapping_add(divide_by_power_of_two(
                exp_on_negative_values(scaled(v)),
                ACCUM_BITS,
            ));
        }
    }
    let headroom = sum.leading_zeros() as i32;
    let shifted = if sum > 0 {
        (sum.wrapping_shl(headroom as u32)).wrapping_sub(i32::MIN)
    } else {
        0i32.wrapping_sub(i32::MIN)
    };
    let shifted_scale = one_over_one_plus_x(shifted);
    let bits_over_unit = ACCUM_BITS - headroom + 23;
    for (o, &v) in out.iter_mut().zip(input) {
        let diff = i32::from(v) - i32::from(max);
        *o = if diff >= diff_min {
            let res = divide_by_power_of_two(
                doubling_high_mult(shifted_scale, exp_on_negative_values(scaled(v))),
                bits_over_unit,
            ) - 128;
            res.clamp(-128, 127) as i8
        } else {
            -128
        };
    }
}

/// `arm_avgpool_s8`'s average: the sum over the valid window divided by the count, ties
/// rounded away from zero.
pub fn average_round_away(sum: i32, count: i32) -> i32 {
    if count <= 0 {
        return 0;
    }
    if sum > 0 {
        (sum + count / 2) / count
    } else {
        (sum - count / 2) / count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn divide_by_power_of_two_rounds_half_away_from_zero() {
        assert_eq!(divide_by_power_of_two(5, 1), 3); // 2.5 → 3
        assert_eq!(divide_by_power_of_two(-5, 1), -3); // -2.5 → -3
        assert_eq!(divide_by_power_of_two(4, 1), 2);
        assert_eq!(divide_by_power_of_two(-6, 2), -2); // -1.5 → -2
        assert_eq!(divide_by_power_of_two(7, 0), 7);
    }

    #[test]
    fn doubling_high_mult_matches_its_definition() {
        assert_eq!(doubling_high_mult(1 << 30, 1 << 30), 1 << 29);
        assert_eq!(doubling_high_mult(i32::MIN, i32::MIN), i32::MAX);
        // a negative half (−0.5, −1.5) rounds toward zero here (nudge 1 − 2^30, then a
        // truncating division), while the no-saturation variant floors after adding 2^30
        assert_eq!(doubling_high_mult(-1, 1 << 30), 0);
        assert_eq!(doubling_high_mult(-3, 1 << 30), -1);
        assert_eq!(doubling_high_mult_no_sat(-1, 1 << 30), 0);
        assert_eq!(doubling_high_mult_no_sat(-3, 1 << 30), -1);
    }

    #[test]
    fn requantize_applies_double_rounding() {
        // multiplier 0.5 (2^30), shift -1: 3 · 0.5 = 1.5 → doubling high mult gives 2 (rounded),
        // then /2 = 1 — the double rounding that single rounding (0.75 → 1) also gives here,
        let m = 1 << 30;
        assert_eq!(requantize(3, m, -1), 1);
        // but 5 · 0.5 = 2.5 → 3, /2 → 1.5 → 2 where single rounding of 1.25 gives 1
        assert_eq!(requantize(5, m, -1), 2);
        // a left shift scales before the multiply
        assert_eq!(requantize(3, m, 2), 6);
    }

    #[test]
    fn the_most_negative_shift_does_not_overflow() {
        // found by fuzzing (`run`): a per-channel shift of i32::MIN negated with overflow
        assert_eq!(requantize(1000, 1 << 30, i32::MIN), 0);
        assert_eq!(requantize(-1000, 1 << 30, i32::MIN), 0);
    }

    #[test]
    fn average_ties_round_away_from_zero() {
        assert_eq!(average_round_away(5, 2), 3);
        assert_eq!(average_round_away(-5, 2), -3);
        assert_eq!(average_round_away(7, 3), 2);
        assert_eq!(average_round_away(-7, 3), -2);
        assert_eq!(average_round_away(3, 2), 2);
    }

    #[test]
    fn exp_and_reciprocal_are_close_to_the_real_functions() {
        for x in [-0.1f64, -0.5, -1.0, -2.5, -7.0] {
            let q = (x * f64::from(1 << 26)) as i32; // Q5.26
            let got = f64::from(exp_on_negative_values(q)) / f64::from(i32::MAX);
            assert!((got - x.exp()).abs() < 1e-6, "exp({x}) = {got}");
        }
        for x in [0.0f64, 0.25, 0.5, 0.9] {
            let q = (x * f64::from(i32::MAX)) as i32;
            let got = f64::from(one_over_one_plus_x(q)) / f64::from(i32::MAX);
            assert!((got - 1.0 / (1.0 + x)).abs() < 1e-6, "1/(1+{x}) = {got}");
        }
    }

    #[test]
    fn softmax_of_equal_inputs_is_uniform() {
        let mut out = [0i8; 4];
        softmax_row_s8(&[10, 10, 10, 10], 1_247_219_456, 17, -15872, &mut out);
        // 1/4 at scale 1/256 and zero point -128 → 64 - 128 = -64
        assert_eq!(out, [-64; 4]);
    }
}
