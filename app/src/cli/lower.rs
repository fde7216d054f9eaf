//! `etscope lower FILE.etrecord`: etscope's own Cortex-M lowering of the ETRecord's `edge`
//! stage, pass by pass (ExecuTorch 1.5.1's pass list for the flow, computed for the target):
//! a table of the passes, or every pass's graph as JSON (`{"passes": [{"name", "graph"}]}`,
//! each graph in `graph --json`'s schema).

use std::path::Path;

use anyhow::{anyhow, Result};
use etscope_core::lower::compare::{changes, differences, Side};
use etscope_core::lower::{self, Cpu, Flow, Module, Options};

use crate::load;
use crate::table::Table;

/// The lowering's options from the command line's words.
pub fn options(flow: &str, target: &str) -> Result<Options> {
    let flow = Flow::parse(flow)
        .ok_or_else(|| anyhow!("unknown flow {flow:?}: use default or explicit"))?;
    let cpu = Cpu::parse(target).ok_or_else(|| {
        let names: Vec<&str> = Cpu::ALL.iter().map(|c| c.name()).collect();
        anyhow!("unknown target {target:?}: use one of {}", names.join(", "))
    })?;
    Ok(Options { flow, cpu })
}

#[derive(serde::Serialize)]
struct PassJson<'a> {
    name: &'a str,
    changed: bool,
    graph: &'a etscope_core::ir::Graph,
}

#[derive(serde::Serialize)]
struct LowerJson<'a> {
    flow: &'a str,
    target: &'a str,
    passes: Vec<PassJson<'a>>,
}

pub fn run(
    path: &Path,
    options: Options,
    out: Option<&Path>,
    method: Option<&str>,
    as_json: bool,
) -> Result<()> {
    let etr = load::etrecord(path)?;
    let module =
        Module::from_etrecord(&etr, method).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let edge = module.graph.clone();
    let stages = lower::lower(module, &options).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    if let Some(out) = out {
        let last = &stages.last().ok_or_else(|| anyhow!("no passes"))?.module;
        let bytes = etscope_core::lower::emit::program(last, &options)
            .map_err(|e| anyhow!("{}: writing the program: {e}", path.display()))?;
        std::fs::write(out, bytes).map_err(|e| anyhow!("{}: {e}", out.display()))?;
        if !as_json {
            println!("wrote {}", out.display());
        }
    }
    if as_json {
        return super::print_json(&LowerJson {
            flow: options.flow.name(),
            target: options.cpu.name(),
            passes: stages
                .iter()
                .map(|s| PassJson {
                    name: s.pass,
                    changed: s.changed,
                    graph: &s.module.graph,
                })
                .collect(),
        });
    }
    println!(
        "{}: the edge graph ({} ops) lowered for {} ({:?} CMSIS-NN path), {} flow",
        path.display(),
        edge.op_count(),
        options.cpu.name(),
        options.cpu.isa(),
        options.flow.name()
    );
    let mut t = Table::new(&[">#", "pass", ">ops before", ">ops after", "what changed"]);
    let mut before = &edge;
    for (k, s) in stages.iter().enumerate() {
        t.row(vec![
            (k + 1).to_string(),
            s.pass.to_string(),
            s.ops_before.to_string(),
            s.ops_after.to_string(),
            changes(before, &s.module.graph).summary(),
        ]);
        before = &s.module.graph;
    }
    print!("{}", t.render());
    // the ETRecord's own result of these passes, when it has one
    if let (Some(theirs), Some(last)) = (
        etr.stage("edge_after_transform"),
        stages.last().map(|s| &s.module),
    ) {
        let graph = etscope_core::ir::from_export::graph_from_export(
            &theirs.graph,
            "edge_after_transform",
            "forward",
        );
        let weights = etr.stage_weights(theirs).unwrap_or_default();
        let constant = |v: usize| {
            let name = &graph.values.get(v)?.name;
            let key = theirs.graph.input_targets.get(name).unwrap_or(name);
            weights.get(key).cloned()
        };
        let ours = |v: usize| last.constants.get(&v).cloned();
        let diffs = differences(
            &Side {
                graph: &last.graph,
                constant: &ours,
            },
            &Side {
                graph: &graph,
                constant: &constant,
            },
        );
        if diffs.is_empty() {
            println!(
                "equals the ETRecord's edge_after_transform (ExecuTorch's own lowering): the same {} calls, arguments and constants",
                last.graph.op_count()
            );
        } else {
            println!(
                "differs from the ETRecord's edge_after_transform in {} places (was it lowered for another target or flow?):",
                diffs.len()
            );
            for d in diffs.iter().take(10) {
                println!("  {d}");
            }
        }
    }
    Ok(())
}
