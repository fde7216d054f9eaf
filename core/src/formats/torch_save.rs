//! A restricted reader for `torch.save` archives (the weights, constants and example inputs
//! stored in an ETRecord): a zip with `<prefix>/data.pkl` and raw storages under
//! `<prefix>/data/<key>`. The pickle is interpreted by a small stack machine that knows
//! containers, numbers, strings and the handful of torch globals that rebuild tensors; any
//! other global is refused. Nothing is executed.

use std::collections::BTreeMap;
use std::io::{Cursor, Read};
use std::rc::Rc;

use crate::dtype::ScalarType;
use crate::error::{Error, Result};
use crate::tensor::{checked_tensor_size, TensorData};

/// Largest storage read from an archive.
const MAX_STORAGE_BYTES: u64 = 512 << 20;
/// Most bytes one archive may decompress to (pickle and storages together): a zip bomb stops
/// here, whatever its headers claim.
pub const MAX_ARCHIVE_BYTES: u64 = 512 << 20;
/// Most tensor bytes one archive may rebuild (zero strides can repeat a small storage).
pub const MAX_TENSOR_TOTAL_BYTES: u64 = 512 << 20;
/// Deepest nesting of containers the reader builds (a real state dict nests 2–3 levels).
pub const MAX_DEPTH: u32 = 64;

/// A value the restricted unpickler can build. Containers, strings and tensors are shared
/// (`Rc`), so a memoised value fetched many times costs nothing, and every container knows its
/// nesting depth, so no pickle can build one deeper than [`MAX_DEPTH`].
#[derive(Debug, Clone, PartialEq)]
pub enum PyValue {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Rc<str>),
    Tuple(Rc<Seq>),
    List(Rc<Seq>),
    Dict(Rc<Pairs>),
    Tensor(Rc<TensorData>),
    /// A storage reference: element type and archive key.
    Storage(ScalarType, Rc<str>),
    /// An allowed global not yet applied (a rebuild function or a type).
    Global(Rc<str>),
    /// A `MARK` on the stack.
    Mark,
}

/// Items of a tuple or list, with the nesting depth of the container.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Seq {
    pub items: Vec<PyValue>,
    depth: u32,
}

/// Entries of a dict, with the nesting depth of the container.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Pairs {
    pub items: Vec<(PyValue, PyValue)>,
    depth: u32,
}

impl PyValue {
    /// Containers nested in this value (0 for a scalar).
    pub fn depth(&self) -> u32 {
        match self {
            PyValue::Tuple(s) | PyValue::List(s) => s.depth,
            PyValue::Dict(d) => d.depth,
            _ => 0,
        }
    }
}

fn nested(child: &PyValue) -> Result<u32> {
    let d = child.depth() + 1;
    if d > MAX_DEPTH {
        return Err(bad(format!("containers nested deeper than {MAX_DEPTH}")));
    }
    Ok(d)
}

fn seq(items: Vec<PyValue>) -> Result<Rc<Seq>> {
    let mut depth = 1;
    for v in &items {
        depth = depth.max(nested(v)?);
    }
    Ok(Rc::new(Seq { items, depth }))
}

fn bad(detail: impl Into<String>) -> Error {
    Error::invalid("torch.save pickle", detail)
}

const ALLOWED: &[&str] = &[
    "torch._utils._rebuild_tensor_v2",
    "torch._utils._rebuild_parameter",
    "torch._tensor._rebuild_from_type_v2",
    "torch.Tensor",
    "torch.nn.parameter.Parameter",
    "collections.OrderedDict",
];

fn storage_type(name: &str) -> Option<ScalarType> {
    Some(match name.strip_prefix("torch.")? {
        "FloatStorage" => ScalarType::Float,
        "DoubleStorage" => ScalarType::Double,
        "HalfStorage" => ScalarType::Half,
        "BFloat16Storage" => ScalarType::BFloat16,
        "LongStorage" => ScalarType::Long,
        "IntStorage" => ScalarType::Int,
        "ShortStorage" => ScalarType::Short,
        "CharStorage" => ScalarType::Char,
        "ByteStorage" => ScalarType::Byte,
        "BoolStorage" => ScalarType::Bool,
        _ => return None,
    })
}

