//! A dataset for `etscope eval`: a folder of `.npy` files, one sample each (a program with
//! several inputs takes `name_<k>.npy`, k = 0, 1, …, per sample), or one `.npy` / `.npz` whose
//! leading dimension is the sample (an `.npz` holds one array per input, in name order). A
//! sample is read when it is asked for (folders) or sliced from the arrays (files); each input
//! is shaped to the program's input sizes when its element count matches. Labels: a `.npy` of
//! class indices, one per sample.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use etscope_core::formats::npy::read_npy;
use etscope_core::tensor::TensorData;

/// Where the samples are.
pub enum Dataset {
    /// One file list per sample (the inputs in order).
    Files(Vec<Vec<PathBuf>>),
    /// One array per input, its leading dimension the sample.
    Arrays(Vec<TensorData>),
}

impl Dataset {
    /// The dataset at `path` for a program with `inputs` inputs.
    pub fn open(path: &Path, inputs: usize) -> Result<Dataset> {
        if path.is_dir() {
            return folder(path, inputs.max(1));
        }
        let bytes = super::bytes(path)?;
        let arrays = if bytes.starts_with(b"PK") {
            npz(path, &bytes)?
        } else {
            vec![read_npy(&bytes).with_context(|| path.display().to_string())?]
        };
        if arrays.len() != inputs.max(1) {
            bail!(
                "{}: {} arrays for a program with {} inputs",
                path.display(),
                arrays.len(),
                inputs
            );
        }
        let n = arrays[0].shape.first().copied().unwrap_or(0);
        if let Some(a) = arrays
            .iter()
            .find(|a| a.shape.first().copied().unwrap_or(0) != n)
        {
            bail!(
                "{}: arrays of {n} and {} samples (the leading dimension is the sample)",
                path.display(),
                a.shape.first().copied().unwrap_or(0)
            );
        }
        Ok(Dataset::Arrays(arrays))
    }

    pub fn len(&self) -> usize {
        match self {
            Dataset::Files(f) => f.len(),
            Dataset::Arrays(a) => a
                .first()
                .and_then(|t| t.shape.first().copied())
                .unwrap_or(0),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Sample `i`'s inputs, each shaped as `shapes` says where its element count matches.
    pub fn sample(&self, i: usize, shapes: &[Vec<usize>]) -> Result<Vec<TensorData>> {
        let raw: Vec<TensorData> = match self {
            Dataset::Files(files) => files
                .get(i)
                .ok_or_else(|| anyhow!("no sample {i}"))?
                .iter()
                .map(|p| read_npy(&super::bytes(p)?).with_context(|| p.display().to_string()))
                .collect::<Result<_>>()?,
            Dataset::Arrays(arrays) => arrays.iter().map(|a| slice(a, i)).collect::<Result<_>>()?,
        };
        Ok(raw
            .into_iter()
            .enumerate()
            .map(|(k, mut t)| {
                if let Some(s) = shapes.get(k) {
                    if s.iter().product::<usize>() == t.numel() {
                        t.shape = s.clone();
                    }
                }
                t
            })
            .collect())
    }
}

/// Sample `i` of an array whose leading dimension is the sample.
fn slice(a: &TensorData, i: usize) -> Result<TensorData> {
    let n = a.shape.first().copied().unwrap_or(0);
    if i >= n {
        bail!("no sample {i} of {n}");
    }
    let per: usize = a.shape[1..].iter().product();
    let elem = a.dtype.element_size().unwrap_or(1);
    let bytes = per
        .checked_mul(elem)
        .ok_or_else(|| anyhow!("a sample of {per} elements is too large"))?;
    let at = i * bytes;
    Ok(TensorData {
        dtype: a.dtype,
        shape: a.shape[1..].to_vec(),
        bytes: a.bytes[at..at + bytes].to_vec(),
    })
}

/// The samples of a folder: every `.npy`, sorted by name; with several inputs, `name_<k>.npy`.
fn folder(dir: &Path, inputs: usize) -> Result<Dataset> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("{}: cannot read", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "npy"))
        .filter(|p| p.file_stem().is_some_and(|s| s != "labels"))
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("{}: no .npy samples", dir.display());
    }
    if inputs == 1 {
        return Ok(Dataset::Files(files.into_iter().map(|f| vec![f]).collect()));
    }
    let mut samples: std::collections::BTreeMap<String, Vec<(usize, PathBuf)>> = Default::default();
    for f in files {
        let stem = f
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("")
            .to_string();
        let (name, k) = stem
            .rsplit_once('_')
            .and_then(|(n, k)| Some((n.to_string(), k.parse::<usize>().ok()?)))
            .ok_or_else(|| {
                anyhow!(
                    "{}: a program with {inputs} inputs takes its samples as name_<k>.npy",
                    f.display()
                )
            })?;
        samples.entry(name).or_default().push((k, f));
    }
    let mut out = Vec::with_capacity(samples.len());
    for (name, mut parts) in samples {
        parts.sort();
        let ks: Vec<usize> = parts.iter().map(|(k, _)| *k).collect();
        if ks != (0..inputs).collect::<Vec<_>>() {
            bail!(
                "{}: sample {name} has inputs {ks:?}; the program takes {inputs}",
                dir.display()
            );
        }
        out.push(parts.into_iter().map(|(_, f)| f).collect());
    }
    Ok(Dataset::Files(out))
}

/// The arrays of an `.npz`, by entry name.
fn npz(path: &Path, bytes: &[u8]) -> Result<Vec<TensorData>> {
    use std::io::Read;
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| anyhow!("{}: not a readable .npz: {e}", path.display()))?;
    let mut names: Vec<String> = zip
        .file_names()
        .filter_map(|n| n.ok())
        .filter(|n| n.ends_with(".npy"))
        .map(|n| n.into_owned())
        .collect();
    names.sort();
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        let mut entry = zip
            .by_name(&name)
            .map_err(|e| anyhow!("{}: {name}: {e}", path.display()))?;
        let mut data = Vec::new();
        entry
            .read_to_end(&mut data)
            .map_err(|e| anyhow!("{}: {name}: {e}", path.display()))?;
        out.push(read_npy(&data).with_context(|| format!("{}: {name}", path.display()))?);
    }
    Ok(out)
}

/// Class labels, one per sample (any integer `.npy`).
pub fn labels(path: &Path) -> Result<Vec<i64>> {
    let t = read_npy(&super::bytes(path)?).with_context(|| path.display().to_string())?;
    if !t.dtype.is_integer() {
        bail!(
            "{}: labels are class indices (an integer array), not {:?}",
            path.display(),
            t.dtype
        );
    }
    let values = t.to_f64().with_context(|| path.display().to_string())?;
    Ok(values.into_iter().map(|v| v as i64).collect())
}
