//! SEGGER RTT up-channel reading over any [`TargetMemory`]: finds the control block (at the
//! ELF's `_SEGGER_RTT` symbol or by scanning RAM for its ID), picks an up-channel by name, and
//! drains it — reading `WrOff`, the bytes between `RdOff` and `WrOff`, then advancing `RdOff`.
//! The control block layout is SEGGER's on a 32-bit target: `ID[16]`, max up, max down, then 24-byte
//! buffer descriptors (name, buffer, size, WrOff, RdOff, flags).

use thiserror::Error;

use crate::transport::{TargetMemory, TransportError};

const ID: &[u8; 16] = b"SEGGER RTT\0\0\0\0\0\0";
const DESC_BYTES: u64 = 24;
/// More channels than this means the block is not a control block.
const MAX_CHANNELS: u32 = 32;
/// Largest ring accepted (sanity bound on a descriptor read from target memory).
const MAX_RING: u32 = 16 << 20;

/// RTT-level failures.
#[derive(Debug, Error)]
pub enum RttError {
    #[error(transparent)]
    Transport(#[from] TransportError),
    #[error("no RTT control block at {0:#x} (ID not set: the firmware has not initialised RTT yet, or the address is wrong)")]
    NoControlBlock(u64),
    #[error("no RTT control block found in {0}")]
    NotFound(String),
    #[error("the RTT control block at {address:#x} has no up-channel named {name:?} (it has {available:?})")]
    NoChannel {
        address: u64,
        name: String,
        available: Vec<String>,
    },
    #[error("RTT channel {name:?}: {detail}")]
    BadChannel { name: String, detail: String },
}

/// One up-channel's descriptor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpChannel {
    pub index: u32,
    pub name: String,
    /// Address of the descriptor in target memory.
    pub descriptor: u64,
    pub buffer: u64,
    pub size: u32,
    pub flags: u32,
}

fn u32_le(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// Reads a NUL-terminated name (at most 64 bytes) from target memory.
fn read_name(mem: &mut dyn TargetMemory, address: u64) -> Result<String, TransportError> {
    if address == 0 {
        return Ok(String::new());
    }
    let mut b = [0u8; 64];
    mem.read(address, &mut b)?;
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    Ok(String::from_utf8_lossy(&b[..end]).into_owned())
}

/// Whether a control block with its ID set sits at `address`.
pub fn control_block_at(mem: &mut dyn TargetMemory, address: u64) -> Result<bool, TransportError> {
    let mut id = [0u8; 16];
    mem.read(address, &mut id)?;
    Ok(&id == ID)
}

/// Scans `[start, start + len)` for the control block ID, 2 KiB at a time.
pub fn scan_for_control_block(
    mem: &mut dyn TargetMemory,
    start: u64,
    len: u64,
) -> Result<Option<u64>, TransportError> {
    const STEP: u64 = 2048;
    let mut at = start;
    let end = start.saturating_add(len);
    let mut buf = vec![0u8; STEP as usize + 15];
    while at < end {
        let n = (end - at).min(STEP + 15) as usize;
        mem.read(at, &mut buf[..n])?;
        if let Some(p) = buf[..n].windows(16).position(|w| w == ID) {
            return Ok(Some(at + p as u64));
        }
        at += STEP;
    }
    Ok(None)
}

/// The up-channels of the control block at `address`.
pub fn up_channels(mem: &mut dyn TargetMemory, address: u64) -> Result<Vec<UpChannel>, RttError> {
    let mut head = [0u8; 24];
    mem.read(address, &mut head)?;
    if &head[..16] != ID {
        return Err(RttError::NoControlBlock(address));
    }
    let max_up = u32_le(&head[16..20]);
    if max_up > MAX_CHANNELS {
        return Err(RttError::BadChannel {
            name: String::new(),
            detail: format!("control block claims {max_up} up-channels"),
        });
    }
    let mut out = Vec::new();
    for i in 0..max_up {
        let descriptor = address + 24 + u64::from(i) * DESC_BYTES;
        let mut d = [0u8; 24];
        mem.read(descriptor, &mut d)?;
        let name = read_name(mem, u64::from(u32_le(&d[0..4])))?;
        out.push(UpChannel {
            index: i,
            name,
            descriptor,
            buffer: u64::from(u32_le(&d[4..8])),
            size: u32_le(&d[8..12]),
            flags: u32_le(&d[20..24]),
        });
    }
    Ok(out)
}

/// Reads one up-channel.
#[derive(Debug, Clone)]
pub struct RttChannel {
    pub control_block: u64,
    pub channel: UpChannel,
    /// Polls that found data / all polls.
    pub polls_with_data: u64,
    pub polls: u64,
}

impl RttChannel {
    /// Opens the up-channel named `name` of the control block at `address`.
    pub fn open(
        mem: &mut dyn TargetMemory,
        address: u64,
        name: &str,
    ) -> Result<RttChannel, RttError> {
        let channels = up_channels(mem, address)?;
        let channel = channels
            .iter()
            .find(|c| c.name == name)
            .cloned()
            .ok_or_else(|| RttError::NoChannel {
                address,
                name: name.into(),
                available: channels.iter().map(|c| c.name.clone()).collect(),
            })?;
        if channel.size < 2 || channel.size > MAX_RING || channel.buffer == 0 {
            return Err(RttError::BadChannel {
                name: name.into(),
                detail: format!(
                    "buffer {:#x} of {} bytes is not plausible",
                    channel.buffer, channel.size
                ),
            });
        }
        Ok(RttChannel {
            control_block: address,
            channel,
            polls_with_data: 0,
            polls: 0,
        })
    }

    /// Appends whatever the target has written since the last call to `out`; returns how many
    /// bytes. The caller halts/resumes around it when the transport needs that.
    pub fn drain(
        &mut self,
        mem: &mut dyn TargetMemory,
        out: &mut Vec<u8>,
    ) -> Result<usize, RttError> {
        self.polls += 1;
        let mut offs = [0u8; 8];
        mem.read(self.channel.descriptor + 12, &mut offs)?;
        let (wr, rd) = (u32_le(&offs[0..4]), u32_le(&offs[4..8]));
        let size = self.channel.size;
        if wr >= size || rd >= size {
            return Err(RttError::BadChannel {
                name: self.channel.name.clone(),
                detail: format!("offsets WrOff {wr} / RdOff {rd} outside the {size}-byte ring (target reset or memory corrupted)"),
            });
        }
        if wr == rd {
            return Ok(0);
        }
        let start = out.len();
        let base = self.channel.buffer;
        if wr > rd {
            let n = (wr - rd) as usize;
            out.resize(start + n, 0);
            mem.read(base + u64::from(rd), &mut out[start..])?;
        } else {
            let first = (size - rd) as usize;
            out.resize(start + first + wr as usize, 0);
            mem.read(base + u64::from(rd), &mut out[start..start + first])?;
            if wr > 0 {
                mem.read(base, &mut out[start + first..])?;
            }
        }
        mem.write(self.channel.descriptor + 16, &wr.to_le_bytes())?;
        self.polls_with_data += 1;
        Ok(out.len() - start)
    }
}
