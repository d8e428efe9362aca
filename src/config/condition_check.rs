//! Conditions checked once every department and agent is known: each condition reads only
//! the names its place sees (`output` only in `requireApproval`, `arguments` and `tool` only
//! in a tool's `approve` entry), and the departments it names exist (an error) and are among
//! the dependencies of the department it belongs to (else a warning: never visible there).

use std::collections::HashMap;

use super::definitions::{AgentWire, DepartmentWire};
use super::diagnostic::Diagnostic;
use super::mcp::ApproveWire;
use super::node::{At, Pos};
use crate::condition::{Condition, Switch};

/// The names every condition sees.
const EVERYWHERE: [&str; 4] = ["request", "complexity", "urgency", "departments"];

/// Where a condition is written, and so what it sees.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    /// A department's `when`.
    When,
    /// A department's `requireApproval`: also `output`.
    RequireApproval,
    /// A tool's `approve` entry: also `arguments` and `tool`.
    Approve,
}

impl Place {
    /// The key it is written under.
    fn key(self) -> &'static str {
        match self {
            Place::When | Place::Approve => "when",
            Place::RequireApproval => "requireApproval",
        }
    }

    /// Whether a condition here sees `name`.
    fn sees(self, name: &str) -> bool {
        EVERYWHERE.contains(&name)
            || match self {
                Place::When => false,
                Place::RequireApproval => name == "output",
                Place::Approve => name == "arguments" || name == "tool",
            }
    }

    /// Why a condition here cannot read `name`, which it does not see.
    fn unseen(self, name: &str) -> String {
        let only = match name {
            "output" => Some("a department's `requireApproval`"),
            "arguments" | "tool" => Some("a tool's `approve` entry"),
            _ => None,
        };
        let sees = match self {
            Place::When => "request, complexity, urgency and departments",
            Place::RequireApproval => "request, complexity, urgency, departments and output",
            Place::Approve => "request, complexity, urgency, departments, arguments and tool",
        };
        let here = match self {
            Place::Approve => "an `approve` entry's `when`".to_string(),
            place => format!("`{}`", place.key()),
        };
        match only {
            Some(only) => format!(
                "{here} reads `{name}`, which only {only} sees: it could never be evaluated here (it sees {sees})"
            ),
            None => {
                format!("{here} reads `{name}`, which no condition sees: it could never be evaluated (it sees {sees})")
            }
        }
    }
}

/// One condition to check: where, of which department (none: a tool condition of an agent
/// in no department), and the file it is in.
struct Written<'w> {
    place: Place,
    condition: &'w Condition,
    pos: Pos,
    file: &'w str,
    /// The departments whose dependencies it sees (a tool condition: its agent's).
    owners: Vec<&'w str>,
}

/// Every condition of `departments` and `agents`, checked.
pub fn check(departments: &[DepartmentWire], agents: &[AgentWire]) -> Vec<Diagnostic> {
    let written = written(departments, agents);
    let known: HashMap<&str, usize> = departments
        .iter()
        .enumerate()
        .map(|(i, d)| (d.id.value.as_str(), i))
        .collect();
    let reach = Reach::new(departments, &known, &written);
    let mut diags = Vec::new();
    for w in &written {
        for name in w.condition.variables() {
            if !w.place.sees(name) {
                diags.push(Diagnostic::error(w.file, w.pos, "unknown-name", w.place.unseen(name)));
            }
        }
        for id in w.condition.departments() {
            if !known.contains_key(id.as_str()) {
                let hint = crate::config::suggestion(id, known.keys().copied());
                let key = w.place.key();
                let message = format!("`{key}` names department `{id}`, which does not exist{hint}");
                diags.push(Diagnostic::error(w.file, w.pos, "unknown-reference", message));
            } else if let Some(owner) = w.owners.iter().find(|o| !reach.sees(&known, o, id)) {
                let message = format!(
                    "`{}` names department `{id}`, which is not among `{owner}`'s dependencies: it is never \
                     visible there (an evaluation error)",
                    w.place.key()
                );
                diags.push(Diagnostic::warning(w.file, w.pos, "condition-scope", message));
            }
        }
    }
    diags
}

