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

#[test]
fn a_part_file_of_the_users_own_is_read_by_the_same_rules() {
    let dir = fresh_dir("part-file");
    let file = dir.join("mine.toml");
    let text = r#"
[[part]]
name = "my-board"
core = "cortex-m33"
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
wait_states = 2
[[part.region]]
name = "ram"
kind = "sram"
base = "0x20000000"
size = 262144
"#;
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
    std::fs::write(&file, text.replace("size = 262144", "size = 0")).expect("write");
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
