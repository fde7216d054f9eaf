//! Search over a stage's nodes: by op name, tensor/value index (`v12`, `%name`), instruction id
//! (`#3`, `i3`) and debug handle (`h4`, `handle 4`). Pure; the UI lists what this returns.

use etscope_core::ir::{Graph, NodeId, NodeKind};

/// Why a node matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub node: NodeId,
    pub reason: String,
}

fn number_after(q: &str, prefixes: &[&str]) -> Option<usize> {
    prefixes
        .iter()
        .find_map(|p| q.strip_prefix(p))
        .and_then(|rest| rest.trim().parse().ok())
}

/// A hit as the results list shows it: the node, its instruction, why it matched and its module
/// (`relu #5 — aten::relu.out · blocks.1.act`), so hits of one operator are told apart.
pub fn hit_label(graph: &Graph, hit: &Hit) -> String {
    let Some(n) = graph.nodes.get(hit.node) else {
        return hit.reason.clone();
    };
    let mut s = n.name.clone();
    if let Some(i) = n.instruction_id {
        s.push_str(&format!(" #{i}"));
    }
    s.push_str(" — ");
    s.push_str(&hit.reason);
    if let Some(m) = n.innermost_module() {
        s.push_str(" · ");
        s.push_str(m);
    }
    s
}

/// Nodes matching `query`, best first (exact id matches before name matches), at most `limit`.
pub fn search(graph: &Graph, query: &str, limit: usize) -> Vec<Hit> {
    let q = query.trim().to_ascii_lowercase();
    if q.is_empty() {
        return Vec::new();
    }
    let mut hits = Vec::new();
    let push = |hits: &mut Vec<Hit>, node: NodeId, reason: String| {
        if !hits.iter().any(|h: &Hit| h.node == node) {
            hits.push(Hit { node, reason });
        }
    };
    // a node's label as the canvas draws it: `relu #5`, `quantized_conv2d #3`
    if let Some((name, id)) = q.rsplit_once(" #") {
        if let Ok(i) = id.trim().parse::<usize>() {
            if let Some(node) = graph.node_for_instruction(i) {
                if node.short_op().to_ascii_lowercase().contains(name.trim()) {
                    push(&mut hits, node.id, format!("instruction {i}"));
                }
            }
        }
    }
    if let Some(i) =
        number_after(&q, &["#", "instruction ", "instr ", "i"]).or_else(|| q.parse().ok())
    {
        if let Some(n) = graph.node_for_instruction(i) {
            push(&mut hits, n.id, format!("instruction {i}"));
        }
    }
    if let Some(h) = number_after(&q, &["handle ", "h", "debug_handle "]).or_else(|| q.parse().ok())
    {
        for n in graph.nodes_with_handle(h as u32) {
            push(&mut hits, n.id, format!("debug handle {h}"));
        }
    }
    if let Some(v) = number_after(&q, &["v", "value ", "%v"]).or_else(|| q.parse().ok()) {
        if let Some(val) = graph.values.get(v) {
            if let Some(p) = val.producer.or_else(|| graph.producer_through_aliases(v)) {
                push(&mut hits, p, format!("writes value {v}"));
            }
            for &c in &val.consumers {
                push(&mut hits, c, format!("reads value {v}"));
            }
        }
    }
    let name_q = q.trim_start_matches('%');
    for v in &graph.values {
        if !v.name.is_empty() && v.name.to_ascii_lowercase() == name_q {
            if let Some(p) = v.producer {
                push(&mut hits, p, format!("writes %{}", v.name));
            }
        }
    }
    for n in &graph.nodes {
        if hits.len() >= limit {
            break;
        }
        if matches!(n.kind, NodeKind::Input | NodeKind::Output) && !n.name.contains(&q) {
            continue;
        }
        let op = n.qualified_op().to_ascii_lowercase();
        if op.contains(&q) || n.name.to_ascii_lowercase().contains(&q) {
            push(&mut hits, n.id, n.qualified_op());
        }
    }
    hits.truncate(limit);
    hits
}
