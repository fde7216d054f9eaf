//! Which dims of a view's input become which dims of its output, as ExecuTorch's `ViewMap`
//! (`backends/transforms/dim_maps.py`) computes it for static shapes: both shapes are expanded
//! into ordered prime-factor streams, the factors matched in order, and factors grouped when they
//! share an axis on either side or when their order crosses. A permutation can move across the
//! view when it moves whole groups, in increasing order within each group; singleton dims belong
//! to no group and are re-inserted where they fit.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Source/target axis groups of a view.
#[derive(Debug, Clone)]
struct Groups {
    source_axis_to_groups: Vec<Vec<usize>>,
    target_axis_to_groups: Vec<Vec<usize>>,
    group_to_source_axes: BTreeMap<usize, Vec<usize>>,
    group_to_target_axes: BTreeMap<usize, Vec<usize>>,
}

/// The dim map of a view from `source` to `target` shape.
#[derive(Debug, Clone)]
pub struct ViewMap {
    source: Vec<i64>,
    target: Vec<i64>,
    groups: Option<Groups>,
}

/// Prime factors of every dim, with the axis each comes from (a unit dim has none); `None` for
/// a dim below one.
fn factors(shape: &[i64]) -> Option<Vec<(i64, usize)>> {
    let mut out = Vec::new();
    for (axis, &dim) in shape.iter().enumerate() {
        if dim < 1 {
            return None;
        }
        let mut d = dim;
        let mut p = 2;
        while p * p <= d {
            while d % p == 0 {
                out.push((p, axis));
                d /= p;
            }
            p += if p == 2 { 1 } else { 2 };
        }
        if d > 1 {
            out.push((d, axis));
        }
    }
    Some(out)
}

fn find(parent: &mut [usize], x: usize) -> usize {
    let mut r = x;
    while parent[r] != r {
        r = parent[r];
    }
    let mut c = x;
    while parent[c] != r {
        let next = parent[c];
        parent[c] = r;
        c = next;
    }
    r
}

fn union(parent: &mut [usize], a: usize, b: usize) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra != rb {
        parent[rb] = ra;
    }
}

/// Unions factor positions whose axes (in position order) are equal.
fn union_sharing(parent: &mut [usize], axes: impl Iterator<Item = usize>) {
    let mut first = BTreeMap::new();
    for (pos, axis) in axes.enumerate() {
        match first.get(&axis) {
            Some(&f) => union(parent, f, pos),
            None => {
                first.insert(axis, pos);
            }
        }
    }
}

fn build_groups(source: &[i64], target: &[i64]) -> Option<Groups> {
    let (sf, tf) = (factors(source)?, factors(target)?);
    let mut sk: Vec<i64> = sf.iter().map(|f| f.0).collect();
    let mut tk: Vec<i64> = tf.iter().map(|f| f.0).collect();
    sk.sort_unstable();
    tk.sort_unstable();
    if sk != tk {
        return None;
    }
    // the target position of every source factor: the first unused one of the same prime
    let mut free: BTreeMap<i64, VecDeque<usize>> = BTreeMap::new();
    for (i, f) in tf.iter().enumerate() {
        free.entry(f.0).or_default().push_back(i);
    }
    let perm: Vec<usize> = sf
        .iter()
        .map(|f| free.get_mut(&f.0).and_then(VecDeque::pop_front))
        .collect::<Option<_>>()?;
    let n = sf.len();
    let mut parent: Vec<usize> = (0..n).collect();
    union_sharing(&mut parent, sf.iter().map(|f| f.1));
    union_sharing(&mut parent, (0..n).map(|p| tf[perm[p]].1));
    for a in 0..n {
        for b in a + 1..n {
            if perm[a] > perm[b] {
                union(&mut parent, a, b);
            }
        }
    }
    let mut source_groups = vec![BTreeSet::new(); source.len()];
    let mut target_groups = vec![BTreeSet::new(); target.len()];
    let mut to_source: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    let mut to_target: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    for (pos, f) in sf.iter().enumerate() {
        let g = find(&mut parent, pos);
        let t_axis = tf[perm[pos]].1;
        source_groups[f.1].insert(g);
        target_groups[t_axis].insert(g);
        to_source.entry(g).or_default().insert(f.1);
        to_target.entry(g).or_default().insert(t_axis);
    }
    let sorted = |v: Vec<BTreeSet<usize>>| -> Vec<Vec<usize>> {
        v.into_iter().map(|s| s.into_iter().collect()).collect()
    };
    let lists = |m: BTreeMap<usize, BTreeSet<usize>>| -> BTreeMap<usize, Vec<usize>> {
        m.into_iter()
            .map(|(k, s)| (k, s.into_iter().collect()))
            .collect()
    };
    Some(Groups {
        source_axis_to_groups: sorted(source_groups),
        target_axis_to_groups: sorted(target_groups),
        group_to_source_axes: lists(to_source),
        group_to_target_axes: lists(to_target),
    })
}

