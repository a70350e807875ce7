//! `cargo xtask links`: every relative link and anchor in the repository's Markdown resolves,
//! and the READMEs that ship in a package have no relative links (crates.io renders a
//! package's README away from the repository, where a relative link leads nowhere).
//!
//! Offline by design: absolute URLs are not fetched. Anchors follow GitHub's rule for heading
//! ids (lower case; letters, digits, `_`, `-` and spaces kept, spaces turned into `-`; a
//! repeated id gets `-1`, `-2`, ...).

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, ExitCode};

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// What one Markdown file offers and asks for.
#[derive(Debug, Default)]
struct Page {
    /// The ids its headings get.
    anchors: HashSet<String>,
    /// Every link and image destination, with its line.
    links: Vec<(usize, String)>,
}

/// GitHub's id for a heading whose text is `text`.
fn slug(text: &str) -> String {
    text.chars()
        .flat_map(char::to_lowercase)
        .filter(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn parse(text: &str) -> Page {
    let mut page = Page::default();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut heading: Option<String> = None;
    let line_of = |offset: usize| text[..offset].matches('\n').count() + 1;
    for (event, range) in Parser::new_ext(text, Options::ENABLE_TABLES).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => {
                let base = slug(&heading.take().unwrap_or_default());
                let n = seen.entry(base.clone()).or_insert(0);
                page.anchors
                    .insert(if *n == 0 { base } else { format!("{base}-{n}") });
                *n += 1;
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                page.links
                    .push((line_of(range.start), dest_url.to_string()));
            }
            _ => {}
        }
    }
    page
}

/// Whether `dest` leaves the repository (a scheme such as `https:` or `mailto:`).
fn is_absolute(dest: &str) -> bool {
    dest.split_once(':').is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    })
}

/// `path` with `.` and `..` resolved, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The problems with the links of `pages` (paths relative to `root`), one line each.
fn check(root: &Path, pages: &BTreeMap<PathBuf, Page>, packaged: &HashSet<PathBuf>) -> Vec<String> {
    let mut problems = Vec::new();
    for (file, page) in pages {
        for (line, dest) in &page.links {
            if is_absolute(dest) {
                continue;
            }
            let at = format!("{}:{line}: `{dest}`", file.display());
            if packaged.contains(file) {
                problems.push(format!(
                    "{at}: a relative link in a README that ships in a package (it breaks on crates.io): use an absolute URL or a plain path"
                ));
                continue;
            }
            let (path, anchor) = match dest.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (dest.as_str(), None),
            };
            let target = if path.is_empty() {
                file.clone()
            } else {
                normalize(&file.parent().unwrap_or(Path::new("")).join(path))
            };
            if !root.join(&target).exists() {
                problems.push(format!("{at}: no such file `{}`", target.display()));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            match pages.get(&target) {
                Some(t) if t.anchors.contains(anchor) => {}
                Some(_) => problems.push(format!(
                    "{at}: `{}` has no heading with the id `{anchor}`",
                    target.display()
                )),
                None => problems.push(format!(
                    "{at}: an anchor into `{}`, which is not a Markdown file of the repository",
                    target.display()
                )),
            }
        }
    }
    problems
}

/// The READMEs of the workspace's publishable packages, relative to `root`.
fn packaged_readmes(root: &Path) -> Result<HashSet<PathBuf>, String> {
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo metadata: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let meta: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata: {e}"))?;
    let mut readmes = HashSet::new();
    for package in meta["packages"].as_array().into_iter().flatten() {
        // `publish: []` is `publish = false`; `null` publishes to crates.io.
        let published = package["publish"].as_array().is_none_or(|r| !r.is_empty());
        let (Some(manifest), Some(readme)) = (
            package["manifest_path"].as_str(),
            package["readme"].as_str(),
        ) else {
            continue;
        };
        if published {
            let dir = Path::new(manifest).parent().unwrap_or(Path::new(""));
            let readme = normalize(&dir.join(readme));
            if let Ok(rel) = readme.strip_prefix(root) {
                readmes.insert(rel.to_path_buf());
            }
        }
    }
    Ok(readmes)
}

/// The Markdown files git tracks or would track (not ignored), relative to `root`.
fn tracked_markdown(root: &Path) -> Result<Vec<PathBuf>, String> {
    let out = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
            "*.md",
        ])
        .current_dir(root)
        .output()
        .map_err(|e| format!("git ls-files: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "git ls-files: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(out
        .stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
        .collect())
}

pub(crate) fn links() -> ExitCode {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace")
        .to_path_buf();
    let run = || -> Result<Vec<String>, String> {
        let mut pages = BTreeMap::new();
        for file in tracked_markdown(&root)? {
            let text = fs::read_to_string(root.join(&file))
                .map_err(|e| format!("{}: {e}", file.display()))?;
            pages.insert(file, parse(&text));
        }
        let links: usize = pages.values().map(|p| p.links.len()).sum();
        let problems = check(&root, &pages, &packaged_readmes(&root)?);
        println!("{} Markdown files, {links} links checked", pages.len());
        Ok(problems)
    };
    match run() {
        Ok(problems) if problems.is_empty() => ExitCode::SUCCESS,
        Ok(problems) => {
            for p in &problems {
                eprintln!("{p}");
            }
            eprintln!("{} broken link(s)", problems.len());
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("cargo xtask links: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pages(files: &[(&str, &str)]) -> BTreeMap<PathBuf, Page> {
        files
            .iter()
            .map(|(name, text)| (PathBuf::from(name), parse(text)))
            .collect()
    }

    /// A scratch directory holding `files`, for the existence checks.
    fn scratch(test: &str, files: &[(&str, &str)]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-links-{test}-{}", std::process::id()));
        for (name, text) in files {
            let path = dir.join(name);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
        dir
    }

    #[test]
    fn heading_ids_follow_github() {
        let page = parse(
            "# The model's happens-before\n## `cargo xtask verify` and its flags\n## Flaws × checks\n## Soak\n## Soak\n",
        );
        for id in [
            "the-models-happens-before",
            "cargo-xtask-verify-and-its-flags",
            "flaws--checks",
            "soak",
            "soak-1",
        ] {
            assert!(
                page.anchors.contains(id),
                "{id} missing from {:?}",
                page.anchors
            );
        }
    }

    #[test]
    fn broken_files_and_anchors_are_reported_and_good_ones_are_not() {
        let files = [
            (
                "README.md",
                "[guide](docs/guide.md#running-it) [home](https://example.org/x#y)",
            ),
            (
                "docs/guide.md",
                "# Guide\n## Running it\n[back](../README.md) [self](#guide) [gone](#nowhere) [missing](../nope.md) [code](../src/lib.rs)",
            ),
            ("src/lib.rs", ""),
        ];
        let root = scratch("broken", &files);
        let problems = check(&root, &pages(&files), &HashSet::new());
        assert_eq!(problems.len(), 2, "{problems:#?}");
        assert!(
            problems[0].contains("no heading with the id `nowhere`"),
            "{problems:#?}"
        );
        assert!(
            problems[1].contains("no such file `nope.md`"),
            "{problems:#?}"
        );
    }

    #[test]
    fn a_packaged_readme_may_not_link_relatively() {
        let files = [
            (
                "README.md",
                "[guide](docs/guide.md) [docs](https://docs.rs/x)",
            ),
            ("docs/guide.md", ""),
        ];
        let root = scratch("packaged", &files);
        let packaged = HashSet::from([PathBuf::from("README.md")]);
        let problems = check(&root, &pages(&files), &packaged);
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert!(problems[0].contains("ships in a package"), "{problems:#?}");
    }
}
