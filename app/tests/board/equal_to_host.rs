//! What the board computes equals the host, bit for bit: operators, models, etscope's lowered and re-planned programs, state across runs.

use super::*;

/// Every per-operator program of the Cortex-M backend (`tests/fixtures/ops/`) and every
/// Cortex-M model program (the shipped tiny model; the reference set's DS-CNN and MobileNet in
/// every flow and core when `../shared/reference` is there) whose operators the firmware
/// implements runs on the emulated board, every output equal to the host's, bit for bit; the
/// others are refused naming the operator. Which operators the board runs is the registry's
/// (`OpDef::board`).
#[test]
fn every_operator_and_model_program_the_board_runs_equals_the_host_on_the_board() {
    if !tools::available(
        "every_operator_and_model_program_the_board_runs_equals_the_host_on_the_board",
        tools::BOARD,
    ) {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let ops = root.join("tests/fixtures/ops");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&ops)
        .expect("ops fixtures")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("model.pte").exists())
        .collect();
    cases.sort();
    let (mut ran, mut refused, mut compared) = (0, Vec::new(), 0);
    for case in &cases {
        let name = case
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("?")
            .to_string();
        let program =
            Program::parse(std::fs::read(case.join("model.pte")).expect("pte")).expect("program");
        let inputs: Vec<String> = (0..)
            .map(|k| format!("input_{k}.npy"))
            .take_while(|f| case.join(f).exists())
            .collect();
        match equals_the_host_on_the_board(&name, &program, &npy_inputs(case, &inputs)) {
            Some(n) => {
                ran += 1;
                compared += n;
            }
            None => refused.push(name),
        }
    }
    assert!(
        refused.is_empty() && ran == cases.len(),
        "{ran} of {} operator programs ran on the board; refused: {refused:?}",
        cases.len()
    );
    let mut models = vec![root.join("tests/fixtures/tiny_conv_relu_linear")];
    let shared = root.join("../shared/reference");
    for m in [
        "tiny_conv_relu_linear",
        "ds_cnn_kws",
        "mobilenet_v1_025_vww",
    ] {
        if shared.join(m).is_dir() {
            models.push(shared.join(m));
        }
    }
    let mut model_programs = 0;
    for dir in models {
        for variant in [
            "model_int8_cortex_m55",
            "model_int8_cortex_m55_default",
            "model_int8_cortex_m4_default",
        ] {
            let pte = dir.join(format!("{variant}.pte"));
            if !pte.exists() {
                continue;
            }
            let program = Program::parse(std::fs::read(&pte).expect("pte")).expect("program");
            let name = format!("{}/{variant}", dir.display());
            let n = equals_the_host_on_the_board(
                &name,
                &program,
                &npy_inputs(&dir, &["input.npy".to_string()]),
            )
            .unwrap_or_else(|| {
                panic!("{name}: every reference Cortex-M program runs on the board")
            });
            compared += n;
            model_programs += 1;
        }
    }
    assert!(model_programs >= 3);
    eprintln!(
        "board sweep: {ran} operator programs and {model_programs} model programs ran ({compared} outputs equal), {} refused by the firmware: {refused:?}",
        refused.len()
    );
}

