//! `etscope parts` and `--part`: the built-in parts with their regions and sources, a part file
//! of the user's own read by the same rules, and `cost --part` pricing on the part's core and
//! clock with the wait states of the memory its weights are read from.

use super::{etscope, fresh_dir, json, tiny};

const PARTS: [&str; 12] = [
    "alif-e8-hp",
    "ek-ra8d1",
    "ek-ra6m4",
    "nucleo-l4r5zi",
    "nrf5340-dk",
    "numaker-m467hj",
    "nucleo-h7a3zi",
    "nucleo-g0b1re",
    "pico2",
    "corstone-300",
    "corstone-320",
    "mps3-an547",
];

#[test]
fn parts_lists_every_built_in_part_with_its_regions_and_sources() {
    let doc = json(&["parts", "--json"]);
    let parts = doc.as_array().expect("a list");
    for want in PARTS {
        let p = parts
            .iter()
            .find(|p| p["name"] == want)
            .unwrap_or_else(|| panic!("{want} missing"));
        for key in ["core", "mhz", "regions", "link"] {
            assert!(!p[key].is_null(), "{want}: {key}");
        }
        let regions = p["regions"].as_array().expect("regions");
        assert!(!regions.is_empty());
        for r in regions {
            for key in ["name", "kind", "base", "size", "source"] {
                assert!(!r[key].is_null(), "{want}: {r}");
            }
        }
        // the link names regions of the part
        for what in ["code", "constants", "arenas", "stack"] {
            assert!(
                regions.iter().any(|r| r["name"] == p["link"][what]),
                "{want}: link.{what}"
            );
        }
    }
}

