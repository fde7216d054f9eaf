//! The diff engine on the reference models: host runs against the device-captured debug
//! buffers of the same programs (zero gap), and fp32 against int8 programs (matched by the
//! quantity each node holds).

mod common;

use std::path::Path;

use etscope_core::analysis::diff::{diff, Source, Threshold};
use etscope_core::analysis::diff_sources::program_source;
use etscope_core::formats::debug_buffer::captured_tensors;
use etscope_core::formats::etdump::ETDump;
use etscope_core::formats::etrecord::ETRecord;
use etscope_core::formats::npy::read_npy;
use etscope_core::formats::pte::Program;
use etscope_core::ir::from_export::graph_from_export;
use etscope_core::ir::from_pte::graph_from_plan;

fn host(model: &Path, variant: &str) -> Source {
    host_bytes(
        model,
        variant,
        common::read(&model.join(format!("{variant}.pte"))),
    )
}

/// `variant`'s program from `bytes` (possibly a broken copy), run on the model's input, with
/// the variant's ETRecord attached.
fn host_bytes(model: &Path, variant: &str, bytes: Vec<u8>) -> Source {
    let program = Program::parse(bytes).expect("program");
    let rec = ETRecord::parse(&common::read(&model.join(format!("{variant}.etrecord"))))
        .expect("etrecord");
    let input = read_npy(&common::read(&model.join("input.npy"))).expect("input");
    // the shared pipeline (CLI and window use the same); each variant is its own export
    program_source(variant, &program, Some((&rec, variant)), &[input]).expect("runs")
}

/// A correct program's report: no group is a divergence (the row that would be, if any).
fn assert_no_divergence(label: &str, report: &etscope_core::analysis::diff::DiffReport) {
    assert_eq!(
        report.first_divergence,
        None,
        "{label}: {:?}",
        report.first_divergence.map(|i| &report.rows[i])
    );
}

#[test]
fn host_runs_equal_what_executorch_captured_on_the_same_program() {
    for model in common::models() {
        for (variant, dump, buffer) in [
            ("model_fp32", "etdump.etdp", "debug_buffer.bin"),
            (
                "model_int8_qdq_portable",
                "etdump_int8_qdq.etdp",
                "debug_buffer_int8_qdq.bin",
            ),
        ] {
            let a = host(&model, variant);
            let d = ETDump::parse(&common::read(&model.join(dump))).expect("etdump");
            let captured =
                captured_tensors(&d, &common::read(&model.join(buffer))).expect("captured");
            let b = Source::from_captured("device", a.graph.clone(), &captured);
            let report = diff(
                &a,
                &b,
                Threshold {
                    min_snr_db: 100.0,
                    min_drop_db: 0.0,
                    max_abs: 1e-5,
                },
            )
            .expect("comparable");
            assert_eq!(report.matched_by, "instruction");
            let compared = report.rows.iter().filter(|r| r.metrics.is_some()).count();
            assert!(
                compared >= report.rows.len() / 2,
                "{} {variant}: only {compared} compared",
                model.display()
            );
            assert_eq!(
                report.first_divergence,
                None,
                "{} {variant}: {:?}",
                model.display(),
                report.first_divergence.map(|i| &report.rows[i])
            );
            for r in report.rows.iter().filter_map(|r| r.metrics) {
                assert!(
                    r.max_abs <= 1e-5,
                    "{} {variant}: gap {}",
                    model.display(),
                    r.max_abs
                );
            }
        }
    }
}

#[test]
fn fp32_against_int8_is_matched_by_quantity_without_a_false_divergence() {
    for model in common::models() {
        let a = host(&model, "model_fp32");
        let b = host(&model, "model_int8_qdq_portable");
        let report = diff(&a, &b, Threshold::default()).expect("comparable");
        assert_eq!(report.matched_by, "quantity");
        // conv + relu quantized as one pattern is one quantity: at least two groups
        assert!(report.rows.len() >= 2, "{}", model.display());
        // the final classifier layers agree closely: quantization noise, not a bug
        let last = report
            .rows
            .iter()
            .rev()
            .find_map(|r| r.metrics)
            .expect("metrics");
        assert!(
            last.snr_db > 25.0 && last.cosine > 0.99,
            "{}: {last:?}",
            model.display()
        );
        // a correct int8 program only carries quantization noise: no group is a divergence
        // (the broken-program tests show a real one is found)
        assert_eq!(
            report.first_divergence,
            None,
            "{}: {:?}",
            model.display(),
            report.first_divergence.map(|i| &report.rows[i])
        );
    }
}

