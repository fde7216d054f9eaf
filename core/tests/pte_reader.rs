//! The `.pte` reader against `flatc`'s own JSON dumps of the same files (ExecuTorch's schemas):
//! every plan, value, operator, instruction, delegate, segment and the constant segment.

mod common;

use etscope_core::formats::pte::{DataLocation, EValue, Instruction, Program};
use serde_json::Value;

fn u64_of(v: &Value) -> u64 {
    v.as_u64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        .unwrap_or(0)
}

fn i64_list(v: &Value) -> Vec<i64> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|x| {
                    x.as_i64()
                        .or_else(|| x.as_str().and_then(|s| s.parse().ok()))
                        .unwrap_or(0)
                })
                .collect()
        })
        .unwrap_or_default()
}

fn check_value(vi: usize, got: &EValue, want: &Value) {
    let kind = want["val_type"].as_str().unwrap_or("NONE");
    assert_eq!(got.kind(), kind, "value {vi} kind");
    let w = &want["val"];
    match got {
        EValue::Int(x) => assert_eq!(*x, w["int_val"].as_i64().unwrap_or(0), "value {vi}"),
        EValue::Bool(b) => assert_eq!(*b, w["bool_val"].as_bool().unwrap_or(false), "value {vi}"),
        EValue::Double(d) => {
            let want = w["double_val"].as_f64().unwrap_or(0.0);
            assert!(
                (d - want).abs() <= 1e-12 * want.abs().max(1.0),
                "value {vi}: {d} vs {want}"
            );
        }
        EValue::IntList(items) => assert_eq!(*items, i64_list(&w["items"]), "value {vi}"),
        EValue::TensorList(items) | EValue::OptionalTensorList(items) => {
            assert_eq!(
                items.iter().map(|&i| i64::from(i)).collect::<Vec<_>>(),
                i64_list(&w["items"]),
                "value {vi}"
            )
        }
        EValue::Tensor(t) => {
            assert_eq!(
                t.scalar_type.name(),
                w["scalar_type"].as_str().unwrap_or("BYTE"),
                "value {vi} dtype"
            );
            assert_eq!(
                t.sizes.iter().map(|&s| i64::from(s)).collect::<Vec<_>>(),
                i64_list(&w["sizes"]),
                "value {vi} sizes"
            );
            assert_eq!(
                t.dim_order
                    .iter()
                    .map(|&d| i64::from(d))
                    .collect::<Vec<_>>(),
                i64_list(&w["dim_order"]),
                "value {vi} dim_order"
            );
            assert_eq!(
                u64::from(t.data_buffer_idx),
                u64_of(&w["data_buffer_idx"]),
                "value {vi} data_buffer_idx"
            );
            match (&t.allocation, w.get("allocation_info")) {
                (Some(a), Some(info)) => {
                    assert_eq!(
                        u64::from(a.memory_id),
                        u64_of(&info["memory_id"]),
                        "value {vi} memory_id"
                    );
                    let off = (u64_of(&info["memory_offset_high"]) << 32)
                        | u64_of(&info["memory_offset_low"]);
                    assert_eq!(a.offset, off, "value {vi} offset");
                }
                (None, None) => {}
                (got, want) => panic!("value {vi}: allocation {got:?} vs {want:?}"),
            }
        }
        _ => {}
    }
}

fn check_instruction(ii: usize, got: &Instruction, want: &Value) {
    let kind = want["instr_args_type"].as_str().unwrap_or("NONE");
    assert_eq!(got.kind(), kind, "instruction {ii} kind");
    let a = &want["instr_args"];
    match got {
        Instruction::KernelCall { op_index, args } => {
            assert_eq!(
                *op_index as u64,
                u64_of(&a["op_index"]),
                "instruction {ii} op_index"
            );
            assert_eq!(
                args.iter().map(|&x| x as i64).collect::<Vec<_>>(),
                i64_list(&a["args"]),
                "instruction {ii} args"
            );
        }
        Instruction::DelegateCall {
            delegate_index,
            args,
        } => {
            assert_eq!(
                *delegate_index as u64,
                u64_of(&a["delegate_index"]),
                "instruction {ii}"
            );
            assert_eq!(
                args.iter().map(|&x| x as i64).collect::<Vec<_>>(),
                i64_list(&a["args"]),
                "instruction {ii} args"
            );
        }
        _ => {}
    }
}

