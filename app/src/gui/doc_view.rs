//! One open document's view state ([`DocView`]: its stages' cameras, search, profile and
//! memory views, the comparison shown) and the work it starts after a load: the deferred pass
//! stages and a large ETRecord stage built when first shown.

use std::path::PathBuf;

use eframe::egui;
use etscope_viewer::document::Document;
use etscope_viewer::graph_view::GraphView;
use etscope_viewer::memory_view::MemoryViewState;
use etscope_viewer::neighborhood::Neighbourhood;
use etscope_viewer::profile_view::{ProfileTableState, Span, TimelineState};
use etscope_viewer::search::Hit;

use super::*;
use crate::job::Job;

/// View state of one open document: the graph's, and each tab's own state beside it.
pub struct DocView {
    pub doc: Document,
    pub stage: usize,
    pub views: Vec<GraphView>,
    pub search: String,
    pub hits: Vec<Hit>,
    pub neighbourhood: Option<Neighbourhood>,
    /// Two stages side by side in the Graph tab.
    pub side_by_side: Option<etscope_viewer::stage_compare::StageCompare>,
    /// The heat overlay on the graph.
    pub heat: HeatOverlay,
    /// The comparison shown in the Diff tab, with the other side's stage.
    pub diff: Option<(
        etscope_viewer::diff_view::DiffView,
        etscope_viewer::document::StageView,
    )>,
    /// Why the last comparison could not be made, shown in the Diff tab itself.
    pub diff_error: Option<String>,
    /// The Profile tab.
    pub profile: ProfileTabState,
    /// The Memory tab.
    pub memory: MemoryTabState,
    /// "Lower for": the choices and a running lowering.
    pub lowering: lowering::LoweringState,
    /// The stages computed after a load or when first shown.
    pub stage_jobs: StageJobs,
    /// Shown while its files are still being attached; the loaded document replaces it.
    pub preview: bool,
    /// Where its files came from: chosen, found beside the program, removed by the user.
    pub sources: DocSources,
    /// The core the program says it was lowered for (`Target::of_program`), read once: the
    /// window asks every frame.
    own_target: Option<etscope_core::kernels::Target>,
}

/// The graph's heat overlay: whether it is shown, and what it was computed from.
#[derive(Default)]
pub struct HeatOverlay {
    pub on: bool,
    /// The overlay of (stage, document revision, the estimate's core and clock), computed once,
    /// not per frame.
    pub(super) cache: Option<(HeatKey, etscope_viewer::diff_view::NodeColors)>,
    /// How many times the overlay was computed (what its cache saves is counted).
    pub computed: u64,
}

/// The Profile tab's state.
#[derive(Default)]
pub struct ProfileTabState {
    pub table: ProfileTableState,
    pub timeline: TimelineState,
    pub timeline_runs: Vec<Vec<Span>>,
    /// The program's estimate on the chosen core and the capture against it.
    pub cost: profile_tab::CostCache,
    /// Compare with: this capture against another.
    pub capture_compare: Option<profile_tab::CaptureCompare>,
}

/// The Memory tab's state.
pub struct MemoryTabState {
    /// Each arena's view.
    pub arenas: Vec<MemoryViewState>,
    /// Every planner's placement of the plan's tensors per arena, computed when first shown.
    pub replan: Option<Vec<etscope_core::plan::alternatives::ArenaAlternatives>>,
    /// The planners and the budget being computed, until `replan` is set.
    pub replan_job: Option<Job<Replanned>>,
    /// The program's whole RAM budget, computed with `replan`.
    pub budget: Option<etscope_core::plan::budget::RamBudget>,
    /// The planner drawn beside the program's own plan (`best`: the smallest).
    pub compare_plan: String,
    /// The part and the program's fit on it.
    pub part_fit: super::part_fit::PartFit,
}

/// The stages a document computes on workers: its pass stages after a load (see
/// `Document::pass_stages_deferred`) and a stage built because it is shown (see
/// `StageView::unbuilt`).
#[derive(Default)]
pub struct StageJobs {
    pub pass: Option<Job<Vec<etscope_viewer::document::StageView>>>,
    /// The ETRecord entry being built and the worker's result.
    pub build: Option<StageBuild>,
    /// ETRecord entries whose stage could not be built (said once; not tried again).
    pub failed: Vec<String>,
}

/// What a heat overlay was made of: the stage, the document's revision, and the estimate's core
/// and clock (the overlay with no capture).
pub type HeatKey = (usize, u64, etscope_viewer::cost_view::CostPicker);

