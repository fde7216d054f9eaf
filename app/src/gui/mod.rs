//! The desktop window (eframe): documents with their stages, graph canvas, inspector, search,
//! profile table / timeline / heat overlay, memory map, tensors and exports. State that persists
//! lives in [`settings::Settings`]; user actions become [`Command`]s applied after drawing.

pub mod busy;
pub mod host_core;
pub mod live;
pub mod live_tab;
pub mod loader;
pub mod lowering;
mod panels;
pub use panels::SEARCH_ID;
pub mod settings;

use std::path::PathBuf;

use eframe::egui;
use etscope_viewer::document::Document;
use etscope_viewer::graph_view::GraphView;
use etscope_viewer::memory_view::MemoryViewState;
use etscope_viewer::neighborhood::Neighbourhood;
use etscope_viewer::profile_view::{ProfileTableState, Span, TimelineState};
use etscope_viewer::search::Hit;

use loader::{LoadJob, LoadMessage};
use settings::Settings;

/// The main area's views.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tab {
    Graph,
    Profile,
    Timeline,
    Memory,
    Diff,
    Live,
}

impl Tab {
    /// Parses `graph|profile|timeline|memory`.
    pub fn parse(s: &str) -> Option<Tab> {
        match s {
            "graph" | "stages" | "inspector" => Some(Tab::Graph),
            "profile" => Some(Tab::Profile),
            "timeline" => Some(Tab::Timeline),
            "memory" => Some(Tab::Memory),
            "diff" => Some(Tab::Diff),
            "live" => Some(Tab::Live),
            _ => None,
        }
    }
}

/// View state of one open document.
pub struct DocView {
    pub doc: Document,
    pub stage: usize,
    pub views: Vec<GraphView>,
    pub search: String,
    pub hits: Vec<Hit>,
    pub profile_table: ProfileTableState,
    pub timeline: TimelineState,
    pub timeline_runs: Vec<Vec<Span>>,
    pub memory: Vec<MemoryViewState>,
    pub heat: bool,
    /// The heat overlay of (stage, document revision), computed once, not per frame.
    heat_cache: Option<((usize, u64), etscope_viewer::diff_view::NodeColors)>,
    pub neighbourhood: Option<Neighbourhood>,
    /// Two stages side by side in the Graph tab.
    pub side_by_side: Option<etscope_viewer::stage_compare::StageCompare>,
    /// The comparison shown in the Diff tab, with the other side's stage.
    pub diff: Option<(
        etscope_viewer::diff_view::DiffView,
        etscope_viewer::document::StageView,
    )>,
    /// Shown while its files are still being attached; the loaded document replaces it.
    pub preview: bool,
    /// Where its files came from: chosen, found beside the program, removed by the user.
    pub sources: DocSources,
    /// Why the last comparison could not be made, shown in the Diff tab itself.
    pub diff_error: Option<String>,
    /// Every planner's placement of the plan's tensors per arena (Memory tab), computed when
    /// first shown.
    pub replan: Option<Vec<etscope_core::plan::alternatives::ArenaAlternatives>>,
    /// The program's whole RAM budget (Memory tab), computed with `replan`.
    pub budget: Option<etscope_core::plan::budget::RamBudget>,
    /// The planner drawn beside the program's own plan (`best`: the smallest).
    pub compare_plan: String,
    /// "Lower for": the choices and a running lowering.
    pub lowering: lowering::LoweringState,
    /// The program's pass stages being computed after a load (see
    /// `Document::pass_stages_deferred`).
    pub pass_job: Option<std::sync::mpsc::Receiver<Vec<etscope_viewer::document::StageView>>>,
    /// A stage being built because it is shown (see `StageView::unbuilt`): its ETRecord entry
    /// and the worker's result.
    pub stage_build: Option<StageBuild>,
    /// ETRecord entries whose stage could not be built (said once; not tried again).
    pub stage_build_failed: Vec<String>,
}

/// A stage built on a worker thread: the ETRecord entry and the result.
pub struct StageBuild {
    pub entry: String,
    pub rx: std::sync::mpsc::Receiver<Result<etscope_viewer::document::StageView, String>>,
}

