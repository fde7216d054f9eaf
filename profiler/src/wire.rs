//! etscope's wire format, version 1: the frames a target writes to its RTT up-channel
//! (`board/lib/etscope_trace.c` writes them; `docs/wire-format.md` specifies them).
//!
//! ```text
//! "ETSF" | u8 version | u8 type | u16 flags | u32 seq | u32 len | payload[len] | u32 crc32
//! ```
//! Little-endian; the CRC-32 (IEEE) covers version through payload. [`WireDecoder`] takes bytes
//! in any chunking, resynchronises on the magic after garbage or a bad CRC, and counts what it
//! skipped and which sequence numbers never arrived.

use thiserror::Error;

/// Frame magic.
pub const MAGIC: [u8; 4] = *b"ETSF";
/// The wire version this decoder reads.
pub const WIRE_VERSION: u8 = 1;
/// Header bytes before the payload.
pub const HEADER_BYTES: usize = 16;
/// Largest payload accepted; a longer length means the header is not a header.
pub const MAX_PAYLOAD: usize = 16 << 20;

/// Frame types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum FrameType {
    TargetInfo = 1,
    EtdumpChunk = 2,
    RunStart = 3,
    OpEvent = 4,
    RunEnd = 5,
    Tensor = 6,
    Dropped = 7,
    Log = 8,
    DebugData = 9,
}

impl FrameType {
    fn of(code: u8) -> Option<FrameType> {
        use FrameType::*;
        Some(match code {
            1 => TargetInfo,
            2 => EtdumpChunk,
            3 => RunStart,
            4 => OpEvent,
            5 => RunEnd,
            6 => Tensor,
            7 => Dropped,
            8 => Log,
            9 => DebugData,
            _ => return None,
        })
    }
}

/// The target's description (sent first, and again after a reset).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetInfo {
    pub tick_hz: u32,
    /// FNV-1a 64 of the `.pte` the target runs (0 = not given).
    pub program_id: u64,
    /// Runs the target announced (0 = open-ended).
    pub runs: u32,
    pub core: String,
    pub method: String,
}

/// An instruction's output tensor as the target stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorRecord {
    pub instruction: u32,
    pub chain: u32,
    pub scalar_type: u8,
    pub sizes: Vec<u32>,
    pub dim_order: Vec<u8>,
    pub data: Vec<u8>,
}

/// A decoded frame's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    TargetInfo(TargetInfo),
    EtdumpChunk {
        dump: u32,
        total: u32,
        offset: u32,
        data: Vec<u8>,
    },
    RunStart {
        run: u32,
        ticks: u64,
    },
    Op {
        instruction: u32,
        chain: u32,
        start: u64,
        end: u64,
    },
    RunEnd {
        run: u32,
        ticks: u64,
    },
    Tensor(TensorRecord),
    /// The target dropped frames for want of buffer space (drop mode).
    Dropped {
        frames: u32,
        bytes: u32,
    },
    Log(String),
    /// Debug-buffer bytes (at `offset`) for the ETDumps the target sends whole.
    DebugData {
        offset: u32,
        data: Vec<u8>,
    },
}

/// One frame with its sequence number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireFrame {
    pub seq: u32,
    pub record: Record,
}

/// A frame whose CRC matched but whose payload does not fit its type.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("frame {seq} (type {kind}): {detail}")]
pub struct PayloadError {
    pub seq: u32,
    pub kind: u8,
    pub detail: String,
}

/// What the decoder has seen, for the live view and the capture's summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WireStats {
    /// Bytes pushed in.
    pub bytes: u64,
    /// Frames decoded.
    pub frames: u64,
    /// Sequence numbers skipped between decoded frames (frames lost in transit).
    pub lost_frames: u64,
    /// Bytes skipped while resynchronising (garbage, torn or corrupt frames).
    pub lost_bytes: u64,
    /// Frames whose CRC did not match.
    pub crc_errors: u64,
    /// Frames of a type or version this decoder does not know (skipped whole).
    pub unknown_frames: u64,
    /// Times the sequence restarted at 0 (a target reset).
    pub restarts: u64,
    /// Frames that passed the CRC but whose payload did not fit their type (the first
    /// [`MAX_KEPT_PAYLOAD_ERRORS`] are kept with their detail).
    pub bad_payloads: u64,
}

/// Payload errors a decoder keeps with their detail; the rest are only counted, so a target
/// that sends nothing but malformed frames for hours cannot grow the decoder's memory.
pub const MAX_KEPT_PAYLOAD_ERRORS: usize = 64;

/// CRC-32 (IEEE 802.3, reflected, as zlib computes it).
pub fn crc32(data: &[u8]) -> u32 {
    crc32_update(0xffff_ffff, data) ^ 0xffff_ffff
}