/// Every planner's placement per arena and the program's RAM budget.
pub type Replanned = (
    Vec<etscope_core::plan::alternatives::ArenaAlternatives>,
    Option<etscope_core::plan::budget::RamBudget>,
);

/// Starts the memory planners and the RAM budget of `dv`'s program on a worker.
pub(super) fn start_replan(dv: &mut DocView, ctx: &egui::Context) {
    let (Some(plan), Some(graph)) = (dv.doc.memory.clone(), dv.doc.pte_graph().cloned()) else {
        return;
    };
    let program = dv.doc.program.clone();
    let plan_index = dv.doc.plan_index;
    let ctx = ctx.clone();
    dv.memory.replan_job = Some(Job::spawn(
        "running the memory planners",
        move || ctx.request_repaint(),
        move |_| {
            let alternatives = etscope_core::plan::alternatives::alternatives(&graph, &plan);
            let budget = program
                .as_ref()
                .and_then(|p| etscope_core::plan::budget::ram_budget(p, plan_index, &plan));
            (alternatives, budget)
        },
    ));
}

/// A stage built on a worker thread: the ETRecord entry and the job building it.
pub struct StageBuild {
    pub entry: String,
    pub job: Job<Result<etscope_viewer::document::StageView, String>>,
}

/// Starts building the shown stage of `dv` when it waits to be built, nothing builds yet and it
/// has not failed before (a failure, a panic included, is said once and not retried).
pub(super) fn start_stage_build(dv: &mut DocView, ctx: &egui::Context) {
    if dv.stage_jobs.build.is_some() {
        return;
    }
    let Some((entry, build)) = dv.doc.stage_builder(dv.stage) else {
        return;
    };
    if dv.stage_jobs.failed.contains(&entry) {
        return;
    }
    let ctx = ctx.clone();
    let job = Job::spawn(
        format!("building the stage {entry}"),
        move || ctx.request_repaint(),
        move |_| build(),
    );
    dv.stage_jobs.build = Some(StageBuild { entry, job });
}

