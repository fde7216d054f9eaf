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
    Tensor(HostTensor),
}
