//! The CMSIS-NN code a program links: the CMSIS-NN functions its `cortex_m::` kernels call
//! (ExecuTorch 1.5.1's `backends/cortex_m/ops/op_*.cpp`), closed over what those call, each
//! counted once, at the sizes `scripts/code_size/cmsis_nn.py` measured (`cmsis_nn_code.json`:
//! CMSIS-NN dbf45dbf, the commit ExecuTorch 1.5.1 pins, compiled -O3 per CMSIS-NN path with the
//! Arm GNU toolchain).

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use crate::cortex_m::{Core, Isa};

#[derive(Deserialize)]
struct Table {
    paths: BTreeMap<String, PathTable>,
}

#[derive(Deserialize)]
struct PathTable {
    functions: BTreeMap<String, Function>,
}

#[derive(Deserialize)]
struct Function {
    size: u64,
    calls: Vec<String>,
}

/// The CMSIS-NN function a `cortex_m::` operator calls (ExecuTorch 1.5.1's
/// `backends/cortex_m/ops/op_*.cpp`, as `../shared/research/cmsis-device-arithmetic.md` lists
/// them); `None` for an operator that calls none (quantize, dequantize, the activation table).
pub fn entry(op: &str) -> Option<Option<&'static str>> {
    let base = op
        .strip_prefix("cortex_m::")?
        .split('.')
        .next()?
        .trim_end_matches("_nhwc");
    Some(match base {
        "quantized_add" => Some("arm_elementwise_add_s8"),
        "quantized_mul" => Some("arm_elementwise_mul_s8"),
        "quantized_linear" => Some("arm_fully_connected_s8"),
        "quantized_conv2d" => Some("arm_convolve_wrapper_s8"),
        "quantized_depthwise_conv2d" => Some("arm_depthwise_conv_wrapper_s8"),
        "quantized_transpose_conv2d" => Some("arm_transpose_conv_wrapper_s8"),
        "quantized_avg_pool2d" => Some("arm_avgpool_s8"),
        "quantized_max_pool2d" => Some("arm_max_pool_s8"),
        "quantized_batch_matmul" => Some("arm_batch_matmul_s8"),
        "softmax" => Some("arm_softmax_s8"),
        "transpose" => Some("arm_transpose_s8"),
        "pad" => Some("arm_pad_s8"),
        "minimum" => Some("arm_minimum_s8"),
        "maximum" => Some("arm_maximum_s8"),
        "quantize_per_tensor" | "dequantize_per_tensor" | "quantized_activation" => None,
        _ => return None,
    })
}

/// What a program's CMSIS-NN code comes to on `core`.
#[derive(Debug, Clone, PartialEq)]
pub struct CmsisNnCode {
    /// Every function linked, with its size.
    pub functions: BTreeMap<String, u64>,
    pub bytes: u64,
    /// `cortex_m::` operators of the program etscope does not know the CMSIS-NN calls of
    /// (then `bytes` is a lower bound).
    pub unknown_ops: Vec<String>,
}

/// The CMSIS-NN code of a program whose operators are `ops` (qualified names), on `core`'s
/// CMSIS-NN path.
pub fn cmsis_nn(ops: &[String], core: Core) -> CmsisNnCode {
    let table: Option<Table> = serde_json::from_str(include_str!("cmsis_nn_code.json")).ok();
    let key = match core.isa() {
        Isa::Mve => "mve",
        Isa::Dsp => "dsp",
        Isa::Plain => "plain",
    };
    let functions = table.as_ref().and_then(|t| t.paths.get(key));
    let mut unknown_ops = Vec::new();
    let mut todo: Vec<String> = Vec::new();
    for op in ops.iter().filter(|o| o.starts_with("cortex_m::")) {
        match entry(op) {
            Some(Some(f)) => todo.push(f.to_string()),
            Some(None) => {}
            None => unknown_ops.push(op.clone()),
        }
    }
    let mut linked: BTreeMap<String, u64> = BTreeMap::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    while let Some(f) = todo.pop() {
        if !seen.insert(f.clone()) {
            continue;
        }
        // a call to the C library or a compiler helper is not CMSIS-NN's
        let Some(def) = functions.and_then(|t| t.functions.get(&f)) else {
            continue;
        };
        linked.insert(f.clone(), def.size);
        todo.extend(def.calls.iter().cloned());
    }
    if functions.is_none() {
        unknown_ops.push(format!("(no measured table for the {key} path)"));
    }
    unknown_ops.sort();
    unknown_ops.dedup();
    CmsisNnCode {
        bytes: linked.values().fold(0u64, |a, &b| a.saturating_add(b)),
        functions: linked,
        unknown_ops,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_convolution_links_the_wrapper_and_every_path_it_may_take_once() {
        let ops = vec![
            "cortex_m::quantized_conv2d.out".to_string(),
            "cortex_m::quantized_conv2d.out".to_string(),
            "cortex_m::quantize_per_tensor.out".to_string(),
        ];
        let mve = cmsis_nn(&ops, Core::M55);
        assert!(mve.unknown_ops.is_empty(), "{:?}", mve.unknown_ops);
        for f in [
            "arm_convolve_wrapper_s8",
            "arm_convolve_s8",
            "arm_convolve_1x1_s8_fast",
            "arm_nn_mat_mult_nt_t_s8",
        ] {
            assert!(mve.functions.contains_key(f), "{f}: {:?}", mve.functions);
        }
        assert_eq!(mve.bytes, mve.functions.values().sum::<u64>());
        // another path, other code
        let plain = cmsis_nn(&ops, Core::M0Plus);
        assert!(plain.bytes > 0 && plain.bytes != mve.bytes);
        // an operator whose calls are not known makes the figure a lower bound, named
        let odd = cmsis_nn(&["cortex_m::quantized_lstm.out".to_string()], Core::M55);
        assert_eq!(odd.unknown_ops, ["cortex_m::quantized_lstm.out"]);
    }
}
