//! Drawing the window: menu bar, side panel (documents, stages, search, legend), central tabs
//! (graph, profile, timeline, memory), inspector and status bar; and the export actions.

use std::path::PathBuf;

use eframe::egui::{self, Color32, RichText, ScrollArea};
use etscope_viewer::category::{Category, CategoryStyle};
use etscope_viewer::inspector::{inspector_ui, InspectorAction};
use etscope_viewer::{export, profile_view, search, tensor_view};

use super::busy::busy;
use super::{Command, DocView, EtscopeApp, Tab};

/// What can be exported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    GraphSvg,
    GraphPng,
    ProfileCsv,
    MemoryCsv,
    ChromeTrace,
    /// The Memory tab's placement on its part, as `fit --place FILE` reads it.
    Placement,
    /// Everything `fit --place FILE -o DIR` writes for a firmware, into a folder.
    Firmware,
}

impl ExportKind {
    fn extension(self) -> &'static str {
        match self {
            ExportKind::GraphSvg => "svg",
            ExportKind::GraphPng => "png",
            ExportKind::ProfileCsv | ExportKind::MemoryCsv => "csv",
            ExportKind::ChromeTrace => "json",
            ExportKind::Placement => "toml",
            ExportKind::Firmware => "",
        }
    }
}

/// Writes an export next to the program (or where the save dialog says).
pub fn export(app: &mut EtscopeApp, kind: ExportKind, ctx: &egui::Context) {
    let (rate, picker) = (app.ticks_per_us(), app.cost);
    let Some(dv) = app.docs.get_mut(app.active) else {
        return;
    };
    let stem = dv
        .doc
        .title
        .trim_end_matches(".pte")
        .trim_end_matches(".bpte")
        .to_string();
    let default_name = format!(
        "{stem}-{}.{}",
        match kind {
            ExportKind::GraphSvg | ExportKind::GraphPng => "graph",
            ExportKind::ProfileCsv => "profile",
            ExportKind::MemoryCsv => "memory",
            ExportKind::ChromeTrace => "trace",
            ExportKind::Placement => "placement",
            ExportKind::Firmware => "firmware",
        },
        kind.extension()
    );
    if kind == ExportKind::Firmware {
        let dir = rfd::FileDialog::new()
            .pick_folder()
            .unwrap_or_else(|| PathBuf::from(default_name.trim_end_matches('.')));
        let program_path = dv
            .sources
            .given
            .iter()
            .chain(&dv.sources.found)
            .find(|p| p.extension().is_some_and(|e| e == "pte"));
        let written = match (program_path, dv.doc.program.as_ref()) {
            (Some(path), Some(program)) => {
                dv.memory
                    .part_fit
                    .write_firmware_files(&dir, path, program, dv.doc.plan_index)
            }
            _ => None,
        };
        app.messages.push(match written {
            Some(Ok(w)) if w.removed.is_empty() => format!("wrote {}", w.written.join(", ")),
            Some(Ok(w)) => format!(
                "wrote {}; removed {} (an earlier placed program this placement does not make)",
                w.written.join(", "),
                w.removed.join(", ")
            ),
            Some(Err(e)) => format!("{e:#}"),
            None => {
                "nothing to export: open a program (.pte) and pick a part in the Memory tab first"
                    .into()
            }
        });
        return;
    }
    let path = rfd::FileDialog::new()
        .set_file_name(&default_name)
        .save_file()
        .unwrap_or_else(|| PathBuf::from(&default_name));
    let ticks = rate.unwrap_or(1000.0);
    // an emulator's times are its instruction counts: every export says so
    let times = dv
        .doc
        .declared_time
        .as_ref()
        .filter(|t| t.emulated)
        .map(|_| etscope_viewer::document::EMULATED_TIMES);
    let text = match kind {
        ExportKind::GraphSvg => {
            let stage = &dv.doc.stages[dv.stage];
            // an export is rare: computed here rather than borrowed from the frame cache
            let overlay = dv
                .doc
                .profile
                .as_ref()
                .filter(|_| dv.heat.on && Some(dv.stage) == dv.doc.pte_stage)
                .map(|p| profile_view::heat_overlay(&stage.graph, p));
            Some(export::graph_svg(stage, overlay.as_deref()))
        }
        ExportKind::ProfileCsv => dv.doc.profile.as_ref().map(|p| {
            // what the Profile tab shows beside each operator: the estimate too
            let vs = dv
                .profile
                .cost
                .measured(&dv.doc, picker, rate)
                .and_then(Result::ok);
            export::profile_csv(p, rate, vs, times)
        }),
        ExportKind::MemoryCsv => dv.doc.memory.as_ref().map(export::memory_csv),
        ExportKind::ChromeTrace => (!dv.profile.timeline_runs.is_empty())
            .then(|| export::chrome_trace(&dv.profile.timeline_runs, ticks, times)),
        ExportKind::Placement => dv.memory.part_fit.placement_toml(&dv.doc.title),
        ExportKind::Firmware => None,
        ExportKind::GraphPng => {
            let rect = dv.views[dv.stage].last_rect;
            app.request_png(path, rect, ctx);
            return;
        }
    };
    app.messages.push(match text {
        Some(t) => match std::fs::write(&path, t) {
            Ok(()) => format!("saved {}", path.display()),
            Err(e) => format!("{}: cannot write: {e}", path.display()),
        },
        None => {
            "nothing to export: open an ETDump (profile, trace) or a program (memory), or pick a part in the Memory tab (placement), first".into()
        }
    });
}

