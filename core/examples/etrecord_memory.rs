//! Peak and current resident memory while an ETRecord is read and its stages become IR graphs
//! (Linux: /proc/self/status), and each IR graph's heap by field (nodes, values, arguments,
//! shared module stacks and traces counted once): where a large model's stage memory goes.
//! `cargo run --release -p etscope-core --example etrecord_memory -- FILE`

fn rss() -> String {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let get = |k: &str| {
        s.lines()
            .find(|l| l.starts_with(k))
            .map(|l| {
                l.split_whitespace()
                    .nth(1)
                    .unwrap_or("0")
                    .parse::<u64>()
                    .unwrap_or(0)
                    / 1024
            })
            .unwrap_or(0)
    };
    format!("rss {} MB, peak {} MB", get("VmRSS:"), get("VmHWM:"))
}

fn main() {
    let path = std::env::args().nth(1).expect("an .etrecord");
    let bytes = std::fs::read(&path).expect("readable");
    println!("file read: {}", rss());
    let rec = etscope_core::formats::etrecord::ETRecord::parse(&bytes).expect("parses");
    drop(bytes);
    println!("parsed: {}", rss());
    for st in &rec.stages {
        let g = &st.graph;
        let (mut names, mut args, mut other, mut stack, mut modules, mut frames) =
            (0, 0, 0, 0, 0, 0);
        for n in &g.nodes {
            names +=
                n.name.len() + n.target.len() + n.outputs.iter().map(|o| o.len()).sum::<usize>();
            for (k, a) in &n.args {
                args += k.len() + 32;
                if let etscope_core::formats::export_json::ExportArg::Other(s) = a {
                    other += s.len();
                }
            }
            stack += n.stack_trace.as_ref().map_or(0, |s| s.len()); // as if copied per node
            modules += n
                .module_stack
                .iter()
                .map(|f| f.path.len() + f.class.len() + 48)
                .sum::<usize>();
            frames += n.module_stack.len();
        }
        println!(
            "{}: {} nodes, {} tensors; names {} KB, args {} KB (other {} KB), stack traces {} KB, module stacks {} KB ({} frames)",
            st.name, g.nodes.len(), g.tensors.len(), names / 1024, args / 1024, other / 1024, stack / 1024, modules / 1024, frames
        );
    }
    println!(
        "archives: {} KB",
        rec.archives.values().map(Vec::len).sum::<usize>() / 1024
    );
    let graphs: Vec<_> = rec
        .stages
        .iter()
        .map(|s| etscope_core::ir::from_export::graph_from_export(&s.graph, &s.name, "forward"))
        .collect();
    println!("{} graphs: {}", graphs.len(), rss());
    for g in &graphs {
        ir_breakdown(g);
    }
}

/// Heap bytes of a built IR graph by field (capacities; `String`/`Vec` headers counted in their
/// owners' sizes).
fn ir_breakdown(g: &etscope_core::ir::Graph) {
    use etscope_core::ir::ArgData;
    use std::mem::size_of;
    let kb = |b: usize| b / 1024;
    let data = |d: &ArgData| match d {
        ArgData::Str(s) => s.capacity(),
        ArgData::Ints(v) => v.capacity() * 16,
        ArgData::Floats(v) => v.capacity() * 8,
        ArgData::Bools(v) => v.capacity(),
        ArgData::Tensors(v) => v.capacity() * 8,
        _ => 0,
    };
    let (mut strings, mut stack, mut modules, mut args, mut ids, mut origins) = (0, 0, 0, 0, 0, 0);
    let mut seen = std::collections::HashSet::new();
    for n in &g.nodes {
        strings += n.name.capacity() + n.op.capacity() + n.overload.capacity();
        // shared: each distinct trace and module stack counted once
        if let Some(t) = &n.stack_trace {
            if seen.insert(t.as_ptr() as usize) {
                stack += t.len();
            }
        }
        if seen.insert(n.module_stack.as_ptr() as usize) {
            modules += n.module_stack.len()
                * size_of::<etscope_core::formats::export_json::ModuleFrame>()
                + n.module_stack
                    .iter()
                    .map(|f| f.path.capacity() + f.class.capacity())
                    .sum::<usize>();
        }
        args += n.args.capacity() * size_of::<etscope_core::ir::Arg>()
            + n.args
                .iter()
                .map(|a| a.name.as_ref().map_or(0, |s| s.capacity()) + data(&a.data))
                .sum::<usize>();
        ids += (n.inputs.capacity() + n.outputs.capacity()) * 8 + n.debug_handles.capacity() * 4;
        origins += n.came_from.capacity() * size_of::<etscope_core::ir::Origin>();
    }
    let (mut vnames, mut vshapes, mut vcons, mut vdata) = (0, 0, 0, 0);
    for v in &g.values {
        vnames += v.name.capacity();
        vshapes += v.shape.capacity() * 8
            + v.dim_order.capacity()
            + v.logical_order.as_ref().map_or(0, |o| o.capacity() * 8);
        vcons += v.consumers.capacity() * 8;
        vdata += v.data.as_ref().map_or(0, data);
    }
    println!(
        "{}: {} nodes ({} B each: {} KB), {} values ({} B each: {} KB), {} edges ({} KB)\n  node heap: names/ops {} KB, stack traces {} KB, module stacks {} KB, args {} KB, ids {} KB, origins {} KB\n  value heap: names {} KB, shapes {} KB, consumers {} KB, data {} KB",
        g.stage, g.nodes.len(), size_of::<etscope_core::ir::Node>(), kb(g.nodes.capacity() * size_of::<etscope_core::ir::Node>()),
        g.values.len(), size_of::<etscope_core::ir::ValueInfo>(), kb(g.values.capacity() * size_of::<etscope_core::ir::ValueInfo>()),
        g.edges.len(), kb(g.edges.capacity() * size_of::<etscope_core::ir::Edge>()),
        kb(strings), kb(stack), kb(modules), kb(args), kb(ids), kb(origins), kb(vnames), kb(vshapes), kb(vcons), kb(vdata)
    );
}