#[test]
fn cost_on_a_part_takes_its_core_clock_and_the_wait_states_of_its_weights_memory() {
    let pte = tiny("model_int8_cortex_m4_default.pte");
    let part = json(&[
        "cost",
        pte.to_str().expect("path"),
        "--part",
        "nucleo-l4r5zi",
        "--json",
    ]);
    assert_eq!(part["core"], "m4");
    assert_eq!(part["mhz"], 120.0);
    // ST's flash latency at 120 MHz (range 1 boost, as ST's LL utilities encode RM0432's
    // table): 5 wait states, the weights read from flash
    assert_eq!(part["flash_wait_states"], 5);
    assert_eq!(part["part"]["name"], "nucleo-l4r5zi");
    assert!(part["memory_note"]
        .as_str()
        .is_some_and(|n| n.contains("5 wait states")));
    let bare = json(&[
        "cost",
        pte.to_str().expect("path"),
        "--core",
        "m4",
        "--mhz",
        "120",
        "--json",
    ]);
    assert!(part["total_cycles"].as_f64() > bare["total_cycles"].as_f64());
    // wait states a part's source does not state are not charged, and the note says so
    let nrf = json(&[
        "cost",
        pte.to_str().expect("path"),
        "--part",
        "nrf5340-dk",
        "--json",
    ]);
    assert_eq!(nrf["flash_wait_states"], 0);
    assert!(nrf["memory_note"]
        .as_str()
        .is_some_and(|n| n.contains("not known")));
    // a --core that contradicts the part is refused
    let out = etscope(&[
        "cost",
        pte.to_str().expect("path"),
        "--part",
        "nucleo-l4r5zi",
        "--core",
        "m55",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("contradicts --part nucleo-l4r5zi"));
    let out = etscope(&["cost", pte.to_str().expect("path"), "--part", "no-such"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nucleo-l4r5zi"));
}

/// A part file of one part at 100 MHz: 1 MiB of flash (with `flash_wait_states`, when given) at
/// 0x0 holding code and constants, `ram_bytes` of SRAM at 0x20000000 holding arenas and stack.
fn part_file(name: &str, core: &str, flash_wait_states: Option<u32>, ram_bytes: u64) -> String {
    let wait = flash_wait_states.map_or(String::new(), |w| format!("wait_states = {w}\n"));
    format!(
        r#"
[[part]]
name = "{name}"
core = "{core}"
mhz = 100
[part.link]
code = "flash"
constants = "flash"
arenas = "ram"
stack = "ram"
[[part.region]]
name = "flash"
kind = "flash"
base = "0x0"
size = 1048576
{wait}[[part.region]]
name = "ram"
kind = "sram"
base = "0x20000000"
size = {ram_bytes}
"#
    )
}

#[test]
fn a_part_file_of_the_users_own_is_read_by_the_same_rules() {
    let dir = fresh_dir("part-file");
    let file = dir.join("mine.toml");
    let text = part_file("my-board", "cortex-m33", Some(2), 262_144);
    std::fs::write(&file, text).expect("write");
    let pte = tiny("model_int8_cortex_m4_default.pte");
    let doc = json(&[
        "cost",
        pte.to_str().expect("path"),
        "--part",
        file.to_str().expect("path"),
        "--json",
    ]);
    assert_eq!(doc["core"], "m33");
    assert_eq!(doc["mhz"], 100.0);
    assert_eq!(doc["flash_wait_states"], 2);
    std::fs::write(&file, part_file("my-board", "cortex-m33", Some(2), 0)).expect("write");
    let out = etscope(&[
        "cost",
        pte.to_str().expect("path"),
        "--part",
        file.to_str().expect("path"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("mine.toml: part \"my-board\": region \"ram\": size"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `fit`: the pools add up to the RAM total, each region's use covers what its link puts there,
/// `fits` agrees with the regions, the estimate is `cost --part`'s, and a program with float
/// inputs has the int8-inputs what-if with less RAM; a part too small says it does not fit.
#[test]
fn fit_adds_up_the_pools_per_region_and_prices_int8_inputs() {
    let digits = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/digits");
    let pte = digits.join("cnn_int8_cortex_m55_default.pte");
    let pte = pte.to_str().expect("path");
    for part in ["mps3-an547", "alif-e8-hp", "nucleo-l4r5zi"] {
        let d = json(&["fit", pte, "--part", part, "--json"]);
        let pools = d["ram"]["pools"].as_array().expect("pools");
        let sum: u64 = pools
            .iter()
            .map(|p| p["bytes"].as_u64().expect("bytes"))
            .sum();
        assert_eq!(Some(sum), d["ram"]["total"].as_u64(), "{part}");
        // the planned arena is the program's, the method allocator ExecuTorch's runtime's
        assert!(pools.iter().any(|p| p["name"]
            .as_str()
            .is_some_and(|n| n.starts_with("planned arena"))));
        assert!(pools.iter().any(|p| p["name"] == "method allocator"));
        let regions = d["regions"].as_array().expect("regions");
        for r in regions {
            let placed: u64 = pools
                .iter()
                .filter(|p| p["region"] == r["name"])
                .map(|p| p["bytes"].as_u64().expect("bytes"))
                .sum();
            assert!(r["used"].as_u64().expect("used") >= placed, "{part}: {r}");
        }
        let fits = regions
            .iter()
            .all(|r| r["used"].as_u64() <= r["size"].as_u64());
        assert_eq!(d["fits"], fits, "{part}");
        let fl = &d["flash"];
        assert_eq!(
            fl["program"].as_u64(),
            std::fs::metadata(pte).ok().map(|m| m.len())
        );
        assert!(fl["total"].as_u64() >= fl["program"].as_u64());
        // the runtime's parts add up to it (string merging counted, negative)
        let parts: i64 = fl["runtime_parts"]
            .as_object()
            .expect("runtime parts")
            .values()
            .filter_map(serde_json::Value::as_i64)
            .sum();
        assert_eq!(Some(parts), fl["runtime"].as_i64(), "{part}: {fl}");
        assert!(fl["build"].is_string(), "{fl}");
        // every operator's kernel measured: the code is the runtime, the kernels and CMSIS-NN
        assert_eq!(fl["complete"], true, "{fl}");
        assert!(fl["unknown_ops"].as_array().is_some_and(Vec::is_empty));
        // each operator's kernel as linking it alone added (linked builds), or its kernel file
        // (object sizes)
        let files = fl["kernel_files"].as_object().expect("kernel files");
        assert!(
            files.contains_key("cortex_m::quantized_conv2d.out")
                || files.contains_key("cortex_m::op_quantized_conv2d"),
            "{files:?}"
        );
        // the kernel registry's static table is RAM the runtime keeps
        assert!(pools.iter().any(|p| p["name"] == "kernel registry"));
        // the CMSIS-NN functions the convolutions and the linear layer call, and what those call
        let linked = fl["cmsis_nn_functions"].as_object().expect("functions");
        for f in [
            "arm_convolve_wrapper_s8",
            "arm_fully_connected_s8",
            "arm_nn_vec_mat_mult_t_s8",
        ] {
            assert!(linked.contains_key(f), "{part}: {f} not linked");
        }
        let sum: u64 = linked.values().map(|v| v.as_u64().expect("size")).sum();
        assert_eq!(fl["cmsis_nn"].as_u64(), Some(sum));
        assert_eq!(
            fl["total"].as_u64(),
            Some(
                fl["program"].as_u64().expect("program")
                    + fl["runtime"].as_u64().expect("runtime")
                    + fl["kernels"].as_u64().expect("kernels")
                    + sum
            )
        );
        let int8 = d["what_if"]
            .as_array()
            .expect("what-ifs")
            .iter()
            .find(|w| w["change"].as_str().is_some_and(|c| c.contains("int8")))
            .expect("an int8-inputs what-if");
        // the digits CNN's float input is not on its arena's peak: passing it as int8 saves none
        assert!(
            int8["ram_total"].as_u64() <= d["ram"]["total"].as_u64(),
            "{int8}"
        );
        let cost = json(&["cost", pte, "--part", part, "--json"]);
        assert_eq!(cost["total_ms"], d["latency_ms"], "{part}");
    }
    // ground truth: the arena the what-if predicts is the one ExecuTorch plans for the same model
    // exported with its own QuantizeInputs (tests/fixtures/tools/make_quantize_io.py)
    let io = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/quantize_io");
    let d = json(&[
        "fit",
        io.join("model_int8_m55.pte").to_str().expect("path"),
        "--part",
        "mps3-an547",
        "--json",
    ]);
    let theirs = json(&[
        "fit",
        io.join("model_int8_m55_quantized_inputs.pte")
            .to_str()
            .expect("path"),
        "--part",
        "mps3-an547",
        "--json",
    ]);
    let arena = |doc: &serde_json::Value| doc["ram"]["pools"][0]["bytes"].as_u64().expect("arena");
    let int8 = d["what_if"]
        .as_array()
        .expect("what-ifs")
        .iter()
        .find(|w| w["change"].as_str().is_some_and(|c| c.contains("int8")))
        .expect("an int8-inputs what-if");
    // the what-if keeps the method allocator and temp allocator of the program as it is
    let others = d["ram"]["total"].as_u64().expect("total") - arena(&d);
    assert_eq!(
        int8["ram_total"].as_u64().expect("ram") - others,
        arena(&theirs),
        "{int8}"
    );
    assert!(arena(&theirs) < arena(&d));
    // and with the outputs as int8 too, the arena ExecuTorch plans after QuantizeInputs and
    // QuantizeOutputs (the explicit flow's, the one whose program runs)
    let base = json(&[
        "fit",
        io.join("model_int8_m55_explicit.pte")
            .to_str()
            .expect("path"),
        "--part",
        "mps3-an547",
        "--json",
    ]);
    let both = json(&[
        "fit",
        io.join("model_int8_m55_explicit_quantized_io.pte")
            .to_str()
            .expect("path"),
        "--part",
        "mps3-an547",
        "--json",
    ]);
    let io_what_if = base["what_if"]
        .as_array()
        .expect("what-ifs")
        .iter()
        .find(|w| {
            w["change"]
                .as_str()
                .is_some_and(|c| c.contains("inputs and outputs"))
        })
        .expect("an int8 inputs-and-outputs what-if");
    let others = base["ram"]["total"].as_u64().expect("total") - arena(&base);
    assert_eq!(
        io_what_if["ram_total"].as_u64().expect("ram") - others,
        arena(&both),
        "{io_what_if}"
    );
    // an operator no measured kernel implements is named, and flash is then a lower bound
    // (ExecuTorch's own explicit-flow mixed program calls aten::linear.out, which the portable
    // library does not have)
    let mixed = json(&[
        "fit",
        digits
            .join("cnn_int8_cortex_m55_explicit_float_fc.pte")
            .to_str()
            .expect("path"),
        "--part",
        "mps3-an547",
        "--json",
    ]);
    assert_eq!(mixed["flash"]["complete"], false);
    assert_eq!(mixed["flash"]["unknown_ops"][0], "aten::linear.out");
    // a program lowered for a core without Helium fits a Helium part but does not run there:
    // CMSIS-NN's MVE linear needs the kernel sum the M4 program does not carry
    let m4 = tiny("model_int8_cortex_m4_default.pte");
    let on = |part: &str| json(&["fit", m4.to_str().expect("path"), "--part", part, "--json"]);
    let helium = on("alif-e8-hp");
    assert_eq!(helium["runs"], false, "{}", helium["would_not_run"]);
    assert!(helium["would_not_run"][0]["why"]
        .as_str()
        .is_some_and(|w| w.contains("kernel sum")));
    assert_eq!(on("nucleo-l4r5zi")["runs"], true);
    let out = etscope(&["fit", m4.to_str().expect("path"), "--part", "alif-e8-hp"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("does NOT run as lowered on the alif-e8-hp")
    );
    // a part whose RAM is smaller than the arena does not fit, and says which region is over
    let dir = fresh_dir("fit-small");
    let file = dir.join("small.toml");
    std::fs::write(&file, part_file("small", "m55", None, 1024)).expect("write");
    let d = json(&["fit", pte, "--part", file.to_str().expect("path"), "--json"]);
    assert_eq!(d["fits"], false);
    let out = etscope(&["fit", pte, "--part", file.to_str().expect("path")]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("does NOT fit"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("OVER"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `fit -o`: the header and the linker fragment build into a Cortex-M55 image with the Arm GNU
/// toolchain, the runner's pools declared as ExecuTorch's Arm bare-metal runner declares them
/// land in the region the part's link names, at the sizes `fit` computed.
#[test]
fn fit_writes_a_header_and_a_linker_fragment_that_build_into_an_image() {
    let digits = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/digits");
    let pte = digits.join("cnn_int8_cortex_m55_default.pte");
    let dir = fresh_dir("fit-out");
    let d = json(&[
        "fit",
        pte.to_str().expect("path"),
        "--part",
        "mps3-an547",
        "-o",
        dir.to_str().expect("path"),
        "--json",
    ]);
    assert_eq!(d["written"].as_array().map(Vec::len), Some(2), "{d}");
    let header = std::fs::read_to_string(dir.join("etscope_pools.h")).expect("header");
    let define = |name: &str| -> u64 {
        header
            .lines()
            .find_map(|l| l.strip_prefix(&format!("#define {name} ")))
            .and_then(|v| v.trim_end_matches('u').parse().ok())
            .unwrap_or_else(|| panic!("{name} not in the header:\n{header}"))
    };
    let pool = define("ET_ARM_BAREMETAL_METHOD_ALLOCATOR_POOL_SIZE");
    let temp = define("ET_ARM_BAREMETAL_SCRATCH_TEMP_ALLOCATOR_POOL_SIZE");
    // the pools the runner needs: the arena (16-aligned), Method::load's allocator, one input's
    // EValue; the temp pool is the temp allocator
    let bytes = |name: &str| {
        d["ram"]["pools"]
            .as_array()
            .expect("pools")
            .iter()
            .find(|p| p["name"] == name)
            .and_then(|p| p["bytes"].as_u64())
            .expect(name)
    };
    let arena = bytes("planned arena (memory id 1)");
    assert_eq!(
        pool,
        arena.div_ceil(16) * 16 + bytes("method allocator") + 16
    );
    assert_eq!(temp, bytes("temp allocator"));
    if !super::tools::available(
        "fit_writes_a_header_and_a_linker_fragment_that_build_into_an_image",
        super::tools::BOARD,
    ) {
        return;
    }
    std::fs::write(
        dir.join("main.c"),
        r#"#include "etscope_pools.h"
unsigned char __attribute__((section(".bss.method_allocator_sec"), aligned(16)))
    method_allocation_pool[ET_ARM_BAREMETAL_METHOD_ALLOCATOR_POOL_SIZE];
unsigned char __attribute__((section(".bss.tensor_arena"), aligned(16)))
    temp_allocation_pool[ET_ARM_BAREMETAL_SCRATCH_TEMP_ALLOCATOR_POOL_SIZE];
const unsigned char __attribute__((section("network_model_sec"), aligned(16))) model_pte[16] = {1};
void Reset_Handler(void) { for (;;) { } }
"#,
    )
    .expect("write");
    std::fs::write(
        dir.join("image.ld"),
        "INCLUDE etscope_regions.ld\nENTRY(Reset_Handler)\nSECTIONS\n{\n  .text : { *(.text*) } > ITCM\n}\n",
    )
    .expect("write");
    let cc = std::process::Command::new("arm-none-eabi-gcc")
        .current_dir(&dir)
        .args([
            "-mcpu=cortex-m55",
            "-mthumb",
            "-nostdlib",
            "-T",
            "image.ld",
            "-L",
            ".",
            "main.c",
            "-o",
            "image.elf",
        ])
        .output()
        .expect("arm-none-eabi-gcc runs");
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let nm = std::process::Command::new("arm-none-eabi-nm")
        .current_dir(&dir)
        .args(["-S", "image.elf"])
        .output()
        .expect("arm-none-eabi-nm runs");
    let symbols = String::from_utf8_lossy(&nm.stdout).to_string();
    let region = d["part"]["regions"]
        .as_array()
        .expect("regions")
        .iter()
        .find(|r| r["name"] == d["part"]["link"]["arenas"])
        .expect("the arenas' region")
        .clone();
    let (base, size) = (
        region["base"].as_u64().expect("base"),
        region["size"].as_u64().expect("size"),
    );
    for (symbol, want) in [
        ("method_allocation_pool", pool),
        ("temp_allocation_pool", temp),
    ] {
        let line = symbols
            .lines()
            .find(|l| l.ends_with(&format!(" {symbol}")))
            .unwrap_or_else(|| panic!("{symbol} not in the image:\n{symbols}"));
        let fields: Vec<&str> = line.split_whitespace().collect();
        let addr = u64::from_str_radix(fields[0], 16).expect("address");
        let len = u64::from_str_radix(fields[1], 16).expect("size");
        assert_eq!(len, want, "{symbol}");
        assert!(
            addr >= base && addr + len <= base + size,
            "{symbol} at {addr:#x}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `fit --check` is a gate: exit 1 after the report when the program does not fit the part or
/// the part's core does not run it, 0 when it fits and runs; without `--check` a report is a
/// report (exit 0).
#[test]
fn fit_check_exits_1_when_the_program_does_not_fit_or_run() {
    let dir = fresh_dir("fit-check");
    let pte = tiny("model_int8_cortex_m4_default.pte");
    let fit = |part: &str, check: bool| {
        let mut args = vec!["fit", pte.to_str().expect("path"), "--part", part];
        if check {
            args.push("--check");
        }
        etscope(&args)
    };
    let roomy = dir.join("roomy.toml");
    std::fs::write(&roomy, part_file("roomy", "cortex-m4", None, 1 << 20)).expect("write");
    let tight = dir.join("tight.toml");
    std::fs::write(&tight, part_file("tight", "cortex-m4", None, 1024)).expect("write");
    assert_eq!(
        fit(roomy.to_str().expect("path"), true).status.code(),
        Some(0)
    );
    let over = fit(tight.to_str().expect("path"), true);
    assert_eq!(over.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&over.stdout).contains("does NOT fit"));
    let err = String::from_utf8_lossy(&over.stderr);
    assert!(err.contains("does not fit: ram over by"), "{err}");
    assert_eq!(
        fit(tight.to_str().expect("path"), false).status.code(),
        Some(0)
    );
    // an M4 program on a Helium part fits its memory, but its core does not run it
    let helium = fit("alif-e8-hp", true);
    assert_eq!(helium.status.code(), Some(1));
    let out = String::from_utf8_lossy(&helium.stdout);
    assert!(
        out.lines()
            .next()
            .is_some_and(|l| l.contains("fits, but does NOT run")),
        "{out}"
    );
    // a Helium program on a DSP part runs there, but its linear layer loses its bias (the
    // kernel sum only the MVE path reads): the gate fails, `cost` names the call
    let m55 = tiny("model_int8_cortex_m55.pte");
    let wrong = etscope(&[
        "fit",
        m55.to_str().expect("path"),
        "--part",
        "nucleo-l4r5zi",
        "--check",
    ]);
    assert_eq!(wrong.status.code(), Some(1));
    let out = String::from_utf8_lossy(&wrong.stdout);
    assert!(out.contains("without its bias"), "{out}");
    let cost = json(&[
        "cost",
        m55.to_str().expect("path"),
        "--part",
        "nucleo-l4r5zi",
        "--json",
    ]);
    let calls = cost["would_not_run"].as_array().expect("would_not_run");
    assert!(
        calls.iter().any(|c| c["why"]
            .as_str()
            .is_some_and(|w| w.contains("without its bias"))),
        "{calls:?}"
    );
    // a program delegated to XNNPACK does not run on a Cortex-M; its latency is a lower bound
    let xnnpack = tiny("model_fp32_xnnpack.pte");
    let host_only = etscope(&[
        "fit",
        xnnpack.to_str().expect("path"),
        "--part",
        "nucleo-l4r5zi",
        "--check",
    ]);
    assert_eq!(host_only.status.code(), Some(1));
    let out = String::from_utf8_lossy(&host_only.stdout).to_string();
    assert!(out.contains("delegates to XnnpackBackend"), "{out}");
    assert!(
        out.contains("estimated latency: at least 0.000 ms (1 calls without a model"),
        "{out}"
    );
    // a part from a file says so, and the command that gives its estimate names the file
    let out =
        String::from_utf8_lossy(&fit(roomy.to_str().expect("path"), false).stdout).to_string();
    assert!(
        out.contains(&format!("on roomy (from {})", roomy.display())),
        "{out}"
    );
    assert!(
        out.contains(&format!("`cost --part {}`", roomy.display())),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A part file may name a probe-rs chip instead of listing its regions: the regions come from
/// probe-rs's target database (the same bases and sizes as the built-in part sourced from it),
/// with a default link; a chip probe-rs does not know is refused, naming the field.
#[test]
fn a_part_file_that_names_a_probe_rs_chip_takes_its_memory_map() {
    let dir = fresh_dir("chip-part");
    let file = dir.join("chip.toml");
    std::fs::write(
        &file,
        "[[part]]\nname = \"my-h7a3\"\ncore = \"m7\"\nmhz = 280\nprobe_rs_chip = \"STM32H7A3ZI\"\n",
    )
    .expect("write");
    let pte = tiny("model_int8_cortex_m4_default.pte");
    let d = json(&[
        "fit",
        pte.to_str().expect("path"),
        "--part",
        file.to_str().expect("path"),
        "--json",
    ]);
    let regions = d["part"]["regions"].as_array().expect("regions");
    let at = |name: &str| {
        regions
            .iter()
            .find(|r| r["name"] == name)
            .map(|r| (r["kind"].clone(), r["base"].as_u64(), r["size"].as_u64()))
    };
    let builtin = json(&["parts", "--json"]);
    let h7 = builtin
        .as_array()
        .expect("parts")
        .iter()
        .find(|p| p["name"] == "nucleo-h7a3zi")
        .expect("the built-in H7A3");
    let base_of = |name: &str| {
        h7["regions"]
            .as_array()
            .expect("regions")
            .iter()
            .find(|r| r["name"] == name)
            .and_then(|r| r["base"].as_u64())
    };
    // the two contiguous banks are one region, as the built-in part's flash and a linker's FLASH
    assert_eq!(at("BANK_1+BANK_2").map(|r| r.1), Some(base_of("Flash")));
    assert_eq!(
        at("BANK_1+BANK_2").map(|r| r.2),
        h7["regions"]
            .as_array()
            .expect("regions")
            .iter()
            .find(|r| r["name"] == "Flash")
            .map(|r| r["size"].as_u64())
    );
    assert_eq!(
        at("DTCM").map(|r| (r.0, r.1)),
        Some((serde_json::json!("dtcm"), base_of("DTCM")))
    );
    assert_eq!(d["part"]["link"]["constants"], "BANK_1+BANK_2");
    assert_eq!(d["fits"], true);
    // a chip probe-rs does not know
    std::fs::write(
        &file,
        "[[part]]\nname = \"nope\"\ncore = \"m4\"\nmhz = 100\nprobe_rs_chip = \"NOT_A_CHIP_123\"\n",
    )
    .expect("write");
    let out = etscope(&[
        "fit",
        pte.to_str().expect("path"),
        "--part",
        file.to_str().expect("path"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("probe_rs_chip") && err.contains("NOT_A_CHIP_123"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
