//! Assembles decoded wire frames into inferences and turns them into a standard ETDump (plus a
//! debug buffer for captured outputs), so everything downstream — profile, tensors, diff, the
//! Inspector — reads one format. Whole ETDumps sent in chunks are reassembled and parsed here too.
//!
//! The live view keeps a bounded window of recent runs ([`Assembler::with_window`]); a saved
//! capture is rebuilt from the raw stream on disk with no window.

use std::collections::{BTreeMap, VecDeque};

use etscope_core::dtype::ScalarType;
use etscope_core::formats::etdump::{
    DebugEvent, DebugValue, ETDump, Event, ProfileEvent, RunData, TensorRef,
};
use etscope_core::formats::pte::InstructionCall;

use crate::wire::{Record, TargetInfo, TensorRecord, WireFrame};

/// Alignment of tensors in the debug buffer (as ExecuTorch's ETDumpGen aligns them).
const DEBUG_ALIGN: usize = 64;
/// Log lines kept.
const MAX_LOGS: usize = 200;

/// One inference as the target reported it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceRun {
    pub index: u32,
    pub start: u64,
    pub end: u64,
    /// (instruction, chain, start, end) per kernel call.
    pub ops: Vec<(u32, u32, u64, u64)>,
    pub tensors: Vec<TensorRecord>,
}

/// Counts the assembler keeps beyond the wire decoder's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CaptureCounts {
    /// Complete runs received.
    pub runs: u64,
    /// Runs that started but never ended (a reset or lost frames in between).
    pub incomplete_runs: u64,
    /// Frames and bytes the target itself dropped (drop mode, full buffer).
    pub device_dropped_frames: u64,
    pub device_dropped_bytes: u64,
    /// Whole ETDumps received in chunks.
    pub etdumps: u64,
    /// Chunked ETDumps that did not parse or lost chunks.
    pub bad_etdumps: u64,
}

struct PartialDump {
    total: usize,
    data: Vec<u8>,
    received: usize,
}

/// Frames in, runs out.
pub struct Assembler {
    target: Option<TargetInfo>,
    current: Option<DeviceRun>,
    runs: VecDeque<DeviceRun>,
    window: Option<usize>,
    dumps: BTreeMap<u32, PartialDump>,
    /// Runs from whole ETDumps the target sent.
    etdump_runs: VecDeque<RunData>,
    /// The debug buffer those ETDumps' tensors point into (streamed by the target's DataSink).
    etdump_debug: Vec<u8>,
    logs: VecDeque<String>,
    counts: CaptureCounts,
}

impl Default for Assembler {
    fn default() -> Self {
        Self::new()
    }
}

impl Assembler {
    /// Keeps every run (for saving a capture).
    pub fn new() -> Self {
        Assembler {
            target: None,
            current: None,
            runs: VecDeque::new(),
            window: None,
            dumps: BTreeMap::new(),
            etdump_runs: VecDeque::new(),
            etdump_debug: Vec::new(),
            logs: VecDeque::new(),
            counts: CaptureCounts::default(),
        }
    }

    /// Keeps only the latest `runs` runs in memory (the live view); counts cover everything.
    pub fn with_window(runs: usize) -> Self {
        Assembler {
            window: Some(runs.max(1)),
            ..Self::new()
        }
    }

    pub fn target(&self) -> Option<&TargetInfo> {
        self.target.as_ref()
    }

    pub fn counts(&self) -> CaptureCounts {
        self.counts
    }

    pub fn runs(&self) -> impl Iterator<Item = &DeviceRun> {
        self.runs.iter()
    }

    pub fn logs(&self) -> impl Iterator<Item = &str> {
        self.logs.iter().map(String::as_str)
    }

    /// Whether the announced number of runs has arrived.
    pub fn finished(&self) -> bool {
        self.target
            .as_ref()
            .is_some_and(|t| t.runs > 0 && self.counts.runs >= u64::from(t.runs))
    }

    fn trim(&mut self) {
        if let Some(w) = self.window {
            while self.runs.len() > w {
                self.runs.pop_front();
            }
            while self.etdump_runs.len() > w {
                self.etdump_runs.pop_front();
            }
        }
    }

    fn log(&mut self, line: String) {
        if self.logs.len() >= MAX_LOGS {
            self.logs.pop_front();
        }
        self.logs.push_back(line);
    }

