//! The departments' dependency DAG, by index: built once from each department's
//! `dependsOn`, it gives the plan its stages and the master its ready set. Kahn's algorithm
//! lives here and nowhere else.

use std::collections::{BTreeSet, HashMap};

/// Who waits for whom among a request's departments, by their index in the given order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dag {
    /// Per department, how many of its dependencies are in the DAG.
    dependencies: Vec<usize>,
    /// Per department, the departments that depend on it.
    dependents: Vec<Vec<usize>>,
}

/// Each department's index (in the order its DAG was built in) by its id.
pub type Indices<'a> = HashMap<&'a str, usize>;

impl Dag {
    /// The DAG of `departments` (id, `dependsOn`) in their order; a dependency that is not
    /// among them (not selected) does not hold anyone back.
    pub fn new(departments: &[(&str, &[String])]) -> Dag {
        Dag::indexed(departments, &indices(departments))
    }

    /// The DAG of a plan's departments, indexed in plan order, and their indices by id: a
    /// run finds each department's dependencies through the same map, built once a run (so
    /// that it costs its dependencies, not the plan: with 10,000 departments, a hundred
    /// million hash insertions before).
    pub fn of(departments: &[super::DepartmentPlan]) -> (Dag, Indices<'_>) {
        let nodes: Vec<(&str, &[String])> = departments
            .iter()
            .map(|d| (d.department_id.as_str(), d.depends_on.as_slice()))
            .collect();
        let at = indices(&nodes);
        (Dag::indexed(&nodes, &at), at)
    }

    /// [`Dag::new`], `at` being the departments' [`Indices`].
    fn indexed(departments: &[(&str, &[String])], at: &Indices) -> Dag {
        let n = departments.len();
        let mut dag = Dag {
            dependencies: vec![0; n],
            dependents: vec![Vec::new(); n],
        };
        for (i, (_, depends_on)) in departments.iter().enumerate() {
            for &j in depends_on.iter().filter_map(|d| at.get(d.as_str())) {
                dag.dependencies[i] += 1;
                dag.dependents[j].push(i);
            }
        }
        dag
    }

    /// Each department's stage: 0 for a root, else 1 + its deepest dependency's (the longest
    /// path from a root), in one topological pass, linear in the departments and their
    /// dependencies. Validation guarantees no cycle; a department left in one would stay
    /// at stage 0, never loop.
    pub fn stages(&self) -> Vec<usize> {
        let mut stage = vec![0; self.dependencies.len()];
        let mut release = self.release();
        while let Some(j) = release.ready() {
            for &i in &self.dependents[j] {
                stage[i] = stage[i].max(stage[j] + 1);
            }
            release.finish(j);
        }
        stage
    }

    /// A fresh ready set: the departments without dependencies are ready.
    pub fn release(&self) -> Release<'_> {
        Release {
            dag: self,
            waiting: self.dependencies.clone(),
            ready: (0..self.dependencies.len())
                .filter(|&i| self.dependencies[i] == 0)
                .collect(),
        }
    }
}

/// The [`Indices`] of `departments` (id, `dependsOn`).
fn indices<'a>(departments: &[(&'a str, &[String])]) -> Indices<'a> {
    departments.iter().enumerate().map(|(i, (id, _))| (*id, i)).collect()
}

/// The departments ready to start, fed by counts of unfinished dependencies (Kahn): a
/// department becomes ready the moment its last dependency finishes.
#[derive(Clone, Debug)]
pub struct Release<'a> {
    dag: &'a Dag,
    /// Per department, its dependencies not finished yet.
    waiting: Vec<usize>,
    /// Ready and not taken yet, lowest index first.
    ready: BTreeSet<usize>,
}

impl Release<'_> {
    /// Takes the next ready department, in index order among those ready at once.
    pub fn ready(&mut self) -> Option<usize> {
        self.ready.pop_first()
    }

    /// Marks department `i` finished: each dependent whose last dependency it was is ready.
    pub fn finish(&mut self, i: usize) {
        for &j in &self.dag.dependents[i] {
            self.waiting[j] -= 1;
            if self.waiting[j] == 0 {
                self.ready.insert(j);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// a ← b ← d, a ← c, with `x` (not selected) named by c.
    fn diamond() -> Dag {
        let (none, a, ax, bc) = (ids(&[]), ids(&["a"]), ids(&["a", "x"]), ids(&["b", "c"]));
        Dag::new(&[("a", &none), ("b", &a), ("c", &ax), ("d", &bc)])
    }

    #[test]
    fn stages_are_the_longest_path_from_a_root() {
        assert_eq!(diamond().stages(), [0, 1, 1, 2]);
        let (none, c) = (ids(&[]), ids(&["c"]));
        // A dependency listed before its department still counts: stage by depth, not order.
        assert_eq!(Dag::new(&[("a", &c), ("b", &none), ("c", &none)]).stages(), [1, 0, 0]);
        assert_eq!(Dag::new(&[]).stages(), Vec::<usize>::new());
    }

    #[test]
    fn a_department_is_ready_when_its_last_dependency_finishes() {
        let dag = diamond();
        let mut release = dag.release();
        assert_eq!(release.ready(), Some(0));
        assert_eq!(release.ready(), None);
        release.finish(0);
        assert_eq!(
            (release.ready(), release.ready(), release.ready()),
            (Some(1), Some(2), None)
        );
        release.finish(2);
        assert_eq!(release.ready(), None, "d still waits for b");
        release.finish(1);
        assert_eq!((release.ready(), release.ready()), (Some(3), None));
    }

    #[test]
    fn ready_at_once_come_in_index_order() {
        let (none, a) = (ids(&[]), ids(&["a"]));
        let dag = Dag::new(&[("a", &none), ("z", &a), ("b", &none), ("y", &a)]);
        let mut release = dag.release();
        assert_eq!(release.ready(), Some(0));
        release.finish(0);
        // 1 and 3 become ready while 2 waits: lowest index first.
        assert_eq!(
            (release.ready(), release.ready(), release.ready()),
            (Some(1), Some(2), Some(3))
        );
    }

    #[test]
    fn a_cycle_stays_at_stage_zero_and_never_becomes_ready() {
        let (a, b) = (ids(&["a"]), ids(&["b"]));
        let dag = Dag::new(&[("a", &b), ("b", &a)]);
        assert_eq!(dag.stages(), [0, 0]);
        assert_eq!(dag.release().ready(), None);
    }
}
