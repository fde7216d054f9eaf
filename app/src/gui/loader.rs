//! Opening files off the UI thread: reads them, builds documents (parsing, IR, layout, memory
//! plan, profile) and associates ETDumps, ETRecords and debug buffers with their program.
//! It runs as a [`Job`]: progress and the programs to show first come back over a channel, the
//! documents as the job's result; a panic is an error naming the files. The window never waits.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, TryRecvError};

use crate::job::Job;

use etscope_core::formats::kind::FileKind;
use etscope_viewer::document::{
    prepare_etrecord_reader, Document, EtrecordReload, PreparedEtrecord,
};

/// What the loader sends while it runs.
enum LoadMessage {
    Progress(String),
    /// The batch's programs, read and laid out, before anything else is attached.
    Preview(Vec<Document>),
}

/// What [`LoadJob::poll`] hands the window, in order.
pub enum LoadEvent {
    /// The batch's programs, to draw at once; `Done` replaces them.
    Preview(Vec<Document>),
    /// The job's documents (new ones, and the target handed in, updated), the files read and
    /// prepared for the previewed documents (the window attaches them: [`attach_pending`]),
    /// and one error line per file that could not be used.
    Done(Loaded),
}

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

/// A running load.
pub struct LoadJob {
    events: Receiver<LoadMessage>,
    job: Job<Loaded>,
    pub progress: String,
    pub paths: Vec<PathBuf>,
}

impl LoadJob {
    /// What arrived since the last poll: previews first, `Done` last once the job ended.
    pub fn poll(&mut self) -> Vec<LoadEvent> {
        // the result first: whatever the loader sent before it returned is in the channel then
        let finished = self.job.poll();
        let mut out = Vec::new();
        loop {
            match self.events.try_recv() {
                Ok(LoadMessage::Progress(p)) => self.progress = p,
                Ok(LoadMessage::Preview(docs)) => out.push(LoadEvent::Preview(docs)),
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
            }
        }
        if let Some(outcome) = finished {
            let names: Vec<String> = self.paths.iter().map(|p| display_name(p)).collect();
            out.push(LoadEvent::Done(outcome.into_result().unwrap_or_else(
                |what| Loaded {
                    documents: Vec::new(),
                    pending: Vec::new(),
                    errors: vec![format!(
                        "{}: {what}; this is a bug in etscope, please report it with the file",
                        names.join(", ")
                    )],
                },
            )));
        }
        out
    }
}

/// The name a document records for the file at `p` (its file name).
pub fn display_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

/// How a load in the window goes.
#[derive(Debug, Clone, Copy)]
pub struct LoadPolicy {
    /// Send the batch's programs as soon as they are laid out (before ETRecords attach).
    pub preview: bool,
    /// ETRecord stages with more nodes are built when first shown
    /// ([`etscope_viewer::document::EAGER_STAGE_NODES`]).
    pub eager_stage_nodes: usize,
}

/// Starts loading `paths`; files that are not programs attach to a program of the same batch,
/// else to `target` (the active document, moved into the job and handed back).
pub fn start(
    paths: Vec<PathBuf>,
    target: Option<Document>,
    policy: LoadPolicy,
    ctx: eframe::egui::Context,
) -> LoadJob {
    let (tx, events) = channel();
    let job_paths = paths.clone();
    let wake = ctx.clone();
    let job = Job::spawn(
        "opening",
        move || wake.request_repaint(),
        move |_| {
            let send = |m: LoadMessage| {
                let _ = tx.send(m);
                ctx.request_repaint();
            };
            let show = |docs| send(LoadMessage::Preview(docs));
            load_in_phases(
                &job_paths,
                target,
                &|s| send(LoadMessage::Progress(s)),
                policy.preview.then_some(&show as &dyn Fn(Vec<Document>)),
                policy.eager_stage_nodes,
            )
        },
    );
    LoadJob {
        events,
        job,
        progress: "opening…".into(),
        paths,
    }
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
            files.push((p.clone(), b"PK\x03\x04".to_vec()));
            continue;
        }
        match std::fs::read(p) {
            Ok(b) if b.is_empty() => errors.push(format!("{}: empty file", p.display())),
            Ok(b) => files.push((p.clone(), b)),
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