#[test]
fn every_reference_program_matches_flatc() {
    let mut programs = 0;
    for model in common::models() {
        for (pte, dump) in common::pte_variants(&model) {
            let program = Program::parse(common::read(&pte))
                .unwrap_or_else(|e| panic!("{}: {e}", pte.display()));
            let truth = common::json(&dump);
            assert_eq!(u64::from(program.version), u64_of(&truth["version"]));
            let plans = truth["execution_plan"].as_array().expect("plans");
            assert_eq!(program.plans.len(), plans.len(), "{}", pte.display());
            for (plan, want) in program.plans.iter().zip(plans) {
                assert_eq!(plan.name, want["name"].as_str().unwrap_or(""));
                let ops: Vec<(String, String)> = want["operators"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|o| {
                        (
                            o["name"].as_str().unwrap_or("").into(),
                            o["overload"].as_str().unwrap_or("").into(),
                        )
                    })
                    .collect();
                let got_ops: Vec<(String, String)> = plan
                    .operators
                    .iter()
                    .map(|o| (o.name.clone(), o.overload.clone()))
                    .collect();
                assert_eq!(got_ops, ops, "{} operators", pte.display());
                let values = want["values"].as_array().expect("values");
                assert_eq!(plan.values.len(), values.len(), "{} values", pte.display());
                for (vi, (g, w)) in plan.values.iter().zip(values).enumerate() {
                    check_value(vi, g, w);
                }
                assert_eq!(
                    plan.inputs.iter().map(|&i| i as i64).collect::<Vec<_>>(),
                    i64_list(&want["inputs"])
                );
                assert_eq!(
                    plan.outputs.iter().map(|&i| i as i64).collect::<Vec<_>>(),
                    i64_list(&want["outputs"])
                );
                assert_eq!(
                    plan.non_const_buffer_sizes,
                    i64_list(&want["non_const_buffer_sizes"])
                );
                let chains = want["chains"].as_array().expect("chains");
                assert_eq!(plan.chains.len(), chains.len());
                for (c, wc) in plan.chains.iter().zip(chains) {
                    let instrs = wc["instructions"].as_array().expect("instructions");
                    assert_eq!(
                        c.instructions.len(),
                        instrs.len(),
                        "{} instruction count",
                        pte.display()
                    );
                    for (ii, (g, w)) in c.instructions.iter().zip(instrs).enumerate() {
                        check_instruction(ii, g, w);
                    }
                }
                let delegates = want["delegates"].as_array().cloned().unwrap_or_default();
                assert_eq!(plan.delegates.len(), delegates.len());
                for (d, wd) in plan.delegates.iter().zip(&delegates) {
                    assert_eq!(d.id, wd["id"].as_str().unwrap_or(""));
                    assert_eq!(d.index as u64, u64_of(&wd["processed"]["index"]));
                    let loc = if d.location == DataLocation::Segment {
                        "SEGMENT"
                    } else {
                        "INLINE"
                    };
                    assert_eq!(
                        loc,
                        wd["processed"]["location"].as_str().unwrap_or("INLINE")
                    );
                    let blob = program.delegate_blob(d).expect("delegate blob resolves");
                    if d.location == DataLocation::Segment {
                        assert_eq!(blob.len() as u64, program.segments[d.index].size);
                    }
                }
            }
            let segs = truth["segments"].as_array().cloned().unwrap_or_default();
            assert_eq!(program.segments.len(), segs.len());
            for (s, ws) in program.segments.iter().zip(&segs) {
                assert_eq!(
                    (s.offset, s.size),
                    (u64_of(&ws["offset"]), u64_of(&ws["size"]))
                );
            }
            if let Some(cs) = truth.get("constant_segment") {
                let got = program.constant_segment.as_ref().expect("constant segment");
                assert_eq!(u64::from(got.segment_index), u64_of(&cs["segment_index"]));
                assert_eq!(
                    got.offsets.iter().map(|&o| o as i64).collect::<Vec<_>>(),
                    i64_list(&cs["offsets"])
                );
            }
            let named = truth["named_data"].as_array().cloned().unwrap_or_default();
            assert_eq!(program.named_data.len(), named.len());
            for (n, wn) in program.named_data.iter().zip(&named) {
                assert_eq!(n.key, wn["key"].as_str().unwrap_or(""));
                assert!(!program
                    .named_data_bytes(&n.key)
                    .expect("named data resolves")
                    .is_empty());
            }
            programs += 1;
        }
    }
    assert!(programs >= 4, "swept only {programs} programs");
}

