//! The inspector panel: everything the IR knows about the selected node — operator, ids, debug
//! handles, arguments with their values, input/output tensors (shape, dtype, `dim_order`,
//! quantization, placement), stack trace, module path, and for a delegate its backend data.

use egui::{CollapsingHeader, Grid, RichText, Ui};
use etscope_core::formats::pte::{EthosU, Program};
use etscope_core::ir::{Graph, NodeId, Storage};

use crate::graph_view::value_summary;

/// What the inspector asks the caller to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InspectorAction {
    /// Select this node (a producer or consumer link was clicked).
    Select(NodeId),
}

/// Monospace text that wraps at the panel's edge (a tensor's quantization, a long module path)
/// instead of running past it and being cut.
fn wrapped(ui: &mut Ui, text: impl Into<String>) -> egui::Response {
    ui.add(egui::Label::new(RichText::new(text.into()).monospace()).wrap())
}

fn tensor_rows(ui: &mut Ui, graph: &Graph, ids: &[usize], title: &str) -> Option<InspectorAction> {
    let mut action = None;
    CollapsingHeader::new(format!("{title} ({})", ids.len()))
        .default_open(true)
        .show(ui, |ui| {
            for &v in ids {
                let Some(val) = graph.values.get(v) else {
                    continue;
                };
                ui.group(|ui| {
                    wrapped(ui, value_summary(graph, v));
                    Grid::new(("tensor", title, v))
                        .num_columns(2)
                        .show(ui, |ui| {
                            if !val.dim_order.is_empty() {
                                ui.label("dim_order");
                                ui.monospace(format!("{:?}", val.dim_order));
                                ui.end_row();
                            }
                            if let Some(order) = val
                                .logical_order
                                .as_ref()
                                .filter(|o| o.iter().enumerate().any(|(i, &d)| i != d))
                            {
                                ui.label("layout");
                                ui.monospace(if order[..] == [0, 2, 3, 1] {
                                    "NHWC of the model's NCHW".to_string()
                                } else {
                                    format!("the model's dims in order {order:?}")
                                });
                                ui.end_row();
                            }
                            ui.label("storage");
                            ui.monospace(match val.storage {
                                Storage::Constant => "constant (in the file)",
                                Storage::Planned => "planned",
                                Storage::Unplanned => "not planned",
                                Storage::NotTensor => "not a tensor",
                            });
                            ui.end_row();
                            if let Some(b) = val.nbytes {
                                ui.label("bytes");
                                ui.monospace(b.to_string());
                                ui.end_row();
                            }
                            if let Some(src) = val.alias_of {
                                ui.label("view of");
                                ui.monospace(format!("v{src}"));
                                ui.end_row();
                            }
                            if let Some(p) = graph.producer_through_aliases(v) {
                                ui.label("producer");
                                if ui.link(&graph.nodes[p].name).clicked() {
                                    action = Some(InspectorAction::Select(p));
                                }
                                ui.end_row();
                            }
                            if !val.consumers.is_empty() {
                                ui.label("consumers");
                                ui.horizontal_wrapped(|ui| {
                                    for &c in val.consumers.iter().take(12) {
                                        if ui.link(&graph.nodes[c].name).clicked() {
                                            action = Some(InspectorAction::Select(c));
                                        }
                                    }
                                });
                                ui.end_row();
                            }
                        });
                });
            }
        });
    action
}

