//! `torch.export` programs serialized as JSON (schema 5.x), as stored in ETRecord entries:
//! nodes with targets, arguments, outputs and metadata (debug handles, stack traces,
//! `nn_module_stack`), tensor metadata and the input signature.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use serde_json::Value;

use crate::dtype::ScalarType;
use crate::error::{Error, Result};

/// One argument of a node, decoded from the schema's `Argument` union.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", content = "value")]
pub enum ExportArg {
    None,
    Tensor(String),
    Tensors(Vec<String>),
    OptionalTensors(Vec<Option<String>>),
    Int(i64),
    Ints(Vec<i64>),
    Float(f64),
    Floats(Vec<f64>),
    Bool(bool),
    Bools(Vec<bool>),
    String(String),
    ScalarType(ScalarType),
    /// Any other argument kind, kept as its JSON text.
    Other(String),
}

impl ExportArg {
    /// Tensor names this argument refers to.
    pub fn tensor_names(&self) -> Vec<&str> {
        match self {
            ExportArg::Tensor(n) => vec![n.as_str()],
            ExportArg::Tensors(ns) => ns.iter().map(String::as_str).collect(),
            ExportArg::OptionalTensors(ns) => ns.iter().flatten().map(String::as_str).collect(),
            _ => Vec::new(),
        }
    }

    /// A short literal rendering for inspectors and tables.
    pub fn render(&self) -> String {
        match self {
            ExportArg::None => "None".into(),
            ExportArg::Tensor(n) => format!("%{n}"),
            ExportArg::Tensors(ns) => format!(
                "[{}]",
                ns.iter()
                    .map(|n| format!("%{n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            ExportArg::OptionalTensors(ns) => {
                format!(
                    "[{}]",
                    ns.iter()
                        .map(|n| n.as_ref().map_or("None".into(), |n| format!("%{n}")))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
            ExportArg::Int(i) => i.to_string(),
            ExportArg::Ints(v) => format!("{v:?}"),
            ExportArg::Float(f) => f.to_string(),
            ExportArg::Floats(v) => format!("{v:?}"),
            ExportArg::Bool(b) => b.to_string(),
            ExportArg::Bools(v) => format!("{v:?}"),
            ExportArg::String(s) => format!("{s:?}"),
            ExportArg::ScalarType(t) => t.short_name(),
            ExportArg::Other(s) => s.clone(),
        }
    }
}

/// One frame of `nn_module_stack`: the module's qualified name and its class.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct ModuleFrame {
    pub path: String,
    pub class: String,
}

/// A node's `nn_module_stack`, outermost module first. Nodes of one module carry the same stack,
/// so a graph's nodes share one copy of each (see [`SharedMetadata`]).
pub type ModuleStack = std::sync::Arc<[ModuleFrame]>;

/// One copy of each distinct stack trace and module stack of a graph, handed to every node that
/// carries it: a model's nodes repeat a few source lines and modules thousands of times (the
/// 60 MB `stress_large` ETRecord: 27,300 nodes, 8 MB of traces and 8 MB of module stacks as
/// copies).
#[derive(Debug, Default)]
pub struct SharedMetadata {
    traces: std::collections::HashSet<std::sync::Arc<str>>,
    modules: std::collections::HashSet<ModuleStack>,
    raw_modules: HashMap<String, ModuleStack>,
}

impl SharedMetadata {
    /// The shared copy of a stack trace.
    pub fn trace(&mut self, text: &str) -> std::sync::Arc<str> {
        if let Some(t) = self.traces.get(text) {
            return t.clone();
        }
        let t: std::sync::Arc<str> = text.into();
        self.traces.insert(t.clone());
        t
    }

    /// The shared module stack of raw `nn_module_stack` metadata (`key,path,class;...`; stacks
    /// that differ only in their keys are one).
    pub fn module_stack(&mut self, raw: &str) -> ModuleStack {
        if let Some(m) = self.raw_modules.get(raw) {
            return m.clone();
        }
        let frames = parse_module_stack(raw);
        let m = match self.modules.get(&frames[..]) {
            Some(m) => m.clone(),
            None => {
                let m: ModuleStack = frames.into();
                self.modules.insert(m.clone());
                m
            }
        };
        self.raw_modules.insert(raw.to_string(), m.clone());
        m
    }
}

/// A graph node of an exported program.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExportNode {
    pub name: String,
    /// e.g. `torch.ops.aten.convolution.default` or
    /// `executorch.exir.dialects.edge.ops.cortex_m.quantize_per_tensor.default`.
    pub target: String,
    pub args: Vec<(String, ExportArg)>,
    pub outputs: Vec<String>,
    pub debug_handles: Vec<u32>,
    pub stack_trace: Option<std::sync::Arc<str>>,
    pub module_stack: ModuleStack,
}

/// Shape and dtype of a named tensor.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TensorMeta {
    pub dtype: ScalarType,
    /// Symbolic sizes are -1.
    pub sizes: Vec<i64>,
    /// The storage order the strides give (dims by decreasing stride, as ExecuTorch derives a
    /// `dim_order`); empty when the strides are symbolic, absent or row-major.
    pub dim_order: Vec<u8>,
}

/// What a graph input is, from the signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InputKind {
    UserInput,
    Parameter,
    Buffer,
    TensorConstant,
    Other,
}

