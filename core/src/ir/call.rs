//! One operator call read through its node: an argument by the name the registry's schema
//! gives it (`call.tensor("weight")`, `call.ints("stride")`), the tensors it reads and writes
//! with their shapes, dtypes, storage and constants, so a reader of calls (the cost model)
//! never counts argument positions or opens the raw plan.

use super::{ArgData, Graph, Node, ValueInfo};

/// A node's call in its graph.
#[derive(Debug, Clone, Copy)]
pub struct CallView<'g> {
    pub graph: &'g Graph,
    pub node: &'g Node,
}

impl<'g> CallView<'g> {
    pub fn new(graph: &'g Graph, node: &'g Node) -> CallView<'g> {
        CallView { graph, node }
    }

    /// The operator without overload (`cortex_m::quantized_linear`).
    pub fn op(&self) -> &'g str {
        &self.node.op
    }

    /// The position of argument `name` in the operator's schema.
    pub fn position(&self, name: &str) -> Option<usize> {
        crate::ops::arg_of(&self.node.op, name)
    }

    /// Argument `k`'s value.
    pub fn arg_at(&self, k: usize) -> Option<&'g ArgData> {
        self.node.args.get(k).map(|a| &a.data)
    }

    /// Argument `k` as a tensor.
    pub fn tensor_at(&self, k: usize) -> Option<&'g ValueInfo> {
        match self.arg_at(k)? {
            ArgData::Tensor(v) => self.graph.values.get(*v).filter(|v| v.is_tensor()),
            _ => None,
        }
    }

    /// Argument `name` as a tensor.
    pub fn tensor(&self, name: &str) -> Option<&'g ValueInfo> {
        self.tensor_at(self.position(name)?)
    }

    /// Argument `name` as an int.
    pub fn int(&self, name: &str) -> Option<i64> {
        match self.arg_at(self.position(name)?)? {
            ArgData::Int(x) => Some(*x),
            _ => None,
        }
    }

    /// Argument `k` as an int list (empty when it is none; unknown items left out).
    pub fn ints_at(&self, k: usize) -> Vec<i64> {
        match self.arg_at(k) {
            Some(ArgData::Ints(items)) => items.iter().flatten().copied().collect(),
            _ => Vec::new(),
        }
    }

    /// The out tensor: the last argument (the out-variant convention).
    pub fn out(&self) -> Option<&'g ValueInfo> {
        self.tensor_at(self.node.args.len().checked_sub(1)?)
    }

    /// The tensors among the arguments, tensor lists flattened, in argument order (the out
    /// tensor last).
    pub fn tensors(&self) -> Vec<&'g ValueInfo> {
        let mut out = Vec::new();
        for a in &self.node.args {
            match &a.data {
                ArgData::Tensor(v) => out.extend(self.graph.values.get(*v)),
                ArgData::Tensors(vs) => out.extend(
                    vs.iter()
                        .filter_map(|&v| self.graph.values.get(v))
                        .filter(|v| v.is_tensor()),
                ),
                _ => {}
            }
        }
        out
    }
}

impl ValueInfo {
    /// Elements of a tensor (`None` when a size is negative or the product overflows).
    pub fn elements(&self) -> Option<usize> {
        elements_of(&self.shape)
    }
}

/// Elements of a tensor of `sizes` (`None` when a size is negative, symbolic, or the product
/// overflows).
pub fn elements_of(sizes: &[i64]) -> Option<usize> {
    sizes
        .iter()
        .try_fold(1usize, |n, &s| n.checked_mul(usize::try_from(s).ok()?))
}

impl CallView<'_> {
    /// Bytes of tensor argument `name`.
    fn tensor_bytes(&self, name: &str) -> Option<usize> {
        let t = self.tensor(name)?;
        t.elements()?
            .checked_mul(t.dtype.and_then(|d| d.element_size()).unwrap_or(1))
    }

    /// The facts of the call that decide whether a core runs it
    /// ([`crate::kernels::cmsis::core_buffers::fails_on`]), each argument read by its schema
    /// name; `None` for the calls no core refuses.
    pub fn core_call(&self) -> Option<crate::kernels::cmsis::core_buffers::CoreCall> {
        use crate::kernels::cmsis::core_buffers::CoreCall;
        // sizes are NHWC in the explicit-layout `_nhwc` ops, NCHW (stored channels-last) else
        let nhwc = self.op().ends_with("_nhwc");
        let dim = |t: &ValueInfo, nchw: usize, nhwc_i: usize| {
            t.shape
                .get(if nhwc { nhwc_i } else { nchw })
                .and_then(|&s| usize::try_from(s).ok())
        };
        match self.op() {
            "cortex_m::quantized_linear" => Some(CoreCall::Linear {
                kernel_sum: self.tensor("kernel_sum").is_some(),
            }),
            "cortex_m::quantized_batch_matmul" => Some(CoreCall::BatchMatmul {
                scratch_bytes: self.tensor_bytes("scratch")?,
            }),
            "cortex_m::quantized_depthwise_conv2d"
            | "cortex_m::quantized_depthwise_conv2d_nhwc" => {
                let (x, out) = (self.tensor("input")?, self.out()?);
                let dilation = self.ints_at(self.position("dilation")?);
                let d = |i: usize| {
                    dilation
                        .get(i)
                        .and_then(|&v| usize::try_from(v).ok())
                        .unwrap_or(1)
                };
                Some(CoreCall::Depthwise {
                    scratch_bytes: self.tensor_bytes("scratch")?,
                    batch: dim(x, 0, 0)?,
                    in_channels: dim(x, 1, 3)?,
                    out_channels: dim(out, 1, 3)?,
                    depth_multiplier: usize::try_from(self.int("depth_multiplier")?).ok()?,
                    dilation: (d(0), d(1)),
                })
            }
            "cortex_m::quantized_avg_pool2d" | "cortex_m::quantized_avg_pool2d_nhwc" => {
                Some(CoreCall::AvgPool {
                    scratch_bytes: self.tensor_bytes("scratch")?,
                    channels: dim(self.tensor("input")?, 1, 3)?,
                })
            }
            _ => None,
        }
    }
}
