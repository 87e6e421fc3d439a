use super::super::{AuSource, Figure, FlashReport};
use super::*;

#[test]
fn a_report_stored_with_words_loads_as_legacy_with_its_words() {
    let old = serde_json::json!({
        "test": "class",
        "verdict": "meets: C10; binding: U3 needs Pw MB/s >= 30, measured 12.0: FAIL",
        "failed": true,
        "details": {"checks": []},
        "findings": [
            {"name": "write cache", "value": "no fall", "confidence": null,
             "status": null, "note": "a note"},
            {"name": "", "value": "", "confidence": "high", "status": "FAIL", "note": null,
             "figure": {"requirement": {"class": "U3", "need": {"SeqWrite": 30.0},
                                        "measured": 12.0, "limit": 30.0}}},
            {"name": "", "value": "", "confidence": null, "status": null, "note": null,
             "figure": {"au_used": {"bytes": 4194304, "source": "from --au"}}},
            {"name": "", "value": "", "confidence": null, "status": null, "note": null,
             "figure": {"burst": {"mb_s": 47.5}}}
        ],
        "table": [["written", "AU MB/s"], ["4 MiB", "12.0"]]
    });
    let r: FlashReport = serde_json::from_value(old).unwrap();
    assert!(r.failed());
    assert!(
        matches!(&r.outcome, Outcome::Legacy { verdict, .. } if verdict.starts_with("meets: C10"))
    );
    let f = &r.findings;
    assert_eq!(
        f[0].figure,
        Figure::Words {
            name: "write cache".into(),
            value: "no fall".into()
        }
    );
    assert_eq!(
        f[0].reason,
        Some(Reason::Stored {
            note: "a note".into()
        })
    );
    assert!(matches!(
        f[1].figure,
        Figure::Requirement {
            need: NeedKind::SeqWrite,
            ..
        }
    ));
    assert!(
        matches!(&f[2].figure, Figure::AuUsed { source: AuSource::Words(w), .. } if w == "from --au")
    );
    assert_eq!(f[3].figure, Figure::Burst { mb_per_s: 47.5 });
}

#[test]
fn a_typed_report_goes_round_in_snake_case_with_its_outcome_at_the_top() {
    let r = FlashReport {
        test: FlashTest::Capacity,
        outcome: Outcome::Fake {
            claimed_bytes: 8 << 30,
            real_bytes: 2 << 30,
            at_most_bytes: None,
            found_by: FoundBy::Aliased,
            rounds: 1,
            confidence: Confidence::High,
        },
        findings: vec![Finding::of(Figure::Requirement {
            class: "U3".into(),
            need: NeedKind::SeqWrite,
            measured: 12.0,
            limit: 30.0,
        })],
        table: FlashTable::Words(Vec::new()),
    };
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["outcome"], "fake");
    assert_eq!(v["real_bytes"], 2u64 << 30);
    assert_eq!(
        v["findings"][0]["figure"]["requirement"]["need"],
        "seq_write"
    );
    let back: FlashReport = serde_json::from_value(v).unwrap();
    assert_eq!(back.outcome, r.outcome);
    assert!(back.failed());
}

#[test]
fn a_class_outcome_keeps_its_host_and_one_stored_without_it_loads() {
    let host = crate::probe::bus::simulated(Some(12.5));
    let o = Outcome::Classes {
        claim: ClaimSource::None,
        claimed: Vec::new(),
        families: Vec::new(),
        untold: Vec::new(),
        binding: None,
        weakest: None,
        host: Some(Box::new(host)),
    };
    let v = serde_json::to_value(&o).unwrap();
    assert_eq!(v["host"]["bus"]["kind"], "simulated");
    assert_eq!(v["host"]["ceiling_mb_per_s"], 12.5);
    assert_eq!(v["host"]["command_queueing"]["state"], "not_modelled");
    assert_eq!(serde_json::from_value::<Outcome>(v.clone()).unwrap(), o);
    let mut old = v;
    old.as_object_mut().unwrap().remove("host");
    let back: Outcome = serde_json::from_value(old).unwrap();
    assert!(matches!(back, Outcome::Classes { host: None, .. }));
}
