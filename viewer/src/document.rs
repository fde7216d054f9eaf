//! The view model of one opened program: its stages (each an IR graph with a layout), the
//! profile, memory plan and captured tensors that were associated with it, and the cross-stage
//! node mapping through debug handles. Built from parsed `core` data; owns no files.

use etscope_core::analysis::profile::{profile, Profile};
use etscope_core::formats::bundled::BundledProgram;
use etscope_core::formats::debug_buffer::{captured_tensors, CapturedTensor};
use etscope_core::formats::etdump::ETDump;
use etscope_core::formats::etrecord::{stage_short_name, ETRecord};
use etscope_core::formats::export_json::ExportedGraph;
use etscope_core::formats::kind::FileKind;
use etscope_core::formats::pte::Program;
use etscope_core::ir::from_export::graph_from_export;
use etscope_core::ir::from_pte::graph_from_plan;
use etscope_core::ir::{Graph, NodeId, NodeKind};
use etscope_core::plan::{derive, MemoryPlan};
use thiserror::Error;

pub use crate::stage_view::{module_groups, LoweringStage, ModuleGroup, StageView};

/// Why a file could not be opened or attached.
#[derive(Debug, Error)]
pub enum OpenError {
    #[error("{name}: {source}")]
    Read {
        name: String,
        source: etscope_core::Error,
    },
    #[error("{name}: {detail}")]
    Mismatch { name: String, detail: String },
    #[error("{name}: not an ExecuTorch artifact (no ET12/BP08/ED00 identifier, zip or npy magic)")]
    Unknown { name: String },
}

/// Everything known about one program.
#[derive(Debug, Clone, Default)]
pub struct Document {
    /// Bumped whenever attached data changes (ETDump, profile, captures): views cache what they
    /// derive from it per revision.
    pub revision: u64,
    /// Display title (the program's file name).
    pub title: String,
    /// Names of the files that make up this document.
    pub files: Vec<String>,
    pub program: Option<Program>,
    /// The program's method this document shows (its `pte` stage, memory plan and runs):
    /// `forward` when the program has one, else its first; another through
    /// [`Document::with_method`].
    pub plan_index: usize,
    /// Index in `stages` of the `.pte` stage.
    pub pte_stage: Option<usize>,
    pub stages: Vec<StageView>,
    pub etrecord: Option<ETRecord>,
    pub etdump: Option<ETDump>,
    pub profile: Option<Profile>,
    pub memory: Option<MemoryPlan>,
    pub captured: Vec<CapturedTensor>,
    /// The debug buffer waiting for (or used with) an ETDump.
    debug_buffer: Option<Vec<u8>>,
    /// Test cases when opened from a BundledProgram.
    pub bundled_test_cases: usize,
    /// An input array for host runs, when one was opened with the program.
    pub input: Option<etscope_core::tensor::TensorData>,
    /// The unit of the profile's times when its source declares one (a capture whose target
    /// announced its tick rate); `None`: the ETDump says nothing, the user's rate applies.
    pub declared_time: Option<DeclaredTime>,
    /// Reads the ETRecord again, whole, when its stage graphs were released once the stages
    /// were built (see [`Document::attach_etrecord_reader_releasing`]).
    pub etrecord_reload: Option<EtrecordReload>,
    /// The program's pass stages are left to the caller ([`pass_stage_views`] off the UI
    /// thread, then [`Document::set_pass_stages`]): set by the loader's constructors so that
    /// the copies of a large graph they take are not made while the load is at its peak.
    pub pass_stages_deferred: bool,
}

/// Reads a document's ETRecord again from where it came from: whole, or one stage's graph.
#[derive(Clone)]
pub struct EtrecordReload {
    pub whole: std::sync::Arc<dyn Fn() -> Result<ETRecord, String> + Send + Sync>,
    /// The exported graph of one stage (an entry name of [`ETRecord::stages`]).
    pub stage: std::sync::Arc<ReadStage>,
}

/// Building a stage that waits ([`Document::stage_builder`]), on any thread.
pub type StageBuildWork = Box<dyn FnOnce() -> Result<StageView, String> + Send>;

/// Reads one stage's exported graph by its ETRecord entry name, refusing an entry whose size is
/// not the one given (the size it had when the file was opened: the file changed since).
pub type ReadStage = dyn Fn(&str, Option<u64>) -> Result<ExportedGraph, String> + Send + Sync;

