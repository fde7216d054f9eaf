//! The stream from the board: lossless, resets, a closing transport, a full buffer, the ExecuTorch adapter.

use super::*;

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
    let (live_dump, _) = recorder.live().to_etdump(&program.instruction_calls(0));
    let ops = program.instruction_ops(0);
    let live = profile(&live_dump, Some(&ops));
    let saved = save_capture(&raw, &program, &pte.display().to_string(), &out).expect("saved");
    assert_eq!(saved.counts.runs, runs);
    let reread = ETDump::parse(&std::fs::read(&out).expect("etdp")).expect("ETDump parses");
    let from_disk = profile(&reread, Some(&ops));
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

#[test]
fn a_target_reset_mid_run_is_counted_and_recording_resumes() {
    if !tools::available(
        "a_target_reset_mid_run_is_counted_and_recording_resumes",
        tools::BOARD,
    ) {
        return;
    }
    let (program, input, pte) = model();
    // where the reset lands depends on how fast the host polls: a reset between two runs cuts
    // none, so a few reset points are tried until one cuts a run, and each must resume
    let cut = [60usize, 67, 75, 84]
        .iter()
        .any(|&reset_at| reset_cuts_a_run(&program, &input, &pte, reset_at));
    assert!(
        cut,
        "no reset point cut a run, or a cut run was not reported"
    );
}

/// Records 8 runs across one target reset at the `reset_at`-th halt: the restart is seen and
/// recording resumes (asserted); whether the reset cut a run that the capture then reports.
fn reset_cuts_a_run(
    program: &etscope_core::formats::pte::Program,
    input: &etscope_core::tensor::TensorData,
    pte: &std::path::Path,
    reset_at: usize,
) -> bool {
    let img = image(
        program,
        input,
        BoardOptions {
            runs: 40,
            intermediates: true,
            ring_kib: 4,
            ..BoardOptions::default()
        },
    );
    let (_qemu, gdb, cb) = start(&img);
    let dir = out_dir(&format!("reset{reset_at}"));
    let raw = dir.join("capture.etsw");
    let target = ResetOnce {
        gdb,
        halts: 0,
        reset_at,
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
        program,
        &pte.display().to_string(),
        &dir.join("c.etdp"),
    )
    .expect("capture stays readable");
    assert!(saved.counts.runs >= 8);
    let _ = std::fs::remove_dir_all(dir);
    // the run cut by the reset is reported: an incomplete run, or bytes lost
    saved.counts.incomplete_runs + saved.wire.lost_bytes > 0
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
    // every byte the decoder saw is on disk
    assert_eq!(
        std::fs::metadata(&raw).expect("raw capture").len(),
        recorder.stats().wire.bytes,
        "the raw capture holds every byte decoded"
    );
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
    let Some(include) =
        tools::executorch_include("the_executorch_adapter_compiles_against_the_wheel_headers")
    else {
        return;
    };
    let src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../board/executorch/etscope_event_tracer.cpp");
    let obj = std::env::temp_dir().join(format!("etscope-adapter-{}.o", std::process::id()));
    if let Err(e) = tools::compile_against_executorch(&include, &src, &obj) {
        panic!("{e}");
    }
    let _ = std::fs::remove_file(obj);
}
