//! apimachinery's times and durations as k8s-openapi holds them: `Time` and `MicroTime` as a
//! `jiff::Timestamp`, `Duration` as Go's duration text.

use std::fmt::Write as _;

use k8s_openapi::jiff::Timestamp;

use crate::{Error, ErrorKind};

/// 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the times RFC 3339, and so the JSON form of
/// a `Time`, can write.
const EARLIEST: i64 = -62_167_219_200;
const LATEST: i64 = 253_402_300_799;

/// The timestamp `seconds` after 1970 and `nanos`; an error outside the years 0000 to 9999 (and
/// past jiff's last time, 9999-12-30T22:00Z, which the JSON decode of the time's text fails on
/// too).
#[inline]
pub(crate) fn timestamp(seconds: i64, nanos: u32) -> Result<Timestamp, Error> {
    if !(EARLIEST..=LATEST).contains(&seconds) {
        return Err(Error::new(ErrorKind::TimeOutOfRange(seconds)));
    }
    Timestamp::new(seconds, nanos as i32).map_err(|_| Error::new(ErrorKind::TimeOutOfRange(seconds)))
}

/// Go's `time.Duration.String()`: `0s`, `1.5ms`, `2m0s`, `1h0m0.5s`.
pub fn go_duration(nanos: i64) -> String {
    if nanos == 0 {
        return "0s".into();
    }
    let mut out = String::new();
    if nanos < 0 {
        out.push('-');
    }
    let magnitude = nanos.unsigned_abs();
    if magnitude < 1_000_000_000 {
        let (unit, scale) = match magnitude {
            0..1_000 => ("ns", 1),
            1_000..1_000_000 => ("µs", 1_000),
            _ => ("ms", 1_000_000),
        };
        push_decimal(&mut out, magnitude / scale, magnitude % scale, scale);
        out.push_str(unit);
        return out;
    }
    let hours = magnitude / 3_600_000_000_000;
    let minutes = magnitude / 60_000_000_000 % 60;
    let rest = magnitude % 60_000_000_000;
    if hours > 0 {
        let _ = write!(out, "{hours}h");
    }
    if hours > 0 || minutes > 0 {
        let _ = write!(out, "{minutes}m");
    }
    push_decimal(
        &mut out,
        rest / 1_000_000_000,
        rest % 1_000_000_000,
        1_000_000_000,
    );
    out.push('s');
    out
}

/// `whole.fraction` with the fraction's trailing zeros dropped (`fraction` of `scale`).
fn push_decimal(out: &mut String, whole: u64, fraction: u64, scale: u64) {
    let _ = write!(out, "{whole}");
    if fraction > 0 {
        let digits = scale.ilog10() as usize;
        let text = format!("{fraction:0digits$}");
        let _ = write!(out, ".{}", text.trim_end_matches('0'));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_outside_rfc3339_are_errors() {
        assert_eq!(
            timestamp(0, 0).expect("in range").to_string(),
            "1970-01-01T00:00:00Z"
        );
        // jiff ends a day earlier, and so does the JSON decode of the same text
        assert_eq!(
            timestamp(LATEST - 2 * 86_400, 0).expect("in range").to_string(),
            "9999-12-29T23:59:59Z"
        );
        assert!(timestamp(LATEST, 0).is_err());
        assert_eq!(
            timestamp(EARLIEST, 0).expect("in range").to_string(),
            "0000-01-01T00:00:00Z"
        );
        assert!(timestamp(LATEST + 1, 0).is_err());
        assert!(timestamp(EARLIEST - 1, 0).is_err());
    }

    // Go's TestDurationString cases (time/time_test.go).
    #[test]
    fn durations_print_as_go_does() {
        for (nanos, text) in [
            (0, "0s"),
            (1, "1ns"),
            (1_100, "1.1µs"),
            (2_200_000, "2.2ms"),
            (3_300_000_000, "3.3s"),
            (4 * 60_000_000_000 + 5_000_000_000, "4m5s"),
            (4 * 60_000_000_000 + 5_001_000_000, "4m5.001s"),
            (
                5 * 3_600_000_000_000 + 6 * 60_000_000_000 + 7_001_000_000,
                "5h6m7.001s",
            ),
            (8 * 60_000_000_000 + 1, "8m0.000000001s"),
            (-1, "-1ns"),
            (3_600_000_000_000, "1h0m0s"),
        ] {
            assert_eq!(go_duration(nanos), text, "{nanos}");
        }
    }
}
