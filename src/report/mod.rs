//! What orch prints: the run report (JSON and tree), the explain tree, and events.

mod answer;
mod events;
mod gate;
mod ladder_lines;
mod plan_tree;
mod run;
mod run_tree;
mod tool_call;
mod tree;

pub use answer::{answer, department_quality};
#[cfg(test)]
pub use events::NoObserver;
pub use events::{Event, EventLog, Observer, Observers};
pub use gate::{DecidedBy, Denial, GateItem, GateKind};
pub use plan_tree::plan_tree;
pub use run::{
    output_text, output_value, timeless, Attempt, DepartmentMetadata, DepartmentResult, DepartmentStatus, Economy,
    Report, RunMetadata, RunStatus, SpecialistResult, Usage, Validation,
};
#[cfg(test)]
pub use run_tree::run_tree;
pub use run_tree::write_run_tree;
pub use tool_call::{Approval, Refusal, ToolCall};
pub use tree::{render as render_tree, Node, Style};