/// "Side by side with: [stage]": compares the current stage with another of the document.
fn side_by_side_bar(dv: &mut DocView, ui: &mut egui::Ui) {
    if dv.doc.stages.len() < 2 {
        return;
    }
    ui.horizontal(|ui| {
        ui.label("Side by side with");
        let current = dv
            .side_by_side
            .as_ref()
            .map(|sc| {
                let other = if sc.left == dv.stage {
                    sc.right
                } else {
                    sc.left
                };
                dv.doc.stages[other].name.clone()
            })
            .unwrap_or_else(|| "—".into());
        let mut pick: Option<Option<usize>> = None;
        egui::ComboBox::from_id_salt("side-by-side")
            .selected_text(current)
            .show_ui(ui, |ui| {
                if ui
                    .selectable_label(dv.side_by_side.is_none(), "—")
                    .clicked()
                {
                    pick = Some(None);
                }
                for (j, st) in dv.doc.stages.iter().enumerate() {
                    if j == dv.stage {
                        continue;
                    }
                    // a stage not built yet has nothing to match: shown once, it is built
                    let label = ui
                        .add_enabled(
                            st.unbuilt.is_none(),
                            egui::Button::selectable(false, &st.name),
                        )
                        .on_disabled_hover_text("not built yet: show this stage once to build it");
                    if label.clicked() {
                        pick = Some(Some(j));
                    }
                }
            });
        match pick {
            Some(Some(j)) => {
                let (l, r) = if j < dv.stage {
                    (j, dv.stage)
                } else {
                    (dv.stage, j)
                };
                dv.side_by_side = etscope_viewer::stage_compare::StageCompare::new(&dv.doc, l, r);
            }
            Some(None) => dv.side_by_side = None,
            None => {}
        }
    });
}

/// The search box's id (Ctrl+F focuses it).
pub const SEARCH_ID: &str = "graph-search";

