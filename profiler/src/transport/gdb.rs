//! GDB remote serial protocol client over TCP (`HOST:PORT`) or a Unix socket (`unix:PATH`):
//! QEMU's gdbstub, OpenOCD, J-Link GDB server, pyOCD. Only what memory access needs: `m`, `M`,
//! `?`, `c`, the interrupt byte and `k`. QEMU's stub is all-stop (no memory access while the core
//! runs, `m` replies at most 2048 bytes), so [`GdbRemote`] reports `needs_halt` and reads in
//! 2 KiB packets. Every wait has a deadline: a vanished server is an error, never a hang.

use std::io::{Read, Write};
use std::net::TcpStream;
#[cfg(unix)]
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use super::{TargetMemory, TransportError};

/// Largest `m` reply QEMU's stub gives (bytes of memory).
const MAX_READ: usize = 2048;
/// Largest `M` payload sent (bytes of memory).
const MAX_WRITE: usize = 1024;

trait Stream: Read + Write + Send {
    fn set_timeout(&self, d: Duration) -> std::io::Result<()>;
}
impl Stream for TcpStream {
    fn set_timeout(&self, d: Duration) -> std::io::Result<()> {
        self.set_read_timeout(Some(d))
    }
}
#[cfg(unix)]
impl Stream for UnixStream {
    fn set_timeout(&self, d: Duration) -> std::io::Result<()> {
        self.set_read_timeout(Some(d))
    }
}

/// A connected GDB server.
pub struct GdbRemote {
    stream: Box<dyn Stream>,
    endpoint: String,
    running: bool,
    timeout: Duration,
    inbuf: Vec<u8>,
    /// Packets exchanged (for the benchmark and the live view).
    pub packets: u64,
}

fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

fn checksum(data: &[u8]) -> u8 {
    data.iter().fold(0u8, |s, &b| s.wrapping_add(b))
}

impl GdbRemote {
    /// Connects to `HOST:PORT` or `unix:PATH`; the target is assumed halted (QEMU with `-S`)
    /// and its state is asked with `?`.
    pub fn connect(address: &str, timeout: Duration) -> Result<GdbRemote, TransportError> {
        let endpoint = format!("GDB server {address}");
        let io = |e: std::io::Error| TransportError::Io {
            endpoint: endpoint.clone(),
            detail: e.to_string(),
        };
        let stream: Box<dyn Stream> = if let Some(path) = address.strip_prefix("unix:") {
            #[cfg(unix)]
            {
                Box::new(UnixStream::connect(path).map_err(io)?)
            }
            #[cfg(not(unix))]
            {
                let _ = path;
                return Err(TransportError::Io {
                    endpoint,
                    detail: "Unix sockets need a Unix host".into(),
                });
            }
        } else {
            let s = TcpStream::connect(address).map_err(io)?;
            s.set_nodelay(true).map_err(io)?;
            Box::new(s)
        };
        stream.set_timeout(Duration::from_millis(50)).map_err(io)?;
        let mut g = GdbRemote {
            stream,
            endpoint,
            running: false,
            timeout,
            inbuf: Vec::new(),
            packets: 0,
        };
        let reply = g.command(b"?")?;
        g.running = reply.is_empty();
        Ok(g)
    }

    fn err_io(&self, e: std::io::Error) -> TransportError {
        match e.kind() {
            std::io::ErrorKind::BrokenPipe
            | std::io::ErrorKind::ConnectionReset
            | std::io::ErrorKind::ConnectionAborted => TransportError::Closed {
                endpoint: self.endpoint.clone(),
                detail: e.to_string(),
            },
            _ => TransportError::Io {
                endpoint: self.endpoint.clone(),
                detail: e.to_string(),
            },
        }
    }

    fn send_raw(&mut self, bytes: &[u8]) -> Result<(), TransportError> {
        self.stream.write_all(bytes).map_err(|e| self.err_io(e))
    }

