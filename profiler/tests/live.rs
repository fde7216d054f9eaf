//! The live-capture path on real bytes from the emulated board: a raw stream the firmware wrote
//! (`tests/fixtures/board/tiny_m55_3runs.etsw`, 3 runs of the tiny Cortex-M program with outputs)
//! replayed with faults injected, and the probe-rs transport reading a real RTT control block
//! (`rtt_snapshot.bin`, read from the board's memory) out of a fake target memory.

use std::path::{Path, PathBuf};
use std::time::Duration;

use etscope_core::analysis::identity::program_fingerprint;
use etscope_core::formats::pte::Program;
use etscope_profiler::capture::Assembler;
use etscope_profiler::session::{rebuild, Locate, Recorder, SessionError, TargetSource};
use etscope_profiler::transport::probe::ProbeMemory;
use etscope_profiler::wire::{Record, WireDecoder, HEADER_BYTES};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

fn tiny() -> Program {
    Program::parse(
        std::fs::read(repo(
            "assets/tiny_conv_relu_linear/model_int8_cortex_m55.pte",
        ))
        .expect("pte"),
    )
    .expect("parses")
}

fn stream() -> Vec<u8> {
    std::fs::read(repo("tests/fixtures/board/tiny_m55_3runs.etsw")).expect("fixture")
}

/// Byte ranges of the frames in a clean stream.
fn frame_spans(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut at = 0;
    while at + HEADER_BYTES <= bytes.len() {
        assert_eq!(&bytes[at..at + 4], b"ETSF");
        let len = u32::from_le_bytes([
            bytes[at + 12],
            bytes[at + 13],
            bytes[at + 14],
            bytes[at + 15],
        ]);
        let end = at + HEADER_BYTES + len as usize + 4;
        spans.push((at, end));
        at = end;
    }
    assert_eq!(at, bytes.len());
    spans
}

#[test]
fn the_board_stream_decodes_the_same_in_any_chunking() {
    let bytes = stream();
    let program = tiny();
    let whole = rebuild(&bytes, &program, "tiny").expect("rebuilds");
    assert_eq!(whole.counts.runs, 3);
    assert_eq!((whole.wire.lost_frames, whole.wire.lost_bytes), (0, 0));
    for chunk in [1usize, 7, 100, 4096] {
        let mut d = WireDecoder::new();
        let mut a = Assembler::new();
        for c in bytes.chunks(chunk) {
            d.push(c);
            while let Some(f) = d.next_frame() {
                a.add(f);
            }
        }
        let (dump, buf) = a.to_etdump(&program.instruction_calls(0));
        assert_eq!(dump, whole.etdump, "chunk {chunk}");
        assert_eq!(buf, whole.debug_buffer);
    }
}

#[test]
fn garbage_between_frames_is_counted_and_every_run_still_decodes() {
    let bytes = stream();
    let spans = frame_spans(&bytes);
    let garbage: &[u8] = b"\x00\xffETSF\x01\x04 torn header ETS";
    let mut noisy = Vec::new();
    let mut injected = 0u64;
    for (k, &(s, e)) in spans.iter().enumerate() {
        noisy.extend_from_slice(&bytes[s..e]);
        if k % 5 == 2 {
            noisy.extend_from_slice(garbage);
            injected += garbage.len() as u64;
        }
    }
    let got = rebuild(&noisy, &tiny(), "tiny").expect("rebuilds");
    assert_eq!(got.wire.lost_bytes, injected);
    assert_eq!(got.wire.lost_frames, 0);
    assert_eq!(got.counts.runs, 3);
    let clean = rebuild(&bytes, &tiny(), "tiny").expect("rebuilds");
    assert_eq!(got.etdump, clean.etdump, "the garbage changed nothing");
}