#[test]
fn constants_resolve_to_the_weights_the_etrecord_was_made_from() {
    // The tiny model's conv bias: 4 floats stored at constant_segment.offsets[2].
    let program =
        Program::parse(common::read(&common::tiny().join("model_fp32.pte"))).expect("parse");
    let plan = &program.plans[0];
    let mut total = 0u64;
    for v in &plan.values {
        if let EValue::Tensor(t) = v {
            if t.is_constant() {
                let data = program.constant_bytes(t).expect("constant resolves");
                assert_eq!(data.len() as u64, t.nbytes);
                total += t.nbytes;
            }
        }
    }
    // conv weight 4*3*3*3 + bias 4 + fc weight 10*256 + fc bias 10 floats
    assert_eq!(total, 4 * (108 + 4 + 2560 + 10));
    // every constant is, byte for byte, a parameter of the ETRecord the program was made with
    let rec = etscope_core::formats::etrecord::ETRecord::parse(&common::read(
        &common::tiny().join("model_fp32.etrecord"),
    ))
    .expect("etrecord");
    let stage = rec.stage("exported").expect("exported stage");
    let weights = rec.stage_weights(stage).expect("weights");
    assert_eq!(weights.len(), 4, "{:?}", weights.keys().collect::<Vec<_>>());
    let mut matched = Vec::new();
    for v in &plan.values {
        if let EValue::Tensor(t) = v {
            if t.is_constant() {
                let data = program.constant_bytes(t).expect("constant resolves");
                let name = weights
                    .iter()
                    .find(|(_, w)| w.bytes == data)
                    .map(|(k, _)| k.clone())
                    .unwrap_or_else(|| {
                        panic!("constant of {:?} is no ETRecord parameter", t.sizes)
                    });
                matched.push(name);
            }
        }
    }
    matched.sort();
    let mut names: Vec<String> = weights.keys().cloned().collect();
    names.sort();
    assert_eq!(matched, names, "each parameter is one constant");
}

#[test]
fn extended_header_places_segments_inside_the_file() {
    for (pte, _) in common::pte_variants(&common::tiny()) {
        let program = Program::parse(common::read(&pte)).expect("parse");
        let h = program
            .extended_header
            .expect("ExecuTorch 1.5 writes an eh00 header");
        assert_eq!(h.header_length, 32);
        assert!(h.program_size <= h.segment_base_offset);
        for s in &program.segments {
            assert!(s.file_offset + s.size <= program.bytes().len() as u64);
        }
    }
}

#[test]
fn another_schema_version_is_named_as_such() {
    let mut bytes = common::read(&common::tiny().join("model_fp32.pte"));
    bytes[4..8].copy_from_slice(b"ET11");
    let e = etscope_core::formats::pte::Program::parse(bytes)
        .expect_err("refused")
        .to_string();
    assert!(e.contains("schema ET11") && e.contains("ET12"), "{e}");
}
