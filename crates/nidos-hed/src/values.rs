//! Values against value classes and units against unit classes.

use crate::schema::HedSchema;

pub enum ValueCheck {
    Ok,
    BadValue,
    BadUnits(String),
}

/// Checks a written value (`4.5 m-per-s^2`, `Red`, `$ 10`) for a placeholder node with the given
/// value and unit classes.
pub fn value_matches(
    schema: &HedSchema,
    value_classes: &[String],
    unit_classes: &[String],
    value: &str,
) -> ValueCheck {
    if value.is_empty() || value.trim() != value {
        return ValueCheck::BadValue;
    }
    if !unit_classes.is_empty() {
        // A unit written before the value (`$10`) or after it, separated by one space.
        for class in unit_classes {
            if let Some(uc) = schema.unit_classes.get(class) {
                for u in uc.units.iter().filter(|u| u.prefix) {
                    if let Some(rest) = value.strip_prefix(u.name.as_str()) {
                        return classes_accept(value_classes, rest.trim_start());
                    }
                }
            }
        }
        if let Some((number, unit)) = value.rsplit_once(' ') {
            if !unit_classes.iter().any(|c| schema.unit_matches(c, unit)) {
                if classes_accept(value_classes, number).is_ok()
                    || !value_classes.iter().any(|c| c == "textClass")
                {
                    return ValueCheck::BadUnits(unit.to_string());
                }
                return classes_accept(value_classes, value);
            }
            return classes_accept(value_classes, number);
        }
    }
    classes_accept(value_classes, value)
}

impl ValueCheck {
    fn is_ok(&self) -> bool {
        matches!(self, ValueCheck::Ok)
    }
}

fn classes_accept(classes: &[String], v: &str) -> ValueCheck {
    let ok = if classes.is_empty() {
        is_text(v)
    } else {
        classes.iter().any(|c| class_accepts(c, v))
    };
    if ok {
        ValueCheck::Ok
    } else {
        ValueCheck::BadValue
    }
}

fn class_accepts(class: &str, v: &str) -> bool {
    match class {
        "numericClass" => is_number(v),
        "nameClass" => {
            !v.is_empty()
                && v.chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
        }
        "dateTimeClass" => is_date_time(v),
        "posixPath" => !v.is_empty() && v.chars().all(|c| !c.is_control() && c != ','),
        _ => is_text(v),
    }
}

fn is_text(v: &str) -> bool {
    !v.is_empty()
        && v.chars()
            .all(|c| !c.is_control() && !matches!(c, '{' | '}' | ',' | '(' | ')'))
}

/// A decimal number with an optional sign, fraction and exponent.
pub fn is_number(v: &str) -> bool {
    let b = v.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut digits = i - int_start;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let f = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        digits += i - f;
    }
    if digits == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let e = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == e {
            return false;
        }
    }
    i == b.len()
}

/// An ISO 8601 date and time: `YYYY-MM-DDThh:mm[:ss[.fff]][Z|±hh:mm]`.
fn is_date_time(v: &str) -> bool {
    let Some((date, time)) = v.split_once('T') else {
        return false;
    };
    let d: Vec<&str> = date.split('-').collect();
    let date_ok = d.len() == 3
        && d[0].len() == 4
        && d[1].len() == 2
        && d[2].len() == 2
        && d.iter().all(|p| p.chars().all(|c| c.is_ascii_digit()));
    let time = time.trim_end_matches('Z');
    let time = match time.rfind(['+', '-']) {
        Some(i) => &time[..i],
        None => time,
    };
    let (hms, frac) = match time.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (time, None),
    };
    let t: Vec<&str> = hms.split(':').collect();
    let time_ok = (2..=3).contains(&t.len())
        && t.iter()
            .all(|p| p.len() == 2 && p.chars().all(|c| c.is_ascii_digit()))
        && frac.is_none_or(|f| !f.is_empty() && f.chars().all(|c| c.is_ascii_digit()));
    date_ok && time_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        for ok in ["3", "3.0", "-2", "3e10", "7.0e-10", ".5", "+1"] {
            assert!(is_number(ok), "{ok}");
        }
        for bad in ["", "e3", "3.0$", "1max1", "3e", "abc", "."] {
            assert!(!is_number(bad), "{bad}");
        }
    }

    #[test]
    fn date_times() {
        assert!(is_date_time("2009-04-09T12:04:14"));
        assert!(!is_date_time("2009-04-09"));
    }
}