#[test]
fn a_stage_and_its_program_match_by_debug_handle_and_agree() {
    for model in common::models() {
        let rec_path = model.join("model_int8_cortex_m55.etrecord");
        let rec = ETRecord::parse(&common::read(&rec_path)).expect("etrecord");
        let stage = rec.stage("edge_after_transform").expect("stage");
        let input = read_npy(&common::read(&model.join("input.npy"))).expect("input");
        let run = common::run_stage(
            stage,
            &rec.stage_weights(stage).expect("weights"),
            std::slice::from_ref(&input),
            true,
        )
        .expect("stage runs");
        let a = Source::from_run(
            "stage",
            graph_from_export(&stage.graph, "edge_after_transform", "forward"),
            &run,
        )
        .with_export("rec");
        let b = host(&model, "model_int8_cortex_m55").with_export("rec");
        let report = diff(&a, &b, Threshold::default()).expect("comparable");
        assert_eq!(report.matched_by, "debug_handle");
        assert!(!report.rows.is_empty());
        for m in report.rows.iter().filter_map(|r| r.metrics) {
            assert_eq!(
                m.max_abs,
                0.0,
                "{}: the stage and the program compute the same CMSIS-NN arithmetic",
                model.display()
            );
        }
    }
}

/// The Inspector's `calculate_numeric_gap` compares a program's AOT graph with what its
/// runtime captured; `etscope diff` of the edge stage against the ETDump does the same:
/// the same node groups, and the gaps rank the same (zero where the Inspector's is zero,
/// the largest gaps on the same groups).
#[test]
fn stage_against_device_capture_ranks_gaps_like_the_inspector() {
    for model in common::models() {
        let rec = ETRecord::parse(&common::read(
            &model.join("model_int8_qdq_portable.etrecord"),
        ))
        .expect("etrecord");
        let stage = rec.stage("edge").expect("edge");
        let input = read_npy(&common::read(&model.join("input.npy"))).expect("input");
        let run = common::run_stage(
            stage,
            &rec.stage_weights(stage).expect("weights"),
            std::slice::from_ref(&input),
            true,
        )
        .expect("stage runs");
        let a = Source::from_run(
            "aot",
            graph_from_export(&stage.graph, "edge", "forward"),
            &run,
        )
        .with_export("rec");
        let program = Program::parse(common::read(&model.join("model_int8_qdq_portable.pte")))
            .expect("program");
        let mut graph = graph_from_plan(&program, 0).expect("graph");
        graph.attach_debug_handles(&rec.debug_handle_map["forward"]);
        let d = ETDump::parse(&common::read(&model.join("etdump_int8_qdq.etdp"))).expect("etdump");
        let captured =
            captured_tensors(&d, &common::read(&model.join("debug_buffer_int8_qdq.bin")))
                .expect("captured");
        let b = Source::from_captured("runtime", graph, &captured).with_export("rec");
        let report = diff(&a, &b, Threshold::default()).expect("comparable");
        assert_eq!(report.matched_by, "debug_handle");

        let table = common::json(&model.join("numeric_gap_mse_int8_qdq.json"));
        let table = table.as_array().expect("rows");
        let mut ours: Vec<(Vec<u32>, f64)> = Vec::new();
        for want in table {
            let handles: Vec<u32> = want["aot_debug_handle"]
                .as_array()
                .expect("handles")
                .iter()
                .filter_map(|h| h.as_u64().map(|h| h as u32))
                .collect();
            let row = report
                .rows
                .iter()
                .find(|r| handles.iter().all(|h| r.handles.contains(h)))
                .unwrap_or_else(|| panic!("{}: no group for handles {handles:?}", model.display()));
            let mse = row.metrics.expect("compared").mse;
            let gap = want["gap"][0].as_f64().expect("gap");
            // both at float noise (different accumulation order of convolutions) or both real
            let noise = 1e-12;
            assert_eq!(
                gap < noise,
                mse < noise,
                "{}: {handles:?} ours {mse} vs {gap}",
                model.display()
            );
            ours.push((handles, mse));
        }
        assert_eq!(ours.len(), table.len());
        let top = |v: &mut Vec<(Vec<u32>, f64)>| {
            v.sort_by(|x, y| y.1.total_cmp(&x.1));
            v.first().map(|x| x.0.clone())
        };
        let mut theirs: Vec<(Vec<u32>, f64)> = table
            .iter()
            .map(|r| {
                (
                    r["aot_debug_handle"]
                        .as_array()
                        .expect("h")
                        .iter()
                        .filter_map(|h| h.as_u64().map(|h| h as u32))
                        .collect(),
                    r["gap"][0].as_f64().unwrap_or(0.0),
                )
            })
            .collect();
        if theirs.iter().any(|t| t.1 > 1e-9) {
            assert_eq!(
                top(&mut ours),
                top(&mut theirs),
                "{}: the largest gap is on another group",
                model.display()
            );
        }
    }
}