/// An exported program's graph.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct ExportedGraph {
    pub inputs: Vec<(String, InputKind)>,
    pub outputs: Vec<String>,
    pub nodes: Vec<ExportNode>,
    pub tensors: BTreeMap<String, TensorMeta>,
    /// Graph input name → the state-dict / constants key it is bound to (parameters, buffers,
    /// tensor constants).
    pub input_targets: BTreeMap<String, String>,
    pub schema_version: (i64, i64),
    pub dialect: String,
}

fn json_err(entry: &str, detail: impl Into<String>) -> Error {
    Error::Json {
        entry: entry.to_string(),
        detail: detail.into(),
    }
}

/// The parts of a `torch.export` document etscope reads, deserialized directly: everything
/// else (each node's `from_node` provenance, `module_call_graph`, ...) is skipped while parsing
/// instead of being built as a JSON tree, which for a large program's 50 MB of JSON is the
/// difference between tens and hundreds of megabytes.
#[derive(serde::Deserialize)]
struct DocJson {
    graph_module: Option<GraphModuleJson>,
    #[serde(default)]
    schema_version: Value,
    #[serde(default)]
    dialect: Value,
}

#[derive(serde::Deserialize)]
struct GraphModuleJson {
    graph: Option<GraphJson>,
    #[serde(default)]
    signature: Option<SignatureJson>,
}

#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct SignatureJson {
    input_specs: EachOf<InputSpec>,
}

/// A JSON list read element by element, each element converted as soon as it is read: only one
/// element's JSON tree exists at a time (a program with thousands of weights has as many graph
/// inputs and input specs, which as JSON trees took more memory than the graph built from
/// them). Anything but a list reads as empty.
struct EachOf<T>(Vec<T>);

impl<T> Default for EachOf<T> {
    fn default() -> Self {
        EachOf(Vec::new())
    }
}

/// What [`EachOf`] keeps of one list element (`None`: nothing).
trait FromElement: Sized {
    fn from_element(v: &Value) -> Option<Self>;
}

impl<'de, T: FromElement> serde::Deserialize<'de> for EachOf<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Visit<T>(std::marker::PhantomData<T>);
        impl<'de, T: FromElement> serde::de::Visitor<'de> for Visit<T> {
            type Value = EachOf<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<EachOf<T>, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = seq.next_element::<Value>()? {
                    out.extend(T::from_element(&v));
                }
                Ok(EachOf(out))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<EachOf<T>, A::Error> {
                while map
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(EachOf::default())
            }
            fn visit_unit<E>(self) -> std::result::Result<EachOf<T>, E> {
                Ok(EachOf::default())
            }
            fn visit_none<E>(self) -> std::result::Result<EachOf<T>, E> {
                Ok(EachOf::default())
            }
            fn visit_str<E>(self, _: &str) -> std::result::Result<EachOf<T>, E> {
                Ok(EachOf::default())
            }
            fn visit_bool<E>(self, _: bool) -> std::result::Result<EachOf<T>, E> {
                Ok(EachOf::default())
            }
            fn visit_i64<E>(self, _: i64) -> std::result::Result<EachOf<T>, E> {
                Ok(EachOf::default())
            }
            fn visit_u64<E>(self, _: u64) -> std::result::Result<EachOf<T>, E> {
                Ok(EachOf::default())
            }
            fn visit_f64<E>(self, _: f64) -> std::result::Result<EachOf<T>, E> {
                Ok(EachOf::default())
            }
        }
        d.deserialize_any(Visit(std::marker::PhantomData))
    }
}

/// A graph input's tensor name.
struct InputName(String);

impl FromElement for InputName {
    fn from_element(v: &Value) -> Option<Self> {
        let name = v.pointer("/as_tensor/name").and_then(Value::as_str)?;
        Some(InputName(name.to_string()))
    }
}

