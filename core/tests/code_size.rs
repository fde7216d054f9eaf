//! The code `fit` counts in flash against real images: every program here linked whole
//! (`tests/fixtures/linked_images.json`, made by `scripts/code_size/linked/link_image.sh`).

mod common;

use etscope_core::analysis::fit;
use etscope_core::formats::pte::Program;
use etscope_core::part;

/// The flash `fit` predicts against real images linked whole (`tests/fixtures/linked_images.json`,
/// made by `scripts/code_size/linked/link_image.sh`): within ±10 % (the goal), and in
/// fact within 3 %, on every image whose program is here.
#[test]
fn the_flash_prediction_is_within_ten_percent_of_every_real_linked_image() {
    let root = common::fixtures().join("..").join("..");
    let doc: serde_json::Value = serde_json::from_slice(&common::read(
        &common::fixtures().join("linked_images.json"),
    ))
    .expect("json");
    let mut checked = 0;
    for image in doc["images"].as_array().expect("images") {
        let path = root.join(image["program"].as_str().expect("program"));
        if !path.exists() {
            continue; // ../shared is not in a fresh clone
        }
        let program = Program::parse(common::read(&path)).expect("a program");
        let part = part::find(image["part"].as_str().expect("part")).expect("a part");
        let (code, _) = fit::code_sizes(&program, 0, part.core);
        let f = fit::fit(&program, 0, &part, code).expect("a fit");
        let linked = image["text"].as_u64().expect("text") + image["data"].as_u64().expect("data");
        let error = f.flash_total as f64 / linked as f64 - 1.0;
        assert!(f.flash_complete, "{}", path.display());
        assert!(
            error.abs() < 0.03,
            "{}: predicted {} B, linked {linked} B ({:+.1} %)",
            path.display(),
            f.flash_total,
            error * 100.0
        );
        checked += 1;
    }
    assert!(checked >= 4, "only {checked} images checked");
}
