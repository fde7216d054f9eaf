//! The Memory tab: the program's memory plan per arena as address × lifetime, every planner's
//! placement of the same tensors beside it (computed on a worker), the findings and the whole
//! RAM budget.

use super::DocView;
use eframe::egui::{self, Color32, RichText};
use etscope_viewer::memory_view;

/// Findings and arenas listed one by one at most (a hostile plan can declare millions).
const MAX_SHOWN: usize = 64;

pub(super) fn memory_tab(dv: &mut DocView, ui: &mut egui::Ui) {
    let selected_instr = dv
        .selected()
        .and_then(|n| dv.doc.stages[dv.stage].graph.nodes.get(n))
        .and_then(|n| n.instruction_id);
    // every planner's placement of the same tensors and the RAM budget, computed once per
    // document on a worker (a large plan takes the planners seconds)
    if dv.memory.replan.is_none() {
        match &dv.memory.replan_job {
            Some(job) => {
                if super::busy::job_line(ui, job) {
                    job.cancel();
                }
            }
            None => super::doc_view::start_replan(dv, ui.ctx()),
        }
    }
    if let Some(program) = dv.doc.program.as_ref() {
        dv.memory
            .part_fit
            .ui(ui, program, program.default_plan_index());
        // the Profile tab's estimate prices the memory as placed here
        dv.profile
            .cost
            .follow_placement(dv.memory.part_fit.placed_estimate());
    }
    // borrowed, not cloned: the plan and the graph are read, the per-arena view states written
    let (doc, states, replan, compare, budget) = (
        &dv.doc,
        &mut dv.memory.arenas,
        &dv.memory.replan,
        &mut dv.memory.compare_plan,
        &dv.memory.budget,
    );
    let Some(plan) = doc.memory.as_ref() else {
        ui.label("Open a .pte to see its memory plan.");
        return;
    };
    let Some(graph) = doc.pte_graph() else {
        return;
    };
    for f in plan.findings.iter().take(MAX_SHOWN) {
        ui.colored_label(
            Color32::from_rgb(240, 120, 90),
            format!("{f:?}")
                .split("message: ")
                .last()
                .unwrap_or_default()
                .trim_end_matches(['}', ' ', '"'])
                .to_string(),
        );
    }
    if plan.findings.len() > MAX_SHOWN {
        ui.label(format!(
            "… and {} more findings",
            plan.findings.len() - MAX_SHOWN
        ));
    }
    if let Some(b) = budget {
        budget_ui(ui, b);
    }
    if let Some(program) = doc.program.as_ref() {
        for (i, v) in etscope_core::formats::ethos_u::delegates(program, 0) {
            ui.label(match v {
                Ok(v) => format!(
                    "Ethos-U delegate {i}: {} — SRAM the application provides",
                    v.summary()
                ),
                Err(e) => format!("Ethos-U delegate {i}: payload not decoded: {e}"),
            });
        }
    }
    // arenas that hold tensors (empty ones are summarised)
    let shown: Vec<usize> = plan
        .arenas
        .iter()
        .enumerate()
        .filter(|(_, a)| !a.tensors.is_empty())
        .map(|(i, _)| i)
        .take(MAX_SHOWN)
        .collect();
    let empty = plan.arenas.iter().filter(|a| a.tensors.is_empty()).count();
    if empty > 0 {
        ui.label(format!("{empty} declared arenas hold no tensor"));
    }
    if !shown.is_empty() {
        memory_view::legend_ui(ui);
    }
    let each = (ui.available_height() / shown.len().max(1) as f32 - 30.0).max(160.0);
    let mut clicked = None;
    for &i in &shown {
        let a = &plan.arenas[i];
        ui.label(
            RichText::new(format!(
                "arena {}: declared {} B · peak {} B · lower bound {} B · waste {} B · {} tensors",
                a.memory_id,
                a.size,
                a.peak,
                a.lower_bound,
                a.waste(),
                a.tensors.len()
            ))
            .strong(),
        );
        let alt = replan
            .as_ref()
            .and_then(|r| r.iter().find(|r| r.memory_id == a.memory_id));
        let chosen = alt.and_then(|alt| {
            if compare == "best" {
                alt.best()
            } else {
                alt.algorithm(compare)
            }
        });
        if let Some(alt) = alt {
            plan_comparison_ui(ui, a, alt, chosen, compare);
        }
        ui.allocate_ui(egui::vec2(ui.available_width(), each), |ui| {
            let Some(state) = states.get_mut(i) else {
                return;
            };
            // the program's plan and the chosen one side by side, on one pair of axes (one
            // view state: zoom and pan move both)
            let moved = chosen
                .filter(|c| c.name != "executorch" || !alt.is_some_and(|x| x.executorch_reproduced))
                .and_then(|c| {
                    etscope_core::plan::alternatives::moved(plan, a.memory_id, c)
                        .map(|m| (c.name, m))
                });
            match &moved {
                Some((name, other)) => {
                    ui.columns(2, |cols| {
                        cols[0].label("as the program places it");
                        if let Some(iid) = memory_view::arena_ui(
                            &mut cols[0],
                            a,
                            plan.instruction_count,
                            graph,
                            selected_instr,
                            state,
                        ) {
                            clicked = Some(iid);
                        }
                        cols[1].label(if *name == "reorder" {
                            "as reorder places it (time: the new chain order)".to_string()
                        } else {
                            format!("as {name} places it")
                        });
                        if let Some(iid) = memory_view::arena_ui(
                            &mut cols[1],
                            other,
                            plan.instruction_count,
                            graph,
                            selected_instr,
                            state,
                        ) {
                            clicked = Some(iid);
                        }
                    });
                }
                None => {
                    if let Some(iid) = memory_view::arena_ui(
                        ui,
                        a,
                        plan.instruction_count,
                        graph,
                        selected_instr,
                        state,
                    ) {
                        clicked = Some(iid);
                    }
                }
            }
        });
    }
    if let Some(i) = clicked {
        dv.select_instruction(i);
    }
}

