//! `etscope graph FILE --layout --json` on every committed model (and the shared reference set
//! when it is there): every graph edge drawn, no edge through a box that is not its end, boxes
//! apart, module boxes nested or apart with no foreign node inside, and edge crossings within
//! 1.25× (or 2 more than) what Graphviz `dot` makes of the same graph with the same box sizes.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use super::{json, tools};

const EPS: f64 = 0.5;

type P = [f64; 2];
type R = [f64; 4];

fn point(v: &Value) -> P {
    [
        v[0].as_f64().unwrap_or(f64::NAN),
        v[1].as_f64().unwrap_or(f64::NAN),
    ]
}

fn rect(v: &Value) -> R {
    ["x", "y", "w", "h"].map(|k| v[k].as_f64().unwrap_or(f64::NAN))
}

fn orient(a: P, b: P, c: P) -> i32 {
    let v = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
    if v.abs() < 1e-6 {
        0
    } else if v > 0.0 {
        1
    } else {
        -1
    }
}

fn crosses(p: P, q: P, r: P, s: P) -> bool {
    orient(p, q, r) * orient(p, q, s) < 0 && orient(r, s, p) * orient(r, s, q) < 0
}

/// Whether segment p–q passes through the inside of box `b` (Liang–Barsky clipping).
fn through(p: P, q: P, b: R) -> bool {
    let (x0, y0, x1, y1) = (b[0] + EPS, b[1] + EPS, b[0] + b[2] - EPS, b[1] + b[3] - EPS);
    if x1 <= x0 || y1 <= y0 {
        return false;
    }
    let (dx, dy) = (q[0] - p[0], q[1] - p[1]);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (pp, qq) in [
        (-dx, p[0] - x0),
        (dx, x1 - p[0]),
        (-dy, p[1] - y0),
        (dy, y1 - p[1]),
    ] {
        if pp.abs() < 1e-12 {
            if qq < 0.0 {
                return false;
            }
        } else if pp < 0.0 {
            t0 = t0.max(qq / pp);
        } else {
            t1 = t1.min(qq / pp);
        }
        if t0 > t1 {
            return false;
        }
    }
    t1 - t0 > 1e-6
}

fn overlap(a: R, b: R) -> bool {
    a[0] + EPS < b[0] + b[2]
        && b[0] + EPS < a[0] + a[2]
        && a[1] + EPS < b[1] + b[3]
        && b[1] + EPS < a[1] + a[3]
}

fn inside(a: R, b: R) -> bool {
    b[0] - EPS <= a[0]
        && a[0] + a[2] <= b[0] + b[2] + EPS
        && b[1] - EPS <= a[1]
        && a[1] + a[3] <= b[1] + b[3] + EPS
}

fn crossings(polylines: &[Vec<P>]) -> usize {
    let segs: Vec<(usize, P, P)> = polylines
        .iter()
        .enumerate()
        .flat_map(|(k, pts)| pts.windows(2).map(move |w| (k, w[0], w[1])))
        .collect();
    let mut c = 0;
    for i in 0..segs.len() {
        for j in i + 1..segs.len() {
            if segs[i].0 != segs[j].0 && crosses(segs[i].1, segs[i].2, segs[j].1, segs[j].2) {
                c += 1;
            }
        }
    }
    c
}

/// What `dot` makes of the same nodes (same sizes) and edges: its edges' control polygons.
fn dot_polylines(nodes: &[Value], edges: &[Value]) -> Vec<Vec<P>> {
    let mut src = String::from(
        "digraph g {\nrankdir=TB; nodesep=0.25; ranksep=0.4;\nnode [shape=box, fixedsize=true];\n",
    );
    for n in nodes {
        let r = rect(n);
        src += &format!(
            "n{} [width={:.4}, height={:.4}];\n",
            n["id"],
            r[2].max(1.0) / 72.0,
            r[3].max(1.0) / 72.0
        );
    }
    for e in edges {
        src += &format!("n{} -> n{};\n", e["from"], e["to"]);
    }
    src += "}\n";
    let mut child = Command::new("dot")
        .arg("-Tjson")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("dot runs");
    std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), src.as_bytes())
        .expect("dot reads");
    let out = child.wait_with_output().expect("dot finishes");
    assert!(out.status.success(), "dot failed");
    let v: Value = serde_json::from_slice(&out.stdout).expect("dot writes JSON");
    v["edges"]
        .as_array()
        .map(|es| {
            es.iter()
                .map(|e| {
                    e["_draw_"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|op| matches!(op["op"].as_str(), Some("b" | "B")))
                        .flat_map(|op| op["points"].as_array().cloned().unwrap_or_default())
                        .map(|p| point(&p))
                        .collect::<Vec<P>>()
                })
                .filter(|pts| pts.len() >= 2)
                .collect()
        })
        .unwrap_or_default()
}

/// The programs checked: every committed model, and the reference set when it is there.
fn programs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = Vec::new();
    for dir in [
        "tests/fixtures/models",
        "tests/fixtures/diff_cases",
        "../shared/reference",
    ] {
        let Ok(models) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut models: Vec<PathBuf> = models.flatten().map(|e| e.path()).collect();
        models.sort();
        for m in models {
            if m.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("stress"))
            {
                continue;
            }
            let Ok(files) = std::fs::read_dir(&m) else {
                continue;
            };
            let mut files: Vec<PathBuf> = files
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "pte"))
                .collect();
            files.sort();
            out.extend(files);
        }
    }
    out.push(root.join("tests/fixtures/tiny_conv_relu_linear/model_int8_cortex_m55.pte"));
    out
}

