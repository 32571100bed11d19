//! The value constraint of a table column: the schema's definition narrowed by a
//! sidecar's, compiled to an anchored pattern, levels and bounds.

use nidos_expr::Value;

use nidos_schema::Schema;

use super::patterns::Patterns;

/// A value constraint of one column.
pub(super) struct Signature {
    /// Anchored pattern the value must match (None: any).
    regex: Option<std::sync::Arc<nidos_expr::full_match::FullMatcher>>,
    levels: Option<Vec<String>>,
    minimum: Option<f64>,
    maximum: Option<f64>,
}

#[derive(Clone)]
pub(super) struct RawSignature {
    formats: Vec<String>,
    pattern: Option<String>,
    unit: Option<String>,
    levels: Option<Vec<String>>,
    minimum: Option<f64>,
    maximum: Option<f64>,
}

impl RawSignature {
    pub(super) fn from_schema_def(def: &serde_json::Value) -> RawSignature {
        let formats = if let Some(alts) = def.get("anyOf").and_then(|v| v.as_array()) {
            alts.iter().map(single_format).collect()
        } else {
            vec![single_format(def)]
        };
        RawSignature {
            formats,
            pattern: def
                .get("pattern")
                .and_then(|v| v.as_str())
                .map(str::to_string),
            unit: def.get("unit").and_then(|v| v.as_str()).map(str::to_string),
            levels: def.get("enum").and_then(|v| v.as_array()).map(|a| {
                a.iter()
                    .map(|x| match x {
                        serde_json::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .collect()
            }),
            minimum: def.get("minimum").and_then(|v| v.as_f64()),
            maximum: def.get("maximum").and_then(|v| v.as_f64()),
        }
    }

    /// A column definition written in a sidecar (or a schema `definition`): Format,
    /// Units, Levels, Minimum, Maximum.
    pub(super) fn from_column_definition(def: &Value) -> RawSignature {
        let format = match def.get("Format").as_str() {
            Some(f) => f.to_string(),
            None if !def.get("Units").is_null() => "number".to_string(),
            None => "string".to_string(),
        };
        RawSignature {
            formats: vec![format],
            pattern: None,
            unit: def.get("Units").as_str().map(str::to_string),
            levels: def
                .get("Levels")
                .as_object()
                .map(|o| o.keys().cloned().collect()),
            minimum: def.get("Minimum").as_f64(),
            maximum: def.get("Maximum").as_f64(),
        }
    }

    pub(super) fn trivial(&self) -> bool {
        self.levels.is_none()
            && self.minimum.is_none()
            && self.maximum.is_none()
            && match &self.pattern {
                None => self.formats.first().map(String::as_str) == Some("string"),
                Some(p) => p == ".*",
            }
    }
}

pub(super) fn single_format(def: &serde_json::Value) -> String {
    def.get("format")
        .or_else(|| def.get("type"))
        .and_then(|v| v.as_str())
        .unwrap_or("string")
        .to_string()
}

pub(super) fn collapse(format: &str) -> &str {
    match format {
        "integer" | "number" => "number",
        "boolean" => "boolean",
        _ => "string",
    }
}

/// Why a sidecar definition does not refine the schema's (the TSV_COLUMN_TYPE_REDEFINED
/// issue message): its format, else its unit, levels or bounds.
pub(super) fn redefinition_message(schema: &RawSignature, side: &RawSignature) -> String {
    let side_format = side.formats.first().map(String::as_str).unwrap_or("string");
    if !schema
        .formats
        .iter()
        .any(|f| collapse(f) == collapse(side_format))
    {
        return format!(
            "Format \"{side_format}\" must be {}",
            schema.formats.join(" or ")
        );
    }
    if let (Some(unit), Some(side_unit)) = (&schema.unit, &side.unit) {
        if unit != side_unit {
            return format!("Unit \"{side_unit}\" must be {unit}");
        }
    }
    if let Some(levels) = &schema.levels {
        return format!("Levels must be among {}", levels.join(", "));
    }
    "Bounds must lie within the standard's".to_string()
}

/// Refines the schema's signature with a sidecar definition; `Err` when the sidecar
/// contradicts the schema (TSV_COLUMN_TYPE_REDEFINED): the schema's own signature comes
/// back so the values are still checked against it.
#[allow(clippy::result_large_err)]
pub(super) fn refine(
    schema: RawSignature,
    side: RawSignature,
) -> Result<RawSignature, RawSignature> {
    let side_format = side.formats.first().map(String::as_str).unwrap_or("string");
    if !schema
        .formats
        .iter()
        .any(|f| collapse(f) == collapse(side_format))
    {
        return Err(schema);
    }
    if let (Some(s), Some(d)) = (&side.levels, &schema.levels) {
        if !s.iter().all(|l| d.contains(l)) {
            return Err(schema);
        }
    }
    if let Some(unit) = &schema.unit {
        if side.unit.as_ref().unwrap_or(unit) != unit {
            return Err(schema);
        }
    }
    if let Some(min) = schema.minimum {
        if side.minimum.unwrap_or(min) < min {
            return Err(schema);
        }
    }
    if let Some(max) = schema.maximum {
        if side.maximum.unwrap_or(max) > max {
            return Err(schema);
        }
    }
    Ok(RawSignature {
        formats: side.formats,
        pattern: schema.pattern,
        unit: side.unit.or(schema.unit),
        levels: side.levels.or(schema.levels),
        minimum: side.minimum.or(schema.minimum),
        maximum: side.maximum.or(schema.maximum),
    })
}

impl Signature {
    pub(super) fn compile(
        raw: &RawSignature,
        schema: &Schema,
        patterns: &Patterns,
    ) -> Option<Signature> {
        if raw.trivial() {
            return None;
        }
        let body = match &raw.pattern {
            Some(p) => p.clone(),
            None => {
                let parts: Vec<&str> = raw
                    .formats
                    .iter()
                    .map(|f| schema.format(f).map(|f| f.pattern.as_str()).unwrap_or(".*"))
                    .collect();
                parts.join("|")
            }
        };
        let regex = patterns.anchored(&body);
        Some(Signature {
            regex,
            levels: raw.levels.clone(),
            minimum: raw.minimum,
            maximum: raw.maximum,
        })
    }

    pub(super) fn accepts(&self, value: &str) -> bool {
        if value == "n/a" {
            return true;
        }
        if let Some(re) = &self.regex {
            if !re.matches(value) {
                return false;
            }
        }
        if let Some(levels) = &self.levels {
            if !levels.iter().any(|l| l == value) {
                return false;
            }
        }
        if self.minimum.is_some() || self.maximum.is_some() {
            let n = parse_float_prefix(value);
            // NaN (no number) fails both bounds.
            let below = |m: f64| n.partial_cmp(&m).is_none_or(|o| o.is_lt());
            let above = |m: f64| n.partial_cmp(&m).is_none_or(|o| o.is_gt());
            if self.minimum.is_some_and(below) || self.maximum.is_some_and(above) {
                return false;
            }
        }
        true
    }
}

/// JavaScript `parseFloat`: the longest prefix that is a decimal literal (sign, digits
/// with an optional fraction, optional exponent) or `Infinity`, after leading white
/// space; NaN when there is none. One pass over the text.
pub(super) fn parse_float_prefix(s: &str) -> f64 {
    let t = s.trim_start();
    let b = t.as_bytes();
    let digits_from = |mut k: usize| {
        while b.get(k).is_some_and(u8::is_ascii_digit) {
            k += 1;
        }
        k
    };
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    if t[i..].starts_with("Infinity") {
        return if b.first() == Some(&b'-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    let int_end = digits_from(i);
    let mut digits = int_end - i;
    i = int_end;
    if b.get(i) == Some(&b'.') {
        let frac_end = digits_from(i + 1);
        if digits + (frac_end - i - 1) > 0 {
            digits += frac_end - i - 1;
            i = frac_end;
        }
    }
    if digits == 0 {
        return f64::NAN;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(b.get(i + 1), Some(b'+' | b'-')));
        let exp_end = digits_from(i + 1 + sign);
        if exp_end > i + 1 + sign {
            i = exp_end;
        }
    }
    t[..i].parse::<f64>().unwrap_or(f64::NAN)
}

pub(super) fn na_hint(value: &str) -> &'static str {
    let v = value.trim();
    if matches!(v, "NA" | "na" | "nan" | "NaN" | "n/a" | "N/A") {
        ", did you mean 'n/a'?"
    } else {
        ""
    }
}

#[cfg(test)]
mod parse_float_tests {
    use super::parse_float_prefix;

    #[test]
    fn behaves_as_javascript_parse_float() {
        let cases: &[(&str, f64)] = &[
            ("12", 12.0),
            ("  -3.5kg", -3.5),
            ("+.5", 0.5),
            ("5.", 5.0),
            ("1e3x", 1000.0),
            ("1e", 1.0),
            ("1e+", 1.0),
            ("2E-2", 0.02),
            ("Infinity", f64::INFINITY),
            ("-Infinityx", f64::NEG_INFINITY),
            ("89+", 89.0),
            ("0x10", 0.0),
        ];
        for (text, want) in cases {
            assert_eq!(parse_float_prefix(text), *want, "{text:?}");
        }
        for text in ["", ".", "-", "abc", "inf", "nan", "e5", "+-1", "n/a"] {
            assert!(parse_float_prefix(text).is_nan(), "{text:?}");
        }
    }
}
