//! The IR's invariants, checked after every pass ([`Graph::check`]): ids in range, one producer
//! per value, nodes in an order that defines every value before it is read, constants never
//! written, and each registered operator's arguments consistent with its schema.

use thiserror::Error;

use super::{ArgData, Graph, NodeKind, Storage};

/// An invariant a graph breaks.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum CheckError {
    #[error("node {node} ({op}) refers to value {value}, which does not exist")]
    Dangling {
        node: usize,
        op: String,
        value: usize,
    },
    #[error("node {node} has id {id}: node ids must equal their index")]
    NodeId { node: usize, id: usize },
    #[error("value {value} is written by node {first} and again by node {second}")]
    TwoProducers {
        value: usize,
        first: usize,
        second: usize,
    },
    #[error("node {node} ({op}) reads value {value} before any node defines it")]
    ReadBeforeDefined {
        node: usize,
        op: String,
        value: usize,
    },
    #[error("node {node} ({op}) writes constant value {value}")]
    WritesConstant {
        node: usize,
        op: String,
        value: usize,
    },
    #[error("node {node} ({op}) has {got} arguments; its schema takes {want}")]
    Arity {
        node: usize,
        op: String,
        got: usize,
        want: String,
    },
    #[error("node {node} ({op}): argument {arg} should be a tensor, is {kind}")]
    NotATensor {
        node: usize,
        op: String,
        arg: usize,
        kind: &'static str,
    },
    #[error("value {value}: dim_order {dim_order:?} is not a permutation of its {rank} dims")]
    DimOrder {
        value: usize,
        dim_order: Vec<u8>,
        rank: usize,
    },
}

impl Graph {
    /// Checks the graph's invariants.
    pub fn check(&self) -> Result<(), CheckError> {
        let n = self.values.len();
        for v in &self.values {
            let rank = v.shape.len();
            if !v.dim_order.is_empty() {
                let mut seen = vec![false; rank];
                let ok = v.dim_order.len() == rank
                    && v.dim_order.iter().all(|&d| {
                        usize::from(d) < rank && !std::mem::replace(&mut seen[usize::from(d)], true)
                    });
                if !ok {
                    return Err(CheckError::DimOrder {
                        value: v.id,
                        dim_order: v.dim_order.clone(),
                        rank,
                    });
                }
            }
        }
        // where each value is written: a value written by a node must be read after it (values
        // nothing writes are state, constants or inputs; a program with jumps may read what a
        // later instruction wrote in an earlier iteration)
        let has_jumps = self.nodes.iter().any(|n| n.kind == NodeKind::JumpFalse);
        let mut producer: Vec<Option<usize>> = vec![None; n];
        for (i, node) in self.nodes.iter().enumerate() {
            if node.id != i {
                return Err(CheckError::NodeId {
                    node: i,
                    id: node.id,
                });
            }
            let arg_values = node
                .args
                .iter()
                .flat_map(|a| a.value.into_iter().chain(a.data.tensors()));
            for v in node
                .inputs
                .iter()
                .chain(&node.outputs)
                .copied()
                .chain(arg_values)
            {
                if v >= n {
                    return Err(CheckError::Dangling {
                        node: i,
                        op: node.qualified_op(),
                        value: v,
                    });
                }
            }
            for &v in &node.outputs {
                if self.values[v].storage == Storage::Constant {
                    return Err(CheckError::WritesConstant {
                        node: i,
                        op: node.qualified_op(),
                        value: v,
                    });
                }
                if node.kind == NodeKind::Move {
                    continue;
                }
                match producer[v] {
                    Some(first) if !has_jumps => {
                        return Err(CheckError::TwoProducers {
                            value: v,
                            first,
                            second: i,
                        })
                    }
                    Some(_) => {}
                    None => producer[v] = Some(i),
                }
            }
        }
        for (i, node) in self.nodes.iter().enumerate() {
            // a program with jumps may read what a later instruction wrote in an earlier
            // iteration: the order is not checked there, the schema is
            for &v in node.inputs.iter().filter(|_| !has_jumps) {
                if producer[v].is_some_and(|p| p > i) {
                    return Err(CheckError::ReadBeforeDefined {
                        node: i,
                        op: node.qualified_op(),
                        value: v,
                    });
                }
            }
            self.check_schema(i)?;
        }
        Ok(())
    }

    /// A registered operator in its kernel form has its schema's arguments, then one out tensor
    /// per result (or a tensor list) and the returned value; tensor parameters get tensors.
    fn check_schema(&self, i: usize) -> Result<(), CheckError> {
        let node = &self.nodes[i];
        let Some(def) = node.def() else { return Ok(()) };
        let Some(schema) = def.parsed_schema() else {
            return Ok(());
        };
        let kernel_form = !node.overload.is_empty() && def.is_out_overload(&node.overload);
        let want = schema.args.len();
        // out variants may drop a functional overload's tensor options (`_to_copy.out`,
        // `full.out`): only the positional arguments without defaults are required
        let required = schema
            .args
            .iter()
            .filter(|a| a.default.is_none() && !a.keyword_only)
            .count();
        let got = node.args.len();
        let ok = if kernel_form {
            got > required && got <= want + schema.returns.max(1) + 1
        } else {
            got >= required.min(1) && got <= want
        };
        if !ok {
            return Err(CheckError::Arity {
                node: i,
                op: node.qualified_op(),
                got,
                want: if kernel_form {
                    format!("{required}..={want} + outs")
                } else {
                    format!("at most {want}")
                },
            });
        }
        // the first argument's type is the same in every overload
        if let (Some(spec), Some(arg)) = (schema.args.first(), node.args.first()) {
            let needs_tensor = spec.ty == crate::ops::ArgType::Tensor && !spec.optional;
            if needs_tensor && !matches!(arg.data, ArgData::Tensor(_)) {
                return Err(CheckError::NotATensor {
                    node: i,
                    op: node.qualified_op(),
                    arg: 0,
                    kind: arg.data.kind(),
                });
            }
        }
        Ok(())
    }
}