#[test]
fn correct_programs_show_no_divergence_and_every_fused_op_is_matched() {
    for model in common::models() {
        let a = host(&model, "model_fp32");
        for variant in ["model_int8_cortex_m55", "model_int8_qdq_portable"] {
            let b = host(&model, variant);
            let report = diff(&a, &b, Threshold::default()).expect("comparable");
            assert_no_divergence(&format!("{} {variant}", model.display()), &report);
            // every quantized compute op sits in a matched group that compares one quantity:
            // the fp32 side ends where the fused op ends (conv + batch norm + relu)
            for row in &report.rows {
                let m = row.metrics.unwrap_or_else(|| panic!("{:?}", row.note));
                assert!(m.snr_db > 25.0, "{} {variant}: {row:?}", model.display());
            }
            // the rule is the user's: with no required loss and a 100 dB bar, noise counts
            let mut strict = report.clone();
            strict.rejudge(Threshold {
                min_snr_db: 100.0,
                min_drop_db: 0.0,
                max_abs: f64::INFINITY,
            });
            assert_eq!(strict.first_divergence, Some(0), "{}", model.display());
            let program = Program::parse(common::read(&model.join(format!("{variant}.pte"))))
                .expect("program");
            for instr in etscope_core::analysis::fault::weighted(&program)
                .iter()
                .map(|w| w.instruction)
            {
                assert!(
                    report
                        .rows
                        .iter()
                        .any(|r| r.b_instructions.contains(&instr)),
                    "{} {variant}: instruction {instr} unmatched",
                    model.display()
                );
            }
        }
    }
}

#[test]
fn the_edge_stage_and_its_cortex_m_program_show_no_divergence() {
    use etscope_core::analysis::diff_sources::stage_source;
    for model in common::models() {
        let variant = "model_int8_cortex_m55";
        let rec = ETRecord::parse(&common::read(&model.join(format!("{variant}.etrecord"))))
            .expect("etrecord");
        let input = read_npy(&common::read(&model.join("input.npy"))).expect("input");
        let a = stage_source("edge", &rec, variant, "edge", std::slice::from_ref(&input))
            .expect("stage runs");
        let b = host(&model, variant);
        let report = diff(&a, &b, Threshold::default()).expect("comparable");
        // one export: matched by the quantities the ETRecord names (before debug handles, as
        // one handle's activation can be fused into another handle's op)
        assert_eq!(report.matched_by, "quantity", "{}", model.display());
        assert_eq!(report.first_divergence, None, "{}", model.display());
        // the fused groups compare one quantity: the fp32-simulated edge graph against the
        // CMSIS-NN kernels, within quantization noise
        for r in &report.rows {
            let m = r.metrics.unwrap_or_else(|| panic!("{:?}", r.note));
            assert!(m.snr_db > 30.0, "{}: {r:?}", model.display());
        }
    }
}