    /// Reads more bytes into `inbuf`, failing after the deadline.
    fn fill(&mut self, deadline: Instant, waiting_for: &str) -> Result<(), TransportError> {
        let mut tmp = [0u8; 8192];
        loop {
            match self.stream.read(&mut tmp) {
                Ok(0) => {
                    return Err(TransportError::Closed {
                        endpoint: self.endpoint.clone(),
                        detail: format!("while waiting for {waiting_for}"),
                    })
                }
                Ok(n) => {
                    self.inbuf.extend_from_slice(&tmp[..n]);
                    return Ok(());
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    if Instant::now() >= deadline {
                        return Err(TransportError::Timeout {
                            endpoint: self.endpoint.clone(),
                            seconds: self.timeout.as_secs().max(1),
                            waiting_for: waiting_for.to_string(),
                        });
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.err_io(e)),
            }
        }
    }

    /// Reads one `$...#xx` packet (skipping acks), acknowledges it and returns its payload.
    fn read_packet(&mut self, waiting_for: &str) -> Result<Vec<u8>, TransportError> {
        let deadline = Instant::now() + self.timeout;
        loop {
            if let Some(start) = self.inbuf.iter().position(|&b| b == b'$') {
                if let Some(hash) = self.inbuf[start..].iter().position(|&b| b == b'#') {
                    let end = start + hash;
                    if self.inbuf.len() >= end + 3 {
                        let body = self.inbuf[start + 1..end].to_vec();
                        let sum = hex_digit(self.inbuf[end + 1])
                            .zip(hex_digit(self.inbuf[end + 2]))
                            .map(|(h, l)| h << 4 | l);
                        self.inbuf.drain(..end + 3);
                        if sum != Some(checksum(&body)) {
                            self.send_raw(b"-")?;
                            continue;
                        }
                        self.send_raw(b"+")?;
                        self.packets += 1;
                        return Ok(unescape(&body));
                    }
                }
            } else {
                // only acks or noise so far
                self.inbuf.clear();
            }
            self.fill(deadline, waiting_for)?;
        }
    }

    /// Sends a packet and returns the reply, skipping console output (`O...`) packets.
    pub fn command(&mut self, payload: &[u8]) -> Result<Vec<u8>, TransportError> {
        let mut pkt = Vec::with_capacity(payload.len() + 4);
        pkt.push(b'$');
        pkt.extend_from_slice(payload);
        pkt.push(b'#');
        pkt.extend_from_slice(format!("{:02x}", checksum(payload)).as_bytes());
        self.send_raw(&pkt)?;
        let what = String::from_utf8_lossy(&payload[..payload.len().min(12)]).into_owned();
        loop {
            let reply = self.read_packet(&format!("the reply to {what:?}"))?;
            if reply.first() == Some(&b'O') && reply.len() > 1 && reply != b"OK" {
                continue;
            }
            return Ok(reply);
        }
    }

    /// Runs a server monitor command (`qRcmd`, e.g. QEMU's `system_reset`); returns its output.
    pub fn monitor(&mut self, command: &str) -> Result<String, TransportError> {
        let mut pkt = b"qRcmd,".to_vec();
        for b in command.bytes() {
            pkt.extend_from_slice(format!("{b:02x}").as_bytes());
        }
        let reply = self.command(&pkt)?;
        self.check_reply(&reply, &format!("monitor {command:?}"))?;
        Ok(String::from_utf8_lossy(&reply).into_owned())
    }

    /// Ends the session and the emulator (`k`); errors are ignored (the server may be gone).
    pub fn kill(&mut self) {
        let _ = self.halt();
        let _ = self.send_raw(b"$k#6b");
    }

    fn check_reply(&self, reply: &[u8], what: &str) -> Result<(), TransportError> {
        if reply.first() == Some(&b'E') || reply.is_empty() {
            return Err(TransportError::Protocol {
                endpoint: self.endpoint.clone(),
                detail: format!(
                    "{what}: server answered {:?}",
                    String::from_utf8_lossy(reply)
                ),
            });
        }
        Ok(())
    }
}

fn unescape(body: &[u8]) -> Vec<u8> {
    if !body.iter().any(|&b| b == b'}' || b == b'*') {
        return body.to_vec();
    }
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        match body[i] {
            b'}' if i + 1 < body.len() => {
                out.push(body[i + 1] ^ 0x20);
                i += 2;
            }
            b'*' if i + 1 < body.len() && !out.is_empty() => {
                let n = body[i + 1].saturating_sub(29) as usize;
                let last = out[out.len() - 1];
                out.extend(std::iter::repeat_n(last, n));
                i += 2;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

fn decode_hex(hex: &[u8], out: &mut [u8]) -> bool {
    if hex.len() != out.len() * 2 {
        return false;
    }
    for (o, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
        match (hex_digit(pair[0]), hex_digit(pair[1])) {
            (Some(h), Some(l)) => *o = h << 4 | l,
            _ => return false,
        }
    }
    true
}

impl TargetMemory for GdbRemote {
    fn read(&mut self, address: u64, buf: &mut [u8]) -> Result<(), TransportError> {
        for (k, chunk) in buf.chunks_mut(MAX_READ).enumerate() {
            let at = address + (k * MAX_READ) as u64;
            let reply = self.command(format!("m{at:x},{:x}", chunk.len()).as_bytes())?;
            self.check_reply(&reply, &format!("reading {} bytes at {at:#x}", chunk.len()))?;
            if !decode_hex(&reply, chunk) {
                return Err(TransportError::Protocol {
                    endpoint: self.endpoint.clone(),
                    detail: format!(
                        "reading {} bytes at {at:#x}: got {} hex digits",
                        chunk.len(),
                        reply.len()
                    ),
                });
            }
        }
        Ok(())
    }

    fn write(&mut self, address: u64, data: &[u8]) -> Result<(), TransportError> {
        for (k, chunk) in data.chunks(MAX_WRITE).enumerate() {
            let at = address + (k * MAX_WRITE) as u64;
            let mut pkt = format!("M{at:x},{:x}:", chunk.len()).into_bytes();
            for b in chunk {
                pkt.extend_from_slice(format!("{b:02x}").as_bytes());
            }
            let reply = self.command(&pkt)?;
            if reply != b"OK" {
                self.check_reply(&reply, &format!("writing {} bytes at {at:#x}", chunk.len()))?;
            }
        }
        Ok(())
    }

    fn halt(&mut self) -> Result<(), TransportError> {
        if !self.running {
            return Ok(());
        }
        self.send_raw(&[0x03])?;
        loop {
            let reply = self.read_packet("the stop reply to an interrupt")?;
            if matches!(reply.first(), Some(b'T' | b'S')) {
                break;
            }
            if matches!(reply.first(), Some(b'W' | b'X')) {
                return Err(TransportError::Closed {
                    endpoint: self.endpoint.clone(),
                    detail: format!("the target exited ({})", String::from_utf8_lossy(&reply)),
                });
            }
        }
        self.running = false;
        Ok(())
    }

    fn resume(&mut self) -> Result<(), TransportError> {
        if self.running {
            return Ok(());
        }
        self.send_raw(b"$c#63")?;
        self.running = true;
        Ok(())
    }

    fn needs_halt(&self) -> bool {
        true
    }

    fn describe(&self) -> String {
        self.endpoint.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_length_and_escapes_expand() {
        assert_eq!(unescape(b"0* "), b"0000".to_vec()); // '*' + (' ' - 29 = 3) repeats
        assert_eq!(unescape(b"}\x03"), vec![0x23]);
    }

    #[test]
    fn hex_decodes_and_refuses_bad_digits() {
        let mut out = [0u8; 2];
        assert!(decode_hex(b"a0ff", &mut out));
        assert_eq!(out, [0xa0, 0xff]);
        assert!(!decode_hex(b"zz00", &mut out));
        assert!(!decode_hex(b"00", &mut out));
    }
}
