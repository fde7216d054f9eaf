//! The graph canvas as a person sees it (kittest, real committed models): fit shows the whole
//! graph, a large graph opens folded and unfolds on a click, and text is drawn only where it is
//! legible.

use std::path::{Path, PathBuf};

use egui::epaint::Shape;
use egui::{Event, Pos2, Vec2};
use egui_kittest::Harness;
use etscope_viewer::document::{Document, StageView};
use etscope_viewer::graph_view::GraphView;

const SIZE: Vec2 = Vec2::new(1280.0, 800.0);

fn model(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(dir)
}

/// The program's stage as the window shows it, with the module paths of its ETRecord.
fn program_stage(dir: &str) -> StageView {
    let pte = model(dir).join("model_fp32.pte");
    let read = |p: &Path| std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let mut doc = Document::from_program_bytes("model_fp32.pte", read(&pte)).expect("opens");
    doc.attach(
        "model_fp32.etrecord",
        &read(&pte.with_extension("etrecord")),
    )
    .expect("the ETRecord belongs to the program");
    let i = doc.pte_stage.expect("a program stage");
    doc.stages.swap_remove(i)
}

struct Canvas {
    view: GraphView,
    stage: StageView,
}

fn canvas(stage: StageView) -> Harness<'static, Canvas> {
    let mut h = Harness::builder().with_size(SIZE).build_ui_state(
        |ui, c: &mut Canvas| {
            c.view.show(ui, &c.stage, None);
        },
        Canvas {
            view: GraphView::default(),
            stage,
        },
    );
    h.run_steps(3);
    h
}

/// Screen positions of every node's box centre.
fn screen_positions(h: &Harness<'_, Canvas>) -> Vec<Pos2> {
    let c = h.state();
    (0..c.stage.graph.nodes.len())
        .filter_map(|n| c.view.screen_pos(&c.stage, n))
        .collect()
}

fn assert_all_visible(h: &Harness<'_, Canvas>, what: &str) {
    let rect = h.state().view.last_rect;
    let at = screen_positions(h);
    assert!(!at.is_empty());
    for p in &at {
        assert!(
            rect.contains(*p),
            "{what}: a node at {p:?} is outside the canvas {rect:?}"
        );
    }
    // centred: the drawn extent's middle is the canvas's
    let (x0, x1) = at
        .iter()
        .fold((f32::MAX, f32::MIN), |a, p| (a.0.min(p.x), a.1.max(p.x)));
    let (y0, y1) = at
        .iter()
        .fold((f32::MAX, f32::MIN), |a, p| (a.0.min(p.y), a.1.max(p.y)));
    let mid = Pos2::new((x0 + x1) / 2.0, (y0 + y1) / 2.0);
    assert!(
        (mid.y - rect.center().y).abs() < rect.height() * 0.1,
        "{what}: the graph is not centred vertically ({mid:?} in {rect:?})"
    );
    assert!(
        (y1 - y0) > rect.height() * 0.5 || (x1 - x0) > rect.width() * 0.5,
        "{what}: fit leaves the canvas mostly empty ({x0}..{x1} × {y0}..{y1} in {rect:?})"
    );
}

/// Every text the last frame drew, with its font size.
fn texts(h: &Harness<'_, Canvas>) -> Vec<(String, f32)> {
    fn walk(s: &Shape, out: &mut Vec<(String, f32)>) {
        match s {
            Shape::Text(t) => {
                let size = t
                    .galley
                    .job
                    .sections
                    .first()
                    .map_or(0.0, |sec| sec.format.font_id.size);
                out.push((t.galley.text().to_string(), size));
            }
            Shape::Vec(v) => v.iter().for_each(|s| walk(s, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for c in &h.output().shapes {
        walk(&c.shape, &mut out);
    }
    out
}

/// The first node of module `path`.
fn first_node_of(c: &Canvas, path: &str) -> usize {
    c.stage
        .modules
        .iter()
        .find(|m| m.path == path)
        .unwrap_or_else(|| panic!("no module {path}"))
        .nodes[0]
}

fn click(h: &mut Harness<'_, Canvas>, at: Pos2) {
    h.event(Event::PointerMoved(at));
    for pressed in [true, false] {
        h.event(Event::PointerButton {
            pos: at,
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: egui::Modifiers::NONE,
        });
    }
    h.run_steps(3);
}

#[test]
fn a_large_graph_opens_folded_whole_and_centred_and_fit_brings_it_back() {
    let mut h = canvas(program_stage("models/audio_gru"));
    let c = h.state();
    assert!(c.stage.graph.nodes.len() > 200);
    assert!(c.view.collapsed.contains("gru"), "{:?}", c.view.collapsed);
    let gru_node = first_node_of(c, "gru");
    assert!(c.view.is_folded(gru_node));
    assert_all_visible(&h, "first frame");
    // panned and zoomed away, then View ▸ Fit
    h.state_mut().view.center = Pos2::new(1.0e5, -3.0e4);
    h.state_mut().view.zoom = 3.0;
    h.run_steps(2);
    h.state_mut().view.fit();
    h.run_steps(2);
    assert_all_visible(&h, "after fit");
    // far out, the folded module's name carries the picture, legibly
    let t = texts(&h);
    assert!(
        t.iter()
            .any(|(s, size)| s.starts_with("+ gru") && *size >= 9.0),
        "{t:?}"
    );
}

#[test]
fn clicking_a_folded_module_unfolds_it_and_fit_shows_it_whole() {
    let mut h = canvas(program_stage("models/audio_gru"));
    let c = h.state();
    let gru_node = first_node_of(c, "gru");
    assert!(c.view.is_folded(gru_node), "opens folded");
    let at = c.view.screen_pos(&c.stage, gru_node).expect("drawn");
    click(&mut h, at);
    let c = h.state();
    assert!(!c.view.collapsed.contains("gru"), "{:?}", c.view.collapsed);
    assert!(!c.view.is_folded(gru_node));
    h.state_mut().view.fit();
    h.run_steps(2);
    assert_all_visible(&h, "unfolded, after fit");
}

#[test]
fn text_is_drawn_only_where_it_is_legible() {
    let mut h = canvas(program_stage("diff_cases/unet_bn"));
    // whatever the fit zoom, no text smaller than legible
    for (s, size) in texts(&h) {
        assert!(size >= 9.0, "{s:?} drawn at {size} px");
    }
    // zoomed in, the nodes are named
    h.state_mut().view.zoom = 1.2;
    h.run_steps(2);
    let t = texts(&h);
    assert!(
        t.iter().any(|(s, _)| s.starts_with("convolution")),
        "zoomed in, nodes carry their names: {t:?}"
    );
    for (s, size) in &t {
        assert!(*size >= 9.0, "{s:?} drawn at {size} px");
    }
    // far out, nothing but boxes
    h.state_mut().view.zoom = 0.2;
    h.run_steps(2);
    let t = texts(&h);
    assert!(t.iter().all(|(_, size)| *size >= 9.0), "{t:?}");
}
