//! The Diff tab's comparison: the active document against another document, one of its
//! stages or the device's captured tensors, run off the frame on a worker and shown when done.

use super::*;
use crate::job::Job;

/// What a comparison's worker sends back.
type DiffResult = Result<
    (
        etscope_core::analysis::diff::DiffReport,
        etscope_core::analysis::diff::Source,
        etscope_core::analysis::diff::Source,
    ),
    String,
>;

/// A comparison running off the UI thread: the document it belongs to, the other side's stage,
/// and the job (its Cancel stops the host runs at their next instruction).
pub struct DiffJob {
    pub doc: usize,
    stage_b: etscope_viewer::document::StageView,
    pub job: Job<DiffResult>,
}

/// An ETRecord as the worker gets it: read there again when the window released its graphs.
type LaterRecord =
    Box<dyn FnOnce() -> Result<etscope_core::formats::etrecord::ETRecord, String> + Send>;

impl EtscopeApp {
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
            Option<(LaterRecord, String)>,
        );
        let side_of = |doc: &etscope_viewer::document::Document| -> Result<Side, String> {
            let program = doc.program.clone().ok_or("no program")?;
            // host runs diff the default method; another shown here would be compared with it
            let shown = doc.method_name().unwrap_or_default().to_string();
            if doc.plan_index != program.default_plan_index() {
                return Err(format!(
                    "Diff runs the program's {:?} method; this window shows {shown:?} (pick it in the method list to compare)",
                    program
                        .method_names()
                        .get(program.default_plan_index())
                        .copied()
                        .unwrap_or_default()
                ));
            }
            let rec = doc.whole_etrecord_later().map(|read| {
                (
                    Box::new(read) as LaterRecord,
                    format!("ETRecord of {}", doc.title),
                )
            });
            Ok((doc.title.clone(), program, rec))
        };
        let host = self.host;
        // on the worker: the ETRecord read (again, if released), then the program run
        let run = move |(label, program, rec): Side,
                        input: &etscope_core::tensor::TensorData,
                        flag: std::sync::Arc<std::sync::atomic::AtomicBool>| {
            let rec = match rec {
                Some((read, export)) => Some((read()?, export)),
                None => None,
            };
            let rec = rec.as_ref().map(|(r, e)| (r, e.as_str()));
            let label = match host.target {
                Some(t) => format!("{label} as {}", t.name()),
                None => label.clone(),
            };
            program_source_cancellable(
                &label,
                &program,
                rec,
                std::slice::from_ref(input),
                Some(host.device_for(&program)),
                Some(flag),
            )
            .map_err(|e| format!("{label}: {e}"))
        };
        let a_side = side_of(&dv.doc)?;
        enum Other {
            Program(Side),
            Stage(String, LaterRecord, String),
            /// A pass's rewrite of this document's program.
            Rewrite(String, etscope_core::ir::Graph),
            /// A stage of etscope's lowering of the document's ETRecord.
            Lowered(String, std::sync::Arc<etscope_core::lower::Module>, String),
            /// The program's graph and the tensors the device captured.
            Device(
                etscope_core::ir::Graph,
                Vec<etscope_core::formats::debug_buffer::CapturedTensor>,
            ),
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
                let read = dv.doc.whole_etrecord_later().ok_or("no ETRecord is open")?;
                let export = format!("ETRecord of {}", dv.doc.title);
                (
                    Other::Stage(view.name.clone(), Box::new(read), export),
                    view.clone(),
                )
            }
            DiffTarget::Device => {
                if dv.doc.captured.is_empty() {
                    return Err("no captured tensors: open the ETDump and its debug buffer (.bin) with the program".into());
                }
                let graph = dv.doc.pte_graph().ok_or("no program graph")?.clone();
                (
                    Other::Device(graph, dv.doc.captured.clone()),
                    dv.doc.stages[pte_a].clone(),
                )
            }
        };
        // a stage or a pass's rewrite runs on the core the program's side runs on
        let device = host.device_for(&a_side.1);
        let program = a_side.1.clone();
        let job = Job::spawn(
            "comparing",
            || {},
            move |handle| -> DiffResult {
                let flag = handle.cancel_flag();
                let a = run(a_side, &input, flag.clone())?;
                let b = match other {
                    Other::Program(side) => run(side, &input, flag)?,
                    Other::Stage(name, read, export) => stage_source_cancellable(
                        &name,
                        &read()?,
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
                    Other::Device(graph, captured) => {
                        Source::from_captured("device (ETDump)", graph, &captured)
                    }
                };
                let report = diff(&a, &b, Threshold::default()).map_err(|e| e.to_string())?;
                Ok((report, a, b))
            },
        );
        self.diff_job = Some(DiffJob {
            doc: i,
            stage_b,
            job,
        });
        self.tab = Tab::Diff;
        Ok(())
    }
    /// Takes a finished comparison from its worker; a worker that panicked is reported with
    /// the job's name, never waited for.
    pub(super) fn poll_diff(&mut self) {
        let Some(running) = &mut self.diff_job else {
            return;
        };
        let Some(outcome) = running.job.poll() else {
            return;
        };
        let Some(job) = self.diff_job.take() else {
            return;
        };
        let result = outcome.into_result().and_then(|r| r);
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
}