impl std::fmt::Debug for EtrecordReload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EtrecordReload")
    }
}

pub use etscope_core::analysis::cost::measured::CaptureMachine;

/// A time unit a source declares for its profile.
#[derive(Debug, Clone, PartialEq)]
pub struct DeclaredTime {
    /// Profile ticks per microsecond.
    pub ticks_per_us: f64,
    /// Where it comes from, as the toolbar says it.
    pub source: String,
    /// The target is an emulator: the times are its instruction counts, not cycles.
    pub emulated: bool,
    /// The core the target declared (`None`: it declared none).
    pub core: Option<String>,
    /// The target's tick clock in Hz.
    pub clock_hz: Option<u32>,
}

impl DeclaredTime {
    /// A capture from a target with a `tick_hz` clock: its events are stored in nanoseconds.
    pub fn from_capture(tick_hz: u32) -> DeclaredTime {
        DeclaredTime {
            ticks_per_us: 1000.0,
            source: format!("the capture's {tick_hz} Hz clock, stored in ns"),
            emulated: false,
            core: None,
            clock_hz: Some(tick_hz),
        }
    }

    /// A capture whose target declared `core` too; `emulated`: the target is an emulator (its
    /// core name says so, docs/wire-format.md) whose ticks count instructions.
    pub fn from_target(tick_hz: u32, core: &str, emulated: bool) -> DeclaredTime {
        DeclaredTime {
            emulated,
            source: if emulated {
                format!("{core}: instruction counts as a {tick_hz} Hz clock, stored in ns")
            } else {
                format!("the capture's {tick_hz} Hz clock ({core}), stored in ns")
            },
            core: Some(core.to_string()),
            ..DeclaredTime::from_capture(tick_hz)
        }
    }

    /// The machine the capture's times come from.
    pub fn machine(&self) -> CaptureMachine {
        CaptureMachine::declared(self.core.as_deref(), self.emulated)
    }
}

/// The machine a document's capture comes from (undeclared when the capture says nothing).
pub fn capture_machine(declared: Option<&DeclaredTime>) -> CaptureMachine {
    declared.map_or(CaptureMachine::Undeclared, DeclaredTime::machine)
}

/// The machine and clock a document's capture comes from.
pub fn capture_origin(
    declared: Option<&DeclaredTime>,
) -> etscope_core::analysis::profile_compare::Origin {
    etscope_core::analysis::profile_compare::Origin {
        machine: capture_machine(declared),
        clock_hz: declared.and_then(|t| t.clock_hz),
    }
}

impl Document {
    /// The capture's name as a comparison names a side: its file (the last ETDump attached, or
    /// the live capture) and the program it ran.
    pub fn capture_name(&self) -> String {
        let file = self
            .files
            .iter()
            .rev()
            .find(|f| f.ends_with(".etdp") || f.ends_with(".etdump") || f.ends_with(".bin"))
            .map(|f| {
                std::path::Path::new(f)
                    .file_name()
                    .map_or(f.clone(), |n| n.to_string_lossy().into_owned())
            })
            .unwrap_or_else(|| "the live capture".to_string());
        format!("{file} ({})", self.title)
    }
}

/// What an emulator's times are, said wherever they are shown.
pub const EMULATED_TIMES: &str =
    "QEMU instruction counts of etscope's firmware (not cycles): one tick ≈ one instruction at the board's 32 MHz virtual clock";

/// Whether a pass of [`etscope_core::passes::program_passes`] may change `graph`: when none
/// does, there are no pass stages and the program's graph need not be copied to learn it.
pub fn program_passes_may_change(graph: &Graph) -> bool {
    etscope_core::passes::any_may_change(graph, &etscope_core::passes::program_passes())
}

/// The output of every pass of [`etscope_core::passes::program_passes`] that changes the
/// program's `graph`, as stages (whose runs the diff compares with the program's). A graph a
/// pass cannot take (the check fails) gets none.
pub fn pass_stage_views(graph: Graph) -> Vec<StageView> {
    let Ok(stages) =
        etscope_core::passes::run_pipeline(graph, &etscope_core::passes::program_passes())
    else {
        return Vec::new();
    };
    stages
        .into_iter()
        .filter_map(|st| {
            let g = st.graph?;
            let mut view = StageView::new(st.pass, g);
            view.pass = Some(st.pass);
            Some(view)
        })
        .collect()
}

