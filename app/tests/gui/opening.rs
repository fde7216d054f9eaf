//! Opening files: bad and hostile ones, previews, files found beside a program, large and damaged ETRecords, one loader for the window and the command line.

use super::*;

#[test]
fn a_bad_file_is_reported_in_the_window_not_a_crash() {
    let harness = app_with(&["model_fp32.pte", "inspector_table.json"]);
    let app = harness.state();
    assert_eq!(app.docs.len(), 1);
    assert!(
        app.messages
            .iter()
            .any(|m| m.contains("inspector_table.json")),
        "{:?}",
        app.messages
    );
}

#[test]
fn a_hostile_file_then_a_good_one_in_the_same_window() {
    let h = |name: &str| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/hostile")
            .join(name)
    };
    // an ETDump whose tensor strides reach 2^62: refused with the reason, program still open
    let mut harness = app_with_paths(vec![
        tiny("model_fp32.pte"),
        h("strides.etdp"),
        h("strides.bin"),
    ]);
    assert!(
        harness
            .state()
            .messages
            .iter()
            .any(|m| m.contains("strides.bin") && m.contains("4611686018427387904")),
        "{:?}",
        harness.state().messages
    );
    // a plan with 100,000 arenas opens and its Memory tab draws in bounded time
    let ctx = harness.ctx.clone();
    harness.state_mut().open(vec![h("arenas_100k.pte")], &ctx);
    // (the whole sequence below is bounded from here too)
    let started = Instant::now();
    step_while(&mut harness, loading, 30, "loading did not finish");
    // the Memory tab of 100,000 arenas draws (a frame's cost is the graph_frame benchmark's)
    harness.state_mut().tab = etscope::gui::Tab::Memory;
    harness.run_steps(3);
    assert_eq!(harness.state().tab, etscope::gui::Tab::Memory);
    // a stage whose weights are a pickle nested 100,000 deep: the comparison reports it
    harness
        .state_mut()
        .open(vec![h("deep_pickle.etrecord")], &ctx);
    while harness.state().jobs.load.is_some() {
        harness.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    // then a good program opens and works in the same window
    harness
        .state_mut()
        .open(vec![tiny("model_int8_cortex_m55.pte")], &ctx);
    while harness.state().jobs.load.is_some() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "loading did not finish"
        );
        harness.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    harness.run_steps(3);
    let app = harness.state();
    let last = app.docs.last().expect("documents");
    assert_eq!(last.doc.title, "model_int8_cortex_m55.pte");
    let pte = last.doc.pte_stage.expect("program stage");
    assert_eq!(last.doc.stages[pte].graph.instruction_count, 6);
    harness.get_by_label_contains("stage pte · 8 nodes");
}

#[test]
fn the_program_is_handed_over_before_its_etrecord_and_etdump_are_attached() {
    use std::cell::RefCell;
    let previews = RefCell::new(Vec::new());
    let paths = [
        tiny("model_fp32.pte"),
        tiny("model_fp32.etrecord"),
        tiny("etdump.etdp"),
    ];
    let show = |d| previews.borrow_mut().push(d);
    let loaded = etscope::gui::loader::load_in_phases(
        &paths,
        None,
        &|_| {},
        Some(&show),
        etscope_viewer::document::EAGER_STAGE_NODES,
    );
    let mut errors = loaded.errors;
    assert!(errors.is_empty(), "{errors:?}");
    let mut previews = previews.into_inner();
    assert_eq!(previews.len(), 1, "one preview, sent once");
    // the program went to the window (moved, not copied): the loader keeps no document
    assert!(loaded.documents.is_empty());
    let mut shown = previews.remove(0);
    assert_eq!(shown.len(), 1);
    // the preview is the program alone, graph laid out, nothing attached yet
    assert_eq!(shown[0].stages.len(), 1);
    assert!(shown[0].etrecord.is_none() && shown[0].etdump.is_none());
    let nodes = shown[0].stages[0].graph.nodes.len();
    assert!(nodes > 0);
    // what was read meanwhile attaches to the shown document: the ETRecord's stages and the
    // ETDump's profile
    assert_eq!(loaded.pending.len(), 2);
    etscope::gui::loader::attach_pending(&mut shown, loaded.pending, &mut errors);
    assert!(errors.is_empty(), "{errors:?}");
    let doc = &shown[0];
    assert!(doc.stages.len() > 1, "ETRecord stages attached");
    assert!(doc.etdump.is_some() && doc.profile.is_some());
    assert_eq!(
        doc.stages[doc.pte_stage.expect("program stage")]
            .graph
            .nodes
            .len(),
        nodes
    );
    assert!(doc.files.iter().any(|f| f == "model_fp32.etrecord"));
    // and the same document as a load without a preview makes
    let (plain, _) = etscope::gui::loader::load(&paths, None, &|_| {});
    let names = |d: &etscope_viewer::document::Document| -> Vec<String> {
        d.stages
            .iter()
            .filter(|s| s.pass.is_none())
            .map(|s| format!("{} {}", s.name, s.graph.nodes.len()))
            .collect()
    };
    assert_eq!(names(doc), names(&plain[0]));
}

