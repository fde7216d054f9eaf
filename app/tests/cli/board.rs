//! The emulated board and GDB servers from the command line: board runs, live output, record.

use super::*;

#[test]
fn board_run_records_every_instruction_and_the_capture_reads_back_everywhere() {
    if !tools::available(
        "board_run_records_every_instruction_and_the_capture_reads_back_everywhere",
        tools::BOARD,
    ) {
        return;
    }
    let dir = std::env::temp_dir().join(format!("etscope-cli-board-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // -o into folders that do not exist yet: board run creates them
    let out = dir.join("captures/today/capture.etdp");
    let pte = tiny("model_int8_cortex_m55.pte");
    let summary = json(&[
        "board",
        "run",
        p(&pte),
        "--input",
        p(&tiny("input.npy")),
        "--runs",
        "4",
        "--intermediates",
        "-o",
        p(&out),
        "--json",
    ]);
    assert_eq!(summary["runs"], 4);
    assert_eq!(summary["lost_frames"], 0);
    assert_eq!(summary["lost_bytes"], 0);
    assert_eq!(summary["core"], "cortex-m55 (emulated)");
    // profile: 4 runs of every instruction of the program
    let profiled = json(&["profile", "--pte", p(&pte), "--etdump", p(&out), "--json"]);
    let rows = profiled["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 6);
    assert!(rows[0]["p50_us"].is_number(), "the declared clock gives µs");
    for (k, r) in rows.iter().enumerate() {
        assert_eq!(r["instruction_id"], k);
        assert_eq!(r["count"], 4);
        assert_eq!(r["raw"].as_array().map(Vec::len), Some(4));
    }
    // copied alone, without its raw stream, the capture keeps its time unit (the ETDump
    // declares it); a rate that would read its nanoseconds as ticks is refused
    let alone = dir.join("alone");
    std::fs::create_dir_all(&alone).expect("dir");
    let copy = alone.join("copy.etdp");
    std::fs::copy(&out, &copy).expect("copy");
    let copied = json(&["profile", "--pte", p(&pte), "--etdump", p(&copy), "--json"]);
    assert_eq!(copied["rows"], profiled["rows"]);
    let wrong = etscope(&[
        "profile",
        "--pte",
        p(&pte),
        "--etdump",
        p(&copy),
        "--ticks-per-us",
        "32",
    ]);
    assert_eq!(wrong.status.code(), Some(2));
    let err = String::from_utf8_lossy(&wrong.stderr);
    assert!(
        err.contains("copy.etdp") && err.contains("nanoseconds"),
        "{err}"
    );
    // tensors: every instruction's output of every run
    let tensors = json(&[
        "tensors",
        "--etdump",
        p(&out),
        "--debug-buffer",
        p(&out.with_extension("bin")),
        "--json",
    ]);
    assert_eq!(tensors.as_array().map(Vec::len), Some(24));
    // the raw stream rebuilds the same ETDump
    let again = dir.join("again.etdp");
    json(&[
        "record",
        "--replay",
        p(&out.with_extension("etsw")),
        "--pte",
        p(&pte),
        "-o",
        p(&again),
        "--json",
    ]);
    assert_eq!(
        std::fs::read(&out).expect("etdp"),
        std::fs::read(&again).expect("etdp")
    );
    // a capture of this program does not rebuild against another one
    let other = etscope(&[
        "record",
        "--replay",
        p(&out.with_extension("etsw")),
        "--pte",
        p(&tiny("model_fp32.pte")),
        "-o",
        p(&dir.join("wrong.etdp")),
    ]);
    assert_eq!(other.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&other.stderr).contains("another program"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn board_run_names_the_operator_the_firmware_lacks() {
    // a standalone hardswish left on int8 codes: an operator the board firmware does not
    // implement
    let pte = fixture("programs/cortex_m_hardswish/model.pte");
    let out = etscope(&["board", "run", p(&pte), "-o", "/tmp/never.etdp"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cortex_m_hardswish/model.pte"), "{err}");
    assert!(err.contains("aten::hardswish.out"), "{err}");
    assert!(err.contains("docs/compatibility.md"), "{err}");
}

#[test]
fn board_run_refuses_a_float_operator_left_on_int8_tensors_before_qemu_starts() {
    // ExecuTorch's default flow left a U-Net's first convolution as `aten::convolution` on
    // int8 codes (tests/fixtures/tools/make_float_op_on_int8.py): refused at once, naming the
    // instruction, not after the board idled with nothing run
    let pte = fixture("programs/float_conv_on_int8/model.pte");
    let input = fixture("programs/float_conv_on_int8/input.npy");
    let started = std::time::Instant::now();
    let out = etscope(&[
        "board",
        "run",
        p(&pte),
        "--input",
        p(&input),
        "--runs",
        "1",
        "-o",
        "/tmp/never.etdp",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("instruction 1 calls aten::convolution.out on int8 tensors"),
        "{err}"
    );
    assert!(
        started.elapsed().as_secs() < 10,
        "refused only after {:?}",
        started.elapsed()
    );
}

#[test]
fn record_from_a_gdb_server_that_is_not_there_fails_at_once() {
    let out = etscope_or_hang(
        &[
            "record",
            "--gdb",
            "127.0.0.1:9",
            "--pte",
            p(&tiny("model_int8_cortex_m55.pte")),
            "-o",
            "/tmp/never.etdp",
        ],
        60,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("GDB server 127.0.0.1:9"), "{err}");
}

#[test]
fn record_reads_a_running_board_through_its_gdb_server() {
    if !tools::available(
        "record_reads_a_running_board_through_its_gdb_server",
        tools::BOARD,
    ) {
        return;
    }
    use etscope_core::board_image::{self, BoardOptions};
    let pte = tiny("model_int8_cortex_m55.pte");
    let program = etscope_core::formats::pte::Program::parse(std::fs::read(&pte).expect("pte"))
        .expect("program");
    let image = board_image::build(
        &program,
        0,
        &board_image::zero_inputs(&program, 0),
        &BoardOptions {
            runs: 3,
            ..BoardOptions::default()
        },
    )
    .expect("image");
    let elf = etscope::board::firmware().expect("firmware");
    let qemu = etscope::board::Qemu::start(&elf, &image.bytes).expect("qemu");
    let out = std::env::temp_dir().join(format!("etscope-cli-record-{}.etdp", std::process::id()));
    let summary = json(&[
        "record",
        "--gdb",
        &qemu.gdb_address(),
        "--elf",
        p(&elf),
        "--pte",
        p(&pte),
        "-o",
        p(&out),
        "--json",
    ]);
    assert_eq!(summary["runs"], 3, "the target announced 3 runs: {summary}");
    assert_eq!(summary["lost_frames"], 0);
    assert_eq!(summary["core"], "cortex-m55 (emulated)");
    // without the ELF, the control block is found by scanning RAM
    drop(qemu);
    let qemu = etscope::board::Qemu::start(&elf, &image.bytes).expect("qemu");
    let summary = json(&[
        "record",
        "--gdb",
        &qemu.gdb_address(),
        "--pte",
        p(&pte),
        "-o",
        p(&out),
        "--json",
    ]);
    assert_eq!(summary["runs"], 3);
    for ext in ["etdp", "etsw"] {
        let _ = std::fs::remove_file(out.with_extension(ext));
    }
}

#[test]
fn board_run_live_piped_to_a_file_prints_one_final_table() {
    if !tools::available(
        "board_run_live_piped_to_a_file_prints_one_final_table",
        tools::BOARD,
    ) {
        return;
    }
    let dir = std::env::temp_dir().join(format!("etscope-cli-live-{}", std::process::id()));
    let out = dir.join("live.etdp");
    // about a second of streaming, so a redraw every half second would show up more than once
    let ds_cnn = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../assets/ds_cnn_kws/model_int8_cortex_m55.pte");
    let started = std::time::Instant::now();
    let run = etscope(&[
        "board",
        "run",
        p(&ds_cnn),
        "--runs",
        "40",
        "--live",
        "-o",
        p(&out),
    ]);
    let took = started.elapsed();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(
        stdout.matches("live: ").count(),
        1,
        "after {took:?}: {stdout}"
    );
    assert!(stdout.contains("live: 40 runs"), "{stdout}");
    assert!(
        !stdout.contains('\x1b'),
        "no terminal control codes in a file"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// A placed program on the emulated board: its arenas and each call's weights moved to the
/// board's SRAM and ISRAM by a placement file, run with the same instructions, give every
/// instruction's output equal, bit for bit, to the program run unplaced; the firmware says
/// where it put each arena (at fit's size) and how many constant bytes it copied (the moved
/// weights' bytes `fit --place` counts), and that the kernels read the copies. Varied over an
/// explicit-layout M55 program, a default-flow M55 program and an M4 program.
#[test]
fn a_placed_program_runs_on_the_board_with_every_output_as_unplaced_and_its_pools_as_fit_computed()
{
    if !tools::available(
        "a_placed_program_runs_on_the_board_with_every_output_as_unplaced_and_its_pools_as_fit_computed",
        tools::BOARD,
    ) {
        return;
    }
    let dir = fresh_dir("cli-placed");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    for (k, pte) in [
        tiny("model_int8_cortex_m55.pte"),
        fixtures.join("digits/cnn_int8_cortex_m55_default.pte"),
        tiny("model_int8_cortex_m4_default.pte"),
    ]
    .iter()
    .enumerate()
    {
        // every block of the program: the arena pool to SRAM, the weights alternately to SRAM
        // and ISRAM
        let auto = json(&[
            "fit",
            p(pte),
            "--part",
            "mps3-an547",
            "--place",
            "auto",
            "--json",
        ]);
        let mut file = String::new();
        let mut weights = 0;
        for (i, b) in auto["placement"]["blocks"]
            .as_array()
            .expect("blocks")
            .iter()
            .enumerate()
        {
            let name = b["name"].as_str().expect("name");
            let region = match name {
                "method allocator pool" => "SRAM",
                n if n.starts_with("weights of #") => {
                    weights += b["bytes"].as_u64().expect("bytes");
                    if i % 2 == 0 {
                        "SRAM"
                    } else {
                        "ISRAM"
                    }
                }
                _ => continue,
            };
            file.push_str(&format!(
                "[[place]]\nblock = {name:?}\nregion = {region:?}\n"
            ));
        }
        assert!(weights > 0, "{}: no weights to place", pte.display());
        let place = dir.join(format!("placement{k}.toml"));
        std::fs::write(&place, &file).expect("write");
        let placed = json(&[
            "fit",
            p(pte),
            "--part",
            "mps3-an547",
            "--place",
            p(&place),
            "--json",
        ]);
        let arena = placed["ram"]["pools"]
            .as_array()
            .expect("pools")
            .iter()
            .find(|x| x["name"] == "planned arena (memory id 1)")
            .expect("arena 1")
            .clone();
        assert_eq!(arena["region"], "SRAM");
        let run = |name: &str, place: Option<&Path>| -> (Value, PathBuf) {
            let out = dir.join(format!("{name}{k}.etdp"));
            let mut args = vec!["board", "run", p(pte), "--runs", "2", "--intermediates"];
            if let Some(f) = place {
                args.extend(["--place", p(f)]);
            }
            args.extend(["-o", p(&out), "--json"]);
            (json(&args), out)
        };
        let (plain, plain_out) = run("plain", None);
        let (moved, moved_out) = run("placed", Some(&place));
        assert_eq!(moved["runs"], 2);
        let logs: Vec<String> = moved["logs"]
            .as_array()
            .expect("logs")
            .iter()
            .filter_map(|l| l.as_str().map(str::to_string))
            .collect();
        assert!(
            logs.contains(&format!(
                "placed: arena 1 at 0x01000000, {} bytes",
                arena["bytes"]
            )),
            "{}: {logs:?}",
            pte.display()
        );
        // the copies hold the weights fit counts, each constant 16-aligned there
        let (tensors, copied) = logs
            .iter()
            .find_map(|l| {
                let rest = l.strip_prefix("placed: ")?;
                let (n, rest) = rest.split_once(" constant tensors copied out of the image, ")?;
                Some((
                    n.parse::<u64>().ok()?,
                    rest.strip_suffix(" bytes")?.parse::<u64>().ok()?,
                ))
            })
            .unwrap_or_else(|| panic!("{}: no copy line in {logs:?}", pte.display()));
        assert!(
            copied <= weights && weights - copied < 16 * tensors,
            "{}: copied {copied} B in {tensors} tensors, fit counts {weights} B",
            pte.display()
        );
        let reads = logs
            .iter()
            .find_map(|l| {
                l.strip_prefix("placed: ")?
                    .strip_suffix(" reads of constants from their copies")
            })
            .and_then(|n| n.parse::<u64>().ok())
            .expect("the reads line");
        assert!(reads > 0, "{logs:?}");
        assert!(plain["logs"].as_array().is_none_or(|l| l.is_empty()));
        // every instruction's output of both runs, equal byte for byte
        let tensors = |out: &Path| -> Vec<Vec<u8>> {
            let d = dir.join(format!(
                "{}-tensors",
                out.file_stem().expect("stem").to_string_lossy()
            ));
            json(&[
                "tensors",
                "--etdump",
                p(out),
                "--debug-buffer",
                p(&out.with_extension("bin")),
                "--dump",
                p(&d),
                "--json",
            ]);
            let mut files: Vec<PathBuf> = std::fs::read_dir(&d)
                .expect("dumped")
                .map(|e| e.expect("entry").path())
                .collect();
            files.sort();
            files
                .iter()
                .map(|f| std::fs::read(f).expect("npy"))
                .collect()
        };
        let (a, b) = (tensors(&plain_out), tensors(&moved_out));
        assert!(!a.is_empty());
        assert_eq!(a, b, "{}: a placed run's outputs differ", pte.display());
        // the placed program `fit -o` writes for ExecuTorch's runtime (its weights in the .ptd
        // beside it) runs the same on the board, its weights copied where the placement says
        let written = dir.join(format!("written{k}"));
        json(&[
            "fit",
            p(pte),
            "--part",
            "mps3-an547",
            "--place",
            p(&place),
            "-o",
            p(&written),
            "--json",
        ]);
        let placed_pte = written.join(pte.file_name().expect("name"));
        assert!(placed_pte.with_extension("ptd").exists());
        let out = dir.join(format!("written{k}.etdp"));
        let from_ptd = json(&[
            "board",
            "run",
            p(&placed_pte),
            "--runs",
            "2",
            "--intermediates",
            "--place",
            p(&place),
            "-o",
            p(&out),
            "--json",
        ]);
        assert_eq!(from_ptd["logs"], moved["logs"], "{}", pte.display());
        assert_eq!(
            tensors(&out),
            a,
            "{}: the placed program's outputs differ",
            pte.display()
        );
    }
    // a region the firmware keeps for itself is refused, naming it
    let bad = dir.join("dtcm.toml");
    std::fs::write(
        &bad,
        "[[place]]\nblock = \"method allocator pool\"\nregion = \"DTCM\"\n",
    )
    .expect("write");
    let out = etscope(&[
        "board",
        "run",
        p(&tiny("model_int8_cortex_m55.pte")),
        "--place",
        p(&bad),
        "-o",
        p(&dir.join("bad.etdp")),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("DTCM") && err.contains("stack"), "{err}");
}
