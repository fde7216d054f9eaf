//! Memory-aware ordering: another topological order of a program's chain that keeps fewer bytes
//! alive at once, for branching graphs (residual blocks, U-Nets, concatenations) where the
//! exporter's order finishes one branch while another's tensors wait.
//!
//! Dependencies come from the values each instruction reads and writes (views count as their
//! source): a reader after the writer, a writer after the readers and the writer before it. A
//! chain with control flow (jumps, moves, frees) is left in its order. Orders are built by list
//! scheduling with a few rules for which ready instruction goes next (fewest new bytes, most
//! bytes freed, the branch just started, largest new bytes); each is judged by what best fit then needs.

use std::collections::{BTreeSet, HashMap};

use super::best_fit::align;
use crate::ir::{Graph, NodeKind, Storage, ValueId};

/// Instructions beyond which no reordering is attempted.
pub const MAX_INSTRUCTIONS: usize = 100_000;

/// An instruction's accesses, by storage (views resolved to their source).
struct Access {
    reads: Vec<ValueId>,
    writes: Vec<ValueId>,
}

/// Per instruction (chain order) the storages it reads and writes; `None` when the chain is
/// not a plain sequence of calls.
fn accesses(graph: &Graph) -> Option<Vec<Access>> {
    let n = graph.instruction_count;
    if n == 0 || n > MAX_INSTRUCTIONS {
        return None;
    }
    let mut out: Vec<Option<Access>> = (0..n).map(|_| None).collect();
    for node in &graph.nodes {
        let Some(k) = node.instruction_id else {
            continue;
        };
        if !matches!(node.kind, NodeKind::Operator | NodeKind::Delegate) || k >= n {
            return None;
        }
        let root = |v: ValueId| super::root_of(graph, v);
        let tensor = |v: &ValueId| graph.values.get(*v).is_some_and(|x| x.is_tensor());
        out[k] = Some(Access {
            reads: node
                .inputs
                .iter()
                .filter(|v| tensor(v))
                .map(|&v| root(v))
                .collect(),
            writes: node
                .outputs
                .iter()
                .filter(|v| tensor(v))
                .map(|&v| root(v))
                .collect(),
        });
    }
    out.into_iter().collect()
}

/// Per instruction, the instructions that must come before it.
fn predecessors(acc: &[Access]) -> Vec<Vec<usize>> {
    let mut last_write: HashMap<ValueId, usize> = HashMap::new();
    let mut reads_since: HashMap<ValueId, Vec<usize>> = HashMap::new();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); acc.len()];
    for (k, a) in acc.iter().enumerate() {
        for v in &a.reads {
            if let Some(&w) = last_write.get(v) {
                preds[k].push(w);
            }
            reads_since.entry(*v).or_default().push(k);
        }
        for v in &a.writes {
            if let Some(&w) = last_write.get(v) {
                preds[k].push(w);
            }
            if let Some(rs) = reads_since.remove(v) {
                preds[k].extend(rs.into_iter().filter(|&r| r != k));
            }
            last_write.insert(*v, k);
        }
        preds[k].sort_unstable();
        preds[k].dedup();
    }
    preds
}

/// Which ready instruction goes next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Fewest bytes it newly needs (outputs, scratch), then most it frees.
    FewestNewBytes,
    /// Most bytes it frees net of what it needs.
    MostFreed,
    /// The instruction made ready last (finish the branch at hand), then most freed.
    BranchFirst,
    /// Most bytes it newly needs first, then most it frees: at a fork, the branch with the
    /// largest intermediate starts while the fewest other branch outputs are alive (the order
    /// that minimises a tree's peak puts the costliest subtree first).
    LargestFirst,
}

impl Rule {
    pub const ALL: [Rule; 4] = [
        Rule::FewestNewBytes,
        Rule::MostFreed,
        Rule::BranchFirst,
        Rule::LargestFirst,
    ];

    pub fn describe(self) -> &'static str {
        match self {
            Rule::FewestNewBytes => "fewest new bytes first",
            Rule::MostFreed => "most bytes freed first",
            Rule::BranchFirst => "finish the branch at hand first",
            Rule::LargestFirst => "largest new bytes first",
        }
    }
}

/// A chain ready to be ordered, prepared once for every rule: per instruction the planned
/// storages it touches and the instructions that must come before it.
pub struct Chain<'g> {
    graph: &'g Graph,
    storages: Vec<Vec<ValueId>>,
    preds: Vec<Vec<usize>>,
}

