//! `etscope graph FILE`: the IR graph of a program or an ETRecord stage (JSON schema in
//! `docs/cli-json.md`).

use std::path::Path;

use anyhow::{anyhow, Result};
use etscope_core::formats::etrecord::stage_short_name;
use etscope_core::formats::kind::FileKind;
use etscope_core::ir::{
    from_export::graph_from_export, from_pte::graph_from_plan, Graph, NodeKind,
};

use crate::load;
use crate::table::Table;

/// Builds the graph of `file` (a .pte/.bpte plan or an ETRecord stage).
pub fn load_graph(path: &Path, stage: Option<&str>, method: Option<&str>) -> Result<Graph> {
    let data = load::bytes(path)?;
    match load::kind_of(path, &data)? {
        FileKind::Etrecord => {
            let rec = load::etrecord(path)?;
            let st = match stage {
                Some(s) => rec.stage(s).ok_or_else(|| {
                    let names: Vec<String> = rec
                        .stages
                        .iter()
                        .map(|s| format!("{} ({})", stage_short_name(&s.name), s.name))
                        .collect();
                    anyhow!(
                        "{}: no stage {s:?}; stages: {}",
                        path.display(),
                        names.join(", ")
                    )
                })?,
                None => rec.stages.first().ok_or_else(|| {
                    anyhow!("{}: ETRecord holds no program stage", path.display())
                })?,
            };
            let method = st.name.split('/').nth(1).unwrap_or("forward");
            Ok(graph_from_export(
                &st.graph,
                &stage_short_name(&st.name),
                method,
            ))
        }
        _ => {
            let program = load::program(path)?;
            let (index, _) = super::pick_plan(&program, method, path)?;
            graph_from_plan(&program, index)
                .ok_or_else(|| anyhow!("{}: no plan {index}", path.display()))
        }
    }
}

pub fn run(path: &Path, stage: Option<&str>, method: Option<&str>, as_json: bool) -> Result<()> {
    let graph = load_graph(path, stage, method)?;
    if as_json {
        return super::print_json(&graph);
    }
    println!(
        "{}: stage {}, method {}: {} nodes ({} ops), {} edges, {} values",
        path.display(),
        graph.stage,
        graph.method,
        graph.nodes.len(),
        graph.op_count(),
        graph.edges.len(),
        graph.values.len()
    );
    let mut t = Table::new(&[">node", ">instr", "op", "handles", "inputs", "outputs"]);
    for n in graph
        .nodes
        .iter()
        .filter(|n| !matches!(n.kind, NodeKind::Input | NodeKind::Output))
    {
        let shapes = |ids: &[usize]| {
            ids.iter()
                .map(|&v| {
                    let val = &graph.values[v];
                    format!(
                        "{}{:?}",
                        val.dtype.map(|d| d.short_name()).unwrap_or_default(),
                        val.shape
                    )
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        t.row(vec![
            n.id.to_string(),
            n.instruction_id.map(|i| i.to_string()).unwrap_or_default(),
            n.qualified_op(),
            n.debug_handles
                .iter()
                .map(|h| h.to_string())
                .collect::<Vec<_>>()
                .join(","),
            shapes(&n.inputs),
            shapes(&n.outputs),
        ]);
    }
    print!("{}", t.render());
    Ok(())
}
