//! BundledProgram (`.bpte`): an embedded `.pte` plus per-method test cases (inputs and expected
//! outputs). Identifier `BP08` at bytes 4..8.

use crate::dtype::ScalarType;
use crate::error::{Error, Result};
use crate::formats::flatbuf::{
    check_identifier, root_accepting_unaligned_empty_vectors, verifier_options,
};
use crate::formats::generated::bundled_program::bundled_program_flatbuffer as fb;
use crate::formats::pte::Program;
use crate::tensor::{checked_tensor_size, undo_dim_order, TensorData};

const KIND: &str = "BundledProgram (.bpte)";

/// A value of a test case.
#[derive(Debug, Clone, PartialEq)]
pub enum BundledValue {
    /// In logical (row-major) order; `dim_order` already undone.
    Tensor(TensorData),
    Int(i64),
    Bool(bool),
    Double(f64),
    /// A value whose union tag was NONE.
    Unset,
}

/// One test case of a method.
#[derive(Debug, Clone, PartialEq)]
pub struct TestCase {
    pub inputs: Vec<BundledValue>,
    pub expected_outputs: Vec<BundledValue>,
}

/// The test cases of one method.
#[derive(Debug, Clone, PartialEq)]
pub struct TestSuite {
    pub method_name: String,
    pub test_cases: Vec<TestCase>,
}

/// A parsed BundledProgram.
#[derive(Debug, Clone)]
pub struct BundledProgram {
    pub version: u32,
    pub suites: Vec<TestSuite>,
    pub program: Program,
}

impl BundledProgram {
    /// Parses a `.bpte` and the program it embeds.
    pub fn parse(bytes: &[u8]) -> Result<BundledProgram> {
        check_identifier(bytes, 4, "BP08", KIND)?;
        let opts = verifier_options(bytes.len());
        let mut realigned = None;
        let root = root_accepting_unaligned_empty_vectors(
            bytes,
            &mut realigned,
            |b| fb::root_as_bundled_program_with_opts(&opts, b),
            |b| fb::root_as_bundled_program_with_opts(&opts, b).map(|_| ()),
        )
        .map_err(|e| Error::Corrupt {
            kind: KIND,
            detail: e.to_string(),
        })?;
        let mut suites = Vec::new();
        for s in root.method_test_suites().into_iter().flatten() {
            let mut test_cases = Vec::new();
            for (ci, c) in s.test_cases().into_iter().flatten().enumerate() {
                let values = |v: Option<
                    flatbuffers::Vector<'_, flatbuffers::ForwardsUOffset<fb::Value<'_>>>,
                >,
                              what: &str| {
                    v.into_iter()
                        .flatten()
                        .enumerate()
                        .map(|(k, x)| read_value(&x, &format!("test case {ci} {what}[{k}]")))
                        .collect::<Result<Vec<_>>>()
                };
                test_cases.push(TestCase {
                    inputs: values(c.inputs(), "inputs")?,
                    expected_outputs: values(c.expected_outputs(), "expected_outputs")?,
                });
            }
            suites.push(TestSuite {
                method_name: s.method_name().unwrap_or_default().to_string(),
                test_cases,
            });
        }
        let embedded = root
            .program()
            .ok_or_else(|| Error::invalid("bundled program", "no embedded program"))?;
        let program = Program::parse(embedded.bytes().to_vec())
            .map_err(|e| Error::invalid("embedded program", e.to_string()))?;
        Ok(BundledProgram {
            version: root.version(),
            suites,
            program,
        })
    }

    /// Total number of test cases over all methods.
    pub fn test_case_count(&self) -> usize {
        self.suites.iter().map(|s| s.test_cases.len()).sum()
    }
}

fn read_value(v: &fb::Value<'_>, what: &str) -> Result<BundledValue> {
    use fb::ValueUnion as U;
    Ok(match v.val_type() {
        U::NONE => BundledValue::Unset,
        U::Int => BundledValue::Int(v.val_as_int().map(|x| x.int_val()).unwrap_or(0)),
        U::Bool => BundledValue::Bool(v.val_as_bool().map(|x| x.bool_val()).unwrap_or(false)),
        U::Double => BundledValue::Double(v.val_as_double().map(|x| x.double_val()).unwrap_or(0.0)),
        U::Tensor => {
            let t = v
                .val_as_tensor()
                .ok_or_else(|| Error::invalid(what, "tag says Tensor but no table"))?;
            let dtype = ScalarType::from_code(t.scalar_type().0);
            let sizes: Vec<i64> = t
                .sizes()
                .map(|s| s.iter().map(i64::from).collect())
                .unwrap_or_default();
            let (_, nbytes) = checked_tensor_size(sizes.iter().copied(), dtype, what)?;
            let data = t.data().map(|d| d.bytes()).unwrap_or(&[]);
            if data.len() as u64 != nbytes {
                return Err(Error::invalid(
                    what,
                    format!(
                        "holds {} bytes, shape {sizes:?} of {} needs {nbytes}",
                        data.len(),
                        dtype.name()
                    ),
                ));
            }
            let shape: Vec<usize> = sizes.iter().map(|&s| s as usize).collect();
            let dim_order: Vec<u8> = t
                .dim_order()
                .map(|d| d.iter().collect())
                .unwrap_or_default();
            let elem = dtype.element_size().ok_or_else(|| {
                Error::invalid(what, format!("unsupported element type {}", dtype.name()))
            })?;
            let logical = undo_dim_order(&shape, &dim_order, elem, data)?;
            BundledValue::Tensor(TensorData::new(dtype, shape, logical)?)
        }
        other => {
            return Err(Error::invalid(
                what,
                format!("unknown value tag {}", other.0),
            ))
        }
    })
}