/// Starts building the shown stage of `dv` when it waits to be built and nothing builds yet.
fn start_stage_build(dv: &mut DocView, ctx: &egui::Context) {
    if dv.stage_build.is_some() {
        return;
    }
    let Some((entry, build)) = dv.doc.stage_builder(dv.stage) else {
        return;
    };
    if dv.stage_build_failed.contains(&entry) {
        return;
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let ctx = ctx.clone();
    std::thread::spawn(move || {
        let _ = tx.send(build());
        ctx.request_repaint();
    });
    dv.stage_build = Some(StageBuild { entry, rx });
}

/// Computes a loaded document's deferred pass stages in a worker (the load's peak is over by
/// then: the preview it replaced is gone).
fn start_pass_stages(dv: &mut DocView, ctx: &egui::Context) {
    if !dv.doc.pass_stages_deferred {
        return;
    }
    // most programs have nothing a pass changes: then no copy of their graph is made
    let Some(graph) = dv
        .doc
        .pte_graph()
        .filter(|g| etscope_viewer::document::program_passes_may_change(g))
        .cloned()
    else {
        dv.doc.pass_stages_deferred = false;
        return;
    };
    let (tx, rx) = std::sync::mpsc::channel();
    let ctx = ctx.clone();
    std::thread::spawn(move || {
        let _ = tx.send(etscope_viewer::document::pass_stage_views(graph));
        ctx.request_repaint();
    });
    dv.pass_job = Some(rx);
}

/// The files of one document by origin, so a file found beside the program can be removed
/// (the document is reopened without it) and is not found again.
#[derive(Debug, Clone, Default)]
pub struct DocSources {
    /// Opened by the user (command line, dialog, drop).
    pub given: Vec<PathBuf>,
    /// Found beside a program by name and attached ([`crate::siblings`]).
    pub found: Vec<PathBuf>,
    /// Found once, removed by the user: not looked for again.
    pub declined: Vec<PathBuf>,
}

impl DocView {
    pub fn new(doc: Document) -> DocView {
        let stage = doc.pte_stage.unwrap_or(0);
        let views = doc.stages.iter().map(|_| GraphView::default()).collect();
        let timeline_runs = doc
            .etdump
            .as_ref()
            .map(etscope_viewer::profile_view::timeline)
            .unwrap_or_default();
        let arenas = doc.memory.as_ref().map_or(0, |m| m.arenas.len());
        DocView {
            heat: doc.profile.is_some(),
            heat_cache: None,
            doc,
            stage,
            views,
            search: String::new(),
            hits: Vec::new(),
            profile_table: ProfileTableState::default(),
            timeline: TimelineState::default(),
            timeline_runs,
            memory: vec![MemoryViewState::default(); arenas],
            neighbourhood: None,
            diff: None,
            side_by_side: None,
            preview: false,
            sources: DocSources::default(),
            diff_error: None,
            replan: None,
            stage_build: None,
            stage_build_failed: Vec::new(),
            budget: None,
            compare_plan: "best".into(),
            lowering: lowering::LoweringState::default(),
            pass_job: None,
        }
    }

    /// The profile heat overlay of the current stage, when shown (cached per stage and
    /// document revision).
    pub fn heat_overlay(&mut self) -> Option<&[Option<egui::Color32>]> {
        if !self.heat || Some(self.stage) != self.doc.pte_stage {
            return None;
        }
        let profile = self.doc.profile.as_ref()?;
        let key = (self.stage, self.doc.revision);
        if self.heat_cache.as_ref().map(|c| c.0) != Some(key) {
            let stage = self.doc.stages.get(self.stage)?;
            self.heat_cache = Some((
                key,
                etscope_viewer::profile_view::heat_overlay(&stage.graph, profile),
            ));
        }
        self.heat_cache.as_ref().map(|c| c.1.as_slice())
    }

    /// The selected node of the current stage.
    pub fn selected(&self) -> Option<usize> {
        self.views.get(self.stage).and_then(|v| v.selected)
    }

    /// Selects (and centers) a node of the current stage.
    pub fn select(&mut self, node: usize) {
        if let Some(v) = self.views.get_mut(self.stage) {
            v.focus(node);
        }
        self.neighbourhood = self
            .doc
            .stages
            .get(self.stage)
            .map(|s| Neighbourhood::new(s, node));
    }

    /// Switches stage, carrying the selection over through debug handles.
    pub fn switch_stage(&mut self, to: usize) {
        self.side_by_side = None;
        if to >= self.doc.stages.len() || to == self.stage {
            return;
        }
        let carried = self
            .selected()
            .and_then(|n| self.doc.corresponding(self.stage, n, to).first().copied());
        self.stage = to;
        match carried {
            Some(n) => self.select(n),
            None => self.neighbourhood = None,
        }
    }

    /// Selects the node of instruction `iid` in the `.pte` stage.
    pub fn select_instruction(&mut self, iid: usize) {
        if let Some(pte) = self.doc.pte_stage {
            self.stage = pte;
            if let Some(n) = self.doc.stages[pte]
                .graph
                .node_for_instruction(iid)
                .map(|n| n.id)
            {
                self.select(n);
            }
        }
    }
}

/// What the active document is compared against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffTarget {
    /// Another open document (index).
    Document(usize),
    /// The tensors its ETDump + debug buffer captured on the device.
    Device,
    /// One of its ETRecord stages (index into the document's stages), run with its weights.
    Stage(usize),
}

/// Deferred actions, applied after the frame is drawn.
pub enum Command {
    Compare(DiffTarget),
    Open(Vec<PathBuf>),
    OpenDialog,
    CloseDocument(usize),
    /// Copy a saved live capture (and its companions) to a name the user picks.
    SaveCaptureAs(PathBuf),
    /// Reopen a document without a file that was found beside its program.
    RemoveFound {
        doc: usize,
        path: PathBuf,
    },
    Export(panels::ExportKind),
    /// Show another method of a document's program (the method list in the menu bar).
    SelectMethod {
        doc: usize,
        method: String,
    },
}

/// Keyboard shortcuts, as Help lists them (Ctrl is Cmd on macOS).
pub const SHORTCUTS: &[(&str, &str)] = &[
    ("Ctrl+O", "open files"),
    ("Ctrl+F", "search the graph"),
    ("Ctrl+W", "close the document"),
    ("F", "fit the graph (both graphs in Diff)"),
    ("N / P", "next / previous divergence in Diff"),
    ("Enter", "in the search box: select the first hit"),
    ("wheel, drag", "zoom, pan; double-click resets a chart"),
];

/// Startup options from the command line.
#[derive(Debug, Clone, Default)]
pub struct StartOptions {
    pub files: Vec<PathBuf>,
    pub tab: Option<Tab>,
    pub stage: Option<String>,
    pub select: Option<String>,
    /// A stage to show side by side with the current one.
    pub side_by_side: Option<String>,
    /// `--lower TARGET`: lower the ETRecord for this core once loaded.
    pub lower: Option<String>,
    /// Save a screenshot of the window here once loading is done, then quit.
    pub screenshot: Option<PathBuf>,
    /// Start a live session on the emulated board with this many inferences once loaded.
    pub live_board: Option<u32>,
    /// `--timings`: when the command line was read; the window prints its first-graph and
    /// all-attached times since then and quits.
    pub timings: Option<std::time::Instant>,
    /// Draw nothing until every file is attached (how the window loaded before the program's
    /// graph was shown first; kept to measure the difference).
    pub no_preview: bool,
    /// Window size in points (`--size`).
    pub size: Option<[f32; 2]>,
    /// `--no-siblings`: open only the files given.
    pub no_siblings: bool,
    /// ETRecord stages with more nodes are built when first shown (`None`:
    /// `etscope_viewer::document::EAGER_STAGE_NODES`).
    pub eager_stage_nodes: Option<usize>,
}