/// An ETRecord with its stages built (IR graph, layout, labels per stage), not yet attached to
/// a document: [`prepare_etrecord`] on a loader thread, [`Document::attach_prepared_etrecord`]
/// on the document on screen.
#[derive(Debug)]
pub struct PreparedEtrecord {
    name: String,
    rec: ETRecord,
    stages: Vec<StageView>,
    /// The edge stage's module stacks by debug handle, when the edge stage waits to be built
    /// (the program takes its module paths from them).
    edge_modules: Option<etscope_core::ir::ModulesByHandle>,
}

impl PreparedEtrecord {
    /// The file's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// Builds every stage of `rec` (held whole: see [`prepare_etrecord_reader`] for a file read
/// releasing its graphs as the stages are built).
pub fn prepare_etrecord(name: &str, rec: ETRecord) -> PreparedEtrecord {
    let stages = rec
        .stages
        .iter()
        .map(|st| build_stage(&st.name, &st.graph))
        .collect();
    PreparedEtrecord {
        name: name.to_string(),
        rec,
        stages,
        edge_modules: None,
    }
}

/// Stages of an ETRecord read from its file with more nodes than this are built when first
/// shown, not when the file is attached (an edge stage that quantizes excepted: the program
/// takes its quantization parameters from it; its module paths are taken from any edge graph
/// as it is read). A stage of a large model costs tens of MB as a laid-out graph, and most are
/// never looked at.
pub const EAGER_STAGE_NODES: usize = 5_000;

/// A stage of an ETRecord as the viewer shows it: its IR graph, laid out.
pub fn build_stage(entry: &str, graph: &ExportedGraph) -> StageView {
    let short = stage_short_name(entry);
    let method = entry.split('/').nth(1).unwrap_or("forward");
    StageView::new(&short, graph_from_export(graph, &short, method))
}

/// [`prepare_etrecord`] from a seekable reader (a file), releasing as it reads: each stage is
/// built as soon as its exported graph is read and the graph freed at once, the weights are not
/// kept (the record says it was released; [`Document::whole_etrecord`] reads the file again).
/// A stage with more than `eager_nodes` nodes is left unbuilt ([`StageView::unbuilt`],
/// [`EAGER_STAGE_NODES`]), unless it is an edge stage that quantizes.
pub fn prepare_etrecord_reader(
    name: &str,
    reader: impl std::io::Read + std::io::Seek,
    eager_nodes: usize,
) -> Result<PreparedEtrecord, OpenError> {
    let mut built: Vec<(String, StageView)> = Vec::new();
    let mut edge_modules = None;
    let rec = ETRecord::parse_reader_releasing(reader, &mut |entry, graph| {
        let short = stage_short_name(entry);
        // the program takes its module paths from the edge stage, and its quantization
        // parameters when the edge graph quantizes: then the edge stage is built at once
        let edge = short == "edge";
        let view = if graph.nodes.len() <= eager_nodes || (edge && quantizes(&graph)) {
            build_stage(entry, &graph)
        } else {
            if edge {
                edge_modules = Some(etscope_core::ir::modules_by_handle(
                    graph
                        .nodes
                        .iter()
                        .map(|n| (n.debug_handles.as_slice(), &n.module_stack)),
                ));
            }
            waiting_stage(entry)
        };
        drop(graph);
        built.push((entry.to_string(), view));
    })
    .map_err(|source| OpenError::Read {
        name: name.to_string(),
        source,
    })?;
    // in the record's stage order (exported, edge, ...), not the archive's
    let mut stages = Vec::with_capacity(built.len());
    for st in &rec.stages {
        if let Some(i) = built.iter().position(|(entry, _)| *entry == st.name) {
            stages.push(built.swap_remove(i).1);
        }
    }
    Ok(PreparedEtrecord {
        name: name.to_string(),
        rec,
        stages,
        edge_modules,
    })
}

/// An ETRecord read again, refused when its entries (names and sizes) are not the ones read
/// when it was opened: the file changed since.
fn same_record(
    read: Result<ETRecord, String>,
    entries: &[etscope_core::formats::etrecord::Entry],
) -> Result<ETRecord, String> {
    let rec = read?;
    let names = |es: &[etscope_core::formats::etrecord::Entry]| {
        es.iter()
            .map(|e| (e.name.clone(), e.size))
            .collect::<Vec<_>>()
    };
    if names(&rec.entries) != names(entries) {
        return Err(
            "the ETRecord file changed since it was opened (its entries differ); open it again"
                .into(),
        );
    }
    Ok(rec)
}

/// A stage that waits to be built from ETRecord `entry`: an empty graph of its name.
fn waiting_stage(entry: &str) -> StageView {
    let mut view = build_stage(entry, &ExportedGraph::default());
    view.unbuilt = Some(entry.to_string());
    view
}

/// Whether an exported graph quantizes (Q/DQ or Cortex-M quantized operators).
fn quantizes(graph: &ExportedGraph) -> bool {
    graph.nodes.iter().any(|n| n.target.contains("quantize"))
}

impl Document {
    /// A document for a program (`.pte` or `.bpte` bytes).
    pub fn from_program_bytes(name: &str, bytes: Vec<u8>) -> Result<Document, OpenError> {
        Document::from_program_bytes_with(name, bytes, true)
    }