/// `dims` normalised against `rank`, `None` when one is out of range or they are no
/// permutation of `0..rank`.
pub fn normalize_permutation(dims: &[i64], rank: usize) -> Option<Vec<usize>> {
    if dims.len() != rank {
        return None;
    }
    let out: Vec<usize> = dims
        .iter()
        .map(|&d| {
            let r = if d < 0 { d + rank as i64 } else { d };
            usize::try_from(r).ok().filter(|&r| r < rank)
        })
        .collect::<Option<_>>()?;
    let mut sorted = out.clone();
    sorted.sort_unstable();
    (sorted == (0..rank).collect::<Vec<_>>()).then_some(out)
}

/// A partial permutation completed with the unit axes it lacks, each inserted before the first
/// larger axis.
fn extend_with_singletons(dims: &[usize], shape: &[i64]) -> Option<Vec<usize>> {
    let mut out = dims.to_vec();
    let mut seen = BTreeSet::new();
    if out.iter().any(|&d| d >= shape.len() || !seen.insert(d)) {
        return None;
    }
    let missing: Vec<usize> = (0..shape.len()).filter(|d| !seen.contains(d)).collect();
    if missing.iter().any(|&d| shape[d] != 1) {
        return None;
    }
    for &d in missing.iter().rev() {
        let at = out.iter().position(|&e| e > d).unwrap_or(out.len());
        out.insert(at, d);
    }
    Some(out)
}

fn map_dims(
    dims: &[usize],
    axis_to_groups: &[Vec<usize>],
    group_to_axes: &BTreeMap<usize, Vec<usize>>,
) -> Vec<usize> {
    let mut out = Vec::new();
    for &d in dims {
        for g in &axis_to_groups[d] {
            for &a in group_to_axes.get(g).map_or(&[][..], Vec::as_slice) {
                if !out.contains(&a) {
                    out.push(a);
                }
            }
        }
    }
    out
}

/// The next axis of `perm` from `index` that belongs to a group, with that group.
fn next_group(
    perm: &[usize],
    axis_to_groups: &[Vec<usize>],
    mut index: usize,
) -> (usize, Option<usize>) {
    while index < perm.len() {
        match axis_to_groups[perm[index]].as_slice() {
            [] => index += 1,
            [g] => return (index, Some(*g)),
            _ => return (index, None),
        }
    }
    (index, None)
}

/// The axes of one group's block from `index` (unit axes skipped).
fn consume_group(
    perm: &[usize],
    axis_to_groups: &[Vec<usize>],
    mut index: usize,
    group: usize,
) -> (usize, Vec<usize>) {
    let mut axes = Vec::new();
    while index < perm.len() {
        match axis_to_groups[perm[index]].as_slice() {
            [] => index += 1,
            [g] if *g == group => {
                axes.push(perm[index]);
                index += 1;
            }
            _ => break,
        }
    }
    (index, axes)
}

fn is_sorted(v: &[usize]) -> bool {
    v.windows(2).all(|w| w[0] <= w[1])
}

impl ViewMap {
    /// The map of a view from `source` to `target` (both static).
    pub fn new(source: &[i64], target: &[i64]) -> ViewMap {
        ViewMap {
            source: source.to_vec(),
            target: target.to_vec(),
            groups: build_groups(source, target),
        }
    }