/// Reads a `torch.save` archive held in memory.
pub fn load(bytes: &[u8]) -> Result<PyValue> {
    let mut budget = MAX_ARCHIVE_BYTES;
    let mut zip =
        zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| Error::Zip(e.to_string()))?;
    let pkl_name = (0..zip.len())
        .filter_map(|i| {
            zip.by_index(i)
                .ok()
                .and_then(|f| f.name().ok().map(|n| n.to_string()))
        })
        .find(|n| n.ends_with("data.pkl"))
        .ok_or_else(|| bad("no data.pkl in the archive"))?;
    let prefix = pkl_name.trim_end_matches("data.pkl").to_string();
    // reads at most what the budget allows, whatever the entry's header claims
    let mut read_entry =
        |zip: &mut zip::ZipArchive<Cursor<&[u8]>>, name: &str| -> Result<Vec<u8>> {
            let f = zip
                .by_name(name)
                .map_err(|e| Error::Zip(format!("{name}: {e}")))?;
            let limit = budget.min(MAX_STORAGE_BYTES);
            let too_large = |claimed: u64| Error::TooLarge {
                what: format!("torch.save entry {name} (with the archive's other entries)"),
                claimed: claimed.into(),
                limit,
            };
            if f.size() > limit {
                return Err(too_large(f.size()));
            }
            let mut out = Vec::with_capacity(f.size() as usize);
            f.take(limit + 1)
                .read_to_end(&mut out)
                .map_err(|e| Error::Zip(format!("{name}: {e}")))?;
            if out.len() as u64 > limit {
                return Err(too_large(out.len() as u64));
            }
            budget -= out.len() as u64;
            Ok(out)
        };
    let pkl = read_entry(&mut zip, &pkl_name)?;
    let mut storages: BTreeMap<String, Rc<Vec<u8>>> = BTreeMap::new();
    let mut fetch = |key: &str| -> Result<Rc<Vec<u8>>> {
        if let Some(b) = storages.get(key) {
            return Ok(b.clone());
        }
        let b = Rc::new(read_entry(&mut zip, &format!("{prefix}data/{key}"))?);
        storages.insert(key.to_string(), b.clone());
        Ok(b)
    };
    Unpickler::new(&pkl).run(&mut fetch)
}

type Fetch<'a> = dyn FnMut(&str) -> Result<Rc<Vec<u8>>> + 'a;

struct Unpickler<'a> {
    data: &'a [u8],
    pos: usize,
    stack: Vec<PyValue>,
    memo: BTreeMap<u32, PyValue>,
    /// Tensor bytes still allowed to be rebuilt.
    tensor_budget: u64,
}

impl<'a> Unpickler<'a> {
    fn new(data: &'a [u8]) -> Self {
        Unpickler {
            data,
            pos: 0,
            stack: Vec::new(),
            memo: BTreeMap::new(),
            tensor_budget: MAX_TENSOR_TOTAL_BYTES,
        }
    }

