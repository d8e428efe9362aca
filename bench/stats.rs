//! Table 7: `orch stats` over results files of 10,000 and 100,000 runs (streamed,
//! memory bounded by the agents, not the runs). The 10,000 runs are made by `orch test` on the
//! shipped studio (simulated provider): 1,000 cases, 10 repeats; the 100,000-run file is that
//! file ten times over (`orch stats` counts every line it reads).

use std::io::Write;
use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use super::{bin, measure, row, write};

/// Makes the files, measures `orch stats` on each, and returns the figures.
pub fn table(dir: &Path, repo: &Path) -> Value {
    println!("7. orch stats over results files (1,000 studio cases x 10 repeats, then x 10 again)");
    let mut suite = format!("config: {}\ncases:\n", repo.display());
    for i in 0..1_000 {
        suite.push_str(&format!(
            "  - id: case-{i}\n    prompt: \"Design the costume of Aladdin #{i}\"\n"
        ));
    }
    write(dir, "suite.yaml", &suite);
    let made = Command::new(bin())
        .args([
            "test",
            "suite.yaml",
            "--repeat",
            "10",
            "--quiet",
            "--format",
            "json",
            "--results",
            "r10k.jsonl",
        ])
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("orch test runs");
    assert!(made.success(), "the 10,000 runs were not made");
    let ten = std::fs::read(dir.join("r10k.jsonl")).unwrap();
    let mut big = std::io::BufWriter::new(std::fs::File::create(dir.join("r100k.jsonl")).unwrap());
    for _ in 0..10 {
        big.write_all(&ten).unwrap();
    }
    big.flush().unwrap();
    let mut rows = Vec::new();
    for (runs, file) in [(10_000, "r10k.jsonl"), (100_000, "r100k.jsonl")] {
        let mb = std::fs::metadata(dir.join(file)).map_or(0, |m| m.len()) as f64 / 1e6;
        let s = measure(
            dir,
            &["stats", file, "--format", "json", "--success-rates", "rates.json"],
        );
        row(&format!("{runs} runs ({mb:.0} MB)"), &s, "");
        rows.push(json!({"runs": runs, "megabytes": mb, "stats": s.json()}));
    }
    let _ = std::fs::remove_file(dir.join("r100k.jsonl"));
    Value::Array(rows)
}
