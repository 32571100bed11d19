//! Explanations of the codes the engine raises itself (the schema's rules carry their own
//! messages): used for `codeMessages` and the reports when the schema gives no text, so
//! every code a report can hold comes with a sentence saying what is wrong and how to fix
//! it. Written for nidos; the codes are the standard's.

/// The engine's own codes and what each means, in code order.
pub const ENGINE_CODES: &[(&str, &str)] = &[
    ("ALL_FILENAME_RULES_HAVE_ISSUES", "The file looks like one of the standard's files, but every file rule it could match finds something wrong with its name; the issue message lists what each rule expects."),
    ("BLACKLISTED_MODALITY", "The dataset holds data of a modality that this run was told to refuse (--blacklist-modalities)."),
    ("CASE_COLLISION", "Two or more paths differ only in upper or lower case; they clash on case-insensitive file systems. Rename or remove all but one."),
    ("CHECK_ERROR", "A dataset check failed; the issue message says which condition was not met."),
    ("DATATYPE_MISMATCH", "The file sits in a datatype directory that its suffix does not belong to. Move it to the directory of its datatype."),
    ("EMPTY_FILE", "The file is empty (0 bytes). Replace it with its real content or remove it."),
    ("ENTITY_NOT_ALLOWED", "The file name uses an entity that the file's rule does not allow for this suffix."),
    ("ENTITY_NOT_IN_RULE", "The file name uses an entity that no rule for this suffix and extension lists. Remove the entity or check the suffix."),
    ("ENTITY_WITH_NO_LABEL", "An entity in the file name has a key but no label (for example `run-`). Give it a label or drop it."),
    ("EXTENSION_MISMATCH", "The file's extension is not one the rule for its suffix allows."),
    ("FILENAME_MISMATCH", "The file name does not follow the pattern its rule sets (entities, their order, suffix and extension)."),
    ("FILE_READ", "The file or directory could not be read (permissions, a broken disk or a vanished file)."),
    ("FILE_TOO_LARGE", "The file is larger than nidos reads in full, so its content was not checked."),
    ("GZ_NOT_GZIPPED", "The file name ends in .gz but its content is not gzip-compressed. Compress it, or rename it without .gz."),
    ("IGNORE_PATTERN_INVALID", "A line of the dataset's ignore file is not a valid pattern; that line was skipped."),
    ("INVALID_ENTITY_LABEL", "An entity label holds characters it may not (labels are letters and digits; index entities are numbers)."),
    ("INVALID_FILE_ENCODING", "The text file is not UTF-8. Save it as UTF-8."),
    ("INVALID_GZIP", "The gzip stream is damaged or truncated, so the file could not be decompressed."),
    ("INVALID_JSON_ENCODING", "The JSON file is not UTF-8. Save it as UTF-8."),
    ("INVALID_LOCATION", "The file is in a directory that does not match its name: its sub-/ses- entities or datatype disagree with the directories above it."),
    ("JSON_INVALID", "The file is not valid JSON; the issue message gives the position of the syntax error."),
    ("JSON_KEY_RECOMMENDED", "A JSON file lacks a field that the standard recommends (the field's name is the sub-code). Add it when the information is known."),
    ("JSON_KEY_REQUIRED", "A JSON file lacks a field that the standard requires (the field's name is the sub-code). Add it."),
    ("JSON_NOT_AN_OBJECT", "The JSON file holds an array or a single value where the standard expects an object of key-value pairs."),
    ("JSON_SCHEMA_VALIDATION_ERROR", "A field of a JSON file has a value of the wrong type or form (the field is the sub-code); the issue message says what was expected and what was found."),
    ("MALFORMED_BVAL", "The .bval file is not one row of numbers, or its length does not match the number of volumes."),
    ("MALFORMED_BVEC", "The .bvec file is not three rows of numbers, or its length does not match the number of volumes."),
    ("MISSING_DATASET_DESCRIPTION", "dataset_description.json is missing from the dataset root; every dataset needs one (Name and the version key at least)."),
    ("MISSING_REQUIRED_ENTITY", "The file name lacks an entity that its rule requires (the entity is the sub-code)."),
    ("MULTIPLE_INHERITABLE_FILES", "Two sidecars at the same level of the inheritance chain apply to this file, so which value wins is ambiguous. Merge them or make their names more specific."),
    ("NIFTI_HEADER_UNREADABLE", "The NIfTI header could not be read (truncated or not NIfTI), so header checks were skipped."),
    ("NOT_INCLUDED", "The file is not part of the standard: no file rule matches its name or place. Check for typos, rename it, or list it in the dataset's ignore file."),
    ("SIDECAR_FIELD_OVERRIDE", "A sidecar closer to the data file sets a field that a sidecar higher up also sets, with a different value; the closer one wins."),
    ("SIDECAR_FIELD_UNKNOWN", "A sidecar holds a field that the standard does not define for this kind of file (possibly a typo of a known field)."),
    ("SIDECAR_KEY_RECOMMENDED", "The data file's merged sidecar lacks a field the standard recommends for it (the field is the sub-code). Add it to the sidecar, or to one higher up to cover many files."),
    ("SIDECAR_KEY_REQUIRED", "The data file's merged sidecar lacks a field the standard requires for it (the field is the sub-code). Add it to the file's sidecar, or to one higher up in the inheritance chain."),
    ("SIDECAR_WITHOUT_DATAFILE", "A sidecar JSON file has no data file that it applies to. Remove it or fix its name."),
    ("SYMLINK_BROKEN", "A symbolic link points at nothing (for example annexed content that was not fetched)."),
    ("SYMLINK_CYCLE", "Symbolic links form a loop, so the path was not followed."),
    ("SYMLINK_OUTSIDE_DATASET", "A symbolic link points outside the dataset root; nidos does not follow it."),
    ("TIFF_UNREADABLE", "The TIFF or OME-TIFF file could not be read, so its checks were skipped."),
    ("TSV_ADDITIONAL_COLUMNS_MUST_DEFINE", "The table has columns the standard does not define, and this table requires extra columns to be described in its JSON sidecar."),
    ("TSV_ADDITIONAL_COLUMNS_NOT_ALLOWED", "The table has columns that this kind of table does not allow."),
    ("TSV_ADDITIONAL_COLUMNS_UNDEFINED", "The table has columns that neither the standard nor its sidecar describes. Describe them in the sidecar (Description, Units, Levels)."),
    ("TSV_COLUMN_HEADER_DUPLICATE", "Two columns of the table have the same name."),
    ("TSV_COLUMN_MISSING", "The table lacks a column that the standard requires (the column is the sub-code)."),
    ("TSV_COLUMN_ORDER_INCORRECT", "The table's columns are not in the order the standard requires."),
    ("TSV_COLUMN_TYPE_REDEFINED", "The sidecar redefines the type of a column that the standard already defines."),
    ("TSV_EMPTY_LINE", "The table has an empty line; remove it (a final newline is fine)."),
    ("TSV_EQUAL_ROWS", "Rows of the table have different numbers of cells; every row needs one cell per column (use n/a for missing values)."),
    ("TSV_ERROR", "The table could not be read as tab-separated values."),
    ("TSV_INDEX_VALUE_NOT_UNIQUE", "A value that must identify one row (such as participant_id) appears in more than one row."),
    ("TSV_PSEUDO_AGE_DEPRECATED", "An age column uses the value 89+, which is deprecated; use 89 and say in the sidecar that older ages were capped."),
    ("TSV_VALUE_INCORRECT_TYPE", "A cell of the table does not have the type or format its column requires (the column is the sub-code; the line is the row)."),
    ("UNSUPPORTED_DATASET_TYPE", "The dataset's DatasetType is not one of the types this run accepts (--dataset-types)."),
];

