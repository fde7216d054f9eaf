//! A set of files into documents, egui-free: the window and the CLI open files through here.
//! Every file is read and its kind checked against its name ([`super::kind_of`]: a renamed or
//! mixed-up file is refused the same way everywhere), programs become documents, and ETRecords,
//! ETDumps and debug buffers attach to the program they belong to (the one of the same name
//! first; ExecuTorch's identity checks decide), one error line per file none takes.

use std::path::{Path, PathBuf};

use etscope_core::formats::kind::FileKind;
use etscope_viewer::document::{
    prepare_etrecord_reader, Document, EtrecordReload, PreparedEtrecord,
};

/// A file read and prepared on the loader's thread for a document the window already shows
/// (a preview): attached there by [`attach_pending`], so the program is never copied.
pub enum Pending {
    /// An ETRecord with its stages built (its exported graphs released) and how to read it
    /// again.
    Etrecord {
        path: PathBuf,
        prepared: Box<PreparedEtrecord>,
        reload: EtrecordReload,
    },
    /// An ETDump or a debug buffer (both attach at once).
    File { path: PathBuf, bytes: Vec<u8> },
}

/// What a load made.
pub struct Loaded {
    pub documents: Vec<Document>,
    pub pending: Vec<Pending>,
    pub errors: Vec<String>,
}

/// The name a document records for the file at `p` (its file name).
pub fn display_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

/// The synchronous part of a load (also used by tests and benchmarks).
pub fn load(
    paths: &[PathBuf],
    target: Option<Document>,
    progress: &dyn Fn(String),
) -> (Vec<Document>, Vec<String>) {
    let loaded = load_in_phases(
        paths,
        target,
        progress,
        None,
        etscope_viewer::document::EAGER_STAGE_NODES,
    );
    (loaded.documents, loaded.errors)
}