/// Computes a loaded document's deferred pass stages in a worker (the load's peak is over by
/// then: the preview it replaced is gone).
pub(super) fn start_pass_stages(dv: &mut DocView, ctx: &egui::Context) {
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
    let ctx = ctx.clone();
    dv.stage_jobs.pass = Some(Job::spawn(
        "computing the pass stages",
        move || ctx.request_repaint(),
        move |_| etscope_viewer::document::pass_stage_views(graph),
    ));
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
    /// The core the program's CMSIS-NN path stands for, where the program is a Cortex-M one
    /// (what the estimate and the lowering panel start on).
    pub fn program_core(&self) -> Option<etscope_core::cortex_m::Core> {
        self.own_target
            .map(etscope_core::cortex_m::Core::standing_for)
    }

    /// The CMSIS-NN path of the core the program was lowered for, where it says one.
    pub fn own_target(&self) -> Option<etscope_core::kernels::Target> {
        self.own_target
    }

    pub fn new(doc: Document) -> DocView {
        let stage = doc.pte_stage.unwrap_or(0);
        let views = doc.stages.iter().map(|_| GraphView::default()).collect();
        let timeline_runs = doc
            .etdump
            .as_ref()
            .map(etscope_viewer::profile_view::timeline)
            .unwrap_or_default();
        let arenas = doc.memory.as_ref().map_or(0, |m| m.arenas.len());
        let own_target = doc
            .program
            .as_ref()
            .and_then(|p| etscope_core::kernels::Target::of_program(p, p.default_plan_index()));
        let core = own_target
            .map(etscope_core::cortex_m::Core::standing_for)
            .unwrap_or(etscope_core::cortex_m::Core::M55);
        DocView {
            own_target,
            heat: HeatOverlay {
                on: doc.profile.is_some(),
                ..Default::default()
            },
            doc,
            stage,
            views,
            search: String::new(),
            hits: Vec::new(),
            neighbourhood: None,
            side_by_side: None,
            diff: None,
            diff_error: None,
            profile: ProfileTabState {
                timeline_runs,
                ..Default::default()
            },
            memory: MemoryTabState {
                arenas: vec![MemoryViewState::default(); arenas],
                replan: None,
                replan_job: None,
                budget: None,
                compare_plan: "best".into(),
                part_fit: Default::default(),
            },
            lowering: lowering::LoweringState::for_core(core),
            stage_jobs: StageJobs::default(),
            preview: false,
            sources: DocSources::default(),
        }
    }

    /// The heat overlay of the current stage, when shown: the capture's time shares, else the
    /// estimate's on `picker` (cached per stage, document revision and pick).
    pub fn heat_overlay(
        &mut self,
        picker: etscope_viewer::cost_view::CostPicker,
    ) -> Option<&[Option<egui::Color32>]> {
        if !self.heat.on || Some(self.stage) != self.doc.pte_stage {
            return None;
        }
        let key = (self.stage, self.doc.revision, picker);
        if self.heat.cache.as_ref().map(|c| c.0) != Some(key) {
            let stage = self.doc.stages.get(self.stage)?;
            let colors = match &self.doc.profile {
                Some(profile) => etscope_viewer::profile_view::heat_overlay(&stage.graph, profile),
                None => {
                    let est = self.profile.cost.estimate(&self.doc, picker)?;
                    etscope_viewer::cost_view::estimate_heat_overlay(&stage.graph, est)
                }
            };
            self.heat.cache = Some((key, colors));
            self.heat.computed += 1;
        }
        self.heat.cache.as_ref().map(|c| c.1.as_slice())
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

impl DocSources {
    /// The part of a batch's origins that ended up in `doc` (matched by file name).
    pub(super) fn belonging_to(&self, doc: &Document) -> DocSources {
        // the loader records each file under its display name
        let mine = |p: &PathBuf| doc.files.iter().any(|f| *f == loader::display_name(p));
        DocSources {
            given: self.given.iter().filter(|p| mine(p)).cloned().collect(),
            found: self.found.iter().filter(|p| mine(p)).cloned().collect(),
            declined: self.declined.clone(),
        }
    }
}

impl DocView {
    /// Puts every finished job of this document in place: its pass stages, its memory
    /// planners, a stage built when shown, a lowering. What failed is added to `messages`.
    pub(super) fn poll_jobs(&mut self, messages: &mut Vec<String>) {
        self.poll_pass_stages(messages);
        self.poll_replan(messages);
        self.poll_stage_build(messages);
        lowering::poll(self);
    }

    /// Puts a built stage in place (a failure is a message; the stage stays unbuilt).
    fn poll_stage_build(&mut self, messages: &mut Vec<String>) {
        let Some(build) = &mut self.stage_jobs.build else {
            return;
        };
        let Some(outcome) = build.job.poll() else {
            return;
        };
        let entry = build.entry.clone();
        self.stage_jobs.build = None;
        let built = match outcome.into_result() {
            Ok(result) => result.map_err(|e| format!("building the stage {entry}: {e}")),
            Err(panicked) => Err(panicked), // names the stage already
        };
        match built {
            Ok(view) => {
                if let Some(i) = self.doc.set_built_stage(&entry, view) {
                    self.views[i] = GraphView::default();
                }
            }
            Err(e) => {
                // said once; the stage stays unbuilt and says it could not be built
                messages.push(e);
                self.stage_jobs.failed.push(entry);
            }
        }
    }

    /// Puts the planners' results in place; a cancelled or failed run says so and is not
    /// started again for this document.
    fn poll_replan(&mut self, messages: &mut Vec<String>) {
        let Some(job) = &mut self.memory.replan_job else {
            return;
        };
        let cancelled = job.is_cancelled();
        let Some(outcome) = job.poll() else { return };
        self.memory.replan_job = None;
        match outcome.into_result() {
            Ok(_) if cancelled => {
                messages.push("memory planners cancelled".into());
                self.memory.replan = Some(Vec::new());
            }
            Ok((alternatives, budget)) => {
                self.memory.replan = Some(alternatives);
                self.memory.budget = budget;
            }
            Err(e) => {
                messages.push(e);
                self.memory.replan = Some(Vec::new());
            }
        }
    }

    /// Adds the pass stages computed after a load (a failed computation is said; the
    /// program's own stages stay).
    fn poll_pass_stages(&mut self, messages: &mut Vec<String>) {
        let Some(job) = &mut self.stage_jobs.pass else {
            return;
        };
        let Some(outcome) = job.poll() else { return };
        self.stage_jobs.pass = None;
        match outcome.into_result() {
            Ok(views) => {
                self.doc.set_pass_stages(views);
                self.views
                    .resize_with(self.doc.stages.len(), GraphView::default);
            }
            Err(e) => messages.push(e),
        }
    }
}
