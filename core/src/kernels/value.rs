//! Runtime values: tensors held in logical (row-major) order with typed storage, and the scalar
//! and list values kernels read as arguments.

use crate::dtype::ScalarType;
use crate::tensor::TensorData;

/// Typed element storage of a runtime tensor.
#[derive(Debug, Clone, PartialEq)]
pub enum Buf {
    F32(Vec<f32>),
    F64(Vec<f64>),
    I8(Vec<i8>),
    U8(Vec<u8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    Bool(Vec<bool>),
}

impl Buf {
    /// Zeroed storage for `n` elements of `dtype`, or `None` for types the runtime lacks.
    pub fn zeros(dtype: ScalarType, n: usize) -> Option<Buf> {
        use ScalarType::*;
        Some(match dtype {
            Float => Buf::F32(vec![0.0; n]),
            Double => Buf::F64(vec![0.0; n]),
            Char | QInt8 => Buf::I8(vec![0; n]),
            Byte | QUInt8 => Buf::U8(vec![0; n]),
            Short => Buf::I16(vec![0; n]),
            Int | QInt32 => Buf::I32(vec![0; n]),
            Long => Buf::I64(vec![0; n]),
            Bool => Buf::Bool(vec![false; n]),
            _ => return None,
        })
    }

    /// Decodes little-endian bytes.
    pub fn from_le_bytes(dtype: ScalarType, bytes: &[u8]) -> Option<Buf> {
        use ScalarType::*;
        macro_rules! chunks {
            ($t:ty, $n:expr) => {
                bytes
                    .chunks_exact($n)
                    .map(|c| <$t>::from_le_bytes(c.try_into().unwrap_or([0; $n])))
                    .collect()
            };
        }
        Some(match dtype {
            Float => Buf::F32(chunks!(f32, 4)),
            Double => Buf::F64(chunks!(f64, 8)),
            Char | QInt8 => Buf::I8(bytes.iter().map(|&b| b as i8).collect()),
            Byte | QUInt8 => Buf::U8(bytes.to_vec()),
            Short => Buf::I16(chunks!(i16, 2)),
            Int | QInt32 => Buf::I32(chunks!(i32, 4)),
            Long => Buf::I64(chunks!(i64, 8)),
            Bool => Buf::Bool(bytes.iter().map(|&b| b != 0).collect()),
            _ => return None,
        })
    }