/// Draws the whole window.
pub fn draw(app: &mut EtscopeApp, ui: &mut egui::Ui) {
    egui::Panel::top("menu").show(ui, |ui| menu_bar(app, ui));
    egui::Panel::bottom("status").show(ui, |ui| status_bar(app, ui));
    if app.docs.is_empty() {
        egui::CentralPanel::default().show(ui, |ui| welcome(app, ui));
        return;
    }
    app.active = app.active.min(app.docs.len() - 1);
    // both side panels resize by their edge, within bounds that always leave the canvas the
    // larger part of the window; wider content scrolls inside them instead of widening them
    let width = ui.available_width();
    egui::Panel::left("side")
        .resizable(true)
        .default_size(240.0)
        .size_range(180.0..=(width * 0.25).max(200.0))
        .show(ui, |ui| side_panel(app, ui));
    // two stages side by side take the inspector's room
    let side_by_side = app.tab == Tab::Graph
        && app
            .docs
            .get(app.active)
            .is_some_and(|d| d.side_by_side.is_some());
    if !side_by_side {
        egui::Panel::right("inspector")
            .resizable(true)
            .default_size(400.0)
            .size_range(260.0..=(width * 0.45).max(400.0))
            .show(ui, |ui| inspector_panel(app, ui));
    }
    egui::CentralPanel::default().show(ui, |ui| central(app, ui));
}

/// The methods of the active document's program, when it has more than one: picking one shows
/// it (its graph, memory plan and host runs).
fn method_picker(app: &mut EtscopeApp, ui: &mut egui::Ui) {
    let Some(dv) = app.docs.get(app.active) else {
        return;
    };
    let Some(program) = dv
        .doc
        .program
        .as_ref()
        .filter(|p| p.method_names().len() > 1)
    else {
        return;
    };
    let shown = dv.doc.method_name().unwrap_or_default().to_string();
    let mut picked = None;
    ui.label("method");
    egui::ComboBox::from_id_salt("method")
        .selected_text(shown.as_str())
        .show_ui(ui, |ui| {
            for name in program.method_names() {
                if ui.selectable_label(name == shown, name).clicked() && name != shown {
                    picked = Some(name.to_string());
                }
            }
        })
        .response
        .on_hover_text(
            "the program's methods: the graph, memory plan and host runs are of the one shown",
        );
    if let Some(method) = picked {
        app.commands.push(Command::SelectMethod {
            doc: app.active,
            method,
        });
    }
    ui.separator();
}

