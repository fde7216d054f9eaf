//! `etscope graph FILE`: the IR graph of a program or an ETRecord stage (JSON schema in
//! `docs/cli-json.md`).

use std::path::Path;

use anyhow::{anyhow, Result};
use etscope_core::formats::etrecord::stage_short_name;
use etscope_core::formats::kind::FileKind;
use etscope_core::ir::{
    from_export::graph_from_export, from_pte::graph_from_plan, Graph, NodeKind,
};
use etscope_viewer::document::{Document, StageView};
use etscope_viewer::layout::Slot;
use serde_json::json;

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
            let index = super::pick_plan(&program, method, path)?;
            graph_from_plan(&program, index)
                .ok_or_else(|| anyhow!("{}: no plan {index}", path.display()))
        }
    }
}

/// The stage the window draws for `path`: a program with the module paths of the ETRecord
/// beside it (when it fits), or an ETRecord's stage.
fn drawn_stage(path: &Path, stage: Option<&str>, method: Option<&str>) -> Result<StageView> {
    let record = crate::siblings::etrecord_of(path);
    let is_program = crate::siblings::is_program(path);
    if is_program && method.is_none() && record.is_file() {
        let name = path.display().to_string();
        let mut doc = Document::from_program_bytes(&name, load::bytes(path)?)
            .map_err(|e| anyhow!("{}: {e}", path.display()))?;
        if let Err(e) = doc.attach(&record.display().to_string(), &load::bytes(&record)?) {
            load::warn_skipped(&record, &anyhow!("{e}"));
        }
        if let Some(view) = doc.pte_stage.and_then(|i| doc.stages.get(i)) {
            return Ok(view.clone());
        }
    }
    let graph = load_graph(path, stage, method)?;
    let name = graph.stage.clone();
    Ok(StageView::new(&name, graph))
}

/// The drawn geometry as `graph --layout --json` writes it (docs/cli-json.md): world
/// coordinates, x and y the top-left corner, every module unfolded.
fn layout_json(view: &StageView) -> serde_json::Value {
    let l = &view.layout;
    let nodes: Vec<serde_json::Value> = l
        .slots
        .iter()
        .zip(&l.rects)
        .filter_map(|(s, r)| match s {
            Slot::Node(n) => Some(json!({"id": n, "x": r[0], "y": r[1], "w": r[2], "h": r[3]})),
            Slot::Module(_) => None,
        })
        .collect();
    let edges: Vec<serde_json::Value> = l
        .edges
        .iter()
        .map(
            |e| json!({"from": e.from_node, "to": e.to_node, "value": e.value, "points": e.points}),
        )
        .collect();
    let modules: Vec<serde_json::Value> = l
        .frames
        .iter()
        .map(|f| {
            let r = f.rect;
            json!({"path": view.modules[f.module].path, "x": r[0], "y": r[1], "w": r[2], "h": r[3]})
        })
        .collect();
    json!({"nodes": nodes, "edges": edges, "modules": modules})
}

pub fn run(
    path: &Path,
    stage: Option<&str>,
    method: Option<&str>,
    as_json: bool,
    with_layout: bool,
) -> Result<()> {
    if with_layout {
        let view = drawn_stage(path, stage, method)?;
        let mut out = serde_json::to_value(&view.graph)?;
        if let Some(o) = out.as_object_mut() {
            o.insert("layout".into(), layout_json(&view));
        }
        if as_json {
            return super::print_json(&out);
        }
        let b = view.layout.bounds;
        println!(
            "{}: {} boxes, {} edges, {} module boxes, {:.0} × {:.0}",
            path.display(),
            view.layout.slots.len(),
            view.layout.edges.len(),
            view.layout.frames.len(),
            b[2] - b[0],
            b[3] - b[1]
        );
        return Ok(());
    }
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

/// `etscope graph`'s arguments.
#[derive(Debug, clap::Args)]
pub struct GraphArgs {
    pub file: std::path::PathBuf,
    /// ETRecord stage (`exported`, `edge`, `edge_after_transform`, or the entry name); the
    /// first stage when omitted. Ignored for .pte/.bpte.
    #[arg(long)]
    pub stage: Option<String>,
    /// Execution plan (method) of a .pte; the first when omitted.
    #[arg(long)]
    pub method: Option<String>,
    #[arg(long)]
    pub json: bool,
    /// The geometry the window draws (every module unfolded): with --json, a "layout"
    /// object of node boxes, edge polylines and module boxes (docs/cli-json.md).
    #[arg(long)]
    pub layout: bool,
}

/// Runs `etscope graph` with its arguments.
pub fn main(args: GraphArgs) -> Result<()> {
    let GraphArgs {
        file,
        stage,
        method,
        json,
        layout,
    } = args;
    run(&file, stage.as_deref(), method.as_deref(), json, layout)
}
