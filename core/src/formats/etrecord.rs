//! ETRecord: a zip with an empty `ETRECORD_V0` entry, the JSON programs of each lowering stage,
//! `debug_handle_map`, `delegate_map` and `torch.save` pickles. Pickles are listed as opaque entries
//! and never executed.

use std::collections::BTreeMap;
use std::io::{BufRead, Cursor, Read};

use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::formats::export_json::ExportedGraph;

/// Largest single entry this reader decompresses (refuses zip bombs before allocating).
pub const MAX_ENTRY_BYTES: u64 = 512 << 20;

/// What a zip entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// The `ETRECORD_V0` marker.
    Marker,
    /// A `torch.export` JSON program (a stage).
    Program,
    /// A JSON map (`debug_handle_map`, `delegate_map`, ...).
    Json,
    /// A `torch.save` archive or pickle: listed, never executed.
    Pickle,
    /// Anything else (text such as `export_graph_id`).
    Other,
}

/// One zip entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    pub name: String,
    pub size: u64,
    pub kind: EntryKind,
}

/// A lowering stage stored in the ETRecord.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stage {
    /// The entry name, e.g. `exported_program`, `edge_dialect_exported_program/forward`,
    /// `edge_after_transform/forward`.
    pub name: String,
    pub graph: ExportedGraph,
}

/// A delegate recorded in `delegate_map`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DelegateInfo {
    pub instruction_id: usize,
    pub backend: String,
    /// The delegate's own debug map (as JSON).
    pub delegate_map: Value,
}

/// A parsed ETRecord.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ETRecord {
    pub entries: Vec<Entry>,
    /// Stages in pipeline order (exported, edge, `graph_map` extras, ET dialect).
    pub stages: Vec<Stage>,
    /// method → instruction id → debug handles.
    pub debug_handle_map: BTreeMap<String, BTreeMap<usize, Vec<u32>>>,
    /// method → delegates.
    pub delegate_map: BTreeMap<String, Vec<DelegateInfo>>,
    /// method → instruction id → number of outputs.
    pub instruction_id_to_num_outs: BTreeMap<String, BTreeMap<usize, u64>>,
    /// The bytes of the `torch.save` entries (weights, constants, example inputs), read only
    /// through [`crate::formats::torch_save`].
    #[serde(skip)]
    pub archives: BTreeMap<String, Vec<u8>>,
    /// Whether it was read by [`ETRecord::parse_reader_releasing`]: no stage graphs and no
    /// weights (names and maps kept).
    #[serde(skip)]
    pub released: bool,
}

/// Takes each stage's graph (entry name, graph) as [`ETRecord::parse_reader_releasing`] reads it.
pub type StageSink<'a> = dyn FnMut(&str, ExportedGraph) + 'a;

fn zip_err(e: impl std::fmt::Display) -> Error {
    Error::Zip(e.to_string())
}

fn stage_rank(name: &str) -> u8 {
    if name == "exported_program" {
        0
    } else if name.starts_with("edge_dialect_exported_program") {
        1
    } else if name.starts_with("et_dialect") {
        3
    } else {
        2
    }
}

/// All entries of one ETRecord together, decompressed (a zip bomb stops here).
pub const MAX_TOTAL_BYTES: u64 = 1 << 30;

/// A reader that counts what passed through it.
struct Counted<R> {
    inner: R,
    read: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

impl ETRecord {
    /// Parses an ETRecord zip held in memory.
    pub fn parse(bytes: &[u8]) -> Result<ETRecord> {
        Self::parse_reader(Cursor::new(bytes))
    }

    /// Parses an ETRecord zip from a seekable reader (a file: the archive is never held in
    /// memory whole).
    pub fn parse_reader(reader: impl Read + std::io::Seek) -> Result<ETRecord> {
        Self::parse_entries(reader, None)
    }

