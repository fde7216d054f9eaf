//! Passes on real programs: a rewrite the runtime executes with the program's own output, a
//! broken pass caught by the one driver's `Module::check` with its name (the graph, its
//! constants, its quantization parameters; operator schemas on graphs with jumps too), and a
//! stage that runs exactly as its program does on every core.

mod common;

use etscope_core::formats::etrecord::ETRecord;
use etscope_core::formats::npy::read_npy;
use etscope_core::formats::pte::Program;
use etscope_core::ir::from_pte::graph_from_plan;
use etscope_core::ir::module::{Module, ModuleCheckError};
use etscope_core::ir::{CheckError, Graph, NodeKind};
use etscope_core::passes::fold_activation::FoldActivation;
use etscope_core::passes::{run_checked, run_pipeline, Pass, PassError};
use etscope_core::runtime::{Device, Runtime, Target};

fn ops(g: &Graph) -> Vec<String> {
    g.nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Operator)
        .map(|n| n.qualified_op())
        .collect()
}

#[test]
fn folding_a_relu_into_its_quantize_runs_with_the_programs_own_output() {
    let dir = common::tiny();
    let program =
        Program::parse(common::read(&dir.join("model_int8_qdq_portable.pte"))).expect("pte");
    let input = read_npy(&common::read(&dir.join("input.npy"))).expect("input");
    let graph = graph_from_plan(&program, 0).expect("graph");
    let before = ops(&graph);
    assert!(before.iter().any(|o| o == "aten::relu.out"), "{before:?}");
    let folded = run_checked(graph, &FoldActivation).expect("the pass keeps the graph valid");
    let after = ops(&folded);
    assert_eq!(after.len(), before.len() - 1, "{after:?}");
    assert!(
        !after.iter().any(|o| o.starts_with("aten::relu")),
        "{after:?}"
    );

    let original = Runtime::new(&program, 0, Target::default())
        .expect("prepares")
        .run(std::slice::from_ref(&input), false)
        .expect("runs");
    let rewritten = Runtime::with_graph(&program, 0, folded, Target::default())
        .expect("prepares the rewritten graph")
        .run(std::slice::from_ref(&input), true)
        .expect("runs the rewritten graph");
    assert_eq!(
        original.outputs[0].to_data().bytes,
        rewritten.outputs[0].to_data().bytes,
        "the folded program computes what the program computes"
    );
    // and the rewrite is not vacuous: the convolution's float output, which the quantize now
    // reads directly, has negative values the relu used to zero
    let conv_out = rewritten
        .captured
        .iter()
        .find(|c| rewritten_op(&program, c.instruction_id) == Some("aten::convolution".to_string()))
        .expect("the convolution ran");
    let min = conv_out.tensors[0]
        .to_data()
        .to_f64()
        .expect("floats")
        .into_iter()
        .fold(f64::INFINITY, f64::min);
    assert!(
        min < 0.0,
        "the convolution's output has no negative value: {min}"
    );
}

/// The operator of instruction `id` of plan 0.
fn rewritten_op(program: &Program, id: Option<usize>) -> Option<String> {
    let g = graph_from_plan(program, 0)?;
    g.node_for_instruction(id?).map(|n| n.op.clone())
}

/// Moves the last operator before the first: its input is then read before it is written.
struct Reorder;

impl Pass for Reorder {
    fn name(&self) -> &'static str {
        "deliberately_broken_reorder"
    }

    fn run(&self, module: Module, _: &()) -> Result<(Module, bool), PassError> {
        let mut graph = module.graph;
        let last = graph
            .nodes
            .iter()
            .rposition(|n| n.kind == NodeKind::Operator)
            .expect("an operator");
        let node = graph.nodes.remove(last);
        graph.nodes.insert(1, node);
        for (i, n) in graph.nodes.iter_mut().enumerate() {
            n.id = i;
        }
        graph.relink();
        Ok((Module::of_graph(graph), true))
    }
}

/// Writes a constant (the first operator's output becomes the weight it reads).
struct WriteConstant;

impl Pass for WriteConstant {
    fn name(&self) -> &'static str {
        "deliberately_broken_constant"
    }

    fn run(&self, module: Module, _: &()) -> Result<(Module, bool), PassError> {
        let mut graph = module.graph;
        let conv = graph
            .nodes
            .iter()
            .position(|n| n.kind == NodeKind::Operator)
            .expect("an operator");
        let weight = graph.nodes[conv].inputs[1];
        graph.nodes[conv].outputs = vec![weight];
        Ok((Module::of_graph(graph), true))
    }
}

#[test]
fn a_broken_pass_is_caught_after_it_runs_and_named() {
    let program =
        Program::parse(common::read(&common::tiny().join("model_fp32.pte"))).expect("pte");
    let graph = graph_from_plan(&program, 0).expect("graph");
    graph.check().expect("a program's graph is valid");

    let err = run_pipeline(graph.clone(), &[&FoldActivation, &Reorder]).expect_err("caught");
    match err {
        PassError::Broke { pass, error } => {
            assert_eq!(pass, "deliberately_broken_reorder");
            assert!(
                matches!(
                    error,
                    ModuleCheckError::Graph(CheckError::ReadBeforeDefined { .. })
                ),
                "{error}"
            );
        }
        other => panic!("{other}"),
    }
    let err = run_pipeline(graph, &[&WriteConstant]).expect_err("caught");
    assert!(
        err.to_string().contains("deliberately_broken_constant"),
        "{err}"
    );
    assert!(err.to_string().contains("writes constant value"), "{err}");
}

