//! Viewer widgets and their logic on the real reference artifacts: layout geometry, search,
//! cross-stage mapping, the profile table (kittest), the inspector (kittest), exports.

use std::path::{Path, PathBuf};

use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use etscope_viewer::document::Document;
use etscope_viewer::profile_view::{table_rows, table_ui, Column, ProfileTableState};
use etscope_viewer::{export, inspector, search};

fn tiny(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/tiny_conv_relu_linear")
        .join(name)
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn doc(files: &[&str]) -> Document {
    let mut d = Document::from_program_bytes(files[0], read(&tiny(files[0]))).expect("program");
    for f in &files[1..] {
        d.attach(f, &read(&tiny(f)))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    d
}

/// Every reference model the shared folder has (or the tiny fixture): boxes apart and every
/// edge pointing down.
#[test]
fn layouts_of_every_stage_are_layered_and_overlap_free() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/reference");
    let mut programs: Vec<PathBuf> = vec![tiny("model_int8_cortex_m55.pte")];
    for m in ["ds_cnn_kws", "mobilenet_v1_025_vww"] {
        for v in ["model_fp32.pte", "model_int8_cortex_m55.pte"] {
            let p = root.join(m).join(v);
            if p.exists() {
                programs.push(p);
            }
        }
    }
    for p in programs {
        let mut d = Document::from_program_bytes("m.pte", read(&p)).expect("opens");
        let rec = p.with_extension("etrecord");
        if rec.exists() {
            d.attach("m.etrecord", &read(&rec))
                .expect("etrecord attaches");
        }
        for st in &d.stages {
            let l = &st.layout;
            let where_ = |what: String| format!("{} {}: {what}", p.display(), st.name);
            for e in &l.edges {
                let (first, last) = (e.points[0], e.points[e.points.len() - 1]);
                assert!(
                    last[1] > first[1],
                    "{}",
                    where_(format!("edge {e:?} does not point down"))
                );
            }
            let mut rects: Vec<[f32; 4]> = l.rects.clone();
            rects.sort_by(|a, b| a[1].total_cmp(&b[1]).then(a[0].total_cmp(&b[0])));
            for (i, a) in rects.iter().enumerate() {
                for b in rects[i + 1..].iter().take_while(|b| b[1] < a[1] + a[3]) {
                    let apart = a[0] + a[2] <= b[0] + 0.01 || b[0] + b[2] <= a[0] + 0.01;
                    assert!(
                        apart,
                        "{}",
                        where_(format!("boxes {a:?} and {b:?} overlap"))
                    );
                }
            }
        }
    }
}

/// Hits of one operator are told apart: each names its instruction (and its module).
#[test]
fn search_hits_of_one_operator_are_distinguished() {
    let d = doc(&["model_int8_cortex_m55.pte"]);
    let g = d.pte_graph().expect("pte");
    let hits = search::search(g, "quantize", 50);
    assert!(hits.len() > 1, "{hits:?}");
    let labels: std::collections::BTreeSet<String> =
        hits.iter().map(|h| search::hit_label(g, h)).collect();
    assert_eq!(labels.len(), hits.len(), "{labels:?}");
    assert!(labels.iter().all(|l| l.contains(" #")), "{labels:?}");
    // a node found by its label as the canvas draws it
    let first = hits[0].node;
    let label = d.stages[d.pte_stage.expect("pte")].labels[first].clone();
    assert_eq!(search::search(g, &label, 5)[0].node, first, "{label}");
}

#[test]
fn search_finds_ops_instructions_values_and_handles() {
    let d = doc(&["model_fp32.pte", "model_fp32.etrecord"]);
    let g = d.pte_graph().expect("pte");
    let conv = g.node_for_instruction(0).expect("conv").id;
    assert_eq!(search::search(g, "convolution", 10)[0].node, conv);
    assert_eq!(search::search(g, "#0", 10)[0].node, conv);
    assert_eq!(search::search(g, "h1", 10)[0].node, conv);
    // value 5 is the conv output: written by conv, read by relu
    let hits = search::search(g, "v5", 10);
    assert_eq!(hits[0].node, conv);
    assert!(hits.iter().any(|h| h.reason == "reads value 5"));
    assert!(search::search(g, "no_such_op", 10).is_empty());
}

#[test]
fn nodes_map_across_stages_through_debug_handles() {
    let d = doc(&[
        "model_int8_cortex_m55.pte",
        "model_int8_cortex_m55.etrecord",
    ]);
    let pte = d.pte_stage.expect("pte stage");
    let after = d
        .stages
        .iter()
        .position(|s| s.name == "edge_after_transform")
        .expect("stage");
    let linear = d.stages[pte]
        .graph
        .nodes
        .iter()
        .find(|n| n.op == "cortex_m::quantized_linear")
        .expect("linear")
        .id;
    let mapped = d.corresponding(pte, linear, after);
    assert!(!mapped.is_empty());
    assert!(mapped
        .iter()
        .any(|&m| d.stages[after].graph.nodes[m].op == "cortex_m::quantized_linear"));
}

#[test]
fn attaching_a_foreign_etdump_is_refused_with_a_reason() {
    let mut d = doc(&["model_fp32_xnnpack.pte"]);
    let e = d
        .attach(
            "etdump_profile_5runs.etdp",
            &read(&tiny("etdump_profile_5runs.etdp")),
        )
        .expect_err("foreign");
    assert!(e.to_string().contains("another program"), "{e}");
}

#[test]
fn profile_table_sorts_when_a_header_is_clicked() {
    let d = doc(&["model_fp32.pte", "etdump_profile_5runs.etdp"]);
    let profile = d.profile.clone().expect("profile");
    let mut state = ProfileTableState::default();
    let first = table_rows(&profile, &state);
    assert_eq!(
        first[0].op, "aten::convolution.out",
        "share, descending: conv is the hottest"
    );
    let mut harness = Harness::new_ui_state(
        |ui, state: &mut ProfileTableState| {
            table_ui(ui, &profile, state, None);
        },
        state.clone(),
    );
    harness.run();
    harness.get_by_label("45305");
    harness.get_by_label("instr").click();
    harness.run();
    assert_eq!(harness.state().sort, Column::Instruction);
    state = harness.state().clone();
    let by_instr = table_rows(&profile, &state);
    assert_eq!(
        by_instr
            .iter()
            .map(|r| r.instruction_id)
            .collect::<Vec<_>>(),
        vec![0, 1, 2, 3]
    );
}

#[test]
fn inspector_lists_arguments_tensors_and_quantization() {
    let d = doc(&["model_int8_cortex_m55.pte"]);
    let g = d.pte_graph().expect("pte").clone();
    let q = g.node_for_instruction(0).expect("quantize").id;
    let mut harness = Harness::builder()
        .with_size(egui::vec2(900.0, 1600.0))
        .build_ui(|ui| {
            inspector::inspector_ui(ui, &g, q, d.program.as_ref(), None);
        });
    harness.run();
    harness.get_by_label("cortex_m::quantize_per_tensor");
    harness.get_by_label("0.025375546887516975");
    assert!(
        harness
            .get_all_by_label_contains("q(scale 0.025376, zp 5)")
            .count()
            >= 1
    );
    assert!(
        harness.get_all_by_label("[0, 1, 2, 3]").count() >= 2,
        "dim_order of input and output"
    );
}

#[test]
fn exports_are_well_formed() {
    let d = doc(&["model_fp32.pte", "etdump_profile_5runs.etdp"]);
    let svg = export::graph_svg(&d.stages[0], None);
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(
        svg.matches("<rect x=").count(),
        d.stages[0].graph.nodes.len()
    );
    let csv = export::profile_csv(d.profile.as_ref().expect("profile"), None, None, None);
    assert_eq!(csv.lines().count(), 5);
    assert!(csv
        .lines()
        .nth(1)
        .expect("row")
        .starts_with("0,aten::convolution.out,native_call_convolution.out,5,"));
    let runs = etscope_viewer::profile_view::timeline(d.etdump.as_ref().expect("etdump"));
    let trace: serde_json::Value =
        serde_json::from_str(&export::chrome_trace(&runs, 1000.0, None)).expect("json");
    let events = trace["traceEvents"].as_array().expect("events");
    assert_eq!(events.iter().filter(|e| e["ph"] == "X").count(), 5 * 4);
    let conv = events.iter().find(|e| e["ph"] == "X").expect("span");
    assert!(
        (conv["dur"].as_f64().expect("dur") - 55.322).abs() < 1e-9,
        "first conv took 55322 ns"
    );
    let mem = export::memory_csv(d.memory.as_ref().expect("plan"));
    assert!(mem.lines().count() > 3);
    // an emulator's times say what they are in every export
    let what = etscope_viewer::document::EMULATED_TIMES;
    let csv = export::profile_csv(
        d.profile.as_ref().expect("profile"),
        Some(1000.0),
        None,
        Some(what),
    );
    assert!(csv.lines().next().is_some_and(|h| h.ends_with(",times")));
    assert!(csv
        .lines()
        .skip(1)
        .all(|l| l.ends_with(&format!("\"{what}\"")) || l.ends_with(what)));
    let trace: serde_json::Value =
        serde_json::from_str(&export::chrome_trace(&runs, 1000.0, Some(what))).expect("json");
    assert_eq!(trace["otherData"]["times"], what);
}

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(rel)
}

