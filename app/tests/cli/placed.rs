//! `fit --place … -o DIR`'s placed program for ExecuTorch's runtime: the weights moved into RAM
//! leave the `.pte` for a `.ptd` (external constants), the program computes as the original,
//! ExecuTorch's own runtime ran the same bytes bit-equal, and the C++ that loads the `.ptd`
//! into its regions compiles against ExecuTorch's headers and links into those regions.

use std::path::{Path, PathBuf};

use super::{etscope, fresh_dir, json, tiny};

fn p(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

fn placed_fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/placed")
}

/// Every instruction's output of `pte` run on `input`, as `run --dump` writes them.
fn dumped(pte: &Path, input: &Path, dir: &Path) -> Vec<(String, Vec<u8>)> {
    let _ = std::fs::remove_dir_all(dir);
    json(&[
        "run",
        p(pte),
        "--input",
        p(input),
        "--dump",
        p(dir),
        "--json",
    ]);
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .expect("dumped")
        .map(|e| {
            let path = e.expect("entry").path();
            (
                path.file_name()
                    .expect("name")
                    .to_string_lossy()
                    .to_string(),
                std::fs::read(&path).expect("npy"),
            )
        })
        .collect();
    files.sort();
    files
}

/// The placed portable programs in `tests/fixtures/placed/` are what ExecuTorch 1.5.1's own
/// runtime loaded with their `.ptd` and ran bit-equal to the originals
/// (`tests/fixtures/tools/check_placed_program.py`, its record `executorch_check.json`), and
/// etscope still writes exactly those bytes from the same placement files.
#[test]
fn the_placed_program_is_the_one_executorch_ran_bit_equal_to_the_original() {
    let fixtures = placed_fixtures();
    let record: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures.join("executorch_check.json")).expect("record"),
    )
    .expect("json");
    for (name, placement) in [
        ("model_fp32", "fp32_placement.toml"),
        ("model_int8_qdq_portable", "qdq_placement.toml"),
    ] {
        let r = &record[name];
        assert_eq!(r["outputs_bit_equal"], serde_json::json!([true]), "{name}");
        assert!(
            r["placed_without_ptd"]
                .as_str()
                .is_some_and(|s| s.starts_with("refused")),
            "{name}: {r}"
        );
        let dir = fresh_dir(&format!("placed-{name}"));
        let original = tiny(&format!("{name}.pte"));
        json(&[
            "fit",
            p(&original),
            "--part",
            "ek-ra8d1",
            "--place",
            p(&fixtures.join(placement)),
            "-o",
            p(&dir),
            "--json",
        ]);
        for ext in ["pte", "ptd"] {
            let written = std::fs::read(dir.join(format!("{name}.{ext}"))).expect("written");
            let ran = std::fs::read(fixtures.join(format!("{name}_placed.{ext}"))).expect("ran");
            assert!(
                written == ran,
                "{name}.{ext}: etscope no longer writes the bytes ExecuTorch's runtime ran"
            );
        }
        // etscope runs it as ExecuTorch does: every instruction as the original's
        let input = tiny("input.npy");
        assert_eq!(
            dumped(&dir.join(format!("{name}.pte")), &input, &dir.join("a")),
            dumped(&original, &input, &dir.join("b")),
            "{name}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Cortex-M programs placed by the advisor on two parts (an M85 with DTCM and SRAM, an M7 with
/// DTCM), varied over both lowering flows, M55 and M4 programs and three architectures (the
/// tiny conv-linear, a digits CNN, a residual digits ResNet): every
/// instruction's output of the placed program equals the original's, the moved weights left
/// the `.pte` (it shrinks by at least their bytes less alignment) for the `.ptd`, the placed
/// program refuses to run without it (naming the missing key), and `fit` counts the `.ptd` in
/// flash.
#[test]
fn placed_cortex_m_programs_read_their_moved_weights_from_the_ptd_and_compute_as_the_original() {
    let digits = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/digits");
    let cases = [
        (tiny("model_int8_cortex_m55.pte"), tiny("input.npy")),
        (tiny("model_int8_cortex_m55_default.pte"), tiny("input.npy")),
        (tiny("model_int8_cortex_m4_default.pte"), tiny("input.npy")),
        (
            digits.join("cnn_int8_cortex_m55_default.pte"),
            placed_fixtures().join("digits_sample_0.npy"),
        ),
        (
            digits.join("resnet_int8_cortex_m55_explicit.pte"),
            placed_fixtures().join("digits_sample_0.npy"),
        ),
    ];
    let mut placed_somewhere = 0;
    for (k, (pte, input)) in cases.iter().enumerate() {
        for part in ["ek-ra8d1", "nucleo-h7a3zi"] {
            let dir = fresh_dir(&format!("placed-cm-{k}-{part}"));
            let advise_into_dir = || {
                json(&[
                    "fit",
                    p(pte),
                    "--part",
                    part,
                    "--place",
                    "auto",
                    "-o",
                    p(&dir),
                    "--json",
                ])
            };
            let d = advise_into_dir();
            let moved: u64 = d["placement"]["blocks"]
                .as_array()
                .expect("blocks")
                .iter()
                .filter(|b| {
                    b["name"].as_str().is_some_and(|n| n.starts_with("weights"))
                        && b["region"] != b["default_region"]
                })
                .map(|b| b["bytes"].as_u64().expect("bytes"))
                .sum();
            let name = pte.file_name().expect("name");
            let placed = dir.join(name);
            if moved == 0 {
                assert!(
                    !placed.exists(),
                    "{}: nothing moved, nothing written",
                    p(pte)
                );
                continue;
            }
            placed_somewhere += 1;
            let ptd = placed.with_extension("ptd");
            let (before, after) = (
                std::fs::metadata(pte).expect("original").len(),
                std::fs::metadata(&placed).expect("placed").len(),
            );
            // the FlatBuffer grows by a new table per external tensor (under 128 B each)
            let external = json(&["info", p(&placed), "--json"])["plans"][0]["external_constants"]
                .as_u64()
                .expect("external_constants");
            assert!(external > 0, "{}", p(pte));
            assert!(
                after + moved <= before + 128 * external,
                "{} on {part}: {before} B → {after} B with {moved} B moved, {external} external",
                p(pte)
            );
            assert_eq!(
                dumped(&placed, input, &dir.join("a")),
                dumped(pte, input, &dir.join("b")),
                "{} on {part}",
                p(pte)
            );
            // fit --place counts the flash of the placed program it writes
            assert_eq!(
                d["placement"]["placed_program_bytes"].as_u64(),
                Some(after + std::fs::metadata(&ptd).expect("ptd").len()),
                "{}",
                p(pte)
            );
            assert_eq!(
                d["flash"]["program"],
                d["placement"]["placed_program_bytes"]
            );
            let flash = json(&["fit", p(&placed), "--part", part, "--json"]);
            assert_eq!(
                flash["flash"]["program"].as_u64(),
                Some(after + std::fs::metadata(&ptd).expect("ptd").len()),
                "{}",
                p(pte)
            );
            std::fs::rename(&ptd, dir.join("away.ptd")).expect("move");
            let out = etscope(&["run", p(&placed), "--input", p(input)]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                !out.status.success() && err.contains("etscope.constant_"),
                "{}: {err}",
                p(pte)
            );
            // a .ptd beside it that cannot serve it is named as refused, not asked for again
            std::fs::write(&ptd, b"not a FlatTensor file").expect("write");
            let out = etscope(&["run", p(&placed), "--input", p(input)]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                !out.status.success()
                    && err.contains("is beside it but was refused")
                    && !err.contains("put it beside"),
                "{}: {err}",
                p(pte)
            );
            std::fs::remove_file(&ptd).expect("remove");
            // without its .ptd, fit says the flash is a lower bound and why
            let lone = json(&["fit", p(&placed), "--part", part, "--json"]);
            assert_eq!(lone["flash"]["complete"], false, "{}", p(pte));
            assert!(
                lone["not_modelled"]
                    .as_array()
                    .expect("not_modelled")
                    .iter()
                    .any(|n| n.as_str().is_some_and(|n| n.contains(".ptd"))),
                "{lone}"
            );
            // a later -o that moves no weights removes the earlier placed program and loader
            let nothing = dir.join("nothing.toml");
            std::fs::write(&nothing, "").expect("write");
            std::fs::rename(dir.join("away.ptd"), &ptd).expect("move back");
            let again = json(&[
                "fit",
                p(pte),
                "--part",
                part,
                "--place",
                p(&nothing),
                "-o",
                p(&dir),
                "--json",
            ]);
            assert_eq!(
                again["removed"].as_array().map(Vec::len),
                Some(3),
                "{again}"
            );
            assert!(!placed.exists() && !ptd.exists());
            assert!(!dir.join("etscope_placed_weights.cpp").exists());
            // the placed program fitted with -o into its own folder is never removed
            advise_into_dir();
            let own = json(&["fit", p(&placed), "--part", part, "-o", p(&dir), "--json"]);
            assert!(own["removed"].is_null(), "{own}");
            assert!(placed.exists() && ptd.exists(), "{} on {part}", p(pte));
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    assert!(
        placed_somewhere >= 4,
        "the advisor moved weights in only {placed_somewhere} cases"
    );
}

/// The C++ that loads a placed program's weights compiles for a Cortex-M55 against the headers
/// of the `executorch` wheel, and links with the linker fragment `fit -o` wrote: the `.ptd` in
/// the link's constants region, each region's copy inside that region at the size of its range
/// of the `.ptd`. ExecuTorch's libraries are not linked here (their symbols are left
/// unresolved), so what a board runs of it is the runtime's own code.
#[test]
fn the_placed_weights_source_compiles_and_links_into_its_regions() {
    let test = "the_placed_weights_source_compiles_and_links_into_its_regions";
    if !super::tools::available(test, super::tools::BOARD_CXX) {
        return;
    }
    let Some(include) = super::tools::executorch_include(test) else {
        return;
    };
    let dir = fresh_dir("placed-cxx");
    let d = json(&[
        "fit",
        p(&tiny("model_int8_cortex_m55.pte")),
        "--part",
        "ek-ra8d1",
        "--place",
        "auto",
        "-o",
        p(&dir),
        "--json",
    ]);
    let ptd_len = std::fs::metadata(dir.join("model_int8_cortex_m55.ptd"))
        .expect("ptd")
        .len();
    if let Err(e) = super::tools::compile_against_executorch(
        &include,
        &dir.join("etscope_placed_weights.cpp"),
        &dir.join("weights.o"),
    ) {
        panic!("{e}");
    }
    std::fs::write(
        dir.join("image.ld"),
        "INCLUDE etscope_regions.ld\nENTRY(etscope_load_placed_weights)\nSECTIONS\n{\n  .text : { *(.text*) *(.rodata*) } > ITCM\n  .data : { *(.data*) *(.bss*) } > SRAM\n}\n",
    )
    .expect("write");
    let ld = std::process::Command::new("arm-none-eabi-g++")
        .current_dir(&dir)
        .args([
            "-mcpu=cortex-m55",
            "-mthumb",
            "-nostdlib",
            "-Wl,--unresolved-symbols=ignore-all",
            "-T",
            "image.ld",
            "-L",
            ".",
            "weights.o",
            "-o",
            "image.elf",
        ])
        .output()
        .expect("links");
    assert!(
        ld.status.success(),
        "{}",
        String::from_utf8_lossy(&ld.stderr)
    );
    let nm = std::process::Command::new("arm-none-eabi-nm")
        .current_dir(&dir)
        .args(["-S", "-C", "image.elf"])
        .output()
        .expect("arm-none-eabi-nm runs");
    let symbols = String::from_utf8_lossy(&nm.stdout).to_string();
    let region = |name: &str| -> (u64, u64) {
        let r = d["part"]["regions"]
            .as_array()
            .expect("regions")
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("no region {name}"))
            .clone();
        (
            r["base"].as_u64().expect("base"),
            r["size"].as_u64().expect("size"),
        )
    };
    let at = |symbol: &str| -> (u64, u64) {
        let line = symbols
            .lines()
            .find(|l| l.split_whitespace().last() == Some(symbol))
            .unwrap_or_else(|| panic!("{symbol} not in the image:\n{symbols}"));
        let f: Vec<&str> = line.split_whitespace().collect();
        (
            u64::from_str_radix(f[0], 16).expect("address"),
            u64::from_str_radix(f[1], 16).expect("size"),
        )
    };
    let inside = |(addr, len): (u64, u64), (base, size): (u64, u64)| {
        addr >= base && addr + len <= base + size
    };
    let (ptd_at, ptd_size) = at("etscope_ptd");
    assert_eq!(ptd_size, ptd_len);
    let flash = d["part"]["link"]["constants"].as_str().expect("constants");
    assert!(inside((ptd_at, ptd_size), region(flash)));
    let mut copies = 0;
    let mut copied_per_region: std::collections::BTreeMap<String, (u64, u64)> =
        std::collections::BTreeMap::new();
    for b in d["placement"]["blocks"].as_array().expect("blocks") {
        let r = b["region"].as_str().expect("region");
        if b["name"].as_str().is_some_and(|n| n.starts_with("weights")) && r != flash {
            let symbol = format!("(anonymous namespace)::weights_{}", r.to_uppercase());
            // the copy holds the block's constants, each 16-aligned, as fit counts them
            let (addr, len) = symbols
                .lines()
                .find(|l| l.ends_with(&symbol))
                .map(|l| {
                    let f: Vec<&str> = l.split_whitespace().collect();
                    (
                        u64::from_str_radix(f[0], 16).expect("address"),
                        u64::from_str_radix(f[1], 16).expect("size"),
                    )
                })
                .unwrap_or_else(|| panic!("{symbol} not in the image:\n{symbols}"));
            assert!(inside((addr, len), region(r)), "{symbol} at {addr:#x}");
            copied_per_region
                .entry(r.to_string())
                .and_modify(|(_, n)| *n += b["bytes"].as_u64().expect("bytes"))
                .or_insert((len, b["bytes"].as_u64().expect("bytes")));
            copies += 1;
        }
    }
    assert!(copies > 0, "the advisor moved no weights: {d}");
    for (region, (reserved, counted)) in &copied_per_region {
        assert_eq!(
            reserved, counted,
            "{region}: the copy reserves what fit counts"
        );
        let used = d["regions"]
            .as_array()
            .expect("regions")
            .iter()
            .find(|x| x["name"] == region.as_str())
            .and_then(|x| x["used"].as_u64())
            .expect("used");
        assert!(
            used >= *reserved,
            "{region}: used {used} < the copy's {reserved}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