fn menu_bar(app: &mut EtscopeApp, ui: &mut egui::Ui) {
    egui::MenuBar::new().ui(ui, |ui| {
        ui.menu_button("File", |ui| {
            if ui.button("Open…").clicked() {
                app.commands.push(Command::OpenDialog);
                ui.close();
            }
            ui.menu_button("Recent", |ui| {
                if app.settings.recent.is_empty() {
                    ui.label("nothing yet");
                }
                for p in app.settings.recent.clone() {
                    if ui.button(p.display().to_string()).clicked() {
                        app.commands.push(Command::Open(vec![p]));
                        ui.close();
                    }
                }
            });
            ui.separator();
            for (label, kind) in [
                ("Export graph as SVG", ExportKind::GraphSvg),
                ("Export graph as PNG", ExportKind::GraphPng),
                ("Export profile as CSV", ExportKind::ProfileCsv),
                ("Export memory plan as CSV", ExportKind::MemoryCsv),
                ("Export trace for Perfetto", ExportKind::ChromeTrace),
                ("Export placement on the part", ExportKind::Placement),
                (
                    "Export for the firmware on the part (folder)",
                    ExportKind::Firmware,
                ),
            ] {
                if ui
                    .add_enabled(!app.docs.is_empty(), egui::Button::new(label))
                    .clicked()
                {
                    app.commands.push(Command::Export(kind));
                    ui.close();
                }
            }
            if !app.docs.is_empty() && ui.button("Close document").clicked() {
                app.commands.push(Command::CloseDocument(app.active));
                ui.close();
            }
        });
        ui.menu_button("View", |ui| {
            if let Some(dv) = app.docs.get_mut(app.active) {
                if ui.button("Fit graph (F)").clicked() {
                    dv.views[dv.stage].fit();
                    ui.close();
                }
                ui.checkbox(&mut dv.views[dv.stage].show_minimap, "Minimap");
                ui.add_enabled(
                    dv.doc.program.is_some(),
                    egui::Checkbox::new(
                        &mut dv.heat.on,
                        if dv.doc.profile.is_some() {
                            "Heat overlay (profile)"
                        } else {
                            "Heat overlay (estimate)"
                        },
                    ),
                );
            }
        });
        ui.menu_button("Help", |ui| {
            ui.label(RichText::new("Keyboard shortcuts").strong());
            egui::Grid::new("shortcuts").striped(true).show(ui, |ui| {
                for (keys, what) in super::SHORTCUTS {
                    ui.monospace(*keys);
                    ui.label(*what);
                    ui.end_row();
                }
            });
            ui.separator();
            ui.label("Documentation: README.md, ARCHITECTURE.md and docs/ in etscope's source");
            ui.label("(docs/cli-json.md, docs/compatibility.md); `etscope --help` for the CLI.");
            ui.separator();
            ui.label(format!(
                "etscope {} · reads ExecuTorch programs, ETRecords and ETDumps",
                env!("CARGO_PKG_VERSION")
            ));
        });
        ui.separator();
        for (tab, label) in [
            (Tab::Graph, "Graph"),
            (Tab::Profile, "Profile"),
            (Tab::Timeline, "Timeline"),
            (Tab::Memory, "Memory"),
            (Tab::Diff, "Diff"),
            (Tab::Live, "Live"),
        ] {
            ui.selectable_value(&mut app.tab, tab, label);
        }
        ui.separator();
        method_picker(app, ui);
        let declared = app
            .docs
            .get(app.active)
            .and_then(|dv| dv.doc.declared_time.clone());
        if let Some(d) = declared {
            // the capture says what its times are: the toolbar's rate does not apply
            ui.label("times in µs").on_hover_text(format!(
                "from {} ({} ticks/µs); the toolbar's rate applies to ETDumps that declare none",
                d.source, d.ticks_per_us
            ));
            return;
        }
        let mut use_time = app.settings.ticks_per_us.is_some();
        ui.checkbox(&mut use_time, "time").on_hover_text(
            "ETDumps declare no time unit: show times in µs at this many ticks per µs \
             (1000 = the ticks are ns, as ExecuTorch's Inspector assumes)",
        );
        if use_time {
            let mut rate = app.settings.ticks_per_us.unwrap_or(1000.0);
            ui.add(
                egui::DragValue::new(&mut rate)
                    .range(0.001..=100_000.0)
                    .speed(1.0)
                    .suffix(" ticks/µs"),
            )
            .on_hover_text("the toolbar's rate: this ETDump declares none");
            app.settings.ticks_per_us = Some(rate);
        } else {
            app.settings.ticks_per_us = None;
        }
    });
}

fn status_bar(app: &mut EtscopeApp, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        if let Some(job) = &app.jobs.load {
            busy(ui);
            ui.label(&job.progress);
        } else if let Some(dv) = app.docs.get(app.active) {
            let g = &dv.doc.stages[dv.stage].graph;
            ui.label(format!(
                "{} · stage {} · {} nodes · {} edges · {} files",
                dv.doc.title,
                g.stage,
                g.nodes.len(),
                g.edges.len(),
                dv.doc.files.len()
            ));
        } else {
            ui.label("no document");
        }
        if let Some(m) = app.messages.last() {
            ui.separator();
            ui.colored_label(Color32::from_rgb(240, 190, 90), m);
            if ui.small_button("×").clicked() {
                app.messages.clear();
            }
        }
    });
}

fn welcome(app: &mut EtscopeApp, ui: &mut egui::Ui) {
    if !app.load_errors.is_empty() {
        // the files given could not be opened: said here, where they would have been drawn
        ui.add_space(24.0);
        app.load_errors.card_ui(ui, true);
    }
    ui.vertical_centered(|ui| {
        ui.add_space(80.0);
        ui.heading("etscope");
        ui.label("Drop a .pte, .bpte, .etrecord, .etdp (+ debug buffer .bin) here, or open them.");
        if ui.button("Open…").clicked() {
            app.commands.push(Command::OpenDialog);
        }
        if let Some(job) = &app.jobs.load {
            ui.add_space(12.0);
            ui.horizontal(|ui| {
                busy(ui);
                ui.label(&job.progress);
            });
        }
        if !app.settings.recent.is_empty() {
            ui.add_space(16.0);
            ui.label("Recent:");
            for p in app.settings.recent.clone() {
                if ui.link(p.display().to_string()).clicked() {
                    app.commands.push(Command::Open(vec![p]));
                }
            }
        }
    });
}

