//! CSV: one line per test, or for a curve one line per measured point,
//! for spreadsheets and scripts; units are in the column names.

use super::Export;
use crate::result::RunResult;
use std::fmt::Write;

pub struct Csv;

const HEADER: &str = "started_at,device,device_key,command,test,rw,block_size,queue_depth,threads,repetitions,mb_per_s_median,mb_per_s_min,mb_per_s_max,iops_median,skipped";

/// Quotes a field when it holds a comma, quote or line break (RFC 4180).
fn field(v: &str) -> String {
    if v.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", v.replace('"', "\"\""))
    } else {
        v.to_string()
    }
}

fn num(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.3}")).unwrap_or_default()
}

impl Export for Csv {
    fn render(&self, r: &RunResult) -> String {
        if r.payload.curve().is_some() {
            return curve_rows(r);
        }
        let (label, key) = r
            .device_identity
            .as_ref()
            .map_or((String::new(), String::new()), |i| {
                (i.label.clone(), i.key.clone())
            });
        let mut out = format!("{HEADER}\n");
        for t in &r.tests {
            let w = &t.workload;
            let cells = [
                field(&r.started_at),
                field(&label),
                field(&key),
                field(&r.command()),
                field(&t.name),
                field(&w.rw),
                w.block_size.to_string(),
                w.queue_depth.to_string(),
                w.threads.to_string(),
                t.mb_per_s.map_or(0, |s| s.count).to_string(),
                num(t.mb_per_s.map(|s| s.median)),
                num(t.mb_per_s.map(|s| s.min)),
                num(t.mb_per_s.map(|s| s.max)),
                num(t.iops.map(|s| s.median)),
                field(t.skipped.as_deref().unwrap_or("")),
            ];
            out.push_str(&cells.join(","));
            out.push('\n');
        }
        out
    }
}

fn curve_rows(r: &RunResult) -> String {
    let mut out = String::from(
        "target,pattern,size_bytes,buffered,reference,mb_per_s_median,mb_per_s_min,mb_per_s_max,iops_median,p50_us,p99_us,model_ratio\n",
    );
    let Some(curve) = r.payload.curve() else {
        return out;
    };
    for s in &curve.series {
        // The unaligned section follows the series; `buffered` and
        // `reference` tell its rows apart.
        for p in s.points.iter().chain(&s.unaligned) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Json;
    use crate::testdata;

    #[test]
    fn snapshot_csv_export() {
        let id = testdata::sd_identity("SD08G", 3, "SD", "0x6051fd1c", "2008-12");
        let mut r = testdata::run(
            Some(id),
            "2024-03-01T10:00:00Z",
            &[20.1, 19.9, 20.2],
            &[12.2, 17.1, 15.0],
        );
        r.tests[1].name = "SEQ \"1MiB\", Q8".into();
        insta::assert_snapshot!(Csv.render(&r));
    }

    #[test]
    fn json_export_reads_back() {
        let id = testdata::sd_identity("SD08G", 3, "SD", "0x6051fd1c", "2008-12");
        let r = testdata::run(Some(id), "2024-03-01T10:00:00Z", &[20.1], &[12.2]);
        let back: RunResult = serde_json::from_str(&Json.render(&r)).unwrap();
        assert_eq!(Csv.render(&back), Csv.render(&r));
        assert_eq!(back.device_identity, r.device_identity);
    }
}