    /// [`ETRecord::parse_reader`] for a caller that builds what it needs from each stage's
    /// graph and reads the file again for the rest: every stage's graph goes to `each_stage`
    /// (entry name, graph) as soon as it is read, so at most one exists at a time; the record
    /// keeps the stage names and maps, no graphs and no weights (it says so: `released`).
    pub fn parse_reader_releasing(
        reader: impl Read + std::io::Seek,
        each_stage: &mut StageSink<'_>,
    ) -> Result<ETRecord> {
        Self::parse_entries(reader, Some(each_stage))
    }

    /// Reads one stage's exported graph (`entry`: a name from [`ETRecord::stages`]) from the
    /// ETRecord zip, reading no other entry: building a stage on demand after a releasing read.
    /// With `expected_size` (the entry's size when the file was first read), an entry of another
    /// size is refused: the file changed since.
    pub fn read_stage(
        reader: impl Read + std::io::Seek,
        entry: &str,
        expected_size: Option<u64>,
    ) -> Result<ExportedGraph> {
        let mut zip = zip::ZipArchive::new(reader).map_err(zip_err)?;
        let f = zip
            .by_name(entry)
            .map_err(|e| Error::Zip(format!("entry {entry}: {e}")))?;
        if let Some(expected) = expected_size.filter(|&e| e != f.size()) {
            return Err(Error::invalid(
                format!("ETRecord entry {entry}"),
                format!(
                    "{} bytes now, {expected} when the file was opened: the file changed since; open it again",
                    f.size()
                ),
            ));
        }
        if f.size() > MAX_ENTRY_BYTES {
            return Err(Error::TooLarge {
                what: format!("ETRecord entry {entry}"),
                claimed: f.size().into(),
                limit: MAX_ENTRY_BYTES,
            });
        }
        // at most the limit, whatever the header claims
        let bounded = std::io::BufReader::with_capacity(64 << 10, f.take(MAX_ENTRY_BYTES));
        ExportedGraph::parse_reader(bounded, entry)
    }

    fn parse_entries(
        reader: impl Read + std::io::Seek,
        mut each_stage: Option<&mut StageSink<'_>>,
    ) -> Result<ETRecord> {
        let mut zip = zip::ZipArchive::new(reader).map_err(zip_err)?;
        if zip.index_for_name("ETRECORD_V0").is_none() {
            return Err(Error::WrongIdentifier {
                kind: "ETRecord",
                expected: "zip entry ETRECORD_V0".into(),
                found: "a zip without it".into(),
            });
        }
        let mut entries = Vec::new();
        let mut stages = Vec::new();
        let mut json_maps: BTreeMap<String, Value> = BTreeMap::new();
        let mut archives: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        let mut remaining = MAX_TOTAL_BYTES;
        for i in 0..zip.len() {
            let f = zip.by_index(i).map_err(zip_err)?;
            let name = f.name().map_err(zip_err)?.to_string();
            let size = f.size();
            let limit = MAX_ENTRY_BYTES.min(remaining);
            if size > limit {
                return Err(Error::TooLarge {
                    what: format!("ETRecord entry {name} (with the entries before it)"),
                    claimed: size.into(),
                    limit,
                });
            }
            // read at most the limit whatever the header claims; peek to classify, then stream
            // program JSON straight into its typed form (no copy of the entry in memory)
            let counted = Counted {
                inner: f.take(limit + 1),
                read: 0,
            };
            let mut reader = std::io::BufReader::with_capacity(64 << 10, counted);
            let head = reader
                .fill_buf()
                .map_err(|e| Error::Zip(format!("entry {name}: {e}")))?
                .to_vec();
            let is_program = head.starts_with(b"{\"graph_module\"")
                || (head.starts_with(b"{") && looks_like_program(&head));
            let mut data = Vec::new();
            let mut parsed = None;
            if is_program && name != "ETRECORD_V0" {
                parsed = Some(ExportedGraph::parse_reader(&mut reader, &name)?);
            } else {
                reader
                    .read_to_end(&mut data)
                    .map_err(|e| Error::Zip(format!("entry {name}: {e}")))?;
            }
            let consumed = reader.get_ref().read;
            if consumed > limit {
                return Err(Error::TooLarge {
                    what: format!("ETRecord entry {name} (with the entries before it)"),
                    claimed: consumed.into(),
                    limit,
                });
            }
            remaining -= consumed;
            let kind = if name == "ETRECORD_V0" {
                EntryKind::Marker
            } else if data.starts_with(b"PK\x03\x04") || data.first() == Some(&0x80) {
                if each_stage.is_none() {
                    archives.insert(name.clone(), data);
                }
                EntryKind::Pickle
            } else if let Some(graph) = parsed {
                let graph = match each_stage.as_mut() {
                    Some(each) => {
                        each(&name, graph);
                        ExportedGraph::default()
                    }
                    None => graph,
                };
                stages.push(Stage {
                    graph,
                    name: name.clone(),
                });
                EntryKind::Program
            } else if data.starts_with(b"{") {
                let v: Value = serde_json::from_slice(&data).map_err(|e| Error::Json {
                    entry: name.clone(),
                    detail: e.to_string(),
                })?;
                json_maps.insert(name.clone(), v);
                EntryKind::Json
            } else {
                EntryKind::Other
            };
            entries.push(Entry { name, size, kind });
        }
        stages.sort_by_key(|s| stage_rank(&s.name));
        Ok(ETRecord {
            released: each_stage.is_some(),
            entries,
            stages,
            debug_handle_map: json_maps
                .get("debug_handle_map")
                .map(|v| handle_map(v, "debug_handle_map"))
                .transpose()?
                .unwrap_or_default(),
            delegate_map: json_maps
                .get("delegate_map")
                .map(delegate_map)
                .transpose()?
                .unwrap_or_default(),
            archives,
            instruction_id_to_num_outs: json_maps
                .get("instruction_id_to_num_outs_map")
                .map(num_outs_map)
                .transpose()?
                .unwrap_or_default(),
        })
    }

