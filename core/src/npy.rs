//! `.npy` arrays (inputs, outputs, captured intermediates) through the `npyz` crate, converted to
//! and from [`TensorData`]. Bytes in, bytes out: the caller does the file IO.

use npyz::{DType, TypeChar, WriterBuilder};

use crate::dtype::ScalarType;
use crate::error::{Error, Result};
use crate::tensor::{checked_tensor_size, TensorData};

fn npy_err(e: impl std::fmt::Display) -> Error {
    Error::Npy(e.to_string())
}

/// Parses a `.npy` file (C order, little- or big-endian numeric dtypes).
pub fn read_npy(bytes: &[u8]) -> Result<TensorData> {
    check_header_shape(bytes)?;
    let file = npyz::NpyFile::new(bytes).map_err(npy_err)?;
    if file.order() == npyz::Order::Fortran {
        return Err(Error::Npy(
            "Fortran-ordered arrays are not supported; save with np.ascontiguousarray".into(),
        ));
    }
    let DType::Plain(ts) = file.dtype() else {
        return Err(Error::Npy(
            "structured or array dtypes are not supported".into(),
        ));
    };
    let dtype = match (ts.type_char(), ts.size_field()) {
        (TypeChar::Float, 4) => ScalarType::Float,
        (TypeChar::Float, 8) => ScalarType::Double,
        (TypeChar::Float, 2) => ScalarType::Half,
        (TypeChar::Int, 1) => ScalarType::Char,
        (TypeChar::Int, 2) => ScalarType::Short,
        (TypeChar::Int, 4) => ScalarType::Int,
        (TypeChar::Int, 8) => ScalarType::Long,
        (TypeChar::Uint, 1) => ScalarType::Byte,
        (TypeChar::Uint, 2) => ScalarType::UInt16,
        (TypeChar::Uint, 4) => ScalarType::UInt32,
        (TypeChar::Uint, 8) => ScalarType::UInt64,
        (TypeChar::Bool, 1) => ScalarType::Bool,
        _ => return Err(Error::Npy(format!("unsupported dtype {ts}"))),
    };
    let shape: Vec<usize> = file.shape().iter().map(|&d| d as usize).collect();
    let (_, nbytes) =
        checked_tensor_size(file.shape().iter().map(|&d| d as i64), dtype, "npy array")?;
    let header_len = data_offset(bytes)?;
    let end = header_len as u64 + nbytes;
    if (bytes.len() as u64) < end {
        return Err(Error::Truncated {
            what: "npy data".into(),
            needed: end,
            available: bytes.len() as u64,
        });
    }
    let body = &bytes[header_len..end as usize];
    let data = match (dtype, ts.endianness()) {
        (_, npyz::Endianness::Little)
        | (ScalarType::Char | ScalarType::Byte | ScalarType::Bool, _) => body.to_vec(),
        _ => {
            let elem = dtype.element_size().unwrap_or(1);
            let mut swapped = body.to_vec();
            swapped.chunks_exact_mut(elem).for_each(|c| c.reverse());
            swapped
        }
    };
    TensorData::new(dtype, shape, data)
}

/// Deepest bracket nesting accepted in the header: numpy writes `{'descr': '<f4', 'fortran_order':
/// False, 'shape': (1, 2), }` (depth 2; a structured dtype adds two levels).
const MAX_HEADER_NESTING: usize = 6;
/// Longest header accepted (numpy pads to 64 bytes; large structured dtypes stay far below).
const MAX_HEADER_BYTES: usize = 1 << 16;

/// Refuses headers that the header parser would spend unbounded time on (deep nesting: its
/// backtracking is exponential in depth) before handing them to it.
fn check_header_shape(bytes: &[u8]) -> Result<()> {
    let start = if bytes.get(6) == Some(&1) { 10 } else { 12 };
    let Ok(end) = data_offset(bytes) else {
        return Ok(()); // the parser reports the truncation
    };
    let header = bytes.get(start..end.min(bytes.len())).unwrap_or_default();
    if header.len() > MAX_HEADER_BYTES {
        return Err(Error::Npy(format!(
            "header of {} bytes (numpy writes under {MAX_HEADER_BYTES})",
            header.len()
        )));
    }
    let mut depth = 0usize;
    for &b in header {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_HEADER_NESTING {
                    return Err(Error::Npy(format!(
                        "header nests brackets deeper than {MAX_HEADER_NESTING}"
                    )));
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// Where the array data starts: after the magic, version, header length and header.
fn data_offset(bytes: &[u8]) -> Result<usize> {
    let short = || Error::Truncated {
        what: "npy header".into(),
        needed: 12,
        available: bytes.len() as u64,
    };
    let major = *bytes.get(6).ok_or_else(short)?;
    Ok(if major == 1 {
        let h = bytes.get(8..10).ok_or_else(short)?;
        10 + usize::from(u16::from_le_bytes([h[0], h[1]]))
    } else {
        let h = bytes.get(8..12).ok_or_else(short)?;
        12 + u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize
    })
}

/// Serializes a tensor as a little-endian C-order `.npy` file.
pub fn write_npy(t: &TensorData) -> Result<Vec<u8>> {
    let shape: Vec<u64> = t.shape.iter().map(|&d| d as u64).collect();
    let mut out = Vec::with_capacity(t.bytes.len() + 128);
    macro_rules! write_as {
        ($ty:ty, $n:expr) => {{
            let mut w = npyz::WriteOptions::<$ty>::new()
                .default_dtype()
                .shape(&shape)
                .writer(&mut out)
                .begin_nd()
                .map_err(npy_err)?;
            for c in t.bytes.chunks_exact($n) {
                let mut a = [0u8; $n];
                a.copy_from_slice(c);
                w.push(&<$ty>::from_le_bytes(a)).map_err(npy_err)?;
            }
            w.finish().map_err(npy_err)?;
        }};
    }
    use ScalarType::*;
    match t.dtype {
        Float => write_as!(f32, 4),
        Double => write_as!(f64, 8),
        Char | QInt8 => write_as!(i8, 1),
        Byte | QUInt8 => write_as!(u8, 1),
        Short => write_as!(i16, 2),
        UInt16 => write_as!(u16, 2),
        Int | QInt32 => write_as!(i32, 4),
        UInt32 => write_as!(u32, 4),
        Long => write_as!(i64, 8),
        UInt64 => write_as!(u64, 8),
        Bool => {
            let mut w = npyz::WriteOptions::<bool>::new()
                .default_dtype()
                .shape(&shape)
                .writer(&mut out)
                .begin_nd()
                .map_err(npy_err)?;
            for &b in &t.bytes {
                w.push(&(b != 0)).map_err(npy_err)?;
            }
            w.finish().map_err(npy_err)?;
        }
        other => return Err(Error::Npy(format!("cannot write {} as .npy", other.name()))),
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
        // found by fuzzing: 48 nested brackets kept the header parser busy for seconds
        let bytes = include_bytes!("../../fuzz/corpus/npy/regression-timeout-1");
        let t = std::time::Instant::now();
        let e = read_npy(bytes).expect_err("refused");
        assert!(t.elapsed() < std::time::Duration::from_millis(100));
        assert!(e.to_string().contains("nests brackets"), "{e}");
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(read_npy(b"not an npy file").is_err());
        assert!(read_npy(&[]).is_err());
    }
}