/// The geometry rules on one program; returns (our crossings, the polylines' count check).
fn check(pte: &Path) -> (Vec<Value>, Vec<Value>, usize) {
    let name = pte.display().to_string();
    let d = json(&["graph", &name, "--layout", "--json"]);
    let lay = &d["layout"];
    let nodes = lay["nodes"].as_array().cloned().unwrap_or_default();
    let edges = lay["edges"].as_array().cloned().unwrap_or_default();
    let modules = lay["modules"].as_array().cloned().unwrap_or_default();
    let drawn: std::collections::HashSet<(u64, u64)> = edges
        .iter()
        .map(|e| {
            (
                e["from"].as_u64().unwrap_or(0),
                e["to"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    for e in d["edges"].as_array().into_iter().flatten() {
        let pair = (
            e["from"].as_u64().unwrap_or(0),
            e["to"].as_u64().unwrap_or(0),
        );
        assert!(
            drawn.contains(&pair),
            "{name}: graph edge {pair:?} not drawn"
        );
    }
    let boxes: Vec<(u64, R)> = nodes
        .iter()
        .map(|n| (n["id"].as_u64().unwrap_or(0), rect(n)))
        .collect();
    let polylines: Vec<Vec<P>> = edges
        .iter()
        .map(|e| {
            e["points"]
                .as_array()
                .into_iter()
                .flatten()
                .map(point)
                .collect()
        })
        .collect();
    for (e, pts) in edges.iter().zip(&polylines) {
        let ends = (e["from"].as_u64(), e["to"].as_u64());
        assert!(pts.len() >= 2, "{name}: edge {e} has no route");
        assert!(
            pts[pts.len() - 1][1] > pts[0][1],
            "{name}: edge {e} does not point down"
        );
        for w in pts.windows(2) {
            for &(id, b) in &boxes {
                if Some(id) != ends.0 && Some(id) != ends.1 {
                    assert!(
                        !through(w[0], w[1], b),
                        "{name}: edge {e} passes through node {id}"
                    );
                }
            }
        }
    }
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            assert!(
                !overlap(a.1, b.1),
                "{name}: nodes {} and {} overlap",
                a.0,
                b.0
            );
        }
    }
    let frames: Vec<(String, R)> = modules
        .iter()
        .map(|m| (m["path"].as_str().unwrap_or("").to_string(), rect(m)))
        .collect();
    for (i, a) in frames.iter().enumerate() {
        for b in &frames[i + 1..] {
            let nested = inside(a.1, b.1) || inside(b.1, a.1);
            assert!(
                !overlap(a.1, b.1) || nested,
                "{name}: module boxes {} and {} partly overlap",
                a.0,
                b.0
            );
        }
        // a node inside a module's box belongs to that module
        for n in &nodes {
            let r = rect(n);
            if overlap(r, a.1) {
                let id = n["id"].as_u64().unwrap_or(0) as usize;
                let stack = &d["nodes"][id]["module_stack"];
                let member = stack
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|f| f["path"].as_str() == Some(a.0.as_str()));
                assert!(member, "{name}: node {id} drawn inside module {}", a.0);
            }
        }
    }
    let ours = crossings(&polylines);
    (nodes, edges, ours)
}

#[test]
fn the_drawn_layout_shows_every_edge_and_crosses_about_as_little_as_dot() {
    let with_dot = tools::available(
        "the layout's crossings against Graphviz dot",
        &[("dot", "graphviz")],
    );
    let mut report = Vec::new();
    for pte in programs() {
        if !pte.is_file() {
            continue;
        }
        let (nodes, edges, ours) = check(&pte);
        if with_dot {
            let reference = crossings(&dot_polylines(&nodes, &edges));
            let limit = (1.25 * reference as f64).max(reference as f64 + 2.0);
            assert!(
                ours as f64 <= limit,
                "{}: {ours} edge crossings, dot makes {reference}",
                pte.display()
            );
            report.push(json!([pte.display().to_string(), ours, reference]));
        }
    }
    assert!(
        report.len() > 20 || !with_dot,
        "too few programs checked: {report:?}"
    );
}

#[test]
fn a_skip_connection_is_drawn_beside_the_nodes_it_skips() {
    // the U-Net's encoder output joins the decoder's cat: its edge must not run under the
    // pooling and the bottleneck between them
    let pte = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/diff_cases/unet_bn/model_fp32.pte");
    let d = json(&["graph", &pte.display().to_string(), "--layout", "--json"]);
    let cat = d["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|n| n["op"].as_str().is_some_and(|o| o.contains("cat")))
        .expect("the U-Net has a cat");
    let id = cat["id"].as_u64().expect("id");
    let into: Vec<&Value> = d["layout"]["edges"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["to"].as_u64() == Some(id))
        .collect();
    assert_eq!(into.len(), 2, "the cat's two inputs are two drawn edges");
    let boxes: Vec<(u64, R)> = d["layout"]["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|n| (n["id"].as_u64().unwrap_or(0), rect(n)))
        .collect();
    for e in into {
        let pts: Vec<P> = e["points"]
            .as_array()
            .into_iter()
            .flatten()
            .map(point)
            .collect();
        for w in pts.windows(2) {
            for &(n, b) in &boxes {
                if Some(n) != e["from"].as_u64() && n != id {
                    assert!(
                        !through(w[0], w[1], b),
                        "the cat's input {e} runs under node {n}"
                    );
                }
            }
        }
    }
}
