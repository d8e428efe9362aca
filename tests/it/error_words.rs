//! The words of refusals whose errors are typed at a layer's seam (issue 33, part 4), pinned
//! where no other test reads them: each is the one `error:` line, exit 2, nothing called.

use crate::common::{Root, Test};

#[test]
fn a_success_rates_path_that_is_a_directory_is_refused_by_name() {
    let root = Root::minimal();
    std::fs::create_dir(root.path().join("rates")).unwrap();
    Test::new(root.path())
        .args(["explain", "--success-rates", "rates", "Aladdin character"])
        .status(2)
        .stdout("")
        .stderr("error: success rates rates is a directory, not a file\n")
        .run();
}

#[test]
fn a_success_rates_file_that_is_not_text_is_refused() {
    let root = Root::minimal();
    root.write("rates.json", b"{\"agents\": \xff}");
    Test::new(root.path())
        .args(["explain", "--success-rates", "rates.json", "Aladdin character"])
        .status(2)
        .stdout("")
        .stderr("error: success rates rates.json is not UTF-8 text\n")
        .run();
}

#[test]
fn a_learned_rate_beyond_one_is_refused_where_it_is() {
    let root = Root::minimal();
    root.write(
        "rates.json",
        "{\"agents\": {\"story-writer\": {\"successRate\": 1.5, \"runs\": 2}}}",
    );
    Test::new(root.path())
        .args(["explain", "--success-rates", "rates.json", "Aladdin character"])
        .status(2)
        .stdout("")
        .stderr("error: rates.json: the successRate of `story-writer` is 1.5; a rate is between 0 and 1\n")
        .run();
}

#[test]
fn a_header_variable_that_is_no_header_value_stops_the_start_unshown() {
    let root = Root::orch_yaml(
        "mcpServers:\n  docs: { url: \"http://127.0.0.1:9/mcp\", headersEnv: { X-Docs-Token: DOCS_TOKEN } }\n\
         departments: [{ id: d, keywords: [x], head: h }]\n\
         agents: [{ id: h, role: head, department: d, tools: [{ server: docs }] }]\n",
    );
    Test::new(root.path())
        .args(["tools"])
        .env("DOCS_TOKEN", "tok\nsecret-it-9")
        .status(2)
        .stdout("")
        .stderr(
            "error: mcp server docs: environment variable `DOCS_TOKEN` (header `X-Docs-Token`) is not a valid header value\n",
        )
        .run();
}
