//! Graph canvas benchmark (release, headless): time from file bytes to the first drawn frame of
//! `stress_large/model_fp32.pte`, and median CPU time per frame (egui UI pass + tessellation)
//! while panning at full view and at 1:1 zoom — next to egui_graphs drawing the same graph with
//! the same positions, measured in the same run; and the same panning with the profile heat
//! overlay drawn (`etdump_profile_1run.etdp`) and with a diff attached (the Diff tab's two
//! canvases colored by SNR, the program against itself on `input.npy`).
//!
//! `cargo bench -p etscope-viewer --bench graph_frame` (needs `../shared/reference`).

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use egui::{Context, Pos2, RawInput, Rect, Vec2};
use etscope_viewer::document::Document;
use etscope_viewer::graph_view::GraphView;
use etscope_viewer::neighborhood::{Fixed, FixedState};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SCREEN: Vec2 = Vec2::new(1100.0, 850.0);

fn input() -> RawInput {
    RawInput {
        screen_rect: Some(Rect::from_min_size(Pos2::ZERO, SCREEN)),
        ..RawInput::default()
    }
}

/// One frame: UI pass + tessellation; returns its CPU time.
fn frame(ctx: &Context, mut ui_fn: impl FnMut(&mut egui::Ui)) -> Duration {
    let t = Instant::now();
    let out = ctx.run_ui(input(), |ui| {
        egui::CentralPanel::default().show(ui, |ui| ui_fn(ui));
    });
    let prims = ctx.tessellate(out.shapes, out.pixels_per_point);
    black_box(prims);
    t.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/reference/stress_large/model_fp32.pte");
    let Ok(bytes) = std::fs::read(&path) else {
        println!("skipped: {} not present", path.display());
        return;
    };
    // open → first frame
    let ctx = Context::default();
    let t0 = Instant::now();
    let doc = Document::from_program_bytes("model_fp32.pte", bytes.clone()).expect("opens");
    let stage = &doc.stages[0];
    let mut view = GraphView::default();
    frame(&ctx, |ui| {
        view.show(ui, stage, None);
    });
    let first = t0.elapsed();
    let (n, e) = (stage.graph.nodes.len(), stage.graph.edges.len());

    // panning at full view (the whole graph on screen) and at 1:1
    let b = stage.layout.bounds;
    let full_zoom = ((SCREEN.x - 40.0) / (b[2] - b[0])).min((SCREEN.y - 40.0) / (b[3] - b[1]));
    let mut results = Vec::new();
    for (label, zoom) in [("full view", full_zoom), ("1:1 zoom", 1.0)] {
        view.zoom = zoom;
        view.center = Pos2::new(
            (b[0] + b[2]) / 2.0,
            if zoom >= 1.0 {
                b[1] + 2000.0
            } else {
                (b[1] + b[3]) / 2.0
            },
        );
        let mut times = Vec::new();
        for i in 0..120 {
            view.center.x += if i % 2 == 0 { 3.0 / zoom } else { -3.0 / zoom };
            view.center.y += 2.0 / zoom;
            times.push(frame(&ctx, |ui| {
                view.show(ui, stage, None);
            }));
        }
        results.push((label, median(times[10..].to_vec())));
    }

    // baseline: egui_graphs drawing the same graph at the same positions (full view)
    let mut sg: petgraph::stable_graph::StableGraph<usize, ()> =
        petgraph::stable_graph::StableGraph::new();
    let idx: Vec<_> = (0..n).map(|i| sg.add_node(i)).collect();
    for edge in &stage.graph.edges {
        sg.add_edge(idx[edge.from], idx[edge.to], ());
    }
    let mut eg: egui_graphs::Graph<usize, ()> = egui_graphs::to_graph(&sg);
    for (i, &ix) in idx.iter().enumerate() {
        if let Some(node) = eg.node_mut(ix) {
            if let Some(c) = stage.layout.center_of(i) {
                node.set_location(Pos2::new(c[0], c[1]));
            }
        }
    }
    let ctx2 = Context::default();
    let mut base = Vec::new();
    for _ in 0..8 {
        base.push(frame(&ctx2, |ui| {
            egui_graphs::GraphView::<FixedState, Fixed>::new().show(ui, &mut eg);
        }));
    }
    let base = median(base[2..].to_vec());

    // the heat overlay, computed once as the window caches it, drawn every frame
    let dir = path.parent().expect("reference dir");
    let mut doc_heat = doc.clone();
    let heat_rows = match std::fs::read(dir.join("etdump_profile_1run.etdp")) {
        Ok(etdump) => {
            doc_heat
                .attach("etdump_profile_1run.etdp", &etdump)
                .expect("the ETDump belongs to the program");
            let overlay = etscope_viewer::profile_view::heat_overlay(
                &doc_heat.stages[0].graph,
                doc_heat.profile.as_ref().expect("profile"),
            );
            let mut rows = Vec::new();
            for (label, zoom) in [("full view", full_zoom), ("1:1 zoom", 1.0)] {
                let mut v = GraphView::default();
                frame(&ctx, |ui| {
                    v.show(ui, &doc_heat.stages[0], Some(&overlay));
                });
                v.zoom = zoom;
                v.center = Pos2::new((b[0] + b[2]) / 2.0, (b[1] + b[3]) / 2.0);
                let mut times = Vec::new();
                for i in 0..120 {
                    v.center.x += if i % 2 == 0 { 3.0 / zoom } else { -3.0 / zoom };
                    times.push(frame(&ctx, |ui| {
                        v.show(ui, &doc_heat.stages[0], Some(&overlay));
                    }));
                }
                rows.push((label, median(times[10..].to_vec())));
            }
            rows
        }
        Err(_) => Vec::new(),
    };

    // a diff attached: the program against itself, both canvases drawn with SNR colours
    let diff_row = std::fs::read(dir.join("input.npy")).ok().map(|npy| {
        let input = etscope_core::formats::npy::read_npy(&npy).expect("input");
        let program = doc.program.as_ref().expect("program");
        let side = |label: &str| {
            etscope_core::analysis::diff_sources::program_source(
                label,
                program,
                None,
                std::slice::from_ref(&input),
            )
            .expect("runs on the host")
        };
        let (a, bb) = (side("a"), side("b"));
        let report = etscope_core::analysis::diff::diff(
            &a,
            &bb,
            etscope_core::analysis::diff::Threshold::default(),
        )
        .expect("comparable");
        let mut dv = etscope_viewer::diff_view::DiffView::new(report, a, bb);
        let mut times = Vec::new();
        for _ in 0..60 {
            times.push(frame(&ctx, |ui| {
                dv.ui(ui, &doc.stages[0], &doc.stages[0]);
            }));
        }
        median(times[5..].to_vec())
    });

    println!(
        "stress_large ({n} nodes, {e} edges): open → first frame {:.0} ms (target <= 500 ms)",
        ms(first)
    );
    for (label, d) in &results {
        if *label == "full view" {
            println!(
                "  frame while panning, {label}: {:.2} ms (target <= 8 ms); egui_graphs, same graph and positions, full view, this run: {:.1} ms ({:.0}x slower)",
                ms(*d),
                ms(base),
                ms(base) / ms(*d)
            );
        } else {
            println!(
                "  frame while panning, {label}: {:.2} ms (target <= 8 ms); egui_graphs not measured at this zoom",
                ms(*d)
            );
        }
    }
    for (label, d) in &heat_rows {
        println!(
            "  frame while panning with the heat overlay, {label}: {:.2} ms (target <= 8 ms)",
            ms(*d)
        );
    }
    if let Some(d) = diff_row {
        println!(
            "  frame of the Diff tab (two canvases, SNR colours), full view: {:.2} ms (target <= 8 ms)",
            ms(d)
        );
    }
}
