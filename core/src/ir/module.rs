//! A graph with what a pass pipeline carries beside it: the data of its constant tensors (by
//! value id) and the quantization parameters annotated per node (by node name, as ExecuTorch
//! keeps them in `node.meta`). Every pass of etscope's — its own graph passes and the Cortex-M
//! lowering — takes and returns a [`Module`]; [`Module::check`] is what the pipeline checks
//! after each.

use std::collections::{BTreeMap, BTreeSet};

use thiserror::Error;

use super::qparams::NodeQParams;
use super::{CheckError, Graph, ValueId};
use crate::tensor::TensorData;

/// A graph being rewritten, with its constants and quantization parameters.
#[derive(Debug, Clone)]
pub struct Module {
    pub graph: Graph,
    pub constants: BTreeMap<ValueId, TensorData>,
    pub qparams: BTreeMap<String, NodeQParams>,
    /// Nodes a caller left out of quantization on purpose (by name: `lower --keep-float`'s
    /// layers and their activations). ExecuTorch's explicit-layout validation refuses any
    /// spatial operator left in float; these it lets through, float and channels-first.
    pub kept_float: BTreeSet<String>,
}

/// An invariant a module breaks.
#[derive(Debug, Error, PartialEq)]
pub enum ModuleCheckError {
    #[error(transparent)]
    Graph(#[from] CheckError),
    #[error("constant for value {value}, which does not exist")]
    ConstantDangling { value: ValueId },
    #[error("constant for value {value} ({name}), which is a {kind}, not a tensor")]
    ConstantNotTensor {
        value: ValueId,
        name: String,
        kind: &'static str,
    },
    #[error(
        "constant for value {value} ({name}) has sizes {data:?}; the value has {value_shape:?}"
    )]
    ConstantShape {
        value: ValueId,
        name: String,
        data: Vec<usize>,
        value_shape: Vec<i64>,
    },
    #[error("constant for value {value} ({name}) is {data}; the value is {value_dtype}")]
    ConstantDtype {
        value: ValueId,
        name: String,
        data: String,
        value_dtype: String,
    },
    #[error(
        "constant for value {value} ({name}) holds {bytes} bytes for sizes {shape:?} of {dtype}"
    )]
    ConstantBytes {
        value: ValueId,
        name: String,
        bytes: usize,
        shape: Vec<usize>,
        dtype: String,
    },
    #[error("quantization parameters of node {node:?} ({side} {index}): {detail}")]
    QParams {
        node: String,
        side: &'static str,
        index: usize,
        detail: String,
    },
}

impl Module {
    /// A graph with no constants or quantization parameters beside it (a program's graph: its
    /// constants are the program's).
    pub fn of_graph(graph: Graph) -> Module {
        Module {
            graph,
            constants: BTreeMap::new(),
            qparams: BTreeMap::new(),
            kept_float: BTreeSet::new(),
        }
    }

    /// The data of constant `v`.
    pub fn constant(&self, v: ValueId) -> Option<&TensorData> {
        self.constants.get(&v)
    }

    /// Drops the quantization parameters of nodes no longer in the graph (a removed node's
    /// `node.meta` goes with it in ExecuTorch); the pass driver does this after every pass.
    pub fn retain_live_parameters(&mut self) {
        if self.qparams.is_empty() {
            return;
        }
        let live: BTreeSet<&str> = self.graph.nodes.iter().map(|n| n.name.as_str()).collect();
        self.qparams.retain(|name, _| live.contains(name.as_str()));
    }

    /// The graph's invariants ([`Graph::check`]), then: every constant is the data of a tensor
    /// value of the graph, of its dtype and sizes, with the bytes those take; every node with
    /// quantization parameters exists, and its parameters have scales that are finite and
    /// positive, a zero point per scale (or one), and `qmin <= qmax`.
    pub fn check(&self) -> Result<(), ModuleCheckError> {
        self.graph.check()?;
        for (&value, data) in &self.constants {
            let v = self
                .graph
                .values
                .get(value)
                .ok_or(ModuleCheckError::ConstantDangling { value })?;
            let name = v.label();
            if v.kind != "Tensor" {
                return Err(ModuleCheckError::ConstantNotTensor {
                    value,
                    name,
                    kind: v.kind,
                });
            }
            let same_sizes = v.shape.len() == data.shape.len()
                && v.shape
                    .iter()
                    .zip(&data.shape)
                    .all(|(&a, &b)| usize::try_from(a).is_ok_and(|a| a == b));
            if !same_sizes {
                return Err(ModuleCheckError::ConstantShape {
                    value,
                    name,
                    data: data.shape.clone(),
                    value_shape: v.shape.clone(),
                });
            }
            if v.dtype.is_some_and(|d| d != data.dtype) {
                return Err(ModuleCheckError::ConstantDtype {
                    value,
                    name,
                    data: format!("{:?}", data.dtype),
                    value_dtype: format!("{:?}", v.dtype),
                });
            }
            let expected = data
                .dtype
                .element_size()
                .and_then(|e| crate::kernels::element_count(&data.shape)?.checked_mul(e));
            if expected != Some(data.bytes.len()) {
                return Err(ModuleCheckError::ConstantBytes {
                    value,
                    name,
                    bytes: data.bytes.len(),
                    shape: data.shape.clone(),
                    dtype: format!("{:?}", data.dtype),
                });
            }
        }
        if !self.qparams.is_empty() {
            let live: BTreeSet<&str> = self.graph.nodes.iter().map(|n| n.name.as_str()).collect();
            for (node, q) in &self.qparams {
                // parameters of a node no longer in the graph are dropped by the driver
                // (`retain_live_parameters`), as node.meta goes with its node in ExecuTorch
                if !live.contains(node.as_str()) {
                    continue;
                }
                // indices are not checked against the node's arguments: ExecuTorch's passes copy
                // a layer's parameters onto the nodes they make from it (DecomposeHardswishPass)
                let sides = [("input", &q.inputs), ("output", &q.outputs)];
                for (side, args) in sides {
                    for (&index, a) in args {
                        let bad = |detail: String| ModuleCheckError::QParams {
                            node: node.clone(),
                            side,
                            index,
                            detail,
                        };
                        if a.scales.is_empty()
                            || a.scales.iter().any(|s| !s.is_finite() || *s <= 0.0)
                        {
                            return Err(bad(format!(
                                "scales {:?} must be finite and positive",
                                a.scales
                            )));
                        }
                        let zps = a.zero_points.len();
                        if zps != 1 && zps != a.scales.len() {
                            return Err(bad(format!(
                                "{zps} zero points for {} scales",
                                a.scales.len()
                            )));
                        }
                        if a.qmin > a.qmax {
                            return Err(bad(format!("qmin {} > qmax {}", a.qmin, a.qmax)));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}