/// [`load`], handing the batch's programs to `preview` as soon as they are laid out, before
/// ETRecords, ETDumps and debug buffers are attached (only when an ETRecord is among them: the
/// others attach at once). ETRecord stages with more than `eager_stage_nodes` nodes are built
/// when first shown.
pub fn load_in_phases(
    paths: &[PathBuf],
    target: Option<Document>,
    progress: &dyn Fn(String),
    preview: Option<&dyn Fn(Vec<Document>)>,
    eager_stage_nodes: usize,
) -> Loaded {
    let mut errors = Vec::new();
    let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    for p in paths {
        progress(format!("reading {}", display_name(p)));
        // an ETRecord (a zip, often tens of MB) is read from its file when attached, never held
        // whole: only its first bytes are kept to tell its kind
        if is_zip_file(p) {
            let head = b"PK\x03\x04".to_vec();
            match checked_kind(p, &head) {
                Ok(()) => files.push((p.clone(), head)),
                Err(e) => errors.push(e),
            }
            continue;
        }
        match std::fs::read(p) {
            Ok(b) => match checked_kind(p, &b) {
                Ok(()) => files.push((p.clone(), b)),
                Err(e) => errors.push(e),
            },
            Err(e) => errors.push(format!("{}: cannot read: {e}", p.display())),
        }
    }
    let is_program = |b: &[u8]| matches!(FileKind::detect(b), Some(FileKind::Pte | FileKind::Bpte));
    let mut docs: Vec<Document> = Vec::new();
    let mut rest = Vec::new();
    for (p, b) in files {
        if is_program(&b) {
            progress(format!("building the graph of {}", display_name(&p)));
            match Document::from_program_bytes_deferring_passes(&display_name(&p), b) {
                Ok(d) => docs.push(d),
                Err(e) => errors.push(format!("{}: {}", p.display(), strip_name(&e.to_string()))),
            }
        } else {
            rest.push((p, b));
        }
    }
    let had_new = !docs.is_empty();
    // only an ETRecord takes long to attach (its stages are read, built and laid out): then the
    // programs are shown first; ETDumps and debug buffers attach in a blink and would only pay
    // for a second copy of the program
    let slow = rest
        .iter()
        .any(|(_, b)| FileKind::detect(b) == Some(FileKind::Etrecord));
    let mut target = target;
    // ETRecords first (stages), then ETDumps, then debug buffers.
    rest.sort_by_key(|(_, b)| match FileKind::detect(b) {
        Some(FileKind::Etrecord) => 0,
        Some(FileKind::Etdump) => 1,
        _ => 2,
    });
    if let Some(show) = preview.filter(|_| had_new && slow) {
        // the programs go to the window (moved, not copied); the rest is read and prepared here
        // and attached there
        show(docs);
        let mut pending = Vec::new();
        for (p, b) in rest {
            let name = display_name(&p);
            if FileKind::detect(&b) != Some(FileKind::Etrecord) {
                pending.push(Pending::File { path: p, bytes: b });
                continue;
            }
            progress(format!("reading and building the stages of {name}"));
            let prepared = std::fs::File::open(&p)
                .map_err(|e| format!("cannot read: {e}"))
                .and_then(|f| {
                    prepare_etrecord_reader(&name, std::io::BufReader::new(f), eager_stage_nodes)
                        .map_err(|e| e.to_string())
                });
            match prepared {
                Ok(prepared) => pending.push(Pending::Etrecord {
                    prepared: Box::new(prepared),
                    reload: reload_from(&p),
                    path: p,
                }),
                Err(e) => errors.push(format!("{}: {}", p.display(), strip_name(&e))),
            }
        }
        return Loaded {
            documents: Vec::new(),
            pending,
            errors,
        };
    }
    for (p, b) in rest {
        let name = display_name(&p);
        progress(format!("attaching {name}"));
        let mut last_err = None;
        let mut attached = false;
        let mut candidates: Vec<&mut Document> = if had_new {
            docs.iter_mut().collect()
        } else {
            target.iter_mut().collect()
        };
        // a program whose file name matches (model.etrecord ↔ model.pte) is tried first
        let stem = |n: &str| n.rsplit_once('.').map_or(n, |(s, _)| s).to_string();
        let own = stem(&name);
        candidates.sort_by_key(|d| stem(&d.title) != own);
        for d in candidates {
            let result = if FileKind::detect(&b) == Some(FileKind::Etrecord) {
                match std::fs::File::open(&p) {
                    Ok(f) => {
                        // its graphs are freed once the stages are built; lowering and running a
                        // stage read the file again
                        d.attach_etrecord_reader_releasing(
                            &name,
                            std::io::BufReader::new(f),
                            reload_from(&p),
                            eager_stage_nodes,
                        )
                    }
                    Err(e) => {
                        last_err = Some(format!("{name}: cannot read: {e}"));
                        break;
                    }
                }
            } else {
                d.attach(&name, &b)
            };
            match result {
                Ok(()) => {
                    declare_capture_clock(d, &p, &b);
                    attached = true;
                    break;
                }
                Err(e) => last_err = Some(e.to_string()),
            }
        }
        if !attached {
            if FileKind::detect(&b) == Some(FileKind::Etrecord) && !had_new && target.is_none() {
                let opened = std::fs::read(&p)
                    .map_err(|e| format!("cannot read: {e}"))
                    .and_then(|bytes| {
                        Document::from_etrecord_bytes(&name, &bytes).map_err(|e| e.to_string())
                    });
                match opened {
                    Ok(d) => docs.push(d),
                    Err(e) => {
                        errors.push(format!("{}: {}", p.display(), strip_name(&e.to_string())))
                    }
                }
            } else {
                let why = last_err.map(|e| strip_name(&e)).unwrap_or_else(|| {
                    "no program is open to attach it to; open its .pte first".into()
                });
                errors.push(format!("{}: {why}", p.display()));
            }
        }
    }
    // without a preview on screen the pass stages cost no more here than later: added now;
    // with one, the window adds them once the preview is gone (`pass_stages_deferred`)
    if !(had_new && slow) {
        for d in docs.iter_mut().filter(|d| d.pass_stages_deferred) {
            progress(format!("running the passes on {}", d.title));
            d.add_pass_stages();
        }
    }
    if let Some(t) = target {
        docs.insert(0, t);
    }
    Loaded {
        documents: docs,
        pending: Vec::new(),
        errors,
    }
}

/// Reads the ETRecord at `path` again: whole, or one stage's graph.
fn reload_from(path: &Path) -> EtrecordReload {
    let open = |path: &Path| {
        std::fs::File::open(path)
            .map(std::io::BufReader::new)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))
    };
    let (whole_path, stage_path) = (path.to_path_buf(), path.to_path_buf());
    EtrecordReload {
        whole: std::sync::Arc::new(move || {
            etscope_core::formats::etrecord::ETRecord::parse_reader(open(&whole_path)?)
                .map_err(|e| format!("{}: {e}", whole_path.display()))
        }),
        stage: std::sync::Arc::new(move |entry, size| {
            etscope_core::formats::etrecord::ETRecord::read_stage(open(&stage_path)?, entry, size)
                .map_err(|e| format!("{}: {e}", stage_path.display()))
        }),
    }
}