#[test]
fn the_inspector_decodes_an_ethos_u_delegate() {
    let path = fixture("programs/ethos_u55/model.pte");
    let d = Document::from_program_bytes("model.pte", read(&path)).expect("program");
    let g = d.pte_graph().expect("pte").clone();
    let node = g
        .nodes
        .iter()
        .find(|n| n.delegate.is_some())
        .expect("a delegate node")
        .id;
    let mut harness = Harness::builder()
        .with_size(egui::vec2(900.0, 1600.0))
        .build_ui(|ui| {
            inspector::inspector_ui(ui, &g, node, d.program.as_ref(), None);
        });
    harness.run();
    harness.get_by_label("backend: EthosUBackend");
    let summary = harness
        .get_all_by_label_contains("Ethos-U: command stream")
        .count();
    assert_eq!(summary, 1, "the decoded payload is shown");
    assert!(harness.get_all_by_label_contains("scratch 1616 B").count() >= 1);
}

#[test]
fn external_weights_attach_to_their_program_in_a_document() {
    let dir = fixture("programs/external_weights");
    let mut d = Document::from_program_bytes("model.pte", read(&dir.join("model.pte")))
        .expect("opens without its .ptd");
    d.attach("model.ptd", &read(&dir.join("model.ptd")))
        .expect("its .ptd attaches");
    let mut other =
        Document::from_program_bytes("bmm.pte", read(&fixture("programs/bmm/model.pte")))
            .expect("program");
    let e = other
        .attach("model.ptd", &read(&dir.join("model.ptd")))
        .expect_err("not this program's");
    assert!(e.to_string().contains("external data"), "{e}");
}