#[test]
fn a_dropped_frame_is_counted_and_the_rest_of_the_run_kept() {
    let bytes = stream();
    let spans = frame_spans(&bytes);
    // find an op frame of the second run and leave it out
    let mut d = WireDecoder::new();
    d.push(&bytes);
    let mut ops_seen = 0;
    let mut victim = None;
    for (k, _) in spans.iter().enumerate() {
        let f = d.next_frame().expect("frame");
        if let Record::Op { .. } = f.record {
            ops_seen += 1;
            if ops_seen == 8 {
                victim = Some(k);
            }
        }
    }
    let victim = victim.expect("an op frame of run 2");
    let mut cut = Vec::new();
    for (k, &(s, e)) in spans.iter().enumerate() {
        if k != victim {
            cut.extend_from_slice(&bytes[s..e]);
        }
    }
    let got = rebuild(&cut, &tiny(), "tiny").expect("rebuilds");
    assert_eq!(got.wire.lost_frames, 1);
    assert_eq!(got.wire.lost_bytes, 0);
    assert_eq!(got.counts.runs, 3);
    let ops: usize = got
        .etdump
        .runs
        .iter()
        .map(|r| r.events.iter().filter(|e| matches!(e, etscope_core::formats::etdump::Event::Profile(p) if p.instruction_id >= 0)).count())
        .sum();
    assert_eq!(ops, 3 * 6 - 1);
}

#[test]
fn a_truncated_stream_keeps_its_complete_runs() {
    let bytes = stream();
    let cut = &bytes[..bytes.len() * 2 / 3];
    let got = rebuild(cut, &tiny(), "tiny").expect("rebuilds");
    assert!(
        got.counts.runs >= 1 && got.counts.runs < 3,
        "{:?}",
        got.counts
    );
}