/// A graph output's tensor names.
struct OutputNames(Vec<String>);

impl FromElement for OutputNames {
    fn from_element(v: &Value) -> Option<Self> {
        Some(OutputNames(output_names(v)))
    }
}

/// One input spec of the signature: the input's name, what it is, and for weights the
/// state-dict / constants key it is bound to.
struct InputSpec {
    name: String,
    kind: InputKind,
    target: Option<String>,
}

impl FromElement for InputSpec {
    fn from_element(spec: &Value) -> Option<Self> {
        let (kind, body) = union_member(spec)?;
        let (kind, target_key) = match kind.as_str() {
            "user_input" => (InputKind::UserInput, ""),
            "parameter" => (InputKind::Parameter, "parameter_name"),
            "buffer" => (InputKind::Buffer, "buffer_name"),
            "tensor_constant" => (InputKind::TensorConstant, "tensor_constant_name"),
            _ => (InputKind::Other, ""),
        };
        let name = body
            .pointer("/arg/name")
            .or_else(|| body.pointer("/arg/as_tensor/name"))
            .and_then(Value::as_str)?;
        Some(InputSpec {
            name: name.to_string(),
            kind,
            target: body
                .get(target_key)
                .and_then(Value::as_str)
                .map(str::to_string),
        })
    }
}

#[derive(serde::Deserialize)]
struct GraphJson {
    #[serde(default)]
    inputs: EachOf<InputName>,
    #[serde(default)]
    outputs: EachOf<OutputNames>,
    nodes: Option<NodesJson>,
    #[serde(default)]
    tensor_values: TensorValuesJson,
}

/// The node list, converted node by node while it is read: only one node's JSON exists at a
/// time.
struct NodesJson(Vec<ExportNode>);

impl<'de> serde::Deserialize<'de> for NodesJson {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = NodesJson;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of nodes")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<NodesJson, A::Error> {
                let mut out = Vec::new();
                let mut shared = SharedMetadata::default();
                while let Some(n) = seq.next_element::<NodeJson>()? {
                    out.push(parse_node(n, &mut shared));
                }
                Ok(NodesJson(out))
            }
        }
        d.deserialize_seq(Visit)
    }
}

/// Tensor metadata by name, converted entry by entry while it is read.
#[derive(Default)]
struct TensorValuesJson(BTreeMap<String, TensorMeta>);

impl<'de> serde::Deserialize<'de> for TensorValuesJson {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = TensorValuesJson;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map of tensor metadata")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<TensorValuesJson, A::Error> {
                let mut out = BTreeMap::new();
                while let Some((name, meta)) = map.next_entry::<String, TensorJson>()? {
                    out.insert(name, tensor_meta(&meta));
                }
                Ok(TensorValuesJson(out))
            }
        }
        d.deserialize_map(Visit)
    }
}

/// A tensor's metadata: dtype, sizes and strides are kept (device, layout, ... skipped).
/// The 2024 serialization nests them under `meta`.
#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct TensorJson {
    dtype: Value,
    sizes: Value,
    strides: Value,
    meta: Option<Box<TensorJson>>,
}

#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct NodeJson {
    name: Value,
    target: Value,
    inputs: Value,
    outputs: Value,
    metadata: MetaJson,
}

#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct MetaJson {
    debug_handle: Option<Value>,
    stack_trace: Option<Value>,
    nn_module_stack: Option<Value>,
}

impl ExportedGraph {
    /// Parses a `torch.export` JSON document (the bytes of an ETRecord program entry).
    pub fn parse(bytes: &[u8], entry: &str) -> Result<ExportedGraph> {
        let doc: DocJson =
            serde_json::from_slice(bytes).map_err(|e| json_err(entry, e.to_string()))?;
        Self::from_doc(doc, entry)
    }

    /// Parses a `torch.export` JSON document from a reader, node by node (no copy of the text).
    pub fn parse_reader(reader: impl std::io::Read, entry: &str) -> Result<ExportedGraph> {
        let doc: DocJson =
            serde_json::from_reader(reader).map_err(|e| json_err(entry, e.to_string()))?;
        Self::from_doc(doc, entry)
    }

