//! Generates once_cell's `parking_lot` `OnceCell` (`src/imp_pl.rs`) at every published version
//! on `parking_lot_core`, each taken from the registry (`parkcheck-gen`): one module for each
//! distinct text of the file, named after the first version that has it, and one deliberately
//! flawed copy of the latest.

use parkcheck_gen as generate;

use generate::Patch;

include!("src/patches.rs");

/// Every published version of once_cell whose `parking_lot` feature is built on
/// `parking_lot_core` (1.11.0 on; 1.10.0 and earlier use `parking_lot`'s `Mutex`), as the
/// crates.io index lists them, pre-releases included, with whether it is yanked.
const VERSIONS: &[(&str, bool)] = &[
    ("1.11.0", false),
    ("1.12.0-pre.1", false),
    ("1.12.0", false),
    ("1.12.1", false),
    ("1.13.0", false),
    ("1.13.1", false),
    ("1.14.0", false),
    ("1.15.0-pre.1", false),
    ("1.15.0", false),
    ("1.16.0-pre.1", false),
    ("1.16.0", false),
    ("1.17.0", false),
    ("1.17.1", false),
    ("1.17.2", false),
    ("1.18.0", false),
    ("1.19.0", false),
    ("1.20.0", true),
    ("1.20.1", false),
    ("1.20.2", false),
    ("1.20.3", false),
    ("1.21.0", false),
    ("1.21.1", false),
    ("1.21.2", false),
    ("1.21.3", false),
    ("1.21.4", false),
];

/// The version the deliberate flaw is planted in.
const FLAWED_FROM: &str = "1.21.4";

fn main() {
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it"));
    let scratch = out_dir.join("registry");
    // Each distinct text of the file, with the versions that publish it and its path there.
    let mut distinct: Vec<(String, Vec<&str>, std::path::PathBuf)> = Vec::new();
    for &(version, yanked) in VERSIONS {
        let path = generate::fetch_source_dir(&scratch, "once_cell", version, yanked)
            .join("src/imp_pl.rs");
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        match distinct.iter_mut().find(|(t, _, _)| *t == text) {
            Some((_, versions, _)) => versions.push(version),
            None => distinct.push((text, vec![version], path)),
        }
    }
    let latest = distinct
        .iter()
        .find(|(_, versions, _)| versions.contains(&FLAWED_FROM))
        .map(|(text, _, path)| (text.clone(), path.clone()))
        .expect("the flawed copy's version is listed");
    let mut modules = String::new();
    let mut listed = String::from(
        "/// Each generated file: its name, its published source, and for a crate root the \
         module it becomes (none is).\npub(crate) const SOURCES: &[(&str, &str, Option<&str>)] = &[\n",
    );
    let mut table = String::from(
        "/// Each distinct text of `imp_pl.rs`: the versions that publish it, and its cell.\n\
         pub const VERSIONS: &[Source] = &[\n",
    );
    let flawed = (latest.0, vec!["flawed-no-wake-up"], latest.1);
    for (text, versions, published) in distinct.iter().chain(std::iter::once(&flawed)) {
        let dir = versions[0];
        let module = if dir.starts_with(|c: char| c.is_ascii_digit()) {
            format!("v{}", dir.replace(['.', '-'], "_"))
        } else {
            dir.replace('-', "_")
        };
        let name = format!("once_cell/{dir}/imp_pl.rs");
        let generated = out_dir.join(&name);
        std::fs::create_dir_all(generated.parent().expect("a file has a directory"))
            .expect("OUT_DIR is writable");
        std::fs::write(&generated, generate::generate(text, &name, None, PATCHES))
            .expect("OUT_DIR is writable");
        let has_wait = text.contains("pub(crate) fn wait(&self)");
        modules.push_str(&format!(
            "#[path = {:?}]\n#[allow(warnings, clippy::all, clippy::pedantic, reason = \"published source\")]\nmod {module};\nadapt!({module}, {has_wait});\n",
            generated.display().to_string(),
        ));
        listed.push_str(&format!(
            "    ({name:?}, {:?}, None),\n",
            published.display().to_string()
        ));
        let entry = format!(
            "    Source {{ versions: &{versions:?}, has_wait: {has_wait}, new: || Box::new({module}::OnceCell::<Value>::new()) }},\n"
        );
        if dir == "flawed-no-wake-up" {
            table.push_str("];\n\n/// The deliberately flawed copy of the latest version (`src/patches.rs`).\npub const FLAWED_NO_WAKE_UP: Source =\n");
            table.push_str(entry.trim_start().trim_end_matches(",\n"));
            table.push_str(";\n");
        } else {
            table.push_str(&entry);
        }
    }
    listed.push_str("];\n");
    std::fs::write(out_dir.join("modules.rs"), modules + &table).expect("OUT_DIR is writable");
    std::fs::write(out_dir.join("sources.rs"), listed).expect("OUT_DIR is writable");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/patches.rs");
}
