//! ExecuTorch's portable transposed convolution (`aten::convolution.out` with `transposed`),
//! 2-D or 1-D (height 1): `out[n, o, y, x] = bias[o] + Σ x[n, i, iy, ix] · w[i, o % (O/g), ky, kx]`
//! over the group's input channels and the taps with `y = iy·stride − pad + ky·dilation` (and
//! likewise for x). Float32 throughout, summed in the portable kernel's order: each output
//! starts at its bias and the input pixels scatter into it row by row, column by column, channel
//! by channel.

/// Sizes and hyper-parameters, 2-D (a 1-D call has height 1).
pub struct Transposed {
    /// `[n, c_in, h, w]`.
    pub input: [usize; 4],
    /// `[c_in, c_out / groups, kh, kw]`.
    pub weight: [usize; 4],
    pub groups: usize,
    pub stride: (usize, usize),
    pub padding: (usize, usize),
    pub dilation: (usize, usize),
    pub output_padding: (usize, usize),
}

impl Transposed {
    /// The output's `[n, c_out, oh, ow]`; `None` when the sizes do not fit.
    pub fn out_dims(&self) -> Option<[usize; 4]> {
        let [n, c, h, w] = self.input;
        let [ci, ocg, kh, kw] = self.weight;
        if ci != c || self.groups == 0 || c % self.groups != 0 {
            return None;
        }
        let side = |len: usize, s: usize, p: usize, d: usize, k: usize, op: usize| {
            len.checked_sub(1)?
                .checked_mul(s)?
                .checked_add(d.checked_mul(k.checked_sub(1)?)?)?
                .checked_add(op)?
                .checked_add(1)?
                .checked_sub(p.checked_mul(2)?)
        };
        let oh = side(
            h,
            self.stride.0,
            self.padding.0,
            self.dilation.0,
            kh,
            self.output_padding.0,
        )?;
        let ow = side(
            w,
            self.stride.1,
            self.padding.1,
            self.dilation.1,
            kw,
            self.output_padding.1,
        )?;
        Some([n, ocg.checked_mul(self.groups)?, oh, ow])
    }

    /// The output, `out_dims` long; `None` when the sizes do not fit.
    pub fn run(&self, x: &[f32], wt: &[f32], bias: Option<&[f32]>) -> Option<Vec<f32>> {
        let [n, c, h, w] = self.input;
        let [_, ocg, kh, kw] = self.weight;
        let [_, oc, oh, ow] = self.out_dims()?;
        let icg = c / self.groups;
        let (sh, sw) = self.stride;
        let (ph, pw) = self.padding;
        let (dh, dw) = self.dilation;
        let out_len = crate::kernels::element_count(&[n, oc, oh, ow])?;
        // as the portable kernel: the output starts at its bias, then each input pixel scatters
        // its taps into it, input row, input column, input channel, kernel row, kernel column
        // in that order, so every output element sums in the kernel's order
        let plane = oh.checked_mul(ow)?;
        let mut out: Vec<f32> = (0..out_len)
            .map(|k| bias.map_or(0.0, |bb| bb[(k / plane) % oc]))
            .collect();
        // the output coordinate a tap lands on: `i·s + k·d − p`, if inside `0..len`
        let target = |i: usize, s: usize, k: usize, d: usize, p: usize, len: usize| {
            let at = (i * s + k * d).checked_sub(p)?;
            (at < len).then_some(at)
        };
        for b in 0..n {
            for o in 0..oc {
                let (g, j) = (o / ocg, o % ocg);
                let dst = &mut out[(b * oc + o) * plane..(b * oc + o + 1) * plane];
                for iy in 0..h {
                    for ix in 0..w {
                        for i in g * icg..(g + 1) * icg {
                            let xv = x[((b * c + i) * h + iy) * w + ix];
                            for ky in 0..kh {
                                let Some(y) = target(iy, sh, ky, dh, ph, oh) else {
                                    continue;
                                };
                                for kx in 0..kw {
                                    let Some(xo) = target(ix, sw, kx, dw, pw, ow) else {
                                        continue;
                                    };
                                    dst[y * ow + xo] +=
                                        xv * wt[((i * ocg + j) * kh + ky) * kw + kx];
                                }
                            }
                        }
                    }
                }
            }
        }
        Some(out)
    }
}
