//! `etscope info FILE`: what a file is and what it holds, for every supported kind.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use etscope_core::formats::bundled::BundledProgram;
use etscope_core::formats::etdump::{ETDump, Event};
use etscope_core::formats::etrecord::{stage_short_name, ETRecord};
use etscope_core::formats::flat_tensor::FlatTensorFile;
use etscope_core::formats::kind::FileKind;
use etscope_core::formats::pte::Program;
use serde_json::{json, Value};

use crate::load;
use crate::table::{bytes, Table};

pub fn run(path: &Path, as_json: bool) -> Result<()> {
    let data = load::bytes(path)?;
    let kind = load::kind_of(path, &data)?;
    let ctx = || path.display().to_string();
    let info = match kind {
        FileKind::Pte => pte_info(&Program::parse(data).with_context(ctx)?),
        FileKind::Bpte => bpte_info(&BundledProgram::parse(&data).with_context(ctx)?),
        FileKind::Etdump => etdump_info(&ETDump::parse(&data).with_context(ctx)?),
        FileKind::Etrecord => etrecord_info(&ETRecord::parse(&data).with_context(ctx)?),
        FileKind::Npy => npy_info(&etscope_core::formats::npy::read_npy(&data).with_context(ctx)?)?,
        FileKind::Ptd => ptd_info(&FlatTensorFile::parse(data).with_context(ctx)?),
    };
    if as_json {
        return super::print_json(&info);
    }
    print!("{}", render(path, &info));
    Ok(())
}

/// JSON summary of a program.
pub fn pte_info(p: &Program) -> Value {
    let plans: Vec<Value> = (0..p.method_names().len())
        .filter_map(|i| {
            let mut v = serde_json::to_value(p.plan_summary(i, super::MAX_LISTED_ARENAS)?).ok()?;
            // where the program does not compute what the model means (a float operator left
            // on int8 codes) or the device computes it otherwise: the window's device notes,
            // for the core the program was lowered for
            v["notes"] = json!(etscope_core::analysis::device_notes::notes(
                p,
                i,
                etscope_core::runtime::Device {
                    target: etscope_core::runtime::Target::of_program(p, 0).unwrap_or_default(),
                    ..Default::default()
                },
            )
            .iter()
            .map(
                |n| json!({"instruction": n.instruction, "op": n.op, "kind": n.kind, "why": n.why})
            )
            .collect::<Vec<_>>());
            Some(v)
        })
        .collect();
    json!({
        "kind": "pte",
        "version": p.version,
        "bytes": p.bytes().len(),
        "extended_header": p.extended_header,
        "segments": p.segments,
        "constant_segment": p.constant_segment,
        "inline_constant_buffers": p.inline_constant_count(),
        "named_data": p.named_data,
        "plans": plans,
    })
}

fn bpte_info(b: &BundledProgram) -> Value {
    json!({
        "kind": "bpte",
        "version": b.version,
        "test_suites": b.suites.iter().map(|s| json!({
            "method": s.method_name,
            "test_cases": s.test_cases.len(),
            "inputs_per_case": s.test_cases.first().map(|c| c.inputs.len()).unwrap_or(0),
            "outputs_per_case": s.test_cases.first().map(|c| c.expected_outputs.len()).unwrap_or(0),
        })).collect::<Vec<_>>(),
        "test_cases": b.test_case_count(),
        "program": pte_info(&b.program),
    })
}

fn etdump_info(d: &ETDump) -> Value {
    let runs: Vec<Value> = d
        .runs
        .iter()
        .map(|r| {
            let (mut prof, mut dbg, mut alloc) = (0, 0, 0);
            for e in &r.events {
                match e {
                    Event::Profile(_) => prof += 1,
                    Event::Debug(_) => dbg += 1,
                    Event::Allocation(_) => alloc += 1,
                    Event::Empty => {}
                }
            }
            json!({"name": r.name, "events": r.events.len(), "profile_events": prof, "debug_events": dbg,
                   "allocation_events": alloc, "allocators": r.allocators, "bundled_input_index": r.bundled_input_index})
        })
        .collect();
    json!({"kind": "etdump", "version": d.version, "events": d.event_count(), "runs": runs})
}

