/// A queue of lanes served in turns: each lane is first in, first out, and each taking moves to
/// the next lane that has elements, so that a lane with many elements waiting delays another's
/// next element by at most one of its own. Not synchronized: its owner guards it (the worker
/// pool's queue, under its condition).
///
/// DESIGN: password checks from one client network, queued in one lane, were served before any
/// other client's that came after them (first come, first served): a few networks keeping the
/// queue full made everyone else's login wait behind all of theirs (issue 31, finding 3). In
/// turns, a login waits behind at most one check of each network with checks waiting.
package struct RoundRobinQueue<Element> {
    private var lanes: [String: FIFOQueue<Element>] = [:]
    /// The lanes with elements, in the order of their next turns.
    private var turns = FIFOQueue<String>()

    /// Elements not yet taken, in all lanes.
    package private(set) var count = 0

    /// An empty queue.
    package init() {}

    /// Whether every element has been taken.
    package var isEmpty: Bool { count == 0 }

    /// Adds `element` at the back of `lane`; a lane that had nothing waiting takes its turn after
    /// the lanes waiting already.
    package mutating func append(_ element: Element, lane: String) {
        if lanes[lane] == nil { turns.append(lane) }
        lanes[lane, default: FIFOQueue()].append(element)
        count += 1
    }

    /// Takes the element at the front of the lane whose turn it is; `nil` when there is none.
    package mutating func popFirst() -> Element? {
        guard let lane = turns.popFirst(), let element = lanes[lane]?.popFirst() else { return nil }
        count -= 1
        if lanes[lane]?.isEmpty == true {
            lanes[lane] = nil
        } else {
            turns.append(lane)
        }
        return element
    }
}