fn side_panel(app: &mut EtscopeApp, ui: &mut egui::Ui) {
    if app.docs.len() > 1 {
        ui.label(RichText::new("Documents").strong());
        for i in 0..app.docs.len() {
            let title = app.docs[i].doc.title.clone();
            ui.selectable_value(&mut app.active, i, title);
        }
        ui.separator();
    }
    let app_cost_label = app.cost.label();
    let (app_tab_is_graph, app_tab_is_diff) = (app.tab == Tab::Graph, app.tab == Tab::Diff);
    let dv = &mut app.docs[app.active];
    ui.label(RichText::new("Stages").strong());
    let mut switch = None;
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, st) in dv.doc.stages.iter().enumerate() {
        if let Some(l) = &st.lowering {
            match groups.iter_mut().find(|(g, _)| *g == l.group) {
                Some((_, members)) => members.push(i),
                None => groups.push((l.group.clone(), vec![i])),
            }
            continue;
        }
        let label = match (st.pass, &st.unbuilt) {
            (Some(pass), _) => format!("pte + {pass}  ({} ops)", st.graph.op_count()),
            (None, Some(entry)) if dv.stage_jobs.failed.contains(entry) => {
                format!("{}  (could not be built)", st.name)
            }
            (None, Some(_)) if dv.stage_jobs.build.is_some() && dv.stage == i => {
                format!("{}  (building…)", st.name)
            }
            (None, Some(_)) => format!("{}  (built when shown)", st.name),
            (None, None) => format!("{}  ({} ops)", st.name, st.graph.op_count()),
        };
        if ui.selectable_label(dv.stage == i, label).clicked() {
            switch = Some(i);
        }
    }
    // a lowering's passes under one collapsible header
    for (group, members) in &groups {
        egui::CollapsingHeader::new(RichText::new(format!("etscope lowering · {group}")).strong())
            .id_salt(("lowering", group))
            .default_open(true)
            .show(ui, |ui| {
                for &i in members {
                    let st = &dv.doc.stages[i];
                    let Some(l) = &st.lowering else { continue };
                    let text = super::lowering::label(l, st.graph.op_count());
                    if ui
                        .selectable_label(dv.stage == i, text)
                        .on_hover_text(super::lowering::numerics_hover(l))
                        .clicked()
                    {
                        switch = Some(i);
                    }
                }
            })
            .header_response
            .on_hover_text(
                "etscope's own passes on the ETRecord's edge graph, in ExecuTorch 1.5.1's order",
            );
    }
    if let Some(i) = switch {
        dv.switch_stage(i);
    }
    super::lowering::controls(dv, ui);
    if dv.preview {
        if let Some(job) = &app.jobs.load {
            ui.horizontal(|ui| {
                busy(ui);
                ui.weak(&job.progress);
            });
        }
    }
    if !dv.sources.found.is_empty() {
        ui.add_space(4.0);
        ui.weak("Found beside the program by name:");
        for path in &dv.sources.found {
            ui.horizontal(|ui| {
                ui.label(super::loader::display_name(path))
                    .on_hover_text(path.display().to_string());
                let remove = ui
                    .add_enabled(app.jobs.load.is_none(), egui::Button::new("remove").small())
                    .on_hover_text(
                        "reopen the program without this file; it is not looked for again",
                    );
                if remove.clicked() {
                    app.commands.push(Command::RemoveFound {
                        doc: app.active,
                        path: path.clone(),
                    });
                }
            });
        }
    }
    ui.separator();
    ui.label(RichText::new("Search").strong());
    let response = ui.add(
        egui::TextEdit::singleline(&mut dv.search)
            .id(egui::Id::new(SEARCH_ID))
            .hint_text("op, #instr, v12, h4")
            .desired_width(f32::INFINITY),
    );
    if response.changed() {
        dv.hits = search::search(&dv.doc.stages[dv.stage].graph, &dv.search, 200);
    }
    if response.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
        if let Some(h) = dv.hits.first() {
            let n = h.node;
            dv.select(n);
        }
    }
    let mut pick = None;
    ScrollArea::vertical()
        .id_salt("hits")
        .max_height(180.0)
        .show(ui, |ui| {
            for h in &dv.hits {
                let graph = &dv.doc.stages[dv.stage].graph;
                if ui
                    .selectable_label(dv.selected() == Some(h.node), search::hit_label(graph, h))
                    .clicked()
                {
                    pick = Some(h.node);
                }
            }
        });
    if let Some(n) = pick {
        dv.select(n);
    }
    ui.separator();
    let stage = &dv.doc.stages[dv.stage];
    let mut chosen = None;
    if !stage.modules.is_empty() {
        ui.collapsing(format!("Modules ({})", stage.modules.len()), |ui| {
            ScrollArea::vertical()
                .id_salt("modules")
                .max_height(160.0)
                .show(ui, |ui| {
                    for m in &stage.modules {
                        let indent = "  ".repeat(m.depth.saturating_sub(1));
                        if ui
                            .link(format!(
                                "{indent}{} ({}, {})",
                                m.path,
                                m.short_class(),
                                m.nodes.len()
                            ))
                            .clicked()
                        {
                            chosen = Some(m.path.clone());
                        }
                    }
                });
        });
    }
    if let Some(path) = chosen {
        let view = &mut dv.views[dv.stage];
        view.expand_to(&path);
        if let Some(&n) = dv.doc.stages[dv.stage]
            .modules
            .iter()
            .find(|m| m.path == path)
            .and_then(|m| m.nodes.first())
        {
            dv.select(n);
        }
    }
    if app_tab_is_graph && dv.side_by_side.is_some() {
        // the panes colour what lowering did, not the op's category
        etscope_viewer::stage_compare::legend_ui(ui);
    } else if app_tab_is_diff {
        ui.label(RichText::new("Legend (Diff)").strong());
        ui.weak("nodes coloured by the SNR of their row: the scale above the panes");
    } else if dv.heat.on && dv.doc.profile.is_some() && Some(dv.stage) == dv.doc.pte_stage {
        profile_view::heat_legend_ui(ui, "time share of the hottest op:");
    } else if dv.heat.on && dv.doc.program.is_some() && Some(dv.stage) == dv.doc.pte_stage {
        profile_view::heat_legend_ui(
            ui,
            &format!(
                "estimated cycles on {app_cost_label}, share of the costliest call (an estimate):"
            ),
        );
    } else {
        ui.label(RichText::new("Legend").strong());
        for c in Category::ALL {
            ui.horizontal(|ui| {
                let (r, _) = ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
                ui.painter().rect_filled(r, 2.0, c.color());
                ui.label(c.label());
            });
        }
    }
}