/// What a comparison's worker sends back.
type DiffResult = Result<
    (
        etscope_core::analysis::diff::DiffReport,
        etscope_core::analysis::diff::Source,
        etscope_core::analysis::diff::Source,
    ),
    String,
>;

/// A comparison running off the UI thread.
pub struct DiffJob {
    pub doc: usize,
    stage_b: etscope_viewer::document::StageView,
    rx: std::sync::mpsc::Receiver<DiffResult>,
    pub started: std::time::Instant,
    /// Set by the Cancel button: the host runs stop at their next instruction.
    pub cancel: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// The application.
pub struct EtscopeApp {
    pub settings: Settings,
    pub docs: Vec<DocView>,
    pub active: usize,
    pub tab: Tab,
    pub job: Option<LoadJob>,
    /// A comparison running on a worker thread.
    pub diff_job: Option<DiffJob>,
    /// The live capture (Live tab) and the document it feeds.
    pub live: Option<(usize, live::LiveSession)>,
    pub live_form: live_tab::LiveForm,
    /// The core and CMSIS-NN version host runs model (Diff, inspector notes).
    pub host: host_core::HostChoice,
    pub messages: Vec<String>,
    pub commands: Vec<Command>,
    start: StartOptions,
    start_applied: bool,
    screenshot_state: ScreenshotState,
    pending_png: Option<(PathBuf, egui::Rect)>,
    /// `--timings`: what has been reported so far.
    timings_reported: TimingsReported,
    /// The origin of the files of the load running now (for its documents).
    loading_sources: DocSources,
}

/// The `--timings` milestones already printed.
#[derive(Debug, Default)]
struct TimingsReported {
    first_graph: bool,
    attached: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ScreenshotState {
    Idle,
    Waiting(u32),
    Requested,
}

impl EtscopeApp {
    /// A window opening `start.files`, with settings restored from `storage`.
    pub fn new(
        ctx: &egui::Context,
        storage: Option<&dyn eframe::Storage>,
        start: StartOptions,
    ) -> EtscopeApp {
        let settings: Settings = storage
            .and_then(|s| eframe::get_value(s, Settings::KEY))
            .unwrap_or_default();
        let mut app = EtscopeApp {
            settings,
            docs: Vec::new(),
            active: 0,
            tab: start.tab.unwrap_or(Tab::Graph),
            job: None,
            diff_job: None,
            live: None,
            live_form: live_tab::LiveForm::default(),
            host: host_core::HostChoice::default(),
            messages: Vec::new(),
            commands: Vec::new(),
            start_applied: false,
            screenshot_state: ScreenshotState::Idle,
            pending_png: None,
            timings_reported: TimingsReported::default(),
            loading_sources: DocSources::default(),
            start,
        };
        if !app.start.files.is_empty() {
            let files = app.start.files.clone();
            app.open(files, ctx);
        }
        app
    }

    /// Starts opening files in the background; a program brings the files beside it that its
    /// name points to ([`crate::siblings`]), announced and removable.
    pub fn open(&mut self, paths: Vec<PathBuf>, ctx: &egui::Context) {
        self.open_declining(paths, Vec::new(), ctx);
    }

    /// [`Self::open`], not bringing the files in `declined`.
    fn open_declining(&mut self, paths: Vec<PathBuf>, declined: Vec<PathBuf>, ctx: &egui::Context) {
        if paths.is_empty() || self.job.is_some() {
            return;
        }
        self.settings.remember(&paths);
        let (batch, found) = if self.start.no_siblings {
            (paths.clone(), Vec::new())
        } else {
            crate::siblings::with_files_beside(&paths, &declined)
        };
        // announced under Stages, each with its remove button
        let programs_in_batch = paths.iter().any(|p| crate::siblings::is_program(p));
        let (target, mut sources) = if programs_in_batch || self.docs.is_empty() {
            (None, DocSources::default())
        } else {
            let i = self.active.min(self.docs.len() - 1);
            let dv = self.docs.remove(i);
            (Some(dv.doc), dv.sources)
        };
        sources.given.extend(paths);
        sources.found.extend(found);
        sources.declined.extend(declined);
        self.loading_sources = sources;
        self.job = Some(loader::start(
            batch,
            target,
            loader::LoadPolicy {
                preview: !self.start.no_preview,
                eager_stage_nodes: self
                    .start
                    .eager_stage_nodes
                    .unwrap_or(etscope_viewer::document::EAGER_STAGE_NODES),
            },
            ctx.clone(),
        ));
    }

