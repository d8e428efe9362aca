//! The files of `agents/` and `departments/` as the listing of their directory gives them
//! (issue 40: read without a `stat` of their own when the listing says they are regular
//! files, sorted by name): links still followed, what is not a regular file still refused,
//! and the diagnostics of many files (read on every core) in the order of their names.

use crate::common::{stdout, Root, Test};

#[test]
fn a_link_to_a_file_is_read_and_a_dangling_link_or_a_fifo_is_refused() {
    let root = Root::minimal();
    root.write(
        "elsewhere/extra.yaml",
        "id: story-extra\nrole: specialist\ndepartment: nowhere\n",
    );
    std::os::unix::fs::symlink(
        root.path().join("elsewhere/extra.yaml"),
        root.path().join("agents/linked.yaml"),
    )
    .unwrap();
    // Read through the link: its agent's mistake is reported at the link's path.
    let out = Test::new(root.path()).args(["validate", "."]).status(2).run();
    assert!(
        stdout(&out).contains("agents/linked.yaml:3:13: error:"),
        "the linked agent is loaded:\n{}",
        stdout(&out)
    );

    std::os::unix::fs::symlink(root.path().join("nowhere"), root.path().join("agents/dangling.yaml")).unwrap();
    let fifo = root.path().join("agents/pipe.yaml");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let out = Test::new(root.path()).args(["validate", "."]).status(2).run();
    let text = stdout(&out);
    assert!(
        text.contains(
            "agents/dangling.yaml:1:1: error: agents/dangling.yaml is a dangling symbolic link; config files must be regular files"
        ),
        "{text}"
    );
    assert!(
        text.contains("agents/pipe.yaml:1:1: error: agents/pipe.yaml is a FIFO; config files must be regular files"),
        "{text}"
    );
}

#[test]
fn the_problems_of_many_files_come_in_the_order_of_their_names() {
    let root = Root::minimal();
    // Enough files to be read on every core; names whose byte order is not their
    // numeric order, and `-` (0x2d) before `.` (0x2e) before `_` (0x5f).
    let mut names: Vec<String> = (0..70).map(|i| format!("broken-{i}")).collect();
    names.extend(["broken.x".to_string(), "broken_x".to_string()]);
    for name in &names {
        root.write(&format!("agents/{name}.yaml"), "id: [\n");
    }
    let out = Test::new(root.path()).args(["validate", "."]).status(2).run();
    let files: Vec<String> = stdout(&out)
        .lines()
        .filter(|l| l.contains("invalid YAML"))
        .map(|l| l.split(':').next().unwrap().to_string())
        .collect();
    let mut sorted: Vec<String> = names.iter().map(|n| format!("agents/{n}.yaml")).collect();
    sorted.sort();
    assert_eq!(files, sorted);
}