    fn take(&mut self, n: usize) -> Result<&[u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| bad(format!("truncated at byte {}", self.pos)))?;
        let s = &self.data[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> Result<u16> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn line(&mut self) -> Result<String> {
        let start = self.pos;
        let nl = self.data[start..]
            .iter()
            .position(|&b| b == b'\n')
            .ok_or_else(|| bad("unterminated GLOBAL"))?;
        self.pos = start + nl + 1;
        Ok(String::from_utf8_lossy(&self.data[start..start + nl]).into_owned())
    }

    fn pop(&mut self) -> Result<PyValue> {
        self.stack.pop().ok_or_else(|| bad("stack underflow"))
    }

    fn pop_mark(&mut self) -> Result<Vec<PyValue>> {
        let at = self
            .stack
            .iter()
            .rposition(|v| *v == PyValue::Mark)
            .ok_or_else(|| bad("no MARK"))?;
        let items = self.stack.split_off(at + 1);
        self.stack.pop();
        Ok(items)
    }

    fn run(mut self, fetch: &mut Fetch<'_>) -> Result<PyValue> {
        loop {
            let op = self.u8()?;
            match op {
                0x80 => {
                    self.u8()?;
                } // PROTO
                0x95 => {
                    self.take(8)?;
                } // FRAME
                b'.' => return self.pop(),
                b'(' => self.stack.push(PyValue::Mark),
                b'}' => self.stack.push(PyValue::Dict(Rc::new(Pairs {
                    items: Vec::new(),
                    depth: 1,
                }))),
                b']' => self.stack.push(PyValue::List(seq(Vec::new())?)),
                b')' => self.stack.push(PyValue::Tuple(seq(Vec::new())?)),
                b'N' => self.stack.push(PyValue::None),
                0x88 => self.stack.push(PyValue::Bool(true)),
                0x89 => self.stack.push(PyValue::Bool(false)),
                b'K' => {
                    let v = self.u8()?;
                    self.stack.push(PyValue::Int(i64::from(v)));
                }
                b'M' => {
                    let v = self.u16()?;
                    self.stack.push(PyValue::Int(i64::from(v)));
                }
                b'J' => {
                    let v = self.u32()? as i32;
                    self.stack.push(PyValue::Int(i64::from(v)));
                }
                0x8a => {
                    // LONG1
                    let n = self.u8()? as usize;
                    let b = self.take(n)?;
                    if n > 8 {
                        return Err(bad("integer wider than 64 bits"));
                    }
                    let mut v: i64 = 0;
                    for (i, &x) in b.iter().enumerate() {
                        v |= i64::from(x) << (8 * i);
                    }
                    if n > 0 && n < 8 && b[n - 1] & 0x80 != 0 {
                        v -= 1i64 << (8 * n);
                    }
                    self.stack.push(PyValue::Int(v));
                }
                b'G' => {
                    let b = self.take(8)?;
                    let mut a = [0u8; 8];
                    a.copy_from_slice(b);
                    self.stack.push(PyValue::Float(f64::from_be_bytes(a)));
                }
                b'X' => {
                    let n = self.u32()? as usize;
                    let s: Rc<str> = String::from_utf8_lossy(self.take(n)?).into();
                    self.stack.push(PyValue::Str(s));
                }
                0x8c => {
                    let n = self.u8()? as usize;
                    let s: Rc<str> = String::from_utf8_lossy(self.take(n)?).into();
                    self.stack.push(PyValue::Str(s));
                }
                b'q' => {
                    let k = u32::from(self.u8()?);
                    let top = self
                        .stack
                        .last()
                        .cloned()
                        .ok_or_else(|| bad("BINPUT on empty stack"))?;
                    self.memo.insert(k, top);
                }
                b'r' => {
                    let k = self.u32()?;
                    let top = self
                        .stack
                        .last()
                        .cloned()
                        .ok_or_else(|| bad("LONG_BINPUT on empty stack"))?;
                    self.memo.insert(k, top);
                }
                0x94 => {
                    let k = self.memo.len() as u32;
                    let top = self
                        .stack
                        .last()
                        .cloned()
                        .ok_or_else(|| bad("MEMOIZE on empty stack"))?;
                    self.memo.insert(k, top);
                }
                b'h' | b'j' => {
                    let k = if op == b'h' {
                        u32::from(self.u8()?)
                    } else {
                        self.u32()?
                    };
                    let v = self
                        .memo
                        .get(&k)
                        .cloned()
                        .ok_or_else(|| bad(format!("memo {k} unset")))?;
                    self.stack.push(v);
                }
                b't' => {
                    let items = self.pop_mark()?;
                    self.stack.push(PyValue::Tuple(seq(items)?));
                }
                0x85..=0x87 => {
                    let n = usize::from(op - 0x84);
                    if self.stack.len() < n {
                        return Err(bad("TUPLE on a short stack"));
                    }
                    let items = self.stack.split_off(self.stack.len() - n);
                    self.stack.push(PyValue::Tuple(seq(items)?));
                }
                b'l' => {
                    let items = self.pop_mark()?;
                    self.stack.push(PyValue::List(seq(items)?));
                }
                b'a' => {
                    let v = self.pop()?;
                    self.append(vec![v])?;
                }
                b'e' => {
                    let items = self.pop_mark()?;
                    self.append(items)?;
                }
                b's' => {
                    let v = self.pop()?;
                    let k = self.pop()?;
                    self.set_items(vec![k, v])?;
                }
                b'u' => {
                    let items = self.pop_mark()?;
                    self.set_items(items)?;
                }
                b'c' => {
                    let module = self.line()?;
                    let name = self.line()?;
                    let full = format!("{module}.{name}");
                    if !ALLOWED.contains(&full.as_str()) && storage_type(&full).is_none() {
                        return Err(bad(format!("refusing global {full} (only tensors, storages and containers are read)")));
                    }
                    self.stack.push(PyValue::Global(full.into()));
                }
                b'Q' => {
                    // BINPERSID: ('storage', StorageType, key, location, numel)
                    let pid = self.pop()?;
                    let PyValue::Tuple(items) = pid else {
                        return Err(bad("persistent id is not a tuple"));
                    };
                    let (Some(PyValue::Global(ty)), Some(PyValue::Str(key))) =
                        (items.items.get(1), items.items.get(2))
                    else {
                        return Err(bad("persistent id is not a storage reference"));
                    };
                    let dtype = storage_type(ty)
                        .ok_or_else(|| bad(format!("unknown storage type {ty}")))?;
                    let _ = fetch(key)?;
                    let key = key.clone();
                    self.stack.push(PyValue::Storage(dtype, key));
                }
                b'R' => {
                    let args = self.pop()?;
                    let func = self.pop()?;
                    let result = self.reduce(func, args, fetch)?;
                    self.stack.push(result);
                }
                b'b' => {
                    // BUILD: state applied to the object; dict/OrderedDict state is ignored
                    self.pop()?;
                }
                other => {
                    return Err(bad(format!(
                        "unsupported pickle opcode 0x{other:02x} at byte {}",
                        self.pos - 1
                    )))
                }
            }
        }
    }

    /// Appends to the list on top of the stack (a copy if it is shared with the memo).
    fn append(&mut self, items: Vec<PyValue>) -> Result<()> {
        let mut depth = 1;
        for v in &items {
            depth = depth.max(nested(v)?);
        }
        if let Some(PyValue::List(l)) = self.stack.last_mut() {
            let l = Rc::make_mut(l);
            l.items.extend(items);
            l.depth = l.depth.max(depth);
        }
        Ok(())
    }

    /// Sets key/value pairs on the dict on top of the stack.
    fn set_items(&mut self, items: Vec<PyValue>) -> Result<()> {
        let mut depth = 1;
        for v in &items {
            depth = depth.max(nested(v)?);
        }
        if let Some(PyValue::Dict(d)) = self.stack.last_mut() {
            let d = Rc::make_mut(d);
            let mut it = items.into_iter();
            while let (Some(k), Some(v)) = (it.next(), it.next()) {
                d.items.push((k, v));
            }
            d.depth = d.depth.max(depth);
        }
        Ok(())
    }

    /// Applies an allowed global. `_rebuild_from_type_v2` applies its inner function once (no
    /// recursion on what the pickle nests).
    fn reduce(&mut self, func: PyValue, args: PyValue, fetch: &mut Fetch<'_>) -> Result<PyValue> {
        let (mut func, mut args) = (func, args);
        for _ in 0..2 {
            let PyValue::Global(name) = &func else {
                return Err(bad("REDUCE of a non-global"));
            };
            let PyValue::Tuple(t) = &args else {
                return Err(bad("REDUCE arguments are not a tuple"));
            };
            if &**name == "torch._tensor._rebuild_from_type_v2" {
                // (func, type, args, state): apply func to args
                let (Some(f), Some(_ty), Some(inner)) =
                    (t.items.first(), t.items.get(1), t.items.get(2))
                else {
                    return Err(bad("_rebuild_from_type_v2 arguments"));
                };
                (func, args) = (f.clone(), inner.clone());
                continue;
            }
            return self.apply(name.clone(), t.clone(), fetch);
        }
        Err(bad("_rebuild_from_type_v2 nested in itself"))
    }

    fn apply(&mut self, name: Rc<str>, args: Rc<Seq>, fetch: &mut Fetch<'_>) -> Result<PyValue> {
        let args = &args.items;
        match &*name {
            "collections.OrderedDict" => Ok(PyValue::Dict(Rc::new(Pairs {
                items: Vec::new(),
                depth: 1,
            }))),
            "torch._utils._rebuild_parameter" => args
                .first()
                .cloned()
                .ok_or_else(|| bad("_rebuild_parameter without data")),
            "torch._utils._rebuild_tensor_v2" => {
                let int = |v: Option<&PyValue>| match v {
                    Some(PyValue::Int(i)) => Ok(*i),
                    _ => Err(bad("tensor offset is not an int")),
                };
                let ints = |v: Option<&PyValue>| -> Result<Vec<i64>> {
                    match v {
                        Some(PyValue::Tuple(t)) | Some(PyValue::List(t)) => {
                            t.items.iter().map(|x| int(Some(x))).collect()
                        }
                        _ => Err(bad("tensor size/stride is not a tuple")),
                    }
                };
                let Some(PyValue::Storage(dtype, key)) = args.first() else {
                    return Err(bad("tensor without storage"));
                };
                let offset = int(args.get(1))?;
                let size = ints(args.get(2))?;
                let stride = ints(args.get(3))?;
                let storage = fetch(key)?;
                let t = tensor_from_storage(*dtype, &storage, offset, &size, &stride)?;
                self.tensor_budget = self
                    .tensor_budget
                    .checked_sub(t.bytes.len() as u64)
                    .ok_or_else(|| Error::TooLarge {
                        what: "the tensors of one torch.save archive, together".into(),
                        claimed: u128::from(MAX_TENSOR_TOTAL_BYTES) + 1,
                        limit: MAX_TENSOR_TOTAL_BYTES,
                    })?;
                Ok(PyValue::Tensor(Rc::new(t)))
            }
            other => Err(bad(format!("refusing to call {other}"))),
        }
    }
}

fn tensor_from_storage(
    dtype: ScalarType,
    storage: &[u8],
    offset: i64,
    size: &[i64],
    stride: &[i64],
) -> Result<TensorData> {
    let elem = dtype
        .element_size()
        .ok_or_else(|| bad(format!("storage of {}", dtype.name())))?;
    checked_tensor_size(size.iter().copied(), dtype, "torch.save tensor")?;
    if size.len() != stride.len() || offset < 0 || stride.iter().any(|&s| s < 0) {
        return Err(bad(format!(
            "size {size:?} / stride {stride:?} / offset {offset}"
        )));
    }
    let shape: Vec<usize> = size.iter().map(|&s| s as usize).collect();
    let numel: usize = shape.iter().product();
    // the last element's index, in u128 so neither offset nor strides can wrap it
    let last: u128 = offset as u128
        + shape
            .iter()
            .zip(stride)
            .map(|(&d, &s)| (d as u128).saturating_sub(1) * s as u128)
            .sum::<u128>();
    if numel > 0 && (last + 1) * elem as u128 > storage.len() as u128 {
        return Err(bad(format!(
            "tensor (size {size:?}, stride {stride:?}, offset {offset}) reaches past its {}-byte storage",
            storage.len()
        )));
    }
    let mut out = Vec::with_capacity(numel * elem);
    let mut idx = vec![0usize; shape.len()];
    for _ in 0..numel {
        let at = offset as usize
            + idx
                .iter()
                .zip(stride)
                .map(|(&i, &s)| i * s as usize)
                .sum::<usize>();
        out.extend_from_slice(&storage[at * elem..(at + 1) * elem]);
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    TensorData::new(dtype, shape, out)
}

/// The `name → tensor` entries of a loaded state dict (non-tensor entries skipped). The same
/// tensor may be named many times; the copies together stay within [`MAX_TENSOR_TOTAL_BYTES`].
pub fn tensors_of(v: &PyValue) -> Result<BTreeMap<String, TensorData>> {
    let mut out = BTreeMap::new();
    let mut total: u64 = 0;
    if let PyValue::Dict(d) = v {
        for (k, v) in &d.items {
            if let (PyValue::Str(k), PyValue::Tensor(t)) = (k, v) {
                total = total.saturating_add(t.bytes.len() as u64);
                if total > MAX_TENSOR_TOTAL_BYTES {
                    return Err(Error::TooLarge {
                        what: "the state dict's tensors, together".into(),
                        claimed: total.into(),
                        limit: MAX_TENSOR_TOTAL_BYTES,
                    });
                }
                out.insert(k.to_string(), TensorData::clone(t));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pickle_calling_os_system_is_refused() {
        // protocol 2: GLOBAL 'os system' ( 'echo' ) REDUCE STOP
        let pkl = b"\x80\x02cos\nsystem\nX\x04\x00\x00\x00echo\x85R.";
        let mut fetch = |_: &str| -> Result<Rc<Vec<u8>>> { Ok(Rc::new(Vec::new())) };
        let e = Unpickler::new(pkl).run(&mut fetch).expect_err("refused");
        assert!(e.to_string().contains("refusing global os.system"), "{e}");
    }

    #[test]
    fn truncated_pickles_are_errors() {
        let mut fetch = |_: &str| -> Result<Rc<Vec<u8>>> { Ok(Rc::new(Vec::new())) };
        assert!(Unpickler::new(b"\x80\x02}X\xff\xff")
            .run(&mut fetch)
            .is_err());
    }
}
