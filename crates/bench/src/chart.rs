//! `innoxide-bench chart`: charts from the JSON files of `dbstress run`, PNG and SVG.
//!
//! Inputs are grouped by label (the run's `--label`, or `LABEL=FILE` on the command line);
//! the steps of several files with the same label are joined in the order given, so the
//! one-step files of an alternating side-by-side run make one line per server. Three charts:
//!
//! - `<NAME>-tps`: TPS against sessions, one line per label (the seed's dbSTRESS graphs;
//!   steps with the same session count, rounds of a repeated run, are averaged);
//! - `<NAME>-p95`: 95th percentile response time of all transactions against sessions;
//! - `<NAME>-timeline`: TPS each second through the run, steps one after another, where
//!   stalls (flush storms, lock waits) show as dips.
//!
//! Session counts sit at equal distances on the x axis, as in the seed's charts. Text is drawn
//! with DejaVu Sans, compiled into the binary (fonts/, Bitstream Vera license), so no system
//! font is needed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use plotters::coord::Shift;
use plotters::prelude::*;
use serde_json::Value;

static FONT: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");
const FAMILY: &str = "sans-serif";
const SIZE: (u32, u32) = (960, 540);
const COLORS: [RGBColor; 6] = [
    RGBColor(214, 39, 40),
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(23, 190, 207),
];

#[derive(Args, Debug, Clone)]
pub struct ChartArgs {
    /// JSON files written by `dbstress run --json`, as FILE or LABEL=FILE (LABEL overrides
    /// the run's --label). Files with the same label are joined into one line.
    #[arg(required = true)]
    inputs: Vec<String>,
    /// Directory for the charts (created if missing).
    #[arg(long, default_value = ".")]
    out_dir: PathBuf,
    /// File name prefix: writes NAME-tps, NAME-p95 and NAME-timeline, each .png and .svg.
    #[arg(long, default_value = "dbstress")]
    name: String,
    /// Chart title (default: scenario and read/write ratio of the first input).
    #[arg(long)]
    title: Option<String>,
}

/// The figures of one step that the charts use.
struct StepPoint {
    sessions: u64,
    tps: f64,
    p95_ms: f64,
    /// (seconds since the step's measuring started, TPS in that second).
    timeline: Vec<(f64, f64)>,
}

/// The steps of one label.
struct Line {
    label: String,
    steps: Vec<StepPoint>,
}

/// A series to draw: label and points.
struct Series {
    label: String,
    points: Vec<(f64, f64)>,
}

pub fn run(a: &ChartArgs) -> Result<Vec<String>> {
    plotters::style::register_font(FAMILY, FontStyle::Normal, FONT)
        .map_err(|_| anyhow!("the embedded font does not parse"))?;
    let mut lines: Vec<Line> = Vec::new();
    let mut first: Option<Value> = None;
    for input in &a.inputs {
        let (label, path) = match input.split_once('=') {
            Some((l, p)) if !Path::new(input).exists() => (Some(l.to_string()), p),
            _ => (None, input.as_str()),
        };
        let text = std::fs::read_to_string(path).with_context(|| format!("read {path}"))?;
        let doc: Value =
            serde_json::from_str(&text).with_context(|| format!("parse {path} as JSON"))?;
        if doc["benchmark"] != "dbstress" {
            bail!("{path} is not the output of dbstress run --json");
        }
        let label = label.unwrap_or_else(|| doc["label"].as_str().unwrap_or("?").to_string());
        let steps = parse_steps(&doc).with_context(|| format!("read the steps of {path}"))?;
        match lines.iter_mut().find(|l| l.label == label) {
            Some(l) => l.steps.extend(steps),
            None => lines.push(Line { label, steps }),
        }
        first.get_or_insert(doc);
    }
    let title = a.title.clone().unwrap_or_else(|| match &first {
        Some(d) => format!(
            "dbSTRESS {}, rw {}{}, {} objects",
            d["scenario"].as_str().unwrap_or("?"),
            d["settings"]["rw"],
            if d["settings"]["update_only"] == true {
                " update-only"
            } else {
                ""
            },
            d["settings"]["objects"]
        ),
        None => "dbSTRESS".to_string(),
    });
    std::fs::create_dir_all(&a.out_dir)
        .with_context(|| format!("create {}", a.out_dir.display()))?;

    // Session counts at equal distances: x = index in the sorted union.
    let counts: Vec<u64> = lines
        .iter()
        .flat_map(|l| l.steps.iter().map(|s| s.sessions))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let pos = |n: u64| counts.iter().position(|&c| c == n).unwrap_or(0) as f64;
    let by_sessions = |f: &dyn Fn(&StepPoint) -> f64| -> Vec<Series> {
        lines
            .iter()
            .map(|l| {
                // Steps run more than once (rounds) are averaged.
                let mut sums: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
                for s in &l.steps {
                    let e = sums.entry(s.sessions).or_default();
                    e.0 += f(s);
                    e.1 += 1.0;
                }
                let points = sums
                    .into_iter()
                    .map(|(n, (sum, k))| (pos(n), sum / k))
                    .collect();
                Series {
                    label: l.label.clone(),
                    points,
                }
            })
            .collect()
    };
    let tps = by_sessions(&|s| s.tps);
    let p95 = by_sessions(&|s| s.p95_ms);
    let timeline: Vec<Series> = lines
        .iter()
        .map(|l| {
            let mut offset = 0.0;
            let mut points = Vec::new();
            for s in &l.steps {
                let mut end = offset;
                for &(t, v) in &s.timeline {
                    points.push((offset + t, v));
                    end = offset + t;
                }
                offset = end;
            }
            Series {
                label: l.label.clone(),
                points,
            }
        })
        .collect();
    // Where each step of the first line starts, marked on the timeline.
    let mut marks = Vec::new();
    if let Some(l) = lines.first() {
        let mut offset = 0.0;
        for s in &l.steps {
            marks.push((offset, s.sessions));
            offset += s.timeline.last().map_or(0.0, |p| p.0);
        }
    }
    let session_axis = Axis::Sessions(counts.clone());
    let mut written = Vec::new();
    let charts: [(&str, String, &str, &[Series], Axis); 3] = [
        (
            "tps",
            format!("{title}: TPS"),
            "transactions/s",
            &tps,
            session_axis.clone(),
        ),
        (
            "p95",
            format!("{title}: p95 response time"),
            "p95 ms (all transactions)",
            &p95,
            session_axis,
        ),
        (
            "timeline",
            format!("{title}: TPS each second"),
            "transactions/s",
            &timeline,
            Axis::Seconds(marks),
        ),
    ];
    for (suffix, title, y_desc, series, axis) in charts {
        let base = a.out_dir.join(format!("{}-{suffix}", a.name));
        let png = base.with_extension("png");
        let svg = base.with_extension("svg");
        draw(
            BitMapBackend::new(&png, SIZE).into_drawing_area(),
            &title,
            y_desc,
            series,
            &axis,
        )
        .with_context(|| format!("draw {}", png.display()))?;
        draw(
            SVGBackend::new(&svg, SIZE).into_drawing_area(),
            &title,
            y_desc,
            series,
            &axis,
        )
        .with_context(|| format!("draw {}", svg.display()))?;
        written.push(png);
        written.push(svg);
    }
    for w in &written {
        eprintln!("wrote {}", w.display());
    }
    Ok(Vec::new())
}

