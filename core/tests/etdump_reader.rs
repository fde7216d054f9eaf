//! ETDump + debug buffer readers against `flatc`'s JSON dumps and the Inspector's own tables.

mod common;

use std::path::Path;

use etscope_core::analysis::profile::profile;
use etscope_core::formats::debug_buffer::captured_tensors;
use etscope_core::formats::etdump::{DebugValue, ETDump, Event};
use etscope_core::formats::pte::Program;
use serde_json::Value;

/// (etdump file, flatc dump, inspector table, debug buffer) tuples present for a model.
fn dumps(model: &Path) -> Vec<(String, Option<String>, Option<String>)> {
    let mut out = Vec::new();
    for (suffix, table, buffer) in [
        ("", Some("inspector_table.json"), Some("debug_buffer.bin")),
        (
            "_profile_5runs",
            Some("inspector_table_profile_5runs.json"),
            None,
        ),
        (
            "_int8_qdq",
            Some("inspector_table_int8_qdq.json"),
            Some("debug_buffer_int8_qdq.bin"),
        ),
        (
            "_xnnpack",
            Some("inspector_table_xnnpack.json"),
            Some("debug_buffer_xnnpack.bin"),
        ),
    ] {
        if model.join(format!("etdump{suffix}.etdp")).exists() {
            out.push((
                suffix.to_string(),
                table.map(str::to_string),
                buffer.map(str::to_string),
            ));
        }
    }
    out
}

#[test]
fn every_etdump_matches_flatc_event_for_event() {
    let mut checked = 0;
    for model in common::models() {
        for (suffix, _, _) in dumps(&model) {
            let path = model.join(format!("etdump{suffix}.etdp"));
            let d = ETDump::parse(&common::read(&path))
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let truth = common::json(&model.join("flatc").join(format!("etdump{suffix}.json")));
            let runs = truth["run_data"].as_array().expect("run_data");
            assert_eq!(d.runs.len(), runs.len(), "{}", path.display());
            for (r, wr) in d.runs.iter().zip(runs) {
                assert_eq!(r.name, wr["name"].as_str().unwrap_or(""));
                let events = wr["events"].as_array().cloned().unwrap_or_default();
                assert_eq!(
                    r.events.len(),
                    events.len(),
                    "{} run {}",
                    path.display(),
                    r.name
                );
                for (e, we) in r.events.iter().zip(&events) {
                    match e {
                        Event::Profile(p) => {
                            let w = &we["profile_event"];
                            assert_eq!(p.name, w["name"].as_str().unwrap_or(""));
                            assert_eq!(
                                i64::from(p.instruction_id),
                                w["instruction_id"].as_i64().unwrap_or(-1)
                            );
                            assert_eq!(
                                i64::from(p.chain_index),
                                w["chain_index"].as_i64().unwrap_or(0)
                            );
                            assert_eq!(p.start_time, w["start_time"].as_u64().unwrap_or(0));
                            assert_eq!(p.end_time, w["end_time"].as_u64().unwrap_or(0));
                            assert_eq!(
                                p.delegate_debug_id_str.as_deref(),
                                w["delegate_debug_id_str"].as_str()
                            );
                        }
                        Event::Debug(dbg) => {
                            let w = &we["debug_event"];
                            assert_eq!(dbg.chain_index, w["chain_index"].as_u64().unwrap_or(0));
                            assert_eq!(
                                i64::from(dbg.instruction_id),
                                w["instruction_id"].as_i64().unwrap_or(-1)
                            );
                            let wt = &w["debug_entry"]["tensor"];
                            if let DebugValue::Tensor(t) = &dbg.value {
                                assert_eq!(
                                    t.scalar_type.name(),
                                    wt["scalar_type"].as_str().unwrap_or("BYTE")
                                );
                                assert_eq!(Value::from(t.sizes.clone()), wt["sizes"]);
                                assert_eq!(Value::from(t.strides.clone()), wt["strides"]);
                                assert_eq!(t.offset, wt["offset"].as_i64().unwrap_or(0));
                            }
                            assert_eq!(
                                dbg.is_program_output,
                                w["debug_entry"]["output"]["bool_val"]
                                    .as_bool()
                                    .unwrap_or(false)
                            );
                        }
                        Event::Allocation(a) => {
                            assert_eq!(
                                a.allocation_size,
                                we["allocation_event"]["allocation_size"]
                                    .as_u64()
                                    .unwrap_or(0)
                            );
                        }
                        Event::Empty => {}
                    }
                }
            }
            checked += 1;
        }
    }
    assert!(checked >= 4, "checked only {checked} ETDumps");
}

fn stat(row: &Value, key: &str) -> f64 {
    row[key].as_f64().unwrap_or(f64::NAN)
}

