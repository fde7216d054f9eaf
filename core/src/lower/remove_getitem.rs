//! RemoveGetItemPass: a `max_pool2d_with_indices` whose indices nobody reads becomes a
//! `max_pool2d` with one output (the serialized graph has no `getitem` nodes: the indices are
//! the node's second output).

use super::edit::{fail, is_op};
use super::{LowerError, Module, Options, Pass};

pub struct RemoveGetItem;

impl Pass<Options> for RemoveGetItem {
    fn name(&self) -> &'static str {
        "RemoveGetItemPass"
    }

    fn run(&self, mut m: Module, _: &Options) -> Result<(Module, bool), LowerError> {
        let mut changed = false;
        for i in 0..m.graph.nodes.len() {
            if !is_op(&m.graph.nodes[i], "aten::max_pool2d_with_indices") {
                continue;
            }
            let outputs = m.graph.nodes[i].outputs.clone();
            if let Some(&indices) = outputs.get(1) {
                let used = m.graph.outputs.contains(&indices)
                    || !m.graph.values[indices].consumers.is_empty();
                if used {
                    return Err(fail(
                        self.name(),
                        format!(
                            "{}: the indices of max_pool2d_with_indices are read; only its values can lower",
                            m.graph.nodes[i].name
                        ),
                    ));
                }
            }
            let node = &mut m.graph.nodes[i];
            node.set_op("aten::max_pool2d", "default");
            node.outputs.truncate(1);
            changed = true;
        }
        if changed {
            m.graph.relink();
        }
        Ok((m, changed))
    }
}
