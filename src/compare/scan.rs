//! The fast path of reading a results line (a million lines a side in seconds): a
//! scanner of the few keys a comparison reads, the rest of the line checked to be JSON and
//! skipped without being decoded. It answers only when it is sure: a line it reads is one
//! serde reads, to the same [`RunLine`] (the tests below check it on lines cut and mutated at
//! random); on any doubt (an escape in a key, a control character, a number not in its
//! plainest form, a key twice, a line that is not JSON…) it answers nothing and the line is
//! read by serde, whose error, if any, is the line's error. So errors stay serde's, word for
//! word. Strings that hold an escape are decoded by serde itself.

use std::borrow::Cow;

use super::digest::{Digest, DigestAttempt, DigestDepartment, DigestSpecialist, DigestUsage, RunLine};
use crate::report::DepartmentStatus;

/// The deepest nesting the scanner follows (serde's limit is 128): deeper lines go to serde.
const MAX_DEPTH: u32 = 100;

/// The run of a results line, or `None` when the scanner is not sure (then serde reads it).
pub(super) fn scan(line: &str) -> Option<RunLine<'_>> {
    // No control character anywhere: serde refuses them raw in strings, and the only
    // whitespace left is the space (a line with a tab goes to serde). Branchless: vectorised.
    let controls = line.bytes().fold(0u8, |any, b| any | u8::from(b < 0x20));
    if controls != 0 {
        return None;
    }
    let mut scanner = Scanner {
        text: line,
        at: 0,
        depth: 0,
    };
    let run = scanner.run_line()?;
    scanner.space();
    (scanner.at == line.len()).then_some(run)
}

/// A cursor in a line.
struct Scanner<'a> {
    text: &'a str,
    at: usize,
    depth: u32,
}

/// Sets `slot` to `value`, unless it was set (a key met twice: serde's error, so its path).
fn once<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(value);
    Some(())
}

/// The index past the ASCII digits of `bytes` from `at`.
fn digits(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(u8::is_ascii_digit) {
        at += 1;
    }
    at
}

/// The length of the escape `bytes` starts with (at its `\`), as serde checks it when it
/// skips a string (a `\u` needs four hex digits; surrogates are not checked there).
fn escape_len(bytes: &[u8]) -> Option<usize> {
    match bytes.get(1)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(2),
        b'u' => bytes.get(2..6)?.iter().all(u8::is_ascii_hexdigit).then_some(6),
        _ => None,
    }
}