#[test]
fn every_pipeline_stage_says_whether_it_changed_the_graph() {
    let program =
        Program::parse(common::read(&common::tiny().join("model_fp32.pte"))).expect("pte");
    let graph = graph_from_plan(&program, 0).expect("graph");
    // the fp32 program's relu feeds a permute, not a quantize: nothing to fold
    let stages = run_pipeline(graph, &[&FoldActivation]).expect("runs");
    assert_eq!(stages.len(), 1);
    assert_eq!(stages[0].pass, "fold_activation");
    assert!(!stages[0].changed && stages[0].graph.is_none());
    // the int8 Q/DQ program's relu feeds a quantize: folded, and the stage is named for the pass
    let qdq = Program::parse(common::read(
        &common::tiny().join("model_int8_qdq_portable.pte"),
    ))
    .expect("pte");
    let stages =
        run_pipeline(graph_from_plan(&qdq, 0).expect("graph"), &[&FoldActivation]).expect("runs");
    assert!(stages[0].changed);
    assert_eq!(
        stages[0].graph.as_ref().map(|g| g.stage.as_str()),
        Some("fold_activation")
    );
}

#[test]
fn a_cortex_m_stage_and_its_program_agree_bit_for_bit_on_every_core() {
    // both lowering flows: the explicit one (NHWC sizes) and the default one (channels-last
    // dim orders, read from the stage's strides)
    let mut cases = vec![
        (common::tiny(), "model_int8_cortex_m55"),
        (
            common::fixtures().join("programs/layout_cube"),
            "model_int8_cortex_m55",
        ),
        (
            common::fixtures().join("programs/layout_cube"),
            "model_int8_cortex_m55_default",
        ),
    ];
    for model in common::models() {
        for variant in [
            "model_int8_cortex_m55",
            "model_int8_cortex_m55_default",
            "model_int8_cortex_m4_default",
        ] {
            if model.join(format!("{variant}.etrecord")).exists() {
                cases.push((model.clone(), variant));
            }
        }
    }
    let mut ran = 0usize;
    for (dir, variant) in cases {
        let rec = ETRecord::parse(&common::read(&dir.join(format!("{variant}.etrecord"))))
            .expect("etrecord");
        let program =
            Program::parse(common::read(&dir.join(format!("{variant}.pte")))).expect("pte");
        let input = read_npy(&common::read(&dir.join("input.npy"))).expect("input");
        let stage = rec.stage("edge_after_transform").expect("stage");
        let weights = rec.stage_weights(stage).expect("weights");
        for target in [Target::CortexM55, Target::CortexMDsp, Target::CortexMBase] {
            let device = Device {
                target,
                ..Device::default()
            };
            let what = format!("{} {variant} {target:?}", dir.display());
            let from_stage = Runtime::for_stage(
                &stage.graph,
                "edge_after_transform",
                "forward",
                &weights,
                device,
            )
            .unwrap_or_else(|e| panic!("{what}: stage prepares: {e}"))
            .run(std::slice::from_ref(&input), false);
            let from_program = Runtime::new(&program, 0, target)
                .expect("program prepares")
                .run(std::slice::from_ref(&input), false);
            match (from_stage, from_program) {
                (Ok(s), Ok(p)) => {
                    assert_eq!(s.outputs.len(), p.outputs.len(), "{what}");
                    for (k, (a, b)) in s.outputs.iter().zip(&p.outputs).enumerate() {
                        assert_eq!(a.to_data().bytes, b.to_data().bytes, "{what}: output {k}");
                    }
                    ran += 1;
                }
                // a program lowered for the M55 runs on the M55: both failing there is a defect
                (Err(s), Err(p)) if variant.contains("m55") && target == Target::CortexM55 => {
                    panic!("{what}: neither runs on the core it was lowered for: {s} / {p}")
                }
                (Err(s), Err(p)) => assert_eq!(
                    std::mem::discriminant(&s),
                    std::mem::discriminant(&p),
                    "{what}: {s} / {p}"
                ),
                (s, p) => panic!("{what}: stage {:?} program {:?}", s.err(), p.err()),
            }
        }
    }
    // every case ran on the M55 at least, and the M4 programs on the DSP core
    assert!(ran >= 3, "only {ran} stage/program pairs ran");
}

