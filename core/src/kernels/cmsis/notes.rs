//! What ExecuTorch 1.5.1's `cortex_m::` kernels compute differently from the model on the
//! device, per operator: one rule each, bound to its operator in the registry
//! (`OpDef::device_note`) and read by the static device notes (`crate::analysis::device_notes`).
//! The host kernels reproduce each of these, so a diff points at the op; the rules say why
//! before anything runs.

use super::core_buffers::CoreCall;
use crate::kernels::{CmsisNn, Device};
use crate::ScalarType;

/// A tensor argument as a rule sees it: its type, sizes and storage order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tensor {
    pub dtype: ScalarType,
    pub sizes: Vec<i64>,
    pub dim_order: Vec<u8>,
}

/// One argument of a call as a rule sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgFacts {
    Tensor(Tensor),
    Ints(Vec<i64>),
    Other,
}

/// One kernel call of a program, as a rule sees it: plain facts its reader (the static device
/// notes, over the IR) decoded, so the rules below the IR never open a program, and the
/// position of each argument by the name the operator's schema gives it (the registry, which
/// sits above the kernels, answers).
pub struct Call<'c> {
    /// The operator's name (`cortex_m::softmax`).
    pub op: &'c str,
    pub args: &'c [ArgFacts],
    pub position: &'c dyn Fn(&str) -> Option<usize>,
    /// The out tensor.
    pub out: Option<&'c Tensor>,
    /// The facts that decide whether a core runs it (`core_buffers::fails_on`).
    pub core_call: Option<CoreCall>,
    pub device: Device,
}

