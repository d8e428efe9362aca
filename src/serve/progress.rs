//! Progress of a served run: when the client's `tools/call` carries a
//! `progressToken`, one `notifications/progress` per finished department, `progress` counting
//! them from 1 and `total` the departments the master routed the request to.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc;

use crate::report::{Event, Observer, Observers};

/// One finished department, as it is told.
#[derive(Debug, PartialEq)]
struct Step {
    done: usize,
    total: usize,
    message: String,
}

/// Hears the run's events and queues a [`Step`] per finished department.
struct Departments {
    steps: mpsc::UnboundedSender<Step>,
    total: AtomicUsize,
    done: AtomicUsize,
}

impl Observer for Departments {
    fn event(&self, event: &Event) {
        match event {
            Event::Routing { stages, .. } => {
                self.total.store(stages.iter().map(Vec::len).sum(), Ordering::SeqCst);
            }
            Event::DepartmentComplete { department, status, .. } => {
                let done = self.done.fetch_add(1, Ordering::SeqCst) + 1;
                let total = self.total.load(Ordering::SeqCst).max(done);
                let message = format!("department {department}: {status}");
                let _ = self.steps.send(Step { done, total, message });
            }
            _ => {}
        }
    }
}

/// The observer to give the run, and the future that sends its notifications to `peer`; the
/// future ends once the observer is dropped (the run's engine with it) and every step is sent.
/// Without a token the observer hears nothing and the future is done at once.
pub(super) fn reporter(
    token: Option<ProgressToken>,
    peer: Peer<RoleServer>,
) -> (Box<dyn Observer>, impl Future<Output = ()> + Send) {
    let (tx, mut rx) = mpsc::unbounded_channel::<Step>();
    let observer: Box<dyn Observer> = match &token {
        Some(_) => Box::new(Departments {
            steps: tx,
            total: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
        }),
        None => Box::new(Observers(Vec::new())),
    };
    let sending = async move {
        let Some(token) = token else { return };
        while let Some(step) = rx.recv().await {
            let param = ProgressNotificationParam::new(token.clone(), step.done as f64)
                .with_total(step.total as f64)
                .with_message(step.message);
            // A client gone away is the transport's business: the run's answer still goes back.
            let _ = peer.notify_progress(param).await;
        }
    };
    (observer, sending)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::DepartmentStatus;

    fn complete(department: &str, status: DepartmentStatus) -> Event {
        Event::DepartmentComplete {
            department: department.into(),
            status,
            quality_score: 80.0,
            latency_ms: 1,
        }
    }

    #[test]
    fn one_step_per_finished_department_out_of_the_routed_ones() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let observer = Departments {
            steps: tx,
            total: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
        };
        observer.event(&Event::Routing {
            primary: "story".into(),
            supporting: vec!["character".into()],
            execution_mode: crate::plan::ExecutionMode::Sequential,
            stages: vec![vec!["character".into()], vec!["story".into()]],
        });
        observer.event(&complete("character", DepartmentStatus::Success));
        observer.event(&Event::RunComplete {
            status: crate::report::RunStatus::Partial,
            overall_quality: 0.0,
            calls: 2,
        });
        observer.event(&complete("story", DepartmentStatus::Failed));
        drop(observer);
        let mut steps = Vec::new();
        while let Ok(step) = rx.try_recv() {
            steps.push(step);
        }
        let step = |done, message: &str| Step {
            done,
            total: 2,
            message: message.into(),
        };
        assert_eq!(
            steps,
            [
                step(1, "department character: success"),
                step(2, "department story: failed")
            ]
        );
    }
}
