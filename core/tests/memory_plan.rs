//! The derived memory plan against ExecuTorch's own memory-plan dumps (`graphs/*_memory_plan.json`).

mod common;

use std::collections::BTreeSet;

use etscope_core::formats::pte::Program;
use etscope_core::ir::from_pte::graph_from_plan;
use etscope_core::plan::{derive, Finding};

#[test]
fn offsets_and_sizes_match_executorchs_plan_and_bounds_hold() {
    let mut checked = 0;
    for model in common::models() {
        for (variant, dump) in [
            ("model_fp32", "fp32_04_executorch_memory_plan.json"),
            (
                "model_int8_cortex_m55",
                "int8_04_executorch_memory_plan.json",
            ),
        ] {
            let pte = model.join(format!("{variant}.pte"));
            let program = Program::parse(common::read(&pte)).expect("parse");
            let graph = graph_from_plan(&program, 0).expect("plan 0");
            let plan = derive(&graph);
            // ExecuTorch's own placements: (memory_id, offset, size) of every planned tensor
            let truth = common::json(&model.join("graphs").join(dump));
            let want: BTreeSet<(u64, u64, u64)> = truth
                .as_array()
                .expect("list")
                .iter()
                .filter(|r| r["mem_id"].is_u64() && r["op"] != "output")
                .map(|r| {
                    (
                        r["mem_id"].as_u64().unwrap_or(0),
                        r["mem_offset"].as_u64().unwrap_or(0),
                        r["allocated_memory"].as_u64().unwrap_or(0),
                    )
                })
                .collect();
            let mut got: BTreeSet<(u64, u64, u64)> = BTreeSet::new();
            for a in &plan.arenas {
                for t in &a.tensors {
                    // ExecuTorch reports the allocation padded to its 16-byte alignment
                    got.insert((u64::from(a.memory_id), t.offset, t.size.div_ceil(16) * 16));
                }
            }
            // views share their source's placement, so the sets of distinct placements agree
            assert_eq!(got, want, "{}", pte.display());
            let sizes: Vec<u64> = program.plans[0].non_const_buffer_sizes[1..]
                .iter()
                .map(|&s| s as u64)
                .collect();
            assert_eq!(
                plan.arenas.iter().map(|a| a.size).collect::<Vec<_>>(),
                sizes
            );
            for a in &plan.arenas {
                assert!(
                    0 < a.lower_bound && a.lower_bound <= a.peak && a.peak <= a.size,
                    "{}: {} {} {}",
                    pte.display(),
                    a.lower_bound,
                    a.peak,
                    a.size
                );
                assert_eq!(a.live_bytes.len(), plan.instruction_count);
                assert_eq!(a.live_bytes.iter().max().copied(), Some(a.lower_bound));
            }
            let overlaps: Vec<&Finding> = plan
                .findings
                .iter()
                .filter(|f| matches!(f, Finding::Overlap { .. }))
                .collect();
            assert!(
                overlaps.is_empty(),
                "{}: a real ExecuTorch plan has no overlaps: {overlaps:?}",
                pte.display()
            );
            checked += 1;
        }
    }
    assert!(checked >= 2);
}

#[test]
fn tiny_plan_lifetimes_follow_the_instructions() {
    let program =
        Program::parse(common::read(&common::tiny().join("model_fp32.pte"))).expect("parse");
    let graph = graph_from_plan(&program, 0).expect("plan");
    let plan = derive(&graph);
    let arena = &plan.arenas[0];
    let by_value = |v: usize| {
        arena
            .tensors
            .iter()
            .find(|t| t.value == v)
            .unwrap_or_else(|| panic!("value {v} planned"))
    };
    // x (value 4) is read by conv (instr 0); conv out (5) lives 0..=1; relu out (20, viewed as 21)
    // is read by addmm (instr 3) through its view; addmm out (26) is the output, live to the end.
    assert_eq!((by_value(4).first, by_value(4).last), (0, 0));
    assert_eq!((by_value(5).first, by_value(5).last), (0, 1));
    assert_eq!((by_value(20).first, by_value(20).last), (1, 3));
    assert_eq!(by_value(20).aliases, vec![21]);
    assert_eq!((by_value(26).first, by_value(26).last), (3, 3));
    assert_eq!(arena.size, 11312);
}

#[test]
fn a_corrupted_plan_is_reported_not_crashed() {
    // Move the relu output onto the conv output while both are live: an overlap finding.
    let program =
        Program::parse(common::read(&common::tiny().join("model_fp32.pte"))).expect("parse");
    let mut graph = graph_from_plan(&program, 0).expect("plan");
    let conv_out = graph.values[5].placement.expect("planned");
    if let Some(p) = graph.values[20].placement.as_mut() {
        p.offset = conv_out.offset;
    }
    let plan = derive(&graph);
    assert!(
        plan.findings.iter().any(|f| matches!(
            f,
            Finding::Overlap { a: 5, b: 20, .. } | Finding::Overlap { a: 20, b: 5, .. }
        )),
        "{:?}",
        plan.findings
    );
}

