//! `.npy` arrays (inputs, outputs, captured intermediates), read and written here (NumPy's
//! format, NEP 1: magic, version, a Python-literal header, then the raw C-order data), converted
//! to and from [`TensorData`]. Bytes in, bytes out: the caller does the file IO.
//!
//! The header is parsed by a small single-pass reader of exactly what NumPy writes (a dict with
//! `descr`, `fortran_order` and `shape`), so no header costs more than one look at its bytes.

use crate::dtype::ScalarType;
use crate::error::{Error, Result};
use crate::tensor::{checked_tensor_size, TensorData};

const MAGIC: &[u8] = b"\x93NUMPY";
/// Longest header accepted (NumPy pads to 64 bytes; large structured dtypes stay far below).
const MAX_HEADER_BYTES: usize = 1 << 16;
/// NumPy aligns the data start to this many bytes.
const ARRAY_ALIGN: usize = 64;

fn npy_err(e: impl std::fmt::Display) -> Error {
    Error::Npy(e.to_string())
}

/// The three entries of a `.npy` header.
#[derive(Debug, PartialEq)]
struct Header {
    descr: String,
    fortran_order: bool,
    shape: Vec<u64>,
}

/// Parses a `.npy` file (C order, little- or big-endian numeric dtypes).
pub fn read_npy(bytes: &[u8]) -> Result<TensorData> {
    let (header, data_start) = split_header(bytes)?;
    let header = parse_header(header)?;
    if header.fortran_order {
        return Err(Error::Npy(
            "Fortran-ordered arrays are not supported; save with np.ascontiguousarray".into(),
        ));
    }
    let (dtype, big_endian) = dtype_of(&header.descr)?;
    let shape: Vec<usize> = header.shape.iter().map(|&d| d as usize).collect();
    let sizes = header
        .shape
        .iter()
        .map(|&d| i64::try_from(d).unwrap_or(i64::MAX));
    let (_, nbytes) = checked_tensor_size(sizes, dtype, "npy array")?;
    let end = data_start as u64 + nbytes;
    if (bytes.len() as u64) < end {
        return Err(Error::Truncated {
            what: "npy data".into(),
            needed: end,
            available: bytes.len() as u64,
        });
    }
    let mut data = bytes[data_start..end as usize].to_vec();
    let elem = dtype.element_size().unwrap_or(1);
    if big_endian && elem > 1 {
        data.chunks_exact_mut(elem).for_each(|c| c.reverse());
    }
    TensorData::new(dtype, shape, data)
}

/// The header text and where the data starts, from the magic, version and header length.
fn split_header(bytes: &[u8]) -> Result<(&[u8], usize)> {
    let truncated = |needed: usize| Error::Truncated {
        what: "npy header".into(),
        needed: needed as u64,
        available: bytes.len() as u64,
    };
    if bytes.len() < 10 {
        return Err(truncated(10));
    }
    if &bytes[..6] != MAGIC {
        return Err(Error::Npy("not a .npy file (no \\x93NUMPY magic)".into()));
    }
    let (header_len, start) = match bytes[6] {
        1 => (usize::from(u16::from_le_bytes([bytes[8], bytes[9]])), 10),
        2 | 3 => {
            let h = bytes.get(8..12).ok_or_else(|| truncated(12))?;
            (u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize, 12)
        }
        v => {
            return Err(Error::Npy(format!(
                "format version {v} (NumPy writes 1 to 3)"
            )))
        }
    };
    if header_len > MAX_HEADER_BYTES {
        return Err(Error::Npy(format!(
            "header of {header_len} bytes (numpy writes under {MAX_HEADER_BYTES})"
        )));
    }
    let end = start + header_len;
    let header = bytes.get(start..end).ok_or_else(|| truncated(end))?;
    Ok((header, end))
}

/// One forward pass over the header's dict literal, e.g.
/// `{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }`.
fn parse_header(text: &[u8]) -> Result<Header> {
    let mut p = Cursor { text, at: 0 };
    p.expect(b'{')?;
    let (mut descr, mut fortran_order, mut shape) = (None, None, None);
    loop {
        if p.eat(b'}') {
            break;
        }
        let key = p.string()?;
        p.expect(b':')?;
        match key.as_str() {
            "descr" if p.peek() == Some(b'[') => {
                return Err(Error::Npy(
                    "structured or array dtypes are not supported".into(),
                ))
            }
            "descr" => descr = Some(p.string()?),
            "fortran_order" => fortran_order = Some(p.boolean()?),
            "shape" => shape = Some(p.int_tuple()?),
            other => return Err(p.error(&format!("unexpected key {other:?}"))),
        }
        if !p.eat(b',') {
            p.expect(b'}')?;
            break;
        }
    }
    let missing = |k: &str| Error::Npy(format!("header has no {k:?}"));
    Ok(Header {
        descr: descr.ok_or_else(|| missing("descr"))?,
        fortran_order: fortran_order.ok_or_else(|| missing("fortran_order"))?,
        shape: shape.ok_or_else(|| missing("shape"))?,
    })
}

