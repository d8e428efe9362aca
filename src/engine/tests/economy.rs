//! Economy by the deadline's time (SPEC §20), on tokio's paused clock: exact on any machine.

use super::super::Budget;
use super::{config, run_with, Scripted};

#[tokio::test(start_paused = true)]
async fn the_deadline_s_time_starts_economy_and_spares_the_work_running() {
    // Story's calls take 100 ms, audio's 300: audio's head ends at 600 ms, past 5% of 10 s.
    let provider = Scripted::with_delays(&[("audio-a", 300), ("audio-b", 300), ("audio-head", 300)]);
    let report = run_with(
        config("limits: { deadline: 10, economyAt: 0.05 }\n"),
        provider.clone(),
        Budget::new(200, 0, 8),
        std::future::pending(),
    )
    .await;
    let economy = report.economy.expect("economy started");
    assert_eq!(economy.reason, "economy: 5% of deadline spent");
    // The first call to finish at or after 500 ms: audio's specialists, at 300 ms, are before.
    assert_eq!(economy.at, 600);
    // Character had not started: skipped when supporting, its head alone when primary.
    let character = report
        .departments
        .iter()
        .find(|d| d.department_id == "character")
        .unwrap();
    let touched: Vec<&String> = economy.skipped.iter().chain(&economy.lightened).collect();
    assert_eq!(touched, ["character"], "{economy:?}");
    assert!(character.specialist_results.is_empty());
    // Story and audio were running: nothing of theirs was cut.
    assert_eq!(provider.of("audio").len(), 3);
    assert_eq!(report.status.to_string(), "success");
}
