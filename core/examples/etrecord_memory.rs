//! Peak and current resident memory while an ETRecord is read and its stages become IR graphs
//! (Linux: /proc/self/status). `cargo run --release -p etscope-core --example etrecord_memory -- FILE`

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
            stack += n.stack_trace.as_ref().map_or(0, |s| s.len());
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
}