#[test]
fn a_capture_is_refused_for_another_program() {
    let other = Program::parse(
        std::fs::read(repo("assets/ds_cnn_kws/model_int8_cortex_m55.pte")).expect("pte"),
    )
    .expect("parses");
    match rebuild(&stream(), &other, "ds_cnn.pte") {
        Err(SessionError::WrongProgram {
            target, expected, ..
        }) => {
            assert_eq!(target, program_fingerprint(tiny().bytes()));
            assert_ne!(target, expected);
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// A target's memory as regions, behind probe-rs's `MemoryInterface` (what a probe's `Core` gives).
struct FakeTarget {
    regions: Vec<(u64, Vec<u8>)>,
}

impl FakeTarget {
    fn from_snapshot(bytes: &[u8]) -> FakeTarget {
        let mut regions = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            let addr = u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8"));
            let len = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().expect("4")) as usize;
            regions.push((addr, bytes[at + 12..at + 12 + len].to_vec()));
            at += 12 + len;
        }
        FakeTarget { regions }
    }

    fn slot(&mut self, address: u64, len: usize) -> Result<&mut [u8], probe_rs::Error> {
        for (base, data) in &mut self.regions {
            if address >= *base && address + len as u64 <= *base + data.len() as u64 {
                let o = (address - *base) as usize;
                return Ok(&mut data[o..o + len]);
            }
        }
        Err(probe_rs::Error::Other(format!(
            "no fake memory at {address:#x}"
        )))
    }
}

impl probe_rs::MemoryInterface for FakeTarget {
    fn supports_native_64bit_access(&mut self) -> bool {
        false
    }
    fn read_64(&mut self, a: u64, d: &mut [u64]) -> Result<(), probe_rs::Error> {
        for (i, w) in d.iter_mut().enumerate() {
            *w = u64::from_le_bytes(self.slot(a + 8 * i as u64, 8)?.try_into().expect("8"));
        }
        Ok(())
    }
    fn read_32(&mut self, a: u64, d: &mut [u32]) -> Result<(), probe_rs::Error> {
        for (i, w) in d.iter_mut().enumerate() {
            *w = u32::from_le_bytes(self.slot(a + 4 * i as u64, 4)?.try_into().expect("4"));
        }
        Ok(())
    }
    fn read_16(&mut self, a: u64, d: &mut [u16]) -> Result<(), probe_rs::Error> {
        for (i, w) in d.iter_mut().enumerate() {
            *w = u16::from_le_bytes(self.slot(a + 2 * i as u64, 2)?.try_into().expect("2"));
        }
        Ok(())
    }
    fn read_8(&mut self, a: u64, d: &mut [u8]) -> Result<(), probe_rs::Error> {
        let len = d.len();
        d.copy_from_slice(self.slot(a, len)?);
        Ok(())
    }
    fn write_64(&mut self, a: u64, d: &[u64]) -> Result<(), probe_rs::Error> {
        for (i, w) in d.iter().enumerate() {
            self.slot(a + 8 * i as u64, 8)?
                .copy_from_slice(&w.to_le_bytes());
        }
        Ok(())
    }
    fn write_32(&mut self, a: u64, d: &[u32]) -> Result<(), probe_rs::Error> {
        for (i, w) in d.iter().enumerate() {
            self.slot(a + 4 * i as u64, 4)?
                .copy_from_slice(&w.to_le_bytes());
        }
        Ok(())
    }
    fn write_16(&mut self, a: u64, d: &[u16]) -> Result<(), probe_rs::Error> {
        for (i, w) in d.iter().enumerate() {
            self.slot(a + 2 * i as u64, 2)?
                .copy_from_slice(&w.to_le_bytes());
        }
        Ok(())
    }
    fn write_8(&mut self, a: u64, d: &[u8]) -> Result<(), probe_rs::Error> {
        self.slot(a, d.len())?.copy_from_slice(d);
        Ok(())
    }
    fn supports_8bit_transfers(&self) -> Result<bool, probe_rs::Error> {
        Ok(true)
    }
    fn flush(&mut self) -> Result<(), probe_rs::Error> {
        Ok(())
    }
}

#[test]
fn the_probe_rs_path_reads_a_real_control_block_from_target_memory() {
    let snapshot = std::fs::read(repo("tests/fixtures/board/rtt_snapshot.bin")).expect("fixture");
    let fake = FakeTarget::from_snapshot(&snapshot);
    let (cb_at, ring_at) = (fake.regions[0].0, fake.regions[3].0);
    // found by scanning the regions the way `--scan` does (the control block is not at a symbol)
    let memory = ProbeMemory {
        memory: fake,
        name: "fake probe".into(),
    };
    let scan = vec![(ring_at, 8192), (cb_at, 72)];
    let mut source = TargetSource::new(Box::new(memory), Locate::Scan(scan));
    let mut recorder = Recorder::new(None).expect("recorder");
    let n = recorder.poll(&mut source).expect("drains the ring");
    assert!(n > 0 && source.attached());
    let s = recorder.stats();
    assert_eq!(s.capture.runs, 2, "{s:?}");
    assert_eq!(
        (s.wire.lost_frames, s.wire.lost_bytes, s.wire.crc_errors),
        (0, 0, 0)
    );
    let target = recorder.live().target().expect("target info").clone();
    assert_eq!(
        target.core, "cortex-m55",
        "the snapshot was written by an earlier firmware"
    );
    assert_eq!(target.program_id, program_fingerprint(tiny().bytes()));
    // RdOff advanced to WrOff: a second poll finds nothing new
    assert_eq!(recorder.poll(&mut source).expect("polls"), 0);
    let _ = Duration::ZERO;
}

#[test]
fn whole_etdumps_sent_in_chunks_with_their_debug_data_read_back_as_sent() {
    use etscope_core::formats::debug_buffer::captured_tensors;
    use etscope_core::formats::etdump::ETDump;
    use etscope_profiler::wire::{encode, encode_record, TargetInfo};
    let dir = repo("assets/tiny_conv_relu_linear");
    let program =
        Program::parse(std::fs::read(dir.join("model_fp32.pte")).expect("pte")).expect("parses");
    let etdump_bytes = std::fs::read(dir.join("etdump.etdp")).expect("etdump");
    let debug = std::fs::read(dir.join("debug_buffer.bin")).expect("debug buffer");
    // what a firmware using ExecuTorch's ETDumpGen with etscope's DataSink sends
    let mut records = vec![Record::TargetInfo(TargetInfo {
        tick_hz: 1_000_000_000,
        program_id: program_fingerprint(program.bytes()),
        runs: 0,
        core: "host".into(),
        method: "forward".into(),
    })];
    for (k, c) in debug.chunks(1024).enumerate() {
        records.push(Record::DebugData {
            offset: (k * 1024) as u32,
            data: c.to_vec(),
        });
    }
    for (k, c) in etdump_bytes.chunks(1024).enumerate() {
        records.push(Record::EtdumpChunk {
            dump: 0,
            total: etdump_bytes.len() as u32,
            offset: (k * 1024) as u32,
            data: c.to_vec(),
        });
    }
    let stream: Vec<u8> = records
        .iter()
        .enumerate()
        .flat_map(|(seq, r)| {
            let (kind, payload) = encode_record(r);
            encode(kind, seq as u32, &payload)
        })
        .collect();
    let got = rebuild(&stream, &program, "model_fp32.pte").expect("rebuilds");
    let original = ETDump::parse(&etdump_bytes).expect("parses");
    assert_eq!(got.counts.etdumps, 1);
    // the runs as sent (a 1 GHz clock: nanoseconds are its ticks), each declaring that clock
    let target = etscope_profiler::declared_clock::declared_in(&got.etdump).expect("declared");
    assert_eq!(
        (target.tick_hz, target.core.as_str()),
        (1_000_000_000, "host")
    );
    assert_eq!(
        got.etdump.runs,
        original
            .runs
            .iter()
            .filter(|r| r.name != "Default")
            .cloned()
            .map(|mut r| {
                etscope_profiler::declared_clock::declare(&mut r, &target);
                r
            })
            .collect::<Vec<_>>()
    );
    let sent = captured_tensors(&original, &debug).expect("resolves");
    let received = captured_tensors(&got.etdump, &got.debug_buffer).expect("resolves");
    assert_eq!(sent.len(), received.len());
    assert!(!sent.is_empty());
    for (a, b) in sent.iter().zip(&received) {
        assert_eq!(a.tensor, b.tensor);
    }
}

/// The recorder keeps a bounded live window: a stream of more runs than `LIVE_WINDOW_RUNS`
/// leaves that many runs in its live view, every run still counted, and every byte
/// on disk.
#[test]
fn the_recorders_live_view_keeps_a_bounded_window_of_runs() {
    use etscope_profiler::session::LIVE_WINDOW_RUNS;
    use etscope_profiler::wire::{encode, encode_record};
    let dir = std::env::temp_dir().join(format!("etscope-live-window-{}", std::process::id()));
    let raw = dir.join("many.etsw");
    let mut rec = Recorder::new(Some(&raw)).expect("recorder");
    let runs = LIVE_WINDOW_RUNS + 40;
    let mut seq = 0u32;
    let mut push = |rec: &mut Recorder, r: Record| {
        let (kind, payload) = encode_record(&r);
        rec.ingest(&encode(kind, seq, &payload)).expect("ingests");
        seq += 1;
    };
    for run in 0..runs as u32 {
        let t = u64::from(run) * 1000;
        push(&mut rec, Record::RunStart { run, ticks: t });
        push(
            &mut rec,
            Record::Op {
                instruction: 0,
                chain: 0,
                start: t + 1,
                end: t + 10,
            },
        );
        push(&mut rec, Record::RunEnd { run, ticks: t + 20 });
    }
    let stats = rec.stats();
    assert_eq!(stats.capture.runs, runs as u64, "every run counted");
    assert_eq!(
        rec.live().runs().count(),
        LIVE_WINDOW_RUNS,
        "the live view keeps the newest {LIVE_WINDOW_RUNS} runs"
    );
    assert_eq!(
        std::fs::metadata(&raw).expect("raw").len(),
        stats.wire.bytes,
        "every byte on disk"
    );
    let _ = std::fs::remove_dir_all(dir);
}