    fn from_program_bytes_with(
        name: &str,
        bytes: Vec<u8>,
        passes: bool,
    ) -> Result<Document, OpenError> {
        let read = |source| OpenError::Read {
            name: name.to_string(),
            source,
        };
        let (program, cases) = match FileKind::detect(&bytes) {
            Some(FileKind::Bpte) => {
                let b = BundledProgram::parse(&bytes).map_err(read)?;
                let cases = b.test_case_count();
                (b.program, cases)
            }
            Some(FileKind::Pte) => (Program::parse(bytes).map_err(read)?, 0),
            _ => {
                return Err(OpenError::Mismatch {
                    name: name.into(),
                    detail: "not a program (.pte/.bpte)".into(),
                })
            }
        };
        let plan_index = program.default_plan_index();
        Document::from_program(name, program, cases, passes, plan_index)
    }

    /// A document of `program`'s method `plan_index` (its graph, memory plan and, with
    /// `passes`, its pass stages).
    fn from_program(
        name: &str,
        program: Program,
        cases: usize,
        passes: bool,
        plan_index: usize,
    ) -> Result<Document, OpenError> {
        let graph = graph_from_plan(&program, plan_index).ok_or_else(|| OpenError::Mismatch {
            name: name.into(),
            detail: format!("the program has no execution plan {plan_index}"),
        })?;
        let memory = derive(&graph);
        let mut doc = Document {
            title: name.to_string(),
            files: vec![name.to_string()],
            memory: Some(memory),
            bundled_test_cases: cases,
            plan_index,
            ..Document::default()
        };
        doc.stages.push(StageView::new("pte", graph));
        doc.pte_stage = Some(0);
        doc.program = Some(program);
        if passes {
            doc.add_pass_stages();
        }
        Ok(doc)
    }

    /// The same program showing its method `method` instead: a new document, since what is
    /// attached to this one (an ETDump, captures, an ETRecord's debug handles) belongs to the
    /// method it shows.
    pub fn with_method(&self, method: &str) -> Result<Document, OpenError> {
        self.method_builder(method)?()
    }

    /// [`Document::with_method`] in two steps: the method checked now, the document built by
    /// the returned closure on any thread (a large graph's layout is not made inside a frame).
    pub fn method_builder(
        &self,
        method: &str,
    ) -> Result<impl FnOnce() -> Result<Document, OpenError> + Send + 'static, OpenError> {
        let program = self.program.as_ref().ok_or_else(|| OpenError::Mismatch {
            name: self.title.clone(),
            detail: "no program is open".into(),
        })?;
        let plan_index = program
            .plan_index(method)
            .ok_or_else(|| OpenError::Mismatch {
                name: self.title.clone(),
                detail: format!("the program has no method {method:?}"),
            })?;
        let (title, program, cases, files) = (
            self.title.clone(),
            program.clone(),
            self.bundled_test_cases,
            self.files.clone(),
        );
        Ok(move || {
            let mut doc = Document::from_program(&title, program, cases, true, plan_index)?;
            doc.files = files;
            Ok(doc)
        })
    }

