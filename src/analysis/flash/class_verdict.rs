//! Reading a class test's checks as one verdict: which claimed classes are
//! met, which requirement binds, and which check sets the confidence.
//!
//! Why a module of its own: [`super::class::judge`] checks each requirement
//! alone; a person asks "which classes does it meet, and what holds it
//! back". The binding requirement is the first that did not pass, or, when
//! all pass, the one with the least room (the smallest factor between the
//! measured value and its limit). The verdict is only as sure as the least
//! sure requirement of the classes met, so a class met at burst speed (no
//! cache ruled out) is not read as certain. Pure: the words are built by
//! the report layer.

use super::class::{CLASSES, Check};
use crate::result::flash::{ClassCheck, Family, FamilyMet, Status};

/// The claimed classes whose every requirement passed, in claimed order.
pub fn met_classes<'a>(classes: &'a [String], checks: &[Check]) -> Vec<&'a String> {
    classes
        .iter()
        .filter(|cl| checks_of(checks, cl).all(|c| c.status == Status::Pass))
        .collect()
}

/// The requirement that binds: the first that did not pass, else the one
/// with the least [`room`].
pub fn binding(checks: &[Check]) -> Option<&Check> {
    checks
        .iter()
        .find(|c| c.status != Status::Pass)
        .or_else(|| checks.iter().min_by(|a, b| room(a).total_cmp(&room(b))))
}

/// The least sure check among the classes met (the first of equals).
pub fn weakest<'a>(met: &[&String], checks: &'a [Check]) -> Option<&'a Check> {
    met.iter()
        .flat_map(|cl| checks.iter().filter(move |c| c.class == **cl))
        .min_by_key(|c| c.confidence)
}

/// How far a requirement is from its limit, as a factor (1: at the limit):
/// measured over limit for a floor, limit over measured for a ceiling.
pub fn room(c: &Check) -> f64 {
    let floor = c.need.limit().1;
    match floor {
        true => c.measured / c.limit,
        false => c.limit / c.measured.max(f64::MIN_POSITIVE),
    }
}

/// The family of a class label (`C10`, `U3`, `V30`, `A1`).
pub fn family(class: &str) -> Option<Family> {
    match class.trim().to_ascii_uppercase().chars().next()? {
        'C' => Some(Family::Speed),
        'U' => Some(Family::Uhs),
        'V' => Some(Family::Video),
        'A' => Some(Family::App),
        _ => None,
    }
}

/// Where a class stands in its family: later is higher (A2 after A1).
fn rank(class: &str) -> usize {
    let c = class.trim().to_ascii_uppercase();
    let c = c.replace("CLASS", "C").replace(' ', "");
    let order = CLASSES.iter().copied().chain(["A2"]);
    order.clone().position(|k| k == c).unwrap_or(order.count())
}

/// Per family with a class checked, the classes met (lowest first) and
/// the highest of them.
pub fn families(classes: &[String], checks: &[Check]) -> Vec<FamilyMet> {
    let met = met_classes(classes, checks);
    let mut out: Vec<FamilyMet> = Vec::new();
    for f in [Family::Speed, Family::Uhs, Family::Video, Family::App] {
        if !classes.iter().any(|c| family(c) == Some(f)) {
            continue;
        }
        let mut of: Vec<String> = met
            .iter()
            .filter(|c| family(c) == Some(f))
            .map(|c| c.to_string())
            .collect();
        of.sort_by_key(|c| rank(c));
        out.push(FamilyMet {
            family: f,
            highest: of.last().cloned(),
            met: of,
        });
    }
    out
}

/// A check as the result records it.
pub fn recorded(c: &Check) -> ClassCheck {
    ClassCheck {
        class: c.class.clone(),
        need: c.need.kind(),
        measured: c.measured,
        limit: c.limit,
        status: c.status,
        confidence: c.confidence,
        reason: c.reason.clone(),
    }
}

fn checks_of<'a>(checks: &'a [Check], class: &'a str) -> impl Iterator<Item = &'a Check> {
    checks.iter().filter(move |c| c.class == class)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::flash::class::Need;
    use crate::result::flash::Confidence;

    fn check(class: &str, need: Need, measured: f64, status: Status, conf: Confidence) -> Check {
        Check {
            class: class.into(),
            need,
            measured,
            limit: need.limit().0,
            status,
            confidence: conf,
            reason: None,
        }
    }

    fn sample() -> Vec<Check> {
        vec![
            check(
                "C10",
                Need::SeqWrite(10.0),
                20.0,
                Status::Pass,
                Confidence::High,
            ),
            check(
                "C10",
                Need::FatMax(750.0),
                500.0,
                Status::Pass,
                Confidence::Medium,
            ),
            check(
                "V30",
                Need::SeqWrite(30.0),
                20.0,
                Status::Fail,
                Confidence::High,
            ),
        ]
    }

    #[test]
    fn room_is_the_factor_to_the_limit_either_way() {
        // A passing C10 check of `need` at `measured`.
        let room_at = |need, measured| {
            room(&check(
                "C10",
                need,
                measured,
                Status::Pass,
                Confidence::High,
            ))
        };
        assert_eq!(room_at(Need::SeqWrite(10.0), 20.0), 2.0);
        assert_eq!(room_at(Need::FatMax(750.0), 500.0), 1.5);
        let zero = room_at(Need::FatMax(750.0), 0.0);
        assert!(zero.is_infinite() || zero > 1e300);
    }

    #[test]
    fn a_class_is_met_only_when_all_its_checks_pass() {
        let classes = vec!["C10".to_string(), "V30".to_string()];
        let checks = sample();
        assert_eq!(met_classes(&classes, &checks), vec![&classes[0]]);
    }

    #[test]
    fn the_first_failure_binds_else_the_least_room() {
        let checks = sample();
        assert_eq!(binding(&checks).unwrap().class, "V30");
        let passing = &checks[..2];
        // 500 ms under a 750 ms ceiling (1.5×) is tighter than 20 over 10 MB/s (2×).
        assert_eq!(binding(passing).unwrap().need, Need::FatMax(750.0));
        assert!(binding(&[]).is_none());
    }

    #[test]
    fn each_family_names_its_highest_class_met() {
        let classes: Vec<String> = ["C10", "V30", "V6", "C4"].map(String::from).into();
        let mut checks = sample();
        checks.push(check(
            "V6",
            Need::SeqWrite(6.0),
            20.0,
            Status::Pass,
            Confidence::High,
        ));
        checks.push(check(
            "C4",
            Need::SeqWrite(4.0),
            20.0,
            Status::Pass,
            Confidence::High,
        ));
        let f = families(&classes, &checks);
        assert_eq!(f.len(), 2);
        assert_eq!(
            (f[0].family, f[0].met.clone()),
            (Family::Speed, vec!["C4".into(), "C10".into()])
        );
        assert_eq!(f[0].highest.as_deref(), Some("C10"));
        assert_eq!(
            (f[1].family, f[1].highest.as_deref()),
            (Family::Video, Some("V6"))
        );
        assert_eq!(family("a2"), Some(Family::App));
    }

    #[test]
    fn the_least_sure_check_of_the_met_classes_sets_the_confidence() {
        let classes = vec!["C10".to_string(), "V30".to_string()];
        let checks = sample();
        let met = met_classes(&classes, &checks);
        assert_eq!(
            weakest(&met, &checks).unwrap().confidence,
            Confidence::Medium
        );
        assert!(weakest(&[], &checks).is_none());
    }
}