#[test]
fn a_broken_op_is_the_first_divergence_early_middle_and_late() {
    for model in common::models() {
        let variant = "model_int8_cortex_m55";
        let bytes = common::read(&model.join(format!("{variant}.pte")));
        let program = Program::parse(bytes.clone()).expect("program");
        let ops = etscope_core::analysis::fault::weighted(&program);
        assert!(ops.len() >= 2, "{}", model.display());
        let picks: std::collections::BTreeSet<usize> = [0, ops.len() / 2, ops.len() - 1].into();
        let a = host(&model, "model_fp32");
        for k in picks {
            // op k's weights and bias / kernel sum negated (etscope_core::analysis::fault)
            let instr = ops[k].instruction;
            let broken = etscope_core::analysis::fault::break_op(&program, instr).expect("breaks");
            let b = host_bytes(&model, variant, broken);
            let report = diff(&a, &b, Threshold::default()).expect("comparable");
            let first = report.first_divergence.unwrap_or_else(|| {
                let rows: Vec<String> = report
                    .rows
                    .iter()
                    .map(|r| format!("{:?} {:?}", r.b_instructions, r.metrics.map(|m| m.snr_db)))
                    .collect();
                panic!(
                    "{}: op {instr} broken, nothing found: {rows:?}",
                    model.display()
                )
            });
            assert!(
                report.rows[first].b_instructions.contains(&instr),
                "{}: broke instruction {instr}, first divergence at {:?}",
                model.display(),
                report.rows[first].b_instructions
            );
            // the broken op added its error; the rows after it only carry it on
            assert!(report.rows[first].drop_db().is_some_and(|d| d >= 10.0));
            for r in &report.rows[first + 1..] {
                if let (Some(m), Some(drop)) = (r.metrics, r.drop_db()) {
                    assert!(
                        m.snr_db >= 20.0 || drop < 10.0,
                        "{}: a later row {:?} looks like a new fault: {m:?} after {:?}",
                        model.display(),
                        r.b_instructions,
                        r.snr_in_db
                    );
                }
            }
        }
    }
}

#[test]
fn a_cancelled_host_run_stops_with_cancelled() {
    use etscope_core::analysis::diff_sources::program_source_cancellable;
    let model = common::tiny();
    let program = Program::parse(common::read(&model.join("model_fp32.pte"))).expect("program");
    let input = read_npy(&common::read(&model.join("input.npy"))).expect("input");
    let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let err = match program_source_cancellable(
        "a",
        &program,
        None,
        std::slice::from_ref(&input),
        None,
        Some(cancel),
    ) {
        Err(e) => e,
        Ok(_) => panic!("a cancelled run must stop"),
    };
    assert!(
        err.to_string().contains("cancelled at instruction 0"),
        "{err}"
    );
    let ok = program_source_cancellable(
        "a",
        &program,
        None,
        std::slice::from_ref(&input),
        None,
        None,
    );
    assert!(ok.is_ok());
}