    /// The name of the method this document shows (`None` without a program).
    pub fn method_name(&self) -> Option<&str> {
        self.program
            .as_ref()
            .and_then(|p| p.method_names().get(self.plan_index).copied())
    }

    /// [`Document::from_program_bytes`] without the pass stages: `pass_stages_deferred` is set
    /// and the caller adds them when it can ([`pass_stage_views`], [`Document::set_pass_stages`]).
    pub fn from_program_bytes_deferring_passes(
        name: &str,
        bytes: Vec<u8>,
    ) -> Result<Document, OpenError> {
        let mut doc = Document::from_program_bytes_with(name, bytes, false)?;
        doc.pass_stages_deferred = true;
        Ok(doc)
    }

    /// The program's pass stages, replacing any earlier ones (from [`pass_stage_views`] of
    /// [`Document::pte_graph`] computed elsewhere).
    pub fn set_pass_stages(&mut self, views: Vec<StageView>) {
        self.stages.retain(|s| s.pass.is_none());
        self.stages.extend(views);
        self.pass_stages_deferred = false;
        self.revision += 1;
    }

    /// Adds the stages of a lowering (see [`LoweringStage::views`]), replacing an earlier
    /// lowering for the same target and flow.
    pub fn add_lowering(&mut self, views: Vec<StageView>) {
        let Some(group) = views
            .first()
            .and_then(|v| v.lowering.as_ref())
            .map(|l| l.group.clone())
        else {
            return;
        };
        self.stages
            .retain(|s| s.lowering.as_ref().is_none_or(|l| l.group != group));
        self.stages.extend(views);
        self.revision += 1;
    }

    /// Whether the ETRecord holds an edge graph etscope can lower.
    pub fn can_lower(&self) -> bool {
        self.etrecord.as_ref().is_some_and(|r| {
            r.stages
                .iter()
                .any(|s| s.name.starts_with("edge_dialect_exported_program"))
        })
    }

    /// Lists, after the program, the output of every pass of [`etscope_core::passes::program_passes`] that
    /// changes the program's graph (stages whose runs the diff compares with the program's).
    /// A graph a pass cannot take (the check fails) gets no pass stages.
    pub fn add_pass_stages(&mut self) {
        let views = self
            .pte_graph()
            .filter(|g| program_passes_may_change(g))
            .cloned()
            .map(pass_stage_views)
            .unwrap_or_default();
        self.set_pass_stages(views);
    }

    /// A document holding only an ETRecord's stages (no program opened).
    pub fn from_etrecord_bytes(name: &str, bytes: &[u8]) -> Result<Document, OpenError> {
        let mut doc = Document {
            title: name.to_string(),
            ..Document::default()
        };
        doc.attach(name, bytes)?;
        Ok(doc)
    }

    /// Attaches an ETRecord, ETDump or debug buffer, checking that it belongs to this program.
    /// The bytes are read, not kept (a debug buffer is copied).
    pub fn attach(&mut self, name: &str, bytes: &[u8]) -> Result<(), OpenError> {
        self.revision += 1;
        let read = |source| OpenError::Read {
            name: name.to_string(),
            source,
        };
        match FileKind::detect(bytes) {
            Some(FileKind::Etrecord) => {
                let rec = ETRecord::parse(bytes).map_err(read)?;
                self.attach_etrecord(name, rec)?;
            }
            Some(FileKind::Etdump) => {
                let dump = ETDump::parse(bytes).map_err(read)?;
                self.attach_etdump(name, dump)?;
            }
            Some(FileKind::Ptd) => {
                let data =
                    etscope_core::formats::flat_tensor::FlatTensorFile::parse(bytes.to_vec())
                        .map_err(read)?;
                let program = self.program.as_mut().ok_or_else(|| OpenError::Mismatch {
                    name: name.into(),
                    detail: "external tensor data needs its program open first".into(),
                })?;
                program
                    .attach_external_data(std::sync::Arc::new(data))
                    .map_err(|e| OpenError::Mismatch {
                        name: name.into(),
                        detail: e.to_string(),
                    })?;
            }
            Some(FileKind::Pte | FileKind::Bpte) => {
                return Err(OpenError::Mismatch {
                    name: name.into(),
                    detail: "a second program opens as its own document".into(),
                })
            }
            Some(FileKind::Npy) => {
                // an input for host runs (and diffs)
                let t = etscope_core::formats::npy::read_npy(bytes).map_err(read)?;
                if let Some((dtype, shape)) = self
                    .program
                    .as_ref()
                    .and_then(|p| p.input_tensor(self.plan_index, 0))
                {
                    if shape != t.shape || dtype != t.dtype {
                        return Err(OpenError::Mismatch {
                            name: name.into(),
                            detail: format!(
                                "the program takes {}{shape:?}, this array is {}{:?}",
                                dtype.short_name(),
                                t.dtype.short_name(),
                                t.shape
                            ),
                        });
                    }
                }
                self.input = Some(t);
            }
            None => {
                // No magic: a debug buffer is raw bytes.
                if name.ends_with(".bin") || self.etdump.is_some() {
                    self.debug_buffer = Some(bytes.to_vec());
                    self.resolve_captured(name)?;
                } else {
                    return Err(OpenError::Unknown { name: name.into() });
                }
            }
        }
        self.files.push(name.to_string());
        Ok(())
    }