/// Programs written by another ExecuTorch than 1.5.1 (0.2.1, 0.4: their greedy orders tensors
/// differently) or edited by hand to be hostile: their offsets are not 1.5.1's planner's; and
/// programs with control flow, whose `cond` branches ExecuTorch plans as submodules of their
/// own (the reimplemented greedy plans one chain; `plan` says so for such a program).
const NOT_PLANNED_BY_1_5: [&str; 5] = [
    "etrecord_v02/",
    "etrecord_v04/",
    "programs/unaligned_empty_vector/",
    "hostile/",
    "programs/cond_",
];

/// Every `.pte` the project holds or references (about 750 plans): each planned tensor's offset
/// and each arena's declared size as ExecuTorch 1.5.1's greedy planner, reimplemented, puts them.
#[test]
fn executorchs_planner_reproduces_every_offset_of_every_program() {
    use etscope_core::plan::executorch;
    let mut files: Vec<std::path::PathBuf> = Vec::new();
    let mut dirs = vec![common::fixtures(), common::fixtures().join("../../assets")];
    dirs.extend(common::shared_reference());
    while let Some(dir) = dirs.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "pte")
                && !NOT_PLANNED_BY_1_5
                    .iter()
                    .any(|n| p.to_string_lossy().contains(n))
            {
                files.push(p);
            }
        }
    }
    files.sort();
    let (mut plans, mut tensors) = (0, 0);
    let mut wrong: Vec<String> = Vec::new();
    for pte in &files {
        let program =
            Program::parse(common::read(pte)).unwrap_or_else(|e| panic!("{}: {e}", pte.display()));
        for index in 0..program.plans.len() {
            let graph = graph_from_plan(&program, index).expect("plan");
            let plan = derive(&graph);
            let ours = executorch::plan(&graph, &plan);
            let mut bad = Vec::new();
            for arena in plan.arenas.iter().filter(|a| !a.tensors.is_empty()) {
                let p = &ours[&arena.memory_id];
                if p.size != arena.size {
                    bad.push(format!(
                        "arena {} is {} bytes, not {}",
                        arena.memory_id, arena.size, p.size
                    ));
                }
                for (t, &o) in arena.tensors.iter().zip(&p.offsets) {
                    tensors += 1;
                    if o != t.offset {
                        bad.push(format!("value {} is at {}, not {o}", t.value, t.offset));
                    }
                }
            }
            plans += 1;
            if !bad.is_empty() {
                wrong.push(format!(
                    "{} plan {index}: {}",
                    pte.display(),
                    bad.join("; ")
                ));
            }
        }
    }
    eprintln!("ExecuTorch's planner: {plans} plans, {tensors} planned tensors");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(
        plans >= 500 && tensors >= 3_000,
        "{plans} plans, {tensors} tensors"
    );
}

/// Programs with an input to run them: the tiny model's variants, the made models (fp32 and
/// Cortex-M) and every reference model's programs.
fn runnable_programs() -> Vec<(std::path::PathBuf, Vec<std::path::PathBuf>)> {
    let fx = common::fixtures();
    let mut programs: Vec<(std::path::PathBuf, Vec<std::path::PathBuf>)> = Vec::new();
    for v in [
        "model_fp32",
        "model_int8_cortex_m55",
        "model_int8_cortex_m55_default",
        "model_int8_cortex_m4_default",
        "model_int8_qdq_portable",
    ] {
        programs.push((
            fx.join(format!("tiny_conv_relu_linear/{v}.pte")),
            vec![fx.join("tiny_conv_relu_linear/input.npy")],
        ));
    }
    for m in common::MADE_MODELS {
        for v in ["model_fp32", "model_int8_cortex_m55_default"] {
            programs.push((
                fx.join(format!("models/{m}/{v}.pte")),
                vec![fx.join(format!("models/{m}/input.npy"))],
            ));
        }
    }
    for model in common::models() {
        for (pte, _) in common::pte_variants(&model) {
            programs.push((pte, vec![model.join("input.npy")]));
        }
    }
    // state kept between calls (a mutable buffer)
    programs.push((
        fx.join("programs/mutable_state/model.pte"),
        vec![fx.join("programs/mutable_state/input_0.npy")],
    ));
    programs.push((
        fx.join("programs/kv_cache/model.pte"),
        common::numbered(&fx.join("programs/kv_cache"), "input"),
    ));
    // one program per Cortex-M operator case (both flows)
    let ops = common::fixtures().join("ops");
    for dir in std::fs::read_dir(&ops).into_iter().flatten().flatten() {
        let dir = dir.path();
        let inputs = common::numbered(&dir, "input");
        if dir.join("model.pte").exists() && !inputs.is_empty() {
            programs.push((dir.join("model.pte"), inputs));
        }
    }
    programs.retain(|(p, _)| p.exists());
    programs.sort();
    programs
}