/// Activations of 16 channels × 16 × 16 (`tests/fixtures/programs/layout_cube`, made by
/// ExecuTorch's exporter): NHWC and NCHW have the same shape, so only what the program says
/// tells the diff how to line the explicit-layout flow's `_nhwc` outputs up with the model's.
#[test]
fn layout_comes_from_the_program_when_shapes_cannot_tell() {
    let dir = common::fixtures().join("programs/layout_cube");
    let a = host(&dir, "model_fp32");
    for variant in ["model_int8_cortex_m55", "model_int8_cortex_m55_default"] {
        let b = host(&dir, variant);
        let report = diff(&a, &b, Threshold::default()).expect("comparable");
        assert_eq!(
            report.first_divergence, None,
            "{variant}: {:?}",
            report.rows
        );
        for r in &report.rows {
            let m = r.metrics.expect("compared");
            assert!(m.snr_db > 30.0, "{variant} {:?}: {m:?}", r.b_ops);
        }
        // the explicit flow's outputs really are NHWC of the model's tensors
        if variant == "model_int8_cortex_m55" {
            let dw = b
                .graph
                .nodes
                .iter()
                .find(|n| n.op == "cortex_m::quantized_depthwise_conv2d_nhwc")
                .expect("depthwise");
            let out = &b.graph.values[dw.outputs[0]];
            assert_eq!(out.shape, [1, 16, 16, 16]);
            assert_eq!(out.logical_order.as_deref(), Some(&[0, 2, 3, 1][..]));
            // what guessing from shapes gave: the same-shaped NHWC data compared as NCHW
            let mut guessed = b.clone();
            for v in &mut guessed.graph.values {
                v.logical_order = None;
            }
            let report = diff(&a, &guessed, Threshold::default()).expect("comparable");
            let worst = report
                .rows
                .iter()
                .filter_map(|r| r.metrics)
                .map(|m| m.snr_db)
                .fold(f64::INFINITY, f64::min);
            assert!(
                worst < 10.0,
                "guessing would have compared permuted values: {worst}"
            );
        }
        // the stage before the Cortex-M passes against the one after them (a transpose into
        // NHWC, then the _nhwc ops): the same layout rule lines them up
        let rec = ETRecord::parse(&common::read(&dir.join(format!("{variant}.etrecord"))))
            .expect("etrecord");
        let input = read_npy(&common::read(&dir.join("input.npy"))).expect("input");
        let stage = |name: &str| {
            etscope_core::analysis::diff_sources::stage_source(
                name,
                &rec,
                "rec",
                name,
                std::slice::from_ref(&input),
            )
            .expect("stage runs")
        };
        let report = diff(
            &stage("edge"),
            &stage("edge_after_transform"),
            Threshold::default(),
        )
        .expect("comparable");
        assert_eq!(
            report.first_divergence, None,
            "{variant}: {:?}",
            report.rows
        );
        for r in report.rows.iter().filter_map(|r| r.metrics) {
            assert!(r.snr_db > 30.0, "{variant} stages: {r:?}");
        }
        // one op's weights negated: that op is the first divergence
        let program =
            Program::parse(common::read(&dir.join(format!("{variant}.pte")))).expect("program");
        let ops = etscope_core::analysis::fault::weighted(&program);
        let instr = ops.last().expect("weighted ops").instruction;
        let broken = etscope_core::analysis::fault::break_op(&program, instr).expect("breaks");
        let report =
            diff(&a, &host_bytes(&dir, variant, broken), Threshold::default()).expect("comparable");
        let first = report.first_divergence.expect("the broken op is found");
        assert!(
            report.rows[first].b_instructions.contains(&instr),
            "{variant}: broke {instr}, found {:?}",
            report.rows[first].b_instructions
        );
    }
}