    fn from_doc(doc: DocJson, entry: &str) -> Result<ExportedGraph> {
        let gm = doc
            .graph_module
            .ok_or_else(|| json_err(entry, "no graph_module"))?;
        let graph = gm
            .graph
            .ok_or_else(|| json_err(entry, "no graph_module.graph"))?;
        // {"major", "minor"} now; a bare integer in the 2024 serialization
        let schema_version = match &doc.schema_version {
            Value::Number(n) => (n.as_i64().unwrap_or(0), 0),
            v => (
                v.pointer("/major").and_then(Value::as_i64).unwrap_or(0),
                v.pointer("/minor").and_then(Value::as_i64).unwrap_or(0),
            ),
        };
        let tensors = graph.tensor_values.0;
        let specs = gm.signature.unwrap_or_default().input_specs.0;
        let mut kinds = BTreeMap::new();
        let mut input_targets = BTreeMap::new();
        for spec in specs {
            if let Some(t) = spec.target {
                input_targets.insert(spec.name.clone(), t);
            }
            kinds.insert(spec.name, spec.kind);
        }
        let inputs = graph
            .inputs
            .0
            .into_iter()
            .map(|InputName(n)| {
                let kind = kinds.get(&n).copied().unwrap_or(InputKind::UserInput);
                (n, kind)
            })
            .collect();
        let outputs = graph
            .outputs
            .0
            .into_iter()
            .flat_map(|OutputNames(n)| n)
            .collect();
        let nodes = graph
            .nodes
            .ok_or_else(|| json_err(entry, "no graph.nodes"))?
            .0;
        Ok(ExportedGraph {
            inputs,
            outputs,
            nodes,
            tensors,
            input_targets,
            schema_version,
            dialect: doc.dialect.as_str().unwrap_or_default().to_string(),
        })
    }
}

fn tensor_meta(meta: &TensorJson) -> TensorMeta {
    // the 2024 serialization nests the fields under "meta"
    let meta = meta.meta.as_deref().unwrap_or(meta);
    let dtype = ScalarType::from_export_code(meta.dtype.as_i64().unwrap_or(0));
    let sizes: Vec<i64> = meta
        .sizes
        .as_array()
        .map(|a| {
            a.iter()
                .map(|s| s.get("as_int").and_then(Value::as_i64).unwrap_or(-1))
                .collect()
        })
        .unwrap_or_default();
    let strides: Option<Vec<i64>> = meta.strides.as_array().and_then(|a| {
        a.iter()
            .map(|s| s.get("as_int").and_then(Value::as_i64))
            .collect()
    });
    let dim_order = strides
        .filter(|st| st.len() == sizes.len() && sizes.len() <= 16)
        .map(|st| dim_order_of_strides(&st))
        .unwrap_or_default();
    TensorMeta {
        dtype,
        sizes,
        dim_order,
    }
}

/// The `dim_order` of a tensor with `strides`: dims by decreasing stride (equal strides, of
/// size-1 dims, keep their order); empty when that is row-major.
pub fn dim_order_of_strides(strides: &[i64]) -> Vec<u8> {
    let mut order: Vec<u8> = (0..strides.len() as u8).collect();
    order.sort_by_key(|&d| std::cmp::Reverse(strides[usize::from(d)]));
    if order.iter().enumerate().all(|(i, &d)| usize::from(d) == i) {
        Vec::new()
    } else {
        order
    }
}

fn output_names(v: &Value) -> Vec<String> {
    if let Some(n) = v.pointer("/as_tensor/name").and_then(Value::as_str) {
        return vec![n.to_string()];
    }
    if let Some(a) = v.get("as_tensors").and_then(Value::as_array) {
        return a
            .iter()
            .filter_map(|t| t.get("name").and_then(Value::as_str))
            .map(str::to_string)
            .collect();
    }
    Vec::new()
}

/// The member of a serialized union: the one key whose value is set. Current `torch.export`
/// writes only that key; the 2024 serialization (ExecuTorch 0.4) writes every member, unset ones
/// as `null`, so the first key is not the member. A union with nothing set is `as_none`.
fn union_member(v: &Value) -> Option<(&String, &Value)> {
    let o = v.as_object()?;
    o.iter()
        .find(|(_, b)| !b.is_null())
        .or_else(|| o.iter().find(|(k, _)| k.as_str() == "as_none"))
        .or_else(|| o.iter().next())
}