    /// Applies finished loads.
    fn poll_job(&mut self, ctx: &egui::Context) {
        let Some(job) = &mut self.job else { return };
        let mut done = None;
        loop {
            match job.rx.try_recv() {
                Ok(LoadMessage::Progress(p)) => job.progress = p,
                Ok(LoadMessage::Preview(documents)) => {
                    let first = self.docs.len();
                    for d in documents {
                        let mut dv = DocView::new(d);
                        dv.preview = true;
                        self.docs.push(dv);
                    }
                    if self.docs.len() > first {
                        self.active = first;
                    }
                }
                Ok(LoadMessage::Done {
                    documents,
                    pending,
                    errors,
                }) => done = Some((documents, pending, errors)),
                Err(std::sync::mpsc::TryRecvError::Empty) => break,
                Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                    if done.is_none() {
                        done = Some((
                            Vec::new(),
                            Vec::new(),
                            vec!["opening stopped unexpectedly (the loader thread ended)".into()],
                        ));
                    }
                    break;
                }
            }
        }
        if let Some((mut documents, pending, mut errors)) = done {
            if self.docs.iter().any(|dv| dv.preview) {
                // the previews are the job's programs: the files read for them are attached to
                // them here, not to a copy, and they stay when none could be (an ETRecord that
                // failed to read is an error line, never the program gone)
                let mut shown: Vec<Document> = self
                    .docs
                    .iter_mut()
                    .filter(|dv| dv.preview)
                    .map(|dv| std::mem::take(&mut dv.doc))
                    .collect();
                loader::attach_pending(&mut shown, pending, &mut errors);
                shown.append(&mut documents);
                documents = shown;
            }
            let sources = std::mem::take(&mut self.loading_sources);
            // a file found by name that does not fit is skipped, the program kept
            self.messages.extend(errors.into_iter().map(|e| {
                if sources
                    .found
                    .iter()
                    .any(|p| e.starts_with(&format!("{}:", p.display())))
                {
                    format!("{e} (found beside the program by name; skipped)")
                } else {
                    e
                }
            }));
            // the previews give way to the documents with everything attached
            // (a preview being looked at keeps its camera and selection on the program's stage)
            let carried = self
                .docs
                .get(self.active)
                .filter(|dv| dv.preview)
                .and_then(|dv| dv.views.get(dv.stage))
                .map(|v| v.carried_over());
            self.docs.retain(|dv| !dv.preview);
            self.active = self.active.min(self.docs.len().saturating_sub(1));
            let first_new = self.docs.len();
            for d in documents {
                let mut dv = DocView::new(d);
                dv.sources = sources.belonging_to(&dv.doc);
                start_pass_stages(&mut dv, ctx);
                self.docs.push(dv);
            }
            if self.docs.len() > first_new {
                self.active = first_new;
                if let Some(view) = carried {
                    let dv = &mut self.docs[first_new];
                    if let Some(pte) = dv.doc.pte_stage {
                        if dv.stage == pte {
                            if let Some(slot) = dv.views.get_mut(pte) {
                                *slot = view;
                            }
                        }
                    }
                }
            }
            self.job = None;
        }
    }

    /// Starts building the shown stage when it waits to be built, and puts built stages in
    /// place (a failure is a message; the stage stays unbuilt).
    fn poll_stage_builds(&mut self, ctx: &egui::Context) {
        if let Some(dv) = self.docs.get_mut(self.active) {
            start_stage_build(dv, ctx);
        }
        for dv in &mut self.docs {
            let Some(job) = &dv.stage_build else { continue };
            match job.rx.try_recv() {
                Ok(result) => {
                    let entry = job.entry.clone();
                    dv.stage_build = None;
                    match result {
                        Ok(view) => {
                            if let Some(i) = dv.doc.set_built_stage(&entry, view) {
                                dv.views[i] = GraphView::default();
                            }
                        }
                        Err(e) => {
                            // said once; the stage stays unbuilt and says it could not be built
                            self.messages
                                .push(format!("building the stage {entry}: {e}"));
                            dv.stage_build_failed.push(entry);
                        }
                    }
                }
                Err(std::sync::mpsc::TryRecvError::Empty) => {}
                Err(std::sync::mpsc::TryRecvError::Disconnected) => dv.stage_build = None,
            }
        }
    }

    /// Adds the pass stages computed after a load.
    fn poll_pass_jobs(&mut self) {
        for dv in &mut self.docs {
            let Some(rx) = &dv.pass_job else { continue };
            match rx.try_recv() {
                Ok(views) => {
                    dv.doc.set_pass_stages(views);
                    dv.views
                        .resize_with(dv.doc.stages.len(), GraphView::default);
                    dv.pass_job = None;
                }
                Err(std::sync::mpsc::TryRecvError::Empty) => {}
                Err(std::sync::mpsc::TryRecvError::Disconnected) => dv.pass_job = None,
            }
        }
    }