#[test]
fn the_last_row_always_compares_the_program_outputs() {
    let producer = |g: &etscope_core::ir::Graph| {
        let mut v = g.outputs[0];
        while let Some(src) = g.values[v].alias_of {
            v = src;
        }
        g.values[v].producer.expect("an output producer")
    };
    let mut checked = 0;
    // the reference models, and the made ones whose heads the matching splits (the U-Net's
    // sigmoid is a LUT after the convolution on the int8 side)
    let made = common::MADE_MODELS
        .iter()
        .map(|m| common::fixtures().join("models").join(m));
    for model in common::models().into_iter().chain(made) {
        let a = host(&model, "model_fp32");
        for variant in [
            "model_int8_cortex_m55",
            "model_int8_qdq_portable",
            "model_int8_cortex_m55_default",
            "model_int8_cortex_m55_explicit",
        ] {
            if !model.join(format!("{variant}.pte")).exists() {
                continue;
            }
            let b = host(&model, variant);
            let report = diff(&a, &b, Threshold::default()).expect("comparable");
            let last = report.rows.last().expect("rows");
            assert_eq!(
                (last.a_nodes.iter().max(), last.b_nodes.iter().max()),
                (Some(&producer(&a.graph)), Some(&producer(&b.graph))),
                "{} {variant}: the last row is {last:?}",
                model.display()
            );
            let m = last.metrics.expect("the outputs are compared");
            // correct programs: their outputs are close (the U-Net's is 58 dB from fp32)
            assert!(
                m.snr_db > 20.0 && m.cosine > 0.99,
                "{} {variant}: {m:?}",
                model.display()
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "{checked}");
}

/// Models made to stress the matching (`tools/make_models.py unet_heads gru_heads`): activations and
/// batch norms as modules of their own (`nn.Sequential(conv, bn, relu)`), a residual add, a
/// float upsample and concatenation between quantized regions, and a sigmoid the int8 program
/// computes as a lookup table; a float GRU between quantized regions and a tanh LUT head. In both
/// flows the correct program shows no divergence, its last
/// row is the outputs, and every weighted op broken on purpose is found at that op.
#[test]
fn activations_as_modules_and_a_lut_head_are_matched_like_with_like_in_both_flows() {
    for (name, variant) in [
        ("unet_heads", "model_int8_cortex_m55_default"),
        ("unet_heads", "model_int8_cortex_m55_explicit"),
        ("gru_heads", "model_int8_cortex_m55_default"),
        ("gru_heads", "model_int8_cortex_m55_explicit"),
    ] {
        let model = common::fixtures().join("models").join(name);
        let a = host(&model, "model_fp32");
        let label = format!("{name} {variant}");
        let b = host(&model, variant);
        let report = diff(&a, &b, Threshold::default()).expect("comparable");
        assert_no_divergence(&label, &report);
        // the LUT head is matched with the float one, not with the op before it
        let last = report.rows.last().expect("rows");
        assert!(
            last.a_ops
                .iter()
                .any(|o| o.contains("sigmoid") || o.contains("tanh"))
                && last
                    .b_ops
                    .iter()
                    .any(|o| o.contains("quantized_activation")),
            "{label}: {last:?}"
        );
        // every fused convolution sits in a group whose fp32 side ends at its ReLU
        for row in &report.rows {
            if row.b_ops.iter().any(|o| o.contains("quantized_conv2d"))
                && row.a_ops.iter().any(|o| o.contains("batch_norm"))
            {
                assert!(
                    row.a_ops.iter().any(|o| o.contains("relu")),
                    "{label}: {row:?}"
                );
            }
        }
        let bytes = common::read(&model.join(format!("{variant}.pte")));
        let program = Program::parse(bytes).expect("program");
        let ops = etscope_core::analysis::fault::weighted(&program);
        assert!(ops.len() >= 4, "{label}: {} weighted ops", ops.len());
        for op in &ops {
            let broken =
                etscope_core::analysis::fault::break_op(&program, op.instruction).expect("breaks");
            let b = host_bytes(&model, variant, broken);
            let report = diff(&a, &b, Threshold::default()).expect("comparable");
            let first = report.first_divergence.unwrap_or_else(|| {
                let rows: Vec<String> = report
                    .rows
                    .iter()
                    .map(|r| {
                        format!(
                            "{:?} {:?} {:?} {:?} in {:?}",
                            r.b_instructions,
                            r.a_ops,
                            r.b_ops,
                            r.metrics.map(|m| (m.snr_db, m.cosine)),
                            r.snr_in_db
                        )
                    })
                    .collect();
                panic!(
                    "{label}: op {} broken, nothing found: {rows:#?}",
                    op.instruction
                )
            });
            // the row holding the broken op is compared (a float GRU island whose last nodes
            // differ in shape is compared where both sides hand on a tensor of one shape) and is
            // the first divergence
            let holder = report
                .rows
                .iter()
                .position(|r| r.b_instructions.contains(&op.instruction))
                .unwrap_or_else(|| panic!("{label}: instruction {} in no row", op.instruction));
            assert!(
                report.rows[holder].metrics.is_some(),
                "{label}: the row of instruction {} is not compared: {:?}",
                op.instruction,
                report.rows[holder].note
            );
            let expected = holder;
            assert_eq!(
                first,
                expected,
                "{label}: broke instruction {}, first divergence at {:?}: {:#?}",
                op.instruction,
                report.rows[first].b_instructions,
                report
                    .rows
                    .iter()
                    .map(|r| (
                        r.module.clone(),
                        r.b_instructions.len(),
                        r.metrics.map(|m| m.snr_db),
                        r.note.clone()
                    ))
                    .collect::<Vec<_>>()
            );
        }
    }
}
