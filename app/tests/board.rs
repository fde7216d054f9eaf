//! The emulated board end to end: firmware built by arm-none-eabi-gcc, QEMU mps3-an547 running a
//! real Cortex-M program, frames streamed over RTT through QEMU's GDB stub, captures saved and
//! read back through `core`. Also the faults a live capture meets: a target reset mid-run, the
//! transport closing mid-stream, a full buffer in drop mode.

mod tools;

use std::path::{Path, PathBuf};
use std::time::Duration;

use etscope::board::{firmware, Qemu};
use etscope_core::analysis::profile::profile;
use etscope_core::board_image::{self, BoardOptions};
use etscope_core::formats::debug_buffer::captured_tensors;
use etscope_core::formats::etdump::ETDump;
use etscope_core::formats::pte::{Instruction, Program};
use etscope_core::runtime::{Runtime, RuntimeError, Target};
use etscope_core::tensor::TensorData;
use etscope_profiler::session::{record_until, save_capture, Locate, Recorder, TargetSource};
use etscope_profiler::transport::gdb::GdbRemote;
use etscope_profiler::transport::{TargetMemory, TransportError};

fn asset(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../assets")
        .join(rel)
}

fn model() -> (Program, TensorData, PathBuf) {
    let pte = asset("ds_cnn_kws/model_int8_cortex_m55.pte");
    let program = Program::parse(std::fs::read(&pte).expect("asset")).expect("program");
    let input = etscope_core::formats::npy::read_npy(
        &std::fs::read(asset("ds_cnn_kws/input.npy")).expect("input"),
    )
    .expect("npy");
    (program, input, pte)
}

fn image(program: &Program, input: &TensorData, options: BoardOptions) -> Vec<u8> {
    board_image::build(program, 0, std::slice::from_ref(input), &options)
        .expect("board image")
        .bytes
}

fn start(image: &[u8]) -> (Qemu, GdbRemote, u64) {
    let elf = firmware().expect("firmware builds (arm-none-eabi-gcc installed by .ci/run)");
    let qemu = Qemu::start(&elf, image).expect("qemu starts");
    let gdb = qemu.connect().expect("gdb stub");
    let cb = qemu.control_block().expect("_SEGGER_RTT");
    (qemu, gdb, cb)
}

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("etscope-board-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).expect("tmp");
    d
}

