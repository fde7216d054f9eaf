//! Opening files off the UI thread: reads them, builds documents (parsing, IR, layout, memory
//! plan, profile) and associates ETDumps, ETRecords and debug buffers with their program.
//! It runs as a [`Job`]: progress and the programs to show first come back over a channel, the
//! documents as the job's result; a panic is an error naming the files. The window never waits.

use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver, TryRecvError};

use crate::job::Job;

use etscope_viewer::document::Document;

pub use crate::load::batch::{attach_pending, display_name, load, load_in_phases, Loaded, Pending};

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

/// A load of `paths` that runs `load` instead of the loader (what a test hands the window to see
/// how it takes a load that fails in a way no file makes it, a panic included).
pub fn start_with(
    paths: Vec<PathBuf>,
    ctx: eframe::egui::Context,
    load: impl FnOnce() -> Loaded + Send + 'static,
) -> LoadJob {
    let (_tx, events) = channel();
    let job = Job::spawn("opening", move || ctx.request_repaint(), move |_| load());
    LoadJob {
        events,
        job,
        progress: "opening…".into(),
        paths,
    }
}