    /// Takes one decoded frame.
    pub fn add(&mut self, frame: WireFrame) {
        match frame.record {
            Record::TargetInfo(t) => {
                if self.current.take().is_some() {
                    self.counts.incomplete_runs += 1;
                }
                if self.target.is_some() {
                    self.log(format!("target restarted (frame {})", frame.seq));
                }
                self.target = Some(t);
            }
            Record::RunStart { run, ticks } => {
                if self.current.is_some() {
                    self.counts.incomplete_runs += 1;
                }
                self.current = Some(DeviceRun {
                    index: run,
                    start: ticks,
                    ..DeviceRun::default()
                });
            }
            Record::Op {
                instruction,
                chain,
                start,
                end,
            } => {
                if let Some(r) = &mut self.current {
                    r.ops.push((instruction, chain, start, end));
                }
            }
            Record::Tensor(t) => {
                if let Some(r) = &mut self.current {
                    r.tensors.push(t);
                }
            }
            Record::RunEnd { run, ticks } => match self.current.take() {
                Some(mut r) if r.index == run => {
                    r.end = ticks;
                    self.runs.push_back(r);
                    self.counts.runs += 1;
                    self.trim();
                }
                Some(_) | None => self.counts.incomplete_runs += 1,
            },
            Record::Dropped { frames, bytes } => {
                self.counts.device_dropped_frames += u64::from(frames);
                self.counts.device_dropped_bytes += u64::from(bytes);
            }
            Record::Log(line) => self.log(line),
            Record::DebugData { offset, data } => self.add_debug_data(offset as usize, &data),
            Record::EtdumpChunk {
                dump,
                total,
                offset,
                data,
            } => self.add_chunk(dump, total as usize, offset as usize, &data),
        }
    }

    /// Debug data is kept up to [`crate::wire::MAX_PAYLOAD`] × 4 bytes; beyond that it is counted
    /// as a bad ETDump's (its tensors cannot resolve).
    fn add_debug_data(&mut self, offset: usize, data: &[u8]) {
        let Some(end) = offset
            .checked_add(data.len())
            .filter(|&e| e <= crate::wire::MAX_PAYLOAD * 4)
        else {
            self.counts.bad_etdumps += 1;
            return;
        };
        if self.etdump_debug.len() < end {
            self.etdump_debug.resize(end, 0);
        }
        self.etdump_debug[offset..end].copy_from_slice(data);
    }

    fn add_chunk(&mut self, dump: u32, total: usize, offset: usize, data: &[u8]) {
        if total > crate::wire::MAX_PAYLOAD * 4 {
            self.counts.bad_etdumps += 1;
            return;
        }
        if offset == 0 {
            // a new dump with this id replaces any unfinished one (its chunks were lost)
            if self.dumps.remove(&dump).is_some() {
                self.counts.bad_etdumps += 1;
            }
        }
        let part = self.dumps.entry(dump).or_insert_with(|| PartialDump {
            total,
            data: vec![0; total],
            received: 0,
        });
        let fits = part.total == total
            && offset
                .checked_add(data.len())
                .is_some_and(|end| end <= total);
        if !fits || offset != part.received {
            self.dumps.remove(&dump);
            self.counts.bad_etdumps += 1;
            return;
        }
        part.data[offset..offset + data.len()].copy_from_slice(data);
        part.received += data.len();
        if part.received == part.total {
            let Some(done) = self.dumps.remove(&dump) else {
                return;
            };
            match ETDump::parse(&done.data) {
                Ok(e) => {
                    self.counts.etdumps += 1;
                    for r in e.runs.into_iter().filter(|r| r.name != "Default") {
                        self.counts.runs += 1;
                        self.etdump_runs.push_back(r);
                    }
                    self.trim();
                }
                Err(err) => {
                    self.counts.bad_etdumps += 1;
                    self.log(format!(
                        "ETDump {dump} from the target does not parse: {err}"
                    ));
                }
            }
        }
    }