fn etrecord_info(r: &ETRecord) -> Value {
    json!({
        "kind": "etrecord",
        "entries": r.entries,
        "stages": r.stages.iter().map(|s| json!({
            "name": s.name,
            "short_name": stage_short_name(&s.name),
            "nodes": s.graph.nodes.len(),
            "inputs": s.graph.inputs.len(),
            "outputs": s.graph.outputs.len(),
            "schema_version": format!("{}.{}", s.graph.schema_version.0, s.graph.schema_version.1),
        })).collect::<Vec<_>>(),
        "debug_handle_map": r.debug_handle_map.iter().map(|(m, v)| (m.clone(), v.len())).collect::<BTreeMap<_, _>>(),
        "delegate_map": r.delegate_map,
    })
}

fn npy_info(t: &etscope_core::tensor::TensorData) -> Result<Value> {
    let s = t.stats()?;
    Ok(json!({"kind": "npy", "dtype": t.dtype.short_name(), "shape": t.shape, "stats": s}))
}

fn ptd_info(f: &FlatTensorFile) -> Value {
    let tensors: Vec<Value> = f
        .entries
        .iter()
        .map(|e| {
            json!({
                "key": e.key,
                "segment": e.segment_index,
                "bytes": e.range.len(),
                "dtype": e.layout.as_ref().map(|l| l.scalar_type.short_name()),
                "sizes": e.layout.as_ref().map(|l| l.sizes.clone()),
                "dim_order": e.layout.as_ref().map(|l| l.dim_order.clone()),
            })
        })
        .collect();
    json!({"kind": "ptd", "version": f.version, "segments": f.segment_count,
           "data_bytes": f.data_bytes(), "tensors": tensors})
}

