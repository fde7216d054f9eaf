//! ExecuTorch's `ScalarType` as a plain Rust enum, with element sizes and names.

use serde::Serialize;

/// Element type of a tensor, numbered as ExecuTorch's `ScalarType` (and `c10::ScalarType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(into = "String")]
pub enum ScalarType {
    Byte,
    Char,
    Short,
    Int,
    Long,
    Half,
    Float,
    Double,
    Bool,
    QInt8,
    QUInt8,
    QInt32,
    BFloat16,
    QUInt4x2,
    QUInt2x4,
    Bits16,
    Float8E5M2,
    Float8E4M3FN,
    Float8E5M2FNUZ,
    Float8E4M3FNUZ,
    UInt16,
    UInt32,
    UInt64,
    /// A code this reader does not know; kept so nothing is silently renamed.
    Unknown(i8),
}

impl ScalarType {
    /// From ExecuTorch's numeric code (`scalar_type.fbs`).
    pub fn from_code(code: i8) -> Self {
        use ScalarType::*;
        match code {
            0 => Byte,
            1 => Char,
            2 => Short,
            3 => Int,
            4 => Long,
            5 => Half,
            6 => Float,
            7 => Double,
            11 => Bool,
            12 => QInt8,
            13 => QUInt8,
            14 => QInt32,
            15 => BFloat16,
            16 => QUInt4x2,
            17 => QUInt2x4,
            22 => Bits16,
            23 => Float8E5M2,
            24 => Float8E4M3FN,
            25 => Float8E5M2FNUZ,
            26 => Float8E4M3FNUZ,
            27 => UInt16,
            28 => UInt32,
            29 => UInt64,
            other => Unknown(other),
        }
    }

    /// ExecuTorch's numeric code (`scalar_type.fbs`): the inverse of [`ScalarType::from_code`].
    pub fn code(self) -> i8 {
        use ScalarType::*;
        match self {
            Byte => 0,
            Char => 1,
            Short => 2,
            Int => 3,
            Long => 4,
            Half => 5,
            Float => 6,
            Double => 7,
            Bool => 11,
            QInt8 => 12,
            QUInt8 => 13,
            QInt32 => 14,
            BFloat16 => 15,
            QUInt4x2 => 16,
            QUInt2x4 => 17,
            Bits16 => 22,
            Float8E5M2 => 23,
            Float8E4M3FN => 24,
            Float8E5M2FNUZ => 25,
            Float8E4M3FNUZ => 26,
            UInt16 => 27,
            UInt32 => 28,
            UInt64 => 29,
            Unknown(c) => c,
        }
    }

    /// From the `torch.export` JSON schema's `ScalarType` numbering (used in ETRecord programs).
    pub fn from_export_code(code: i64) -> Self {
        use ScalarType::*;
        match code {
            1 => Byte,
            2 => Char,
            3 => Short,
            4 => Int,
            5 => Long,
            6 => Half,
            7 => Float,
            8 => Double,
            12 => Bool,
            13 => BFloat16,
            28 => UInt16,
            _ => Unknown(i8::try_from(code).unwrap_or(i8::MIN)),
        }
    }

    /// Bytes per element, or `None` for sub-byte or unknown types.
    pub fn element_size(self) -> Option<usize> {
        use ScalarType::*;
        Some(match self {
            Byte | Char | Bool | QInt8 | QUInt8 | Float8E5M2 | Float8E4M3FN | Float8E5M2FNUZ
            | Float8E4M3FNUZ => 1,
            Short | Half | BFloat16 | Bits16 | UInt16 => 2,
            Int | Float | QInt32 | UInt32 => 4,
            Long | Double | UInt64 => 8,
            QUInt4x2 | QUInt2x4 | Unknown(_) => return None,
        })
    }

    /// The name ExecuTorch uses in its schemas and flatc JSON dumps (`FLOAT`, `CHAR`, ...).
    pub fn name(self) -> String {
        use ScalarType::*;
        match self {
            Byte => "BYTE",
            Char => "CHAR",
            Short => "SHORT",
            Int => "INT",
            Long => "LONG",
            Half => "HALF",
            Float => "FLOAT",
            Double => "DOUBLE",
            Bool => "BOOL",
            QInt8 => "QINT8",
            QUInt8 => "QUINT8",
            QInt32 => "QINT32",
            BFloat16 => "BFLOAT16",
            QUInt4x2 => "QUINT4X2",
            QUInt2x4 => "QUINT2X4",
            Bits16 => "BITS16",
            Float8E5M2 => "FLOAT8E5M2",
            Float8E4M3FN => "FLOAT8E4M3FN",
            Float8E5M2FNUZ => "FLOAT8E5M2FNUZ",
            Float8E4M3FNUZ => "FLOAT8E4M3FNUZ",
            UInt16 => "UINT16",
            UInt32 => "UINT32",
            UInt64 => "UINT64",
            Unknown(code) => return format!("UNKNOWN({code})"),
        }
        .to_string()
    }

    /// The numpy/torch short name (`float32`, `int8`, ...), used in tables and `.npy` files.
    pub fn short_name(self) -> String {
        use ScalarType::*;
        match self {
            Byte => "uint8",
            Char | QInt8 => "int8",
            Short => "int16",
            Int | QInt32 => "int32",
            Long => "int64",
            Half => "float16",
            Float => "float32",
            Double => "float64",
            Bool => "bool",
            QUInt8 => "uint8",
            BFloat16 => "bfloat16",
            UInt16 => "uint16",
            UInt32 => "uint32",
            UInt64 => "uint64",
            other => return other.name().to_lowercase(),
        }
        .to_string()
    }

    /// Whether the elements are integers (quantized types included).
    pub fn is_integer(self) -> bool {
        use ScalarType::*;
        matches!(
            self,
            Byte | Char | Short | Int | Long | QInt8 | QUInt8 | QInt32 | UInt16 | UInt32 | UInt64
        )
    }
}

impl From<ScalarType> for String {
    fn from(t: ScalarType) -> String {
        t.name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_through_names() {
        assert_eq!(ScalarType::from_code(6), ScalarType::Float);
        assert_eq!(ScalarType::from_code(1).name(), "CHAR");
        assert_eq!(ScalarType::from_code(99), ScalarType::Unknown(99));
        assert_eq!(ScalarType::from_export_code(7), ScalarType::Float);
        assert_eq!(ScalarType::from_export_code(2).short_name(), "int8");
        assert_eq!(ScalarType::Long.element_size(), Some(8));
        assert_eq!(ScalarType::QUInt4x2.element_size(), None);
    }
}