fn parse_steps(doc: &Value) -> Result<Vec<StepPoint>> {
    let steps = doc["steps"].as_array().ok_or_else(|| anyhow!("no steps"))?;
    steps
        .iter()
        .map(|s| {
            let sessions = s["sessions"]
                .as_u64()
                .ok_or_else(|| anyhow!("step without sessions"))?;
            let tps = s["tps"].as_f64().unwrap_or(0.0);
            let p95 = s["types"]["ALL"]["p95_ms"].as_f64().unwrap_or(0.0);
            let timeline = s["timeline"]
                .as_array()
                .map(|t| {
                    t.iter()
                        .filter_map(|p| Some((p["t"].as_f64()?, p["tps"].as_f64()?)))
                        .collect()
                })
                .unwrap_or_default();
            Ok(StepPoint {
                sessions,
                tps,
                p95_ms: p95,
                timeline,
            })
        })
        .collect()
}

/// The x axis.
#[derive(Clone)]
enum Axis {
    /// Equally spaced session counts.
    Sessions(Vec<u64>),
    /// Seconds since the start of the run, with the start and session count of each step.
    Seconds(Vec<(f64, u64)>),
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    y_desc: &str,
    series: &[Series],
    axis: &Axis,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow!("{e:?}");
    root.fill(&WHITE).map_err(err)?;
    let all = series.iter().flat_map(|s| s.points.iter());
    let y_max = all.clone().map(|p| p.1).fold(0.0, f64::max) * 1.1;
    let y_max = if y_max > 0.0 { y_max } else { 1.0 };
    let (x_min, x_max) = match axis {
        Axis::Sessions(c) => (-0.25, (c.len().max(1) - 1) as f64 + 0.25),
        Axis::Seconds(_) => (0.0, all.map(|p| p.0).fold(1.0, f64::max)),
    };
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FAMILY, 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(x_min..x_max, 0.0..y_max)
        .map_err(err)?;
    let x_desc = match axis {
        Axis::Sessions(_) => "concurrent sessions",
        Axis::Seconds(_) => {
            "seconds (the steps one after another; dashed: a step starts, with its sessions)"
        }
    };
    let label_of = |x: &f64| -> String {
        match axis {
            Axis::Sessions(c) => {
                let i = x.round();
                if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < c.len() {
                    c[i as usize].to_string()
                } else {
                    String::new()
                }
            }
            Axis::Seconds(_) => format!("{x:.0}"),
        }
    };
    // As many labels as session counts: plotters then puts a tick at each whole position.
    let x_labels = match axis {
        Axis::Sessions(c) => c.len().max(2),
        Axis::Seconds(_) => 12,
    };
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_labels(x_labels)
        .y_labels(10)
        .x_label_formatter(&label_of)
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style((FAMILY, 14))
        .axis_desc_style((FAMILY, 15))
        .light_line_style(RGBColor(240, 240, 240))
        .max_light_lines(2)
        .draw()
        .map_err(err)?;
    if let Axis::Seconds(marks) = axis {
        let dash = ShapeStyle::from(&RGBColor(150, 150, 150)).stroke_width(1);
        for &(x, sessions) in marks {
            chart
                .draw_series(DashedLineSeries::new([(x, 0.0), (x, y_max)], 4, 4, dash))
                .map_err(err)?;
            chart
                .draw_series(std::iter::once(Text::new(
                    sessions.to_string(),
                    (x, y_max),
                    (FAMILY, 12).into_font().color(&RGBColor(90, 90, 90)),
                )))
                .map_err(err)?;
        }
    }
    for (i, s) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let style = ShapeStyle::from(&color).stroke_width(2);
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), style))
            .map_err(err)?
            .label(s.label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        if matches!(axis, Axis::Sessions(_)) {
            chart
                .draw_series(
                    s.points
                        .iter()
                        .map(|&p| Circle::new(p, 4, ShapeStyle::from(&color).filled())),
                )
                .map_err(err)?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font((FAMILY, 15))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}