impl Call<'_> {
    /// Argument `name` as a tensor.
    fn tensor(&self, name: &str) -> Option<&Tensor> {
        match self.args.get((self.position)(name)?)? {
            ArgFacts::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// The first operand: `input`, or `self` in the binary kernels' schemas.
    fn first(&self) -> Option<&Tensor> {
        self.tensor("input").or_else(|| self.tensor("self"))
    }

    /// Argument `name` as an int list (empty when it is none).
    fn ints(&self, name: &str) -> &[i64] {
        match (self.position)(name).and_then(|k| self.args.get(k)) {
            Some(ArgFacts::Ints(v)) => v,
            _ => &[],
        }
    }
}

/// A rule: why the device computes something else at this call, if it does.
pub type NoteFn = fn(&Call<'_>) -> Option<String>;

/// Whether a tensor's bytes are in row-major order of its logical sizes (size-1 dims may sit
/// anywhere in `dim_order`).
fn row_major_bytes(t: &Tensor) -> bool {
    let order: Vec<usize> = t
        .dim_order
        .iter()
        .map(|&d| usize::from(d))
        .filter(|&d| t.sizes.get(d).is_some_and(|&s| s > 1))
        .collect();
    order.windows(2).all(|w| w[0] < w[1])
}

fn numel(t: &Tensor) -> i64 {
    t.sizes.iter().product()
}

/// `softmax`: rows of the last logical dim, read as consecutive bytes.
pub fn softmax(c: &Call<'_>) -> Option<String> {
    let x = c.first()?;
    (!row_major_bytes(x)).then_some(())?;
    Some(format!(
        "the kernel normalises rows of {} consecutive bytes of a tensor stored with dim_order {:?}: \
         it mixes elements of different rows (ExecuTorch 1.5.1 softmax_out checks the logical dim only)",
        x.sizes.last().copied().unwrap_or(0),
        x.dim_order
    ))
}

/// `transpose`, `minimum`, `maximum`: logical sizes over a buffer in storage order.
fn layout_unaware(c: &Call<'_>, operands: &[&str], elementwise: bool) -> Option<String> {
    let out = c.out?;
    let operands: Vec<&Tensor> = operands.iter().filter_map(|n| c.tensor(n)).collect();
    // right on the board when every buffer is row-major, or (elementwise) when each operand is a
    // scalar or has the output's sizes and storage order
    let all_row_major = operands.iter().all(|t| row_major_bytes(t)) && row_major_bytes(out);
    let elementwise_ok = elementwise
        && operands
            .iter()
            .all(|t| numel(t) <= 1 || (t.sizes == out.sizes && t.dim_order == out.dim_order));
    (!all_row_major && !elementwise_ok).then_some(())?;
    let misread = operands
        .iter()
        .copied()
        .chain(std::iter::once(out))
        .find(|t| !row_major_bytes(t))
        .map(|t| t.dim_order.clone())
        .unwrap_or_default();
    Some(format!(
        "the kernel hands CMSIS-NN logical sizes over a buffer stored with dim_order {misread:?}: \
         the right values land in the wrong places (ExecuTorch 1.5.1 checks no dim_order here)"
    ))
}

/// `transpose`.
pub fn transpose(c: &Call<'_>) -> Option<String> {
    layout_unaware(c, &["input"], false)
}

/// `minimum` / `maximum`.
pub fn min_max(c: &Call<'_>) -> Option<String> {
    layout_unaware(c, &["self", "other"], true)
}

/// An elementwise kernel (its second operand, if any, `other`): elements paired by memory
/// position.
fn elementwise(c: &Call<'_>) -> Option<String> {
    let a = c.first()?;
    let b = c.tensor("other");
    let same = |t: &Tensor| {
        t.sizes != a.sizes || row_major_bytes(t) == row_major_bytes(a) && t.dim_order == a.dim_order
    };
    let mismatch = b.is_some_and(|b| b.sizes == a.sizes && !same(b))
        || c.out.is_some_and(|o| {
            o.sizes == a.sizes && !same(o) && !(row_major_bytes(o) && row_major_bytes(a))
        });
    mismatch.then_some(())?;
    Some(format!(
        "an elementwise kernel over operands stored in different orders (dim_order {:?} vs {:?}): \
         elements are paired by memory position, not by index",
        a.dim_order,
        b.filter(|b| !same(b))
            .or(c.out)
            .map(|t| t.dim_order.clone())
            .unwrap_or_default()
    ))
}

/// `quantized_add`.
pub fn add(c: &Call<'_>) -> Option<String> {
    elementwise(c)
}

/// `quantized_mul` / `quantized_div`.
pub fn mul_div(c: &Call<'_>) -> Option<String> {
    elementwise(c)
}

/// One-operand elementwise kernels (quantize, dequantize, activation tables).
pub fn unary(c: &Call<'_>) -> Option<String> {
    elementwise(c)
}

/// `quantized_linear`: a Helium program's bias lives in a kernel sum only the MVE path reads.
pub fn linear(c: &Call<'_>) -> Option<String> {
    let call = c.core_call?;
    super::core_buffers::differs_on(c.device.target, call).map(str::to_string)
}

/// `quantized_transpose_conv2d[_nhwc]`: CMSIS-NN dbf45dbf's padding defect.
fn transpose_conv(c: &Call<'_>, nhwc: bool) -> Option<String> {
    if c.device.cmsis_nn != CmsisNn::Dbf45dbf {
        return None;
    }
    let x = c.first()?;
    let channels = x.sizes.get(if nhwc { 3 } else { 1 }).copied().unwrap_or(0);
    let (stride, pad) = (c.ints("stride"), c.ints("padding"));
    let (sh, ph) = (
        stride.first().copied().unwrap_or(1),
        pad.first().copied().unwrap_or(0),
    );
    let sw = stride.get(1).copied().unwrap_or(sh);
    let reverse_path = sh <= 2 && sw <= 2 && channels > 16;
    (sh > 0 && ph % sh != 0 && !reverse_path).then_some(())?;
    Some(format!(
        "padding {ph} is not a multiple of stride {sh}: CMSIS-NN dbf45dbf's arm_transpose_conv_s8 \
         (pinned by ExecuTorch 1.5.1) computes wrong rows and never writes the last one (fixed in 4a8f5b5d)"
    ))
}

/// `quantized_transpose_conv2d` (NCHW sizes).
pub fn transpose_conv_nchw(c: &Call<'_>) -> Option<String> {
    transpose_conv(c, false)
}

/// `quantized_transpose_conv2d_nhwc`.
pub fn transpose_conv_nhwc(c: &Call<'_>) -> Option<String> {
    transpose_conv(c, true)
}