/// What the loader keeps of an ETRecord once its stages are built: names and maps, not the
/// exported graphs (freed at once: tens of MB for a large program); lowering and running a
/// stage read the file again and get every graph, equal to parsing it afresh. The program's
/// pass stages, left out while a preview is on screen, are added once the window has the
/// document.
#[test]
fn an_etrecords_graphs_are_released_once_built_and_read_again_when_needed() {
    let paths = [tiny("model_fp32.pte"), tiny("model_fp32.etrecord")];
    let shown = std::cell::RefCell::new(Vec::new());
    let show = |d| shown.borrow_mut().push(d);
    let loaded = etscope::gui::loader::load_in_phases(
        &paths,
        None,
        &|_| {},
        Some(&show),
        etscope_viewer::document::EAGER_STAGE_NODES,
    );
    let mut errors = loaded.errors;
    let mut docs = shown.into_inner().remove(0);
    etscope::gui::loader::attach_pending(&mut docs, loaded.pending, &mut errors);
    assert!(errors.is_empty(), "{errors:?}");
    let doc = &docs[0];
    let held = doc.etrecord.as_ref().expect("attached");
    assert!(held.released);
    assert!(held.stages.iter().all(|s| s.graph.nodes.is_empty()));
    assert!(doc.can_lower(), "the stage names are kept");
    let whole = doc
        .whole_etrecord()
        .expect("an ETRecord")
        .expect("read again");
    let fresh = etscope_core::formats::etrecord::ETRecord::parse(
        &std::fs::read(tiny("model_fp32.etrecord")).expect("fixture"),
    )
    .expect("parses");
    assert_eq!(whole.stages, fresh.stages);
    assert!(whole.stages.iter().all(|s| !s.graph.nodes.is_empty()));
    // the preview was shown: the pass stages come after, in the window
    assert!(doc.pass_stages_deferred);
    assert!(doc.stages.iter().all(|s| s.pass.is_none()));
    let mut harness = app_with(&["model_fp32.pte", "model_fp32.etrecord"]);
    step_while(
        &mut harness,
        |app| app.docs.iter().any(|d| d.stage_jobs.pass.is_some()),
        50,
        "the pass stages did not arrive",
    );
    let app = harness.state();
    assert!(!app.docs[0].doc.pass_stages_deferred);
    assert_eq!(app.docs[0].views.len(), app.docs[0].doc.stages.len());
    // the same pass stages as a program opened with them computed at once
    let passes = |d: &etscope_viewer::document::Document| -> Vec<(String, usize)> {
        d.stages
            .iter()
            .filter(|s| s.pass.is_some())
            .map(|s| (s.name.clone(), s.graph.nodes.len()))
            .collect()
    };
    let at_once = etscope_viewer::document::Document::from_program_bytes(
        "model_fp32.pte",
        std::fs::read(tiny("model_fp32.pte")).expect("fixture"),
    )
    .expect("opens");
    assert_eq!(passes(&app.docs[0].doc), passes(&at_once));
}