    /// Applies command-line view options once the first documents are in (their pass stages
    /// too: a stage named on the command line may be one).
    fn apply_start(&mut self, ctx: &egui::Context) {
        if self.start_applied
            || self.job.is_some()
            || self.docs.iter().any(|d| d.pass_job.is_some())
        {
            return;
        }
        self.start_applied = true;
        let Some(dv) = self.docs.get_mut(self.active) else {
            return;
        };
        if let Some(target) = &self.start.lower {
            // lowered right away (not in a worker): the stages it names must exist below
            match etscope_core::lower::Cpu::parse(target) {
                Some(cpu) => {
                    let options = etscope_core::lower::Options {
                        cpu,
                        flow: etscope_core::lower::Flow::Default,
                    };
                    // the panel shows what the stages were lowered for
                    dv.lowering.cpu = cpu;
                    lowering::start(dv, options);
                    if let Some(job) = dv.lowering.job.as_mut() {
                        job.wait();
                    }
                    lowering::poll(dv);
                    if let Some(e) = dv.lowering.error.clone() {
                        self.messages.push(e);
                    }
                }
                None => self
                    .messages
                    .push(format!("--lower: unknown target {target:?}")),
            }
        }
        let Some(dv) = self.docs.get_mut(self.active) else {
            return;
        };
        if let Some(s) = &self.start.stage {
            if let Some(i) = dv.doc.stages.iter().position(|st| &st.name == s) {
                dv.switch_stage(i);
            }
        }
        if let Some(other) = &self.start.side_by_side {
            if let Some(j) = dv.doc.stages.iter().position(|st| &st.name == other) {
                // earlier stage on the left
                let (l, r) = if j < dv.stage {
                    (j, dv.stage)
                } else {
                    (dv.stage, j)
                };
                dv.side_by_side = etscope_viewer::stage_compare::StageCompare::new(&dv.doc, l, r);
            }
        }
        if let Some(q) = self.start.select.clone() {
            let graph = &dv.doc.stages[dv.stage].graph;
            if let Some(hit) = etscope_viewer::search::search(graph, &q, 1).first() {
                let n = hit.node;
                dv.select(n);
                let stage = dv.stage;
                if let Some(sc) = dv.side_by_side.as_mut() {
                    let doc = &dv.doc;
                    sc.select(doc, n, sc.left == stage);
                }
            }
        }
        if self.start.tab == Some(Tab::Diff) {
            let target = if self.docs.len() > 1 {
                DiffTarget::Document((self.active + 1) % self.docs.len())
            } else {
                DiffTarget::Device
            };
            if let Err(e) = self.compare(target) {
                self.messages.push(e);
            }
        }
        if let Some(runs) = self.start.live_board {
            self.live_form.kind = live_tab::TargetKind::Board;
            self.live_form.runs = runs.max(1);
            self.tab = Tab::Live;
            if let Err(e) = live_tab::start(self, ctx) {
                self.messages.push(e);
            }
        }
        if self.start.screenshot.is_some() {
            self.screenshot_state = ScreenshotState::Waiting(12);
        }
    }

    /// The keyboard shortcuts listed in Help ▸ Keyboard shortcuts ([`SHORTCUTS`]).
    fn handle_shortcuts(&mut self, ctx: &egui::Context) {
        use egui::{Key, KeyboardShortcut, Modifiers};
        let pressed = |m: Modifiers, k: Key| {
            ctx.input_mut(|i| i.consume_shortcut(&KeyboardShortcut::new(m, k)))
        };
        if pressed(Modifiers::COMMAND, Key::O) {
            self.commands.push(Command::OpenDialog);
        }
        if pressed(Modifiers::COMMAND, Key::F) {
            self.tab = Tab::Graph;
            ctx.memory_mut(|m| m.request_focus(egui::Id::new(panels::SEARCH_ID)));
        }
        if pressed(Modifiers::COMMAND, Key::W) && !self.docs.is_empty() {
            self.commands.push(Command::CloseDocument(self.active));
        }
        // plain keys act only while no text field has the keyboard
        if ctx.egui_wants_keyboard_input() {
            return;
        }
        let Some(dv) = self.docs.get_mut(self.active) else {
            return;
        };
        if pressed(Modifiers::NONE, Key::F) {
            match (&mut dv.diff, self.tab) {
                (Some((view, _)), Tab::Diff) => {
                    view.left.fit();
                    view.right.fit();
                }
                _ => {
                    if let Some(v) = dv.views.get_mut(dv.stage) {
                        v.fit();
                    }
                }
            }
        }
        for (key, forward) in [(Key::N, true), (Key::P, false)] {
            if pressed(Modifiers::NONE, key) {
                if let Some((view, _)) = &mut dv.diff {
                    self.tab = Tab::Diff;
                    if !view.step_divergence(forward) {
                        self.messages
                            .push("no row crosses the divergence threshold".into());
                    }
                }
            }
        }
    }