#[test]
fn the_inspector_says_why_the_board_computes_an_op_differently() {
    let path = fixture("ops/softmax__dim_last_4d_1x2x3x8__default__m55/model.pte");
    let d = Document::from_program_bytes("model.pte", read(&path)).expect("program");
    let g = d.pte_graph().expect("pte").clone();
    let softmax = g
        .nodes
        .iter()
        .find(|n| n.op == "cortex_m::softmax")
        .expect("softmax")
        .id;
    let quantize = g.node_for_instruction(0).expect("quantize").id;
    for (node, expect_note) in [(softmax, true), (quantize, false)] {
        let mut harness = Harness::builder()
            .with_size(egui::vec2(900.0, 1600.0))
            .build_ui(|ui| {
                inspector::inspector_ui(ui, &g, node, d.program.as_ref(), None);
            });
        harness.run();
        let notes = harness.query_all_by_label_contains("on the board").count();
        assert_eq!(notes, usize::from(expect_note), "node {node}");
    }
}

/// A host run of a tiny-model program as a diff source, with its ETRecord's module paths.
fn host_source(variant: &str) -> etscope_core::analysis::diff::Source {
    use etscope_core::formats::etrecord::ETRecord;
    use etscope_core::formats::pte::Program;
    let program = Program::parse(read(&tiny(&format!("{variant}.pte")))).expect("program");
    let rec = ETRecord::parse(&read(&tiny(&format!("{variant}.etrecord")))).expect("etrecord");
    let input = etscope_core::formats::npy::read_npy(&read(&tiny("input.npy"))).expect("input");
    etscope_core::analysis::diff_sources::program_source(
        variant,
        &program,
        Some((&rec, variant)),
        &[input],
    )
    .expect("runs")
}