fn parse_arg(v: &Value) -> ExportArg {
    let Some((kind, body)) = union_member(v) else {
        return ExportArg::Other(v.to_string());
    };
    let other = || ExportArg::Other(v.to_string());
    let ints = |b: &Value| {
        b.as_array()
            .map(|a| a.iter().filter_map(Value::as_i64).collect())
            .unwrap_or_default()
    };
    match kind.as_str() {
        "as_none" => ExportArg::None,
        "as_tensor" => ExportArg::Tensor(
            body.get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        ),
        "as_tensors" => ExportArg::Tensors(
            body.as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|t| t.get("name").and_then(Value::as_str))
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
        ),
        "as_optional_tensors" => ExportArg::OptionalTensors(
            body.as_array()
                .map(|a| {
                    a.iter()
                        .map(|t| {
                            t.pointer("/as_tensor/name")
                                .and_then(Value::as_str)
                                .map(str::to_string)
                        })
                        .collect()
                })
                .unwrap_or_default(),
        ),
        "as_int" => body.as_i64().map_or_else(other, ExportArg::Int),
        "as_ints" => ExportArg::Ints(ints(body)),
        "as_float" => body.as_f64().map_or_else(other, ExportArg::Float),
        "as_floats" => ExportArg::Floats(
            body.as_array()
                .map(|a| a.iter().filter_map(Value::as_f64).collect())
                .unwrap_or_default(),
        ),
        "as_bool" => body.as_bool().map_or_else(other, ExportArg::Bool),
        "as_bools" => ExportArg::Bools(
            body.as_array()
                .map(|a| a.iter().filter_map(Value::as_bool).collect())
                .unwrap_or_default(),
        ),
        "as_string" => body
            .as_str()
            .map_or_else(other, |s| ExportArg::String(s.to_string())),
        "as_scalar_type" => body.as_i64().map_or_else(other, |c| {
            ExportArg::ScalarType(ScalarType::from_export_code(c))
        }),
        _ => ExportArg::Other(v.to_string()),
    }
}

/// Parses `debug_handle` metadata: `"3"`, `"[3, 4]"` or a JSON number/list.
fn debug_handles(v: Option<&Value>) -> Vec<u32> {
    match v {
        Some(Value::Number(n)) => n.as_u64().map(|h| vec![h as u32]).unwrap_or_default(),
        Some(Value::String(s)) => s
            .split(|c: char| !c.is_ascii_digit())
            .filter(|t| !t.is_empty())
            .filter_map(|t| t.parse().ok())
            .collect(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_u64)
            .map(|h| h as u32)
            .collect(),
        _ => Vec::new(),
    }
}

/// Parses `nn_module_stack` metadata: `key,path,class;key,path,class`.
pub fn parse_module_stack(s: &str) -> Vec<ModuleFrame> {
    s.split(';')
        .filter(|f| !f.is_empty())
        .map(|f| {
            let mut parts = f.splitn(3, ',');
            let _key = parts.next();
            ModuleFrame {
                path: parts.next().unwrap_or_default().to_string(),
                class: parts.next().unwrap_or_default().to_string(),
            }
        })
        .collect()
}

fn parse_node(n: NodeJson, shared: &mut SharedMetadata) -> ExportNode {
    let meta = &n.metadata;
    let args = n
        .inputs
        .as_array()
        .map(|a| {
            a.iter()
                .map(|i| {
                    (
                        i.get("name")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                        i.get("arg").map(parse_arg).unwrap_or(ExportArg::None),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    ExportNode {
        name: n.name.as_str().unwrap_or_default().to_string(),
        target: n.target.as_str().unwrap_or_default().to_string(),
        args,
        outputs: n
            .outputs
            .as_array()
            .map(|a| a.iter().flat_map(output_names).collect())
            .unwrap_or_default(),
        debug_handles: debug_handles(meta.debug_handle.as_ref()),
        stack_trace: meta
            .stack_trace
            .as_ref()
            .and_then(Value::as_str)
            .map(|t| shared.trace(t)),
        module_stack: meta
            .nn_module_stack
            .as_ref()
            .and_then(Value::as_str)
            .map(|m| shared.module_stack(m))
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_stack_keeps_path_and_class() {
        let s = "L__self__,,__main__.Net;L__self__conv,conv,torch.nn.modules.conv.Conv2d";
        let frames = parse_module_stack(s);
        assert_eq!(frames.len(), 2);
        assert_eq!(
            frames[1],
            ModuleFrame {
                path: "conv".into(),
                class: "torch.nn.modules.conv.Conv2d".into()
            }
        );
    }

    #[test]
    fn debug_handles_parse_all_forms() {
        assert_eq!(debug_handles(Some(&Value::String("3".into()))), vec![3]);
        assert_eq!(
            debug_handles(Some(&Value::String("[3, 4]".into()))),
            vec![3, 4]
        );
        assert!(debug_handles(None).is_empty());
    }
}
