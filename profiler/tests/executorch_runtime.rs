//! Streams recorded from ExecuTorch's own runtime: ExecuTorch 1.5.1 with its `cortex_m` kernels,
//! built for a Cortex-M55 and for a Cortex-M4 and run on QEMU, with etscope's adapter
//! (`board/executorch/`) as its EventTracer at intermediate-output level, read over RTT through
//! QEMU's GDB stub by `etscope record` (`tests/fixtures/executorch_runtime/provenance.json`,
//! `m55_qemu_streams`, `m4_qemu_streams`). Each stream decodes losslessly into one run whose op
//! events and captured outputs cover the program, and every output the board captured equals the
//! host runtime's for that core, bit for bit.

use std::path::{Path, PathBuf};

use etscope_core::formats::debug_buffer::captured_tensors;
use etscope_core::formats::npy::read_npy;
use etscope_core::formats::pte::{Instruction, Program};
use etscope_core::runtime::{Runtime, Target};
use etscope_core::tensor::TensorData;
use etscope_profiler::session::rebuild;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn npy(p: &Path) -> TensorData {
    read_npy(&read(p)).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The program and inputs a stream was recorded from, by the stream's file name.
fn program_of(stream: &Path) -> (PathBuf, Vec<PathBuf>) {
    let name = stream.file_stem().and_then(|n| n.to_str()).unwrap_or("?");
    if let Some(variant) = name.strip_prefix("tiny_conv_relu_linear__") {
        let dir = fixtures().join("tiny_conv_relu_linear");
        return (
            dir.join(format!("{variant}.pte")),
            vec![dir.join("input.npy")],
        );
    }
    let case = fixtures().join("ops").join(name);
    let mut inputs: Vec<(usize, PathBuf)> = std::fs::read_dir(&case)
        .unwrap_or_else(|e| panic!("{}: {e}", case.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| {
            let k = p
                .file_stem()?
                .to_str()?
                .strip_prefix("input_")?
                .parse()
                .ok()?;
            Some((k, p))
        })
        .collect();
    inputs.sort();
    (
        case.join("model.pte"),
        inputs.into_iter().map(|(_, p)| p).collect(),
    )
}

#[test]
fn executorchs_runtime_streams_through_the_adapter_and_every_captured_output_equals_the_host() {
    let m55 = check_streams("m55_qemu_streams", "cortex-m55", Target::CortexM55);
    assert!(
        m55.0 >= 118 && m55.1 >= 400,
        "M55: {m55:?} streams, tensors"
    );
    let m4 = check_streams("m4_qemu_streams", "cortex-m4", Target::CortexMDsp);
    assert!(m4.0 >= 38 && m4.1 >= 100, "M4: {m4:?} streams, tensors");
}

/// Checks every stream under `executorch_runtime/<dir>` (recorded on `core`) against the host
/// run for `target`. Returns how many streams and tensors were compared.
fn check_streams(dir: &str, core: &str, target: Target) -> (usize, usize) {
    let dir = fixtures().join("executorch_runtime").join(dir);
    let mut streams: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("streams")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "etsw"))
        .collect();
    streams.sort();
    let mut tensors = 0;
    for stream in &streams {
        let label = stream.display().to_string();
        let (pte, inputs) = program_of(stream);
        let program = Program::parse(read(&pte)).expect("program parses");
        let saved = rebuild(&read(stream), &program, &pte.display().to_string())
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(saved.counts.runs, 1, "{label}");
        assert_eq!(saved.counts.incomplete_runs, 0, "{label}");
        assert_eq!(saved.wire.lost_frames, 0, "{label}");
        assert_eq!(saved.wire.lost_bytes, 0, "{label}");
        assert_eq!(saved.wire.crc_errors, 0, "{label}");
        assert_eq!(saved.target_core.as_deref(), Some(core), "{label}");

        // one op event per kernel call of the program
        let plan = &program.plans[0];
        let calls = plan
            .main_instructions()
            .iter()
            .filter(|i| matches!(i, Instruction::KernelCall { .. }))
            .count();
        let events = saved.etdump.runs[0].events.len();
        assert!(
            events >= calls,
            "{label}: {events} events for {calls} kernel calls"
        );

        let device = captured_tensors(&saved.etdump, &saved.debug_buffer)
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(device.len(), calls, "{label}: one output per kernel call");
        let data: Vec<TensorData> = inputs.iter().map(|p| npy(p)).collect();
        let host = Runtime::new(&program, 0, target)
            .expect("prepares")
            .run(&data, true)
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        for d in &device {
            let h = host
                .captured
                .iter()
                .find(|c| c.instruction_id == Some(d.instruction_id as usize))
                .unwrap_or_else(|| panic!("{label}: no host output for {}", d.instruction_id));
            assert_eq!(
                d.tensor,
                h.tensors[0].to_data(),
                "{label}: instruction {}",
                d.instruction_id
            );
            tensors += 1;
        }
    }
    (streams.len(), tensors)
}

/// The target declares a 32 MHz clock: a saved capture's times are nanoseconds (what
/// ExecuTorch's Inspector reads by default), each the stream's ticks × 10^9 / 32,000,000.
#[test]
fn a_saved_capture_holds_nanoseconds_of_the_targets_declared_clock() {
    use etscope_core::formats::etdump::Event;
    use etscope_profiler::wire::{Record, WireDecoder};
    let stream = fixtures().join(
        "executorch_runtime/m55_qemu_streams/tiny_conv_relu_linear__model_int8_cortex_m55.etsw",
    );
    let (pte, _) = program_of(&stream);
    let program = Program::parse(read(&pte)).expect("program");
    let bytes = read(&stream);
    // what the target sent: its clock and the run's ticks
    let mut decoder = WireDecoder::new();
    decoder.push(&bytes);
    let (mut hz, mut start, mut end) = (0u32, None, None);
    while let Some(f) = decoder.next_frame() {
        match f.record {
            Record::TargetInfo(t) => hz = t.tick_hz,
            Record::RunStart { ticks, .. } => start = start.or(Some(ticks)),
            Record::RunEnd { ticks, .. } => end = end.or(Some(ticks)),
            _ => {}
        }
    }
    assert_eq!(hz, 32_000_000, "the emulated board's clock");
    let (start, end) = (start.expect("a run"), end.expect("its end"));
    let saved = rebuild(&bytes, &program, "tiny").expect("rebuilds");
    assert_eq!(saved.tick_hz, Some(hz));
    let execute = saved.etdump.runs[0]
        .events
        .iter()
        .find_map(|e| match e {
            Event::Profile(p) if p.name == "Method::execute" => Some(p.clone()),
            _ => None,
        })
        .expect("Method::execute");
    let ns = |t: u64| (u128::from(t) * 1_000_000_000 / u128::from(hz)) as u64;
    assert!(execute.start_time.abs_diff(ns(start)) <= 1, "{execute:?}");
    assert!(execute.end_time.abs_diff(ns(end)) <= 1, "{execute:?}");
    assert!(execute.end_time > execute.start_time);
    // 31.25 ns per tick: the raw ticks were not passed through
    assert_ne!(execute.end_time - execute.start_time, end - start);
}