fn render(path: &Path, info: &Value) -> String {
    let mut out = format!(
        "{}: {}\n",
        path.display(),
        info["kind"].as_str().unwrap_or("?")
    );
    let field = |v: &Value, k: &str| v.get(k).map(|x| x.to_string()).unwrap_or_default();
    match info["kind"].as_str() {
        Some("pte") | Some("bpte") => {
            let p = if info["kind"] == "bpte" {
                out.push_str(&format!("test cases: {}\n", field(info, "test_cases")));
                &info["program"]
            } else {
                info
            };
            out.push_str(&format!(
                "version {}  {}  segments {}  named data {}\n",
                field(p, "version"),
                bytes(p["bytes"].as_u64().unwrap_or(0)),
                p["segments"].as_array().map_or(0, Vec::len),
                p["named_data"].as_array().map_or(0, Vec::len)
            ));
            for plan in p["plans"].as_array().into_iter().flatten() {
                out.push_str(&format!(
                    "plan {}: {} instructions, {} values, {} operators, {} delegates, {} constants ({}), {} planned tensors\n",
                    plan["name"].as_str().unwrap_or(""),
                    field(plan, "instructions"),
                    field(plan, "values"),
                    plan["operators"].as_array().map_or(0, Vec::len),
                    field(plan, "delegates"),
                    field(plan, "constant_tensors"),
                    bytes(plan["constant_bytes"].as_u64().unwrap_or(0)),
                    field(plan, "planned_tensors"),
                ));
                if plan["external_constants"].as_u64().unwrap_or(0) > 0 {
                    out.push_str(&format!(
                        "  {} of the constants read from external data (a .ptd)\n",
                        field(plan, "external_constants")
                    ));
                }
                let listed = plan["arenas"].as_array().map_or(0, Vec::len);
                for a in plan["arenas"].as_array().into_iter().flatten() {
                    out.push_str(&format!(
                        "  arena {}: {}\n",
                        field(a, "memory_id"),
                        bytes(a["size"].as_u64().unwrap_or(0))
                    ));
                }
                let count = plan["arena_count"].as_u64().unwrap_or(0) as usize;
                if count > listed {
                    out.push_str(&format!("  ... and {} more arenas\n", count - listed));
                }
                for o in plan["operators"].as_array().into_iter().flatten() {
                    out.push_str(&format!("  op {}\n", o.as_str().unwrap_or("")));
                }
                for n in plan["notes"].as_array().into_iter().flatten() {
                    out.push_str(&format!(
                        "  note: instruction {} ({}): {}\n",
                        field(n, "instruction"),
                        n["op"].as_str().unwrap_or(""),
                        n["why"].as_str().unwrap_or("")
                    ));
                }
                for d in plan["delegate_backends"].as_array().into_iter().flatten() {
                    out.push_str(&format!(
                        "  delegate {} ({})\n",
                        d["id"].as_str().unwrap_or(""),
                        bytes(d["blob_bytes"].as_u64().unwrap_or(0))
                    ));
                    let v = &d["ethos_u"];
                    if let Some(e) = v["error"].as_str() {
                        out.push_str(&format!("    Ethos-U payload not decoded: {e}\n"));
                    } else if v.is_object() {
                        let opt =
                            |k: &str| v[k].as_u64().map_or("-".to_string(), |b| format!("{b} B"));
                        out.push_str(&format!(
                            "    Ethos-U: command stream {} B, weights {} B, scratch {}, fast scratch {}, {} inputs, {} outputs\n",
                            field(v, "command_stream_bytes"),
                            field(v, "weight_bytes"),
                            opt("scratch_bytes"),
                            opt("fast_scratch_bytes"),
                            v["inputs"].as_array().map_or(0, Vec::len),
                            v["outputs"].as_array().map_or(0, Vec::len),
                        ));
                    }
                }
            }
        }
        Some("ptd") => {
            out.push_str(&format!(
                "version {}  {} segments  {} of tensor data\n",
                field(info, "version"),
                field(info, "segments"),
                bytes(info["data_bytes"].as_u64().unwrap_or(0))
            ));
            let mut t = Table::new(&["key", "dtype", "sizes", ">bytes"]);
            for e in info["tensors"].as_array().into_iter().flatten() {
                t.row(vec![
                    e["key"].as_str().unwrap_or("").into(),
                    e["dtype"].as_str().unwrap_or("").into(),
                    e["sizes"].to_string(),
                    field(e, "bytes"),
                ]);
            }
            out.push_str(&t.render());
        }
        Some("etdump") => {
            let mut t = Table::new(&["run", ">events", ">profile", ">debug", ">alloc"]);
            for r in info["runs"].as_array().into_iter().flatten() {
                t.row(vec![
                    r["name"].as_str().unwrap_or("").into(),
                    field(r, "events"),
                    field(r, "profile_events"),
                    field(r, "debug_events"),
                    field(r, "allocation_events"),
                ]);
            }
            out.push_str(&t.render());
        }
        Some("etrecord") => {
            let mut t = Table::new(&["stage", "entry", ">nodes"]);
            for s in info["stages"].as_array().into_iter().flatten() {
                t.row(vec![
                    s["short_name"].as_str().unwrap_or("").into(),
                    s["name"].as_str().unwrap_or("").into(),
                    field(s, "nodes"),
                ]);
            }
            out.push_str(&t.render());
            let opaque = info["entries"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|e| e["kind"] == "pickle")
                .count();
            out.push_str(&format!(
                "{opaque} pickled entries (listed, never executed)\n"
            ));
        }
        _ => {
            out.push_str(&format!(
                "dtype {}  shape {}\n",
                info["dtype"].as_str().unwrap_or(""),
                info["shape"]
            ));
            out.push_str(&format!("stats {}\n", info["stats"]));
        }
    }
    out
}

/// `etscope info`'s arguments.
#[derive(Debug, clap::Args)]
pub struct InfoArgs {
    pub file: std::path::PathBuf,
    #[arg(long)]
    pub json: bool,
}

/// Runs `etscope info` with its arguments.
pub fn main(args: InfoArgs) -> Result<()> {
    let InfoArgs { file, json } = args;
    run(&file, json)
}