/// A position in the header text; every read skips the whitespace before it.
struct Cursor<'a> {
    text: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn peek(&mut self) -> Option<u8> {
        while self.text.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
        self.text.get(self.at).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        let hit = self.peek() == Some(c);
        self.at += usize::from(hit);
        hit
    }

    fn error(&self, what: &str) -> Error {
        Error::Npy(format!("header: {what} at byte {}", self.at))
    }

    fn expect(&mut self, c: u8) -> Result<()> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.error(&format!("expected '{}'", c as char)))
        }
    }

    /// A quoted string without escapes (`'...'` or `"..."`), as keys and dtype codes are.
    fn string(&mut self) -> Result<String> {
        let quote = match self.peek() {
            Some(q @ (b'\'' | b'"')) => q,
            _ => return Err(self.error("expected a quoted string")),
        };
        let start = self.at + 1;
        let len = self.text[start..]
            .iter()
            .position(|&c| c == quote)
            .ok_or_else(|| self.error("unterminated string"))?;
        self.at = start + len + 1;
        Ok(String::from_utf8_lossy(&self.text[start..start + len]).into_owned())
    }

    fn boolean(&mut self) -> Result<bool> {
        self.peek();
        let rest = &self.text[self.at..];
        for (word, value) in [(&b"True"[..], true), (&b"False"[..], false)] {
            if rest.starts_with(word) {
                self.at += word.len();
                return Ok(value);
            }
        }
        Err(self.error("expected True or False"))
    }

    /// `()`, `(3,)`, `(1, 2)`; Python 2 files may write `3L`.
    fn int_tuple(&mut self) -> Result<Vec<u64>> {
        self.expect(b'(')?;
        let mut dims = Vec::new();
        loop {
            if self.eat(b')') {
                return Ok(dims);
            }
            self.peek();
            let digits = self.text[self.at..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count();
            if digits == 0 {
                return Err(self.error("expected a dimension"));
            }
            let text = std::str::from_utf8(&self.text[self.at..self.at + digits]).unwrap_or("");
            let d = text
                .parse::<u64>()
                .map_err(|_| self.error(&format!("dimension {text} is too large")))?;
            self.at += digits;
            if matches!(self.text.get(self.at), Some(b'L' | b'l')) {
                self.at += 1;
            }
            dims.push(d);
            if !self.eat(b',') {
                self.expect(b')')?;
                return Ok(dims);
            }
        }
    }
}

/// NumPy's type codes (kind, size in bytes) and the dtype each one is, for reading and writing.
const NUMPY_TYPES: [(u8, usize, ScalarType); 12] = [
    (b'f', 4, ScalarType::Float),
    (b'f', 8, ScalarType::Double),
    (b'f', 2, ScalarType::Half),
    (b'i', 1, ScalarType::Char),
    (b'i', 2, ScalarType::Short),
    (b'i', 4, ScalarType::Int),
    (b'i', 8, ScalarType::Long),
    (b'u', 1, ScalarType::Byte),
    (b'u', 2, ScalarType::UInt16),
    (b'u', 4, ScalarType::UInt32),
    (b'u', 8, ScalarType::UInt64),
    (b'b', 1, ScalarType::Bool),
];

/// The dtype and byte order of a NumPy type string such as `<f4`, `|i1` or `>u2`.
fn dtype_of(descr: &str) -> Result<(ScalarType, bool)> {
    let unsupported = || Error::Npy(format!("unsupported dtype {descr}"));
    let b = descr.as_bytes();
    let (order, kind, size) = match b {
        [o @ (b'<' | b'>' | b'|' | b'='), k, size @ ..] => (*o, *k, size),
        [k, size @ ..] => (b'=', *k, size),
        _ => return Err(unsupported()),
    };
    let size: usize = std::str::from_utf8(size)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(unsupported)?;
    let (_, _, dtype) = NUMPY_TYPES
        .iter()
        .find(|&&(k, n, _)| (k, n) == (kind, size))
        .ok_or_else(unsupported)?;
    Ok((*dtype, order == b'>'))
}

/// The NumPy type string etscope writes for `dtype` (little-endian; quantized dtypes as their
/// integer storage).
fn descr_of(dtype: ScalarType) -> Result<String> {
    let storage = match dtype {
        ScalarType::QInt8 => ScalarType::Char,
        ScalarType::QUInt8 => ScalarType::Byte,
        ScalarType::QInt32 => ScalarType::Int,
        other => other,
    };
    let &(kind, size, _) = NUMPY_TYPES
        .iter()
        .find(|&&(_, _, t)| t == storage)
        .ok_or_else(|| Error::Npy(format!("cannot write {} as .npy", dtype.name())))?;
    let order = if size == 1 { '|' } else { '<' };
    Ok(format!("{order}{}{size}", kind as char))
}