impl<'g> Chain<'g> {
    /// `graph`'s chain; `None` when it is not a plain sequence of calls.
    pub fn of(graph: &'g Graph) -> Option<Chain<'g>> {
        let acc = accesses(graph)?;
        let preds = predecessors(&acc);
        let planned = |v: &ValueId| {
            graph
                .values
                .get(*v)
                .is_some_and(|x| x.storage == Storage::Planned && x.placement.is_some())
        };
        let storages = acc
            .iter()
            .map(|a| {
                let mut s: Vec<ValueId> = a
                    .reads
                    .iter()
                    .chain(&a.writes)
                    .copied()
                    .filter(planned)
                    .collect();
                s.sort_unstable();
                s.dedup();
                s
            })
            .collect();
        Some(Chain {
            graph,
            storages,
            preds,
        })
    }

    /// A topological order of the chain (new position → original instruction) by `rule`.
    pub fn order(&self, rule: Rule) -> Option<Vec<usize>> {
        let graph = self.graph;
        let n = self.storages.len();
        let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (k, ps) in self.preds.iter().enumerate() {
            for &p in ps {
                succs[p].push(k);
            }
        }
        let size = |v: ValueId| align(graph.values[v].placement.map_or(0, |p| p.size));
        let outputs: std::collections::HashSet<ValueId> = graph
            .outputs
            .iter()
            .map(|&v| super::root_of(graph, v))
            .collect();
        // remaining accesses per storage, and who makes them (to re-key the last one when the
        // count drops to 1)
        let mut remaining: HashMap<ValueId, usize> = HashMap::new();
        let mut accessors: HashMap<ValueId, Vec<usize>> = HashMap::new();
        for (k, st) in self.storages.iter().enumerate() {
            for &v in st {
                *remaining.entry(v).or_insert(0) += 1;
                accessors.entry(v).or_default().push(k);
            }
        }
        let mut live: std::collections::HashSet<ValueId> = graph
            .inputs
            .iter()
            .map(|&v| super::root_of(graph, v))
            .collect();
        let key = |k: usize,
                   live: &std::collections::HashSet<ValueId>,
                   remaining: &HashMap<ValueId, usize>,
                   ready_at: usize| {
            let (mut new, mut freed) = (0u64, 0u64);
            for &v in &self.storages[k] {
                if !live.contains(&v) {
                    new = new.saturating_add(size(v));
                }
                if remaining.get(&v) == Some(&1) && !outputs.contains(&v) {
                    freed = freed.saturating_add(size(v));
                }
            }
            let net = i128::from(new) - i128::from(freed);
            match rule {
                Rule::FewestNewBytes => (i128::from(new), net, 0, k),
                Rule::MostFreed => (net, i128::from(new), 0, k),
                Rule::BranchFirst => (0, 0, usize::MAX - ready_at, k),
                Rule::LargestFirst => (-i128::from(new), net, 0, k),
            }
        };
        let mut indegree: Vec<usize> = self.preds.iter().map(Vec::len).collect();
        let mut ready_at: Vec<usize> = vec![0; n];
        let mut keys: HashMap<usize, (i128, i128, usize, usize)> = HashMap::new();
        let mut ready: BTreeSet<(i128, i128, usize, usize)> = BTreeSet::new();
        let mut tick = 0usize;
        for (k, &d) in indegree.iter().enumerate() {
            if d == 0 {
                let kk = key(k, &live, &remaining, tick);
                keys.insert(k, kk);
                ready.insert(kk);
            }
        }
        let mut done = vec![false; n];
        let mut out = Vec::with_capacity(n);
        while let Some(first) = ready.pop_first() {
            let k = first.3;
            keys.remove(&k);
            done[k] = true;
            out.push(k);
            tick += 1;
            let mut touched: Vec<usize> = Vec::new();
            for &v in &self.storages[k] {
                live.insert(v);
                if let Some(r) = remaining.get_mut(&v) {
                    *r = r.saturating_sub(1);
                    if *r <= 1 {
                        touched.extend(
                            accessors
                                .get(&v)
                                .into_iter()
                                .flatten()
                                .copied()
                                .filter(|&j| !done[j]),
                        );
                    }
                }
            }
            for &s in &succs[k] {
                indegree[s] -= 1;
                if indegree[s] == 0 {
                    ready_at[s] = tick;
                    touched.push(s);
                }
            }
            touched.sort_unstable();
            touched.dedup();
            for j in touched {
                if indegree[j] != 0 || done[j] {
                    continue;
                }
                if let Some(old) = keys.remove(&j) {
                    ready.remove(&old);
                }
                let kk = key(j, &live, &remaining, ready_at[j]);
                keys.insert(j, kk);
                ready.insert(kk);
            }
        }
        (out.len() == n).then_some(out)
    }
}

/// `graph` with its instructions in `order` (new position → original instruction): every
/// node's instruction id renumbered, nodes in the new order.
pub fn reordered(graph: &Graph, order: &[usize]) -> Graph {
    let mut position = vec![0usize; order.len()];
    for (new, &old) in order.iter().enumerate() {
        position[old] = new;
    }
    let mut g = graph.clone();
    for node in &mut g.nodes {
        if let Some(k) = node.instruction_id.filter(|&k| k < position.len()) {
            node.instruction_id = Some(position[k]);
        }
    }
    g.instruction_index = std::sync::OnceLock::new();
    g
}

/// `plan` (derived from the program in its own order) with every tensor's lifetime as the
/// chain in `order` gives it: cheaper than deriving the reordered graph's plan again, and the
/// same lifetimes (a tensor lives from its producer, or its first reader for scratch, or 0 for
/// an input, to its last reader, or the end for an output; state lives throughout).
pub fn relifed(plan: &super::MemoryPlan, order: &[usize]) -> super::MemoryPlan {
    use super::TensorRole;
    let mut position = vec![0usize; order.len()];
    for (new, &old) in order.iter().enumerate() {
        if let Some(p) = position.get_mut(old) {
            *p = new;
        }
    }
    let at = |k: usize| position.get(k).copied().unwrap_or(k);
    let end = plan.instruction_count.saturating_sub(1);
    let mut out = plan.clone();
    out.findings.clear();
    for arena in &mut out.arenas {
        for t in &mut arena.tensors {
            t.consumers = t.consumers.iter().map(|&c| at(c)).collect();
            t.consumers.sort_unstable();
            t.producer = t.producer.map(at);
            let first_use = t.consumers.first().copied();
            t.first = match t.role {
                TensorRole::Input | TensorRole::State => 0,
                _ => t.producer.or(first_use).unwrap_or(0),
            };
            t.last = match t.role {
                TensorRole::Output | TensorRole::State => end,
                _ => t.consumers.last().copied().unwrap_or(t.first).max(t.first),
            };
        }
        arena.live_bytes.clear();
    }
    out
}