    /// Attaches an ETRecord read from a seekable reader (a file), without holding the file in
    /// memory. Each stage's exported graph is freed as soon as its stage is built (tens of MB
    /// for a large program, the loader's peak) and `reload` reads the ETRecord again for the
    /// work that needs it whole (lowering, running a stage): [`Document::whole_etrecord`].
    pub fn attach_etrecord_reader_releasing(
        &mut self,
        name: &str,
        reader: impl std::io::Read + std::io::Seek,
        reload: EtrecordReload,
        eager_nodes: usize,
    ) -> Result<(), OpenError> {
        let prepared = prepare_etrecord_reader(name, reader, eager_nodes)?;
        self.attach_prepared_etrecord(prepared, Some(reload))
    }

    /// Builds stage `i` if it waits to be built ([`StageView::unbuilt`]): the ETRecord entry and
    /// the work, which can run on a worker thread (the stage's graph is read from the ETRecord's
    /// file again); hand its result to [`Document::set_built_stage`]. `None` when the stage is
    /// built or cannot be.
    pub fn stage_builder(&self, i: usize) -> Option<(String, StageBuildWork)> {
        let entry = self.stages.get(i)?.unbuilt.clone()?;
        let read = self.etrecord_reload.as_ref()?.stage.clone();
        let size = self
            .etrecord
            .as_ref()
            .and_then(|r| r.entries.iter().find(|e| e.name == entry))
            .map(|e| e.size);
        let job_entry = entry.clone();
        Some((
            entry,
            Box::new(move || {
                let graph = read(&job_entry, size)?;
                Ok(build_stage(&job_entry, &graph))
            }),
        ))
    }

    /// Puts a stage built by [`Document::stage_builder`] for ETRecord `entry` in place of its
    /// placeholder (found by entry: the stages may have changed meanwhile). The stage's index,
    /// when it was taken.
    pub fn set_built_stage(&mut self, entry: &str, view: StageView) -> Option<usize> {
        let i = self
            .stages
            .iter()
            .position(|s| s.unbuilt.as_deref() == Some(entry))?;
        self.stages[i] = view;
        self.revision += 1;
        Some(i)
    }

    /// The ETRecord with its stage graphs, for work that runs or lowers them: the one held, or
    /// (when its graphs were released) read again. `None` without an ETRecord.
    pub fn whole_etrecord(&self) -> Option<Result<ETRecord, String>> {
        let rec = self.etrecord.as_ref()?;
        if !rec.released {
            return Some(Ok(rec.clone()));
        }
        Some(match &self.etrecord_reload {
            Some(reload) => same_record((reload.whole)(), &rec.entries),
            None => Err("the ETRecord's graphs were released and it cannot be read again".into()),
        })
    }

