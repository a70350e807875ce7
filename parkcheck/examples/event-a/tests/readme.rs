//! parkcheck's README shows this crate's and `flag-b`'s files verbatim: each block marked
//! `<!-- example: PATH -->` must equal the file at PATH (relative to `parkcheck/`), and each
//! marked `<!-- contained in: PATH -->` must appear in it, so the README cannot drift from code
//! that CI builds and runs.

use std::path::Path;

/// The files the README must show whole.
const SHOWN: &[&str] = &[
    "examples/event-a/Cargo.toml",
    "examples/event-a/src/lib.rs",
    "examples/event-a/tests/event.rs",
    "examples/flag-b/Cargo.toml",
    "examples/flag-b/src/lib.rs",
];

/// Each marked block of `readme`: its marker's kind (`example` or `contained in`), its path,
/// and the block's text.
fn marked_blocks(readme: &str) -> Vec<(String, String, String)> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut blocks = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(marker) = line
            .strip_prefix("<!-- ")
            .and_then(|m| m.strip_suffix(" -->"))
        else {
            continue;
        };
        let Some((kind, path)) = marker.split_once(": ") else {
            continue;
        };
        assert!(
            lines[i + 1].starts_with("```"),
            "README line {}: the marker must be right above a fenced block",
            i + 1
        );
        let end = (i + 2..lines.len())
            .find(|&j| lines[j] == "```")
            .unwrap_or_else(|| panic!("README line {}: an unclosed block", i + 2));
        blocks.push((
            kind.to_string(),
            path.to_string(),
            lines[i + 2..end].join("\n"),
        ));
    }
    blocks
}

#[test]
fn the_readme_shows_the_examples_as_they_are() {
    let parkcheck = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(parkcheck.join("README.md")).unwrap();
    let blocks = marked_blocks(&readme);
    for (kind, path, block) in &blocks {
        let file = std::fs::read_to_string(parkcheck.join(path))
            .unwrap_or_else(|e| panic!("README shows {path}: {e}"));
        match kind.as_str() {
            "example" => assert_eq!(
                block.trim_end(),
                file.trim_end(),
                "README's block of {path} differs from the file"
            ),
            "contained in" => assert!(
                file.contains(block.trim_end()),
                "README's block is not in {path}:\n{block}"
            ),
            other => panic!("README: an unknown marker {other:?}"),
        }
    }
    for path in SHOWN {
        assert!(
            blocks.iter().any(|(k, p, _)| k == "example" && p == path),
            "README does not show {path}"
        );
    }
}

#[test]
fn a_changed_block_is_found() {
    let readme = "<!-- example: a.rs -->\n```rust\nfn main() {}\n```\n";
    assert_eq!(
        marked_blocks(readme),
        [(
            "example".to_string(),
            "a.rs".to_string(),
            "fn main() {}".to_string()
        )]
    );
}