/// The engine's explanation of `code`, if it is one of its own.
pub fn engine_explanation(code: &str) -> Option<&'static str> {
    ENGINE_CODES
        .binary_search_by(|(c, _)| c.cmp(&code))
        .ok()
        .map(|n| ENGINE_CODES[n].1)
}

/// The explanation of `code` given the schema's message for it: the message when it has
/// text, else the engine's, else a sentence built from the code's name (never empty).
pub fn explain(code: &str, schema_message: Option<&str>) -> String {
    if let Some(m) = schema_message.map(str::trim).filter(|m| !m.is_empty()) {
        return m.to_string();
    }
    if let Some(m) = engine_explanation(code) {
        return m.to_string();
    }
    let words = code.to_lowercase().replace('_', " ");
    format!("Issue {code} ({words}): see the issue message and the rule that raised it.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_sorted_unique_and_explained() {
        for w in ENGINE_CODES.windows(2) {
            assert!(w[0].0 < w[1].0, "{} before {}", w[0].0, w[1].0);
        }
        for (c, m) in ENGINE_CODES {
            assert!(!m.trim().is_empty(), "{c}");
            assert_eq!(engine_explanation(c), Some(*m));
        }
        assert_eq!(explain("X", Some("  given ")), "given");
        assert!(explain("NOT_A_CODE", None).contains("NOT_A_CODE"));
    }
}