    /// A closure giving [`Document::whole_etrecord`] that can run on a worker thread (where the
    /// file is read again, if it must be).
    pub fn whole_etrecord_later(
        &self,
    ) -> Option<impl FnOnce() -> Result<ETRecord, String> + Send + 'static> {
        let rec = self.etrecord.as_ref()?;
        let held = (!rec.released).then(|| rec.clone());
        let reload = self.etrecord_reload.clone();
        let entries = rec.entries.clone();
        Some(move || match (held, reload) {
            (Some(r), _) => Ok(r),
            (None, Some(reload)) => same_record((reload.whole)(), &entries),
            (None, None) => {
                Err("the ETRecord's graphs were released and it cannot be read again".into())
            }
        })
    }

    fn attach_etrecord(&mut self, name: &str, rec: ETRecord) -> Result<(), OpenError> {
        self.check_etrecord(name, &rec)?;
        let prepared = prepare_etrecord(name, rec);
        self.apply_prepared_etrecord(prepared);
        Ok(())
    }

    /// Whether an ETRecord belongs to this document's program (ExecuTorch's identity checks).
    fn check_etrecord(&self, name: &str, rec: &ETRecord) -> Result<(), OpenError> {
        if let Some(program) = &self.program {
            etscope_core::analysis::identity::check_etrecord(program, self.plan_index, rec)
                .map_err(|e| OpenError::Mismatch {
                    name: name.into(),
                    detail: e.to_string(),
                })?;
        }
        Ok(())
    }

    /// Attaches an ETRecord whose stages were built elsewhere ([`prepare_etrecord`], on a
    /// loader thread while this document was on screen), checking first that it belongs to
    /// this program; `reload` reads it again when its graphs were released.
    pub fn attach_prepared_etrecord(
        &mut self,
        prepared: PreparedEtrecord,
        reload: Option<EtrecordReload>,
    ) -> Result<(), OpenError> {
        self.accepts_etrecord(&prepared)?;
        self.revision += 1;
        let name = prepared.name.clone();
        self.apply_prepared_etrecord(prepared);
        if reload.is_some() {
            self.etrecord_reload = reload;
        }
        self.files.push(name);
        Ok(())
    }

    /// Whether [`Document::attach_prepared_etrecord`] would take it (the identity checks alone).
    pub fn accepts_etrecord(&self, prepared: &PreparedEtrecord) -> Result<(), OpenError> {
        self.check_etrecord(&prepared.name, &prepared.rec)?;
        // a record read with its graphs released: the operator check over the stages built
        // from them
        let (Some(program), true) = (&self.program, prepared.rec.released) else {
            return Ok(());
        };
        etscope_core::analysis::identity::check_etrecord_operators(
            program,
            self.plan_index,
            &prepared.rec,
            prepared.stages.iter().map(|s| (s.name.as_str(), &s.graph)),
        )
        .map_err(|e| OpenError::Mismatch {
            name: prepared.name.clone(),
            detail: e.to_string(),
        })
    }

    fn apply_prepared_etrecord(&mut self, prepared: PreparedEtrecord) {
        let PreparedEtrecord {
            rec,
            stages,
            edge_modules,
            ..
        } = prepared;
        let method = self
            .pte_graph()
            .map(|g| g.method.clone())
            .unwrap_or_else(|| "forward".into());
        if let Some(pte) = self.pte_stage {
            if let Some(map) = rec.debug_handle_map.get(&method) {
                self.stages[pte].graph.attach_debug_handles(map);
            }
        }
        let pte_view = self.pte_stage.map(|i| self.stages.remove(i));
        self.stages = stages;
        if let Some(mut v) = pte_view {
            // instructions inherit the module stack of the edge-stage node with their debug handle
            let edge = self
                .stages
                .iter()
                .find(|s| s.name == "edge" && s.unbuilt.is_none());
            if let Some(edge) = edge {
                v.graph.inherit_module_stacks(&edge.graph);
                v.graph.inherit_quant(&edge.graph);
                v.relayout();
            } else if let Some(by_handle) = &edge_modules {
                // an edge graph that does not quantize, waiting to be built: its module paths
                v.graph.inherit_module_stacks_by_handle(by_handle);
                v.relayout();
            }
            self.stages.push(v);
            self.pte_stage = Some(self.stages.len() - 1);
        }
        self.etrecord = Some(rec);
        // the passes see the program with its debug handles and module paths
        if self.pass_stages_deferred {
            self.stages.retain(|s| s.pass.is_none());
        } else {
            self.add_pass_stages();
        }
    }

    fn attach_etdump(&mut self, name: &str, dump: ETDump) -> Result<(), OpenError> {
        let ops = self
            .program
            .as_ref()
            .map(|p| p.instruction_ops(self.plan_index));
        if let Some(program) = &self.program {
            etscope_core::analysis::identity::check_etdump(program, self.plan_index, &dump)
                .map_err(|e| OpenError::Mismatch {
                    name: name.into(),
                    detail: e.to_string(),
                })?;
        }
        let prof = profile(&dump, ops.as_deref());
        self.profile = Some(prof);
        self.etdump = Some(dump);
        if self.debug_buffer.is_some() {
            self.resolve_captured(name)?;
        }
        Ok(())
    }

    /// Replaces the document's ETDump with a live capture's current window (already checked
    /// and profiled by the capture's worker), with its debug buffer and resolved tensors.
    pub fn set_live_capture(
        &mut self,
        dump: ETDump,
        prof: Profile,
        debug_buffer: Vec<u8>,
        captured: Vec<CapturedTensor>,
        tick_hz: Option<u32>,
    ) {
        self.revision += 1;
        self.declared_time = tick_hz.filter(|&hz| hz > 0).map(DeclaredTime::from_capture);
        self.profile = Some(prof);
        self.etdump = Some(dump);
        self.debug_buffer = (!debug_buffer.is_empty()).then_some(debug_buffer);
        self.captured = captured;
    }

    fn resolve_captured(&mut self, name: &str) -> Result<(), OpenError> {
        if let (Some(d), Some(buf)) = (&self.etdump, &self.debug_buffer) {
            self.captured = captured_tensors(d, buf).map_err(|source| OpenError::Read {
                name: name.into(),
                source,
            })?;
        }
        Ok(())
    }

    /// The `.pte` stage's graph.
    pub fn pte_graph(&self) -> Option<&Graph> {
        self.pte_stage
            .and_then(|i| self.stages.get(i))
            .map(|s| &s.graph)
    }

    /// Nodes of stage `to` that correspond to `node` of stage `from`: same instruction within a
    /// stage kind, else shared debug handles.
    pub fn corresponding(&self, from: usize, node: NodeId, to: usize) -> Vec<NodeId> {
        let (Some(a), Some(b)) = (self.stages.get(from), self.stages.get(to)) else {
            return Vec::new();
        };
        let Some(n) = a.graph.nodes.get(node) else {
            return Vec::new();
        };
        if from == to {
            return vec![node];
        }
        match n.kind {
            NodeKind::Input | NodeKind::Output => {
                return b
                    .graph
                    .nodes
                    .iter()
                    .filter(|m| m.kind == n.kind)
                    .map(|m| m.id)
                    .collect();
            }
            _ => {}
        }
        // the program and a pass's rewrite of it: by instruction, and by what the pass merged
        let of_program = |i: usize, s: &StageView| s.pass.is_some() || Some(i) == self.pte_stage;
        if of_program(from, a) && of_program(to, b) && (a.pass.is_some() || b.pass.is_some()) {
            let instructions = |m: &etscope_core::ir::Node| {
                m.instruction_id
                    .into_iter()
                    .chain(m.came_from.iter().filter_map(|o| o.instruction_id))
                    .collect::<Vec<usize>>()
            };
            let mine = instructions(n);
            return b
                .graph
                .nodes
                .iter()
                .filter(|m| instructions(m).iter().any(|i| mine.contains(i)))
                .map(|m| m.id)
                .collect();
        }
        let mut out: Vec<NodeId> = b
            .graph
            .nodes
            .iter()
            .filter(|m| m.debug_handles.iter().any(|h| n.debug_handles.contains(h)))
            .map(|m| m.id)
            .collect();
        out.dedup();
        out
    }

    /// Captured tensors of instruction `iid` (first run that captured it), in output order.
    pub fn captured_for(&self, iid: usize) -> Vec<&CapturedTensor> {
        let first_run = self
            .captured
            .iter()
            .find(|c| c.instruction_id == iid as i32 && !c.is_program_output)
            .map(|c| c.run);
        self.captured
            .iter()
            .filter(|c| {
                Some(c.run) == first_run && c.instruction_id == iid as i32 && !c.is_program_output
            })
            .collect()
    }
}