/// Serializes a tensor as a little-endian C-order `.npy` file (format 1.0, data 64-byte
/// aligned, as NumPy writes it).
pub fn write_npy(t: &TensorData) -> Result<Vec<u8>> {
    let descr = descr_of(t.dtype)?;
    let dims: Vec<String> = t.shape.iter().map(|d| d.to_string()).collect();
    let shape = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    let unpadded = MAGIC.len() + 4 + header.len() + 1;
    header.push_str(&" ".repeat(unpadded.next_multiple_of(ARRAY_ALIGN) - unpadded));
    header.push('\n');
    let header_len = u16::try_from(header.len()).map_err(npy_err)?;
    let mut out = Vec::with_capacity(MAGIC.len() + 4 + header.len() + t.bytes.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&header_len.to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    if t.dtype == ScalarType::Bool {
        out.extend(t.bytes.iter().map(|&b| u8::from(b != 0)));
    } else {
        out.extend_from_slice(&t.bytes);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int8_round_trips() {
        let t = TensorData::new(ScalarType::Char, vec![2, 2], vec![0x80, 0xff, 0, 127]).unwrap();
        let back = read_npy(&write_npy(&t).unwrap()).unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn a_deeply_nested_header_is_refused_at_once() {
        // found by fuzzing: 48 nested brackets kept npyz's header parser busy for seconds;
        // the header reader here makes one pass
        let bytes = include_bytes!("../../../fuzz/corpus/npy/regression-timeout-1");
        let t = std::time::Instant::now();
        let e = read_npy(bytes).expect_err("refused");
        assert!(t.elapsed() < std::time::Duration::from_millis(100));
        assert!(e.to_string().contains("header: expected '{'"), "{e}");
    }

    /// Files NumPy wrote (committed fixtures) read and write back byte for byte.
    #[test]
    fn numpy_files_round_trip_byte_for_byte() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
        let mut seen = 0;
        for dir in ["tiny_conv_relu_linear", "programs/split", "programs/bmm"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "npy") {
                    let bytes = std::fs::read(&path).unwrap();
                    let t = read_npy(&bytes).unwrap();
                    assert_eq!(write_npy(&t).unwrap(), bytes, "{}", path.display());
                    seen += 1;
                }
            }
        }
        assert!(seen >= 5, "{seen} files");
    }

    fn with_header(version: u8, header: &str, data: &[u8]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&[version, 0]);
        if version == 1 {
            out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        } else {
            out.extend_from_slice(&(header.len() as u32).to_le_bytes());
        }
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn headers_numpy_and_older_writers_produce_are_read() {
        // version 2, big-endian int16, Python 2 long suffix, double quotes, no trailing comma
        let bytes = with_header(
            2,
            "{\"descr\": \">i2\", \"fortran_order\": False, \"shape\": (2L, 1L)}\n",
            &[0x01, 0x02, 0xff, 0xfe],
        );
        let t = read_npy(&bytes).unwrap();
        assert_eq!((t.dtype, t.shape.clone()), (ScalarType::Short, vec![2, 1]));
        assert_eq!(t.bytes, vec![0x02, 0x01, 0xfe, 0xff]);
        // a 0-d array
        let bytes = with_header(
            1,
            "{'descr': '<f4', 'fortran_order': False, 'shape': (), }",
            &3.0f32.to_le_bytes(),
        );
        assert_eq!(read_npy(&bytes).unwrap().shape, Vec::<usize>::new());
    }

    #[test]
    fn what_etscope_cannot_hold_is_named() {
        let refused = |header: &str| read_npy(&with_header(1, header, &[0; 64])).unwrap_err();
        let e = refused("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }");
        assert!(e.to_string().contains("structured"), "{e}");
        let e = refused("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }");
        assert!(e.to_string().contains("Fortran"), "{e}");
        let e = refused("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }");
        assert!(e.to_string().contains("unsupported dtype <c8"), "{e}");
        let e = refused("{'descr': '<f4', 'shape': (1,), }");
        assert!(e.to_string().contains("fortran_order"), "{e}");
        let e =
            refused("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }");
        assert!(e.to_string().contains("too large"), "{e}");
        let e = refused("{'descr': '<f4', 'fortran_order': False, 'shape': (100,), }");
        assert!(
            e.to_string().contains("truncated") || e.to_string().contains("needs"),
            "{e}"
        );
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(read_npy(b"not an npy file").is_err());
        assert!(read_npy(&[]).is_err());
    }
}