/// Programs etscope lowered and wrote itself (from the ETRecords of
/// `tests/fixtures/lowering/`, for the core each was made for) run on the emulated board with
/// every output equal to the host's, bit for bit.
#[test]
fn programs_etscope_lowered_run_on_the_board_equal_to_the_host() {
    use etscope_core::formats::etrecord::ETRecord;
    use etscope_core::lower::{self, Core, Flow, Module, Options};
    if !tools::available(
        "programs_etscope_lowered_run_on_the_board_equal_to_the_host",
        tools::BOARD,
    ) {
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/lowering");
    let mut ran = 0;
    for (stem, cpu) in [
        ("tiny_conv_relu_linear_m55_default", Core::M55),
        ("tiny_conv_relu_linear_m4_default", Core::M4),
        ("ds_cnn_kws_m55_default", Core::M55),
        ("ds_cnn_kws_m4_default", Core::M4),
    ] {
        let etr =
            ETRecord::parse(&std::fs::read(dir.join(format!("{stem}.etrecord"))).expect("read"))
                .expect("etrecord");
        let options = Options {
            flow: Flow::Default,
            core: cpu,
        };
        let stages = lower::lower(Module::from_etrecord(&etr, None).expect("edge"), &options)
            .expect("lowers");
        let bytes =
            lower::emit::program(&stages.last().expect("passes").module, &options).expect("writes");
        let program = Program::parse(bytes).expect("reads back");
        let inputs = etr.representative_inputs().expect("inputs");
        let n = equals_the_host_on_the_board(&format!("etscope-lowered {stem}"), &program, &inputs)
            .unwrap_or_else(|| panic!("{stem}: the board runs etscope's program"));
        assert!(n >= 1);
        ran += 1;
    }
    assert_eq!(ran, 4);
}

/// Programs re-planned by etscope run on the emulated board (whose firmware puts every tensor at
/// the program's offset) with every output equal to the host's, bit for bit: the best plan of the
/// Cortex-M model programs, and the in-place plan of every operator program that has one (an
/// output written over a dying input by the device kernel itself, so this is where the registry's
/// in-place declarations are proven on the device).
#[test]
fn re_planned_programs_run_on_the_board_equal_to_the_host() {
    use etscope_core::ir::from_pte::graph_from_plan;
    use etscope_core::plan::alternatives::{alternatives, write_program};
    use etscope_core::plan::derive;
    if !tools::available(
        "re_planned_programs_run_on_the_board_equal_to_the_host",
        tools::BOARD,
    ) {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let mut programs: Vec<(PathBuf, Vec<String>, &str)> = Vec::new();
    for m in [
        "models/resnet",
        "models/unet",
        "models/audio_gru",
        "models/inception",
        "tiny_conv_relu_linear",
    ] {
        programs.push((
            root.join(m).join("model_int8_cortex_m55_default.pte"),
            vec!["input.npy".into()],
            "best",
        ));
    }
    // the reference models in every Cortex-M flow and core, when ../shared/reference is there;
    // ExecuTorch's plan is already their smallest, so best fit places them otherwise
    let reference = root.join("../../../shared/reference");
    for m in [
        "ds_cnn_kws",
        "mobilenet_v1_025_vww",
        "tiny_conv_relu_linear",
    ] {
        for v in [
            "model_int8_cortex_m55",
            "model_int8_cortex_m55_default",
            "model_int8_cortex_m4_default",
        ] {
            let pte = reference.join(m).join(format!("{v}.pte"));
            if pte.exists() {
                programs.push((pte, vec!["input.npy".into()], "best_fit"));
            }
        }
    }
    let mut cases: Vec<PathBuf> = std::fs::read_dir(root.join("ops"))
        .expect("ops fixtures")
        .filter_map(|e| e.ok().map(|e| e.path().join("model.pte")))
        .filter(|p| p.exists())
        .collect();
    cases.sort();
    for pte in cases {
        let inputs = (0..)
            .map(|k| format!("input_{k}.npy"))
            .take_while(|f| pte.with_file_name(f).exists())
            .collect();
        programs.push((pte, inputs, "in_place"));
    }
    let (mut ran, mut shared) = (0, 0);
    for (pte, inputs, algorithm) in programs {
        let bytes = std::fs::read(&pte).expect("pte");
        let program = Program::parse(bytes.clone()).expect("program");
        let graph = graph_from_plan(&program, 0).expect("graph");
        let alts = alternatives(&graph, &derive(&graph));
        let picks: Vec<_> = alts
            .iter()
            .filter_map(|a| {
                match algorithm {
                    "best" => a.best(),
                    name => a.algorithm(name),
                }
                .map(|p| (a.memory_id, p))
            })
            .collect();
        if picks.is_empty() || picks.iter().all(|(_, p)| p.name == "executorch") {
            continue;
        }
        let replanned =
            Program::parse(write_program(&bytes, 0, &picks).expect("writes")).expect("reads back");
        let name = format!("re-planned ({algorithm}) {}", pte.display());
        let dir = pte.parent().expect("folder");
        if equals_the_host_on_the_board(&name, &replanned, &npy_inputs(dir, &inputs)).is_some() {
            ran += 1;
            shared += picks.iter().map(|(_, p)| p.shares.len()).sum::<usize>();
        }
    }
    eprintln!(
        "board: {ran} re-planned programs equal to the host, {shared} in-place shares among them"
    );
    assert!(ran >= 20 && shared >= 20, "{ran} programs, {shared} shares");
}

/// The portable (aten) operators the firmware implements (`board/firmware/portable_*.c`) give the
/// host's outputs bit for bit on the emulated board: every fp32 and Cortex-M program of the
/// models made with ExecuTorch's exporter (`tests/fixtures/models`: a residual network, a U-Net,
/// a 1-D convolutional GRU, a transformer block, an embedding model), every made program of
/// `tests/fixtures/programs` and every per-operator portable program of
/// `tests/fixtures/portable_ops` whose operators the firmware runs (the others are refused before
/// QEMU starts, naming the operator).
#[test]
fn portable_operators_run_on_the_board_equal_to_the_host() {
    if !tools::available(
        "portable_operators_run_on_the_board_equal_to_the_host",
        tools::BOARD,
    ) {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let sorted_dirs = |d: &str| {
        let mut v: Vec<PathBuf> = std::fs::read_dir(root.join(d))
            .expect("fixtures")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect();
        v.sort();
        v
    };
    let ptes = |dir: &Path| {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .expect("fixture")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "pte"))
            .collect();
        v.sort();
        v
    };
    let (mut models, mut compared) = (0, 0);
    for dir in sorted_dirs("models") {
        for pte in ptes(&dir) {
            let program = Program::parse(std::fs::read(&pte).expect("pte")).expect("program");
            let name = pte.display().to_string();
            compared += equals_the_host_on_the_board(
                &name,
                &program,
                &npy_inputs(&dir, &["input.npy".to_string()]),
            )
            .unwrap_or_else(|| panic!("{name}: every made model program runs on the board"));
            models += 1;
        }
    }
    // the reference set's fp32 and portable Q/DQ programs too, when `../shared/reference` is
    // there (batch norm, float convolutions, quantized_decomposed quantize and dequantize)
    let shared = root.join("../../../shared/reference");
    for m in [
        "tiny_conv_relu_linear",
        "ds_cnn_kws",
        "mobilenet_v1_025_vww",
    ] {
        for v in ["model_fp32", "model_int8_qdq_portable"] {
            let pte = shared.join(m).join(format!("{v}.pte"));
            if !pte.exists() {
                continue;
            }
            let program = Program::parse(std::fs::read(&pte).expect("pte")).expect("program");
            let name = pte.display().to_string();
            compared += equals_the_host_on_the_board(
                &name,
                &program,
                &npy_inputs(&shared.join(m), &["input.npy".to_string()]),
            )
            .unwrap_or_else(|| {
                panic!("{name}: every reference portable program runs on the board")
            });
            models += 1;
        }
    }
    assert!(models >= 9, "{models} model programs");
    let (mut ran, mut refused) = (0, Vec::new());
    for dir in sorted_dirs("programs")
        .into_iter()
        .chain(sorted_dirs("portable_ops"))
    {
        let mut inputs: Vec<String> = (0..)
            .map(|k| format!("input_{k}.npy"))
            .take_while(|f| dir.join(f).exists())
            .collect();
        if inputs.is_empty() && dir.join("input.npy").exists() {
            inputs.push("input.npy".into());
        }
        // the board image carries a program's own constants; weights in a .ptd are refused
        // (naming the file to open) before QEMU starts
        let external = std::fs::read_dir(&dir)
            .expect("fixture")
            .any(|e| e.is_ok_and(|e| e.path().extension().is_some_and(|x| x == "ptd")));
        if external {
            continue;
        }
        for pte in ptes(&dir) {
            let program = Program::parse(std::fs::read(&pte).expect("pte")).expect("program");
            let name = pte.display().to_string();
            match equals_the_host_on_the_board(&name, &program, &npy_inputs(&dir, &inputs)) {
                Some(n) => {
                    ran += 1;
                    compared += n;
                }
                None => refused.push(name),
            }
        }
    }
    eprintln!(
        "board portable sweep: {models} model programs and {ran} other programs ran ({compared} outputs equal); refused: {refused:?}"
    );
    // every program runs but these, which the firmware refuses before QEMU starts, for the
    // reason given: a refusal that is not listed, or a listed program that now runs, fails
    let expected_refusals = [
        (
            "cond_nested_not_taken",
            "control flow: the firmware runs kernel calls only",
        ),
        (
            "cond_nested_taken",
            "control flow: the firmware runs kernel calls only",
        ),
        (
            "cond_not_taken",
            "control flow: the firmware runs kernel calls only",
        ),
        (
            "cond_taken",
            "control flow: the firmware runs kernel calls only",
        ),
        (
            "cortex_m_hardswish",
            "an operator the firmware does not implement",
        ),
        ("ethos_u55", "an Ethos-U delegate"),
        (
            "float_conv_on_int8",
            "a float-only operator left on int8 tensors",
        ),
    ];
    // and these, whose C library function the host does not model as newlib computes it (the
    // double-precision sin of a float64 tensor, the double pow a p-norm's root takes; refused
    // on the host, naming the function)
    let unmodelled = ["kept_cdist_p3", "kept_pdist_p1_5", "sin_float64"];
    let mut refused_dirs: Vec<String> = refused
        .iter()
        .filter_map(|p| {
            Path::new(p)
                .parent()
                .and_then(|d| d.file_name())
                .map(|n| n.to_string_lossy().to_string())
        })
        .collect();
    refused_dirs.sort();
    let mut expected: Vec<&str> = expected_refusals
        .iter()
        .map(|(n, _)| *n)
        .chain(unmodelled)
        .collect();
    expected.sort();
    assert_eq!(
        refused_dirs, expected,
        "the programs the board refuses are not the listed ones ({expected_refusals:?})"
    );
    assert!(ran >= 40, "{ran} portable programs ran on the board");
}

/// A program's state carries over from one inference to the next on the board as it does on the
/// host (`Runtime::run_calls`) and in ExecuTorch's runtime: the recurrent cell whose mutable
/// buffer is written back with `copy_`, run three times, every output of every run equal to the
/// host's call of the same number (floats after `tanhf` within 1e-5, as newlib and glibc round),
/// and the runs differ from each other.
#[test]
fn a_programs_state_carries_over_between_runs_on_the_board_as_on_the_host() {
    if !tools::available(
        "a_programs_state_carries_over_between_runs_on_the_board_as_on_the_host",
        tools::BOARD,
    ) {
        return;
    }
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/programs/mutable_state");
    let program =
        Program::parse(std::fs::read(dir.join("model.pte")).expect("pte")).expect("program");
    let inputs = npy_inputs(&dir, &["input_0.npy".to_string()]);
    let runs = 3;
    let host = Runtime::new(&program, 0, Target::for_program(&program, 0))
        .expect("prepares")
        .run_calls(
            &vec![inputs.clone(); runs],
            etscope_core::runtime::RunOptions {
                capture: true,
                ..Default::default()
            },
        )
        .expect("host calls");
    let image = board_image::build(
        &program,
        0,
        &inputs,
        &BoardOptions {
            runs: runs as u32,
            intermediates: true,
            ..BoardOptions::default()
        },
    )
    .expect("image")
    .bytes;
    let (_qemu, gdb, cb) = start(&image);
    let out = out_dir("state");
    let raw = out.join("capture.etsw");
    let mut source = TargetSource::new(Box::new(gdb), Locate::Address(cb));
    let mut recorder = Recorder::new(Some(&raw)).expect("raw file");
    record_until(
        &mut recorder,
        &mut source,
        Some(runs as u64),
        Duration::from_millis(1),
        Duration::from_secs(60),
        |_| true,
    )
    .expect("records");
    let saved = save_capture(&raw, &program, "state", &out.join("capture.etdp")).expect("saved");
    let buffer = std::fs::read(out.join("capture.bin")).expect("debug buffer");
    let device = captured_tensors(&saved.etdump, &buffer).expect("tensors resolve");
    let mut per_run = vec![0; runs];
    for d in &device {
        let h = host[d.run]
            .captured
            .iter()
            .find(|c| c.instruction_id == Some(d.instruction_id as usize))
            .expect("the host ran the instruction");
        let want = h.tensors[0].to_data();
        assert!(
            d.tensor == want,
            "run {} instruction {}: differs: {:?} vs {:?}",
            d.run,
            d.instruction_id,
            d.tensor,
            want
        );
        per_run[d.run] += 1;
    }
    assert!(
        per_run.iter().all(|&n| n > 0),
        "every run sent its outputs: {per_run:?}"
    );
    let outputs: Vec<Vec<f32>> = host
        .iter()
        .map(|r| floats(&r.outputs[0].to_data()))
        .collect();
    assert!(
        outputs[0] != outputs[1] && outputs[1] != outputs[2],
        "the state moves on"
    );
    let _ = std::fs::remove_dir_all(out);
}