fn central(app: &mut EtscopeApp, ui: &mut egui::Ui) {
    let tab = app.tab;
    let picker = app.cost;
    let ticks = app.ticks_per_us();
    // files of the last load that could not be used: said above what the others fill
    if !app.load_errors.is_empty() {
        app.load_errors.card_ui(ui, false);
        ui.add_space(6.0);
    }
    let dv = &mut app.docs[app.active];
    dv.profile.table.ticks_per_us = ticks;
    match tab {
        Tab::Graph => {
            side_by_side_bar(dv, ui);
            if let Some(mut sc) = dv.side_by_side.take() {
                sc.ui(ui, &dv.doc);
                dv.side_by_side = Some(sc);
                return;
            }
            let stage_index = dv.stage;
            if dv.doc.stages[stage_index].unbuilt.is_some() {
                ui.add_space(24.0);
                ui.horizontal(|ui| {
                    let stage = &dv.doc.stages[stage_index];
                    let failed = stage
                        .unbuilt
                        .as_ref()
                        .is_some_and(|e| dv.stage_jobs.failed.contains(e));
                    if failed {
                        ui.label(format!(
                            "The stage {} could not be built (the message says why); the other stages are there.",
                            stage.name
                        ));
                        return;
                    }
                    if dv.stage_jobs.build.is_some() {
                        busy(ui);
                    }
                    ui.label(format!(
                        "Building the stage {} from the ETRecord (large stages are built when first shown)…",
                        stage.name
                    ));
                });
                return;
            }
            // the overlay is cached per stage and document revision: borrowed, not rebuilt
            dv.heat_overlay(picker);
            let overlay = if dv.heat.on && Some(stage_index) == dv.doc.pte_stage {
                dv.heat.cache.as_ref().map(|c| c.1.as_slice())
            } else {
                None
            };
            let r = dv.views[stage_index].show(ui, &dv.doc.stages[stage_index], overlay);
            if let Some(n) = r.clicked {
                dv.neighbourhood = Some(etscope_viewer::neighborhood::Neighbourhood::new(
                    &dv.doc.stages[stage_index],
                    n,
                ));
            }
            if r.cleared {
                dv.neighbourhood = None;
            }
        }
        Tab::Profile => super::profile_tab::ui(app, ui),
        Tab::Timeline => {
            if dv.profile.timeline_runs.is_empty() {
                ui.label("No ETDump is open.");
            } else {
                ui.label("scroll to zoom, drag to pan, double-click to reset; click a bar to select its node");
                // an emulator's times are instruction counts: said here as on the Profile tab
                if let Some(note) = super::profile_tab::time_note(&dv.doc) {
                    ui.label(egui::RichText::new(note).italics());
                }
                if let Some(i) = profile_view::timeline_ui(
                    ui,
                    &dv.profile.timeline_runs,
                    &mut dv.profile.timeline,
                    &dv.profile.table,
                ) {
                    dv.select_instruction(i);
                }
            }
        }
        Tab::Memory => super::memory_tab::memory_tab(dv, ui),
        Tab::Diff => diff_tab(app, ui),
        Tab::Live => super::live_tab::ui(app, ui),
    }
}