    fn handle_dropped_files(&mut self, ctx: &egui::Context) {
        let dropped: Vec<PathBuf> = ctx.input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        });
        if !dropped.is_empty() {
            self.commands.push(Command::Open(dropped));
        }
    }

    fn apply_commands(&mut self, ctx: &egui::Context) {
        for c in std::mem::take(&mut self.commands) {
            match c {
                Command::Open(paths) => self.open(paths, ctx),
                Command::OpenDialog => {
                    let started = std::time::Instant::now();
                    let picked = rfd::FileDialog::new()
                        .add_filter(
                            "ExecuTorch artifacts",
                            &["pte", "bpte", "etdp", "etrecord", "bin"],
                        )
                        .add_filter("all files", &["*"])
                        .pick_files();
                    match picked {
                        Some(paths) => self.open(paths, ctx),
                        None if started.elapsed().as_millis() < 50 => self.messages.push(
                            "no file dialog is available here (it needs xdg-desktop-portal or zenity): pass files on the command line or drop them on the window".into(),
                        ),
                        None => {}
                    }
                }
                Command::SaveCaptureAs(saved) => {
                    let started = std::time::Instant::now();
                    let name = saved
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_else(|| "capture.etdp".into());
                    let picked = rfd::FileDialog::new()
                        .add_filter("ETDump", &["etdp"])
                        .set_file_name(name)
                        .save_file();
                    match picked {
                        Some(to) => match live_tab::copy_capture(&saved, &to) {
                            Ok(()) => self
                                .messages
                                .push(format!("capture saved as {}", to.display())),
                            Err(e) => self.messages.push(e),
                        },
                        None if started.elapsed().as_millis() < 50 => self.messages.push(
                            "no file dialog is available here (it needs xdg-desktop-portal or zenity): the capture stays where it was saved".into(),
                        ),
                        None => {}
                    }
                }
                Command::CloseDocument(i) => {
                    if i < self.docs.len() {
                        self.take_document(i);
                    }
                }
                Command::RemoveFound { doc, path } => {
                    if self.job.is_none() && doc < self.docs.len() {
                        if matches!(&self.live, Some((d, _)) if *d == doc) {
                            self.messages
                                .push("stop the live session before removing a file".into());
                            continue;
                        }
                        let dv = self.take_document(doc);
                        let mut declined = dv.sources.declined.clone();
                        declined.push(path.clone());
                        let given: Vec<PathBuf> = dv
                            .sources
                            .given
                            .into_iter()
                            .filter(|p| p != &path)
                            .collect();
                        self.open_declining(given, declined, ctx);
                    }
                }
                Command::SelectMethod { doc, method } => self.select_method(doc, &method),
                Command::Export(kind) => panels::export(self, kind, ctx),
                Command::Compare(target) => {
                    let result = self.compare(target);
                    if let Some(dv) = self.docs.get_mut(self.active) {
                        dv.diff_error = result.as_ref().err().cloned();
                    }
                    if let Err(e) = result {
                        self.messages.push(e);
                    }
                }
            }
        }
    }

    fn handle_screenshots(&mut self, ctx: &egui::Context) {
        let images: Vec<std::sync::Arc<egui::ColorImage>> = ctx.input(|i| {
            i.raw
                .events
                .iter()
                .filter_map(|e| {
                    if let egui::Event::Screenshot { image, .. } = e {
                        Some(image.clone())
                    } else {
                        None
                    }
                })
                .collect()
        });
        for image in images {
            if let Some((path, rect)) = self.pending_png.take() {
                let result = save_png(&image, Some(rect), ctx.pixels_per_point(), &path);
                self.messages.push(match result {
                    Ok(()) => format!("saved {}", path.display()),
                    Err(e) => format!("{}: {e}", path.display()),
                });
            } else if self.screenshot_state == ScreenshotState::Requested {
                if let Some(path) = &self.start.screenshot {
                    if let Err(e) = save_png(&image, None, ctx.pixels_per_point(), path) {
                        eprintln!("etscope: error: {}: {e}", path.display());
                    }
                }
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
        }
        if let ScreenshotState::Waiting(n) = self.screenshot_state {
            let building = self.docs.iter().any(|d| d.stage_build.is_some());
            if self.diff_job.is_some()
                || building
                || self.live.as_ref().is_some_and(|(_, l)| l.running())
            {
                // a comparison, a stage being built or a live capture is still running: the
                // picture waits for it
                ctx.request_repaint();
            } else if n == 0 {
                ctx.send_viewport_cmd(egui::ViewportCommand::Screenshot(egui::UserData::default()));
                self.screenshot_state = ScreenshotState::Requested;
            } else {
                self.screenshot_state = ScreenshotState::Waiting(n - 1);
            }
            ctx.request_repaint();
        }
    }

    /// Removes document `i` (in range): a live session feeding it stops, one feeding a later
    /// document follows its index, the active index stays in range.
    fn take_document(&mut self, i: usize) -> DocView {
        if let Some((d, session)) = &mut self.live {
            match (*d).cmp(&i) {
                std::cmp::Ordering::Equal => {
                    session.stop();
                    self.live = None;
                }
                std::cmp::Ordering::Greater => *d -= 1,
                std::cmp::Ordering::Less => {}
            }
        }
        let dv = self.docs.remove(i);
        self.active = self.active.min(self.docs.len().saturating_sub(1));
        dv
    }

    /// Runs the comparison of the active document against `target` (host runs on the
    /// document's input array).
    /// Replaces document `doc` by its program's method `method` (what was attached to the
    /// method shown before is not carried over: it belongs to that method).
    pub fn select_method(&mut self, doc: usize, method: &str) {
        if matches!(&self.live, Some((d, _)) if *d == doc) {
            self.messages
                .push("stop the live session before showing another method".into());
            return;
        }
        let Some(dv) = self.docs.get(doc) else {
            return;
        };
        match dv.doc.with_method(method) {
            Ok(new) => {
                let sources = dv.sources.clone();
                let mut view = DocView::new(new);
                view.sources = sources;
                self.docs[doc] = view;
                self.messages.push(format!(
                    "showing method {method:?}; attached ETRecords and ETDumps belong to the method shown before and were not carried over"
                ));
            }
            Err(e) => self.messages.push(e.to_string()),
        }
    }

    pub fn compare(&mut self, target: DiffTarget) -> Result<(), String> {
        use etscope_core::analysis::diff::{diff, Source, Threshold};
        use etscope_core::analysis::diff_sources::{
            program_source_cancellable, rewrite_source, stage_source_cancellable,
        };
        if self.diff_job.is_some() {
            return Err("a comparison is already running".into());
        }
        let i = self.active;
        let dv = self.docs.get(i).ok_or("no document")?;
        let pte_a = dv.doc.pte_stage.ok_or("the document has no program")?;
        let input = match target {
            DiffTarget::Document(j) => dv
                .doc
                .input
                .clone()
                .or_else(|| self.docs.get(j).and_then(|o| o.doc.input.clone())),
            DiffTarget::Device | DiffTarget::Stage(_) => dv.doc.input.clone(),
        }
        .ok_or("open an input array (.npy) with the program to run it")?;
        // what the worker needs, owned: a program side per document (program, ETRecord with
        // its export label: a stage and its program match by debug handle, two programs by
        // module) and the other side's stage view
        type Side = (
            String,
            etscope_core::formats::pte::Program,
            Option<(etscope_core::formats::etrecord::ETRecord, String)>,
        );
        let side_of = |doc: &etscope_viewer::document::Document| -> Result<Side, String> {
            let program = doc.program.clone().ok_or("no program")?;
            // host runs diff the default method; another shown here would be compared with it
            let shown = doc.plan().map(|p| p.name.clone()).unwrap_or_default();
            if doc.plan_index != program.default_plan_index() {
                return Err(format!(
                    "Diff runs the program's {:?} method; this window shows {shown:?} (pick it in the method list to compare)",
                    program.default_plan().map_or("", |p| p.name.as_str())
                ));
            }
            let rec = doc
                .whole_etrecord()
                .transpose()?
                .map(|r| (r, format!("ETRecord of {}", doc.title)));
            Ok((doc.title.clone(), program, rec))
        };
        let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = cancel.clone();
        let host = self.host;
        let run = move |(label, program, rec): &Side, input: &etscope_core::tensor::TensorData| {
            let rec = rec.as_ref().map(|(r, e)| (r, e.as_str()));
            let label = match host.target {
                Some(t) => format!("{label} as {}", t.name()),
                None => label.clone(),
            };
            program_source_cancellable(
                &label,
                program,
                rec,
                std::slice::from_ref(input),
                Some(host.device_for(program)),
                Some(flag.clone()),
            )
            .map_err(|e| format!("{label}: {e}"))
        };
        let a_side = side_of(&dv.doc)?;
        enum Other {
            Program(Side),
            Stage(String, etscope_core::formats::etrecord::ETRecord, String),
            /// A pass's rewrite of this document's program.
            Rewrite(String, etscope_core::ir::Graph),
            /// A stage of etscope's lowering of the document's ETRecord.
            Lowered(String, std::sync::Arc<etscope_core::lower::Module>, String),
            Device(Source),
        }
        let (other, stage_b) = match target {
            DiffTarget::Document(j) => {
                let doc = &self.docs.get(j).ok_or("no such document")?.doc;
                let pte_b = doc.pte_stage.ok_or("the other document has no program")?;
                (Other::Program(side_of(doc)?), doc.stages[pte_b].clone())
            }
            DiffTarget::Stage(si)
                if dv.doc.stages.get(si).is_some_and(|v| v.lowering.is_some()) =>
            {
                let view = dv.doc.stages.get(si).ok_or("no such stage")?;
                let module = view
                    .lowering
                    .as_ref()
                    .map(|l| l.module.clone())
                    .ok_or("no such stage")?;
                let export = format!("ETRecord of {}", dv.doc.title);
                (
                    Other::Lowered(view.name.clone(), module, export),
                    view.clone(),
                )
            }
            DiffTarget::Stage(si) if dv.doc.stages.get(si).is_some_and(|v| v.pass.is_some()) => {
                let view = dv.doc.stages.get(si).ok_or("no such stage")?;
                (
                    Other::Rewrite(view.name.clone(), view.graph.clone()),
                    view.clone(),
                )
            }
            DiffTarget::Stage(si) => {
                let view = dv.doc.stages.get(si).ok_or("no such stage")?;
                let rec = dv.doc.whole_etrecord().ok_or("no ETRecord is open")??;
                let export = format!("ETRecord of {}", dv.doc.title);
                (Other::Stage(view.name.clone(), rec, export), view.clone())
            }
            DiffTarget::Device => {
                if dv.doc.captured.is_empty() {
                    return Err("no captured tensors: open the ETDump and its debug buffer (.bin) with the program".into());
                }
                let graph = dv.doc.pte_graph().ok_or("no program graph")?.clone();
                (
                    Other::Device(Source::from_captured(
                        "device (ETDump)",
                        graph,
                        &dv.doc.captured,
                    )),
                    dv.doc.stages[pte_a].clone(),
                )
            }
        };
        // a stage or a pass's rewrite runs on the core the program's side runs on
        let device = host.device_for(&a_side.1);
        let program = a_side.1.clone();
        let flag = cancel.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let result = (|| {
                let a = run(&a_side, &input)?;
                let b = match other {
                    Other::Program(side) => run(&side, &input)?,
                    Other::Stage(name, rec, export) => stage_source_cancellable(
                        &name,
                        &rec,
                        &export,
                        &name,
                        std::slice::from_ref(&input),
                        device,
                        Some(flag),
                    )
                    .map_err(|e| format!("{name}: {e}"))?,
                    Other::Rewrite(name, graph) => rewrite_source(
                        &name,
                        &program,
                        graph,
                        std::slice::from_ref(&input),
                        device,
                        Some(flag),
                    )
                    .map_err(|e| format!("{name}: {e}"))?,
                    Other::Lowered(name, module, export) => etscope_core::lower::execute::source(
                        &name,
                        &export,
                        &module,
                        std::slice::from_ref(&input),
                        device,
                    )
                    .map_err(|e| format!("{name}: {e}"))?,
                    Other::Device(source) => source,
                };
                let report = diff(&a, &b, Threshold::default()).map_err(|e| e.to_string())?;
                Ok((report, a, b))
            })();
            let _ = tx.send(result);
        });
        self.diff_job = Some(DiffJob {
            doc: i,
            stage_b,
            rx,
            started: std::time::Instant::now(),
            cancel,
        });
        self.tab = Tab::Diff;
        Ok(())
    }

    /// Takes a finished comparison from its worker; a worker that died (a panic) is reported,
    /// never waited for.
    fn poll_diff(&mut self) {
        let Some(job) = &self.diff_job else { return };
        let result = match job.rx.try_recv() {
            Ok(r) => r,
            Err(std::sync::mpsc::TryRecvError::Empty) => return,
            Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                Err("the comparison stopped unexpectedly (worker thread panicked)".into())
            }
        };
        let Some(job) = self.diff_job.take() else {
            return;
        };
        match result {
            Ok((report, a, b)) => {
                let mut view = etscope_viewer::diff_view::DiffView::new(report, a, b);
                if let Some(first) = view.report.first_divergence {
                    view.select_row(first);
                }
                if let Some(d) = self.docs.get_mut(job.doc) {
                    d.diff = Some((view, job.stage_b));
                    d.diff_error = None;
                }
            }
            Err(e) => {
                if let Some(d) = self.docs.get_mut(job.doc) {
                    d.diff_error = Some(e.clone());
                }
                self.messages.push(e);
            }
        }
    }

    /// Asks for a PNG of `rect` (the graph canvas) to be saved at `path`.
    pub fn request_png(&mut self, path: PathBuf, rect: egui::Rect, ctx: &egui::Context) {
        self.pending_png = Some((path, rect));
        ctx.send_viewport_cmd(egui::ViewportCommand::Screenshot(egui::UserData::default()));
    }

    /// One frame: draws everything into `ui` and applies what the user did.
    pub fn frame(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        self.poll_job(&ctx);
        self.poll_pass_jobs();
        self.poll_stage_builds(&ctx);
        self.poll_diff();
        for dv in &mut self.docs {
            lowering::poll(dv);
        }
        live_tab::poll(self);
        self.apply_start(&ctx);
        self.handle_dropped_files(&ctx);
        self.handle_shortcuts(&ctx);
        panels::draw(self, ui);
        self.apply_commands(&ctx);
        self.handle_screenshots(&ctx);
        self.report_timings(&ctx);
    }

    /// `--timings`: prints the time since launch of the first frame that drew a graph and of the
    /// first frame with every file attached, then closes the window.
    fn report_timings(&mut self, ctx: &egui::Context) {
        let Some(launched) = self.start.timings else {
            return;
        };
        let ms = launched.elapsed().as_secs_f64() * 1e3;
        let shown = (self.tab == Tab::Graph)
            .then(|| self.docs.get(self.active))
            .flatten()
            .map(|dv| (dv.doc.stages[dv.stage].graph.nodes.len(), dv.preview));
        if let Some((nodes, preview)) = shown {
            if !self.timings_reported.first_graph {
                self.timings_reported.first_graph = true;
                let what = if preview {
                    ", files still attaching"
                } else {
                    ""
                };
                eprintln!("etscope: first graph drawn after {ms:.0} ms ({nodes} nodes{what})");
            }
            if self.job.is_none() && !self.timings_reported.attached {
                self.timings_reported.attached = true;
                let files: usize = self.docs.iter().map(|dv| dv.doc.files.len()).sum();
                let resident = resident_mb()
                    .map(|(now, peak)| format!(", {now:.0} MB resident (peak {peak:.0} MB)"))
                    .unwrap_or_default();
                eprintln!(
                    "etscope: all {files} files attached and drawn after {ms:.0} ms{resident}"
                );
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
        } else if self.job.is_none() && self.start_applied && !self.timings_reported.attached {
            self.timings_reported.attached = true;
            eprintln!("etscope: nothing to draw after {ms:.0} ms");
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
    }
}

impl DocSources {
    /// The part of a batch's origins that ended up in `doc` (matched by file name).
    fn belonging_to(&self, doc: &Document) -> DocSources {
        // the loader records each file under its display name
        let mine = |p: &PathBuf| doc.files.iter().any(|f| *f == loader::display_name(p));
        DocSources {
            given: self.given.iter().filter(|p| mine(p)).cloned().collect(),
            found: self.found.iter().filter(|p| mine(p)).cloned().collect(),
            declined: self.declined.clone(),
        }
    }
}

/// The process's resident memory now and its peak so far, in MB (Linux; `None` elsewhere).
fn resident_mb() -> Option<(f64, f64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb = |key: &str| -> Option<f64> {
        let line = status.lines().find(|l| l.starts_with(key))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    Some((kb("VmRSS:")? * 1024.0 / 1e6, kb("VmHWM:")? * 1024.0 / 1e6))
}

/// Opens the window and runs until it closes.
pub fn run_window(start: StartOptions) -> anyhow::Result<()> {
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_inner_size(start.size.unwrap_or([1500.0, 950.0]))
            .with_title("etscope")
            .with_drag_and_drop(true),
        renderer: eframe::Renderer::Glow,
        // a size asked for on the command line wins over the one the last session left
        persist_window: start.size.is_none(),
        ..Default::default()
    };
    eframe::run_native(
        "etscope",
        options,
        Box::new(move |cc| Ok(Box::new(EtscopeApp::new(&cc.egui_ctx, cc.storage, start)))),
    )
    .map_err(|e| {
        anyhow::anyhow!(
            "cannot open a window: {e} (no display? the subcommands run headless, see --help)"
        )
    })
}

fn save_png(
    image: &egui::ColorImage,
    crop: Option<egui::Rect>,
    ppp: f32,
    path: &std::path::Path,
) -> Result<(), String> {
    let [w, h] = image.size;
    let (x0, y0, x1, y1) = match crop {
        Some(r) => (
            ((r.min.x * ppp).max(0.0) as usize).min(w),
            ((r.min.y * ppp).max(0.0) as usize).min(h),
            ((r.max.x * ppp) as usize).min(w),
            ((r.max.y * ppp) as usize).min(h),
        ),
        None => (0, 0, w, h),
    };
    let (cw, ch) = (x1.saturating_sub(x0), y1.saturating_sub(y0));
    let mut rgba = Vec::with_capacity(cw * ch * 4);
    for y in y0..y1 {
        for x in x0..x1 {
            rgba.extend_from_slice(&image.pixels[y * w + x].to_array());
        }
    }
    let img =
        image::RgbaImage::from_raw(cw as u32, ch as u32, rgba).ok_or("screenshot has no pixels")?;
    img.save(path).map_err(|e| e.to_string())
}

impl eframe::App for EtscopeApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.frame(ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, Settings::KEY, &self.settings);
    }
}
