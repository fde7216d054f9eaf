//! DecomposeHardswishPass: a quantized hardswish after a convolution or linear layer becomes a
//! multiply of the layer's output with a rescaled clamp of it. Not implemented yet: a graph
//! with a quantized `hardswish` is refused by name rather than lowered differently from
//! ExecuTorch; every other graph passes through unchanged.

use super::edit::{fail, is_op};
use super::{LowerError, LowerPass, Module, Options};

pub struct DecomposeHardswish;

impl LowerPass for DecomposeHardswish {
    fn name(&self) -> &'static str {
        "DecomposeHardswishPass"
    }

    fn run(&self, m: Module, _: &Options) -> Result<(Module, bool), LowerError> {
        if let Some(n) = m
            .graph
            .nodes
            .iter()
            .find(|n| is_op(n, "aten::hardswish") && m.qparams.contains_key(&n.name))
        {
            return Err(fail(
                self.name(),
                format!(
                    "{}: decomposing a quantized hardswish is not implemented in etscope yet",
                    n.name
                ),
            ));
        }
        Ok((m, false))
    }
}
