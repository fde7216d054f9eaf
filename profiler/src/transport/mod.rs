//! Target-memory transports: one small trait ([`TargetMemory`]) that the RTT reader drives, with
//! a GDB-remote client (QEMU, OpenOCD, J-Link GDB server, pyOCD) and a probe-rs backend (debug
//! probes). Transports know nothing of RTT or frames; decoders know nothing of transports.

pub mod gdb;
pub mod probe;

use thiserror::Error;

/// What a transport can fail with. Every error names the endpoint.
#[derive(Debug, Error)]
pub enum TransportError {
    #[error("{endpoint}: {detail}")]
    Io { endpoint: String, detail: String },
    #[error("{endpoint}: no answer within {seconds} s ({waiting_for})")]
    Timeout {
        endpoint: String,
        seconds: u64,
        waiting_for: String,
    },
    #[error("{endpoint}: the connection closed ({detail})")]
    Closed { endpoint: String, detail: String },
    #[error("{endpoint}: {detail}")]
    Protocol { endpoint: String, detail: String },
    #[error("probe: {0}")]
    Probe(String),
}

/// Memory of a running target. Transports whose target must be stopped for memory access
/// (QEMU's all-stop GDB stub) say so in [`TargetMemory::needs_halt`]; the RTT reader then halts,
/// reads, writes and resumes once per poll.
pub trait TargetMemory {
    fn read(&mut self, address: u64, buf: &mut [u8]) -> Result<(), TransportError>;
    fn write(&mut self, address: u64, data: &[u8]) -> Result<(), TransportError>;
    fn halt(&mut self) -> Result<(), TransportError> {
        Ok(())
    }
    fn resume(&mut self) -> Result<(), TransportError> {
        Ok(())
    }
    fn needs_halt(&self) -> bool {
        false
    }
    /// Where the memory is (for messages).
    fn describe(&self) -> String;
}

/// A plain memory image at a base address: the fake target of tests, and a snapshot viewer.
#[derive(Debug, Clone)]
pub struct MemoryImage {
    pub base: u64,
    pub bytes: Vec<u8>,
}

impl MemoryImage {
    fn range(&self, address: u64, len: usize) -> Result<std::ops::Range<usize>, TransportError> {
        let start = address
            .checked_sub(self.base)
            .and_then(|o| usize::try_from(o).ok());
        match start.and_then(|s| s.checked_add(len).map(|e| (s, e))) {
            Some((s, e)) if e <= self.bytes.len() => Ok(s..e),
            _ => Err(TransportError::Io {
                endpoint: self.describe(),
                detail: format!("{len} bytes at {address:#x} are outside the image"),
            }),
        }
    }
}

impl TargetMemory for MemoryImage {
    fn read(&mut self, address: u64, buf: &mut [u8]) -> Result<(), TransportError> {
        let r = self.range(address, buf.len())?;
        buf.copy_from_slice(&self.bytes[r]);
        Ok(())
    }
    fn write(&mut self, address: u64, data: &[u8]) -> Result<(), TransportError> {
        let r = self.range(address, data.len())?;
        self.bytes[r].copy_from_slice(data);
        Ok(())
    }
    fn describe(&self) -> String {
        format!(
            "memory image {:#x}..{:#x}",
            self.base,
            self.base + self.bytes.len() as u64
        )
    }
}
