//! Host runs: run, bundled, stages run as programs, state across calls, methods, and what the host refuses to run.

use super::*;

#[test]
fn run_dumps_outputs_and_every_instruction_as_npy() {
    let dir = std::env::temp_dir().join(format!("etscope-run-{}", std::process::id()));
    let out = etscope(&[
        "run",
        "--pte",
        p(&tiny("model_int8_cortex_m55.pte")),
        "--input",
        p(&tiny("input.npy")),
        "--dump",
        p(&dir),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = etscope_core::formats::npy::read_npy(
        &std::fs::read(dir.join("output_0.npy")).expect("output"),
    )
    .expect("npy");
    let want = etscope_core::formats::npy::read_npy(
        &std::fs::read(tiny("output_int8_cortex_m_python.npy")).expect("ref"),
    )
    .expect("npy");
    assert_eq!(got.bytes, want.bytes);
    for iid in 0..6 {
        assert!(
            dir.join(format!("instr_{iid}.npy")).exists(),
            "instr_{iid}.npy"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    // a delegate cannot run on the host: a one-line error naming the backend
    let x = etscope(&[
        "run",
        "--pte",
        p(&tiny("model_fp32_xnnpack.pte")),
        "--input",
        p(&tiny("input.npy")),
    ]);
    assert_eq!(x.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&x.stderr).contains("XnnpackBackend cannot run on the host"));
}

#[test]
fn bundled_runs_every_test_case() {
    let v = json(&["bundled", "--json", p(&tiny("model_fp32.bpte"))]);
    let cases = v.as_array().expect("cases");
    assert_eq!(cases.len(), 3);
    assert!(cases.iter().all(|c| c["passed"] == true), "{v}");
}

#[test]
fn bundled_says_cannot_run_apart_from_wrong_numbers() {
    let out = etscope(&[
        "bundled",
        p(&fixture("programs/bundled_xnnpack/model.bpte")),
    ]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "cannot run has its own exit code"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot run on the host") && err.contains("XnnpackBackend"),
        "{err}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("cannot run"), "{stdout}");
    let ok = etscope(&["bundled", p(&tiny("model_fp32.bpte"))]);
    assert_eq!(ok.status.code(), Some(0));
}

#[test]
fn run_models_the_core_the_program_was_lowered_for() {
    // an M4 program's linear layers carry a bias; the run says nothing and uses the DSP path,
    // and an unknown --target is refused with the names it takes
    let m4 = tiny("model_int8_cortex_m4_default.pte");
    let input = tiny("input.npy");
    json(&["run", "--json", "--pte", p(&m4), "--input", p(&input)]);
    let bad = etscope(&[
        "run",
        "--pte",
        p(&m4),
        "--input",
        p(&input),
        "--target",
        "m99",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown core"));
}

#[test]
fn a_stage_runs_as_a_program_does_and_writes_the_same_outputs() {
    let dir = std::env::temp_dir().join(format!("etscope-run-stage-{}", std::process::id()));
    let (stage_dir, pte_dir) = (dir.join("stage"), dir.join("pte"));
    let rec = tiny("model_int8_cortex_m55.etrecord");
    let input = tiny("input.npy");
    for target in ["m55", "m4", "m0"] {
        let stage = format!("{}#edge_after_transform", p(&rec));
        let a = etscope(&[
            "run",
            &stage,
            "--input",
            p(&input),
            "--target",
            target,
            "--dump",
            p(&stage_dir),
        ]);
        assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
        let b = etscope(&[
            "run",
            p(&tiny("model_int8_cortex_m55.pte")),
            "--input",
            p(&input),
            "--target",
            target,
            "--dump",
            p(&pte_dir),
        ]);
        assert!(b.status.success(), "{}", String::from_utf8_lossy(&b.stderr));
        let read = |d: &Path| std::fs::read(d.join("output_0.npy")).expect("output written");
        assert_eq!(read(&stage_dir), read(&pte_dir), "--target {target}");
        // the stage's nodes are dumped per node, the program's per instruction
        assert!(std::fs::read_dir(&stage_dir).expect("dir").any(|e| e
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .starts_with("node_")));
    }
    let missing = etscope(&[
        "run",
        &format!("{}#no_such_stage", p(&rec)),
        "--input",
        p(&input),
    ]);
    assert_eq!(missing.status.code(), Some(2));
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(
        err.contains("no stage") && err.contains("edge_after_transform"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `run` starts a method that takes no input without `--input`, and writes a non-tensor output
/// (an int) as a 0-d array: both byte for byte what ExecuTorch's runtime returned, as NumPy
/// saves it.
#[test]
fn run_takes_programs_without_inputs_and_writes_non_tensor_outputs() {
    let dir = std::env::temp_dir().join(format!("etscope-io-{}", std::process::id()));
    for (case, inputs) in [("no_input", 0), ("int_output", 1)] {
        let src = fixture(&format!("programs/{case}"));
        let pte = src.join("model.pte");
        let mut args = vec!["run".to_string(), p(&pte).to_string()];
        for k in 0..inputs {
            args.push("--input".into());
            args.push(p(&src.join(format!("input_{k}.npy"))).to_string());
        }
        let out_dir = dir.join(case);
        args.extend(["--dump".to_string(), p(&out_dir).to_string()]);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = etscope(&argv);
        assert!(
            out.status.success(),
            "{case}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for k in 0.. {
            let want = src.join(format!("output_{k}.npy"));
            if !want.exists() {
                assert!(k > 0);
                break;
            }
            assert_eq!(
                std::fs::read(out_dir.join(format!("output_{k}.npy"))).expect("written"),
                std::fs::read(&want).expect("reference"),
                "{case} output {k}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `run --calls N` calls the method N times, state carried over: the second call of a program
/// with a mutable buffer gives what ExecuTorch's runtime gave for its second call.
#[test]
fn run_calls_carry_a_programs_state_to_the_next_call() {
    let dir = fixture("programs/mutable_state");
    let out = std::env::temp_dir().join(format!("etscope-calls-{}", std::process::id()));
    let run = etscope(&[
        "run",
        p(&dir.join("model.pte")),
        "--input",
        p(&dir.join("input_0.npy")),
        "--calls",
        "2",
        "--dump",
        p(&out),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let read = |f: &Path| {
        etscope_core::formats::npy::read_npy(&std::fs::read(f).expect("npy"))
            .expect("npy")
            .to_f64()
            .expect("floats")
    };
    let got = read(&out.join("output_0.npy"));
    let want = read(&dir.join("output_second_call.npy"));
    let first = read(&dir.join("output_0.npy"));
    assert_eq!(got.len(), want.len());
    assert!(
        got.iter().zip(&want).all(|(a, b)| (a - b).abs() <= 1e-5),
        "{got:?} vs {want:?}"
    );
    assert!(
        got.iter().zip(&first).any(|(a, b)| (a - b).abs() > 1e-3),
        "the state moved on"
    );
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn run_picks_forward_by_default_and_any_method_by_name() {
    let dir = training("xor_external");
    let pte = dir.join("model.pte");
    let (x, label) = (dir.join("input_0.npy"), dir.join("input_1.npy"));
    // forward, although the training metadata methods sort before it; its .ptd found beside it
    let out = json(&[
        "run",
        p(&pte),
        "--input",
        p(&x),
        "--input",
        p(&label),
        "--json",
    ]);
    let rows = out["outputs"].as_array().expect("outputs");
    assert_eq!(rows.len(), 10, "{out}");
    let loss: f64 = {
        let want = etscope_core::formats::npy::read_npy(
            &std::fs::read(dir.join("call_0_output_0.npy")).expect("npy"),
        )
        .expect("npy");
        want.to_f64().expect("numeric")[0]
    };
    let got = rows[0]["stats"]["mean"].as_f64().expect("mean");
    assert!(
        (got - loss).abs() <= 1e-6 * (1.0 + loss.abs()),
        "{got} vs {loss}"
    );
    // a metadata method returns the parameters' names
    let out = json(&[
        "run",
        p(&pte),
        "--method",
        "__et_training_fqn_forward",
        "--json",
    ]);
    let texts: Vec<&str> = out["outputs"]
        .as_array()
        .expect("outputs")
        .iter()
        .map(|r| r["text"].as_str().expect("a text output"))
        .collect();
    assert_eq!(
        texts,
        [
            "linear.weight",
            "linear.bias",
            "linear2.weight",
            "linear2.bias"
        ]
    );
    let table = etscope(&["run", p(&pte), "--method", "__et_training_fqn_forward"]);
    assert!(table.status.success());
    assert!(String::from_utf8_lossy(&table.stdout).contains("\"linear2.bias\""));
    // an unknown method is named with the ones there are
    let bad = etscope(&["run", p(&pte), "--method", "backward"]);
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("\"backward\"") && err.contains("__et_training_parameters_index_forward"),
        "{err}"
    );
}

#[test]
fn a_training_program_whose_backward_etscope_lacks_is_refused_naming_the_operator() {
    let dir = training("conv");
    let out = etscope(&[
        "run",
        p(&dir.join("model.pte")),
        "--input",
        p(&dir.join("input_0.npy")),
        "--input",
        p(&dir.join("input_1.npy")),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("aten::convolution_backward") && err.contains("model.pte"),
        "{err}"
    );
    assert!(
        out.stdout.is_empty(),
        "no output may be printed: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// `--libm`: newlib's double-precision `sin` is not modelled, so the default refuses the `sin` of
/// a float64 tensor naming the function and saying what to do, and prints nothing; `--libm glibc`
/// runs it and equals ExecuTorch's x86 runtime's output bit for bit.
#[test]
fn run_refuses_a_c_library_function_newlib_computes_and_the_host_does_not_model() {
    let dir = fixture("programs/sin_float64");
    let (pte, input) = (dir.join("model.pte"), dir.join("input_0.npy"));
    let refused = etscope(&[
        "run",
        pte.to_str().unwrap(),
        "--input",
        input.to_str().unwrap(),
    ]);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("newlib's `sin` is not modelled") && err.contains("--libm glibc"),
        "{err}"
    );
    assert!(
        refused.stdout.is_empty(),
        "printed a result: {}",
        String::from_utf8_lossy(&refused.stdout)
    );
    let out = std::env::temp_dir().join(format!("etscope-libm-{}", std::process::id()));
    let ran = etscope(&[
        "run",
        pte.to_str().unwrap(),
        "--input",
        input.to_str().unwrap(),
        "--libm",
        "glibc",
        "--dump",
        out.to_str().unwrap(),
    ]);
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let got = std::fs::read(out.join("output_0.npy")).expect("output written");
    let want = std::fs::read(dir.join("output_0.npy")).expect("ExecuTorch's output");
    let _ = std::fs::remove_dir_all(&out);
    let data = |b: &[u8]| etscope_core::formats::npy::read_npy(b).expect("npy").bytes;
    assert_eq!(
        data(&got),
        data(&want),
        "sin with --libm glibc differs from ExecuTorch's runtime"
    );
}

/// Every command that takes a core takes `--core` (`--target` the same) in any spelling users
/// type — one parser, `etscope_core::core_name`.
#[test]
fn every_command_that_takes_a_core_takes_core_in_any_spelling() {
    for cmd in ["run", "diff", "eval", "lower", "cost", "memory", "profile"] {
        let help = etscope(&[cmd, "--help"]);
        let text = String::from_utf8_lossy(&help.stdout);
        assert!(text.contains("--core"), "{cmd} --help: {text}");
    }
    let pte = tiny("model_int8_cortex_m55.pte");
    let rec = tiny("model_int8_cortex_m55.etrecord");
    let input = tiny("input.npy");
    for spelling in ["m0+", "Cortex-M4", "cortex_m55", "M35P"] {
        for args in [
            vec!["run", p(&pte), "--input", p(&input), "--core", spelling],
            vec!["run", p(&pte), "--input", p(&input), "--target", spelling],
            vec!["lower", p(&rec), "--core", spelling],
            vec!["cost", p(&pte), "--core", spelling],
            vec!["memory", p(&pte), "--core", spelling],
        ] {
            let out = etscope(&args);
            assert!(
                out.status.success(),
                "{args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    // a core the cost model has no timings of is named as such, not as unknown
    let out = etscope(&["cost", p(&pte), "--core", "m23"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no timings of the Cortex-M23"));
}