/// One line per arena: what each planner needs, what saved the bytes (gap reuse by offset, in
/// place sharing), and which one is drawn beside the program's plan.
fn plan_comparison_ui(
    ui: &mut egui::Ui,
    a: &etscope_core::plan::Arena,
    alt: &etscope_core::plan::alternatives::ArenaAlternatives,
    chosen: Option<&etscope_core::plan::alternatives::AlgorithmPlan>,
    compare: &mut String,
) {
    let peak = |name: &str| alt.algorithm(name).map(|p| p.peak);
    ui.horizontal_wrapped(|ui| {
        ui.label("Compare with");
        egui::ComboBox::from_id_salt(("compare_plan", a.memory_id))
            .selected_text(compare.as_str())
            .show_ui(ui, |ui| {
                ui.selectable_value(compare, "best".to_string(), "best (smallest)");
                for p in &alt.algorithms {
                    ui.selectable_value(compare, p.name.to_string(), p.name);
                }
            });
        if let Some(c) = chosen {
            let saved = alt.executorch_peak.saturating_sub(c.peak);
            ui.label(format!(
                "{}: {} B, {} B less than the program's {} B ({:.1}%)",
                c.name,
                c.peak,
                saved,
                alt.executorch_peak,
                if alt.executorch_peak > 0 {
                    100.0 * saved as f64 / alt.executorch_peak as f64
                } else {
                    0.0
                }
            ));
            ui.weak("· the same estimated cycles")
                .on_hover_text(
                    "every plan runs the same calls (a reorder in another order): the cost model prices calls, not addresses, and has no caches (docs/cost-model.md)",
                );
        }
    });
    let mut why = Vec::new();
    if let Some(bf) = peak("best_fit") {
        why.push(format!(
            "gap reuse (offsets instead of shared objects): {} B",
            alt.executorch_peak.saturating_sub(bf)
        ));
        if let Some(ip) = peak("exact_in_place").or(peak("in_place")) {
            why.push(format!(
                "in-place outputs over dying inputs: {} B more",
                bf.saturating_sub(ip)
            ));
        }
    }
    if let (Some(r), Some(best_here)) = (
        peak("reorder"),
        alt.algorithms
            .iter()
            .filter(|p| p.order.is_none())
            .map(|p| p.peak)
            .min(),
    ) {
        why.push(format!(
            "another chain order: {} B more",
            best_here.saturating_sub(r)
        ));
    }
    why.push(format!(
        "lower bound {} B, {} B with in-place sharing",
        alt.lower_bound, alt.lower_bound_in_place
    ));
    if alt.executorch_reproduced {
        why.push("ExecuTorch 1.5.1's planner reproduced offset for offset".into());
    }
    ui.label(why.join(" · "));
}

/// The program's whole RAM on a 32-bit Arm core as one bar, a segment per part, and its flash.
fn budget_ui(ui: &mut egui::Ui, b: &etscope_core::plan::budget::RamBudget) {
    let parts = [
        ("planned arenas", b.planned, Color32::from_rgb(70, 130, 200)),
        (
            "method allocator",
            b.method_allocator,
            Color32::from_rgb(200, 140, 60),
        ),
        (
            "temp allocator",
            b.temp_allocator,
            Color32::from_rgb(150, 110, 190),
        ),
        (
            "delegate scratch",
            b.scratch,
            Color32::from_rgb(120, 170, 90),
        ),
    ];
    ui.label(
        RichText::new(format!(
            "The program's own RAM in ExecuTorch 1.5.1's runtime (a 32-bit Arm core): {} B · flash {} B (the program, read in place); on a part, its pools add the runner's padding and the kernel registry, and the code",
            b.total_ram, b.flash
        ))
        .strong(),
    );
    let width = ui.available_width().min(900.0);
    let (rect, _) = ui.allocate_exact_size(egui::vec2(width, 16.0), egui::Sense::hover());
    let total = b.total_ram.max(1) as f32;
    let mut x = rect.left();
    for (name, bytes, colour) in parts {
        let w = rect.width() * bytes as f32 / total;
        if w <= 0.0 {
            continue;
        }
        let seg =
            egui::Rect::from_min_size(egui::pos2(x, rect.top()), egui::vec2(w, rect.height()));
        ui.painter().rect_filled(seg, 0.0, colour);
        ui.interact(seg, ui.id().with(("budget", name)), egui::Sense::hover())
            .on_hover_text(format!("{name}: {bytes} B"));
        x += w;
    }
    ui.horizontal_wrapped(|ui| {
        for (name, bytes, colour) in parts {
            ui.colored_label(colour, "■");
            ui.label(format!("{name} {bytes} B"));
        }
        for n in &b.method.not_modelled {
            ui.label(format!("· not counted: {n}"));
        }
    });
}
