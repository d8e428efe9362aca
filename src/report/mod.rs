//! The run report (its type, serialized as JSON, and the one lenient view it is read back
//! through), its answer, and events. Its tree, Markdown and pages are drawn in `src/render/`.

mod answer;
mod events;
mod file;
mod gate;
mod review;
mod run;
mod tool_call;
mod view;

pub use answer::{answer, department_heading, department_quality};
#[cfg(test)]
pub use events::NoObserver;
pub use events::{Event, EventLog, Observer, Observers};
pub use file::{is_report, read_file};
pub use gate::{DecidedBy, Denial, GateItem, GateKind};
pub use review::{Conflict, ReviewCall, Revision};
pub use run::{
    output_text, output_value, timeless, ungraded_warnings, Attempt, DepartmentMetadata, DepartmentResult,
    DepartmentStatus, Economy, Grading, Report, RunMetadata, RunStatus, SessionTurn, SpecialistResult, Usage,
    Validation,
};
pub use tool_call::{Approval, Refusal, ToolCall};
pub use view::{Saved, SavedAttempt, SavedDepartment, SavedExpect, SavedRouting, SavedSpecialist, SavedToolCall};