/// Every condition written in the config, in file order: departments' then agents' tools'.
fn written<'w>(departments: &'w [DepartmentWire], agents: &'w [AgentWire]) -> Vec<Written<'w>> {
    let mut out = Vec::new();
    for d in departments {
        let approval = match &d.require_approval {
            Some(At {
                value: Switch::When(c),
                pos,
            }) => Some((c, *pos)),
            _ => None,
        };
        let when = d.when.as_ref().map(|w| (&w.value, w.pos));
        for (place, at) in [(Place::When, when), (Place::RequireApproval, approval)] {
            if let Some((condition, pos)) = at {
                let owners = vec![d.id.value.as_str()];
                out.push(Written {
                    place,
                    condition,
                    pos,
                    file: &d.file,
                    owners,
                });
            }
        }
    }
    for a in agents {
        let owners: Vec<&str> = a
            .keys
            .department
            .iter()
            .map(|d| d.value.as_str())
            .chain(
                departments
                    .iter()
                    .filter(|d| d.head.as_ref().is_some_and(|h| h.value == a.id.value))
                    .map(|d| d.id.value.as_str()),
            )
            .collect();
        let tools = a.keys.tools.iter().flat_map(|t| t.value.iter());
        let entries = tools.flat_map(|t| match &t.keys.approve {
            Some(ApproveWire::Tools(entries)) => entries.as_slice(),
            _ => &[],
        });
        for when in entries.filter_map(|e| e.when.as_ref()) {
            out.push(Written {
                place: Place::Approve,
                condition: &when.value,
                pos: when.pos,
                file: &a.file,
                owners: owners.clone(),
            });
        }
    }
    out
}

/// Which of the departments conditions name (beyond a direct dependency) each department
/// reaches through `dependsOn`, directly or through others: one bit a named department,
/// each department's bits computed once from its dependencies' (dependencies first), so a
/// long chain costs its length, not its square.
struct Reach<'w> {
    /// The bit of each department a condition names that is not a direct dependency.
    targets: HashMap<&'w str, usize>,
    /// Per department (by index), its bits: `words` u64s.
    bits: Vec<Vec<u64>>,
    /// Each department's direct dependencies.
    direct: Vec<Vec<&'w str>>,
}

impl<'w> Reach<'w> {
    fn new(departments: &'w [DepartmentWire], known: &HashMap<&str, usize>, written: &[Written<'w>]) -> Reach<'w> {
        let direct: Vec<Vec<&str>> = departments
            .iter()
            .map(|d| d.dependencies().iter().map(|a| a.value.as_str()).collect())
            .collect();
        let mut targets = HashMap::new();
        for w in written {
            for id in w.condition.departments() {
                let indirect = w
                    .owners
                    .iter()
                    .any(|o| known.get(o).is_some_and(|&i| !direct[i].contains(&id.as_str())));
                if known.contains_key(id.as_str()) && indirect {
                    let next = targets.len();
                    targets.entry(id.as_str()).or_insert(next);
                }
            }
        }
        let words = targets.len().div_ceil(64);
        let mut reach = Reach {
            targets,
            bits: vec![Vec::new(); departments.len()],
            direct,
        };
        if words > 0 {
            for i in dependencies_first(&reach.direct, known) {
                reach.bits[i] = reach.computed(i, known, words);
            }
        }
        reach
    }

    /// Department `i`'s bits: each dependency's own bit, and every bit it reaches.
    fn computed(&self, i: usize, known: &HashMap<&str, usize>, words: usize) -> Vec<u64> {
        let mut bits = vec![0u64; words];
        for dep in &self.direct[i] {
            if let Some(&t) = self.targets.get(dep) {
                bits[t / 64] |= 1 << (t % 64);
            }
            let Some(&j) = known.get(dep) else { continue };
            // Empty while `j` is on a `dependsOn` cycle (reported on its own).
            for (w, b) in bits.iter_mut().zip(&self.bits[j]) {
                *w |= b;
            }
        }
        bits
    }

    /// Whether department `owner` sees department `id`: `id` is among its dependencies,
    /// directly or through others. An unknown owner sees every department (its own
    /// reference is reported elsewhere).
    fn sees(&self, known: &HashMap<&str, usize>, owner: &str, id: &str) -> bool {
        let Some(&i) = known.get(owner) else { return true };
        if self.direct[i].contains(&id) {
            return true;
        }
        let Some(&t) = self.targets.get(id) else { return false };
        self.bits[i].get(t / 64).is_some_and(|w| w & (1 << (t % 64)) != 0)
    }
}

/// The departments (by index) in an order where each comes after its dependencies; on a
/// `dependsOn` cycle, after those it does not wait for through the cycle.
fn dependencies_first(direct: &[Vec<&str>], known: &HashMap<&str, usize>) -> Vec<usize> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let mut marks = vec![Mark::New; direct.len()];
    let mut order = Vec::with_capacity(direct.len());
    for start in 0..direct.len() {
        if marks[start] != Mark::New {
            continue;
        }
        // Iterative depth-first search: (department, next dependency).
        let mut stack = vec![(start, 0)];
        marks[start] = Mark::Open;
        while let Some((i, k)) = stack.pop() {
            let Some(dep) = direct[i].get(k) else {
                marks[i] = Mark::Done;
                order.push(i);
                continue;
            };
            stack.push((i, k + 1));
            if let Some(&j) = known.get(dep).filter(|&&j| marks[j] == Mark::New) {
                marks[j] = Mark::Open;
                stack.push((j, 0));
            }
        }
    }
    order
}
