//! Benchmarks (`cargo bench`): planning a 10 MB prompt must take under a second, and a
//! full simulated run of the quick start is timed. Run in release; prints one line each.

use std::path::Path;
use std::time::{Duration, Instant};

use orch::PlanOptions;

fn time<T>(label: &str, runs: u32, mut f: impl FnMut() -> T) -> Duration {
    let mut best = Duration::MAX;
    for _ in 0..runs {
        let t = Instant::now();
        std::hint::black_box(f());
        best = best.min(t.elapsed());
    }
    println!("{label:<40} best of {runs}: {:>8.2} ms", best.as_secs_f64() * 1000.0);
    best
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (config, _) = orch::load_config(root).expect("the shipped config loads");
    let big = "Create character Aladdin then a scene with music. ".repeat(10 * 1024 * 1024 / 50);
    let explain = time("plan (explain) of a 10 MB prompt", 5, || {
        orch::plan(&config, &big, &PlanOptions::default()).expect("routes")
    });
    assert!(
        explain < Duration::from_secs(1),
        "explain on 10 MB took {explain:?}; the budget is 1 s"
    );

    time("load the shipped config", 20, || {
        orch::load_config(root).expect("loads")
    });

    let bin = root.join("target/release/orch");
    if bin.exists() {
        time("orch run (simulated) quick start", 5, || {
            std::process::Command::new(&bin)
                .args([
                    "run",
                    "--format",
                    "json",
                    "Create a dramatic opening scene with Aladdin stealing bread, then his escape across the rooftops",
                ])
                .current_dir(root)
                .output()
                .expect("runs")
        });
    }
}