/// Every planner on every runnable program: each plan passes its check, none is above
/// ExecuTorch's or below its lower bound, the optimum is never above best fit; each distinct
/// plan is written into the program (`write_program`), read back with every tensor where the
/// plan put it and its arenas declared at the plan's peak, and run inside those arenas with the
/// outputs of the original program, bit for bit.
#[test]
fn every_planner_is_sound_and_its_written_program_runs_bit_exact_inside_its_arenas() {
    use etscope_core::plan::alternatives::{alternatives, check_in, write_program};
    use etscope_core::runtime::{RunOptions, Runtime, Target};
    let (mut programs, mut written, mut reordered, mut in_place_saved) = (0, 0, 0, 0u64);
    let mut summary: Vec<String> = Vec::new();
    for (pte, inputs) in runnable_programs() {
        let bytes = common::read(&pte);
        let program = Program::parse(bytes.clone()).expect("program");
        let graph = graph_from_plan(&program, 0).expect("graph");
        let plan = derive(&graph);
        if !plan.findings.is_empty() {
            continue; // a plan with findings of its own is the memory view's business
        }
        let alts = alternatives(&graph, &plan);
        for a in &alts {
            let arena = plan
                .arenas
                .iter()
                .find(|x| x.memory_id == a.memory_id)
                .expect("arena");
            assert!(
                a.executorch_reproduced,
                "{}: ExecuTorch's plan not reproduced",
                pte.display()
            );
            let peak = |n: &str| a.algorithm(n).map(|p| p.peak);
            for alg in &a.algorithms {
                assert_eq!(
                    check_in(&plan, arena.memory_id, alg),
                    Vec::new(),
                    "{} {}",
                    pte.display(),
                    alg.name
                );
                assert!(
                    alg.peak <= a.executorch_peak || alg.name == "executorch",
                    "{} {}",
                    pte.display(),
                    alg.name
                );
                let bound = if alg.shares.is_empty() {
                    a.lower_bound
                } else {
                    a.lower_bound_in_place
                };
                assert!(
                    alg.peak >= bound || alg.order.is_some(), // another chain order has bounds of its own
                    "{} {}: under its lower bound",
                    pte.display(),
                    alg.name
                );
            }
            if let (Some(e), Some(b)) = (peak("exact"), peak("best_fit")) {
                assert!(e <= b && e >= a.lower_bound);
            }
            if let (Some(e), Some(b)) = (peak("exact_in_place"), peak("in_place")) {
                assert!(e <= b);
            }
            if let (Some(b), Some(i)) = (peak("best_fit"), peak("in_place")) {
                in_place_saved += b.saturating_sub(i);
            }
            summary.push(format!(
                "{}: {}",
                pte.strip_prefix(common::fixtures().join(".."))
                    .unwrap_or(&pte)
                    .display(),
                a.algorithms
                    .iter()
                    .map(|p| format!("{} {}", p.name, p.peak))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let inputs: Vec<_> = inputs.iter().map(|p| common::npy(p)).collect();
        let target = Target::for_program(&program, 0);
        let Ok(want) = Runtime::new(&program, 0, target).and_then(|rt| rt.run(&inputs, false))
        else {
            continue; // a delegate only its backend runs
        };
        programs += 1;
        let mut seen = std::collections::HashSet::new();
        for name in etscope_core::plan::alternatives::ALGORITHMS {
            let picks: Vec<_> = alts
                .iter()
                .filter_map(|a| a.algorithm(name).map(|p| (a.memory_id, p)))
                .collect();
            let key: Vec<_> = picks.iter().map(|(_, p)| &p.tensors).collect();
            if picks.is_empty() || !seen.insert(format!("{key:?}")) {
                continue;
            }
            let out = write_program(&bytes, 0, &picks)
                .unwrap_or_else(|e| panic!("{} {name}: {e}", pte.display()));
            let replanned =
                Program::parse(out).unwrap_or_else(|e| panic!("{} {name}: {e}", pte.display()));
            let g = graph_from_plan(&replanned, 0).expect("graph");
            for (memory_id, p) in &picks {
                assert_eq!(
                    g.arenas[*memory_id as usize - 1],
                    p.peak,
                    "{} {name}",
                    pte.display()
                );
                for t in &p.tensors {
                    assert_eq!(
                        g.values[t.value].placement.map(|x| x.offset),
                        Some(t.offset),
                        "{} {name}",
                        pte.display()
                    );
                }
            }
            // the written program's own lifetimes (its chain as written) find nothing but the
            // declared in-place shares
            let shares: std::collections::HashSet<(usize, usize)> = picks
                .iter()
                .flat_map(|(_, p)| p.shares.iter().flat_map(|&(x, y)| [(x, y), (y, x)]))
                .collect();
            let findings: Vec<_> = derive(&g)
                .findings
                .into_iter()
                .filter(
                    |f| !matches!(f, Finding::Overlap { a, b, .. } if shares.contains(&(*a, *b))),
                )
                .collect();
            assert_eq!(findings, Vec::new(), "{} {name}", pte.display());
            if let Some(order) = picks.iter().find_map(|(_, p)| p.order.as_deref()) {
                // the lifetimes the planner assumed are the reordered program's
                use etscope_core::plan::reorder::{relifed, reordered};
                let fresh = derive(&reordered(&graph, order));
                let assumed = relifed(&plan, order);
                for (f, a) in fresh.arenas.iter().zip(&assumed.arenas) {
                    let spans = |x: &etscope_core::plan::Arena| {
                        let mut v: Vec<_> = x
                            .tensors
                            .iter()
                            .map(|t| (t.value, t.first, t.last))
                            .collect();
                        v.sort_unstable();
                        v
                    };
                    assert_eq!(spans(f), spans(a), "{} {name}", pte.display());
                }
            }
            let rt = Runtime::new(&replanned, 0, target).expect("prepares");
            let got = rt
                .run_with(
                    &inputs,
                    RunOptions {
                        in_arenas: true,
                        ..RunOptions::default()
                    },
                )
                .unwrap_or_else(|e| panic!("{} {name}: {e}", pte.display()));
            for (g, w) in got.outputs.iter().zip(&want.outputs) {
                assert_eq!(
                    g.to_data(),
                    w.to_data(),
                    "{} {name}: computes something else",
                    pte.display()
                );
            }
            written += 1;
            reordered += usize::from(name == "reorder");
        }
    }
    eprintln!("{programs} programs, {written} re-planned programs run ({reordered} reordered); in place saved {in_place_saved} B over best fit");
    for s in &summary {
        eprintln!("  {s}");
    }
    assert!(programs >= 150, "{programs} programs");
    assert!(in_place_saved > 0, "no in-place share ever saved a byte");
}

/// The method allocator model against ExecuTorch's own runtime, on every program it loaded:
/// the 1.5.1 wheel's `libexecutorch.so` on x86-64 (`x86_64.json`, `measure.sh`) and the runtime
/// built for the Cortex-M55 and run on the emulated board (`arm32_m55_qemu.json`,
/// `board_measure.sh`), both in `tests/fixtures/method_allocator/`. The model with each target's
/// layout gives the bytes the runtime took, with and without a temp allocator, and the temp
/// allocator's peak, byte for byte.
#[test]
fn the_method_allocator_model_equals_executorchs_runtime_on_every_program() {
    use etscope_core::plan::budget::{method_allocation, ARM32, X86_64};
    let root = common::fixtures().join("../..");
    for (file, layout) in [("x86_64.json", X86_64), ("arm32_m55_qemu.json", ARM32)] {
        let measured = common::json(&common::fixtures().join("method_allocator").join(file));
        let programs = measured["programs"].as_object().expect("programs");
        let (mut checked, mut wrong) = (0, Vec::new());
        for (path, want) in programs {
            let pte = root.join(path);
            if !pte.exists() {
                continue; // ../shared/reference absent
            }
            let program = Program::parse(common::read(&pte)).expect("program");
            let got = method_allocation(&program, 0, &layout).expect("plan 0");
            let have = (
                got.method_allocator,
                got.temp_allocator_peak,
                got.method_allocator_without_temp,
            );
            let expect = (
                want["method_allocator"].as_u64().expect("bytes"),
                want["temp_allocator_peak"].as_u64().expect("bytes"),
                want["method_allocator_without_temp"]
                    .as_u64()
                    .expect("bytes"),
            );
            if have != expect {
                wrong.push(format!("{path}: modelled {have:?}, measured {expect:?}"));
            }
            checked += 1;
        }
        assert!(
            wrong.is_empty(),
            "{file}: {} of {checked}:\n{}",
            wrong.len(),
            wrong.join("\n")
        );
        eprintln!(
            "method allocator model ({file}): {checked} programs equal to ExecuTorch's runtime"
        );
        assert!(checked >= 500, "{file}: {checked} programs");
    }
}