    /// The stage with this entry name (or a unique suffix/prefix of it, e.g. `edge` or `exported`).
    pub fn stage(&self, name: &str) -> Option<&Stage> {
        if let Some(s) = self.stages.iter().find(|s| s.name == name) {
            return Some(s);
        }
        if let Some(s) = self
            .stages
            .iter()
            .find(|s| stage_short_name(&s.name) == name)
        {
            return Some(s);
        }
        let matches: Vec<&Stage> = self
            .stages
            .iter()
            .filter(|s| s.name.starts_with(name))
            .collect();
        (matches.len() == 1).then(|| matches[0])
    }

    /// The weights a stage binds its parameters, buffers and constants to: its `_state_dict`
    /// and `_constants` archives, read by the restricted `torch.save` reader.
    /// The representative inputs the ETRecord was saved with (`representative_inputs`, a
    /// list of input tuples): the tensors of the first, in order; empty when it has none.
    pub fn representative_inputs(&self) -> Result<Vec<crate::tensor::TensorData>> {
        use crate::formats::torch_save::PyValue;
        let Some(bytes) = self.archives.get("representative_inputs") else {
            return Ok(Vec::new());
        };
        let v = crate::formats::torch_save::load(bytes)
            .map_err(|e| Error::invalid("representative_inputs", e.to_string()))?;
        let tensor = |v: &PyValue| match v {
            PyValue::Tensor(t) => Some(crate::tensor::TensorData::clone(t)),
            _ => None,
        };
        let seq = |v: &PyValue| match v {
            PyValue::List(s) | PyValue::Tuple(s) => Some(s.items.clone()),
            _ => None,
        };
        // one tensor, a tuple of tensors, or a list of such tuples (the first is taken)
        let first = match (tensor(&v), seq(&v)) {
            (Some(t), _) => return Ok(vec![t]),
            (None, Some(items)) if items.iter().all(|i| tensor(i).is_some()) => items,
            (None, Some(items)) => items.first().and_then(seq).unwrap_or_default(),
            (None, None) => Vec::new(),
        };
        Ok(first.iter().filter_map(tensor).collect())
    }