#[test]
fn the_diff_pair_panel_shows_the_selected_rows_tensors_as_compared() {
    use etscope_core::analysis::diff::{diff, Threshold};
    use etscope_viewer::diff_view::DiffView;
    let (a, b) = (
        host_source("model_fp32"),
        host_source("model_int8_cortex_m55"),
    );
    let report = diff(&a, &b, Threshold::default()).expect("comparable");
    // the convolution group: fp32 conv + relu against the Cortex-M conv (and the transpose the
    // explicit-layout flow puts after it)
    let row = report
        .rows
        .iter()
        .position(|r| r.b_ops.iter().any(|o| o.contains("quantized_conv2d")))
        .expect("a conv row");
    let (na, nb) = (
        *report.rows[row].a_nodes.iter().max().expect("a"),
        *report.rows[row].b_nodes.iter().max().expect("b"),
    );
    let (ta, tb) = (a.tensors[&na][0].clone(), b.tensors[&nb][0].clone());
    let mut view = DiffView::new(report, a, b);
    view.select_row(row);
    let mut harness = Harness::builder()
        .with_size(egui::vec2(900.0, 1400.0))
        .build_ui(|ui| view.pair_ui(ui));
    harness.run();
    harness.get_by_label_contains(&format!("A holds float32{:?}", ta.shape));
    harness.get_by_label_contains(&format!("B holds int8{:?}", tb.shape));
    // compared in A's logical layout, channels-last undone
    harness.get_by_label_contains(&format!("compared as {:?}", ta.shape));
    harness.get_by_label("|A − B|");
}

/// A `pad` the Cortex-M passes made (no debug handle) and the program keeps is kept on both
/// sides, and selecting it on one selects it on the other.
#[test]
fn an_operator_both_stages_keep_without_debug_handles_is_kept_on_both_sides() {
    use etscope_viewer::stage_compare::{Change, StageCompare};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/ds_cnn_kws");
    let mut d = Document::from_program_bytes(
        "model_int8_cortex_m55.pte",
        read(&dir.join("model_int8_cortex_m55.pte")),
    )
    .expect("program");
    d.attach(
        "model_int8_cortex_m55.etrecord",
        &read(&dir.join("model_int8_cortex_m55.etrecord")),
    )
    .expect("etrecord");
    let stage = |name: &str| d.stages.iter().position(|s| s.name == name).expect("stage");
    let (after, pte) = (stage("edge_after_transform"), stage("pte"));
    let mut sc = StageCompare::new(&d, after, pte).expect("two stages");
    let pad = |s: usize| {
        d.stages[s]
            .graph
            .nodes
            .iter()
            .find(|n| n.op == "cortex_m::pad")
            .expect("a pad")
            .id
    };
    let (l, r) = (pad(after), pad(pte));
    assert!(d.stages[pte].graph.nodes[r].debug_handles.is_empty());
    assert_eq!(sc.left_marks[l], Some(Change::Kept));
    assert_eq!(sc.right_marks[r], Some(Change::Kept));
    assert_eq!(sc.select(&d, l, true), vec![r]);
    assert_eq!(sc.select(&d, r, false), vec![l]);
}

#[test]
fn selecting_in_one_stage_pane_selects_the_matched_nodes_in_the_other() {
    use etscope_viewer::stage_compare::{Change, StageCompare};
    let d = doc(&[
        "model_int8_cortex_m55.pte",
        "model_int8_cortex_m55.etrecord",
    ]);
    let stage = |name: &str| d.stages.iter().position(|s| s.name == name).expect("stage");
    let (edge, pte) = (stage("edge"), stage("pte"));
    let mut sc = StageCompare::new(&d, edge, pte).expect("two stages");
    // the edge convolution and the program's quantized convolution are one node lowered
    let conv = d.stages[edge]
        .graph
        .nodes
        .iter()
        .find(|n| n.op == "aten::convolution")
        .expect("conv")
        .id;
    let there = sc.select(&d, conv, true);
    assert!(!there.is_empty());
    let picked = sc.right_view.selected.expect("selected on the right");
    assert!(d.stages[pte].graph.nodes[picked]
        .op
        .starts_with("cortex_m::quantized_conv2d"));
    assert_eq!(sc.left_view.selected, Some(conv));
    // and back: selecting on the right selects the edge node on the left
    sc.select(&d, picked, false);
    assert_eq!(
        sc.left_view.selected,
        d.corresponding(pte, picked, edge).first().copied()
    );
    // the Q/DQ pairs the program folded away are marked removed, the conv changed (replaced)
    assert_eq!(sc.left_marks[conv], Some(Change::Changed));
    let removed = sc
        .counts()
        .iter()
        .find(|c| c.0 == Change::Removed)
        .map(|c| c.1);
    assert!(removed.is_some_and(|n| n > 0));
    // drawn in a frame without panicking, both panes
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1200.0, 700.0))
        .build_ui(|ui| sc.ui(ui, &d));
    harness.run();
    harness.get_by_label_contains("changed");
}