fn crc32_update(mut crc: u32, data: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = [0u32; 256];
        for (i, e) in t.iter_mut().enumerate() {
            let mut c = i as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xedb8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            *e = c;
        }
        t
    });
    for &b in data {
        crc = table[((crc ^ u32::from(b)) & 0xff) as usize] ^ (crc >> 8);
    }
    crc
}

/// Encodes one frame (what the C library writes); used by tests and the replay tools.
pub fn encode(kind: FrameType, seq: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(HEADER_BYTES + payload.len() + 4);
    f.extend_from_slice(&MAGIC);
    f.push(WIRE_VERSION);
    f.push(kind as u8);
    f.extend_from_slice(&0u16.to_le_bytes());
    f.extend_from_slice(&seq.to_le_bytes());
    f.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    f.extend_from_slice(payload);
    let crc = crc32(&f[4..]);
    f.extend_from_slice(&crc.to_le_bytes());
    f
}

/// The payload of `record` as the C library lays it out.
pub fn encode_record(record: &Record) -> (FrameType, Vec<u8>) {
    let mut p = Vec::new();
    let kind = match record {
        Record::TargetInfo(t) => {
            p.extend_from_slice(&t.tick_hz.to_le_bytes());
            p.extend_from_slice(&t.program_id.to_le_bytes());
            p.extend_from_slice(&t.runs.to_le_bytes());
            for s in [&t.core, &t.method] {
                let b = &s.as_bytes()[..s.len().min(64)];
                p.push(b.len() as u8);
                p.extend_from_slice(b);
            }
            FrameType::TargetInfo
        }
        Record::EtdumpChunk {
            dump,
            total,
            offset,
            data,
        } => {
            for v in [dump, total, offset] {
                p.extend_from_slice(&v.to_le_bytes());
            }
            p.extend_from_slice(data);
            FrameType::EtdumpChunk
        }
        Record::RunStart { run, ticks } | Record::RunEnd { run, ticks } => {
            p.extend_from_slice(&run.to_le_bytes());
            p.extend_from_slice(&ticks.to_le_bytes());
            if matches!(record, Record::RunStart { .. }) {
                FrameType::RunStart
            } else {
                FrameType::RunEnd
            }
        }
        Record::Op {
            instruction,
            chain,
            start,
            end,
        } => {
            p.extend_from_slice(&instruction.to_le_bytes());
            p.extend_from_slice(&chain.to_le_bytes());
            p.extend_from_slice(&start.to_le_bytes());
            p.extend_from_slice(&end.to_le_bytes());
            FrameType::OpEvent
        }
        Record::Tensor(t) => {
            p.extend_from_slice(&t.instruction.to_le_bytes());
            p.extend_from_slice(&t.chain.to_le_bytes());
            p.extend_from_slice(&[t.scalar_type, t.sizes.len() as u8, 0, 0]);
            for s in &t.sizes {
                p.extend_from_slice(&s.to_le_bytes());
            }
            p.extend_from_slice(&t.dim_order);
            while p.len() % 4 != 0 {
                p.push(0);
            }
            p.extend_from_slice(&t.data);
            FrameType::Tensor
        }
        Record::Dropped { frames, bytes } => {
            p.extend_from_slice(&frames.to_le_bytes());
            p.extend_from_slice(&bytes.to_le_bytes());
            FrameType::Dropped
        }
        Record::Log(s) => {
            p.extend_from_slice(s.as_bytes());
            FrameType::Log
        }
        Record::DebugData { offset, data } => {
            p.extend_from_slice(&offset.to_le_bytes());
            p.extend_from_slice(data);
            FrameType::DebugData
        }
    };
    (kind, p)
}

struct Reader<'a> {
    p: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let s = self.p.get(self.at..end)?;
        self.at = end;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from(self.u32()?) | (u64::from(self.u32()?) << 32))
    }
    fn string(&mut self) -> Option<String> {
        let n = usize::from(self.u8()?);
        self.take(n)
            .map(|b| String::from_utf8_lossy(b).into_owned())
    }
    fn rest(&mut self) -> &'a [u8] {
        let s = &self.p[self.at.min(self.p.len())..];
        self.at = self.p.len();
        s
    }
}