#[test]
fn n_inferences_stream_losslessly_and_match_the_host_runtime_bit_for_bit() {
    if !tools::available(
        "n_inferences_stream_losslessly_and_match_the_host_runtime_bit_for_bit",
        tools::BOARD,
    ) {
        return;
    }
    let (program, input, pte) = model();
    let runs = 3u64;
    let img = image(
        &program,
        &input,
        BoardOptions {
            runs: runs as u32,
            intermediates: true,
            ..BoardOptions::default()
        },
    );
    let (_qemu, gdb, cb) = start(&img);
    let dir = out_dir("e2e");
    let out = dir.join("capture.etdp");
    let raw = dir.join("capture.etsw");
    let mut source = TargetSource::new(Box::new(gdb), Locate::Address(cb));
    let mut recorder = Recorder::new(Some(&raw)).expect("raw file");
    record_until(
        &mut recorder,
        &mut source,
        Some(runs),
        Duration::from_millis(1),
        Duration::from_secs(30),
        |_| true,
    )
    .expect("records");
    let stats = recorder.stats();
    assert_eq!(stats.capture.runs, runs);
    assert_eq!(stats.wire.lost_frames, 0, "sequence numbers show no gap");
    assert_eq!(stats.wire.lost_bytes, 0);
    assert_eq!(stats.wire.crc_errors, 0);
    assert_eq!(stats.capture.device_dropped_frames, 0);

    // every per-op record is an instruction of the program, each once per run, in order
    let plan = &program.plans[0];
    let n = plan.main_instructions().len();
    assert!(plan
        .main_instructions()
        .iter()
        .all(|i| matches!(i, Instruction::KernelCall { .. })));
    for run in recorder.live().runs() {
        let ids: Vec<u32> = run.ops.iter().map(|o| o.0).collect();
        assert_eq!(ids, (0..n as u32).collect::<Vec<_>>());
        assert!(run
            .ops
            .iter()
            .all(|&(_, _, s, e)| e >= s && s >= run.start && e <= run.end));
    }

    // the saved capture reads back through core with the live view's statistics
    let (live_dump, _) = recorder.live().to_etdump(plan);
    let live = profile(&live_dump, Some(plan));
    let saved = save_capture(&raw, &program, &pte.display().to_string(), &out).expect("saved");
    assert_eq!(saved.counts.runs, runs);
    let reread = ETDump::parse(&std::fs::read(&out).expect("etdp")).expect("ETDump parses");
    let from_disk = profile(&reread, Some(plan));
    assert_eq!(from_disk.runs, runs as usize);
    assert_eq!(from_disk.rows.len(), n);
    assert_eq!(
        serde_json::to_value(&from_disk.rows).expect("json"),
        serde_json::to_value(&live.rows).expect("json")
    );
    assert!(from_disk
        .rows
        .iter()
        .all(|r| r.stats.count == runs as usize && r.stats.min > 0));

    // captured outputs equal the host runtime's, bit for bit, for every instruction of every run
    let buffer = std::fs::read(dir.join("capture.bin")).expect("debug buffer");
    let device = captured_tensors(&reread, &buffer).expect("tensors resolve");
    assert_eq!(device.len(), n * runs as usize);
    let host = Runtime::new(&program, 0, Target::CortexM55)
        .expect("prepares")
        .run(std::slice::from_ref(&input), true)
        .expect("host run");
    for d in &device {
        let h = host
            .captured
            .iter()
            .find(|c| c.instruction_id == Some(d.instruction_id as usize))
            .expect("host captured the instruction");
        assert_eq!(
            d.tensor,
            h.tensors[0].to_data(),
            "instruction {} of run {}",
            d.instruction_id,
            d.run
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Resets the target through QEMU's monitor once the first run has streamed.
struct ResetOnce {
    gdb: GdbRemote,
    halts: usize,
    reset_at: usize,
}

impl TargetMemory for ResetOnce {
    fn read(&mut self, a: u64, b: &mut [u8]) -> Result<(), TransportError> {
        self.gdb.read(a, b)
    }
    fn write(&mut self, a: u64, d: &[u8]) -> Result<(), TransportError> {
        self.gdb.write(a, d)
    }
    fn halt(&mut self) -> Result<(), TransportError> {
        self.gdb.halt()?;
        self.halts += 1;
        if self.halts == self.reset_at {
            self.gdb.monitor("system_reset")?;
        }
        Ok(())
    }
    fn resume(&mut self) -> Result<(), TransportError> {
        self.gdb.resume()
    }
    fn needs_halt(&self) -> bool {
        true
    }
    fn describe(&self) -> String {
        self.gdb.describe()
    }
}

#[test]
fn a_target_reset_mid_run_is_counted_and_recording_resumes() {
    if !tools::available(
        "a_target_reset_mid_run_is_counted_and_recording_resumes",
        tools::BOARD,
    ) {
        return;
    }
    let (program, input, pte) = model();
    let img = image(
        &program,
        &input,
        BoardOptions {
            runs: 40,
            intermediates: true,
            ring_kib: 4,
            ..BoardOptions::default()
        },
    );
    let (_qemu, gdb, cb) = start(&img);
    let dir = out_dir("reset");
    let raw = dir.join("capture.etsw");
    let target = ResetOnce {
        gdb,
        halts: 0,
        reset_at: 60,
    };
    let mut source = TargetSource::new(Box::new(target), Locate::Address(cb));
    let mut recorder = Recorder::new(Some(&raw)).expect("raw file");
    // more runs than one boot gives before the reset: the rest come from the restarted firmware
    record_until(
        &mut recorder,
        &mut source,
        Some(8),
        Duration::from_millis(1),
        Duration::from_secs(30),
        |_| true,
    )
    .expect("records across the reset");
    let s = recorder.stats();
    assert_eq!(s.wire.restarts, 1, "one restart seen: {s:?}");
    assert!(s.capture.runs >= 8);
    let saved = save_capture(
        &raw,
        &program,
        &pte.display().to_string(),
        &dir.join("c.etdp"),
    )
    .expect("capture stays readable");
    assert!(saved.counts.runs >= 8);
    assert!(
        saved.counts.incomplete_runs + saved.wire.lost_bytes > 0,
        "the run cut by the reset is reported: {:?} {:?}",
        saved.counts,
        saved.wire
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_transport_closing_mid_stream_is_an_error_and_what_arrived_is_on_disk() {
    if !tools::available(
        "the_transport_closing_mid_stream_is_an_error_and_what_arrived_is_on_disk",
        tools::BOARD,
    ) {
        return;
    }
    let (program, input, pte) = model();
    let img = image(
        &program,
        &input,
        BoardOptions {
            runs: 1000,
            intermediates: true,
            ..BoardOptions::default()
        },
    );
    let (mut qemu, gdb, cb) = start(&img);
    let dir = out_dir("closed");
    let raw = dir.join("capture.etsw");
    let mut source = TargetSource::new(Box::new(gdb), Locate::Address(cb));
    let mut recorder = Recorder::new(Some(&raw)).expect("raw file");
    let started = std::time::Instant::now();
    let result = record_until(
        &mut recorder,
        &mut source,
        None,
        Duration::from_millis(1),
        Duration::from_secs(30),
        |r| {
            if r.stats().capture.runs >= 2 {
                qemu.kill();
            }
            true
        },
    );
    let err = result.expect_err("a vanished GDB server is an error");
    assert!(started.elapsed() < Duration::from_secs(20), "no hang");
    let text = err.to_string();
    assert!(text.contains("GDB server"), "{text}");
    let saved = save_capture(
        &raw,
        &program,
        &pte.display().to_string(),
        &dir.join("c.etdp"),
    )
    .expect("capture on disk reads back");
    assert!(saved.counts.runs >= 2);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_full_buffer_in_drop_mode_is_counted_and_the_stream_resumes() {
    if !tools::available(
        "a_full_buffer_in_drop_mode_is_counted_and_the_stream_resumes",
        tools::BOARD,
    ) {
        return;
    }
    let (program, input, pte) = model();
    let img = image(
        &program,
        &input,
        BoardOptions {
            runs: 20,
            intermediates: true,
            drop_when_full: true,
            ring_kib: 2,
            ..BoardOptions::default()
        },
    );
    let (_qemu, gdb, cb) = start(&img);
    let dir = out_dir("drop");
    let raw = dir.join("capture.etsw");
    let mut source = TargetSource::new(Box::new(gdb), Locate::Address(cb));
    let mut recorder = Recorder::new(Some(&raw)).expect("raw file");
    // a slow host: 30 ms between polls, so the 2 KiB ring overflows
    record_until(
        &mut recorder,
        &mut source,
        None,
        Duration::from_millis(30),
        Duration::from_secs(2),
        |_| true,
    )
    .expect("records");
    let s = recorder.stats();
    assert!(s.capture.device_dropped_frames > 0, "{s:?}");
    assert!(s.capture.device_dropped_bytes > 0);
    assert_eq!(
        s.wire.lost_frames, 0,
        "dropped frames never took a sequence number"
    );
    assert_eq!(s.wire.crc_errors, 0);
    assert!(
        s.wire.frames > 100,
        "frames kept arriving after drops: {s:?}"
    );
    let saved = save_capture(
        &raw,
        &program,
        &pte.display().to_string(),
        &dir.join("c.etdp"),
    )
    .expect("capture reads back");
    assert_eq!(
        saved.counts.device_dropped_frames,
        s.capture.device_dropped_frames
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// The ExecuTorch adapter (`board/executorch`) compiles for a Cortex-M55 against the runtime
/// headers the `executorch` wheel ships (`scripts/fetch_executorch_headers.sh` puts them in the
/// cache), so it follows ExecuTorch's real `EventTracer` and `DataSinkBase` interfaces.
#[test]
fn the_executorch_adapter_compiles_against_the_wheel_headers() {
    if !tools::available(
        "the_executorch_adapter_compiles_against_the_wheel_headers",
        tools::BOARD_CXX,
    ) {
        return;
    }
    let cache = std::env::var_os("ETSCOPE_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/etscope")))
        .unwrap_or_else(std::env::temp_dir)
        .join("executorch-1.5.1-headers");
    let include = cache.join("executorch/include");
    // the headers come from scripts/fetch_executorch_headers.sh (.ci/run calls it): the test
    // command itself makes no network request
    if !tools::prepared(
        "the_executorch_adapter_compiles_against_the_wheel_headers",
        &include.join("executorch/runtime/core/event_tracer.h"),
        "scripts/fetch_executorch_headers.sh",
    ) {
        return;
    }
    let src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../board/executorch/etscope_event_tracer.cpp");
    let obj = std::env::temp_dir().join(format!("etscope-adapter-{}.o", std::process::id()));
    let out = std::process::Command::new("arm-none-eabi-g++")
        .args([
            "-std=c++17",
            "-mcpu=cortex-m55",
            "-mthumb",
            "-Wall",
            "-Wextra",
            "-Werror",
        ])
        .arg(format!("-I{}", include.display()))
        .arg(format!(
            "-I{}",
            include
                .join("executorch/runtime/core/portable_type/c10")
                .display()
        ))
        .args(["-DC10_USING_CUSTOM_GENERATED_MACROS", "-c"])
        .arg(&src)
        .arg("-o")
        .arg(&obj)
        .output()
        .expect("arm-none-eabi-g++ runs (apt: gcc-arm-none-eabi libstdc++-arm-none-eabi-newlib)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_file(obj);
}

/// Runs `program` once on the emulated board with every output sent and compares each with the
/// host runtime's for the program's core, bit for bit: `Some(outputs compared)`, or `None` when
/// the firmware refuses the program (an operator it does not implement, named) or the host
/// itself cannot run it on that core.
fn equals_the_host_on_the_board(
    name: &str,
    program: &Program,
    inputs: &[TensorData],
) -> Option<usize> {
    let target = Target::for_program(program, 0);
    let options = BoardOptions {
        runs: 1,
        intermediates: true,
        scalar_core: !target.has_helium(),
        ..BoardOptions::default()
    };
    let image = match board_image::build(program, 0, inputs, &options) {
        Ok(img) => img.bytes,
        Err(e) => {
            // refused by name: an operator it lacks, or a delegate (Ethos-U) it cannot run
            let why = e.to_string();
            assert!(
                why.contains("does not implement") || why.contains("runs kernel calls only"),
                "{name}: {e}"
            );
            return None;
        }
    };
    // a C library function the host does not model is refused by name, not compared
    let host = match Runtime::new(program, 0, target).and_then(|rt| rt.run(inputs, true)) {
        Ok(host) => host,
        Err(e @ RuntimeError::Unmodelled { .. }) => {
            eprintln!("{name}: the host refuses it: {e}");
            return None;
        }
        Err(e) => panic!("{name}: the host cannot run it: {e}"),
    };
    let (_qemu, gdb, cb) = start(&image);
    let dir = out_dir(&format!("sweep-{}", name.replace('/', "_")));
    let raw = dir.join("capture.etsw");
    let mut source = TargetSource::new(Box::new(gdb), Locate::Address(cb));
    let mut recorder = Recorder::new(Some(&raw)).expect("raw file");
    record_until(
        &mut recorder,
        &mut source,
        Some(1),
        Duration::from_millis(1),
        Duration::from_secs(60),
        |_| true,
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    let saved = save_capture(&raw, program, name, &dir.join("capture.etdp")).expect("saved");
    let buffer = std::fs::read(dir.join("capture.bin")).unwrap_or_else(|_| {
        panic!(
            "{name}: the board sent no outputs; its log: {:?}",
            saved.logs
        )
    });
    let device = captured_tensors(&saved.etdump, &buffer).expect("tensors resolve");
    assert!(!device.is_empty(), "{name}: the board sent no outputs");
    // every output bit for bit, float ones after a C library call (expf, tanhf, ...) included:
    // the host computes newlib's functions as the board does (`etscope_core::kernels::libm`)
    let plan = &program.plans[0];
    let op_of = |i: i32| match usize::try_from(i)
        .ok()
        .and_then(|i| plan.main_instructions().get(i))
    {
        Some(Instruction::KernelCall { op_index, .. }) => plan
            .operators
            .get(*op_index)
            .map(|o| o.name.clone())
            .unwrap_or_default(),
        _ => String::new(),
    };
    for d in &device {
        let h = host
            .captured
            .iter()
            .find(|c| c.instruction_id == Some(d.instruction_id as usize))
            .unwrap_or_else(|| panic!("{name}: the host has no instruction {}", d.instruction_id));
        let want = h.tensors[0].to_data();
        assert!(
            d.tensor == want,
            "{name}: instruction {} ({}) differs: {:?} vs {:?}",
            d.instruction_id,
            op_of(d.instruction_id),
            d.tensor,
            want
        );
    }
    let _ = std::fs::remove_dir_all(dir);
    Some(device.len())
}

fn floats(t: &TensorData) -> Vec<f32> {
    t.bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn npy_inputs(dir: &Path, names: &[String]) -> Vec<TensorData> {
    names
        .iter()
        .map(|n| {
            etscope_core::formats::npy::read_npy(&std::fs::read(dir.join(n)).expect("npy"))
                .expect("npy")
        })
        .collect()
}

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
    use etscope_core::lower::{self, Cpu, Flow, Module, Options};
    if !tools::available(
        "programs_etscope_lowered_run_on_the_board_equal_to_the_host",
        tools::BOARD,
    ) {
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/lowering");
    let mut ran = 0;
    for (stem, cpu) in [
        ("tiny_conv_relu_linear_m55_default", Cpu::M55),
        ("tiny_conv_relu_linear_m4_default", Cpu::M4),
        ("ds_cnn_kws_m55_default", Cpu::M55),
        ("ds_cnn_kws_m4_default", Cpu::M4),
    ] {
        let etr =
            ETRecord::parse(&std::fs::read(dir.join(format!("{stem}.etrecord"))).expect("read"))
                .expect("etrecord");
        let options = Options {
            flow: Flow::Default,
            cpu,
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
    ];
    // and these, whose C library function the host does not model as newlib computes it (the
    // double-precision sin of a float64 tensor; refused on the host, naming the function)
    let unmodelled = ["sin_float64"];
    let refused_dirs: Vec<String> = refused
        .iter()
        .filter_map(|p| {
            Path::new(p)
                .parent()
                .and_then(|d| d.file_name())
                .map(|n| n.to_string_lossy().to_string())
        })
        .collect();
    let expected: Vec<&str> = expected_refusals
        .iter()
        .map(|(n, _)| *n)
        .chain(unmodelled)
        .collect();
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
