/// The deadlines of a `TimerQueue`, earliest first: a binary min-heap in an array, ordered by
/// deadline and, for equal deadlines, by the order they were pushed in (a sequence number), so
/// work due at the same time runs in the order it was scheduled.
///
/// A node is only a reference to a timer: a cancelled timer's node stays until it reaches the top
/// (the queue drops it there, or rebuilds the heap when most of it is such nodes), which keeps
/// cancelling O(1) without searching the heap.
struct TimerHeap {
    /// One occurrence of a timer: when it is due, the order it was pushed in, and which timer.
    struct Node {
        let deadline: Int64
        let sequence: UInt64
        let timer: UInt64

        /// Whether this node runs before `other`.
        func precedes(_ other: Node) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : sequence < other.sequence
        }
    }

    private(set) var nodes: [Node] = []

    /// The number of nodes, cancelled timers' included.
    var count: Int { nodes.count }

    /// The earliest node, if any.
    var first: Node? { nodes.first }

    /// Adds `node` (O(log n)).
    mutating func push(_ node: Node) {
        nodes.append(node)
        var child = nodes.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard nodes[child].precedes(nodes[parent]) else { break }
            nodes.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest node (O(log n)).
    @discardableResult
    mutating func popFirst() -> Node? {
        guard !nodes.isEmpty else { return nil }
        nodes.swapAt(0, nodes.count - 1)
        let first = nodes.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var earliest = parent
            if left < nodes.count && nodes[left].precedes(nodes[earliest]) { earliest = left }
            if right < nodes.count && nodes[right].precedes(nodes[earliest]) { earliest = right }
            if earliest == parent { break }
            nodes.swapAt(parent, earliest)
            parent = earliest
        }
        return first
    }

    /// Drops the nodes `isDead` accepts and restores the order of the rest (O(n log n)).
    mutating func removeAll(where isDead: (Node) -> Bool) {
        let live = nodes.filter { !isDead($0) }
        nodes = []
        nodes.reserveCapacity(live.count)
        for node in live { push(node) }
    }
}
