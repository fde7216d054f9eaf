//! Recognizes which ExecuTorch artifact a byte buffer holds, by its magic, never by file name.

use serde::Serialize;

/// The kinds of file etscope reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileKind {
    /// ExecuTorch program (`ET12`).
    Pte,
    /// BundledProgram (`BP08`).
    Bpte,
    /// ETDump (`ED00`, size-prefixed or not).
    Etdump,
    /// ETRecord (zip with `ETRECORD_V0`; detected as a zip here).
    Etrecord,
    /// NumPy array (`\x93NUMPY`).
    Npy,
    /// External tensor data of a program (FlatTensor `FT01`).
    Ptd,
}

impl FileKind {
    /// Detects the kind from the first bytes; `None` when nothing matches.
    pub fn detect(bytes: &[u8]) -> Option<FileKind> {
        let at = |range: std::ops::Range<usize>| bytes.get(range);
        if at(4..8) == Some(b"ET12".as_slice()) {
            Some(FileKind::Pte)
        } else if at(4..8) == Some(b"BP08".as_slice()) {
            Some(FileKind::Bpte)
        } else if at(4..8) == Some(b"FT01".as_slice()) {
            Some(FileKind::Ptd)
        } else if at(8..12) == Some(b"ED00".as_slice()) || at(4..8) == Some(b"ED00".as_slice()) {
            // size-prefixed as the runtime's ETDumpGen writes it, or plain as ExecuTorch's
            // Python serializer (devtools.etdump.serialize) writes it
            Some(FileKind::Etdump)
        } else if at(0..4) == Some(b"PK\x03\x04".as_slice()) {
            Some(FileKind::Etrecord)
        } else if at(0..6) == Some(b"\x93NUMPY".as_slice()) {
            Some(FileKind::Npy)
        } else {
            None
        }
    }

    /// Lowercase name used in CLI output and JSON.
    pub fn name(self) -> &'static str {
        match self {
            FileKind::Pte => "pte",
            FileKind::Bpte => "bpte",
            FileKind::Etdump => "etdump",
            FileKind::Etrecord => "etrecord",
            FileKind::Npy => "npy",
            FileKind::Ptd => "ptd",
        }
    }
}
