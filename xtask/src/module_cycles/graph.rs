//! The strongly connected components of a directed graph (Tarjan's algorithm).

/// The strongly connected components of the graph on nodes `0..adjacency.len()` whose node
/// `n` has edges to `adjacency[n]`: each component's nodes sorted, the components in no
/// particular order.
pub(super) fn components(adjacency: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut tarjan = Tarjan {
        adjacency,
        index: vec![None; adjacency.len()],
        low: vec![0; adjacency.len()],
        on_stack: vec![false; adjacency.len()],
        stack: Vec::new(),
        next: 0,
        components: Vec::new(),
    };
    for node in 0..adjacency.len() {
        if tarjan.index[node].is_none() {
            tarjan.visit(node);
        }
    }
    tarjan.components
}

struct Tarjan<'a> {
    adjacency: &'a [Vec<usize>],
    /// The order in which the search reached each node.
    index: Vec<Option<usize>>,
    /// The lowest index reachable from each node through nodes still on the stack.
    low: Vec<usize>,
    on_stack: Vec<bool>,
    stack: Vec<usize>,
    next: usize,
    components: Vec<Vec<usize>>,
}

impl Tarjan<'_> {
    fn visit(&mut self, node: usize) {
        self.index[node] = Some(self.next);
        self.low[node] = self.next;
        self.next += 1;
        self.stack.push(node);
        self.on_stack[node] = true;
        let adjacency = self.adjacency;
        for &next in &adjacency[node] {
            match self.index[next] {
                None => {
                    self.visit(next);
                    self.low[node] = self.low[node].min(self.low[next]);
                }
                Some(index) if self.on_stack[next] => self.low[node] = self.low[node].min(index),
                Some(_) => {}
            }
        }
        if self.index[node] == Some(self.low[node]) {
            self.pop_component(node);
        }
    }

    /// Pops the nodes down to `root`, which make a component.
    fn pop_component(&mut self, root: usize) {
        let mut component = Vec::new();
        while let Some(node) = self.stack.pop() {
            self.on_stack[node] = false;
            component.push(node);
            if node == root {
                break;
            }
        }
        component.sort_unstable();
        self.components.push(component);
    }
}
