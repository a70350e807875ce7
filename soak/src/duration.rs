//! Durations on the command line (`90s`, `10m`, `2h`, `1h30m`, `1.5h`, `500ms`) and in reports.

use std::time::Duration;

/// Parses a duration: one or more parts, each a number (decimals allowed) and a unit (`ms`,
/// `s`, `m`, `h`, `d`; or `sec`, `min`, `hour`, `day` and their plurals), summed; spaces between
/// parts are allowed. A bare number is refused (is `10` seconds or minutes?), as is zero.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let hint = "write it as 90s, 10m, 2h or 1h30m";
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err(format!("an empty duration: {hint}"));
    }
    let mut secs = 0.0_f64;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if number_end == 0 {
            return Err(format!("`{text}`: expected a number at `{rest}`; {hint}"));
        }
        let number: f64 = rest[..number_end]
            .parse()
            .map_err(|_| format!("`{text}`: `{}` is not a number", &rest[..number_end]))?;
        rest = rest[number_end..].trim_start();
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.' || c.is_whitespace())
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_end] {
            "ms" => 0.001,
            "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
            "m" | "min" | "mins" | "minute" | "minutes" => 60.0,
            "h" | "hr" | "hour" | "hours" => 3600.0,
            "d" | "day" | "days" => 86_400.0,
            "" => return Err(format!("`{text}`: a number without a unit; {hint}")),
            unit => return Err(format!("`{text}`: unknown unit `{unit}`; {hint}")),
        };
        secs += number * scale;
        rest = rest[unit_end..].trim_start();
    }
    if secs <= 0.0 {
        return Err(format!("`{text}`: the duration must be positive"));
    }
    Duration::try_from_secs_f64(secs).map_err(|e| format!("`{text}`: {e}"))
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
        assert!(parse_duration("10").unwrap_err().contains("without a unit"));
        assert!(
            parse_duration("3y")
                .unwrap_err()
                .contains("unknown unit `y`")
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
