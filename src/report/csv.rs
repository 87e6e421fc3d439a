//! CSV: one row per measured point (curves) or per repetition (other
//! commands), with fixed units in the column names.

use super::Export;
use crate::result::RunResult;
use std::fmt::Write;

pub struct Csv;

impl Export for Csv {
    fn render(&self, r: &RunResult) -> String {
        match &r.curve {
            Some(_) => curve_rows(r),
            None => repetition_rows(r),
        }
    }
}

fn curve_rows(r: &RunResult) -> String {
    let mut out = String::from(
        "target,pattern,size_bytes,buffered,reference,mb_per_s_median,mb_per_s_min,mb_per_s_max,iops_median,p50_us,p99_us,model_ratio\n",
    );
    let Some(curve) = &r.curve else { return out };
    for s in &curve.series {
        for p in &s.points {
            let (med, min, max) = p.mb_per_s.map_or((None, None, None), |m| {
                (Some(m.median), Some(m.min), Some(m.max))
            });
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{},{}",
                field(&s.target),
                s.pattern,
                p.size,
                p.buffered,
                p.reference,
                num(med),
                num(min),
                num(max),
                num(p.iops.map(|i| i.median)),
                num(p.p50_ns.map(|n| n as f64 / 1e3)),
                num(p.p99_ns.map(|n| n as f64 / 1e3)),
                num(p.model_ratio)
            );
        }
    }
    out
}

fn repetition_rows(r: &RunResult) -> String {
    let mut out = String::from(
        "test,rw,block_size_bytes,queue_depth,repetition,mb_per_s,iops,p50_us,p99_us\n",
    );
    for t in &r.tests {
        for (i, m) in t.repetitions.iter().enumerate() {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{}",
                field(&t.name),
                t.workload.rw,
                t.workload.block_size,
                t.workload.queue_depth,
                i + 1,
                num(Some(m.mb_per_s)),
                num(Some(m.iops)),
                num(m.latency.map(|l| l.p50_ns as f64 / 1e3)),
                num(m.latency.map(|l| l.p99_ns as f64 / 1e3))
            );
        }
    }
    out
}

fn num(v: Option<f64>) -> String {
    v.map_or(String::new(), |v| format!("{v:.4}"))
}

/// Quotes a field that holds a comma, quote or newline (RFC 4180).
fn field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}