    /// Whether the shapes can be represented by grouped factors.
    #[cfg(test)]
    pub fn is_valid(&self) -> bool {
        self.groups.is_some()
    }

    /// The view's target shape.
    pub fn target(&self) -> &[i64] {
        &self.target
    }

    /// Whether both permutations consume the same groups, in the same order, each block in
    /// increasing axis order.
    fn matching_blocks(&self, source_perm: &[usize], target_perm: &[usize]) -> bool {
        let Some(g) = &self.groups else {
            return false;
        };
        let mut closed = BTreeSet::new();
        let (mut si, mut ti) = (0, 0);
        loop {
            let (s_at, sg) = next_group(source_perm, &g.source_axis_to_groups, si);
            let (t_at, tg) = next_group(target_perm, &g.target_axis_to_groups, ti);
            let (Some(sg), Some(tg)) = (sg, tg) else {
                return sg.is_none() && tg.is_none();
            };
            if sg != tg || closed.contains(&sg) {
                return false;
            }
            let (s_next, s_axes) = consume_group(source_perm, &g.source_axis_to_groups, s_at, sg);
            let (t_next, t_axes) = consume_group(target_perm, &g.target_axis_to_groups, t_at, tg);
            if !is_sorted(&s_axes) || !is_sorted(&t_axes) {
                return false;
            }
            closed.insert(sg);
            si = s_next;
            ti = t_next;
        }
    }

    /// A permutation of the view's input as the equal permutation of its output:
    /// `x.permute(P).view(S') == x.view(S).permute(map_permutation(P))`.
    pub fn map_permutation(&self, source_perm: &[i64]) -> Option<Vec<usize>> {
        let g = self.groups.as_ref()?;
        let source_perm = normalize_permutation(source_perm, self.source.len())?;
        let target_perm = extend_with_singletons(
            &map_dims(
                &source_perm,
                &g.source_axis_to_groups,
                &g.group_to_target_axes,
            ),
            &self.target,
        )?;
        self.matching_blocks(&source_perm, &target_perm)
            .then_some(target_perm)
    }

    /// The inverse of [`ViewMap::map_permutation`]: a permutation of the view's output as one
    /// of its input.
    pub fn map_permutation_inverse(&self, target_perm: &[i64]) -> Option<Vec<usize>> {
        let g = self.groups.as_ref()?;
        let target_perm = normalize_permutation(target_perm, self.target.len())?;
        let source_perm = extend_with_singletons(
            &map_dims(
                &target_perm,
                &g.target_axis_to_groups,
                &g.group_to_source_axes,
            ),
            &self.source,
        )?;
        self.matching_blocks(&source_perm, &target_perm)
            .then_some(source_perm)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_docstring_example_maps_whole_groups_only() {
        // ExecuTorch's example: [4, 3, 10] -> [2, 2, 1, 5, 3, 2]; groups [2, 2] and [3, 5, 2]
        let m = ViewMap::new(&[4, 3, 10], &[2, 2, 1, 5, 3, 2]);
        assert!(m.is_valid());
        assert!(m.map_permutation(&[1, 2, 0]).is_some());
        assert_eq!(m.map_permutation(&[2, 0, 1]), None);
        assert_eq!(m.map_permutation(&[0, 2, 1]), None);
    }

    #[test]
    fn a_unit_dim_view_moves_a_permute_to_the_lower_rank() {
        // view [1, 3, 11] -> [1, 3, 1, 11], then permute [0, 2, 3, 1]: the permute at the
        // lower rank is [0, 2, 1]
        let m = ViewMap::new(&[1, 3, 11], &[1, 3, 1, 11]);
        assert_eq!(
            m.map_permutation_inverse(&[0, 2, 3, 1]),
            Some(vec![0, 2, 1])
        );
    }

    #[test]
    fn shapes_of_different_sizes_have_no_map() {
        assert!(!ViewMap::new(&[2, 3], &[7]).is_valid());
        assert!(!ViewMap::new(&[0, 3], &[3, 0]).is_valid());
    }
}