/// Decodes a payload of a known type.
pub fn decode_payload(kind: FrameType, p: &[u8]) -> Option<Record> {
    let mut r = Reader { p, at: 0 };
    Some(match kind {
        FrameType::TargetInfo => Record::TargetInfo(TargetInfo {
            tick_hz: r.u32()?,
            program_id: r.u64()?,
            runs: r.u32()?,
            core: r.string()?,
            method: r.string()?,
        }),
        FrameType::EtdumpChunk => Record::EtdumpChunk {
            dump: r.u32()?,
            total: r.u32()?,
            offset: r.u32()?,
            data: r.rest().to_vec(),
        },
        FrameType::RunStart => Record::RunStart {
            run: r.u32()?,
            ticks: r.u64()?,
        },
        FrameType::RunEnd => Record::RunEnd {
            run: r.u32()?,
            ticks: r.u64()?,
        },
        FrameType::OpEvent => Record::Op {
            instruction: r.u32()?,
            chain: r.u32()?,
            start: r.u64()?,
            end: r.u64()?,
        },
        FrameType::Tensor => {
            let instruction = r.u32()?;
            let chain = r.u32()?;
            let scalar_type = r.u8()?;
            let rank = usize::from(r.u8()?);
            if rank > 8 {
                return None;
            }
            r.take(2)?;
            let sizes = (0..rank).map(|_| r.u32()).collect::<Option<Vec<_>>>()?;
            let dim_order = r.take(rank)?.to_vec();
            r.take((4 - (12 + 5 * rank) % 4) % 4)?;
            Record::Tensor(TensorRecord {
                instruction,
                chain,
                scalar_type,
                sizes,
                dim_order,
                data: r.rest().to_vec(),
            })
        }
        FrameType::Dropped => Record::Dropped {
            frames: r.u32()?,
            bytes: r.u32()?,
        },
        FrameType::Log => Record::Log(String::from_utf8_lossy(r.rest()).into_owned()),
        FrameType::DebugData => Record::DebugData {
            offset: r.u32()?,
            data: r.rest().to_vec(),
        },
    })
}

/// Incremental, resynchronising frame decoder.
#[derive(Debug, Default)]
pub struct WireDecoder {
    pending: Vec<u8>,
    start: usize,
    next_seq: Option<u32>,
    stats: WireStats,
    errors: Vec<PayloadError>,
}

