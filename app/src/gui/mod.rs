//! The desktop window (eframe): documents with their stages, graph canvas, inspector, search,
//! profile table / timeline / heat overlay, memory map, tensors and exports. State that persists
//! lives in [`settings::Settings`]; user actions become [`Command`]s applied after drawing.

pub mod busy;
mod commands;
mod compare;
mod doc_view;
pub mod host_core;
pub mod live;
pub mod live_tab;
pub mod load_errors;
pub mod loader;
pub mod lowering;
mod memory_tab;
pub mod numerics;
mod panels;
pub mod part_fit;
mod profile_tab;
mod screenshot;
pub use panels::SEARCH_ID;
pub mod settings;

use std::path::PathBuf;

use eframe::egui;
use etscope_viewer::document::Document;

pub use compare::DiffJob;
use doc_view::start_pass_stages;
pub use doc_view::{
    DocSources, DocView, HeatOverlay, MemoryTabState, ProfileTabState, StageBuild, StageJobs,
};
use loader::{LoadEvent, LoadJob};
use screenshot::{ScreenshotState, TimingsReported};
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
    /// Pick where the next live capture is saved (the Live tab's form).
    ChooseCaptureFile,
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
    /// Profile ▸ Compare with another document's capture.
    CompareProfileWith(usize),
    /// Profile ▸ Compare with a second capture of the program, read from this file.
    CompareCapture(PathBuf),
    /// … picked in a file dialog.
    CompareCaptureDialog,
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
    /// `--data`: a dataset for the Diff tab's comparison over a dataset.
    pub data: Option<PathBuf>,
    /// `--labels`: its class labels.
    pub labels: Option<PathBuf>,
    /// `--eval`: run that comparison once the files are in.
    pub eval: bool,
    /// `--sensitivity`: then the sensitivity sweep.
    pub sensitivity: bool,
    /// `--board-samples N`: the comparison also runs B on the emulated board for N samples.
    pub board_samples: Option<usize>,
    /// `--estimate CORE[@MHZ]`: the Profile tab's core and clock.
    pub estimate: Option<String>,
    /// `--part NAME`: the Memory tab's part.
    pub part: Option<String>,
    /// `--place auto|FILE`: the Memory tab's placement on that part.
    pub place: Option<String>,
    /// `--compare-capture FILE`: Profile ▸ Compare with this second capture of the program.
    pub compare_capture: Option<PathBuf>,
    /// ETRecord stages with more nodes are built when first shown (`None`:
    /// `etscope_viewer::document::EAGER_STAGE_NODES`).
    pub eager_stage_nodes: Option<usize>,
}

/// A document's other method being built on a worker.
pub struct MethodJob {
    pub doc: usize,
    pub method: String,
    pub job: crate::job::Job<Result<Document, String>>,
}

/// The application.
pub struct EtscopeApp {
    pub settings: Settings,
    pub docs: Vec<DocView>,
    pub active: usize,
    pub tab: Tab,
    /// The window's own jobs: a load, a comparison, another method.
    pub jobs: AppJobs,
    /// The Diff tab's comparison over a dataset.
    pub numerics: numerics::NumericsState,
    /// The live capture (Live tab) and the document it feeds.
    pub live: Option<(usize, live::LiveSession)>,
    pub live_form: live_tab::LiveForm,
    /// The core and CMSIS-NN version host runs model (Diff, inspector notes).
    pub host: host_core::HostChoice,
    /// The core and clock of the estimate without a board (Profile, Live, heat overlay).
    pub cost: etscope_viewer::cost_view::CostPicker,
    /// Whether the estimate's core follows the program opened last (its CMSIS-NN path's core):
    /// until the user picks one, or `--estimate` names one.
    pub cost_follows_program: bool,
    pub messages: Vec<String>,
    /// The files of the last load that could not be used, shown in the central panel.
    pub load_errors: load_errors::LoadErrors,
    pub commands: Vec<Command>,
    /// What the command line asked of this window, and how far it got.
    launch: Launch,
}

/// The window's own jobs (each document's are its [`DocView`]'s), polled in
/// `EtscopeApp::poll_jobs`.
#[derive(Default)]
pub struct AppJobs {
    /// Files being opened.
    pub load: Option<LoadJob>,
    /// The origin of the files of the load running now (for its documents).
    loading_sources: DocSources,
    /// A comparison running on a worker thread.
    pub diff: Option<DiffJob>,
    /// Another method of a document's program being built (the method list).
    pub method: Option<MethodJob>,
}