/// An ETRecord attached from its file, releasing its graphs as the stages are built, gives the
/// document the same stages, in the same order, as the ETRecord held whole; the lowering and the
/// stage runs read it again ([`Document::whole_etrecord`]).
#[test]
fn an_etrecord_read_releasing_gives_the_stages_of_one_held_whole() {
    let held = doc(&[
        "model_int8_cortex_m55.pte",
        "model_int8_cortex_m55.etrecord",
    ]);
    let streamed = with_etrecord_file(
        "model_int8_cortex_m55.pte",
        &tiny("model_int8_cortex_m55.etrecord"),
        etscope_viewer::document::EAGER_STAGE_NODES,
    );
    let shape = |d: &Document| -> Vec<(String, usize, usize)> {
        d.stages
            .iter()
            .map(|s| (s.name.clone(), s.graph.nodes.len(), s.graph.edges.len()))
            .collect()
    };
    assert!(held.stages.len() >= 3);
    assert_eq!(shape(&streamed), shape(&held));
    for (a, b) in streamed.stages.iter().zip(&held.stages) {
        assert_eq!(a.graph, b.graph, "stage {}", a.name);
        assert_eq!(a.labels, b.labels, "stage {}", a.name);
    }
    let rec = streamed.etrecord.as_ref().expect("record");
    assert!(rec.released && rec.stages.iter().all(|s| s.graph.nodes.is_empty()));
    let whole = streamed
        .whole_etrecord()
        .expect("has one")
        .expect("read again");
    assert_eq!(
        whole
            .stages
            .iter()
            .map(|s| s.graph.nodes.len())
            .collect::<Vec<_>>(),
        held.etrecord
            .as_ref()
            .expect("held")
            .stages
            .iter()
            .map(|s| s.graph.nodes.len())
            .collect::<Vec<_>>()
    );
}

/// The tiny fixture program `pte` with the ETRecord at `etrecord` attached from its file as the
/// window attaches one (releasing as it reads; stages above `eager_nodes` nodes wait).
fn with_etrecord_file(pte: &str, etrecord: &Path, eager_nodes: usize) -> Document {
    let mut d = Document::from_program_bytes(pte, read(&tiny(pte))).expect("program");
    let name = etrecord
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .expect("a file name");
    d.attach_etrecord_reader_releasing(
        &name,
        std::io::BufReader::new(std::fs::File::open(etrecord).expect("file")),
        reload_of(etrecord),
        eager_nodes,
    )
    .expect("attaches");
    d
}

/// Reads the ETRecord at `path` again (whole, or one stage), as the app's loader does.
fn reload_of(path: &Path) -> etscope_viewer::document::EtrecordReload {
    let (whole, stage) = (path.to_path_buf(), path.to_path_buf());
    etscope_viewer::document::EtrecordReload {
        whole: std::sync::Arc::new(move || {
            etscope_core::formats::etrecord::ETRecord::parse(&read(&whole))
                .map_err(|e| e.to_string())
        }),
        stage: std::sync::Arc::new(move |entry, size| {
            etscope_core::formats::etrecord::ETRecord::read_stage(
                std::io::Cursor::new(read(&stage)),
                entry,
                size,
            )
            .map_err(|e| e.to_string())
        }),
    }
}