impl WireDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends bytes read from the target.
    pub fn push(&mut self, bytes: &[u8]) {
        self.stats.bytes += bytes.len() as u64;
        if self.start > 0 && self.start >= self.pending.len() / 2 {
            self.pending.drain(..self.start);
            self.start = 0;
        }
        self.pending.extend_from_slice(bytes);
    }

    pub fn stats(&self) -> WireStats {
        self.stats
    }

    /// Bytes held waiting for the rest of a frame.
    pub fn buffered(&self) -> usize {
        self.pending.len() - self.start
    }

    /// The first frames that passed the CRC but did not decode (at most
    /// [`MAX_KEPT_PAYLOAD_ERRORS`]; [`WireStats::bad_payloads`] counts them all).
    pub fn take_errors(&mut self) -> Vec<PayloadError> {
        std::mem::take(&mut self.errors)
    }

    /// Call at the end of a stream: bytes still held (a torn last frame) count as lost.
    pub fn finish(&mut self) {
        let left = self.buffered();
        self.skip(left);
    }

    fn skip(&mut self, n: usize) {
        self.start += n;
        self.stats.lost_bytes += n as u64;
    }

    /// The next complete frame, or `None` until more bytes arrive.
    pub fn next_frame(&mut self) -> Option<WireFrame> {
        loop {
            let buf = &self.pending[self.start..];
            // find the magic
            let Some(at) = buf.windows(4).position(|w| w == MAGIC) else {
                // keep up to 3 bytes that may begin a magic
                let keep = buf.len().min(3);
                let tail_ok = (1..=keep)
                    .rev()
                    .find(|&k| MAGIC.starts_with(&buf[buf.len() - k..]))
                    .unwrap_or(0);
                let n = buf.len() - tail_ok;
                self.skip(n);
                return None;
            };
            if at > 0 {
                self.skip(at);
                continue;
            }
            if buf.len() < HEADER_BYTES {
                return None;
            }
            let version = buf[4];
            let kind = buf[5];
            let seq = u32::from_le_bytes([buf[8], buf[9], buf[10], buf[11]]);
            let len = u32::from_le_bytes([buf[12], buf[13], buf[14], buf[15]]) as usize;
            if len > MAX_PAYLOAD {
                self.skip(1);
                continue;
            }
            let total = HEADER_BYTES + len + 4;
            if buf.len() < total {
                return None;
            }
            let crc = u32::from_le_bytes([
                buf[total - 4],
                buf[total - 3],
                buf[total - 2],
                buf[total - 1],
            ]);
            if crc32(&buf[4..total - 4]) != crc {
                self.stats.crc_errors += 1;
                self.skip(1);
                continue;
            }
            let payload = buf[HEADER_BYTES..total - 4].to_vec();
            self.start += total;
            self.account_seq(seq);
            let kind_known = FrameType::of(kind).filter(|_| version == WIRE_VERSION);
            let Some(kind) = kind_known else {
                self.stats.unknown_frames += 1;
                continue;
            };
            match decode_payload(kind, &payload) {
                Some(record) => {
                    self.stats.frames += 1;
                    return Some(WireFrame { seq, record });
                }
                None => {
                    self.stats.bad_payloads += 1;
                    if self.errors.len() < MAX_KEPT_PAYLOAD_ERRORS {
                        self.errors.push(PayloadError {
                            seq,
                            kind: kind as u8,
                            detail: format!("{} payload bytes do not fit the type", payload.len()),
                        });
                    }
                }
            }
        }
    }

    fn account_seq(&mut self, seq: u32) {
        match self.next_seq {
            Some(expected) if seq == expected => {}
            Some(_) if seq == 0 => self.stats.restarts += 1,
            Some(expected) if seq > expected => self.stats.lost_frames += u64::from(seq - expected),
            Some(_) => self.stats.restarts += 1,
            None => {}
        }
        self.next_seq = Some(seq.wrapping_add(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(n: u32) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| {
                let (k, p) = encode_record(&Record::Op {
                    instruction: i,
                    chain: 0,
                    start: u64::from(i) * 10,
                    end: u64::from(i) * 10 + 7,
                });
                encode(k, i, &p)
            })
            .collect()
    }

    fn decode_all(bytes: &[u8], chunk: usize) -> (Vec<WireFrame>, WireStats) {
        let mut d = WireDecoder::new();
        let mut out = Vec::new();
        for c in bytes.chunks(chunk) {
            d.push(c);
            while let Some(f) = d.next_frame() {
                out.push(f);
            }
        }
        (out, d.stats())
    }

    #[test]
    fn malformed_payloads_are_counted_and_only_the_first_kept() {
        let mut d = WireDecoder::new();
        for seq in 0..10_000u32 {
            // a target-info frame of 3 bytes: the CRC is right, the payload cannot be one
            d.push(&encode(FrameType::TargetInfo, seq, &[1, 2, 3]));
            while d.next_frame().is_some() {}
        }
        assert_eq!(d.stats().bad_payloads, 10_000);
        let kept = d.take_errors();
        assert_eq!(kept.len(), MAX_KEPT_PAYLOAD_ERRORS);
        assert_eq!(kept[0].seq, 0);
    }

    #[test]
    fn crc_matches_zlib() {
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    }

    #[test]
    fn any_chunking_decodes_every_frame() {
        let stream: Vec<u8> = frames(50).concat();
        for chunk in [1, 3, 17, 4096] {
            let (f, s) = decode_all(&stream, chunk);
            assert_eq!(f.len(), 50, "chunk {chunk}");
            assert_eq!((s.lost_frames, s.lost_bytes, s.crc_errors), (0, 0, 0));
        }
    }

    #[test]
    fn garbage_between_frames_is_skipped_and_counted() {
        let fs = frames(4);
        let garbage = b"ETS\x00noise ETSF\x01\x04garbage".to_vec();
        let stream = [fs[0].clone(), garbage.clone(), fs[1].clone(), fs[2].clone()].concat();
        let (f, s) = decode_all(&stream, 5);
        assert_eq!(f.iter().map(|f| f.seq).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(s.lost_bytes, garbage.len() as u64);
        assert_eq!(s.lost_frames, 0);
    }

    #[test]
    fn a_missing_frame_is_counted_by_its_sequence_number() {
        let fs = frames(5);
        let stream = [fs[0].clone(), fs[1].clone(), fs[3].clone(), fs[4].clone()].concat();
        let (f, s) = decode_all(&stream, 64);
        assert_eq!(f.len(), 4);
        assert_eq!(s.lost_frames, 1);
    }

    #[test]
    fn a_corrupted_frame_fails_its_crc_and_the_next_one_decodes() {
        let fs = frames(3);
        let mut bad = fs[1].clone();
        bad[20] ^= 0x40;
        let stream = [fs[0].clone(), bad.clone(), fs[2].clone()].concat();
        let (f, s) = decode_all(&stream, 7);
        assert_eq!(f.iter().map(|f| f.seq).collect::<Vec<_>>(), vec![0, 2]);
        assert_eq!(s.crc_errors, 1);
        assert_eq!(s.lost_frames, 1);
        assert_eq!(s.lost_bytes, bad.len() as u64);
    }

    #[test]
    fn tensor_records_round_trip() {
        let t = Record::Tensor(TensorRecord {
            instruction: 3,
            chain: 0,
            scalar_type: 1,
            sizes: vec![1, 2, 3],
            dim_order: vec![0, 2, 1],
            data: vec![1, 2, 3, 4, 5, 6],
        });
        let (k, p) = encode_record(&t);
        let (f, _) = decode_all(&encode(k, 0, &p), 100);
        assert_eq!(f[0].record, t);
    }
}
