//! The Diff tab's comparison: the active document against another document, one of its
//! stages or the device's captured tensors, run off the frame on a worker and shown when done.

use super::*;
use crate::diff_side::{DiffSide, LaterRecord};
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

impl EtscopeApp {
    pub fn compare(&mut self, target: DiffTarget) -> Result<(), String> {
        use etscope_core::analysis::diff::{diff, Threshold};
        if self.jobs.diff.is_some() {
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
        // what the worker needs, owned: a program side per document (its ETRecord read there,
        // again if the window released its graphs) and the other side's stage view
        let host = self.host;
        let program_side = |doc: &etscope_viewer::document::Document| -> Result<DiffSide, String> {
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
            let record = doc.whole_etrecord_later().map(|read| {
                (
                    Box::new(read) as LaterRecord,
                    format!("ETRecord of {}", doc.title),
                )
            });
            Ok(DiffSide::Program {
                label: match host.target {
                    Some(t) => format!("{} as {}", doc.title, t.name()),
                    None => doc.title.clone(),
                },
                device: host.device_for(&program),
                program,
                record,
            })
        };
        let a_side = program_side(&dv.doc)?;
        // a stage or a pass's rewrite runs on the core the program's side runs on
        let (device, program) = match &a_side {
            DiffSide::Program {
                device, program, ..
            } => (*device, program.clone()),
            _ => return Err("the document has no program".into()),
        };
        let (b_side, stage_b) = match target {
            DiffTarget::Document(j) => {
                let doc = &self.docs.get(j).ok_or("no such document")?.doc;
                let pte_b = doc.pte_stage.ok_or("the other document has no program")?;
                (program_side(doc)?, doc.stages[pte_b].clone())
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
                (
                    DiffSide::Lowered {
                        name: view.name.clone(),
                        module,
                        export: format!("ETRecord of {}", dv.doc.title),
                        device,
                    },
                    view.clone(),
                )
            }
            DiffTarget::Stage(si) if dv.doc.stages.get(si).is_some_and(|v| v.pass.is_some()) => {
                let view = dv.doc.stages.get(si).ok_or("no such stage")?;
                (
                    DiffSide::Rewrite {
                        name: view.name.clone(),
                        program,
                        graph: view.graph.clone(),
                        device,
                    },
                    view.clone(),
                )
            }
            DiffTarget::Stage(si) => {
                let view = dv.doc.stages.get(si).ok_or("no such stage")?;
                let read = dv.doc.whole_etrecord_later().ok_or("no ETRecord is open")?;
                (
                    DiffSide::Stage {
                        label: view.name.clone(),
                        name: view.name.clone(),
                        record: Box::new(read),
                        export: format!("ETRecord of {}", dv.doc.title),
                        device,
                    },
                    view.clone(),
                )
            }
            DiffTarget::Device => {
                if dv.doc.captured.is_empty() {
                    return Err("no captured tensors: open the ETDump and its debug buffer (.bin) with the program".into());
                }
                let graph = dv.doc.pte_graph().ok_or("no program graph")?.clone();
                (
                    DiffSide::Captured {
                        label: "device (ETDump)".into(),
                        graph,
                        captured: dv.doc.captured.clone(),
                        export: None,
                    },
                    dv.doc.stages[pte_a].clone(),
                )
            }
        };
        let job = Job::spawn(
            "comparing",
            || {},
            move |handle| -> DiffResult {
                let flag = handle.cancel_flag();
                let inputs = std::slice::from_ref(&input);
                let a = a_side.source(inputs, Some(flag.clone()))?;
                let b = b_side.source(inputs, Some(flag))?;
                let report = diff(&a, &b, Threshold::default()).map_err(|e| e.to_string())?;
                Ok((report, a, b))
            },
        );
        self.jobs.diff = Some(DiffJob {
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
        let Some(running) = &mut self.jobs.diff else {
            return;
        };
        let Some(outcome) = running.job.poll() else {
            return;
        };
        let Some(job) = self.jobs.diff.take() else {
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
