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
    let distinct = generate::fetch_distinct(
        &out_dir.join("registry"),
        "once_cell",
        VERSIONS,
        "imp_pl.rs",
    );
    let latest = distinct
        .iter()
        .find(|d| d.versions.contains(&FLAWED_FROM))
        .expect("the flawed copy's version is listed");
    let flawed = generate::Distinct {
        text: latest.text.clone(),
        versions: vec!["flawed-no-wake-up"],
        published: latest.published.clone(),
    };
    let mut modules = String::new();
    let mut listed = String::from(
        "/// Each generated file: its name, its published source, and for a crate root the \
         module it becomes (none is).\npub(crate) const SOURCES: &[(&str, &str, Option<&str>)] = &[\n",
    );
    let mut table = String::from(
        "/// Each distinct text of `imp_pl.rs`: the versions that publish it, and its cell.\n\
         pub const VERSIONS: &[Source] = &[\n",
    );
    for d in distinct.iter().chain(std::iter::once(&flawed)) {
        let dir = d.versions[0];
        let module = generate::module_name(dir);
        let name = format!("once_cell/{dir}/imp_pl.rs");
        let has_wait = d.text.contains("pub(crate) fn wait(&self)");
        modules.push_str(&generate::write_module(
            &out_dir, &name, &module, &d.text, PATCHES,
        ));
        modules.push_str(&format!("adapt!({module}, {has_wait});\n"));
        listed.push_str(&format!(
            "    ({name:?}, {:?}, None),\n",
            d.published.display().to_string()
        ));
        let entry = format!(
            "Source {{ versions: &{:?}, has_wait: {has_wait}, new: || Box::new({module}::OnceCell::<Value>::new()) }}",
            d.versions
        );
        if std::ptr::eq(d, &flawed) {
            table.push_str(&format!(
                "];\n\n/// The deliberately flawed copy of {FLAWED_FROM} (`src/patches.rs`).\n\
                 pub const FLAWED_NO_WAKE_UP: Source = {entry};\n"
            ));
        } else {
            table.push_str(&format!("    {entry},\n"));
        }
    }
    listed.push_str("];\n");
    std::fs::write(out_dir.join("modules.rs"), modules + &table).expect("OUT_DIR is writable");
    std::fs::write(out_dir.join("sources.rs"), listed).expect("OUT_DIR is writable");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/patches.rs");
}
