//! Economy by the deadline's time, on tokio's paused clock: exact on any machine.

use super::super::Budget;
use super::{config, run_with, Scripted, CHAIN};
use crate::report::Report;

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

/// The schedule of `CHAIN` where character waits for story alone: story and audio start at once.
fn fork_config(limits: &str) -> crate::config::Config {
    let fork = CHAIN.replace("dependsOn: [story, audio]", "dependsOn: [story]");
    crate::config::load_str(&format!("{limits}{fork}"), false).unwrap()
}

/// The fork's report when audio's calls take `audio_ms` each (story's take 100 ms).
async fn fork(limits: &str, audio_ms: u64) -> Report {
    let delays = [("audio-head", audio_ms), ("audio-a", audio_ms), ("audio-b", audio_ms)];
    run_with(
        fork_config(limits),
        Scripted::with_delays(&delays),
        Budget::new(20, 0, 8),
        std::future::pending(),
    )
    .await
}

#[tokio::test(start_paused = true)]
async fn what_an_unrelated_department_spent_first_never_decides_a_department_s_economy() {
    // Three calls a department; economy at 5 of 20 calls. Character has seen story's 3 when
    // it starts, whether audio's 3 were spent before (audio fast) or not (audio slow).
    let limits = "limits: { economyAt: 0.25 }\n";
    let (fast, slow) = (fork(limits, 10).await, fork(limits, 1000).await);
    for report in [&fast, &slow] {
        let economy = report.economy.as_ref().expect("the run spent 9 calls: economy started");
        assert_eq!(economy.reason, "economy: 25% of maxCalls spent");
        assert!(
            economy.skipped.is_empty() && economy.lightened.is_empty(),
            "{economy:?}"
        );
        let character = report
            .departments
            .iter()
            .find(|d| d.department_id == "character")
            .unwrap();
        assert_eq!(
            (character.status.to_string(), character.usage.calls),
            ("success".into(), 3)
        );
    }
    let statuses = |r: &Report| {
        r.departments
            .iter()
            .map(|d| (d.department_id.clone(), d.status))
            .collect::<Vec<_>>()
    };
    assert_eq!(statuses(&fast), statuses(&slow));
}

#[tokio::test(start_paused = true)]
async fn a_department_whose_dependencies_spent_the_share_is_skipped() {
    // Economy at 3 of 20 calls: story's 3 are enough for character, audio or not.
    let limits = "limits: { economyAt: 0.15 }\n";
    for audio_ms in [10, 1000] {
        let report = fork(limits, audio_ms).await;
        let economy = report.economy.expect("economy started");
        assert_eq!(economy.skipped, ["character"]);
        let character = report
            .departments
            .iter()
            .find(|d| d.department_id == "character")
            .unwrap();
        assert_eq!(character.error.as_deref(), Some("economy: 15% of maxCalls spent"));
    }
}