#[test]
fn a_program_alone_has_no_preview_and_the_preview_gives_way_to_one_document() {
    let previews = std::cell::Cell::new(0);
    let count = |_| previews.set(previews.get() + 1);
    let loaded = etscope::gui::loader::load_in_phases(
        &[tiny("model_fp32.pte")],
        None,
        &|_| {},
        Some(&count),
        etscope_viewer::document::EAGER_STAGE_NODES,
    );
    assert_eq!((loaded.documents.len(), previews.get()), (1, 0));
    // an ETDump and its debug buffer attach at once: no second copy of the program either
    let loaded = etscope::gui::loader::load_in_phases(
        &[
            tiny("model_fp32.pte"),
            tiny("etdump.etdp"),
            tiny("debug_buffer.bin"),
        ],
        None,
        &|_| {},
        Some(&count),
        etscope_viewer::document::EAGER_STAGE_NODES,
    );
    let (docs, errors) = (loaded.documents, loaded.errors);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!((docs.len(), previews.get()), (1, 0));
    assert!(docs[0].etdump.is_some());
    // in the window: however the frames fell, one document remains, with every stage
    let harness = app_with(&["model_fp32.pte", "model_fp32.etrecord", "etdump.etdp"]);
    let app = harness.state();
    assert_eq!(app.docs.len(), 1);
    assert!(!app.docs[0].preview);
    assert!(app.docs[0].doc.stages.len() > 1);
}