/// Shows the node; `program` adds delegate blob sizes and the device notes for `device` (the
/// program's own core and the pinned CMSIS-NN when `None`).
pub fn inspector_ui(
    ui: &mut Ui,
    graph: &Graph,
    node: NodeId,
    program: Option<&Program>,
    device: Option<etscope_core::runtime::Device>,
) -> Option<InspectorAction> {
    let Some(n) = graph.nodes.get(node) else {
        ui.label("nothing selected");
        return None;
    };
    let mut action = None;
    ui.heading(n.short_op());
    Grid::new("node-ids")
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            ui.label("operator");
            ui.monospace(&n.op);
            ui.end_row();
            ui.label("overload");
            ui.monospace(&n.overload);
            ui.end_row();
            ui.label("kind");
            ui.monospace(format!("{:?}", n.kind).to_lowercase());
            ui.end_row();
            ui.label("node");
            ui.monospace(format!("{} ({})", n.id, n.name));
            ui.end_row();
            if let Some(i) = n.instruction_id {
                ui.label("instruction id");
                ui.monospace(i.to_string());
                ui.end_row();
            }
            ui.label("debug handles");
            ui.monospace(if n.debug_handles.is_empty() {
                "none".to_string()
            } else {
                n.debug_handles
                    .iter()
                    .map(|h| h.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            });
            ui.end_row();
            if let Some(m) = n.module_stack.last() {
                ui.label("module");
                wrapped(ui, format!("{} ({})", m.path, m.class));
                ui.end_row();
            }
        });
    // the plan this graph is of (the method the window shows)
    let plan_index = program.and_then(|p| p.plan_index(&graph.method));
    if let (Some(iid), Some(program), Some(plan_index)) = (n.instruction_id, program, plan_index) {
        let device = device
            .unwrap_or_else(|| etscope_core::runtime::Device::for_program(program, plan_index));
        // the notes are of the program's own graph, not of a pass's rewrite of it
        let note = (graph.stage == "pte")
            .then(|| etscope_core::analysis::device_notes::note_for(graph, iid, device))
            .flatten();
        if let Some(note) = note {
            ui.colored_label(
                egui::Color32::from_rgb(240, 150, 60),
                match note.kind {
                    "device" => format!("⚠ on the board: {}", note.why),
                    _ => format!("⚠ lowering: {}", note.why),
                },
            );
        }
    }
    if let Some(del) = n
        .delegate
        .zip(program.zip(plan_index))
        .and_then(|(d, (p, i))| p.delegate_summary(i, d))
    {
        CollapsingHeader::new("delegate")
            .default_open(true)
            .show(ui, |ui| {
                ui.label(format!("backend: {}", del.id));
                ui.label(format!("blob: {} bytes", del.blob_bytes));
                for c in &del.compile_specs {
                    ui.monospace(format!("{} = {}", c.key, c.value));
                }
                match &del.ethos_u {
                    Some(EthosU::Decoded(v)) => {
                        ui.label(format!("Ethos-U: {}", v.summary()));
                        for (what, list) in [("input", &v.inputs), ("output", &v.outputs)] {
                            for (k, io) in list.iter().enumerate() {
                                ui.monospace(format!(
                                    "{what} {k}: shape {:?} × {} B, region {} offset {}",
                                    io.shape, io.elem_size, io.region, io.offset
                                ));
                            }
                        }
                        let names: Vec<String> = v
                            .blocks
                            .iter()
                            .map(|(n, len)| format!("{n} ({len} B)"))
                            .collect();
                        ui.small(format!("blocks: {}", names.join(", ")));
                    }
                    Some(EthosU::NotDecoded { error }) => {
                        ui.colored_label(
                            egui::Color32::from_rgb(240, 120, 90),
                            format!("Ethos-U payload not decoded: {error}"),
                        );
                    }
                    None => {}
                }
            });
    }
    if !n.args.is_empty() {
        CollapsingHeader::new(format!("arguments ({})", n.args.len()))
            .default_open(true)
            .show(ui, |ui| {
                // name and value side by side (the value's kind in the name's tooltip), so a
                // narrow panel still shows the values
                let value_width = (ui.available_width() - 90.0).max(80.0);
                Grid::new("node-args")
                    .num_columns(2)
                    .striped(true)
                    .max_col_width(value_width)
                    .show(ui, |ui| {
                        for (i, a) in n.args.iter().enumerate() {
                            ui.monospace(crate::args::arg_name(n, i))
                                .on_hover_text(format!("argument {i}: {}", a.kind));
                            let text = match a.data {
                                etscope_core::ir::ArgData::Tensor(v) => value_summary(graph, v),
                                _ => crate::args::render_arg(graph, a),
                            };
                            wrapped(ui, text);
                            ui.end_row();
                        }
                    });
            });
    }
    action = action.or(tensor_rows(ui, graph, &n.inputs, "inputs"));
    action = action.or(tensor_rows(ui, graph, &n.outputs, "outputs"));
    if let Some(st) = &n.stack_trace {
        CollapsingHeader::new("stack trace")
            .default_open(false)
            .show(ui, |ui| {
                ui.monospace(&**st);
            });
    }
    action
}
