//! The JSON texts of apimachinery's time messages, written and read without allocating a
//! parser: `Time` (RFC 3339 in seconds), `MicroTime` (with microseconds), `Duration` (Go's
//! `1h2m3.5s`, read here; written by `k8s_protobuf::go_duration`).

/// A timestamp as RFC 3339 in UTC: `2024-01-02T03:04:05Z`, or with `micros`
/// `2024-01-02T03:04:05.123456Z`. `None` for years outside 0000 to 9999. Written digit by
/// digit: a pod carries about ten times, and the formatting machinery would cost more than
/// the rest of their decoding.
pub(crate) fn rfc3339(seconds: i64, micros: Option<u32>) -> Option<TimeText> {
    let days = seconds.div_euclid(86_400);
    let second_of_day = seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    let year = u32::try_from(year).ok().filter(|y| *y <= 9999)?;
    let mut text = TimeText::default();
    text.digits(year, 4);
    text.push(b'-');
    text.digits(month, 2);
    text.push(b'-');
    text.digits(day, 2);
    text.push(b'T');
    text.digits((second_of_day / 3600) as u32, 2);
    text.push(b':');
    text.digits((second_of_day / 60 % 60) as u32, 2);
    text.push(b':');
    text.digits((second_of_day % 60) as u32, 2);
    if let Some(micros) = micros {
        text.push(b'.');
        text.digits(micros % 1_000_000, 6);
    }
    text.push(b'Z');
    Some(text)
}

/// The civil date of a count of days since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// A formatted time on the stack (RFC 3339 with microseconds is 27 bytes).
#[derive(Default)]
pub(crate) struct TimeText {
    bytes: [u8; 32],
    len: usize,
}

impl TimeText {
    /// `value` in `width` decimal digits, zero-padded (`value` below `10^width`).
    fn digits(&mut self, mut value: u32, width: usize) {
        let end = self.len + width;
        if end > self.bytes.len() {
            return;
        }
        for at in (self.len..end).rev() {
            self.bytes[at] = b'0' + (value % 10) as u8;
            value /= 10;
        }
        self.len = end;
    }

    fn push(&mut self, byte: u8) {
        if self.len < self.bytes.len() {
            self.bytes[self.len] = byte;
            self.len += 1;
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        // only ASCII is ever written
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or_default()
    }
}

/// Parses Go's duration text (`1h2m3.5s`, `300ms`, `-1.5h`) to nanoseconds.
pub(crate) fn parse_go_duration(text: &str) -> Option<i64> {
    let (negative, mut rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if rest == "0" {
        return Some(0);
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let number_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        let number: f64 = rest[..number_end].parse().ok()?;
        rest = &rest[number_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_end] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        total += number * scale;
        rest = &rest[unit_end..];
    }
    let nanos = total.round();
    (nanos <= i64::MAX as f64).then_some(if negative { -nanos } else { nanos } as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339_in_utc() {
        assert_eq!(
            rfc3339(0, None).expect("in range").as_str(),
            "1970-01-01T00:00:00Z"
        );
        assert_eq!(
            rfc3339(1_704_164_645, None).expect("in range").as_str(),
            "2024-01-02T03:04:05Z"
        );
        assert_eq!(
            rfc3339(1_704_164_645, Some(123_456)).expect("in range").as_str(),
            "2024-01-02T03:04:05.123456Z"
        );
        assert_eq!(
            rfc3339(-1, None).expect("in range").as_str(),
            "1969-12-31T23:59:59Z"
        );
        assert_eq!(
            rfc3339(951_782_400, None).expect("in range").as_str(),
            "2000-02-29T00:00:00Z"
        );
        assert!(rfc3339(i64::MAX / 2, None).is_none());
    }

    #[test]
    fn every_day_of_four_centuries_matches_jiff() {
        for days in (-200_000_i64..200_000).step_by(7) {
            let seconds = days * 86_400 + 3_723;
            let ours = rfc3339(seconds, None).expect("in range");
            let jiff = k8s_openapi::jiff::Timestamp::from_second(seconds)
                .expect("in range")
                .to_string();
            assert_eq!(ours.as_str(), jiff, "{seconds}");
        }
    }

    /// Go's durations read back: every duration of Go's TestDurationString (time/time_test.go),
    /// printed as k8s-protobuf prints it (its own test holds Go's texts), parses to itself.
    #[test]
    fn go_durations_read_back() {
        for nanos in [
            0,
            1,
            1_100,
            2_200_000,
            3_300_000_000,
            4 * 60_000_000_000 + 5_000_000_000,
            4 * 60_000_000_000 + 5_001_000_000,
            5 * 3_600_000_000_000 + 6 * 60_000_000_000 + 7_001_000_000,
            8 * 60_000_000_000 + 1,
            -1,
            3_600_000_000_000,
        ] {
            let text = k8s_protobuf::go_duration(nanos);
            assert_eq!(parse_go_duration(&text), Some(nanos), "{text}");
        }
        assert_eq!(parse_go_duration("1.5h"), Some(5_400_000_000_000));
        assert_eq!(parse_go_duration("3x"), None);
    }
}