#[test]
fn a_pass_stage_diffs_against_its_program_instruction_by_instruction_with_no_divergence() {
    use etscope_core::analysis::diff::{diff, Threshold};
    use etscope_core::analysis::diff_sources::{program_source, rewrite_source};
    let dir = common::tiny();
    let program =
        Program::parse(common::read(&dir.join("model_int8_qdq_portable.pte"))).expect("pte");
    let input = read_npy(&common::read(&dir.join("input.npy"))).expect("input");
    let folded = run_checked(
        graph_from_plan(&program, 0).expect("graph"),
        &FoldActivation,
    )
    .expect("folds");
    let mut folded_stage = folded.clone();
    folded_stage.stage = "fold_activation".into();
    let a = program_source("program", &program, None, std::slice::from_ref(&input))
        .expect("program runs");
    let b = rewrite_source(
        "fold_activation",
        &program,
        folded_stage,
        std::slice::from_ref(&input),
        Device::default(),
        None,
    )
    .expect("the pass stage runs");
    let report = diff(&a, &b, Threshold::default()).expect("comparable");
    assert_eq!(report.matched_by, "instruction");
    assert_eq!(report.first_divergence, None, "{:?}", report.rows);
    // the relu the pass folded joins the quantize it was folded into (its provenance), so
    // every group compares the same quantity
    let folded_row = report
        .rows
        .iter()
        .find(|r| r.a_nodes.len() == 2)
        .expect("a group of two program nodes");
    assert_eq!(
        folded_row.a_ops,
        [
            "aten::relu.out",
            "quantized_decomposed::quantize_per_tensor.out"
        ]
    );
    assert_eq!(
        folded_row.b_ops,
        ["quantized_decomposed::quantize_per_tensor.out"]
    );
}

/// The edge module of a real quantized operator program, with its constants and (after the
/// lowering's second pass) its quantization parameters.
fn quantized_module() -> Module {
    let path = common::fixtures()
        .join("lowering")
        .join("ops")
        .join("quantized_linear__in16_out10_bias__default__m4.etrecord");
    let rec = ETRecord::parse(&common::read(&path)).expect("etrecord");
    let module = etscope_core::lower::Module::from_etrecord(&rec, None).expect("edge");
    let options = etscope_core::lower::Options {
        flow: etscope_core::lower::Flow::Default,
        core: etscope_core::lower::Core::M4,
    };
    let stages = etscope_core::lower::lower(module, &options).expect("lowers");
    let annotated = stages
        .iter()
        .find(|s| !s.module.qparams.is_empty())
        .expect("a stage with quantization parameters");
    annotated.module.clone()
}

/// Shrinks the first constant's sizes (its bytes stay): a weight no longer its value's.
struct BreakConstant;

impl Pass for BreakConstant {
    fn name(&self) -> &'static str {
        "deliberately_broken_weight"
    }

    fn run(&self, mut module: Module, _: &()) -> Result<(Module, bool), PassError> {
        let first = module.constants.values_mut().next().expect("a constant");
        first.shape[0] += 1;
        Ok((module, true))
    }
}

/// Sets one quantization scale to NaN.
struct BreakScale;

impl Pass for BreakScale {
    fn name(&self) -> &'static str {
        "deliberately_broken_scale"
    }

    fn run(&self, mut module: Module, _: &()) -> Result<(Module, bool), PassError> {
        let q = module.qparams.values_mut().next().expect("parameters");
        let args = q
            .outputs
            .values_mut()
            .chain(q.inputs.values_mut())
            .next()
            .expect("one");
        args.scales[0] = f64::NAN;
        Ok((module, true))
    }
}

#[test]
fn the_pipeline_checks_a_modules_constants_and_quantization_parameters_and_names_the_pass() {
    let module = quantized_module();
    module.check().expect("a lowered stage is consistent");
    let err = etscope_core::passes::drive(
        module.clone(),
        &[&BreakConstant],
        &(),
        |_, p| p.into(),
        |_| {},
    )
    .expect_err("caught");
    match err {
        PassError::Broke { pass, error } => {
            assert_eq!(pass, "deliberately_broken_weight");
            assert!(
                matches!(error, ModuleCheckError::ConstantShape { .. }),
                "{error}"
            );
        }
        other => panic!("{other}"),
    }
    let err = etscope_core::passes::drive(module, &[&BreakScale], &(), |_, p| p.into(), |_| {})
        .expect_err("caught");
    assert!(
        err.to_string().contains("deliberately_broken_scale"),
        "{err}"
    );
    assert!(err.to_string().contains("finite and positive"), "{err}");
}

#[test]
fn a_graph_with_a_jump_still_has_its_operators_schemas_checked() {
    let program =
        Program::parse(common::read(&common::tiny().join("model_fp32.pte"))).expect("pte");
    let mut graph = graph_from_plan(&program, 0).expect("graph");
    graph.check().expect("valid");
    // a jump makes the order unverifiable, not the arguments
    let mut jump = graph.nodes[0].clone();
    jump.kind = NodeKind::JumpFalse;
    jump.id = graph.nodes.len();
    jump.inputs.clear();
    jump.outputs.clear();
    jump.args.clear();
    graph.nodes.push(jump);
    graph.check().expect("a jump alone breaks nothing");
    let conv = graph
        .nodes
        .iter()
        .position(|n| n.op.ends_with("convolution"))
        .expect("a convolution");
    graph.nodes[conv].args.truncate(1);
    let err = graph.check().expect_err("the schema is checked");
    assert!(matches!(err, CheckError::Arity { .. }), "{err}");
}
