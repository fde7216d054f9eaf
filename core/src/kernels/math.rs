//! Numeric helpers the kernels and the lowering share (no kernel lives here).

/// The error function to double precision: its Maclaurin series below 2.5, the continued
/// fraction of `erfc` above.
pub fn erf(x: f64) -> f64 {
    // series for small |x|, complementary continued fraction otherwise
    let ax = x.abs();
    let r = if ax < 2.5 {
        // the terms fall below 1e-17 of the sum within 60 steps for |x| < 2.5
        let mut sum = ax;
        let mut term = ax;
        let x2 = ax * ax;
        for n in 1..=80 {
            let n = f64::from(n);
            term *= -x2 / n;
            let add = term / (2.0 * n + 1.0);
            sum += add;
            if add.abs() <= 1e-17 * sum.abs() {
                break;
            }
        }
        sum * 2.0 / std::f64::consts::PI.sqrt()
    } else {
        // erfc(x) = exp(-x²)/(x√π) · 1/(1+ 1/(2x²)/(1+ 2/(2x²)/(1+ ...))) (Lentz)
        let mut f = 0.0;
        for k in (1..60).rev() {
            f = (k as f64 / 2.0) / (ax + f);
        }
        let erfc = (-ax * ax).exp() / std::f64::consts::PI.sqrt() / (ax + f);
        1.0 - erfc
    };
    if x < 0.0 {
        -r
    } else {
        r
    }
}