    /// Encodes as little-endian bytes.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        match self {
            Buf::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Buf::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Buf::I8(v) => v.iter().map(|&x| x as u8).collect(),
            Buf::U8(v) => v.clone(),
            Buf::I16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Buf::I32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Buf::I64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Buf::Bool(v) => v.iter().map(|&b| u8::from(b)).collect(),
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            Buf::F32(v) => v.len(),
            Buf::F64(v) => v.len(),
            Buf::I8(v) => v.len(),
            Buf::U8(v) => v.len(),
            Buf::I16(v) => v.len(),
            Buf::I32(v) => v.len(),
            Buf::I64(v) => v.len(),
            Buf::Bool(v) => v.len(),
        }
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every element as `f64` (integers exactly, bool as 0/1).
    pub fn to_f64(&self) -> Vec<f64> {
        match self {
            Buf::F32(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Buf::F64(v) => v.clone(),
            Buf::I8(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Buf::U8(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Buf::I16(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Buf::I32(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Buf::I64(v) => v.iter().map(|&x| x as f64).collect(),
            Buf::Bool(v) => v.iter().map(|&x| f64::from(u8::from(x))).collect(),
        }
    }

    /// This buffer in `like`'s element type: itself when it already is, else converted as
    /// [`Buf::from_f64_like`] converts.
    pub fn into_like(self, like: &Buf) -> Buf {
        if std::mem::discriminant(like) == std::mem::discriminant(&self) {
            self
        } else {
            Buf::from_f64_like(like, &self.to_f64())
        }
    }

    /// Storage of `like`'s type holding `values`, converted as C++ `static_cast` does for
    /// in-range values (floats truncated toward zero for integer types, saturating here).
    pub fn from_f64_like(like: &Buf, values: &[f64]) -> Buf {
        match like {
            Buf::F32(_) => Buf::F32(values.iter().map(|&x| x as f32).collect()),
            Buf::F64(_) => Buf::F64(values.to_vec()),
            Buf::I8(_) => Buf::I8(values.iter().map(|&x| x as i8).collect()),
            Buf::U8(_) => Buf::U8(values.iter().map(|&x| x as u8).collect()),
            Buf::I16(_) => Buf::I16(values.iter().map(|&x| x as i16).collect()),
            Buf::I32(_) => Buf::I32(values.iter().map(|&x| x as i32).collect()),
            Buf::I64(_) => Buf::I64(values.iter().map(|&x| x as i64).collect()),
            Buf::Bool(_) => Buf::Bool(values.iter().map(|&x| x != 0.0).collect()),
        }
    }

    /// The elements at `idx`, in that order (callers keep every index in range).
    pub fn gather(&self, idx: &[usize]) -> Buf {
        macro_rules! pick {
            ($v:expr, $k:ident) => {
                Buf::$k(idx.iter().map(|&i| $v[i]).collect())
            };
        }
        match self {
            Buf::F32(v) => pick!(v, F32),
            Buf::F64(v) => pick!(v, F64),
            Buf::I8(v) => pick!(v, I8),
            Buf::U8(v) => pick!(v, U8),
            Buf::I16(v) => pick!(v, I16),
            Buf::I32(v) => pick!(v, I32),
            Buf::I64(v) => pick!(v, I64),
            Buf::Bool(v) => pick!(v, Bool),
        }
    }

    /// `parts` one after the other, `None` when their types differ.
    pub fn concat(parts: &[&Buf]) -> Option<Buf> {
        let first = parts.first()?;
        macro_rules! join {
            ($k:ident) => {{
                let mut out = Vec::new();
                for p in parts {
                    let Buf::$k(v) = p else { return None };
                    out.extend_from_slice(v);
                }
                Buf::$k(out)
            }};
        }
        Some(match first {
            Buf::F32(_) => join!(F32),
            Buf::F64(_) => join!(F64),
            Buf::I8(_) => join!(I8),
            Buf::U8(_) => join!(U8),
            Buf::I16(_) => join!(I16),
            Buf::I32(_) => join!(I32),
            Buf::I64(_) => join!(I64),
            Buf::Bool(_) => join!(Bool),
        })
    }
}

/// A tensor at run time: logical shape, row-major elements.
#[derive(Debug, Clone, PartialEq)]
pub struct HostTensor {
    pub dtype: ScalarType,
    pub shape: Vec<usize>,
    pub buf: Buf,
}

impl HostTensor {
    /// Number of elements of the shape.
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// As a `TensorData` (for `.npy` and comparisons).
    pub fn to_data(&self) -> TensorData {
        TensorData {
            dtype: self.dtype,
            shape: self.shape.clone(),
            bytes: self.buf.to_le_bytes(),
        }
    }
}

/// A value in the run's value table.
#[derive(Debug, Clone, PartialEq)]
pub enum RValue {
    None,
    Int(i64),
    Double(f64),
    Bool(bool),
    String(String),
    IntList(Vec<i64>),
    DoubleList(Vec<f64>),
    BoolList(Vec<bool>),
    /// Value indices.
    TensorList(Vec<usize>),
    /// Value indices (`None` for absent entries).
    OptionalTensorList(Vec<Option<usize>>),
    /// Shared: a run's value table starts as a copy of the prepared one, so constants (and the
    /// zeroed out tensors) are shared by reference, never copied; a kernel replaces the tensors
    /// it writes.
    Tensor(std::sync::Arc<HostTensor>),
}

impl RValue {
    /// A tensor value.
    pub fn tensor(t: HostTensor) -> RValue {
        RValue::Tensor(std::sync::Arc::new(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dtype_the_host_holds_round_trips_its_bytes() {
        use ScalarType::*;
        for (dtype, bytes) in [
            (Byte, vec![0u8, 200, 255]),
            (Char, vec![0, 0x80, 0x7f]),
            (QUInt8, vec![1, 2, 3]),
            (QInt8, vec![0xff, 0x01, 0x80]),
            (Short, (-3i16..3).flat_map(|x| x.to_le_bytes()).collect()),
            (Int, (-3i32..3).flat_map(|x| x.to_le_bytes()).collect()),
            (QInt32, (-3i32..3).flat_map(|x| x.to_le_bytes()).collect()),
            (
                Long,
                [i64::MIN, 0, i64::MAX]
                    .iter()
                    .flat_map(|x| x.to_le_bytes())
                    .collect(),
            ),
            (
                Float,
                [-1.5f32, 0.0, f32::MAX]
                    .iter()
                    .flat_map(|x| x.to_le_bytes())
                    .collect(),
            ),
            (
                Double,
                [-1.5f64, 1e300]
                    .iter()
                    .flat_map(|x| x.to_le_bytes())
                    .collect(),
            ),
            (Bool, vec![0, 1, 1]),
        ] {
            let buf = Buf::from_le_bytes(dtype, &bytes).expect("held");
            assert_eq!(buf.to_le_bytes(), bytes, "{dtype:?}");
            assert!(Buf::zeros(dtype, 2).is_some(), "{dtype:?}");
        }
        for dtype in [
            Half,
            BFloat16,
            QUInt4x2,
            Bits16,
            Float8E4M3FN,
            UInt16,
            UInt32,
            UInt64,
        ] {
            assert!(
                Buf::zeros(dtype, 2).is_none(),
                "{dtype:?} is not held and must be refused"
            );
        }
    }
}