/// The first `"` or `\\` of `bytes` from `at`, eight bytes at a time (most strings are short:
/// a call of `memchr` costs more than the search).
fn quote_or_backslash(bytes: &[u8], mut at: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let zero_byte = |v: u64| v.wrapping_sub(ONES) & !v & (ONES << 7);
    while let Some(eight) = bytes.get(at..at + 8) {
        let v = u64::from_le_bytes(eight.try_into().ok()?);
        // The lowest flag of each test is exact (a false one only follows a true one).
        let found = zero_byte(v ^ (ONES * u64::from(b'"'))) | zero_byte(v ^ (ONES * u64::from(b'\\')));
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    bytes[at..]
        .iter()
        .position(|&b| b == b'"' || b == b'\\')
        .map(|i| at + i)
}

/// Powers of ten a plain decimal is divided by (exact in `f64`).
const POW10: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

/// A number of at most 15 digits, a point among them or none (`85`, `61.5`), as serde reads
/// it: both give the correctly rounded value (the digits and the power of ten are exact, so
/// one division rounds once). Any other form: `None`.
fn plain_decimal(raw: &str) -> Option<f64> {
    let (whole, fraction) = raw.split_once('.').unwrap_or((raw, ""));
    if whole.len() + fraction.len() > 15 || !(whole.bytes().chain(fraction.bytes())).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits = (whole.bytes().chain(fraction.bytes())).fold(0u64, |n, b| n * 10 + u64::from(b - b'0'));
    Some(digits as f64 / POW10[fraction.len()])
}

impl<'a> Scanner<'a> {
    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.at).copied()
    }

    /// Skips spaces (the only whitespace a scanned line holds).
    fn space(&mut self) {
        while self.peek() == Some(b' ') {
            self.at += 1;
        }
    }

    /// Steps over `byte`, after spaces.
    fn eat(&mut self, byte: u8) -> Option<()> {
        self.space();
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// Steps over `word` (`true`, `false`, `null`).
    fn literal(&mut self, word: &str) -> Option<()> {
        (self.bytes()[self.at..].starts_with(word.as_bytes())).then(|| self.at += word.len())
    }

    /// One level deeper, unless too deep.
    fn deeper(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    /// The string at the cursor, quotes included, and whether it holds an escape.
    fn string(&mut self) -> Option<(&'a str, bool)> {
        self.space();
        let (bytes, start) = (self.bytes(), self.at);
        if self.peek()? != b'"' {
            return None;
        }
        let (mut at, mut escaped) = (start + 1, false);
        loop {
            at = quote_or_backslash(bytes, at)?;
            if bytes[at] == b'"' {
                break;
            }
            escaped = true;
            at += escape_len(&bytes[at..])?;
        }
        self.at = at + 1;
        Some((&self.text[start..self.at], escaped))
    }

    /// A string read: borrowed from the line, or decoded by serde when it holds an escape.
    fn text(&mut self) -> Option<Cow<'a, str>> {
        match self.string()? {
            (quoted, false) => Some(Cow::Borrowed(&quoted[1..quoted.len() - 1])),
            (quoted, true) => serde_json::from_str::<String>(quoted).ok().map(Cow::Owned),
        }
    }

    /// A number at the cursor (JSON's grammar), as written.
    fn number(&mut self) -> Option<&'a str> {
        self.space();
        let (bytes, start) = (self.bytes(), self.at);
        let mut at = start + usize::from(self.peek()? == b'-');
        match bytes.get(at)? {
            b'0' => at += 1,
            b'1'..=b'9' => at = digits(bytes, at),
            _ => return None,
        }
        if bytes.get(at) == Some(&b'.') {
            let end = digits(bytes, at + 1);
            (end > at + 1).then_some(())?;
            at = end;
        }
        if matches!(bytes.get(at), Some(b'e' | b'E')) {
            at += 1 + usize::from(matches!(bytes.get(at + 1), Some(b'+' | b'-')));
            let end = digits(bytes, at);
            (end > at).then_some(())?;
            at = end;
        }
        self.at = at;
        Some(&self.text[start..at])
    }

    /// An unsigned integer written plainly (digits only).
    fn unsigned(&mut self) -> Option<u64> {
        let raw = self.number()?;
        (raw.bytes().all(|b| b.is_ascii_digit())).then_some(())?;
        raw.parse().ok()
    }

    /// A number as an `f64`, as serde reads it (itself, past the plainest forms).
    fn float(&mut self) -> Option<f64> {
        let raw = self.number()?;
        plain_decimal(raw).or_else(|| serde_json::from_str(raw).ok())
    }

    /// `true` or `false`.
    fn boolean(&mut self) -> Option<bool> {
        self.space();
        match self.peek()? {
            b't' => self.literal("true").map(|()| true),
            b'f' => self.literal("false").map(|()| false),
            _ => None,
        }
    }

    /// `null`, or what `read` reads.
    fn maybe<T>(&mut self, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        self.space();
        if self.peek()? == b'n' {
            return self.literal("null").map(|()| None);
        }
        read(self).map(Some)
    }

    /// The members of the object at the cursor, each handed to `member` with its key and
    /// whether the key holds an escape (`member` reads or skips the value).
    fn object(&mut self, mut member: impl FnMut(&mut Self, &'a str, bool) -> Option<()>) -> Option<()> {
        self.entries([b'{', b'}'], |s| {
            let (quoted, escaped) = s.string()?;
            s.eat(b':')?;
            member(s, &quoted[1..quoted.len() - 1], escaped)
        })
    }

    /// The items of the array at the cursor, each read by `item`.
    fn array(&mut self, item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.entries([b'[', b']'], item)
    }

    /// The entries of the object or array at the cursor, between `open` and `close`, each
    /// read by `entry`, a comma between two.
    fn entries(&mut self, [open, close]: [u8; 2], mut entry: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(open)?;
        self.deeper()?;
        self.space();
        if self.peek()? == close {
            self.at += 1;
        } else {
            loop {
                entry(self)?;
                self.space();
                self.at += 1;
                match self.bytes().get(self.at - 1)? {
                    b',' => {}
                    &end if end == close => break,
                    _ => return None,
                }
            }
        }
        self.depth -= 1;
        Some(())
    }

    /// The items of the array at the cursor, each read by `read`.
    fn list<T>(&mut self, mut read: impl FnMut(&mut Self) -> Option<T>) -> Option<Vec<T>> {
        let mut items = Vec::new();
        self.array(|s| read(s).map(|item| items.push(item)))?;
        Some(items)
    }

    /// Checks the value at the cursor is JSON, and steps over it.
    fn skip(&mut self) -> Option<()> {
        self.space();
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' => self.object(|s, _, _| s.skip()),
            b'[' => self.array(Self::skip),
            b't' => self.literal("true"),
            b'f' => self.literal("false"),
            b'n' => self.literal("null"),
            _ => self.number().map(drop),
        }
    }
}