/// With every stage above the eager size, the stages other than the edge stage wait: an empty
/// graph that says which ETRecord entry it is built from; built on demand (the stage's entry
/// alone read again), each equals the stage of the ETRecord held whole.
#[test]
fn large_stages_wait_until_shown_and_then_equal_the_whole_read() {
    let held = doc(&[
        "model_int8_cortex_m55.pte",
        "model_int8_cortex_m55.etrecord",
    ]);
    let mut lazy = with_etrecord_file(
        "model_int8_cortex_m55.pte",
        &tiny("model_int8_cortex_m55.etrecord"),
        0,
    );
    let waiting: Vec<usize> = (0..lazy.stages.len())
        .filter(|&i| lazy.stages[i].unbuilt.is_some())
        .collect();
    assert!(waiting.len() >= 2, "{waiting:?}");
    for s in &lazy.stages {
        // the edge stage (the program's module paths come from it) and the program are built
        if s.name == "edge" || s.name == "pte" {
            assert!(s.unbuilt.is_none() && s.graph.op_count() > 0, "{}", s.name);
        }
    }
    // the program took the edge stage's module paths as with the whole read
    let modules = |d: &Document| {
        d.pte_graph().map(|g| {
            g.nodes
                .iter()
                .map(|n| n.module_stack.clone())
                .collect::<Vec<_>>()
        })
    };
    assert_eq!(modules(&lazy), modules(&held));
    for i in waiting {
        assert_eq!(lazy.stages[i].graph.op_count(), 0);
        let (entry, build) = lazy.stage_builder(i).expect("a builder");
        let view = build().expect("builds");
        assert_eq!(lazy.set_built_stage(&entry, view), Some(i));
        assert!(lazy.stage_builder(i).is_none(), "built once");
        let whole = held
            .stages
            .iter()
            .find(|s| s.name == lazy.stages[i].name)
            .expect("same stage");
        assert_eq!(lazy.stages[i].graph, whole.graph, "{}", whole.name);
        assert_eq!(lazy.stages[i].labels, whole.labels);
    }
    assert!(lazy.stages.iter().all(|s| s.unbuilt.is_none()));
}

/// A large edge graph that does not quantize waits to be built too: the program takes its
/// module paths from the edge graph as it is read, equal to those an eager load gives it.
#[test]
fn a_float_edge_stage_waits_and_the_program_keeps_its_module_paths() {
    let held = doc(&["model_fp32.pte", "model_fp32.etrecord"]);
    let mut lazy = with_etrecord_file("model_fp32.pte", &tiny("model_fp32.etrecord"), 0);
    let edge = lazy
        .stages
        .iter()
        .position(|s| s.name == "edge")
        .expect("edge stage");
    assert!(lazy.stages[edge].unbuilt.is_some());
    let modules = |d: &Document| {
        d.pte_graph()
            .map(|g| {
                g.nodes
                    .iter()
                    .map(|n| n.module_stack.clone())
                    .collect::<Vec<_>>()
            })
            .expect("program graph")
    };
    let (a, b) = (modules(&lazy), modules(&held));
    assert!(
        b.iter().any(|m| !m.is_empty()),
        "the fixture has module paths"
    );
    assert_eq!(a, b);
    let groups = |d: &Document| {
        d.pte_stage.map(|i| {
            d.stages[i]
                .modules
                .iter()
                .map(|m| m.path.clone())
                .collect::<Vec<_>>()
        })
    };
    assert_eq!(groups(&lazy), groups(&held));
    let (entry, build) = lazy.stage_builder(edge).expect("a builder");
    assert_eq!(
        lazy.set_built_stage(&entry, build().expect("builds")),
        Some(edge)
    );
    let whole = held.stages.iter().find(|s| s.name == "edge").expect("edge");
    assert_eq!(lazy.stages[edge].graph, whole.graph);
}

/// An ETRecord file replaced by another after it was opened: building a waiting stage and
/// reading the record again are refused (the file changed), never a stage of another program.
#[test]
fn a_replaced_etrecord_file_is_refused_when_read_again() {
    let dir = std::env::temp_dir().join(format!("etscope-viewer-replaced-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("model.etrecord");
    std::fs::copy(tiny("model_int8_cortex_m55.etrecord"), &path).expect("copy");
    let d = with_etrecord_file("model_int8_cortex_m55.pte", &path, 0);
    std::fs::copy(tiny("model_fp32.etrecord"), &path).expect("replace");
    let waiting = (0..d.stages.len())
        .find(|&i| d.stages[i].unbuilt.is_some())
        .expect("a waiting stage");
    let (_, build) = d.stage_builder(waiting).expect("a builder");
    let err = build().expect_err("refused");
    assert!(err.contains("changed"), "{err}");
    let err = d.whole_etrecord().expect("has one").expect_err("refused");
    assert!(err.contains("changed"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