    /// The runs held, as a standard ETDump and its debug buffer (empty when no tensors came).
    /// Operator events are named `native_call_<op>` from what each instruction calls
    /// ([`etscope_core::formats::pte::Program::instruction_calls`]), as ExecuTorch names them.
    /// Times are in nanoseconds when the target declared its tick rate (what ExecuTorch's
    /// Inspector reads by default, and what etscope shows without a rate of its own), and every
    /// run says so ([`crate::declared_clock`]); in the target's ticks when it did not.
    pub fn to_etdump(&self, calls: &[InstructionCall]) -> (ETDump, Vec<u8>) {
        let to_ns = ticks_to_ns(self.target().map(|t| t.tick_hz));
        let names: Vec<String> = calls
            .iter()
            .map(|call| match call {
                InstructionCall::Kernel(q) => {
                    format!("native_call_{}", q.rsplit("::").next().unwrap_or(q))
                }
                InstructionCall::Delegate(_) => "DELEGATE_CALL".into(),
                InstructionCall::Other(_) => "OPERATOR_CALL".into(),
            })
            .collect();
        // the ETDumps' own debug data first (their offsets point there), captured outputs after
        let mut debug = self.etdump_debug.clone();
        let mut runs: Vec<RunData> = self.etdump_runs.iter().cloned().collect();
        for r in &mut runs {
            for e in &mut r.events {
                if let Event::Profile(p) = e {
                    p.start_time = to_ns(p.start_time);
                    p.end_time = to_ns(p.end_time);
                }
            }
        }
        for r in &self.runs {
            let mut events = vec![Event::Profile(ProfileEvent {
                name: "Method::execute".into(),
                chain_index: -1,
                instruction_id: -1,
                delegate_debug_id_int: -1,
                delegate_debug_id_str: None,
                delegate_debug_metadata: Vec::new(),
                start_time: to_ns(r.start),
                end_time: to_ns(r.end),
            })];
            for &(instr, chain, start, end) in &r.ops {
                events.push(Event::Profile(ProfileEvent {
                    name: names
                        .get(instr as usize)
                        .cloned()
                        .unwrap_or_else(|| "OPERATOR_CALL".into()),
                    chain_index: chain as i32,
                    instruction_id: instr as i32,
                    delegate_debug_id_int: -1,
                    delegate_debug_id_str: None,
                    delegate_debug_metadata: Vec::new(),
                    start_time: to_ns(start),
                    end_time: to_ns(end),
                }));
            }
            for t in &r.tensors {
                while !debug.len().is_multiple_of(DEBUG_ALIGN) {
                    debug.push(0);
                }
                let offset = debug.len() as i64;
                debug.extend_from_slice(&t.data);
                events.push(Event::Debug(DebugEvent {
                    chain_index: u64::from(t.chain),
                    instruction_id: t.instruction as i32,
                    value: DebugValue::Tensor(tensor_ref(t, offset)),
                    is_program_output: false,
                    delegate_debug_id_int: -1,
                    delegate_debug_id_str: None,
                    name: None,
                }));
            }
            runs.push(RunData {
                name: "Execute".into(),
                bundled_input_index: -1,
                allocators: Vec::new(),
                events,
            });
        }
        // nanoseconds, and whose: said inside the file, so a copy without its raw stream keeps it
        if let Some(t) = self.target().filter(|t| t.tick_hz > 0) {
            for r in &mut runs {
                crate::declared_clock::declare(r, t);
            }
        }
        (ETDump { version: 0, runs }, debug)
    }
}

/// Target ticks → nanoseconds at `tick_hz` (unchanged when the rate is unknown or 0); exact in
/// 128-bit arithmetic, rounded to the nearest nanosecond.
pub fn ticks_to_ns(tick_hz: Option<u32>) -> impl Fn(u64) -> u64 {
    move |ticks| match tick_hz {
        Some(hz) if hz > 0 => {
            let hz = u128::from(hz);
            let ns = (u128::from(ticks) * 1_000_000_000 + hz / 2) / hz;
            u64::try_from(ns).unwrap_or(u64::MAX)
        }
        _ => ticks,
    }
}

/// Sizes and strides of a captured tensor (strides from its dim order, as ExecuTorch reports a
/// tensor stored in that order).
fn tensor_ref(t: &TensorRecord, offset: i64) -> TensorRef {
    let rank = t.sizes.len();
    let mut strides = vec![0i64; rank];
    let order_ok = t.dim_order.len() == rank && {
        let mut seen = vec![false; rank];
        t.dim_order
            .iter()
            .all(|&d| (d as usize) < rank && !std::mem::replace(&mut seen[d as usize], true))
    };
    let order: Vec<usize> = if order_ok {
        t.dim_order.iter().map(|&d| d as usize).collect()
    } else {
        (0..rank).collect()
    };
    let mut s = 1i64;
    for &d in order.iter().rev() {
        strides[d] = s;
        s = s.saturating_mul(i64::from(t.sizes[d]));
    }
    TensorRef {
        scalar_type: ScalarType::from_code(t.scalar_type as i8),
        sizes: t.sizes.iter().map(|&s| i64::from(s)).collect(),
        strides,
        offset,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::WireFrame;

    fn run(a: &mut Assembler, index: u32, seq: &mut u32) {
        let mut push = |record| {
            a.add(WireFrame { seq: *seq, record });
            *seq += 1;
        };
        push(Record::RunStart {
            run: index,
            ticks: 10,
        });
        push(Record::Op {
            instruction: 0,
            chain: 0,
            start: 11,
            end: 20,
        });
        push(Record::RunEnd {
            run: index,
            ticks: 30,
        });
    }

    #[test]
    fn the_live_window_keeps_only_recent_runs_but_counts_all() {
        let mut a = Assembler::with_window(3);
        let mut seq = 0;
        for i in 0..10 {
            run(&mut a, i, &mut seq);
        }
        assert_eq!(a.counts().runs, 10);
        let kept: Vec<u32> = a.runs().map(|r| r.index).collect();
        assert_eq!(kept, vec![7, 8, 9]);
    }

    #[test]
    fn a_run_without_its_end_is_incomplete() {
        let mut a = Assembler::new();
        a.add(WireFrame {
            seq: 0,
            record: Record::RunStart { run: 0, ticks: 1 },
        });
        a.add(WireFrame {
            seq: 1,
            record: Record::RunStart { run: 1, ticks: 2 },
        });
        a.add(WireFrame {
            seq: 2,
            record: Record::RunEnd { run: 1, ticks: 3 },
        });
        assert_eq!(a.counts().runs, 1);
        assert_eq!(a.counts().incomplete_runs, 1);
    }
}