fn diff_tab(app: &mut EtscopeApp, ui: &mut egui::Ui) {
    if app.numerics.data.is_some() || app.numerics.result.is_some() {
        egui::CollapsingHeader::new("Over a dataset")
            .default_open(true)
            .show(ui, |ui| super::numerics::ui(app, ui));
    }
    if let Some(running) = &app.jobs.diff {
        if super::busy::job_line(ui, &running.job) {
            running.job.cancel();
        }
        ui.weak("both sides run on the input, every intermediate tensor compared");
        ui.ctx()
            .request_repaint_after(std::time::Duration::from_millis(100));
    }
    let active = app.active;
    let others: Vec<(usize, String)> = app
        .docs
        .iter()
        .enumerate()
        .filter(|(i, d)| *i != active && d.doc.program.is_some())
        .map(|(i, d)| (i, d.doc.title.clone()))
        .collect();
    let own = app.docs[active]
        .doc
        .program
        .is_some()
        .then(|| app.docs[active].own_target());
    ui.horizontal(|ui| {
        app.host.ui(ui, own);
    });
    ui.horizontal(|ui| {
        app.host.libm_ui(ui);
    });
    let dv = &mut app.docs[active];
    // the targets wrap onto a second line in a narrow window instead of running off its edge
    ui.horizontal_wrapped(|ui| {
        ui.label("Compare this program, run on its input array, against:");
        for (i, title) in &others {
            if ui.button(format!("vs {title}")).clicked() {
                app.commands
                    .push(Command::Compare(super::DiffTarget::Document(*i)));
            }
        }
        let pte = dv.doc.pte_stage;
        for (si, st) in dv.doc.stages.iter().enumerate() {
            if Some(si) != pte && ui.button(format!("vs stage {}", st.name)).clicked() {
                app.commands
                    .push(Command::Compare(super::DiffTarget::Stage(si)));
            }
        }
        if ui
            .add_enabled(
                !dv.doc.captured.is_empty(),
                egui::Button::new("vs device capture (ETDump)"),
            )
            .clicked()
        {
            app.commands
                .push(Command::Compare(super::DiffTarget::Device));
        }
        if dv.doc.input.is_none() {
            ui.colored_label(
                Color32::from_rgb(240, 190, 90),
                "open an input .npy with the program first",
            );
        }
    });
    if let Some(e) = &dv.diff_error {
        ui.colored_label(
            Color32::from_rgb(240, 190, 90),
            format!("Cannot compare: {e}"),
        );
    }
    ui.separator();
    let Some(pte) = dv.doc.pte_stage else {
        ui.label("Open a program to compare.");
        return;
    };
    match &mut dv.diff {
        Some((view, stage_b)) => view.ui(ui, &dv.doc.stages[pte], stage_b),
        None => {
            ui.label("Open two programs of one model (e.g. model_fp32.pte and model_int8_cortex_m55.pte with their .etrecord files) and an input .npy, or a program with its ETDump and debug buffer, then choose what to compare against.");
        }
    }
}

