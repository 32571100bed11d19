//! Field rules: the keys a sidecar or JSON file must, should or may have, and the
//! values they take.

use nidos_expr::Context;
use nidos_schema::FieldRule;

use super::prepared::{FieldRuleTexts, Prepared};
use crate::issue::{Issue, Severity};
use crate::jsonschema;

use super::*;

/// Sidecar extensions that carry no sidecar of their own.
pub(super) const NO_SIDECAR_EXTENSIONS: &[&str] = &[".json", "", ".md", ".txt", ".rst", ".cff"];

pub(crate) fn apply_fields(
    prepared: &Prepared<'_>,
    (rule, texts): (&FieldRule, &FieldRuleTexts<'_>),
    is_sidecar_rule: bool,
    ctx: &dyn Context,
    facts: &FileFacts<'_>,
    seen: &Seen,
    out: &mut Vec<Issue>,
) {
    if is_sidecar_rule && NO_SIDECAR_EXTENSIONS.contains(&facts.extension) {
        return;
    }
    let sidecar = ctx.lookup("sidecar");
    let object = if is_sidecar_rule {
        sidecar.clone()
    } else {
        ctx.lookup("json")
    };
    let report_missing = !facts.derivative_dataset || prepared.selects_derivatives(&rule.id);
    for ((key, req), field) in rule.fields.iter().zip(&texts.fields) {
        let name = field.name.as_str();
        match object.as_object().and_then(|o| o.get(name)) {
            None => {
                if !report_missing {
                    continue;
                }
                let level = match &req.level_if {
                    Some(c) if sidecar.get(&c.key).as_str() == Some(c.is.as_str()) => c.level,
                    _ => req.level,
                };
                let Some(severity) = level_severity(level) else {
                    continue;
                };
                let code = match &field.code {
                    Some(code) => code,
                    None => prepared
                        .missing_key_codes
                        .get(is_sidecar_rule, severity == Severity::Error),
                };
                out.push(Issue::of_parts(
                    (code, &field.name, Some(&texts.rule)),
                    severity,
                    facts.location.clone(),
                ));
            }
            Some(value) => {
                let Some(def) = field.def else { continue };
                let origin = if is_sidecar_rule {
                    (facts.sidecar_origin)(name).unwrap_or_default()
                } else {
                    facts.path
                };
                seen.get_or_check(
                    origin,
                    key,
                    Visit {
                        path: facts.location,
                        rule: &texts.rule,
                        sidecar_rule: is_sidecar_rule,
                        name: &field.name,
                    },
                    || {
                        let json = value.to_json();
                        let violations = jsonschema::check(&json, &def.def, &prepared.patterns);
                        violations
                            .first()
                            .map(|v| format!("{name}{}: {}", v.at, v.message))
                    },
                );
            }
        }
    }
}

/// A key an edited rule tree made required in one field rule while another still
/// recommends it is reported once, as required: drops, among the issues from `from` on
/// (the file's field issues), the warnings whose key (sub-code) also has an error there
/// from a requirement `prepared` marks raised ([`Prepared::raised`]: required where the
/// bundled rules do not require it). A key two rules of the bundled or upstream rules
/// ask for at two levels keeps both issues, as the reference validator reports them.
pub(crate) fn keep_strongest_missing(prepared: &Prepared<'_>, out: &mut Vec<Issue>, from: usize) {
    let Some(new) = out.get(from..) else { return };
    if new.len() < 2 {
        return;
    }
    let raised: Vec<String> = new
        .iter()
        .filter(|i| i.severity == Severity::Error)
        .filter(|i| {
            let key = i.sub_code().as_str();
            !key.is_empty()
                && i.rule_id()
                    .is_some_and(|rule| prepared.raised(rule.as_str(), key))
        })
        .map(|i| i.sub_code().as_str().to_string())
        .collect();
    if raised.is_empty() {
        return;
    }
    let mut at = 0;
    out.retain(|i| {
        at += 1;
        at <= from
            || i.severity != Severity::Warning
            || !raised.iter().any(|r| r == i.sub_code().as_str())
    });
}