/// The keys read, each as serde's derive reads it: a key met twice, a required key missing
/// or a value of another type is left to serde.
impl<'a> Scanner<'a> {
    /// A results line.
    fn run_line(&mut self) -> Option<RunLine<'a>> {
        let (mut suite, mut case_id, mut repeat, mut passed) = (None, None, None, None);
        let (mut failures, mut duration_ms, mut error, mut report) = (None, None, None, None);
        self.object(|s, key, escaped| match key {
            _ if escaped => None,
            "suite" => once(&mut suite, s.text()?),
            "caseId" => once(&mut case_id, s.text()?),
            "repeat" => once(&mut repeat, u32::try_from(s.unsigned()?).ok()?),
            "passed" => once(&mut passed, s.boolean()?),
            "failures" => once(&mut failures, s.list(|s| s.text().map(Cow::into_owned))?),
            "durationMs" => once(&mut duration_ms, s.unsigned()?),
            "error" => once(&mut error, s.maybe(|s| s.text().map(Cow::into_owned))?),
            "report" => once(&mut report, s.maybe(Self::digest)?),
            _ => s.skip(),
        })?;
        Some(RunLine {
            suite: suite?,
            case_id: case_id?,
            repeat: repeat?,
            passed: passed?,
            failures: failures.unwrap_or_default(),
            duration_ms: duration_ms.unwrap_or_default(),
            error: error.flatten(),
            report: report.flatten(),
        })
    }

    /// A run's report.
    fn digest(&mut self) -> Option<Digest<'a>> {
        let (mut quality, mut usage, mut departments) = (None, None, None);
        self.object(|s, key, escaped| match key {
            _ if escaped => None,
            "overallQuality" => once(&mut quality, s.float()?),
            "usage" => once(&mut usage, s.usage()?),
            "departments" => once(&mut departments, s.list(Self::department)?),
            _ => s.skip(),
        })?;
        Some(Digest {
            overall_quality: quality.unwrap_or_default(),
            usage: usage.unwrap_or_default(),
            departments: departments.unwrap_or_default(),
        })
    }

    /// Calls and cost.
    fn usage(&mut self) -> Option<DigestUsage> {
        let (mut calls, mut cost_usd) = (None, None);
        self.object(|s, key, escaped| match key {
            _ if escaped => None,
            "calls" => once(&mut calls, s.unsigned()?),
            "costUsd" => once(&mut cost_usd, s.float()?),
            _ => s.skip(),
        })?;
        Some(DigestUsage {
            calls: calls.unwrap_or_default(),
            cost_usd: cost_usd.unwrap_or_default(),
        })
    }

    /// A department.
    fn department(&mut self) -> Option<DigestDepartment<'a>> {
        let (mut id, mut status, mut quality, mut specialists) = (None, None, None, None);
        self.object(|s, key, escaped| match key {
            _ if escaped => None,
            "departmentId" => once(&mut id, s.text()?),
            "status" => once(&mut status, s.maybe(Self::status)?),
            "qualityScore" => once(&mut quality, s.float()?),
            "specialistResults" => once(&mut specialists, s.list(Self::specialist)?),
            _ => s.skip(),
        })?;
        Some(DigestDepartment {
            department_id: id.unwrap_or_default(),
            status: status.flatten(),
            quality_score: quality.unwrap_or_default(),
            specialist_results: specialists.unwrap_or_default(),
        })
    }

    /// A department's status, by its name as serde writes it (an escaped one goes to serde).
    fn status(&mut self) -> Option<DepartmentStatus> {
        match self.string()? {
            ("\"success\"", false) => Some(DepartmentStatus::Success),
            ("\"failed\"", false) => Some(DepartmentStatus::Failed),
            ("\"skipped\"", false) => Some(DepartmentStatus::Skipped),
            ("\"paused\"", false) => Some(DepartmentStatus::Paused),
            _ => None,
        }
    }

    /// A specialist.
    fn specialist(&mut self) -> Option<DigestSpecialist<'a>> {
        let (mut id, mut attempts) = (None, None);
        self.object(|s, key, escaped| match key {
            _ if escaped => None,
            "agentId" => once(&mut id, s.text()?),
            "attempts" => once(&mut attempts, s.list(Self::attempt)?),
            _ => s.skip(),
        })?;
        Some(DigestSpecialist {
            agent_id: id.unwrap_or_default(),
            attempts: attempts.unwrap_or_default(),
        })
    }

    /// An attempt.
    fn attempt(&mut self) -> Option<DigestAttempt<'a>> {
        let mut decision = None;
        self.object(|s, key, escaped| match key {
            _ if escaped => None,
            "decision" => once(&mut decision, s.text()?),
            _ => s.skip(),
        })?;
        Some(DigestAttempt {
            decision: decision.unwrap_or_default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line as serde reads it.
    fn serde(line: &str) -> Result<RunLine<'_>, String> {
        serde_json::from_str(line).map_err(|e| e.to_string())
    }

    /// Lines of every shape a comparison reads: escapes, braces and brackets in strings,
    /// unicode escapes, keys in any order, unknown keys and values of every kind, nulls.
    const LINES: [&str; 6] = [
        r#"{"suite":"s\u00e9","caseId":"c\"1}","repeat":2,"shard":null,"passed":false,"failures":["minQuality: 60 is below 80","a\\b\n\u2603"],"durationMs":31,"error":"boom {[","report":{"runId":"r","status":"success","overallQuality":61.5,"usage":{"calls":7,"costUsd":0.000125,"promptTokens":9},"routing":{"primary":"d","stages":[["d"]],"x":[true,false,null,-1.5e-3,0,{"y":"}"}]},"departments":[{"departmentId":"d","status":"skipped","qualityScore":0.0},{"departmentId":"e\/f","status":"success","qualityScore":61.5,"output":{"x":[1,2]},"specialistResults":[{"agentId":"a","attempts":[{"decision":"revise"},{"decision":"accept"}]},{"agentId":"b","attempts":[]}]}]}}"#,
        r#"{"report":null,"passed":true,"repeat":1,"caseId":"c","suite":"s","expect":{"status":"success"}}"#,
        r#" { "suite" : "s" , "caseId" : "c" , "repeat" : 1 , "passed" : true , "report" : { "departments" : [ ] , "usage" : { } } } "#,
        r#"{"suite":"s","caseId":"c","repeat":4294967295,"passed":true,"durationMs":18446744073709551615,"error":null,"report":{"overallQuality":85,"usage":{"costUsd":1e-6,"calls":0},"departments":[{"status":null,"qualityScore":12345678901234567890}]}}"#,
        r#"{"suite":"","caseId":"","repeat":0,"passed":true,"failures":[],"report":{"overallQuality":33.333333333333336,"departments":[{"departmentId":"d","status":"paused","specialistResults":[{"attempts":[{"decision":"discard","x":1}]}]},{"status":"failed"}]}}"#,
        r#"{"suite":"s","caseId":"c","repeat":1,"passed":true,"x":"\ud83d\ude00","y":[[[[{}]]]],"z":"\ud800"}"#,
    ];

    #[test]
    fn the_scanner_reads_every_shape_as_serde_does() {
        for line in LINES {
            assert_eq!(scan(line), Some(serde(line).unwrap()), "{line}");
        }
        let run = scan(LINES[0]).unwrap();
        assert_eq!((&*run.suite, &*run.case_id), ("sé", "c\"1}"));
        assert_eq!(run.failures[1], "a\\b\n☃");
        let report = run.report.unwrap();
        assert_eq!((report.usage.calls, report.usage.cost_usd), (7, 0.000125));
        assert_eq!(report.departments[1].department_id, "e/f");
        assert_eq!(
            report.departments[1].specialist_results[0].first_accepted(),
            Some(false)
        );
    }

    #[test]
    fn every_department_status_reads_as_serde_writes_it() {
        for status in [
            DepartmentStatus::Success,
            DepartmentStatus::Failed,
            DepartmentStatus::Skipped,
            DepartmentStatus::Paused,
        ] {
            let name = serde_json::to_string(&status).unwrap();
            let line = format!(
                r#"{{"suite":"s","caseId":"c","repeat":1,"passed":true,"report":{{"departments":[{{"status":{name}}}]}}}}"#
            );
            assert_eq!(scan(&line).unwrap().report.unwrap().departments[0].status, Some(status));
        }
    }

    #[test]
    fn on_any_doubt_the_line_goes_to_serde() {
        let doubts = [
            // serde refuses these: its error is the line's.
            r#"{"suite":"s","suite":"t","caseId":"c","repeat":1,"passed":true}"#,
            r#"{"suite":"s","caseId":"c","repeat":1,"passed":true,"report":{"usage":{"calls":1,"calls":2}}}"#,
            r#"{"suite":"s","caseId":"c","repeat":1.0,"passed":true}"#,
            r#"{"suite":"s","caseId":"c","repeat":-1,"passed":true}"#,
            r#"{"suite":"s","caseId":"c","repeat":4294967296,"passed":true}"#,
            r#"{"suite":"s","caseId":"c","repeat":1,"passed":"yes"}"#,
            r#"{"suite":"s","caseId":"c","repeat":1,"passed":true,"failures":null}"#,
            r#"{"suite":"s","caseId":"c","repeat":1,"passed":true,"x":01}"#,
            r#"{"suite":"s","caseId":"c","repeat":1,"passed":true,"x":"\q"}"#,
            r#"{"suite":"s","caseId":"c","repeat":1,"passed":true,"x":"\u12"}"#,
            r#"{"suite":"s","caseId":"c","repeat":1,"passed":true,"x":[1,]}"#,
            r#"{"suite":"s","caseId":"c","repeat":1,"passed":true,}"#,
            r#"{"suite":"s","caseId":"c","repeat":1,"passed":true} x"#,
            r#"{"suite":"s","caseId":"c","repeat":1}"#,
            r#"{"suite":"s","caseId":"c\ud800","repeat":1,"passed":true}"#,
            r#"{"suite":"s","caseId":"c","repeat":1,"passed":true,"report":{"departments":[{"status":"done"}]}}"#,
            "{\"suite\":\"s\",\"caseId\":\"c\u{1}\",\"repeat\":1,\"passed\":true}",
            r#"["s","c",1,true]"#,
            r#"{"suite":"s","caseId":"c","repeat":1,"passed":tru"#,
            // serde reads these; the scanner leaves them to it.
            "{\"suite\":\"s\",\"caseId\":\"c\",\"repeat\":1,\t\"passed\":true}",
            r#"{"suite":"s","case\u0049d":"c","repeat":1,"passed":true}"#,
            r#"{"suite":"s","caseId":"c","repeat":1,"passed":true,"report":{"departments":[{"status":"succ\u0065ss"}]}}"#,
        ];
        for line in doubts {
            assert_eq!(scan(line), None, "{line}");
        }
        assert!(doubts[..19].iter().all(|line| serde(line).is_err()));
        assert!(doubts[19..].iter().all(|line| serde(line).is_ok()));
        let deep = format!(
            r#"{{"suite":"s","caseId":"c","repeat":1,"passed":true,"x":{}{}}}"#,
            "[".repeat(120),
            "]".repeat(120)
        );
        assert_eq!((scan(&deep), serde(&deep).is_ok()), (None, true));
    }

    #[test]
    fn a_line_cut_or_changed_anywhere_reads_as_serde_reads_it_or_goes_to_serde() {
        // Every cut, and every byte replaced by each of a few JSON characters or dropped: the
        // scanner reads a line only as serde does.
        let (mut read, mut left) = (0, 0);
        for line in LINES {
            let bytes = line.as_bytes();
            for at in 0..bytes.len() {
                let mut changed = vec![bytes[..at].to_vec(), [&bytes[..at], &bytes[at + 1..]].concat()];
                for byte in *br#""\{}[],:0-.eE+ ntfx"# {
                    changed.push([&bytes[..at], &[byte], &bytes[at + 1..]].concat());
                }
                for line in changed.into_iter().filter_map(|b| String::from_utf8(b).ok()) {
                    match scan(&line) {
                        Some(run) => {
                            assert_eq!(Ok(run), serde(&line), "{line}");
                            read += 1;
                        }
                        None => left += 1,
                    }
                }
            }
        }
        assert!(read > 1000 && left > 1000, "{read} read, {left} left to serde");
    }
}
