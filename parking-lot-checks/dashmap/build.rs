//! Generates dashmap's `RawRwLock` (`src/lock.rs`) at every published version on
//! `parking_lot_core`, each taken from the registry (`parkcheck-gen`): one module for each
//! distinct text of the file, named after the first version that has it, and one
//! deliberately flawed copy of the latest stable version.

use parkcheck_gen as generate;

use generate::Patch;

include!("src/patches.rs");

/// Every published version of dashmap with its own lock on `parking_lot_core` (5.3.4 on;
/// earlier ones used parking_lot's), as the crates.io index lists them, with whether it is
/// yanked, in the index's order.
const VERSIONS: &[(&str, bool)] = &[
    ("5.3.4", false),
    ("5.4.0", false),
    ("5.5.0", false),
    ("5.5.1", true),
    ("5.5.2", false),
    ("5.5.3", false),
    ("6.0.0-rc.1", false),
    ("6.0.0", true),
    ("6.0.1", false),
    ("6.1.0", false),
    ("7.0.0-rc0", false),
    ("7.0.0-rc1", false),
    ("7.0.0-rc2", false),
    ("6.2.1", false),
];

/// The version the deliberate flaw is planted in.
const FLAWED_FROM: &str = "6.2.1";

fn main() {
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it"));
    let distinct =
        generate::fetch_distinct(&out_dir.join("registry"), "dashmap", VERSIONS, "lock.rs");
    let latest = distinct
        .iter()
        .find(|d| d.versions.contains(&FLAWED_FROM))
        .expect("the flawed copy's version is listed");
    let flawed = generate::Distinct {
        text: latest.text.clone(),
        versions: vec!["flawed-reader-wakes-nobody"],
        published: latest.published.clone(),
    };
    let mut modules = String::new();
    let mut listed = String::from(
        "/// Each generated file: its name, its published source, and for a crate root the \
         module it becomes (none is).\npub(crate) const SOURCES: &[(&str, &str, Option<&str>)] = &[\n",
    );
    let mut table = String::from(
        "/// Each distinct text of `lock.rs`: the versions that publish it, and its lock.\n\
         pub const VERSIONS: &[Source] = &[\n",
    );
    for d in distinct.iter().chain(std::iter::once(&flawed)) {
        let dir = d.versions[0];
        let module = generate::module_name(dir);
        let name = format!("dashmap/{dir}/lock.rs");
        modules.push_str(&generate::write_module(
            &out_dir, &name, &module, &d.text, PATCHES,
        ));
        listed.push_str(&format!(
            "    ({name:?}, {:?}, None),\n",
            d.published.display().to_string()
        ));
        let entry = format!(
            "Source {{ versions: &{:?}, new: || Box::new({module}::RwLock::new(DataCell::new())) }}",
            d.versions
        );
        if std::ptr::eq(d, &flawed) {
            table.push_str(&format!(
                "];\n\n/// The deliberately flawed copy of {FLAWED_FROM} (`src/patches.rs`).\n\
                 pub const FLAWED_READER_WAKES_NOBODY: Source = {entry};\n"
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
