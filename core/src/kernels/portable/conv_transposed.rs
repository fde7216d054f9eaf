//! ExecuTorch's portable transposed convolution (`aten::convolution.out` with `transposed`),
//! 2-D or 1-D (height 1): every output element gathers the input pixels whose kernel taps land
//! on it, `out[n, o, y, x] = bias[o] + Σ x[n, i, iy, ix] · w[i, o % (O/g), ky, kx]` over the
//! group's input channels and the taps with `y = iy·stride − pad + ky·dilation` (and likewise
//! for x). Float32 throughout.

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
        let mut out = vec![0f32; crate::kernels::element_count(&[n, oc, oh, ow])?];
        // the input pixel a tap lands from: `o = i·s − p + k·d` solved for `i`
        let source = |o: usize, p: usize, k: usize, d: usize, s: usize, len: usize| {
            let at = (o + p).checked_sub(k * d)?;
            (at % s == 0 && at / s < len).then_some(at / s)
        };
        for b in 0..n {
            for o in 0..oc {
                let (g, j) = (o / ocg, o % ocg);
                for y in 0..oh {
                    for xo in 0..ow {
                        let mut acc = 0f32;
                        for i in g * icg..(g + 1) * icg {
                            for ky in 0..kh {
                                let Some(iy) = source(y, ph, ky, dh, sh, h) else {
                                    continue;
                                };
                                for kx in 0..kw {
                                    let Some(ix) = source(xo, pw, kx, dw, sw, w) else {
                                        continue;
                                    };
                                    acc += x[((b * c + i) * h + iy) * w + ix]
                                        * wt[((i * ocg + j) * kh + ky) * kw + kx];
                                }
                            }
                        }
                        out[((b * oc + o) * oh + y) * ow + xo] = acc + bias.map_or(0.0, |bb| bb[o]);
                    }
                }
            }
        }
        Some(out)
    }
}
