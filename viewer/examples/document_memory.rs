//! Resident memory while a document opens as the window opens it: a program, then its ETRecord
//! (Linux /proc/self/status). `cargo run --release -p etscope-viewer --example document_memory --
//! PROGRAM.pte [FILE.etrecord]`

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn rss() -> String {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let get = |k: &str| {
        s.lines()
            .find(|l| l.starts_with(k))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
            / 1024
    };
    format!("rss {} MB, peak {} MB", get("VmRSS:"), get("VmHWM:"))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let pte = std::fs::read(&args[0]).expect("program");
    println!("start: {}", rss());
    let mut doc =
        etscope_viewer::document::Document::from_program_bytes("p.pte", pte).expect("opens");
    println!("program open: {}", rss());
    if let Some(rec) = args.get(1) {
        let bytes = std::fs::read(rec).expect("etrecord");
        let parsed = etscope_core::formats::etrecord::ETRecord::parse(&bytes).expect("parses");
        println!("etrecord parsed: {}", rss());
        let mut graphs = Vec::new();
        for st in &parsed.stages {
            graphs.push(etscope_core::ir::from_export::graph_from_export(
                &st.graph, &st.name, "forward",
            ));
            println!(
                "  graph {}: {} nodes, {} values: {}",
                st.name,
                graphs.last().map_or(0, |g| g.nodes.len()),
                graphs.last().map_or(0, |g| g.values.len()),
                rss()
            );
        }
        let mut views = Vec::new();
        for g in graphs {
            views.push(etscope_viewer::document::StageView::new("s", g));
            println!("  laid out: {}", rss());
        }
        drop(views);
        drop(parsed);
        doc.attach("r.etrecord", &bytes).expect("attaches");
        println!("etrecord attached ({} stages): {}", doc.stages.len(), rss());
    }
}