/// What the command line asked of the window (`--screenshot`, `--timings`, the files and picks
/// to start with), and how far it got.
struct Launch {
    options: StartOptions,
    /// The start options were applied once the files were in.
    applied: bool,
    screenshot: ScreenshotState,
    pending_png: Option<(PathBuf, egui::Rect)>,
    /// `--timings`: what has been reported so far.
    timings_reported: TimingsReported,
    /// Set when a `--screenshot` run closes with none of the files given open: the process
    /// then exits with this error ([`run_window`]).
    exit_failure: std::sync::Arc<std::sync::Mutex<Option<String>>>,
}

impl EtscopeApp {
    /// Ticks per µs of the active document's profile: its capture's declared clock, else the
    /// toolbar's rate.
    pub fn ticks_per_us(&self) -> Option<f64> {
        self.docs
            .get(self.active)
            .and_then(|dv| dv.doc.declared_time.as_ref())
            .map(|d| d.ticks_per_us)
            .or(self.settings.ticks_per_us)
    }

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
            jobs: AppJobs::default(),
            numerics: numerics::NumericsState {
                data: start.data.clone(),
                labels: start.labels.clone(),
                sweep_after: start.sensitivity,
                board: start.board_samples.is_some(),
                board_limit: start.board_samples.unwrap_or(20),
                ..Default::default()
            },
            live: None,
            live_form: live_tab::LiveForm::default(),
            host: host_core::HostChoice::default(),
            cost: Default::default(),
            cost_follows_program: true,
            messages: Vec::new(),
            load_errors: Default::default(),
            commands: Vec::new(),
            launch: Launch {
                options: start,
                applied: false,
                screenshot: ScreenshotState::Idle,
                pending_png: None,
                timings_reported: TimingsReported::default(),
                exit_failure: Default::default(),
            },
        };
        if !app.launch.options.files.is_empty() {
            let files = app.launch.options.files.clone();
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
        if paths.is_empty() || self.jobs.load.is_some() {
            return;
        }
        self.settings.remember(&paths);
        let (batch, found) = if self.launch.options.no_siblings {
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
        self.jobs.loading_sources = sources;
        self.jobs.load = Some(loader::start(
            batch,
            target,
            loader::LoadPolicy {
                preview: !self.launch.options.no_preview,
                eager_stage_nodes: self
                    .launch
                    .options
                    .eager_stage_nodes
                    .unwrap_or(etscope_viewer::document::EAGER_STAGE_NODES),
            },
            ctx.clone(),
        ));
    }

    /// Applies finished loads.
    fn poll_job(&mut self, ctx: &egui::Context) {
        let Some(job) = &mut self.jobs.load else {
            return;
        };
        let paths = job.paths.clone();
        let mut done = None;
        for event in job.poll() {
            match event {
                LoadEvent::Preview(documents) => {
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
                LoadEvent::Done(loaded) => {
                    done = Some((loaded.documents, loaded.pending, loaded.errors))
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
            let sources = std::mem::take(&mut self.jobs.loading_sources);
            // a file found by name that does not fit is skipped, the program kept
            let errors: Vec<String> = errors
                .into_iter()
                .map(|e| {
                    if sources
                        .found
                        .iter()
                        .any(|p| e.starts_with(&format!("{}:", p.display())))
                    {
                        format!("{e} (found beside the program by name; skipped)")
                    } else {
                        e
                    }
                })
                .collect();
            if !self.launch.applied {
                // the files given on the command line: what could not be used is said on the
                // terminal too, as `etscope open` says it
                for e in &errors {
                    eprintln!("etscope: error: {e}");
                }
            }
            self.load_errors = load_errors::LoadErrors::from_lines(&errors, &paths);
            self.messages.extend(errors);
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
                if self.cost_follows_program {
                    if let Some(core) = self.docs[first_new].program_core() {
                        self.cost = etscope_viewer::cost_view::CostPicker::for_core(core);
                    }
                }
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
            self.jobs.load = None;
        }
    }

    /// Applies command-line view options once the first documents are in (their pass stages
    /// too: a stage named on the command line may be one).
    fn apply_start(&mut self, ctx: &egui::Context) {
        if self.launch.applied
            || self.jobs.load.is_some()
            || self.docs.iter().any(|d| d.stage_jobs.pass.is_some())
        {
            return;
        }
        self.launch.applied = true;
        if self.launch.options.screenshot.is_some() {
            // armed before anything below can return early (no document open: the picture
            // shows why, and the window closes); it still waits for the jobs started below
            self.launch.screenshot = ScreenshotState::Waiting(12);
        }
        if let Some(spec) = self.launch.options.estimate.clone() {
            match parse_estimate(&spec) {
                Ok(picker) => {
                    self.cost = picker;
                    self.cost_follows_program = false;
                    // asked for on the command line: the graph shows it where no capture does
                    for dv in &mut self.docs {
                        if dv.doc.profile.is_none() && dv.doc.program.is_some() {
                            dv.heat.on = true;
                        }
                    }
                }
                Err(e) => self.messages.push(e),
            }
        }
        if let Some(name) = self.launch.options.part.clone() {
            // a built-in part or a part file, read as the CLI reads `--part`
            match crate::part_spec::resolve(&name) {
                Ok(part) => {
                    // the estimate on the part's core and clock, unless one was asked for
                    if self.launch.options.estimate.is_none() {
                        if let Ok(core) = etscope_core::analysis::cost::priced_core(part.core.key())
                        {
                            self.cost = etscope_viewer::cost_view::CostPicker {
                                core,
                                mhz: part.mhz,
                            };
                            self.cost_follows_program = false;
                        }
                    }
                    for dv in &mut self.docs {
                        dv.memory.part_fit.pick_part(Some(part.clone()));
                        if let Some(place) = &self.launch.options.place {
                            dv.memory.part_fit.request(place);
                        }
                    }
                }
                Err(e) => self.messages.push(format!("{e:#}")),
            }
        }
        if let Some(path) = self.launch.options.compare_capture.clone() {
            profile_tab::compare_with_capture(self, &path);
        }
        let Some(dv) = self.docs.get_mut(self.active) else {
            return;
        };
        if let Some(target) = &self.launch.options.lower {
            // lowered right away (not in a worker): the stages it names must exist below
            match etscope_core::lower::Core::parse(target) {
                Some(cpu) => {
                    let options = etscope_core::lower::Options {
                        core: cpu,
                        flow: etscope_core::lower::Flow::Default,
                    };
                    // the panel shows what the stages were lowered for
                    dv.lowering.core = cpu;
                    lowering::start(dv, options);
                    if let Some(running) = dv.lowering.job.as_mut() {
                        running.job.block_until_done();
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
        if let Some(s) = &self.launch.options.stage {
            if let Some(i) = dv.doc.stages.iter().position(|st| &st.name == s) {
                dv.switch_stage(i);
            }
        }
        if let Some(other) = &self.launch.options.side_by_side {
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
        if let Some(q) = self.launch.options.select.clone() {
            let graph = &dv.doc.stages[dv.stage].graph;
            match etscope_viewer::search::search(graph, &q, 1).first() {
                Some(hit) => {
                    let n = hit.node;
                    dv.select(n);
                    let stage = dv.stage;
                    if let Some(sc) = dv.side_by_side.as_mut() {
                        let doc = &dv.doc;
                        sc.select(doc, n, sc.left == stage);
                    }
                }
                // said, not ignored
                None => self.messages.push(format!(
                    "--select {q:?}: no node of stage {} matches",
                    dv.doc.stages[dv.stage].name
                )),
            }
        }
        if self.launch.options.tab == Some(Tab::Diff) {
            let target = if self.docs.len() > 1 {
                DiffTarget::Document((self.active + 1) % self.docs.len())
            } else {
                DiffTarget::Device
            };
            if let Err(e) = self.compare(target) {
                self.messages.push(e);
            }
        }
        if self.launch.options.eval {
            self.tab = Tab::Diff;
            numerics::start(self, ctx);
        }
        if let Some(runs) = self.launch.options.live_board {
            self.live_form.kind = live_tab::TargetKind::Board;
            self.live_form.runs = runs.max(1);
            self.tab = Tab::Live;
            if let Err(e) = live_tab::start(self, ctx) {
                self.messages.push(e);
            }
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
        // a method being built follows its document, or goes with it
        if let Some(running) = &mut self.jobs.method {
            match running.doc.cmp(&i) {
                std::cmp::Ordering::Equal => {
                    running.job.cancel();
                    self.jobs.method = None;
                }
                std::cmp::Ordering::Greater => running.doc -= 1,
                std::cmp::Ordering::Less => {}
            }
        }
        let dv = self.docs.remove(i);
        self.active = self.active.min(self.docs.len().saturating_sub(1));
        dv
    }

    /// Replaces document `doc` by its program's method `method` (what was attached to the
    /// method shown before is not carried over: it belongs to that method).
    pub fn select_method(&mut self, doc: usize, method: &str) {
        if matches!(&self.live, Some((d, _)) if *d == doc) {
            self.messages
                .push("stop the live session before showing another method".into());
            return;
        }
        if self.jobs.method.is_some() {
            self.messages
                .push("another method is still being prepared".into());
            return;
        }
        let Some(dv) = self.docs.get(doc) else {
            return;
        };
        match dv.doc.method_builder(method) {
            Ok(build) => {
                let job = crate::job::Job::spawn(
                    format!("building method {method:?}"),
                    || {},
                    move |_| build().map_err(|e| e.to_string()),
                );
                self.jobs.method = Some(MethodJob {
                    doc,
                    method: method.to_string(),
                    job,
                });
            }
            Err(e) => self.messages.push(e.to_string()),
        }
    }

    /// Puts a method built on its worker in place of the document it was picked in.
    fn poll_method(&mut self) {
        let Some(running) = &mut self.jobs.method else {
            return;
        };
        let Some(outcome) = running.job.poll() else {
            return;
        };
        let Some(MethodJob { doc, method, .. }) = self.jobs.method.take() else {
            return;
        };
        match outcome.into_result().and_then(|r| r) {
            Ok(new) if doc < self.docs.len() => {
                let sources = self.docs[doc].sources.clone();
                let mut view = DocView::new(new);
                view.sources = sources;
                self.docs[doc] = view;
                self.messages.push(format!(
                    "showing method {method:?}; attached ETRecords and ETDumps belong to the method shown before and were not carried over"
                ));
            }
            Ok(_) => {}
            Err(e) => self.messages.push(e),
        }
    }

    /// Every job, polled in one place once a frame: the load, another method, a comparison,
    /// the dataset run and the live capture (the window's), then each document's own
    /// ([`DocView::poll_jobs`]), after the shown stage's build is started if it waits for one.
    fn poll_jobs(&mut self, ctx: &egui::Context) {
        self.poll_job(ctx);
        self.poll_method();
        numerics::poll(self);
        self.poll_diff();
        live_tab::poll(self);
        if let Some(dv) = self.docs.get_mut(self.active) {
            doc_view::start_stage_build(dv, ctx);
        }
        let mut messages = Vec::new();
        for dv in &mut self.docs {
            dv.poll_jobs(&mut messages);
        }
        self.messages.extend(messages);
    }

    /// One frame: draws everything into `ui` and applies what the user did.
    pub fn frame(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        self.poll_jobs(&ctx);
        self.apply_start(&ctx);
        self.handle_dropped_files(&ctx);
        self.handle_shortcuts(&ctx);
        panels::draw(self, ui);
        self.apply_commands(&ctx);
        self.handle_screenshots(&ctx);
        self.report_timings(&ctx);
    }
}

/// Opens the window and runs until it closes.
pub fn run_window(start: StartOptions) -> anyhow::Result<()> {
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_inner_size(start.size.unwrap_or([1500.0, 950.0]))
            .with_title("etscope")
            .with_drag_and_drop(true),
        renderer: eframe::Renderer::Glow,
        // a size asked for on the command line is not remembered as the next session's
        persist_window: start.size.is_none(),
        window_builder: start.size.map(given_size_wins),
        ..Default::default()
    };
    let failure = std::sync::Arc::new(std::sync::Mutex::new(None));
    let app_failure = failure.clone();
    eframe::run_native(
        "etscope",
        options,
        Box::new(move |cc| {
            let mut app = EtscopeApp::new(&cc.egui_ctx, cc.storage, start);
            app.launch.exit_failure = app_failure;
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| {
        anyhow::anyhow!(
            "cannot open a window: {e} (no display? the subcommands run headless, see --help)"
        )
    })?;
    match failure.lock().ok().and_then(|mut f| f.take()) {
        Some(e) => Err(anyhow::anyhow!(e)),
        None => Ok(()),
    }
}

/// The hook that makes `--size` win over the window the last session left: eframe restores the
/// saved size (and maximized or fullscreen state) whether or not `persist_window` is set, and
/// calls this hook after it.
fn given_size_wins(size: [f32; 2]) -> eframe::WindowBuilderHook {
    Box::new(move |builder| {
        builder
            .with_inner_size(size)
            .with_maximized(false)
            .with_fullscreen(false)
    })
}

impl eframe::App for EtscopeApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.frame(ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, Settings::KEY, &self.settings);
    }
}

/// `m4@120` or `m4` (at the core's usual clock) as the estimate's core and clock.
pub fn parse_estimate(spec: &str) -> Result<etscope_viewer::cost_view::CostPicker, String> {
    let (core, mhz) = match spec.split_once('@') {
        Some((c, m)) => (c, Some(m)),
        None => (spec, None),
    };
    let core = etscope_core::analysis::cost::priced_core(core)
        .map_err(|e| format!("--estimate {spec:?}: {e}"))?;
    let mhz = match mhz {
        Some(m) => match m.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => v,
            _ => {
                return Err(format!(
                    "--estimate {spec:?}: the clock after @ must be a positive number of MHz"
                ))
            }
        },
        None => core.typical_mhz(),
    };
    Ok(etscope_viewer::cost_view::CostPicker { core, mhz })
}
