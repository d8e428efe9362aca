//! The frame of every page orch writes (`orch report --html`, `orch compare --html`): one
//! self-contained document, orch's style inline, no script, nothing fetched (SPEC §14).

use crate::text::escape_markup as escape;

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}\
h1{font-size:20px}h2{font-size:16px;margin-top:28px}table{border-collapse:collapse;margin:8px 0}\
td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}th{background:#f4f4f4}\
.success,.pass{color:#1d6b1d}.partial{color:#9a6700}.failed,.fail{color:#a31515}.skipped{color:#777}\
pre{white-space:pre-wrap;background:#f7f7f7;padding:8px;border:1px solid #e4e4e4;max-height:360px;overflow:auto}\
svg text{font:11px system-ui,sans-serif}.num{text-align:right}\
.key{display:inline-block;width:14px;height:10px;margin:0 4px 0 12px;border:1px solid #999}\
.key.head{background:#c9d7ef}.key.accept{background:#5cb85c}.key.revise{background:#e0b040}\
.key.discard{background:#d9534f}.key.failure{background:#fff;border:2px dashed #a31515}.key.judge{background:#8e6bbf}\
.paused,.pending{color:#9a6700}.key.pending{background:#fff;border:2px dotted #9a6700}";

/// A whole self-contained page around `body` (markup the caller escaped): orch's style,
/// no script, nothing fetched.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        escape(title)
    )
}
