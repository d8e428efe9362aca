//! Files orch writes and reads back: a results file or a conversation cut by a kill inside
//! a character is a `warning:` and carries on, and runs sharing one conversation at once
//! each report the turn the file gives them.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

use serde_json::Value;

use crate::common::mock::chat_reply;
use crate::common::{json, repo, Root, Test};
use crate::conversations::TEAM;

/// `café` cut after the first byte of its `é`, as a kill leaves a line: no newline.
const CUT_IN_E: &[u8] = b"{\"kind\": \"turn\", \"request\": \"caf\xc3";

#[test]
fn a_results_line_cut_inside_a_character_is_a_warning_and_its_run_runs_again() {
    let dir = Root::empty();
    let results = dir.path().join("r.jsonl");
    let shown = results.to_str().unwrap();
    let run = |args: &[&str]| {
        Test::new(&repo())
            .args([
                "test",
                "tests/suites/studio.yaml",
                "--filter",
                "^character-",
                "--format",
                "json",
            ])
            .args(args)
    };
    run(&["--results", shown]).status(0).stderr("").run();
    let whole = std::fs::read_to_string(&results).unwrap();
    let first = whole.lines().next().unwrap().to_string();
    let mut cut = format!("{first}\n").into_bytes();
    cut.extend_from_slice(CUT_IN_E);
    std::fs::write(&results, &cut).unwrap();
    let out = run(&["--resume", shown])
        .status(0)
        .stderr(format!(
            "warning: {shown}:2: the last line was cut short (a run killed while writing it); it is ignored and its case run runs again\n"
        ))
        .run();
    assert_eq!(json(&out)["passed"], 2);
    let mended = std::fs::read_to_string(&results).unwrap();
    assert!(mended.starts_with(&format!("{first}\n")), "{mended}");
    assert_eq!(mended.lines().count(), 2, "{mended}");
    // Bytes that are not UTF-8 in a whole line (it has its newline) are no kill: refused.
    let mut broken = format!("{first}\n").into_bytes();
    broken.extend_from_slice(CUT_IN_E);
    broken.push(b'\n');
    std::fs::write(&results, &broken).unwrap();
    run(&["--resume", shown])
        .status(2)
        .stdout("")
        .stderr(format!("error: {shown}:2: not UTF-8 text\n"))
        .run();
    assert_eq!(std::fs::read(&results).unwrap(), broken, "the file is untouched");
}

#[test]
fn a_conversation_cut_inside_a_character_is_a_warning_and_the_next_turn_follows() {
    let root = Root::orch_yaml(TEAM);
    let chat = root.path().join("chat.jsonl");
    let file = chat.to_str().unwrap();
    let turn = |prompt: &str, stderr: String| {
        let out = Test::new(root.path())
            .args(["run", "--format", "json", "--session", file, prompt])
            .stderr(stderr)
            .run();
        json(&out)["session"]["turn"].clone()
    };
    assert_eq!(turn("the plot of the scene", String::new()), 1);
    let mut cut = std::fs::read(&chat).unwrap();
    cut.extend_from_slice(CUT_IN_E);
    std::fs::write(&chat, &cut).unwrap();
    let warning =
        format!("warning: {file}:2: the last line is cut short (a run was stopped while writing it); it is ignored\n");
    assert_eq!(turn("and the next scene's plot", warning), 2);
    let text = std::fs::read_to_string(&chat).unwrap();
    let turns: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(turns.len(), 2, "the torn line is cut off: {text}");
    assert_eq!(turns[1]["request"], "and the next scene's plot");
    // A whole line that is not UTF-8 is no kill: refused, the file untouched.
    let mut broken = text.clone().into_bytes();
    broken.extend_from_slice(CUT_IN_E);
    broken.push(b'\n');
    std::fs::write(&chat, &broken).unwrap();
    Test::new(root.path())
        .args(["run", "--session", file, "the plot of the scene"])
        .status(2)
        .stdout("")
        .stderr(format!("error: {file}:3: not UTF-8 text\n"))
        .run();
    assert_eq!(std::fs::read(&chat).unwrap(), broken);
}

/// Reads one HTTP request from `stream` (its headers and its `content-length` body).
fn read_request(stream: &mut TcpStream) {
    let mut seen = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = stream.read(&mut buf).unwrap_or(0);
        if n == 0 {
            return;
        }
        seen.extend_from_slice(&buf[..n]);
        let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&seen[..end]).to_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .map_or(0, |v| v.trim().parse().unwrap());
        if seen.len() >= end + 4 + length {
            return;
        }
    }
}

/// A chat provider that holds its first `n` requests until all `n` have arrived, then
/// answers each (and any later one at once): `n` runs are in flight together, each having
/// read its conversation before any writes to it. Its address.
fn held_until(n: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let barrier = Arc::new(Barrier::new(n));
    let arrived = Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let (barrier, arrived) = (barrier.clone(), arrived.clone());
            std::thread::spawn(move || {
                let mut stream = stream.unwrap();
                read_request(&mut stream);
                if arrived.fetch_add(1, Ordering::SeqCst) < n {
                    barrier.wait();
                }
                let body = chat_reply("The plot thickens.").to_string();
                let reply = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(reply.as_bytes());
            });
        }
    });
    address
}

#[test]
fn runs_sharing_a_conversation_at_once_report_the_turns_the_file_holds() {
    const RUNS: usize = 4;
    let root = Root::orch_yaml(format!(
        "defaults: {{ provider: mock, passingThreshold: 0 }}\nproviders:\n  mock: {{ kind: openai, baseUrl: \"{}\" }}\n\
         http: {{ maxRetries: 0 }}\ndepartments:\n  - {{ id: story, keywords: [plot], head: sh }}\n\
         agents:\n  - {{ id: sh, role: head, department: story }}\n",
        held_until(RUNS)
    ));
    let chat = root.path().join("chat.jsonl");
    let file = chat.to_str().unwrap().to_string();
    let runs: Vec<_> = (0..RUNS)
        .map(|i| {
            let (dir, file) = (root.path().to_path_buf(), file.clone());
            std::thread::spawn(move || {
                let prompt = format!("the plot, part {i}");
                let out = Test::new(&dir)
                    .args(["run", "--format", "json", "--session", &file, &prompt])
                    .run();
                json(&out)["session"]["turn"].as_u64().unwrap()
            })
        })
        .collect();
    let mut turns: Vec<u64> = runs.into_iter().map(|r| r.join().unwrap()).collect();
    turns.sort_unstable();
    assert_eq!(turns, (1..=RUNS as u64).collect::<Vec<_>>());
    let text = std::fs::read_to_string(&chat).unwrap();
    assert_eq!(text.lines().count(), RUNS, "{text}");
    assert!(text
        .lines()
        .all(|l| serde_json::from_str::<Value>(l).unwrap()["kind"] == "turn"));
}