/// Attaches what a load prepared for the previewed `docs` (on the window's thread): each file
/// to the document whose program it belongs to, the one of the same name first; one error line
/// per file no document takes.
pub fn attach_pending(docs: &mut [Document], pending: Vec<Pending>, errors: &mut Vec<String>) {
    let stem = |n: &str| n.rsplit_once('.').map_or(n, |(s, _)| s).to_string();
    for item in pending {
        let path = match &item {
            Pending::Etrecord { path, .. } | Pending::File { path, .. } => path.clone(),
        };
        let name = display_name(&path);
        let own = stem(&name);
        let mut order: Vec<usize> = (0..docs.len()).collect();
        order.sort_by_key(|&i| stem(&docs[i].title) != own);
        let mut last_err = None;
        let mut attached = false;
        match item {
            Pending::Etrecord {
                prepared, reload, ..
            } => {
                let taker =
                    order
                        .iter()
                        .copied()
                        .find(|&i| match docs[i].accepts_etrecord(&prepared) {
                            Ok(()) => true,
                            Err(e) => {
                                last_err = Some(e.to_string());
                                false
                            }
                        });
                if let Some(i) = taker {
                    match docs[i].attach_prepared_etrecord(*prepared, Some(reload)) {
                        Ok(()) => attached = true,
                        Err(e) => last_err = Some(e.to_string()),
                    }
                }
            }
            Pending::File { bytes, .. } => {
                for &i in &order {
                    match docs[i].attach(&name, &bytes) {
                        Ok(()) => {
                            declare_capture_clock(&mut docs[i], &path, &bytes);
                            attached = true;
                            break;
                        }
                        Err(e) => last_err = Some(e.to_string()),
                    }
                }
            }
        }
        if !attached {
            let why = last_err.map(|e| strip_name(&e)).unwrap_or_else(|| {
                "no program is open to attach it to; open its .pte first".into()
            });
            errors.push(format!("{}: {why}", path.display()));
        }
    }
}

/// The file's kind agrees with its name ([`super::kind_of`]); a debug buffer (`.bin`, raw bytes
/// with no identifier) is taken as one and checked when it attaches.
fn checked_kind(p: &Path, bytes: &[u8]) -> Result<(), String> {
    let raw_bin = p.extension().is_some_and(|e| e.eq_ignore_ascii_case("bin"))
        && !bytes.is_empty()
        && FileKind::detect(bytes).is_none();
    if raw_bin {
        return Ok(());
    }
    super::kind_of(p, bytes)
        .map(drop)
        .map_err(|e| e.to_string())
}

/// Whether `p` starts like a zip archive (an ETRecord).
fn is_zip_file(p: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 4];
    std::fs::File::open(p)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && &head == b"PK\x03\x04"
}

/// Errors from `viewer` start with the bare file name; the loader prefixes the full path instead.
fn strip_name(e: &str) -> String {
    e.split_once(": ")
        .map(|(_, rest)| rest.to_string())
        .unwrap_or_else(|| e.to_string())
}

/// What a set of files became, in words both the window and `etscope open` show: per document
/// its title, the files it holds, its stages and whether a profile and captured tensors came
/// with it; then one error line per file none took.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Opened {
    pub documents: Vec<OpenedDocument>,
    pub errors: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct OpenedDocument {
    pub title: String,
    pub files: Vec<String>,
    pub stages: Vec<String>,
    pub profile: bool,
    pub captured_tensors: usize,
}

impl Opened {
    /// The summary of documents and the errors of their load.
    pub fn of(documents: &[Document], errors: &[String]) -> Opened {
        Opened {
            documents: documents
                .iter()
                .map(|d| OpenedDocument {
                    title: d.title.clone(),
                    files: d.files.clone(),
                    stages: d.stages.iter().map(|s| s.name.clone()).collect(),
                    profile: d.profile.is_some(),
                    captured_tensors: d.captured.len(),
                })
                .collect(),
            errors: errors.to_vec(),
        }
    }
}

/// The files a load opens for `given`: those, and (unless `siblings` is off) the ETRecord,
/// ETDump, debug buffer and input found beside each program by name ([`crate::siblings`]).
pub fn with_siblings(given: &[PathBuf], siblings: bool) -> (Vec<PathBuf>, Vec<PathBuf>) {
    if siblings {
        crate::siblings::with_files_beside(given, &[])
    } else {
        (given.to_vec(), Vec::new())
    }
}

/// An ETDump saved by etscope from a target that declared its clock holds nanoseconds; its
/// raw stream beside it (`capture_paths`), or the ETDump just attached, says so. The window then
/// shows µs, as `profile` does.
fn declare_capture_clock(doc: &mut Document, path: &std::path::Path, bytes: &[u8]) {
    if FileKind::detect(bytes) != Some(FileKind::Etdump) {
        return;
    }
    let target = doc
        .etdump
        .as_ref()
        .and_then(|dump| super::capture_target(path, dump));
    if let Some(t) = target {
        doc.declared_time = Some(etscope_viewer::document::DeclaredTime::from_target(
            t.tick_hz,
            &t.core,
            etscope_profiler::session::is_emulated(&t.core),
        ));
    }
}