fn inspector_panel(app: &mut EtscopeApp, ui: &mut egui::Ui) {
    let dv = &mut app.docs[app.active];
    if app.tab == Tab::Diff {
        match &dv.diff {
            Some((view, _)) => view.pair_ui(ui),
            None => {
                ui.label("No comparison yet.");
            }
        }
        return;
    }
    let Some(node) = dv.selected() else {
        ui.heading("Inspector");
        ui.label("Click a node, search, or click a row, bar or box.");
        return;
    };
    let mut action = None;
    // one scroll position per node: a new selection starts at its top
    ScrollArea::both()
        .id_salt(("inspector", node))
        .show(ui, |ui| {
            let graph = &dv.doc.stages[dv.stage].graph;
            let device = dv
                .doc
                .program
                .as_ref()
                .map(|_| app.host.device_with_own(dv.own_target()));
            action = inspector_ui(ui, graph, node, dv.doc.program.as_ref(), device);
            if let Some(iid) = graph.nodes.get(node).and_then(|n| n.instruction_id) {
                if let Some(row) = dv
                    .doc
                    .profile
                    .as_ref()
                    .and_then(|p| p.rows.iter().find(|r| r.instruction_id == iid))
                {
                    ui.collapsing("profile", |ui| {
                        let f = |x: f64| dv.profile.table.fmt(x);
                        ui.monospace(format!(
                            "{} runs  avg {}  p50 {}  min {}  max {} {}",
                            row.stats.count,
                            f(row.stats.avg),
                            f(row.stats.p50),
                            f(row.stats.min as f64),
                            f(row.stats.max as f64),
                            dv.profile.table.unit()
                        ));
                    });
                }
                let captured = dv.doc.captured_for(iid);
                if !captured.is_empty() {
                    ui.collapsing(format!("captured outputs ({})", captured.len()), |ui| {
                        for (k, c) in captured.iter().enumerate() {
                            tensor_view::tensor_ui(ui, &format!("{iid}-{k}"), &c.tensor);
                        }
                    });
                }
            }
            if let Some(nb) = &mut dv.neighbourhood {
                ui.collapsing("neighbourhood", |ui| {
                    ui.allocate_ui(egui::vec2(ui.available_width(), 220.0), |ui| {
                        if let Some(n) = nb.ui(ui) {
                            action = Some(InspectorAction::Select(n));
                        }
                    });
                });
            }
        });
    if let Some(InspectorAction::Select(n)) = action {
        dv.select(n);
    }
}