    pub fn stage_weights(
        &self,
        stage: &Stage,
    ) -> Result<BTreeMap<String, crate::tensor::TensorData>> {
        let mut out = BTreeMap::new();
        for suffix in ["_state_dict", "_constants"] {
            if let Some(bytes) = self.archives.get(&format!("{}{suffix}", stage.name)) {
                let v = crate::formats::torch_save::load(bytes).map_err(|e| {
                    Error::invalid(format!("{}{suffix}", stage.name), e.to_string())
                })?;
                out.extend(crate::formats::torch_save::tensors_of(&v).map_err(|e| {
                    Error::invalid(format!("{}{suffix}", stage.name), e.to_string())
                })?);
            }
        }
        Ok(out)
    }

    /// Debug handles of `instruction_id` in `method`.
    pub fn debug_handles(&self, method: &str, instruction_id: usize) -> &[u32] {
        self.debug_handle_map
            .get(method)
            .and_then(|m| m.get(&instruction_id))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }
}

/// A short, stable name for a stage: `exported`, `edge`, `edge_after_transform`, `et`.
pub fn stage_short_name(entry: &str) -> String {
    match entry {
        "exported_program" => "exported".into(),
        e if e.starts_with("edge_dialect_exported_program") => "edge".into(),
        e if e.starts_with("et_dialect") => "et".into(),
        e => e.split('/').next().unwrap_or(e).to_string(),
    }
}

fn looks_like_program(data: &[u8]) -> bool {
    data.windows(14)
        .take(4096)
        .any(|w| w == b"\"graph_module\"")
}

fn id_key(k: &str, entry: &str) -> Result<usize> {
    k.parse().map_err(|_| Error::Json {
        entry: entry.into(),
        detail: format!("key {k:?} is not an instruction id"),
    })
}

fn handle_map(v: &Value, entry: &str) -> Result<BTreeMap<String, BTreeMap<usize, Vec<u32>>>> {
    let mut out = BTreeMap::new();
    for (method, m) in v.as_object().into_iter().flatten() {
        let mut per = BTreeMap::new();
        for (k, h) in m.as_object().into_iter().flatten() {
            let handles = match h {
                Value::Array(a) => a
                    .iter()
                    .filter_map(Value::as_u64)
                    .map(|x| x as u32)
                    .collect(),
                other => other.as_u64().map(|x| vec![x as u32]).unwrap_or_default(),
            };
            per.insert(id_key(k, entry)?, handles);
        }
        out.insert(method.clone(), per);
    }
    Ok(out)
}

fn delegate_map(v: &Value) -> Result<BTreeMap<String, Vec<DelegateInfo>>> {
    let mut out = BTreeMap::new();
    for (method, m) in v.as_object().into_iter().flatten() {
        let mut list = Vec::new();
        for (k, d) in m.as_object().into_iter().flatten() {
            list.push(DelegateInfo {
                instruction_id: id_key(k, "delegate_map")?,
                backend: d
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                delegate_map: d.get("delegate_map").cloned().unwrap_or(Value::Null),
            });
        }
        list.sort_by_key(|d| d.instruction_id);
        out.insert(method.clone(), list);
    }
    Ok(out)
}

fn num_outs_map(v: &Value) -> Result<BTreeMap<String, BTreeMap<usize, u64>>> {
    let mut out = BTreeMap::new();
    for (method, m) in v.as_object().into_iter().flatten() {
        let mut per = BTreeMap::new();
        for (k, n) in m.as_object().into_iter().flatten() {
            per.insert(
                id_key(k, "instruction_id_to_num_outs_map")?,
                n.as_u64().unwrap_or(0),
            );
        }
        out.insert(method.clone(), per);
    }
    Ok(out)
}
