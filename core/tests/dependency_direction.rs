//! The layering rule, checked on the resolved dependency tree: `core` knows no GUI and no probe;
//! `profiler` knows no GUI (core ← profiler ← viewer ← app).

mod common;

use std::collections::BTreeSet;
use std::process::Command;

fn normal_deps(package: &str) -> BTreeSet<String> {
    deps(package, &[])
}

/// The packages `cargo tree` lists for `package`'s normal dependencies, with `extra` arguments
/// (`--depth 1`: its direct dependencies only).
fn deps(package: &str, extra: &[&str]) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "--locked",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--format",
            "{p}",
            "-p",
            package,
        ])
        .args(extra)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

const GUI: &[&str] = &[
    "egui",
    "eframe",
    "egui_graphs",
    "egui_plot",
    "egui_kittest",
    "rfd",
    "winit",
    "wgpu",
    "glow",
    "epaint",
];

#[test]
fn core_has_no_gui_and_no_probe() {
    let deps = normal_deps("etscope-core");
    assert!(
        deps.contains("flatbuffers"),
        "sanity: core's tree was read: {deps:?}"
    );
    for bad in GUI
        .iter()
        .chain(&["probe-rs", "etscope-profiler", "etscope-viewer"])
    {
        assert!(!deps.contains(*bad), "etscope-core depends on {bad}");
    }
}

#[test]
fn profiler_has_no_gui() {
    let deps = normal_deps("etscope-profiler");
    assert!(
        deps.contains("etscope-core"),
        "sanity: profiler's tree was read: {deps:?}"
    );
    for bad in GUI.iter().chain(&["etscope-viewer"]) {
        assert!(!deps.contains(*bad), "etscope-profiler depends on {bad}");
    }
}

#[test]
fn viewer_has_no_eframe_no_dialogs_and_no_app() {
    let deps = normal_deps("etscope-viewer");
    assert!(
        deps.contains("egui") && deps.contains("etscope-core"),
        "sanity: viewer's tree was read: {deps:?}"
    );
    for bad in ["eframe", "rfd", "winit", "etscope"] {
        assert!(!deps.contains(bad), "etscope-viewer depends on {bad}");
    }
}

/// `viewer` does no file IO: widgets get bytes and data from their caller.
#[test]
fn viewer_sources_do_no_file_io() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../viewer/src");
    // every source file, in folders too (`layout/`)
    let mut files = Vec::new();
    let mut dirs = vec![src];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).expect("viewer/src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    assert!(
        files.len() > 20,
        "sanity: the sources were found: {files:?}"
    );
    for path in files {
        let text = std::fs::read_to_string(&path).expect("source");
        // unit tests may read fixtures; the library code above them may not
        let text = text.split("#[cfg(test)]").next().unwrap_or_default();
        for io in [
            "std::fs",
            "fs::read",
            "fs::write",
            "File::open",
            "File::create",
            "OpenOptions",
            "rfd::",
        ] {
            assert!(!text.contains(io), "{} uses {io}", path.display());
        }
        // a grouped import of the file system (`use std::{fs, io}`)
        for line in text
            .lines()
            .filter(|l| l.trim_start().starts_with("use std::{"))
        {
            assert!(
                !line.split(['{', ',', '}', ' ']).any(|w| w == "fs"),
                "{} imports std::fs: {line}",
                path.display()
            );
        }
    }
}

/// The FlatBuffers types stay where ExecuTorch's formats are read and written: the readers and
/// the writers in `core::formats`; every other module of the workspace sees plain Rust types
/// (neither the `flatbuffers` crate nor the generated tables of `formats::generated`).
#[test]
fn flatbuffers_types_stay_in_the_readers_and_the_writer() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let allowed = [root.join("core/src/formats")];
    let mut offenders = Vec::new();
    let mut seen = 0;
    for path in common::rust_sources(&["core/src", "profiler/src", "viewer/src", "app/src"]) {
        let text = std::fs::read_to_string(&path).expect("source");
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        let uses = code
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .any(|l| {
                l.contains("flatbuffers::")
                    || l.contains("use flatbuffers")
                    || l.contains("generated::")
                    || l.contains("_flatbuffer::")
            });
        if uses {
            seen += 1;
            if !allowed.iter().any(|a| path.starts_with(a)) {
                offenders.push(path.display().to_string());
            }
        }
    }
    assert!(
        seen >= 2,
        "sanity: the readers and the writer use flatbuffers"
    );
    assert!(
        offenders.is_empty(),
        "FlatBuffers types outside the readers and the writer: {offenders:#?}"
    );
}

/// `anyhow` is the application's: the libraries (`core`, `profiler`, `viewer`) name their
/// errors with `thiserror` and never depend on `anyhow` themselves (a dependency's own use of
/// it is that crate's business).
#[test]
fn only_the_app_depends_on_anyhow() {
    let direct = |package: &str| deps(package, &["--depth", "1"]);
    assert!(
        direct("etscope").contains("anyhow"),
        "sanity: the app's direct dependencies were read"
    );
    for library in ["etscope-core", "etscope-profiler", "etscope-viewer"] {
        let deps = direct(library);
        assert!(deps.contains("thiserror"), "sanity: {library}: {deps:?}");
        assert!(!deps.contains("anyhow"), "{library} depends on anyhow");
    }
}