/// Per-op statistics equal the Inspector's numbers for the same ETDump (ns → ms).
#[test]
fn profile_statistics_equal_the_inspectors() {
    let mut rows_checked = 0;
    for model in common::models() {
        for (suffix, table, _) in dumps(&model) {
            let Some(table) = table else { continue };
            let d = ETDump::parse(&common::read(&model.join(format!("etdump{suffix}.etdp"))))
                .expect("etdump");
            let pte_name = match suffix.as_str() {
                "_int8_qdq" => "model_int8_qdq_portable.pte",
                "_xnnpack" => "model_fp32_xnnpack.pte",
                _ => "model_fp32.pte",
            };
            let program = Program::parse(common::read(&model.join(pte_name))).expect("pte");
            let prof = profile(&d, Some(&program.instruction_ops(0)));
            let insp: Vec<Value> = common::json(&model.join(&table))
                .as_array()
                .cloned()
                .unwrap_or_default();
            let native: Vec<&Value> = insp
                .iter()
                .filter(|r| r["event_block_name"] == "Execute")
                .filter(|r| {
                    r["event_name"]
                        .as_str()
                        .is_some_and(|n| n.starts_with("native_call_") || n == "DELEGATE_CALL")
                })
                .collect();
            assert_eq!(prof.rows.len(), native.len(), "{} rows", model.display());
            for (row, want) in prof.rows.iter().zip(&native) {
                assert_eq!(row.event_name, want["event_name"].as_str().unwrap_or(""));
                let raw_ms: Vec<f64> = row.stats.raw.iter().map(|&t| t as f64 / 1e6).collect();
                let want_raw: Vec<f64> = want["raw"]
                    .as_array()
                    .expect("raw")
                    .iter()
                    .filter_map(Value::as_f64)
                    .collect();
                assert_eq!(raw_ms.len(), want_raw.len());
                for (a, b) in raw_ms.iter().zip(&want_raw) {
                    assert!(
                        (a - b).abs() < 1e-9,
                        "{}: instruction {} raw {a} vs {b}",
                        model.display(),
                        row.instruction_id
                    );
                }
                for (got, key) in [
                    (row.stats.avg, "avg (ms)"),
                    (row.stats.min as f64, "min (ms)"),
                    (row.stats.max as f64, "max (ms)"),
                    (row.stats.p10, "p10 (ms)"),
                    (row.stats.p50, "p50 (ms)"),
                    (row.stats.p90, "p90 (ms)"),
                ] {
                    let want = stat(want, key);
                    assert!(
                        (got / 1e6 - want).abs() < 1e-9,
                        "{}: instr {} {key} {} vs {want}",
                        model.display(),
                        row.instruction_id,
                        got / 1e6
                    );
                }
                rows_checked += 1;
            }
            // delegate-internal events are grouped under their DELEGATE_CALL
            let delegated: Vec<&Value> = insp
                .iter()
                .filter(|r| r["is_delegated_op"] == true)
                .collect();
            let grouped: usize = prof.rows.iter().map(|r| r.delegate_events.len()).sum();
            assert_eq!(
                grouped,
                delegated.len(),
                "{} delegate events",
                model.display()
            );
        }
    }
    assert!(rows_checked >= 10, "checked only {rows_checked} rows");
}

/// Each captured intermediate equals what the Inspector read from the same debug buffer for the
/// same instruction (dtype, shape, min, max, mean and the first elements).
#[test]
fn debug_buffer_tensors_equal_the_inspectors() {
    let mut tensors = 0;
    for model in common::models() {
        for (suffix, table, buffer) in dumps(&model) {
            let (Some(table), Some(buffer)) = (table, buffer) else {
                continue;
            };
            let d = ETDump::parse(&common::read(&model.join(format!("etdump{suffix}.etdp"))))
                .expect("etdump");
            let captured = captured_tensors(&d, &common::read(&model.join(buffer)))
                .expect("debug tensors resolve");
            let prof = profile(&d, None);
            let insp: Vec<Value> = common::json(&model.join(&table))
                .as_array()
                .cloned()
                .unwrap_or_default();
            let rows = insp.iter().filter(|r| {
                r["event_block_name"] == "Execute"
                    && r["event_name"]
                        .as_str()
                        .is_some_and(|n| n.starts_with("native_call_") || n == "DELEGATE_CALL")
            });
            for (row, want_row) in prof.rows.iter().zip(rows) {
                let mine: Vec<_> = captured
                    .iter()
                    .filter(|c| {
                        c.instruction_id == row.instruction_id as i32 && !c.is_program_output
                    })
                    .collect();
                let want_data = want_row["debug_data"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                assert_eq!(
                    mine.len(),
                    want_data.len(),
                    "{} instruction {}",
                    model.display(),
                    row.instruction_id
                );
                for (c, want) in mine.iter().zip(&want_data) {
                    let what = format!("{} instruction {}", model.display(), row.instruction_id);
                    let shape: Vec<usize> = want["shape"]
                        .as_array()
                        .expect("shape")
                        .iter()
                        .filter_map(|x| x.as_u64().map(|v| v as usize))
                        .collect();
                    assert_eq!(c.tensor.shape, shape, "{what}");
                    assert_eq!(
                        c.tensor.dtype.short_name(),
                        want["dtype"].as_str().unwrap_or(""),
                        "{what}"
                    );
                    let values = c.tensor.to_f64().expect("numeric");
                    let first: Vec<f64> = want["first"]
                        .as_array()
                        .expect("first")
                        .iter()
                        .filter_map(Value::as_f64)
                        .collect();
                    for (a, b) in values.iter().zip(&first) {
                        assert!(
                            (a - b).abs() <= 1e-7 * b.abs().max(1.0),
                            "{what}: {a} vs {b}"
                        );
                    }
                    if c.tensor.numel() == 0 {
                        assert!(want["min"].is_null(), "{what}: empty output");
                        tensors += 1;
                        continue;
                    }
                    let s = c.tensor.stats().expect("stats");
                    assert!((s.min - stat(want, "min")).abs() <= 1e-7, "{what} min");
                    assert!((s.max - stat(want, "max")).abs() <= 1e-7, "{what} max");
                    assert!(
                        (s.mean - stat(want, "mean")).abs()
                            <= 1e-6 * stat(want, "mean").abs().max(1.0),
                        "{what} mean"
                    );
                    tensors += 1;
                }
            }
        }
    }
    assert!(tensors >= 10, "checked only {tensors} tensors");
}
