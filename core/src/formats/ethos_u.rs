//! The payload of ExecuTorch's Arm Ethos-U delegate (`EthosUBackend`): Vela's compiled output
//! as a stream of named blocks, which the device's `VelaBinStream` reads.
//!
//! Layout (ExecuTorch `backends/arm/arm_vela.py`): repeated blocks of a 16-byte name (NUL
//! padded), a little-endian i32 length followed by 12 zero bytes, then the data padded to a
//! multiple of 16 bytes. The stream starts with `vela_bin_stream` and ends with
//! `vela_end_stream`. Known blocks: `cmd_data` (the NPU command stream), `weight_data`,
//! `scratch_size` and `fast_scratch_size` (u32 bytes the application must provide in SRAM),
//! `inputs` / `outputs` (an i32 count, then per tensor a 6-D shape, element size, offset and
//! memory region as i32). Other blocks are listed with their size.

use serde::Serialize;

use crate::error::{Error, Result};

/// The backend id ExecuTorch gives Ethos-U delegates.
pub const BACKEND_ID: &str = "EthosUBackend";

/// One input or output of the NPU command stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VelaIo {
    /// Vela's 6-D shape (leading 1s).
    pub shape: [i32; 6],
    pub elem_size: i32,
    /// Offset in its memory region.
    pub offset: i32,
    pub region: i32,
}

impl VelaIo {
    /// Bytes of the tensor (0 when the shape is negative or overflows).
    pub fn bytes(&self) -> u64 {
        self.shape
            .iter()
            .chain(std::iter::once(&self.elem_size))
            .try_fold(1u64, |a, &d| {
                u64::try_from(d).ok().and_then(|d| a.checked_mul(d))
            })
            .unwrap_or(0)
    }
}

/// A decoded Vela block stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VelaStream {
    /// Every block in order: name and unpadded length.
    pub blocks: Vec<(String, usize)>,
    pub command_stream_bytes: usize,
    pub weight_bytes: usize,
    /// SRAM scratch the application provides (`scratch_size`).
    pub scratch_bytes: Option<u32>,
    /// Fast scratch (`fast_scratch_size`, where the stream has it).
    pub fast_scratch_bytes: Option<u32>,
    pub inputs: Vec<VelaIo>,
    pub outputs: Vec<VelaIo>,
}

const WHAT: &str = "Ethos-U payload";

fn i32_at(b: &[u8], at: usize, what: &str) -> Result<i32> {
    b.get(at..at + 4)
        .map(|s| i32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or_else(|| Error::Truncated {
            what: format!("{WHAT} {what}"),
            needed: (at + 4) as u64,
            available: b.len() as u64,
        })
}

fn ios(data: &[u8], block: &str) -> Result<Vec<VelaIo>> {
    let count = i32_at(data, 0, block)?;
    let count = usize::try_from(count)
        .map_err(|_| Error::invalid(WHAT, format!("{block}: count {count}")))?;
    // 9 i32 per tensor: refuse counts the block cannot hold before allocating
    if count.saturating_mul(36) > data.len().saturating_sub(4) {
        return Err(Error::invalid(
            WHAT,
            format!("{block}: {count} tensors do not fit {} bytes", data.len()),
        ));
    }
    (0..count)
        .map(|k| {
            let base = 4 + k * 36;
            let mut shape = [0i32; 6];
            for (d, s) in shape.iter_mut().enumerate() {
                *s = i32_at(data, base + 4 * d, block)?;
            }
            Ok(VelaIo {
                shape,
                elem_size: i32_at(data, base + 24, block)?,
                offset: i32_at(data, base + 28, block)?,
                region: i32_at(data, base + 32, block)?,
            })
        })
        .collect()
}

/// Decodes an Ethos-U delegate payload.
pub fn decode(blob: &[u8]) -> Result<VelaStream> {
    let mut out = VelaStream {
        blocks: Vec::new(),
        command_stream_bytes: 0,
        weight_bytes: 0,
        scratch_bytes: None,
        fast_scratch_bytes: None,
        inputs: Vec::new(),
        outputs: Vec::new(),
    };
    let mut at = 0usize;
    loop {
        let header = blob.get(at..at + 32).ok_or_else(|| Error::Truncated {
            what: format!("{WHAT} block header at byte {at}"),
            needed: (at + 32) as u64,
            available: blob.len() as u64,
        })?;
        let name_end = header[..16].iter().position(|&c| c == 0).unwrap_or(16);
        let name = std::str::from_utf8(&header[..name_end])
            .map_err(|_| Error::invalid(WHAT, format!("block name at byte {at} is not text")))?
            .to_string();
        if out.blocks.is_empty() && name != "vela_bin_stream" {
            return Err(Error::invalid(
                WHAT,
                format!("starts with {name:?}, not \"vela_bin_stream\""),
            ));
        }
        let len = i32::from_le_bytes([header[16], header[17], header[18], header[19]]);
        let len = usize::try_from(len)
            .map_err(|_| Error::invalid(WHAT, format!("block {name:?} has length {len}")))?;
        let start = at + 32;
        let data = blob
            .get(start..start.saturating_add(len))
            .ok_or_else(|| Error::Truncated {
                what: format!("{WHAT} block {name:?}"),
                needed: start as u64 + len as u64,
                available: blob.len() as u64,
            })?;
        match name.as_str() {
            "cmd_data" => out.command_stream_bytes = len,
            "weight_data" => out.weight_bytes = len,
            "scratch_size" => out.scratch_bytes = Some(i32_at(data, 0, &name)? as u32),
            "fast_scratch_size" => out.fast_scratch_bytes = Some(i32_at(data, 0, &name)? as u32),
            "inputs" => out.inputs = ios(data, &name)?,
            "outputs" => out.outputs = ios(data, &name)?,
            _ => {}
        }
        out.blocks.push((name.clone(), len));
        if name == "vela_end_stream" {
            return Ok(out);
        }
        at = start + len.div_ceil(16) * 16;
    }
}

/// Every Ethos-U delegate of plan `plan_index` with its decoded payload (or why it cannot be
/// decoded), by delegate index.
pub fn delegates(
    program: &crate::formats::pte::Program,
    plan_index: usize,
) -> Vec<(usize, Result<VelaStream>)> {
    let Some(plan) = program.plans.get(plan_index) else {
        return Vec::new();
    };
    plan.delegates
        .iter()
        .enumerate()
        .filter(|(_, d)| d.id == BACKEND_ID)
        .map(|(i, d)| (i, program.delegate_blob(d).and_then(decode)))
        .collect()
}

impl VelaStream {
    /// One line for tables: command stream, weights, scratch, fast scratch.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "command stream {} B, weights {} B",
            self.command_stream_bytes, self.weight_bytes
        );
        if let Some(b) = self.scratch_bytes {
            s.push_str(&format!(", scratch {b} B"));
        }
        if let Some(b) = self.fast_scratch_bytes {
            s.push_str(&format!(", fast scratch {b} B"));
        }
        s
    }
}