#[test]
fn a_program_opened_alone_brings_the_files_beside_it_and_each_can_be_removed() {
    let dir = directory_with(
        "siblings",
        &[
            ("model_fp32.pte", "model_fp32.pte"),
            ("model_fp32.etrecord", "model_fp32.etrecord"),
            ("etdump.etdp", "model_fp32.etdp"),
            ("debug_buffer.bin", "model_fp32.bin"),
            ("input.npy", "input.npy"),
        ],
    );
    let mut harness = app_with_paths(vec![dir.join("model_fp32.pte")]);
    {
        let app = harness.state();
        assert!(app.messages.is_empty(), "{:?}", app.messages);
        assert_eq!(app.docs.len(), 1);
        let doc = &app.docs[0].doc;
        assert!(doc.etrecord.is_some(), "the ETRecord found by name");
        assert!(
            doc.profile.is_some() && !doc.captured.is_empty(),
            "ETDump + debug buffer"
        );
        assert!(doc.input.is_some(), "input.npy");
        assert_eq!(app.docs[0].sources.found.len(), 4);
    }
    // announced where the stages are, each with its remove button
    harness.get_by_label("Found beside the program by name:");
    for name in [
        "model_fp32.etrecord",
        "model_fp32.etdp",
        "model_fp32.bin",
        "input.npy",
    ] {
        harness.get_by_label(name);
    }
    // the first remove button is the ETRecord's
    harness
        .get_all_by_label("remove")
        .next()
        .expect("remove")
        .click();
    harness.run_steps(2);
    step_while(&mut harness, loading, 30, "reopening did not finish");
    harness.run_steps(3);
    let app = harness.state();
    assert_eq!(app.docs.len(), 1);
    let dv = &app.docs[0];
    assert!(dv.doc.etrecord.is_none(), "removed, and not found again");
    assert!(
        dv.doc.profile.is_some() && dv.doc.input.is_some(),
        "the others stay"
    );
    assert_eq!(dv.sources.declined, vec![dir.join("model_fp32.etrecord")]);
    assert!(!dv.doc.files.iter().any(|f| f.ends_with(".etrecord")));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_file_beside_the_program_that_belongs_to_another_is_skipped_with_a_warning() {
    let dir = directory_with(
        "foreign_sibling",
        &[
            ("model_fp32.pte", "model_fp32.pte"),
            ("model_int8_cortex_m55.etrecord", "model_fp32.etrecord"),
        ],
    );
    let harness = app_with_paths(vec![dir.join("model_fp32.pte")]);
    let app = harness.state();
    assert_eq!(app.docs.len(), 1, "the program is open");
    assert!(app.docs[0].doc.etrecord.is_none());
    assert!(
        app.messages
            .iter()
            .any(|m| m.contains("model_fp32.etrecord")
                && m.contains("found beside the program by name; skipped")),
        "{:?}",
        app.messages
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A stage above the eager size waits in the Stages list ("built when shown"); shown, it is
/// built on a worker and drawn, equal to the stage an eager load builds.
#[test]
fn a_large_stage_is_built_when_first_shown() {
    let files = vec![
        tiny("model_int8_cortex_m55.pte"),
        tiny("model_int8_cortex_m55.etrecord"),
    ];
    let eager = app_with_paths(files.clone());
    let mut harness = app_starting(StartOptions {
        files,
        eager_stage_nodes: Some(0),
        ..StartOptions::default()
    });
    let stage_of = |app: &EtscopeApp| {
        let dv = &app.docs[app.active];
        dv.doc
            .stages
            .iter()
            .position(|s| s.name == "exported")
            .expect("an exported stage")
    };
    let i = stage_of(harness.state());
    assert!(harness.state().docs[0].doc.stages[i].unbuilt.is_some());
    show_the_waiting_exported_stage(&mut harness);
    let app = harness.state();
    let dv = &app.docs[app.active];
    assert_eq!(dv.stage, i);
    let built = &dv.doc.stages[i];
    assert!(built.unbuilt.is_none());
    let whole = &eager.state().docs[0].doc.stages[stage_of(eager.state())];
    assert_eq!(built.graph, whole.graph);
    harness.get_by_label(&format!("exported  ({} ops)", whole.graph.op_count()));
    assert!(app.messages.is_empty(), "{:?}", app.messages);
}

/// An ETRecord that vanishes before a waiting stage is shown: the stage cannot be built, the
/// window says so (naming the file) and stays usable; the stage is not retried every frame.
#[test]
fn a_waiting_stage_whose_etrecord_vanished_is_reported() {
    let dir = std::env::temp_dir().join(format!("etscope-gui-vanished-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for f in [
        "model_int8_cortex_m55.pte",
        "model_int8_cortex_m55.etrecord",
    ] {
        std::fs::copy(tiny(f), dir.join(f)).expect("copy");
    }
    let mut harness = app_starting(StartOptions {
        files: vec![
            dir.join("model_int8_cortex_m55.pte"),
            dir.join("model_int8_cortex_m55.etrecord"),
        ],
        eager_stage_nodes: Some(0),
        no_siblings: true,
        ..StartOptions::default()
    });
    std::fs::remove_file(dir.join("model_int8_cortex_m55.etrecord")).expect("remove");
    show_the_waiting_exported_stage(&mut harness);
    let app = harness.state();
    assert!(
        app.messages
            .iter()
            .any(|m| m.contains("building the stage exported")
                && m.contains("model_int8_cortex_m55.etrecord")),
        "{:?}",
        app.messages
    );
    assert!(app.docs[app.active].stage_jobs.build.is_none());
    harness.get_by_label("exported  (could not be built)");
    // the program is still there to look at
    harness.get_by_label("pte  (6 ops)").click();
    harness.run_steps(2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A program opened with an ETRecord that cannot be read (damaged inside): the program stays on
/// screen and the ETRecord is one error line naming it (the preview was dropped with it before).
#[test]
fn a_program_with_a_damaged_etrecord_stays_and_the_etrecord_is_named() {
    let dir = std::env::temp_dir().join(format!("etscope-gui-damaged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::copy(tiny("model_int8_cortex_m55.pte"), dir.join("model.pte")).expect("copy");
    let mut bytes = std::fs::read(tiny("model_int8_cortex_m55.etrecord")).expect("etrecord");
    let at = bytes.len() / 3;
    bytes[at..at + 200].fill(b'x');
    std::fs::write(dir.join("model.etrecord"), &bytes).expect("write");
    let harness = app_starting(StartOptions {
        files: vec![dir.join("model.pte"), dir.join("model.etrecord")],
        no_siblings: true,
        ..StartOptions::default()
    });
    let app = harness.state();
    assert_eq!(app.docs.len(), 1, "the program stays");
    assert!(app.docs[0].doc.program.is_some() && app.docs[0].doc.etrecord.is_none());
    assert!(
        app.messages.iter().any(|m| m.contains("model.etrecord")),
        "{:?}",
        app.messages
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// One loader: the same set of files opened in the window and with `etscope open` gives the
/// same documents (titles, files attached, stages, profile, captured tensors) and the same error
/// line for every file not used — a renamed file, an empty one, an ETDump of another program.
#[test]
fn a_set_of_files_opens_the_same_in_the_window_and_on_the_command_line() {
    let dir = std::env::temp_dir().join(format!("etscope-open-both-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut files = Vec::new();
    for (from, to) in [
        ("model_fp32.pte", "model_fp32.pte"),
        ("model_fp32.etrecord", "model_fp32.etrecord"),
        ("etdump.etdp", "etdump.etdp"),
        ("debug_buffer.bin", "debug_buffer.bin"),
        ("etdump_xnnpack.etdp", "etdump_xnnpack.etdp"),
        ("etdump.etdp", "renamed.pte"),
    ] {
        std::fs::copy(tiny(from), dir.join(to)).expect("copy fixture");
        files.push(dir.join(to));
    }
    std::fs::write(dir.join("empty.etdp"), b"").expect("write");
    files.push(dir.join("empty.etdp"));

    let cli = std::process::Command::new(env!("CARGO_BIN_EXE_etscope"))
        .arg("open")
        .arg("--json")
        .arg("--no-siblings")
        .args(&files)
        .output()
        .expect("runs etscope open");
    assert!(
        cli.status.success(),
        "{}",
        String::from_utf8_lossy(&cli.stderr)
    );
    let from_cli: serde_json::Value = serde_json::from_slice(&cli.stdout).expect("JSON");

    let harness = app_starting(StartOptions {
        files: files.clone(),
        no_siblings: true,
        ..StartOptions::default()
    });
    let app = harness.state();
    let docs: Vec<etscope_viewer::document::Document> =
        app.docs.iter().map(|dv| dv.doc.clone()).collect();
    let in_window = etscope::load::batch::Opened::of(&docs, &app.messages);
    let in_window = serde_json::to_value(&in_window).expect("JSON");
    assert_eq!(
        in_window, from_cli,
        "the window and `etscope open` disagree"
    );

    // and what that is: one program with its ETRecord, ETDump and debug buffer; three refusals
    let documents = from_cli["documents"].as_array().expect("documents");
    assert_eq!(documents.len(), 1, "{from_cli:#}");
    let files_of = documents[0]["files"].as_array().expect("files").len();
    assert_eq!(files_of, 4, "{from_cli:#}");
    assert_eq!(documents[0]["profile"], true);
    let errors: Vec<&str> = from_cli["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .filter_map(|e| e.as_str())
        .collect();
    assert_eq!(errors.len(), 3, "{errors:#?}");
    assert!(
        errors
            .iter()
            .any(|e| e.contains("renamed.pte") && e.contains("holds")),
        "{errors:#?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.contains("empty.etdp") && e.contains("empty")),
        "{errors:#?}"
    );
    assert!(
        errors.iter().any(|e| e.contains("etdump_xnnpack.etdp")),
        "{errors:#?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A damaged program given alone: nothing opens, and the central panel says which file and why
/// (not only the status bar); beside a good program, a damaged ETRecord is named above its graph.
#[test]
fn a_damaged_file_is_named_with_its_reason_in_the_central_panel() {
    let dir = std::env::temp_dir().join(format!("etscope-gui-card-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let pte = std::fs::read(tiny("model_int8_cortex_m55.pte")).expect("fixture");
    std::fs::write(dir.join("bad.pte"), &pte[..pte.len() / 2]).expect("write");
    std::fs::write(dir.join("bad.etrecord"), b"not a zip").expect("write");
    let harness = app_starting(StartOptions {
        files: vec![dir.join("bad.pte")],
        no_siblings: true,
        ..StartOptions::default()
    });
    assert!(harness.state().docs.is_empty());
    harness.get_by_label_contains("Nothing could be opened");
    harness.get_by_label("Could not open bad.pte");
    let reason = &harness.state().load_errors.errors[0].reason;
    assert!(
        !reason.is_empty() && !reason.contains("bad.pte"),
        "{reason}"
    );
    harness.get_by_label(reason);

    let harness = app_starting(StartOptions {
        files: vec![tiny("model_int8_cortex_m55.pte"), dir.join("bad.etrecord")],
        no_siblings: true,
        ..StartOptions::default()
    });
    assert_eq!(harness.state().docs.len(), 1, "the program opens");
    harness.get_by_label_contains("A file could not be used");
    harness.get_by_label("Could not open bad.etrecord");
    harness.get_by_label_contains("stage pte · 8 nodes");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A load that panics (no file does: a bug) ends as a message naming its files, and the window
/// takes new work: the next file opens and draws.
#[test]
fn a_load_that_panics_is_named_and_the_window_opens_the_next_file() {
    let mut harness = app_with(&["model_fp32.pte"]);
    let ctx = harness.ctx.clone();
    let paths = vec![tiny("model_int8_cortex_m55.pte")];
    harness.state_mut().jobs.load =
        Some(etscope::gui::loader::start_with(paths, ctx.clone(), || {
            panic!("a load that panics")
        }));
    step_while(
        &mut harness,
        loading,
        30,
        "the panicked load was not reported",
    );
    let messages = harness.state().messages.clone();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("model_int8_cortex_m55.pte") && m.contains("bug in etscope")),
        "{messages:?}"
    );
    // the window is not waiting: the next file opens and draws
    let before = harness.state().docs.len();
    harness
        .state_mut()
        .open(vec![tiny("model_int8_cortex_m55.pte")], &ctx);
    step_while(&mut harness, loading, 30, "the next load did not finish");
    harness.run_steps(2);
    assert_eq!(harness.state().docs.len(), before + 1);
}

/// The program is on screen before its ETRecord's stages are read and built, and nothing is
/// attached to it yet: the loader's preview comes before those steps, in the order they happen,
/// and what attaches comes back for the window.
#[test]
fn the_program_is_shown_before_its_etrecord_is_read_or_anything_attaches() {
    use std::cell::RefCell;
    let events: RefCell<Vec<String>> = RefCell::new(Vec::new());
    let progress = |s: String| events.borrow_mut().push(s);
    let show = |docs: Vec<etscope_viewer::document::Document>| {
        events
            .borrow_mut()
            .push(format!("shown {} program(s)", docs.len()));
    };
    let loaded = etscope::gui::loader::load_in_phases(
        &[
            tiny("model_int8_cortex_m55.pte"),
            tiny("model_int8_cortex_m55.etrecord"),
            tiny("etdump.etdp"),
        ],
        None,
        &progress,
        Some(&show),
        etscope_viewer::document::EAGER_STAGE_NODES,
    );
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let events = events.into_inner();
    let at = |what: &str| {
        events
            .iter()
            .position(|e| e.starts_with(what))
            .unwrap_or_else(|| panic!("no {what:?} in {events:?}"))
    };
    let shown = at("shown 1 program");
    assert!(shown < at("reading and building the stages"), "{events:?}");
    // what attaches (the ETDump, the stages) comes back for the window to attach after it
    assert!(!loaded.pending.is_empty());
}
