//! Durations on the command line (`90s`, `10m`, `2h`, `1h30m`, `1.5h`, `500ms`) and in reports.

use std::time::Duration;

/// Parses a duration with `humantime` (`90s`, `10m`, `2h`, `1h30m`, `1h 30m`, `1.5h`,
/// `500ms`: each number with its unit), refusing zero, which would end the soak before it
/// started.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let hint = "write it as 90s, 10m, 2h or 1h30m";
    match humantime::parse_duration(text.trim()) {
        Ok(d) if d.is_zero() => Err(format!("`{text}`: the duration must be positive")),
        Ok(d) => Ok(d),
        Err(e) => Err(format!("`{text}`: {e}; {hint}")),
    }
}

/// A duration for people: `850 ms`, `12.3 s`, `4m 05s`, `2h 00m 10s`.
pub(crate) fn human(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs < 1.0 {
        format!("{:.0} ms", secs * 1000.0)
    } else if secs < 60.0 {
        format!("{secs:.1} s")
    } else {
        let whole = d.as_secs();
        let (h, m, s) = (whole / 3600, whole / 60 % 60, whole % 60);
        if h > 0 {
            format!("{h}h {m:02}m {s:02}s")
        } else {
            format!("{m}m {s:02}s")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_usual_forms() {
        let secs = |t: &str| parse_duration(t).unwrap().as_secs_f64();
        assert_eq!(secs("90s"), 90.0);
        assert_eq!(secs("10m"), 600.0);
        assert_eq!(secs("2h"), 7200.0);
        assert_eq!(secs("1h30m"), 5400.0);
        assert_eq!(secs("1h 30m"), 5400.0);
        assert_eq!(secs("1.5h"), 5400.0);
        assert_eq!(secs("500ms"), 0.5);
        assert_eq!(secs(" 2 min "), 120.0);
    }

    #[test]
    fn refuses_the_ambiguous_and_the_wrong() {
        for bad in ["", "10", "m", "10x", "0s", "-5s", "1..5s", "h10"] {
            let err = parse_duration(bad).unwrap_err();
            assert!(err.contains('`') || err.contains("empty"), "{bad}: {err}");
        }
        assert!(parse_duration("10").unwrap_err().contains("unit needed"));
        assert!(
            parse_duration("0s")
                .unwrap_err()
                .contains("must be positive")
        );
        assert!(
            parse_duration("3q")
                .unwrap_err()
                .contains("unknown time unit")
        );
    }

    #[test]
    fn prints_for_people() {
        assert_eq!(human(Duration::from_millis(850)), "850 ms");
        assert_eq!(human(Duration::from_millis(12_340)), "12.3 s");
        assert_eq!(human(Duration::from_secs(245)), "4m 05s");
        assert_eq!(human(Duration::from_secs(7210)), "2h 00m 10s");
    }
}
