//! Exports: the graph as SVG, tables as CSV, the profile as Chrome/Perfetto trace JSON
//! (`ui.perfetto.dev` and `chrome://tracing` open it). Pure functions returning text.

use crate::category::CategoryStyle as _;
use std::fmt::Write;

use egui::Color32;
use etscope_core::analysis::cost::measured::MeasuredVsEstimate;
use etscope_core::analysis::profile::Profile;
use etscope_core::plan::MemoryPlan;

use crate::document::StageView;
use crate::layout::NODE_HEIGHT;
use crate::profile_view::Span;

fn hex(c: Color32) -> String {
    format!("#{:02x}{:02x}{:02x}", c.r(), c.g(), c.b())
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The stage's graph as an SVG document, in layout coordinates, every module unfolded (its
/// box and name drawn); `overlay` recolors nodes.
pub fn graph_svg(stage: &StageView, overlay: Option<&[Option<Color32>]>) -> String {
    let l = &stage.layout;
    let pad = 20.0;
    let (w, h) = (
        l.bounds[2] - l.bounds[0] + 2.0 * pad,
        l.bounds[3] - l.bounds[1] + 2.0 * pad,
    );
    let (ox, oy) = (pad - l.bounds[0], pad - l.bounds[1]);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r##"<rect width="100%" height="100%" fill="#1b1b1b"/>"##);
    for f in &l.frames {
        let m = &stage.modules[f.module];
        let [x, y, fw, fh] = f.rect;
        let _ = writeln!(
            s,
            r##"<g><rect x="{:.1}" y="{:.1}" width="{fw:.1}" height="{fh:.1}" rx="6" fill="#7896dc" fill-opacity="0.12" stroke="#8caae6" stroke-opacity="0.4"/><text x="{:.1}" y="{:.1}" fill="#c8c8c8" font-size="11">{}</text></g>"##,
            x + ox,
            y + oy,
            x + ox + 6.0,
            y + oy + 13.0,
            xml_escape(&format!("{} ({})", m.path, m.short_class()))
        );
    }
    let _ = writeln!(
        s,
        r##"<g stroke="#8a8a8a" stroke-width="1.2" fill="none">"##
    );
    for e in &l.edges {
        let pts: Vec<String> = e
            .points
            .iter()
            .map(|p| format!("{:.1},{:.1}", p[0] + ox, p[1] + oy))
            .collect();
        let _ = writeln!(s, r#"<polyline points="{}"/>"#, pts.join(" "));
    }
    s.push_str("</g>\n");
    for (slot, r) in l.rects.iter().enumerate() {
        let crate::layout::Slot::Node(v) = l.slots[slot] else {
            continue;
        };
        let fill = overlay
            .and_then(|o| o.get(v).copied().flatten())
            .unwrap_or_else(|| stage.categories[v].color());
        let (x, y) = (r[0] + ox, r[1] + oy);
        let _ = writeln!(
            s,
            r#"<g><title>{}</title><rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="{NODE_HEIGHT}" rx="4" fill="{}"/><text x="{:.1}" y="{:.1}" fill="white" text-anchor="middle" dominant-baseline="central">{}</text></g>"#,
            xml_escape(&stage.graph.nodes[v].qualified_op()),
            r[2],
            hex(fill),
            x + r[2] / 2.0,
            y + NODE_HEIGHT / 2.0,
            xml_escape(&stage.labels[v])
        );
    }
    s.push_str("</svg>\n");
    s
}

pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The per-op profile as CSV: in ticks, and in µs too when `ticks_per_us` is known (the rate
/// the capture declares, or the user's); with `vs`, each row's estimate, measured ÷ estimated
/// and whether it is an outlier; `times`, when the times are not cycles or time of a part (an
/// emulator's instruction counts), says so in a last column of every row. The window's export
/// and `etscope profile --csv` both write it.
pub fn profile_csv(
    profile: &Profile,
    ticks_per_us: Option<f64>,
    vs: Option<&MeasuredVsEstimate>,
    times: Option<&str>,
) -> String {
    let mut s = String::from("instruction_id,op,event_name,count,avg,min,max,p10,p50,p90,raw");
    if ticks_per_us.is_some() {
        s.push_str(",avg_us,min_us,max_us,p10_us,p50_us,p90_us");
    }
    if vs.is_some() {
        s.push_str(",estimated_us,measured_over_estimated,outlier");
    }
    if times.is_some() {
        s.push_str(",times");
    }
    s.push('\n');
    for r in &profile.rows {
        let raw: Vec<String> = r.stats.raw.iter().map(u64::to_string).collect();
        let _ = write!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{}",
            r.instruction_id,
            csv_field(&r.op),
            csv_field(&r.event_name),
            r.stats.count,
            r.stats.avg,
            r.stats.min,
            r.stats.max,
            r.stats.p10,
            r.stats.p50,
            r.stats.p90,
            csv_field(&raw.join(" "))
        );
        if let Some(rate) = ticks_per_us.filter(|r| *r > 0.0) {
            let st = &r.stats;
            for v in [st.avg, st.min as f64, st.max as f64, st.p10, st.p50, st.p90] {
                let _ = write!(s, ",{:.3}", v / rate);
            }
        }
        if let Some(m) = vs {
            let row = m.row(r.instruction_id);
            let opt = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
            let _ = write!(
                s,
                ",{},{},{}",
                opt(row.and_then(|x| x.estimated_us)),
                opt(row.and_then(|x| x.ratio)),
                row.is_some_and(|x| x.outlier)
            );
        }
        if let Some(t) = times {
            let _ = write!(s, ",{}", csv_field(t));
        }
        s.push('\n');
    }
    s
}

/// Every planned tensor as CSV.
pub fn memory_csv(plan: &MemoryPlan) -> String {
    let mut s = String::from("memory_id,value,offset,size,first,last,role,dtype,shape\n");
    for a in &plan.arenas {
        for t in &a.tensors {
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{:?},{},{}",
                a.memory_id,
                t.value,
                t.offset,
                t.size,
                t.first,
                t.last,
                t.role,
                t.dtype.map(|d| d.short_name()).unwrap_or_default(),
                csv_field(&format!("{:?}", t.shape))
            );
        }
    }
    s
}

/// The timeline as Chrome trace events (`ts`/`dur` in µs at `ticks_per_us`), one thread per run.
pub fn chrome_trace(runs: &[Vec<Span>], ticks_per_us: f64, times: Option<&str>) -> String {
    let mut events = Vec::new();
    for (ri, run) in runs.iter().enumerate() {
        events.push(serde_json::json!({"name": "thread_name", "ph": "M", "pid": 1, "tid": ri, "args": {"name": format!("run {ri}")}}));
        for sp in run {
            events.push(serde_json::json!({
                "name": sp.name,
                "cat": "op",
                "ph": "X",
                "pid": 1,
                "tid": ri,
                "ts": sp.start as f64 / ticks_per_us,
                "dur": (sp.end - sp.start) as f64 / ticks_per_us,
                "args": {"instruction_id": sp.instruction_id},
            }));
        }
    }
    let mut trace = serde_json::json!({"traceEvents": events, "displayTimeUnit": "ns"});
    if let Some(t) = times {
        // shown by Perfetto's trace info; the process is named for it too
        trace["otherData"] = serde_json::json!({ "times": t });
        if let Some(list) = trace["traceEvents"].as_array_mut() {
            list.insert(
                0,
                serde_json::json!({"name": "process_name", "ph": "M", "pid": 1, "args": {"name": t}}),
            );
        }
    }
    trace.to_string()
}
