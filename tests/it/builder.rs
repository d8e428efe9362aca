//! The [`Test`] builder of these tests expects what just's does unless told otherwise: exit
//! 0 and nothing on standard error; `status`, `stderr`, `any_status` and `any_stderr` say
//! otherwise.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::common::{Root, Test};

/// Whether building and running `test` panics (an expectation not met).
fn fails(test: impl FnOnce() -> Test) -> bool {
    catch_unwind(AssertUnwindSafe(|| {
        test().run();
    }))
    .is_err()
}

#[test]
fn a_run_must_exit_0_with_nothing_on_stderr_unless_told() {
    let root = Root::minimal();
    root.write("departments/sound.yaml", "id: sound\nhead: story-head\nprioritty: 3\n");
    // `orch validate` of a config with mistakes: exit 2, the diagnostics on standard output.
    assert!(fails(|| Test::new(root.path()).args(["validate"])));
    assert!(!fails(|| Test::new(root.path()).args(["validate"]).status(2)));
    assert!(!fails(|| Test::new(root.path()).args(["validate"]).any_status()));
    // A usage error: exit 2 and an `error:` line on standard error.
    assert!(fails(|| Test::new(root.path()).args(["nonsense"]).status(2)));
    assert!(!fails(|| Test::new(root.path())
        .args(["nonsense"])
        .status(2)
        .any_stderr()));
    assert!(fails(|| Test::new(root.path())
        .args(["nonsense"])
        .status(2)
        .stderr("error: something else\n")));
    // A clean run needs no word.
    assert!(!fails(|| Test::new(root.path()).args(["--version"])));
}
